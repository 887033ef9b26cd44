#!/usr/bin/env bats
# The landlock backend under attack: the attack classes of the bwrap suite,
# each with a positive control, each asserting executor=landlock so a test
# cannot pass on another backend. Runs as root and as nobody (t/run). The
# seccomp-level attacks (sockets, TIOCSTI, namespaces, io_uring) run against
# this backend in t/seccomp.bats.

load helper
bats_require_minimum_version 1.5.0

setup() {
	require_landlock
	require_cmd python3
	ws="$BATS_TEST_TMPDIR/ws"
	out="$BATS_TEST_TMPDIR/out"
	mkdir -p "$ws/sub" "$out"
	echo orig >"$out/file"
	echo data >"$ws/file"
	pids=()
}

teardown() {
	[ -z "${bound:-}" ] || umount "$bound" 2>/dev/null || true
	if [ -n "${scratch:-}" ]; then
		rm -rf "$scratch"
	fi
	kill_bg
}

# ll ARGS...: sbx on the landlock backend in $ws; the result in $output.
# With --host-tmp: these attacks aim at the host's /tmp, where bats keeps
# its scratch folders, which the private temp folder would hide altogether
# (t/everyday.bats tests the private temp folder).
ll() {
	run --separate-stderr "$SBX" --backend landlock --host-tmp -C "$ws" \
	    "$@" 3>&-
	echo "status=$status"
	echo "$output"
	echo "stderr: $stderr"
}

# ok_ll ARGS...: as ll, and the command ran under landlock and exited 0.
ok_ll() {
	ll "$@"
	[ "$(kv executor)" = landlock ]
	[ "$(kv isolation)" = os ]
	[ "$status" -eq 0 ]
}

# ioprio_nr: ioprio_set's system call number here.
ioprio_nr() {
	case $(uname -m) in
	aarch64) echo 30 ;;
	*) echo 251 ;;
	esac
}


@test "landlock: runs as executor=landlock; the root is writable" {
	ok_ll -- sh -c 'echo hi >new && cat new file'
	[ "$(kv stdout)" = 'hi\ndata\n' ]
	[ "$(cat "$ws/new")" = hi ]
}

@test "landlock: writes outside the policy fail, directly and through links" {
	ln -s "$out/file" "$ws/link"
	ok_ll -- sh -c '
		echo x >"$1/file" || echo direct
		echo x >"$1/new" || echo create
		echo x >link || echo symlink
		ln "$1/file" hard 2>/dev/null || echo hardlink
		mv "$1/file" moved 2>/dev/null || echo rename-in
		echo y >sub/f && mv sub/f "$1/f" 2>/dev/null || echo rename-out
		true >/etc/sbx-test 2>/dev/null || echo etc
		true >/tmp/sbx-test-$$ 2>/dev/null || echo tmp
	' sh "$out"
	[ "$(kv stdout)" = 'direct\ncreate\nsymlink\nhardlink\nrename-in\nrename-out\netc\ntmp\n' ]
	[ "$(cat "$out/file")" = orig ]
	[ ! -e "$out/new" ] && [ ! -e "$out/f" ] && [ ! -e /etc/sbx-test ]
}

@test "landlock: metadata of read-only files cannot change (touch, chmod, truncate)" {
	before=$(stat -c '%a %Y' "$out/file")
	ok_ll -- sh -c '
		touch -d 2001-01-01 "$1" 2>/dev/null || echo touch
		chmod 777 "$1" 2>/dev/null || echo chmod
		truncate -s 0 "$1" 2>/dev/null || echo truncate
	' sh "$out/file"
	[ "$(kv stdout)" = 'touch\nchmod\ntruncate\n' ]
	[ "$(stat -c '%a %Y' "$out/file")" = "$before" ]
	[ "$(cat "$out/file")" = orig ]
}

@test "landlock: a file on stdin cannot be written or changed through /proc/self/fd" {
	before=$(stat -c '%a %Y' "$out/file")
	ok_ll -- sh -c '
		cat
		echo x >>/proc/self/fd/0 2>/dev/null || echo write
		chmod 4777 /proc/self/fd/0 2>/dev/null || echo chmod
		touch -d 2001-01-01 /proc/self/fd/0 2>/dev/null || echo touch
	' <"$out/file"
	[ "$(kv stdout)" = 'orig\nwrite\nchmod\ntouch\n' ]
	[ "$(stat -c '%a %Y' "$out/file")" = "$before" ]
	[ "$(cat "$out/file")" = orig ]
}

@test "landlock: a directory on stdin is refused and nothing runs" {
	ll -- sh -c 'echo x >"$1/evil"; echo ran >ran' sh "$out" <"$out"
	[ "$status" -eq 125 ]
	[ "$(kv error)" = policy ]
	[[ "$stderr" == "sbx: standard input is a directory"* ]]
	[ ! -e "$ws/ran" ] && [ ! -e "$out/evil" ]
}

