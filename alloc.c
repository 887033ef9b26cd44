/*
 * alloc.c: sbx's own malloc for the static musl build, where musl's
 * mallocng gives each size its own small group and hands an emptied group
 * back to the kernel at once: a launch did about 15 mmap/munmap pairs of
 * 8 KiB before the fork, each munmap a TLB shootdown once a thread runs,
 * and 40 more page faults than it needs.  Here small blocks come from
 * 64 KiB slabs of one size class, cut out of one lazily faulted region;
 * blocks above 32 KiB are mappings of their own.
 *
 * Invariants.  No metadata lives beside a block, small or large: a slab's
 * size class and its bitmap of used blocks, and each large block's mapping,
 * sit in tables of their own, each a mapping fenced by inaccessible pages,
 * so a write past a block or into a freed one cannot reach the
 * allocator's state.  free() and realloc() judge every pointer against
 * those tables (a used block's start, or a large block's) and abort on
 * anything else: a stray free, or a double free before the block was
 * handed out again, is a crash, never a reuse.  One lock guards it all;
 * fork handlers hold it across fork() so the child never inherits it
 * locked.
 *
 * Built only where it replaces musl (Linux, not glibc, no sanitizer): glibc
 * and the sanitizers bring their own allocator, and ASan must see sbx's.
 */
#define _GNU_SOURCE
#include <stddef.h>

#if defined(__linux__) && !defined(__GLIBC__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(SBX_NO_ALLOC)

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sbx.h"

void	*aligned_alloc(size_t, size_t);
void	*memalign(size_t, size_t);
int	 posix_memalign(void **, size_t, size_t);
size_t	 malloc_usable_size(void *);
#define FUTEX_WAIT_PRIVATE	128	/* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */
#define FUTEX_WAKE_PRIVATE	129

#define SLAB		((size_t)64 << 10)	/* one size class per slab */
#define SMALL_MAX	((size_t)32 << 10)	/* above: a mapping each */
#define NCLASS		12			/* 16..32768, powers of two */
#define REGION_SLABS	64			/* 4 MiB of slabs a region */
#define NREGION		64
#define PAGE		((size_t)4096)
#define MAX_REQ		((size_t)1 << 46)
#define BIG_FREE	((uintptr_t)0)		/* a large table slot never used */
#define BIG_GONE	((uintptr_t)1)		/* a slot whose block was freed */

struct slab {
	uint64_t used[SLAB / 16 / 64];	/* bit set: block handed out */
	uint16_t cls;			/* class + 1; 0: never used */
	uint16_t nused;
	uint16_t hint;			/* first word that may have room */
	uint16_t region;
	int32_t next;			/* next partly free slab's id + 1 */
};

struct region {
	char *base;			/* SLAB aligned */
	struct slab *meta;		/* REGION_SLABS entries, fenced */
	int nslab;			/* slabs handed to a class so far */
};

struct big {
	uintptr_t p;			/* the block, or BIG_FREE, BIG_GONE */
	char *map;			/* its mapping */
	size_t len;
};

static int mu;				/* 0 free, 1 held, 2 held, waited on */
static struct region regions[NREGION];
static int nregion;
static int32_t partial[NCLASS];		/* a partly free slab's id + 1 */
static struct big *bigs;		/* open addressing, fenced */
static size_t bigcap, bigfill;		/* slots; slots not BIG_FREE */
static int started;

/* A futex lock of three states: one atomic exchange each way when no one
 * waits, where musl's mutex unlock alone was 6% of a launch's
 * instructions. */
static void
lock(void)
{
	int e;

	if (__atomic_exchange_n(&mu, 1, __ATOMIC_ACQUIRE) == 0)
		return;
	e = errno;		/* free() leaves errno as it was (POSIX) */
	while (__atomic_exchange_n(&mu, 2, __ATOMIC_ACQUIRE) != 0)
		syscall(SYS_futex, &mu, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
	errno = e;
}

static void
unlock(void)
{
	int e;

	if (__atomic_exchange_n(&mu, 0, __ATOMIC_RELEASE) == 2) {
		e = errno;
		syscall(SYS_futex, &mu, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		errno = e;
	}
}

/* The child of fork() has one thread, the one that forked, which took the
 * lock in the prepare handler. */
static void
child_unlock(void)
{
	__atomic_store_n(&mu, 0, __ATOMIC_RELEASE);
}

/* The fork handlers, registered before main() (no thread exists yet, so no
 * fork can come between) or, should anything allocate earlier, by that
 * first caller.  pthread_atfork() itself allocates and comes back here;
 * the flag lets that one call through, the tables being static. */
static void
start(void)
{
	static int once;

	if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL) == 0)
		pthread_atfork(lock, unlock, child_unlock);
	__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
}

