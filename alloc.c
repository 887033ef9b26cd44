/*
 * alloc.c: sbx's own malloc for the static musl build, where musl's
 * mallocng gives each size its own small group and hands an emptied group
 * back to the kernel at once: a launch did about 15 mmap/munmap pairs of
 * 8 KiB before the fork, each munmap a TLB shootdown once a thread runs,
 * and 40 more page faults than it needs.  Here small blocks come from
 * 64 KiB slabs of one size class, cut out of one lazily faulted region;
 * blocks above 32 KiB are mappings of their own.
 *
 * Invariants.  No metadata lives beside a small block: a slab's size class
 * and its bitmap of used blocks sit in a table of their own, so a write past
 * a block or into a freed one cannot corrupt the allocator's state.  free()
 * and realloc() judge every pointer against that table (inside a region, on
 * a block boundary, marked used) and abort on anything else, so a double or
 * stray free is a crash, never a reuse.  A large block's one header carries
 * a check word keyed to a per-process secret.  One mutex guards it all;
 * fork handlers hold it across fork() so the child never inherits it
 * locked.
 *
 * Built only where it replaces musl (Linux, not glibc, no sanitizer): glibc
 * and the sanitizers bring their own allocator, and ASan must see sbx's.
 */
#include <stddef.h>

#if defined(__linux__) && !defined(__GLIBC__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(SBX_NO_ALLOC)

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sbx.h"

void	*aligned_alloc(size_t, size_t);
void	*memalign(size_t, size_t);
int	 posix_memalign(void **, size_t, size_t);
size_t	 malloc_usable_size(void *);
void	*mremap(void *, size_t, size_t, int, ...);
#ifndef MREMAP_MAYMOVE
#define MREMAP_MAYMOVE	1
#endif

#define SLAB		((size_t)64 << 10)	/* one size class per slab */
#define SMALL_MAX	((size_t)32 << 10)	/* above: a mapping each */
#define NCLASS		12			/* 16..32768, powers of two */
#define REGION_SLABS	64			/* 4 MiB of slabs a region */
#define NREGION		64
#define LARGE_HDR	16
#define PAGE		((size_t)4096)
#define MAX_REQ		((size_t)1 << 46)

struct slab {
	uint64_t used[SLAB / 16 / 64];	/* bit set: block handed out */
	uint16_t cls;			/* 0: never used */
	uint16_t nused;
	uint16_t hint;			/* first word that may have room */
	int16_t next;			/* next partly free slab, -1 none */
	uint16_t region;
};

