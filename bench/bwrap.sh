#!/bin/sh
# bench/bwrap.sh: what sbx costs on top of bubblewrap, as ratios.
#
#   launch_ratio   time of `sbx --backend bwrap -- /bin/true` over the same
#                  bwrap line run by hand (sbx's own --dry-run line, with the
#                  shim and the seccomp fd taken out); target <= 1.10
#   capture_ratio  throughput of 1 GiB through `sbx -m 1M` over a plain pipe
#                  into cat; target >= 0.90
#
# Both are medians of per-round ratios over ROUNDS (default 5) rounds, with
# the range of the rounds beside them. Needs hyperfine and python3. Writes
# bench/out/bwrap-launch.N.json and bwrap-capture.N.json (hyperfine's
# exports) and bench/out/bwrap.txt (key=value).
# Usage: [ROUNDS=N] bench/bwrap.sh [RUNS]
set -eu
cd "$(dirname "$0")/.."
SBX=${SBX:-$PWD/sbx}
RUNS=${1:-200}
out=$PWD/bench/out
mkdir -p "$out"
# Both run in a fresh git workspace of the bench's own. The missing held
# names are the supervisor's (no mount); the existing ones are read-only
# binds that the plain line makes too.
ws=$out/bwrap-ws
rm -rf "$ws"
mkdir -p "$ws"
git -C "$ws" init -q
trap 'rm -rf "$ws"' EXIT
cd "$ws"
command -v hyperfine >/dev/null || { echo "bench: hyperfine not installed" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench: python3 not installed" >&2; exit 1; }
"$SBX" --probe | grep -q '^bwrap=ok' || { echo "bench: bwrap backend unavailable" >&2; exit 1; }

# The plain bwrap line: sbx's dry run without "env -i VARS..." and the shim
# (which installs the seccomp filter itself), its binds by descriptor
# (--bind-fd N PATH, from folders sbx opened and checked) made binds by
# name, since a hand-run line has no such descriptors.
dry=$("$SBX" --backend bwrap --dry-run -- /bin/true)
plain=$(python3 - "$dry" <<'PY'
import shlex, sys
w = shlex.split(sys.argv[1])
i = next(k for k, a in enumerate(w) if a.endswith("/bwrap"))
w = w[i:]
j = w.index("--sbx-internal-shim")
w = w[:j - 1] + w[w.index("--", j) + 1:]
if "--seccomp" in w:
    k = w.index("--seccomp")
    del w[k:k + 2]
k = 0
while k < len(w):
    if w[k] in ("--bind-fd", "--ro-bind-fd"):
        w[k:k + 3] = [w[k][:-3], w[k + 2], w[k + 2]]
    k += 1
print(" ".join(shlex.quote(a) for a in w))
PY
)
echo "plain bwrap: $plain"
sbxq=$(printf '%s --backend bwrap -- /bin/true' "$SBX")

# Rounds of both measurements in turn, so that a machine whose speed drifts
# moves the baseline with sbx; the figures are medians of per-round ratios.
rounds=${ROUNDS:-5}
per=$(( (RUNS + rounds - 1) / rounds ))
i=1
while [ "$i" -le "$rounds" ]; do
	hyperfine -N --warmup 5 --runs "$per" --export-json "$out/bwrap-launch.$i.json" \
	    -n bwrap "$plain" -n sbx "$sbxq" >/dev/null
	hyperfine --runs 2 --export-json "$out/bwrap-capture.$i.json" \
	    -n pipe 'head -c 1G /dev/zero | cat >/dev/null' \
	    -n sbx "$SBX --backend bwrap -m 1M -- head -c 1G /dev/zero >/dev/null" \
	    >/dev/null
	i=$((i + 1))
done

python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def medians(name, i):
    with open(f"{out}/{name}.{i}.json") as f:
        return {r["command"]: r["median"] for r in json.load(f)["results"]}
l = [medians("bwrap-launch", i) for i in range(1, rounds + 1)]
c = [medians("bwrap-capture", i) for i in range(1, rounds + 1)]
med = statistics.median
lr = sorted(x["sbx"] / x["bwrap"] for x in l)
cr = sorted(x["pipe"] / x["sbx"] for x in c)
lines = [
    f"bwrap_launch_ms={med(x['bwrap'] for x in l) * 1000:.2f}",
    f"sbx_launch_ms={med(x['sbx'] for x in l) * 1000:.2f}",
    f"launch_ratio={med(lr):.3f}",
    f"launch_ratio_rounds={lr[0]:.3f}-{lr[-1]:.3f}",
    f"pipe_capture_s={med(x['pipe'] for x in c):.3f}",
    f"sbx_capture_s={med(x['sbx'] for x in c):.3f}",
    f"capture_ratio={med(cr):.3f}",
    f"capture_ratio_rounds={cr[0]:.3f}-{cr[-1]:.3f}",
]
with open(f"{out}/bwrap.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
