/*
 * landlock.c: the built-in Linux backend, for machines where bubblewrap
 * cannot run. Landlock confines the file system, seccomp (seccomp.c) the
 * rest; both are applied by sbx to its own child just before exec. Landlock
 * only grants, each grant reaching everything below its path, so the policy
 * is expressed per class of rights (file reads, folder listing, writes) by
 * granting "around" each exception: a folder that holds an exception gets no
 * grant of that class itself, its entries get one each (read at build time),
 * recursively down to the exception. The result is never wider than the
 * policy; where the policy cannot be expressed it is narrower (the folders on
 * the way to an exception lose that class for entries made later) and this is
 * documented. Invariants: landlock_build() does all reading and allocation in
 * the parent, and the plan prints whole for --dry-run (each rule, its
 * rights); the ruleset is made in the parent too, each rule added on a
 * descriptor reached from / without following a link, or on the one sbx
 * checked a named path with, so the grant is the inode checked and never
 * a link's target (make_ruleset()); confine() runs in the child between
 * fork and exec and only adds the terminal's rules, restricts itself and
 * closes (async-signal-safe, no allocation); any part the kernel cannot
 * enforce is an error, never a best-effort run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif
#include "sbx.h"

#ifdef __linux__

/* Landlock ABI (stable; spelled out because kernel headers are not used). */
#define FS_EXECUTE	(1ULL << 0)
#define FS_WRITE_FILE	(1ULL << 1)
#define FS_READ_FILE	(1ULL << 2)
#define FS_READ_DIR	(1ULL << 3)
#define FS_REMOVE_DIR	(1ULL << 4)
#define FS_REMOVE_FILE	(1ULL << 5)
#define FS_MAKE_CHAR	(1ULL << 6)
#define FS_MAKE_DIR	(1ULL << 7)
#define FS_MAKE_REG	(1ULL << 8)
#define FS_MAKE_SOCK	(1ULL << 9)
#define FS_MAKE_FIFO	(1ULL << 10)
#define FS_MAKE_BLOCK	(1ULL << 11)
#define FS_MAKE_SYM	(1ULL << 12)
#define FS_REFER	(1ULL << 13)	/* abi 2 */
#define FS_TRUNCATE	(1ULL << 14)	/* abi 3 */
#define FS_IOCTL_DEV	(1ULL << 15)	/* abi 5 */
#define NET_BIND_TCP	(1ULL << 0)	/* abi 4 */
#define NET_CONNECT_TCP	(1ULL << 1)
#define SCOPE_ABSTRACT_UNIX (1ULL << 0)	/* abi 6 */
#define SCOPE_SIGNAL	(1ULL << 1)

#define FS_ABI1		((1ULL << 13) - 1)
/* What a rule on a non-directory may hold. */
#define FS_FILE		(FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | \
			 FS_TRUNCATE | FS_IOCTL_DEV)
#define CL_RFILE	(FS_EXECUTE | FS_READ_FILE)
#define CL_RDIR		FS_READ_DIR

/*
 * abi 4 (Linux 6.7, Ubuntu 24.04's 6.8) is the floor: abi 3 brings
 * truncate(2) under Landlock, abi 4 the TCP rules. What abi 5 and 6 add
 * (device ioctls; signals and abstract Unix sockets scoped to the
 * sandbox) the supervisor judges below them (notify.c). The environment
 * variable SBX_LANDLOCK_ABI_MAX caps the abi used, for tests of that
 * path (or, below 4, of an older kernel's refusal) on a newer kernel; it
 * can only lower it.
 */
#define ABI_MIN		4
#define ABI_SCOPED	6
#define MAX_RULES	20000

struct ll_rule {
	char		*path;
	uint64_t	 access;
};

struct ll_plan {
	unsigned char	*bpf;		/* the seccomp filter, loaded last */
	size_t		 bpflen;
	int		 status_fd;	/* the child's, for the listener */
	struct sup	*sup;		/* the supervisor (notify.c) */
	int		 proxy;		/* --allow-host */
	struct strv	 holes;		/* writable folders holding exceptions */
	int		 abi;
	uint64_t	 fs;		/* handled_access_fs */
	uint64_t	 net;		/* handled_access_net */
	uint64_t	 scoped;
	struct ll_rule	*r;
	size_t		 n;
	size_t		 cap;
	int		 rfd;		/* the ruleset, made here; -1: dry run */
	struct file_id	*granted;	/* the folders with make_reg, as added */
	size_t		 ngranted;
};

