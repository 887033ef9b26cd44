#!/usr/bin/env bats
# -t and -k, and every process the command starts stopped with it: on
# timeout, when the command's own process exits (a background child holding
# the pipes gets at most ~2 s), setsid and double-fork escapees, stopped
# processes. Bounds are generous; speed lives in bench/. --sandbox host.

load helper
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# elapsed START: whole seconds since START ($SECONDS).
elapsed() {
	echo $((SECONDS - $1))
}

@test "-t fires: exit 124, timed_out=1" {
	t0=$SECONDS
	run -124 --separate-stderr "$SBX" --sandbox host -t 1 -- sleep 30
	[ "$(elapsed "$t0")" -lt 10 ]
	[ "$(kv timed_out)" = 1 ]
	[ "$(kv aborted)" = 0 ]
	[ -z "$(kv exit_code)" ]
	[ "$(kv signal)" = SIGTERM ]
	[ "$(kv duration_ms)" -ge 1000 ]
	! kv_has error
}

@test "--timeout long form and json" {
	run -124 --separate-stderr "$SBX" --sandbox host --timeout=500ms --format json -- sleep 30
	printf '%s' "$output" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["timed_out"] is True and r["exit_code"] is None, r
assert r["signal"] == "SIGTERM", r
'
}

@test "a command that ends before the timeout: its own status, timed_out=0" {
	run -3 --separate-stderr "$SBX" --sandbox host -t 30 -- sh -c 'exit 3'
	[ "$(kv timed_out)" = 0 ]
	[ "$(kv exit_code)" = 3 ]
}

@test "timeout: output before it is kept" {
	run -124 --separate-stderr "$SBX" --sandbox host -t 1 -- sh -c 'echo before; echo err >&2; exec sleep 30'
	[ "$(kv stdout)" = 'before\n' ]
	[ "$(kv stderr)" = 'err\n' ]
}

@test "timeout: SIGTERM first, then SIGKILL after the -k grace" {
	run -124 --separate-stderr "$SBX" --sandbox host -t 0.5 -k 1 -- bash -c '
		trap "echo term-seen" TERM
		while :; do sleep 0.1; done'
	[ "$(kv timed_out)" = 1 ]
	[ "$(kv signal)" = SIGKILL ]
	[[ "$(kv stdout)" == *term-seen* ]]
	# The grace was given: 0.5 s to the timeout, then 1 s.
	[ "$(kv duration_ms)" -ge 1400 ]
	[ "$(kv duration_ms)" -lt 10000 ]
}

@test "timeout: a command that exits on SIGTERM does not wait for the grace" {
	t0=$SECONDS
	run -124 --separate-stderr "$SBX" --sandbox host -t 0.5 -k 60 -- sleep 30
	[ "$(elapsed "$t0")" -lt 30 ]
	[ "$(kv signal)" = SIGTERM ]
}

@test "timeout: -k 0 kills at once" {
	t0=$SECONDS
	run -124 --separate-stderr timeout 60 "$SBX" --sandbox host -t 0.5 -k 0 -- bash -c '
		trap "" TERM
		while :; do sleep 0.1; done'
	[ "$(elapsed "$t0")" -lt 30 ]
	[ "$(kv timed_out)" = 1 ]
	[ "$(kv signal)" = SIGKILL ]
}

@test "timeout: -t 500ms" {
	run -124 --separate-stderr "$SBX" --sandbox host -t 500ms -- sleep 30
	[ "$(kv timed_out)" = 1 ]
	[ "$(kv duration_ms)" -ge 500 ]
	[ "$(kv duration_ms)" -lt 10000 ]
}

@test "timeout: -t 1.5 (fractional seconds)" {
	run -124 --separate-stderr "$SBX" --sandbox host -t 1.5 -- sleep 30
	[ "$(kv timed_out)" = 1 ]
	[ "$(kv duration_ms)" -ge 1500 ]
	[ "$(kv duration_ms)" -lt 10000 ]
}

@test "timeout: -t 0 is no limit" {
	run --separate-stderr "$SBX" --sandbox host -t 0 -- sleep 1.2
	[ "$status" -eq 0 ]
	[ "$(kv timed_out)" = 0 ]
	[ "$(kv exit_code)" = 0 ]
	[ "$(kv duration_ms)" -ge 1200 ]
}

@test "timeout: the last -t wins" {
	run --separate-stderr "$SBX" --sandbox host -t 0.2 -t 0 -- sleep 0.6
	[ "$status" -eq 0 ]
	[ "$(kv timed_out)" = 0 ]
}

@test "timeout kills the whole tree, background children too" {
	run -124 --separate-stderr "$SBX" --sandbox host -t 1 -- bash -c '
		sleep 300 & echo $! >>pids
		(sleep 300 & echo $! >>pids; wait) & echo $! >>pids
		echo $$ >>pids
		wait'
	[ "$(kv timed_out)" = 1 ]
	[ "$(wc -l <pids)" -eq 4 ]
	none_alive pids
}

