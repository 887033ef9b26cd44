#!/usr/bin/env bats
# Git folders and start-up files under attack, on bwrap and Landlock alike:
# what the command writes in a git folder or a home must not run code
# outside the sandbox later, whether or not the name existed when the run
# started. Each attack is checked the way it would bite (a git command run
# outside, after the run), each with a positive control (--no-protect, or
# the same write elsewhere). Runs as root and as nobody (t/run).

load helper
bats_require_minimum_version 1.5.0

setup() {
	require_cmd git
	top=$(cd "$BATS_TEST_TMPDIR" && pwd -P)
	ws="$top/ws"
	out="$top/out"
	home="$top/home"
	mkdir -p "$ws" "$out" "$home"
	export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com \
	    GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
	git -C "$ws" init -q
	git -C "$ws" commit -q --allow-empty -m one
	pids=()
}

teardown() {
	if [ -n "${scratch:-}" ]; then
		rm -rf "$scratch"
	fi
	kill_bg
}

need() {
	case $1 in
	bwrap) require_bwrap ;;
	landlock) require_landlock ;;
	esac
}

# sb BACKEND ARGS...: sbx on BACKEND in $ws with the test's HOME; the host's
# /tmp, where bats keeps this test's folders, stays visible (read-only).
sb() {
	local b=$1
	shift
	HOME="$home" run --separate-stderr "$SBX" --backend "$b" --host-tmp \
	    -C "$ws" -e GIT_CONFIG_NOSYSTEM -e GIT_AUTHOR_NAME -e GIT_AUTHOR_EMAIL \
	    -e GIT_COMMITTER_NAME -e GIT_COMMITTER_EMAIL "$@" 3>&-
	echo "status=$status"
	echo "$output"
	echo "stderr: $stderr"
}

# fsmonitor FILE MARK: a git config that runs a command at `git status`.
fsmonitor() {
	printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$2" >"$1"
}

# A config of the command's own, in the workspace, and .git/commondir
# pointing there: `git status` outside then runs its fsmonitor.
commondir_attack() {
	local b=$1
	shift
	need "$b"
	sb "$b" "$@" -- sh -c '
		mkdir evil && cp -r .git/objects .git/refs .git/HEAD evil/ || exit 10
		# evil has a HEAD: a git folder, whose config is held too
		# (unless --no-protect); config first, the HEAD after it is
		# judged by it then
		printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$1" \
		    >evil/config 2>/dev/null || {
			rm evil/HEAD &&
			    printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" \
			    "$1" >evil/config || exit 11
			cp .git/HEAD evil/ 2>/dev/null && exit 12
		}
		echo ../evil > .git/commondir 2>/dev/null
		exit 0' sh "$out/fsmonitor-ran"
	[ "$status" -eq 0 ]
	(cd "$ws" && git status >/dev/null 2>&1) || true
}

@test "bwrap: .git/commondir cannot point git at the command's own config" {
	commondir_attack bwrap
	[ ! -e "$out/fsmonitor-ran" ]
	[ ! -e "$ws/.git/commondir" ]
}

@test "landlock: .git/commondir cannot point git at the command's own config" {
	commondir_attack landlock
	[ ! -e "$out/fsmonitor-ran" ]
	[ ! -e "$ws/.git/commondir" ]
}

@test "bwrap: the commondir attack works with --no-protect (positive control)" {
	commondir_attack bwrap --no-protect
	[ -e "$out/fsmonitor-ran" ]
}

@test "landlock: the commondir attack works with --no-protect (positive control)" {
	commondir_attack landlock --no-protect
	[ -e "$out/fsmonitor-ran" ]
}

# config.worktree is read once the worktree extension is on (git
# sparse-checkout init turns it on), outside, after the run.
worktree_config_attack() {
	local b=$1
	shift
	need "$b"
	sb "$b" "$@" -- sh -c '
		printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$1" \
		    >.git/config.worktree 2>/dev/null
		exit 0' sh "$out/fsmonitor-ran"
	[ "$status" -eq 0 ]
	git -C "$ws" config core.repositoryformatversion 1
	git -C "$ws" config extensions.worktreeConfig true
	(cd "$ws" && git status >/dev/null 2>&1) || true
}

@test "bwrap: .git/config.worktree cannot be planted" {
	worktree_config_attack bwrap
	[ ! -e "$out/fsmonitor-ran" ]
	[ ! -e "$ws/.git/config.worktree" ]
}

@test "landlock: .git/config.worktree cannot be planted" {
	worktree_config_attack landlock
	[ ! -e "$out/fsmonitor-ran" ]
	[ ! -e "$ws/.git/config.worktree" ]
}

@test "bwrap: config.worktree planted with --no-protect runs (positive control)" {
	need bwrap
	worktree_config_attack bwrap --no-protect
	[ -e "$out/fsmonitor-ran" ]
}

# worktrees/ and modules/: the git folders of linked worktrees and of
# submodules, with their own config, hooks and pointers.
more_gitdirs() {
	local b=$1
	need "$b"
	mkdir -p "$ws/.git/modules/lib/hooks"
	sb "$b" -- sh -c '
		mkdir -p .git/worktrees/x 2>/dev/null && exit 10
		echo ../.. > .git/worktrees/x/commondir 2>/dev/null && exit 11
		echo "#!/bin/sh" > .git/modules/lib/hooks/post-checkout 2>/dev/null && exit 12
		mkdir .git/modules/other 2>/dev/null && exit 13
		echo "[core]" > .git/modules/lib/config 2>/dev/null && exit 14
		rm -rf .git/modules 2>/dev/null; [ -d .git/modules/lib ] || exit 15
		exit 0'
	[ "$status" -eq 0 ]
	[ ! -e "$ws/.git/worktrees" ]
	[ ! -e "$ws/.git/modules/lib/hooks/post-checkout" ]
	[ ! -e "$ws/.git/modules/other" ]
}

@test "bwrap: worktrees/ and modules/ cannot be made, modules/ is read-only" {
	more_gitdirs bwrap
}

@test "landlock: worktrees/ and modules/ cannot be made, modules/ is read-only" {
	more_gitdirs landlock
}

# A bare repository given as the root: hooks/pre-receive runs at the next
# push into it, from outside.
bare_attack() {
	local b=$1
	shift
	need "$b"
	git clone -q --bare "$ws" "$top/bare.git"
	rm -rf "$top/bare.git/hooks"
	HOME="$home" run --separate-stderr "$SBX" --backend "$b" --host-tmp \
	    -C "$top/bare.git" "$@" -- sh -c '
		mkdir -p hooks 2>/dev/null
		printf "#!/bin/sh\ntouch %s\n" "$1" > hooks/pre-receive 2>/dev/null &&
		    chmod +x hooks/pre-receive
		printf "[alias]\n\tplanted = !true\n" >> config 2>/dev/null
		exit 0' sh "$out/pre-receive-ran" 3>&-
	[ "$status" -eq 0 ]
	git -C "$ws" commit -q --allow-empty -m two
	git -C "$ws" push -q "$top/bare.git" HEAD:refs/heads/new 2>/dev/null || true
}

@test "bwrap: a bare repository as the root: its hooks and config hold" {
	bare_attack bwrap
	[ ! -e "$out/pre-receive-ran" ]
	[ ! -e "$top/bare.git/hooks" ]
	! grep -q planted "$top/bare.git/config" || return 1
}