#define FD_RULESET	4	/* the ruleset's number in the child */

/* One class of rights: the exceptions ("marks") that shape its grants. */
enum { C_RFILE, C_RDIR, C_WRITE, NCLASS };

struct mark {
	const char	*path;
	int		 on;
};

struct cls {
	struct mark	*m;
	size_t		 n;
	size_t		 cap;
	int		 dflt;		/* where no mark applies */
	uint64_t	 rights;
};

struct build {
	struct ll_plan	*plan;
	struct cls	 c[NCLASS];
	struct sbx_err	*e;
	int		 failed;
};

static uint64_t
fs_for_abi(int abi)
{
	uint64_t fs = FS_ABI1;

	if (abi >= 2)
		fs |= FS_REFER;
	if (abi >= 3)
		fs |= FS_TRUNCATE;
	if (abi >= 5)
		fs |= FS_IOCTL_DEV;
	return fs;
}

static int
strictly_below(const char *path, const char *dir)
{
	return strcmp(path, dir) != 0 && path_under(path, dir);
}

/* A later mark overrides the earlier ones at or below its path. */
static void
mark(struct cls *c, const char *path, int on)
{
	size_t i, j;

	for (i = j = 0; i < c->n; i++)
		if (!path_under(c->m[i].path, path))
			c->m[j++] = c->m[i];
	c->n = j;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->m = xrealloc(c->m, c->cap * sizeof(*c->m));
	}
	c->m[c->n].path = path;
	c->m[c->n].on = on;
	c->n++;
}

/* Whether the class holds at path: its deepest mark at or above it. */
static int
want(const struct cls *c, const char *path)
{
	size_t i, best = 0;
	int on = c->dflt;

	for (i = 0; i < c->n; i++)
		if (path_under(path, c->m[i].path) &&
		    strlen(c->m[i].path) >= best) {
			best = strlen(c->m[i].path);
			on = c->m[i].on;
		}
	return on;
}

/* Some mark strictly below path disagrees with on. */
static int
mixed(const struct cls *c, const char *path, int on)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->m[i].on != on && strictly_below(c->m[i].path, path))
			return 1;
	return 0;
}

static void
add(struct build *b, const char *path, uint64_t access, int isdir)
{
	struct ll_plan *p = b->plan;

	if (!isdir)
		access &= FS_FILE;
	access &= p->fs;
	if (access == 0)
		return;
	if (p->n == MAX_RULES) {
		if (!b->failed)
			sbx_errf(b->e, ERR_POLICY, "landlock: more than %d "
			    "paths to grant around the exceptions (at %s)",
			    MAX_RULES, path);
		b->failed = 1;
		return;
	}
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->r = xrealloc(p->r, p->cap * sizeof(*p->r));
	}
	p->r[p->n].path = xstrdup(path);
	p->r[p->n].access = access;
	p->n++;
}

static void grant(struct build *, const struct cls *, const char *, int);

/* A folder whose class is on but holds exceptions: each entry on its own. */
static void
grant_entries(struct build *b, const struct cls *c, const char *dir)
{
	struct dirent *de;
	char *sub;
	DIR *d;

	/* Unreadable: its entries stay without this class (narrower). */
	if ((d = opendir(dir)) == NULL)
		return;
	while (!b->failed && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		sub = path_join(dir, de->d_name);
		grant(b, c, sub, de->d_type);
		free(sub);
	}
	closedir(d);
}

/*
 * A folder whose class is off but holds marks that turn it on below:
 * follow only the names on the way to those marks.
 */