@test "timeout: stopped processes still die" {
	run -124 --separate-stderr "$SBX" --sandbox host -t 1 -k 1 -- bash -c '
		sleep 300 & echo $! >>pids; kill -STOP $!
		bash -c "trap \"\" TERM; echo \$\$ >>pids; kill -STOP \$\$; sleep 300" &
		echo $$ >>pids
		wait'
	[ "$(kv timed_out)" = 1 ]
	[ "$(wc -l <pids)" -eq 3 ]
	none_alive pids
}

@test "timeout: the command itself stopped still dies" {
	run -124 --separate-stderr "$SBX" --sandbox host -t 1 -k 1 -- sh -c 'echo $$ >pids; kill -STOP $$; sleep 300'
	[ "$(kv timed_out)" = 1 ]
	none_alive pids
}

@test "the command exits: a background child holding the pipes gets at most ~2 s" {
	t0=$SECONDS
	run --separate-stderr "$SBX" --sandbox host -- sh -c 'sleep 300 & echo $! >pids; echo started'
	[ "$(elapsed "$t0")" -lt 6 ]
	[ "$status" -eq 0 ]
	[ "$(kv exit_code)" = 0 ]
	[ "$(kv timed_out)" = 0 ]
	[ "$(kv stdout)" = 'started\n' ]
	none_alive pids
}

@test "the holder's output within the 2 s is captured" {
	run --separate-stderr "$SBX" --sandbox host -- sh -c '(sleep 0.5; echo late; sleep 300) & echo $! >pids; echo early'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'early\nlate\n' ]
	none_alive pids
}

@test "a holder of stderr only is bounded too" {
	t0=$SECONDS
	run --separate-stderr "$SBX" --sandbox host -- sh -c 'sleep 300 >/dev/null & echo $! >pids'
	[ "$(elapsed "$t0")" -lt 6 ]
	[ "$status" -eq 0 ]
	none_alive pids
}

@test "the command exits: a background child without the pipes is killed at once" {
	t0=$SECONDS
	run --separate-stderr "$SBX" --sandbox host -- sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! >pids'
	[ "$(elapsed "$t0")" -lt 6 ]
	[ "$status" -eq 0 ]
	none_alive pids
}

@test "a background child that ignores SIGTERM is killed when the command ends" {
	run --separate-stderr "$SBX" --sandbox host -- bash -c '
		bash -c "trap \"\" TERM HUP; echo \$\$ >>pids; exec sleep 300" </dev/null >/dev/null 2>&1 &
		sleep 0.3'
	[ "$status" -eq 0 ]
	none_alive pids
}

@test "setsid escapee is killed when the command ends" {
	command -v setsid >/dev/null || sbx_skip "setsid is not installed"
	run --separate-stderr "$SBX" --sandbox host -- sh -c '
		setsid sh -c "echo \$\$ >>pids; exec sleep 300" </dev/null >/dev/null 2>&1 &
		while [ ! -s pids ]; do sleep 0.05; done'
	[ "$status" -eq 0 ]
	none_alive pids
}

@test "setsid escapee holding the pipes is killed, sbx returns" {
	command -v setsid >/dev/null || sbx_skip "setsid is not installed"
	t0=$SECONDS
	run --separate-stderr "$SBX" --sandbox host -- sh -c '
		setsid -f sh -c "echo \$\$ >>pids; exec sleep 300"
		while [ ! -s pids ]; do sleep 0.05; done'
	[ "$(elapsed "$t0")" -lt 6 ]
	[ "$status" -eq 0 ]
	none_alive pids
}

@test "double-fork escapee is killed when the command ends" {
	run --separate-stderr "$SBX" --sandbox host -- sh -c '
		(sh -c "echo \$\$ >>pids; exec sleep 300" </dev/null >/dev/null 2>&1 &)
		while [ ! -s pids ]; do sleep 0.05; done'
	[ "$status" -eq 0 ]
	none_alive pids
}

@test "double-fork + setsid daemon holding the pipes, ignoring TERM" {
	command -v setsid >/dev/null || sbx_skip "setsid is not installed"
	t0=$SECONDS
	run --separate-stderr "$SBX" --sandbox host -- sh -c '
		(setsid bash -c "trap \"\" TERM HUP; echo \$\$ >>pids; while :; do sleep 1; done" &)
		while [ ! -s pids ]; do sleep 0.05; done'
	[ "$(elapsed "$t0")" -lt 6 ]
	[ "$status" -eq 0 ]
	none_alive pids
}

@test "escapees are killed on timeout too" {
	command -v setsid >/dev/null || sbx_skip "setsid is not installed"
	run -124 --separate-stderr "$SBX" --sandbox host -t 1 -- sh -c '
		(setsid sh -c "echo \$\$ >>pids; exec sleep 300" </dev/null >/dev/null 2>&1 &)
		echo $$ >>pids
		sleep 300'
	[ "$(wc -l <pids)" -eq 2 ]
	none_alive pids
}

@test "a fork bomb-ish tree (many short-lived forks) is gone after timeout" {
	run -124 --separate-stderr "$SBX" --sandbox host -t 1 -k 0.5 -- bash -c '
		for i in 1 2 3 4 5 6 7 8; do
			(while :; do sleep 300 & echo $! >>pids; sleep 0.05; done) &
		done
		wait'
	[ "$(kv timed_out)" = 1 ]
	none_alive pids
}
