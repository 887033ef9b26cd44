#!/usr/bin/env bats
# Capture: exact bytes below the cap, exact counts, head and tail kept with
# the "[sbx: N bytes cut]" marker past it, -m 0 and suffixes, independent
# caps per stream, no lost output at exit, large outputs, stdin, and the kv
# escaping (always one line of valid UTF-8, byte-exact). --sandbox host.

load helper
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# The kv decoder: \\ \n \t \r \xHH back to bytes. Everything else is
# literal UTF-8.
DECODER='
import re, sys
def dec(v):
    return re.sub(rb"\\(\\|n|t|r|x[0-9a-f]{2})", lambda m: {
        b"\\": b"\\", b"n": b"\n", b"t": b"\t", b"r": b"\r"}.get(m.group(1))
        or bytes([int(m.group(1)[1:], 16)]), v)
def value(text, key):
    for line in text.split(b"\n"):
        if line.startswith(key + b"="):
            return dec(line[len(key) + 1:])
    raise SystemExit("no key " + key.decode())
'


# same_bytes KEY FILE: the value of KEY in the kv result in file res is
# exactly the bytes of FILE.
same_bytes() {
	python3 -c "$DECODER"'
got = value(open("res", "rb").read(), sys.argv[1].encode())
want = open(sys.argv[2], "rb").read()
if got != want:
    sys.exit("differ: got %d bytes, want %d; first diff at %s" % (len(got),
        len(want), next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
        min(len(got), len(want)))))
' "$1" "$2"
}

# cut_ok KEY FILE CAP: the value of KEY in res is FILE's first bytes, the
# marker line with the exact count, and FILE's last bytes, head and tail
# together exactly CAP bytes.
cut_ok() {
	python3 -c "$DECODER"'
key, path, cap = sys.argv[1].encode(), sys.argv[2], int(sys.argv[3])
got = value(open("res", "rb").read(), key)
want = open(path, "rb").read()
m = list(re.finditer(rb"\n\[sbx: (\d+) bytes cut\]\n", got))
if len(m) < 1:
    sys.exit("no marker in %r..." % got[:200])
# The marker is found where head + marker + tail fits the cap.
for mm in m:
    head, tail, n = got[:mm.start()], got[mm.end():], int(mm.group(1))
    if len(head) + len(tail) == cap:
        break
else:
    sys.exit("no marker with head + tail == cap %d" % cap)
assert n == len(want) - cap, ("cut", n, len(want) - cap)
assert want.startswith(head), "head is not the start"
assert tail == b"" or want.endswith(tail), "tail is not the end"
assert abs(len(head) - len(tail)) <= 1 or cap < 2, ("split", len(head), len(tail))
' "$@"
}

# kv_utf8_lines: the whole kv result in res is valid UTF-8, one line per
# key, each key once.
kv_utf8_lines() {
	python3 -c '
import sys
raw = open("res", "rb").read()
text = raw.decode("utf-8", "strict")
assert text.endswith("\n"), "no final newline"
keys = [l.split("=", 1)[0] for l in text[:-1].split("\n")]
assert all(k and k.replace("_", "").isalpha() and k.islower() for k in keys), keys
assert len(keys) == len(set(keys)), keys
'
}

@test "exact bytes below the cap: every byte value, NUL included" {
	python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 4 + b"\x00end\x00")' >data
	run --separate-stderr "$SBX" --sandbox host --result res -- cat data
	[ "$status" -eq 0 ]
	output=$(cat res)
	[ "$(kv stdout_bytes)" = "$(wc -c <data)" ]
	[ "$(kv stdout_truncated)" = 0 ]
	same_bytes stdout data
	kv_utf8_lines
}

@test "exact bytes below the cap: random binary, stdout and stderr" {
	head -c 200000 /dev/urandom >out.bin
	head -c 100000 /dev/urandom >err.bin
	run --separate-stderr "$SBX" --sandbox host --result res -- sh -c 'cat out.bin; cat err.bin >&2'
	[ "$status" -eq 0 ]
	output=$(cat res)
	[ "$(kv stdout_bytes)" = 200000 ]
	[ "$(kv stderr_bytes)" = 100000 ]
	same_bytes stdout out.bin
	same_bytes stderr err.bin
	kv_utf8_lines
}

@test "exactly the cap is not truncated, one byte more is" {
	head -c 1000 /dev/urandom >d1000
	head -c 1001 /dev/urandom >d1001
	run --separate-stderr "$SBX" --sandbox host -m 1000 --result res -- cat d1000
	output=$(cat res)
	[ "$(kv stdout_truncated)" = 0 ]
	[ "$(kv stdout_bytes)" = 1000 ]
	same_bytes stdout d1000
	run --separate-stderr "$SBX" --sandbox host -m 1000 --result res -- cat d1001
	output=$(cat res)
	[ "$(kv stdout_truncated)" = 1 ]
	[ "$(kv stdout_bytes)" = 1001 ]
	cut_ok stdout d1001 1000
}