static void
grant_towards(struct build *b, const struct cls *c, const char *dir)
{
	size_t i, j, dl = strcmp(dir, "/") ? strlen(dir) : 0;
	const char *rest, *slash;
	char *sub;

	for (i = 0; i < c->n && !b->failed; i++) {
		if (!c->m[i].on || !strictly_below(c->m[i].path, dir))
			continue;
		rest = c->m[i].path + dl + 1;
		slash = strchr(rest, '/');
		sub = slash ? xasprintf("%.*s", (int)(slash - c->m[i].path),
		    c->m[i].path) : xstrdup(c->m[i].path);
		/* Once per name: skip it if an earlier mark led there. */
		for (j = 0; j < i; j++)
			if (c->m[j].on && strictly_below(c->m[j].path, dir) &&
			    path_under(c->m[j].path, sub))
				break;
		if (j == i)
			grant(b, c, sub, DT_UNKNOWN);
		free(sub);
	}
}

/*
 * path, whose type readdir(3) gave (a DT_ value; DT_UNKNOWN: none, then
 * lstat(2) says): the folder listings of / and the like cost no call per
 * entry.
 */
static void
grant(struct build *b, const struct cls *c, const char *path, int type)
{
	struct stat st;
	int on = want(c, path), isdir;

	if (type == DT_UNKNOWN) {
		if (lstat(path, &st) < 0)
			return;
		type = IFTODT(st.st_mode);
	}
	/* A symlink is reached through its target, which has its own rule. */
	if (type == DT_LNK)
		return;
	isdir = type == DT_DIR;
	if (!isdir || !mixed(c, path, on)) {
		if (on)
			add(b, path, c->rights, isdir);
		return;
	}
	if (on) {
		/* A writable folder with a hole: its own entries are the
		 * supervisor's (notify.c). */
		if (c == &b->c[C_WRITE])
			strv_push(&b->plan->holes, path);
		grant_entries(b, c, path);
	} else
		grant_towards(b, c, path);
}

/*
 * The marks of each class, from the policy's rules in order, then the
 * parts that no rule may widen (as bwrap mounts /dev and /proc after the
 * rules): host devices (a disk, an input device, another terminal) stay
 * closed but for the harmless ones, and kernel interfaces read-only.
 */
static void
marks_from_policy(struct build *b, const struct policy *pol)
{
	struct cls *rf = &b->c[C_RFILE], *rd = &b->c[C_RDIR];
	struct cls *w = &b->c[C_WRITE];
	struct stat st;
	size_t i;

	for (i = 0; i < pol->n; i++) {
		const struct rule *r = &pol->r[i];

		mark(w, r->path, r->kind == RULE_WRITE);
		mark(rf, r->path, r->kind != RULE_DENY_READ);
		/* Listing concerns folders only: a denied file keeps the
		 * folder around it listable. */
		if (r->kind != RULE_DENY_READ || r->type == PATH_DIR)
			mark(rd, r->path, r->kind != RULE_DENY_READ);
	}
	/* A protected name that does not exist: its folder is the
	 * supervisor's, which refuses to make it (notify.c). */
	for (i = 0; i < pol->missing.n; i++)
		mark(w, pol->missing.v[i], 0);
	mark(w, "/proc", 0);
	mark(w, "/sys", 0);
	mark(w, "/dev", 0);
	mark(rf, "/dev", 0);
	for (i = 0; sbx_devices[i]; i++) {
		if (stat(sbx_devices[i], &st) < 0 || !S_ISCHR(st.st_mode))
			continue;
		mark(w, sbx_devices[i], 1);
		mark(rf, sbx_devices[i], 1);
	}
}

static int
rule_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ll_rule *)a)->path,
	    ((const struct ll_rule *)b)->path);
}

/* One rule per path: the classes' grants on the same path merged. */
static void
merge_rules(struct ll_plan *p)
{
	size_t i, j;

	if (p->n == 0)
		return;
	qsort(p->r, p->n, sizeof(*p->r), rule_cmp);
	for (i = 1, j = 0; i < p->n; i++) {
		if (strcmp(p->r[i].path, p->r[j].path) == 0) {
			p->r[j].access |= p->r[i].access;
			free(p->r[i].path);
		} else
			p->r[++j] = p->r[i];
	}
	p->n = j + 1;
}

