#!/usr/bin/env bats
# --allow-host localhost:PORT (issue 23): exactly that port of the host's
# loopback is reachable from inside, on bwrap (sbx's relay on 127.0.0.1
# and [::1] in the sandbox's own loopback) and on Landlock (the
# supervisor lets connect reach 127.0.0.1, ::1 at that port), and no
# other: not directly, not through sbx's proxy, not by another spelling.
# The command's own servers on other ports still work. Real servers this
# file starts on the host's loopback (random ports), real curl and python
# clients inside; t/run runs it as root and as nobody.

load helper
bats_require_minimum_version 1.5.0

# The host's servers: HTTP on 127.0.0.1 answering "allowed" (A) and
# "other" (B), a TCP echo server (E, EOF answered with EOF), and HTTP on
# ::1 only, "v6only" (V, 0 where the host has no IPv6). "A B E V" goes to
# the file $1.
write_servers() {
	cat <<'EOF'
import http.server, socket, socketserver, sys, threading

class Say(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        body = (self.server.word + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            b = self.request.recv(65536)
            if not b:
                break
            self.request.sendall(b)
        self.request.shutdown(socket.SHUT_WR)

class Tcp(socketserver.ThreadingTCPServer):
    daemon_threads = True

class Tcp6(Tcp):
    address_family = socket.AF_INET6

def http(cls, addr, word):
    s = type("S", (cls,), {"word": word})(addr, Say)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s.server_address[1]

a = http(Tcp, ("127.0.0.1", 0), "allowed")
b = http(Tcp, ("127.0.0.1", 0), "other")
e = Tcp(("127.0.0.1", 0), Echo)
threading.Thread(target=e.serve_forever, daemon=True).start()
try:
    v = http(Tcp6, ("::1", 0), "v6only")
except OSError:
    v = 0
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d %d %d %d\n" % (a, b, e.server_address[1], v))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Event().wait()
EOF
}

# The client inside: one line per attempt, "WHAT: RESULT".
write_client() {
	cat <<'EOF'
import errno, os, socket, sys, threading

def err(e):
    return errno.errorcode.get(e.errno, str(e)) if e.errno else str(e)

def get(host, port, fam=socket.AF_INET):
    """An HTTP GET straight to host:port: the body, or the error."""
    try:
        s = socket.socket(fam)
        s.settimeout(10)
        s.connect((host, int(port)))
        s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
        got = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            got += b
        body = got.partition(b"\r\n\r\n")[2].decode().strip()
        return body or "(reset or empty)"
    except OSError as e:
        return err(e)

def proxy(line):
    """One request line to sbx's proxy: its status line."""
    hp = os.environ["http_proxy"].split("//", 1)[1].rstrip("/")
    h, p = hp.rsplit(":", 1)
    s = socket.create_connection((h, int(p)), timeout=20)
    s.sendall(line.encode() + b"\r\nHost: x\r\n\r\n")
    got = b""
    while b"\r\n" not in got:
        b = s.recv(4096)
        if not b:
            break
        got += b
    return got.split(b"\r\n")[0].decode() or "(closed)"

def halfclose(port, n):
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=30)
    got = [0]
    def reader():
        while True:
            b = s.recv(65536)
            if not b:
                break
            got[0] += len(b)
    t = threading.Thread(target=reader)
    t.start()
    s.sendall(b"x" * int(n))
    s.shutdown(socket.SHUT_WR)
    t.join(30)
    return "echoed %d" % got[0]

def udp(port):
    try:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(
            b"x", ("127.0.0.1", int(port)))
        return "sent"
    except OSError as e:
        return err(e)

def bind(host, port, fam=socket.AF_INET):
    try:
        socket.socket(fam).bind((host, int(port)))
        return "bound"
    except OSError as e:
        return err(e)

for arg in sys.argv[1:]:
    what, _, rest = arg.partition("=")
    a = rest.split(",")
    r = {"get": lambda: get(*a), "get6": lambda: get(a[0], a[1], socket.AF_INET6),
         "proxy": lambda: proxy(rest), "halfclose": lambda: halfclose(*a),
         "udp": lambda: udp(*a), "bind": lambda: bind(*a),
         "bind6": lambda: bind(a[0], a[1], socket.AF_INET6)}[what]()
    print("%s: %s" % (arg, r), flush=True)
EOF
}

setup_file() {
	command -v python3 >/dev/null 2>&1 || return 0
	D=$BATS_FILE_TMPDIR
	write_servers >"$D/servers.py"
	write_client >"$D/client.py"
	python3 "$D/servers.py" "$D/ports" >"$D/servers.log" 2>&1 3>&- &
	echo $! >"$D/servers.pid"
	for _ in $(seq 50); do
		[ -s "$D/ports" ] && break
		sleep 0.1
	done
}

teardown_file() {
	D=$BATS_FILE_TMPDIR
	[ -s "$D/servers.pid" ] && kill "$(cat "$D/servers.pid")" 2>/dev/null
	return 0
}

setup() {
	require_cmd python3
	D=$BATS_FILE_TMPDIR
	[ -s "$D/ports" ] || sbx_skip "the host's loopback servers did not start: $(cat "$D/servers.log" 2>/dev/null)"
	read -r A B E V <"$D/ports"
	cp "$D/client.py" "$BATS_TEST_TMPDIR/"
	CLIENT="python3 $BATS_TEST_TMPDIR/client.py"
	cd "$BATS_TEST_TMPDIR" || return 1
	pids=()
}

teardown() {
	kill_bg
}

# lb BACKEND SCRIPT [OPTION...]: sh -c SCRIPT under sbx on BACKEND, with
# the host's ports A and E allowed; the result in $output.
lb() {
	local b=$1 script=$2
	shift 2
	case $b in
	bwrap) require_bwrap || return ;;
	landlock) require_landlock || return ;;
	esac
	run --separate-stderr "$SBX" --backend "$b" -t 60 "$@" \
	    --allow-host "localhost:$A" --allow-host "127.0.0.1:$E" \
	    -- sh -c "$script" 3>&-
	[ "$(kv exit_code)" = 0 ] || { echo "$output" >&2; return 1; }
}