static __attribute__((constructor)) void
alloc_start(void)
{
	if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		start();
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

/* len bytes (a multiple of PAGE) between two pages no access reaches. */
static void *
fenced(size_t len)
{
	char *m;

	m = mmap(NULL, len + 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m + PAGE, len, PROT_READ | PROT_WRITE) < 0) {
		munmap(m, len + 2 * PAGE);
		return NULL;
	}
	return m + PAGE;
}

static void
unfence(void *p, size_t len)
{
	munmap((char *)p - PAGE, len + 2 * PAGE);
}

/* Powers of two, 16 B to 32 KiB: a block wastes up to half its size, but
 * each class in use costs at least one touched page, and few classes keep
 * the idle process as small as musl's own allocator left it.  A block of
 * a class is aligned to its size (the slab is aligned to SLAB). */
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

#define META_LEN \
	((REGION_SLABS * sizeof(struct slab) + PAGE - 1) & ~(PAGE - 1))

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
	if ((m = fenced(META_LEN)) == NULL) {
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

static struct slab *
slab_at(int32_t id)
{
	return &regions[id >> 8].meta[id & 0xff];
}

/* A fresh slab for class c, at the head of its partial list; its id, or
 * -1 when every region is spent (the caller then maps the block alone). */
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
	s->next = 0;
	s->region = (uint16_t)r;
	partial[c] = (r << 8 | rg->nslab++) + 1;
	return partial[c] - 1;
}

static void *
small_alloc(size_t n)
{
	struct slab *s;
	int32_t id;
	size_t sz, w;
	int c, bit;

	c = class_of(n);
	sz = class_size(c);
	if ((id = partial[c] - 1) < 0 && (id = new_slab(c)) < 0)
		return NULL;
	s = slab_at(id);
	for (w = s->hint; s->used[w] == UINT64_MAX; w++)
		;
	bit = __builtin_ctzll(~s->used[w]);
	s->used[w] |= (uint64_t)1 << bit;
	s->hint = (uint16_t)w;
	if (++s->nused == SLAB / sz) {
		partial[c] = s->next;
		s->next = 0;
	}
	return regions[id >> 8].base + (size_t)(id & 0xff) * SLAB +
	    (w * 64 + (size_t)bit) * sz;
}

