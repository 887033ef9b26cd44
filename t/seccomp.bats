#!/usr/bin/env bats
# The seccomp filter under attack, on every Linux backend that works here
# (bwrap, landlock): each test makes the forbidden system call from inside
# and checks the errno the filter returns (EPERM, ENOSYS for clone3), with a
# positive control where the policy can grant the same thing, so no test
# passes because nothing worked at all. Runs as root and as nobody (t/run).

load helper
bats_require_minimum_version 1.5.0

# The attack: python3 -c "$ATTACK" NAME prints "ok" or the errno's name.
ATTACK='
import ctypes, errno, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) for x in a])
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
def sock(fam, typ=socket.SOCK_STREAM, proto=0):
    try:
        socket.socket(fam, typ, proto).close()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
x86 = os.uname().machine == "x86_64"
NR = {  # x86_64, aarch64
    "keyctl": (250, 219), "io_uring_setup": (425, 425),
    "clone3": (435, 435), "bpf": (321, 280), "mount": (165, 40),
    "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "open_by_handle_at": (304, 265), "setns": (308, 268),
    "personality": (135, 92), "mknodat": (259, 33), "syslog": (103, 116),
    "fsopen": (430, 430), "init_module": (175, 105), "unshare": (272, 97),
}
def nr(name):
    return NR[name][0 if x86 else 1]
buf = ctypes.create_string_buffer(256)
t = sys.argv[1]
r = {
    "unix": lambda: sock(socket.AF_UNIX),
    "socketpair": lambda: (socket.socketpair(), "ok")[1],
    "inet": lambda: sock(socket.AF_INET),
    "vsock": lambda: sock(40),
    "packet": lambda: sock(17, socket.SOCK_RAW),
    "netlink_audit": lambda: sock(16, socket.SOCK_RAW, 9),
    "netlink_route": lambda: sock(16, socket.SOCK_RAW, 0),
    "keyctl": lambda: sc(nr("keyctl"), 0, -3, 0),
    "io_uring_setup": lambda: sc(nr("io_uring_setup"), 4, ctypes.addressof(buf)),
    "clone3": lambda: sc(nr("clone3"), 0, 0),
    "bpf": lambda: sc(nr("bpf"), 0, 0, 0),
    "mount": lambda: sc(nr("mount"), 0, 0, 0, 0, 0),
    "fsopen": lambda: sc(nr("fsopen"), 0, 0),
    "perf_event_open": lambda: sc(nr("perf_event_open"), 0, 0, -1, -1, 0),
    "userfaultfd": lambda: sc(nr("userfaultfd"), 0),
    "open_by_handle_at": lambda: sc(nr("open_by_handle_at"), -1, 0, 0),
    "setns": lambda: sc(nr("setns"), -1, 0),
    "unshare_user": lambda: sc(nr("unshare"), 0x10000000),
    "unshare_net": lambda: sc(nr("unshare"), 0x40000000),
    "unshare_files": lambda: sc(nr("unshare"), 0x400),
    "personality_norandom": lambda: sc(nr("personality"), 0x0040000),
    "personality_query": lambda: sc(nr("personality"), 0xffffffff),
    "mknod_block": lambda: sc(nr("mknodat"), -100, 0, 0o60600, 0x801),
    "syslog": lambda: sc(nr("syslog"), 3, ctypes.addressof(buf), 256),
    "init_module": lambda: sc(nr("init_module"), 0, 0, 0),
}[t]()
print(r)
'

setup() {
	ws="$BATS_TEST_TMPDIR/ws"
	mkdir -p "$ws"
	pids=()
	backends=()
	if "$SBX" --probe 2>/dev/null | grep -q '^bwrap=ok'; then
		backends+=(bwrap)
	fi
	if "$SBX" --probe 2>/dev/null | grep -q '^landlock=ok'; then
		backends+=(landlock)
	fi
	[ "${#backends[@]}" -gt 0 ] || sbx_skip "no Linux sandbox backend works here"
	require_cmd python3
}

teardown() {
	kill_bg
}

