#!/usr/bin/env bats
# The bwrap sandbox under attack. Each test attacks one property from inside
# and shows the attack fails, and shows the same operation succeeding where
# the policy grants it, so no test passes because nothing worked at all.
# Runs as root and again as nobody (t/run); nothing here assumes $HOME.
# Seccomp-only properties (socket(AF_UNIX), TIOCSTI filtering, keyctl,
# io_uring) are tested in the seccomp suite.

load helper
bats_require_minimum_version 1.5.0

setup() {
	require_bwrap
	ws="$BATS_TEST_TMPDIR/ws"
	out="$BATS_TEST_TMPDIR/out"
	mkdir -p "$ws" "$out"
	echo orig >"$out/file"
	pids=()
}

teardown() {
	kill_bg
	[ -z "${romnt:-}" ] || umount "$romnt/in" "$romnt" 2>/dev/null || true
}

# bw ARGS...: sbx on the bwrap backend, output straight through. With
# --host-tmp: these attacks aim at the host's /tmp, where bats keeps its
# scratch folders, which the private /tmp would hide altogether
# (t/everyday.bats tests the private /tmp).
bw() {
	on_backend bwrap --host-tmp "$@"
}




@test "bwrap: runs as executor=bwrap with isolation=os" {
	run --separate-stderr "$SBX" --backend bwrap -C "$ws" -- sh -c 'echo hi'
	[ "$status" -eq 0 ]
	[ "$(kv executor)" = bwrap ]
	[ "$(kv isolation)" = os ]
	[ "$(kv stdout)" = 'hi\n' ]
}

@test "files: the root is writable, everything outside it is not" {
	run --separate-stderr bw -C "$ws" -- sh -c '
		echo ok > inside || exit 10
		echo x > "$1/file" && exit 11
		echo x > "$1/new" && exit 12
		touch /tmp/sbx-escape-$$ && exit 13
		touch /etc/sbx-escape && exit 14
		touch "$2" && exit 15
		exit 0' sh "$out" "$BATS_TEST_TMPDIR/sibling"
	[ "$status" -eq 0 ]
	[ "$(cat "$ws/inside")" = ok ]
	[ "$(cat "$out/file")" = orig ]
	[ ! -e "$out/new" ] && [ ! -e "$BATS_TEST_TMPDIR/sibling" ]
	[ ! -e /etc/sbx-escape ]
}

@test "files: a symlink planted in the workspace does not lead outside" {
	ln -s "$out/file" "$ws/link"
	ln -s "$out" "$ws/dirlink"
	run --separate-stderr bw -C "$ws" -- sh -c '
		echo x > link && exit 11
		echo x > dirlink/new && exit 12
		ln -s "$1/file" link2 || exit 10
		echo x > link2 && exit 13
		echo ok > plain || exit 14
		exit 0' sh "$out"
	[ "$status" -eq 0 ]
	[ "$(cat "$out/file")" = orig ]
	[ ! -e "$out/new" ]
	[ "$(cat "$ws/plain")" = ok ]
}

@test "files: rename and hard link tricks do not reach outside" {
	echo mine >"$ws/mine"
	run --separate-stderr bw -C "$ws" -- sh -c '
		mv "$1/file" stolen 2>/dev/null && exit 11
		mv mine "$1/planted" 2>/dev/null && exit 12
		ln "$1/file" hard && exit 13
		ln mine "$1/hard" && exit 14
		mv mine renamed || exit 10
		exit 0' sh "$out"
	[ "$status" -eq 0 ]
	[ "$(cat "$out/file")" = orig ]
	[ ! -e "$out/planted" ] && [ ! -e "$out/hard" ]
	[ "$(cat "$ws/renamed")" = mine ]
}

@test "files: /proc/self/root, /proc/1/root and /proc/self/cwd do not lead outside" {
	run --separate-stderr bw -C "$ws" -- sh -c '
		echo x > "/proc/self/root$1/file" && exit 11
		echo x > "/proc/1/root$1/file" && exit 12
		echo x > /proc/self/cwd/../out/file && exit 13
		echo x > "/proc/$$/root$1/new" && exit 14
		echo ok > "/proc/self/root$2/via-proc" || exit 10
		exit 0' sh "$out" "$ws"
	[ "$status" -eq 0 ]
	[ "$(cat "$out/file")" = orig ]
	[ ! -e "$out/new" ]
	[ "$(cat "$ws/via-proc")" = ok ]
}

@test "files: /tmp stays read-only, /dev/shm is private" {
	run --separate-stderr bw -C "$ws" -- sh -c '
		touch /tmp/sbx-tmp-escape && exit 11
		echo x > /dev/shm/sbx-shm-probe || exit 10
		exit 0'
	[ "$status" -eq 0 ]
	[ ! -e /tmp/sbx-tmp-escape ]
	[ ! -e /dev/shm/sbx-shm-probe ]
}

@test "files: --write grants a folder and a single file, nothing beside them" {
	mkdir "$out/w"
	echo f >"$out/wfile"
	run --separate-stderr bw -C "$ws" -w "$out/w" -w "$out/wfile" -- sh -c '
		echo ok > "$1/w/new" || exit 10
		echo ok > "$1/wfile" || exit 11
		echo x > "$1/file" && exit 12
		exit 0' sh "$out"
	[ "$status" -eq 0 ]
	[ "$(cat "$out/w/new")" = ok ] && [ "$(cat "$out/wfile")" = ok ]
	[ "$(cat "$out/file")" = orig ]
}

@test "deny-write: a path inside the writable root stays read-only" {
	mkdir -p "$ws/locked/sub" "$ws/open"
	echo orig >"$ws/locked/sub/f"
	echo orig >"$ws/lockedfile"
	run --separate-stderr bw -C "$ws" --deny-write "$ws/locked/sub" \
	    --deny-write "$ws/lockedfile" -- sh -c '
		echo ok > open/f || exit 10
		echo x > locked/sub/f && exit 11
		touch locked/sub/new && exit 12
		echo x > lockedfile && exit 13
		rm -f lockedfile && exit 14
		mv locked/sub locked/moved && exit 15
		# swap a parent out and make a fresh path in its place
		mv locked locked.old && exit 16
		echo ok > locked/beside || exit 17
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(cat "$ws/locked/sub/f")" = orig ] && [ "$(cat "$ws/lockedfile")" = orig ]
	[ ! -e "$ws/locked/sub/new" ] && [ ! -e "$ws/locked.old" ]
	[ "$(cat "$ws/open/f")" = ok ]
}

