#!/bin/sh
# bench/bwrap.sh: what sbx costs on top of bubblewrap, as ratios.
#
#   launch_ratio   time of `sbx --backend bwrap -- /bin/true` over the same
#                  bwrap line run by hand (sbx's own --dry-run line, with the
#                  shim and the seccomp fd taken out); target <= 1.10
#   capture_ratio  throughput of 1 GiB through `sbx -m 1M` over a plain pipe
#                  into cat; target >= 0.90
#
# Needs hyperfine and python3. Writes bench/out/bwrap.json (hyperfine's
# exports) and bench/out/bwrap.txt (key=value). Usage: bench/bwrap.sh [RUNS]
set -eu
cd "$(dirname "$0")/.."
SBX=${SBX:-./sbx}
RUNS=${1:-200}
out=bench/out
mkdir -p "$out"
command -v hyperfine >/dev/null || { echo "bench: hyperfine not installed" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench: python3 not installed" >&2; exit 1; }
"$SBX" --probe | grep -q '^bwrap=ok' || { echo "bench: bwrap backend unavailable" >&2; exit 1; }

# The plain bwrap line: sbx's dry run without "env -i VARS..." and the shim
# (which installs the seccomp filter itself).
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
print(" ".join(shlex.quote(a) for a in w))
PY
)
echo "plain bwrap: $plain"
sbxq=$(printf '%s --backend bwrap -- /bin/true' "$SBX")

hyperfine -N --warmup 20 --runs "$RUNS" --export-json "$out/bwrap-launch.json" \
    -n bwrap "$plain" -n sbx "$sbxq"
hyperfine --warmup 1 --runs 5 --export-json "$out/bwrap-capture.json" \
    -n pipe 'head -c 1G /dev/zero | cat >/dev/null' \
    -n sbx "$SBX --backend bwrap -m 1M -- head -c 1G /dev/zero >/dev/null"

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def means(name):
    with open(f"{out}/{name}") as f:
        return {r["command"]: r["mean"] for r in json.load(f)["results"]}
l = means("bwrap-launch.json")
c = means("bwrap-capture.json")
lines = [
    f"bwrap_launch_ms={l['bwrap'] * 1000:.2f}",
    f"sbx_launch_ms={l['sbx'] * 1000:.2f}",
    f"launch_ratio={l['sbx'] / l['bwrap']:.3f}",
    f"pipe_capture_s={c['pipe']:.3f}",
    f"sbx_capture_s={c['sbx']:.3f}",
    f"capture_ratio={c['pipe'] / c['sbx']:.3f}",
]
with open(f"{out}/bwrap.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
