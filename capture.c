/*
 * capture.c: one stream's captured output, bounded by its cap whatever the
 * command writes. The first half of the cap is kept as it comes (the head);
 * the rest goes round a ring that always holds the latest bytes (the tail).
 * While the stream fits in the cap the two halves join into exactly the
 * bytes written; past it, the bytes between them are counted and dropped.
 * Memory is allocated as output arrives, never more than the cap.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "sbx.h"

struct capture {
	size_t	 cap;
	size_t	 headcap;	/* cap - cap / 2 */
	size_t	 tailcap;	/* cap / 2 */
	char	*head;
	size_t	 headlen;
	size_t	 headalloc;
	char	*tail;		/* ring of tailcap bytes */
	size_t	 tailpos;	/* next write position in the ring */
	size_t	 taillen;	/* bytes held in the ring */
	size_t	 tailalloc;	/* bytes of the ring allocated so far */
	uint64_t total;
};

struct capture *
capture_new(size_t cap)
{
	struct capture *c = xcalloc(1, sizeof(*c));

	c->cap = cap;
	c->headcap = cap - cap / 2;
	c->tailcap = cap / 2;
	return c;
}

/* Grow a buffer geometrically up to limit so that small outputs stay small. */
static char *
grow(char *buf, size_t *alloc, size_t need, size_t limit)
{
	size_t n = *alloc ? *alloc : 4096;

	if (need <= *alloc)
		return buf;
	while (n < need)
		n *= 2;
	if (n > limit)
		n = limit;
	*alloc = n;
	return xrealloc(buf, n);
}

void
capture_add(struct capture *c, const char *p, size_t n)
{
	size_t take;

	c->total += n;
	if (c->headlen < c->headcap) {
		take = c->headcap - c->headlen;
		if (take > n)
			take = n;
		c->head = grow(c->head, &c->headalloc, c->headlen + take,
		    c->headcap);
		memcpy(c->head + c->headlen, p, take);
		c->headlen += take;
		p += take;
		n -= take;
	}
	if (n == 0 || c->tailcap == 0)
		return;
	if (n > c->tailcap) {
		p += n - c->tailcap;
		n = c->tailcap;
	}
	/* The ring is filled in order before it wraps, so grow it to fit. */
	if (c->taillen < c->tailcap)
		c->tail = grow(c->tail, &c->tailalloc,
		    c->taillen + n > c->tailcap ? c->tailcap : c->taillen + n,
		    c->tailcap);
	while (n > 0) {
		take = c->tailcap - c->tailpos;
		if (take > n)
			take = n;
		memcpy(c->tail + c->tailpos, p, take);
		c->tailpos = (c->tailpos + take) % c->tailcap;
		c->taillen = c->taillen + take > c->tailcap ?
		    c->tailcap : c->taillen + take;
		p += take;
		n -= take;
	}
}

uint64_t
capture_total(const struct capture *c)
{
	return c->total;
}

int
capture_truncated(const struct capture *c)
{
	return c->total > c->cap;
}

/*
 * The kept bytes in order, without a copy: the head, then the tail in up
 * to two pieces (the ring may have wrapped). cut counts the bytes between.
 */
void
capture_parts(const struct capture *c, const char *p[3], size_t n[3],
    uint64_t *cut)
{
	size_t first;

	p[0] = c->head ? c->head : "";
	n[0] = c->headlen;
	*cut = c->total - c->headlen - c->taillen;
	p[1] = p[2] = c->tail ? c->tail : "";
	n[1] = n[2] = 0;
	if (c->taillen < c->tailcap || c->tailpos == 0) {
		n[1] = c->taillen;
		return;
	}
	/* Wrapped: the oldest byte is at tailpos. */
	first = c->tailcap - c->tailpos;
	p[1] = c->tail + c->tailpos;
	n[1] = first;
	n[2] = c->tailpos;
}

void
capture_free(struct capture *c)
{
	if (c == NULL)
		return;
	free(c->head);
	free(c->tail);
	free(c);
}