@test "deny-read: a file has no readable byte, also through links" {
	echo TOPSECRET-f1 >"$ws/secret"
	ln -s secret "$ws/secret-link"
	echo visible >"$ws/public"
	run --separate-stderr bw -C "$ws" --deny-read "$ws/secret" -- sh -c '
		cat public || exit 10
		cat secret; cat secret-link; cat "/proc/self/root$1/secret"
		cp secret copy; dd if=secret 2>/dev/null
		echo x > secret && exit 11
		exit 0' sh "$ws"
	[ "$status" -eq 0 ]
	[[ "$output" == *visible* ]]
	[[ "$output" != *TOPSECRET* ]] && [[ "$stderr" != *TOPSECRET* ]]
	[ "$(cat "$ws/secret")" = TOPSECRET-f1 ]
	! grep -q TOPSECRET "$ws/copy" 2>/dev/null
}

@test "deny-read: a folder is empty and read-only inside" {
	mkdir -p "$ws/vault/deep"
	echo TOPSECRET-d1 >"$ws/vault/deep/key"
	run --separate-stderr bw -C "$ws" --deny-read "$ws/vault" -- sh -c '
		[ -d vault ] || exit 10
		[ -z "$(ls -A vault)" ] || exit 11
		cat vault/deep/key && exit 12
		touch vault/new && exit 13
		mkdir vault/deep && exit 14
		chmod 777 vault && exit 15
		umount vault 2>/dev/null && exit 16
		mv vault vault2 && exit 17
		echo ok > beside || exit 18
		exit 0'
	[ "$status" -eq 0 ]
	[[ "$output" != *TOPSECRET* ]] && [[ "$stderr" != *TOPSECRET* ]]
	[ "$(cat "$ws/vault/deep/key")" = TOPSECRET-d1 ]
	[ ! -e "$ws/vault/new" ] && [ ! -e "$ws/vault2" ]
	[ "$(cat "$ws/beside")" = ok ]
}

@test "deny-read: wins over --write of the same folder" {
	mkdir -p "$out/both"
	echo TOPSECRET-b >"$out/both/k"
	run --separate-stderr bw -C "$ws" -w "$out/both" --deny-read "$out/both" -- \
	    sh -c 'cat "$1/both/k"; touch "$1/both/new" && exit 11; exit 0' sh "$out"
	[ "$status" -eq 0 ]
	[[ "$output" != *TOPSECRET* ]]
	[ ! -e "$out/both/new" ]
}

@test "deny-read and deny-write of a workspace's .git: the run starts, and they win over the held names inside" {
	require_cmd git
	git -C "$ws" init -q
	echo hook >"$ws/.git/hooks/keep"
	# The held names (.git/hooks, .git/config, ...) lie inside the denied
	# folder: no mount of theirs may stand in the way of the launch.
	run --separate-stderr bw -C "$ws" --deny-read "$ws/.git" -- sh -c '
		cat .git/hooks/keep 2>/dev/null && exit 10
		ls .git 2>/dev/null | grep -q . && exit 11
		echo x >.git/new 2>/dev/null && exit 12
		echo ok >file'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$ws/file")" = ok ] && [ ! -e "$ws/.git/new" ]
	run --separate-stderr bw -C "$ws" --deny-write "$ws/.git" -- sh -c '
		cat .git/hooks/keep || exit 10
		echo x >.git/hooks/post-commit 2>/dev/null && exit 11
		echo x >.git/new 2>/dev/null && exit 12
		exit 0'
	echo "$output"
	[ "$status" -eq 0 ]
	[ ! -e "$ws/.git/hooks/post-commit" ] && [ ! -e "$ws/.git/new" ]
}

@test "deny-read: a file with another hard link is refused, not half-hidden" {
	echo TOPSECRET-h >"$ws/secret"
	ln "$ws/secret" "$ws/other-name"
	run --separate-stderr bw -C "$ws" --deny-read "$ws/secret" -- cat other-name
	[ "$status" -eq 125 ]
	[[ "$stderr" =~ ^sbx:\ .*hard\ link ]]
	[[ "$output" != *TOPSECRET* ]]
}

@test "protected: .git/hooks and .git/config stay read-only while git commit works" {
	require_cmd git
	git -C "$ws" init -q
	cfg=$(cat "$ws/.git/config")
	run --separate-stderr bw -C "$ws" -- sh -c '
		g="git -c user.name=t -c user.email=t@example.com"
		echo a > a && $g add a && $g commit -qm one || exit 10
		echo "#!/bin/sh" > .git/hooks/pre-commit && exit 11
		echo "[core] fsmonitor = evil" >> .git/config && exit 12
		git config core.fsmonitor evil && exit 13
		rm -rf .git/hooks && exit 14
		mv .git .git-old && exit 15
		mv .git/hooks .git/hooks-old && exit 16
		git log --oneline | grep -q one || exit 17
		exit 0'
	[ "$status" -eq 0 ]
	[ ! -e "$ws/.git/hooks/pre-commit" ]
	[ "$(cat "$ws/.git/config")" = "$cfg" ]
	[ "$(git -C "$ws" log --format=%s)" = one ]
}

@test "protected: a missing .git/hooks is held by name, nothing made on the host" {
	require_cmd git
	git -C "$ws" init -q
	rm -rf "$ws/.git/hooks"
	run --separate-stderr bw -C "$ws" -- sh -c '
		[ -e .git/hooks ] && exit 10
		echo evil > .git/hooks/post-checkout && exit 11
		mkdir -p .git/hooks/x && exit 12
		echo ok > .git/description || exit 13
		exit 0'
	[ "$status" -eq 0 ]
	[ ! -e "$ws/.git/hooks" ]
	[ "$(cat "$ws/.git/description")" = ok ]
}