@test "landlock: --deny-write and --scope hold inside the writable root" {
	echo keep >"$ws/sub/ro"
	echo old >"$ws/sub/other"
	mkdir "$ws/sub/deeper"
	# A folder that holds a read-only path gains, renames and removes its
	# other entries as any writable folder (the supervisor performs them);
	# the held one stays.
	ok_ll --deny-write "$ws/sub/ro" -- sh -c '
		echo x >sub/ro 2>/dev/null || echo denied
		rm -f sub/ro 2>/dev/null; [ -e sub/ro ] && echo kept
		mv sub/ro sub/gone 2>/dev/null || echo not-moved
		echo ok >sub/other && echo sibling
		echo ok >sub/deeper/f && echo deeper
		true >sub/new && mv sub/new sub/newer && echo new-entry
		rm sub/other && echo removed'
	[ "$(kv stdout)" = 'denied\nkept\nnot-moved\nsibling\ndeeper\nnew-entry\nremoved\n' ]
	[ "$(cat "$ws/sub/ro")" = keep ]
	[ -e "$ws/sub/newer" ] && [ ! -e "$ws/sub/other" ]
	[ "$(kv denied_count)" = 3 ]
	[[ "$(kv denied)" == "open $ws/sub/ro; unlink $ws/sub/ro; rename $ws/sub/ro" ]]
	mkdir -p "$ws/scoped"
	ok_ll --scope "$ws/scoped" -- sh -c '
		echo x >rootfile 2>/dev/null || echo root-ro
		echo y >scoped/f && echo scoped-rw'
	[ "$(kv stdout)" = 'root-ro\nscoped-rw\n' ]
	# A held path inside the --scope folder: the folder's other entries
	# are the supervisor's, and writable, though the root above it is
	# read-only; the held one stays.
	echo keep >"$ws/scoped/held"
	ok_ll --scope "$ws/scoped" --deny-write "$ws/scoped/held" -- sh -c '
		echo x >rootfile 2>/dev/null || echo root-ro
		echo y >scoped/g && mv scoped/g scoped/h && echo scoped-rw
		echo z >scoped/held 2>/dev/null || echo held'
	[ "$(kv stdout)" = 'root-ro\nscoped-rw\nheld\n' ]
	[ "$(cat "$ws/scoped/h")" = y ] && [ "$(cat "$ws/scoped/held")" = keep ]
	[ ! -e "$ws/rootfile" ]
}

@test "landlock: deny-read and deny-write of a workspace's .git win over the held names inside" {
	require_cmd git
	git -C "$ws" init -q
	echo hook >"$ws/.git/hooks/keep"
	ok_ll --deny-read "$ws/.git" -- sh -c '
		cat .git/hooks/keep 2>/dev/null && exit 10
		ls .git 2>/dev/null | grep -q . && exit 11
		echo x >.git/new 2>/dev/null && exit 12
		echo ok >file'
	[ "$(cat "$ws/file")" = ok ] && [ ! -e "$ws/.git/new" ]
	ok_ll --deny-write "$ws/.git" -- sh -c '
		cat .git/hooks/keep || exit 10
		echo x >.git/hooks/post-commit 2>/dev/null && exit 11
		echo x >.git/new 2>/dev/null && exit 12
		exit 0'
	[ ! -e "$ws/.git/hooks/post-commit" ] && [ ! -e "$ws/.git/new" ]
}

@test "landlock: the protected git paths hold; files beside them stay writable" {
	require_cmd git
	git -C "$ws" init -q
	cfg=$(cat "$ws/.git/config")
	ok_ll -- sh -c '
		echo "[core] fsmonitor = evil" >>.git/config 2>/dev/null || echo config
		echo evil >.git/hooks/pre-commit 2>/dev/null || echo hook
		mv .git .git-old 2>/dev/null || echo rename-git
		rm -rf .git/hooks 2>/dev/null; [ -d .git/hooks ] && echo hooks-kept
		echo changed >file && echo file-rw
		echo z >sub/new && echo sub-rw'
	[ "$(kv stdout)" = 'config\nhook\nrename-git\nhooks-kept\nfile-rw\nsub-rw\n' ]
	[ "$(cat "$ws/.git/config")" = "$cfg" ]
	[ ! -e "$ws/.git/hooks/pre-commit" ]
}

# --- the supervisor: what Landlock cannot judge ---------------------------

@test "landlock: chmod, utimes and xattrs work in the workspace, and nowhere else" {
	echo x >"$ws/tool"
	before=$(stat -c '%a %Y' "$out/file")
	ok_ll -- python3 -c '
import os, sys
out = sys.argv[1]
os.chmod("tool", 0o755); print(oct(os.stat("tool").st_mode & 0o7777))
os.utime("tool", (1000000000, 1000000000)); print(int(os.stat("tool").st_mtime))
try:
    os.setxattr("tool", "user.k", b"v"); print(os.getxattr("tool", "user.k"))
    os.removexattr("tool", "user.k"); print("removed")
except OSError as e:
    print("xattr", e.errno)
for f, args in ((os.chmod, (out, 0o777)), (os.utime, (out, (1, 1))),
                (os.setxattr, (out, "user.k", b"v"))):
    try:
        f(*args); print("CHANGED", f.__name__)
    except OSError as e:
        print(f.__name__, os.strerror(e.errno))
' "$out/file"
	[[ "$(kv stdout)" == '0o755\n1000000000\n'* ]]
	[[ "$(kv stdout)" == *'chmod Read-only file system\nutime Read-only file system\nsetxattr Read-only file system\n' ]]
	[ "$(stat -c '%a %Y' "$out/file")" = "$before" ]
	[ "$(stat -c '%a' "$ws/tool")" = 755 ]
	[ "$(kv denied_count)" = 3 ]
	[[ "$(kv denied)" == "chmod $out/file; utimes $out/file; setxattr $out/file" ]]
}

