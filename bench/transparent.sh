#!/bin/sh
# bench/transparent.sh [SIZE_MIB] [CONNECTS]: what the capture of issue 14
# costs (--allow-host for programs that ignore the proxy variables, under
# bwrap), against a straight download and against the proxy path in the
# same run.
#
#   throughput  SIZE_MIB (default 1024) downloaded by curl from a loopback
#               origin: straight (no sbx), inside bwrap through the proxy
#               variables (CONNECT, the bridge) and inside bwrap with
#               --noproxy '*' (the resolver's synthetic address, captured);
#               ratios against straight, and capture / proxy.
#   setup       CONNECTS (default 1000) sequential connections, each with
#               one echoed byte: straight, through the proxy's CONNECT,
#               captured (the name resolved once, then the synthetic
#               address); the time each adds.
#
# Targets (issue 14, as for the proxy): >= 0.8x straight throughput, at
# most +1 ms per connection. The capture needs a name: NAME below is added
# to /etc/hosts for the run (as root) and taken out again. Loopback only;
# needs python3, curl and bwrap. Run from the repository after `make`.
set -eu
size=${1:-1024}
connects=${2:-1000}
cd "$(dirname "$0")/.."
SBX=${SBX:-./sbx}
NAME=sbx-bench-transparent.example.org
MARK="# sbx bench/transparent.sh"
for c in python3 curl; do
	command -v "$c" >/dev/null 2>&1 || { echo "bench: $c not found" >&2; exit 125; }
done
[ -x "$SBX" ] || { echo "bench: $SBX not built" >&2; exit 125; }
"$SBX" --probe 2>/dev/null | grep -q '^bwrap=ok' ||
    { echo "bench: the bwrap backend does not work here" >&2; exit 125; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench.XXXXXX")
pids= added=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || :; done
	# Our line only, in place; the final newline as it was.
	[ -n "$added" ] && python3 - "$MARK" "$added" <<'EOF'
import sys
mark, nl = sys.argv[1], sys.argv[2] == "nl"
s = open("/etc/hosts").read()
s = "".join(l for l in s.splitlines(True) if mark not in l)
if nl and s.endswith("\n"):
    s = s[:-1]
with open("/etc/hosts", "r+") as f:
    f.write(s)
    f.truncate()
EOF
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if ! getent hosts "$NAME" >/dev/null 2>&1; then
	[ -w /etc/hosts ] || { echo "bench: add '127.0.0.1 $NAME' to /etc/hosts (or run as root)" >&2; exit 125; }
	if [ -n "$(tail -c 1 /etc/hosts)" ]; then added=nl; echo >>/etc/hosts; else added=yes; fi
	printf '127.0.0.1 %s %s\n' "$NAME" "$MARK" >>/etc/hosts
fi
truncate -s "${size}M" "$dir/big"

cat >"$dir/origin.py" <<'EOF'
# An HTTP/1.0 origin that answers every GET with the file (sendfile), and
# an echo origin; ports on stdout.
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
# N sequential connections, one echoed byte each: "direct" to 127.0.0.1,
# "proxy" by CONNECT NAME:PORT through $http_proxy, "capture" to NAME's
# address (resolved once). Prints ms per connection.
import os, socket, sys, time
mode, name, port, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if mode == "proxy":
    hp = os.environ["http_proxy"].split("//")[1].rstrip("/")
    ph, pp = hp.rsplit(":", 1)
addr = "127.0.0.1" if mode == "direct" else socket.gethostbyname(name)
t0 = time.perf_counter()
for _ in range(n):
    if mode == "proxy":
        s = socket.create_connection((ph, int(pp)))
        s.sendall(b"CONNECT %s:%d HTTP/1.1\r\n\r\n" % (name.encode(), port))
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += s.recv(4096)
        assert buf.startswith(b"HTTP/1.1 200"), buf
    else:
        s = socket.create_connection((addr, port))
    s.sendall(b"x")
    assert s.recv(1) == b"x"
    s.close()
print("%.3f %s" % ((time.perf_counter() - t0) * 1000 / n, addr))
EOF
cp "$dir/connects.py" "$PWD/.bench-connects.py"
trap 'rm -f "$PWD/.bench-connects.py"; cleanup' EXIT

python3 "$dir/origin.py" "$dir/big" >"$dir/ports" &
pids="$pids $!"
for _ in $(seq 50); do [ -s "$dir/ports" ] && break; sleep 0.1; done
read -r OP EP <"$dir/ports"

CURL='curl -sS -o /dev/null -w "%{speed_download}\n"'
runs=${RUNS:-3}

# inside ARGS...: one sbx bwrap run, the origins allowed; its stdout value.
inside() {
	"$SBX" --backend bwrap --allow-private --allow-host "$NAME:$OP" \
	    --allow-host "$NAME:$EP" -- "$@" >"$dir/out"
	sed -n 's/^stdout=\([0-9.]*\).*/\1/p' "$dir/out"
}

# best WHAT: the best of $runs of a download, bytes/s.
best() {
	b=0
	for _ in $(seq "$runs"); do
		case $1 in
		straight) s=$(eval "$CURL --noproxy '*' http://127.0.0.1:$OP/big") ;;
		proxy) s=$(inside sh -c "$CURL -p http://$NAME:$OP/big") ;;
		capture) s=$(inside sh -c "$CURL --noproxy '*' http://$NAME:$OP/big") ;;
		esac
		b=$(awk -v a="${s:-0}" -v b="$b" 'BEGIN { print (a > b) ? a : b }')
	done
	echo "$b"
}

mbps() {
	awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'
}

eval "$CURL --noproxy '*' http://127.0.0.1:$OP/big" >/dev/null	# warm the cache
echo "throughput: $size MiB from a loopback origin, curl -o /dev/null, best of $runs"
straight=$(best straight)
proxy=$(best proxy)
capture=$(best capture)
printf '  %-34s %6s MiB/s\n' straight "$(mbps "$straight")"
printf '  %-34s %6s MiB/s  %.2fx straight\n' "sbx bwrap, proxy (CONNECT)" \
    "$(mbps "$proxy")" "$(awk -v a="$proxy" -v b="$straight" 'BEGIN { print a / b }')"
printf '  %-34s %6s MiB/s  %.2fx straight, %.2fx proxy\n' "sbx bwrap, captured (--noproxy '*')" \
    "$(mbps "$capture")" "$(awk -v a="$capture" -v b="$straight" 'BEGIN { print a / b }')" \
    "$(awk -v a="$capture" -v b="$proxy" 'BEGIN { print a / b }')"

echo "setup: $connects sequential connections, each with one echoed byte"
direct=$(python3 "$dir/connects.py" direct "$NAME" "$EP" "$connects" | cut -d' ' -f1)
printf '  %-34s %7s ms each\n' straight "$direct"
for m in proxy capture; do
	r=$(inside python3 "$PWD/.bench-connects.py" "$m" "$NAME" "$EP" "$connects")
	printf '  %-34s %7s ms each, %s ms added\n' "sbx bwrap, $m" "$r" \
	    "$(awk -v a="$r" -v b="$direct" 'BEGIN { printf "%.3f", a - b }')"
done
