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

@test "hold: a missing folder above held names cannot be a link: ~/.config, ~/.local, .config/git" {
	home="$BATS_TEST_TMPDIR/home"
	for b in $backends; do
		rm -rf "$home"
		mkdir -p "$home"
		run --separate-stderr env HOME="$home" "$SBX" --backend "$b" \
		    -C "$ws" -w "$home" -- sh -c '
			cd "$HOME" || exit 9
			mkdir -p evil/git evil/fish l/bin || exit 10
			printf "[core]\n\tfsmonitor = touch ran\n" > evil/git/config
			ln -s evil .config 2>/dev/null && exit 11
			ln -s l .local 2>/dev/null && exit 12
			# by rename and by hard link of a link made elsewhere
			ln -s evil lnk && mv lnk .config 2>/dev/null && exit 13
			ln lnk .config 2>/dev/null && exit 14
			mkdir .config || exit 15
			ln -s ../evil/git .config/git 2>/dev/null && exit 16
			# positive controls: a link elsewhere, in .config beside
			ln -s evil ctl && ln -s ../evil .config/other || exit 17
			echo done'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		[ "$(kv stdout)" = 'done\n' ]
		kv denied | grep -q "symlink $home/.config"
		[ -d "$home/.config" ] && [ ! -L "$home/.config" ]
		[ ! -e "$home/.local" ] && [ ! -e "$home/.config/git" ]
		[ -z "$(HOME=$home git config --global --get core.fsmonitor)" ]
	done
}