@test "protected: a run ending does not lift the hold of another run" {
	require_cmd git
	git -C "$ws" init -q
	rm -rf "$ws/.git/hooks"
	# A: waits until B has come and gone, then tries to plant a hook.
	"$SBX" --backend bwrap -C "$ws" -- sh -c '
		touch a-up
		while [ ! -e b-done ]; do sleep 0.05; done
		sleep 0.3
		mkdir -p .git/hooks 2>/dev/null
		echo evil > .git/hooks/post-checkout 2>/dev/null && exit 11
		exit 0' >"$out/a" 3>&- &
	apid=$!
	for _ in $(seq 100); do [ -e "$ws/a-up" ] && break; sleep 0.05; done
	[ -e "$ws/a-up" ]
	run bw -C "$ws" -- true
	[ "$status" -eq 0 ]
	# B is gone, A still runs: the name must still be held for A.
	[ ! -e "$ws/.git/hooks" ]
	touch "$ws/b-done"
	rc=0; wait "$apid" || rc=$?
	[ "$rc" -eq 0 ]
	[ ! -e "$ws/.git/hooks" ]
}

@test "protected: sbx's own binary in the workspace cannot be replaced" {
	cp "$SBX" "$ws/sbx"
	run --separate-stderr "$ws/sbx" --backend bwrap --passthrough -C "$ws" -- sh -c '
		echo evil > sbx 2>/dev/null && exit 11
		rm -f sbx 2>/dev/null; [ -x sbx ] || exit 12
		echo ok > other || exit 13
		exit 0' 3>&-
	[ "$status" -eq 0 ]
	cmp -s "$SBX" "$ws/sbx"
	# positive control: without the protected list it is an ordinary file
	# (removed, since writing a running executable is refused anyway)
	run --separate-stderr "$ws/sbx" --backend bwrap --passthrough --no-protect -C "$ws" -- sh -c 'rm sbx' 3>&-
	[ "$status" -eq 0 ]
	[ ! -e "$ws/sbx" ]
}

@test "protected: --no-protect drops the list (positive control)" {
	require_cmd git
	git -C "$ws" init -q
	run --separate-stderr bw -C "$ws" --no-protect -- sh -c '
		echo "#!/bin/sh" > .git/hooks/pre-commit'
	[ "$status" -eq 0 ]
	[ -e "$ws/.git/hooks/pre-commit" ]
}

@test "protected: submodule git dirs, a .git file and workspace config folders" {
	mkdir -p "$ws/.git/hooks" "$ws/.git/modules/lib/hooks" "$ws/.git/modules/lib/objects"
	echo 'ref: refs/heads/main' >"$ws/.git/HEAD"
	echo 'ref: refs/heads/main' >"$ws/.git/modules/lib/HEAD"
	echo '[core]' >"$ws/.git/modules/lib/config"
	echo '[core]' >"$ws/.git/config"
	mkdir -p "$ws/wt" "$ws/.vscode" "$ws/.claude"
	echo "gitdir: $ws/.git" >"$ws/wt/.git"
	echo '{}' >"$ws/.vscode/settings.json"
	echo '{}' >"$ws/.mcp.json"
	echo 'export A=1' >"$ws/.envrc"
	run --separate-stderr bw -C "$ws" -w "$ws/wt" -- sh -c '
		echo x > .git/modules/lib/objects/ok && exit 10
		mkdir .git/modules/new && exit 19
		echo evil > .git/modules/lib/hooks/post-checkout && exit 11
		echo evil >> .git/modules/lib/config && exit 12
		echo "gitdir: /tmp/evil" > wt/.git && exit 13
		echo "{\"evil\":1}" > .vscode/settings.json && exit 14
		echo "{\"evil\":1}" > .vscode/tasks.json && exit 15
		echo "{\"evil\":1}" > .mcp.json && exit 16
		echo "curl evil" >> .envrc && exit 17
		mkdir .claude/commands && exit 18
		exit 0'
	[ "$status" -eq 0 ]
	[ ! -e "$ws/.git/modules/lib/hooks/post-checkout" ]
	[ "$(cat "$ws/wt/.git")" = "gitdir: $ws/.git" ]
	[ "$(cat "$ws/.mcp.json")" = '{}' ]
	[ ! -e "$ws/.vscode/tasks.json" ]
}

@test "protected: shell start-up files when HOME is writable; missing ones cannot be created" {
	echo 'orig rc' >"$ws/.bashrc"
	echo 'notes' >"$ws/notes"
	HOME="$ws" run --separate-stderr bw -C "$ws" -- sh -c '
		echo ok > "$HOME/notes" || exit 10
		echo evil >> "$HOME/.bashrc" && exit 11
		echo evil > "$HOME/.zshrc" && exit 12
		echo evil > "$HOME/.profile" && exit 13
		echo evil > "$HOME/.bash_profile" && exit 14
		rm -f "$HOME/.bashrc" && exit 15
		mv "$HOME/.bashrc" "$HOME/x" && exit 16
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(cat "$ws/.bashrc")" = 'orig rc' ]
	[ "$(cat "$ws/notes")" = ok ]
	# the placeholders are gone again
	[ ! -e "$ws/.zshrc" ] && [ ! -e "$ws/.profile" ] && [ ! -e "$ws/.bash_profile" ]
}

@test "protected: --write of a folder in HOME protects its config inside" {
	home="$BATS_TEST_TMPDIR/home"
	mkdir -p "$home/.config/git" "$home/.config/other" "$home/.ssh"
	echo '[user]' >"$home/.config/git/config"
	HOME="$home" run --separate-stderr bw -C "$ws" -w "$home/.config" -w "$home/.ssh" -- sh -c '
		echo ok > "$HOME/.config/other/x" || exit 10
		echo evil >> "$HOME/.config/git/config" && exit 11
		echo evil > "$HOME/.ssh/authorized_keys" && exit 12
		mv "$HOME/.config/git" "$HOME/.config/git.old" && exit 13
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(cat "$home/.config/git/config")" = '[user]' ]
	[ ! -e "$home/.ssh/authorized_keys" ]
}

