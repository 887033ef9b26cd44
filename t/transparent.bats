#!/usr/bin/env bats
# --allow-host for programs that ignore the proxy variables (issue 14):
# inside bwrap, sbx's own resolver answers allowed names with synthetic
# addresses and connections to them are captured and relayed by the proxy.
# Real clients (curl --noproxy '*', Node's fetch and http.get, Python's
# sockets and urllib, git over ssh) against origins on 127.0.0.1 reached
# by names this file adds to /etc/hosts (hence --allow-private), as root;
# t/run adds them for its run as nobody. Loopback only.

load helper
bats_require_minimum_version 1.5.0

NAME=sbx-transparent.example.org
OTHER=sbx-transparent-other.example.org
MARK="# sbx t/transparent.bats"

write_origin() {
	cat <<'EOF'
import http.server, os, sys
www, portfile = sys.argv[1], sys.argv[2]
os.chdir(www)
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % httpd.server_address[1])
os.rename(portfile + ".tmp", portfile)
httpd.serve_forever()
EOF
}

# An sshd of the test's own on 127.0.0.1: its host key, its config, the
# key of this user only; a bare repository to clone.
start_sshd() {
	local d=$1 port
	command -v /usr/sbin/sshd >/dev/null 2>&1 || return 0
	command -v ssh-keygen >/dev/null 2>&1 || return 0
	command -v git >/dev/null 2>&1 || return 0
	mkdir -p "$d/ssh"
	ssh-keygen -q -t ed25519 -N '' -f "$d/ssh/host" || return 0
	ssh-keygen -q -t ed25519 -N '' -f "$d/ssh/user" || return 0
	cp "$d/ssh/user.pub" "$d/ssh/authorized_keys"
	port=$(free_port)
	cat >"$d/ssh/config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $d/ssh/host
PidFile $d/ssh/pid
AuthorizedKeysFile $d/ssh/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
EOF
	[ "$(id -u)" = 0 ] && mkdir -p /run/sshd
	/usr/sbin/sshd -f "$d/ssh/config" -E "$d/ssh/log" || return 0
	git init -q --bare "$d/repo.git"
	git clone -q "$d/repo.git" "$d/work" 2>/dev/null
	(cd "$d/work" && echo captured >file && git add file &&
	    git -c user.name=t -c user.email=t@example.org commit -qm one &&
	    git push -q origin HEAD) >/dev/null 2>&1
	echo "$port" >"$d/ssh/port"
}

setup_file() {
	D=$BATS_FILE_TMPDIR
	if [ -w /etc/hosts ] && ! grep -q "$MARK" /etc/hosts; then
		# It may lack its final newline: one is added, and taken back.
		[ -z "$(tail -c 1 /etc/hosts)" ] || { echo >>/etc/hosts; : >"$D/hosts.nl"; }
		printf '127.0.0.1 %s %s\n' "$NAME" "$MARK" "$OTHER" "$MARK" >>/etc/hosts
		: >"$D/hosts.added"
	fi
	command -v python3 >/dev/null 2>&1 || return 0
	mkdir -p "$D/www"
	printf 'hello capture\n' >"$D/www/index.html"
	write_origin >"$D/origin.py"
	python3 "$D/origin.py" "$D/www" "$D/port" >"$D/origin.log" 2>&1 3>&- &
	echo $! >"$D/origin.pid"
	start_sshd "$D" 3>&-
	for _ in $(seq 50); do
		[ -s "$D/port" ] && break
		sleep 0.1
	done
}

teardown_file() {
	D=$BATS_FILE_TMPDIR
	# Only our lines, in place: /etc/hosts may be a bind mount (a
	# container's), and other suites may add theirs meanwhile.
	[ -f "$D/hosts.added" ] && python3 - "$MARK" "$D/hosts.nl" <<'EOF'
import os, sys
mark, nl = sys.argv[1], os.path.exists(sys.argv[2])
s = open("/etc/hosts").read()
s = "".join(l for l in s.splitlines(True) if not l.rstrip("\n").endswith(mark))
if nl and s.endswith("\n"):
    s = s[:-1]
with open("/etc/hosts", "r+") as f:
    f.write(s)
    f.truncate()
EOF
	[ -s "$D/origin.pid" ] && kill "$(cat "$D/origin.pid")" 2>/dev/null
	[ -s "$D/ssh/pid" ] && kill "$(cat "$D/ssh/pid")" 2>/dev/null
	return 0
}