@test "landlock: a bare repository as the root: its hooks and config hold" {
	bare_attack landlock
	[ ! -e "$out/pre-receive-ran" ]
	[ ! -e "$top/bare.git/hooks" ]
	! grep -q planted "$top/bare.git/config" || return 1
}

@test "bwrap: the bare repository attack works with --no-protect (positive control)" {
	bare_attack bwrap --no-protect
	[ -e "$out/pre-receive-ran" ]
}

# A linked worktree, its common git folder writable (-w): commits work,
# its pointers and config.worktree hold, and so do the common hooks.
linked_worktree() {
	local b=$1
	need "$b"
	git -C "$ws" worktree add -q "$top/wt" 2>/dev/null
	HOME="$home" run --separate-stderr "$SBX" --backend "$b" --host-tmp \
	    -C "$top/wt" -w "$ws/.git" -e GIT_AUTHOR_NAME -e GIT_AUTHOR_EMAIL \
	    -e GIT_COMMITTER_NAME -e GIT_COMMITTER_EMAIL -- sh -c '
		git commit -q --allow-empty -m in-wt || exit 10
		g=$(git rev-parse --git-dir)
		echo "$1" > "$g/commondir" 2>/dev/null && exit 11
		echo "[core]" > "$g/config.worktree" 2>/dev/null && exit 12
		echo x > "$g/gitdir" 2>/dev/null && exit 13
		echo "#!/bin/sh" > "$(git rev-parse --git-common-dir)/hooks/post-commit" 2>/dev/null && exit 14
		exit 0' sh "$top/evil" 3>&-
	[ "$status" -eq 0 ]
	[ "$(git -C "$top/wt" log --format=%s -1)" = in-wt ]
	[ "$(cat "$ws/.git/worktrees/wt/commondir")" = ../.. ]
	[ ! -e "$ws/.git/worktrees/wt/config.worktree" ]
}

@test "bwrap: a linked worktree commits; its pointers and config.worktree hold" {
	linked_worktree bwrap
}

@test "landlock: a linked worktree commits; its pointers and config.worktree hold" {
	linked_worktree landlock
}

# What a run leaves: nothing of its placeholders; git works inside.
real_git() {
	local b=$1
	need "$b"
	git init -q --bare "$top/remote.git"
	git -C "$ws" push -q "$top/remote.git" HEAD:refs/heads/main
	git -C "$top/remote.git" update-ref refs/heads/extra refs/heads/main
	git -C "$ws" remote add origin "$top/remote.git"
	before=$(cd "$ws" && ls -A . .git)
	sb "$b" -- sh -c '
		set -e
		echo a > a; git add a; git commit -qm two
		git checkout -q -b topic; echo b > b; git add b; git commit -qm three
		git checkout -q -
		git fetch -q origin
		git rev-parse -q --verify origin/extra >/dev/null
		git status --short
		git init -q sub && cd sub && git commit -q --allow-empty -m sub
		echo done'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'done\n' ]
	[ "$(git -C "$ws" log --format=%s topic | head -n 1)" = three ]
	git -C "$ws" rev-parse -q --verify origin/extra >/dev/null
	# Nothing left of the placeholders: the same names as before, plus
	# what git made (a, COMMIT_EDITMSG, ORIG_HEAD, ...).
	after=$(cd "$ws" && ls -A . .git)
	for n in commondir worktrees modules config.worktree .vscode .claude .idea; do
		! grep -qx "$n" <<<"$after" || { echo "left: $n" >&2; return 1; }
	done
	[ -n "$before" ]
}

@test "bwrap: git commit, checkout and fetch from a local remote work; nothing left behind" {
	real_git bwrap
}

@test "landlock: git commit, checkout and fetch from a local remote work; nothing left behind" {
	real_git landlock
}

# A writable home: allowed, as any folder, and every start-up name is
# held, there or not.
home_attack() {
	local b=$1
	need "$b"
	echo 'orig profile' >"$home/.profile"
	echo 'orig rc' >"$home/.bashrc"
	echo 'notes' >"$home/notes"
	mkdir -p "$home/.config/other"
	# Existing ones: under bwrap's seal these stay writable unless held.
	for f in .lesskey .config/lesskey .curlrc .wgetrc .irbrc .netrc .mailcap; do
		echo orig >"$home/$f"
	done
	# Folders a real home has, where a new file runs code later.
	mkdir -p "$home/.local/lib/python3/site-packages" "$home/.pyenv/shims"
	before=$(cd "$home" && ls -A . .config)
	HOME="$home" run --separate-stderr "$SBX" --backend "$b" --host-tmp -C "$home" \
	    -- sh -c '
		echo ok > notes || exit 10
		echo ok > .config/other/x || exit 11
		for f in .bash_login .bash_profile .zlogin .zshenv .gitconfig .xsession \
		    .config/git .config/autostart .config/systemd .config/fish \
		    .ssh .local/bin .cargo/config.toml .npmrc .emacs .vimrc \
		    .config/go/env .local/lib/python3/site-packages/x.pth \
		    .gdbinit .bash_completion .tmux.conf .pyenv/shims/python3 \
		    .local/share/applications/x.desktop .ipython/x .lesskey \
		    .config/lesskey .curlrc .wgetrc .irbrc .cargo/env .netrc \
		    .local/share/uv/tools/x .mailcap .config/mimeapps.list \
		    .config/helix/config.toml .vscode-server/x .rbenv/shims/ruby; do
			mkdir -p "$(dirname "$f")" 2>/dev/null
			mkdir -p "$f" 2>/dev/null && echo "made $f"
			echo evil >"$f" 2>/dev/null && echo "wrote $f"
		done
		echo evil >>.bashrc 2>/dev/null && echo "wrote .bashrc"
		exit 0' 3>&-
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = '' ]
	[ "$(cat "$home/notes")" = ok ] && [ "$(cat "$home/.config/other/x")" = ok ]
	[ "$(cat "$home/.bashrc")" = 'orig rc' ]
	for f in .lesskey .config/lesskey .curlrc .wgetrc .irbrc .netrc .mailcap; do
		[ "$(cat "$home/$f")" = orig ] || { echo "changed: $f" >&2; return 1; }
	done
	for f in .bash_login .bash_profile .zlogin .gitconfig .config/git .config/autostart .ssh \
	    .config/go .local/lib/python3/site-packages/x.pth .gdbinit .bash_completion \
	    .pyenv/shims/python3 .local/share/applications .cargo/env .local/share/uv \
	    .config/mimeapps.list .config/helix .vscode-server .rbenv; do
		[ ! -e "$home/$f" ] || { echo "made: $f" >&2; return 1; }
	done
}

@test "bwrap: a writable home's start-up names hold, there or not" {
	home_attack bwrap
}

@test "landlock: a writable home's start-up names hold, there or not" {
	home_attack landlock
}

@test "bwrap: a writable home takes new files and renames; its start-up names stay held" {
	need bwrap
	mkdir -p "$home/proj"
	HOME="$home" run --separate-stderr "$SBX" --backend bwrap --host-tmp -C "$home" \
	    -- sh -c '
		echo x > new-file || exit 10
		echo x > proj/new-file || exit 11
		mv new-file renamed || exit 12
		echo x > .zshrc 2>/dev/null && exit 13
		exit 0' 3>&-
	[ "$status" -eq 0 ]
	[ -e "$home/proj/new-file" ] && [ -e "$home/renamed" ]
	[ ! -e "$home/.zshrc" ]
}

