#!/usr/bin/env bats
# The executor contract: what every backend must do the same way. t/run runs
# this file once per executor (SBX_EXEC="--sandbox host", "--backend bwrap",
# "--backend landlock"); a backend that does not work here is skipped with
# the reason, or fails under SBX_MUST_WORK=1.

load helper
bats_require_minimum_version 1.5.0

setup() {
	case "$SBX_EXEC" in
	*bwrap*) require_bwrap; want=bwrap ;;
	*landlock*) require_landlock; want=landlock ;;
	*seatbelt*) want=seatbelt ;;
	*) want=host ;;
	esac
	ws="$BATS_TEST_TMPDIR/ws"
	mkdir -p "$ws"
	# A name no other process has: escapees are found by it afterwards.
	tag="sbxtag$$x$RANDOM$RANDOM"
}

teardown() {
	pkill -KILL -f "$tag" 2>/dev/null || true
}

sbx() {
	# shellcheck disable=SC2086
	"$SBX" $SBX_EXEC -C "$ws" "$@" 3>&-
}

# esc NAME: a shell snippet starting a sleeper tagged $tag that first leaves
# the file NAME in the workspace, so a test can prove it really ran.
esc() {
	printf "bash -c 'echo > %s; exec -a %s sleep 300'" "$1" "$tag"
}

# alive TAG: some process still has TAG on its command line.
alive() {
	pgrep -f "$1" >/dev/null 2>&1
}

@test "contract: output and exit code are the command's" {
	run --separate-stderr sbx -- sh -c 'echo out; echo err >&2; exit 7'
	[ "$status" -eq 7 ]
	[ "$(kv executor)" = "$want" ]
	[ "$(kv exit_code)" = 7 ]
	[ "$(kv stdout)" = 'out\n' ]
	[ "$(kv stderr)" = 'err\n' ]
	[ "$(kv stdout_bytes)" = 4 ]
	[ "$(kv signal)" = "" ]
	[ "$(kv timed_out)" = 0 ]
	[ "$(kv aborted)" = 0 ]
	if [ "$want" = host ]; then
		[ "$(kv isolation)" = none ]
	else
		[ "$(kv isolation)" = os ]
	fi
}

@test "contract: the working folder is the root" {
	run sbx -- pwd
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = "$(cd "$ws" && pwd -P)\\n" ]
}

@test "contract: the root is writable" {
	run sbx -- sh -c 'echo data > made.txt'
	[ "$status" -eq 0 ]
	[ "$(cat "$ws/made.txt")" = data ]
}

@test "contract: only the allowlisted environment reaches the command" {
	export SBX_T_SECRET=hunter2 LC_CTYPE=C.UTF-8 TZ=UTC
	run sbx -e SBX_T_PASSED -e SBX_T_SET=v -- env
	[ "$status" -eq 0 ]
	out=$(kv stdout)
	[[ "$out" != *SBX_T_SECRET* ]]
	[[ "$out" == *'SBX_T_SET=v'* ]]
	[[ "$out" == *'PATH='* ]]
	[[ "$out" == *'LC_CTYPE=C.UTF-8'* ]]
	[[ "$out" == *'TZ=UTC'* ]]
	[[ "$out" != *SBX_T_PASSED* ]]
	SBX_T_PASSED=yes run sbx -e SBX_T_PASSED -- env
	[[ "$(kv stdout)" == *'SBX_T_PASSED=yes'* ]]
}

@test "contract: standard input is the command's" {
	run sbx -- sh -c 'read -r line; echo "got $line"' <<<"hello"
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'got hello\n' ]
}

@test "contract: the output cap keeps head and tail, counts every byte" {
	run sbx -m 1K -- sh -c 'printf "%05000d" 0; printf END'
	[ "$status" -eq 0 ]
	[ "$(kv stdout_bytes)" = 5003 ]
	[ "$(kv stdout_truncated)" = 1 ]
	[[ "$(kv stdout)" == 00000* ]]
	[[ "$(kv stdout)" == *'\n[sbx: 3979 bytes cut]\n'*END ]]
}

@test "contract: not found is 127 and never started" {
	run -127 --separate-stderr sbx -- sbx-no-such-command
	[ "$status" -eq 127 ]
	[ "$(kv exit_code)" = "" ]
	[ "$(kv error)" = not_found ]
	[[ "$stderr" =~ ^sbx:\  ]]
}

@test "contract: a command that exits 127 itself is not 'not found'" {
	run -127 sbx -- sh -c 'exit 127'
	[ "$status" -eq 127 ]
	[ "$(kv exit_code)" = 127 ]
	! kv_has error
}

@test "contract: not executable is 126" {
	printf 'data\n' >"$ws/plain"
	chmod 644 "$ws/plain"
	run sbx -- ./plain
	[ "$status" -eq 126 ]
	[ "$(kv exit_code)" = "" ]
	[ "$(kv error)" = not_executable ]
}

@test "contract: death by signal is 128+N with the signal's name" {
	run sbx -- sh -c 'kill -KILL $$'
	[ "$status" -eq 137 ]
	[ "$(kv signal)" = SIGKILL ]
	[ "$(kv exit_code)" = "" ]
}

@test "contract: timeout stops the command: 124, timed_out=1" {
	run sbx -t 300ms -- sleep 30
	[ "$status" -eq 124 ]
	[ "$(kv timed_out)" = 1 ]
	[ "$(kv signal)" = SIGTERM ]
}

