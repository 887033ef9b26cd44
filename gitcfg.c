/*
 * gitcfg.c: reads a git config file's text as git's own parser does, and
 * hands each "section.subsection.key" and its value to a callback. No
 * I/O: policy.c reads the file and decides what a key names.
 * Invariants: the text is read to its end whatever it holds (a NUL, a
 * line of any length, no final newline); a key reaches the callback with
 * its section and name lower case and its subsection as written, and a
 * value decoded (quotes, escapes, continuation lines, comments,
 * whitespace) as git decodes it. Where git's versions decode a value
 * differently (unquoted whitespace inside a value: older ones turn each
 * such character into a space), the callback gets each reading. Where
 * git stops at a syntax error, this reads on from the next line: what
 * follows is read by no git, and holding more is safe, never less.
 */
#include <stdlib.h>
#include <string.h>
#include "sbx.h"

/* The text, and where the reader is in it. */
struct scan {
	const unsigned char	*p;
	const unsigned char	*end;
	int			 eof;	/* the end was read (as a newline) */
	int			 nl;	/* the last character read ended a line */
};

/* A growing string; its length bounded by the text's. */
struct sbuf {
	char	*s;
	size_t	 n;
	size_t	 cap;
};

/* The reader, the strings it builds, and where the entries go. */
struct parser {
	struct scan	 s;
	struct sbuf	 sect;	/* "section" or "section.sub" */
	struct sbuf	 key;
	struct sbuf	 v;
	struct sbuf	 old;	/* v as older git reads it */
	void		(*fn)(void *, const char *, const char *);
	void		*arg;
};

static void
sbuf_add(struct sbuf *b, int c)
{
	if (b->n + 1 >= b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->s = xrealloc(b->s, b->cap);
	}
	b->s[b->n++] = (char)c;
	b->s[b->n] = '\0';
}

/* b cut to n characters, n at most its length. */
static void
sbuf_set(struct sbuf *b, size_t n)
{
	if (b->s == NULL)
		sbuf_add(b, 0);
	b->n = n;
	b->s[n] = '\0';
}

