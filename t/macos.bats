#!/usr/bin/env bats
# The Seatbelt backend against the real sandbox: the policy holds, and the
# known ways around a path-based sandbox do not work. macOS only; elsewhere
# every test is skipped with the reason (t/seatbelt.bats checks the profile
# text on every platform). The executor contract itself is t/contract.bats
# with SBX_EXEC="--backend seatbelt".

bats_require_minimum_version 1.5.0
load helper

setup() {
	[ "$(uname -s)" = Darwin ] || skip "macOS only: Seatbelt"
	"$SBX" --probe 2>/dev/null | grep -q '^seatbelt=ok' ||
	    sbx_skip "seatbelt unavailable: $("$SBX" --probe 2>&1 |
	    grep '^seatbelt_error=' | head -n 1)"
	# Resolved: /var/folders/... is /private/var/folders/... to Seatbelt.
	top=$(cd "$BATS_TEST_TMPDIR" && pwd -P)
	ws="$top/ws"
	mkdir -p "$ws/.git/hooks" "$top/home" "$top/outside"
	printf '[core]\n' >"$ws/.git/config"
	printf 'hook\n' >"$ws/.git/hooks/pre-commit"
	printf 'out\n' >"$top/outside/file"
	export HOME="$top/home"
	tag="sbxtag$$x$RANDOM$RANDOM"
	pids=""
}

teardown() {
	local p
	# TERM first: a run of sbx then stops its whole tree.
	for p in $pids; do
		kill -TERM "$p" 2>/dev/null || true
	done
	[ -z "$pids" ] || sleep 1
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null || true
	done
	launchctl remove "sbx.$tag" 2>/dev/null || true
	launchctl bootout "gui/$(id -u)/sbx.$tag" 2>/dev/null || true
	launchctl unsetenv "SBX_$tag" 2>/dev/null || true
	security delete-generic-password -s "sbx-test-$tag" >/dev/null 2>&1 ||
	    true
}

sbx() {
	"$SBX" --backend seatbelt -C "$ws" "$@" 3>&-
}

# sbx_bg ARGS...: sbx ARGS in the background, output dropped; killed in
# teardown.
sbx_bg() {
	sbx "$@" </dev/null >/dev/null 2>&1 &
	pids="$pids $!"
}

# answers HOST PORT: something accepts a TCP connection there.
answers() {
	nc -z -G 2 "$1" "$2" >/dev/null 2>&1
}

# port_up PORT: wait up to 10 s for PORT to answer on 127.0.0.1.
port_up() {
	local i
	for i in $(seq 50); do
		answers 127.0.0.1 "$1" && return 0
		sleep 0.2
	done
	echo "nothing answers on 127.0.0.1:$1" >&2
	return 1
}

# untouched: the files setup made are as they were.
untouched() {
	[ "$(cat "$ws/.git/config")" = "[core]" ]
	[ "$(cat "$ws/.git/hooks/pre-commit")" = hook ]
	[ "$(ls -A "$ws/.git/hooks")" = pre-commit ]
	[ "$(cat "$top/outside/file")" = out ]
	[ "$(ls -A "$top/outside")" = file ]
}

@test "macos: the probe finds sandbox-exec working" {
	run "$SBX" --probe
	grep -qx 'seatbelt=ok' <<<"$output"
	grep -qx 'default=seatbelt' <<<"$output"
}

@test "macos: the profile is in no command line, nor left to the command" {
	mkdir -p "$ws/secret$tag"
	sbx --deny-read "$ws/secret$tag" -- sleep 3 >/dev/null 2>&1 &
	pids="$pids $!"
	sleep 1
	all=$(ps -ax -o args=)
	# Positive control: the run is there to be seen.
	grep -qF -- "--sbx-internal-shim -- sleep 3" <<<"$all"
	! grep -qF "secret$tag" <<<"$all" || false
	# The profile was applied all the same.
	run sbx --deny-read "$ws/secret$tag" -- ls "$ws/secret$tag"
	[ "$status" -ne 0 ]
	# sandbox-exec read it from descriptor 3; the command has no 3.
	run sbx -- sh -c 'cat <&0' <<<"in"
	[ "$(kv stdout)" = 'in\n' ]
	run sbx -- sh -c 'cat <&3'
	[ "$status" -ne 0 ]
	! grep -qF '(version 1)' <<<"$output" || false
}