@test "contract: timeout escalates to SIGKILL after the grace" {
	run sbx -t 1s -k 300ms -- sh -c 'trap "" TERM; while :; do sleep 0.05; done'
	[ "$status" -eq 124 ]
	[ "$(kv timed_out)" = 1 ]
	[ "$(kv signal)" = SIGKILL ]
}

@test "contract: the whole tree dies on timeout, also setsid escapees" {
	run sbx -t 2s -- sh -c "setsid $(esc e1) & $(esc e2) & sleep 300"
	[ "$status" -eq 124 ]
	[ -e "$ws/e1" ] && [ -e "$ws/e2" ]
	sleep 0.2
	! alive "$tag"
}

@test "contract: leftovers die when the command's own process exits" {
	run sbx -- sh -c "setsid $(esc e1) </dev/null >/dev/null 2>&1 & ($(esc e2) </dev/null >/dev/null 2>&1 &); while [ ! -e e1 ] || [ ! -e e2 ]; do sleep 0.05; done; echo done"
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'done\n' ]
	sleep 0.2
	! alive "$tag"
}

@test "contract: a background child holding the pipes holds sbx at most ~2s" {
	start=$(date +%s)
	run sbx -- sh -c "$(esc e1) & while [ ! -e e1 ]; do sleep 0.05; done; echo started"
	end=$(date +%s)
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'started\n' ]
	[ $((end - start)) -lt 8 ]
	sleep 0.2
	! alive "$tag"
}

@test "contract: SIGTERM to sbx aborts: 128+15, aborted=1, tree killed" {
	out="$BATS_TEST_TMPDIR/result"
	# shellcheck disable=SC2086
	"$SBX" $SBX_EXEC -C "$ws" -- sh -c "$(esc e1) & echo up > up; wait" >"$out" 3>&- &
	pid=$!
	for _ in $(seq 100); do [ -e "$ws/up" ] && [ -e "$ws/e1" ] && break; sleep 0.05; done
	[ -e "$ws/up" ] && [ -e "$ws/e1" ]
	kill -TERM "$pid"
	rc=0; wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	output=$(cat "$out")
	[ "$(kv aborted)" = 1 ]
	[ -e "$ws/e1" ]
	sleep 0.2
	! alive "$tag"
}

@test "contract: SIGKILL to sbx leaves nothing running, setsid and double-fork included" {
	# An unrelated process of the same user: it must survive.
	( exec -a "other$tag" sleep 300 </dev/null >/dev/null 2>&1 3>&- & echo $! >"$BATS_TEST_TMPDIR/other.pid" )
	cat >"$ws/tree.sh" <<EOF
setsid sh -c "$(esc e1) & ( $(esc e2) & ) ; sleep 300" &
( $(esc e3) & )
echo up >up
wait
EOF
	# shellcheck disable=SC2086
	"$SBX" $SBX_EXEC -C "$ws" --passthrough -- sh tree.sh >/dev/null 2>&1 3>&- &
	pid=$!
	for _ in $(seq 100); do
		[ -e "$ws/up" ] && [ -e "$ws/e1" ] && [ -e "$ws/e2" ] &&
		    [ -e "$ws/e3" ] && break
		sleep 0.05
	done
	[ -e "$ws/e1" ] && [ -e "$ws/e2" ] && [ -e "$ws/e3" ]
	[ "$(pgrep -fc "^$tag")" -ge 3 ]
	kill -KILL "$pid"
	wait "$pid" || true
	# Within the kill grace (2 s by default), the whole tree is gone.
	for _ in $(seq 20); do alive "^$tag" || break; sleep 0.1; done
	# (bats: a "!" line that is not the last one fails nothing.)
	if alive "^$tag"; then pgrep -fa "^$tag" >&2; return 1; fi
	kill -0 "$(cat "$BATS_TEST_TMPDIR/other.pid")"
	kill -KILL "$(cat "$BATS_TEST_TMPDIR/other.pid")"
}

@test "contract: SIGINT and SIGHUP to sbx abort with 128+N" {
	for sig in INT HUP; do
		# shellcheck disable=SC2086
		"$SBX" $SBX_EXEC -C "$ws" -- sh -c 'echo up > up; sleep 300' >/dev/null 3>&- &
		pid=$!
		for _ in $(seq 100); do [ -e "$ws/up" ] && break; sleep 0.05; done
		rm -f "$ws/up"
		kill -"$sig" "$pid"
		rc=0; wait "$pid" || rc=$?
		[ "$rc" -eq $((128 + $(kill -l "$sig"))) ]
	done
}

@test "contract: output written just before exit is not lost" {
	run sbx -- sh -c 'head -c 300000 /dev/zero | tr "\0" a; exit 3'
	[ "$status" -eq 3 ]
	[ "$(kv stdout_bytes)" = 300000 ]
}

@test "contract: only fds 0-2 reach the command" {
	run sbx -- sh -c 'ls /proc/self/fd' 5</dev/null
	[ "$status" -eq 0 ]
	# 0 1 2 and the fd ls uses to read the folder (3)
	fds=$(kv stdout | sed 's/\\n/ /g')
	[ "$fds" = "0 1 2 3 " ]
}