/* git's own ctype: ASCII only, whatever the locale; no \v or \f. */
static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int
is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
is_keychar(int c)
{
	return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* The next character as git reads it: CR LF is LF; the end is a LF. */
static int
next(struct scan *s)
{
	int c;

	if (s->p == s->end) {
		s->eof = s->nl = 1;
		return '\n';
	}
	c = *s->p++;
	if (c == '\r' && s->p < s->end && *s->p == '\n')
		c = *s->p++;
	s->nl = c == '\n';
	return c;
}

/* After an error: on to the start of the next line. */
static void
skip_line(struct scan *s)
{
	while (!s->nl)
		next(s);
}

/*
 * The rest of a header after "[section" and a whitespace c: ' "sub"]'.
 * The subsection keeps its case; a backslash takes the next character
 * as it is.
 */
static int
subsection(struct scan *s, struct sbuf *sect, int c)
{
	do {
		if (c == '\n')
			return -1;
		c = next(s);
	} while (is_space(c));
	if (c != '"')
		return -1;
	sbuf_add(sect, '.');
	for (;;) {
		if ((c = next(s)) == '\n')
			return -1;
		if (c == '"')
			break;
		if (c == '\\' && (c = next(s)) == '\n')
			return -1;
		sbuf_add(sect, c);
	}
	return next(s) == ']' ? 0 : -1;
}

/*
 * A header after its "[": "[section]", the old "[section.sub]" (all of
 * it lower case), or "[section \"sub\"]". Whatever follows on the line
 * is read as the line's next item (a key may share the header's line).
 */
static int
header(struct scan *s, struct sbuf *sect)
{
	int c;

	sbuf_set(sect, 0);
	for (;;) {
		c = next(s);
		if (s->eof)
			return -1;
		if (c == ']')
			break;
		if (is_space(c)) {
			if (subsection(s, sect, c) < 0)
				return -1;
			break;
		}
		if (!is_keychar(c) && c != '.')
			return -1;
		sbuf_add(sect, lower(c));
	}
	return sect->n > 0 ? 0 : -1;
}

/* What a backslash and c stand for in a value; -1: git refuses it. */
static int
unescape(int c)
{
	switch (c) {
	case 't':
		return '\t';
	case 'b':
		return '\b';
	case 'n':
		return '\n';
	case '\\':
	case '"':
		return c;
	default:
		return -1;
	}
}

/*
 * A value after its "=", to the end of its line: quotes anywhere, each
 * pair joining what it holds; escapes; a backslash at the end of a line
 * joining the next one; "#" or ";" outside quotes ending it; whitespace
 * outside quotes dropped at either end. v gets the whitespace inside as
 * it is (recent git), old a space for each character of it (older git,
 * 2.39 among them).
 */
static int
value(struct scan *s, struct sbuf *v, struct sbuf *old)
{
	int c, quote = 0, comment = 0;
	size_t trim = 0;

	sbuf_set(v, 0);
	sbuf_set(old, 0);
	for (;;) {
		if ((c = next(s)) == '\n') {
			if (quote)
				return -1;
			if (trim > 0) {
				sbuf_set(v, trim);
				sbuf_set(old, trim);
			}
			return 0;
		}
		if (comment)
			continue;
		if (is_space(c) && !quote) {
			if (v->n > 0) {
				trim = trim > 0 ? trim : v->n;
				sbuf_add(v, c);
				sbuf_add(old, ' ');
			}
			continue;
		}
		if (!quote && (c == '#' || c == ';')) {
			comment = 1;
			continue;
		}
		trim = 0;
		if (c == '"') {
			quote = !quote;
			continue;
		}
		if (c == '\\') {
			/* Backslash, newline: the value goes on next line. */
			if ((c = next(s)) == '\n')
				continue;
			if ((c = unescape(c)) < 0)
				return -1;
		}
		sbuf_add(v, c);
		sbuf_add(old, c);
	}
}

/*
 * One entry, its first letter c read: a name of letters, digits and
 * "-", then "=" and a value, or the end of the line (a boolean, value
 * NULL). The key goes on as a C string, as git passes it on: a NUL in a
 * subsection ends the key there, and to git '[include "path<NUL>"] x = f'
 * is an include.path.
 */
static int
entry(struct parser *pr, int c)
{
	struct scan *s = &pr->s;
	size_t i;

	sbuf_set(&pr->key, 0);
	for (i = 0; i < pr->sect.n; i++)
		sbuf_add(&pr->key, pr->sect.s[i]);
	if (pr->sect.n > 0)
		sbuf_add(&pr->key, '.');
	sbuf_add(&pr->key, lower(c));
	while (!s->eof && is_keychar(c = next(s)))
		sbuf_add(&pr->key, lower(c));
	while (c == ' ' || c == '\t')
		c = next(s);
	if (c == '\n') {
		pr->fn(pr->arg, pr->key.s, NULL);
		return 0;
	}
	if (c != '=' || value(s, &pr->v, &pr->old) < 0)
		return -1;
	pr->fn(pr->arg, pr->key.s, pr->v.s);
	if (strcmp(pr->v.s, pr->old.s) != 0)
		pr->fn(pr->arg, pr->key.s, pr->old.s);
	return 0;
}

/* A UTF-8 byte order mark at the start is skipped; part of one is not. */
static int
skip_bom(struct scan *s)
{
	static const unsigned char bom[] = { 0xef, 0xbb, 0xbf };
	size_t i;

	for (i = 0; i < sizeof(bom) && s->p + i < s->end; i++)
		if (s->p[i] != bom[i])
			break;
	if (i == sizeof(bom))
		s->p += i;
	return i == 0 || i == sizeof(bom) ? 0 : -1;
}

void
gitcfg_parse(const char *text, size_t len,
    void (*fn)(void *, const char *, const char *), void *arg)
{
	struct parser pr;
	int c, comment = 0, r;

	memset(&pr, 0, sizeof(pr));
	pr.s.p = (const unsigned char *)text;
	pr.s.end = pr.s.p + len;
	pr.s.nl = 1;
	pr.fn = fn;
	pr.arg = arg;
	sbuf_set(&pr.sect, 0);
	if (skip_bom(&pr.s) < 0)
		skip_line(&pr.s);
	while (!pr.s.eof) {
		r = 0;
		if ((c = next(&pr.s)) == '\n')
			comment = 0;
		else if (comment || is_space(c))
			continue;
		else if (c == '#' || c == ';')
			comment = 1;
		else if (c == '[') {
			/* A broken header leaves no section: git reads no
			 * further, and its keys would name nothing. */
			if ((r = header(&pr.s, &pr.sect)) < 0)
				sbuf_set(&pr.sect, 0);
		} else if (is_alpha(c))
			r = entry(&pr, c);
		else
			r = -1;
		if (r < 0)
			skip_line(&pr.s);
	}
	free(pr.sect.s);
	free(pr.key.s);
	free(pr.v.s);
	free(pr.old.s);
}
