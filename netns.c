/*
 * netns.c: names and connections captured in bwrap's network namespace
 * under --allow-host, for programs that ignore the proxy variables.
 *
 * The shim (--capture N) makes sockets inside the namespace and hands them
 * to sbx's proxy over FD_BRIDGE before the command runs: one UDP and one
 * TCP socket for DNS and a pool of N TCP sockets. sbx, outside, then does
 * what needs privilege over that namespace and what the shim could not do
 * in bwrap's nested user namespace (it holds no capability in the one that
 * owns the network namespace; sbx, that namespace's creator or root, holds
 * them all): it puts NETNS_ADDR/15 on lo as "lo:sbx" (a prefix on a
 * loopback device is a local route, as 127.0.0.0/8 is: every address of
 * 198.18.0.0/15 is local inside) and binds the DNS sockets to
 * 127.0.0.53:53. The sockets stay the namespace's; sbx serves them in the
 * proxy's part of its loop:
 *
 *  - DNS: a name the --allow-host list allows gets a synthetic address of
 *    that range, its own for the run (the first one random), and a
 *    listener from the pool at that address on each port its patterns
 *    allow; AAAA and other types an empty answer; any other name NXDOMAIN,
 *    into blocked_hosts. The /etc/resolv.conf bwrap binds inside names it.
 *  - A connection accepted on a name's listener is given to the proxy as a
 *    CONNECT to NAME:PORT would be (proxy_captured()).
 *  - The host's loopback ports the user allowed (--allow-host
 *    localhost:PORT): a listener on 127.0.0.1:PORT and one on [::1]:PORT
 *    (where the namespace has IPv6), bound before the command runs, so
 *    the port is never the command's to take. A connection there goes to
 *    the proxy, which relays it to the host's 127.0.0.1:PORT (or ::1) and
 *    nowhere else (proxy_local()): the destination is the listener's,
 *    fixed before the command ran, never something the command says.
 *
 * Any other address has no route inside (ENETUNREACH), any other port of
 * the range no listener (ECONNREFUSED); the rest of loopback stays the
 * command's own. Bounded: NETNS_POOL listeners, so as many names at most
 * (then SERVFAIL), and LOCAL_MAX loopback ports.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "sbx.h"

#define NETNS_NAMES	NETNS_POOL	/* each takes a listener at least */
#define NETNS_TTL	60

/* The resolv.conf inside: sbx's resolver alone. */
char *
netns_resolv(void)
{
	return xasprintf("# sbx: names are answered by sbx's own resolver "
	    "(--allow-host)\nnameserver %s\noptions attempts:2 timeout:2\n",
	    NETNS_DNS);
}

/*
 * How many listeners the run can need, so how many sockets the shim
 * makes inside: each (name, port) takes one. A list without a wildcard
 * allows its names alone, each pattern one name and its ports (two by
 * default); a wildcard allows names without number: the whole pool. Each
 * socket costs the launch its making and its close (about 7 us each).
 */
int
netns_pool(const struct sbx_opts *o)
{
	size_t i;
	int n = 0;

	for (i = 0; i < o->nhosts && n < NETNS_POOL; i++) {
		if (o->hosts[i].local)
			continue;	/* the relay's, not the capture's */
		if (o->hosts[i].wildcard)
			return NETNS_POOL;
		n += o->hosts[i].port == 0 ? 2 : 1;
	}
	return n < NETNS_POOL ? n : NETNS_POOL;
}

/* localhost and its kin stay the sandbox's own loopback, allowed or not. */
static int
loopback_name(const char *w)
{
	size_t n = strlen(w);

	return strcasecmp(w, "localhost") == 0 ||
	    strncasecmp(w, "localhost.", 10) == 0 ||
	    strncasecmp(w, "ip6-", 4) == 0 ||
	    (n > 10 && strcasecmp(w + n - 10, ".localhost") == 0);
}

