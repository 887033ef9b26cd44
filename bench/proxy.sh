#!/bin/sh
# bench/proxy.sh [SIZE_MIB] [CONNECTS]: what sbx's --allow-host proxy costs.
#
#   throughput  SIZE_MIB (default 1024) downloaded by curl from a loopback
#               origin (Python, sendfile) straight, through a plain socat
#               relay, and through sbx's proxy: plain HTTP and CONNECT, with
#               --sandbox host and (where they work) inside bwrap through
#               the bridge and under Landlock, whose supervisor sends the
#               connect to 127.0.0.1:3128 to the proxy's own port;
#               ratios against straight.
#   setup       CONNECTS (default 1000) sequential CONNECTs, each a new
#               connection, lookup and tunnel, against plain connects to
#               the same echo origin: the added time per CONNECT.
#   memory      sbx's own peak RSS (VmHWM) during each download.
#
# Targets (issue 4): >= 80% of straight throughput, < 1 ms added per
# CONNECT, peak RSS bounded whatever the size. Loopback only; needs
# python3, curl, socat, Linux /proc. Run from the repository after `make`.
set -eu
size=${1:-1024}
connects=${2:-1000}
cd "$(dirname "$0")/.."
SBX=${SBX:-./sbx}
for c in python3 curl socat; do
	command -v "$c" >/dev/null 2>&1 || { echo "bench: $c not found" >&2; exit 125; }
done
[ -x "$SBX" ] || { echo "bench: $SBX not built" >&2; exit 125; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench.XXXXXX")
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || :; done
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
truncate -s "${size}M" "$dir/big"

cat >"$dir/origin.py" <<'EOF'
# An HTTP/1.0 origin that answers every GET with the file (sendfile, so
# it is not the bottleneck), and an echo origin; ports on stdout.
import os, socket, sys, threading
path = sys.argv[1]
size = os.path.getsize(path)

def http(c):
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = c.recv(4096)
        if not b:
            return
        buf += b
    c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
    with open(path, "rb") as f:
        c.sendfile(f)
    c.close()

def echo(c):
    while True:
        b = c.recv(65536)
        if not b:
            break
        c.sendall(b)
    c.close()

def serve(s, fn):
    while True:
        c, _ = s.accept()
        threading.Thread(target=fn, args=(c,), daemon=True).start()

ls = []
for fn in (http, echo):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(128)
    ls.append(s)
    threading.Thread(target=serve, args=(s, fn), daemon=True).start()
print(ls[0].getsockname()[1], ls[1].getsockname()[1], flush=True)
threading.Event().wait()
EOF

cat >"$dir/connects.py" <<'EOF'
# N sequential connections: through the proxy in $http_proxy with CONNECT
# (mode "proxy"), or straight to the echo port (mode "direct"); each one
# round-trips one byte so the tunnel is proven; prints ms per connection.
import os, socket, sys, time
mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
hp = os.environ.get("http_proxy", "http://x:0").split("//")[1].rstrip("/")
ph, pp = hp.rsplit(":", 1)
t0 = time.perf_counter()
for _ in range(n):
    if mode == "proxy":
        s = socket.create_connection((ph, int(pp)))
        s.sendall(b"CONNECT localhost:%d HTTP/1.1\r\n\r\n" % port)
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += s.recv(4096)
        assert buf.startswith(b"HTTP/1.1 200"), buf
    else:
        s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"x")
    assert s.recv(1) == b"x"
    s.close()
print("%.3f" % ((time.perf_counter() - t0) * 1000 / n))
EOF

python3 "$dir/origin.py" "$dir/big" >"$dir/ports" &
pids="$pids $!"
for _ in $(seq 50); do [ -s "$dir/ports" ] && break; sleep 0.1; done
read -r OP EP <"$dir/ports"

# socat as a plain relay: the reference point a generic proxy reaches.
SP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
socat TCP-LISTEN:"$SP",bind=127.0.0.1,reuseaddr,fork TCP:127.0.0.1:"$OP" &
pids="$pids $!"
sleep 0.3

bwrap_ok=0 landlock_ok=0
"$SBX" --probe 2>/dev/null | grep -q '^bwrap=ok' && bwrap_ok=1
"$SBX" --probe 2>/dev/null | grep -q '^landlock=ok' && landlock_ok=1

CURL='curl -sS --noproxy "" -o /dev/null -w "%{speed_download}\n"'

# mbps BYTES_PER_SECOND
mbps() {
	awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'
}

