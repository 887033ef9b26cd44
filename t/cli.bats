#!/usr/bin/env bats
# The command line: where options end, -c, --help, --version, every kind of
# bad input (one "sbx: " line, exit 125, nothing run), hostile paths, the
# environment allowlist, --dry-run, --result, --passthrough, --format json.
# Core behaviour, so everything runs with --sandbox host.

load helper
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	MARK="$BATS_TEST_TMPDIR/marker"
	rm -f "$MARK"
}


# bad_input ARGS...: sbx refuses ARGS with exactly one "sbx: " line on
# stderr and exit 125, and the command (which would create $MARK) never runs.
bad_input() {
	run --separate-stderr "$SBX" --sandbox host "$@" 3>&-
	[ "$status" -eq 125 ] || {
		echo "status $status for: $*" >&2
		echo "stdout: $output" >&2
		echo "stderr: $stderr" >&2
		return 1
	}
	[[ "$stderr" =~ ^sbx:\ [^$'\n']+$ ]] || {
		echo "stderr is not one 'sbx: ' line for: $*" >&2
		printf 'stderr: <%s>\n' "$stderr" >&2
		return 1
	}
	[ ! -e "$MARK" ] || {
		echo "the command ran for: $*" >&2
		return 1
	}
}

# --- where options end ---------------------------------------------------

@test "options end at the first non-option word" {
	mkdir d && touch d/f
	run --separate-stderr "$SBX" --sandbox host ls -la d
	[ "$status" -eq 0 ]
	[ "$(kv exit_code)" = 0 ]
	# -la reached ls, not sbx: the long listing shows permissions.
	[[ "$(kvdec stdout)" == *"-rw"*" f"* ]]
	[[ "$(kvdec stdout)" == *" . "* || "$(kvdec stdout)" == *" ."$'\n'* ]]
}

@test "options after the command are the command's" {
	run --separate-stderr "$SBX" --sandbox host echo --timeout 5 -m 1 --help
	[ "$status" -eq 0 ]
	[ "$(kvdec stdout)" = "--timeout 5 -m 1 --help" ]
}

@test "-- ends the options" {
	run --separate-stderr "$SBX" --sandbox host -- echo -t 1
	[ "$status" -eq 0 ]
	[ "$(kvdec stdout)" = "-t 1" ]
}

@test "a command named like an option after -- is run" {
	mkdir bin
	printf '#!/bin/sh\necho ran "$@"\n' >bin/--help
	chmod +x bin/--help
	run --separate-stderr "$SBX" --sandbox host -- ./bin/--help x
	[ "$status" -eq 0 ]
	[ "$(kvdec stdout)" = "ran x" ]
}

@test "-c SCRIPT runs bash -c SCRIPT" {
	run --separate-stderr "$SBX" --sandbox host -c 'echo "$BASH_VERSION" | grep -q . && echo bash; echo "$((2 + 3))"'
	[ "$status" -eq 0 ]
	[ "$(kvdec stdout)" = $'bash\n5' ]
}

@test "-c SCRIPT with extra words: they are \$0 \$1 ..." {
	run --separate-stderr "$SBX" --sandbox host -c 'printf "<%s>" "$0" "$1" "$2" "$#"' zero one 'two words'
	[ "$status" -eq 0 ]
	[ "$(kvdec stdout)" = "<zero><one><two words><2>" ]
}

@test "-c SCRIPT: the script's exit status is sbx's" {
	run --separate-stderr "$SBX" --sandbox host -c 'exit 7'
	[ "$status" -eq 7 ]
	[ "$(kv exit_code)" = 7 ]
}

# --- --help, --version ----------------------------------------------------

@test "--help lists every option and exits 0" {
	run --separate-stderr "$SBX" --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	for o in -C --root -w --write --deny-write --deny-read --scope \
	    --no-net --net --allow-host --allow-private -e --env -t --timeout \
	    -k --kill-after -m --max-output --sandbox --backend --dry-run \
	    --probe --passthrough --result --format -c -h --help -V --version; do
		grep -qe "$o\\b" <<<"$output" || {
			echo "--help does not mention $o" >&2
			return 1
		}
	done
}

@test "--help mentions every long option sbx accepts" {
	src="$BATS_TEST_DIRNAME/../sbx.c"
	[ -f "$src" ] || sbx_skip "sbx.c not beside the tests"
	run --separate-stderr "$SBX" --help
	[ "$status" -eq 0 ]
	opts=$(sed -n '/longopts\[\] = {/,/^};/s/^[[:space:]]*{ "\([a-z-]*\)",.*/\1/p' "$src")
	[ -n "$opts" ]
	for o in $opts; do
		grep -qe "--$o\\b" <<<"$output" || {
			echo "--help does not mention --$o" >&2
			return 1
		}
	done
}

@test "-h is --help" {
	run --separate-stderr "$SBX" -h
	[ "$status" -eq 0 ]
	[[ "$output" == *usage:* ]]
}