@test "truncation keeps head and tail with the exact marker" {
	seq 1 100000 >data
	run --separate-stderr "$SBX" --sandbox host -m 100 --result res -- cat data
	[ "$status" -eq 0 ]
	output=$(cat res)
	[ "$(kv stdout_truncated)" = 1 ]
	[ "$(kv stdout_bytes)" = "$(wc -c <data)" ]
	cut_ok stdout data 100
	n=$(( $(wc -c <data) - 100 ))
	[[ "$(kv stdout)" == *"\\n[sbx: $n bytes cut]\\n"* ]]
	kv_utf8_lines
}

@test "truncation with odd caps and sizes" {
	for cap in 1 2 3 7 4095 4096 4097 65537; do
		for size in $((cap + 1)) $((cap * 3 + 5)) 200003; do
			head -c "$size" /dev/urandom >data
			"$SBX" --sandbox host -m "$cap" --result res -- cat data 3>&-
			cut_ok stdout data "$cap" ||
			    { echo "cap $cap size $size" >&2; return 1; }
		done
	done
}

@test "truncation with many small writes (tail ring wraps often)" {
	run --separate-stderr "$SBX" --sandbox host -m 1000 --result res -- bash -c '
		for i in $(seq 1 20000); do echo "line $i"; done >data.sent
		cat data.sent'
	[ "$status" -eq 0 ]
	cut_ok stdout data.sent 1000
}

@test "-m 0: nothing kept, everything counted" {
	head -c 5000 /dev/urandom >data
	run --separate-stderr "$SBX" --sandbox host -m 0 --result res -- sh -c 'cat data; echo e >&2'
	[ "$status" -eq 0 ]
	output=$(cat res)
	[ "$(kv stdout_bytes)" = 5000 ]
	[ "$(kv stdout_truncated)" = 1 ]
	[ "$(kv stderr_bytes)" = 2 ]
	[ "$(kv stderr_truncated)" = 1 ]
	cut_ok stdout data 0
	[ "$(kvdec stdout)" = $'\n[sbx: 5000 bytes cut]' ]
}

@test "-m 0 and no output: not truncated, empty" {
	run --separate-stderr "$SBX" --sandbox host -m 0 -- true
	[ "$status" -eq 0 ]
	[ "$(kv stdout_truncated)" = 0 ]
	[ "$(kv stdout_bytes)" = 0 ]
	[ -z "$(kv stdout)" ]
}

@test "-m with K and M suffixes (powers of 1024)" {
	head -c 3000 /dev/urandom >data
	"$SBX" --sandbox host -m 1K --result res -- cat data 3>&-
	cut_ok stdout data 1024
	"$SBX" --sandbox host -m 2k --result res -- cat data 3>&-
	cut_ok stdout data 2048
	head -c $((3 * 1048576)) /dev/urandom >big
	"$SBX" --sandbox host -m 1M --result res -- cat big 3>&-
	cut_ok stdout big 1048576
	"$SBX" --sandbox host -m 3M --result res -- cat big 3>&-
	same_bytes stdout big
}

@test "the default cap is 1M" {
	head -c $((1048576 + 10)) /dev/urandom >big
	"$SBX" --sandbox host --result res -- cat big 3>&-
	cut_ok stdout big 1048576
	head -c 1048576 /dev/urandom >exact
	"$SBX" --sandbox host --result res -- cat exact 3>&-
	same_bytes stdout exact
}

@test "stdout and stderr are capped independently" {
	head -c 10000 /dev/urandom >out.bin
	head -c 50 /dev/urandom >err.bin
	"$SBX" --sandbox host -m 100 --result res -- sh -c 'cat out.bin; cat err.bin >&2' 3>&-
	output=$(cat res)
	[ "$(kv stdout_truncated)" = 1 ]
	[ "$(kv stderr_truncated)" = 0 ]
	cut_ok stdout out.bin 100
	same_bytes stderr err.bin
	"$SBX" --sandbox host -m 100 --result res -- sh -c 'cat err.bin; cat out.bin >&2' 3>&-
	output=$(cat res)
	[ "$(kv stdout_truncated)" = 0 ]
	[ "$(kv stderr_truncated)" = 1 ]
	same_bytes stdout err.bin
	cut_ok stderr out.bin 100
}