/*
 * Landlock's rules hold inodes, not paths: a --deny-read path on a mount
 * whose file system shows the same folders at another mount too (a bind
 * mount in the workspace of a folder that is readable where it lies) is
 * read there through the grant on the other path, and nothing hides it.
 * Such a policy is refused (closed) rather than run weaker. For each
 * mount on the way to the path (the last at each point counts), the
 * path's place in that file system, and any other mount of the same
 * device whose root holds it. 0, or -1 with e set.
 */
static int
deny_read_shown_elsewhere(const struct policy *pol, struct sbx_err *e)
{
	struct mnt_line *m = NULL;
	size_t n = 0, i, j, k;
	char fs[2 * PATH_MAX], *text = NULL;
	int bad = 0, loaded = 0;

	for (i = 0; i < pol->n && !bad; i++) {
		const struct rule *r = &pol->r[i];
		const char *rest;

		if (r->kind != RULE_DENY_READ || r->type == PATH_MISSING)
			continue;
		if (!loaded) {
			n = mnt_read(&m, &text);
			loaded = 1;
		}
		if (n == 0)
			break;
		for (j = 0; j < n && !bad; j++) {
			if (!path_under(r->path, m[j].at))
				continue;
			/* covered by a later mount at the same point */
			for (k = j + 1; k < n && strcmp(m[k].at, m[j].at); k++)
				;
			if (k < n)
				continue;
			rest = r->path + (strcmp(m[j].at, "/") ?
			    strlen(m[j].at) : 0);
			snprintf(fs, sizeof(fs), "%s%s", strcmp(m[j].root,
			    "/") ? m[j].root : "", *rest ? rest : "/");
			for (k = 0; k < n && !bad; k++)
				if (k != j && strcmp(m[k].dev, m[j].dev) == 0 &&
				    strcmp(m[k].at, m[j].at) != 0 &&
				    path_under(fs, m[k].root))
					bad = 1;
		}
		if (bad)
			sbx_errf(e, ERR_POLICY, "--deny-read %s: its mount "
			    "shows the same folders elsewhere too (a bind "
			    "mount): Landlock holds inodes and cannot hide it "
			    "there; use --backend bwrap", shown(r->path));
	}
	free(m);
	free(text);
	return bad ? -1 : 0;
}

static int
plan_rules(struct ll_plan *p, const struct policy *pol, struct sbx_err *e)
{
	struct build b;
	int i;

	memset(&b, 0, sizeof(b));
	b.plan = p;
	b.e = e;
	b.c[C_RFILE].dflt = 1;
	b.c[C_RFILE].rights = CL_RFILE;
	b.c[C_RDIR].dflt = 1;
	b.c[C_RDIR].rights = CL_RDIR;
	b.c[C_WRITE].dflt = 0;
	b.c[C_WRITE].rights = p->fs & ~(CL_RFILE | CL_RDIR);
	marks_from_policy(&b, pol);
	for (i = 0; i < NCLASS && !b.failed; i++)
		grant(&b, &b.c[i], "/", DT_UNKNOWN);
	for (i = 0; i < NCLASS; i++)
		free(b.c[i].m);
	if (b.failed)
		return -1;
	merge_rules(p);
	return 0;
}

#define NR_landlock_create_ruleset	444
#define NR_landlock_add_rule		445
#define NR_landlock_restrict_self	446
#define CREATE_RULESET_VERSION		(1U << 0)
#define RULE_PATH_BENEATH		1

struct ruleset_attr {
	uint64_t	fs;
	uint64_t	net;
	uint64_t	scoped;
};

struct path_beneath {
	uint64_t	allowed_access;
	int32_t		parent_fd;
} __attribute__((packed));

#ifndef PR_SET_NO_NEW_PRIVS
#define PR_SET_NO_NEW_PRIVS	38
#endif
#define CAP_DAC_OVERRIDE	1
#define CAP_DAC_READ_SEARCH	2
#define SECCOMP_GET_ACTION_AVAIL 2
#define SECCOMP_RET_KILL_PROCESS 0x80000000U

static int
abi_version(void)
{
	return (int)syscall(NR_landlock_create_ruleset, NULL, 0,
	    CREATE_RULESET_VERSION);
}