@test "protected: a symlinked dotfile is protected at its target; dangling links never abort" {
	mkdir -p "$ws/dotfiles"
	echo 'orig rc' >"$ws/dotfiles/bashrc"
	ln -s dotfiles/bashrc "$ws/.bashrc"
	ln -s dotfiles/missing "$ws/.zshrc"
	echo 'outside' >"$out/profile"
	ln -s "$out/profile" "$ws/.profile"
	touch "$ws/dotfiles/other"
	HOME="$ws" run --separate-stderr bw -C "$ws" -- sh -c '
		echo ok > dotfiles/other || exit 10
		echo evil >> "$HOME/.bashrc" && exit 11
		echo evil >> dotfiles/bashrc && exit 12
		echo evil >> "$HOME/.profile" && exit 13
		echo evil > "$HOME/.zshrc" && exit 14
		echo evil > dotfiles/missing && exit 15
		exit 0'
	[ "$status" -eq 0 ]
	[ ! -e "$ws/dotfiles/missing" ]
	[ "$(cat "$ws/dotfiles/bashrc")" = 'orig rc' ]
	[ "$(cat "$out/profile")" = outside ]
}

@test "scope: the root turns read-only except the scope paths" {
	mkdir -p "$ws/src" "$ws/build" "$ws/docs"
	run --separate-stderr bw -C "$ws" --scope "$ws/build" -w "$ws/docs" -- sh -c '
		echo ok > build/out || exit 10
		echo x > src/new && exit 11
		echo x > top && exit 12
		echo x > docs/new && exit 13
		mv build build2 && exit 14
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(cat "$ws/build/out")" = ok ]
	[ ! -e "$ws/src/new" ] && [ ! -e "$ws/top" ] && [ ! -e "$ws/docs/new" ]
}

@test "paths: spaces, newlines, quotes, dollars and leading dashes" {
	name=$'-a b\n"q\' $(touch pwned) `x`'
	w="$BATS_TEST_TMPDIR/$name"
	mkdir -p "$w/-d" "$w/$name"
	echo TOPSECRET-p >"$w/$name/s"
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr bw -C "$w" -w "./$name/-d" --deny-read "$w/$name" \
	    --deny-write "$w/-d" -- sh -c '
		[ "$(pwd)" = "$1" ] || exit 10
		echo ok > ./-f || exit 11
		cat "$2/s"
		echo x > ./-d/f && exit 12
		exit 0' sh "$w" "$w/$name"
	[ "$status" -eq 0 ]
	[ "$(cat "$w/-f")" = ok ]
	[[ "$output" != *TOPSECRET* ]]
	[ ! -e "$w/-d/f" ]
	[ ! -e "$BATS_TEST_TMPDIR/pwned" ] && [ ! -e pwned ]
}

@test "paths: thousands of rules still launch" {
	mkdir -p "$ws/many"
	args=()
	for i in $(seq 2000); do
		: >"$ws/many/f$i"
		args+=(--deny-write "$ws/many/f$i")
	done
	run --separate-stderr bw -C "$ws" "${args[@]}" -- sh -c '
		echo x > many/f1999 && exit 11
		echo ok > many/free || exit 10
		exit 0'
	[ "$status" -eq 0 ]
	[ ! -s "$ws/many/f1999" ]
	[ "$(cat "$ws/many/free")" = ok ]
}

@test "mounts: mount, bind, remount and umount all fail" {
	mkdir -p "$ws/m" "$ws/vault"
	echo TOPSECRET-m >"$ws/vault/k"
	run --separate-stderr bw -C "$ws" --deny-read "$ws/vault" -- sh -c '
		mount -t tmpfs none m 2>/dev/null && exit 11
		mount --bind "$1" m 2>/dev/null && exit 12
		mount -o remount,rw / 2>/dev/null && exit 13
		mount -o remount,rw,bind "$1" 2>/dev/null && exit 14
		umount vault 2>/dev/null && exit 15
		umount -l vault 2>/dev/null && exit 16
		umount -l / 2>/dev/null && exit 17
		cat vault/k 2>/dev/null
		echo ok > m/f || exit 10
		exit 0' sh "$out"
	[ "$status" -eq 0 ]
	[[ "$output" != *TOPSECRET* ]]
	[ "$(cat "$ws/m/f")" = ok ]
}

@test "namespaces: no nested user namespace, no new mount or net namespace" {
	require_cmd unshare
	run --separate-stderr bw -C "$ws" -- sh -c '
		unshare --help >/dev/null 2>&1 || exit 10
		unshare -U true 2>/dev/null && exit 11
		unshare -r true 2>/dev/null && exit 12
		unshare -m true 2>/dev/null && exit 13
		unshare -n true 2>/dev/null && exit 14
		unshare -p -f true 2>/dev/null && exit 15
		unshare -U -r sh -c "mount -t tmpfs none /etc" 2>/dev/null && exit 16
		exit 0'
	[ "$status" -eq 0 ]
}

@test "kernel: /proc/sys, /proc/sysrq-trigger and /sys cannot be written" {
	run --separate-stderr bw -C "$ws" -- sh -c '
		[ -r /proc/sys/kernel/hostname ] || exit 10
		# opening for write is the attack; it writes nothing
		true > /proc/sys/kernel/hostname && exit 11
		true > /proc/sys/kernel/core_pattern && exit 12
		[ -e /proc/sysrq-trigger ] && { true > /proc/sysrq-trigger; } 2>/dev/null && exit 13
		true > /proc/sys/kernel/core_uses_pid && exit 16
		true > /proc/sys/vm/drop_caches && exit 17
		true > /proc/self/oom_score_adj && exit 18
		for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/uevent_helper /sys/power/state; do
			[ -e "$f" ] && { true > "$f"; } 2>/dev/null && exit 14
		done
		hostname sbx-evil 2>/dev/null && exit 15
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(hostname)" != sbx-evil ]
}

@test "processes: outside processes are invisible and cannot be signalled" {
	bg sleep 300
	victim=${pids[0]}
	run --separate-stderr bw -C "$ws" -- sh -c '
		sleep 100 & own=$!
		kill "$own" || exit 10
		kill -0 "$1" 2>/dev/null && exit 11
		kill -KILL "$1" 2>/dev/null && exit 12
		[ -e "/proc/$1" ] && exit 13
		exit 0' sh "$victim"
	[ "$status" -eq 0 ]
	kill -0 "$victim"
	# kill every process it can see: only its own die
	run --separate-stderr bw -C "$ws" -- sh -c 'kill -KILL -1'
	sleep 0.2
	kill -0 "$victim"
}