/* The slab that holds p, or NULL when p is in no region. */
static struct slab *
slab_of(const void *p, int32_t *id)
{
	uintptr_t a = (uintptr_t)p, b;
	size_t i;
	int r;

	for (r = 0; r < nregion; r++) {
		b = (uintptr_t)regions[r].base;
		if (a >= b && a < b + REGION_SLABS * SLAB) {
			i = (a - b) / SLAB;
			if ((int)i >= regions[r].nslab ||
			    regions[r].meta[i].cls == 0)
				corrupt();
			*id = r << 8 | (int32_t)i;
			return &regions[r].meta[i];
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
small_free(struct slab *s, int32_t id, const void *p)
{
	size_t blk = block_of(s, p);
	int c = s->cls - 1;

	s->used[blk / 64] &= ~((uint64_t)1 << (blk % 64));
	if (blk / 64 < s->hint)
		s->hint = (uint16_t)(blk / 64);
	if (s->nused-- == SLAB / class_size(c)) {
		s->next = partial[c];
		partial[c] = id + 1;
	}
}

/* The large table: open addressing on the block's address. */
static size_t
big_slot(uintptr_t p, size_t cap)
{
	return (size_t)((uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ULL >> 32) &
	    (cap - 1);
}

static struct big *
big_find(uintptr_t p)
{
	size_t i;

	if (bigcap == 0)
		return NULL;
	for (i = big_slot(p, bigcap); bigs[i].p != BIG_FREE;
	    i = (i + 1) & (bigcap - 1))
		if (bigs[i].p == p)
			return &bigs[i];
	return NULL;
}

static void
big_put(struct big *t, size_t cap, const struct big *e)
{
	size_t i;

	for (i = big_slot(e->p, cap); t[i].p > BIG_GONE; i = (i + 1) & (cap - 1))
		;
	t[i] = *e;
}

/* Room for one more entry: a table twice the live entries' need, with
 * the freed slots dropped. */
static int
big_room(void)
{
	struct big *t;
	size_t cap = 256, live = 0, i;

	if ((bigfill + 1) * 2 <= bigcap)
		return 0;
	for (i = 0; i < bigcap; i++)
		live += bigs[i].p > BIG_GONE;
	while (cap < (live + 1) * 4)
		cap *= 2;
	if ((t = fenced(cap * sizeof(*t))) == NULL)
		return -1;
	for (i = 0; i < bigcap; i++)
		if (bigs[i].p > BIG_GONE)
			big_put(t, cap, &bigs[i]);
	if (bigcap != 0)
		unfence(bigs, bigcap * sizeof(*bigs));
	bigs = t;
	bigcap = cap;
	bigfill = live;
	return 0;
}

static int
big_add(uintptr_t p, char *map, size_t len)
{
	struct big e;
	size_t i;

	if (big_room() < 0)
		return -1;
	e.p = p;
	e.map = map;
	e.len = len;
	i = big_slot(p, bigcap);
	while (bigs[i].p > BIG_GONE)
		i = (i + 1) & (bigcap - 1);
	if (bigs[i].p == BIG_FREE)
		bigfill++;
	bigs[i] = e;
	return 0;
}

/* A mapping of its own for n bytes aligned to align, recorded in the large
 * table; the block, or NULL. */
static void *
large_alloc(size_t n, size_t align)
{
	size_t len = (n + align + PAGE - 1) & ~(PAGE - 1);
	uintptr_t a;
	char *m;
	int ok;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1);
	lock();
	ok = big_add(a, m, len) == 0;
	unlock();
	if (!ok) {
		munmap(m, len);
		return NULL;
	}
	return (void *)a;
}

/* n bytes aligned to align (a power of two): a slab's block when both fit
 * one, since a block is aligned to its class's size; else a mapping of
 * its own; else, every region spent, a mapping for a small block too. */
static void *
alloc(size_t n, size_t align)
{
	void *p = NULL;

	if (n > MAX_REQ || align > MAX_REQ) {
		errno = ENOMEM;
		return NULL;
	}
	if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		start();
	if (n <= SMALL_MAX && align <= SMALL_MAX) {
		lock();
		p = small_alloc(n > align ? n : align);
		unlock();
	}
	if (p == NULL)
		p = large_alloc(n, align > 16 ? align : 16);
	if (p == NULL)
		errno = ENOMEM;
	return p;
}

void *
malloc(size_t n)
{
	return alloc(n, 16);
}

void
free(void *p)
{
	struct slab *s;
	struct big *b;
	int32_t id;
	size_t len;
	char *m;

	if (p == NULL)
		return;
	lock();
	if ((s = slab_of(p, &id)) != NULL) {
		small_free(s, id, p);
		unlock();
		return;
	}
	if ((b = big_find((uintptr_t)p)) == NULL)
		corrupt();
	m = b->map;
	len = b->len;
	b->p = BIG_GONE;
	unlock();
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
	if ((p = alloc(a * b, 16)) != NULL && a * b <= SMALL_MAX)
		memset(p, 0, a * b);
	return p;
}

/* The bytes p may use; aborts unless p is a block handed out. */
static size_t
usable(void *p, struct big *copy)
{
	struct slab *s;
	struct big *b;
	int32_t id;
	size_t n;

	lock();
	if ((s = slab_of(p, &id)) != NULL) {
		block_of(s, p);
		n = class_size(s->cls - 1);
		copy->p = 0;
	} else if ((b = big_find((uintptr_t)p)) != NULL) {
		*copy = *b;
		n = b->len - (size_t)((char *)p - b->map);
	} else
		corrupt();
	unlock();
	return n;
}

size_t
malloc_usable_size(void *p)
{
	struct big b;

	return p == NULL ? 0 : usable(p, &b);
}

/* A large block grown or shrunk in place or moved by mremap(2), its offset
 * in the mapping (an aligned_alloc's) kept; NULL when that fails.  The
 * table's room is made first, so a moved block is always recorded. */
static void *
large_resize(void *p, size_t n)
{
	struct big *e;
	size_t off, len;
	char *q;

	lock();
	if (big_room() < 0) {
		unlock();
		return NULL;
	}
	if ((e = big_find((uintptr_t)p)) == NULL)
		corrupt();
	off = (size_t)((char *)p - e->map);
	len = (off + n + PAGE - 1) & ~(PAGE - 1);
	q = mremap(e->map, e->len, len, MREMAP_MAYMOVE);
	if (q == MAP_FAILED) {
		unlock();
		return NULL;
	}
	if (q + off == (char *)p) {
		e->map = q;
		e->len = len;
	} else {
		e->p = BIG_GONE;
		(void)big_add((uintptr_t)(q + off), q, len);
	}
	unlock();
	return q + off;
}

void *
realloc(void *p, size_t n)
{
	struct big b;
	size_t have;
	void *q;

	if (p == NULL)
		return alloc(n, 16);
	if (n > MAX_REQ) {
		errno = ENOMEM;
		return NULL;
	}
	have = usable(p, &b);
	if (b.p == 0 && n <= have)
		return p;
	if (b.p != 0 && n > SMALL_MAX) {
		if ((q = large_resize(p, n)) == NULL)
			errno = ENOMEM;
		return q;
	}
	if ((q = alloc(n, 16)) == NULL)
		return n <= have ? p : NULL;
	memcpy(q, p, have < n ? have : n);
	free(p);
	return q;
}

void *
aligned_alloc(size_t align, size_t n)
{
	if (align == 0 || (align & (align - 1)) != 0) {
		errno = EINVAL;
		return NULL;
	}
	return alloc(n, align < 16 ? 16 : align);
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
