#!/usr/bin/env bats
# A terminal of sbx's own (--tty; the default with --passthrough on a
# terminal), driven through a real pseudo-terminal by t/term.py, as a user
# would: Ctrl-C into a Python loop, Ctrl-Z and fg from an interactive
# shell, a window-size change, the user's terminal modes after a normal
# end, a timeout, SIGTERM and an error, and TIOCSTI that cannot reach the
# user's terminal. On every executor that works here (host, bwrap,
# landlock); t/run runs it as root and as nobody.

load helper
bats_require_minimum_version 1.5.0

setup() {
	ws="$BATS_TEST_TMPDIR/ws"
	mkdir -p "$ws"
	pids=()
	require_cmd python3
	execs=("--sandbox host")
	if "$SBX" --probe 2>/dev/null | grep -q '^bwrap=ok'; then
		execs+=("--backend bwrap")
	fi
	if "$SBX" --probe 2>/dev/null | grep -q '^landlock=ok'; then
		execs+=("--backend landlock")
	fi
	term=("python3" "$BATS_TEST_DIRNAME/term.py")
	# the interpreter itself: a wrapper script (pyenv) is slow to start
	py=$(python3 -c 'import sys; print(sys.executable)')
}

teardown() {
	kill_bg
}

# drive EXEC STEP... -- SBX-ARGS...: sbx on EXEC at a terminal, driven.
drive() {
	local ex=$1
	shift
	local steps=()
	while [ "$1" != -- ]; do
		steps+=("$1")
		shift
	done
	shift
	# shellcheck disable=SC2086
	run "${term[@]}" "${steps[@]}" -- "$SBX" $ex -C "$ws" "$@" 3>&-
	echo "$ex: status=$status"
	echo "$output"
}

# in_shell STEP...: an interactive shell with job control at a terminal.
in_shell() {
	run "${term[@]}" expect:'\$ ' "$@" -- env PS1='$ ' \
	    bash --norc --noprofile --noediting -i 3>&-
	echo "status=$status"
	echo "$output"
}

@test "tty: Ctrl-C interrupts a loop in a Python REPL, which carries on" {
	for ex in "${execs[@]}"; do
		drive "$ex" expect:'>>> ' send:'import time\r' expect:'>>> ' \
		    send:'while True: time.sleep(0.05)\r' send:'\r' sleep:0.5 \
		    send:'\x03' expect:KeyboardInterrupt expect:'>>> ' \
		    send:'print(6 * 7)\r' expect:'42\r\n' send:'exit()\r' wait:0 \
		    -- --passthrough -- "$py" -i -q
		[ "$status" -eq 0 ]
	done
}

@test "tty: Ctrl-Z stops the command and sbx with it; fg continues both" {
	for ex in "${execs[@]}"; do
		# shellcheck disable=SC2086
		in_shell send:"$SBX $ex -C $ws --passthrough -- $py -i -q\\r" \
		    expect:'>>> ' mode:raw send:'\x1a' expect:'Stopped' \
		    mode:cooked send:'jobs\r' expect:'Stopped' send:'fg\r' \
		    sleep:0.5 mode:raw send:'print(6 * 7)\r' expect:'42\r\n' \
		    send:'exit()\r' expect:'\$ ' mode:cooked send:'echo st=$?\r' \
		    expect:'st=0' send:'exit\r' wait:0
		[ "$status" -eq 0 ]
	done
}

@test "tty: a window-size change reaches the command" {
	for ex in "${execs[@]}"; do
		drive "$ex" expect:'^24 80' expect:ready size:33,101 \
		    expect:'33 101' send:'\x03' wait:130 -- --passthrough -- \
		    sh -c 'stty size; trap "stty size" WINCH; echo ready
		    while :; do sleep 0.1; done'
		[ "$status" -eq 0 ]
	done
}

@test "tty: the command leads its own foreground process group on the terminal" {
	for ex in "${execs[@]}"; do
		drive "$ex" expect:'pgid=([0-9]+) tpgid=\1 ' expect:'dev-tty=ok' \
		    wait:0 -- --passthrough -- sh -c '
		    set -- $(ps -o pgid=,tpgid= -p $$)
		    echo "pgid=$1 tpgid=$2 "
		    if { true </dev/tty; } 2>/dev/null; then echo dev-tty=ok; fi'
		[ "$status" -eq 0 ]
	done
}

@test "tty: the user's terminal is raw for the run and as found after it" {
	for ex in "${execs[@]}"; do
		drive "$ex" expect:'>>> ' mode:raw send:'exit()\r' wait:0 \
		    mode:same -- --passthrough -- "$py" -i -q
		[ "$status" -eq 0 ]
	done
}

@test "tty: the terminal is restored after a timeout" {
	for ex in "${execs[@]}"; do
		drive "$ex" expect:'>>> ' mode:raw wait:124 mode:same -- \
		    -t 3 --passthrough -- "$py" -i -q
		[ "$status" -eq 0 ]
	done
}

@test "tty: the terminal is restored after SIGTERM to sbx" {
	for ex in "${execs[@]}"; do
		drive "$ex" expect:'>>> ' mode:raw kill:SIGTERM wait:143 \
		    mode:same -- --passthrough -- "$py" -i -q
		[ "$status" -eq 0 ]
	done
}

@test "tty: the terminal is restored when sbx fails (command not found)" {
	for ex in "${execs[@]}"; do
		drive "$ex" expect:'command not found' wait:127 mode:same -- \
		    --passthrough -- no-such-command-here
		[ "$status" -eq 0 ]
	done
}