@test "processes: ptrace cannot reach outside processes" {
	require_cmd strace
	bg sleep 300
	victim=${pids[0]}
	run --separate-stderr bw -C "$ws" -- sh -c '
		strace -p "$1" -e trace=none 2>/dev/null & s=$!
		sleep 0.3; kill $s 2>/dev/null
		wait $s && exit 11
		cat "/proc/$1/environ" 2>/dev/null && exit 12
		exit 0' sh "$victim"
	[ "$status" -eq 0 ]
	kill -0 "$victim"
}

@test "processes: the command cannot take sbx's descriptors from its parent inside" {
	# sbx's shim, pid 1 inside, holds the status pipe sbx trusts for the
	# result: a forged "setup failed" would drop the output and report
	# error=sandbox for a command that ran.
	run --separate-stderr "$SBX" --backend bwrap -t 20 -C "$ws" -- sh -c '
		for f in /proc/1/fd/*; do
			printf "L\001\000\000\000" >"$f" 2>/dev/null && echo "forged $f"
			timeout 1 cat "$f" >/dev/null 2>&1 </dev/null
			[ $? = 1 ] || echo "opened $f"
		done
		cat /proc/1/environ >/dev/null 2>&1 && echo environ
		echo done; exit 7'
	echo "$output"
	[ "$status" -eq 7 ]
	[ "$(kv exit_code)" = 7 ]
	[ "$(kv stdout)" = 'done\n' ]
	! kv_has error
}

@test "processes: host System V IPC is invisible" {
	require_cmd ipcmk
	id=$(ipcmk -M 4096 | grep -o '[0-9]*$')
	run --separate-stderr bw -C "$ws" -- sh -c 'ipcs -m | grep -w "$1" && exit 11; exit 0' sh "$id"
	ipcrm -m "$id" 2>/dev/null || true
	[ "$status" -eq 0 ]
}

@test "terminal: --no-tty leaves no controlling terminal inside, so TIOCSTI cannot type into the user's shell" {
	require_cmd script
	require_cmd setsid
	# The probe reports through a file, not the terminal: script(1) gives
	# the pty only 10 ms to drain once its child is gone, and a slow
	# machine loses the last line there.
	probe='sleep 0.3; f=$1
	    if { true </dev/tty; } 2>/dev/null; then echo HAVE_TTY; else echo NO_TTY; fi >>"$f"
	    if /usr/bin/python3 -c "import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b\"#\")" 2>/dev/null
	    then echo STI_OK; else echo STI_DENIED; fi >>"$f"'
	# positive control: on a terminal of its own, outside, the probe works
	SHELL=/bin/sh setsid script -qec "$(shquote sh -c "$probe" sh "$out/outside")" /dev/null </dev/null >/dev/null
	echo "outside: $(cat "$out/outside")"
	grep -qx HAVE_TTY "$out/outside"
	sti_works=0
	grep -qx STI_OK "$out/outside" && sti_works=1
	SHELL=/bin/sh setsid script -qec "$(shquote "$SBX" --backend bwrap --passthrough --no-tty -C "$ws" -- sh -c "$probe" sh "$ws/inside")" /dev/null </dev/null >/dev/null
	echo "inside: $(cat "$ws/inside")"
	grep -qx NO_TTY "$ws/inside"
	if [ "$sti_works" = 1 ]; then
		grep -qx STI_DENIED "$ws/inside"
	fi
	! grep -q -e HAVE_TTY -e STI_OK "$ws/inside"
}

@test "privileges: no capabilities, no_new_privs, and root gains nothing" {
	echo orig >"$ws/ro"
	chmod 444 "$ws/ro"
	if is_root; then
		# positive control: real root writes a 0444 file it owns
		cp "$ws/ro" "$out/ro" && chmod 444 "$out/ro"
		sh -c 'echo x >> "$1"' sh "$out/ro"
		[ "$(wc -l <"$out/ro")" = 2 ]
	fi
	run --separate-stderr bw -C "$ws" -- sh -c '
		grep -q "^CapEff:[[:space:]]*0000000000000000$" /proc/self/status || exit 11
		grep -q "^CapPrm:[[:space:]]*0000000000000000$" /proc/self/status || exit 12
		grep -q "^CapBnd:[[:space:]]*0000000000000000$" /proc/self/status || exit 13
		grep -q "^NoNewPrivs:[[:space:]]*1$" /proc/self/status || exit 14
		echo x >> ro && exit 15
		# chown succeeds and changes nothing (the filter answers it)
		chown 1234:1234 ro 2>/dev/null
		[ "$(stat -c %u:%g ro)" = "$(id -u):$(id -g)" ] || exit 16
		mknod node c 1 3 2>/dev/null && exit 17
		chroot / true 2>/dev/null && exit 18
		echo x >> /etc/passwd && exit 19
		echo ok > rw || exit 10
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(cat "$ws/ro")" = orig ]
	[ ! -e "$ws/node" ]
}

@test "devices: the host's device nodes cannot be changed, also by root" {
	before=$(stat -c '%a %u %g %Y' /dev/null /dev/zero /dev/full /dev/urandom)
	run --separate-stderr bw -C "$ws" -- sh -c '
		echo x > /dev/null || exit 10
		[ "$(head -c 3 /dev/zero | od -An -tx1 | tr -d " ")" = 000000 ] || exit 11
		for d in /dev/null /dev/zero /dev/full /dev/urandom; do
			chmod 600 "$d" 2>/dev/null && exit 12
			chown 1:1 "$d" 2>/dev/null
			[ "$(stat -c %u "$d")" != 1 ] || exit 13
			touch -d 2001-01-01 "$d" 2>/dev/null && exit 14
		done
		exit 0'
	[ "$status" -eq 0 ]
	[ "$(stat -c '%a %u %g %Y' /dev/null /dev/zero /dev/full /dev/urandom)" = "$before" ]
}

@test "environment: a library meant for the command never loads into bwrap outside" {
	require_cmd cc
	cat >"$BATS_TEST_TMPDIR/mark.c" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void mark(void)
{
	FILE *f = fopen(getenv("MARK"), "a");
	if (f) { fprintf(f, "%s\n", program_invocation_short_name); fclose(f); }
}
EOF
	cc -shared -fPIC -o "$BATS_TEST_TMPDIR/mark.so" "$BATS_TEST_TMPDIR/mark.c"
	# positive control: the library loads wherever LD_PRELOAD names it
	MARK="$out/control" LD_PRELOAD="$BATS_TEST_TMPDIR/mark.so" /bin/true
	grep -qx true "$out/control"
	# an earlier run leaves a library in the writable workspace ...
	run --separate-stderr bw -C "$ws" -- sh -c 'mkdir lib && cp "$1" lib/libx.so' sh "$BATS_TEST_TMPDIR/mark.so"
	[ "$status" -eq 0 ]
	# ... and the caller points the next command at it
	run --separate-stderr bw -C "$ws" -e MARK="$ws/loaded" \
	    -e LD_PRELOAD="$ws/lib/libx.so" -e LD_LIBRARY_PATH="$ws/lib" -- /bin/true
	[ "$status" -eq 0 ]
	cat "$ws/loaded"
	grep -qx true "$ws/loaded"
	[ "$(grep -cvx true "$ws/loaded")" = 0 ]
}

@test "environment: a value passed to the command shows in no process's command line" {
	secret="s3cr3t-$$-$RANDOM"
	SBX_TEST_SECRET=$secret "$SBX" --backend bwrap -t 20 -e SBX_TEST_SECRET -C "$ws" \
	    -- sh -c 'printf %s "$SBX_TEST_SECRET" >seen; touch started; sleep 5' \
	    </dev/null >/dev/null 2>&1 3>&- &
	pids+=("$!")
	wait_for test -e "$ws/started"
	# positive control: the command got the value
	[ "$(cat "$ws/seen")" = "$secret" ]
	found=$(grep -l -a -F -- "$secret" /proc/[0-9]*/cmdline 2>/dev/null || true)
	echo "command lines with the value: $found"
	[ -z "$found" ]
}