@test "hold: bind(2) of a Unix socket at a held name is refused; elsewhere it binds" {
	for b in $backends; do
		rm -rf "${ws:?}"/* "$ws"/.[!.]*
		git -C "$ws" init -q
		run --separate-stderr "$SBX" --backend "$b" --allow-unix-sockets \
		    -C "$ws" -- python3 -c '
import errno, os, socket, sys
def bind(p):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(p)
        return 0
    except OSError as e:
        return e.errno
for p in (".envrc", ".git/commondir", "/proc/self/cwd/.claude"):
    if bind(p) != errno.EACCES:
        sys.exit("bound " + p)
# read-only under bwrap (EROFS), held under Landlock (EACCES)
if bind(".git/hooks/pre-commit") not in (errno.EACCES, errno.EROFS):
    sys.exit("bound a hook")
# a bare repository without its HEAD, with a config that runs a program:
# a socket may not give it one
os.system("git init -q --bare F0 && rm F0/HEAD && mv F0 F")
with open("F/config", "a") as f:
    f.write("[core]\n\tfsmonitor = touch ran\n")
if bind("F/HEAD") == 0:
    sys.exit("bound F/HEAD")
if bind("/proc/self/cwd/pc.sock") != 0 or not os.path.exists("pc.sock"):
    sys.exit("a bind through /proc/self/cwd")
os.umask(0o077)
if bind("ok.sock") != 0 or (os.stat("ok.sock").st_mode & 0o777) != 0o700:
    sys.exit("control")
print("done")'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		[ "$(kv stdout)" = 'done\n' ]
		[ -S "$ws/ok.sock" ]
		[ ! -e "$ws/.envrc" ] && [ ! -e "$ws/.git/hooks/pre-commit" ]
		[ ! -e "$ws/.git/commondir" ] && [ ! -e "$ws/.claude" ]
		[ ! -e "$ws/F/HEAD" ]
	done
}

@test "hold: bind(2)'s address changed by another thread during the call lands no held name" {
	command -v cc >/dev/null || sbx_skip "no C compiler (cc)"
	cat >"$BATS_TEST_TMPDIR/flip.c" <<'EOF'
/* flip NAME N: binds NAME N times while a thread turns the address
 * abstract and back (sun_path[0]); prints how many binds made NAME. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
static struct sockaddr_un a;
static volatile char first;
static void *flip(void *p)
{
	(void)p;
	for (;;) {
		((volatile char *)a.sun_path)[0] = 0;
		((volatile char *)a.sun_path)[0] = first;
	}
	return NULL;
}
int main(int argc, char **argv)
{
	pthread_t t;
	struct stat st;
	int i, n = atoi(argv[2]), made = 0;

	(void)argc;
	a.sun_family = AF_UNIX;
	strcpy(a.sun_path, argv[1]);
	first = argv[1][0];
	pthread_create(&t, NULL, flip, NULL);
	for (i = 0; i < n; i++) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		bind(s, (struct sockaddr *)&a, sizeof(a));
		close(s);
		if (lstat(argv[1], &st) == 0) {
			made++;
			unlink(argv[1]);
		}
	}
	printf("%d ", made);
	return 0;
}
EOF
	cc -O2 -pthread -o "$ws/flip" "$BATS_TEST_TMPDIR/flip.c"
	for b in $backends; do
		rm -f "$ws/.envrc" "$ws/ok.sock"
		run --separate-stderr "$SBX" --backend "$b" --allow-unix-sockets \
		    -C "$ws" -- sh -c './flip .envrc 3000; ./flip ok.sock 300'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		# none at the held name; the control's path binds land
		set -- $(kv stdout)
		[ "$1" = 0 ] || { echo "$b: $1 sockets made at .envrc"; false; }
		[ "$2" -gt 0 ]
		[ ! -e "$ws/.envrc" ]
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
		# As tar leaves it outside: 2775 for root; an ordinary user's
		# tar drops the bit and applies the umask.
		rm -rf "$BATS_TEST_TMPDIR/out" && mkdir "$BATS_TEST_TMPDIR/out"
		tar -C "$BATS_TEST_TMPDIR/out" -xf "$ws/t.tar"
		want=$(stat -c %a "$BATS_TEST_TMPDIR/out/src/shared")
		! is_root || [ "$want" = 2775 ]
		[ "$(stat -c %a "$ws/src/shared")" = "$want" ]
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

@test "hold: a git folder by any name is held: bare repositories, HEAD-found folders" {
	for b in $backends; do
		rm -rf "${ws:?}"/* "$ws"/.git
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- sh -c '
			git init -q --bare b.git || exit 10
			echo x > b.git/hooks/pre-receive 2>/dev/null && exit 11
			git -C b.git config core.fsmonitor "touch pwned" \
			    2>/dev/null && exit 12
			# config (and hooks) first, HEAD after: judged then
			mkdir -p src/objects src/refs src/hooks
			printf "[core]\n\tfsmonitor = touch pwned\n" > src/config
			echo "ref: refs/heads/main" > src/HEAD 2>/dev/null && exit 13
			mv src/config src/c && echo x > src/hooks/post-checkout
			ln -s ../refs src/HEAD 2>/dev/null && exit 14
			rm src/hooks/post-checkout
			echo "gitdir: /x" > src/commondir
			echo "ref: refs/heads/main" > src/HEAD 2>/dev/null && exit 15
			rm src/commondir
			# an open writer of the config: no lease, no HEAD
			printf "[core]\n\tbare = true\n" > src/config
			exec 4>>src/config
			echo "ref: refs/heads/main" > src/HEAD 2>/dev/null && exit 16
			exec 4>&-
			echo "ref: refs/heads/main" > src/HEAD || exit 17
			echo "[alias] x = !touch pwned" >> src/config 2>/dev/null &&
			    exit 18
			echo x > src/hooks/pre-commit 2>/dev/null && exit 19
			# a new repository'"'"'s submodule folder, config first
			git init -q r && mkdir -p r/.git/modules/m || exit 20
			printf "[core]\n\tfsmonitor = touch pwned\n" > r/.git/modules/m/config
			echo "ref: refs/heads/main" > r/.git/modules/m/HEAD \
			    2>/dev/null && exit 21
			# controls: a HEAD-less folder keeps its config writable,
			# a push into the bare repository made here works
			mkdir plain && echo "[x] y = z" > plain/config &&
			    echo more >> plain/config || exit 22
			git -C r -c user.email=a@b -c user.name=a commit -q \
			    --allow-empty -m one && git -C r push -q ../b.git HEAD:main ||
			    exit 23
			echo ok'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		kv denied | grep -q "open $ws/src/HEAD core.fsmonitor"
		[ ! -e "$ws/b.git/hooks/pre-receive" ]
		[ "$(git -C "$ws/b.git" log --format=%s main)" = one ]
		# Outside, git in each of them runs nothing the command left.
		git -C "$ws/b.git" status >/dev/null 2>&1 || true
		(cd "$ws/src" && git status >/dev/null 2>&1) || true
		(cd "$ws/b.git" && git fsck >/dev/null 2>&1) || true
		[ ! -e "$ws/pwned" ] && [ ! -e "$ws/src/pwned" ] &&
		    [ ! -e "$ws/b.git/pwned" ]
	done
}

@test "hold: a git folder's holds stay under odd names, unsearchable folders, config hooks" {
	for b in $backends; do
		rm -rf "${ws:?}"/* "$ws"/.git
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- sh -c '
			# a name that ends as the kernel marks a removed file
			mkdir Y "Y (deleted)" && D="Y (deleted)" || exit 10
			mkdir "$D/objects" "$D/refs" "$D/hooks" || exit 11
			echo "ref: refs/heads/main" > "$D/HEAD" || exit 12
			printf "[alias]\n\tst = !touch pwned\n" > "$D/config" \
			    2>/dev/null && exit 13
			echo x > "$D/hooks/pre-receive" 2>/dev/null && exit 14
			rmdir Y
			# hooks defined in config (git 2.54)
			git init -q h || exit 15
			printf "[hook \"x\"]\n\tevent = pre-commit\n\tcommand = touch pwned\n" \
			    > h/.git/c.lock && mv h/.git/c.lock h/.git/config \
			    2>/dev/null && exit 16
			# a folder above made unsearchable while a descriptor of
			# the git folder is kept (nobody has no DAC override)
			mkdir -p A/G/objects A/G/refs &&
			    echo "ref: refs/heads/main" > A/G/HEAD || exit 17
			python3 -c "
import os, sys
d = os.open(\"A/G\", os.O_RDONLY | os.O_DIRECTORY)
os.chmod(\"A\", 0)
made = []
for name in (\"config\", \"hooks\"):
    try:
        if name == \"hooks\":
            os.mkdir(\"hooks\", dir_fd=d)
            os.close(os.open(\"hooks/pre-receive\", os.O_WRONLY | os.O_CREAT,
                0o755, dir_fd=d))
        else:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d))
        made.append(name)
    except OSError:
        pass
os.chmod(\"A\", 0o755)
sys.exit(\"made %s\" % made if made else 0)
" || exit 18
			echo ok'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		[ ! -e "$ws/Y (deleted)/config" ] && [ ! -e "$ws/A/G/config" ]
		! grep -q hook "$ws/h/.git/config"
		kv denied | grep -q "hook.x.command"
	done
}

@test "hold: a held git file is not reached through the command's descriptors or /proc" {
	for b in $backends; do
		rm -rf "${ws:?}"/* "$ws"/.git
		# In a subfolder: one that Landlock grants whole.
		mkdir -p "$ws/sub"
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- sh -c '
			cd sub && git init -q r && echo plain > f || exit 10
			python3 -c "
import os, sys
def tries(path, flags):
    try:
        os.close(os.open(path, flags))
        return True
    except OSError:
        return False
W = os.O_WRONLY | os.O_APPEND
c = os.open(\"r/.git/config\", os.O_RDONLY)
d = os.open(\"r/.git\", os.O_RDONLY)
f = os.open(\"f\", os.O_RDONLY)
bad = [p for p in (\"/proc/self/fd/%d\" % c, \"/dev/fd/%d\" % c,
    \"/proc/self/fd/%d/config\" % d, \"/proc/%d/cwd/r/.git/config\" % os.getpid(),
    \"/proc/thread-self/fd/%d\" % c) if tries(p, W)]
if bad: sys.exit(\"reached: %s\" % bad)
# controls: an ordinary file and a pipe reopened to write
if not tries(\"/proc/self/fd/%d\" % f, W): sys.exit(\"file refused\")
r, w = os.pipe()
os.dup2(w, 9)
with open(\"/dev/fd/9\", \"w\") as p: p.write(\"x\")
if os.read(r, 1) != b\"x\": sys.exit(\"pipe\")
" || exit 11
			echo out > /dev/stdout && echo err > /dev/stderr || exit 12
			echo ok'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		[ "$(kv stdout)" = 'out\nok\n' ] && [ "$(kv stderr)" = 'err\n' ]
		! grep -q fsmonitor "$ws/sub/r/.git/config"
	done
}

@test "hold: a folder swapped for a link mid-call lands nothing in a git folder" {
	# The swapper runs outside too, where no supervisor slows it: the
	# window between sbx's judging a path and the kernel's reading it
	# again (were the call let go on) is then wide.
	for b in $backends; do
		rm -rf "${ws:?}"/* "$ws"/.git
		mkdir -p "$ws/sub"
		python3 -c '
import os, sys, time
os.chdir(sys.argv[1])
stop = time.time() + 6
while time.time() < stop and not os.path.exists("stop"):
    try:
        os.mkdir("x")
        time.sleep(0.0002)
        os.rmdir("x")
        os.symlink("r/.git/hooks", "x")
        time.sleep(0.0002)
        os.unlink("x")
    except OSError:
        pass
' "$ws/sub" &
		swapper=$!
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -t 60s -- sh -c '
			cd sub && git init -q r || exit 10
			python3 -c "
import os, time
stop = time.time() + 3
made = breached = 0
while time.time() < stop:
    try:
        os.close(os.open(\"x/pre-commit\", os.O_WRONLY | os.O_CREAT, 0o755))
        made += 1
    except OSError:
        continue
    if os.path.lexists(\"r/.git/hooks/pre-commit\"):
        breached += 1
        break
    try:
        os.unlink(\"x/pre-commit\")
    except OSError:
        pass
print(made, breached)
"'
		touch "$ws/sub/stop"
		wait "$swapper" || true
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		# The control: files were made in x while it was a folder.
		set -- $(kvdec stdout)
		echo "$b: made $1, landed in hooks $2"
		[ "$1" -gt 0 ] && [ "$2" = 0 ]
		[ -z "$(ls "$ws/sub/r/.git/hooks" | grep -v '\.sample$')" ]
	done
}

@test "hold: FIFO opens that wait are bounded, and end with their caller" {
	for b in $backends; do
		rm -rf "${ws:?}"/*
		mkfifo "$ws/p"
		# 100 writers wait for a reader that never comes; at most 64
		# wait in sbx at once, the rest are told EAGAIN. Killed with
		# the run at its timeout, nothing is left waiting.
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -t 4s -- sh -c '
			for i in $(seq 100); do
				(sh -c "exec 3>p" 2>/dev/null || echo refused >> log) &
			done
			sleep 2
			echo "$(wc -l < log)" > count
			wait'
		[ "$(kv timed_out)" = 1 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		[ "$(cat "$ws/count")" -ge 36 ]
		[ "$(cat "$ws/count")" -le 100 ]
		# A waiting open whose caller is gone is let go of: 3 rounds
		# of 50 openers killed leave sbx as few threads as one round.
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -t 30s -- sh -c '
			for r in 1 2 3; do
				for i in $(seq 50); do
					timeout 0.3 sh -c "exec 3>p" &
				done
				wait
			done
			sleep 1.5
			for i in $(seq 60); do
				(sh -c "exec 3>p; sleep 1" 2>/dev/null ||
				    echo refused >> log2) &
			done
			sleep 0.5
			cat p
			wait
			test -e log2 && exit 9
			echo ok'
		[ "$(kv exit_code)" = 0 ] || { echo "$b: $(kv exit_code) $(kv stderr)"; false; }
		[ "$(kv stdout)" = 'ok\n' ]
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
	# A user's own empty .vscode, with no folder .envrc or .mcp.json
	# beside it (the earlier version's mark), stays.
	mkdir "$ws/.zed" "$ws/.cursor"
	for b in $backends; do
		run --separate-stderr "$SBX" --backend "$b" -C "$ws" -- true
		[ "$(kv exit_code)" = 0 ]
	done
	[ -d "$ws/.zed" ] && [ -d "$ws/.cursor" ]
	rmdir "$ws/.cursor"
	# A live run of the earlier version holds its folder's lock (shared).
	mkdir "$ws/.mcp.json"
	flock -s "$ws" sleep 3 &
	sleep 0.3
	run --separate-stderr "$SBX" -C "$ws" -- true
	[ -d "$ws/.zed" ] && [ -d "$ws/.mcp.json" ]
	wait
	run --separate-stderr "$SBX" -C "$ws" -- true
	[ ! -e "$ws/.zed" ] && [ ! -e "$ws/.mcp.json" ]
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