# try BACKEND [SBX OPTIONS] NAME: the attack's result line, in $output.
try() {
	local b=$1
	shift
	local args=("${@:1:$#-1}") name=${!#}
	run --separate-stderr "$SBX" --backend "$b" -C "$ws" "${args[@]}" \
	    --passthrough -- python3 -c "$ATTACK" "$name" 3>&-
	echo "$b ${args[*]} $name: status=$status output=$output stderr=$stderr"
}

# expect NAME RESULT [SBX OPTIONS]: on each backend, NAME gives RESULT.
expect() {
	local name=$1 want=$2 b
	shift 2
	for b in "${backends[@]}"; do
		try "$b" "$@" "$name"
		[ "$status" -eq 0 ]
		[ "$output" = "$want" ]
	done
}



# A Unix socket server outside the sandbox that answers "pong".
SERVER='
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
a = sys.argv[1]
s.bind("\0" + a[1:] if a.startswith("@") else a)
s.listen(8)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept()
    c.sendall(b"pong")
    c.close()
'

CLIENT='
import errno, socket, sys
a = sys.argv[1]
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect("\0" + a[1:] if a.startswith("@") else a)
    print(s.recv(4).decode())
except OSError as e:
    print(errno.errorcode[e.errno])
'

@test "seccomp: socket(AF_UNIX) to a host socket is refused; --allow-unix-sockets opens it" {
	# In the workspace: the private /tmp would hide bats' scratch folder.
	sockpath="$ws/host.sock"
	bg python3 -c "$SERVER" "$sockpath" "$BATS_TEST_TMPDIR/ready"
	wait_for test -e "$BATS_TEST_TMPDIR/ready"
	# Positive control outside the sandbox.
	[ "$(python3 -c "$CLIENT" "$sockpath")" = pong ]
	for b in "${backends[@]}"; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- python3 -c "$CLIENT" "$sockpath" 3>&-
		echo "$b: $output"
		[ "$status" -eq 0 ]
		[ "$output" = EPERM ]
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --allow-unix-sockets --passthrough -- \
		    python3 -c "$CLIENT" "$sockpath" 3>&-
		echo "$b --allow-unix-sockets: $output"
		[ "$status" -eq 0 ]
		[ "$output" = pong ]
	done
}

@test "seccomp: a host abstract socket stays out of reach, even with --allow-unix-sockets" {
	name="@sbx-test-$$-$RANDOM"
	bg python3 -c "$SERVER" "$name" "$BATS_TEST_TMPDIR/ready"
	wait_for test -e "$BATS_TEST_TMPDIR/ready"
	[ "$(python3 -c "$CLIENT" "$name")" = pong ]
	for b in "${backends[@]}"; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- python3 -c "$CLIENT" "$name" 3>&-
		echo "$b: $output"
		[ "$output" = EPERM ]
		# bwrap: another network namespace; landlock: its scope.
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --allow-unix-sockets --passthrough -- \
		    python3 -c "$CLIENT" "$name" 3>&-
		echo "$b --allow-unix-sockets: $output"
		[ "$status" -eq 0 ]
		[ "$output" != pong ]
		[[ "$output" =~ ^E ]]
	done
}

@test "seccomp: socketpair(AF_UNIX) still works" {
	expect socketpair ok
}

@test "seccomp: AF_VSOCK, AF_PACKET and netlink other than route are refused" {
	expect vsock EPERM --net
	expect packet EPERM --net
	expect netlink_audit EPERM --net
	expect inet ok --net
	expect netlink_route ok --net
}

@test "seccomp: TIOCSTI and TIOCLINUX on the terminal are refused" {
	require_cmd script
	# findings go to a file: script(1) may drop the pty's last line
	cat >"$ws/sti.py" <<'EOF'
import errno, fcntl, os, sys
sys.stdout = open(sys.argv[1], "w")
if not os.isatty(0):
    print("notty"); sys.exit(0)
out = []
for cmd, arg in ((0x5412, b"x"), (0x100005412, b"x"), (0x541c, b"\x06")):
    try:
        fcntl.ioctl(0, cmd, arg); out.append("ok")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
    except OverflowError:
        out.append("skip")
print(" ".join(out))
EOF
	for b in "${backends[@]}"; do
		rm -f "$ws/sti.out"
		SHELL=/bin/sh script -qec "$(shquote "$SBX" --backend "$b" -C "$ws" --passthrough -- python3 "$ws/sti.py" "$ws/sti.out")" /dev/null </dev/null >/dev/null 3>&-
		output=$(cat "$ws/sti.out")
		echo "$b: $output"
		[[ "$output" == *"EPERM"* ]]
		[[ "$output" != *"ok"* ]]
		[[ "$output" != *"notty"* ]]
	done
}

@test "seccomp: unshare -U and unshare -m fail inside" {
	require_cmd unshare
	for b in "${backends[@]}"; do
		for f in -U -m -n -p; do
			run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
			    --passthrough -- unshare $f true 3>&-
			echo "$b unshare $f: $status $stderr"
			[ "$status" -ne 0 ]
		done
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- true 3>&-
		[ "$status" -eq 0 ]
	done
	expect unshare_user EPERM
	expect unshare_net EPERM
	expect unshare_files ok
	expect setns EPERM
}

@test "seccomp: keyrings, io_uring, bpf, perf and userfaultfd are refused" {
	expect keyctl EPERM
	expect io_uring_setup EPERM
	expect bpf EPERM
	expect perf_event_open EPERM
	expect userfaultfd EPERM
}

@test "seccomp: mounts, handles, modules, syslog are refused; clone3 is ENOSYS" {
	expect mount EPERM
	expect fsopen EPERM
	expect open_by_handle_at EPERM
	expect init_module EPERM
	expect syslog EPERM
	expect clone3 ENOSYS
}

# Every number of the deny list every flavour shares, and the numbers
# just outside its runs (the filter's leaves are runs of consecutive
# numbers, seccomp.c): each refused one answers EPERM, each neighbour
# anything but (it runs, harmlessly, with zero arguments). x86_64 numbers.
RUNS='
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(0)] * 5)
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
deny = [103, 134, 153, 154, 155, 156, 159, 161] + list(range(163, 181)) + \
    [212, 227, 246, 248, 249, 250, 256, 279, 298, 303, 304, 305, 308, 313,
     320, 321, 323] + list(range(425, 434)) + [442, 443, 467]