# Editor and agent configuration in a workspace, missing at the start.
workspace_names() {
	local b=$1
	need "$b"
	sb "$b" -- sh -c '
		mkdir -p .vscode 2>/dev/null; echo "{}" > .vscode/tasks.json 2>/dev/null && echo vscode
		mkdir -p .claude 2>/dev/null; echo "{}" > .claude/settings.json 2>/dev/null && echo claude
		mkdir -p .git/hooks 2>/dev/null; echo "#!/bin/sh" > .git/hooks/pre-commit 2>/dev/null && echo hook
		echo "{}" > .mcp.json 2>/dev/null && echo mcp
		echo "export A=1" > .envrc 2>/dev/null && echo envrc
		for d in .gemini .codex .zed .kiro .amazonq .roo .continue; do
			mkdir -p $d 2>/dev/null; echo "{}" > $d/settings.json 2>/dev/null && echo $d
		done
		echo "{}" > opencode.json 2>/dev/null && echo opencode
		# Positive control: other new names stay writable.
		mkdir -p .other && echo "{}" > .other/settings.json || echo other-refused
		exit 0'
	[ "$status" -eq 0 ]
}

@test "bwrap: a workspace's missing editor and agent names are held; git sees no placeholder" {
	rm -rf "$ws/.git/hooks"
	workspace_names bwrap
	[ "$(kv stdout)" = '' ]
	[ ! -e "$ws/.vscode" ] && [ ! -e "$ws/.claude" ] && [ ! -e "$ws/.git/hooks" ]
	[ ! -e "$ws/.mcp.json" ] && [ ! -e "$ws/.envrc" ]
	[ ! -e "$ws/.gemini" ] && [ ! -e "$ws/opencode.json" ] && [ -e "$ws/.other/settings.json" ]
	rm -rf "$ws/.other"
	# The placeholders are empty folders: nothing for git to add.
	sb bwrap -- sh -c 'git add -A && git status --porcelain'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = '' ]
}

@test "landlock: a workspace's missing editor and agent names are held" {
	rm -rf "$ws/.git/hooks"
	workspace_names landlock
	[ "$(kv stdout)" = '' ]
	[ ! -e "$ws/.vscode" ] && [ ! -e "$ws/.mcp.json" ] && [ ! -e "$ws/.envrc" ]
	[ ! -e "$ws/.gemini" ] && [ ! -e "$ws/opencode.json" ] && [ -e "$ws/.other/settings.json" ]
}

# What the held config names: a hooks folder in the workspace (husky and
# the like set core.hooksPath), a config it includes, a program an alias
# runs. Each runs or is read by git outside, later.
config_refs() {
	local b=$1
	shift
	need "$b"
	mkdir -p "$ws/.githooks" "$ws/scripts"
	echo 'echo ok' >"$ws/scripts/tool.sh"
	: >"$ws/local.gitconfig"
	git -C "$ws" config core.hooksPath .githooks
	git -C "$ws" config include.path ../local.gitconfig
	git -C "$ws" config alias.tool '!./scripts/tool.sh'
	sb "$b" "$@" -- sh -c '
		printf "#!/bin/sh\ntouch %s\n" "$1" > .githooks/post-commit 2>/dev/null &&
		    chmod +x .githooks/post-commit
		printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$1" >> local.gitconfig 2>/dev/null
		printf "touch %s\n" "$1" >> scripts/tool.sh 2>/dev/null
		echo ok > scripts/other || exit 10
		exit 0' sh "$out/ran"
	[ "$status" -eq 0 ]
	(cd "$ws" && git commit -q --allow-empty -m two && git status >/dev/null && git tool >/dev/null) 2>/dev/null || true
}

@test "bwrap: core.hooksPath, an included config and an alias's script hold" {
	config_refs bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: core.hooksPath, an included config and an alias's script hold" {
	config_refs landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: what the config names is the command's with --no-protect (positive control)" {
	config_refs bwrap --no-protect
	[ -e "$out/ran" ]
}

@test "bwrap: a writable path the user cannot write in gets no placeholder, and the run works" {
	need bwrap
	is_root || skip "needs root to make a folder nobody cannot write in"
	command -v setpriv >/dev/null || sbx_skip "setpriv is not installed"
	# bats' own folder is root's alone: a folder nobody can reach.
	scratch=$(mktemp -d /tmp/sbx-git-ro.XXXXXX)
	chmod 755 "$scratch"
	git -C "$scratch" init -q
	rm -rf "$scratch/.git/hooks"
	before=$(cd "$scratch" && ls -A . .git)
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups \
	    env HOME=/nonexistent "$SBX" --backend bwrap --host-tmp -C "$scratch" -- true 3>&-
	[ "$status" -eq 0 ]
	[ "$(cd "$scratch" && ls -A . .git)" = "$before" ]
}

# A writable folder in the home, the home itself read-only: the start-up
# names in it hold, there or not (bwrap seals that folder).
config_folder() {
	local b=$1
	need "$b"
	mkdir -p "$home/.config/other"
	HOME="$home" run --separate-stderr "$SBX" --backend "$b" --host-tmp -C "$ws" \
	    -w "$home/.config" -- sh -c '
		echo ok > "$HOME/.config/other/x" || exit 10
		mkdir -p "$HOME/.config/autostart" 2>/dev/null && echo autostart
		mkdir -p "$HOME/.config/systemd/user" 2>/dev/null && echo systemd
		mkdir -p "$HOME/.config/git" 2>/dev/null && echo git
		echo "[core]" > "$HOME/.config/git" 2>/dev/null && echo git-file
		mv "$HOME/.config/other" "$HOME/.config/git" 2>/dev/null && echo moved
		exit 0' 3>&-
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = '' ]
	[ "$(cat "$home/.config/other/x")" = ok ]
	[ ! -e "$home/.config/autostart" ] && [ ! -e "$home/.config/git" ]
}

@test "bwrap: -w ~/.config: the start-up names there hold, there or not" {
	config_folder bwrap
	[ "$(ls -A "$home/.config")" = other ]
}

@test "landlock: -w ~/.config: the start-up names there hold, there or not" {
	config_folder landlock
}

# A submodule's .git: the pointer file, and an old-style git folder in
# the checkout. git status in the workspace outside runs git in each.
submodules() {
	local b=$1
	need "$b"
	git init -q "$top/lib"
	git -C "$top/lib" commit -q --allow-empty -m lib
	git -C "$ws" -c protocol.file.allow=always submodule -q add "$top/lib" lib
	git -C "$ws" commit -q -m sub
	git init -q "$ws/old"
	printf '[submodule "old"]\n\tpath = old\n\turl = ./old\n' >>"$ws/.gitmodules"
	ptr=$(cat "$ws/lib/.git")
	sb "$b" -- sh -c '
		mkdir -p evil.git
		echo "gitdir: ../evil.git" >lib/.git 2>/dev/null && echo "pointer"
		rm -f lib/.git 2>/dev/null && echo "removed pointer"
		echo evil >old/.git/hooks/post-checkout 2>/dev/null && echo "old hook"
		echo "[core]" >>old/.git/config 2>/dev/null && echo "old config"
		mv old/.git old/.git2 2>/dev/null && echo "moved old"
		# Positive control: the checkout itself is the command'"'"'s.
		echo x >lib/file && echo "lib file"
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'lib file\n' ]
	[ "$(cat "$ws/lib/.git")" = "$ptr" ]
	[ ! -e "$ws/old/.git/hooks/post-checkout" ]
}