/*
 * The /etc/hosts inside: of the host's, only the lines that name
 * localhost (and its kin) or this machine's own name, which programs look
 * up and must find; every other name is the resolver's to answer, by the
 * allowlist.
 */
char *
netns_hosts(const struct sbx_opts *o)
{
	struct strv out = { NULL, 0, 0 };
	char line[4096], word[256], self[256], *buf, *p, *dot;
	size_t n = 0, i;
	int keep;
	FILE *f;

	(void)o;
	if (gethostname(self, sizeof self) < 0)
		self[0] = '\0';
	self[sizeof self - 1] = '\0';
	if ((f = fopen("/etc/hosts", "r")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL) {
			keep = 0;
			p = line;
			/* The address, then names up to a comment. */
			p += strcspn(p, " \t\r\n#");
			while (*p != '\0' && *p != '#' && *p != '\n') {
				p += strspn(p, " \t\r");
				i = strcspn(p, " \t\r\n#");
				if (i == 0)
					break;
				snprintf(word, sizeof word, "%.*s", (int)i, p);
				dot = strchr(word, '.');
				if (loopback_name(word) || (self[0] != '\0' &&
				    (strcasecmp(word, self) == 0 || (dot != NULL &&
				    strncasecmp(word, self, (size_t)(dot - word))
				    == 0 && self[dot - word] == '\0'))))
					keep = 1;
				p += i;
			}
			if (keep) {
				i = strlen(line);
				strv_pushf(&out, "%s%s", line, i > 0 &&
				    line[i - 1] == '\n' ? "" : "\n");
			}
		}
		fclose(f);
	}
	if (out.n == 0)
		strv_push(&out, "127.0.0.1\tlocalhost\n::1\tlocalhost\n");
	for (i = 0; i < out.n; i++)
		n += strlen(out.v[i]);
	p = buf = xmalloc(n + 1);
	*p = '\0';
	for (i = 0; i < out.n; i++)
		p = stpcpy(p, out.v[i]);
	strv_free(&out);
	return buf;
}

#ifdef __linux__
#include <sys/ioctl.h>
#include <net/if.h>
#include <sys/random.h>

struct name {
	char		 name[256];
	uint32_t	 addr;		/* host order */
};

struct netns {
	const struct host_pattern *hosts;
	size_t		 nhosts;
	int		 udp, tcp;	/* DNS, -1 until set up */
	int		 pool[NETNS_POOL];	/* sockets made inside, unbound */
	size_t		 npool;
	int		 lsn[NETNS_POOL];	/* bound to NAME's address:PORT */
	int		 lname[NETNS_POOL];
	int		 lport[NETNS_POOL];
	size_t		 nlsn;
	struct name	*names;		/* NETNS_NAMES */
	size_t		 nnames;
	int		 want[LOCAL_MAX];	/* the host's loopback ports */
	size_t		 nwant;
	int		 loc[2 * LOCAL_MAX];	/* their listeners inside */
	int		 locport[2 * LOCAL_MAX];
	size_t		 nloc;
	uint32_t	 lo, hi;	/* the range, host order */
	uint32_t	 next;		/* the next synthetic address */
};

struct netns *
netns_new(const struct host_pattern *hosts, size_t nhosts)
{
	struct netns *n = xcalloc(1, sizeof *n);
	uint16_t r = 0;

	n->hosts = hosts;
	n->nhosts = nhosts;
	n->nwant = proxy_local_ports(hosts, nhosts, n->want, LOCAL_MAX);
	n->udp = n->tcp = -1;
	n->names = xcalloc(NETNS_NAMES, sizeof *n->names);
	n->lo = ntohl(inet_addr(NETNS_ADDR)) - 1;
	n->hi = n->lo + (1U << 17) - 1;
	/* Where this run's addresses start: not one a program may assume. */
	(void)getrandom(&r, sizeof r, 0);
	n->next = n->lo + 2 + (r & 0x7fff);
	return n;
}