near = [102, 104, 152, 157, 158, 160, 162, 181, 211, 213, 226, 228, 247,
        255, 278, 299, 302, 306, 309, 324, 434, 441, 444, 468]
bad = ["%d=%s" % (n, sc(n)) for n in deny if sc(n) != "EPERM"]
bad += ["%d=EPERM" % n for n in near if sc(n) == "EPERM"]
print(" ".join(bad) or "ok")
'

@test "seccomp: each refused number and none of its neighbours is refused (the runs' edges)" {
	[ "$(uname -m)" = x86_64 ] || sbx_skip "the numbers listed are x86_64's"
	for b in "${backends[@]}"; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- python3 -c "$RUNS" 3>&-
		echo "$b: status=$status output=$output stderr=$stderr"
		[ "$status" -eq 0 ]
		[ "$output" = ok ]
	done
}

@test "seccomp: personality changes and device nodes are refused" {
	expect personality_query ok
	expect personality_norandom EPERM
	expect mknod_block EPERM
	# A FIFO is ordinary.
	for b in "${backends[@]}"; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- mkfifo "$ws/fifo" 3>&-
		[ "$status" -eq 0 ]
		[ -p "$ws/fifo" ]
		rm -f "$ws/fifo"
	done
}

@test "seccomp: the filter's refusals are counted and named in denied; other failures are not" {
	local b
	for b in "${backends[@]}"; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- sh -c '
		    for t in unix mount keyctl unshare_net; do
			python3 -c "$1" $t
		    done' sh "$ATTACK" 3>&-
		echo "$b: $output"
		[ "$status" -eq 0 ]
		[ "$(kvdec stdout)" = "$(printf 'EPERM\nEPERM\nEPERM\nEPERM')" ]
		[ "$(kv denied_count)" = 4 ]
		[ "$(kv denied)" = "socket unix; mount; keyctl; unshare 0x40000000" ]
		# Positive control: what the command fails at on its own, and what
		# the policy grants, is no refusal.
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --allow-unix-sockets -- sh -c '
		    cat /nonexistent 2>/dev/null; python3 -c "$1" unix;
		    python3 -c "$1" socketpair; python3 -c "$1" personality_query
		    ' sh "$ATTACK" 3>&-
		echo "$b: $output"
		[ "$status" -eq 0 ]
		[ "$(kvdec stdout)" = "$(printf 'ok\nok\nok')" ]
		! kv_has denied_count || return 1
		! kv_has denied || return 1
	done
}

@test "seccomp: a refusal repeated is named once and counted each time; a later one stays in denied" {
	local b
	# glibc's name service tries a Unix socket per lookup: thirty of
	# them must not push the refusal that matters out of the list.
	for b in "${backends[@]}"; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- sh -c '
		    python3 -c "
import socket
for i in range(30):
    try:
        socket.socket(socket.AF_UNIX)
    except OSError:
        pass
" && python3 -c "$1" keyctl' sh "$ATTACK" 3>&-
		echo "$b: $output"
		[ "$status" -eq 0 ]
		[ "$(kvdec stdout)" = EPERM ]
		[ "$(kv denied)" = "socket unix; keyctl" ]
		[ "$(kv denied_count)" = 31 ]
	done
}

