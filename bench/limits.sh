#!/bin/sh
# bench/limits.sh: launch cost with resource limits set against without:
# `sbx --sandbox host -- /bin/true` plain, with the limits that are always
# rlimits (--file-size, --cpu), and with all four (--mem and --procs by a
# cgroup where this user can make one: root on most machines; rlimits
# otherwise, as --probe says). The median of per-round ratios over ROUNDS
# (default 7) interleaved rounds. Target: no measurable difference, the
# ratio within the rounds' spread of 1.0.
# Usage: [ROUNDS=N] bench/limits.sh [SBX]   (default: ./sbx); needs
# hyperfine and python3. Run it as root and as a user for both paths.
set -eu
cd "$(dirname "$0")/.."
sbx=${1:-./sbx}
command -v hyperfine >/dev/null 2>&1 || { echo "bench: hyperfine is not installed" >&2; exit 1; }
out=bench/out
mkdir -p "$out"
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
base="$sbx -C $ws --sandbox host"
"$sbx" --probe | grep '^limit_'
rounds=${ROUNDS:-7}
i=1
while [ "$i" -le "$rounds" ]; do
	hyperfine -N -w 5 -m 40 --export-json "$out/limits.$i.json" \
	    -n none "$base -- /bin/true" \
	    -n rlimits "$base --file-size 1G --cpu 1h -- /bin/true" \
	    -n all "$base --mem 1G --procs 1000 --file-size 1G --cpu 1h -- /bin/true" \
	    >"$out/limits.txt" 2>&1 || { cat "$out/limits.txt" >&2; exit 1; }
	i=$((i + 1))
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
runs, cpu = [], []
for i in range(1, rounds + 1):
    r = json.load(open(f"{out}/limits.{i}.json"))["results"]
    runs.append({x["command"]: x["median"] for x in r})
    cpu.append({x["command"]: x["system"] for x in r})
# The wall-clock ratio drowns in a busy machine's noise; the kernel time
# of sbx and its children (mean system time) shows what a cgroup costs.
for name in ("none", "rlimits", "all"):
    t = statistics.median(x[name] for x in runs)
    v = sorted(x[name] / x["none"] for x in runs)
    s = statistics.median(x[name] - x["none"] for x in cpu)
    print(f"{name:8} {t * 1e3:7.3f} ms  {statistics.median(v):5.2f}x none "
          f"(rounds {v[0]:.2f}-{v[-1]:.2f}), system time {s * 1e3:+.2f} ms")
PY