void
netns_free(struct netns *n)
{
	size_t i;

	if (n == NULL)
		return;
	if (n->udp >= 0)
		close(n->udp);
	if (n->tcp >= 0)
		close(n->tcp);
	for (i = 0; i < n->nlsn; i++)
		close(n->lsn[i]);
	for (i = 0; i < n->nloc; i++)
		close(n->loc[i]);
	for (i = 0; i < n->npool; i++)
		close(n->pool[i]);
	free(n->names);
	free(n);
}

static int
ifreq_addr(int fd, unsigned long req, const char *addr)
{
	struct ifreq ifr;
	struct sockaddr_in sin;

	memset(&ifr, 0, sizeof ifr);
	memset(&sin, 0, sizeof sin);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo:sbx");
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = inet_addr(addr);
	memcpy(&ifr.ifr_addr, &sin, sizeof sin);
	return ioctl(fd, req, &ifr);
}

static int
bind_to(int fd, uint32_t addr, int port, int stream)
{
	struct sockaddr_in sin;
	int one = 1;

	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(addr);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) < 0 ||
	    (stream && listen(fd, 128) < 0) || set_cloexec(fd) < 0 ||
	    set_nonblock(fd) < 0)
		return -1;
	return 0;
}

/* How many host loopback ports the relay serves (the shim's --local). */
size_t
netns_nlocal(const struct netns *n)
{
	return n ? n->nwant : 0;
}

static int
bind6_loopback(int fd, int port)
{
	struct sockaddr_in6 sin6;
	int one = 1;

	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin6, 0, sizeof sin6);
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons((uint16_t)port);
	sin6.sin6_addr = in6addr_loopback;
	if (bind(fd, (struct sockaddr *)&sin6, sizeof sin6) < 0 ||
	    listen(fd, 128) < 0 || set_cloexec(fd) < 0 || set_nonblock(fd) < 0)
		return -1;
	return 0;
}

/*
 * The relay's listeners: fds holds an IPv4 and an IPv6 socket for each
 * port, in order; every one is kept or closed here. The IPv4 one must
 * listen (0, or an errno); an IPv6 one that cannot is dropped: the
 * namespace has no IPv6, so [::1] is refused there as it would be.
 */
static int
local_setup(struct netns *n, const int *fds)
{
	uint32_t lo = ntohl(inet_addr("127.0.0.1"));
	size_t i;
	int err = 0, port, ok;

	for (i = 0; i < 2 * n->nwant; i++) {
		port = n->want[i / 2];
		ok = i % 2 == 0 ? bind_to(fds[i], lo, port, 1) == 0 :
		    bind6_loopback(fds[i], port) == 0;
		if (!ok && i % 2 == 0 && err == 0)
			err = errno ? errno : EINVAL;
		if (!ok) {
			close(fds[i]);
			continue;
		}
		n->loc[n->nloc] = fds[i];
		n->locport[n->nloc++] = port;
	}
	return err;
}

/*
 * The shim's sockets (fds[0] UDP, fds[1] TCP, then two for each host
 * loopback port, then the pool the names' listeners are made of): made to
 * serve. 0, or an errno, *fatal when it is the relay's (the launch must
 * not go on without what the user asked for); on failure every
 * descriptor is closed.
 */
int
netns_setup(struct netns *n, const int *fds, size_t nfds, int *fatal)
{
	uint32_t dns = ntohl(inet_addr(NETNS_DNS));
	size_t nl = 2 * n->nwant, i;
	int err = 0;

	*fatal = 0;
	if (n->udp >= 0 || n->nloc > 0 || nfds < 2 + nl ||
	    nfds > 2 + nl + NETNS_POOL) {
		*fatal = 1;
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return EINVAL;
	}
	if ((err = local_setup(n, fds + 2)) != 0)
		*fatal = 1;
	else if (ifreq_addr(fds[0], SIOCSIFADDR, NETNS_ADDR) < 0 ||
	    ifreq_addr(fds[0], SIOCSIFNETMASK, "255.254.0.0") < 0 ||
	    bind_to(fds[0], dns, 53, 0) < 0 || bind_to(fds[1], dns, 53, 1) < 0)
		err = errno;
	if (err != 0) {
		close(fds[0]);
		close(fds[1]);
		for (i = 2 + nl; i < nfds; i++)
			close(fds[i]);
		return err;
	}
	n->udp = fds[0];
	n->tcp = fds[1];
	for (i = 2 + nl; i < nfds; i++)
		n->pool[n->npool++] = fds[i];
	return 0;
}