@test "--help runs nothing" {
	run --separate-stderr "$SBX" --sandbox host --help touch "$MARK"
	[ "$status" -eq 0 ]
	[ ! -e "$MARK" ]
}

@test "--version prints the version and exits 0" {
	run --separate-stderr "$SBX" --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^sbx\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	run --separate-stderr "$SBX" -V
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^sbx\ [0-9]+\.[0-9]+ ]]
}

# --- bad input: one line, 125, nothing run --------------------------------

@test "bad input: unknown options" {
	bad_input --bogus touch "$MARK"
	bad_input -Z touch "$MARK"
	bad_input --help=x touch "$MARK"
	bad_input --net=1 touch "$MARK"
}

@test "bad input: missing argument" {
	failed=
	for o in -t --timeout -k --kill-after -m --max-output -C --root -w \
	    --write --deny-write --deny-read --scope -e --env --sandbox \
	    --backend --result --format --allow-host -c; do
		bad_input "$o" || failed="$failed $o"
	done
	[ -z "$failed" ] || { echo "failed for:$failed" >&2; return 1; }
}

@test "bad input: an option swallowing the command as its argument" {
	# -t takes "touch" as its duration: a bad duration, not a run.
	bad_input -t touch "$MARK"
	bad_input -m touch "$MARK"
}

@test "bad input: bad durations" {
	for d in -1 1x "" abc 1.5.5 99999999999h ' 1' '1 ' 1s5 5mss +1 0x10 \
	    . 1e3 31d 721h 1..2 '1;touch x'; do
		bad_input -t "$d" touch "$MARK"
		bad_input --kill-after="$d" touch "$MARK"
	done
}

@test "bad input: durations past 30 days" {
	bad_input -t 2592001 touch "$MARK"
	bad_input -t 43201m touch "$MARK"
	bad_input -t 99999999999999999999999 touch "$MARK"
}

@test "good durations are accepted" {
	run --separate-stderr "$SBX" --sandbox host -k 0.001 true
	[ "$status" -eq 0 ]
	for d in 0 1 1.5 .5 500ms 30s 2m 1h 2592000 720h; do
		run --separate-stderr "$SBX" --sandbox host -t "$d" -k "$d" true
		[ "$status" -eq 0 ] || { echo "-t $d: $status $stderr" >&2; return 1; }
	done
}

@test "bad input: bad sizes" {
	for s in -1 "" abc 1.5M 1X 1KK 1MG ' 1' 65G 99999999999999999999 \
	    1T 0x10 1e6 'M' 1k5; do
		bad_input -m "$s" touch "$MARK"
		bad_input --max-output="$s" touch "$MARK"
	done
}

@test "good sizes are accepted" {
	for s in 0 1 100 1K 1k 1M 2m 1G 64G 512KB; do
		run --separate-stderr "$SBX" --sandbox host -m "$s" true
		[ "$status" -eq 0 ] || { echo "-m $s: $status $stderr" >&2; return 1; }
	done
}

@test "bad input: --sandbox, --backend, --format bogus" {
	bad_input --sandbox bogus touch "$MARK"
	bad_input --sandbox '' touch "$MARK"
	bad_input --sandbox HOST touch "$MARK"
	bad_input --backend bogus touch "$MARK"
	bad_input --backend '' touch "$MARK"
	bad_input --format bogus touch "$MARK"
	bad_input --format JSON touch "$MARK"
	bad_input --format '' touch "$MARK"
}

@test "bad input: --root missing, a file, empty" {
	touch afile
	bad_input --root "$BATS_TEST_TMPDIR/nope" touch "$MARK"
	bad_input -C afile touch "$MARK"
	bad_input --root '' touch "$MARK"
	[[ "$stderr" == *root* ]]
}

@test "bad input: missing --root names the path and writes error=path" {
	run --separate-stderr "$SBX" --sandbox host --root /nonexistent/x touch "$MARK"
	[ "$status" -eq 125 ]
	[[ "$stderr" =~ ^sbx:\ .*/nonexistent/x ]]
	[ ! -e "$MARK" ]
	# Where a result is written at all, it says why.
	if [ -n "$output" ]; then
		[ "$(kv error)" = path ]
		[ -z "$(kv exit_code)" ]
	fi
}

@test "bad input: missing --write, --scope paths" {
	for o in --write -w --scope; do
		bad_input "$o" "$BATS_TEST_TMPDIR/nope" touch "$MARK"
		[[ "$stderr" == *"$o"* && "$stderr" == *nope* ]]
		bad_input "$o" '' touch "$MARK"
	done
}

@test "bad input: --result into a missing folder" {
	bad_input --result "$BATS_TEST_TMPDIR/nodir/res" touch "$MARK"
	[[ "$stderr" == *nodir/res* ]]
	[ ! -e "$BATS_TEST_TMPDIR/nodir" ]
}

@test "bad input: --result into a folder or an unwritable file" {
	mkdir adir
	bad_input --result adir touch "$MARK"
	if ! is_root; then
		touch ro && chmod 444 ro
		bad_input --result ro touch "$MARK"
	fi
}

