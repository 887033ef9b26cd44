/*
 * proxy.c: sbx's filtering HTTP proxy for --allow-host. It serves CONNECT
 * tunnels and absolute-URL plain-HTTP requests, decides each one in a fixed
 * order (IP literal, port, allowlist, name lookup, public addresses only)
 * and relays bytes between the client and an address it checked itself,
 * never looking the name up twice. It plugs into sbx's one poll loop:
 * proxy_pollfds() and proxy_handle() never block, and name lookups run on
 * short-lived threads that hand their answer back through a socket in the
 * poll set. Clients arrive on a TCP listener on 127.0.0.1, or, for bwrap,
 * as descriptors passed over a socketpair by proxy_bridge_run() inside the
 * sandbox. Invariants: every descriptor opened here is close-on-exec and
 * non-blocking (the bridge's excepted: it runs in its own process); every
 * buffer and count has a fixed bound (request head, relay rings and pipes,
 * connections, lookups, the blocked list); every connection has a deadline,
 * which proxy_handle() enforces, so the loop must call it after every poll.
 */
#define _GNU_SOURCE

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sbx.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL	0	/* macOS: sbx ignores SIGPIPE anyway */
#endif

#define HEAD_MAX	16384	/* request line and headers */
#define RING_SIZE	65536	/* relay buffer, each direction */
#define MAX_CONNS	256
#define MAX_LOOKUPS	32	/* resolver threads at once */
#define MAX_ADDRS	16	/* addresses tried per name */
#define MAX_BLOCKED	64	/* distinct refused hosts kept */
#define MAX_PIPES	128	/* relay pipes (2 fds each) at once */
#define BURST		64	/* accepts or received fds per wakeup */
#define HEAD_TIMEOUT	30000	/* ms to receive a whole request head */
#define LOOKUP_TIMEOUT	30000
#define CONNECT_TIMEOUT	30000
#define IDLE_TIMEOUT	300000	/* relay with no byte either way */
#define LOCAL_IDLE	86400000	/* the same to a host loopback port: a
					   database's or a language server's
					   connection idles for long */
#define REPLY_TIMEOUT	5000	/* to write an error reply */
#define LINGER_TIMEOUT	2000	/* reading what a refused client still sends */
#define PAUSE_MS	100	/* listener rest after EMFILE */

enum cstate { C_HEAD, C_LOOKUP, C_CONNECT, C_RELAY, C_REPLY, C_LINGER };
enum slot_kind { S_LISTEN, S_BRIDGE, S_WAKE, S_CLIENT, S_SERVER, S_NETNS };
enum { IO_AGAIN, IO_DONE, IO_EOF, IO_ERROR };

/* A relay direction moved by splice(2) through a pipe (Linux). */
struct pipebuf {
	int	 fd[2];		/* -1: this direction uses its ring */
	size_t	 len;		/* bytes held */
	size_t	 cap;
	int	 full;		/* the pipe refused more: wait for a flush */
};

struct ring {
	char	*b;
	size_t	 off;		/* first byte held */
	size_t	 len;		/* bytes held */
};

/*
 * A lookup belongs to the main thread except between pthread_create() and
 * the moment its thread sends the pointer back; the thread touches nothing
 * else. A lookup whose connection went away is orphaned (c = NULL) and
 * freed when it comes back, or by its thread when the proxy is gone.
 */
struct lookup {
	struct conn	*c;
	int		 wfd;	/* the thread's own copy of the wake socket */
	char		 host[256];
	int		 gai;
	size_t		 naddr;
	struct sockaddr_storage addr[MAX_ADDRS];
	socklen_t	 alen[MAX_ADDRS];
	char		 bad[INET6_ADDRSTRLEN];	/* first non-public address */
};

struct conn {
	enum cstate	 st;
	int		 cfd;		/* the client */
	int		 sfd;		/* the origin, -1 before connect */
	int		 dead;
	int		 tunnel;	/* CONNECT, else plain HTTP */
	int		 raw;		/* captured inside the sandbox (netns.c):
					   a tunnel with no request, no reply */
	int		 local;		/* to the host's loopback port (allowed
					   as localhost:PORT): no lookup */
	int64_t		 born;
	int64_t		 deadline;
	char		*head;		/* the request head while it arrives */
	size_t		 hlen;
	struct ring	 up;		/* client to origin */
	struct ring	 down;		/* origin to client */
	int64_t		 up_left;	/* body bytes still to forward; -1: all */
	char		 host[256];	/* normalised */
	int		 port;
	struct lookup	*lk;
	int		 lk_out;	/* lk is with its thread */
	size_t		 next_addr;
	char		*reply;		/* an error reply being written */
	size_t		 rlen, roff;
	short		 cev, sev;	/* events asked this round */
	short		 crev, srev;	/* events seen this round */
	unsigned	 c_eof:1, s_eof:1, c_shut:1, s_shut:1;
	struct pipebuf	 pup, pdown;	/* spliced directions */
};

struct slot {
	enum slot_kind	 kind;
	int		 fd;
	struct conn	*c;
};

struct proxy {
	int		 lfd;		/* TCP listener, or -1 */
	int		 bfd;		/* the proxy's end of the bridge, or -1 */
	int		 bfd_child;	/* the sandbox's end; the core closes it */
	int		 port;
	int		 wake[2];	/* resolver answers: [0] read, [1] write */
	int64_t		 pause_until;	/* listener rests after EMFILE */
	const struct host_pattern *hosts;
	size_t		 nhosts;
	int		 allow_private;
	struct conn	*conns[MAX_CONNS];
	size_t		 nconns;
	int		 nlookups;	/* threads running */
	int		 npipes;	/* relay pipes open */
	struct slot	 slot[2 * MAX_CONNS + 3 + NETNS_FDS];
	struct netns	*netns;		/* the capture (bridge only), or NULL */
	size_t		 nslot;
	struct strv	 blocked;
	struct strv	 blocked_why;	/* "HOST REASON", as blocked */
};

/* What parse_request() found in a request head. */
struct req {
	int		 tunnel;
	char		 host[256];	/* as written */
	int		 port;		/* 0: none given */
	const char	*method;
	size_t		 method_len;
	const char	*path;		/* plain HTTP: origin-form, may be empty */
	size_t		 path_len;
	int		 minor;		/* HTTP/1.minor */
	int		 chunked;	/* Transfer-Encoding present */
	int64_t		 body_len;	/* Content-Length, 0 when absent */
	const char	*why;		/* when refused */
};

/*
 * fuzz/fuzz_proxy.c includes this file to reach proxy_parse_request(),
 * proxy_decide(), proxy_addr_public(), proxy_head_end() and
 * proxy_rewrite(): static, but named as the fuzzer knows them.
 */

/* ---- descriptors ------------------------------------------------------ */

#if !defined(SOCK_CLOEXEC) || !defined(__linux__)
/* Where the flags cannot be given at creation: set them, or give up. */
static int
sock_flags(int fd)
{
	if (fd != -1 && (set_cloexec(fd) == -1 || set_nonblock(fd) == -1)) {
		close(fd);
		return -1;
	}
	return fd;
}
#endif

