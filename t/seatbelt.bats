#!/usr/bin/env bats
# The Seatbelt profile, golden: what `sbx --backend seatbelt --dry-run` builds
# for each kind of rule, in which order, and how it writes hostile paths.
# The builder is pure, so this runs on every platform; t/macos.bats
# checks the same profiles against the real sandbox.

bats_require_minimum_version 1.5.0
load helper

setup() {
	top=$(cd "$BATS_TEST_TMPDIR" && pwd -P)
	ws="$top/ws"
	mkdir -p "$ws" "$top/home"
	# Keep the user's $HOME (and its protected files) out of the profile.
	export HOME="$top/home"
}

# sb [OPTION]...: sbx --backend seatbelt --dry-run [OPTION]... -- true in
# $ws; the profile in $profile, the launch line in $launch.
sb() {
	run --separate-stderr "$SBX" --backend seatbelt --dry-run -C "$ws" \
	    "$@" -- true
	if [ "$status" -ne 0 ]; then
		echo "sbx failed ($status): $stderr" >&2
		return 1
	fi
	profile=$(printf '%s\n' "$output" | sed -n '/^env -i /q;p')
	launch=$(printf '%s\n' "$output" | sed -n '/^env -i /,$p')
}

# has LINE: the profile holds LINE, whole.
has() {
	grep -qxF -- "$1" <<<"$profile" || {
		printf 'no line: %s\nin:\n%s\n' "$1" "$profile" >&2
		return 1
	}
}

# hasnt TEXT: no line of the profile holds TEXT.
hasnt() {
	! grep -qF -- "$1" <<<"$profile" || {
		printf 'unexpected: %s\nin:\n%s\n' "$1" "$profile" >&2
		return 1
	}
}

# line_of LINE: the number of the first line that is LINE.
line_of() {
	grep -nxF -- "$1" <<<"$profile" | head -n 1 | cut -d: -f1
}

# in_order LINE...: each LINE is in the profile, after the one before.
in_order() {
	local prev=0 n
	for l in "$@"; do
		n=$(line_of "$l")
		if [ -z "$n" ] || [ "$n" -le "$prev" ]; then
			printf 'out of order: %s\nin:\n%s\n' "$l" "$profile" >&2
			return 1
		fi
		prev=$n
	done
}

# re PATH: PATH as a literal in a profile regex, as the profile writes it
# (each metacharacter escaped, then each backslash doubled in the string).
re() {
	local r
	r=$(rx "$1" "$1")
	r=${r#\"^}
	printf '%s' "${r%"(/.*)?\$\""}"
}

# pin PATH [TOP]: how the block of folders that stay where they are names
# PATH, below the shallowest writable folder TOP (default $ws): TOP itself
# as a literal, a folder below it in every spelling of the part below TOP.
pin() {
	if [ "$1" = "${2:-$ws}" ]; then
		printf '    (literal %s)' "$(q "$1")"
	else
		printf '    (regex %s)' "$(rx "$1" "${2:-$ws}" self)"
	fi
}

# pinned PATH [TOP]: the block of folders that stay where they are names
# PATH (see pin).
pinned() {
	sed -n '/^(deny file-write-unlink$/,/))$/p' <<<"$profile" |
	    grep -qF "$(pin "$@")" || {
		printf 'not pinned: %s\nin:\n%s\n' "$1" "$profile" >&2
		return 1
	}
}

# q PATH: PATH as the profile must write it, quotes included.
q() {
	printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g')"
}

# rx PATH [TOP [self]]: the regex the profile writes for the tree at PATH
# (with self: PATH alone) below the writable folder TOP (default $ws),
# quotes included: every ASCII letter below TOP as a class of its two
# cases, metacharacters escaped.
rx() {
	python3 -c '
import sys
path, top = sys.argv[1], sys.argv[2]
out = "^"
for i, ch in enumerate(path):
    if i >= len(top) and ch.isascii() and ch.isalpha():
        out += "[%s%s]" % (ch.upper(), ch.lower())
    elif ch in ".[]()*+?{}|^$\\":
        out += "\\" + ch
    else:
        out += ch
out += "$" if len(sys.argv) > 3 else "(/.*)?$"
print("\"" + out.replace("\\", "\\\\").replace("\"", "\\\"") + "\"")
' "$1" "${2:-$ws}" ${3:+"$3"}
}