# closed_out CMD...: CMD with its standard output closed.
closed_out() {
	"$@" >&- 3>&-
}

@test "bad input: a closed standard output, where the result would go, runs nothing" {
	for ex in "--sandbox host" "--backend bwrap" "--backend landlock"; do
		[ "$ex" = "--sandbox host" ] ||
		    "$SBX" --probe 2>/dev/null | grep -q "^${ex#--backend }=ok" ||
		    { echo "# ${ex#--backend } is unavailable here" >&3; continue; }
		run --separate-stderr closed_out "$SBX" $ex -- touch "$MARK"
		[ "$status" -eq 125 ]
		[ "$stderr" = "sbx: standard output is closed: the result has nowhere to go (--result FILE writes it to a file)" ]
		[ ! -e "$MARK" ]
		# Positive controls: the result in a file; --passthrough.
		run --separate-stderr closed_out "$SBX" $ex --result "$BATS_TEST_TMPDIR/res" -- touch "$MARK"
		[ "$status" -eq 0 ]
		[ -e "$MARK" ] && rm "$MARK"
		grep -qx 'exit_code=0' "$BATS_TEST_TMPDIR/res"
		run --separate-stderr closed_out "$SBX" $ex --passthrough -- touch "$MARK"
		[ "$status" -eq 0 ]
		[ -e "$MARK" ] && rm "$MARK"
	done
}

@test "bad input: no command, empty command" {
	bad_input
	bad_input --
	bad_input -t 5 --
	bad_input ''
	bad_input -- ''
	run --separate-stderr "$SBX" --sandbox host
	[[ "$stderr" == *command* ]]
}

@test "bad input: --net with --allow-host, --net with --no-net" {
	bad_input --net --allow-host example.com touch "$MARK"
	bad_input --allow-host example.com --net touch "$MARK"
	bad_input --net --no-net touch "$MARK"
	bad_input --no-net --allow-host example.com touch "$MARK"
}

@test "bad input: --allow-host with an IP literal" {
	for h in 1.2.3.4 10.0.0.1:443 0x7f000001 2130706433 127.1 \
	    127.0.0.2:80 '[::2]:80' '[0::1]:80' '*.1.2.3' 1.2.3.4. 1::2; do
		bad_input --allow-host "$h" touch "$MARK"
	done
}

@test "bad input: --allow-host with a bad port" {
	for h in example.com:0 example.com:65536 example.com:99999 \
	    example.com: example.com:abc example.com:-1 example.com:80x \
	    example.com:1:2 'example.com: 80' example.com:999999999999999999999; do
		bad_input --allow-host "$h" touch "$MARK"
	done
}

@test "bad input: --allow-host with a bad pattern" {
	for h in '' '*' '*.' '.' '..' 'a..b' '.example.com' '*example.com' \
	    'a*.example.com' 'example.*.com' '**.example.com' 'exa mple.com' \
	    'example.com/path' 'ftp://example.com' 'user@example.com' \
	    'https://user@example.com/' 'https://' 'https:///x' \
	    'https://10.0.0.1/' \
	    "$(printf 'a%.0s' $(seq 64)).example.com" \
	    $'exa\nmple.com' 'exa$mple.com' ':443'; do
		bad_input --allow-host "$h" touch "$MARK"
	done
}

@test "good --allow-host patterns are accepted (parsed, not run)" {
	for h in example.com '*.example.com' example.com:8080 EXAMPLE.com \
	    example.com. a-b.example_c.com http://example.com \
	    localhost:8080 LOCALHOST.:8080 127.0.0.1:8080 '[::1]:8080' \
	    http://localhost:8080/x 'https://[::1]/' '*.localhost' \
	    https://registry.example.org/npm/ HTTPS://Example.com:8443/x \
	    "$(printf 'a%.0s' $(seq 63)).example.com"; do
		run --separate-stderr "$SBX" --sandbox host --dry-run \
		    --allow-host "$h" touch "$MARK"
		[ "$status" -eq 0 ] || { echo "$h: $status $stderr" >&2; return 1; }
		[ ! -e "$MARK" ]
	done
}

# The host's loopback without a port, on every backend and in a dry run:
# one line that says what to write, exit 125, nothing run.
@test "bad input: --allow-host localhost, 127.0.0.1, ::1, [::1] without a port" {
	local h ex dry
	for ex in "--sandbox host" "--backend bwrap" "--backend landlock" \
	    "--backend seatbelt" "--sandbox auto"; do
		for h in localhost 127.0.0.1 ::1 '[::1]' LocalHost localhost.; do
			for dry in "" --dry-run; do
				# shellcheck disable=SC2086 # the backend's two words
				run --separate-stderr "$SBX" $ex $dry --allow-host "$h" \
				    -- touch "$MARK" 3>&-
				[ "$status" -eq 125 ] || { echo "$ex $h: $status" >&2; return 1; }
				[ "$stderr" = "sbx: --allow-host $h: the host's loopback needs a port: write --allow-host localhost:PORT (that port alone)" ] || {
					echo "$ex $h: $stderr" >&2
					return 1
				}
				[ -z "$output" ] && [ ! -e "$MARK" ]
			done
		done
	done
}

