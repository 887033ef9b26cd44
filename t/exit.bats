#!/usr/bin/env bats
# Exit status and the result keys that explain it: the command's own status,
# 126 and 127 when it never ran, 128+N when a signal killed it, and sbx
# interrupted by SIGTERM, SIGINT or SIGHUP (aborted=1, the whole tree gone).
# Real processes and real signals; --sandbox host.

load helper
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# wait_lines FILE N: wait (at most 10 s) until FILE has N lines.
wait_lines() {
	local i
	for i in $(seq 100); do
		[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "$1 never got $2 lines" >&2
	return 1
}

@test "exit codes pass through" {
	for c in 0 1 2 3 100 124 125 126 127 128 200 255; do
		run "-$c" --separate-stderr "$SBX" --sandbox host -- sh -c "exit $c"
		[ "$status" -eq "$c" ] || { echo "exit $c gave $status" >&2; return 1; }
		[ "$(kv exit_code)" = "$c" ]
		[ -z "$(kv signal)" ]
		! kv_has error || return 1
		[ -z "$stderr" ]
	done
}

@test "exit 0 and 1 from real programs" {
	run --separate-stderr "$SBX" --sandbox host true
	[ "$status" -eq 0 ]
	[ "$(kv exit_code)" = 0 ]
	run --separate-stderr "$SBX" --sandbox host false
	[ "$status" -eq 1 ]
	[ "$(kv exit_code)" = 1 ]
	[ "$(kv timed_out)" = 0 ]
	[ "$(kv aborted)" = 0 ]
}

@test "126: a file that is not executable" {
	printf '#!/bin/sh\ntouch marker\n' >script
	chmod 644 script
	run -126 --separate-stderr "$SBX" --sandbox host ./script
	[ -z "$(kv exit_code)" ]
	[ -z "$(kv signal)" ]
	[ "$(kv error)" = not_executable ]
	[[ "$stderr" =~ ^sbx:\ .*script ]]
	[ ! -e marker ]
}

@test "126: a folder" {
	mkdir adir
	run -126 --separate-stderr "$SBX" --sandbox host ./adir
	[ -z "$(kv exit_code)" ]
	[ "$(kv error)" = not_executable ]
}

@test "126: an executable file of unknown format" {
	head -c 64 /dev/urandom | tr -d '#' >blob
	printf '\177ELF-not-really' >>blob
	chmod 755 blob
	run --separate-stderr "$SBX" --sandbox host ./blob
	# execvp falls back to sh for ENOEXEC, as a shell does; either sh
	# ran it and said so, or sbx reports it as not runnable.
	if [ "$status" -eq 126 ]; then
		[ "$(kv error)" = not_executable ] || [ "$(kv exit_code)" = 126 ]
	else
		[ "$(kv exit_code)" = "$status" ]
	fi
}

@test "127: command not found, exit_code empty, error=not_found" {
	run -127 --separate-stderr "$SBX" --sandbox host no-such-command-sbx-test
	[ -z "$(kv exit_code)" ]
	[ -z "$(kv signal)" ]
	[ "$(kv error)" = not_found ]
	[[ "$(kv error_message)" == *no-such-command-sbx-test* ]]
	[[ "$stderr" =~ ^sbx:\ .*no-such-command-sbx-test ]]
	[ "$(kv stdout_bytes)" = 0 ]
}

@test "127: a path that does not exist" {
	run -127 --separate-stderr "$SBX" --sandbox host ./nope/nothing
	[ -z "$(kv exit_code)" ]
	[ "$(kv error)" = not_found ]
}

@test "127: not found in the command's PATH" {
	mkdir bin
	printf '#!/bin/sh\necho found\n' >bin/only-here
	chmod +x bin/only-here
	run -127 --separate-stderr env PATH="/usr/bin:/bin" "$SBX" --sandbox host only-here
	[ "$(kv error)" = not_found ]
	run --separate-stderr env PATH="$BATS_TEST_TMPDIR/bin:/usr/bin:/bin" "$SBX" --sandbox host only-here
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'found\n' ]
}

@test "127 from a command that ran: exit_code=127, no error key" {
	run -127 --separate-stderr "$SBX" --sandbox host -- sh -c 'exit 127'
	[ "$(kv exit_code)" = 127 ]
	! kv_has error || return 1
	! kv_has error_message || return 1
	[ -z "$stderr" ]
}

@test "127 from a shell that cannot find its command: exit_code=127, no error key" {
	run -127 --separate-stderr "$SBX" --sandbox host -c 'no-such-command-sbx-test'
	[ "$(kv exit_code)" = 127 ]
	! kv_has error || return 1
	[[ "$(kv stderr)" == *no-such-command-sbx-test* ]]
}

@test "126 from a command that ran: exit_code=126, no error key" {
	run -126 --separate-stderr "$SBX" --sandbox host -- sh -c 'exit 126'
	[ "$(kv exit_code)" = 126 ]
	! kv_has error
}

@test "json: not found has null exit_code and error not_found" {
	run -127 --separate-stderr "$SBX" --sandbox host --format json no-such-command-sbx-test
	printf '%s' "$output" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["exit_code"] is None and r["signal"] is None, r
assert r["error"] == "not_found", r
'
}

@test "128+N: self-kill with SIGTERM" {
	run -143 --separate-stderr "$SBX" --sandbox host -- sh -c 'kill -TERM $$'
	[ -z "$(kv exit_code)" ]
	[ "$(kv signal)" = SIGTERM ]
	[ "$(kv timed_out)" = 0 ]
	[ "$(kv aborted)" = 0 ]
	! kv_has error
}