/* The abi to use: the kernel's, or lower when asked for a test. */
static int
abi_cap(int abi)
{
	const char *v = getenv("SBX_LANDLOCK_ABI_MAX");
	long cap;
	char *end;

	if (v == NULL || *v == '\0')
		return abi;
	cap = strtol(v, &end, 10);
	if (*end != '\0' || cap < 1)
		return abi;
	return cap < abi ? (int)cap : abi;
}

static int
abi_check(struct sbx_err *e)
{
	int abi = abi_version();

	if (abi >= 0)
		abi = abi_cap(abi);	/* a test's older kernel */
	if (abi < 0 && errno == ENOSYS)
		return sbx_errf(e, ERR_UNAVAILABLE, "landlock: not in this "
		    "kernel (needs linux 6.7 or later built with "
		    "CONFIG_SECURITY_LANDLOCK)");
	if (abi < 0 && errno == EOPNOTSUPP)
		return sbx_errf(e, ERR_UNAVAILABLE, "landlock: disabled at "
		    "boot (add landlock to the lsm= kernel parameter)");
	if (abi < 0)
		return sbx_errf(e, ERR_UNAVAILABLE, "landlock: "
		    "landlock_create_ruleset: %s (a seccomp profile may "
		    "forbid it)", strerror(errno));
	if (abi < 3)
		return sbx_errf(e, ERR_UNAVAILABLE, "landlock: abi %d cannot "
		    "stop truncate(2) on read-only files (needs abi 3, "
		    "linux 6.2)", abi);
	if (abi < ABI_MIN)
		return sbx_errf(e, ERR_UNAVAILABLE, "landlock: abi %d has no "
		    "TCP rules (needs abi 4, linux 6.7)", abi);
	return abi;
}

/* The filter must load in the child: a container may forbid seccomp. */
static int
seccomp_check(struct sbx_err *e)
{
	uint32_t action = SECCOMP_RET_KILL_PROCESS;

#if !defined(__x86_64__) && !defined(__aarch64__)
	(void)action;
	return sbx_errf(e, ERR_UNAVAILABLE,
	    "seccomp: unsupported architecture");
#else
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0)
		return sbx_errf(e, ERR_UNAVAILABLE, "seccomp: %s (needed "
		    "with landlock for sockets, namespaces and ptrace)",
		    strerror(errno));
	return 0;
#endif
}

int
landlock_probe(const struct sbx_opts *o, int full, char *info,
    size_t infolen, struct sbx_err *e)
{
	int abi;

	(void)full;
	if ((abi = abi_check(e)) < 0 || seccomp_check(e) < 0)
		return -1;
	/* Which part the kernel enforces, which the supervisor. */
	snprintf(info, infolen, "abi=%d files=landlock truncate=landlock "
	    "metadata=supervisor device_ioctl=%s signals=%s abstract_unix=%s "
	    "network=%s", abi, abi >= 5 ? "landlock" : "open_devices_only",
	    abi >= ABI_SCOPED ? "landlock" : "supervisor",
	    abi >= ABI_SCOPED ? "landlock" : o->allow_unix ? "supervisor" :
	    "refused", o->net == NET_ALL ? "open" : "supervisor");
	return 0;
}

/* Landlock's names for the rights, in bit order. */
static const char *const right_names[] = {
	"execute", "write_file", "read_file", "read_dir", "remove_dir",
	"remove_file", "make_char", "make_dir", "make_reg", "make_sock",
	"make_fifo", "make_block", "make_sym", "refer", "truncate",
	"ioctl_dev"
};

static char *
rights(uint64_t access)
{
	char buf[300];
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(right_names) / sizeof(right_names[0]); i++)
		if (access >> i & 1)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
			    n ? "," : "", right_names[i]);
	return xstrdup(buf);
}

