/*
 * result.c: the ExecResult, in kv or JSON. kv values are escaped so that
 * each is one line of valid UTF-8 and byte-exact: \\ \n \t \r, and \xHH for
 * other control bytes, 0x7f and every byte outside valid UTF-8. JSON strings
 * are valid for any parser: control bytes as \u00XX, bytes outside valid
 * UTF-8 as U+FFFD (kv is the lossless format). The line and paragraph
 * separators of Unicode, U+0085 (NEL), U+2028 and U+2029, are escaped too,
 * as \xHH of each byte in kv and \uXXXX in JSON: readers that split lines the Unicode
 * way (Python's str.splitlines(), JavaScript) would otherwise read a line
 * the command printed as a key of the result. Output streams through one
 * fixed buffer, retrying short writes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbx.h"

/*
 * The result streams to its fd through one fixed buffer: memory stays that
 * of the captures whatever the escaping makes of them (a control byte
 * becomes four). A write error is remembered and reported at the end.
 */
struct buf {
	int	 fd;
	int	 failed;
	int	 fields;	/* written so far, for JSON's commas */
	size_t	 n;
	char	 p[65536];
};

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

static void
flush(struct buf *b)
{
	if (b->n > 0 && !b->failed && write_all(b->fd, b->p, b->n) < 0)
		b->failed = 1;
	b->n = 0;
}

static void
put(struct buf *b, const char *s, size_t n)
{
	size_t k;

	while (n > 0) {
		k = sizeof(b->p) - b->n;
		k = k < n ? k : n;
		memcpy(b->p + b->n, s, k);
		b->n += k;
		s += k;
		n -= k;
		if (b->n == sizeof(b->p))
			flush(b);
	}
}

static void
puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* One piece of a value; a value may come in several (head, marker, tail). */
struct seg {
	const char	*p;
	size_t		 n;
};

/*
 * A UTF-8 sequence cut by the end of a segment: the bytes from p on and
 * the first ones of the segments after it, joined in tmp.
 */
static size_t
gather(const struct seg *sg, size_t nseg, size_t at, unsigned char *tmp)
{
	size_t k = 0, i, j;

	for (i = 0; i < nseg && k < 4; i++)
		for (j = i == 0 ? at : 0; j < sg[i].n && k < 4; j++)
			tmp[k++] = (unsigned char)sg[i].p[j];
	return k;
}

/*
 * A valid UTF-8 character of len bytes at q: copied, or escaped where it
 * is U+0085, U+2028 or U+2029 (the other separators readers split on,
 * \v \f \x1c-\x1e, are control bytes). Adds at most 12 bytes at chunk + k.
 */
static size_t
put_utf8(char *chunk, size_t k, const unsigned char *q, size_t len, int json)
{
	static const char hex[] = "0123456789abcdef";
	unsigned cp = 0;
	size_t i;

	if (len == 2 && q[0] == 0xc2 && q[1] == 0x85)
		cp = 0x85;
	else if (len == 3 && q[0] == 0xe2 && q[1] == 0x80 &&
	    (q[2] == 0xa8 || q[2] == 0xa9))
		cp = 0x2000 | (q[2] & 0x3f);	/* U+2028, U+2029 */
	if (cp == 0) {
		memcpy(chunk + k, q, len);
		return k + len;
	}
	if (json) {
		memcpy(chunk + k, "\\u", 2);
		k += 2;
		for (i = 4; i-- > 0; )
			chunk[k++] = hex[cp >> (4 * i) & 15];
		return k;
	}
	for (i = 0; i < len; i++) {
		chunk[k++] = '\\';
		chunk[k++] = 'x';
		chunk[k++] = hex[q[i] >> 4];
		chunk[k++] = hex[q[i] & 15];
	}
	return k;
}

/*
 * Escaped bytes gather in a small chunk that goes to the buffer in one
 * put(): an snprintf() and a memcpy() per byte made the worst case, 1 MiB
 * of control bytes, cost half a second on top of any run. The segments are
 * one run of bytes: a character split between two is kept whole.
 */
