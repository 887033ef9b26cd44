#!/usr/bin/env bats
# alloc.c, sbx's own malloc in the static musl build, under load and under
# attack. t/alloc/stress.c is linked with alloc.c as the build links sbx
# (musl-gcc, -static), whatever compiler built ./sbx: the ASan build runs
# these too. Every other suite exercises the allocator through sbx itself.

load helper
bats_require_minimum_version 1.5.0

setup_file() {
	command -v musl-gcc >/dev/null 2>&1 || return 0
	# -fno-builtin: gcc would otherwise drop a malloc/free pair it can
	# see through, and the attacks below would attack nothing.
	musl-gcc -std=c99 -O2 -fno-builtin -Wno-free-nonheap-object -static \
	    -o "$BATS_FILE_TMPDIR/stress" "$BATS_TEST_DIRNAME/alloc/stress.c" \
	    "$BATS_TEST_DIRNAME/../alloc.c" -lpthread
}

stress() {
	[ -x "$BATS_FILE_TMPDIR/stress" ] ||
	    sbx_skip "musl-gcc is not installed: the allocator is built for musl only"
	run --separate-stderr env ROUNDS="${ROUNDS:-30000}" \
	    "$BATS_FILE_TMPDIR/stress" "$@"
}

@test "alloc: four threads and a forked child, blocks checked byte for byte" {
	stress stress
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "alloc: a double free aborts" {
	stress double
	[ "$status" -eq 134 ]
	[ "$output" = "" ]
	[[ "$stderr" == "sbx: allocator: invalid free or heap corruption" ]]
}

@test "alloc: a pointer inside a block is refused by free" {
	stress stray
	[ "$status" -eq 134 ]
	[ "$output" = "" ]
}

@test "alloc: a pointer malloc never gave is refused by free" {
	stress never
	[ "$status" -eq 134 ]
	[ "$output" = "" ]
}

@test "alloc: a large block freed twice aborts" {
	stress bigdouble
	[ "$status" -eq 134 ]
	[ "$output" = "" ]
}

@test "alloc: a write past a large block cannot reach the slab tables" {
	# the tables sit between inaccessible pages: the write dies there,
	# or lands in a neighbour's data; never a used block handed out again
	stress fence
	[ "$status" -eq 0 ] || [ "$status" -eq 139 ]
	[ "$status" -eq 139 ] || [ "$output" = ok ]
}

@test "alloc: a write past a small block corrupts no allocator state" {
	# positive control for the three above: the same frees, of blocks
	# whose neighbours were overwritten, are valid and pass
	stress overflow
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}

@test "alloc: aligned_alloc and posix_memalign honour 32 B to 64 KiB" {
	stress align
	[ "$status" -eq 0 ]
	[ "$output" = ok ]
}