static int
sock_new(int domain, int type)
{
#ifdef SOCK_CLOEXEC
	return socket(domain, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
#else
	return sock_flags(socket(domain, type, 0));
#endif
}

static int
sock_accept(int lfd)
{
#ifdef __linux__
	return accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
#else
	return sock_flags(accept(lfd, NULL, NULL));
#endif
}

static void
close_fd(int *fd)
{
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

static void
nodelay(int fd)
{
	int one = 1;

	/* Tunnels carry TLS handshakes: small writes must not wait. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* ---- addresses and names ---------------------------------------------- */

static int
v4_public(uint32_t a)
{
	static const struct { uint32_t net; int bits; } deny[] = {
		{ 0x00000000, 8 },	/* "this network" */
		{ 0x0a000000, 8 },	/* private */
		{ 0x64400000, 10 },	/* carrier-grade NAT */
		{ 0x7f000000, 8 },	/* loopback */
		{ 0xa9fe0000, 16 },	/* link local */
		{ 0xac100000, 12 },	/* private */
		{ 0xc0000000, 24 },	/* IETF protocol assignments */
		{ 0xc0000200, 24 },	/* TEST-NET-1 */
		{ 0xc0586300, 24 },	/* 6to4 relay anycast */
		{ 0xc0a80000, 16 },	/* private */
		{ 0xc6120000, 15 },	/* benchmarking */
		{ 0xc6336400, 24 },	/* TEST-NET-2 */
		{ 0xcb007100, 24 },	/* TEST-NET-3 */
		{ 0xe0000000, 4 },	/* multicast */
		{ 0xf0000000, 4 },	/* reserved, broadcast */
	};
	size_t i;

	for (i = 0; i < sizeof deny / sizeof deny[0]; i++)
		if ((a >> (32 - deny[i].bits)) ==
		    (deny[i].net >> (32 - deny[i].bits)))
			return 0;
	return 1;
}

static uint32_t
v4_at(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/*
 * Only global unicast (2000::/3) can be public, less its special blocks;
 * the forms that carry an IPv4 address (mapped, NAT64, 6to4) are as public
 * as the address they carry, since that is where the packets go.
 */
static int
v6_public(const unsigned char *a)
{
	static const unsigned char mapped[12] = { 0,0,0,0,0,0,0,0,0,0,0xff,0xff };
	static const unsigned char nat64[12] = { 0,0x64,0xff,0x9b,0,0,0,0,0,0,0,0 };

	if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
		return v4_public(v4_at(a + 12));
	if (a[0] == 0x20 && a[1] == 0x02)		/* 6to4 */
		return v4_public(v4_at(a + 2));
	if ((a[0] & 0xe0) != 0x20)
		return 0;
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] < 0x02)	/* 2001::/23 */
		return 0;
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8)
		return 0;				/* documentation */
	if (a[0] == 0x3f && a[1] == 0xff && a[2] < 0x10)	/* 3fff::/20 */
		return 0;
	return 1;
}

static int
proxy_addr_public(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		return v4_public(ntohl(s4->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		return v6_public(s6->sin6_addr.s6_addr);
	}
	return 0;
}

static int
is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static int
is_hex(int ch)
{
	return is_digit(ch) || (ch >= 'a' && ch <= 'f') ||
	    (ch >= 'A' && ch <= 'F');
}

/* The last label is a number (decimal, octal, 0x-hex): an IPv4 spelling. */
static int
ends_in_number(const char *h)
{
	const char *l = strrchr(h, '.');
	size_t i;

	l = l ? l + 1 : h;
	if (l[0] == '0' && (l[1] == 'x' || l[1] == 'X')) {
		for (i = 2; l[i] != '\0'; i++)
			if (!is_hex((unsigned char)l[i]))
				return 0;
		return 1;
	}
	if (l[0] == '\0')
		return 0;
	for (i = 0; l[i] != '\0'; i++)
		if (!is_digit((unsigned char)l[i]))
			return 0;
	return 1;
}

/*
 * An address written as a host, in any spelling a resolver or a browser
 * would take for one: brackets, IPv6 with or without a zone, everything
 * inet_aton() accepts (127.1, 0x7f.1, 2130706433, 017700000001), and any
 * name whose last label is a number.
 */
static int
ip_literal(const char *h)
{
	char buf[256];
	struct in_addr a4;
	struct in6_addr a6;
	size_t n = strlen(h);

	if (h[0] == '[')
		return 1;
	if (n == 0 || n >= sizeof buf)
		return 0;
	memcpy(buf, h, n + 1);
	buf[strcspn(buf, "%")] = '\0';
	if (inet_pton(AF_INET6, buf, &a6) == 1)
		return 1;
	memcpy(buf, h, n + 1);
	if (buf[n - 1] == '.')
		buf[n - 1] = '\0';
	return inet_aton(buf, &a4) != 0 || ends_in_number(buf);
}

/* Lower case, one trailing dot dropped, LDH (and _) labels of 1..63. */
static int
normalise(const char *h, char *out)
{
	size_t n = strlen(h), i, label = 0;

	if (n > 0 && h[n - 1] == '.')
		n--;
	if (n == 0 || n > 253)
		return -1;
	for (i = 0; i < n; i++) {
		int ch = (unsigned char)h[i];

		if (ch >= 'A' && ch <= 'Z')
			ch += 'a' - 'A';
		if (ch == '.') {
			if (label == 0)
				return -1;
			label = 0;
		} else if ((ch >= 'a' && ch <= 'z') || is_digit(ch) ||
		    ch == '-' || ch == '_') {
			if (++label > 63)
				return -1;
		} else
			return -1;
		out[i] = (char)ch;
	}
	out[n] = '\0';
	return label == 0 ? -1 : 0;
}

static int
pattern_match(const struct host_pattern *hp, const char *name)
{
	size_t n = strlen(name), m = strlen(hp->name);

	if (!hp->wildcard)
		return strcmp(name, hp->name) == 0;
	/* Subdomains only, on a label boundary: not evilexample.com. */
	return n > m + 1 && name[n - m - 1] == '.' &&
	    strcmp(name + n - m, hp->name) == 0;
}

static int
pattern_port(const struct host_pattern *hp, int port)
{
	return hp->port == 0 ? port == 80 || port == 443 : hp->port == port;
}

/*
 * For netns.c's resolver: the ports NAME may reach by the patterns (into
 * ports, at most max), or -1 when none names it (or it is no host name).
 * An IP literal is never a name here.
 */
int
proxy_name_ports(const struct host_pattern *hp, size_t n, const char *name,
    int *ports, int max)
{
	char norm[256];
	int k = 0, j, cand[2], nc, c;
	size_t i;

	if (strlen(name) > 253 || ip_literal(name) || normalise(name, norm) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		/* The host's loopback is reached at loopback, not by name. */
		if (hp[i].local || !pattern_match(&hp[i], norm))
			continue;
		nc = 0;
		if (hp[i].port == 0) {
			cand[nc++] = 80;
			cand[nc++] = 443;
		} else
			cand[nc++] = hp[i].port;
		for (c = 0; c < nc; c++) {
			for (j = 0; j < k && ports[j] != cand[c]; j++)
				;
			if (j == k && k < max)
				ports[k++] = cand[c];
		}
	}
	return k > 0 ? k : -1;
}

/* ":PORT" at p, or nothing: the port (1..65535), 0 for none, -1. */
static long
pattern_port_of(const char *p)
{
	char *end;
	long port;

	if (*p == '\0')
		return 0;
	if (*p != ':' || !is_digit((unsigned char)p[1]))
		return -1;
	errno = 0;
	port = strtol(p + 1, &end, 10);
	return *end || errno || port < 1 || port > 65535 ? -1 : port;
}

/*
 * The host's own loopback as --allow-host spells it: localhost,
 * 127.0.0.1 or [::1] (an IPv6 address needs its brackets to take a
 * port). 1 when host is one (*port its port, 0 for none, -1 a bad one),
 * else 0.
 */
static int
loopback_host(const char *host, long *port)
{
	static const char *const names[] = { "localhost", "localhost.",
	    "127.0.0.1" };
	size_t i, n;

	*port = 0;
	if (strncmp(host, "[::1]", 5) == 0) {
		*port = pattern_port_of(host + 5);
		return 1;
	}
	if (strcmp(host, "::1") == 0)
		return 1;
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		n = strlen(names[i]);
		if (strncasecmp(host, names[i], n) == 0 &&
		    (host[n] == '\0' || host[n] == ':')) {
			*port = pattern_port_of(host + n);
			return 1;
		}
	}
	return 0;
}

/*
 * A loopback pattern: that one port of the host's loopback, named
 * "localhost" whichever spelling was used. Without a port it would
 * mean no port at all, or every one: refused with what to write.
 */
static int
loopback_pattern(long port, struct host_pattern *hp, const char **why)
{
	if (port == 0) {
		*why = "the host's loopback needs a port: write --allow-host "
		    "localhost:PORT (that port alone)";
		return -1;
	}
	if (port < 0) {
		*why = "bad port";
		return -1;
	}
	/* Inside, 127.0.0.1:3128 is sbx's own proxy. */
	if (port == BRIDGE_PORT) {
		*why = "port 3128 is sbx's own proxy inside the sandbox";
		return -1;
	}
	hp->name = xstrdup("localhost");
	hp->port = (int)port;
	hp->local = 1;
	return 0;
}

/*
 * --allow-host PATTERN: the one grammar of allowlist entries, checked by
 * the same normalise() that judges every name a client asks for, so no
 * pattern is accepted that could never match. HOST, *.DOMAIN, either with
 * :PORT; or a URL (http or https, as npm prints its registry), whose
 * scheme gives the port unless it names one, and whose path is ignored;
 * or the host's loopback with a port (loopback_pattern()). Other IP
 * addresses are refused: the proxy serves names only. 0, or -1 with
 * *why saying what is wrong.
 */
int
proxy_pattern(const char *arg, struct host_pattern *hp, const char **why)
{
	char buf[300], norm[256], *host, *colon;
	int scheme = 0;
	long port;

	memset(hp, 0, sizeof(*hp));
	if (strlen(arg) >= sizeof(buf)) {
		*why = "too long";
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	host = buf;
	if (strncasecmp(host, "http://", 7) == 0) {
		scheme = 80;
		host += 7;
	} else if (strncasecmp(host, "https://", 8) == 0) {
		scheme = 443;
		host += 8;
	} else if (strstr(host, "://") != NULL) {
		*why = "a URL must be http:// or https://";
		return -1;
	}
	if (scheme) {
		host[strcspn(host, "/?#")] = '\0';
		if (strchr(host, '@') != NULL) {
			*why = "a URL with a user name or password";
			return -1;
		}
	}
	if (loopback_host(host, &port))
		return loopback_pattern(port == 0 ? scheme : port, hp, why);
	hp->port = scheme;
	if ((colon = strchr(host, ':')) != NULL) {
		if ((port = pattern_port_of(colon)) <= 0) {
			*why = ip_literal(host) ? "IP addresses are not "
			    "allowed, name the host" : "bad port";
			return -1;
		}
		hp->port = (int)port;
		*colon = '\0';
	}
	if (strncmp(host, "*.", 2) == 0) {
		hp->wildcard = 1;
		host += 2;
	}
	if (host[0] == '[' || ip_literal(host)) {
		*why = "IP addresses are not allowed, name the host";
		return -1;
	}
	if (normalise(host, norm) == -1) {
		*why = "not a host name or *.domain pattern (letters, digits, "
		    "'-' and '_', labels of 1 to 63, 253 in all)";
		return -1;
	}
	hp->name = xstrdup(norm);
	return 0;
}

/* The host loopback ports the patterns name, each once (at most max). */
size_t
proxy_local_ports(const struct host_pattern *hp, size_t n, int *ports,
    size_t max)
{
	size_t i, j, k = 0;

	for (i = 0; i < n; i++) {
		if (!hp[i].local)
			continue;
		for (j = 0; j < k && ports[j] != hp[i].port; j++)
			;
		if (j == k && k < max)
			ports[k++] = hp[i].port;
	}
	return k;
}

/* Port is one of the host's loopback ports the patterns allow. */
int
proxy_local_port(const struct host_pattern *hp, size_t n, int port)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (hp[i].local && hp[i].port == port)
			return 1;
	return 0;
}

/*
 * The policy decision before any lookup: 0 when allowed (norm gets the
 * normalised name), else an HTTP status with why filled in and *reason
 * set to the short word blocked_reasons gives (the man page lists them);
 * *named says the host matched a pattern (the user allowed it).
 */
static int
proxy_decide(const struct proxy *p, const char *host, int port, char *norm,
    char *why, size_t whylen, const char **reason, int *named)
{
	size_t i;
	int ported = 0;

	norm[0] = '\0';
	*named = 0;
	*reason = "not_listed";
	if (ip_literal(host)) {
		*reason = "ip_address";
		snprintf(why, whylen, "IP address literals are refused; "
		    "allow a host name with --allow-host");
		return 403;
	}
	if (normalise(host, norm) == -1) {
		norm[0] = '\0';
		*reason = "invalid_name";
		snprintf(why, whylen, "invalid host name");
		return 403;
	}
	if (port < 1 || port > 65535) {
		snprintf(why, whylen, "missing or invalid port");
		return 400;
	}
	for (i = 0; i < p->nhosts; i++) {
		if (pattern_match(&p->hosts[i], norm)) {
			*named = 1;
			if (pattern_port(&p->hosts[i], port))
				return 0;
		}
		if (p->hosts[i].port == port)
			ported = 1;
	}
	if (port != 80 && port != 443 && !ported) {
		*reason = "port";
		snprintf(why, whylen, "port %d is refused; ports 80 and 443 "
		    "are allowed, others with --allow-host HOST:PORT", port);
	} else if (*named) {
		*reason = "port";
		snprintf(why, whylen, "port %d is not allowed for this host",
		    port);
	} else
		snprintf(why, whylen, "host is not on the --allow-host list");
	return 403;
}

/* ---- request parsing -------------------------------------------------- */

static int
is_tchar(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    is_digit(ch) || (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch));
}

