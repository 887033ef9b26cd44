# Shared by every t/*.bats file: where sbx is, and small readers of its result.
# shellcheck shell=bash

SBX=${SBX:-"$BATS_TEST_DIRNAME/../sbx"}
# The executor under test for the contract suite: "--sandbox host",
# "--backend bwrap", "--backend landlock", ... (t/run sets it).
SBX_EXEC=${SBX_EXEC:---sandbox host}

# kv KEY: the value of KEY in the kv ExecResult held in $output.
kv() {
	printf '%s\n' "$output" | sed -n "s/^$1=//p" | head -n 1
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