@test "landlock: chmod sets no set-user-ID or set-group-ID bit on a file; a folder's set-group-ID stays" {
	echo x >"$ws/prog"
	ok_ll -- python3 -c '
import os
for name, mode in (("chmod", 0o4755), ("chmod-g", 0o2755), ("plain", 0o750)):
    try:
        os.chmod("prog", mode); print(name, oct(os.stat("prog").st_mode & 0o7777))
    except OSError as e:
        print(name, os.strerror(e.errno))
os.mkdir("d"); os.chmod("d", 0o2775); print("dir", oct(os.stat("d").st_mode & 0o7777))
'
	[ "$(kv stdout)" = 'chmod Operation not permitted\nchmod-g Operation not permitted\nplain 0o750\ndir 0o2775\n' ]
	[ -z "$(find "$ws" -perm /6000 -type f)" ]
}

@test "landlock: a workspace at a git root gains, renames and removes entries; .git holds" {
	require_cmd git
	git -C "$ws" init -q
	ok_ll -- sh -c '
		set -e
		touch notes.txt; mkdir build; echo o >build/x.o; mv build out
		rm -r out; ln -s file flink; ln file fhard; mkfifo fifo
		echo ok
		echo evil >.git/hooks/pre-commit 2>/dev/null || echo hook
		mkdir .git/hooks/x 2>/dev/null || echo hookdir
		mv .git .g 2>/dev/null || echo git-busy
		rm .git/config 2>/dev/null || echo config-busy
		mv file .git/config 2>/dev/null || echo over-config
		ln -s /etc/passwd .git/hooks/post-checkout 2>/dev/null || echo hooklink'
	[ "$(kv stdout)" = 'ok\nhook\nhookdir\ngit-busy\nconfig-busy\nover-config\nhooklink\n' ]
	[ -e "$ws/notes.txt" ] && [ -L "$ws/flink" ] && [ -p "$ws/fifo" ]
	[ "$(stat -c %h "$ws/file")" = 2 ]
	[ ! -e "$ws/.git/hooks/pre-commit" ] && [ -f "$ws/.git/config" ]
	for d in "open $ws/.git/hooks/pre-commit" "mkdir $ws/.git/hooks/x" \
	    "rename $ws/.git" "unlink $ws/.git/config" \
	    "rename $ws/.git/config" "symlink $ws/.git/hooks/post-checkout"; do
		[[ "; $(kv denied); " == *"; $d; "* ]] || { echo "no '$d'" >&2; return 1; }
	done
}

@test "landlock: a hard link from outside, a link to outside, an outside descriptor: refused" {
	before=$(stat -c '%a %Y' "$out/file")
	ln -s "$out/file" "$ws/to-out"
	ok_ll -- python3 -c '
import os, sys
out = sys.argv[1]
def tryit(name, f):
    try:
        f(); print(name, "DONE")
    except OSError as e:
        print(name, os.strerror(e.errno))
tryit("link", lambda: os.link(out, "hard"))
tryit("chmod-via-symlink", lambda: os.chmod("to-out", 0o777))
fd = os.open(out, os.O_RDONLY)
tryit("fchmod", lambda: os.fchmod(fd, 0o777))
tryit("futimes", lambda: os.utime(fd, (1, 1)))
tryit("proc-fd", lambda: os.chmod("/proc/self/fd/%d" % fd, 0o777))
' "$out/file"
	[ "$(kv stdout)" = 'link Invalid cross-device link\nchmod-via-symlink Read-only file system\nfchmod Read-only file system\nfutimes Read-only file system\nproc-fd Read-only file system\n' ]
	[ "$(stat -c '%a %Y' "$out/file")" = "$before" ]
	[ ! -e "$ws/hard" ]
}

@test "landlock: O_TMPFILE in the workspace gets a name; in a held folder it does not" {
	require_cmd git
	git -C "$ws" init -q
	ok_ll -- python3 -c '
import os
fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o644)
os.write(fd, b"anon\n")
os.link("/proc/self/fd/%d" % fd, "named", follow_symlinks=True)
print(open("named").read().strip())
try:
    os.open(".git/hooks", os.O_TMPFILE | os.O_WRONLY, 0o755); print("HOOKS")
except OSError as e:
    print("hooks", os.strerror(e.errno))
'
	[ "$(kv stdout)" = 'anon\nhooks Read-only file system\n' ]
	[ "$(cat "$ws/named")" = anon ]
}

