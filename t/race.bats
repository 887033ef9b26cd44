#!/usr/bin/env bats
# A folder swapped while sbx starts, and a link planted by an earlier run,
# on both Linux backends, as root and as nobody (t/run). sbx checks each
# path once and must grant exactly what it checked: the racer (t/race.py)
# exchanges a folder named on the command line with a symbolic link to a
# folder outside, in a loop, while sbx runs again and again; no write may
# land outside. On the binary before the fix (/tmp/old-sbx) the same loop
# hits within a second or two; here it runs a few seconds and must show 0.

load helper
bats_require_minimum_version 1.5.0

setup() {
	require_cmd python3
	top=$(cd "$BATS_TEST_TMPDIR" && pwd -P)
	ws="$top/ws"
	victim="$top/victim"
	mkdir -p "$ws" "$victim"
}

# race BACKEND MODE: the racer's line for a few seconds; 0 hits, and sbx
# really ran in between (a run that refuses every time proves nothing).
race() {
	local line
	line=$(RACE_DIR="$top" python3 "$BATS_TEST_DIRNAME/race.py" "$SBX" \
	    "$1" "$2" "${RACE_SECONDS:-3}")
	echo "$1 $2: $line" >&3
	[[ "$line" == *" hits=0 "* ]] || { echo "$line" >&2; return 1; }
	[[ "$line" =~ runs=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 5 ]
}

@test "race: bwrap: a folder named by -w, --scope or --deny-write, or a denied path's folder, swapped for a link while sbx starts" {
	require_bwrap
	race bwrap write
	race bwrap scope
	race bwrap deny
	race bwrap parent
}

@test "race: landlock: a folder named by -w, --scope or --deny-write, or a denied path's folder, swapped for a link while sbx starts" {
	require_landlock
	race landlock write
	race landlock scope
	race landlock deny
	race landlock parent
}

@test "race: without openat2 (a kernel before 5.6), the walk one component at a time holds the same on both backends" {
	local b=()
	"$SBX" --probe 2>/dev/null | grep -q '^bwrap=ok' && b+=(bwrap)
	"$SBX" --probe 2>/dev/null | grep -q '^landlock=ok' && b+=(landlock)
	[ "${#b[@]}" -gt 0 ] || sbx_skip "no Linux sandbox backend works here"
	for x in "${b[@]}"; do
		RACE_NO_OPENAT2=1 race "$x" write
		RACE_NO_OPENAT2=1 race "$x" deny
	done
}

# planted BACKEND: ws/sub is a link to ../victim, as an earlier run could
# leave it; naming it is refused with the target in the message, nothing
# runs; naming the target itself works (the positive control).
planted() {
	local b=$1
	ln -s ../victim "$ws/sub"
	cd "$ws" || return 1
	for form in "-w sub" "--scope sub" "--deny-write sub" "-C sub -w ."; do
		# shellcheck disable=SC2086
		run --separate-stderr "$SBX" --backend "$b" $form -- \
		    sh -c 'echo x > "$1/ran"; echo x > sub/f' sh "$top"
		[ "$status" -eq 125 ] || { echo "$form: $status" >&2; return 1; }
		[ "$(kv error)" = path ]
		[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
		[[ "$stderr" == "sbx: "*"$ws/sub is a symbolic link"*"name it: "*" $victim" ]] ||
		    { echo "$form: $stderr" >&2; return 1; }
		[ ! -e "$top/ran" ] && [ ! -e "$victim/f" ]
	done
	run --separate-stderr "$SBX" --backend "$b" -w "$victim" -- \
	    sh -c 'echo x > sub/f'
	[ "$status" -eq 0 ]
	[ "$(kv executor)" = "$b" ]
	[ "$(cat "$victim/f")" = x ]
	# A link outside every writable folder is followed, as before.
	ln -s "$victim" "$top/outside"
	cd "$top" || return 1
	run --separate-stderr "$SBX" --backend "$b" -C "$ws" -w outside -- \
	    sh -c 'echo y > sub/g'
	[ "$status" -eq 0 ]
	[ "$(cat "$victim/g")" = y ]
}

@test "planted link: bwrap: -w, --scope, -C and --deny-write through a link in a writable folder are refused; the target by name works" {
	require_bwrap
	planted bwrap
}

@test "planted link: landlock: -w, --scope, -C and --deny-write through a link in a writable folder are refused; the target by name works" {
	require_landlock
	planted landlock
}

# killed_early FLAG: sbx SIGKILLed 0-8 ms after it starts, 60 times, while
# the launch is under way (the keeper's fork, the filter's listener on its
# way to sbx, bwrap's start); 3 s later no process of those runs is left.
# The command sleeps 2.TAG s, so a survivor is a process that outlived
# its sbx.
killed_early() {
	local tag=$$$RANDOM i p left
	cd "$ws" || return 1
	for i in $(seq 60); do
		"$SBX" $1 -- sleep "2.$tag" >/dev/null 2>&1 3>&- &
		p=$!
		sleep "0.00$((RANDOM % 9))"
		kill -9 "$p"
		wait "$p" 2>/dev/null || true
	done
	sleep 3
	left= stuck=
	for p in $(pgrep -f "sleep 2\.$tag\$" || true); do
		# bwrap's own child, killed with its parent before it set its
		# death signal, waits for good on the parent's word (see the
		# man page's CAVEATS): nothing of sbx's or the command's runs.
		case $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) in
		*bwrap\ --args\ *) stuck="$stuck $p" ;;
		*) left="$left $p" ;;
		esac
	done
	echo "$1: left:${left:- none} bwrap's own:${stuck:- none}" >&3
	# shellcheck disable=SC2086
	[ -z "$stuck" ] || kill -9 $stuck
	# shellcheck disable=SC2086
	[ -z "$left" ] || { kill -9 $left; return 1; }
}

@test "race: sbx SIGKILLed while it launches leaves no process of the run, on every backend" {
	killed_early "--sandbox host"
	"$SBX" --probe 2>/dev/null | grep -q '^bwrap=ok' && killed_early "--backend bwrap"
	"$SBX" --probe 2>/dev/null | grep -q '^landlock=ok' && killed_early "--backend landlock"
	true
}