/* --dry-run: the ruleset, one line per rule (path and rights). */
static void
describe(const struct ll_plan *p, struct strv *dry)
{
	char *r, *q;
	size_t i;

	r = rights(p->fs);
	strv_pushf(dry, "# landlock abi=%d handled=%s", p->abi, r);
	free(r);
	strv_pushf(dry, "# landlock network=%s scoped=%s",
	    p->net ? "bind_tcp,connect_tcp" : "open", p->scoped ?
	    "signal,abstract_unix" : "none (the supervisor scopes signals)");
	for (i = 0; i < p->n; i++) {
		r = rights(p->r[i].access);
		q = shell_quote(p->r[i].path);
		strv_pushf(dry, "# landlock allow %s %s", q, r);
		free(q);
		free(r);
	}
	strv_push(dry, "# supervisor: chmod, utimes and xattrs judged by path");
	for (i = 0; i < p->holes.n; i++) {
		q = shell_quote(p->holes.v[i]);
		strv_pushf(dry, "# supervisor: entries of %s and of the folders "
		    "made in it", q);
		free(q);
	}
	if (p->net)
		strv_pushf(dry, "# supervisor: connect, bind and send only to "
		    "loopback ports the sandbox binds%s", p->proxy ?
		    ", and to sbx's proxy at 127.0.0.1:3128" : "");
}

/* --dry-run: the host loopback ports the supervisor lets streams reach. */
static void
describe_local(const struct sbx_opts *o, struct strv *dry)
{
	int ports[LOCAL_MAX];
	size_t i, n = proxy_local_ports(o->hosts, o->nhosts, ports, LOCAL_MAX);

	for (i = 0; i < n; i++)
		strv_pushf(dry, "# allowed_local localhost:%d: the supervisor "
		    "lets connect reach the host's 127.0.0.1:%d and [::1]:%d; "
		    "no other host port", ports[i], ports[i], ports[i]);
}

static int confine(void *);
static int make_ruleset(struct ll_plan *, const struct policy *,
    struct sbx_err *);

/*
 * The supervisor's view: the policy, the folders Landlock grants, and
 * where the network may go (the proxy's own port, with --allow-host).
 */
static struct sup *
supervisor(const struct ll_plan *p, const struct plan *pl)
{
	struct sup_conf c;

	memset(&c, 0, sizeof(c));
	c.pol = pl->pol;
	c.granted = p->granted;
	c.ngranted = p->ngranted;
	c.hold_git = pl->o->protect;
	/* Root keeps CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH here. */
	c.keep_caps = geteuid() == 0;
	c.net = pl->o->net;
	c.proxy_port = pl->proxy_port;
	c.scope = p->scoped == 0;
	c.hosts = pl->o->hosts;
	c.nhosts = pl->o->nhosts;
	return notify_new(&c);
}

/* The child sent the filter's listener: the supervisor answers it. */
static void
take_listener(void *priv, int fd, pid_t child)
{
	notify_start(((struct ll_plan *)priv)->sup, fd, child);
}

/* After the run: the supervisor stops; what it refused goes out. */
void
landlock_finish(struct launch *l)
{
	notify_stop(((struct ll_plan *)l->priv)->sup);
}

void
landlock_report(const struct launch *l, struct exec_result *res)
{
	notify_denied(((struct ll_plan *)l->priv)->sup, &res->denied,
	    &res->ndenied);
}