struct region {
	char *base;			/* SLAB aligned */
	struct slab *meta;		/* REGION_SLABS entries, own mapping */
	int nslab;			/* slabs handed to a class so far */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct region regions[NREGION];
static int nregion;
static int32_t partial[NCLASS];		/* region << 8 | slab, -1 none */
static int started;
static uintptr_t secret;

static void
lock(void)
{
	pthread_mutex_lock(&mu);
}

static void
unlock(void)
{
	pthread_mutex_unlock(&mu);
}

static void
child_unlock(void)
{
	pthread_mutex_init(&mu, NULL);
}

static void
start_tables(void)
{
	const unsigned char *r;
	int i;

	for (i = 0; i < NCLASS; i++)
		partial[i] = -1;
	r = (const unsigned char *)getauxval(AT_RANDOM);
	secret = (uintptr_t)&secret;
	if (r != NULL)
		memcpy(&secret, r + 8, sizeof(secret));
	secret |= 1;
}

/* The tables and the fork handlers once, by whichever thread asks first,
 * every other thread waiting until both are in place: a fork() between
 * the two would leave the child a lock no one releases.  pthread_atfork()
 * itself allocates; that one allocation, on the starting thread, is served
 * from the tables already made. */
static __thread int starting;

static void
start_once(void)
{
	start_tables();
	starting = 1;
	pthread_atfork(lock, unlock, child_unlock);
	starting = 0;
	__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
}

static void
start(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (!starting)
		pthread_once(&once, start_once);
}

static __attribute__((noreturn)) void
corrupt(void)
{
	static const char msg[] = "sbx: allocator: invalid free or heap "
	    "corruption\n";
	ssize_t n;

	n = write(2, msg, sizeof(msg) - 1);
	(void)n;
	abort();
}

/* Powers of two, 16 B to 32 KiB: a block wastes up to half its size, but
 * each class in use costs at least one touched page, and few classes keep
 * the idle process as small as musl's own allocator left it. */
static int
class_of(size_t n)
{
	if (n <= 16)
		return 0;
	return 60 - __builtin_clzll((unsigned long long)(n - 1));
}

static size_t
class_size(int c)
{
	return (size_t)16 << c;
}

static int
add_region(void)
{
	struct region *rg;
	char *p;
	uintptr_t a;
	size_t len = REGION_SLABS * SLAB + SLAB;
	void *m;

	if (nregion == NREGION)
		return -1;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	m = mmap(NULL, REGION_SLABS * sizeof(struct slab),
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		munmap(p, len);
		return -1;
	}
	/* Trim to a SLAB-aligned run so a block finds its slab by masking. */
	a = ((uintptr_t)p + SLAB - 1) & ~(uintptr_t)(SLAB - 1);
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	if ((uintptr_t)p + len > a + REGION_SLABS * SLAB)
		munmap((char *)(a + REGION_SLABS * SLAB),
		    (uintptr_t)p + len - (a + REGION_SLABS * SLAB));
	rg = &regions[nregion];
	rg->base = (char *)a;
	rg->meta = m;
	rg->nslab = 0;
	return nregion++;
}

/* A fresh slab for class c, at the head of its partial list. */
static int32_t
new_slab(int c)
{
	struct region *rg;
	struct slab *s;
	int r;

	r = nregion - 1;
	if (r < 0 || regions[r].nslab == REGION_SLABS)
		if ((r = add_region()) < 0)
			return -1;
	rg = &regions[r];
	s = &rg->meta[rg->nslab];
	s->cls = (uint16_t)(c + 1);
	s->nused = 0;
	s->hint = 0;
	s->next = -1;
	s->region = (uint16_t)r;
	partial[c] = r << 8 | rg->nslab++;
	return partial[c];
}

static void *
small_alloc(size_t n)
{
	struct slab *s;
	int32_t id;
	size_t sz, nblk, w;
	int c, bit;

	c = class_of(n);
	sz = class_size(c);
	nblk = SLAB / sz;
	if ((id = partial[c]) < 0 && (id = new_slab(c)) < 0)
		return NULL;
	s = &regions[id >> 8].meta[id & 0xff];
	for (w = s->hint; s->used[w] == UINT64_MAX; w++)
		;
	bit = __builtin_ctzll(~s->used[w]);
	s->used[w] |= (uint64_t)1 << bit;
	s->hint = (uint16_t)w;
	if (++s->nused == nblk) {
		partial[c] = s->next;
		s->next = -1;
	}
	return regions[id >> 8].base + (size_t)(id & 0xff) * SLAB +
	    (w * 64 + (size_t)bit) * sz;
}

/* The slab that holds p, or NULL when p is in no region. */
static struct slab *
slab_of(const void *p, size_t *idx)
{
	uintptr_t a = (uintptr_t)p, b;
	int r;

	for (r = 0; r < nregion; r++) {
		b = (uintptr_t)regions[r].base;
		if (a >= b && a < b + REGION_SLABS * SLAB) {
			*idx = (a - b) / SLAB;
			if ((int)*idx >= regions[r].nslab ||
			    regions[r].meta[*idx].cls == 0)
				corrupt();
			return &regions[r].meta[*idx];
		}
	}
	return NULL;
}

/* The block number of p in s; aborts unless p is a used block's start. */
static size_t
block_of(const struct slab *s, const void *p)
{
	size_t sz = class_size(s->cls - 1), off;

	off = (uintptr_t)p & (SLAB - 1);
	if (off % sz != 0 || off / sz >= SLAB / sz ||
	    !(s->used[off / sz / 64] >> (off / sz % 64) & 1))
		corrupt();
	return off / sz;
}

static void
small_free(struct slab *s, size_t idx, const void *p)
{
	size_t blk = block_of(s, p);
	int c = s->cls - 1;

	s->used[blk / 64] &= ~((uint64_t)1 << (blk % 64));
	if (blk / 64 < s->hint)
		s->hint = (uint16_t)(blk / 64);
	if (s->nused-- == SLAB / class_size(c)) {
		s->next = (int16_t)partial[c];
		partial[c] = s->region << 8 | (int32_t)idx;
	}
}

static uintptr_t
large_check(const void *h, size_t len)
{
	return (uintptr_t)h ^ len ^ secret;
}

/* A large block's header: the mapping's length, counted from the page that
 * holds the header, and its check word.  The block starts right after. */
static void *
large_mark(char *h, size_t len)
{
	((uintptr_t *)h)[0] = len;
	((uintptr_t *)h)[1] = large_check(h, len);
	return h + LARGE_HDR;
}

static void *
large_alloc(size_t n)
{
	size_t len = (n + LARGE_HDR + PAGE - 1) & ~(PAGE - 1);
	char *h;

	h = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED)
		return NULL;
	return large_mark(h, len);
}

