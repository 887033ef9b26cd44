#!/bin/sh
# bench/launch.sh: launch overhead of sbx --sandbox host against timeout(1)
# and the bare command, measured in the same hyperfine run so that the
# ratios compare like with like. Target: sbx <= 0.6x timeout's time.
#
#   bench/launch.sh [RUNS]        (default 2000 runs each)
#
# Needs hyperfine and python3. Writes bench/out/launch.json.
set -eu
cd "$(dirname "$0")/.."
runs=${1:-2000}
sbx=${SBX:-./sbx}
[ -x "$sbx" ] || { echo "bench/launch.sh: build ./sbx first (make)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench/launch.sh: hyperfine is not installed" >&2; exit 1; }
mkdir -p bench/out
out=bench/out/launch.json

# -N: no intermediate shell, so each figure is one fork+exec of the tool.
hyperfine -N --warmup 200 --runs "$runs" --export-json "$out" \
    -n true '/bin/true' \
    -n timeout 'timeout 10 /bin/true' \
    -n sbx "$sbx --sandbox host -- /bin/true" >&2

python3 - "$out" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
t, to, s = r["true"], r["timeout"], r["sbx"]
us = lambda x: x * 1e6
print("%-8s %10s %10s %10s" % ("", "mean us", "median us", "stddev"))
for n in ("true", "timeout", "sbx"):
    x = r[n]
    print("%-8s %10.0f %10.0f %10.0f" % (n, us(x["mean"]), us(x["median"]), us(x["stddev"])))
print("sbx / timeout   = %.2fx (mean), %.2fx (median); target <= 0.60x"
      % (s["mean"] / to["mean"], s["median"] / to["median"]))
print("sbx / true      = %.2fx (mean)" % (s["mean"] / t["mean"]))
print("timeout / true  = %.2fx (mean)" % (to["mean"] / t["mean"]))
print("overhead over true: sbx %+.0f us, timeout %+.0f us"
      % (us(s["mean"] - t["mean"]), us(to["mean"] - t["mean"])))
PY