@test "landlock: a racing thread rewriting the path after the call cannot redirect it" {
	require_cmd gcc
	# Two threads: one calls chmod(buf, 0777) in a loop; the other flips
	# buf between a file in the workspace and a file outside. The
	# supervisor reads the path once: the outside file never changes.
	cat >"$BATS_TEST_TMPDIR/race.c" <<'EOF'
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
static char buf[4096];
static char a[4096], b[4096];
static volatile int stop;
static void *flip(void *x) { (void)x; while (!stop) { strcpy(buf, a); strcpy(buf, b); } return 0; }
int main(int argc, char **argv) {
	pthread_t t; int i, hits = 0; time_t end = time(0) + 4;
	strcpy(a, argv[1]); strcpy(b, argv[2]); strcpy(buf, a);
	pthread_create(&t, 0, flip, 0);
	for (i = 0; time(0) < end; i++) if (chmod(buf, 0777) == 0) hits++;
	stop = 1; pthread_join(t, 0);
	return hits > 0 ? 0 : 1;
}
EOF
	gcc -O2 -pthread -o "$out/race" "$BATS_TEST_TMPDIR/race.c"
	chmod 644 "$out/file"
	echo x >"$ws/inside"
	ok_ll -- "$out/race" "$ws/inside" "$out/file"
	[ "$(stat -c %a "$out/file")" = 644 ]
	[ "$(stat -c %a "$ws/inside")" = 777 ]
}

@test "landlock: a symbolic link swapped in after the check cannot redirect chmod" {
	require_cmd python3
	# Outside the sandbox, a loop swaps ws/victim between a plain file and
	# a link to the outside file; inside, chmod 777 ws/victim in a loop.
	chmod 644 "$out/file"
	echo x >"$ws/plain"
	ln -s "$out/file" "$ws/link"
	bg python3 -c '
import os, sys, time
ws = sys.argv[1]
end = time.time() + 6
while time.time() < end:
    try:
        os.rename(ws + "/plain", ws + "/victim"); os.rename(ws + "/victim", ws + "/plain")
        os.rename(ws + "/link", ws + "/victim"); os.rename(ws + "/victim", ws + "/link")
    except OSError:
        pass
' "$ws"
	ok_ll -- sh -c 'i=0; while [ $i -lt 3000 ]; do chmod 777 victim 2>/dev/null; i=$((i+1)); done; echo done'
	[ "$(kv stdout)" = 'done\n' ]
	[ "$(stat -c %a "$out/file")" = 644 ]
}

@test "landlock: the real-work set in a git workspace, with protection on" {
	require_cmd gcc
	require_cmd git
	require_cmd npm
	cd "$ws"
	git init -q
	mkdir .tmp pkg
	printf 'int main(void){return 42;}\n' >m.c
	printf '{"name":"demo-bin","version":"1.0.0","bin":{"demo":"cli.js"}}\n' >pkg/package.json
	printf '#!/bin/sh\necho demo ok\n' >pkg/cli.js
	(cd pkg && npm pack --silent >/dev/null 2>&1)
	printf '{"name":"app","version":"1.0.0"}\n' >package.json
	python3 - <<'EOF'
import zipfile
with zipfile.ZipFile("tiny-1.0-py3-none-any.whl", "w") as z:
    z.writestr("tiny.py", "X = 1\n")
    z.writestr("tiny-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n")
    z.writestr("tiny-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("tiny-1.0.dist-info/RECORD", "")
EOF
	tar czf src.tgz m.c
	ok_ll -e TMPDIR="$ws/.tmp" -e HOME="$ws" -- sh -c '
		set -e
		gcc m.c -o m; ./m || [ $? = 42 ]; echo c-build
		git add m.c; git -c user.email=a@b -c user.name=n commit -qm one
		git checkout -q -b topic; echo git
		npm install --offline --no-audit --no-fund ./pkg/demo-bin-1.0.0.tgz >/dev/null 2>&1
		./node_modules/.bin/demo
		python3 -m venv .venv
		.venv/bin/python -m pip install -q --no-index ./tiny-1.0-py3-none-any.whl
		.venv/bin/python -c "import tiny; print(\"venv\", tiny.X)"
		mkdir unpack; cd unpack; tar xzf ../src.tgz --no-same-owner; cd ..; echo tar'
	[ "$(kv stdout)" = 'c-build\ngit\ndemo ok\nvenv 1\ntar\n' ]
	# The same files as on the host: an executable binary, a bin script.
	[ "$(stat -c %a m)" = 755 ]
	[ "$(git log --oneline | wc -l)" = 1 ] && [ "$(git branch --show-current)" = topic ]
	[ "$(stat -c %a node_modules/demo-bin/cli.js)" = 755 ]
	[ -x .venv/bin/python3 ]
}

@test "landlock: --deny-read hides a file and a folder; the rest stays readable" {
	echo secret >"$ws/secret"
	mkdir "$ws/private"
	echo inner >"$ws/private/key"
	ok_ll --deny-read "$ws/secret" --deny-read "$ws/private" -- sh -c '
		cat secret 2>/dev/null || echo file-denied
		cat private/key 2>/dev/null || echo dir-denied
		ls private 2>/dev/null || echo list-denied
		cat file; cat /etc/hostname >/dev/null && echo etc-ok'
	[ "$(kv stdout)" = 'file-denied\ndir-denied\nlist-denied\ndata\netc-ok\n' ]
}

@test "landlock: no inotify watch on a --deny-read path; elsewhere watches work" {
	mkdir "$ws/private"
	echo inner >"$ws/private/key"
	ok_ll --deny-read "$ws/private" -- python3 -c '
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
for p in (b"private", b"private/key", b"private/../private", b"."):
    wd = libc.inotify_add_watch(fd, p, 0x100)
    print(p.decode(), "watch" if wd >= 0 else errno.errorcode[ctypes.get_errno()])
os.symlink("private", "plink")
wd = libc.inotify_add_watch(fd, b"plink", 0x100)
print("plink", "watch" if wd >= 0 else errno.errorcode[ctypes.get_errno()])
open("new", "w").close()
print("event", len(os.read(fd, 4096)) > 0)
'
	[ "$(kv stdout)" = 'private EACCES\nprivate/key EACCES\nprivate/../private EACCES\n. watch\nplink EACCES\nevent True\n' ]
}

@test "landlock: host devices stay closed; /dev/null and /dev/urandom work" {
	dev=$(find /dev -maxdepth 1 -type b | head -n 1)
	ok_ll -- sh -c '
		[ -z "$1" ] || head -c 1 "$1" >/dev/null 2>&1 || echo block-denied
		echo x >/dev/null && echo null-ok
		head -c 4 /dev/urandom | wc -c' sh "$dev"
	if [ -n "$dev" ] && [ -r "$dev" ]; then
		[ "$(kv stdout)" = 'block-denied\nnull-ok\n4\n' ]
	else
		[[ "$(kv stdout)" == *'null-ok\n4\n' ]]
	fi
}

@test "landlock: --no-net: nothing outside, no host loopback server; --net allows them" {
	port=$(free_port)
	bg python3 -c "
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $port)); s.listen(8)
while True: c, _ = s.accept(); c.sendall(b'pong'); c.close()"
	wait_for python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))"
	client="