@test "descriptors: only stdin, stdout and stderr reach the command" {
	run --separate-stderr bw -C "$ws" -- sh -c 'ls /proc/self/fd' 7>/dev/null
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | sort -n | tr '\n' ' ')" = "0 1 2 3 " ]
}

@test "descriptors: a read-only file on stdin cannot be written or changed through /proc/self/fd" {
	printf 'one\ntwo\n' >"$out/input"
	chmod 644 "$out/input"
	# positive control: outside, the read-only stdin reopens for writing
	cp -p "$out/input" "$out/copy"
	sh -c 'echo x >> /proc/self/fd/0 && chmod 600 /proc/self/fd/0' <"$out/copy"
	[ "$(stat -c %a "$out/copy")" = 600 ]
	[ "$(wc -l <"$out/copy")" = 3 ]
	run --separate-stderr bw -C "$ws" -- sh -c '
		[ "$(cat)" = "one
two" ] || exit 10
		echo pwned >> /proc/self/fd/0 && exit 11
		echo pwned >> /dev/stdin && exit 12
		chmod 4777 /proc/self/fd/0 && exit 13
		touch -d 2001-01-01 /proc/self/fd/0 && exit 14
		exit 0' <"$out/input"
	[ "$status" -eq 0 ]
	[ "$(cat "$out/input")" = "one
two" ]
	[ "$(stat -c %a "$out/input")" = 644 ]
	# the command reads on from where the caller's offset stood
	{ read -r first; run --separate-stderr bw -C "$ws" -- cat; } <"$out/input"
	[ "$first" = one ]
	[ "$output" = two ]
}

@test "descriptors: the host's /dev/null on stdin, stdout and stderr cannot be changed, also by root" {
	if is_root; then
		# positive control: through an inherited node, outside, root can
		mknod "$out/null" c 1 3
		chmod 666 "$out/null"
		sh -c 'chmod 600 /proc/self/fd/0' <"$out/null"
		[ "$(stat -c %a "$out/null")" = 600 ]
	fi
	before=$(stat -c '%a %u %g %Y' /dev/null)
	run sh -c '"$1" --backend bwrap --passthrough -C "$2" -- sh -c '\''
		cat || exit 10
		echo x || exit 11
		for fd in 0 1 2; do
			chmod 600 /proc/self/fd/$fd 2>/dev/null && exit 12
			chown 1:1 /proc/self/fd/$fd 2>/dev/null
			[ "$(stat -L -c %u /proc/self/fd/$fd)" != 1 ] || exit 13
			touch -d 2001-01-01 /proc/self/fd/$fd 2>/dev/null && exit 14
		done
		exit 0'\'' </dev/null >/dev/null 2>&1' sh "$SBX" "$ws"
	after=$(stat -c '%a %u %g %Y' /dev/null)
	if [ "$after" != "$before" ] && is_root; then
		chmod 666 /dev/null; chown 0:0 /dev/null
	fi
	echo "status=$status before=$before after=$after"
	[ "$status" -eq 0 ]
	[ "$after" = "$before" ]
}

@test "descriptors: a directory or O_PATH descriptor on stdin is refused and nothing runs" {
	require_cmd python3
	run --separate-stderr "$SBX" --backend bwrap -C "$ws" -- sh -c 'echo pwned > /proc/self/fd/0/"$1"' sh "${out#/}/evil" </
	[ "$status" -eq 125 ]
	[ "$(kv error)" = policy ]
	[[ "$stderr" == "sbx: standard input is a directory"* ]]
	[ ! -e "$out/evil" ]
	run --separate-stderr python3 -c '
import os, sys
os.dup2(os.open(sys.argv[1], os.O_PATH), 0)
os.execv(sys.argv[2], sys.argv[2:])' "$out/file" "$SBX" --backend bwrap -C "$ws" -- touch "$ws/ran"
	[ "$status" -eq 125 ]
	[[ "$stderr" == *"O_PATH"* ]]
	[ ! -e "$ws/ran" ]
	# --passthrough: stdout and stderr are the caller's too
	run --separate-stderr sh -c '"$1" --backend bwrap --passthrough -C "$2" -- touch "$2/ran" 1</' sh "$SBX" "$ws"
	[ "$status" -eq 125 ]
	[ ! -e "$ws/ran" ]
	# positive control: without --passthrough, sbx's own pipes replace it
	run --separate-stderr sh -c '"$1" --backend bwrap -C "$2" -- touch "$2/ran" 1</ >&2' sh "$SBX" "$ws"
	[ -e "$ws/ran" ]
}

@test "descriptors: a stdin file hidden inside is refused; a deleted one still reads" {
	mkdir "$ws/secret"
	echo key >"$ws/secret/k"
	run --separate-stderr "$SBX" --backend bwrap -C "$ws" --deny-read "$ws/secret" -- cat <"$ws/secret/k"
	[ "$status" -eq 125 ]
	[ "$(kv error)" = policy ]
	[[ "$stderr" == *"standard input ($ws/secret/k) cannot be opened"*"pipe it in instead"* ]]
	[ -z "$(kv stdout)" ]
	# piped in, the caller's choice goes through
	run --separate-stderr sh -c 'cat "$2/secret/k" | "$1" --backend bwrap -C "$2" --deny-read "$2/secret" -- cat' sh "$SBX" "$ws"
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'key\n' ]
	# a file with no name left (a here-document's, say) passes as it is
	echo gone >"$out/tmp"
	exec 4<"$out/tmp"
	rm "$out/tmp"
	run --separate-stderr "$SBX" --backend bwrap -C "$ws" -- cat <&4
	exec 4<&-
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'gone\n' ]
}