@test "bwrap: a submodule's .git pointer and an old-style submodule's git folder are held" {
	submodules bwrap
}

@test "landlock: a submodule's .git pointer and an old-style submodule's git folder are held" {
	submodules landlock
}

# Repositories below a writable folder that is no repository's top
# (-C ~/src): their git names are held, two levels down.
below() {
	local b=$1
	need "$b"
	mkdir -p "$top/src/group"
	git init -q "$top/src/p1"
	git init -q "$top/src/group/p2"
	git init -q --bare "$top/src/b.git"
	ws="$top/src" sb "$b" -- sh -c '
		echo evil >p1/.git/hooks/post-commit 2>/dev/null && echo p1
		echo "[core]" >>group/p2/.git/config 2>/dev/null && echo p2
		echo evil >b.git/hooks/pre-receive 2>/dev/null && echo bare
		# Positive control: the files beside them are the command'"'"'s.
		echo x >p1/file && echo x >group/p2/file && echo files
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'files\n' ]
	[ ! -e "$top/src/p1/.git/hooks/post-commit" ]
	[ ! -e "$top/src/b.git/hooks/pre-receive" ]
}

@test "bwrap: repositories below a writable folder outside any repository are held" {
	below bwrap
}

@test "landlock: repositories below a writable folder outside any repository are held" {
	below landlock
}

# A bare repository: a .git made in it is the repository that the next
# push outside enters (git tries path/.git before path), with its hooks.
bare_dotgit() {
	local b=$1
	shift
	need "$b"
	git clone -q --bare "$ws" "$top/bare.git"
	HOME="$home" run --separate-stderr "$SBX" --backend "$b" --host-tmp \
	    -C "$top/bare.git" "$@" -- sh -c '
		mkdir .git 2>/dev/null
		cp -r HEAD objects refs .git/ 2>/dev/null
		printf "[core]\n\tbare = true\n" >.git/config 2>/dev/null
		mkdir -p .git/hooks 2>/dev/null
		printf "#!/bin/sh\ntouch %s\n" "$1" >.git/hooks/pre-receive 2>/dev/null &&
		    chmod +x .git/hooks/pre-receive && echo planted
		exit 0' sh "$out/pre-receive-ran" 3>&-
	[ "$status" -eq 0 ]
	git -C "$ws" commit -q --allow-empty -m two
	git -C "$ws" push -q "$top/bare.git" HEAD:refs/heads/new 2>/dev/null || true
}

@test "bwrap: a .git made in a bare repository cannot take over its next push" {
	bare_dotgit bwrap
	[ "$(kv stdout)" = '' ]
	[ ! -e "$out/pre-receive-ran" ]
	git -C "$top/bare.git" rev-parse -q --verify refs/heads/new
}

@test "landlock: a .git made in a bare repository cannot take over its next push" {
	bare_dotgit landlock
	[ "$(kv stdout)" = '' ]
	[ ! -e "$out/pre-receive-ran" ]
	git -C "$top/bare.git" rev-parse -q --verify refs/heads/new
}

@test "bwrap: the bare .git takeover works with --no-protect (positive control)" {
	bare_dotgit bwrap --no-protect
	[ "$(kv stdout)" = 'planted\n' ]
	[ -e "$out/pre-receive-ran" ]
}

# -w a folder below a worktree's top: a repository made there is the one
# git outside finds first in that folder.
inner_repo() {
	local b=$1
	shift
	need "$b"
	mkdir -p "$ws/sub"
	echo x >"$ws/sub/kept"
	git -C "$ws" add sub/kept
	git -C "$ws" commit -q -m sub
	HOME="$home" run --separate-stderr "$SBX" --backend "$b" --host-tmp \
	    -C "$ws/sub" "$@" -- sh -c '
		git init -q . 2>/dev/null || exit 0
		git config core.fsmonitor "touch $1; false" && echo planted
		echo y >file && echo file
		exit 0' sh "$out/fsmonitor-ran" 3>&-
	[ "$status" -eq 0 ]
	git -C "$ws/sub" status >/dev/null 2>&1 || true
}

@test "bwrap: -w below a worktree's top: no repository can be made there" {
	inner_repo bwrap
	[ "$(kv stdout)" = '' ]
	[ ! -e "$out/fsmonitor-ran" ]
	# The folder is the command's; git outside sees one repository.
	[ "$(git -C "$ws/sub" rev-parse --show-toplevel)" = "$ws" ]
}

@test "landlock: -w below a worktree's top: no repository can be made there" {
	inner_repo landlock
	[ "$(kv stdout)" = '' ]
	[ ! -e "$out/fsmonitor-ran" ]
	[ "$(git -C "$ws/sub" rev-parse --show-toplevel)" = "$ws" ]
}

@test "bwrap: a repository made below a worktree's top runs its fsmonitor with --no-protect (positive control)" {
	inner_repo bwrap --no-protect
	[ -e "$out/fsmonitor-ran" ]
}

# .gitmodules spells a path as git allows ("./lib/"), and names a
# submodule whose folder is missing: its .git cannot be made either way.
submodule_spelling() {
	local b=$1
	need "$b"
	git init -q "$top/lib"
	git -C "$top/lib" commit -q --allow-empty -m lib
	git -C "$ws" -c protocol.file.allow=always submodule -q add "$top/lib" lib
	printf '[submodule "gone"]\n\tpath = ./deps//gone/\n\turl = ./gone\n' >>"$ws/.gitmodules"
	sed -i 's|path = lib|path = ./lib/|' "$ws/.gitmodules"
	git -C "$ws" commit -q -am sub
	ptr=$(cat "$ws/lib/.git")
	sb "$b" -- sh -c '
		echo "gitdir: ../evil.git" >lib/.git 2>/dev/null && echo pointer
		mkdir -p deps/gone/.git 2>/dev/null && echo gone
		echo x >lib/file && echo x >file && echo files
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'files\n' ]
	[ "$(cat "$ws/lib/.git")" = "$ptr" ]
	[ ! -e "$ws/deps/gone/.git" ]
}

@test "bwrap: a submodule path spelled ./lib/, and one whose folder is missing, are held" {
	submodule_spelling bwrap
}

@test "landlock: a submodule path spelled ./lib/, and one whose folder is missing, are held" {
	submodule_spelling landlock
}

# The folders below a writable folder outside any repository are looked
# at level by level: a large folder cannot use up the count before a
# repository beside it is seen.
@test "bwrap: a repository beside large folders is held (the first level is seen whole)" {
	need bwrap
	mkdir -p "$top/src"
	for d in big1 big2; do
		(cd "$top/src" && mkdir -p $d && cd $d && mkdir $(seq -f 'd%g' 1 600))
	done
	git init -q "$top/src/p1"
	ws="$top/src" sb bwrap -- sh -c '
		echo evil >p1/.git/hooks/post-commit 2>/dev/null && echo p1
		echo x >p1/file && echo file
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'file\n' ]
	[ ! -e "$top/src/p1/.git/hooks/post-commit" ]
}