# once EXEC CURL-ARGS: bytes/s through sbx, and sbx's own peak RSS (its
# VmHWM, sampled until it exits: GNU time would report curl's, a child).
once() {
	ex=$1 args=$2
	# shellcheck disable=SC2086 # $ex is two words on purpose
	"$SBX" $ex --allow-private --allow-host "localhost:$OP" \
	    --allow-host "localhost:$EP" -- sh -c "$CURL $args" >"$dir/out" &
	pid=$!
	hwm=0
	while kill -0 "$pid" 2>/dev/null; do
		h=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status" \
		    2>/dev/null || :)
		[ -n "$h" ] && hwm=$h
		sleep 0.05
	done
	wait "$pid" || :
	speed=$(sed -n 's/^stdout=\([0-9.]*\).*/\1/p' "$dir/out")
	echo "${speed:-0} $hwm"
}

# through EXEC CURL-ARGS: the best of $runs.
through() {
	best=0 rss=0
	for _ in $(seq "$runs"); do
		r=$(once "$1" "$2")
		best=$(awk -v a="${r% *}" -v b="$best" 'BEGIN { print (a > b) ? a : b }')
		[ "${r#* }" -gt "$rss" ] && rss=${r#* }
	done
	echo "$best $rss"
}

# best CMD: the best of $runs of a curl line printing bytes/s.
best() {
	b=0
	for _ in $(seq "$runs"); do
		s=$(eval "$1")
		b=$(awk -v a="$s" -v b="$b" 'BEGIN { print (a > b) ? a : b }')
	done
	echo "$b"
}

runs=${RUNS:-3}
eval "$CURL http://127.0.0.1:$OP/big" >/dev/null	# warm the page cache
echo "throughput: $size MiB from a loopback origin, curl -o /dev/null, best of $runs"
straight=$(best "$CURL http://127.0.0.1:$OP/big")
printf '  %-28s %6s MiB/s\n' straight "$(mbps "$straight")"
relay=$(best "$CURL http://127.0.0.1:$SP/big")
printf '  %-28s %6s MiB/s  %3.0f%%\n' "socat relay" "$(mbps "$relay")" \
    "$(awk -v a="$relay" -v b="$straight" 'BEGIN { print 100 * a / b }')"

row() {
	label=$1 ex=$2 args=$3
	# shellcheck disable=SC2046 # two numbers
	set -- $(through "$ex" "$args")
	printf '  %-28s %6s MiB/s  %3.0f%%  sbx peak RSS %s KiB\n' "$label" \
	    "$(mbps "$1")" \
	    "$(awk -v a="$1" -v b="$straight" 'BEGIN { print 100 * a / b }')" "$2"
}
row "sbx host, plain HTTP" "--sandbox host" "http://localhost:$OP/big"
row "sbx host, CONNECT" "--sandbox host" "-p http://localhost:$OP/big"
if [ "$bwrap_ok" = 1 ]; then
	row "sbx bwrap, plain HTTP" "--backend bwrap" "http://localhost:$OP/big"
	row "sbx bwrap, CONNECT" "--backend bwrap" "-p http://localhost:$OP/big"
fi
if [ "$landlock_ok" = 1 ]; then
	row "sbx landlock, plain HTTP" "--backend landlock" "http://localhost:$OP/big"
	row "sbx landlock, CONNECT" "--backend landlock" "-p http://localhost:$OP/big"
fi

echo "setup: $connects sequential connections, each with one echoed byte"
direct=$(python3 "$dir/connects.py" direct "$EP" "$connects")
printf '  %-28s %7s ms each\n' straight "$direct"
for ex in "--sandbox host" "--backend bwrap" "--backend landlock"; do
	[ "$ex" = "--backend bwrap" ] && [ "$bwrap_ok" = 0 ] && continue
	[ "$ex" = "--backend landlock" ] && [ "$landlock_ok" = 0 ] && continue
	# shellcheck disable=SC2086 # --host-tmp: the script is in the host's /tmp
	"$SBX" $ex --host-tmp --allow-private --allow-host "localhost:$EP" -- \
	    python3 "$dir/connects.py" proxy "$EP" "$connects" >"$dir/out"
	per=$(sed -n 's/^stdout=\([0-9.]*\).*/\1/p' "$dir/out")
	printf '  %-28s %7s ms each, %s ms added\n' "sbx $ex, CONNECT" "$per" \
	    "$(awk -v a="$per" -v b="$direct" 'BEGIN { printf "%.3f", a - b }')"
done