@test "seatbelt: the profile starts from allow-default and denies all writes" {
	sb --no-protect
	[ "$(sed -n 1p <<<"$profile")" = "(version 1)" ]
	[ "$(sed -n 2p <<<"$profile")" = "(allow default)" ]
	in_order "(deny file-write*)" "(allow file-write*" \
	    "    (literal \"/dev/null\")" \
	    "    (literal \"/dev/zero\")" \
	    "    (literal \"/dev/dtracehelper\")" \
	    "    (literal \"/dev/tty\")" \
	    "    (literal \"/dev/ptmx\")" \
	    "    (subpath \"/dev/fd\"))" \
	    "(allow file-write* (subpath $(q "$ws")))"
}

@test "seatbelt: terminals: /dev/tty, /dev/ptmx and the ptys opened inside, no other" {
	sb --no-protect
	# openpty() writes /dev/ptmx; then no tty but those the kernel marked
	# as opened inside, and /dev/tty (the regex needs a byte after it);
	# the policy comes after, so a user's own -w on a tty still wins.
	in_order "(deny file-write*)" "(allow file-write*" \
	    "    (literal \"/dev/tty\")" \
	    "    (literal \"/dev/ptmx\")" \
	    "(deny file-read-data file-write* (regex #\"^/dev/(tty|pty).\"))" \
	    "(allow file-read-data file-write*" \
	    "    (require-all" \
	    "        (regex #\"^/dev/ttys[0-9]+\$\")" \
	    "        (extension \"com.apple.sandbox.pty\")))" \
	    "; the policy, in order: the last matching rule wins" \
	    "(allow file-write* (subpath $(q "$ws")))"
	hasnt '(regex #"^/dev/tty")'
	hasnt "file-ioctl"
}

@test "seatbelt: temp: the run's own folder, writable and kept in place, before the policy" {
	sb --no-protect
	# A dry run makes no temp folder: the two rules show as a comment,
	# $TMPDIR in place of the path, where a run has them.
	in_order "(deny file-write*)" \
	    "        (extension \"com.apple.sandbox.pty\")))" \
	    "; temp: none in this plan; with a folder of its own, a run has" \
	    "; (allow file-write* (subpath \"\$TMPDIR\"))" \
	    "; (deny file-write-unlink (literal \"\$TMPDIR\"))" \
	    "; the policy, in order: the last matching rule wins" \
	    "(allow file-write* (subpath $(q "$ws")))"
	# Only the run's own folder: not /tmp, not the per-user temp and
	# cache folders (a module cache there runs in later builds outside).
	hasnt '(allow file-write* (subpath "/private/tmp"))'
	hasnt '(allow file-write* (subpath "/private/var/folders'
	hasnt '(allow file-write* (regex'
}

@test "seatbelt: nothing escapes through LaunchServices, Apple Events, launchd, signals" {
	sb --no-protect
	has "(deny lsopen)"
	has "(deny appleevent-send)"
	has "(deny job-creation)"
	in_order "(deny signal)" "(allow signal (target same-sandbox))"
	in_order "(deny process-info*)" \
	    "(allow process-info* (target same-sandbox))"
	has "(deny file-link)"
	hasnt "(allow file-link"
}

@test "seatbelt: no daemon acts for the command: preferences, mounts, pasteboard, keychain" {
	sb --no-protect
	in_order "(deny file-link)" \
	    "; nor through daemons that would act for it" \
	    "(deny user-preference-write)" \
	    "(deny file-mount file-unmount)" \
	    "(deny mach-lookup" \
	    "    (global-name \"com.apple.pasteboard.1\")" \
	    "    (global-name \"com.apple.SecurityServer\")" \
	    "    (global-name \"com.apple.sysmond\")" \
	    "    (global-name \"com.apple.lsd.modifydb\"))" \
	    "; files: readable everywhere, writable only where allowed"
	# Nothing later allows them again.
	hasnt "(allow user-preference"
	hasnt "(allow file-mount"
	hasnt "(allow mach-lookup"
	# TLS certificate checks go through trustd, which stays open.
	hasnt "trustd"
}