@test "128+N: self-kill with SIGKILL" {
	run -137 --separate-stderr "$SBX" --sandbox host -- sh -c 'kill -KILL $$'
	[ -z "$(kv exit_code)" ]
	[ "$(kv signal)" = SIGKILL ]
}

@test "128+N: SIGSEGV" {
	run -139 --separate-stderr "$SBX" --sandbox host -- sh -c 'ulimit -c 0; kill -SEGV $$'
	[ -z "$(kv exit_code)" ]
	[ "$(kv signal)" = SIGSEGV ]
}

@test "128+N: SIGINT, SIGHUP, SIGUSR1, SIGABRT" {
	for s in INT:130 HUP:129 USR1:138 ABRT:134 PIPE:141; do
		run --separate-stderr "$SBX" --sandbox host -- sh -c "ulimit -c 0; kill -${s%:*} \$\$"
		[ "$status" -eq "${s#*:}" ] || { echo "SIG${s%:*}: $status" >&2; return 1; }
		[ "$(kv signal)" = "SIG${s%:*}" ]
		[ -z "$(kv exit_code)" ]
	done
}

@test "json: a signal is a name, exit_code null" {
	run -143 --separate-stderr "$SBX" --sandbox host --format json -- sh -c 'kill -TERM $$'
	printf '%s' "$output" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["exit_code"] is None and r["signal"] == "SIGTERM", r
'
}

@test "the command's signal dispositions are the defaults, not sbx's" {
	# sbx ignores SIGPIPE and catches TERM/INT/HUP; the command must not
	# inherit any of that.
	run --separate-stderr "$SBX" --sandbox host -- sh -c 'grep -E "^Sig(Ign|Cgt|Blk):" /proc/self/status'
	# shown only when the test fails
	echo "sbx's own: $(grep -E '^Sig(Ign|Blk):' /proc/self/status | tr '\n' ' ')"
	echo "command's: $(kv stdout)"
	[ "$status" -eq 0 ]
	[[ "$(kv stdout)" == *'SigBlk:\t0000000000000000'* ]]
	[[ "$(kv stdout)" == *'SigIgn:\t0000000000000000'* ]]
}

@test "yes | head: SIGPIPE inside the command works as usual" {
	run --separate-stderr "$SBX" --sandbox host -c 'yes | head -n 2; echo "${PIPESTATUS[0]}"'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'y\ny\n141\n' ]
}

# sbx_interrupted SIG CODE: sbx runs a tree (a foreground sleep, background
# children, a setsid escapee), gets SIG, exits CODE with aborted=1, and every
# pid of the tree is gone.
sbx_interrupted() {
	local sig=$1 code=$2 pid rc
	rm -f pids res
	"$SBX" --sandbox host --result res -- bash -c '
		sleep 300 & echo $! >>pids
		(sleep 300 & echo $! >>pids; wait) &
		echo $! >>pids
		setsid sh -c "echo \$\$ >>pids; exec sleep 300" </dev/null >/dev/null 2>&1 &
		echo $$ >>pids
		sleep 300' 3>&- &
	pid=$!
	wait_lines pids 5
	sleep 0.2
	kill -"$sig" "$pid"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq "$code" ] || { echo "SIG$sig: sbx exited $rc, want $code" >&2; return 1; }
	output=$(cat res)
	[ "$(kv aborted)" = 1 ]
	[ "$(kv timed_out)" = 0 ]
	none_alive pids 20
}

@test "sbx interrupted by SIGTERM: aborted=1, 143, the whole tree killed" {
	sbx_interrupted TERM 143
}

@test "sbx interrupted by SIGINT: aborted=1, 130, the whole tree killed" {
	sbx_interrupted INT 130
}

@test "sbx interrupted by SIGHUP: aborted=1, 129, the whole tree killed" {
	sbx_interrupted HUP 129
}

@test "sbx interrupted: a command that traps SIGTERM is killed after the grace" {
	rm -f pids
	"$SBX" --sandbox host -k 1 --result res -- bash -c '
		trap "echo term-seen" TERM
		echo $$ >>pids
		while :; do sleep 0.1; done' 3>&- &
	pid=$!
	wait_lines pids 1
	sleep 0.3
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	output=$(cat res)
	[ "$(kv aborted)" = 1 ]
	[ "$(kv signal)" = SIGKILL ]
	[[ "$(kv stdout)" == *term-seen* ]]
	none_alive pids 20
}

@test "sbx interrupted twice: the second signal kills at once" {
	rm -f pids
	"$SBX" --sandbox host -k 600 --result res -- bash -c '
		trap "" TERM INT HUP
		echo $$ >>pids
		while :; do sleep 0.1; done' 3>&- &
	pid=$!
	wait_lines pids 1
	sleep 0.3
	kill -TERM "$pid"
	sleep 0.3
	kill -INT "$pid"
	# A 600 s grace would hang here; the second signal must not wait.
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"
		echo "sbx still waiting 10 s after the second signal" >&2
		none_alive pids || true
		return 1
	fi
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -ge 129 ] && [ "$rc" -le 143 ]
	output=$(cat res)
	[ "$(kv aborted)" = 1 ]
	none_alive pids 20
}

@test "sbx interrupted: output so far is in the result" {
	"$SBX" --sandbox host --result res -- sh -c 'echo before; echo $$ >pids; exec sleep 300' 3>&- &
	pid=$!
	wait_lines pids 1
	sleep 0.2
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	output=$(cat res)
	[ "$(kv stdout)" = 'before\n' ]
	[ "$(kv aborted)" = 1 ]
}