import socket, errno
def tryit(f):
    try:
        print(f())
    except OSError as e:
        print(errno.errorcode[e.errno])
def tcp(addr):
    s = socket.create_connection(addr, timeout=5); return s.recv(4).decode()
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b'q', ('192.0.2.1', 53)); return 'sent'
tryit(lambda: tcp(('127.0.0.1', $port)))
tryit(lambda: tcp(('192.0.2.1', 80)))
tryit(udp)"
	ok_ll -- python3 -c "$client"
	[ "$(kv stdout)" = 'ECONNREFUSED\nENETUNREACH\nENETUNREACH\n' ]
	[ "$(kv denied)" = "connect 127.0.0.1:$port; connect 192.0.2.1:80; sendto 192.0.2.1:53" ]
	ok_ll --net -- python3 -c "$client"
	[[ "$(kv stdout)" == 'pong\n'* ]]
	! kv_has denied
}

@test "landlock: the sandbox's own loopback servers work; they listen on loopback only" {
	ok_ll -- python3 -c '
import socket, threading
def serve(fam, addr):
    s = socket.socket(fam); s.bind(addr); s.listen(4)
    def loop():
        while True:
            c, _ = s.accept(); c.sendall(b"hi"); c.close()
    threading.Thread(target=loop, daemon=True).start()
    return s.getsockname()
a = serve(socket.AF_INET, ("0.0.0.0", 0))
b = serve(socket.AF_INET6, ("::", 0))
print(a[0], b[0])
for addr in (("127.0.0.1", a[1]), ("127.0.0.1", b[1])):
    print(socket.create_connection(addr, timeout=5).recv(2).decode())
try:
    socket.socket().bind(("192.0.2.1", 0)); print("bound outside")
except OSError as e:
    print(e.strerror)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v.sendto(b"dgram", u.getsockname()); print(u.recv(16).decode())
v.connect(u.getsockname()); v.sendmsg([b"connected"]); print(u.recv(16).decode())
try:
    v.sendmsg([b"x"], [], 0, ("192.0.2.1", 53)); print("sent outside")
except OSError as e:
    print(e.strerror)
'
	[ "$(kv stdout)" = '127.0.0.1 ::ffff:127.0.0.1\nhi\nhi\nCannot assign requested address\ndgram\nconnected\nNetwork is unreachable\n' ]
}

@test "landlock: --allow-host reaches the proxy at 127.0.0.1:3128, as under bwrap" {
	ok_ll --allow-host registry.example.org -- sh -c 'echo "$HTTP_PROXY"; curl -sS -m 10 -o /dev/null -w "%{http_code}\n" http://blocked.example.net/'
	[ "$(kv stdout)" = 'http://127.0.0.1:3128\n403\n' ]
	[ "$(kv blocked_hosts)" = blocked.example.net ]
}

