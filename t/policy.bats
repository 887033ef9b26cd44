#!/usr/bin/env bats
# The plan, golden: what `sbx --dry-run --backend bwrap|landlock` prints
# for a policy, which is exactly what a run would execute. Pure: no sandbox
# runs, so this suite works on any machine, with no working backend. It
# pins the protected list, --scope ordering, the pins and placeholders, the
# environment, the proxy's variables and the Landlock rules.

load helper
bats_require_minimum_version 1.5.0

setup() {
	top=$(cd "$BATS_TEST_TMPDIR" && pwd -P)
	ws="$top/ws"
	home="$top/home"
	mkdir -p "$ws/.git/hooks" "$ws/src" "$home"
	printf '[core]\n' >"$ws/.git/config"
	printf 'hook\n' >"$ws/.git/hooks/pre-commit"
	cd "$ws" || return 1
}

# dry BACKEND ARGS...: the dry run, in a fixed environment; one word of the
# launch line, the last line, per line in $words (the comment lines and a
# Seatbelt profile, whose comments may hold a lone quote, stay whole in
# $output).
dry() {
	local b=$1
	shift
	run --separate-stderr env -i PATH=/usr/bin:/bin HOME="$home" LANG=C.UTF-8 \
	    "$SBX" --dry-run --backend "$b" "$@" </dev/null
	[ "$status" -eq 0 ] || { echo "status $status: $stderr" >&2; return 1; }
	words=$(printf '%s\n' "$output" | tail -n 1 | python3 -c '
import shlex, sys
for w in shlex.split(sys.stdin.read()):
    print(w)')
}

# in_order LINE...: the lines appear in $words in this order, each right
# after the one before (a block).
in_order() {
	python3 -c '
import sys
want = sys.argv[1:]
have = sys.stdin.read().split("\n")
for i in range(len(have) - len(want) + 1):
    if have[i:i + len(want)] == want:
        sys.exit(0)
sys.exit(1)' "$@" <<<"$words" || {
		echo "not in order: $*" >&2
		printf '%s\n' "$words" >&2
		return 1
	}
}

# binds KIND PATH [KIND PATH...]: PATH bound, each right after the one
# before; KIND ro or rw, by descriptor (--ro-bind-fd N PATH) or by name
# (--ro-bind PATH PATH, --bind-try PATH PATH).
binds() {
	python3 -c '
import sys
a = sys.argv[1:]
want = list(zip(a[0::2], a[1::2]))
w = sys.stdin.read().split("\n")
def at(i, kind, path):
    fd = "--ro-bind-fd" if kind == "ro" else "--bind-fd"
    names = ("--ro-bind", "--ro-bind-try") if kind == "ro" else \
        ("--bind", "--bind-try")
    if i + 2 >= len(w) or w[i + 2] != path:
        return -1
    if w[i] == fd and w[i + 1].isdigit():
        return i + 3
    if w[i] in names and w[i + 1] == path:
        return i + 3
    return -1
for i in range(len(w)):
    for kind, path in want:
        i = at(i, kind, path)
        if i < 0:
            break
    else:
        sys.exit(0)
sys.exit(1)' "$@" <<<"$words" || {
		echo "not bound in order: $*" >&2
		printf '%s\n' "$words" >&2
		return 1
	}
}

# held PATH: the supervisor holds PATH by name, a missing one (bwrap).
held() {
	grep -qxF "# supervisor: held $1 (missing)" <<<"$output" || {
		echo "not held: $1" >&2
		grep '^# supervisor' <<<"$output" >&2
		return 1
	}
}

# before A B: the first line A comes before the first line B in $words.
before() {
	local a b
	a=$(grep -nxF -- "$1" <<<"$words" | head -n 1 | cut -d: -f1)
	b=$(grep -nxF -- "$2" <<<"$words" | head -n 1 | cut -d: -f1)
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ]
}