@test "bad input: --allow-host for the host's loopback: a bad port, the proxy's, too many" {
	local h i many=()
	for h in localhost:0 localhost:65536 localhost: 127.0.0.1:x '[::1]:' \
	    '[::1]x' localhost:3128 127.0.0.1:3128; do
		bad_input --allow-host "$h" touch "$MARK"
	done
	run --separate-stderr "$SBX" --sandbox host --allow-host localhost:3128 -- true
	[ "$stderr" = "sbx: --allow-host localhost:3128: port 3128 is sbx's own proxy inside the sandbox" ]
	for i in $(seq 17); do
		many+=(--allow-host "localhost:$((8000 + i))")
	done
	bad_input "${many[@]}" touch "$MARK"
	[ "$stderr" = "sbx: --allow-host localhost:8017: at most 16 ports of the host's loopback" ]
	# the same port in three spellings is one port
	run --separate-stderr "$SBX" --sandbox host "${many[@]:0:32}" \
	    --allow-host 127.0.0.1:8001 --allow-host '[::1]:8001' -- true
	[ "$status" -eq 0 ]
	[ "$(kv allowed_local)" = "$(printf 'localhost:%s ' $(seq 8001 8016) | sed 's/ $//')" ]
}

@test "bad input: -e with an empty name, or a space or control byte in it" {
	bad_input -e '' touch "$MARK"
	bad_input -e =x touch "$MARK"
	bad_input --env==x touch "$MARK"
	bad_input -e 'A B=x' touch "$MARK"
	bad_input -e $'A\tB' touch "$MARK"
	bad_input -e $'A\nB=x' touch "$MARK"
	bad_input -e $'A\x7fB=x' touch "$MARK"
	# A space in the value is a value.
	run --separate-stderr "$SBX" --sandbox host -e 'A_B=x y' -- printenv A_B 3>&-
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'x y\n' ]
}

@test "bad input: a message with a newline in it stays one line" {
	bad_input --root $'/no\nsbx: such' touch "$MARK"
	bad_input -t $'1\n2' touch "$MARK"
	bad_input --sandbox $'host\nx' touch "$MARK"
	bad_input --allow-host $'a\rb' touch "$MARK"
	bad_input --write $'/nope\n' touch "$MARK"
}

# --- hostile paths ----------------------------------------------------------

@test "paths that look like options are paths" {
	mkdir ./-x ./-rf ./--net ./--
	for p in ./-x -rf --net ./-- -x; do
		run --separate-stderr "$SBX" --sandbox host --write "$p" -- touch "$MARK"
		[ "$status" -eq 0 ] || { echo "--write $p: $status $stderr" >&2; return 1; }
		rm -f "$MARK"
	done
	# --write --net took "--net" as its path: the network stays off, so
	# --allow-host is not in conflict with it.
	run --separate-stderr "$SBX" --sandbox host --write --net --allow-host \
	    example.com --dry-run -- true
	[ "$status" -eq 0 ]
}

@test "-- is never an option's value: it ends the options" {
	mkdir ./--
	bad_input -e -- touch "$MARK"
	[[ "$stderr" == *"-e: missing argument"* ]]
	bad_input --env -- touch "$MARK"
	bad_input --write -- touch "$MARK"
	bad_input -C -- touch "$MARK"
	bad_input --result -- touch "$MARK"
	[ ! -e ./--/"$(basename "$MARK")" ]
}

@test "a command or a path with a newline in it gives a one-line message" {
	bad_input --write $'/no\nsuch' touch "$MARK"
	run -127 --separate-stderr "$SBX" --sandbox host -- $'no such\ncommand'
	[ "$status" -eq 127 ]
	[[ "$stderr" =~ ^sbx:\ [^$'\n']+$ ]]
	[[ "$stderr" == *'no such\x0acommand: command not found'* ]]
	echo x >f
	ln f $'f\nlink'
	run --separate-stderr "$SBX" --dry-run --backend bwrap \
	    --deny-read $'f\nlink' -- true
	[ "$status" -eq 125 ]
	[[ "$stderr" =~ ^sbx:\ [^$'\n']+$ ]]
	[[ "$stderr" == *'hard links'* ]]
}

@test "a path option whose argument names no such path fails, even if it looks like an option" {
	bad_input --write --net touch "$MARK"
	bad_input --write -rf touch "$MARK"
	[[ "$stderr" == *-rf* ]]
}