@test "tty: TIOCSTI reaches only the command's own terminal, never the user's" {
	# In the workspace: the private /tmp hides bats' scratch folder.
	cat >"$ws/inject.py" <<'EOF'
import fcntl, sys, termios
try:
    for c in sys.argv[1] + "\n":
        fcntl.ioctl(0, termios.TIOCSTI, c.encode())
except OSError as e:
    print("refused", e.errno)
    sys.exit(0)
print("inner got:", input())
EOF
	for ex in "${execs[@]}"; do
		rm -f "$BATS_TEST_TMPDIR/outer"
		# shellcheck disable=SC2086
		in_shell send:"$SBX $ex -C $ws --passthrough -- $py $ws/inject.py 'touch $BATS_TEST_TMPDIR/outer'\\r" \
		    expect:'(refused 1|inner got: touch)' expect:'\$ ' \
		    send:'echo after=$?\r' expect:'after=0' send:'exit\r' wait:0
		[ "$status" -eq 0 ]
		sleep 0.2
		[ ! -e "$BATS_TEST_TMPDIR/outer" ]
		# the filter refuses it in the sandboxes
		if [ "$ex" != "--sandbox host" ]; then
			[[ "$output" == *"refused 1"* ]]
		fi
	done
}

@test "tty: Ctrl-C into a command at the prompt of a shell run by sbx" {
	for ex in "${execs[@]}"; do
		drive "$ex" expect:'\$ ' send:'sleep 30\r' sleep:0.5 \
		    send:'\x03' expect:'\$ ' send:'echo alive\r' \
		    expect:'alive\r\n' send:'exit\r' wait:0 -- --passthrough -- \
		    env PS1='$ ' bash --norc --noprofile --noediting -i
		[ "$status" -eq 0 ]
	done
}

@test "tty: a full-screen program (less) runs and quits" {
	require_cmd less
	seq 1 500 >"$ws/lines"
	# CI runs with no TERM: less then stops to say the terminal is not
	# fully functional. The pty sbx gives it is an xterm's.
	export TERM=xterm
	for ex in "${execs[@]}"; do
		drive "$ex" expect:'\x1b\[\?1049h' expect:'\r\n23\r\n' \
		    send:' ' expect:'\r\n45' send:'q' wait:0 mode:same -- \
		    --passthrough -- less "$ws/lines"
		[ "$status" -eq 0 ]
	done
}

@test "tty: --tty in capture mode: the command sees a terminal, stdout holds what it wrote" {
	for ex in "${execs[@]}"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$SBX" $ex -C "$ws" --tty -- sh -c '
		    test -t 0 && test -t 1 && test -t 2 && echo tty
		    echo err >&2; stty size' </dev/null 3>&-
		echo "$ex: $output"
		[ "$status" -eq 0 ]
		[ "$(kv stdout)" = 'tty\r\nerr\r\n24 80\r\n' ]
		[ "$(kv stderr)" = '' ]
	done
}

@test "tty: a standard input that is not a terminal goes in, and its end is an EOF" {
	for ex in "${execs[@]}"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$SBX" $ex -C "$ws" --tty -- sh -c \
		    'while read -r l; do echo "got $l"; done; echo end' \
		    < <(printf 'a\nb\n') 3>&-
		echo "$ex: $output"
		[ "$status" -eq 0 ]
		[[ "$(kv stdout)" == *'got a\r\n'*'got b\r\nend\r\n' ]]
	done
}

@test "tty: --passthrough keeps a standard error that is not a terminal apart" {
	err="$BATS_TEST_TMPDIR/err"
	for ex in "${execs[@]}"; do
		rm -f "$err"
		# shellcheck disable=SC2086
		run "${term[@]}" expect:'out-here' wait:0 -- sh -c \
		    'f=$1; shift; exec "$@" 2>"$f"' sh "$err" "$SBX" $ex -C "$ws" \
		    --passthrough -- sh -c \
		    "echo out-here; echo err-here >&2; test -t 2 || echo not-a-tty >&2" \
		    3>&-
		echo "$ex: $output"
		[ "$status" -eq 0 ]
		[[ "$output" != *err-here* ]]
		grep -q err-here "$err"
		grep -q not-a-tty "$err"
	done
}

@test "tty: --no-tty at a terminal: no controlling terminal, the user's modes untouched" {
	for ex in "${execs[@]}"; do
		drive "$ex" expect:'no-tty' wait:0 mode:same -- --passthrough \
		    --no-tty -- sh -c \
		    'if { true </dev/tty; } 2>/dev/null; then echo has-tty; else echo no-tty; fi'
		[ "$status" -eq 0 ]
	done
}

@test "tty: a background process holding the terminal gets the drain window, no more" {
	for ex in "${execs[@]}"; do
		t0=$SECONDS
		# shellcheck disable=SC2086
		run --separate-stderr "$SBX" $ex -C "$ws" --tty -- sh -c \
		    'sleep 60 & echo "$!" >"$1/pid"; echo started' sh "$ws" \
		    </dev/null 3>&-
		[ "$status" -eq 0 ]
		[ $((SECONDS - t0)) -lt 10 ]
		[[ "$(kv stdout)" == *started* ]]
	done
}

@test "tty: --tty and --no-tty together are a usage error" {
	run --separate-stderr "$SBX" --sandbox host --tty --no-tty -- true
	[ "$status" -eq 125 ]
	[[ "$stderr" =~ ^sbx:\ --tty\ and\ --no-tty ]]
}