@test "bwrap: the workspace is bound writable, the rest read-only, /dev and /proc last" {
	dry bwrap -- true
	in_order --ro-bind / /
	in_order --bind-fd 10 "$ws"
	grep -qxF "# fd 10: $ws (opened when sbx checked it)" <<<"$output"
	grep -qx "# shim checks: rw [0-9]*:[0-9]* $ws" <<<"$output"
	in_order --mounts -- true
	in_order --dev /dev --proc /proc --remount-ro /proc --chdir "$ws"
	before "$ws" --dev
	[[ "$output" == "# seccomp flavour=bwrap "* ]]
}

@test "bwrap: the protected list read-only, no pin on the folder above it" {
	dry bwrap -- true
	in_order --bind-fd 10 "$ws"
	binds ro "$ws/.git/hooks"
	binds ro "$ws/.git/config"
	! binds rw "$ws/.git" 2>/dev/null || return 1
	grep -qx "# shim checks: ro [0-9]*:[0-9]* $ws/.git/hooks" <<<"$output"
	before "$ws/.git/hooks" --dev
}

@test "bwrap: a missing hooks folder is held by name, no mount" {
	rm -r "$ws/.git/hooks"
	dry bwrap -- true
	held "$ws/.git/hooks"
	! grep -qxF "$ws/.git/hooks" <<<"$words" || return 1
	[ ! -e "$ws/.git/hooks" ]
}

@test "bwrap: --no-protect drops the protected list and the pins" {
	dry bwrap --no-protect -- true
	! grep -qxF "$ws/.git/hooks" <<<"$words" || return 1
	! grep -qxF "$ws/.git" <<<"$words"
}

@test "bwrap: --scope: the root read-only, then the scope paths, then the exceptions" {
	dry bwrap --scope src --deny-write src/x 2>/dev/null || true
	mkdir -p src/x
	dry bwrap --scope src --deny-write src/x -- true
	in_order --ro-bind-fd 10 "$ws" --bind-fd 11 "$ws/src"
	in_order --ro-bind-fd 12 "$ws/src/x"
	before "$ws/src" "$ws/src/x"
}

@test "bwrap: --deny-read hides a folder under an empty read-only tmpfs" {
	mkdir secret
	dry bwrap --deny-read secret -- true
	in_order --perms 0555 --tmpfs "$ws/secret" --remount-ro "$ws/secret"
}

@test "bwrap: the environment goes in wrapped, exactly, and bwrap gets none" {
	dry bwrap -e FOO=bar -e 'ODD=a b'"'"'c' -- true
	in_order --setenv SBX_ENV_0 PATH=/usr/bin:/bin
	in_order --setenv SBX_ENV_1 "HOME=$home"
	in_order --setenv SBX_ENV_2 LANG=C.UTF-8
	in_order --setenv SBX_ENV_3 TMPDIR=/tmp
	in_order --setenv SBX_ENV_4 FOO=bar
	in_order --setenv SBX_ENV_5 "ODD=a b'c"
	# env -i and straight to bwrap: nothing between.
	in_order env -i /usr/bin/bwrap
	in_order --wrapped-env --reopen 0 /dev/null --mounts -- true
}

@test "bwrap: --allow-host: the proxy's variables, and the shim's bridge" {
	dry bwrap --allow-host registry.example.org -- env
	in_order --setenv SBX_ENV_4 HTTP_PROXY=http://127.0.0.1:3128
	grep -qx 'HTTPS_PROXY=http://127.0.0.1:3128' <<<"$words"
	grep -qx 'NO_PROXY=localhost,127.0.0.1,::1' <<<"$words"
	grep -qx 'NODE_USE_ENV_PROXY=1' <<<"$words"
	grep -q '^MAVEN_OPTS=-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128' <<<"$words"
	grep -qx -- --bridge <<<"$words"
	! grep -q -- --unshare-net <<<"$(dry bwrap --net -- env; echo "$words")"
}