int
landlock_build(const struct plan *pl, struct launch *l, struct sbx_err *e)
{
	const struct sbx_opts *o = pl->o;
	struct ll_plan *p;
	char **c, *d;
	int abi, flavour;

	/* --dry-run plans for the scoped abi, so it works anywhere. */
	if (o->dry_run)
		abi = abi_cap(ABI_SCOPED);
	else if ((abi = abi_check(e)) < 0 || seccomp_check(e) < 0)
		return -1;
	p = xcalloc(1, sizeof(*p));
	l->priv = p;
	p->abi = abi;
	p->fs = fs_for_abi(abi);
	p->net = o->net == NET_ALL ? 0 : NET_BIND_TCP | NET_CONNECT_TCP;
	p->scoped = abi >= ABI_SCOPED ? SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL : 0;
	p->proxy = o->net == NET_PROXY;
	p->rfd = -1;
	if (deny_read_shown_elsewhere(pl->pol, e) < 0 ||
	    plan_rules(p, pl->pol, e) < 0)
		return -1;
	if (!o->dry_run && make_ruleset(p, pl->pol, e) < 0)
		return -1;
	flavour = SECCOMP_FOR_LANDLOCK | SECCOMP_NOTIFY_META |
	    (p->holes.n ? SECCOMP_NOTIFY_ENTRIES : 0) |
	    (o->net != NET_ALL ? SECCOMP_NOTIFY_NET : 0) |
	    (o->deny_read.n ? SECCOMP_NOTIFY_WATCH : 0);
	/* Below abi 6 the supervisor scopes signals and abstract sockets. */
	if (abi < ABI_SCOPED)
		flavour |= SECCOMP_NOTIFY_SIGNALS |
		    (o->allow_unix ? SECCOMP_NOTIFY_NET : 0);
	if (seccomp_build(o, flavour, &p->bpf, &p->bpflen, e) < 0)
		return -1;
	p->sup = supervisor(p, pl);
	/* The plan in words, for --dry-run alone: rights() and quoting
	 * for every rule cost more than planning them. */
	if (o->dry_run) {
		describe(p, &l->dry);
		describe_local(o, &l->dry);
		d = seccomp_describe(o, flavour);
		strv_pushf(&l->dry, "# %s", d);
		free(d);
	}
	for (c = o->cmd; *c; c++)
		strv_push(&l->argv, *c);
	for (c = pl->env->v; c && *c; c++)
		strv_push(&l->envp, *c);
	l->confine = confine;
	l->take_fd = take_listener;
	l->status_fd = p->status_fd = 3;
	if (p->rfd >= 0) {
		l->fd[l->nfd].num = FD_RULESET;
		l->fd[l->nfd].src = p->rfd;
		l->nfd++;
	}
	l->flags = L_KEEPER;
	return 0;
}

/*
 * The command's own terminal (fds 0-2 when they are one) stays usable
 * through /dev/stdin and the like: reopening it grants nothing the open
 * descriptor does not already give.
 */
static void
allow_std_ttys(int rfd, uint64_t fs)
{
	struct path_beneath pb;
	struct stat st;
	int fd, fl;

	for (fd = 0; fd <= 2; fd++) {
		if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) ||
		    (fl = fcntl(fd, F_GETFL)) < 0)
			continue;
		pb.allowed_access = 0;
		if ((fl & O_ACCMODE) != O_WRONLY)
			pb.allowed_access |= FS_READ_FILE;
		if ((fl & O_ACCMODE) != O_RDONLY)
			pb.allowed_access |= FS_WRITE_FILE | FS_IOCTL_DEV;
		pb.allowed_access &= fs;
		pb.parent_fd = fd;
		(void)syscall(NR_landlock_add_rule, rfd, RULE_PATH_BENEATH,
		    &pb, 0);
	}
}

/* One rule of the plan into the ruleset; -1 with *e set. */
static int
add_rule(struct ll_plan *p, const struct ll_rule *rule, struct nolinks *w,
    const struct policy *pol, struct sbx_err *e)
{
	struct path_beneath pb;
	struct stat st;
	int fd, r;

	/* The walk owns what it opens; sbx's checked descriptors stay. */
	if ((fd = checked_fd(rule->path)) >= 0) {
		if (fstat(fd, &st) < 0)
			goto moved;
	} else if ((fd = nolinks_open(w, rule->path, &st)) < 0)
		return 0;
	/* A held path's folder under another name: it moved. */
	if (!checked_same(rule->path, &st) ||
	    checked_elsewhere(rule->path, &st, &pol->writable))
		goto moved;
	pb.allowed_access = rule->access;
	pb.parent_fd = fd;
	r = (int)syscall(NR_landlock_add_rule, p->rfd, RULE_PATH_BENEATH,
	    &pb, 0);
	/* EINVAL: a folder's rights on what is a file by now. */
	if (r < 0 && errno != EINVAL)
		return sbx_errf(e, ERR_SANDBOX, "landlock: landlock_add_rule "
		    "%s: %s", shown(rule->path), strerror(errno));
	if (r == 0 && (rule->access & FS_MAKE_REG) && S_ISDIR(st.st_mode)) {
		p->granted[p->ngranted].dev = st.st_dev;
		p->granted[p->ngranted++].ino = st.st_ino;
	}
	return 0;
moved:
	return sbx_errf(e, ERR_PATH, "%s: changed while sbx started; try "
	    "again", shown(rule->path));
}