@test "seatbelt: other processes' arguments: kern.procargs and the process lists refused" {
	sb --no-protect
	# A process keeps its own entry and its group's.
	in_order "; nor reads the arguments and environments of others" \
	    "(deny sysctl-read" \
	    "    (sysctl-name-prefix \"kern.procargs\")" \
	    "    (sysctl-name-prefix \"kern.proc.\"))" \
	    "(allow sysctl-read" \
	    "    (sysctl-name-prefix \"kern.proc.pid.\")" \
	    "    (sysctl-name-prefix \"kern.proc.pgrp.\"))" \
	    "; files: readable everywhere, writable only where allowed"
	in_order "(deny process-info*)" \
	    "(allow process-info* (target same-sandbox))"
	[ "$(grep -c '^(allow sysctl-read' <<<"$profile")" -eq 1 ]
}

@test "seatbelt: the launch line is sandbox-exec -f /dev/fd/3 -- SHIM -- COMMAND" {
	mkdir -p "$top/secret"
	sb --no-protect --deny-read "$top/secret"
	[ "$status" -eq 0 ]
	[ "$(wc -l <<<"$launch")" -eq 1 ]
	# sbx's shim runs inside and reports exec failures and the exact status.
	[[ "$launch" =~ ^env\ -i\ .*\ /usr/bin/sandbox-exec\ -f\ /dev/fd/3\ --\ [^\ ]*sbx\ --sbx-internal-shim\ --\ true$ ]]
	# The profile travels on descriptor 3: ps(1) shows argv to every
	# local user, and the profile names the --deny-read paths.
	! grep -qF '(version 1)' <<<"$launch" || false
	! grep -qF "$top/secret" <<<"$launch" || false
	has "(deny file-read* file-write* file-clone (subpath $(q "$top/secret")))"
	[ -z "$stderr" ]
}

@test "seatbelt: --dry-run runs nothing" {
	run --separate-stderr "$SBX" --backend seatbelt --dry-run -C "$ws" \
	    -- touch "$ws/ran"
	[ "$status" -eq 0 ]
	[ ! -e "$ws/ran" ]
}

@test "seatbelt: the root and --write folders are subpaths, --write files literals, in order" {
	mkdir -p "$top/out" "$ws/a"
	touch "$top/file.txt"
	sb --no-protect -w "$top/out" --write "$top/file.txt" -w "$ws/a"
	in_order "(deny file-write*)" \
	    "(allow file-write* (subpath $(q "$ws")))" \
	    "(allow file-write* (subpath $(q "$top/out")))" \
	    "(allow file-write* (literal $(q "$top/file.txt")))" \
	    "(allow file-write* (subpath $(q "$ws/a")))"
}

@test "seatbelt: paths are written resolved, through symbolic links" {
	mkdir -p "$top/real"
	ln -s "$top/real" "$top/link"
	sb --no-protect -w "$top/link"
	has "(allow file-write* (subpath $(q "$top/real")))"
	hasnt "$top/link"
}

@test "seatbelt: a deny below a writable folder takes every spelling of what could be made" {
	mkdir -p "$ws/.git/hooks"
	sb
	# The workspace exists under its own spelling; below it the command
	# may create .git/HOOKS on a case-insensitive volume, which git would
	# then read as .git/hooks.
	has "(deny file-write* (regex \"^$(re "$ws")/\\\\.[Gg][Ii][Tt]/[Hh][Oo][Oo][Kk][Ss](/.*)?\$\")) ; protected"
	# Outside every writable folder nothing can be made: a plain subpath.
	mkdir -p "$top/out/Sub"
	sb --no-protect --deny-write "$top/out/Sub" --deny-read "$top/out"
	has "(deny file-write* (subpath $(q "$top/out/Sub")))"
	has "(deny file-read* file-write* file-clone (subpath $(q "$top/out")))"
	hasnt "(regex \"^$(re "$top")/out"
}