@test "interleaved stdout and stderr are both complete" {
	run --separate-stderr "$SBX" --sandbox host --result res -- bash -c '
		for i in $(seq 1 5000); do echo "o$i"; echo "e$i" >&2; done'
	[ "$status" -eq 0 ]
	seq 1 5000 | sed 's/^/o/' >want.out
	seq 1 5000 | sed 's/^/e/' >want.err
	same_bytes stdout want.out
	same_bytes stderr want.err
}

@test "output written just before exit is not lost" {
	head -c 150000 /dev/urandom >data
	for i in $(seq 1 20); do
		"$SBX" --sandbox host --result res -- sh -c 'cat data; printf last; exit 0' 3>&-
		cat data >want && printf last >>want
		same_bytes stdout want || { echo "round $i" >&2; return 1; }
	done
}

@test "output written just before a signal death is not lost" {
	head -c 100000 /dev/urandom >data
	run -137 --separate-stderr "$SBX" --sandbox host --result res -- sh -c 'cat data; kill -KILL $$'
	output=$(cat res)
	[ "$(kv signal)" = SIGKILL ]
	same_bytes stdout data
}

@test "output written by a child after the leader exits (within 2 s) is kept" {
	run --separate-stderr "$SBX" --sandbox host --result res -- sh -c '(sleep 0.3; head -c 70000 /dev/zero) & printf x'
	[ "$status" -eq 0 ]
	output=$(cat res)
	[ "$(kv stdout_bytes)" = 70001 ]
}

@test "a large output (100 MB through -m 1M): exact counts, memory bounded" {
	run --separate-stderr /usr/bin/time -f 'maxrss=%M' "$SBX" --sandbox host -m 1M --result res -- head -c 104857600 /dev/zero
	[ "$status" -eq 0 ]
	output=$(cat res)
	[ "$(kv stdout_bytes)" = 104857600 ]
	[ "$(kv stdout_truncated)" = 1 ]
	[[ "$(kv stdout)" == *"\\n[sbx: $((104857600 - 1048576)) bytes cut]\\n"* ]]
	# Peak RSS: caps (2 x 1M) plus a little, not the 100 MB (generous bound).
	rss=$(sed -n 's/^maxrss=//p' <<<"$stderr")
	[ -n "$rss" ] && [ "$rss" -lt 16384 ] || { echo "maxrss ${rss}K" >&2; return 1; }
}

@test "a large output on stderr too" {
	"$SBX" --sandbox host -m 64K --result res -- sh -c 'head -c 20000000 /dev/zero >&2; echo x' 3>&-
	output=$(cat res)
	[ "$(kv stderr_bytes)" = 20000000 ]
	[ "$(kv stdout_bytes)" = 2 ]
	[ "$(kv stderr_truncated)" = 1 ]
}

@test "stdin passes through" {
	run --separate-stderr bash -c 'echo hi | "$1" --sandbox host -- cat' _ "$SBX"
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'hi\n' ]
}

@test "stdin passes through: binary, large" {
	head -c 3000000 /dev/urandom >data
	"$SBX" --sandbox host -m 4M --result res -- cat <data 3>&-
	same_bytes stdout data
}

@test "stdin at EOF stays EOF for the command" {
	run --separate-stderr "$SBX" --sandbox host -- sh -c 'cat; echo done' </dev/null
	[ "$status" -eq 0 ]
	[ "$(kv stdout)" = 'done\n' ]
}

@test "kv escaping: backslash, newline, tab, carriage return" {
	printf 'a\\b\nc\td\re\\n' >data
	"$SBX" --sandbox host --result res -- cat data 3>&-
	output=$(cat res)
	[ "$(kv stdout)" = 'a\\b\nc\td\re\\n' ]
	same_bytes stdout data
	kv_utf8_lines
}

@test "kv escaping: control bytes and 0x7f as \\xHH" {
	printf '\000\001\002\033[31m\037 \177~' >data
	"$SBX" --sandbox host --result res -- cat data 3>&-
	output=$(cat res)
	[ "$(kv stdout)" = '\x00\x01\x02\x1b[31m\x1f \x7f~' ]
	same_bytes stdout data
	kv_utf8_lines
}

@test "kv escaping: invalid UTF-8 as \\xHH" {
	# Lone continuation, lone lead, overlong, surrogate, past U+10FFFF,
	# 0xfe/0xff, a sequence cut by the end.
	printf '\200|\303|\300\257|\340\200\257|\355\240\200|\364\220\200\200|\376\377|\342\202' >data
	"$SBX" --sandbox host --result res -- cat data 3>&-
	output=$(cat res)
	[ "$(kv stdout)" = '\x80|\xc3|\xc0\xaf|\xe0\x80\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xfe\xff|\xe2\x82' ]
	same_bytes stdout data
	kv_utf8_lines
}