t_allowed() {
	require_cmd curl
	# curl with the proxy variables set, as the command sees them: NO_PROXY
	# lists localhost, so it goes straight to the port
	lb "$1" 'env | grep -c "^no_proxy=localhost,"
	    curl -sS -m 10 http://localhost:'"$A"'/
	    curl -sS -m 10 http://127.0.0.1:'"$A"'/
	    curl -sS -m 10 --noproxy "*" http://localhost:'"$A"'/'
	[ "$(kv stdout)" = '1\nallowed\nallowed\nallowed\n' ] || { echo "$output" >&2; return 1; }
	[ "$(kv allowed_local)" = "localhost:$A localhost:$E" ]
	! kv_has blocked_hosts || return 1
	[[ "$(kv denied)" != *connect* ]]
	# and in JSON, the same string
	run --separate-stderr "$SBX" --backend "$1" --format json \
	    --allow-host "localhost:$A" -- true 3>&-
	printf '%s' "$output" | python3 -c '
import json, sys
assert json.load(sys.stdin)["allowed_local"] == "localhost:'"$A"'"'
}

# A second host port, listening on the host: refused. Under Landlock the
# supervisor refuses the connect and lists it in denied; under bwrap the
# sandbox's own loopback has nothing at that port (the host's is not
# there at all), so the kernel refuses it and there is nothing to list.
t_other_port() {
	require_cmd curl
	lb "$1" 'curl -sS -m 10 http://127.0.0.1:'"$B"'/ 2>/dev/null; echo curl=$?
	    curl -sS -m 10 --noproxy "*" http://localhost:'"$B"'/ 2>/dev/null; echo curl=$?
	    '"$CLIENT get=127.0.0.1,$B get6=::1,$B get=127.0.0.2,$A get6=::ffff:127.0.0.1,$B"
	[ "$(kv stdout)" = "curl=7\ncurl=7\nget=127.0.0.1,$B: ECONNREFUSED\nget6=::1,$B: ECONNREFUSED\nget=127.0.0.2,$A: ECONNREFUSED\nget6=::ffff:127.0.0.1,$B: ECONNREFUSED\n" ] || {
		echo "$output" >&2
		return 1
	}
	if [ "$1" = landlock ]; then
		[[ "; $(kv denied)" == *"; connect 127.0.0.1:$B"* ]]
		[[ "; $(kv denied)" == *"; connect [::1]:$B"* ]]
		[[ "; $(kv denied)" == *"; connect 127.0.0.2:$A"* ]]
	else
		[[ "$(kv denied)" != *connect* ]]
	fi
}