@test "macos: seatbelt is the default and runs the command" {
	run --separate-stderr "$SBX" -C "$ws" -- sh -c 'echo out; exit 3'
	[ "$status" -eq 3 ]
	[ "$(kv executor)" = seatbelt ]
	[ "$(kv isolation)" = os ]
	[ "$(kv stdout)" = 'out\n' ]
}

@test "macos: the root is writable, everything else read-only" {
	run sbx -- sh -c 'echo new >new && cat new'
	[ "$status" -eq 0 ]
	[ "$(cat "$ws/new")" = new ]
	run sbx -- sh -c "echo x >'$top/outside/new'"
	[ "$status" -ne 0 ]
	run sbx -- sh -c "echo x >>'$top/outside/file'"
	[ "$status" -ne 0 ]
	run sbx -- sh -c "echo x >'$top/home/new'"
	[ "$status" -ne 0 ]
	untouched
}

@test "macos: /tmp is read-only unless asked for" {
	run sbx -- sh -c "echo x >/tmp/$tag"
	[ "$status" -ne 0 ]
	[ ! -e "/tmp/$tag" ]
	run sbx -w /tmp -- sh -c "echo x >/tmp/$tag"
	[ "$status" -eq 0 ]
	[ -e "/private/tmp/$tag" ]
	rm -f "/private/tmp/$tag"
}

