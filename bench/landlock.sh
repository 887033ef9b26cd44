#!/bin/sh
# bench/landlock.sh: launch cost of the landlock backend:
# `sbx --backend landlock -- /bin/true` against `sbx --sandbox host` and
# `sbx --backend bwrap`, as the median of per-round ratios over ROUNDS
# (default 7) rounds. Target: landlock within 1.2x of host, and several
# times faster than bwrap.
# Usage: [ROUNDS=N] bench/landlock.sh [SBX]   (default: ./sbx); needs
# hyperfine and python3.
set -eu
cd "$(dirname "$0")/.."
sbx=${1:-./sbx}
command -v hyperfine >/dev/null 2>&1 || { echo "bench: hyperfine is not installed" >&2; exit 1; }
out=bench/out
mkdir -p "$out"
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
cmds="host landlock"
"$sbx" --probe 2>/dev/null | grep -q '^bwrap=ok' && cmds="$cmds bwrap"
set --
for c in $cmds; do
	case $c in
	host) set -- "$@" -n host "$sbx -C $ws --sandbox host -- /bin/true" ;;
	*) set -- "$@" -n "$c" "$sbx -C $ws --backend $c -- /bin/true" ;;
	esac
done
# Rounds, each timing all three commands in turn: a machine whose speed
# drifts over a minute (a busy host, a neighbour VM) then moves the
# baseline with the others instead of skewing one side of a ratio.
rounds=${ROUNDS:-7}
i=1
while [ "$i" -le "$rounds" ]; do
	hyperfine -N -w 5 -m 40 --export-json "$out/landlock.$i.json" "$@" \
	    >"$out/landlock.txt" 2>&1 || { cat "$out/landlock.txt" >&2; exit 1; }
	i=$((i + 1))
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
runs = []
for i in range(1, rounds + 1):
    r = json.load(open(f"{out}/landlock.{i}.json"))["results"]
    runs.append({x["command"]: x["median"] for x in r})
def ratio(a, b):
    v = sorted(x[a] / x[b] for x in runs)
    return statistics.median(v), v[0], v[-1]
for name in ("host", "landlock", "bwrap"):
    if name in runs[0]:
        t = statistics.median(x[name] for x in runs)
        m, lo, hi = ratio(name, "host")
        print(f"{name:9} {t * 1e3:7.3f} ms  {m:5.2f}x host  (rounds {lo:.2f}-{hi:.2f})")
if "bwrap" in runs[0]:
    m, lo, hi = ratio("bwrap", "landlock")
    print(f"bwrap/landlock {m:.1f}x (rounds {lo:.1f}-{hi:.1f})")
l = ratio("landlock", "host")[0]
print(f"landlock/host {l:.2f}x, median of {rounds} rounds (target <= 1.20): "
      f"{'ok' if l <= 1.2 else 'MISSED'}")
PY