# The command's own server on a third port answers from inside, beside
# the allowed host port.
t_own_server() {
	require_cmd curl
	local c
	c=$(free_port)
	lb "$1" 'python3 -m http.server -b 127.0.0.1 '"$c"' >/dev/null 2>&1 &
	    for i in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:'"$c"'/ && break; sleep 0.1; done
	    curl -sS -m 10 -o /dev/null -w "%{http_code}\n" http://localhost:'"$c"'/
	    curl -sS -m 10 http://localhost:'"$A"'/
	    kill $!'
	[ "$(kv stdout)" = '200\nallowed\n' ] || { echo "$output" >&2; return 1; }
}

# Through sbx's proxy: the allowed port (a client that ignores NO_PROXY),
# nothing else of the host's loopback, in any form of request.
t_proxy() {
	require_cmd curl
	lb "$1" 'curl -sS -m 10 --noproxy "" http://localhost:'"$A"'/
	    curl -sS -m 10 --noproxy "" -p http://localhost:'"$A"'/
	    '"$CLIENT 'proxy=GET http://localhost:$B/ HTTP/1.1' \
	    'proxy=CONNECT localhost:$B HTTP/1.1' \
	    'proxy=CONNECT localhost.:$B HTTP/1.1' \
	    'proxy=GET http://LOCALHOST:$B/ HTTP/1.1' \
	    'proxy=CONNECT 127.0.0.1:$A HTTP/1.1' \
	    'proxy=CONNECT [::1]:$B HTTP/1.1' \
	    'proxy=GET http://127.0.0.1:$B/ HTTP/1.1' \
	    'proxy=GET http://localhost:$A@localhost:$B/ HTTP/1.1'"
	out=$(printf '%b' "$(kv stdout)")
	[ "$(printf '%s\n' "$out" | head -n 2)" = $'allowed\nallowed' ] || { echo "$output" >&2; return 1; }
	[ "$(printf '%s\n' "$out" | grep -c ': HTTP/1.1 403 ')" -eq 7 ] || { echo "$out" >&2; return 1; }
	[ "$(printf '%s\n' "$out" | grep -c ': HTTP/1.1 400 ')" -eq 1 ]
	[[ ",$(kv blocked_reasons)," == *",localhost:$B port,"* ]]
	[[ ",$(kv blocked_reasons)," == *",127.0.0.1 ip_address,"* ]]
	[[ "$stderr" == *"sbx: warning: --allow-host localhost: port $B refused (--allow-host localhost:$B allows it)"* ]]
}

@test "bwrap: the allowed host loopback port answers from inside, with no proxy variable" {
	t_allowed bwrap
}

@test "landlock: the allowed host loopback port answers from inside, with no proxy variable" {
	t_allowed landlock
}

@test "bwrap: another host loopback port is refused, by any address" {
	t_other_port bwrap
}

@test "landlock: another host loopback port is refused, by any address, and listed in denied" {
	t_other_port landlock
}

