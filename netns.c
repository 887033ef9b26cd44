/*
 * netns.c: the capture inside bwrap's network namespace under
 * --allow-host, for programs that ignore the proxy variables. The shim
 * (--capture) forks a helper before it drops its capabilities; in the
 * namespace, which the sandbox's user namespace owns, the helper:
 *
 *  - puts NETNS_ADDR/15 on lo, so that every address of 198.18.0.0/15 is
 *    local to the namespace (a prefix on a loopback device is a local
 *    route, as 127.0.0.0/8 is);
 *  - answers DNS on 127.0.0.53:53, UDP and TCP (the /etc/resolv.conf that
 *    bwrap binds inside names it): a name the --allow-host list allows
 *    gets a synthetic address of that range, its own for the run; AAAA and
 *    other types an empty answer; any other name NXDOMAIN, told to sbx's
 *    proxy for blocked_hosts;
 *  - listens on each synthetic address at the ports its name may reach,
 *    and hands each connection accepted there to the proxy over FD_BRIDGE
 *    as "t NAME:PORT" with the descriptor: the proxy judges and relays it
 *    as it would a CONNECT to NAME:PORT.
 *
 * Then it keeps only CAP_NET_BIND_SERVICE (ports 80 and 443 of later
 * names), not dumpable (the shim's own setting, kept across fork), and
 * never execs. Any other address has no route (ENETUNREACH); another
 * port of a synthetic address has no listener (ECONNREFUSED). Bounded:
 * NETNS_NAMES names, NETNS_LISTEN listeners.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#ifdef __linux__
#include <net/if.h>
#include <sys/prctl.h>
#include <sys/random.h>
#endif

#include "sbx.h"

#define NETNS_NAMES	512
#define NETNS_LISTEN	1024
#define NETNS_PORTS	16	/* ports one name may reach */
#define DNS_TTL		60
#define CAP_BIND	10	/* CAP_NET_BIND_SERVICE */

/* The resolv.conf inside: sbx's resolver alone. */
char *
netns_resolv(void)
{
	return xasprintf("# sbx: names are answered by sbx's own resolver "
	    "(--allow-host)\nnameserver %s\noptions attempts:2 timeout:2\n",
	    NETNS_DNS);
}

/*
 * The /etc/hosts inside: the host's, less every line that names a host
 * the allowlist matches (that name is the resolver's to answer, with its
 * synthetic address).
 */