@test "paths with spaces, quotes, newlines and dashes" {
	for p in 'a b' "it's" 'say "x"' $'new\nline' '-lead' '$(touch marker)' \
	    '`touch marker`' 'semi;colon' 'back\slash' 'tab	here' '*'; do
		mkdir -- "$p"
		run --separate-stderr "$SBX" --sandbox host --root "$p" --write "$p" \
		    -- sh -c 'pwd' 3>&-
		[ "$status" -eq 0 ] || { echo "<$p>: $status $stderr" >&2; return 1; }
		[ "$(kvdec stdout)" = "$BATS_TEST_TMPDIR/$p" ] ||
		    { echo "<$p>: pwd $(kvdec stdout)" >&2; return 1; }
		[ ! -e "$MARK" ]
	done
}

@test "--root is the command's working folder" {
	mkdir work
	run --separate-stderr "$SBX" --sandbox host -C work pwd
	[ "$status" -eq 0 ]
	[ "$(kvdec stdout)" = "$BATS_TEST_TMPDIR/work" ]
}

@test "arguments with hostile bytes reach the command unchanged" {
	run --separate-stderr "$SBX" --sandbox host -- printf '%s|' \
	    '' ' ' $'a\nb' '$HOME' '*' "'" '"' '\' '-' '--' $'\xff\xfe' $'\t'
	[ "$status" -eq 0 ]
	[ "$(kvdec stdout)" = "| |"$'a\nb'"|\$HOME|*|'|\"|\\|-|--|"$'\xff\xfe'"|"$'\t'"|" ]
}

# --- the environment --------------------------------------------------------