# A protected name that is a symbolic link: a shared hooks folder, a
# dotfile linked by stow.
@test "landlock: a protected name that is a link can be neither re-pointed nor removed" {
	need landlock
	mkdir -p "$ws/hooks-src" "$ws/evil" "$home/dotfiles"
	rm -rf "$ws/.git/hooks"
	ln -s ../hooks-src "$ws/.git/hooks"
	echo 'orig rc' >"$home/dotfiles/bashrc"
	ln -s dotfiles/bashrc "$home/.bashrc"
	sb landlock -- sh -c '
		ln -sfn ../evil .git/hooks2 && mv -T .git/hooks2 .git/hooks 2>/dev/null && echo repointed
		rm .git/hooks 2>/dev/null && echo removed
		echo x >hooks-src/pre-commit 2>/dev/null && echo target
		echo x >evil/ok && echo other'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'other\n' ]
	[ "$(readlink "$ws/.git/hooks")" = ../hooks-src ]
	# The home's, with the home writable.
	echo 'evil rc' >"$home/evilrc"
	HOME="$home" run --separate-stderr "$SBX" --backend landlock --host-tmp -C "$home" -- sh -c '
		ln -sfn evilrc .bashrc 2>/dev/null && echo repointed
		rm .bashrc 2>/dev/null && echo removed
		echo x >>dotfiles/bashrc 2>/dev/null && echo target
		echo x >notes && echo other' 3>&-
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'other\n' ]
	[ "$(readlink "$home/.bashrc")" = dotfiles/bashrc ]
	[ "$(cat "$home/dotfiles/bashrc")" = 'orig rc' ]
}

@test "bwrap: a protected link holds in the home and in the workspace, its target too" {
	need bwrap
	mkdir -p "$ws/hooks-src" "$home/dotfiles"
	rm -rf "$ws/.git/hooks"
	ln -s ../hooks-src "$ws/.git/hooks"
	echo 'orig rc' >"$home/dotfiles/bashrc"
	ln -s dotfiles/bashrc "$home/.bashrc"
	echo 'evil rc' >"$home/evilrc"
	HOME="$home" run --separate-stderr "$SBX" --backend bwrap --host-tmp -C "$home" -- sh -c '
		ln -sfn evilrc .bashrc 2>/dev/null && echo repointed
		echo x >>dotfiles/bashrc 2>/dev/null && echo target
		exit 0' 3>&-
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = '' ]
	[ "$(readlink "$home/.bashrc")" = dotfiles/bashrc ]
	# The workspace's link: held by name, as Landlock holds it; its
	# target stays held too.
	sb bwrap -- sh -c '
		echo x >hooks-src/pre-commit 2>/dev/null && echo target
		rm .git/hooks 2>/dev/null && echo removed
		echo ok'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'ok\n' ]
	[ ! -e "$ws/hooks-src/pre-commit" ] && [ -L "$ws/.git/hooks" ]
	[ -d "$ws/hooks-src" ]
}

# A config written the many ways git reads one, naming paths in the
# workspace; the command fills each: a hooks folder, an included config,
# a script an alias runs, a template folder. Then git outside, later:
# a commit (hooks), git status (an included fsmonitor), the aliases, and
# a new repository made from the templates. The included config and the
# script exist (bwrap holds a missing file by name only in the home).
# Each attack has its positive control with --no-protect: the same
# config, read by git, runs the command's code.
config_syntax() {
	local b=$1
	shift
	need "$b"
	: >"$ws/evil.inc"
	: >"$ws/evil.sh"
	sb "$b" "$@" -- sh -c '
		w() { printf "#!/bin/sh\ntouch %s\n" "$1" >"$2" 2>/dev/null &&
		    chmod +x "$2"; }
		mkdir -p evil-hooks evil-tmpl/hooks 2>/dev/null
		w "$1" evil-hooks/post-commit
		w "$1" evil-tmpl/hooks/post-commit
		w "$1" evil.sh
		printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$1" >evil.inc 2>/dev/null
		echo ok >other || exit 10
		exit 0' sh "$out/ran"
	[ "$status" -eq 0 ]
	(
		export HOME="$home"
		cd "$ws" || exit 1
		git commit -q --allow-empty -m two
		git status
		git tool
		git run.tool
		git init -q "$top/new" && git -C "$top/new" commit -q --allow-empty -m new
	) >/dev/null 2>&1 || true
}

# cfg TEXT: printf TEXT appended to the workspace's .git/config.
cfg() {
	# shellcheck disable=SC2059
	printf "$1" >>"$ws/.git/config"
}