char *
netns_hosts(const struct sbx_opts *o)
{
	struct strv out = { NULL, 0, 0 };
	char line[4096], word[256], *buf, *p;
	size_t n = 0, i;
	int ports[NETNS_PORTS], skip;
	FILE *f;

	if ((f = fopen("/etc/hosts", "r")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL) {
			skip = 0;
			p = line;
			/* The address, then names up to a comment. */
			p += strcspn(p, " \t\r\n#");
			while (*p != '\0' && *p != '#' && *p != '\n') {
				p += strspn(p, " \t\r");
				i = strcspn(p, " \t\r\n#");
				if (i == 0)
					break;
				snprintf(word, sizeof word, "%.*s", (int)i, p);
				if (proxy_name_ports(o->hosts, o->nhosts, word,
				    ports, NETNS_PORTS) > 0)
					skip = 1;
				p += i;
			}
			if (!skip) {
				i = strlen(line);
				strv_pushf(&out, "%s%s", line, i > 0 &&
				    line[i - 1] == '\n' ? "" : "\n");
			}
		}
		fclose(f);
	} else
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

/* rtnetlink, as <linux/rtnetlink.h> has it (musl has no kernel headers). */
struct nl_hdr {
	uint32_t	 len;
	uint16_t	 type, flags;
	uint32_t	 seq, pid;
};
struct nl_ifaddr {
	uint8_t		 family, prefixlen, flags, scope;
	uint32_t	 index;
};
struct nl_attr {
	uint16_t	 len, type;
};
struct nl_sockaddr {
	sa_family_t	 family;
	unsigned short	 pad;
	uint32_t	 pid, groups;
};
#define NL_ROUTE	0
#define NL_NEWADDR	20
#define NL_ERROR	2
#define NL_REQUEST	0x1
#define NL_ACK		0x4
#define NL_EXCL		0x200
#define NL_CREATE	0x400
#define NL_IFA_ADDRESS	1
#define NL_IFA_LOCAL	2
#define NL_SCOPE_HOST	254

struct name {
	char		 name[256];
	uint32_t	 addr;		/* host order */
};

struct lsn {
	int		 fd;
	int		 name;
	int		 port;
};

struct cap {
	const struct host_pattern *hosts;
	size_t		 nhosts;
	int		 bridge;
	int		 udp, tcp;	/* DNS */
	struct name	 names[NETNS_NAMES];
	size_t		 nnames;
	uint32_t	 next;		/* the next synthetic address */
	struct lsn	 lsn[NETNS_LISTEN];
	size_t		 nlsn;
};

/* NETNS_ADDR/15 on lo: the whole range local to the namespace. */
static int
lo_range(void)
{
	struct {
		struct nl_hdr	 nh;
		struct nl_ifaddr ifa;
		struct nl_attr	 a1;
		uint32_t	 local;
		struct nl_attr	 a2;
		uint32_t	 addr;
	} req;
	struct {
		struct nl_hdr	 nh;
		int32_t		 error;
		struct nl_hdr	 orig;
	} ack;
	struct nl_sockaddr sa;
	struct in_addr in;
	int fd, r;

	if (inet_pton(AF_INET, NETNS_ADDR, &in) != 1)
		return -1;
	memset(&req, 0, sizeof req);
	req.nh.len = sizeof req;
	req.nh.type = NL_NEWADDR;
	req.nh.flags = NL_REQUEST | NL_CREATE | NL_EXCL | NL_ACK;
	req.nh.seq = 1;
	req.ifa.family = AF_INET;
	req.ifa.prefixlen = 15;
	req.ifa.scope = NL_SCOPE_HOST;
	req.ifa.index = if_nametoindex("lo");
	req.a1.len = sizeof req.a1 + 4;
	req.a1.type = NL_IFA_LOCAL;
	req.local = in.s_addr;
	req.a2.len = sizeof req.a2 + 4;
	req.a2.type = NL_IFA_ADDRESS;
	req.addr = in.s_addr;
	if (req.ifa.index == 0)
		return -1;
	if ((fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NL_ROUTE)) < 0)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.family = AF_NETLINK;
	if (sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&sa,
	    sizeof sa) < 0 || (r = (int)recv(fd, &ack, sizeof ack, 0)) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	if (r < (int)(sizeof ack.nh + sizeof ack.error) ||
	    ack.nh.type != NL_ERROR) {
		errno = EPROTO;
		return -1;
	}
	if (ack.error != 0) {
		errno = -ack.error;
		return -1;
	}
	return 0;
}

