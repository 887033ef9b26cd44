#!/bin/sh
# bench/phases.sh: the per-phase account of a launch (SBX_TIMING=1, see
# the man page's ENVIRONMENT), for each backend: `sbx --sandbox host`,
# `--backend landlock`, `--backend bwrap` and bwrap with
# `--allow-host registry.example.org`, each RUNS times (default 30) in
# turn, in the folder WS (default: a fresh empty one); prints the median
# of each phase in microseconds, one column per backend. Parts measured
# inside a phase (policy/..., in/...) count in it too.
#
#   [WS=DIR] bench/phases.sh [RUNS] [SBX]
#
# Needs python3. No network is used: the allowed host is never resolved.
set -eu
cd "$(dirname "$0")/.."
runs=${1:-30}
sbx=${2:-$PWD/sbx}
[ -x "$sbx" ] || { echo "bench/phases.sh: build ./sbx first (make)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench/phases.sh: python3 is not installed" >&2; exit 1; }
if [ -z "${WS:-}" ]; then
	WS=$(mktemp -d)
	trap 'rm -rf "$WS"' EXIT
fi
python3 - "$sbx" "$runs" "$WS" <<'PY'
import os, statistics, subprocess, sys
sbx, runs, ws = sys.argv[1], int(sys.argv[2]), sys.argv[3]
probe = subprocess.run([sbx, "--probe"], capture_output=True, text=True).stdout
rows = [("host", ["--sandbox", "host"])]
for b in ("landlock", "bwrap"):
    if f"{b}=ok" in probe:
        rows.append((b, ["--backend", b]))
if "bwrap=ok" in probe:
    rows.append(("bwrap+ah", ["--backend", "bwrap", "--allow-host",
                              "registry.example.org"]))
env = dict(os.environ, SBX_TIMING="1")
got = {name: {} for name, _ in rows}
order = []
for i in range(runs + 1):
    for name, opts in rows:
        p = subprocess.run([sbx, "-C", ws, *opts, "--", "/bin/true"],
                           env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if i == 0:
            continue        # a warm-up round
        for line in p.stderr.splitlines():
            w = line.split()
            if len(w) == 5 and w[:2] == ["sbx:", "timing:"]:
                got[name].setdefault(w[2], []).append(int(w[3]))
                if w[2] not in order:
                    order.append(w[2])
print("%-14s" % "phase (us)" + "".join("%10s" % n for n, _ in rows))
for ph in order:
    cells = []
    for name, _ in rows:
        v = got[name].get(ph)
        cells.append("%10d" % statistics.median(v) if v else "%10s" % "-")
    print("%-14s" % ph + "".join(cells))
tot = []
for name, _ in rows:
    t = sum(statistics.median(v) for k, v in got[name].items() if "/" not in k)
    tot.append("%10d" % t)
print("%-14s" % "sum" + "".join(tot))
PY