/*
 * Where the head ends (just past its empty line), or 0 while incomplete.
 * from: where the previous search stopped, to keep arrival linear.
 */
static size_t
proxy_head_end(const char *b, size_t len, size_t from)
{
	size_t i;

	for (i = from > 3 ? from - 3 : 0; i < len; i++) {
		if (b[i] != '\n')
			continue;
		if (i + 1 < len && b[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && b[i + 1] == '\r' && b[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* The next line (CR LF or LF dropped); -1 when none or a control byte. */
static int
next_line(const char *b, size_t len, size_t *pos, const char **s, size_t *n)
{
	const char *nl = memchr(b + *pos, '\n', len - *pos);
	size_t i;

	if (nl == NULL)
		return -1;
	*s = b + *pos;
	*n = (size_t)(nl - *s);
	*pos += *n + 1;
	if (*n > 0 && (*s)[*n - 1] == '\r')
		(*n)--;
	for (i = 0; i < *n; i++) {
		unsigned char ch = (unsigned char)(*s)[i];

		/* A lone CR could end a line for the origin: smuggling. */
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
			return -1;
	}
	return 0;
}

static int
ci_prefix(const char *s, size_t n, const char *pre)
{
	size_t i, m = strlen(pre);

	if (n < m)
		return 0;
	for (i = 0; i < m; i++) {
		int ch = (unsigned char)s[i];

		if (ch >= 'A' && ch <= 'Z')
			ch += 'a' - 'A';
		if (ch != pre[i])
			return 0;
	}
	return 1;
}

static int
ci_equal(const char *s, size_t n, const char *w)
{
	return n == strlen(w) && ci_prefix(s, n, w);
}

static int
parse_port(const char *s, size_t n)
{
	size_t i;
	int v = 0;

	if (n == 0 || n > 5)
		return -1;
	for (i = 0; i < n; i++) {
		if (!is_digit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v >= 1 && v <= 65535 ? v : -1;
}

/*
 * "host[:port]" into r->host and r->port (0 when absent). Brackets stay
 * on the host so that the IP-literal check sees them; an unbracketed IPv6
 * address keeps all its colons.
 */
static int
split_authority(const char *a, size_t n, struct req *r)
{
	size_t hl = n, i, colons = 0, last = 0;
	struct in6_addr a6;

	if (n > 0 && a[0] == '[') {
		const char *rb = memchr(a, ']', n);

		if (rb == NULL)
			return -1;
		hl = (size_t)(rb - a) + 1;
		if (hl < n && a[hl] != ':')
			return -1;
	} else {
		for (i = 0; i < n; i++)
			if (a[i] == ':')
				colons++, last = i;
		if (colons == 1)
			hl = last;
		else if (colons > 1 && n < sizeof r->host) {
			memcpy(r->host, a, last);
			r->host[last] = '\0';
			r->host[strcspn(r->host, "%")] = '\0';
			if (inet_pton(AF_INET6, r->host, &a6) == 1)
				hl = last;	/* "::1:443" in CONNECT */
		}
	}
	if (hl == 0 || hl >= sizeof r->host)
		return -1;
	memcpy(r->host, a, hl);
	r->host[hl] = '\0';
	r->port = 0;
	if (hl < n && hl + 1 < n && (r->port = parse_port(a + hl + 1,
	    n - hl - 1)) == -1)
		return -1;
	return 0;
}

static int
parse_target(const char *t, size_t n, struct req *r)
{
	size_t i;

	if (r->tunnel) {
		if (memchr(t, '/', n) || memchr(t, '@', n) ||
		    split_authority(t, n, r) == -1) {
			r->why = "CONNECT needs host:port";
			return 400;
		}
		return 0;
	}
	if (!ci_prefix(t, n, "http://")) {
		r->why = ci_prefix(t, n, "https://") ? "use CONNECT for https "
		    "URLs" : "a proxy request needs an absolute http:// URL";
		return 400;
	}
	t += 7, n -= 7;
	for (i = 0; i < n && t[i] != '/' && t[i] != '?' && t[i] != '#'; i++)
		;
	if (memchr(t, '@', i)) {
		r->why = "user information in URLs is refused";
		return 400;
	}
	if (split_authority(t, i, r) == -1) {
		r->why = "bad host or port in URL";
		return 400;
	}
	if (r->port == 0)
		r->port = 80;
	r->path = t + i;
	r->path_len = n - i;
	for (i = 0; i < r->path_len && r->path[i] != '#'; i++)
		;
	r->path_len = i;
	return 0;
}

/* METHOD SP TARGET SP HTTP/1.x */
static int
parse_request_line(const char *s, size_t n, struct req *r)
{
	const char *sp1, *sp2;

	sp1 = memchr(s, ' ', n);
	if (sp1 == NULL || sp1 == s)
		return 400;
	sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - s));
	if (sp2 == NULL || sp2 == sp1 + 1)
		return 400;
	r->method = s;
	r->method_len = (size_t)(sp1 - s);
	for (size_t i = 0; i < r->method_len; i++)
		if (!is_tchar((unsigned char)s[i]))
			return 400;
	if ((size_t)(s + n - (sp2 + 1)) != 8 ||
	    memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || !is_digit(sp2[8]))
		return 400;
	r->minor = sp2[8] - '0';
	r->tunnel = r->method_len == 7 && memcmp(s, "CONNECT", 7) == 0;
	return parse_target(sp1 + 1, (size_t)(sp2 - sp1 - 1), r);
}

static int
parse_length(const char *v, size_t n, struct req *r)
{
	int64_t x = 0;
	size_t i;

	if (n == 0 || n > 18)
		return -1;
	for (i = 0; i < n; i++) {
		if (!is_digit((unsigned char)v[i]))
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	/* Two different lengths: the origin might pick the other one. */
	if (r->body_len != -1 && r->body_len != x)
		return -1;
	r->body_len = x;
	return 0;
}

/* "Name: value", OWS trimmed; -1 when malformed. */
static int
split_field(const char *s, size_t n, size_t *nl, const char **v, size_t *vl)
{
	const char *colon = memchr(s, ':', n);
	size_t i;

	if (colon == NULL || colon == s)
		return -1;
	*nl = (size_t)(colon - s);
	for (i = 0; i < *nl; i++)
		if (!is_tchar((unsigned char)s[i]))
			return -1;
	*v = colon + 1;
	*vl = n - *nl - 1;
	while (*vl > 0 && (**v == ' ' || **v == '\t'))
		(*v)++, (*vl)--;
	while (*vl > 0 && ((*v)[*vl - 1] == ' ' || (*v)[*vl - 1] == '\t'))
		(*vl)--;
	return 0;
}

/*
 * Parses a complete head of len bytes (proxy_head_end()'s answer): 0, or
 * the HTTP status to refuse it with and r->why.
 */
static int
proxy_parse_request(const char *b, size_t len, struct req *r)
{
	size_t pos = 0, n, nl, vl;
	const char *s, *v;
	int st;

	memset(r, 0, sizeof *r);
	r->body_len = -1;
	r->why = "malformed request";
	if (next_line(b, len, &pos, &s, &n) == -1)
		return 400;
	if ((st = parse_request_line(s, n, r)) != 0)
		return st;
	while (next_line(b, len, &pos, &s, &n) == 0 && n > 0) {
		if (s[0] == ' ' || s[0] == '\t') {
			r->why = "folded header lines are refused";
			return 400;
		}
		if (split_field(s, n, &nl, &v, &vl) == -1)
			return 400;
		if (ci_equal(s, nl, "content-length") &&
		    parse_length(v, vl, r) == -1) {
			r->why = "bad Content-Length";
			return 400;
		}
		if (ci_equal(s, nl, "transfer-encoding"))
			r->chunked = 1;
	}
	if (r->body_len == -1)
		r->body_len = 0;
	if (!r->tunnel && r->chunked) {
		r->why = "request bodies need a Content-Length here";
		return 411;
	}
	r->why = NULL;
	return 0;
}

/* Hop-by-hop and proxy headers, and Host, which the URL decides. */
static int
dropped(const char *name, size_t n)
{
	static const char *const drop[] = { "host", "connection",
	    "keep-alive", "te", "trailer", "transfer-encoding", "upgrade" };
	size_t i;

	if (ci_prefix(name, n, "proxy-"))
		return 1;
	for (i = 0; i < sizeof drop / sizeof drop[0]; i++)
		if (ci_equal(name, n, drop[i]))
			return 1;
	return 0;
}

static int
put(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
	if (n > cap - *at)
		return -1;
	memcpy(out + *at, s, n);
	*at += n;
	return 0;
}

/*
 * The plain-HTTP head as the origin gets it: origin-form request line,
 * Host from the URL, the client's headers less the dropped ones, and
 * "Connection: close" (one request per connection keeps the origin from
 * reading a second, unchecked one). 0 when it does not fit.
 */
static size_t
proxy_rewrite(const char *b, size_t len, const struct req *r,
    const char *host, int port, char *out, size_t cap)
{
	size_t pos = 0, at = 0, n, nl, vl;
	const char *s, *v;
	char line[400];
	int k;

	if (next_line(b, len, &pos, &s, &n) == -1 ||
	    put(out, cap, &at, r->method, r->method_len) == -1 ||
	    put(out, cap, &at, " ", 1) == -1 ||
	    (r->path_len == 0 || r->path[0] != '/' ?
	    put(out, cap, &at, "/", 1) : 0) == -1 ||
	    put(out, cap, &at, r->path, r->path_len) == -1)
		return 0;
	k = port == 80 ?
	    snprintf(line, sizeof line, " HTTP/1.%d\r\nHost: %s\r\n",
	    r->minor, host) :
	    snprintf(line, sizeof line, " HTTP/1.%d\r\nHost: %s:%d\r\n",
	    r->minor, host, port);
	if (k < 0 || (size_t)k >= sizeof line ||
	    put(out, cap, &at, line, (size_t)k) == -1)
		return 0;
	while (next_line(b, len, &pos, &s, &n) == 0 && n > 0) {
		if (split_field(s, n, &nl, &v, &vl) == -1 || dropped(s, nl))
			continue;
		if (put(out, cap, &at, s, n) == -1 ||
		    put(out, cap, &at, "\r\n", 2) == -1)
			return 0;
	}
	if (put(out, cap, &at, "Connection: close\r\n\r\n", 21) == -1)
		return 0;
	return at;
}

/* ---- rings ------------------------------------------------------------ */

static int
ring_space(struct ring *r, struct iovec *iov)
{
	size_t end = (r->off + r->len) % RING_SIZE, room = RING_SIZE - r->len;

	if (room == 0)
		return 0;
	iov[0].iov_base = r->b + end;
	if (end + room <= RING_SIZE) {
		iov[0].iov_len = room;
		return 1;
	}
	iov[0].iov_len = RING_SIZE - end;
	iov[1].iov_base = r->b;
	iov[1].iov_len = room - iov[0].iov_len;
	return 2;
}

static int
ring_fill(struct ring *r, int fd, size_t *got)
{
	struct iovec iov[2];
	int n = ring_space(r, iov);
	ssize_t k;

	*got = 0;
	if (n == 0)
		return IO_AGAIN;
	k = readv(fd, iov, n);
	if (k > 0) {
		r->len += (size_t)k;
		*got = (size_t)k;
		return IO_DONE;
	}
	if (k == 0)
		return IO_EOF;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ?
	    IO_AGAIN : IO_ERROR;
}

static int
ring_flush(struct ring *r, int fd)
{
	struct iovec iov[2];
	struct msghdr m;
	ssize_t k;

	memset(&m, 0, sizeof m);
	m.msg_iov = iov;
	iov[0].iov_base = r->b + r->off;
	if (r->off + r->len <= RING_SIZE) {
		iov[0].iov_len = r->len;
		m.msg_iovlen = 1;
	} else {
		iov[0].iov_len = RING_SIZE - r->off;
		iov[1].iov_base = r->b;
		iov[1].iov_len = r->len - iov[0].iov_len;
		m.msg_iovlen = 2;
	}
	k = sendmsg(fd, &m, MSG_NOSIGNAL);
	if (k < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR ? IO_AGAIN : IO_ERROR;
	r->len -= (size_t)k;
	/* Empty: start over at 0, so reads stay one piece. */
	r->off = r->len == 0 ? 0 : (r->off + (size_t)k) % RING_SIZE;
	return IO_DONE;
}

static void
ring_put(struct ring *r, const char *s, size_t n)
{
	struct iovec iov[2];
	int k = ring_space(r, iov);
	size_t a;

	if (k == 0)
		return;
	a = n < iov[0].iov_len ? n : iov[0].iov_len;
	memcpy(iov[0].iov_base, s, a);
	if (k == 2 && n > a)
		memcpy(iov[1].iov_base, s + a, n - a < iov[1].iov_len ?
		    n - a : iov[1].iov_len);
	r->len += n < RING_SIZE - r->len ? n : RING_SIZE - r->len;
}

/* ---- connections ------------------------------------------------------ */

/* A refused host, once, with its reason; 1 when it was new. */
static int
record_blocked(struct proxy *p, const char *host, int port,
    const char *reason)
{
	char name[300];
	size_t i;

	if (port > 0)
		snprintf(name, sizeof name, "%.255s:%d", host, port);
	else
		snprintf(name, sizeof name, "%.255s", host);
	/* One list item each, whatever the client wrote. */
	for (i = 0; name[i] != '\0'; i++)
		if ((unsigned char)name[i] <= 0x20 ||
		    (unsigned char)name[i] >= 0x7f || name[i] == ',')
			name[i] = '?';
	for (i = 0; i < p->blocked.n; i++)
		if (strcmp(p->blocked.v[i], name) == 0)
			return 0;
	if (p->blocked.n >= MAX_BLOCKED)
		return 0;
	strv_push(&p->blocked, name);
	strv_pushf(&p->blocked_why, "%s %s", name, reason);
	return 1;
}

static const char *
status_text(int st)
{
	switch (st) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 408: return "Request Timeout";
	case 411: return "Length Required";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Error";
	}
}

static void
lookup_drop(struct conn *c)
{
	if (c->lk == NULL)
		return;
	if (c->lk_out)
		c->lk->c = NULL;	/* freed when its answer arrives */
	else
		free(c->lk);
	c->lk = NULL;
	c->lk_out = 0;
}

static void
conn_close(struct conn *c)
{
	close_fd(&c->cfd);
	close_fd(&c->sfd);
	close_fd(&c->pup.fd[0]);
	close_fd(&c->pup.fd[1]);
	close_fd(&c->pdown.fd[0]);
	close_fd(&c->pdown.fd[1]);
	lookup_drop(c);
	c->dead = 1;
}

static void
conn_free(struct conn *c)
{
	free(c->head);
	free(c->up.b);
	free(c->down.b);
	free(c->reply);
	free(c);
}

static void
sweep(struct proxy *p)
{
	size_t i = 0;

	while (i < p->nconns) {
		if (p->conns[i]->dead) {
			p->npipes -= (p->conns[i]->pup.cap > 0) +
			    (p->conns[i]->pdown.cap > 0);
			conn_free(p->conns[i]);
			p->conns[i] = p->conns[--p->nconns];
		} else
			i++;
	}
}

/*
 * Ends the request with an error reply; after it, the proxy reads and
 * discards what the client still sends for a moment, so that closing with
 * unread data does not reset the connection before the reply is read.
 */
static void	conn_fail(struct conn *, int64_t, int, const char *, ...)
		    __attribute__((format(printf, 4, 5)));

static void
conn_fail(struct conn *c, int64_t now, int st, const char *fmt, ...)
{
	char body[600];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(body, sizeof body - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof body - 2)
		n = (int)sizeof body - 2;
	body[n++] = '\n';
	body[n] = '\0';
	close_fd(&c->sfd);
	lookup_drop(c);
	if (c->raw) {
		/* No HTTP to answer in: a reset, at once. */
		struct linger lg = { 1, 0 };

		(void)setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		conn_close(c);
		return;
	}
	free(c->reply);
	c->reply = xasprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain; "
	    "charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n"
	    "\r\nsbx proxy: %s", st, status_text(st), n + 11, body);
	c->rlen = strlen(c->reply);
	c->roff = 0;
	c->st = C_REPLY;
	c->deadline = now + REPLY_TIMEOUT;
}

/*
 * A host the user named with --allow-host, refused all the same: said on
 * stderr at once, with the fix, since HTTPS clients never show the 403's
 * body and some retry until the timeout.
 */
static void
warn_allowed(const char *host, int port, const char *reason,
    const char *why)
{
	if (strcmp(reason, "private_address") == 0)
		fprintf(stderr, "sbx: warning: --allow-host %.255s: refused: "
		    "it %s\n", host, why);
	else if (strcmp(reason, "unresolved") == 0)
		fprintf(stderr, "sbx: warning: --allow-host %.255s: not "
		    "reached: the name does not resolve here (%s)\n", host,
		    why);
	else
		fprintf(stderr, "sbx: warning: --allow-host %.255s: port %d "
		    "refused (--allow-host %.255s:%d allows it)\n", host,
		    port, host, port);
}

static void
refuse(struct proxy *p, struct conn *c, int64_t now, int st, const char *host,
    int port, const char *why, const char *reason, int named)
{
	int withport = strcmp(reason, "port") == 0;

	if (st == 403 && record_blocked(p, host, withport ? port : 0,
	    reason) && named)
		warn_allowed(host, port, reason, why);
	conn_fail(c, now, st, "%.255s: %s", host, why);
}

static struct conn *
conn_add(struct proxy *p, int fd, int64_t now)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
	    "Content-Length: 0\r\nConnection: close\r\n\r\n";
	struct conn *c, *old = NULL;
	size_t i;

	if (p->nconns == MAX_CONNS) {
		/* Make room by dropping the oldest client still silent. */
		for (i = 0; i < p->nconns; i++)
			if (p->conns[i]->st == C_HEAD && (old == NULL ||
			    p->conns[i]->born < old->born))
				old = p->conns[i];
		if (old == NULL) {
			(void)send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL);
			close(fd);
			return NULL;
		}
		conn_close(old);
		sweep(p);
	}
	nodelay(fd);
	c = xcalloc(1, sizeof *c);
	c->cfd = fd;
	c->sfd = -1;
	c->pup.fd[0] = c->pup.fd[1] = c->pdown.fd[0] = c->pdown.fd[1] = -1;
	c->st = C_HEAD;
	c->born = now;
	c->deadline = now + HEAD_TIMEOUT;
	c->head = xmalloc(HEAD_MAX);
	p->conns[p->nconns++] = c;
	return c;
}

/* ---- lookups ---------------------------------------------------------- */

static void *
lookup_run(void *arg)
{
	struct lookup *lk = arg;
	struct addrinfo hints, *res, *ai;
	int wfd = lk->wfd;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	lk->gai = getaddrinfo(lk->host, NULL, &hints, &res);
	if (lk->gai == 0) {
		for (ai = res; ai != NULL; ai = ai->ai_next) {
			if (ai->ai_addrlen > sizeof lk->addr[0])
				continue;
			/* Every address is judged, not just those tried. */
			if (lk->bad[0] == '\0' &&
			    !proxy_addr_public(ai->ai_addr))
				(void)getnameinfo(ai->ai_addr, ai->ai_addrlen,
				    lk->bad, sizeof lk->bad, NULL, 0,
				    NI_NUMERICHOST);
			if (lk->naddr < MAX_ADDRS) {
				memcpy(&lk->addr[lk->naddr], ai->ai_addr,
				    ai->ai_addrlen);
				lk->alen[lk->naddr++] = ai->ai_addrlen;
			}
		}
		freeaddrinfo(res);
	}
	/* After a send that worked, lk is the main thread's again. */
	if (send(wfd, &lk, sizeof lk, MSG_NOSIGNAL) != (ssize_t)sizeof lk)
		free(lk);
	close(wfd);
	return NULL;
}

static int
lookup_start(struct proxy *p, struct conn *c)
{
	struct lookup *lk;
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int err;

	lk = xcalloc(1, sizeof *lk);
	lk->c = c;
	snprintf(lk->host, sizeof lk->host, "%s", c->host);
	if ((lk->wfd = fcntl(p->wake[1], F_DUPFD_CLOEXEC, 0)) == -1) {
		free(lk);
		return -1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* Signals stay with the main thread and its self-pipe. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, &attr, lookup_run, lk);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err != 0) {
		close(lk->wfd);
		free(lk);
		return -1;
	}
	c->lk = lk;
	c->lk_out = 1;
	p->nlookups++;
	return 0;
}

static void
connect_next(struct conn *c, int64_t now)
{
	struct lookup *lk = c->lk;
	int err = ECONNREFUSED, fd;

	while (c->next_addr < lk->naddr) {
		size_t i = c->next_addr++;
		struct sockaddr *sa = (struct sockaddr *)&lk->addr[i];

		if (sa->sa_family == AF_INET)
			((struct sockaddr_in *)sa)->sin_port =
			    htons((uint16_t)c->port);
		else
			((struct sockaddr_in6 *)sa)->sin6_port =
			    htons((uint16_t)c->port);
		if ((fd = sock_new(sa->sa_family, SOCK_STREAM)) == -1) {
			err = errno;
			continue;
		}
		if (connect(fd, sa, lk->alen[i]) == 0 || errno == EINPROGRESS) {
			c->sfd = fd;
			c->st = C_CONNECT;
			return;
		}
		err = errno;
		close(fd);
	}
	conn_fail(c, now, 502, "%s:%d: cannot connect: %s", c->host, c->port,
	    strerror(err));
}

static void
lookup_done(struct proxy *p, struct lookup *lk, int64_t now)
{
	struct conn *c = lk->c;

	p->nlookups--;
	if (c == NULL) {
		free(lk);
		return;
	}
	c->lk_out = 0;
	if (lk->gai != 0) {
		/* Allowed, yet unreachable: said as a refusal is, once. */
		if (record_blocked(p, c->host, 0, "unresolved"))
			warn_allowed(c->host, c->port, "unresolved",
			    gai_strerror(lk->gai));
		conn_fail(c, now, 502, "%s: cannot resolve: %s", c->host,
		    gai_strerror(lk->gai));
		return;
	}
	if (lk->bad[0] != '\0' && !p->allow_private) {
		char why[200];

		snprintf(why, sizeof why, "resolves to %s, a private or "
		    "reserved address (--allow-private allows it)", lk->bad);
		refuse(p, c, now, 403, c->host, c->port, why,
		    "private_address", 1);
		return;
	}
	if (lk->naddr == 0) {
		conn_fail(c, now, 502, "%s: no address", c->host);
		return;
	}
	c->deadline = now + CONNECT_TIMEOUT;
	connect_next(c, now);
}

/*
 * To the host's loopback port the user allowed (localhost:PORT): no name
 * to look up, no address to judge. 127.0.0.1 first, then ::1, for a
 * server that listens on one of them only.
 */
static void
local_connect(struct conn *c, int64_t now)
{
	struct lookup *lk = xcalloc(1, sizeof *lk);
	struct sockaddr_in *s4 = (struct sockaddr_in *)&lk->addr[0];
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&lk->addr[1];

	lk->c = c;
	lk->wfd = -1;
	s4->sin_family = AF_INET;
	s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lk->alen[0] = sizeof *s4;
	s6->sin6_family = AF_INET6;
	s6->sin6_addr = in6addr_loopback;
	lk->alen[1] = sizeof *s6;
	lk->naddr = 2;
	c->lk = lk;
	c->local = 1;
	c->deadline = now + CONNECT_TIMEOUT;
	connect_next(c, now);
}

/* An allowed request's next step: its lookup, or the host's loopback. */
static void
to_origin(struct proxy *p, struct conn *c, int64_t now)
{
	if (strcmp(c->host, "localhost") == 0 &&
	    proxy_local_port(p->hosts, p->nhosts, c->port)) {
		local_connect(c, now);
		return;
	}
	c->st = C_LOOKUP;
	c->deadline = now + LOOKUP_TIMEOUT;
}

static void
wake_read(struct proxy *p, int64_t now)
{
	struct lookup *lk;

	while (recv(p->wake[0], &lk, sizeof lk, MSG_DONTWAIT) ==
	    (ssize_t)sizeof lk)
		lookup_done(p, lk, now);
}

/* ---- the request ------------------------------------------------------ */

static void
request_ready(struct proxy *p, struct conn *c, size_t hend, int64_t now)
{
	struct req r;
	const char *reason;
	char why[300];
	size_t extra = c->hlen - hend, n;
	int st, named;

	if ((st = proxy_parse_request(c->head, hend, &r)) != 0) {
		conn_fail(c, now, st, "%s", r.why);
		return;
	}
	if ((st = proxy_decide(p, r.host, r.port, c->host, why, sizeof why,
	    &reason, &named)) != 0) {
		refuse(p, c, now, st, c->host[0] ? c->host : r.host, r.port,
		    why, reason, named);
		return;
	}
	c->port = r.port;
	c->tunnel = r.tunnel;
	c->up.b = xmalloc(RING_SIZE);
	c->up_left = -1;
	if (!r.tunnel) {
		n = proxy_rewrite(c->head, hend, &r, c->host, r.port,
		    c->up.b, RING_SIZE);
		if (n == 0) {
			conn_fail(c, now, 431, "request head too large");
			return;
		}
		c->up.len = n;
		/* Only the declared body follows; the rest is dropped. */
		if ((int64_t)extra > r.body_len)
			extra = (size_t)r.body_len;
		c->up_left = r.body_len - (int64_t)extra;
	}
	ring_put(&c->up, c->head + hend, extra);
	free(c->head);
	c->head = NULL;
	to_origin(p, c, now);
}

static void
head_read(struct proxy *p, struct conn *c, int64_t now)
{
	ssize_t k;
	size_t end, from;

	for (;;) {
		if (c->hlen == HEAD_MAX) {
			conn_fail(c, now, 431, "request head over %d bytes",
			    HEAD_MAX);
			return;
		}
		k = read(c->cfd, c->head + c->hlen, HEAD_MAX - c->hlen);
		if (k == 0 || (k < 0 && errno != EAGAIN &&
		    errno != EWOULDBLOCK && errno != EINTR)) {
			conn_close(c);	/* the client went away */
			return;
		}
		if (k < 0)
			return;
		from = c->hlen;
		c->hlen += (size_t)k;
		if (!is_tchar((unsigned char)c->head[0])) {
			conn_fail(c, now, 400, "not an HTTP request");
			return;
		}
		if ((end = proxy_head_end(c->head, c->hlen, from)) != 0) {
			request_ready(p, c, end, now);
			return;
		}
	}
}

/* ---- relay ------------------------------------------------------------ */

#ifdef __linux__
/*
 * A direction that moves by splice(2) through a pipe never copies through
 * sbx, which on loopback is what keeps a relay near direct throughput.
 * The pipe, at its default 64 KiB, is the bounded buffer: a bigger one
 * gained little here and would eat into the user's pipe-pages quota. At
 * most MAX_PIPES exist, so that MAX_CONNS connections stay within the
 * usual 1024 descriptors; the others use their rings.
 */
static int
pipe_open(struct proxy *p, struct pipebuf *pb)
{
	int sz;

	if (p->npipes >= MAX_PIPES || pipe2(pb->fd, O_CLOEXEC |
	    O_NONBLOCK) == -1) {
		pb->fd[0] = pb->fd[1] = -1;
		return -1;
	}
	if ((sz = fcntl(pb->fd[1], F_GETPIPE_SZ)) <= 0) {
		close_fd(&pb->fd[0]);
		close_fd(&pb->fd[1]);
		return -1;
	}
	pb->cap = (size_t)sz;
	p->npipes++;
	return 0;
}

static int
splice_move(int from, int to, size_t n)
{
	return (int)splice(from, NULL, to, NULL, n, SPLICE_F_MOVE |
	    SPLICE_F_NONBLOCK);
}
#else
static int
pipe_open(struct proxy *p, struct pipebuf *pb)
{
	(void)p;
	pb->fd[0] = pb->fd[1] = -1;
	return -1;
}

static int
splice_move(int from, int to, size_t n)
{
	(void)from, (void)to, (void)n;
	errno = ENOSYS;
	return -1;
}
#endif

static void
relay_start(struct proxy *p, struct conn *c, int64_t now)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	ssize_t k = 0;

	nodelay(c->sfd);
	free(c->lk);
	c->lk = NULL;
	c->st = C_RELAY;
	c->deadline = now + (c->local ? LOCAL_IDLE : IDLE_TIMEOUT);
	/* The client's socket is new: the reply goes out whole at once. */
	if (c->tunnel && !c->raw && (k = send(c->cfd, ok, sizeof ok - 1,
	    MSG_NOSIGNAL)) < 0)
		k = 0;
	/* Uploads splice in tunnels only: plain HTTP counts its body. */
	if (c->tunnel && c->up.len == 0 && pipe_open(p, &c->pup) == 0) {
		free(c->up.b);
		c->up.b = NULL;
	}
	if ((size_t)k == (c->tunnel && !c->raw ? sizeof ok - 1 : 0) &&
	    pipe_open(p, &c->pdown) == 0)
		return;
	c->down.b = xmalloc(RING_SIZE);
	if (c->tunnel && !c->raw)
		ring_put(&c->down, ok + k, sizeof ok - 1 - (size_t)k);
}

static void
connect_check(struct proxy *p, struct conn *c, int64_t now)
{
	int err = 0;
	socklen_t len = sizeof err;

	if (!(c->srev & (POLLOUT | POLLERR | POLLHUP)))
		return;
	if (getsockopt(c->sfd, SOL_SOCKET, SO_ERROR, &err, &len) == -1)
		err = errno;
	if (err == 0) {
		relay_start(p, c, now);
		return;
	}
	close_fd(&c->sfd);
	if (c->next_addr < c->lk->naddr) {
		connect_next(c, now);
		return;
	}
	conn_fail(c, now, 502, "%s:%d: cannot connect: %s", c->host, c->port,
	    strerror(err));
}

/* Half-close travels on: once one side's EOF is relayed, the peer sees it. */
static void
half_close(struct conn *c, int up, int dst, size_t pending)
{
	if ((up ? c->c_eof : c->s_eof) && pending == 0 &&
	    !(up ? c->s_shut : c->c_shut)) {
		(void)shutdown(dst, SHUT_WR);
		if (up)
			c->s_shut = 1;
		else
			c->c_shut = 1;
	}
}

/* pump() for a spliced direction: source, pipe, destination. */
static int
pump_spliced(struct conn *c, int up, int *rd, int *wr)
{
	struct pipebuf *pb = up ? &c->pup : &c->pdown;
	int src = up ? c->cfd : c->sfd, dst = up ? c->sfd : c->cfd;
	int moved = 0, k;

	if (*rd && !(up ? c->c_eof : c->s_eof) && !pb->full &&
	    pb->len < pb->cap) {
		k = splice_move(src, pb->fd[1], pb->cap - pb->len);
		if (k > 0) {
			pb->len += (size_t)k;
			moved = 1;
			*rd = 1;	/* no longer known to be readable */
		} else if (k == 0) {
			if (up)
				c->c_eof = 1;
			else
				c->s_eof = 1;
			moved = 1;
		} else if (errno != EAGAIN && errno != EINTR)
			return -1;
		else if (*rd == 2 && pb->len > 0)
			/*
			 * Poll said readable and nothing was read since, yet
			 * splice refused: the pipe's page slots are full
			 * before its byte count is. Wait for a flush.
			 */
			pb->full = 1, *rd = 0;
		else
			*rd = 0;
	}
	if (*wr && pb->len > 0) {
		k = splice_move(pb->fd[0], dst, pb->len);
		if (k > 0) {
			pb->len -= (size_t)k;
			pb->full = 0;
			moved = 1;
		} else if (k < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		else
			*wr = 0;
	}
	half_close(c, up, dst, pb->len);
	return moved;
}

/* Moves bytes one way; 1 when something moved, 0 when stuck, -1: error. */
static int
pump(struct conn *c, int up, int *rd, int *wr)
{
	struct ring *r = up ? &c->up : &c->down;
	int src = up ? c->cfd : c->sfd, dst = up ? c->sfd : c->cfd;
	int moved = 0, st;
	size_t got;

	if (*rd && !(up ? c->c_eof : c->s_eof) && r->len < RING_SIZE) {
		st = ring_fill(r, src, &got);
		if (st == IO_ERROR)
			return -1;
		if (st == IO_AGAIN)
			*rd = 0;
		else if (st == IO_EOF) {
			if (up)
				c->c_eof = 1;
			else
				c->s_eof = 1;
			moved = 1;
		} else {
			moved = 1;
			/* Plain HTTP: past the declared body, discard. */
			if (up && c->up_left >= 0) {
				size_t keep = (int64_t)got > c->up_left ?
				    (size_t)c->up_left : got;

				r->len -= got - keep;
				c->up_left -= (int64_t)keep;
			}
		}
	}
	if (*wr && r->len > 0) {
		st = ring_flush(r, dst);
		if (st == IO_ERROR)
			return -1;
		if (st == IO_AGAIN)
			*wr = 0;
		else
			moved = 1;
	}
	half_close(c, up, dst, r->len);
	return moved;
}

/* 2: poll said readable; 1: not asked (the buffer was full), so try. */
static int
ready_in(short ev, short rev)
{
	if (rev & (POLLIN | POLLHUP | POLLERR))
		return 2;
	return !(ev & POLLIN);
}

static void
relay(struct conn *c, int64_t now)
{
	int cr = ready_in(c->cev, c->crev), sr = ready_in(c->sev, c->srev);
	int cw = (c->crev & (POLLOUT | POLLERR | POLLHUP)) != 0;
	int sw = (c->srev & (POLLOUT | POLLERR | POLLHUP)) != 0;
	int a, b, any = 0, turns = 0;

	/* Bounded: one busy tunnel must not starve the loop. */
	do {
		a = c->pup.fd[0] != -1 ? pump_spliced(c, 1, &cr, &sw) :
		    pump(c, 1, &cr, &sw);
		b = c->pdown.fd[0] != -1 ? pump_spliced(c, 0, &sr, &cw) :
		    pump(c, 0, &sr, &cw);
		if (a < 0 || b < 0) {
			conn_close(c);
			return;
		}
		any |= a | b;
	} while ((a || b) && ++turns < 16);
	if (any)
		c->deadline = now + (c->local ? LOCAL_IDLE : IDLE_TIMEOUT);
	if (c->c_eof && c->s_eof && c->c_shut && c->s_shut)
		conn_close(c);
	else if (!c->tunnel && c->s_eof && c->c_shut) {
		/* The response is out; let the client finish, briefly. */
		c->st = C_LINGER;
		c->deadline = now + LINGER_TIMEOUT;
	}
}

/* ---- error replies ---------------------------------------------------- */

static void
reply_write(struct conn *c, int64_t now)
{
	ssize_t k;

	while (c->roff < c->rlen) {
		k = send(c->cfd, c->reply + c->roff, c->rlen - c->roff,
		    MSG_NOSIGNAL);
		if (k < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR)
				return;
			conn_close(c);
			return;
		}
		c->roff += (size_t)k;
	}
	(void)shutdown(c->cfd, SHUT_WR);
	c->st = C_LINGER;
	c->deadline = now + LINGER_TIMEOUT;
}

static void
linger(struct conn *c)
{
	char sink[16384];
	ssize_t k;
	int i;

	for (i = 0; i < 64; i++) {
		k = read(c->cfd, sink, sizeof sink);
		if (k > 0)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR))
			return;
		break;
	}
	if (i < 64)
		conn_close(c);
}

