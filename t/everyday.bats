#!/usr/bin/env bats
# Everyday jobs, real tools, no mocks, under bwrap and under Landlock: the
# private temp folder (mktemp, gcc, go, pytest), --cache (npm ci, go,
# ccache), --deny-read and --deny-write paths that do not exist, and root's
# CI jobs that chown (tar, cp -a). t/run runs this file as root and again
# as nobody. A tool that is not installed skips with the reason.

load helper
bats_require_minimum_version 1.5.0

setup() {
	top=$(cd "$BATS_TEST_TMPDIR" && pwd -P)
	ws="$top/ws"
	mkdir -p "$ws"
	# A home outside /tmp, as real ones are: the private /tmp hides /tmp.
	HOME=$(mktemp -d /var/tmp/sbx-everyday-home.XXXXXX)
	export HOME
	unset XDG_CACHE_HOME
	cd "$ws" || return 1
}

teardown() {
	kill_bg
	case $HOME in
	/var/tmp/sbx-everyday-home.*) chmod -R u+rwx "$HOME"; rm -rf "$HOME" ;;
	esac
}

# backend B: skip unless backend B works here; B goes in $B.
backend() {
	B=$1
	if [ "$B" = bwrap ]; then require_bwrap; else require_landlock; fi
}

# sb ARGS...: sbx on $B in the workspace, the result in $output.
sb() {
	run --separate-stderr "$SBX" --backend "$B" -C "$ws" -t 120 "$@" 3>&-
}

# ok: the last sb ran and exited 0, else say what it printed.
ok() {
	[ "$status" -eq 0 ] && [ "$(kv exit_code)" = 0 ] || {
		printf 'status %s\n%s\n%s\n' "$status" "$output" "$stderr" >&2
		return 1
	}
}

# ---- the private temp folder ------------------------------------------