@test "environment: only the allowlist passes" {
	run --separate-stderr env -i PATH="$PATH" HOME=/h USER=u LOGNAME=l \
	    SHELL=/bin/sh TERM=t LANG=C LANGUAGE=en LC_ALL=C LC_CTYPE=C \
	    LC_WHATEVER=w TZ=UTC TMPDIR=/tmp SECRET=x AWS_SECRET_ACCESS_KEY=y \
	    LD_PRELOAD=/nope.so BASH_ENV=/nope PYTHONPATH=/p XLC_X=1 PATHX=1 \
	    HOMEBREW=1 "$SBX" --sandbox host --host-tmp -- env
	[ "$status" -eq 0 ]
	got=$(kvdec stdout | sort)
	want=$(printf '%s\n' PATH="$PATH" HOME=/h USER=u LOGNAME=l SHELL=/bin/sh \
	    TERM=t LANG=C LANGUAGE=en LC_ALL=C LC_CTYPE=C LC_WHATEVER=w TZ=UTC \
	    TMPDIR=/tmp | sort)
	[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got") >&2; return 1; }
}

@test "environment: SECRET does not pass, -e SECRET does" {
	run --separate-stderr env SECRET=s3cr3t "$SBX" --sandbox host -- env
	[ "$status" -eq 0 ]
	! kvdec stdout | grep -q '^SECRET=' || return 1
	run --separate-stderr env SECRET=s3cr3t "$SBX" --sandbox host -e SECRET -- env
	[ "$status" -eq 0 ]
	kvdec stdout | grep -qx 'SECRET=s3cr3t'
}

@test "environment: -e A=B sets, -e NAME unset stays unset, later wins" {
	run --separate-stderr env -u NOPE_UNSET "$SBX" --sandbox host -e A=B \
	    -e 'C=x=y z' -e EMPTY= -e NOPE_UNSET --env D=1 -e D=2 -e PATH="$PATH" -- env
	[ "$status" -eq 0 ]
	env_out=$(kvdec stdout)
	grep -qx 'A=B' <<<"$env_out"
	grep -qx 'C=x=y z' <<<"$env_out"
	grep -qx 'EMPTY=' <<<"$env_out"
	grep -qx 'D=2' <<<"$env_out"
	! grep -q '^D=1' <<<"$env_out" || return 1
	! grep -q '^NOPE_UNSET' <<<"$env_out"
}

@test "environment: -e can override an allowlisted variable" {
	run --separate-stderr env HOME=/real "$SBX" --sandbox host -e HOME=/other -- env
	[ "$status" -eq 0 ]
	[ "$(kvdec stdout | grep -c '^HOME=')" = 1 ]
	kvdec stdout | grep -qx 'HOME=/other'
}

@test "environment: a value with a newline passes intact" {
	run --separate-stderr env "ML=$(printf 'a\nb')" "$SBX" --sandbox host -e ML \
	    -- sh -c 'printf %s "$ML"'
	[ "$status" -eq 0 ]
	[ "$(kvdec stdout)" = $'a\nb' ]
}

@test "environment: -e values are gone from every command line while sbx runs" {
	local pid ex i found
	mkdir ws
	for ex in "--sandbox host" "--backend bwrap" "--backend landlock"; do
		if [ "$ex" != "--sandbox host" ] &&
		    ! "$SBX" --probe 2>/dev/null | grep -q "^${ex#--backend }=ok"; then
			echo "${ex#--backend } unavailable here"
			continue
		fi
		rm -f ws/seen
		# Every form: -e N=V, -eN=V, --env N=V, --env=N=V.
		# shellcheck disable=SC2086
		"$SBX" $ex -C ws -e T1=s3cretA -eT2=s3cretB --env T3=s3cretC \
		    --env=T4=s3cretD -- sh -c 'echo "$T1 $T2 $T3 $T4" >seen; sleep 5' \
		    >/dev/null 2>&1 3>&- &
		pid=$!
		for i in $(seq 50); do
			[ -s ws/seen ] && break
			sleep 0.1
		done
		# sbx's own line, and every other process's (bwrap, the shim)
		# (the pattern does not match grep's own line)
		found=$(grep -l 's3cre[t]' /proc/[0-9]*/cmdline 2>/dev/null || true)
		echo "$ex: $(tr '\0' ' ' <"/proc/$pid/cmdline") found: $found"
		tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "-e T1= "
		kill "$pid"
		wait "$pid" || true
		# The control: the command saw every value.
		[ "$(cat ws/seen)" = "s3cretA s3cretB s3cretC s3cretD" ]
		[ -z "$found" ]
	done
}

# SHIM KIND: run "sbx --sbx-internal-shim -- touch MARK" by hand with the
# status descriptor (5) and every other the shim reads (3 to 6) prepared
# as KIND: closed, a file holding a go message, a stream or
# datagram socket with one queued, a packet socket with nothing or another
# message queued. Prints the shim's exit status.
SHIM='
import os, socket, sys
sbx, kind, mark = sys.argv[1:4]
os.closerange(3, 64)
if kind == "file":
    p = mark + ".go"
    open(p, "w").write("G" * 16)
    fd = os.open(p, os.O_RDWR)
elif kind != "closed":
    typ = {"stream": socket.SOCK_STREAM, "dgram": socket.SOCK_DGRAM,
           "empty": socket.SOCK_SEQPACKET, "other": socket.SOCK_SEQPACKET,
           "go": socket.SOCK_SEQPACKET}[kind]
    a, b = socket.socketpair(socket.AF_UNIX, typ)
    if kind != "empty":
        b.send(b"S" * 16 if kind == "other" else b"G" * 16)
    fd = a.detach()
if kind != "closed":
    for n in (3, 4, 5, 6):
        if n != fd:
            os.dup2(fd, n)
        os.set_inheritable(n, True)
pid = os.fork()
if pid == 0:
    os.execv(sbx, [sbx, "--sbx-internal-shim", "--", "touch", mark])
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
'

@test "the internal shim option, run by hand, refuses and runs nothing" {
	local k
	require_cmd python3
	for k in closed file stream dgram empty other; do
		run --separate-stderr python3 -c "$SHIM" "$SBX" "$k" "$MARK"
		echo "$k: $output $stderr"
		[ "$output" = 125 ]
		[[ "$stderr" == "sbx: --sbx-internal-shim: for sbx's own use"* ]]
		[ ! -e "$MARK" ]
	done
	# Nor from inside a run: no status socket reaches the command.
	run --separate-stderr "$SBX" --sandbox host -- "$SBX" \
	    --sbx-internal-shim -- touch "$MARK"
	[ "$(kv exit_code)" = 125 ]
	[ ! -e "$MARK" ]
	# The control: with what sbx itself leaves on fd 5 (a Unix packet
	# socket holding a go message) the same line runs. A process that can
	# make one can run the command itself: only a command line is kept out.
	run --separate-stderr python3 -c "$SHIM" "$SBX" go "$MARK"
	[ "$output" = 0 ]
	[ -e "$MARK" ]
}

# --- --dry-run ---------------------------------------------------------------

@test "--dry-run runs nothing and prints the launch line" {
	run --separate-stderr "$SBX" --sandbox host --dry-run -- touch "$MARK"
	[ "$status" -eq 0 ]
	[ ! -e "$MARK" ]
	[[ "$output" == *touch* ]]
	[[ "$output" == *"$MARK"* ]]
}

@test "--dry-run quotes hostile words so a shell gets them back" {
	run --separate-stderr env -i PATH="$PATH" "$SBX" --sandbox host --dry-run \
	    -- printf '%s|' "it's" 'a b' '$(touch marker)' '*'
	[ "$status" -eq 0 ]
	[ ! -e marker ]
	# The line is shell: run it and get the same words back.
	run sh -c "$output"
	[ "$output" = "it's|a b|\$(touch marker)|*|" ]
	[ ! -e marker ]
}

@test "--dry-run with --result writes no result" {
	run --separate-stderr "$SBX" --sandbox host --dry-run --result res -- touch "$MARK"
	[ "$status" -eq 0 ]
	[ ! -e "$MARK" ]
	[ ! -s res ]
}

# --- --result, --format -------------------------------------------------------

@test "--result FILE: kv there, nothing on stdout" {
	run --separate-stderr "$SBX" --sandbox host --result res -- echo hello
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	output=$(cat res)
	[ "$(kv stdout)" = 'hello\n' ]
	[ "$(kv exit_code)" = 0 ]
	[ "$(kv executor)" = host ]
	[ "$(kv isolation)" = none ]
}

@test "--result FILE --format json" {
	run --separate-stderr "$SBX" --sandbox host --format json --result res.json -- sh -c 'echo out; echo err >&2; exit 3'
	[ "$status" -eq 3 ]
	[ -z "$output" ]
	python3 -c '
import json, sys
r = json.load(open("res.json"))
assert r["exit_code"] == 3, r
assert r["stdout"] == "out\n" and r["stderr"] == "err\n", r
assert r["signal"] is None and r["timed_out"] is False and r["aborted"] is False, r
assert r["stdout_bytes"] == 4 and r["stdout_truncated"] is False, r
assert r["executor"] == "host" and r["isolation"] == "none", r
assert isinstance(r["duration_ms"], int), r
'
}

@test "--result truncates an existing file" {
	head -c 10000 /dev/zero >res
	run --separate-stderr "$SBX" --sandbox host --result res -- true
	[ "$status" -eq 0 ]
	output=$(cat res)
	[ "$(kv exit_code)" = 0 ]
	[ "$(tr -d '\000' <res | wc -c)" = "$(wc -c <res)" ]
}

@test "--result /dev/fd/3 with 3>file" {
	run --separate-stderr bash -c '"$1" --sandbox host --result /dev/fd/3 -- echo via-fd 3>"$2"' _ "$SBX" "$BATS_TEST_TMPDIR/fd3"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	output=$(cat fd3)
	[ "$(kv stdout)" = 'via-fd\n' ]
}

@test "--result /dev/fd/3: the command does not inherit fd 3" {
	run --separate-stderr bash -c '"$1" --sandbox host --result /dev/fd/3 -- sh -c "echo leaked >&3" 3>"$2"' _ "$SBX" "$BATS_TEST_TMPDIR/fd3"
	output=$(cat fd3)
	[ "$(kv exit_code)" != 0 ]
	! grep -q leaked fd3
}

@test "every key of the contract, each once" {
	run --separate-stderr "$SBX" --sandbox host -- echo x
	[ "$status" -eq 0 ]
	for k in executor isolation exit_code signal timed_out aborted \
	    duration_ms stdout_bytes stdout_truncated stderr_bytes \
	    stderr_truncated stdout stderr; do
		[ "$(grep -c "^$k=" <<<"$output")" = 1 ] ||
		    { echo "key $k not exactly once" >&2; return 1; }
	done
	# Nothing but key=value lines.
	! grep -qv '^[a-z_]*=' <<<"$output"
}

@test "--format json is valid JSON, with hostile bytes" {
	printf 'q"b\\s\000\001\037\177\377\376\303\050\355\240\200\364\220\200\200 é € 😀 \n\r\t</script>' >out.bin
	printf '\300\257' >err.bin
	run --separate-stderr "$SBX" --sandbox host --format json -- sh -c 'cat out.bin; cat err.bin >&2'
	[ "$status" -eq 0 ]
	printf '%s' "$output" | python3 -m json.tool >/dev/null
	printf '%s' "$output" | python3 -c '
import json, sys
r = json.loads(sys.stdin.buffer.read().decode("utf-8", "strict"))
s = r["stdout"]
assert s.startswith("q\"b\\s\x00\x01\x1f\x7f"), repr(s)
assert "é € 😀 \n\r\t</script>" in s, repr(s)
assert "\udc80" not in s and "\ufffd" in s, repr(s)
assert r["stdout_bytes"] == len(open("out.bin", "rb").read()), r
assert set(r["stderr"]) <= {"\ufffd"} and r["stderr"], repr(r["stderr"])
'
}

@test "--format json: null where kv is empty" {
	run -127 --separate-stderr "$SBX" --sandbox host --format json -- /nonexistent/cmd
	[ "$status" -eq 127 ]
	printf '%s' "$output" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["exit_code"] is None and r["signal"] is None, r
assert r["error"] == "not_found", r
'
}

@test "--format json is valid with a hostile command name in error_message" {
	run -127 --separate-stderr "$SBX" --sandbox host --format json -- $'/no/"x\n\xff\\'
	[ "$status" -eq 127 ]
	printf '%s' "$output" | python3 -m json.tool >/dev/null
	[[ "$stderr" =~ ^sbx:\  ]]
}

@test "kv: a hostile command name in error_message stays one line" {
	run -127 --separate-stderr "$SBX" --sandbox host -- $'/no/x\nexit_code=0\n\xff'
	[ "$status" -eq 127 ]
	[ "$(grep -c '^exit_code=' <<<"$output")" = 1 ]
	[ -z "$(kv exit_code)" ]
	printf '%s\n' "$output" | python3 -c 'import sys; sys.stdin.buffer.read().decode("utf-8", "strict")'
}

# --- --passthrough -----------------------------------------------------------

@test "--passthrough: output straight through, no result" {
	run --separate-stderr "$SBX" --sandbox host --passthrough -- sh -c 'echo out; echo err >&2; exit 4'
	[ "$status" -eq 4 ]
	[ "$output" = out ]
	[ "$stderr" = err ]
}

@test "--passthrough: binary output byte-exact" {
	head -c 300000 /dev/urandom >data
	"$SBX" --sandbox host --passthrough -- cat data >got 3>&-
	cmp data got
}

@test "--passthrough --result FILE writes the result file" {
	run --separate-stderr "$SBX" --sandbox host --passthrough --result res -- sh -c 'echo out; exit 2'
	[ "$status" -eq 2 ]
	[ "$output" = out ]
	output=$(cat res)
	[ "$(kv exit_code)" = 2 ]
	[ "$(kv executor)" = host ]
	[ "$(kv timed_out)" = 0 ]
}

@test "--passthrough: stdin passes through" {
	run --separate-stderr bash -c 'printf "in put" | "$1" --sandbox host --passthrough -- cat' _ "$SBX"
	[ "$status" -eq 0 ]
	[ "$output" = "in put" ]
}

# --- --result gets every result sbx produces ------------------------------

@test "--result FILE gets a path error's result; stdout stays empty" {
	for pt in "" --passthrough; do
		run --separate-stderr "$SBX" --sandbox host $pt --result res \
		    -w "$BATS_TEST_TMPDIR/nope" -- touch "$MARK" 3>&-
		[ "$status" -eq 125 ]
		[ "$output" = "" ]
		[[ "$stderr" == "sbx: --write $BATS_TEST_TMPDIR/nope: No such file"* ]]
		[ ! -e "$MARK" ]
		output=$(cat res)
		[ "$(kv error)" = path ]
		[[ "$(kv error_message)" == "--write $BATS_TEST_TMPDIR/nope: No such file"* ]]
	done
}

@test "--passthrough --result FILE gets an unavailable backend's result" {
	case $(uname -s) in
	Darwin) b=landlock ;;
	*) b=seatbelt ;;
	esac
	run --separate-stderr "$SBX" --backend "$b" --passthrough --result res \
	    -- touch "$MARK" 3>&-
	[ "$status" -eq 125 ]
	[ "$output" = "" ]
	output=$(cat res)
	[ "$(kv error)" = unsupported_platform ]
	[ "$(kv executor)" = "$b" ]
}

