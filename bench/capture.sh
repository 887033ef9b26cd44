#!/bin/sh
# bench/capture.sh: capture throughput and memory. SIZE bytes of output
# through `sbx --sandbox host -m 1M` against the same bytes through cat in
# a pipe, measured in the same hyperfine run; then sbx's peak RSS (GNU time
# -v) at 100 MiB, SIZE and 4 GiB, which must not grow with the output.
# Targets: >= 90% of the pipe's throughput; peak RSS < 2 MiB + the caps.
#
#   bench/capture.sh [SIZE] [RUNS]     (default 1G, 5 runs)
#
# Needs hyperfine, python3 and /usr/bin/time (Debian package "time").
set -eu
cd "$(dirname "$0")/.."
size=${1:-1G}
runs=${2:-5}
sbx=${SBX:-./sbx}
[ -x "$sbx" ] || { echo "bench/capture.sh: build ./sbx first (make)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench/capture.sh: hyperfine is not installed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/capture.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
mkdir -p bench/out
out=bench/out/capture.json
bytes=$(python3 -c "import sys; s=sys.argv[1]; m={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))" "$size")

# Both through sh -c, which hyperfine's shell-spawn correction removes.
hyperfine --warmup 1 --runs "$runs" --export-json "$out" \
    -n pipe "head -c $size /dev/zero | cat >/dev/null" \
    -n sbx "$sbx --sandbox host -m 1M -- head -c $size /dev/zero >/dev/null" >&2

# Peak RSS of sbx (KiB) and the counted bytes, for growing outputs.
rss() {
	/usr/bin/time -v "$sbx" --sandbox host -m 1M --result bench/out/res.kv \
	    -- head -c "$1" /dev/zero 2>bench/out/time.txt >/dev/null
	r=$(sed -n 's/.*Maximum resident set size (kbytes): //p' bench/out/time.txt)
	b=$(sed -n 's/^stdout_bytes=//p' bench/out/res.kv)
	echo "$1 $r $b"
}
{
	rss 100M
	rss "$size"
	rss 4G
	/usr/bin/time -v sh -c "head -c $size /dev/zero | cat >/dev/null" \
	    2>bench/out/time.txt
	echo "cat $(sed -n 's/.*Maximum resident set size (kbytes): //p' bench/out/time.txt) -"
	/usr/bin/time -v "$sbx" --sandbox host -m 0 -- true \
	    2>bench/out/time.txt >/dev/null
	echo "empty $(sed -n 's/.*Maximum resident set size (kbytes): //p' bench/out/time.txt) -"
} >bench/out/rss.txt

python3 - "$out" "$bytes" bench/out/rss.txt <<'PY'
import json, sys
res = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
n = int(sys.argv[2])
p, s = res["pipe"], res["sbx"]
mib = lambda t: n / t / (1 << 20)
print("%d bytes, %d runs each" % (n, len(s["times"])))
print("pipe (head | cat): mean %.3f s  %.0f MiB/s" % (p["mean"], mib(p["mean"])))
print("sbx -m 1M        : mean %.3f s  %.0f MiB/s" % (s["mean"], mib(s["mean"])))
print("sbx throughput / pipe = %.0f%% (mean), %.0f%% (best); target >= 90%%"
      % (100 * p["mean"] / s["mean"], 100 * p["min"] / s["min"]))
print("peak RSS (KiB), target < 2048 + 2 x 1024 (caps) = 4096:")
for line in open(sys.argv[3]):
    what, kib, counted = line.split()
    label = {"cat": "head | cat (for scale)", "empty": "sbx, -m 0, no output"}.get(what, "sbx -m 1M, " + what)
    extra = "" if counted == "-" else "  stdout_bytes=" + counted
    print("  %-26s %6s%s" % (label, kib, extra))
PY