t_tmp_writable() {
	backend "$1" || return
	# Empty but for the mount points of the workspace, itself in /tmp.
	# So is sbx's own binary when it lives in /tmp (bound for the shim).
	first=${ws#/tmp/}
	first=${first%%/*}
	self=$(realpath "$SBX")
	own=${self#/tmp/}
	own=${own%%/*}
	sb -- sh -c 'test -z "$(ls -A "$TMPDIR" | grep -vx -e "$1" -e "$2")" ||
	    exit 9
	    f=$(mktemp) && echo hi >"$f" && cat "$f" && mkdir "$TMPDIR/d" &&
	    printf "%s\n" "$TMPDIR"' sh "$first" "$own"
	ok
	out=$(kvdec stdout)
	[ "$(printf '%s\n' "$out" | head -n 1)" = hi ]
	dir=$(printf '%s\n' "$out" | tail -n 1)
	if [ "$B" = bwrap ]; then
		[ "$dir" = /tmp ]
	else
		[[ "$dir" == /tmp/sbx-$(id -u)/run-* ]]
		# Removed when the run ended.
		[ ! -e "$dir" ]
	fi
}

@test "bwrap: a private temp folder: TMPDIR, empty, writable, gone after" {
	t_tmp_writable bwrap
}

@test "landlock: a private temp folder: TMPDIR, empty, writable, gone after" {
	t_tmp_writable landlock
}

t_tmp_private() {
	backend "$1" || return
	echo secret >"$top/host-file"
	# Run A leaves a file in its temp folder and waits; run B looks.
	"$SBX" --backend "$B" -C "$ws" --passthrough -t 30 -- sh -c \
	    'echo mine >"$TMPDIR/left"; echo "$TMPDIR" >a.dir; sleep 20' \
	    >/dev/null 2>&1 3>&- &
	pids=("$!")
	wait_for test -s "$ws/a.dir"
	adir=$(cat "$ws/a.dir")
	sb -- sh -c "cat '$top/host-file' 2>&1; cat '$adir/left' 2>&1;
	    ls \"\$TMPDIR\"; ls /tmp/sbx-* 2>&1; :"
	kill_bg
	ok
	out=$(kvdec stdout)
	[[ "$out" != *secret* ]] || { echo "$out" >&2; return 1; }
	[[ "$out" != *mine* ]] || { echo "$out" >&2; return 1; }
}

@test "bwrap: the temp folder hides the host's /tmp and other runs' folders" {
	t_tmp_private bwrap
}

@test "landlock: the temp folder hides the host's /tmp and other runs' folders" {
	t_tmp_private landlock
}

t_tmp_cc() {
	backend "$1" || return
	require_cmd cc
	printf '#include <stdio.h>\nint main(void) { puts("built"); return 0; }\n' >hello.c
	sb -- sh -c 'cc -o hello hello.c && ./hello'
	ok
	[ "$(kv stdout)" = 'built\n' ]
}

@test "bwrap: a C build (cc writes its temporary files to TMPDIR)" {
	t_tmp_cc bwrap
}

@test "landlock: a C build (cc writes its temporary files to TMPDIR)" {
	t_tmp_cc landlock
}

t_tmp_pytest() {
	backend "$1" || return
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pytest' 2>/dev/null ||
	    sbx_skip "pytest for /usr/bin/python3 is not installed (python3-pytest)"
	cat >test_tmp.py <<'EOF'
import tempfile

def test_tmp_path(tmp_path):
    (tmp_path / "x").write_text("x")
    assert (tmp_path / "x").read_text() == "x"

def test_tempfile():
    with tempfile.NamedTemporaryFile() as f:
        f.write(b"y")
EOF
	sb -- /usr/bin/python3 -m pytest -q -p no:cacheprovider
	ok
	[[ "$(kv stdout)" == *"2 passed"* ]]
	# Nothing of pytest's or tempfile's left in the workspace.
	[ "$(ls -A "$ws" | grep -v -e '^test_tmp.py$' -e '^__pycache__$')" = "" ]
}

@test "bwrap: pytest's tmp_path and tempfile stay out of the workspace" {
	t_tmp_pytest bwrap
}

@test "landlock: pytest's tmp_path and tempfile stay out of the workspace" {
	t_tmp_pytest landlock
}

t_host_tmp() {
	backend "$1" || return
	echo visible >"$top/host-file"
	sb --host-tmp -- sh -c "cat '$top/host-file'; mktemp -p /tmp 2>/dev/null && echo made; :"
	ok
	[ "$(kv stdout)" = 'visible\n' ]
}

@test "bwrap: --host-tmp: the host's /tmp, readable and read-only" {
	t_host_tmp bwrap
}

@test "landlock: --host-tmp: the host's /tmp, readable and read-only" {
	t_host_tmp landlock
}

@test "landlock: a killed run's temp folder is removed by the next run" {
	backend landlock || return
	"$SBX" --backend landlock -C "$ws" --passthrough -- sh -c \
	    'touch "$TMPDIR/x" && echo "$TMPDIR" >k.tmp && mv k.tmp k.dir &&
	    exec sleep 60' \
	    >/dev/null 2>&1 3>&- &
	pid=$!
	wait_for test -s "$ws/k.dir"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	kdir=$(cat k.dir)
	[ -e "$kdir/x" ]
	sb -- true
	ok
	[ ! -e "$kdir" ]
}

@test "landlock: removing the temp folder never follows a link the command left" {
	backend landlock || return
	mkdir "$top/outside"
	echo keep >"$top/outside/file"
	sb -- sh -c "ln -s '$top/outside' \"\$TMPDIR/dir-link\";
	    ln -s '$top/outside/file' \"\$TMPDIR/file-link\";
	    mkdir -m 0 \"\$TMPDIR/closed\";
	    d=\"\$TMPDIR\"; i=0; while [ \$i -lt 100 ]; do d=\$d/d; i=\$((i+1)); done;
	    mkdir -p \"\$d\" && ln -s '$top/outside' \"\$d/deep-link\" && echo \"\$TMPDIR\""
	ok
	[ "$(cat "$top/outside/file")" = keep ]
	[ ! -e "$(kvdec stdout)" ]
}

# ---- --cache ----------------------------------------------------------

# A package and an app that depends on it through a local tarball, with
# its lock file: npm ci needs no network.
npm_app() {
	require_cmd npm
	export npm_config_cache="$top/setup-npm-cache"
	mkdir -p "$top/dep" "$ws"
	printf '{"name":"dep","version":"1.0.0","main":"index.js"}\n' >"$top/dep/package.json"
	echo 'module.exports = () => "dep ok";' >"$top/dep/index.js"
	(cd "$top/dep" && npm pack --silent >/dev/null) || return 1
	mv "$top/dep/dep-1.0.0.tgz" "$ws/"
	cat >"$ws/package.json" <<'EOF'
{"name": "app", "version": "1.0.0", "private": true,
 "dependencies": {"dep": "file:dep-1.0.0.tgz"},
 "scripts": {"test": "node -e \"console.log(require('dep')())\""}}
EOF
	(cd "$ws" && npm install --package-lock-only --silent --no-audit \
	    --no-fund >/dev/null) || return 1
	unset npm_config_cache
}

t_cache_npm() {
	backend "$1" || return
	npm_app || return
	sb --cache npm -- sh -c 'npm ci --no-audit --no-fund --offline && npm test'
	ok
	[[ "$(kv stdout)" == *"dep ok"* ]]
	[ -d "$HOME/.cache/sbx/npm/_cacache" ]
	# The user's own npm cache is not the sandbox's.
	[ ! -e "$HOME/.npm" ]
}

@test "bwrap: npm ci with --cache npm" {
	t_cache_npm bwrap
}

@test "landlock: npm ci with --cache npm" {
	t_cache_npm landlock
}

t_cache_go() {
	backend "$1" || return
	require_cmd go
	printf 'module example.org/hello\n\ngo 1.19\n' >go.mod
	cat >main.go <<'EOF'
package main

import "fmt"

func Greet() string { return "hello" }

func main() { fmt.Println(Greet()) }
EOF
	cat >main_test.go <<'EOF'
package main

import (
	"os"
	"testing"
)

func TestGreet(t *testing.T) {
	if Greet() != "hello" {
		t.Fatal(Greet())
	}
	if err := os.WriteFile(t.TempDir()+"/x", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
}
EOF
	sb --cache go -- sh -c 'go build -o hello . && ./hello && go vet ./... && go test ./...'
	ok
	[[ "$(kv stdout)" == 'hello\nok '* ]]
	[ -n "$(ls -A "$HOME/.cache/sbx/go/build")" ]
}

@test "bwrap: a Go build and test with --cache go" {
	t_cache_go bwrap
}

@test "landlock: a Go build and test with --cache go" {
	t_cache_go landlock
}

t_cache_ccache() {
	backend "$1" || return
	require_cmd ccache
	require_cmd cc
	printf 'int main(void) { return 0; }\n' >a.c
	sb --cache ccache -- sh -c 'ccache cc -c a.c -o a.o && ccache cc -c a.c -o a.o && ccache -s'
	ok
	[ -n "$(ls -A "$HOME/.cache/sbx/ccache")" ]
}

@test "bwrap: ccache with --cache ccache" {
	t_cache_ccache bwrap
}

@test "landlock: ccache with --cache ccache" {
	t_cache_ccache landlock
}

t_cache_bins() {
	backend "$1" || return
	mkdir -p "$HOME/.cargo/bin" "$HOME/go/bin" "$HOME/.local/bin" \
	    "$HOME/.npm" "$HOME/.cache/go-build"
	sb --cache npm --cache go --cache cargo --cache pip -- sh -c '
	    for d in "$HOME/.cargo/bin" "$HOME/go/bin" "$HOME/.local/bin" \
	        "$HOME/.npm" "$HOME/.cache/go-build"; do
	        touch "$d/planted" 2>/dev/null && echo "wrote $d"
	    done
	    for d in "$npm_config_cache" "$GOCACHE" "$GOMODCACHE" \
	        "$CARGO_HOME" "$PIP_CACHE_DIR"; do
	        touch "$d/mine" || echo "cannot write $d"
	    done; :'
	ok
	[ "$(kv stdout)" = "" ] || { kvdec stdout >&2; return 1; }
}

@test "bwrap: --cache grants sbx's own folders, never bin or the user's caches" {
	t_cache_bins bwrap
}

@test "landlock: --cache grants sbx's own folders, never bin or the user's caches" {
	t_cache_bins landlock
}

@test "--cache: each tool's variables, exactly, in sbx's own root" {
	r="$HOME/.cache/sbx"
	run --separate-stderr "$SBX" --sandbox host --cache npm --cache yarn \
	    --cache pnpm --cache pip --cache go --cache cargo --cache maven \
	    --cache gradle --cache ccache -e MAVEN_OPTS=-Xmx1g -- env
	[ "$status" -eq 0 ]
	env=$(kvdec stdout)
	for want in "npm_config_cache=$r/npm" "YARN_CACHE_FOLDER=$r/yarn/cache" \
	    "YARN_GLOBAL_FOLDER=$r/yarn/global" \
	    "npm_config_store_dir=$r/pnpm/store" \
	    "npm_config_cache_dir=$r/pnpm/cache" \
	    "npm_config_package_import_method=clone-or-copy" \
	    "PIP_CACHE_DIR=$r/pip" "GOCACHE=$r/go/build" \
	    "GOMODCACHE=$r/go/mod" "CARGO_HOME=$r/cargo" \
	    "MAVEN_OPTS=-Xmx1g -Dmaven.repo.local=$r/maven/repository" \
	    "GRADLE_USER_HOME=$r/gradle" "CCACHE_DIR=$r/ccache"; do
		grep -qxF -- "$want" <<<"$env" || { echo "missing $want" >&2; return 1; }
		d=${want#*=}
		d=${d#-Dmaven.repo.local=}
		d=${d#-Xmx1g -Dmaven.repo.local=}
		[ "$d" = clone-or-copy ] || [ -d "$d" ]
	done
	# XDG_CACHE_HOME moves the root; -e wins over a --cache variable.
	XDG_CACHE_HOME="$top/xdg" run "$SBX" --sandbox host --cache pip \
	    --cache go -e GOCACHE=/elsewhere -- env
	env=$(kvdec stdout)
	grep -qxF "PIP_CACHE_DIR=$top/xdg/sbx/pip" <<<"$env"
	grep -qxF "GOCACHE=/elsewhere" <<<"$env"
}

@test "--cache: the user's cargo and gradle settings are linked in" {
	mkdir -p "$HOME/.cargo" "$HOME/.gradle"
	echo '[net]' >"$HOME/.cargo/config.toml"
	echo 'org.gradle.daemon=false' >"$HOME/.gradle/gradle.properties"
	run "$SBX" --sandbox host --cache cargo --cache gradle -- sh -c \
	    'cat "$CARGO_HOME/config.toml" "$GRADLE_USER_HOME/gradle.properties"'
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = '[net]\norg.gradle.daemon=false\n' ]
}

@test "--cache: an unknown tool, and a cache folder that is a link, are refused" {
	run --separate-stderr "$SBX" --sandbox host --cache nosuch -- true
	[ "$status" -eq 125 ]
	[[ "$stderr" =~ ^sbx:\ --cache\ nosuch:\ must\ be\ one\ of\ npm, ]]
	mkdir -p "$HOME/.cache/sbx" "$top/elsewhere"
	ln -s "$top/elsewhere" "$HOME/.cache/sbx/npm"
	run --separate-stderr "$SBX" --sandbox host --cache npm -- true
	[ "$status" -eq 125 ]
	[[ "$stderr" == "sbx: --cache: $HOME/.cache/sbx/npm: not a folder"* ]]
	[ "$(kv error)" = path ]
}

@test "--cache: another user's folder on the way to a cache folder is refused, on every executor" {
	is_root || skip "needs root to give a folder to another user"
	for ex in "--sandbox host" "--backend bwrap" "--backend landlock"; do
		[ "$ex" = "--sandbox host" ] ||
		    "$SBX" --probe 2>/dev/null | grep -q "^${ex#--backend }=ok" ||
		    { echo "# ${ex#--backend } is unavailable here" >&3; continue; }
		rm -rf "$HOME/.cache/sbx"
		run --separate-stderr "$SBX" $ex --cache go -- true
		[ "$status" -eq 0 ]
		chown 65534 "$HOME/.cache/sbx/go"
		run --separate-stderr "$SBX" $ex --cache go -- sh -c 'touch "$GOCACHE/ran"'
		[ "$status" -eq 125 ]
		[[ "$stderr" == "sbx: --cache: $HOME/.cache/sbx/go: not a folder of the user's own"* ]]
		[ "$(kv error)" = path ]
		[ ! -e "$HOME/.cache/sbx/go/build/ran" ]
	done
}

# ---- --deny-read and --deny-write paths that do not exist --------------

t_deny_missing() {
	backend "$1" || return
	mkdir -p "$ws/sub"
	: >"$ws/sub/other"
	sb --deny-read "$HOME/.aws" --deny-read sub/secrets/key \
	    --deny-write .env -- sh -c '
	    mkdir -p sub/secrets 2>/dev/null && echo "made sub/secrets"
	    echo x >.env 2>/dev/null && echo "made .env"
	    mkdir -p "$HOME/.aws" 2>/dev/null && echo "made ~/.aws"
	    cat .env sub/secrets/key 2>/dev/null && echo "read"
	    echo x >>sub/other && echo "sub writable"; :'
	ok
	[ "$(kv stdout)" = 'sub writable\n' ] || { kvdec stdout >&2; return 1; }
	# No placeholder left on the host.
	[ ! -e "$ws/.env" ] && [ ! -e "$ws/sub/secrets" ] && [ ! -e "$HOME/.aws" ]
}

@test "bwrap: a missing --deny-read or --deny-write path stays absent" {
	t_deny_missing bwrap
}

@test "landlock: a missing --deny-read or --deny-write path stays absent" {
	t_deny_missing landlock
}

@test "a missing --deny path with '..' in it, or a dangling link, is refused" {
	run --separate-stderr "$SBX" --sandbox host --deny-read nope/../x -- true
	[ "$status" -eq 125 ]
	[[ "$stderr" == "sbx: --deny-read nope/../x: a missing path with"* ]]
	ln -s "$top/nowhere" dangling
	run --separate-stderr "$SBX" --sandbox host --deny-write dangling/x -- true
	[ "$status" -eq 125 ]
	[[ "$stderr" == *"a symbolic link to a missing path" ]]
}

# ---- root in CI: owners ------------------------------------------------

t_chown() {
	backend "$1" || return
	require_cmd tar
	python3 - "$ws/other.tar" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    for name, uid in (("pkg/", 1000), ("pkg/a.txt", 1000), ("pkg/b.txt", 4242)):
        i = tarfile.TarInfo(name)
        i.uid, i.gid, i.uname, i.gname = uid, uid, "", ""
        if name.endswith("/"):
            i.type, i.mode = tarfile.DIRTYPE, 0o755
            t.addfile(i)
        else:
            data = name.encode()
            i.size, i.mode = len(data), 0o644
            t.addfile(i, io.BytesIO(data))
EOF
	sb -- sh -c 'tar -xf other.tar --same-owner && cp -a pkg copy &&
	    chown 1000:1000 copy/a.txt && chown -R 4242 pkg &&
	    stat -c "%u %n" pkg/a.txt copy/a.txt'
	ok
	me=$(id -u)
	[ "$(kv stdout)" = "$me pkg/a.txt\n$me copy/a.txt\n" ]
	[ "$(stat -c %u "$ws/pkg/b.txt")" = "$me" ]
}

@test "bwrap: tar --same-owner, cp -a and chown succeed; owners stay the user's" {
	t_chown bwrap
}

@test "landlock: tar --same-owner, cp -a and chown succeed; owners stay the user's" {
	t_chown landlock
}