@test "bwrap: the command's own server on a third port answers" {
	t_own_server bwrap
}

@test "landlock: the command's own server on a third port answers" {
	t_own_server landlock
}

@test "bwrap: through the proxy, only the allowed host loopback port" {
	t_proxy bwrap
}

@test "landlock: through the proxy, only the allowed host loopback port" {
	t_proxy landlock
}

@test "bwrap: the relay carries a half-close and 4 MiB both ways; [::1] inside reaches it too" {
	lb bwrap "$CLIENT halfclose=$E,4194304 get6=::1,$A"
	[ "$(kv stdout)" = "halfclose=$E,4194304: echoed 4194304\nget6=::1,$A: allowed\n" ] || {
		echo "$output" >&2
		return 1
	}
}

@test "landlock: a stream reaches the allowed port by 127.0.0.1 and ::ffff:127.0.0.1, no datagram does" {
	lb landlock "$CLIENT halfclose=$E,4194304 get6=::ffff:127.0.0.1,$A udp=$A"
	[ "$(kv stdout)" = "halfclose=$E,4194304: echoed 4194304\nget6=::ffff:127.0.0.1,$A: allowed\nudp=$A: ECONNREFUSED\n" ] || {
		echo "$output" >&2
		return 1
	}
	[[ "; $(kv denied)" == *"; sendto 127.0.0.1:$A"* ]]
}

@test "bwrap: the relay holds its ports before the command runs: it cannot take them" {
	lb bwrap "$CLIENT bind=127.0.0.1,$A bind6=::1,$A bind=0.0.0.0,$A get=127.0.0.1,$A"
	[ "$(kv stdout)" = "bind=127.0.0.1,$A: EADDRINUSE\nbind6=::1,$A: EADDRINUSE\nbind=0.0.0.0,$A: EADDRINUSE\nget=127.0.0.1,$A: allowed\n" ] || {
		echo "$output" >&2
		return 1
	}
}

@test "bwrap: a host server on ::1 alone is reached by 127.0.0.1 inside" {
	[ "$V" != 0 ] || sbx_skip "the host has no IPv6 loopback (::1)"
	lb bwrap "$CLIENT get=127.0.0.1,$V get6=::1,$V" --allow-host "[::1]:$V"
	[ "$(kv stdout)" = "get=127.0.0.1,$V: v6only\nget6=::1,$V: v6only\n" ] || {
		echo "$output" >&2
		return 1
	}
}

@test "bwrap: nothing at the allowed host port: the client's connection is reset, not relayed elsewhere" {
	local p
	p=$(free_port)
	lb bwrap "$CLIENT get=127.0.0.1,$p" --allow-host "localhost:$p"
	[[ "$(kv stdout)" == "get=127.0.0.1,$p: "@(ECONNRESET|"(reset or empty)")'\n' ]] || {
		echo "$output" >&2
		return 1
	}
}

@test "dry run: each backend names the host loopback port and how it is reached" {
	run --separate-stderr "$SBX" --backend bwrap --dry-run \
	    --allow-host localhost:8080 --allow-host '[::1]:8080' -- true
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | grep -c '^# allowed_local ')" -eq 1 ]
	[[ "$output" == *"# allowed_local localhost:8080: 127.0.0.1:8080 and [::1]:8080 inside are sbx's relay to the host's 127.0.0.1:8080 (then [::1]:8080); no other host port"* ]]
	[[ "$output" == *" --capture 0 --local 1 "* ]]
	run --separate-stderr "$SBX" --backend landlock --dry-run \
	    --allow-host 127.0.0.1:8080 -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *"# allowed_local localhost:8080: the supervisor lets connect reach the host's 127.0.0.1:8080 and [::1]:8080; no other host port"* ]]
	run --separate-stderr "$SBX" --backend seatbelt --dry-run \
	    --allow-host localhost:8080 -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *'(allow network-outbound (remote tcp "localhost:8080"))'* ]]
}