size_t
netns_fds(const struct netns *n, int *fds, size_t max)
{
	size_t k = 0, i;

	if (n == NULL || n->udp < 0)
		return 0;
	if (k < max)
		fds[k++] = n->udp;
	if (k < max)
		fds[k++] = n->tcp;
	for (i = 0; i < n->nlsn && k < max; i++)
		fds[k++] = n->lsn[i];
	for (i = 0; i < n->nloc && k < max; i++)
		fds[k++] = n->loc[i];
	return k;
}

/*
 * The synthetic address of an allowed name, listened on at the ports it
 * may reach (np of them), each a socket of the pool; 0: the run's are used
 * up.
 */
static uint32_t
name_addr(struct netns *n, const char *name, const int *ports, int np)
{
	uint32_t a;
	size_t i;
	int k, fd;

	for (i = 0; i < n->nnames; i++)
		if (strcmp(n->names[i].name, name) == 0)
			return n->names[i].addr;
	if (n->nnames == NETNS_NAMES || n->next >= n->hi ||
	    n->npool < (size_t)np)
		return 0;
	a = n->next++;
	for (k = 0; k < np; k++) {
		fd = n->pool[--n->npool];
		if (bind_to(fd, a, ports[k], 1) < 0) {
			close(fd);
			continue;
		}
		n->lsn[n->nlsn] = fd;
		n->lname[n->nlsn] = (int)n->nnames;
		n->lport[n->nlsn++] = ports[k];
	}
	snprintf(n->names[n->nnames].name, sizeof n->names[0].name, "%s",
	    name);
	n->names[n->nnames].addr = a;
	return n->names[n->nnames++].addr;
}

/*
 * One DNS query in q (len bytes) answered into a (cap bytes): its length,
 * or 0 to stay silent.
 */
static size_t
answer(struct netns *n, struct proxy *p, const unsigned char *q, size_t len,
    unsigned char *a, size_t cap)
{
	char name[256];
	int ports[NETNS_POOL], np;
	size_t at = 12, nl = 0, qend;
	unsigned type, rcode = 0, i;
	uint32_t addr = 0;

	if (len < 12 || (q[2] & 0x80) || q[4] != 0 || q[5] != 1)
		return 0;
	/* The name: labels, no compression in a question. */
	while (at < len && q[at] != 0) {
		unsigned l = q[at];

		if (l > 63 || at + 1 + l >= len || nl + l + 1 >= sizeof name)
			return 0;
		if (nl > 0)
			name[nl++] = '.';
		for (i = 0; i < l; i++) {
			unsigned char ch = q[at + 1 + i];

			name[nl++] = (char)(ch >= 'A' && ch <= 'Z' ?
			    ch + 32 : ch);
		}
		at += 1 + l;
	}
	name[nl] = '\0';
	if (at + 5 > len)
		return 0;
	type = (unsigned)q[at + 1] << 8 | q[at + 2];
	qend = at + 5;
	if (qend + 16 > cap)
		return 0;
	if ((q[2] >> 3 & 0xf) != 0)
		rcode = 4;	/* NOTIMP: only standard queries */
	else if ((np = proxy_name_ports(n->hosts, n->nhosts, name, ports,
	    NETNS_POOL)) <= 0) {
		rcode = 3;	/* NXDOMAIN */
		/* Reverse lookups are not a host the command tried. */
		if (nl > 0 && (nl < 5 || strcmp(name + nl - 5, ".arpa") != 0))
			proxy_refused(p, name, 0, "not_listed");
	} else if ((addr = name_addr(n, name, ports, np)) == 0)
		rcode = 2;	/* SERVFAIL: the run's names are used up */
	memcpy(a, q, qend);
	a[2] = (unsigned char)(0x84 | (q[2] & 0x79));	/* QR AA, RD kept */
	a[3] = (unsigned char)(0x80 | rcode);		/* RA */
	memset(a + 6, 0, 6);
	if (rcode == 0 && type == 1 /* A */) {
		static const unsigned char rr[] = { 0xc0, 12, 0, 1, 0, 1,
		    0, 0, NETNS_TTL >> 8, NETNS_TTL & 0xff, 0, 4 };

		a[7] = 1;
		memcpy(a + qend, rr, sizeof rr);
		a[qend + 12] = (unsigned char)(addr >> 24);
		a[qend + 13] = (unsigned char)(addr >> 16);
		a[qend + 14] = (unsigned char)(addr >> 8);
		a[qend + 15] = (unsigned char)addr;
		return qend + 16;
	}
	return qend;
}