/* ---- one connection's turn -------------------------------------------- */

static void
conn_expire(struct conn *c, int64_t now)
{
	switch (c->st) {
	case C_HEAD:
		if (c->hlen == 0)
			conn_close(c);
		else
			conn_fail(c, now, 408, "request head too slow");
		break;
	case C_LOOKUP:
		conn_fail(c, now, 504, "%s: name lookup timed out", c->host);
		break;
	case C_CONNECT:
		conn_fail(c, now, 504, "%s:%d: connect timed out", c->host,
		    c->port);
		break;
	default:
		conn_close(c);
		break;
	}
}

static void
conn_step(struct proxy *p, struct conn *c, int64_t now)
{
	if (c->crev & POLLNVAL || c->srev & POLLNVAL) {
		conn_close(c);
		return;
	}
	switch (c->st) {
	case C_HEAD:
		if (c->crev)
			head_read(p, c, now);
		break;
	case C_LOOKUP:
		break;
	case C_CONNECT:
		connect_check(p, c, now);
		break;
	case C_RELAY:
		relay(c, now);
		break;
	case C_REPLY:
		reply_write(c, now);
		break;
	case C_LINGER:
		if (c->crev)
			linger(c);
		break;
	}
	/* A state entered just now may have work at once (a reply). */
	if (!c->dead && c->st == C_REPLY && c->roff == 0)
		reply_write(c, now);
	if (!c->dead && now >= c->deadline)
		conn_expire(c, now);
}