@test "seatbelt: the fold starts below the shallowest writable folder" {
	mkdir -p "$ws/A/b/Keep"
	sb --no-protect -w "$ws/A" --deny-write "$ws/A/b/Keep"
	has "(deny file-write* $(printf '(regex %s)' "$(rx "$ws/A/b/Keep")"))"
	has "(deny file-write* (regex \"^$(re "$ws")/[Aa]/[Bb]/[Kk][Ee][Ee][Pp](/.*)?\$\"))"
	# With --scope the root is not writable: the fold starts below the
	# scope path.
	mkdir -p "$ws/src/gen"
	sb --no-protect --scope "$ws/src" --deny-write "$ws/src/gen"
	has "(deny file-write* (regex \"^$(re "$ws")/src/[Gg][Ee][Nn](/.*)?\$\"))"
}

@test "seatbelt: --deny-write comes after the allows" {
	mkdir -p "$ws/keep"
	touch "$ws/keep.txt"
	sb --no-protect --deny-write "$ws/keep" --deny-write "$ws/keep.txt"
	in_order "(allow file-write* (subpath $(q "$ws")))" \
	    "(deny file-write* (regex $(rx "$ws/keep")))" \
	    "(deny file-write* (regex $(rx "$ws/keep.txt")))"
}

@test "seatbelt: --deny-read denies reads and writes, last" {
	mkdir -p "$ws/secret" "$ws/ro"
	echo s >"$ws/secret.txt"
	sb --no-protect --deny-read "$ws/secret" --deny-write "$ws/ro" \
	    --deny-read "$ws/secret.txt"
	in_order "(allow file-write* (subpath $(q "$ws")))" \
	    "(deny file-write* (regex $(rx "$ws/ro")))" \
	    "(deny file-read* file-write* file-clone (regex $(rx "$ws/secret")))" \
	    "(deny file-read* file-write* file-clone (regex $(rx "$ws/secret.txt")))"
}

@test "seatbelt: --scope makes the root read-only, then the scope paths writable" {
	mkdir -p "$ws/src" "$ws/build"
	sb --no-protect --scope "$ws/src" --scope "$ws/build"
	in_order "(deny file-write*)" \
	    "(deny file-write* (subpath $(q "$ws")))" \
	    "(allow file-write* (subpath $(q "$ws/src")))" \
	    "(allow file-write* (subpath $(q "$ws/build")))"
	hasnt "(allow file-write* (subpath $(q "$ws")))"
}

@test "seatbelt: --scope, then --deny-write inside a scope path" {
	mkdir -p "$ws/src/gen"
	sb --no-protect --scope "$ws/src" --deny-write "$ws/src/gen"
	in_order "(deny file-write* (subpath $(q "$ws")))" \
	    "(allow file-write* (subpath $(q "$ws/src")))" \
	    "(deny file-write* (regex $(rx "$ws/src/gen" "$ws/src")))"
	# The scope path holds a read-only path: it cannot be moved away.
	in_order "(deny file-write-unlink" "    (literal $(q "$ws/src")))"
}

@test "seatbelt: protected paths of a repository are read-only, after the allows" {
	mkdir -p "$ws/.git/hooks"
	touch "$ws/.git/config" "$ws/.envrc"
	sb
	in_order "(allow file-write* (subpath $(q "$ws")))" \
	    "(deny file-write* (regex $(rx "$ws/.git/hooks"))) ; protected" \
	    "(deny file-write* (regex $(rx "$ws/.git/config"))) ; protected"
	has "(deny file-write* (regex $(rx "$ws/.envrc"))) ; protected"
}

@test "seatbelt: a missing .git/hooks is still denied, by name" {
	mkdir -p "$ws/.git"
	sb
	has "(deny file-write* (regex $(rx "$ws/.git/hooks"))) ; protected, not there yet"
}

