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
	char	*joined;	/* the tail in order, made by capture_parts */
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

void
capture_parts(const struct capture *cc, const char **head, size_t *headlen,
    const char **tail, size_t *taillen, uint64_t *cut)
{
	struct capture *c = (struct capture *)cc;
	size_t first;

	*head = c->head ? c->head : "";
	*headlen = c->headlen;
	*cut = c->total - c->headlen - c->taillen;
	if (c->taillen < c->tailcap || c->tailpos == 0) {
		*tail = c->tail ? c->tail : "";
		*taillen = c->taillen;
		return;
	}
	/* Wrapped: the oldest byte is at tailpos. */
	free(c->joined);
	c->joined = xmalloc(c->taillen);
	first = c->tailcap - c->tailpos;
	memcpy(c->joined, c->tail + c->tailpos, first);
	memcpy(c->joined + first, c->tail, c->tailpos);
	*tail = c->joined;
	*taillen = c->taillen;
}

void
capture_free(struct capture *c)
{
	if (c == NULL)
		return;
	free(c->head);
	free(c->tail);
	free(c->joined);
	free(c);
}