setup() {
	require_bwrap
	require_cmd python3
	D=$BATS_FILE_TMPDIR
	[ -s "$D/port" ] || sbx_skip "the loopback origin did not start"
	getent hosts "$NAME" >/dev/null 2>&1 ||
	    sbx_skip "$NAME is not in /etc/hosts (root adds it; t/run does for nobody)"
	read -r HP <"$D/port"
	cd "$BATS_TEST_TMPDIR" || return 1
}

# tx SCRIPT [SBX-OPTIONS...]: sh -c SCRIPT in bwrap, $NAME:$HP allowed,
# --allow-private (the origin is on loopback), no proxy variables.
tx() {
	local script=$1
	shift
	run --separate-stderr "$SBX" --backend bwrap -t 60 "$@" \
	    --allow-host "$NAME:$HP" -- env -u http_proxy -u HTTP_PROXY \
	    -u https_proxy -u HTTPS_PROXY -u NODE_USE_ENV_PROXY \
	    sh -c "$script" 3>&-
}

out() {
	kvdec stdout
}

@test "bwrap: an allowed name resolves to a synthetic address, and /etc says so" {
	tx 'getent ahostsv4 '"$NAME"' | head -n 1; cat /etc/resolv.conf; grep -c '"$NAME"' /etc/hosts; :' \
	    --allow-private
	[ "$(kv exit_code)" = 0 ] || { echo "$output" >&2; return 1; }
	out | head -n 1 | grep -Eq '^198\.1[89]\.[0-9]+\.[0-9]+ ' || { out >&2; return 1; }
	out | grep -qx 'nameserver 127.0.0.53'
	[ "$(out | tail -n 1)" = 0 ]
	! kv_has blocked_hosts || return 1
}

