/*
 * result.c: the ExecResult, in kv or JSON. kv values are escaped so that
 * each is one line of valid UTF-8 and byte-exact: \\ \n \t \r, and \xHH for
 * other control bytes, 0x7f and every byte outside valid UTF-8. JSON strings
 * are valid for any parser: control bytes as \u00XX, bytes outside valid
 * UTF-8 as U+FFFD (kv is the lossless format). Output goes through one
 * growable buffer and is written whole, retrying short writes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbx.h"

struct buf {
	char	*p;
	size_t	 n;
	size_t	 cap;
};

static void
put(struct buf *b, const char *s, size_t n)
{
	if (n == 0)
		return;
	if (b->n + n > b->cap) {
		while (b->n + n > b->cap)
			b->cap = b->cap ? b->cap * 2 : 4096;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void
puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at p (1 to 4), or 0 when invalid. */
static size_t
utf8_len(const unsigned char *p, size_t n)
{
	size_t len, i;
	unsigned cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/*
 * Escaped bytes gather in a small chunk that goes to the buffer in one
 * put(): an snprintf() and a memcpy() per byte made the worst case, 1 MiB
 * of control bytes, cost half a second on top of any run.
 */
static void
escape(struct buf *b, const char *s, size_t n, int json)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	char chunk[4096];
	size_t i = 0, k = 0, len;

	while (i < n) {
		unsigned char c = p[i];

		if (k > sizeof(chunk) - 8) {
			put(b, chunk, k);
			k = 0;
		}
		if (c == '\\' || c == '\n' || c == '\t' || c == '\r' ||
		    (json && c == '"')) {
			chunk[k++] = '\\';
			chunk[k++] = c == '\n' ? 'n' : c == '\t' ? 't' :
			    c == '\r' ? 'r' : (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(chunk + k, json ? "\\u00" : "\\x", json ? 4 : 2);
			k += json ? 4 : 2;
			chunk[k++] = hex[c >> 4];
			chunk[k++] = hex[c & 15];
		} else if (c < 0x80) {
			chunk[k++] = (char)c;
		} else if ((len = utf8_len(p + i, n - i)) > 0) {
			memcpy(chunk + k, s + i, len);
			k += len;
			i += len;
			continue;
		} else if (json) {
			memcpy(chunk + k, "\\ufffd", 6);
			k += 6;
		} else {
			chunk[k++] = '\\';
			chunk[k++] = 'x';
			chunk[k++] = hex[c >> 4];
			chunk[k++] = hex[c & 15];
		}
		i++;
	}
	if (k > 0)
		put(b, chunk, k);
}

/* A key and its string value; NULL is empty in kv and null in JSON. */
static void
field_str(struct buf *b, int json, const char *key, const char *v, size_t n)
{
	if (json) {
		puts_(b, b->n > 1 ? ",\"" : "\"");
		puts_(b, key);
		puts_(b, "\":");
		if (v == NULL) {
			puts_(b, "null");
			return;
		}
		puts_(b, "\"");
		escape(b, v, n, 1);
		puts_(b, "\"");
		return;
	}
	puts_(b, key);
	puts_(b, "=");
	if (v)
		escape(b, v, n, 0);
	puts_(b, "\n");
}

static void
field_cstr(struct buf *b, int json, const char *key, const char *v)
{
	field_str(b, json, key, v, v ? strlen(v) : 0);
}

/* A number, or (has == 0) empty in kv and null in JSON. */
static void
field_num(struct buf *b, int json, const char *key, int has, int64_t v)
{
	char tmp[32];

	if (!has) {
		field_cstr(b, json, key, NULL);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%" PRId64, v);
	if (json) {
		puts_(b, b->n > 1 ? ",\"" : "\"");
		puts_(b, key);
		puts_(b, "\":");
		puts_(b, tmp);
	} else {
		puts_(b, key);
		puts_(b, "=");
		puts_(b, tmp);
		puts_(b, "\n");
	}
}

static void
field_bool(struct buf *b, int json, const char *key, int v)
{
	if (json) {
		puts_(b, b->n > 1 ? ",\"" : "\"");
		puts_(b, key);
		puts_(b, v ? "\":true" : "\":false");
	} else {
		puts_(b, key);
		puts_(b, v ? "=1\n" : "=0\n");
	}
}

/* A stream: head, then the marker line and the tail when bytes were cut. */
static void
field_stream(struct buf *b, int json, const char *key,
    const struct capture *c)
{
	const char *head, *tail;
	size_t headlen, taillen;
	uint64_t cut;
	struct buf v = { NULL, 0, 0 };
	char marker[64];

	if (c == NULL) {
		field_str(b, json, key, "", 0);
		return;
	}
	capture_parts(c, &head, &headlen, &tail, &taillen, &cut);
	put(&v, head, headlen);
	if (cut > 0) {
		snprintf(marker, sizeof(marker), "\n[sbx: %" PRIu64
		    " bytes cut]\n", cut);
		puts_(&v, marker);
	}
	put(&v, tail, taillen);
	field_str(b, json, key, v.p ? v.p : "", v.n);
	free(v.p);
}

static void
field_streams(struct buf *b, int json, const struct exec_result *r)
{
	field_num(b, json, "stdout_bytes", 1,
	    r->out ? (int64_t)capture_total(r->out) : 0);
	field_bool(b, json, "stdout_truncated",
	    r->out ? capture_truncated(r->out) : 0);
	field_num(b, json, "stderr_bytes", 1,
	    r->err ? (int64_t)capture_total(r->err) : 0);
	field_bool(b, json, "stderr_truncated",
	    r->err ? capture_truncated(r->err) : 0);
	field_stream(b, json, "stdout", r->out);
	field_stream(b, json, "stderr", r->err);
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int
result_write(int fd, const struct exec_result *r, int json)
{
	struct buf b = { NULL, 0, 0 };
	char *hosts = NULL;
	size_t i, n = 0;
	int rc;

	if (json)
		puts_(&b, "{");
	field_cstr(&b, json, "executor", backend_name(r->executor));
	field_cstr(&b, json, "isolation", r->isolated ? "os" : "none");
	field_num(&b, json, "exit_code", r->exited, r->exit_code);
	field_cstr(&b, json, "signal", r->signal ? signal_name(r->signal) : NULL);
	field_bool(&b, json, "timed_out", r->timed_out);
	field_bool(&b, json, "aborted", r->aborted);
	field_num(&b, json, "duration_ms", 1, r->duration_ms);
	field_streams(&b, json, r);
	if (r->blocked.n > 0) {
		for (i = 0; i < r->blocked.n; i++)
			n += strlen(r->blocked.v[i]) + 1;
		hosts = xcalloc(1, n);
		for (i = 0; i < r->blocked.n; i++) {
			if (i)
				strcat(hosts, ",");
			strcat(hosts, r->blocked.v[i]);
		}
		field_cstr(&b, json, "blocked_hosts", hosts);
		free(hosts);
	}
	if (r->error != ERR_NONE) {
		field_cstr(&b, json, "error", err_kind_name(r->error));
		field_cstr(&b, json, "error_message", r->error_message);
	}
	if (json)
		puts_(&b, "}\n");
	rc = write_all(fd, b.p, b.n);
	free(b.p);
	return rc;
}
