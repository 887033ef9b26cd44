/*
 * fuzz_proxy.c: libFuzzer target for the proxy's request head parser, its
 * policy decision and the plain-HTTP rewrite, and for the address check.
 * It includes proxy.c to reach the static helpers, and asserts what the
 * proxy relies on: a head is found only where it ends; an allowed host is
 * never an address literal and always matches a pattern on its label
 * boundary; the rewritten head is one clean HTTP/1.x head with no proxy or
 * hop-by-hop header and the URL's Host; the embedded IPv4 forms judge like
 * the IPv4 address they carry. Build and run: fuzz/run [SECONDS].
 */
#include "../proxy.c"

#include <assert.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct host_pattern pats[] = {
	{ "example.com", 0, 0 },
	{ "example.org", 1, 0 },
	{ "localhost", 0, 8080 },
	{ "registry.example.org", 0, 443 },
};

static struct proxy fp = {
	.hosts = pats,
	.nhosts = sizeof pats / sizeof pats[0],
};

static void
check_addr(const uint8_t *d, size_t n)
{
	struct sockaddr_in s4;
	struct sockaddr_in6 s6;
	int v4;

	if (n < 4)
		return;
	memset(&s4, 0, sizeof s4);
	s4.sin_family = AF_INET;
	memcpy(&s4.sin_addr, d, 4);
	v4 = proxy_addr_public((struct sockaddr *)&s4);
	memset(&s6, 0, sizeof s6);
	s6.sin6_family = AF_INET6;
	s6.sin6_addr.s6_addr[10] = 0xff;
	s6.sin6_addr.s6_addr[11] = 0xff;
	memcpy(&s6.sin6_addr.s6_addr[12], d, 4);
	assert(proxy_addr_public((struct sockaddr *)&s6) == v4);
	s6.sin6_addr.s6_addr[0] = 0x20;
	s6.sin6_addr.s6_addr[1] = 0x02;
	memset(&s6.sin6_addr.s6_addr[10], 0, 2);
	memcpy(&s6.sin6_addr.s6_addr[2], d, 4);
	assert(proxy_addr_public((struct sockaddr *)&s6) == v4);
	if (n >= 16) {
		memcpy(&s6.sin6_addr, d, 16);
		(void)proxy_addr_public((struct sockaddr *)&s6);
	}
}

static int
ci_has(const char *s, size_t n, const char *w)
{
	size_t i;

	for (i = 0; i + strlen(w) <= n; i++)
		if (ci_prefix(s + i, n - i, w))
			return 1;
	return 0;
}

static void
check_allowed(const struct req *r, const char *norm)
{
	struct in_addr a4;
	struct in6_addr a6;
	size_t i;
	int hit = 0;

	assert(inet_aton(norm, &a4) == 0);
	assert(inet_pton(AF_INET6, norm, &a6) != 1);
	assert(r->host[0] != '[');
	for (i = 0; i < fp.nhosts; i++)
		if (pattern_match(&pats[i], norm) &&
		    pattern_port(&pats[i], r->port))
			hit = 1;
	assert(hit);
	for (i = 0; norm[i] != '\0'; i++)
		assert((norm[i] >= 'a' && norm[i] <= 'z') || is_digit(norm[i]) ||
		    norm[i] == '-' || norm[i] == '_' || norm[i] == '.');
}

static void
check_rewrite(const char *head, size_t hend, const struct req *r,
    const char *norm)
{
	static char out[RING_SIZE];
	size_t n = proxy_rewrite(head, hend, r, norm, r->port, out, sizeof out);
	size_t pos = 0, len;
	const char *s;
	char host[300];

	assert(n > 0 && n <= sizeof out);
	assert(proxy_head_end(out, n, 0) == n);
	assert(next_line(out, n, &pos, &s, &len) == 0);
	assert(len > 9 && memcmp(s + len - 9, " HTTP/1.", 8) == 0);
	assert(memchr(s, ' ', len) != NULL &&
	    ((const char *)memchr(s, ' ', len))[1] == '/');
	assert(next_line(out, n, &pos, &s, &len) == 0);
	snprintf(host, sizeof host, r->port == 80 ? "Host: %s" :
	    "Host: %s:%d", norm, r->port);
	assert(len == strlen(host) && memcmp(s, host, len) == 0);
	while (next_line(out, n, &pos, &s, &len) == 0 && len > 0) {
		assert(!ci_prefix(s, len, "proxy-"));
		assert(!ci_prefix(s, len, "host:"));
		assert(!ci_prefix(s, len, "transfer-encoding:"));
		assert(!ci_prefix(s, len, "connection:") ||
		    ci_equal(s, len, "connection: close"));
	}
	assert(pos == n);
	assert(!ci_has(out, n, "\r\r") && memchr(out, '\0', n) == NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data;
	size_t hend, split;
	struct req r;
	char norm[256], why[300];
	const char *reason;
	int st, named;

	check_addr(data, size);
	if (size > HEAD_MAX)
		return 0;
	hend = proxy_head_end(b, size, 0);
	/* Arrival in two pieces finds the same end. */
	split = size > 0 ? data[0] % (size + 1) : 0;
	if (proxy_head_end(b, split, 0) == 0)
		assert(proxy_head_end(b, size, split) == hend);
	if (hend == 0)
		return 0;
	assert(hend <= size && b[hend - 1] == '\n');
	st = proxy_parse_request(b, hend, &r);
	if (st != 0) {
		assert(r.why != NULL && st >= 400 && st < 600);
		return 0;
	}
	fp.allow_private = data[0] & 1;
	st = proxy_decide(&fp, r.host, r.port, norm, why, sizeof why, &reason,
	    &named);
	assert(st == 0 || st == 400 || st == 403);
	if (st != 0) {
		assert(why[0] != '\0');
		return 0;
	}
	check_allowed(&r, norm);
	if (!r.tunnel)
		check_rewrite(b, hend, &r, norm);
	return 0;
}