@test "landlock: signals and ptrace cannot reach processes outside" {
	bg sleep 300
	victim=${pids[0]}
	ok_ll -- python3 -c "
import ctypes, errno, os, signal
out = []
try: os.kill($victim, signal.SIGTERM); out.append('killed')
except OSError as e: out.append(errno.errorcode[e.errno])
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, $victim, 0, 0)   # PTRACE_ATTACH
out.append('attached' if r == 0 else errno.errorcode[ctypes.get_errno()])
try: open('/proc/$victim/environ', 'rb').read(); out.append('environ')
except OSError as e: out.append(errno.errorcode[e.errno])
open('/proc/self/environ', 'rb').read()
import subprocess
p = subprocess.Popen(['sleep', '30']); p.kill(); p.wait()
out.append('own-child-killed')
print(' '.join(out))"
	[ "$(kv stdout)" = 'EPERM EPERM EACCES own-child-killed\n' ]
	kill -0 "$victim"
}

@test "landlock: the scheduling and I/O priority of processes outside cannot change" {
	bg sleep 300
	victim=${pids[0]}
	before=$(python3 -c "import os; print(sorted(os.sched_getaffinity($victim)), os.sched_getscheduler($victim))")
	# positive control: outside, the same user can (pin it to its CPUs)
	python3 -c "import os; os.sched_setaffinity($victim, os.sched_getaffinity($victim))"
	ok_ll -- python3 -c "
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
out = []
def try_(name, f):
    try: f(); out.append(name)
    except OSError as e: out.append(errno.errorcode[e.errno])
try_('affinity', lambda: os.sched_setaffinity($victim, {0}))
try_('idle', lambda: os.sched_setscheduler($victim, os.SCHED_IDLE, os.sched_param(0)))
try_('param', lambda: os.sched_setparam($victim, os.sched_param(0)))
for which, who in ((1, $victim), (3, os.getuid())):   # IOPRIO_WHO_PROCESS, _USER
    r = libc.syscall($(ioprio_nr), which, who, 3 << 13)   # IOPRIO_CLASS_IDLE
    out.append('ioprio' if r == 0 else errno.errorcode[ctypes.get_errno()])
try_('nice', lambda: os.setpriority(os.PRIO_PROCESS, $victim, 19))
# its own: allowed
os.sched_setaffinity(0, os.sched_getaffinity(0))
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
out.append('own' if libc.syscall($(ioprio_nr), 1, 0, 3 << 13) == 0 else 'own-refused')
print(' '.join(out))"
	[ "$(kv stdout)" = 'EPERM EPERM EPERM EPERM EPERM EPERM own\n' ]
	[ "$(python3 -c "import os; print(sorted(os.sched_getaffinity($victim)), os.sched_getscheduler($victim))")" = "$before" ]
}

@test "landlock (abi 4): the supervisor scopes signals and abstract sockets" {
	# The kernel here has abi 6 or later; SBX_LANDLOCK_ABI_MAX=4 makes sbx
	# use abi 4 as on Linux 6.7 to 6.9 (Ubuntu 24.04), so the supervisor
	# does what Landlock's scopes would. This proves the supervisor's
	# judgment, not that an abi 4 kernel behaves as this one otherwise.
	bg sleep 300
	victim=${pids[0]}
	bg python3 -c '
import socket, time
s = socket.socket(socket.AF_UNIX); s.bind("\0sbx-outside-'$$'"); s.listen(4)
while True: s.accept()[0].close()'
	wait_for grep -q "@sbx-outside-$$" /proc/net/unix
	SBX_LANDLOCK_ABI_MAX=4 ok_ll --allow-unix-sockets -- python3 -c "
import ctypes, errno, fcntl, os, signal, socket, subprocess
def tryit(name, f):
    try: f(); print(name, 'done')
    except OSError as e: print(name, errno.errorcode[e.errno])
tryit('kill', lambda: os.kill($victim, signal.SIGTERM))
tryit('kill-all', lambda: os.kill(-1, signal.SIGTERM))
fd = os.pidfd_open($victim)
tryit('pidfd', lambda: signal.pidfd_send_signal(fd, signal.SIGTERM))
r, w = os.pipe()
tryit('setown', lambda: fcntl.fcntl(r, fcntl.F_SETOWN, $victim))
tryit('setown-self', lambda: fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid()))
p = subprocess.Popen(['sleep', '30'])
tryit('own-child', lambda: os.kill(p.pid, signal.SIGTERM)); p.wait()
c = socket.socket(socket.AF_UNIX)
tryit('abstract-outside', lambda: c.connect('\0sbx-outside-$$'))
srv = socket.socket(socket.AF_UNIX); srv.bind('\0sbx-inside-$$'); srv.listen(1)
c2 = socket.socket(socket.AF_UNIX)
tryit('abstract-own', lambda: c2.connect('\0sbx-inside-$$'))
"
	[ "$(kv stdout)" = 'kill EPERM\nkill-all EPERM\npidfd EPERM\nsetown EPERM\nsetown-self done\nown-child done\nabstract-outside EPERM\nabstract-own done\n' ]
	kill -0 "$victim"
	[[ "$(kv denied)" == "kill pid $victim; "* ]]
}

@test "landlock: a root command keeps no capability beyond file access" {
	is_root || skip "needs root"
	ok_ll -- sh -c 'grep -E "^Cap(Eff|Bnd)" /proc/self/status'
	[ "$(kv stdout)" = 'CapEff:\t0000000000000006\nCapBnd:\t0000000000000006\n' ]
}