static int
bound(int type, uint32_t addr, int port)
{
	struct sockaddr_in sin;
	int fd, one = 1;

	if ((fd = socket(AF_INET, type | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(addr);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 128) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* To the proxy: TEXT, and fd when >= 0. */
static void
tell(int bridge, const char *text, int fd)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr m;
	struct iovec iov;
	struct cmsghdr *cm;

	memset(&m, 0, sizeof m);
	memset(&u, 0, sizeof u);
	iov.iov_base = (void *)text;
	iov.iov_len = strlen(text);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (fd >= 0) {
		m.msg_control = u.b;
		m.msg_controllen = sizeof u.b;
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof fd);
	}
	while (sendmsg(bridge, &m, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/* The synthetic address of an allowed name, with its listeners; 0: full. */
static uint32_t
name_addr(struct cap *c, const char *name, const int *ports, int nports)
{
	struct name *nm;
	size_t i;
	int k, fd;

	for (i = 0; i < c->nnames; i++)
		if (strcmp(c->names[i].name, name) == 0)
			return c->names[i].addr;
	if (c->nnames == NETNS_NAMES || c->nlsn + (size_t)nports >
	    NETNS_LISTEN)
		return 0;
	nm = &c->names[c->nnames];
	snprintf(nm->name, sizeof nm->name, "%s", name);
	nm->addr = c->next++;
	for (k = 0; k < nports; k++) {
		if ((fd = bound(SOCK_STREAM, nm->addr, ports[k])) < 0)
			continue;
		c->lsn[c->nlsn].fd = fd;
		c->lsn[c->nlsn].name = (int)c->nnames;
		c->lsn[c->nlsn].port = ports[k];
		c->nlsn++;
	}
	c->nnames++;
	return nm->addr;
}

/*
 * One DNS query in q (n bytes) answered into a (cap bytes): its length,
 * or 0 to stay silent.
 */
static size_t
answer(struct cap *c, const unsigned char *q, size_t n, unsigned char *a,
    size_t cap)
{
	char name[256], msg[300];
	int ports[NETNS_PORTS], np;
	size_t at = 12, len = 0, qend;
	unsigned type, rcode = 0, i;
	uint32_t addr = 0;

	if (n < 12 || (q[2] & 0x80) || q[4] != 0 || q[5] != 1)
		return 0;
	/* The name: labels, no compression in a question. */
	while (at < n && q[at] != 0) {
		unsigned l = q[at];

		if (l > 63 || at + 1 + l >= n || len + l + 1 >= sizeof name)
			return 0;
		if (len > 0)
			name[len++] = '.';
		for (i = 0; i < l; i++) {
			unsigned char ch = q[at + 1 + i];

			name[len++] = (char)(ch >= 'A' && ch <= 'Z' ?
			    ch + 32 : ch);
		}
		at += 1 + l;
	}
	name[len] = '\0';
	if (at + 5 > n)
		return 0;
	type = (unsigned)q[at + 1] << 8 | q[at + 2];
	qend = at + 5;
	if (qend + 16 > cap)
		return 0;
	if ((q[2] >> 3 & 0xf) != 0)
		rcode = 4;	/* NOTIMP: only standard queries */
	else if ((np = proxy_name_ports(c->hosts, c->nhosts, name, ports,
	    NETNS_PORTS)) <= 0) {
		rcode = 3;	/* NXDOMAIN */
		/* Reverse lookups are not a host the command tried. */
		if (len > 0 && (len < 5 || strcmp(name + len - 5, ".arpa")
		    != 0)) {
			snprintf(msg, sizeof msg, "b %s", name);
			tell(c->bridge, msg, -1);
		}
	} else if ((addr = name_addr(c, name, ports, np)) == 0)
		rcode = 2;	/* SERVFAIL: the run's names are used up */
	memcpy(a, q, qend);
	a[2] = (unsigned char)(0x84 | (q[2] & 0x79));	/* QR AA, RD kept */
	a[3] = (unsigned char)(0x80 | rcode);		/* RA */
	memset(a + 6, 0, 6);
	if (rcode == 0 && type == 1 /* A */) {
		static const unsigned char rr[] = { 0xc0, 12, 0, 1, 0, 1,
		    0, 0, DNS_TTL >> 8, DNS_TTL & 0xff, 0, 4 };

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
serve_udp(struct cap *c)
{
	unsigned char q[1500], a[1600];
	struct sockaddr_storage from;
	socklen_t flen;
	ssize_t k;
	size_t n;
	int i;

	for (i = 0; i < 64; i++) {
		flen = sizeof from;
		k = recvfrom(c->udp, q, sizeof q, MSG_DONTWAIT,
		    (struct sockaddr *)&from, &flen);
		if (k < 0)
			return;
		if ((n = answer(c, q, (size_t)k, a, sizeof a)) > 0)
			(void)sendto(c->udp, a, n, MSG_DONTWAIT,
			    (struct sockaddr *)&from, flen);
	}
}

/* DNS over TCP: one query, one answer, a second at most to send it. */
static void
serve_tcp(struct cap *c)
{
	unsigned char q[2 + 1500], a[2 + 1600];
	struct timeval tv = { 1, 0 };
	size_t got = 0, want = 2, n;
	ssize_t k;
	int fd;

	if ((fd = accept4(c->tcp, NULL, NULL, SOCK_CLOEXEC)) < 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	while (got < want) {
		if ((k = read(fd, q + got, want - got)) <= 0)
			goto out;
		got += (size_t)k;
		if (got == 2 && (want = 2 + ((size_t)q[0] << 8 | q[1])) >
		    sizeof q)
			goto out;
	}
	if ((n = answer(c, q + 2, want - 2, a + 2, sizeof a - 2)) > 0) {
		a[0] = (unsigned char)(n >> 8);
		a[1] = (unsigned char)n;
		(void)send(fd, a, n + 2, MSG_NOSIGNAL);
	}
out:
	close(fd);
}

static void
hand_over(struct cap *c, const struct lsn *l)
{
	char msg[300];
	int fd;

	if ((fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
		return;
	snprintf(msg, sizeof msg, "t %s:%d", c->names[l->name].name, l->port);
	tell(c->bridge, msg, fd);
	close(fd);
}

static void
serve(struct cap *c)
{
	static struct pollfd pfd[NETNS_LISTEN + 2];
	size_t i, n;

	for (;;) {
		pfd[0].fd = c->udp;
		pfd[1].fd = c->tcp;
		for (i = 0; i < c->nlsn; i++)
			pfd[2 + i].fd = c->lsn[i].fd;
		n = 2 + c->nlsn;
		for (i = 0; i < n; i++) {
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (pfd[0].revents)
			serve_udp(c);
		if (pfd[1].revents)
			serve_tcp(c);
		for (i = 2; i < n; i++)
			if (pfd[i].revents)
				hand_over(c, &c->lsn[i - 2]);
	}
}

/*
 * In the shim, before it drops its capabilities: the helper set up and
 * serving, the patterns (--allow-host words) parsed. 0, or -1 with errno.
 */
int
netns_start(char *const *allow, size_t nallow, int bridge)
{
	static struct cap c;
	struct host_pattern *hp;
	struct in_addr in;
	const char *why;
	uint16_t r = 0;
	int p[2], err = 0;
	size_t i;
	pid_t pid;

	hp = xcalloc(nallow + 1, sizeof *hp);
	for (i = 0; i < nallow; i++)
		if (proxy_pattern(allow[i], &hp[i], &why) < 0) {
			errno = EINVAL;
			return -1;
		}
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0)
		return -1;
	if (pid > 0) {
		close(p[1]);
		while (read(p[0], &err, sizeof err) < 0 && errno == EINTR)
			;
		close(p[0]);
		if (err != 0) {
			errno = err;
			return -1;
		}
		return 0;
	}
	close(p[0]);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	c.hosts = hp;
	c.nhosts = nallow;
	c.bridge = bridge;
	/* Where this run's addresses start: not one a program may assume. */
	(void)getrandom(&r, sizeof r, 0);
	(void)inet_pton(AF_INET, NETNS_ADDR, &in);
	c.next = ntohl(in.s_addr) + 1 + (r & 0x7fff);
	if (lo_range() < 0 ||
	    (c.udp = bound(SOCK_DGRAM, ntohl(inet_addr(NETNS_DNS)), 53)) < 0 ||
	    (c.tcp = bound(SOCK_STREAM, ntohl(inet_addr(NETNS_DNS)), 53)) < 0 ||
	    caps_drop(1ULL << CAP_BIND, 0) < 0)
		err = errno ? errno : EPERM;
	(void)write(p[1], &err, sizeof err);
	close(p[1]);
	if (err != 0)
		_exit(1);
	serve(&c);
	_exit(0);
}

#else

int
netns_start(char *const *allow, size_t nallow, int bridge)
{
	(void)allow;
	(void)nallow;
	(void)bridge;
	errno = ENOSYS;
	return -1;
}

#endif