@test "bwrap: the filter's refusals are reported as nobody sees them, through the shim" {
	[[ " ${backends[*]} " == *" bwrap "* ]] || sbx_skip "bwrap does not work here"
	# A device node and a namespace: the shim names each, with its path.
	run --separate-stderr "$SBX" --backend bwrap -C "$ws" -- sh -c '
	    python3 -c "$1" mknod_block; unshare -m true 2>/dev/null; exit 0
	    ' sh "$ATTACK" 3>&-
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(kv denied_count)" = 2 ]
	[ "$(kv denied)" = "mknod; unshare 0x20000" ]
	# The command cannot reach the shim's listener to answer for itself.
	run --separate-stderr "$SBX" --backend bwrap -C "$ws" -- sh -c \
	    'ls -l /proc/self/fd/ /proc/1/fd/ 2>&1 | grep -c seccomp; true' 3>&-
	[ "$(kvdec stdout)" = 0 ]
}

@test "seccomp: a 32-bit system call kills the process" {
	[ "$(uname -m)" = x86_64 ] || skip "x86_64 only"
	require_cmd gcc
	cat >"$ws/i386.c" <<'EOF'
int main(void) { __asm__ volatile("mov $20, %%eax; int $0x80" ::: "eax"); return 0; }
EOF
	gcc -o "$ws/i386" "$ws/i386.c" ||
	    skip "cannot build the probe"
	# The control: outside the sandbox the call returns. A kernel that
	# refuses 32-bit calls itself (ia32_emulation off: int 0x80 faults)
	# leaves nothing to attack here.
	if ! "$ws/i386"; then
		skip "this kernel refuses 32-bit system calls itself (int 0x80 faults outside the sandbox too)"
	fi
	for b in "${backends[@]}"; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- \
		    "$ws/i386" 3>&-
		echo "$b: $output"
		[ "$(kv signal)" = SIGSYS ]
	done
}

# SETID CALL MODE: make or change file "f" in the workspace with CALL and
# MODE (octal); print the errno's name, or "SETID" when the file ends up
# with a set-id bit, or "ok".
SETID='
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
x86 = os.uname().machine == "x86_64"
NR = {"open": (2, None), "openat": (257, 56), "creat": (85, None),
      "mknod": (133, None), "mknodat": (259, 33), "chmod": (90, None),
      "fchmod": (91, 52), "fchmodat": (268, 53), "fchmodat2": (452, 452),
      "openat2": (437, 437)}
call, mode = sys.argv[1], int(sys.argv[2], 8)
nr = NR[call][0 if x86 else 1]
if nr is None:
    print("ok"); sys.exit(0)
def sc(*a):
    return libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
f = b"f"
if os.path.exists("f"):
    os.unlink("f")
if call.startswith(("open", "creat", "mknod")) and call != "openat2":
    pass
else:
    os.close(os.open("f", os.O_CREAT | os.O_WRONLY, 0o644))
O_CREAT, O_WRONLY, O_TMPFILE = 0o100, 1, 0o20200000
how = ctypes.create_string_buffer(24)
ctypes.memmove(how, (O_CREAT | O_WRONLY).to_bytes(8, "little") + mode.to_bytes(8, "little"), 16)
r = {
    "open": lambda: sc(f, O_CREAT | O_WRONLY, mode),
    "openat": lambda: sc(-100, f, O_CREAT | O_WRONLY, mode),
    "creat": lambda: sc(f, mode),
    "mknod": lambda: sc(f, 0o100000 | mode, 0),
    "mknodat": lambda: sc(-100, f, 0o100000 | mode, 0),
    "chmod": lambda: sc(f, mode),
    "fchmod": lambda: sc(os.open("f", os.O_RDONLY), mode),
    "fchmodat": lambda: sc(-100, f, mode),
    "fchmodat2": lambda: sc(-100, f, mode, 0),
    "openat2": lambda: sc(-100, f, how, 24),
}[call]()
if r < 0:
    print(errno.errorcode[ctypes.get_errno()])
elif os.stat("f").st_mode & 0o6000:
    print("SETID")
else:
    print("ok")
'