@test "landlock: processes left behind are stopped with the command" {
	ok_ll -- sh -c '(setsid sleep 300 >/dev/null 2>&1 & echo $! >pid); echo started'
	pid=$(cat "$ws/pid")
	[ -n "$pid" ]
	sleep 0.2
	! kill -0 "$pid" 2>/dev/null
}

# A Docker-like seccomp profile: no new user namespace, so bwrap cannot run.
NOUSERNS='
import ctypes, os, struct, sys
x86 = os.uname().machine == "x86_64"
clone3, unshare, clone = (435, 272, 56) if x86 else (435, 97, 220)
def i(code, jt, jf, k): return struct.pack("HBBI", code, jt, jf, k)
prog = b"".join([
    i(0x20, 0, 0, 0), i(0x15, 0, 1, clone3), i(0x06, 0, 0, 0x50000 | 38),
    i(0x15, 1, 0, unshare), i(0x15, 0, 3, clone), i(0x20, 0, 0, 16),
    i(0x45, 0, 1, 0x10000000), i(0x06, 0, 0, 0x50000 | 1),
    i(0x06, 0, 0, 0x7fff0000)])
buf = ctypes.create_string_buffer(prog)
class F(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
f = F(len(prog) // 8, ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(f), 0, 0) == 0
os.execvp(sys.argv[1], sys.argv[1:])
'

@test "landlock: --sandbox os picks landlock where user namespaces are forbidden" {
	# As root bwrap needs no user namespace: run sbx as nobody then.
	local as=() py=python3
	if is_root; then
		require_cmd setpriv
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		# Folders nobody can reach and own: only Landlock stops it.
		scratch=$(mktemp -d /tmp/sbx-landlock.XXXXXX)
		chmod 755 "$scratch"
		ws=$scratch/ws out=$scratch/out
		mkdir "$ws" "$out"
		echo orig >"$out/file"
		chown -R 65534:65534 "$ws" "$out"
		# The python3 on root's PATH may live where nobody cannot go.
		py=/usr/bin/python3
		[ -x "$py" ] || sbx_skip "no /usr/bin/python3 for nobody"
	fi
	run --separate-stderr "${as[@]}" "$py" -c "$NOUSERNS" "$SBX" --probe 3>&-
	echo "$output"
	[[ "$output" == *"bwrap=unavailable"* ]]
	[[ "$output" == *"default=landlock"* ]]
	run --separate-stderr "${as[@]}" "$py" -c "$NOUSERNS" "$SBX" \
	    -C "$ws" -- sh -c 'echo hi >f && cat f && echo x >"$1/file"' sh "$out" 3>&-
	echo "$output $stderr"
	[ "$(kv executor)" = landlock ]
	[ "$(kv isolation)" = os ]
	[ "$(kv stdout)" = 'hi\n' ]
	[ "$status" -ne 0 ]
	[ "$(cat "$out/file")" = orig ]
}

# MQ: mq_open(O_CREAT) and mq_unlink by system call (the names carry no
# leading slash at this level); prints each errno's name or "ok".
MQ='
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
x86 = os.uname().machine == "x86_64"
mq_open, mq_unlink = (240, 241) if x86 else (180, 181)
out = []
for nr, a in ((mq_open, (sys.argv[1] + "new", 0o102, 0o600, 0)),
              (mq_unlink, (sys.argv[1],))):
    args = [ctypes.c_char_p(x.encode()) if isinstance(x, str) else ctypes.c_long(x) for x in a]
    r = libc.syscall(ctypes.c_long(nr), *args)
    out.append("ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])
print(" ".join(out))
'

@test "landlock: POSIX message queues of the host cannot be made or removed" {
	local q="sbxtest$$"
	# The control: outside, the queue can be made; it stays after the run.
	python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
nr = 240 if os.uname().machine == 'x86_64' else 180
assert libc.syscall(ctypes.c_long(nr), b'$q', ctypes.c_long(0o102), ctypes.c_long(0o600), ctypes.c_long(0)) >= 0
"
	ok_ll -- python3 -c "$MQ" "$q"
	local got=$(kv stdout)
	python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
nr = 241 if os.uname().machine == 'x86_64' else 181
print(libc.syscall(ctypes.c_long(nr), b'$q'), libc.syscall(ctypes.c_long(nr), b'${q}new'))
" >"$BATS_TEST_TMPDIR/left"
	cat "$BATS_TEST_TMPDIR/left"
	[ "$got" = 'EPERM EPERM\n' ]
	[[ "$(kv denied)" == *"mq_unlink $q"* ]]
	# the host's queue was still there, and no new one was made
	[ "$(cat "$BATS_TEST_TMPDIR/left")" = "0 -1" ]
}

# FLAGS FILE: FS_IOC_SETFLAGS (nodump; the 32-bit number too, which a
# 64-bit kernel may not know: ENOTTY), FS_IOC_FSSETXATTR and
# FS_IOC_SETVERSION on FILE through a read-only descriptor; each errno's
# name or "ok".
FLAGS='
import errno, fcntl, struct, sys
fd = open(sys.argv[1])
out = []
for cmd, arg in ((0x40086602, struct.pack("l", 0x40)),
                 (0x40046602, struct.pack("i", 0x40)),
                 (0x401c5820, bytes(28)),
                 (0x40087602, struct.pack("l", 7))):
    try:
        fcntl.ioctl(fd, cmd, arg); out.append("ok")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
b = bytearray(8)
fcntl.ioctl(fd, 0x80086601, b)	# FS_IOC_GETFLAGS, which only reads
out.append("read")
print(" ".join(out))
'

@test "landlock: inode flags of files outside cannot change (FS_IOC_SETFLAGS, FSSETXATTR)" {
	# The control: outside the sandbox the same ioctls work on this file.
	run python3 -c "$FLAGS" "$out/file"
	echo "outside: $output"
	[[ "$output" == "ok "*" ok ok read" ]] ||
	    skip "this file system takes no inode flags: $output"
	chattr -d "$out/file" 2>/dev/null || python3 -c '
import fcntl, struct, sys
fcntl.ioctl(open(sys.argv[1]), 0x40086602, struct.pack("l", 0))' "$out/file"
	ok_ll -- python3 -c "$FLAGS" "$out/file"
	[ "$(kv stdout)" = 'EPERM EPERM EPERM EPERM read\n' ]
	run python3 -c '
import fcntl, struct, sys
b = bytearray(8); fcntl.ioctl(open(sys.argv[1]), 0x80086601, b)
print(struct.unpack("l", b)[0] & 0x40)' "$out/file"
	[ "$output" = 0 ]
}

@test "landlock: fanotify is refused" {
	ok_ll -- python3 -c '
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
nr = 300 if os.uname().machine == "x86_64" else 262
# FAN_CLASS_NOTIF | FAN_REPORT_FID: what an unprivileged user may ask for
r = libc.syscall(ctypes.c_long(nr), ctypes.c_long(0x200), ctypes.c_long(0))
print("ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])'
	[ "$(kv stdout)" = 'EPERM\n' ]
}

# survivor EXEC: t/survivor.py under sbx: a process of the command's whose
# leader thread exited (it reads as a zombie in /proc/PID/stat) tries to
# outlive sbx, then to take a seccomp listener of its own and let through
# what sbx's filter refuses: a chmod of a host file outside the writable
# paths. Sets $spid; the victim is $out/file (mode 600).
survivor() {
	cp "$BATS_TEST_DIRNAME/survivor.py" "$ws/survivor.py"
	chmod 600 "$out/file"
	run --separate-stderr "$SBX" "$@" -C "$ws" -- python3 "$ws/survivor.py" \
	    "$ws/log" "$out/file" "$out/no.sock" stay 3>&-
	[ "$status" -eq 0 ]
	spid=$(sed -n 's/^pid //p' "$ws/log")
	[ -n "$spid" ]
}

# tasks PID: how many threads PID still runs (0: gone).
tasks() {
	ls "/proc/$1/task" 2>/dev/null | wc -l
}

@test "landlock: a process whose leader thread exited does not outlive sbx, nor chmod a host file later" {
	local ex
	for ex in "--backend landlock" "--sandbox host"; do
		rm -f "$ws/log"
		# shellcheck disable=SC2086
		survivor $ex
		echo "$ex: pid $spid, $(tasks "$spid") threads left"
		[ "$(tasks "$spid")" -eq 0 ]
		# --sandbox host confines nothing: only the sweep is its.
		[ "$ex" = "--backend landlock" ] || continue
		sleep 1
		cat "$ws/log"
		[ "$(stat -c %a "$out/file")" = 600 ]
		! grep -qx "chmod ok" "$ws/log" || return 1
	done
	# Positive control: the same script, run outside, does what it says.
	rm -f "$ws/log"
	python3 "$ws/survivor.py" "$ws/log" "$out/file" "$out/no.sock" direct
	grep -qx "chmod ok" "$ws/log"
	[ "$(stat -c %a "$out/file")" = 4777 ]
}

@test "landlock: --deny-read on a folder a bind mount shows elsewhere too is refused, not left readable" {
	is_root || skip "needs root to make a bind mount"
	mkdir -p "$ws/x/p" "$BATS_TEST_TMPDIR/V"
	echo secret >"$BATS_TEST_TMPDIR/V/sec"
	mount --bind "$BATS_TEST_TMPDIR/V" "$ws/x/p"
	bound="$ws/x/p"
	for d in "$ws/x/p/sec" "$ws/x/p"; do
		run --separate-stderr "$SBX" --backend landlock -C "$ws" --deny-read "$d" -- cat x/p/sec
		[ "$status" -eq 125 ]
		[ "$(kv error)" = policy ]
		[[ "$stderr" == *"Landlock holds inodes"* ]]
		[[ "$output" != *secret* ]]
	done
	umount "$bound" && bound=
	# positive control: an ordinary folder is hidden
	mkdir -p "$ws/plain" && echo secret >"$ws/plain/sec"
	run --separate-stderr "$SBX" --backend landlock -C "$ws" --deny-read "$ws/plain/sec" -- cat plain/sec
	[ "$(kv exit_code)" = 1 ]
	[[ "$(kv stdout)" != *secret* ]]
}