static void
lookups_start(struct proxy *p, int64_t now)
{
	size_t i;

	for (i = 0; i < p->nconns && p->nlookups < MAX_LOOKUPS; i++) {
		struct conn *c = p->conns[i];

		if (c->dead || c->st != C_LOOKUP || c->lk != NULL)
			continue;
		if (lookup_start(p, c) == -1) {
			conn_fail(c, now, 503, "%s: cannot start a lookup",
			    c->host);
			reply_write(c, now);
		}
	}
}

/* ---- sources of clients ----------------------------------------------- */

static void
accept_burst(struct proxy *p, int64_t now)
{
	int i, fd;

	for (i = 0; i < BURST; i++) {
		if ((fd = sock_accept(p->lfd)) == -1) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				p->pause_until = now + PAUSE_MS;
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		(void)conn_add(p, fd, now);
	}
}

/* The bridge's message: a few bytes, and a descriptor in ctl. */
static void
bridge_msg(struct msghdr *m, struct iovec *iov, char *buf, size_t len,
    void *ctl, size_t ctllen)
{
	memset(m, 0, sizeof *m);
	iov->iov_base = buf;
	iov->iov_len = len;
	m->msg_iov = iov;
	m->msg_iovlen = 1;
	m->msg_control = ctl;
	m->msg_controllen = ctllen;
}