static void
serve_udp(struct netns *n, struct proxy *p)
{
	unsigned char q[1500], a[1600];
	struct sockaddr_storage from;
	socklen_t flen;
	ssize_t k;
	size_t len;
	int i;

	for (i = 0; i < 64; i++) {
		flen = sizeof from;
		k = recvfrom(n->udp, q, sizeof q, MSG_DONTWAIT,
		    (struct sockaddr *)&from, &flen);
		if (k < 0)
			return;
		if ((len = answer(n, p, q, (size_t)k, a, sizeof a)) > 0)
			(void)sendto(n->udp, a, len, MSG_DONTWAIT,
			    (struct sockaddr *)&from, flen);
	}
}

/*
 * DNS over TCP (a client whose UDP answer came truncated, which sbx's
 * never are, or one that insists): one query, one answer. It waits for
 * the query 50 ms at most, in sbx's loop: the only blocking here.
 */
static void
serve_tcp(struct netns *n, struct proxy *p)
{
	unsigned char q[2 + 1500], a[2 + 1600];
	struct pollfd pf;
	size_t got = 0, want = 2, len;
	int64_t end = now_ms() + 50, left;
	ssize_t k;
	int fd;

	if ((fd = accept4(n->tcp, NULL, NULL, SOCK_CLOEXEC |
	    SOCK_NONBLOCK)) < 0)
		return;
	while (got < want) {
		if ((k = read(fd, q + got, want - got)) == 0 || (k < 0 &&
		    errno != EAGAIN && errno != EINTR))
			goto out;
		if (k < 0) {
			if ((left = end - now_ms()) <= 0)
				goto out;
			pf.fd = fd;
			pf.events = POLLIN;
			(void)poll(&pf, 1, (int)left);
			continue;
		}
		got += (size_t)k;
		if (got == 2 && (want = 2 + ((size_t)q[0] << 8 | q[1])) >
		    sizeof q)
			goto out;
	}
	if ((len = answer(n, p, q + 2, want - 2, a + 2, sizeof a - 2)) > 0) {
		a[0] = (unsigned char)(len >> 8);
		a[1] = (unsigned char)len;
		(void)send(fd, a, len + 2, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
out:
	close(fd);
}

/* Connections to a name's address and port: to the proxy as NAME:PORT. */
static void
capture(struct netns *n, struct proxy *p, size_t l, int64_t now)
{
	int fd, k;

	for (k = 0; k < 64; k++) {
		if ((fd = accept4(n->lsn[l], NULL, NULL, SOCK_CLOEXEC |
		    SOCK_NONBLOCK)) < 0)
			return;
		proxy_captured(p, fd, n->names[n->lname[l]].name, n->lport[l],
		    now);
	}
}

/* Connections to the relay's listener l: to the host's port, its own. */
static void
relay_local(struct netns *n, struct proxy *p, size_t l, int64_t now)
{
	int fd, k;

	for (k = 0; k < 64; k++) {
		if ((fd = accept4(n->loc[l], NULL, NULL, SOCK_CLOEXEC |
		    SOCK_NONBLOCK)) < 0)
			return;
		proxy_local(p, fd, n->locport[l], now);
	}
}

void
netns_ready(struct netns *n, struct proxy *p, int fd, int64_t now)
{
	size_t i;

	if (fd == n->udp)
		serve_udp(n, p);
	else if (fd == n->tcp)
		serve_tcp(n, p);
	for (i = 0; i < n->nlsn; i++)
		if (fd == n->lsn[i])
			capture(n, p, i, now);
	for (i = 0; i < n->nloc; i++)
		if (fd == n->loc[i])
			relay_local(n, p, i, now);
}

/*
 * The shim's sockets, unbound: fds[0] UDP, then TCP; of the nlocal pairs
 * after the DNS pair, the second is IPv6 (or IPv4 where the kernel has no
 * IPv6: sbx's bind then fails and drops it).
 */
static int
shim_sockets(int *fds, int n, int nlocal)
{
	int i, fam;

	for (i = 0; i < n; i++) {
		fam = i >= 2 && i < 2 + 2 * nlocal && i % 2 == 1 ? AF_INET6 :
		    AF_INET;
		fds[i] = socket(fam, (i == 0 ? SOCK_DGRAM : SOCK_STREAM) |
		    SOCK_CLOEXEC, 0);
		if (fds[i] < 0 && fam == AF_INET6 && errno == EAFNOSUPPORT)
			fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0) {
			while (i-- > 0)
				close(fds[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * In the shim (--capture N --local L): the sockets made inside the
 * namespace, sent to sbx over bridge as "n", and sbx's answer awaited: 0,
 * or -1 with errno.
 */
int
netns_shim(int bridge, int nports, int nlocal)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(NETNS_FDS * sizeof(int))];
	} u;
	int fds[NETNS_FDS], i, n = 2 + 2 * nlocal + nports, err = 0;
	struct msghdr m;
	struct iovec iov;
	struct cmsghdr *cm;
	ssize_t k;

	if (nports < 0 || nports > NETNS_POOL || nlocal < 0 ||
	    nlocal > LOCAL_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (shim_sockets(fds, n, nlocal) < 0)
		return -1;
	memset(&m, 0, sizeof m);
	memset(&u, 0, sizeof u);
	iov.iov_base = (void *)"n";
	iov.iov_len = 1;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.b;
	m.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, (size_t)n * sizeof(int));
	while ((k = sendmsg(bridge, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	for (i = 0; i < n; i++)
		close(fds[i]);
	if (k < 0)
		return -1;
	while ((k = recv(bridge, &err, sizeof err, 0)) < 0 && errno == EINTR)
		;
	if (k != (ssize_t)sizeof err) {
		errno = k < 0 ? errno : EPROTO;
		return -1;
	}
	if (err != 0) {
		errno = err;
		return -1;
	}
	return 0;
}

#else

struct netns *
netns_new(const struct host_pattern *hosts, size_t nhosts)
{
	(void)hosts;
	(void)nhosts;
	return NULL;
}

void
netns_free(struct netns *n)
{
	(void)n;
}

int
netns_setup(struct netns *n, const int *fds, size_t nfds, int *fatal)
{
	(void)n;
	(void)fds;
	(void)nfds;
	*fatal = 1;
	return ENOSYS;
}

size_t
netns_nlocal(const struct netns *n)
{
	(void)n;
	return 0;
}

size_t
netns_fds(const struct netns *n, int *fds, size_t max)
{
	(void)n;
	(void)fds;
	(void)max;
	return 0;
}

void
netns_ready(struct netns *n, struct proxy *p, int fd, int64_t now)
{
	(void)n;
	(void)p;
	(void)fd;
	(void)now;
}

int
netns_shim(int bridge, int nports, int nlocal)
{
	(void)bridge;
	(void)nports;
	(void)nlocal;
	errno = ENOSYS;
	return -1;
}

#endif
