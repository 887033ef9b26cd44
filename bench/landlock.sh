#!/bin/sh
# bench/landlock.sh: launch cost of the landlock backend, in one hyperfine
# run: `sbx --backend landlock -- /bin/true` against `sbx --sandbox host`
# and `sbx --backend bwrap`, as ratios. Target: landlock within 1.2x of
# host, and several times faster than bwrap.
# Usage: bench/landlock.sh [SBX]   (default: ./sbx); needs hyperfine.
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
hyperfine -N -w 20 -m 200 --export-json "$out/landlock.json" "$@" >"$out/landlock.txt" 2>&1 ||
    { cat "$out/landlock.txt" >&2; exit 1; }
python3 - "$out/landlock.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
h = r["host"]["mean"]
for name in ("host", "landlock", "bwrap"):
    if name in r:
        m = r[name]["mean"]
        print(f"{name:9} {m * 1e3:7.3f} ms  ±{r[name]['stddev'] * 1e3:.3f}  {m / h:5.2f}x host")
if "bwrap" in r:
    print(f"bwrap/landlock {r['bwrap']['mean'] / r['landlock']['mean']:.1f}x")
l = r["landlock"]["mean"] / h
print(f"landlock/host {l:.2f}x (target <= 1.20): {'ok' if l <= 1.2 else 'MISSED'}")
PY
