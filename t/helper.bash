# Shared by every t/*.bats file: where sbx is, readers of its result,
# background processes and their teardown, skips with reasons. Each run
# gets a private /tmp that hides the host's, where bats keeps its scratch
# folders: a file a sandboxed command must read lives in its workspace
# (-C), or the run says --host-tmp.
#
# Which file takes which test:
#   alloc     sbx's own malloc (static musl build) under load and attack
#   cli       the command line, bad input, the environment, --result, JSON
#   exit      exit statuses and signals
#   timeout   -t, -k, the drain window, process-tree cleanup
#   capture   output capture, caps, the kv escaping
#   contract  what every executor does alike (t/run runs it per executor)
#   policy    --dry-run golden tests for bwrap and Landlock: no sandbox needed
#   bwrap     the bubblewrap sandbox under attack
#   landlock  the Landlock sandbox under attack
#   git       git folders and home start-up files under attack, on bwrap
#             and Landlock: names held whether or not they exist
#   seccomp   the seccomp filter, on both Linux backends
#   race      paths swapped while sbx starts, links planted by earlier
#             runs, on both Linux backends (t/race.py races)
#   proxy     the --allow-host proxy
#   loopback  --allow-host localhost:PORT: that one host loopback port, on
#             bwrap (the relay) and Landlock (the supervisor), no other
#   tty       sbx's own terminal, driven through a real pty (t/term.py)
#   limits    --mem, --procs, --file-size, --cpu, and the usage keys
#   everyday  real jobs (npm ci, go, cc, pytest, tar as root) under bwrap
#             and Landlock: the private temp folder, --cache, missing
#             --deny paths, owners
#   seatbelt  the Seatbelt profile text, golden, on every platform
#   macos     the Seatbelt sandbox under attack, on a real Mac only
# shellcheck shell=bash

SBX=${SBX:-"$BATS_TEST_DIRNAME/../sbx"}
# The executor under test for the contract suite: "--sandbox host",
# "--backend bwrap", "--backend landlock", ... (t/run sets it).
SBX_EXEC=${SBX_EXEC:---sandbox host}

# kv KEY: the value of KEY in the kv ExecResult held in $output.
kv() {
	printf '%s\n' "$output" | sed -n "s/^$1=//p" | head -n 1
}

# kvdec KEY: the value of KEY in the kv result in $output, unescaped
# (\\ \n \t \r \xHH), as raw bytes on stdout.
kvdec() {
	printf '%s\n' "$output" | python3 -c '
import re, sys
key = sys.argv[1].encode()
for line in sys.stdin.buffer.read().split(b"\n"):
    if line.startswith(key + b"="):
        v = line[len(key) + 1:]
        out = re.sub(rb"\\(\\|n|t|r|x[0-9a-f]{2})", lambda m: {
            b"\\": b"\\", b"n": b"\n", b"t": b"\t", b"r": b"\r"}.get(m.group(1))
            or bytes([int(m.group(1)[1:], 16)]), v)
        sys.stdout.buffer.write(out)
        break
' "$1"
}

# kv_has KEY: the result in $output has the key at all.
kv_has() {
	printf '%s\n' "$output" | grep -q "^$1="
}

# sbx_skip REASON: skip with a reason, or fail where skips are not allowed
# (SBX_MUST_WORK=1, as .ci/run sets it).
sbx_skip() {
	if [ "${SBX_MUST_WORK:-0}" = 1 ]; then
		echo "must work, but: $*" >&2
		return 1
	fi
	skip "$*"
}

# require_cmd CMD: skip (with the reason) when CMD is not installed.
require_cmd() {
	command -v "$1" >/dev/null 2>&1 || sbx_skip "$1 is not installed"
}

# require_bwrap: skip unless the bwrap backend works here.
require_bwrap() {
	"$SBX" --probe 2>/dev/null | grep -q '^bwrap=ok' ||
	    sbx_skip "bwrap backend unavailable: $("$SBX" --probe 2>&1 | grep '^bwrap' | head -n 1)"
}

# require_landlock: skip unless the landlock backend works here.
require_landlock() {
	"$SBX" --probe 2>/dev/null | grep -q '^landlock=ok' ||
	    sbx_skip "landlock backend unavailable: $("$SBX" --probe 2>&1 | grep '^landlock' | head -n 1)"
}

# shquote ARG...: one line with the words single-quoted for any POSIX sh,
# newlines and quotes kept. script(1) runs its command with $SHELL, which
# may be dash, and dash does not read the $'...' of bash's printf %q.
shquote() {
	local a q=
	for a in "$@"; do
		q="$q '${a//\'/\'\\\'\'}'"
	done
	printf '%s\n' "${q# }"
}

is_root() {
	[ "$(id -u)" = 0 ]
}

# pid_alive PID: the process exists and is not a zombie.
pid_alive() {
	local st
	st=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

# none_alive FILE [TENTHS]: FILE lists pids (at least one) and none of them
# is alive, allowing TENTHS tenths of a second (default 10) for a SIGKILL
# in flight. Leftovers are reported and killed.
none_alive() {
	local pid i left
	[ -s "$1" ] || { echo "$1: no pids recorded" >&2; return 1; }
	for i in $(seq "${2:-10}"); do
		left=
		while read -r pid; do
			pid_alive "$pid" && left="$left $pid"
		done <"$1"
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	echo "still alive after sbx returned:$left" >&2
	ps -o pid,ppid,pgid,sid,stat,args -p "${left# }" >&2 || true
	kill -9 $left 2>/dev/null || true
	return 1
}

# wait_for CMD...: retry CMD for up to 5 s.
wait_for() {
	local i
	for i in $(seq 50); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# bg CMD...: start CMD in the background, outside the sandbox, its output
# dropped; its pid goes on $pids, which kill_bg (in teardown) kills.
bg() {
	"$@" </dev/null >/dev/null 2>&1 3>&- &
	pids+=("$!")
}

# kill_bg: SIGKILL every process bg started.
kill_bg() {
	local p
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on just now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# on_backend NAME ARGS...: sbx on backend NAME (bwrap, landlock), output
# straight through; fd 3 closed so nothing outlives the test through it.
on_backend() {
	local b=$1
	shift
	"$SBX" --backend "$b" --passthrough "$@" 3>&-
}