@test "bwrap: a hooks folder named before a comment holds" {
	cfg '[core]\n\thooksPath = evil-hooks # the team'"'"'s hooks\n'
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: a hooks folder named before a comment holds" {
	cfg '[core]\n\thooksPath = evil-hooks # the team'"'"'s hooks\n'
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: a hooks folder named before a comment is the command's with --no-protect (positive control)" {
	cfg '[core]\n\thooksPath = evil-hooks # the team'"'"'s hooks\n'
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

@test "bwrap: a key on its section's header line holds" {
	cfg '[core] hooksPath = evil-hooks\n'
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: a key on its section's header line holds" {
	cfg '[core] hooksPath = evil-hooks\n'
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: a key on its section's header line runs with --no-protect (positive control)" {
	cfg '[core] hooksPath = evil-hooks\n'
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

@test "bwrap: an include continued on the next line holds" {
	cfg '[include]\n\tpath = ../evil\\\n.inc\n'
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: an include continued on the next line holds" {
	cfg '[include]\n\tpath = ../evil\\\n.inc\n'
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: an include continued on the next line is read with --no-protect (positive control)" {
	cfg '[include]\n\tpath = ../evil\\\n.inc\n'
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

@test "bwrap: an alias's program in quotes and escapes holds" {
	cfg '[alias]\n\ttool = "!\\"./evil.sh\\" --x"\n'
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: an alias's program in quotes and escapes holds" {
	cfg '[alias]\n\ttool = "!\\"./evil.sh\\" --x"\n'
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: an alias's program in quotes and escapes runs with --no-protect (positive control)" {
	cfg '[alias]\n\ttool = "!\\"./evil.sh\\" --x"\n'
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

# The script is the shell's first argument, not its first word.
@test "bwrap: a script an alias gives to sh holds" {
	cfg '[alias]\n\ttool = !sh ./evil.sh\n'
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: a script an alias gives to sh holds" {
	cfg '[alias]\n\ttool = !sh ./evil.sh\n'
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: a script an alias gives to sh runs with --no-protect (positive control)" {
	cfg '[alias]\n\ttool = !sh ./evil.sh\n'
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

# "[alias.Run]": the old form of a subsection, lower case whole; the
# alias is "run.tool", a name with a dot.
@test "bwrap: an [alias.Run] subsection's program holds" {
	cfg '[alias.Run]\n\ttool = !./evil.sh\n'
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: an [alias.Run] subsection's program holds" {
	cfg '[alias.Run]\n\ttool = !./evil.sh\n'
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: an [alias.Run] subsection's program runs with --no-protect (positive control)" {
	cfg '[alias.Run]\n\ttool = !./evil.sh\n'
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

# A tab before the subsection.
@test "bwrap: an includeIf after a tab holds" {
	cfg '[includeIf\t"gitdir:/"]\n\tpath = ../evil.inc\n'
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: an includeIf after a tab holds" {
	cfg '[includeIf\t"gitdir:/"]\n\tpath = ../evil.inc\n'
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: an includeIf after a tab is read with --no-protect (positive control)" {
	cfg '[includeIf\t"gitdir:/"]\n\tpath = ../evil.inc\n'
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

# A NUL in a subsection ends git's key: '[include "path<NUL>"] x = f' is
# an include.path to git.
@test "bwrap: an include.path ended by a NUL holds" {
	cfg '[include "path\0"] x = ../evil.inc\n'
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: an include.path ended by a NUL holds" {
	cfg '[include "path\0"] x = ../evil.inc\n'
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: an include.path ended by a NUL is read with --no-protect (positive control)" {
	cfg '[include "path\0"] x = ../evil.inc\n'
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

# A line longer than a line buffer: its tail must not be read as a line
# of its own. To git, "[y]" is in pager's comment, and hooksPath is in
# [core].
long_line() {
	local pad
	pad=$(printf '%4080s' '' | tr ' ' x)
	cfg "[core]\n\tpager = less ;$pad[y]\n\thooksPath = evil-hooks\n"
	[ "$(git -C "$ws" config core.hookspath)" = evil-hooks ]
}

@test "bwrap: a long line cannot move the next key out of its section" {
	long_line
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: a long line cannot move the next key out of its section" {
	long_line
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: the key after a long line runs with --no-protect (positive control)" {
	long_line
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

# Six includes deep, as git reads up to ten.
include_chain() {
	local i
	cfg '[include]\n\tpath = ../inc1\n'
	for i in 1 2 3 4 5; do
		printf '[include]\n\tpath = inc%d\n' $((i + 1)) >"$ws/inc$i"
	done
	printf '[include]\n\tpath = evil.inc\n' >"$ws/inc6"
}

@test "bwrap: what the sixth nested include names holds" {
	include_chain
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: what the sixth nested include names holds" {
	include_chain
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: what the sixth nested include names is read with --no-protect (positive control)" {
	include_chain
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

# The user's own ~/.gitconfig, read by git in every repository: a hooks
# folder and a template folder in a writable folder.
global_hooks() {
	printf '[core]\n\thooksPath = %s/evil-hooks\n' "$ws" >"$home/.gitconfig"
}

global_templates() {
	printf '[init]\n\ttemplateDir = %s/evil-tmpl\n' "$ws" >"$home/.gitconfig"
}

@test "bwrap: ~/.gitconfig's core.hooksPath in a writable folder holds" {
	global_hooks
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: ~/.gitconfig's core.hooksPath in a writable folder holds" {
	global_hooks
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: ~/.gitconfig's core.hooksPath is the command's with --no-protect (positive control)" {
	global_hooks
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

@test "bwrap: ~/.gitconfig's init.templateDir in a writable folder holds" {
	global_templates
	config_syntax bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: ~/.gitconfig's init.templateDir in a writable folder holds" {
	global_templates
	config_syntax landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: ~/.gitconfig's init.templateDir is the command's with --no-protect (positive control)" {
	global_templates
	config_syntax bwrap --no-protect
	[ -e "$out/ran" ]
}

# A repository's own init.templateDir: git init run again in it copies
# the templates in.
repo_templates() {
	local b=$1
	need "$b"
	cfg '[init]\n\ttemplateDir = evil-tmpl\n'
	sb "$b" -- sh -c '
		mkdir -p evil-tmpl/hooks 2>/dev/null && echo made
		echo ok >other || exit 10
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = '' ]
	[ ! -e "$ws/evil-tmpl/hooks" ]
}

@test "bwrap: a repository's init.templateDir in the workspace holds" {
	repo_templates bwrap
}

@test "landlock: a repository's init.templateDir in the workspace holds" {
	repo_templates landlock
}

# A config larger than sbx reads: the run fails, as what it names is
# unknown; one of the largest size read runs.
@test "bwrap: a git config larger than 1 MiB fails the run" {
	need bwrap
	cfg '[include]\n\tpath = ../big.inc\n'
	head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >"$ws/big.inc"
	sb bwrap -- true
	[ "$status" -eq 125 ]
	[ "$(kv error)" = policy ]
	[[ "$stderr" =~ ^sbx:\ .*/big.inc:\ a\ git\ config\ larger\ than\ 1\ MiB ]]
	truncate -s $((1024 * 1024)) "$ws/big.inc"
	sb bwrap -- true
	[ "$status" -eq 0 ]
}

# planted BACKEND SBXARGS...: the command writes a script that touches
# $out/ran at each of ${files[@]} (made beforehand, harmless, so that
# bwrap can hold them outside the home) and ${later[@]} (not there
# before; made after $inside, a command run first in the sandbox); then
# $outside runs in the workspace, outside the sandbox, with the test's
# HOME. The user's config is set up before.
planted() {
	local b=$1 f
	shift
	need "$b"
	for f in "${files[@]}"; do
		(cd "$ws" && mkdir -p "$(dirname "$f")" && printf '#!/bin/sh\ntrue\n' >"$f" && chmod +x "$f") || return 1
	done
	sb "$b" "$@" -- sh -c '
		m=$1 inside=$2
		shift 2
		eval "$inside" >/dev/null 2>&1
		for f; do
			mkdir -p "$(dirname "$f")" 2>/dev/null
			printf "#!/bin/sh\ntouch %s\n" "$m" >"$f" 2>/dev/null && chmod +x "$f" 2>/dev/null
		done
		echo ok >other || exit 10
		exit 0' sh "$out/ran" "${inside:-}" "${files[@]}" "${later[@]}"
	[ "$status" -eq 0 ]
	(
		export HOME="$home"
		unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
		cd "$ws" || exit 1
		eval "$outside"
	) </dev/null >/dev/null 2>&1 || true
}

# An alias's shell program: a script run after a cd, a script an inner
# sh -c runs, one in the home by $HOME, a program found by a PATH the
# program sets, one in backquotes, one sh reads with no slash in its name.
alias_cd() {
	git -C "$ws" config alias.t '!cd tools && ./x'
	files=(tools/x) later=() outside='git t'
}

@test "bwrap: an alias's script run after a cd holds" {
	alias_cd
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: an alias's script run after a cd holds" {
	alias_cd
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: an alias's script run after a cd runs with --no-protect (positive control)" {
	alias_cd
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

alias_shc() {
	git -C "$ws" config alias.t "!sh -c './x --fix'"
	files=(x) later=() outside='git t'
}

@test "bwrap: an alias's script run by sh -c holds" {
	alias_shc
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: an alias's script run by sh -c holds" {
	alias_shc
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: an alias's script run by sh -c runs with --no-protect (positive control)" {
	alias_shc
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

alias_home() {
	# shellcheck disable=SC2016
	git -C "$ws" config alias.t '!$HOME/w/x'
	files=("$home/w/x") later=() outside='git t'
}

@test "bwrap: an alias's script named by \$HOME in a writable folder holds" {
	alias_home
	planted bwrap -w "$home/w"
	[ ! -e "$out/ran" ]
}

@test "landlock: an alias's script named by \$HOME in a writable folder holds" {
	alias_home
	planted landlock -w "$home/w"
	[ ! -e "$out/ran" ]
}

@test "bwrap: an alias's script named by \$HOME runs with --no-protect (positive control)" {
	alias_home
	planted bwrap --no-protect -w "$home/w"
	[ -e "$out/ran" ]
}

alias_pathvar() {
	# shellcheck disable=SC2016
	git -C "$ws" config alias.t '!PATH=./bin:$PATH tool'
	files=(bin/tool) later=() outside='git t'
}

@test "bwrap: a program an alias finds by its own PATH holds" {
	alias_pathvar
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: a program an alias finds by its own PATH holds" {
	alias_pathvar
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: a program an alias finds by its own PATH runs with --no-protect (positive control)" {
	alias_pathvar
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

alias_backquote() {
	# shellcheck disable=SC2016
	git -C "$ws" config alias.t '!echo `./x`'
	files=(x) later=() outside='git t'
}

@test "bwrap: an alias's script in backquotes holds" {
	alias_backquote
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: an alias's script in backquotes holds" {
	alias_backquote
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: an alias's script in backquotes runs with --no-protect (positive control)" {
	alias_backquote
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

alias_sh_bare() {
	git -C "$ws" config alias.t '!sh x.sh'
	files=(x.sh) later=() outside='git t'
}

@test "bwrap: a script with no slash an alias gives to sh holds" {
	alias_sh_bare
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: a script with no slash an alias gives to sh holds" {
	alias_sh_bare
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: a script with no slash an alias gives to sh runs with --no-protect (positive control)" {
	alias_sh_bare
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

# A relative core.hooksPath is read from the top of the worktree git
# runs in: a linked worktree's own .githooks, in the workspace or in a
# writable folder of its own.
worktree_hooks() {
	git -C "$ws" config core.hooksPath .githooks
	git -C "$ws" worktree add -q "$1" 2>/dev/null
	files=("$1/.githooks/pre-commit") later=()
	outside="git -C '$1' commit -q --allow-empty -m x"
}

@test "bwrap: a relative hooksPath in a linked worktree in the workspace holds" {
	worktree_hooks .worktrees/feat
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: a relative hooksPath in a linked worktree in the workspace holds" {
	worktree_hooks .worktrees/feat
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: a relative hooksPath in a linked worktree in the workspace runs with --no-protect (positive control)" {
	worktree_hooks .worktrees/feat
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

@test "bwrap: a relative hooksPath in a linked worktree given with -w holds" {
	worktree_hooks "$top/wt"
	planted bwrap -w "$top/wt"
	[ ! -e "$out/ran" ]
}

@test "landlock: a relative hooksPath in a linked worktree given with -w holds" {
	worktree_hooks "$top/wt"
	planted landlock -w "$top/wt"
	[ ! -e "$out/ran" ]
}

@test "bwrap: a relative hooksPath in a linked worktree given with -w runs with --no-protect (positive control)" {
	worktree_hooks "$top/wt"
	planted bwrap --no-protect -w "$top/wt"
	[ -e "$out/ran" ]
}

# imap.tunnel: the command git imap-send runs to reach the server.
imap_tunnel() {
	echo hi >"$ws/f"
	git -C "$ws" add f
	git -C "$ws" commit -q -m two
	git -C "$ws" config imap.tunnel ./x
	git -C "$ws" config imap.host imap.example
	git -C "$ws" config imap.folder INBOX
	files=(x) later=() outside='git format-patch -1 --stdout | git imap-send'
}

@test "bwrap: imap.tunnel's program holds" {
	imap_tunnel
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: imap.tunnel's program holds" {
	imap_tunnel
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: imap.tunnel's program runs with --no-protect (positive control)" {
	imap_tunnel
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

# sendemail.sendmailCmd: git send-email is a separate package (Perl).
sendmail_cmd() {
	[ -x "$(git --exec-path)/git-send-email" ] &&
	    perl -MMail::Address -e 1 2>/dev/null ||
	    sbx_skip "git send-email is not installed (Debian: git-email and libmailtools-perl)"
	echo hi >"$ws/f"
	git -C "$ws" add f
	git -C "$ws" commit -q -m two
	git -C "$ws" config sendemail.sendmailCmd ./x
	files=(x) later=()
	outside='git send-email --to=a@example.com --from=t@example.com --confirm=never -1'
}

@test "bwrap: sendemail.sendmailCmd's program holds" {
	sendmail_cmd
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: sendemail.sendmailCmd's program holds" {
	sendmail_cmd
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: sendemail.sendmailCmd's program runs with --no-protect (positive control)" {
	sendmail_cmd
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

# A remote that is a local repository in a writable folder (not itself a
# repository): its hooks run at git push. One the command makes, one
# made before three levels deep, one named through url.*.insteadOf.
remote_missing() {
	mkdir -p "$top/other"
	git -C "$ws" config remote.backup.url "$top/other/a/backup.git"
	files=() later=("$top/other/a/backup.git/hooks/post-receive")
	inside="git init -q --bare '$top/other/a/backup.git'"
	outside='git push -q backup HEAD:main'
}

@test "bwrap: the hooks of a remote the command makes in a writable folder hold" {
	remote_missing
	planted bwrap -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "landlock: the hooks of a remote the command makes in a writable folder hold" {
	remote_missing
	planted landlock -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "bwrap: the hooks of a remote the command makes run with --no-protect (positive control)" {
	remote_missing
	planted bwrap --no-protect -w "$top/other"
	[ -e "$out/ran" ]
}

remote_deep() {
	git init -q --bare "$top/other/a/b/backup.git"
	git -C "$ws" config remote.backup.url "$top/other/a/b/backup.git"
	files=("$top/other/a/b/backup.git/hooks/post-receive") later=()
	outside='git push -q backup HEAD:main'
}

@test "bwrap: the hooks of a remote three levels down a writable folder hold" {
	remote_deep
	planted bwrap -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "landlock: the hooks of a remote three levels down a writable folder hold" {
	remote_deep
	planted landlock -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "bwrap: the hooks of a remote three levels down run with --no-protect (positive control)" {
	remote_deep
	planted bwrap --no-protect -w "$top/other"
	[ -e "$out/ran" ]
}

remote_insteadof() {
	git init -q --bare "$top/other/a/b/backup.git"
	git -C "$ws" config "url.$top/other/a/b/.insteadOf" mirror:
	git -C "$ws" config remote.backup.url mirror:backup.git
	files=("$top/other/a/b/backup.git/hooks/post-receive") later=()
	outside='git push -q backup HEAD:main'
}

@test "bwrap: the hooks of a remote named by url.*.insteadOf hold" {
	remote_insteadof
	planted bwrap -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "landlock: the hooks of a remote named by url.*.insteadOf hold" {
	remote_insteadof
	planted landlock -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "bwrap: the hooks of a remote named by url.*.insteadOf run with --no-protect (positive control)" {
	remote_insteadof
	planted bwrap --no-protect -w "$top/other"
	[ -e "$out/ran" ]
}

# core.worktree elsewhere: a relative hooksPath is read from there.
core_worktree() {
	mkdir -p "$top/other"
	git -C "$ws" config core.hooksPath .githooks
	git -C "$ws" config core.worktree "$top/other"
	files=("$top/other/.githooks/pre-commit") later=()
	outside='git commit -q --allow-empty -m x'
}

@test "bwrap: a relative hooksPath under core.worktree in a writable folder holds" {
	core_worktree
	planted bwrap -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "landlock: a relative hooksPath under core.worktree in a writable folder holds" {
	core_worktree
	planted landlock -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "bwrap: a relative hooksPath under core.worktree runs with --no-protect (positive control)" {
	core_worktree
	planted bwrap --no-protect -w "$top/other"
	[ -e "$out/ran" ]
}

# A name with a slash is a path from the top of the worktree: git runs
# credential.helper foo/x as git-credential-foo/x, and remote.*.vcs
# foo/x as git-remote-foo/x. The helper runs when an http remote asks
# for a password: a server on the loopback that answers 401.
credential_helper() {
	local port
	port=$(free_port)
	bg python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(s):
        s.send_response(401)
        s.send_header("WWW-Authenticate", "Basic realm=\"x\"")
        s.send_header("Content-Length", "0")
        s.end_headers()
    def log_message(*a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
' "$port"
	wait_for python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$port"
	git -C "$ws" config credential.helper foo/x
	git -C "$ws" config remote.origin.url "http://127.0.0.1:$port/x"
	files=(git-credential-foo/x) later=()
	outside='GIT_TERMINAL_PROMPT=0 git fetch origin'
}

@test "bwrap: a credential.helper named by a relative path holds" {
	credential_helper
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: a credential.helper named by a relative path holds" {
	credential_helper
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: a credential.helper named by a relative path runs with --no-protect (positive control)" {
	credential_helper
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

remote_vcs() {
	git -C "$ws" config remote.origin.vcs foo/x
	git -C "$ws" config remote.origin.url x://y
	files=(git-remote-foo/x) later=()
	outside='git fetch origin'
}

@test "bwrap: a remote.*.vcs helper named by a relative path holds" {
	remote_vcs
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: a remote.*.vcs helper named by a relative path holds" {
	remote_vcs
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: a remote.*.vcs helper named by a relative path runs with --no-protect (positive control)" {
	remote_vcs
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

# An ext:: remote runs its command, with protocol.ext.allow=always.
remote_ext() {
	git -C "$ws" config protocol.ext.allow always
	git -C "$ws" config remote.origin.url 'ext::./x %S'
	files=(x) later=()
	outside='git fetch origin'
}

@test "bwrap: an ext:: remote's program holds" {
	remote_ext
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: an ext:: remote's program holds" {
	remote_ext
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: an ext:: remote's program runs with --no-protect (positive control)" {
	remote_ext
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

# Config in the environment, GIT_CONFIG_COUNT and its pairs, there when
# sbx starts and when git runs later.
env_config() {
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath \
	    GIT_CONFIG_VALUE_0="$ws/envhooks"
	files=(envhooks/pre-commit) later=()
	outside='git commit -q --allow-empty -m x'
}

@test "bwrap: core.hooksPath from GIT_CONFIG_COUNT holds" {
	env_config
	planted bwrap
	[ ! -e "$out/ran" ]
}

@test "landlock: core.hooksPath from GIT_CONFIG_COUNT holds" {
	env_config
	planted landlock
	[ ! -e "$out/ran" ]
}

@test "bwrap: core.hooksPath from GIT_CONFIG_COUNT runs with --no-protect (positive control)" {
	env_config
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

# Round 2 of the attack review: a branch's own remote given as a path, a
# plain folder's .git twin, file://localhost, and cd forms the first
# tokenizer missed.
branch_remote() {
	git init -q --bare "$top/other/a/b/victim.git"
	git -C "$ws" config branch.main.remote "$top/other/a/b/victim.git"
	git -C "$ws" config branch.main.merge refs/heads/main
	git -C "$ws" config push.default current
	files=("$top/other/a/b/victim.git/hooks/pre-receive") later=()
	outside='git checkout -q -B main && git push -q'
}

@test "bwrap: the hooks of a repository branch.*.remote names by path hold" {
	branch_remote
	planted bwrap -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "landlock: the hooks of a repository branch.*.remote names by path hold" {
	branch_remote
	planted landlock -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "bwrap: the hooks of a repository branch.*.remote names run with --no-protect (positive control)" {
	branch_remote
	planted bwrap --no-protect -w "$top/other"
	[ -e "$out/ran" ]
}

# The URL names a plain folder: git tries URL.git next.
remote_twin() {
	mkdir -p "$top/other/a/b/victim"
	git -C "$ws" config remote.backup.url "file://localhost$top/other/a/b/victim"
	files=() later=("$top/other/a/b/victim.git/hooks/pre-receive")
	inside="git init -q --bare '$top/other/a/b/victim.git'"
	outside='git push -q backup HEAD:main'
}

@test "bwrap: a plain folder's .git twin that a file://localhost remote reaches holds" {
	remote_twin
	planted bwrap -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "landlock: a plain folder's .git twin that a file://localhost remote reaches holds" {
	remote_twin
	planted landlock -w "$top/other"
	[ ! -e "$out/ran" ]
}

@test "bwrap: a plain folder's .git twin runs with --no-protect (positive control)" {
	remote_twin
	planted bwrap --no-protect -w "$top/other"
	[ -e "$out/ran" ]
}

# Each form, one after another: none of the planted scripts may run.
cd_forms() {
	local b=$1 form
	shift
	mkdir -p "$ws/sub/deep" "$ws/sp ace" "$home/proj"
	for form in '!cd -P sub && ./x' '!cd -- sub && ./x' \
	    '!cd sub && cd deep && ./x' '!cd "sp ace" && ./x' \
	    '!env -C sub ./x' '!cd ${HOME:-/none}/proj && ./x'; do
		git -C "$ws" config alias.t "$form"
		files=(sub/x sub/deep/x "sp ace/x" "$home/proj/x") later=()
		outside='git t'
		HOME="$home" planted "$b" "$@" -w "$home/proj"
		if [ -e "$out/ran" ]; then
			echo "ran: $form"
			return 1
		fi
	done
}

@test "bwrap: cd forms in an alias (options, a second cd, quotes, env -C, \${HOME:-}) hold" {
	cd_forms bwrap
}

@test "landlock: cd forms in an alias (options, a second cd, quotes, env -C, \${HOME:-}) hold" {
	cd_forms landlock
}

@test "bwrap: a cd form in an alias runs with --no-protect (positive control)" {
	mkdir -p "$ws/sub"
	git -C "$ws" config alias.t '!cd -P sub && ./x'
	files=(sub/x) later=() outside='git t'
	planted bwrap --no-protect
	[ -e "$out/ran" ]
}

# Worktrees the command makes by the hundred cannot slow or break the
# next run; past 32, the worktrees folder is held whole.
@test "worktrees: 300 made by a run neither break nor slow the next; past 32 the folder is held" {
	for b in bwrap landlock; do
		need "$b"
		rm -rf "$ws/.git/worktrees"
		git -C "$ws" worktree add -q "$top/wt-$b" 2>/dev/null
		sb "$b" -- sh -c 'i=0
			while [ $i -lt 300 ]; do
				mkdir -p .git/worktrees/w$i && echo /nowhere/.git >.git/worktrees/w$i/gitdir
				i=$((i + 1))
			done; echo made'
		[ "$status" -eq 0 ]
		[ "$(ls "$ws/.git/worktrees" | wc -l)" -gt 300 ]
		sb "$b" -- sh -c 'mkdir .git/worktrees/more 2>/dev/null && echo made-more; echo ran'
		[ "$status" -eq 0 ]
		[ "$(kv stdout)" = 'ran\n' ]
		rm -rf "$ws/.git/worktrees" "$top/wt-$b"
	done
}