#ifdef __linux__
/* What netns.c refused (a name, an address), for blocked_hosts. */
void
proxy_refused(struct proxy *p, const char *host, int port, const char *reason)
{
	(void)record_blocked(p, host, port, reason);
}

/*
 * The shim's sockets in the sandbox's network namespace ("n"): set up
 * here, with sbx's privilege over it (netns.c), and the shim answered:
 * 0, or an errno that ends the launch (a second "n").
 */
static void
netns_take(struct proxy *p, int *fds, size_t n)
{
	int err, fatal = 1;
	size_t i;

	if (p->netns == NULL) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		err = EINVAL;
	} else if ((err = netns_setup(p->netns, fds, n, &fatal)) != 0 &&
	    !fatal) {
		/* The proxy variables still work: said, not fatal. */
		fprintf(stderr, "sbx: warning: --allow-host: programs that "
		    "ignore the proxy variables get no names: the capture "
		    "could not be set up: %s\n", strerror(err));
		err = 0;
	}
	(void)send(p->bfd, &err, sizeof err, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/*
 * A connection netns.c captured inside the sandbox, for HOST:PORT (its
 * synthetic address mapped back): judged and relayed as a CONNECT to it
 * would be, with no request read and no reply written.
 */
void
proxy_captured(struct proxy *p, int fd, const char *host, int port,
    int64_t now)
{
	const char *reason;
	char why[300];
	struct conn *c;
	int st, named;

	if ((c = conn_add(p, fd, now)) == NULL)
		return;
	c->raw = 1;
	c->tunnel = 1;
	if ((st = proxy_decide(p, host, port, c->host, why, sizeof why,
	    &reason, &named)) != 0) {
		refuse(p, c, now, st, c->host[0] ? c->host : host, port, why,
		    reason, named);
		return;
	}
	c->port = port;
	c->up.b = xmalloc(RING_SIZE);
	c->up_left = -1;
	free(c->head);
	c->head = NULL;
	to_origin(p, c, now);
}

/*
 * A connection to the loopback relay inside the sandbox (netns.c), for
 * the host's loopback port PORT: relayed there, nowhere else.
 */
void
proxy_local(struct proxy *p, int fd, int port, int64_t now)
{
	struct conn *c;

	if ((c = conn_add(p, fd, now)) == NULL)
		return;
	c->raw = 1;
	c->tunnel = 1;
	snprintf(c->host, sizeof c->host, "localhost");
	c->port = port;
	c->up.b = xmalloc(RING_SIZE);
	c->up_left = -1;
	free(c->head);
	c->head = NULL;
	local_connect(c, now);
}

/*
 * One message of the bridge: "c" and a client of the proxy's port, or
 * "n" and the shim's sockets for the capture (netns.c).
 */
static void
take_fds(struct proxy *p, struct msghdr *m, const char *msg, size_t len,
    int64_t now)
{
	struct cmsghdr *cm;
	struct stat sb;
	int fds[NETNS_FDS];
	size_t i, n, nn = 0;
	int fd, setup = len == 1 && msg[0] == 'n';

	for (cm = CMSG_FIRSTHDR(m); cm != NULL; cm = CMSG_NXTHDR(m, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof fd, sizeof fd);
			/* The sandbox sends these: only sockets are served. */
			if (fstat(fd, &sb) == -1 || !S_ISSOCK(sb.st_mode) ||
			    set_nonblock(fd) == -1 || (setup &&
			    nn == sizeof fds / sizeof fds[0])) {
				close(fd);
				continue;
			}
			if (setup)
				fds[nn++] = fd;
			else
				(void)conn_add(p, fd, now);
		}
	}
	if (setup)
		netns_take(p, fds, nn);
}