@test "seccomp: no call leaves a set-user-ID or set-group-ID file" {
	local b c m
	for b in "${backends[@]}"; do
		for c in open openat creat mknod mknodat chmod fchmod fchmodat \
		    fchmodat2; do
			for m in 4755 2755 6755; do
				run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
				    --passthrough -- python3 -c "$SETID" "$c" "$m" 3>&-
				echo "$b $c $m: $status $output $stderr"
				[ "$status" -eq 0 ]
				[ "$output" = EPERM ] || [ "$output" = ENOSYS ]
			done
			# The control: the same call without a set-id bit works.
			run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
			    --passthrough -- python3 -c "$SETID" "$c" 755 3>&-
			echo "$b $c 755: $status $output $stderr"
			[ "$output" = ok ]
		done
		# O_TMPFILE then linkat: the mode of an unnamed file.
		rm -f "$ws"/t4755 "$ws"/t755
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- python3 -c '
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
for m in (0o4755, 0o755):
    try:
        fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, m)
        if libc.linkat(-100, b"/proc/self/fd/%d" % fd, -100, b"t%o" % m, 0x400):
            raise OSError(ctypes.get_errno(), "linkat")
        print("SETID" if os.stat("t%o" % m).st_mode & 0o6000 else "ok", end=" ")
    except OSError as e:
        print(errno.errorcode[e.errno], end=" ")
' 3>&-
		echo "$b tmpfile: $output $stderr"
		[[ "$output" == "EPERM ok"* ]]
		# mkdir(2) keeps no set-id bit of its mode (the kernel drops
		# them; a folder inherits set-group-ID from its parent only).
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- python3 -c 'import os; os.mkdir("d", 0o6777)' 3>&-
		[ "$status" -eq 0 ]
		[ -d "$ws/d" ]
		[ -z "$(find "$ws/d" -perm /6000)" ]
		rmdir "$ws/d"
		# openat2 hides its mode in memory BPF cannot read: ENOSYS, and
		# libc falls back to openat.
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- python3 -c "$SETID" openat2 4755 3>&-
		[ "$output" = ENOSYS ]
		[ -z "$(find "$ws" -perm /6000)" ]
		rm -f "$ws/f" "$ws"/t4755 "$ws"/t755
	done
}