@test "bwrap: -e MAVEN_OPTS is kept, the proxy's properties added to it" {
	dry bwrap -e MAVEN_OPTS=-Xmx1g --allow-host registry.example.org -- true
	grep -q '^MAVEN_OPTS=-Xmx1g -Dhttp.proxyHost=127.0.0.1 ' <<<"$words"
}

@test "landlock: one line per rule, its path and its rights" {
	dry landlock -- true
	[[ "$output" == *"# landlock abi=6 handled="*refer,truncate,ioctl_dev* ]]
	grep -qx "# landlock network=bind_tcp,connect_tcp scoped=signal,abstract_unix" <<<"$output"
	# Reads everywhere; the workspace's entries writable around .git.
	grep -qx '# landlock allow / read_dir' <<<"$output"
	grep -qE "^# landlock allow $ws/src write_file,remove_dir,remove_file,make_char,make_dir,make_reg" <<<"$output"
	! grep -qE "^# landlock allow $ws .*write_file" <<<"$output" || return 1
	! grep -qE "^# landlock allow $ws/.git/hooks .*write_file" <<<"$output" || return 1
	! grep -qE "^# landlock allow $ws/.git/config .*write_file" <<<"$output" || return 1
	grep -qE "^# seccomp flavour=landlock inet=supervisor unix=no metadata=supervisor" <<<"$output"
	# The launch is the command itself, with its environment.
	[ "$(printf '%s\n' "$output" | tail -n 1)" = "env -i PATH=/usr/bin:/bin HOME=$home LANG=C.UTF-8 true" ]
}

@test "landlock: --deny-read takes the folder out of every grant" {
	mkdir secret
	touch secret/key
	dry landlock --deny-read secret -- true
	! grep -qE "^# landlock allow $ws/secret " <<<"$output" || return 1
	! grep -qE "^# landlock allow $ws/secret/" <<<"$output" || return 1
	grep -qE "^# landlock allow $ws/src .*write_file" <<<"$output"
}

@test "landlock: --net leaves the network unhandled and the filter open" {
	dry landlock --net -- true
	grep -qx "# landlock network=open scoped=signal,abstract_unix" <<<"$output"
	grep -qE "^# seccomp flavour=landlock inet=yes" <<<"$output"
}