@test "--passthrough --result FILE gets the result of a fallback to Landlock" {
	require_landlock
	mkdir bin
	printf '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n' >bin/bwrap
	chmod +x bin/bwrap
	mkdir ws
	run --separate-stderr env PATH="$BATS_TEST_TMPDIR/bin:$PATH" "$SBX" \
	    -C ws --passthrough --result res -- echo ran 3>&-
	[ "$status" -eq 0 ]
	[ "$output" = ran ]
	output=$(cat res)
	[ "$(kv executor)" = landlock ]
	[ "$(kv exit_code)" = 0 ]
}

@test "the README's ci-test.sh reports sbx's own failure with its message" {
	script=$(sed -n '/^# ci-test.sh/,/^exit "\$status"/p' "$BATS_TEST_DIRNAME/../README.md")
	[ -n "$script" ]
	mkdir bin
	# sbx with a --root that is missing: a path error.
	printf '#!/bin/sh\nexec "%s" --sandbox host -C "%s/nope" "$@"\n' "$SBX" \
	    "$BATS_TEST_TMPDIR" >bin/sbx
	chmod +x bin/sbx
	run --separate-stderr env PATH="$BATS_TEST_TMPDIR/bin:$PATH" sh -c "$script"
	[ "$status" -eq 125 ]
	[[ "$stderr" == *"sbx failed: --root $BATS_TEST_TMPDIR/nope: No such file"* ]]
}