@test "seatbelt: missing protected names are denied too, where the protected list begins" {
	mkdir -p "$ws/.git" "$ws/keep" "$top/out" "$top/home/.config"
	sb -w "$top/out" -w "$top/home/.config" --deny-write "$ws/keep"
	# None of .envrc, .vscode, .mcp.json, config.worktree exists: each is
	# a rule of its own, held by name as on every backend.
	has "(deny file-write* (regex $(rx "$ws/.envrc"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.mcp.json"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.vscode"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.git/config.worktree"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.git/commondir"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.git/worktrees"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.git/modules"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$top/out/.envrc" "$top/out"))) ; protected, not there yet"
	# The names held by name (no placeholder anywhere): right after the
	# writable paths, before the rules of the protected list and the
	# user's own --deny-write.
	in_order "(allow file-write* (subpath $(q "$ws")))" \
	    "(allow file-write* (subpath $(q "$top/out")))" \
	    "(allow file-write* (subpath $(q "$top/home/.config")))" \
	    "(deny file-write* (regex $(rx "$top/home/.config/fish" "$top/home/.config"))) ; protected, not there yet"
	in_order "(deny file-write* (regex $(rx "$ws/.git/hooks"))) ; protected, not there yet" \
	    "(deny file-write* (regex $(rx "$ws/keep")))"
	[ ! -e "$ws/.envrc" ] && [ ! -e "$ws/.vscode" ]
	# Their folders stay where they are.
	pinned "$ws/.git"
	pinned "$ws"
	pinned "$top/out" "$top/out"
	sb --no-protect
	hasnt "not there yet"
}

@test "seatbelt: a writable home holds its start-up files and ~/Library/LaunchAgents, there or not" {
	mkdir -p "$ws/Library"
	touch "$ws/.bash_login"
	HOME=$ws sb
	has "(deny file-write* (regex $(rx "$ws/.bashrc"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.zshrc"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.bash_login"))) ; protected"
	has "(deny file-write* (regex $(rx "$ws/.zprofile"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.ssh"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/Library/LaunchAgents"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/Library/Preferences"))) ; protected, not there yet"
	# The rest of the list, there or not, folders below included.
	has "(deny file-write* (regex $(rx "$ws/.config/git"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.config/autostart"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.local/bin"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.cargo/config.toml"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.gitconfig"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/.xsession"))) ; protected, not there yet"
	pinned "$ws/Library"
	# ~/.zshrc in any spelling: >> ~/.ZSHRC is refused as well.
	has "(deny file-write* (regex \"^$(re "$ws")/\\\\.[Zz][Ss][Hh][Rr][Cc](/.*)?\$\")) ; protected, not there yet"
}

@test "seatbelt: no set-user-ID bit, after the policy and the pins" {
	mkdir -p "$ws/.git/hooks"
	sb -w "$top"
	in_order "; the policy, in order: the last matching rule wins" \
	    "(allow file-write* (subpath $(q "$ws")))" \
	    "(allow file-write* (subpath $(q "$top")))" \
	    "(deny file-write-unlink" \
	    "; no set-user-ID or set-group-ID bit, wherever it writes" \
	    "(deny file-write-setugid)"
	# Nothing after it allows file writes again.
	n=$(line_of "(deny file-write-setugid)")
	! tail -n "+$n" <<<"$profile" | grep -q '(allow file-write' || false
}

@test "seatbelt: the folders above a protected path cannot be renamed" {
	mkdir -p "$ws/.git/hooks"
	sb
	in_order "(deny file-write* (regex $(rx "$ws/.git/hooks"))) ; protected" \
	    "(deny file-write-unlink" \
	    "$(pin "$ws/.git")" \
	    "$(pin "$ws"))"
	# .git in every spelling, the workspace as it is.
	has "    (regex \"^$(re "$ws")/\\\\.[Gg][Ii][Tt]\$\")"
	# bwrap's pins (mount points) become these denies, not allows.
	hasnt "(allow file-write* (subpath $(q "$ws/.git")))"
}

@test "seatbelt: only writable folders are pinned" {
	mkdir -p "$ws/a/b/c" "$top/elsewhere"
	sb --no-protect --deny-write "$ws/a/b/c" --deny-read "$top/elsewhere"
	in_order "(deny file-write-unlink" \
	    "$(pin "$ws/a/b")" \
	    "$(pin "$ws/a")" \
	    "$(pin "$ws"))"
	hasnt "(literal $(q "$top"))"
}

@test "seatbelt: --no-protect drops the protected list and the pins" {
	mkdir -p "$ws/.git/hooks"
	sb --no-protect
	hasnt ".git"
	hasnt "; the folders above them stay where they are"
	! grep -qx "(deny file-write-unlink" <<<"$profile" || false
}