@test "seccomp: cp -p and install keep working, without the set-id bits" {
	for b in "${backends[@]}"; do
		printf 'x' >"$ws/src"
		chmod 750 "$ws/src"
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- sh -c 'cp -p src dst && install -m 700 src dst2 && stat -c %a dst dst2' 3>&-
		echo "$b: $status $output $stderr"
		[ "$status" -eq 0 ]
		[ "$output" = "750
700" ]
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- chmod u+s dst 3>&-
		[ "$status" -ne 0 ]
		[ "$(stat -c %a "$ws/dst")" = 750 ]
		rm -f "$ws/dst" "$ws/dst2"
	done
}

@test "seccomp: file capabilities cannot be set (security.capability)" {
	# As root under bwrap every capability is gone, CAP_SETFCAP with
	# them; under Landlock the extended attribute calls are refused or
	# judged by the supervisor, which acts without it.
	for b in "${backends[@]}"; do
		printf 'x' >"$ws/capf"
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- python3 -c '
import errno, os, sys
# a v2 capability blob: cap_net_raw+ep
v = bytes.fromhex("000000020020000000000000000000000000000000")[:20]
for name, val in (("security.capability", v), ("user.x", b"1")):
    try:
        os.setxattr("capf", name, val); print("ok", end=" ")
    except OSError as e:
        print(errno.errorcode[e.errno], end=" ")
' 3>&-
		echo "$b: $status $output $stderr"
		[ "$status" -eq 0 ]
		[[ "$output" == E* ]]
		python3 -c 'import os, sys; os.getxattr(sys.argv[1], "security.capability")' "$ws/capf" 2>/dev/null && return 1
		# The control: user.x works under bwrap (the workspace is
		# writable; Landlock refuses or judges every attribute).
		[ "$b" = landlock ] || [[ "$output" == "EPERM ok"* ]]
		rm -f "$ws/capf"
	done
}

# FORGE: from inside, look for a way to any other process's descriptors
# (the status socket: the shim's, pid 1 under bwrap, its bridge; sbx's own
# under Landlock): readlink and open through /proc/PID/fd, pidfd_getfd(2),
# ptrace(2) attach, /proc/PID/mem. Prints "held N" (N processes tried) or
# what worked; then the control: the same on a child of its own works.
FORGE='
import ctypes, errno, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
x86 = os.uname().machine == "x86_64"
PTRACE = 101 if x86 else 117
def reach(pid):
    got = []
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                os.readlink("/proc/%d/fd/%s" % (pid, fd)); got.append("link" + fd)
            except OSError:
                pass
    except OSError:
        pass
    pidfd = libc.syscall(ctypes.c_long(434), ctypes.c_long(pid), ctypes.c_long(0))
    if pidfd >= 0:
        for fd in range(0, 16):
            if libc.syscall(ctypes.c_long(438), ctypes.c_long(pidfd), ctypes.c_long(fd), ctypes.c_long(0)) >= 0:
                got.append("getfd%d" % fd)
        os.close(pidfd)
    if libc.syscall(ctypes.c_long(PTRACE), ctypes.c_long(16), ctypes.c_long(pid), 0, 0) >= 0:
        got.append("ptrace")
        libc.syscall(ctypes.c_long(PTRACE), ctypes.c_long(17), ctypes.c_long(pid), 0, 0)
    try:
        os.close(os.open("/proc/%d/mem" % pid, os.O_RDWR)); got.append("mem")
    except OSError:
        pass
    return got
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
child = os.fork()
if child == 0:
    os.read(a.fileno(), 1)
    os._exit(0)
mine = {os.getpid(), child}
bad, n = [], 0
for p in os.listdir("/proc"):
    if not p.isdigit() or int(p) in mine:
        continue
    n += 1
    g = reach(int(p))
    if g:
        bad.append("%s:%s" % (p, ",".join(g)))
print(" ".join(bad) if bad else "held %d" % (n > 0))
print("control", "ok" if any(x.startswith("link") for x in reach(child)) else "none")
b.send(b"x")
os.waitpid(child, 0)
sys.exit(7)
'

@test "seccomp: the status socket stays out of reach of the command (bwrap's shim and bridge, sbx under Landlock)" {
	local b
	for b in "${backends[@]}"; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --allow-host registry.example.org -- python3 -c "$FORGE" 3>&-
		echo "$b: $status $(kv stdout) $(kv stderr)"
		[ "$(kv stdout)" = 'held 1\ncontrol ok\n' ]
		# the command's own exit status, as it ended
		[ "$status" -eq 7 ]
		[ "$(kv exit_code)" = 7 ]
	done
}

@test "seccomp: a path the command chose can neither forge entries of denied nor hide what was refused" {
	local b
	for b in "${backends[@]}"; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
nr = 165 if os.uname().machine == "x86_64" else 40
libc.syscall(nr, b"x", b"/a; chmod /etc/shadow%", 0, 0)
libc.syscall(nr, b"x", b"/" + b"/" * 300 + b"etc", 0, 0)' 3>&-
		echo "$b: $(kv denied)"
		[ "$(kv denied_count)" = 2 ]
		# Two entries, "; " apart: the first path does not read as two.
		[ "$(kv denied | awk -F'; ' '{print NF}')" = 2 ]
		[ "$(kv denied | awk -F'; ' '{print $1}')" = \
		    "mount /a%3B chmod /etc/shadow%25" ]
		# The long path is named, cut and marked, not dropped.
		[[ "$(kv denied | awk -F'; ' '{print $2}')" == "mount ///"*"..." ]]
	done
}

# LISTENER FLAGS: python3 -c "$LISTENER" FLAGS installs an allow-all filter
# with seccomp(2)'s flags FLAGS; prints ok or the error.
LISTENER='
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
nr = 317 if os.uname().machine == "x86_64" else 277
code = ctypes.create_string_buffer(struct.pack("HBBI", 0x06, 0, 0, 0x7fff0000))
prog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", 1, ctypes.addressof(code)))
libc.prctl(38, 1, 0, 0, 0)
r = libc.syscall(nr, 1, int(sys.argv[1]), prog)
print("ok" if r >= 0 else os.strerror(ctypes.get_errno()))
'

@test "seccomp: the command gets no seccomp listener of its own (one that outlived sbx would answer for it)" {
	local b
	# Control: outside, the same call gets a listener.
	[ "$(python3 -c "$LISTENER" 8)" = ok ]
	for b in "${backends[@]}"; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- python3 -c "$LISTENER" 8 3>&-
		echo "$b: $output"
		[ "$output" = "Operation not permitted" ]
		# A filter of the command's own, without a listener, still goes in.
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" \
		    --passthrough -- python3 -c "$LISTENER" 0 3>&-
		[ "$output" = ok ]
	done
}