@test "network: no TCP to a listener on the host's 127.0.0.1 (and --net reaches it)" {
	require_cmd socat
	port=$(free_port)
	bg socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" SYSTEM:'echo hello-tcp'
	wait_for bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
	script='exec 3<>"/dev/tcp/127.0.0.1/$1" && cat <&3'
	run --separate-stderr bw -C "$ws" -- bash -c "$script" bash "$port"
	[ "$status" -ne 0 ]
	[[ "$output" != *hello-tcp* ]]
	run --separate-stderr bw -C "$ws" --net -- bash -c "$script" bash "$port"
	[ "$status" -eq 0 ]
	[[ "$output" == *hello-tcp* ]]
}

@test "network: no UDP to the host (and --net reaches it)" {
	require_cmd socat
	port=$(free_port)
	bg socat -u "UDP-RECV:$port,bind=127.0.0.1" "OPEN:$out/udp,creat,append"
	sleep 0.3
	script='echo "$2" > "/dev/udp/127.0.0.1/$1"; sleep 0.2; exit 0'
	run --separate-stderr bw -C "$ws" -- bash -c "$script" bash "$port" blocked-udp
	run --separate-stderr bw -C "$ws" --net -- bash -c "$script" bash "$port" allowed-udp
	wait_for grep -q allowed-udp "$out/udp"
	! grep -q blocked-udp "$out/udp"
}

@test "network: the host's abstract Unix sockets are out of reach (and --net reaches them)" {
	require_cmd socat
	name="sbx-test-$$-$RANDOM"
	bg socat "ABSTRACT-LISTEN:$name,fork" SYSTEM:'echo hello-abstract'
	wait_for socat -u "ABSTRACT-CONNECT:$name" - </dev/null
	run --separate-stderr bw -C "$ws" --allow-unix-sockets -- \
	    socat -u "ABSTRACT-CONNECT:$name" -
	[[ "$output" != *hello-abstract* ]]
	run --separate-stderr bw -C "$ws" -- socat -u "ABSTRACT-CONNECT:$name" -
	[[ "$output" != *hello-abstract* ]]
	run --separate-stderr bw -C "$ws" --net --allow-unix-sockets -- \
	    socat -u "ABSTRACT-CONNECT:$name" -
	[[ "$output" == *hello-abstract* ]]
}

@test "network: only loopback exists without --net" {
	run --separate-stderr bw -C "$ws" -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
	[ "$status" -eq 0 ]
	[ "$output" = lo ]
}

@test "devices: /dev is minimal, host devices are absent" {
	run --separate-stderr bw -C "$ws" -- sh -c 'ls -A /dev'
	[ "$status" -eq 0 ]
	for d in $output; do
		case $d in
		null|zero|full|random|urandom|tty|pts|ptmx|shm|console|stdin|stdout|stderr|fd|core|mqueue) ;;
		*) echo "unexpected /dev/$d"; return 1 ;;
		esac
	done
	[[ " $output " == *" null "* ]] || [[ "$output" == *null* ]]
}

@test "selection: bwrap is never taken from the workspace or a relative PATH entry" {
	mkdir -p "$ws/bin"
	printf '#!/bin/sh\ntouch %q\nexit 1\n' "$out/fake-ran" >"$ws/bin/bwrap"
	chmod +x "$ws/bin/bwrap"
	real=$(command -v bwrap)
	PATH="$ws/bin:$PATH" run --separate-stderr "$SBX" --backend bwrap -C "$ws" -- true
	[ "$status" -eq 0 ]
	[ "$(kv executor)" = bwrap ]
	cd "$ws"
	PATH="bin:$PATH" run --separate-stderr "$SBX" --probe
	[[ "$output" == *"bwrap_path=$real"* ]]
	[ ! -e "$out/fake-ran" ]
	# a PATH entry outside whose bwrap links into the workspace: refused
	mkdir -p "$out/lnbin"
	ln -s "$ws/bin/bwrap" "$out/lnbin/bwrap"
	PATH="$out/lnbin:$PATH" run --separate-stderr "$SBX" --backend bwrap -C "$ws" -- true
	[ "$status" -eq 125 ]
	[[ "$stderr" =~ ^sbx:\ .*writable ]]
	[ ! -e "$out/fake-ran" ]
}