@test "seatbelt: no network: servers listen on any address, for loopback clients only" {
	sb --no-protect
	# Node's listen(port) binds ::, python3 -m http.server 0.0.0.0: the
	# bind is allowed anywhere, a connection only where it arrives on
	# loopback, and nothing goes out, loopback included.
	in_order "; network: none; servers listen for loopback only" \
	    "(deny network-outbound)" "(deny network-inbound)" \
	    "(deny network-bind)" \
	    "(allow network-bind (local tcp \"*:*\"))" \
	    "(allow network-inbound (local tcp \"localhost:*\"))"
	hasnt "(allow network-outbound"
	hasnt "unix-socket"
	sb --no-protect --no-net
	has "(deny network-outbound)"
	hasnt "(allow network-outbound"
}

@test "seatbelt: --allow-host reaches the proxy's port on loopback, no other" {
	sb --no-protect --allow-host example.com
	port=$(grep -o ' HTTPS_PROXY=http://127\.0\.0\.1:[0-9]*' <<<"$launch" |
	    sed 's/.*://')
	[ -n "$port" ]
	in_order "; network: only the proxy; servers listen for loopback only" \
	    "(deny network-outbound)" \
	    "(allow network-inbound (local tcp \"localhost:*\"))" \
	    "(allow network-outbound (remote tcp \"localhost:$port\"))"
	[ "$(grep -c '^(allow network-outbound' <<<"$profile")" -eq 1 ]
	! grep -q '(allow network-outbound (remote [a-z]* "localhost:\*"))' \
	    <<<"$profile" || false
}

@test "seatbelt: --allow-host localhost:PORT adds that port of the host's loopback, each once, no other" {
	sb --no-protect --allow-host localhost:11434 --allow-host 127.0.0.1:11434 \
	    --allow-host '[::1]:5432' --allow-host registry.example.org
	port=$(grep -o ' HTTPS_PROXY=http://127\.0\.0\.1:[0-9]*' <<<"$launch" |
	    sed 's/.*://')
	[ -n "$port" ]
	in_order "; network: only the proxy; servers listen for loopback only" \
	    "(deny network-outbound)" \
	    "(allow network-outbound (remote tcp \"localhost:$port\"))" \
	    "; the host's loopback ports allowed (--allow-host localhost:PORT)" \
	    "(allow network-outbound (remote tcp \"localhost:11434\"))" \
	    "(allow network-outbound (remote tcp \"localhost:5432\"))"
	[ "$(grep -c '^(allow network-outbound' <<<"$profile")" -eq 3 ]
	! grep -q '(allow network-outbound (remote [a-z]* "localhost:\*"))' \
	    <<<"$profile" || false
	# the name the proxy checks is not a loopback port: no rule of its own
	hasnt "registry.example.org"
}

@test "seatbelt: localhost without a port is refused before any profile" {
	run --separate-stderr "$SBX" --backend seatbelt --dry-run -C "$ws" \
	    --allow-host localhost -- true
	[ "$status" -eq 125 ]
	[ -z "$output" ]
	[ "$stderr" = "sbx: --allow-host localhost: the host's loopback needs a port: write --allow-host localhost:PORT (that port alone)" ]
}

@test "seatbelt: --net has no network rules but keeps Unix sockets shut" {
	sb --no-protect --net
	hasnt "(deny network-outbound)"
	hasnt "(deny network-inbound)"
	hasnt "localhost"
	in_order "(deny network-outbound (remote unix-socket (path-regex #\"^/\")))" \
	    "(deny network-bind (local unix-socket (path-regex #\"^/\")))" \
	    "(allow network-outbound" \
	    "    (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\"))"
}

@test "seatbelt: --net --allow-unix-sockets has no network rules at all" {
	sb --no-protect --net --allow-unix-sockets
	hasnt "network"
}

@test "seatbelt: --allow-unix-sockets without network opens Unix sockets only" {
	sb --no-protect --allow-unix-sockets
	in_order "(deny network-outbound)" \
	    "(allow network-outbound (remote unix-socket (path-regex #\"^/\")))" \
	    "(allow network-bind (local unix-socket (path-regex #\"^/\")))"
}

