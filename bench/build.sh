#!/bin/sh
# bench/build.sh: a real build under the Landlock backend against the same
# build with --sandbox host: sbx's own sources, `make -j2 sbx` from clean,
# in a git workspace (so the root holds .git: a folder with holes, whose
# new entries the supervisor creates), as the median of per-round ratios
# over ROUNDS (default 5) interleaved rounds; the bwrap backend beside it
# for reference. Target (issue 10): landlock within 1.1x of host.
#
# It also counts, with strace, the calls the supervisor answered in one
# Landlock build (each one a round trip): the seccomp notifications are
# the calls strace sees return from the supervisor's thread.
# Usage: [ROUNDS=N] bench/build.sh [SBX]   (default: ./sbx); needs
# hyperfine, git, python3 and a C compiler; strace for the count.
set -eu
cd "$(dirname "$0")/.."
sbx=$(cd "$(dirname "${1:-./sbx}")" && pwd)/$(basename "${1:-./sbx}")
command -v hyperfine >/dev/null 2>&1 || { echo "bench: hyperfine is not installed" >&2; exit 1; }
out=$(pwd)/bench/out
mkdir -p "$out"
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
ws=$top/ws
mkdir "$ws"
git archive HEAD | tar -x -C "$ws"
git -C "$ws" init -q
git -C "$ws" add -A
git -C "$ws" -c user.email=b@example.org -c user.name=bench commit -qm src
cc=cc
command -v musl-gcc >/dev/null 2>&1 && cc=musl-gcc
build="make -j2 CC=$cc sbx"
cmds="host landlock"
"$sbx" --probe 2>/dev/null | grep -q '^bwrap=ok' && cmds="$cmds bwrap"
set --
for c in $cmds; do
	case $c in
	host) flag="--sandbox host" ;;
	*) flag="--backend $c" ;;
	esac
	set -- "$@" -n "$c" "$sbx -C $ws $flag --passthrough -- $build"
done
rounds=${ROUNDS:-5}
i=1
while [ "$i" -le "$rounds" ]; do
	hyperfine -w 1 -m 3 --prepare "make -C $ws clean" \
	    --export-json "$out/build.$i.json" "$@" >"$out/build.txt" 2>&1 ||
	    { cat "$out/build.txt" >&2; exit 1; }
	i=$((i + 1))
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
runs = []
for i in range(1, rounds + 1):
    r = json.load(open(f"{out}/build.{i}.json"))["results"]
    runs.append({x["command"]: x["median"] for x in r})
for name in ("host", "landlock", "bwrap"):
    if name in runs[0]:
        t = statistics.median(x[name] for x in runs)
        v = sorted(x[name] / x["host"] for x in runs)
        print(f"{name:9} {t:7.2f} s  {statistics.median(v):5.3f}x host  "
              f"(rounds {v[0]:.3f}-{v[-1]:.3f})")
l = statistics.median(sorted(x["landlock"] / x["host"] for x in runs))
print(f"landlock/host {l:.3f}x, median of {rounds} rounds (target <= 1.10): "
      f"{'ok' if l <= 1.1 else 'MISSED'}")
PY
if command -v strace >/dev/null 2>&1; then
	make -C "$ws" clean >/dev/null
	# The supervisor's own calls: openat2 resolves a path it was asked
	# about, ioctl answers (SECCOMP_IOCTL_NOTIF_*); counted per thread.
	strace -f -qq -e trace=ioctl -o "$out/build.strace" \
	    "$sbx" -C "$ws" --backend landlock --passthrough -- $build \
	    >/dev/null 2>&1 || :
	n=$(grep -c 'SECCOMP_IOCTL_NOTIF_RECV\|0xc0502100' "$out/build.strace" || :)
	echo "supervised calls in one landlock build: $n"
fi
