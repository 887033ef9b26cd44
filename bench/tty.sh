#!/bin/sh
# bench/tty.sh: sbx's terminal relay (--tty). Throughput: SIZE bytes
# (default 100M) through `sbx --sandbox host --tty --passthrough`, against
# a plain pipe (`head | cat`) and against util-linux's relay (script -qec),
# in ROUNDS (default 5) interleaved hyperfine rounds, as the median of the
# per-round ratios. Latency: one keystroke's round trip from a terminal to
# a program that echoes it, through sbx and without it (the same program
# on the terminal directly); the difference is the relay's cost.
# Targets: throughput within 1.3x of script's relay (the pty itself, not
# the pipe, is the bound); under 0.2 ms added per keystroke.
#
#   [ROUNDS=N] bench/tty.sh [SIZE] [KEYS]     (default 100M, 2000 keys)
#
# Needs hyperfine, python3 and script(1). Build first (make).
set -eu
cd "$(dirname "$0")/.."
size=${1:-100M}
keys=${2:-2000}
sbx=${SBX:-./sbx}
[ -x "$sbx" ] || { echo "bench/tty.sh: build ./sbx first (make)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench/tty.sh: hyperfine is not installed" >&2; exit 1; }
command -v script >/dev/null || { echo "bench/tty.sh: script(1) is not installed" >&2; exit 1; }
out=bench/out
mkdir -p "$out"

rounds=${ROUNDS:-5}
i=1
while [ "$i" -le "$rounds" ]; do
	hyperfine -w 1 -r 3 --export-json "$out/tty.$i.json" \
	    -n pipe "head -c $size /dev/zero | cat >/dev/null" \
	    -n script "script -qec 'head -c $size /dev/zero' /dev/null </dev/null | cat >/dev/null" \
	    -n sbx "$sbx --sandbox host --tty --passthrough -- head -c $size /dev/zero </dev/null | cat >/dev/null" \
	    >"$out/tty.txt" 2>&1 || { cat "$out/tty.txt" >&2; exit 1; }
	i=$((i + 1))
done

python3 - "$out" "$rounds" "$size" "$keys" "$sbx" <<'PY'
import json, os, pty, select, statistics, sys, time
out, rounds, size, keys, sbx = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
runs = []
for i in range(1, rounds + 1):
    r = json.load(open(f"{out}/tty.{i}.json"))["results"]
    runs.append({x["command"]: x["median"] for x in r})
def ratio(a, b):
    v = sorted(x[a] / x[b] for x in runs)
    return statistics.median(v), v[0], v[-1]
for name in ("pipe", "script", "sbx"):
    t = statistics.median(x[name] for x in runs)
    print(f"{size} via {name:6} {t:7.3f} s")
m, lo, hi = ratio("sbx", "pipe")
print(f"sbx relay / plain pipe   {m:5.1f}x (rounds {lo:.1f}-{hi:.1f})")
m, lo, hi = ratio("sbx", "script")
print(f"sbx relay / script relay {m:5.2f}x (rounds {lo:.2f}-{hi:.2f}); "
      f"target <= 1.30: {'ok' if m <= 1.3 else 'MISSED'}")

# One keystroke's round trip: the program echoes each byte it reads, its
# terminal raw; the driver times a byte out and back.
ECHO = ("import os, tty; tty.setraw(0); os.write(1, b'R')\n"
        "while True:\n"
        "    b = os.read(0, 1)\n"
        "    if b == b'q': break\n"
        "    os.write(1, b)\n")
def rtt(argv):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    buf = b""
    while b"R" not in buf:
        buf += os.read(fd, 100)
    lat = []
    for i in range(keys):
        t = time.perf_counter()
        os.write(fd, b"x")
        got = b""
        while b"x" not in got:
            select.select([fd], [], [], 5)
            got += os.read(fd, 100)
        lat.append(time.perf_counter() - t)
    os.write(fd, b"q")
    os.waitpid(pid, 0)
    lat.sort()
    return statistics.median(lat), lat[int(len(lat) * 0.9)]
py = sys.executable
direct = rtt([py, "-c", ECHO])
via = rtt([sbx, "--sandbox", "host", "--passthrough", "--", py, "-c", ECHO])
print(f"keystroke round trip, {keys} keys: direct median {direct[0] * 1e3:.3f} ms "
      f"(p90 {direct[1] * 1e3:.3f}), via sbx {via[0] * 1e3:.3f} ms "
      f"(p90 {via[1] * 1e3:.3f})")
added = via[0] - direct[0]
print(f"added by the relay: {added * 1e3:.3f} ms per keystroke; "
      f"target < 0.2: {'ok' if added < 0.0002 else 'MISSED'}")
PY