@test "bwrap: AAAA gets an empty answer at once, not a timeout" {
	tx 'python3 -c "
import socket, time
t = time.time()
try:
    socket.getaddrinfo(\"'"$NAME"'\", 80, socket.AF_INET6)
    print(\"answered\")
except socket.gaierror as e:
    print(\"none\", e.errno)
print(\"fast\" if time.time() - t < 1 else \"slow\")
"' --allow-private
	[ "$(kv exit_code)" = 0 ] || { echo "$output" >&2; return 1; }
	out | grep -qx fast || { out >&2; return 1; }
	! out | grep -q answered || return 1
}

@test "bwrap: a name not allowed gets NXDOMAIN and is in blocked_hosts" {
	tx 'getent hosts '"$OTHER"'; echo "getent=$?"; curl -sS --noproxy "*" http://'"$OTHER:$HP"'/ 2>&1; echo "curl=$?"' \
	    --allow-private
	out | grep -qx 'getent=2' || { out >&2; return 1; }
	out | grep -qx 'curl=6' || { out >&2; return 1; }
	[ "$(kv blocked_hosts)" = "$OTHER" ] || { echo "$output" >&2; return 1; }
	[ "$(kv blocked_reasons)" = "$OTHER not_listed" ]
}

@test "bwrap: curl --noproxy '*' reaches an allowed host" {
	tx 'curl -sS --noproxy "*" http://'"$NAME:$HP"'/index.html' --allow-private
	[ "$(kv exit_code)" = 0 ] || { echo "$output" >&2; return 1; }
	[ "$(out)" = "hello capture" ]
	! kv_has blocked_hosts || return 1
}

@test "bwrap: Node's fetch and http.get reach an allowed host without proxy variables" {
	require_cmd node
	tx 'node -e "
fetch(\"http://'"$NAME:$HP"'/index.html\").then(r => r.text()).then(t => {
  process.stdout.write(\"fetch \" + t);
  require(\"http\").get(\"http://'"$NAME:$HP"'/index.html\", r => {
    let b = \"\"; r.on(\"data\", d => b += d);
    r.on(\"end\", () => process.stdout.write(\"get \" + b));
  }).on(\"error\", e => { console.log(\"get error\", e.code); process.exit(1); });
}, e => { console.log(\"fetch error\", e.cause && e.cause.code); process.exit(1); });
"' --allow-private
	[ "$(kv exit_code)" = 0 ] || { echo "$output" >&2; return 1; }
	[ "$(out)" = "fetch hello capture
get hello capture" ] || { out >&2; return 1; }
}

@test "bwrap: Python's raw socket and urllib without the proxy reach an allowed host" {
	tx 'python3 -c "
import socket, urllib.request
s = socket.create_connection((\"'"$NAME"'\", '"$HP"'), timeout=10)
s.sendall(b\"GET /index.html HTTP/1.0\r\nHost: '"$NAME"'\r\n\r\n\")
b = b\"\"
while True:
    d = s.recv(65536)
    if not d:
        break
    b += d
print(\"socket\", b.split(b\"\r\n\r\n\", 1)[1].decode().strip())
o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
print(\"urllib\", o.open(\"http://'"$NAME:$HP"'/index.html\", timeout=10).read().decode().strip())
"' --allow-private
	[ "$(kv exit_code)" = 0 ] || { echo "$output" >&2; return 1; }
	[ "$(out)" = "socket hello capture
urllib hello capture" ] || { out >&2; return 1; }
}

@test "bwrap: git clone over ssh to an allowed host:port" {
	[ -s "$D/ssh/port" ] || sbx_skip "no sshd of the test's own started (openssh-server, git)"
	read -r SP <"$D/ssh/port"
	cp "$D/ssh/user" key
	chmod 600 key
	ssh="ssh -i $PWD/key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -p $SP"
	user=$(id -un)
	fp=$(ssh-keygen -lf "$D/ssh/host.pub" | cut -d' ' -f2)
	# Our sshd, reached through the capture: its host key, whatever
	# happens after the key exchange.
	tx "$ssh -v $user@$NAME true 2>&1 | grep -o 'Server host key: .*' | tr -d '\\r'" \
	    --allow-private --allow-host "$NAME:$SP"
	[ "$(out)" = "Server host key: ssh-ed25519 $fp" ] || { echo "$output" >&2; return 1; }
	# A clone where sshd lets this user in: as root. nobody's account is
	# locked (and its shell nologin), so sshd refuses it after the key
	# exchange, outside the sandbox as well.
	if ! $ssh "$user@127.0.0.1" true </dev/null >/dev/null 2>&1; then
		[ "$user" = nobody ] && return 0
		sbx_skip "sshd does not let $user in, even outside sbx"
	fi
	tx "GIT_SSH_COMMAND='$ssh' git clone -q ssh://$user@$NAME:$SP$D/repo.git c && cat c/file" \
	    --allow-private --allow-host "$NAME:$SP"
	[ "$(kv exit_code)" = 0 ] || { echo "$output" >&2; return 1; }
	[ "$(out)" = captured ]
}

@test "bwrap: a hard-coded address fails at once, also one of the synthetic range" {
	tx 'python3 -c "
import socket, time
for a in (\"192.0.2.1\", \"198.19.255.254\", \"198.18.0.1\"):
    t = time.time()
    try:
        s = socket.create_connection((a, '"$HP"'), timeout=10)
        s.sendall(b\"GET / HTTP/1.0\r\n\r\n\")
        print(a, \"read\", len(s.recv(100)))
    except OSError as e:
        print(a, \"refused\" if time.time() - t < 2 else \"slow\")
"' --allow-private
	[ "$(out)" = "192.0.2.1 refused
198.19.255.254 refused
198.18.0.1 refused" ] || { echo "$output" >&2; return 1; }
	! kv_has blocked_hosts || return 1
}

@test "bwrap: loopback stays the command's own, also on an allowed port" {
	tx 'python3 -c "
import socket, threading, urllib.request
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"127.0.0.1\", '"$HP"'))
s.listen(1)
def serve():
    c, _ = s.accept()
    c.recv(4096)
    c.sendall(b\"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\ninside\")
    c.close()
threading.Thread(target=serve, daemon=True).start()
o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
print(o.open(\"http://127.0.0.1:'"$HP"'/\", timeout=10).read().decode())
print(o.open(\"http://'"$NAME:$HP"'/index.html\", timeout=10).read().decode().strip())
"' --allow-private
	[ "$(kv exit_code)" = 0 ] || { echo "$output" >&2; return 1; }
	[ "$(out)" = "inside
hello capture" ] || { out >&2; return 1; }
}

@test "bwrap: an allowed name on a port not allowed is refused at once" {
	other=$(free_port)
	tx 'curl -sS --noproxy "*" http://'"$NAME:$other"'/ 2>&1; echo "curl=$?"' --allow-private
	out | grep -qx 'curl=7' || { out >&2; return 1; }
}

@test "bwrap: an allowed name on another name's port is refused at once" {
	p2=$(free_port)
	tx 'curl -sS --noproxy "*" http://'"$NAME:$p2"'/ 2>&1; echo "curl=$?"' \
	    --allow-private --allow-host "$OTHER:$p2"
	out | grep -qx 'curl=7' || { out >&2; return 1; }
}

@test "bwrap: an allowed name whose address is private is refused without --allow-private" {
	tx 'curl -sS --noproxy "*" http://'"$NAME:$HP"'/index.html 2>&1; echo "curl=$?"'
	# reset at once, seen by curl at connect (7) or after (55, 56)
	out | grep -Eqx 'curl=(7|55|56)' || { out >&2; return 1; }
	! out | grep -q 'hello capture' || return 1
	[ "$(kv blocked_reasons)" = "$NAME private_address" ] || { echo "$output" >&2; return 1; }
}

@test "bwrap: DNS to any resolver but sbx's is closed" {
	ns=$(sed -n 's/^nameserver  *\([0-9.]*\)$/\1/p' /etc/resolv.conf | head -n 1)
	tx 'python3 -c "
import socket
q = b\"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03org\x00\x00\x01\x00\x01\"
for a in (\"'"${ns:-192.0.2.53}"'\", \"1.1.1.1\", \"127.0.0.1\", \"198.18.0.1\"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    try:
        s.sendto(q, (a, 53))
        s.recv(512)
        print(a, \"answered\")
    except OSError as e:
        print(a, \"closed\")
    try:
        socket.create_connection((a, 53), timeout=2)
        print(a, \"tcp open\")
    except OSError:
        print(a, \"tcp closed\")
"' --allow-private
	[ "$(kv exit_code)" = 0 ] || { echo "$output" >&2; return 1; }
	! out | grep -Eq 'answered|open' || { out >&2; return 1; }
	[ "$(out | grep -c closed)" = 8 ] || { out >&2; return 1; }
}

@test "bwrap: --dry-run shows the resolver and the capture" {
	run "$SBX" --backend bwrap --dry-run --allow-host "$NAME" -- true
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" | grep -q '^# resolver: 127.0.0.53:53 inside'
	printf '%s\n' "$output" | grep -q '^# capture: allowed names resolve to addresses of 198.18.0.0/15'
	printf '%s\n' "$output" | grep -q -- '--ro-bind-data 7 /etc/resolv.conf --ro-bind-data 8 /etc/hosts'
	# One name on ports 80 and 443: two listeners, so two sockets.
	printf '%s\n' "$output" | grep -q -- '--capture 2 '
	run "$SBX" --backend bwrap --dry-run --allow-host "$NAME:8080" \
	    --allow-host "*.$NAME" -- true
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" | grep -q -- '--capture 64 '
}