@test "macos: temp: TMPDIR is a folder of the run's own, writable, removed after" {
	t=$(cd "$(getconf DARWIN_USER_TEMP_DIR)" && pwd -P)
	run sbx -- sh -c 'echo x >"$TMPDIR/f" && cat "$TMPDIR/f" && echo "$TMPDIR"'
	[ "$status" -eq 0 ]
	mine=$(printf '%b' "$(kv stdout)" | sed -n 2p)
	[[ "$mine" == "$t"/* ]]
	[ ! -e "$mine" ]
	run sbx -- sh -c 'echo "$TMPDIR"'
	[ "$(printf '%b' "$(kv stdout)")" != "$mine" ]
	# bash 3.2 (/bin/sh) writes every here-document to a temp file.
	run sbx -- /bin/sh -c 'cat <<EOF
here
EOF'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'here\n' ]
	run sbx -- sh -c 'f=$(mktemp) && echo ok >"$f" && cat "$f"'
	[ "$(kv stdout)" = 'ok\n' ]
}

@test "macos: temp: the per-user temp and cache folders stay read-only" {
	t=$(getconf DARWIN_USER_TEMP_DIR)
	c=$(getconf DARWIN_USER_CACHE_DIR)
	# Positive control: outside, both take a file.
	touch "$t/$tag" "$c/$tag" && rm -f "$t/$tag" "$c/$tag"
	run sbx -- sh -c "echo x >'$t/$tag'"
	[ "$status" -ne 0 ]
	run sbx -- sh -c "echo x >'$c/$tag'"
	[ "$status" -ne 0 ]
	[ ! -e "$t/$tag" ] && [ ! -e "$c/$tag" ]
	# The run's folder cannot be moved out of the cleanup's reach.
	run sbx -- sh -c 'mv "$TMPDIR" ./moved'
	[ "$status" -ne 0 ]
	[ ! -e "$ws/moved" ]
}

@test "macos: temp: compilers and Apple's tool shims work without the caches" {
	command -v clang >/dev/null 2>&1 || skip "clang is not installed"
	printf 'int main(void) { return 0; }\n' >"$ws/a.c"
	# clang writes its intermediate object to TMPDIR.
	run sbx -- clang a.c -o a
	[ "$status" -eq 0 ]
	[ -x "$ws/a" ]
	# /usr/bin/git is an xcrun shim; xcrun's cache stays read-only.
	run sbx -- /usr/bin/git --version
	[ "$status" -eq 0 ]
	# Modules need a cache: the module cache goes where it is told.
	printf '@import Darwin;\nint main(void) { return 0; }\n' >"$ws/m.m"
	run sbx -- sh -c 'clang -fmodules -fmodules-cache-path="$TMPDIR/mc" m.m -o m'
	[ "$status" -eq 0 ]
	if command -v swiftc >/dev/null 2>&1; then
		printf 'print("swift-ok")\n' >"$ws/s.swift"
		run sbx -- sh -c 'swiftc -module-cache-path "$TMPDIR/mc" s.swift -o s && ./s'
		[ "$status" -eq 0 ]
		grep -q swift-ok <<<"$(kv stdout)"
	fi
}

@test "macos: files everyone writes to still work" {
	run sbx -- sh -c 'echo x >/dev/null && echo y >/dev/stdout && echo z >/dev/stderr'
	[ "$status" -eq 0 ]
}

@test "macos: a pty opened inside works; /dev/tty works in it" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	run sbx -- python3 -c 'import os, pty
m, s = pty.openpty(); os.write(s, b"hi\n"); print(os.read(m, 100))'
	[ "$status" -eq 0 ]
	grep -q 'hi' <<<"$(kv stdout)"
	command -v script >/dev/null || skip "script is not installed"
	# script(1) makes the pty the controlling terminal: /dev/tty is it.
	run sbx -- script -q /dev/null sh -c 'echo tty-ok >/dev/tty; stty -a >/dev/null && echo stty-ok'
	[ "$status" -eq 0 ]
	grep -q 'tty-ok' <<<"$(kv stdout)"
	grep -q 'stty-ok' <<<"$(kv stdout)"
}

@test "macos: attack: another terminal of the user's can be neither written nor read" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	# A terminal made outside stands for a Terminal window of the user's.
	python3 -c 'import os, pty, time
m, s = pty.openpty(); print(os.ttyname(s), flush=True); time.sleep(60)' \
	    >"$top/tty" 2>/dev/null &
	pids="$pids $!"
	for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$top/tty" ] && break; sleep 0.2; done
	other=$(cat "$top/tty")
	[[ "$other" == /dev/ttys* ]]
	# Positive control: outside the sandbox it takes a write.
	echo outside >"$other"
	run sbx -- sh -c "printf '\\033]0;evil\\007' >$other"
	[ "$status" -ne 0 ]
	run sbx -- sh -c "head -c 1 <$other"
	[ "$status" -ne 0 ]
}

@test "macos: --write makes a folder or one file writable" {
	mkdir -p "$top/out"
	touch "$top/one" "$top/two"
	run sbx -w "$top/out" -w "$top/one" -- sh -c \
	    "echo a >'$top/out/a' && echo b >'$top/one'"
	[ "$status" -eq 0 ]
	[ "$(cat "$top/one")" = b ]
	run sbx -w "$top/one" -- sh -c "echo c >'$top/two'"
	[ "$status" -ne 0 ]
	[ ! -s "$top/two" ]
}

@test "macos: --deny-write keeps a folder read-only inside the root" {
	mkdir -p "$ws/keep"
	echo k >"$ws/keep/f"
	run sbx --deny-write "$ws/keep" -- sh -c 'cat keep/f; echo x >>keep/f'
	[ "$status" -ne 0 ]
	[ "$(cat "$ws/keep/f")" = k ]
	run sbx --deny-write "$ws/keep" -- sh -c 'rm -rf keep'
	[ -e "$ws/keep/f" ]
}

@test "macos: --deny-read hides every byte" {
	mkdir -p "$ws/secret"
	echo "s3cret$tag" >"$ws/secret/key"
	run sbx --deny-read "$ws/secret" -- sh -c \
	    'cat secret/key; ls secret; cp -c secret/key k2; cat k2; tar cf - secret'
	! grep -q "s3cret$tag" <<<"$output" || false
	[ "$(cat "$ws/secret/key")" = "s3cret$tag" ]
}

@test "macos: --scope makes the root read-only but the scope paths" {
	mkdir -p "$ws/src"
	run sbx --scope "$ws/src" -- sh -c 'echo x >src/ok'
	[ "$status" -eq 0 ]
	run sbx --scope "$ws/src" -- sh -c 'echo x >top'
	[ "$status" -ne 0 ]
	[ ! -e "$ws/top" ]
}

@test "macos: attack: write, remove or chmod the git hooks and config" {
	run sbx -- sh -c 'echo evil >.git/hooks/pre-commit'
	[ "$status" -ne 0 ]
	run sbx -- sh -c 'echo evil >.git/hooks/post-checkout'
	run sbx -- sh -c 'echo "[alias]" >>.git/config'
	run sbx -- sh -c 'rm -rf .git/hooks; rm -f .git/config'
	run sbx -- sh -c 'chmod 777 .git/hooks; xattr -w com.sbx.x y .git/config'
	run sbx -- sh -c 'ln -s /tmp .git/hooks/link'
	untouched
	[ "$(stat -f %Lp "$ws/.git/hooks")" != 777 ]
}

@test "macos: attack: rename a parent away, edit, rename it back" {
	run sbx -- sh -c 'mv .git g && echo evil >g/hooks/pre-commit; mv g .git'
	[ -d "$ws/.git" ]
	[ ! -e "$ws/g" ]
	untouched
	# The same, naming the folder in another spelling.
	run sbx -- sh -c 'mv .GIT g && echo evil >g/hooks/pre-commit; mv g .git'
	[ -d "$ws/.git" ]
	[ ! -e "$ws/g" ]
	untouched
	mkdir -p "$top/other"
	run sbx -w "$top/other" -- sh -c "mv '$ws' '$top/other/ws' &&
	    echo evil >'$top/other/ws/.git/hooks/pre-commit'"
	[ -d "$ws/.git" ]
	[ ! -e "$top/other/ws" ]
	untouched
}

@test "macos: attack: no set-user-ID or set-group-ID file is left behind" {
	# Positive control: outside, chmod sets the bit.
	touch "$top/outside/s"
	chmod 4755 "$top/outside/s"
	[ -u "$top/outside/s" ]
	run sbx -- sh -c 'cp /bin/echo e; chmod 4755 e; chmod g+s e'
	[ -e "$ws/e" ]
	[ ! -u "$ws/e" ] && [ ! -g "$ws/e" ]
	# An ordinary mode change still works.
	run sbx -- chmod 700 e
	[ "$status" -eq 0 ]
	[ "$(stat -f %Lp "$ws/e")" = 700 ]
	command -v python3 >/dev/null || skip "python3 is not installed"
	# The mode given when the file is made, not only chmod.
	run sbx -- python3 -c 'import os
os.close(os.open("n", os.O_CREAT | os.O_WRONLY, 0o6755))'
	[ ! -u "$ws/n" ] && [ ! -g "$ws/n" ]
}

@test "macos: attack: a hard link as a writable alias" {
	run sbx -- sh -c 'ln .git/config alias && echo evil >>alias'
	[ ! -e "$ws/alias" ]
	run sbx -- sh -c "ln '$top/outside/file' alias2 && echo evil >>alias2"
	[ ! -e "$ws/alias2" ]
	untouched
}

@test "macos: attack: through a symbolic link" {
	run sbx -- sh -c "ln -s .git/hooks h && echo evil >h/pre-commit;
	    ln -s '$top/outside' o && echo evil >o/file"
	untouched
}

@test "macos: attack: another spelling of a protected name, there or not" {
	# Positive control: this volume ignores case (APFS's default).
	touch "$top/CaseProbe"
	[ -e "$top/caseprobe" ] ||
	    skip "case-sensitive file system: no other spelling to try"
	run sbx -- sh -c 'echo evil >.GIT/HOOKS/pre-commit;
	    echo evil >.Git/Hooks/post-merge; echo "[x]" >>.GIT/CONFIG'
	untouched
	run sbx -- sh -c "echo evil >'$top/OUTSIDE/file'"
	untouched
	# Names that do not exist yet: a git folder with no hooks, and the
	# start-up files of a writable home.
	mkdir -p "$top/repo/.git" "$top/home/Library"
	run sbx -C "$top/repo" -- sh -c \
	    'mkdir .git/HOOKS && echo evil >.git/HOOKS/pre-commit'
	[ "$status" -ne 0 ]
	[ ! -e "$top/repo/.git/hooks/pre-commit" ]
	run sbx -C "$top/home" -- sh -c 'echo evil >>.ZSHRC;
	    echo evil >.Zprofile; echo evil >.BASH_LOGIN;
	    mkdir -p Library/LAUNCHAGENTS .SSH'
	[ ! -s "$top/home/.zshrc" ]
	[ ! -e "$top/home/.zprofile" ]
	[ ! -e "$top/home/.bash_login" ]
	[ ! -e "$top/home/Library/LaunchAgents" ]
	[ ! -e "$top/home/.ssh" ]
	# Positive control: the rest of that home is writable.
	run sbx -C "$top/home" -- sh -c 'echo fine >zshrc-notes'
	[ "$status" -eq 0 ]
	[ -s "$top/home/zshrc-notes" ]
}

@test "macos: attack: a protected shell file in a writable \$HOME" {
	run sbx -C "$top/home" -- sh -c 'echo evil >>.zshrc; echo evil >>.bashrc'
	[ ! -e "$top/home/.zshrc" ]
	[ ! -e "$top/home/.bashrc" ]
}

@test "macos: attack: a nested sandbox-exec cannot loosen the profile" {
	run sbx -- /usr/bin/sandbox-exec -p '(version 1)(allow default)' -- \
	    sh -c "echo evil >'$top/outside/file'"
	untouched
}

@test "macos: attack: no network but loopback" {
	command -v nc >/dev/null || skip "nc is not installed"
	run sbx -- nc -z -G 3 1.1.1.1 443
	[ "$status" -ne 0 ]
	ip=$(ipconfig getifaddr en0 2>/dev/null) || ip=10.0.0.1
	run sbx -- nc -z -G 3 "$ip" 22
	[ "$status" -ne 0 ]
}

@test "macos: a server inside may listen on any address; only loopback reaches it" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	command -v nc >/dev/null || skip "nc is not installed"
	# python3 -m http.server --bind 0.0.0.0, its default (::, both
	# families), and Node's listen(port) (::).
	p1=$(free_port)
	sbx_bg -t 60 -- python3 -m http.server "$p1" --bind 0.0.0.0
	port_up "$p1"
	p2=$(free_port)
	sbx_bg -t 60 -- python3 -m http.server "$p2"
	port_up "$p2"
	if command -v node >/dev/null; then
		p3=$(free_port)
		sbx_bg -t 60 -- node -e \
		    "require('http').createServer((q, r) => r.end('ok')).listen($p3)"
		port_up "$p3"
	fi
	ip=$(ipconfig getifaddr en0 2>/dev/null) ||
	    ip=$(ipconfig getifaddr en1 2>/dev/null) ||
	    skip "no network address to connect from"
	# Positive control: unsandboxed, the same kind of server is reached
	# on the network address.
	p4=$(free_port)
	python3 -m http.server "$p4" --bind 0.0.0.0 >/dev/null 2>&1 &
	pids="$pids $!"
	port_up "$p4"
	answers "$ip" "$p4"
	! answers "$ip" "$p1" || false
	! answers "$ip" "$p2" || false
	[ -z "${p3:-}" ] || ! answers "$ip" "$p3" || false
}

@test "macos: attack: no service on the host's loopback, but the proxy's port" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	command -v nc >/dev/null || skip "nc is not installed"
	port=$(free_port)
	python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1 &
	pids="$pids $!"
	# Positive control: outside, it answers.
	port_up "$port"
	run sbx -- nc -z -G 3 127.0.0.1 "$port"
	[ "$status" -ne 0 ]
	run sbx --allow-host example.com -- nc -z -G 3 127.0.0.1 "$port"
	[ "$status" -ne 0 ]
	run sbx --allow-host example.com -- nc -z -G 3 localhost "$port"
	[ "$status" -ne 0 ]
	# ssh to localhost with the user's keys would be a shell outside.
	run sbx -- nc -z -G 3 127.0.0.1 22
	[ "$status" -ne 0 ]
	run sbx --allow-host example.com -- \
	    sh -c 'nc -z -G 3 127.0.0.1 "${HTTPS_PROXY##*:}"'
	[ "$status" -eq 0 ]
}

@test "macos: the command's own loopback server needs --net (unlike Linux)" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	command -v nc >/dev/null || skip "nc is not installed"
	# Seatbelt cannot tell the command's own server from the host's.
	script='python3 -m http.server "$1" --bind 127.0.0.1 >/dev/null 2>&1 &
	for i in 1 2 3 4 5 6 7 8 9 10; do
		nc -z 127.0.0.1 "$1" && exit 0; sleep 0.3
	done; exit 1'
	port=$(free_port)
	run sbx -t 20 -- sh -c "$script" sh "$port"
	[ "$status" -ne 0 ]
	port=$(free_port)
	run sbx -t 20 --net -- sh -c "$script" sh "$port"
	[ "$status" -eq 0 ]
}

# unix_listen PATH: a Unix socket at PATH, outside the sandbox, that
# accepts every connection; waits until it is there.
unix_listen() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
while True:
    s.accept()[0].close()' "$1" >/dev/null 2>&1 &
	pids="$pids $!"
	for _ in 1 2 3 4 5 6 7 8 9 10; do [ -S "$1" ] && return 0; sleep 0.2; done
	return 1
}

CONNECT='import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])'

@test "macos: attack: Unix sockets are shut unless asked for" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	unix_listen "$top/s.sock"
	run sbx -- python3 -c "$CONNECT" "$top/s.sock"
	[ "$status" -ne 0 ]
	run sbx --net -- python3 -c "$CONNECT" "$top/s.sock"
	[ "$status" -ne 0 ]
	run sbx --allow-unix-sockets -- python3 -c "$CONNECT" "$top/s.sock"
	[ "$status" -eq 0 ]
}

@test "macos: attack: --allow-unix-sockets reaches no socket below a --deny-read path" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	mkdir -p "$top/agent" "$top/open"
	unix_listen "$top/agent/s.sock"
	unix_listen "$top/open/s.sock"
	ln -s "$top/agent" "$ws/link"
	# Positive control: the same kind of socket beside it is reached.
	run sbx --allow-unix-sockets --deny-read "$top/agent" -- \
	    python3 -c "$CONNECT" "$top/open/s.sock"
	[ "$status" -eq 0 ]
	for net in --no-net --net; do
		run sbx --allow-unix-sockets "$net" --deny-read "$top/agent" -- \
		    python3 -c "$CONNECT" "$top/agent/s.sock"
		[ "$status" -ne 0 ]
		# by a relative name, and through a symbolic link
		run sbx -C "$top/open" --allow-unix-sockets "$net" \
		    --deny-read "$top/agent" -- python3 -c "$CONNECT" ../agent/s.sock
		[ "$status" -ne 0 ]
		run sbx --allow-unix-sockets "$net" --deny-read "$top/agent" -- \
		    python3 -c "$CONNECT" link/s.sock
		[ "$status" -ne 0 ]
	done
}

@test "macos: --net still resolves names through mDNSResponder" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	lookup='import socket; socket.getaddrinfo("apple.com", 443)'
	python3 -c "$lookup" 2>/dev/null || skip "no name resolution here"
	run sbx --net -- python3 -c "$lookup"
	[ "$status" -eq 0 ]
	run sbx -- python3 -c "$lookup"
	[ "$status" -ne 0 ]
}

@test "macos: attack: no launchd job outside the sandbox" {
	run sbx -- launchctl submit -l "sbx.$tag" -- /usr/bin/touch "$top/outside/escaped"
	sleep 1
	[ ! -e "$top/outside/escaped" ]
	untouched
}

@test "macos: attack: no Apple Events, no LaunchServices" {
	run sbx -- osascript -e 'tell application "Finder" to get name of startup disk'
	[ "$status" -ne 0 ]
	run sbx -- open -g -j -a Calculator
	[ "$status" -ne 0 ]
	# open(1) on a program of the command's own: launchd would start it
	# outside, unconfined; launchservicesd checks lsopen for the caller.
	printf '#!/bin/sh\ntouch "%s"\n' "$top/outside/escaped" >"$ws/x.command"
	chmod +x "$ws/x.command"
	run sbx -- open -g "$ws/x.command"
	run sbx -- open -g -a Terminal "$ws/x.command"
	sleep 2
	[ ! -e "$top/outside/escaped" ]
	untouched
}

@test "macos: DYLD_* variables never reach the command" {
	run sbx -e DYLD_INSERT_LIBRARIES=/nonexistent.dylib \
	    -e DYLD_LIBRARY_PATH="$ws" -e SBX_SEEN=yes -- env
	[ "$status" -eq 0 ]
	# Positive control: another variable given the same way arrives.
	grep -q '^SBX_SEEN=yes' <<<"$(printf '%b' "$(kv stdout)")"
	! grep -q '^DYLD_' <<<"$(printf '%b' "$(kv stdout)")" || false
}

@test "macos: a terminal the command inherits stays usable, and sbx's own" {
	command -v script >/dev/null || skip "script is not installed"
	# script(1) makes the terminal outside; --no-tty passes it through.
	run script -q /dev/null "$SBX" --backend seatbelt -C "$ws" \
	    --passthrough --no-tty -- sh -c 'echo inherited-ok; stty -g >/dev/null &&
	    echo stty-ok' </dev/null 3>&-
	grep -q inherited-ok <<<"$output"
	grep -q stty-ok <<<"$output"
	# sbx's own (--tty), made outside too, is the controlling terminal:
	# /dev/tty reaches it; its /dev/ttys name is another terminal's.
	run sbx --tty -- sh -c 'echo hi >/dev/tty && stty -g >/dev/null &&
	    echo tty-ok; exec 3<>"$(tty)" && echo reopened'
	grep -q tty-ok <<<"$(kv stdout)"
	! grep -q reopened <<<"$(kv stdout)" || false
}

@test "macos: attack: processes outside cannot be signalled" {
	perl -e 'sleep 60' -- "$tag" &
	victim=$!
	pids="$pids $victim"
	run sbx -- sh -c "kill -TERM $victim; kill -STOP $victim"
	[ "$status" -ne 0 ]
	kill -0 "$victim"
	[ "$(ps -o state= -p "$victim" | cut -c1)" != T ]
}

# A probe that is not set-user-ID (Seatbelt runs none: ps and top cannot
# run inside at all): sysctl(3) and libproc from python3.
PROBE='import ctypes, ctypes.util, sys
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
def sysctl(mib):
    m = (ctypes.c_int * len(mib))(*mib)
    n = ctypes.c_size_t(0)
    if libc.sysctl(m, len(mib), None, ctypes.byref(n), None, 0) != 0:
        return None
    buf = ctypes.create_string_buffer(n.value + 65536)
    n = ctypes.c_size_t(len(buf))
    if libc.sysctl(m, len(mib), buf, ctypes.byref(n), None, 0) != 0:
        return None
    return buf.raw[:n.value]
what, pid = sys.argv[1], int(sys.argv[2])
if what == "args":      # kern.procargs2: arguments and environment
    r = sysctl([1, 49, pid])
elif what == "all":     # kern.proc.all: every process
    r = sysctl([1, 14, 0, 0])
elif what == "pid":     # kern.proc.pid.N: one entry
    r = sysctl([1, 14, 1, pid])
else:                   # proc_pidpath(): libproc, process-info
    b = ctypes.create_string_buffer(4096)
    r = b.raw[:libc.proc_pidpath(pid, b, 4096)] or None
if not r:
    sys.exit(1)
sys.stdout.buffer.write(r.replace(b"\0", b"\n"))'

@test "macos: attack: other processes' arguments cannot be read" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	perl -e 'sleep 60' -- "$tag" "SECRET=$tag" &
	victim=$!
	pids="$pids $victim"
	sleep 0.3
	# Positive controls: outside, the probe reads the victim's arguments,
	# the process list and its path, and pgrep finds it.
	python3 -c "$PROBE" args "$victim" | grep -q "$tag"
	python3 -c "$PROBE" all 0 | grep -q perl
	python3 -c "$PROBE" path "$victim" | grep -q perl
	pgrep -f "$tag" >/dev/null
	for what in args all path; do
		run sbx -- python3 -c "$PROBE" "$what" "$victim"
		[ "$status" -ne 0 ]
		! grep -q "$tag" <<<"$output" || false
	done
	run sbx -- pgrep -f "$tag"
	! grep -q "$victim" <<<"$(kv stdout)" || false
	# Its own entry it still reads.
	run sbx -- sh -c 'python3 -c "$1" pid $$' sh "$PROBE"
	[ "$status" -eq 0 ]
	# Set-user-ID programs never run under Seatbelt (forbidden-exec-sugid).
	run sbx -- ps -ax -o command=
	[ "$status" -ne 0 ]
	! grep -q "$tag" <<<"$output" || false
}

@test "macos: attack: no preference written through cfprefsd" {
	dom="com.sbx.test$tag"
	# Positive control: outside, defaults writes the domain.
	defaults write "$dom" k v && defaults delete "$dom"
	run sbx -- defaults write "$dom" k evil
	[ "$status" -ne 0 ]
	run defaults read "$dom" k
	[ "$status" -ne 0 ]
	# In a writable home, the preference and launchd folders are held.
	mkdir -p "$top/home/Library/Preferences"
	run sbx -C "$top/home" -- sh -c \
	    "echo evil >Library/Preferences/$dom.plist"
	[ ! -e "$top/home/Library/Preferences/$dom.plist" ]
	run sbx -C "$top/home" -- sh -c "mkdir -p Library/LaunchAgents &&
	    echo evil >Library/LaunchAgents/$dom.plist"
	[ ! -e "$top/home/Library/LaunchAgents/$dom.plist" ]
}

@test "macos: attack: no disk image mounted over a protected folder" {
	command -v hdiutil >/dev/null || skip "hdiutil is not there"
	hdiutil create -quiet -size 2m -fs HFS+ -volname "sbx$tag" \
	    "$top/img.dmg" || skip "hdiutil cannot make an image here"
	# Positive control: outside, the image mounts on a folder.
	mkdir -p "$top/mnt"
	hdiutil attach -quiet -nobrowse -mountpoint "$top/mnt" "$top/img.dmg"
	hdiutil detach -quiet "$top/mnt"
	run sbx -- hdiutil attach -quiet -nobrowse -mountpoint \
	    "$ws/.git/hooks" "$top/img.dmg"
	[ "$status" -ne 0 ]
	if mount | grep -qF "$ws/.git/hooks"; then
		hdiutil detach -force "$ws/.git/hooks" || true
		false
	fi
	untouched
}

@test "macos: attack: the pasteboard can be neither read nor planted" {
	command -v pbcopy >/dev/null || skip "pbcopy is not there"
	saved=$(pbpaste 2>/dev/null || true)
	printf 'secret%s' "$tag" | pbcopy
	# Positive control: outside, the copy is there.
	[ "$(pbpaste)" = "secret$tag" ]
	run sbx -- pbpaste
	! grep -q "secret$tag" <<<"$output" || false
	run sbx -- sh -c "printf 'rm -rf ~' | pbcopy"
	[ "$(pbpaste)" = "secret$tag" ]
	printf '%s' "$saved" | pbcopy
}

@test "macos: attack: no keychain secret, though HTTPS still works" {
	command -v security >/dev/null || skip "security is not there"
	svc="sbx-test-$tag"
	security add-generic-password -a sbx -s "$svc" -w "secret$tag" ||
	    skip "the login keychain takes no item here (locked?)"
	# Positive control: outside, the secret comes back.
	out=$(security find-generic-password -s "$svc" -w)
	[ "$out" = "secret$tag" ]
	run sbx -- security find-generic-password -s "$svc" -w
	security delete-generic-password -s "$svc" >/dev/null || true
	[ "$status" -ne 0 ]
	! grep -q "secret$tag" <<<"$output" || false
	# Certificate trust goes through trustd, which stays reachable.
	curl -sI -m 10 https://apple.com >/dev/null 2>&1 ||
	    skip "no HTTPS from here"
	run sbx --net -- curl -sI -m 10 https://apple.com
	[ "$status" -eq 0 ]
}

@test "macos: attack: launchd loads nothing, keeps no variable for later" {
	uid=$(id -u)
	cat >"$ws/job.plist" <<PLIST
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
<key>Label</key><string>sbx.$tag</string>
<key>ProgramArguments</key><array><string>/usr/bin/touch</string><string>$top/outside/escaped</string></array>
<key>RunAtLoad</key><true/>
</dict></plist>
PLIST
	run sbx -- launchctl bootstrap "gui/$uid" "$ws/job.plist"
	[ "$status" -ne 0 ]
	run sbx -- launchctl load "$ws/job.plist"
	run sbx -- launchctl setenv "SBX_$tag" evil
	sleep 1
	[ ! -e "$top/outside/escaped" ]
	run launchctl print "gui/$uid/sbx.$tag"
	[ "$status" -ne 0 ]
	[ -z "$(launchctl getenv "SBX_$tag")" ]
	# Positive control: outside, launchd takes both.
	launchctl setenv "SBX_$tag" ok
	[ "$(launchctl getenv "SBX_$tag")" = ok ]
	launchctl unsetenv "SBX_$tag"
	launchctl bootstrap "gui/$uid" "$ws/job.plist"
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -e "$top/outside/escaped" ] && break
		sleep 0.2
	done
	launchctl bootout "gui/$uid/sbx.$tag" || true
	[ -e "$top/outside/escaped" ]
	rm -f "$top/outside/escaped"
}

@test "macos: the tree inside can still signal itself" {
	run sbx -- sh -c 'sleep 30 & kill -TERM $! && wait $!; echo "st=$?"'
	[ "$(kv stdout)" = 'st=143\n' ]
}