static void
escape(struct buf *b, const struct seg *sg, size_t nseg, int json)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char tmp[4];
	char chunk[4096];
	size_t s, i, k = 0, len, skip = 0;

	for (s = 0; s < nseg; s++) {
		const unsigned char *p = (const unsigned char *)sg[s].p;
		size_t n = sg[s].n;

		for (i = skip < n ? skip : n, skip -= i; i < n; ) {
			unsigned char c = p[i];

			if (k > sizeof(chunk) - 16) {
				put(b, chunk, k);
				k = 0;
			}
			if (c == '\\' || c == '\n' || c == '\t' || c == '\r' ||
			    (json && c == '"')) {
				chunk[k++] = '\\';
				chunk[k++] = c == '\n' ? 'n' : c == '\t' ? 't' :
				    c == '\r' ? 'r' : (char)c;
			} else if (c < 0x20 || c == 0x7f) {
				memcpy(chunk + k, json ? "\\u00" : "\\x",
				    json ? 4 : 2);
				k += json ? 4 : 2;
				chunk[k++] = hex[c >> 4];
				chunk[k++] = hex[c & 15];
			} else if (c < 0x80) {
				chunk[k++] = (char)c;
			} else if ((len = utf8_len(p + i, n - i)) > 0) {
				k = put_utf8(chunk, k, p + i, len, json);
				i += len;
				continue;
			} else if (n - i < 4 && s + 1 < nseg &&
			    (len = utf8_len(tmp, gather(sg + s, nseg - s, i,
			    tmp))) > n - i) {
				k = put_utf8(chunk, k, tmp, len, json);
				skip = len - (n - i);
				break;
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
	}
	if (k > 0)
		put(b, chunk, k);
}

static void
key(struct buf *b, int json, const char *k)
{
	if (json) {
		puts_(b, b->fields++ ? ",\"" : "\"");
		puts_(b, k);
		puts_(b, "\":");
	} else {
		puts_(b, k);
		puts_(b, "=");
	}
}

/* A key and its value in pieces; NULL is empty in kv and null in JSON. */
static void
field_segs(struct buf *b, int json, const char *k, const struct seg *sg,
    size_t nseg)
{
	size_t i, total = 0;

	for (i = 0; sg && i < nseg; i++)
		total += sg[i].n;
	key(b, json, k);
	/* The contract: null in JSON wherever kv has an empty value. */
	if (json && total == 0) {
		puts_(b, "null");
		return;
	}
	if (json)
		puts_(b, "\"");
	if (sg)
		escape(b, sg, nseg, json);
	puts_(b, json ? "\"" : "\n");
}

static void
field_cstr(struct buf *b, int json, const char *k, const char *v)
{
	struct seg sg;

	sg.p = v;
	sg.n = v ? strlen(v) : 0;
	field_segs(b, json, k, v ? &sg : NULL, 1);
}

/* A number, or (has == 0) empty in kv and null in JSON. */
static void
field_num(struct buf *b, int json, const char *k, int has, int64_t v)
{
	char tmp[32];

	if (!has) {
		field_cstr(b, json, k, NULL);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%" PRId64, v);
	key(b, json, k);
	puts_(b, tmp);
	if (!json)
		puts_(b, "\n");
}

static void
field_bool(struct buf *b, int json, const char *k, int v)
{
	key(b, json, k);
	if (json)
		puts_(b, v ? "true" : "false");
	else
		puts_(b, v ? "1\n" : "0\n");
}

/* A stream: head, then the marker line and the tail when bytes were cut. */
static void
field_stream(struct buf *b, int json, const char *k,
    const struct capture *c)
{
	struct seg sg[4];
	const char *p[3];
	size_t n[3], i, nseg = 0;
	uint64_t cut;
	char marker[64];

	if (c == NULL) {
		field_cstr(b, json, k, "");
		return;
	}
	capture_parts(c, p, n, &cut);
	for (i = 0; i < 3; i++) {
		if (i == 1 && cut > 0) {
			snprintf(marker, sizeof(marker), "\n[sbx: %" PRIu64
			    " bytes cut]\n", cut);
			sg[nseg].p = marker;
			sg[nseg++].n = strlen(marker);
		}
		sg[nseg].p = p[i];
		sg[nseg++].n = n[i];
	}
	field_segs(b, json, k, sg, nseg);
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

/* limit=NAME[,NAME]: the limits that ended or hampered the command. */
static void
field_limit(struct buf *b, int json, unsigned limit)
{
	static const struct { unsigned bit; const char *name; } names[] = {
		{ LIMIT_MEM, "memory" }, { LIMIT_PROCS, "procs" },
		{ LIMIT_FSIZE, "file_size" }, { LIMIT_CPU, "cpu" }
	};
	char v[64] = "";
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (limit & names[i].bit) {
			if (v[0])
				strcat(v, ",");
			strcat(v, names[i].name);
		}
	if (v[0])
		field_cstr(b, json, "limit", v);
}

/* The tree's usage, once the command ran; the cgroup's where one held it. */
static void
field_usage(struct buf *b, int json, const struct exec_result *r)
{
	if (!r->have_usage)
		return;
	field_num(b, json, "cpu_user_ms", 1, r->cpu_user_ms);
	field_num(b, json, "cpu_sys_ms", 1, r->cpu_sys_ms);
	field_num(b, json, "max_rss_kb", 1, r->max_rss_kb);
	if (r->mem_peak_kb > 0)
		field_num(b, json, "mem_peak_kb", 1, r->mem_peak_kb);
	if (r->procs_peak > 0)
		field_num(b, json, "procs_peak", 1, r->procs_peak);
	field_limit(b, json, r->limit);
}

/* A list as one value, its items joined by sep; absent when empty. */
static void
field_list(struct buf *b, int json, const char *k, const struct strv *v,
    const char *sep)
{
	char *all, *o;
	const char *p;
	size_t i, n = 1;

	if (v->n == 0)
		return;
	for (i = 0; i < v->n; i++)
		n += 3 * strlen(v->v[i]) + strlen(sep);
	o = all = xcalloc(1, n);
	/*
	 * An entry holding the separator's first byte, or '%', has it as
	 * %3B, %2C or %25: a path the command chose cannot read as two
	 * entries (denied's "; ").
	 */
	for (i = 0; i < v->n; i++) {
		if (i)
			o = stpcpy(o, sep);
		for (p = v->v[i]; *p; p++)
			if (*p == sep[0] || *p == '%')
				o += sprintf(o, "%%%02X", (unsigned char)*p);
			else
				*o++ = *p;
	}
	field_cstr(b, json, k, all);
	free(all);
}

int
result_write(int fd, const struct exec_result *r, int json)
{
	static struct buf b;

	b.fd = fd;
	b.failed = b.fields = 0;
	b.n = 0;
	if (json)
		puts_(&b, "{");
	field_cstr(&b, json, "executor", r->executor);
	field_cstr(&b, json, "isolation", r->isolated ? "os" : "none");
	field_num(&b, json, "exit_code", r->exited, r->exit_code);
	field_cstr(&b, json, "signal", r->signal ? signal_name(r->signal) : NULL);
	field_bool(&b, json, "timed_out", r->timed_out);
	field_bool(&b, json, "aborted", r->aborted);
	field_num(&b, json, "duration_ms", 1, r->duration_ms);
	field_usage(&b, json, r);
	if (r->limit_mem)
		field_cstr(&b, json, "limit_mem", r->limit_mem);
	field_streams(&b, json, r);
	field_list(&b, json, "allowed_local", &r->allowed_local, " ");
	field_list(&b, json, "blocked_hosts", &r->blocked, ",");
	field_list(&b, json, "blocked_reasons", &r->blocked_why, ",");
	if (r->ndenied > 0) {
		field_num(&b, json, "denied_count", 1, (int64_t)r->ndenied);
		field_list(&b, json, "denied", &r->denied, "; ");
	}
	if (r->error != ERR_NONE) {
		field_cstr(&b, json, "error", err_kind_name(r->error));
		field_cstr(&b, json, "error_message", r->error_message);
	}
	if (json)
		puts_(&b, "}\n");
	flush(&b);
	return b.failed ? -1 : 0;
}