@test "kv escaping: valid multi-byte UTF-8 kept verbatim" {
	printf 'é € 😀 ü 中文 \357\277\277 \364\217\277\277 \302\200' >data
	"$SBX" --sandbox host --result res -- cat data 3>&-
	output=$(cat res)
	[ "$(kv stdout)" = "$(cat data)" ]
	same_bytes stdout data
	kv_utf8_lines
}

@test "kv escaping: a multi-byte character cut by truncation stays valid" {
	python3 -c 'import sys; sys.stdout.buffer.write("€".encode() * 1000)' >data
	for cap in 100 101 102 103; do
		"$SBX" --sandbox host -m "$cap" --result res -- cat data 3>&-
		kv_utf8_lines
		cut_ok stdout data "$cap"
	done
}

@test "kv escaping: a marker-like line from the command is escaped as data" {
	printf 'x\n[sbx: 5 bytes cut]\ny' >data
	"$SBX" --sandbox host --result res -- cat data 3>&-
	output=$(cat res)
	[ "$(kv stdout_truncated)" = 0 ]
	same_bytes stdout data
}

@test "kv: a line like key=value in the output cannot forge a key" {
	printf 'ok\nexit_code=99\nerror=forged\n' >data
	"$SBX" --sandbox host --result res -- cat data 3>&-
	output=$(cat res)
	[ "$(kv exit_code)" = 0 ]
	! kv_has error || return 1
	kv_utf8_lines
}

@test "json: hostile output is valid JSON and round-trips where valid" {
	python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(128)) + "é€😀".encode() + b"\xff\xc3(")' >data
	"$SBX" --sandbox host --format json --result res.json -- cat data 3>&-
	python3 -m json.tool res.json >/dev/null
	python3 -c '
import json
r = json.loads(open("res.json", "rb").read().decode("utf-8", "strict"))
s = r["stdout"]
assert s.startswith("".join(map(chr, range(128))) + "é€😀"), repr(s[:140])
assert s.endswith("\ufffd\ufffd("), repr(s[-10:])
assert r["stdout_bytes"] == 128 + 9 + 3
'
}

@test "json: truncated output with the marker" {
	head -c 10000 /dev/zero | tr '\0' a >data
	"$SBX" --sandbox host -m 100 --format json --result res.json -- cat data 3>&-
	python3 -c '
import json
r = json.load(open("res.json"))
assert r["stdout_truncated"] is True and r["stdout_bytes"] == 10000, r
assert r["stdout"] == "a" * 50 + "\n[sbx: 9900 bytes cut]\n" + "a" * 50, r["stdout"]
'
}

@test "capture: a character split between head and tail is kept whole below the cap" {
	# -m 10 keeps a 5-byte head and a 5-byte tail; é and 😀 straddle them.
	run "$SBX" --sandbox host -m 10 -- printf 'abcd\303\251'
	[ "$(kv stdout)" = 'abcdé' ]
	run "$SBX" --sandbox host -m 10 -- printf 'abcd\360\237\230\200z'
	[ "$(kv stdout)" = 'abcd😀z' ]
	# a lone lead byte at the end is still escaped
	run "$SBX" --sandbox host -m 10 -- printf 'abcd\303'
	[ "$(kv stdout)" = 'abcd\xc3' ]
}

@test "kv escaping: Unicode line separators cannot forge a key for splitlines()" {
	# U+0085, U+2028, U+2029 each start a line for Python's
	# str.splitlines(); \v \f \x1c-\x1e are control bytes, escaped already.
	printf 'a\302\205exit_code=0\342\200\250error=forged\342\200\251signal=x\013b\014c\034d\035e\036f' >data
	run "$SBX" --sandbox host --result res -- sh -c 'cat data; exit 3' 3>&-
	[ "$status" -eq 3 ]
	python3 -c '
import sys
text = open("res", "rb").read().decode("utf-8", "strict")
keys = {}
for line in text.splitlines():
    k, _, v = line.partition("=")
    keys.setdefault(k, []).append(v)
print(keys.get("exit_code"), keys.get("error"), keys.get("signal"))
assert keys["exit_code"] == ["3"], keys["exit_code"]
assert "error" not in keys
assert keys["signal"] == [""]
'
	output=$(cat res)
	same_bytes stdout data
	kv_utf8_lines
	# JSON: \u0085 \u2028 \u2029, and the string still decodes to them.
	"$SBX" --sandbox host --format json --result res.json -- cat data 3>&-
	python3 -c '
import json
raw = open("res.json", "rb").read()
for b in (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9"):
    assert b not in raw, b
assert b"\\u0085exit_code=0\\u2028error=forged\\u2029" in raw, raw
r = json.loads(raw)
assert r["stdout"] == open("data", "rb").read().decode(), repr(r["stdout"])
assert r["exit_code"] == 0
'
}
