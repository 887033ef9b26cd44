#!/usr/bin/env bats
# Protected names held at the moment of the call, on every Linux backend:
# the supervisor (notify.c) refuses a held name when it would be made,
# lets everything else in the same folder be made, renamed and removed,
# holds git folders made in the run as existing ones, refuses set-id
# files but not set-id folders, and makes nothing on the host. Each
# attack has its positive control beside it. Runs as root and as nobody.

load helper
bats_require_minimum_version 1.5.0

setup() {
	ws="$BATS_TEST_TMPDIR/ws"
	mkdir -p "$ws"
	backends=
	"$SBX" --probe 2>/dev/null | grep -q '^bwrap=ok' && backends="bwrap"
	"$SBX" --probe 2>/dev/null | grep -q '^landlock=ok' &&
	    backends="$backends landlock"
	[ -n "$backends" ] || sbx_skip "neither bwrap nor landlock works here"
}

# listing DIR: every entry below DIR with its type, sorted.
listing() {
	(cd "$1" && find . -printf '%y %p\n' | LC_ALL=C sort)
}

@test "hold: a missing held name is refused with EACCES, the folder stays writable" {
	for b in $backends; do
		rm -rf "${ws:?}"/* "$ws"/.[!.]*
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- sh -c '
			mkdir .vscode 2>/dev/null && exit 10
			echo x > .envrc 2>/dev/null && exit 11
			ln -s /tmp .claude 2>/dev/null && exit 12
			python3 -c "
import errno, os
try:
    os.mkdir(\".idea\")
except OSError as e:
    raise SystemExit(0 if e.errno == errno.EACCES else 13)
raise SystemExit(14)" || exit $?
			echo a > a && mv a b && mkdir d && rmdir d && rm b || exit 15
			mkdir x && mv x .husky 2>/dev/null && exit 16
			echo ok'
		[ "$status" -eq 0 ]
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv stderr)"; false; }
		[ "$(kv stdout)" = 'ok\n' ]
		kv denied | grep -q "mkdir $ws/.vscode"
		kv denied | grep -q "open $ws/.envrc"
		[ "$(listing "$ws")" = "$(printf 'd .\nd ./x')" ]
	done
}

@test "hold: -w HOME makes new files in the home; its start-up files stay held" {
	home="$BATS_TEST_TMPDIR/home"
	for b in $backends; do
		rm -rf "$home"
		mkdir -p "$home/.config/fish" "$home/.local"
		echo orig > "$home/.bashrc"
		run --separate-stderr env HOME="$home" "$SBX" --backend "$b" \
		    -C "$ws" -w "$home" -- sh -c '
			cd "$HOME" || exit 9
			echo ok > notes.txt || exit 10
			echo ok > .config/new.lock || exit 11
			mv notes.txt notes2.txt || exit 12
			mkdir .local/state || exit 13
			echo x >> .bashrc 2>/dev/null && exit 14
			echo x > .profile 2>/dev/null && exit 15
			echo x > .config/fish/config.fish 2>/dev/null && exit 16
			mkdir -p .config/git 2>/dev/null && exit 17
			mv .bashrc b 2>/dev/null && exit 18
			echo done'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		[ "$(cat "$home/notes2.txt")" = ok ]
		[ "$(cat "$home/.bashrc")" = orig ]
		[ ! -e "$home/.profile" ] && [ ! -e "$home/.config/git" ]
		[ ! -e "$home/.config/fish/config.fish" ]
	done
}

@test "hold: tar -xf of set-group-ID folders works; a set-id file is refused" {
	mkdir -p "$BATS_TEST_TMPDIR/t/src/shared"
	chmod 2775 "$BATS_TEST_TMPDIR/t/src/shared"
	echo a > "$BATS_TEST_TMPDIR/t/src/shared/f"
	for b in $backends; do
		rm -rf "${ws:?}"/*
		tar -C "$BATS_TEST_TMPDIR/t" -cf "$ws/t.tar" src
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- sh -c '
			tar -xf t.tar || exit 10
			cp /bin/true t || exit 11
			chmod u+s t 2>/dev/null && exit 12
			chmod g+s t 2>/dev/null && exit 13
			chmod 755 t || exit 14
			mkdir g && chmod 2775 g || exit 15
			echo ok'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		[ "$(stat -c %a "$ws/src/shared")" = 2775 ]
		[ "$(stat -c %a "$ws/g")" = 2775 ]
		[ "$(stat -c %a "$ws/t")" = 755 ]
		kv denied | grep -q "chmod $ws/t"
	done
}

@test "hold: a repository made in the run is held as an existing one" {
	for b in $backends; do
		rm -rf "${ws:?}"/* "$ws"/.git
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- sh -c '
			git init -q . || exit 10
			echo x > .git/hooks/pre-commit 2>/dev/null && exit 11
			cp .git/hooks/pre-commit.sample .git/hooks/pre-push 2>/dev/null && exit 12
			mv .git/hooks/update.sample .git/hooks/update 2>/dev/null && exit 13
			git config core.hooksPath h 2>/dev/null && exit 14
			git config core.fsmonitor "touch pwned" 2>/dev/null && exit 15
			echo "[alias] st = !touch pwned" >> .git/config 2>/dev/null && exit 16
			echo "gitdir: /x" > .git/commondir 2>/dev/null && exit 17
			git config user.name someone || exit 18
			echo hi > f && git add f || exit 19
			git -c user.email=a@b commit -qm one || exit 20
			echo ok'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		[ "$(git -C "$ws" log --format=%an)" = someone ]
		[ ! -e "$ws/.git/hooks/pre-commit" ] && [ ! -e "$ws/.git/hooks/pre-push" ]
		[ ! -e "$ws/.git/commondir" ]
		! git -C "$ws" config core.hooksPath
		! git -C "$ws" config core.fsmonitor
		kv denied | grep -q "core.hookspath"
		# Outside, git runs no code the command left.
		git -C "$ws" -c user.name=a -c user.email=a@b commit -q \
		    --allow-empty -m two
		git -C "$ws" status >/dev/null
		[ ! -e "$ws/pwned" ]
	done
}

@test "hold: a .git moved in or not a folder is refused; mkdir .git works" {
	for b in $backends; do
		rm -rf "${ws:?}"/* "$ws"/.git
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- sh -c '
			mkdir -p x/hooks && echo evil > x/hooks/pre-commit || exit 10
			mv x .git 2>/dev/null && exit 11
			echo "gitdir: x" > .git 2>/dev/null && exit 12
			mkdir .git && mkdir .git/hooks || exit 13
			mv x/hooks .git/hooks2 2>/dev/null && exit 14
			echo ok'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		[ -d "$ws/.git/hooks" ] && [ ! -e "$ws/.git/hooks2" ]
	done
}

@test "hold: sbx killed at any point leaves the folder as the command left it" {
	home="$BATS_TEST_TMPDIR/home"
	mkdir -p "$home/.config"
	git -C "$ws" init -q
	mkdir "$ws/own"
	before=$(listing "$ws" | grep -v ' ./own/'; listing "$home")
	n=0
	for b in $backends; do
		for i in $(seq 1 $((200 / $(echo $backends | wc -w)))); do
			env HOME="$home" "$SBX" --backend "$b" -C "$ws" -w "$home" \
			    -- sh -c 'echo x > own/f; sleep 5' >/dev/null 2>&1 &
			pid=$!
			sleep "0.0$((RANDOM % 90 + 10))"
			kill -9 "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			n=$((n + 1))
		done
	done
	# What sbx's sandbox left running dies with it (bwrap --die-with-parent,
	# Landlock's keeper); give it a moment, then compare.
	sleep 1
	after=$(listing "$ws" | grep -v ' ./own/'; listing "$home")
	[ "$n" -ge 200 ]
	[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after"); false; }
}

@test "hold: an earlier version's placeholders are removed unless a run holds them" {
	git -C "$ws" init -q
	mkdir "$ws/.vscode" "$ws/.envrc" "$ws/.idea" "$ws/.git/modules" \
	    "$ws/.git/.git" "$ws/.git/worktrees"
	: > "$ws/.git/config.worktree"
	mkdir "$ws/.claude" && echo mine > "$ws/.claude/notes"
	run --separate-stderr "$SBX" --dry-run -C "$ws" -- true
	[ -d "$ws/.vscode" ]	# a dry run changes nothing
	for b in $backends; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- true
		[ "$(kv exit_code)" = 0 ]
	done
	[ ! -e "$ws/.vscode" ] && [ ! -e "$ws/.envrc" ] && [ ! -e "$ws/.idea" ]
	[ ! -e "$ws/.git/modules" ] && [ ! -e "$ws/.git/.git" ]
	[ ! -e "$ws/.git/worktrees" ] && [ ! -e "$ws/.git/config.worktree" ]
	[ "$(cat "$ws/.claude/notes")" = mine ]	# not empty: the user's
	# A live run of the earlier version holds its folder's lock (shared).
	mkdir "$ws/.zed"
	flock -s "$ws" sleep 3 &
	sleep 0.3
	run --separate-stderr "$SBX" -C "$ws" -- true
	[ -d "$ws/.zed" ]
	wait
	run --separate-stderr "$SBX" -C "$ws" -- true
	[ ! -e "$ws/.zed" ]
}

@test "hold: without user notification bwrap refuses to run, and says why" {
	require_bwrap
	run --separate-stderr env SBX_NOTIFY_ABSENT=1 "$SBX" --backend bwrap \
	    -C "$ws" -- touch ran
	[ "$status" -eq 125 ]
	[ "$(kv error)" = unavailable ]
	[[ "$stderr" == *"seccomp user notification"*"upgrade the kernel"* ]]
	[ ! -e "$ws/ran" ]
	# The positive control: with it, the same line runs.
	run --separate-stderr "$SBX" --backend bwrap -C "$ws" -- touch ran
	[ "$status" -eq 0 ] && [ -e "$ws/ran" ]
}

@test "hold: the plan shows the supervisor and no placeholder mount" {
	run --separate-stderr "$SBX" --backend bwrap --dry-run -C "$ws" -- true
	[ "$status" -eq 0 ]
	[[ "$output" == *"# supervisor: held $ws/.envrc (missing)"* ]]
	[[ "$output" == *"entries=supervisor"* ]]
	[[ "$output" != *"--tmpfs $ws/.vscode"* ]]
}