/* The mapping of large block p: its start and length; aborts on a header
 * that is not one of large_mark()'s. */
static char *
large_map(void *p, size_t *len)
{
	uintptr_t *h = (uintptr_t *)((char *)p - LARGE_HDR);

	if (((uintptr_t)h & 15) != 0 || h[1] != large_check(h, h[0]))
		corrupt();
	*len = h[0];
	return (char *)((uintptr_t)h & ~(uintptr_t)(PAGE - 1));
}

static size_t
large_usable(void *p)
{
	size_t len;
	char *m = large_map(p, &len);

	return len - (size_t)((char *)p - m);
}

static void *
alloc(size_t n)
{
	void *p;

	if (n > MAX_REQ) {
		errno = ENOMEM;
		return NULL;
	}
	if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		start();
	if (n > SMALL_MAX)
		p = large_alloc(n);
	else {
		lock();
		p = small_alloc(n);
		unlock();
	}
	if (p == NULL)
		errno = ENOMEM;
	return p;
}

void *
malloc(size_t n)
{
	return alloc(n);
}

void
free(void *p)
{
	struct slab *s;
	size_t idx, len;
	char *m;

	if (p == NULL)
		return;
	lock();
	if ((s = slab_of(p, &idx)) != NULL) {
		small_free(s, idx, p);
		unlock();
		return;
	}
	unlock();
	m = large_map(p, &len);
	munmap(m, len);
}

void *
calloc(size_t a, size_t b)
{
	void *p;

	if (b != 0 && a > SIZE_MAX / b) {
		errno = ENOMEM;
		return NULL;
	}
	/* A large block is a fresh mapping, zero already. */
	if ((p = alloc(a * b)) != NULL && a * b <= SMALL_MAX)
		memset(p, 0, a * b);
	return p;
}

size_t
malloc_usable_size(void *p)
{
	struct slab *s;
	size_t idx, n;

	if (p == NULL)
		return 0;
	lock();
	if ((s = slab_of(p, &idx)) != NULL) {
		block_of(s, p);
		n = class_size(s->cls - 1);
		unlock();
		return n;
	}
	unlock();
	return large_usable(p);
}

void *
realloc(void *p, size_t n)
{
	size_t have, len, off;
	char *m, *q;

	if (p == NULL)
		return alloc(n);
	have = malloc_usable_size(p);
	if (n <= have && (n > SMALL_MAX || have <= SMALL_MAX))
		return p;
	if (n > MAX_REQ) {
		errno = ENOMEM;
		return NULL;
	}
	if (have > SMALL_MAX && n > SMALL_MAX) {
		m = large_map(p, &len);
		off = (size_t)((char *)p - LARGE_HDR - m);
		len = (off + LARGE_HDR + n + PAGE - 1) & ~(PAGE - 1);
		q = mremap(m, off + LARGE_HDR + have, len, MREMAP_MAYMOVE);
		if (q == MAP_FAILED) {
			errno = ENOMEM;
			return NULL;
		}
		return large_mark(q + off, len);
	}
	if ((q = alloc(n)) == NULL)
		return NULL;
	memcpy(q, p, have < n ? have : n);
	free(p);
	return q;
}

/* Alignment above 16 is asked of sbx by nothing; it is still honoured: a
 * large block over-asked, its header just before the aligned start and the
 * pages in front of the header's handed back. */
void *
aligned_alloc(size_t align, size_t n)
{
	uintptr_t a;
	size_t len, lead;
	char *m, *h;

	if (align == 0 || (align & (align - 1)) != 0) {
		errno = EINVAL;
		return NULL;
	}
	if (align <= 16)
		return alloc(n);
	if (n > MAX_REQ || align > MAX_REQ) {
		errno = ENOMEM;
		return NULL;
	}
	if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		start();
	len = (n + LARGE_HDR + align + PAGE - 1) & ~(PAGE - 1);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
	a = ((uintptr_t)m + LARGE_HDR + align - 1) & ~(uintptr_t)(align - 1);
	h = (char *)(a - LARGE_HDR);
	lead = (size_t)(((uintptr_t)h & ~(uintptr_t)(PAGE - 1)) -
	    (uintptr_t)m);
	if (lead > 0)
		munmap(m, lead);
	large_mark(h, len - lead);
	return (void *)a;
}

void *
memalign(size_t align, size_t n)
{
	return aligned_alloc(align, n);
}

int
posix_memalign(void **res, size_t align, size_t n)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)) != 0)
		return EINVAL;
	if ((p = aligned_alloc(align, n)) == NULL)
		return ENOMEM;
	*res = p;
	return 0;
}

#else
typedef int alloc_unused;	/* ISO C: a translation unit is not empty */
#endif