static void
bridge_recv(struct proxy *p, int64_t now)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(NETNS_FDS * sizeof(int))];
	} u;
	struct msghdr m;
	struct iovec iov;
	char msg[16];
	ssize_t k;
	int i;

	for (i = 0; i < BURST; i++) {
		bridge_msg(&m, &iov, msg, sizeof msg, u.b, sizeof u.b);
		k = recvmsg(p->bfd, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR))
			return;
		if (k <= 0) {
			close_fd(&p->bfd);	/* the sandbox is gone */
			return;
		}
		take_fds(p, &m, msg, (size_t)k, now);
	}
}
#else
static void
bridge_recv(struct proxy *p, int64_t now)
{
	(void)now;
	close_fd(&p->bfd);
}
#endif

/* ---- the interface ---------------------------------------------------- */

static int
listen_tcp(struct proxy *p, struct sbx_err *e)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;

	if ((p->lfd = sock_new(AF_INET, SOCK_STREAM)) == -1)
		return sbx_errf(e, ERR_PROXY, "proxy: socket: %s",
		    strerror(errno));
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(p->lfd, (struct sockaddr *)&sin, sizeof sin) == -1 ||
	    listen(p->lfd, SOMAXCONN) == -1 ||
	    getsockname(p->lfd, (struct sockaddr *)&sin, &len) == -1)
		return sbx_errf(e, ERR_PROXY, "proxy: 127.0.0.1: %s",
		    strerror(errno));
	p->port = ntohs(sin.sin_port);
	return 0;
}

static int
make_bridge(struct proxy *p, struct sbx_err *e)
{
#ifdef __linux__
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return sbx_errf(e, ERR_PROXY, "proxy: socketpair: %s",
		    strerror(errno));
	p->bfd = sv[0];
	p->bfd_child = sv[1];
	if (set_nonblock(p->bfd) == -1)
		return sbx_errf(e, ERR_PROXY, "proxy: bridge: %s",
		    strerror(errno));
	return 0;
#else
	(void)p;
	return sbx_errf(e, ERR_PROXY, "proxy: the bridge needs Linux");
#endif
}

int
proxy_start(const struct sbx_opts *o, int bridge, struct proxy **pp,
    struct sbx_err *e)
{
	struct proxy *p = xcalloc(1, sizeof *p);
	int rc;

	p->lfd = p->bfd = p->bfd_child = -1;
	p->wake[0] = p->wake[1] = -1;
	p->hosts = o->hosts;
	p->nhosts = o->nhosts;
	p->allow_private = o->allow_private;
	rc = bridge ? make_bridge(p, e) : listen_tcp(p, e);
	if (bridge)
		p->netns = netns_new(o->hosts, o->nhosts);
	if (rc == 0 && socketpair(AF_UNIX, SOCK_DGRAM, 0, p->wake) == -1)
		rc = sbx_errf(e, ERR_PROXY, "proxy: socketpair: %s",
		    strerror(errno));
	if (rc == 0 && (set_cloexec(p->wake[0]) == -1 ||
	    set_cloexec(p->wake[1]) == -1 || set_nonblock(p->wake[0]) == -1))
		rc = sbx_errf(e, ERR_PROXY, "proxy: wake socket: %s",
		    strerror(errno));
	if (rc != 0) {
		close_fd(&p->bfd_child);
		proxy_stop(p);
		return -1;
	}
	*pp = p;
	return 0;
}