@test "host: --allow-host's variables name the proxy's own port" {
	run --separate-stderr env -i PATH=/usr/bin:/bin "$SBX" --dry-run \
	    --sandbox host --allow-host registry.example.org -- env
	[ "$status" -eq 0 ]
	[[ "$output" =~ HTTP_PROXY=http://127.0.0.1:([0-9]+) ]]
	[ "${BASH_REMATCH[1]}" -gt 0 ]
	[ "${BASH_REMATCH[1]}" != 3128 ]
}

@test "seatbelt: the profile comes first, then the line" {
	dry seatbelt -- true
	[ "$(printf '%s\n' "$output" | head -n 1)" = "(version 1)" ]
	in_order /usr/bin/sandbox-exec -f /dev/fd/3 --
}

@test "bwrap: the private /tmp is a tmpfs before every rule, bounded, TMPDIR=/tmp" {
	dry bwrap -- true
	# root's line keeps the capabilities that --cap-add names; nobody's
	# has none to keep
	if is_root; then in_order --ro-bind / / --cap-add; fi
	grep -qx -- --size <<<"$words"
	before --tmpfs "$ws"
	# sbx itself, when it lives in /tmp (a clone there), is bound back
	# over the tmpfs so that the shim can run
	self=$(realpath "$SBX")
	if [[ "$self" == /tmp/* ]]; then
		in_order --perms 1777 --tmpfs /tmp --ro-bind "$self" "$self" \
		    --bind-fd 10 "$ws"
	else
		in_order --perms 1777 --tmpfs /tmp --bind-fd 10 "$ws"
	fi
	grep -qxF "# shim checks: tmp - /tmp" <<<"$output"
	grep -qx TMPDIR=/tmp <<<"$words"
	# -e TMPDIR wins; --host-tmp: no tmpfs, the host's TMPDIR.
	dry bwrap -e TMPDIR=/x -- true
	grep -qx TMPDIR=/x <<<"$words"
	dry bwrap --host-tmp -- true
	! grep -qx /tmp <<<"$words" || return 1
	! grep -q '^TMPDIR=' <<<"$words"
}

@test "landlock: a dry run makes no temp folder; its plan shows none" {
	dry landlock -- true
	! grep -q 'sbx-[0-9]*/run-' <<<"$output" || return 1
	! grep -q '^TMPDIR=' <<<"$words"
	# The grant of a real run: t/everyday.bats.
}

@test "bwrap: a missing --deny-read or --deny-write path: held by name where it could be made" {
	mkdir sub
	dry bwrap --deny-read sub/a/b --deny-write .env --deny-read "$home/.aws" -- true
	held "$ws/sub/a"
	held "$ws/.env"
	! grep -qxF "$ws/sub/a" <<<"$words" || return 1
	! grep -qxF "$ws/.env" <<<"$words" || return 1
	# Outside the writable folders nothing can make it: no mount.
	! grep -qx "$home/.aws" <<<"$words" || return 1
	[ ! -e "$ws/sub/a" ] && [ ! -e "$ws/.env" ]
}

@test "landlock: a missing --deny path: its folder granted around it" {
	mkdir sub
	touch sub/keep
	dry landlock --deny-read sub/missing -- true
	! grep -qE "^# landlock allow $ws/sub .*write_file" <<<"$output" || return 1
	grep -qE "^# landlock allow $ws/sub/keep .*write_file" <<<"$output"
}

@test "seccomp: the chown family is answered, not refused, for both flavours" {
	dry bwrap -- true
	grep -qE '^# seccomp flavour=bwrap .*chown=noop' <<<"$output"
	dry landlock -- true
	grep -qE '^# seccomp flavour=landlock .*chown=noop' <<<"$output"
}

@test "bwrap: every git name is held in a git folder, there or not" {
	dry bwrap -- true
	binds ro "$ws/.git/hooks"
	binds ro "$ws/.git/config"
	held "$ws/.git/config.worktree"
	held "$ws/.git/commondir"
	held "$ws/.git/worktrees"
	held "$ws/.git/modules"
	# Editor and agent folders in the workspace, by name.
	held "$ws/.vscode"
	held "$ws/.claude"
	# A dry run makes nothing.
	[ ! -e "$ws/.git/commondir" ] && [ ! -e "$ws/.git/worktrees" ] && [ ! -e "$ws/.vscode" ]
}

@test "bwrap: modules/ is read-only whole, each worktree's pointers; commondir's target is held" {
	mkdir -p "$ws/.git/worktrees/wt" "$ws/.git/modules/lib/hooks" "$top/common/hooks"
	echo ../.. >"$ws/.git/worktrees/wt/commondir"
	echo "$top/wt/.git" >"$ws/.git/worktrees/wt/gitdir"
	printf '%s\n' "$top/common" >"$ws/.git/commondir"
	touch "$top/common/hooks/pre-commit"
	dry bwrap -w "$top/common" -- true
	binds ro "$ws/.git/worktrees/wt/commondir"
	binds ro "$ws/.git/worktrees/wt/gitdir"
	held "$ws/.git/worktrees/wt/config.worktree"
	# worktrees/ itself stays writable.
	! binds ro "$ws/.git/worktrees" 2>/dev/null || return 1
	binds ro "$ws/.git/modules"
	binds ro "$ws/.git/commondir"
	binds ro "$top/common/hooks"
	held "$top/common/config"
}

@test "bwrap: a .git file's git folder is held where it is writable" {
	mkdir -p "$top/main/.git/worktrees/ws/hooks" "$top/main/.git/objects" "$top/main/.git/refs"
	rm -rf "$ws/.git"
	printf 'gitdir: %s\n' "$top/main/.git/worktrees/ws" >"$ws/.git"
	printf '../..\n' >"$top/main/.git/worktrees/ws/commondir"
	dry bwrap -- true
	binds ro "$ws/.git"
	# Not writable: nothing to hold there.
	! grep -qx "$top/main/.git/worktrees/ws/hooks" <<<"$words" || return 1
	dry bwrap -w "$top/main" -- true
	binds ro "$top/main/.git/worktrees/ws/commondir"
	held "$top/main/.git/config"
	held "$top/main/.git/hooks"
}

@test "bwrap: a bare repository as the root or with --write holds its hooks and config" {
	mkdir -p "$top/bare.git/objects" "$top/bare.git/refs" "$top/bare.git/hooks"
	touch "$top/bare.git/hooks/pre-receive.sample"
	echo 'ref: refs/heads/main' >"$top/bare.git/HEAD"
	printf '[core]\n\tbare = true\n' >"$top/bare.git/config"
	dry bwrap -w "$top/bare.git" -- true
	binds ro "$top/bare.git/hooks"
	binds ro "$top/bare.git/config"
	held "$top/bare.git/commondir"
	dry bwrap -C "$top/bare.git" -- true
	binds ro "$top/bare.git/hooks"
}

@test "a writable home is allowed, on every backend, its start-up names held" {
	for w in "-C $home" "-w $top"; do
		# shellcheck disable=SC2086
		dry bwrap $w -- true
		[ -z "$stderr" ]
		# The writable folder; the home not sealed: its names held.
		binds rw "${w#-? }"
		! binds ro "$home" 2>/dev/null || return 1
		held "$home/.bash_login"
		# shellcheck disable=SC2086
		dry landlock $w -- true
		[ -z "$stderr" ]
		grep -qxF "# supervisor: entries of $home and of the folders made in it" <<<"$output"
		# shellcheck disable=SC2086
		dry seatbelt $w -- true
		[ -z "$stderr" ]
		grep -qF '/\\.[Bb][Aa][Ss][Hh]_[Ll][Oo][Gg][Ii][Nn](/.*)?$")) ; protected, not there yet' <<<"$output"
	done
	# Below the home is no writable home: its names are held there.
	mkdir -p "$home/.config"
	dry bwrap -w "$home/.config" -- true
	binds rw "$home/.config"
}

@test "bwrap: a writable home is not sealed: its missing start-up names are held by name" {
	mkdir -p "$home/.config/other" "$home/proj"
	echo p >"$home/.profile"
	dry bwrap -C "$home" -- true
	binds rw "$home"
	binds ro "$home/.profile"
	! binds ro "$home" 2>/dev/null || return 1
	! binds ro "$home/.config" 2>/dev/null || return 1
	! binds rw "$home/proj" 2>/dev/null || return 1
	held "$home/.bash_login"
	held "$home/.config/git"
	held "$home/.vscode"
}

@test "landlock: missing protected names are the supervisor's" {
	dry landlock -- true
	grep -qxF "# supervisor: entries of $ws/.git and of the folders made in it" <<<"$output"
	grep -qxF "# supervisor: entries of $ws and of the folders made in it" <<<"$output"
	dry landlock -C "$home" -- true
	grep -qxF "# supervisor: entries of $home and of the folders made in it" <<<"$output"
}

@test "a submodule path that names its own git folder, or a fan of them, is walked once" {
	# .git/config's own "path = ." led back to itself without end (a
	# crash); 60 of them in a nested repository's .gitmodules, 60^4 walks.
	printf '[submodule "x"]\n\tpath = .\n' >>"$ws/.git/config"
	mkdir -p "$ws/src/p/.git/hooks"
	for i in $(seq 60); do
		printf '[submodule "a%d"]\n\tpath = .\n' "$i"
	done >"$ws/src/p/.gitmodules"
	run --separate-stderr timeout 10 env -i PATH=/usr/bin:/bin HOME="$home" \
	    "$SBX" --dry-run --backend bwrap -C "$ws/src" -- true </dev/null
	[ "$status" -eq 0 ]
	dry bwrap -- true
	binds ro "$ws/.git/hooks"
}