@test "selection: with no backend able to serve --allow-host, each reason is real and its fix applies here" {
	[ "$(uname -s)" = Linux ] || skip "Linux backends only"
	# No bwrap on PATH, Landlock capped below its floor (as on Linux 6.5).
	run --separate-stderr env PATH=/nonexistent SBX_LANDLOCK_ABI_MAX=3 \
	    "$SBX" --allow-host registry.example.org -- /bin/true
	echo "$stderr"
	[ "$status" -eq 125 ]
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ "$stderr" == "sbx: no OS sandbox works here: bwrap: not found on PATH"*"install bubblewrap"*"; landlock: abi 3 has no TCP rules (needs abi 4, linux 6.7)" ]]
	# No empty reason, no fix that names the other backend.
	[[ "$stderr" != *": ;"* ]] || return 1
	[[ "$stderr" != *"needs the bwrap backend"* ]] || return 1
	# Positive control: Landlock at its floor serves the same request.
	if "$SBX" --probe 2>/dev/null | grep -q '^landlock=ok'; then
		run --separate-stderr env PATH=/nonexistent SBX_LANDLOCK_ABI_MAX=4 \
		    "$SBX" --allow-host registry.example.org -- /bin/true
		[ "$status" -eq 0 ]
		[ "$(kv executor)" = landlock ]
	fi
}
