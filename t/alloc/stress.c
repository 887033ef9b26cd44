/*
 * t/alloc/stress.c: drives alloc.c as sbx's build links it (static musl):
 *   stress N      N rounds of random malloc/calloc/realloc/free from four
 *                 threads and a forked child, each block filled with a
 *                 pattern of its own and checked before it is freed
 *   double        frees one block twice        (must abort)
 *   stray         frees a pointer inside a block (must abort)
 *   never         frees a pointer into a page malloc never gave   (abort)
 *   bigdouble     frees a large block twice     (must abort)
 *   fence         writes 512 bytes past a large block's mapping, then
 *                 allocates: dies by SIGSEGV at the fence, or gets
 *                 blocks of its own (never one still in use)
 *   overflow      writes past a small block, then frees both neighbours
 *                 (must not abort: no metadata lives beside a block)
 *   align         aligned_alloc/posix_memalign at 32..65536, then frees
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS 512

static unsigned
rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static size_t
pick(unsigned *s)
{
	switch (rnd(s) % 8) {
	case 0: return rnd(s) % 17;
	case 1: case 2: case 3: return rnd(s) % 300;
	case 4: case 5: return rnd(s) % 5000;
	case 6: return rnd(s) % 40000;
	default: return rnd(s) % 300000;
	}
}

static void
fill(unsigned char *p, size_t n, unsigned tag)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(tag + i * 7);
}

static void
check(const unsigned char *p, size_t n, unsigned tag)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (unsigned char)(tag + i * 7)) {
			fprintf(stderr, "corrupt block %p at %zu of %zu\n",
			    (void *)p, i, n);
			abort();
		}
}

static void *
work(void *arg)
{
	unsigned char *slot[SLOTS] = { 0 };
	size_t len[SLOTS] = { 0 };
	unsigned tag[SLOTS] = { 0 };
	unsigned s = (unsigned)(uintptr_t)arg;
	long rounds = strtol(getenv("ROUNDS"), NULL, 10), r;
	size_t i, n, k;

	for (r = 0; r < rounds; r++) {
		i = rnd(&s) % SLOTS;
		if (slot[i] != NULL)
			check(slot[i], len[i], tag[i]);
		n = pick(&s);
		switch (rnd(&s) % 4) {
		case 0:
			free(slot[i]);
			slot[i] = NULL;
			len[i] = 0;
			continue;
		case 1:
			free(slot[i]);
			if ((slot[i] = calloc(1, n)) == NULL)
				abort();
			for (k = 0; k < n; k++)
				if (slot[i][k] != 0)
					abort();
			break;
		case 2:
			if ((slot[i] = realloc(slot[i], n)) == NULL && n)
				abort();
			k = len[i] < n ? len[i] : n;
			check(slot[i], k, tag[i]);
			break;
		default:
			free(slot[i]);
			if ((slot[i] = malloc(n)) == NULL)
				abort();
		}
		if (malloc_usable_size(slot[i]) < n)
			abort();
		len[i] = n;
		tag[i] = rnd(&s);
		fill(slot[i], n, tag[i]);
	}
	for (i = 0; i < SLOTS; i++) {
		if (slot[i] != NULL)
			check(slot[i], len[i], tag[i]);
		free(slot[i]);
	}
	return NULL;
}

static int
stress(void)
{
	pthread_t t[4];
	pid_t pid;
	int i, st;

	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, work,
		    (void *)(uintptr_t)(i + 1)) != 0)
			return 1;
	/* fork while the threads allocate: the child must not inherit the
	 * allocator's lock held */
	if ((pid = fork()) == 0) {
		work((void *)(uintptr_t)99);
		_exit(0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	if (waitpid(pid, &st, 0) != pid || st != 0)
		return 1;
	puts("ok");
	return 0;
}

int
main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	char *p, *q;
	void *a, *b;
	size_t al, n;

	if (strcmp(m, "stress") == 0)
		return stress();
	if (strcmp(m, "double") == 0) {
		p = malloc(40);
		free(p);
		free(p);
		puts("survived");
		return 0;
	}
	if (strcmp(m, "stray") == 0) {
		p = malloc(100);
		free(p + 16);
		puts("survived");
		return 0;
	}
	if (strcmp(m, "never") == 0) {
		p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		free(p + 16);
		puts("survived");
		return 0;
	}
	if (strcmp(m, "bigdouble") == 0) {
		p = malloc(200000);
		free(p);
		free(p);
		puts("survived");
		return 0;
	}
	if (strcmp(m, "fence") == 0) {
		p = malloc(40);
		memset(p, 0x41, 40);
		malloc(40000);
		q = malloc(40000);
		memset(q + 40960 - 16, 0, 512);
		a = malloc(40);
		b = malloc(40);
		if (a == p || b == p || a == b || p[0] != 0x41)
			return 1;
		puts("ok");
		return 0;
	}
	if (strcmp(m, "overflow") == 0) {
		p = malloc(32);
		q = malloc(32);
		memset(p, 0x41, 64 + 32);
		free(p);
		free(q);
		p = malloc(32);
		memset(p, 0, 32);
		puts("ok");
		return 0;
	}
	if (strcmp(m, "align") == 0) {
		for (al = 32; al <= 65536; al *= 2) {
			if ((a = aligned_alloc(al, al * 3 + 5)) == NULL ||
			    (uintptr_t)a % al != 0)
				return 1;
			memset(a, 1, al * 3 + 5);
			if ((q = realloc(a, al * 40 + 7)) == NULL ||
			    q[al * 3 + 4] != 1)
				return 1;
			memset(q, 3, al * 40 + 7);
			n = al * 40 + 7 < 40001 ? al * 40 + 7 : 40001;
			if ((q = realloc(q, 40001)) == NULL || q[n - 1] != 3)
				return 1;
			free(q);
			if (posix_memalign(&a, al, 100) != 0 ||
			    (uintptr_t)a % al != 0)
				return 1;
			a = realloc(a, 500000);
			memset(a, 2, 500000);
			free(a);
		}
		puts("ok");
		return 0;
	}
	return 2;
}