/*
 * The ruleset, made by sbx before the launch: each rule added on a
 * descriptor reached from / without following a link (nolinks_open(), as
 * open_nolinks() but keeping the folders on the way open for the next,
 * sorted, path), or on the very descriptor sbx checked a named path with,
 * so that a folder swapped for a link while sbx starts gets no grant, and
 * the grant is never the link's target. A path gone or turned into a link
 * since the plan gets none (narrower); a checked path that is another
 * inode now fails the run.
 */
static int
make_ruleset(struct ll_plan *p, const struct policy *pol, struct sbx_err *e)
{
	struct ruleset_attr ra;
	struct nolinks *w;
	size_t i;
	int rc = 0;

	ra.fs = p->fs;
	ra.net = p->net;
	ra.scoped = p->scoped;
	p->rfd = (int)syscall(NR_landlock_create_ruleset, &ra, sizeof(ra), 0);
	if (p->rfd < 0)
		return sbx_errf(e, ERR_SANDBOX, "landlock: "
		    "landlock_create_ruleset: %s", strerror(errno));
	set_cloexec(p->rfd);
	p->granted = xcalloc(p->n + 1, sizeof(*p->granted));
	w = nolinks_new();
	for (i = 0; i < p->n && rc == 0; i++)
		rc = add_rule(p, &p->r[i], w, pol, e);
	nolinks_free(w);
	return rc;
}

void
landlock_release(void *plan)
{
	struct ll_plan *p = plan;
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++)
		free(p->r[i].path);
	free(p->r);
	free(p->granted);
	if (p->rfd >= 0)
		close(p->rfd);
	free(p->bpf);
	notify_free(p->sup);
	strv_free(&p->holes);
	free(p);
}

/*
 * In the child, after fork, before exec: no allocation, no stdio. A root
 * command keeps only the capabilities that Landlock still bounds (reading
 * and writing files of other owners where the policy allows); the rest
 * (CAP_NET_ADMIN on the host's network, CAP_KILL, CAP_SYS_*) would reach
 * past the sandbox, which has no namespaces of its own. Returns 0, or the
 * step that failed with errno set.
 */
static int
confine(void *priv)
{
	const struct ll_plan *p = priv;
	int rfd = FD_RULESET, saved;
	int64_t t;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return STEP_LANDLOCK;
	allow_std_ttys(rfd, p->fs);
	if (syscall(NR_landlock_restrict_self, rfd, 0) < 0)
		goto fail;
	close(rfd);
	if (caps_drop(1ULL << CAP_DAC_OVERRIDE | 1ULL << CAP_DAC_READ_SEARCH,
	    0) < 0)
		return STEP_CAPS;
	/* The filter's listener goes to sbx, whose supervisor answers it. */
	t = timing_on ? timing_us() : 0;
	if ((rfd = seccomp_install(p->bpf, p->bpflen, 1)) < 0)
		return STEP_SECCOMP;
	if (timing_on)
		proc_status(p->status_fd, ST_TIME, TP_SECCOMP, 0,
		    (int)(timing_us() - t));
	if (proc_give_fd(p->status_fd, rfd) < 0)
		return STEP_SECCOMP;
	close(rfd);
	return 0;
fail:
	saved = errno;
	close(rfd);
	errno = saved;
	return STEP_LANDLOCK;
}

#else	/* !__linux__ */

int
landlock_probe(const struct sbx_opts *o, int full, char *info,
    size_t infolen, struct sbx_err *e)
{
	(void)o; (void)full; (void)info; (void)infolen;
	return sbx_errf(e, ERR_UNSUPPORTED, "landlock: Linux only");
}

int
landlock_build(const struct plan *pl, struct launch *l, struct sbx_err *e)
{
	(void)pl; (void)l;
	return sbx_errf(e, ERR_UNSUPPORTED, "landlock: Linux only");
}

void
landlock_release(void *plan)
{
	(void)plan;
}

#endif
