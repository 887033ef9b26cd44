#!/bin/sh
# bench/side.sh: the launch of /bin/true, side by side, in one interleaved
# run: every round runs each command once, in an order that alternates
# between rounds, so a machine whose speed drifts moves both sides of a
# pair alike; each pair's figure is the median of its per-round ratios
# (wall time, fork to reaped, from this script's process).
#
#   host      sbx --sandbox host          / timeout 10 /bin/true
#   landlock  sbx --backend landlock      / sbx --sandbox host
#   bwrap     sbx --backend bwrap         / bare bwrap (below)
#   ah-bwrap  bwrap + --allow-host        / sbx --backend bwrap
#   ah-ll     landlock + --allow-host     / sbx --backend landlock
#   srt       srt /bin/true               / sbx --backend bwrap (when
#             srt is on PATH; otherwise skipped, and the reason printed)
#
# bare bwrap: bwrap --unshare-all --die-with-parent --new-session
#   --ro-bind / / --dev /dev --proc /proc /bin/true
#
# The allowed host is registry.example.org, never resolved: /bin/true
# makes no connection. Targets: host <= 0.6, landlock <= 1.1, ah-* <=
# 1.15.
#
#   [ROUNDS=N] [WS=DIR] bench/side.sh [SBX]
#
# ROUNDS: default 200. WS: the workspace (-C), default a fresh empty
# folder; WS=. times it in this checkout (a git workspace). Needs python3.
set -eu
cd "$(dirname "$0")/.."
sbx=${1:-$PWD/sbx}
[ -x "$sbx" ] || { echo "bench/side.sh: build ./sbx first (make)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench/side.sh: python3 is not installed" >&2; exit 1; }
if [ -z "${WS:-}" ]; then
	WS=$(mktemp -d)
	trap 'rm -rf "$WS"' EXIT
fi
echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$sbx" "${ROUNDS:-200}" "$WS" <<'PY'
import os, shutil, statistics, subprocess, sys, time
sbx, rounds, ws = sys.argv[1], int(sys.argv[2]), sys.argv[3]
probe = subprocess.run([sbx, "--probe"], capture_output=True, text=True).stdout
ok = lambda b: f"{b}=ok" in probe
ah = ["--allow-host", "registry.example.org"]
cmd = {
    "timeout": ["timeout", "10", "/bin/true"],
    "host": [sbx, "-C", ws, "--sandbox", "host", "--", "/bin/true"],
}
if ok("landlock"):
    cmd["landlock"] = [sbx, "-C", ws, "--backend", "landlock", "--", "/bin/true"]
    cmd["landlock+ah"] = [sbx, "-C", ws, "--backend", "landlock", *ah,
                          "--", "/bin/true"]
bw = shutil.which("bwrap")
if ok("bwrap"):
    cmd["bwrap"] = [sbx, "-C", ws, "--backend", "bwrap", "--", "/bin/true"]
    cmd["bwrap+ah"] = [sbx, "-C", ws, "--backend", "bwrap", *ah, "--",
                       "/bin/true"]
if bw and ok("bwrap"):
    cmd["bare-bwrap"] = [bw, "--unshare-all", "--die-with-parent",
                         "--new-session", "--ro-bind", "/", "/", "--dev",
                         "/dev", "--proc", "/proc", "/bin/true"]
srt = shutil.which("srt")
if srt and ok("bwrap"):
    cmd["srt"] = [srt, "/bin/true"]
pairs = [("host", "host", "timeout", 0.6), ("landlock", "landlock", "host", 1.1),
         ("bwrap", "bwrap", "bare-bwrap", None),
         ("ah-bwrap", "bwrap+ah", "bwrap", 1.15),
         ("ah-ll", "landlock+ah", "landlock", 1.15),
         ("srt", "srt", "bwrap", None)]
for name, a, b, _ in pairs:
    if a not in cmd or b not in cmd:
        why = ("srt is not on PATH" if name == "srt" and not srt else
               f"{a if a not in cmd else b} is unavailable here")
        print(f"{name:9} skipped: {why}")
null = os.open(os.devnull, os.O_RDWR)
def run(argv):
    t = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0] if argv[0].startswith("/") else
                         shutil.which(argv[0]), argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, null, 0),
                                       (os.POSIX_SPAWN_DUP2, null, 1),
                                       (os.POSIX_SPAWN_DUP2, null, 2)])
    os.waitpid(pid, 0)
    return (time.perf_counter_ns() - t) / 1e3
names = list(cmd)
for n in names:             # warm-up: caches, the first temp folder
    for _ in range(3):
        run(cmd[n])
t = {n: [] for n in names}
for r in range(rounds):
    for n in (names if r % 2 == 0 else names[::-1]):
        t[n].append(run(cmd[n]))
med = statistics.median
print(f"{rounds} rounds; medians in us (wall, fork to reaped):")
for n in names:
    v = sorted(t[n])
    print(f"  {n:12} {med(v):8.0f}  (p10 {v[len(v) // 10]:.0f}, p90 "
          f"{v[len(v) * 9 // 10]:.0f})")
for name, a, b, goal in pairs:
    if a not in cmd or b not in cmd:
        continue
    q = sorted(x / y for x, y in zip(t[a], t[b]))
    g = "" if goal is None else (f"  goal <= {goal}: " +
                                 ("ok" if med(q) <= goal else "MISSED"))
    print(f"{name:9} {a} / {b} = {med(q):.3f}x  (p10 {q[len(q) // 10]:.2f},"
          f" p90 {q[len(q) * 9 // 10]:.2f}; +{med(t[a]) - med(t[b]):.0f} us)"
          f"{g}")
PY