@test "selection: a bwrap that cannot work fails closed with the reason and a fix" {
	mkdir -p "$out/fakebin"
	printf '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n' \
	    >"$out/fakebin/bwrap"
	chmod +x "$out/fakebin/bwrap"
	PATH="$out/fakebin:$PATH" run --separate-stderr "$SBX" --backend bwrap -C "$ws" -- touch "$ws/ran"
	[ "$status" -eq 125 ]
	[ "$(kv error)" = unavailable ]
	[[ "$stderr" =~ ^sbx:\ .*uid\ map.*:\ .+ ]]
	[ ! -e "$ws/ran" ]
	run --separate-stderr env PATH=/nonexistent "$SBX" --backend bwrap -C "$ws" -- /bin/touch "$ws/ran"
	[ "$status" -eq 125 ]
	[[ "$stderr" =~ ^sbx:\ .*bubblewrap ]]
	[ ! -e "$ws/ran" ]
}

@test "selection: when bwrap fails at launch, the default moves on to landlock; auto says it runs unconfined" {
	require_landlock
	mkdir -p "$out/fakebin"
	printf '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n' \
	    >"$out/fakebin/bwrap"
	chmod +x "$out/fakebin/bwrap"
	# The launch is the trial run: nothing of the command's ran in it.
	PATH="$out/fakebin:$PATH" run --separate-stderr "$SBX" -C "$ws" -- sh -c 'echo x >> ran'
	[ "$status" -eq 0 ]
	[ "$(kv executor)" = landlock ]
	[ "$(kv isolation)" = os ]
	[ "$(cat "$ws/ran")" = x ]
	[ "$(kv stderr)" = "" ]
	rm -f "$ws/ran"
	PATH="$out/fakebin:$PATH" run --separate-stderr "$SBX" --sandbox auto --backend bwrap -C "$ws" -- sh -c 'echo x >> ran'
	[ "$status" -eq 0 ]
	[ "$(kv executor)" = host ]
	[ "$(kv isolation)" = none ]
	[[ "$stderr" =~ ^sbx:\ warning:\ running\ unconfined:\ bwrap:\ .*uid\ map ]]
	[ "$(cat "$ws/ran")" = x ]
}

@test "selection: a fallback from bwrap to landlock leaks no descriptor of sbx's" {
	require_landlock
	mkdir -p "$out/fakebin"
	printf '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n' \
	    >"$out/fakebin/bwrap"
	chmod +x "$out/fakebin/bwrap"
	# sbx's open descriptors while the command runs, after a fallback and
	# on landlock directly: the same count (each try once opened a new
	# self-pipe and kept the old one).
	fds() {
		"$@" -C "$ws" -- sh -c 'echo go >go; sleep 2' >/dev/null 2>&1 3>&- &
		local pid=$! n
		wait_for test -s "$ws/go"
		n=$(ls "/proc/$pid/fd" | wc -l)
		wait "$pid"
		rm -f "$ws/go"
		echo "$n"
	}
	direct=$(fds "$SBX" --backend landlock)
	fallback=$(PATH="$out/fakebin:$PATH" fds "$SBX")
	echo "direct $direct, after a fallback $fallback"
	[ "$direct" -gt 3 ]
	[ "$fallback" = "$direct" ]
}

@test "files: a workspace on a read-only mount runs; its writes fail as read-only" {
	is_root || skip "needs root to make a read-only mount"
	mkdir -p "$BATS_TEST_TMPDIR/robase" "$BATS_TEST_TMPDIR/ro"
	echo hi >"$BATS_TEST_TMPDIR/robase/f"
	mount --bind "$BATS_TEST_TMPDIR/robase" "$BATS_TEST_TMPDIR/ro"
	romnt="$BATS_TEST_TMPDIR/ro"
	mount -o remount,ro,bind "$romnt"
	run --separate-stderr "$SBX" --backend bwrap -C "$romnt" -- sh -c 'cat f; echo x > g'
	[ "$status" -eq 2 ]
	[ "$(kv stdout)" = 'hi\n' ]
	[[ "$(kv stderr)" == *"Read-only file system"* ]]
	[ -z "$(kv error)" ]
	umount "$romnt" && romnt=
	[ ! -e "$BATS_TEST_TMPDIR/robase/g" ]
}

@test "files: a host's writable mount inside the workspace fails the launch closed (caveat)" {
	is_root || skip "needs root to make mounts"
	mkdir -p "$ws/inner" "$BATS_TEST_TMPDIR/src"
	mount --bind "$BATS_TEST_TMPDIR/src" "$ws/inner"
	romnt="$ws/inner"
	run --separate-stderr "$SBX" --backend bwrap -C "$ws" -- sh -c 'echo x > inner/f'
	[ "$status" -eq 125 ]
	[ "$(kv error)" = sandbox ]
	umount "$ws/inner" && romnt=
	[ ! -e "$BATS_TEST_TMPDIR/src/f" ]
}

@test "dry-run: a rule that restates the one before it is one mount, not two" {
	mkdir "$ws/sub"
	run --separate-stderr "$SBX" --backend bwrap --dry-run -C "$ws" -w "$ws" -w "$ws/." -w "$ws/sub" -- true
	[ "$status" -eq 0 ]
	[ "$(grep -o -- "--bind-fd [0-9]* $ws " <<<"$output " | wc -l)" -eq 1 ]
	[ "$(grep -o -- "--bind-fd [0-9]* $ws/sub " <<<"$output " | wc -l)" -eq 1 ]
}

@test "dry-run: prints the bwrap line, shell-quoted, and runs nothing" {
	run --separate-stderr "$SBX" --backend bwrap --dry-run -C "$ws" -- touch "$ws/ran it"
	[ "$status" -eq 0 ]
	[[ "$output" == *bwrap* ]]
	[[ "$output" == *"--unshare-net"* ]]
	[[ "$output" == *"--ro-bind / /"* ]]
	if is_root; then
		# root: the shim remounts the host devices, then drops all
		[[ "$output" == *"--cap-drop ALL "*"--cap-add CAP_SYS_ADMIN --cap-add CAP_SETPCAP"* ]]
		[[ "$output" != *"--cap-add CAP_"[!S]* ]]
		[[ "$output" == *"--sbx-internal-shim --ro-dev --seccomp"* ]]
	else
		[[ "$output" == *"--disable-userns"* ]]
		[[ "$output" == *"--sbx-internal-shim --seccomp"* ]]
	fi
	[[ "$output" == *"'$ws/ran it'"* ]]
	[ ! -e "$ws/ran it" ]
}