int
proxy_bridge_fd(const struct proxy *p)
{
	return p->bfd_child;
}

int
proxy_port(const struct proxy *p)
{
	return p->port;
}

/*
 * The variables common tools read, for a proxy on 127.0.0.1:port: curl,
 * git, pip, Python, Go, Ruby read the *_proxy pair (curl only the
 * lower-case http_proxy); npm and yarn 1 npm_config_*, yarn 2+
 * YARN_HTTP(S)_PROXY (not YARN_NO_PROXY, an unknown setting that makes it
 * fail), pip PIP_PROXY, Node 24+ NODE_USE_ENV_PROXY, the JVM only its
 * system properties.
 */
void
proxy_env(int port, struct strv *env)
{
	static const char *const names[] = { "HTTP_PROXY", "HTTPS_PROXY",
	    "http_proxy", "https_proxy", "npm_config_proxy",
	    "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY",
	    "PIP_PROXY" };
	char url[64], java[200];
	size_t i;

	snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
	snprintf(java, sizeof java, "-Dhttp.proxyHost=127.0.0.1 "
	    "-Dhttp.proxyPort=%d -Dhttps.proxyHost=127.0.0.1 "
	    "-Dhttps.proxyPort=%d", port, port);
	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		env_put(env, names[i], url);
	env_put(env, "NO_PROXY", "localhost,127.0.0.1,::1");
	env_put(env, "no_proxy", "localhost,127.0.0.1,::1");
	env_put(env, "NODE_USE_ENV_PROXY", "1");
	env_add(env, "MAVEN_OPTS", java);
	env_add(env, "GRADLE_OPTS", java);
}

static void
add_slot(struct proxy *p, struct pollfd *fds, size_t max, enum slot_kind k,
    int fd, struct conn *c, short ev)
{
	if (p->nslot >= max || p->nslot >= sizeof p->slot / sizeof p->slot[0])
		return;
	fds[p->nslot].fd = fd;
	fds[p->nslot].events = ev;
	fds[p->nslot].revents = 0;
	p->slot[p->nslot].kind = k;
	p->slot[p->nslot].fd = fd;
	p->slot[p->nslot].c = c;
	p->nslot++;
}

static int
has_room(const struct pipebuf *pb, const struct ring *r)
{
	if (pb->fd[0] != -1)
		return !pb->full && pb->len < pb->cap;
	return r->len < RING_SIZE;
}

/* What each connection waits for; nothing asked, no slot (no POLLHUP spin). */
static void
conn_events(struct conn *c)
{
	c->cev = c->sev = 0;
	switch (c->st) {
	case C_HEAD:
	case C_LINGER:
		c->cev = POLLIN;
		break;
	case C_LOOKUP:
		break;
	case C_CONNECT:
		c->sev = POLLOUT;
		break;
	case C_REPLY:
		c->cev = POLLOUT;
		break;
	case C_RELAY:
		if (!c->c_eof && has_room(&c->pup, &c->up))
			c->cev |= POLLIN;
		if (c->down.len > 0 || c->pdown.len > 0)
			c->cev |= POLLOUT;
		if (!c->s_eof && has_room(&c->pdown, &c->down))
			c->sev |= POLLIN;
		if (c->up.len > 0 || c->pup.len > 0)
			c->sev |= POLLOUT;
		break;
	}
}

size_t
proxy_pollfds(void *ctx, struct pollfd *fds, size_t max)
{
	struct proxy *p = ctx;
	int nfd[NETNS_FDS];
	size_t i, nn;

	p->nslot = 0;
	if (p->lfd != -1 && p->pause_until == 0)
		add_slot(p, fds, max, S_LISTEN, p->lfd, NULL, POLLIN);
	if (p->bfd != -1)
		add_slot(p, fds, max, S_BRIDGE, p->bfd, NULL, POLLIN);
	if (p->nlookups > 0)
		add_slot(p, fds, max, S_WAKE, p->wake[0], NULL, POLLIN);
	nn = netns_fds(p->netns, nfd, sizeof nfd / sizeof nfd[0]);
	for (i = 0; i < nn; i++)
		add_slot(p, fds, max, S_NETNS, nfd[i], NULL, POLLIN);
	for (i = 0; i < p->nconns; i++) {
		struct conn *c = p->conns[i];

		conn_events(c);
		if (c->cev)
			add_slot(p, fds, max, S_CLIENT, c->cfd, c, c->cev);
		if (c->sev)
			add_slot(p, fds, max, S_SERVER, c->sfd, c, c->sev);
	}
	return p->nslot;
}

void
proxy_handle(void *ctx, const struct pollfd *fds, size_t n)
{
	struct proxy *p = ctx;
	int64_t now = now_ms();
	int listen_ready = 0, bridge_ready = 0, wake_ready = 0;
	int nready[NETNS_FDS];
	size_t i, count, nn = 0;

	if (p->pause_until != 0 && p->pause_until <= now)
		p->pause_until = 0;

	for (i = 0; i < p->nconns; i++)
		p->conns[i]->crev = p->conns[i]->srev = 0;
	/* First note everything: accepting may evict a connection. */
	for (i = 0; i < n && i < p->nslot; i++) {
		struct slot *s = &p->slot[i];

		if (fds[i].fd != s->fd || fds[i].revents == 0)
			continue;
		if (s->kind == S_LISTEN)
			listen_ready = 1;
		else if (s->kind == S_BRIDGE)
			bridge_ready = 1;
		else if (s->kind == S_WAKE)
			wake_ready = 1;
		else if (s->kind == S_NETNS) {
			if (nn < sizeof nready / sizeof nready[0])
				nready[nn++] = s->fd;
		}
		else if (s->kind == S_CLIENT)
			s->c->crev = fds[i].revents;
		else
			s->c->srev = fds[i].revents;
	}
	p->nslot = 0;
	if (wake_ready)
		wake_read(p, now);
	count = p->nconns;
	for (i = 0; i < count; i++) {
		struct conn *c = p->conns[i];

		if (!c->dead && (c->crev || c->srev || now >= c->deadline))
			conn_step(p, c, now);
	}
	lookups_start(p, now);
	sweep(p);
	if (listen_ready)
		accept_burst(p, now);
	if (bridge_ready)
		bridge_recv(p, now);
	for (i = 0; i < nn; i++)
		netns_ready(p->netns, p, nready[i], now);
	/* Captured connections arrive ready for their lookup. */
	if (nn > 0)
		lookups_start(p, now);
}

int64_t
proxy_deadline(const void *ctx)
{
	const struct proxy *p = ctx;
	int64_t d = -1;
	size_t i;

	if (p->lfd != -1 && p->pause_until > 0)
		d = p->pause_until;
	for (i = 0; i < p->nconns; i++)
		if (d == -1 || p->conns[i]->deadline < d)
			d = p->conns[i]->deadline;
	return d;
}

/* The refused hosts, and "HOST REASON" for each, added to out and why. */
void
proxy_blocked(const struct proxy *p, struct strv *out, struct strv *why)
{
	size_t i, j;

	for (i = 0; i < p->blocked.n; i++) {
		for (j = 0; j < out->n; j++)
			if (strcmp(out->v[j], p->blocked.v[i]) == 0)
				break;
		if (j == out->n) {
			strv_push(out, p->blocked.v[i]);
			strv_push(why, p->blocked_why.v[i]);
		}
	}
}

void
proxy_stop(struct proxy *p)
{
	struct lookup *lk;
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nconns; i++)
		conn_close(p->conns[i]);
	sweep(p);
	/*
	 * Answers already sent are freed here; a thread still resolving
	 * finds the socket closed and frees its own lookup, and, with its
	 * own copy of the descriptor, never writes to a reused number.
	 */
	if (p->wake[0] != -1)
		while (recv(p->wake[0], &lk, sizeof lk, MSG_DONTWAIT) ==
		    (ssize_t)sizeof lk)
			free(lk);
	netns_free(p->netns);
	close_fd(&p->lfd);
	close_fd(&p->bfd);
	close_fd(&p->wake[0]);
	close_fd(&p->wake[1]);
	strv_free(&p->blocked);
	strv_free(&p->blocked_why);
	free(p);
}

/* ---- the bridge, inside the sandbox ----------------------------------- */

/*
 * Runs inside the sandbox, in its own process: hands each connection
 * accepted on lfd (the shim's listener on 127.0.0.1:BRIDGE_PORT) to the
 * proxy over fd, one byte and the descriptor. Blocking on purpose: this
 * process does nothing else. Returns only when the proxy has gone or the
 * listener fails.
 */
int
proxy_bridge_run(int lfd, int fd)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m;
	struct iovec iov;
	struct cmsghdr *cm;
	char byte = 'c';
	int cfd;

	for (;;) {
		if ((cfd = accept(lfd, NULL, NULL)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return -1;
		}
		memset(&u, 0, sizeof u);
		bridge_msg(&m, &iov, &byte, 1, u.b, sizeof u.b);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &cfd, sizeof cfd);
		while (sendmsg(fd, &m, MSG_NOSIGNAL) == -1)
			if (errno != EINTR) {
				close(cfd);
				return -1;
			}
		close(cfd);
	}
}