@test "seatbelt: --allow-unix-sockets: no socket below a --deny-read path" {
	mkdir -p "$ws/secret" "$top/agent"
	sb --no-protect --allow-unix-sockets --deny-read "$ws/secret" \
	    --deny-read "$top/agent"
	# connect(2) is network-outbound, which no file rule covers.
	in_order "(allow network-outbound (remote unix-socket (path-regex #\"^/\")))" \
	    "; no Unix socket below a --deny-read path" \
	    "(deny network-outbound (remote unix-socket (path-regex $(rx "$ws/secret"))))" \
	    "(deny network-outbound (remote unix-socket (subpath $(q "$top/agent"))))"
	[ "$(tail -n 1 <<<"$profile")" = \
	    "(deny network-outbound (remote unix-socket (subpath $(q "$top/agent"))))" ]
	sb --no-protect --net --allow-unix-sockets --deny-read "$top/agent"
	has "(deny network-outbound (remote unix-socket (subpath $(q "$top/agent"))))"
	# Without the option every Unix socket is shut already.
	sb --no-protect --deny-read "$top/agent"
	hasnt "unix-socket"
}

# deny_hostile NAME: --deny-write on a folder NAME outside the writable
# folders gives one rule whose path is one string literal: with the
# literals taken out, the line is the bare rule, so nothing in NAME ended
# the string or started a form. The same name in $ws gives one regex,
# likewise one literal, every metacharacter in it escaped.
deny_hostile() {
	mkdir -p "$top/out/$1" "$ws/$1"
	sb --no-protect --deny-write "$top/out/$1" --deny-write "$ws/$1"
	has "(deny file-write* (subpath $(q "$top/out/$1")))"
	has "(deny file-write* (regex $(rx "$ws/$1")))"
	line=$(grep -F -- "(deny file-write* (" <<<"$profile")
	[ "$(wc -l <<<"$line")" -eq 2 ]
	[ "$(sed -E 's/"([^"\\]|\\.)*"/""/g' <<<"$line")" = \
	    '(deny file-write* (subpath ""))
(deny file-write* (regex ""))' ]
	# And the profile as a whole still has one (allow default): its own.
	[ "$(sed -E 's/"([^"\\]|\\.)*"/""/g' <<<"$profile" |
	    grep -c '(allow default)')" -eq 1 ]
}

@test "seatbelt: a double quote in a path is escaped" {
	deny_hostile 'say "hi"'
	has "(deny file-write* (subpath \"$top/out/say \\\"hi\\\"\"))"
	has "(deny file-write* (regex \"^$(re "$ws")/[Ss][Aa][Yy] \\\"[Hh][Ii]\\\"(/.*)?\$\"))"
}

@test "seatbelt: a backslash in a path is escaped" {
	deny_hostile 'back\slash\'
	has "(deny file-write* (subpath \"$top/out/back\\\\slash\\\\\"))"
	# In the regex: \\ for the backslash, each doubled in the string.
	has "(deny file-write* (regex \"^$(re "$ws")/[Bb][Aa][Cc][Kk]\\\\\\\\[Ss][Ll][Aa][Ss][Hh]\\\\\\\\(/.*)?\$\"))"
}

@test "seatbelt: a path cannot close the string and add a rule" {
	deny_hostile '")(allow default)(allow file-write* (subpath "'
	deny_hostile '\")(allow default)("'
}

@test "seatbelt: parentheses, semicolons and hashes stay in the string" {
	deny_hostile 'a(b)c;d #|e|# ;; f'
	has "(deny file-write* (subpath \"$top/out/a(b)c;d #|e|# ;; f\"))"
}

@test "seatbelt: regex metacharacters in a path match only themselves" {
	deny_hostile 'x.*+?[a-z]{2}^$|(y)'
	has "(deny file-write* (regex \"^$(re "$ws")/[Xx]\\\\.\\\\*\\\\+\\\\?\\\\[[Aa]-[Zz]\\\\]\\\\{2\\\\}\\\\^\\\\\$\\\\|\\\\([Yy]\\\\)(/.*)?\$\"))"
}

@test "seatbelt: non-ASCII UTF-8 is written as it is" {
	deny_hostile 'été-日本語-🙂'
	has "(deny file-write* (subpath \"$top/out/été-日本語-🙂\"))"
	has "(deny file-write* (regex \"^$(re "$ws")/é[Tt]é-日本語-🙂(/.*)?\$\"))"
}

# refused NAME WHY: a folder NAME in $ws cannot go in a profile: exit 125,
# error=policy, and a message that names the path.
refused() {
	mkdir -p "$ws/$1"
	run --separate-stderr "$SBX" --backend seatbelt --dry-run -C "$ws" \
	    --no-protect --deny-write "$ws/$1" -- true
	[ "$status" -eq 125 ]
	grep -q "^sbx: seatbelt: .*: $2\$" <<<"$stderr"
	[ "$(grep -c . <<<"$stderr")" -eq 1 ]
	[ -z "$output" ] || [ "$(kv error)" = policy ]
	! grep -qF '(version 1)' <<<"$output" || false
}

@test "seatbelt: a newline in a path is refused, not written" {
	refused $'new\nline' "control character in path"
	refused $'new\n")(allow default)("' "control character in path"
}

@test "seatbelt: other control characters are refused" {
	refused $'tab\there' "control character in path"
	refused $'cr\rhere' "control character in path"
	refused $'bell\001' "control character in path"
	refused $'del\177' "control character in path"
}

@test "seatbelt: a path that is not UTF-8 is refused" {
	mkdir -p "$ws/$(printf 'bad\377')" 2>/dev/null ||
	    sbx_skip "this file system refuses names that are not UTF-8"
	refused "$(printf 'bad\377')" "path is not valid UTF-8"
	refused "$(printf 'overlong\300\257')" "path is not valid UTF-8"
}

@test "seatbelt: a path too long for a profile string is refused" {
	local long=$ws i
	for i in 1 2 3 4 5 6; do
		long="$long/$(printf 'd%.0s' $(seq 1 180))"
	done
	mkdir -p "$long" 2>/dev/null ||
	    sbx_skip "this file system refuses paths of 1100 bytes"
	run --separate-stderr "$SBX" --backend seatbelt --dry-run -C "$ws" \
	    --no-protect --deny-write "$long" -- true
	[ "$status" -eq 125 ]
	grep -q '^sbx: seatbelt: .*: path too long for a Seatbelt profile$' \
	    <<<"$stderr"
}

@test "seatbelt: a path whose regex is too long for a profile string is refused" {
	# 300 bytes as a path, 1200 and more as a regex of both cases.
	local long
	long="$ws/$(printf 'd%.0s' $(seq 1 150))/$(printf 'e%.0s' $(seq 1 150))"
	mkdir -p "$long"
	run --separate-stderr "$SBX" --backend seatbelt --dry-run -C "$ws" \
	    --no-protect --deny-write "$long" -- true
	[ "$status" -eq 125 ]
	grep -q '^sbx: seatbelt: .*: path too long for a Seatbelt profile$' \
	    <<<"$stderr"
}

@test "seatbelt: a root with a quote is written escaped in every rule" {
	ws="$top/it's \"here\""
	mkdir -p "$ws/.git/hooks"
	sb
	has "(allow file-write* (subpath $(q "$ws")))"
	has "(deny file-write* (regex $(rx "$ws/.git/hooks"))) ; protected"
	has "    (literal $(q "$ws")))"
}

@test "seatbelt: the probe says macOS only elsewhere" {
	[ "$(uname -s)" != Darwin ] || skip "macOS: t/macos.bats probes"
	run --separate-stderr "$SBX" --probe
	grep -qx 'seatbelt=unavailable' <<<"$output"
	run --separate-stderr "$SBX" --backend seatbelt -C "$ws" -- true
	[ "$status" -eq 125 ]
	grep -q '^sbx: .*macOS only' <<<"$stderr"
}

@test "seatbelt: a protected name that is a link is held by name, and at its target" {
	mkdir -p "$ws/hooks-src" "$ws/.git"
	rm -rf "$ws/.git/hooks"
	ln -s ../hooks-src "$ws/.git/hooks"
	sb
	has "(deny file-write* (regex $(rx "$ws/.git/hooks"))) ; protected, not there yet"
	has "(deny file-write* (regex $(rx "$ws/hooks-src"))) ; protected"
}
