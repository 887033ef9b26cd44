/*
 * bwrap.c: the bubblewrap backend, one row of the backend table.
 * bwrap_build() is a pure function of the plan: it fills the launch (the
 * bwrap options passed NUL-separated on FD_ARGS, the seccomp program on
 * FD_SECCOMP, the shim's line) and neither forks, execs nor exits. What
 * only bwrap needs lives here: the inherited descriptors the shim reopens
 * inside, the descriptors of the checked paths that bwrap binds
 * (--bind-fd, --ro-bind-fd) and the list of mounts the shim checks inside
 * before the command (FD_MOUNTS), and the reading of bwrap's own failure
 * line. The names the policy holds that do not exist, and the folders
 * above held paths, are held by sbx's supervisor (notify.c) at the moment
 * of the call, in the sandbox's own mount namespace: nothing is made on
 * the host for them. Invariants: every path handed to bwrap is
 * absolute, so none can be read as an option; the sandbox always gets its
 * own user, pid, ipc, uts and (unless --net) network namespaces, a new
 * session, no capabilities once the shim has run (see shim.c for root),
 * the seccomp filter, and its own /dev and /proc mounted after the policy
 * so no rule can hide them; bwrap itself runs with an empty environment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "sbx.h"

/*
 * Namespaces and privileges, the same for every run. --unshare-user also
 * when root: the command's capabilities then exist only in its own user
 * namespace, and the mounts made for it are locked there, so it cannot
 * unmount a read-only bind to uncover what lies below. --new-session
 * leaves no controlling terminal, so TIOCSTI cannot push input into the
 * user's shell (CVE-2017-5226). --as-pid-1: sbx's shim is the namespace's
 * init, so bwrap forks no reaper of its own; when the shim exits the
 * kernel ends every process left inside.
 */
static const char *const base_opts[] = {
	"--unshare-user", "--unshare-pid",
	"--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	"--die-with-parent", "--new-session", "--as-pid-1", "--cap-drop", "ALL",
	"--ro-bind", "/", "/", NULL
};

/*
 * The paths bound by descriptor (--bind-fd, --ro-bind-fd) get numbers from
 * here on in bwrap, which closes them once it has bound them.
 */
#define FD_FIRST_BIND	10
#define MAX_BINDS	(LAUNCH_MAXFD - 8)

/* What only bwrap keeps of a launch. */
struct bwrap_priv {
	const char	*self;		/* sbx, run inside as the shim */
	int		 dry;		/* --dry-run: nothing kept open */
	const struct policy *pol;
	struct strv	 binds;		/* bound by descriptor: FD_FIRST_BIND + i */
	int		*fds;		/* their descriptors, opened here */
	struct strv	 checks;	/* KIND ID PATH each: for the shim */
	char		*failed;	/* a path that changed while sbx started */
	struct strv	 reopen;	/* fd digit, path: for the shim */
	struct sup	*sup;		/* the supervisor, once built */
};

static int flavour(const struct plan *);
static void take_listener(void *, int, pid_t);

static void
push2(struct strv *v, const char *op, const char *path)
{
	strv_push(v, op);
	strv_push(v, path);
}

static void
push3(struct strv *v, const char *op, const char *a, const char *b)
{
	strv_push(v, op);
	strv_push(v, a);
	strv_push(v, b);
}

/*
 * What the shim checks inside before the command starts: at path, reached
 * without a link, the mount kind says (rw or ro: the inode id; cover: an
 * empty read-only mount; tmp: the run's own /tmp).
 */
static void
check(struct bwrap_priv *bp, const char *kind, const char *id,
    const char *path)
{
	push3(&bp->checks, kind, id, path);
}

/*
 * Whether fd (st: its stat) is still the inode sbx checked at path, and
 * no other checked writable path's; if not, fd is closed and the launch
 * will fail (bp->failed).
 */
static int
still_checked(struct bwrap_priv *bp, const char *path, int fd,
    struct stat *st)
{
	if (fd >= 0 && checked_same(path, st) &&
	    !checked_elsewhere(path, st, &bp->pol->writable))
		return 1;
	if (bp->failed == NULL)
		bp->failed = xasprintf("%s: changed while sbx started; "
		    "try again", shown(path));
	if (fd >= 0)
		close(fd);
	return 0;
}

/* The inode at path, as checked, in id; -1 (bp->failed) if it moved. */
static int
bind_by_name(struct bwrap_priv *bp, const char *path, char *id, size_t size)
{
	struct stat st;
	int fd;

	if (!still_checked(bp, path, fd = open_nolinks(path, &st), &st))
		return -1;
	close(fd);
	snprintf(id, size, "%llu:%llu", (unsigned long long)st.st_dev,
	    (unsigned long long)st.st_ino);
	return 0;
}

/* path bound from fd (whose stat is st), and listed for the shim. */
static void
bind_opened(struct strv *v, struct bwrap_priv *bp, const char *op,
    const char *path, int fd, const struct stat *st)
{
	char num[16], id[64];
	struct statvfs sv;
	int ro = strcmp(op, "--bind-fd") != 0;

	/* A writable path on a read-only mount binds read-only: the shim
	 * finds it so, and the command's writes there fail (EROFS), as
	 * under Landlock. */
	if (!ro && fd >= 0 && fstatvfs(fd, &sv) == 0 && sv.f_flag & ST_RDONLY)
		ro = 1;
	if (bp->dry) {
		close(fd);
		fd = -1;
	}
	bp->fds = xrealloc(bp->fds, (bp->binds.n + 1) * sizeof(int));
	bp->fds[bp->binds.n] = fd;
	snprintf(num, sizeof(num), "%zu", FD_FIRST_BIND + bp->binds.n);
	strv_push(&bp->binds, path);
	push3(v, op, num, path);
	snprintf(id, sizeof(id), "%llu:%llu", (unsigned long long)st->st_dev,
	    (unsigned long long)st->st_ino);
	/* wro: a writable path the host's mount keeps read-only. */
	check(bp, !strcmp(op, "--bind-fd") ? (ro ? "wro" : "rw") : "ro", id,
	    path);
}

/*
 * path bound by a descriptor sbx opened without following a link, the
 * very one it checked a named path with: bwrap mounts that inode, not
 * whatever the name leads to by then (a folder swapped for a symbolic
 * link while sbx starts). The shim checks that it lies at path.
 */
static void
bind_fd(struct strv *v, struct bwrap_priv *bp, const char *op,
    const char *path)
{
	struct stat st;
	char id[64];
	int fd, kept;

	/* Past the descriptors a launch holds, a read-only path is bound by
	 * name: the shim still finds the checked inode there, or fails. */
	if (bp->binds.n == MAX_BINDS && strcmp(op, "--ro-bind-fd") == 0) {
		if (bind_by_name(bp, path, id, sizeof(id)) == 0) {
			push3(v, "--ro-bind", path, path);
			check(bp, "ro", id, path);
		}
		return;
	}
	if (bp->binds.n == MAX_BINDS) {
		if (bp->failed == NULL)
			bp->failed = xasprintf("more than %d writable paths to "
			    "bind", MAX_BINDS);
		return;
	}
	kept = checked_fd(path);
	fd = kept >= 0 ? fcntl(kept, F_DUPFD_CLOEXEC, 0) :
	    open_nolinks(path, &st);
	if (fd >= 0 && fstat(fd, &st) < 0) {
		close(fd);
		fd = -1;
	}
	if (!still_checked(bp, path, fd, &st))
		return;
	bind_opened(v, bp, op, path, fd, &st);
}

/* An empty folder nobody can write: a read-only tmpfs of mode 0555. */
static void
empty_dir(struct strv *v, const char *path)
{
	push2(v, "--perms", "0555");
	push2(v, "--tmpfs", path);
	push2(v, "--remount-ro", path);
}

static void
empty_dir_checked(struct strv *v, struct bwrap_priv *bp, const char *path)
{
	empty_dir(v, path);
	check(bp, "cover", "-", path);
}

/*
 * A file with nothing to read: /dev/null bound read-only. bwrap binds it
 * nodev, so opening it fails with EACCES, as Landlock and Seatbelt do.
 */
static void
null_file(struct strv *v, const char *path)
{
	push3(v, "--ro-bind", "/dev/null", path);
}

static void
null_file_checked(struct strv *v, struct bwrap_priv *bp, const char *path)
{
	null_file(v, path);
	check(bp, "cover", "-", path);
}

/*
 * The run's own /tmp: a tmpfs of mode 1777 as the host's, bounded to half
 * the memory (the kernel's own default for tmpfs, said explicitly so that
 * the plan shows it). Then what the shim needs from below it: sbx itself
 * and the inherited files it reopens by name, read-only as before.
 */
static void
fresh_dir(struct strv *v, const struct bwrap_priv *bp, const char *path)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	char buf[32];
	size_t i;

	if (pages > 0 && size > 0) {
		snprintf(buf, sizeof(buf), "%lld",
		    (long long)pages * size / 2);
		push2(v, "--size", buf);
	}
	push2(v, "--perms", "1777");
	push2(v, "--tmpfs", path);
	check((struct bwrap_priv *)bp, "tmp", "-", path);
	if (bp->self && path_under(bp->self, path))
		push3(v, "--ro-bind", bp->self, bp->self);
	for (i = 0; i + 1 < bp->reopen.n; i += 2)
		if (path_under(bp->reopen.v[i + 1], path))
			push3(v, "--ro-bind", bp->reopen.v[i + 1],
			    bp->reopen.v[i + 1]);
}

/* A device bound by name: its inode, for the shim to compare. */
static void
dev_checked(struct bwrap_priv *bp, const char *path)
{
	struct stat st;
	char id[64];
	int fd;

	if ((fd = open_nolinks(path, &st)) < 0 || !checked_same(path, &st)) {
		if (bp->failed == NULL)
			bp->failed = xasprintf("%s: changed while sbx started; "
			    "try again", shown(path));
	} else {
		snprintf(id, sizeof(id), "%llu:%llu",
		    (unsigned long long)st.st_dev,
		    (unsigned long long)st.st_ino);
		check(bp, "rw", id, path);
	}
	if (fd >= 0)
		close(fd);
}

static void
add_rule(struct strv *v, struct bwrap_priv *bp, const struct rule *r)
{
	switch (r->kind) {
	case RULE_WRITE:
		if (r->fresh) {
			fresh_dir(v, bp, r->path);
			break;
		}
		/* A device the user asked to write needs device access,
		 * which bwrap binds only by name: the shim checks it. */
		if (r->type == PATH_OTHER) {
			push3(v, "--dev-bind", r->path, r->path);
			dev_checked(bp, r->path);
		} else
			bind_fd(v, bp, "--bind-fd", r->path);
		break;
	case RULE_READONLY:
		/* A missing one is the supervisor's: no mount point. An
		 * existing one stays a read-only bind, cheaper than judging
		 * every write to it. */
		if (r->type != PATH_MISSING)
			bind_fd(v, bp, "--ro-bind-fd", r->path);
		break;
	case RULE_DENY_READ:
		if (r->type == PATH_MISSING)
			break;
		if (r->type == PATH_DIR)
			empty_dir_checked(v, bp, r->path);
		else
			null_file_checked(v, bp, r->path);
		break;
	}
}

/* A device node bwrap's --dev binds in from the host, /dev/tty aside. */
static int
bound_device(const char *path)
{
	size_t i;

	for (i = 0; sbx_devices[i]; i++)
		if (strcmp(path, sbx_devices[i]) == 0)
			return strcmp(path, "/dev/tty") != 0;
	return 0;
}

/*
 * The descriptors the command inherits (0; 1 and 2 with --passthrough)
 * were opened on the host's own mounts, and a mount namespace does not
 * change that: through /proc/self/fd/N a file read-only here can be
 * reopened for writing, or have its mode changed, wherever the host's
 * mount allows it. The shim reopens a named file held read-only, and
 * /dev/null and the like, by name inside the sandbox (--reopen N PATH):
 * the new descriptor is bound by the sandbox's mounts. (Directories and
 * O_PATH descriptors were refused before any backend was asked.)
 */
static int
reopen_list(const struct plan *pl, struct strv *reopen, struct sbx_err *e)
{
	char link[32], path[PATH_MAX], num[2];
	struct stat st;
	int fd, fl, last = pl->o->passthrough ? 2 : 0;
	ssize_t n;

	for (fd = 0; fd <= last; fd++) {
		/* sbx's own terminal there: nothing of the caller's. */
		if (pl->tty_fds & (1U << fd))
			continue;
		if ((fl = fcntl(fd, F_GETFL)) < 0 || fstat(fd, &st) < 0)
			continue;
		if (S_ISBLK(st.st_mode))
			return sbx_errf(e, ERR_POLICY, "%s is a block device: "
			    "the command could reopen it for writing; pipe it "
			    "in instead", std_fd_name[fd]);
		if (!(S_ISREG(st.st_mode) && (fl & O_ACCMODE) == O_RDONLY &&
		    st.st_nlink > 0) && !S_ISCHR(st.st_mode))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = '\0';
		if (S_ISCHR(st.st_mode)) {
			/* A terminal, say: no name inside to reopen. */
			if (!bound_device(path))
				continue;
		} else if (path[0] != '/')
			return sbx_errf(e, ERR_POLICY, "%s: cannot tell the "
			    "file's name (%s) to reopen it inside the sandbox; "
			    "pipe it in instead", std_fd_name[fd],
			    n < 0 ? strerror(errno) : "not a path");
		num[0] = (char)('0' + fd);
		num[1] = '\0';
		push2(reopen, num, path);
	}
	return 0;
}

/*
 * bwrap runs with no environment: it is a dynamically linked program
 * outside the sandbox, and LD_PRELOAD or LD_LIBRARY_PATH meant for the
 * command (a library in the writable workspace, which an earlier run could
 * have replaced) would load that code into it, unconfined. The command's
 * variables reach the shim wrapped, SBX_ENV_<n>=NAME=VALUE, by --setenv on
 * the args descriptor: no name the loader or a sanitizer runtime reads
 * reaches a dynamically linked shim either, and no value shows in any
 * process's command line. The shim unwraps them for the command alone.
 */
static void
add_env(struct strv *v, const struct strv *env)
{
	char name[32];
	size_t i;

	for (i = 0; i < env->n; i++) {
		snprintf(name, sizeof(name), "%s%zu", SHIM_ENV, i);
		push3(v, "--setenv", name, env->v[i]);
	}
}

/* bwrap's options: namespaces, the policy, /dev and /proc, the env. */
static void
bwrap_args(const struct plan *pl, struct bwrap_priv *bp, struct strv *v)
{
	const struct sbx_opts *o = pl->o;
	char fd[16];
	size_t i;

	for (i = 0; base_opts[i]; i++)
		strv_push(v, base_opts[i]);
	/*
	 * Run by root, the sandbox's uid 0 owns the host's device nodes that
	 * --dev binds in. The shim needs CAP_SYS_ADMIN to remount them
	 * read-only and CAP_SETPCAP to then drop every capability for good;
	 * nothing of the command's runs before it has.
	 */
	if (geteuid() == 0) {
		push2(v, "--cap-add", "CAP_SYS_ADMIN");
		push2(v, "--cap-add", "CAP_SETPCAP");
	} else {
		/*
		 * A nested user namespace could regain capabilities for
		 * mount(2). The filter refuses them in any case; unprivileged,
		 * bwrap can say so too. As root it would nest the shim in a
		 * namespace that does not own the mounts it must remount.
		 */
		strv_push(v, "--disable-userns");
	}
	if (o->net != NET_ALL)
		strv_push(v, "--unshare-net");
	/* The rules in order, each over the ones before it below its path.
	 * A rename of a folder above a held path is the supervisor's. */
	for (i = 0; i < pl->pol->n; i++)
		add_rule(v, bp, &pl->pol->r[i]);
	/* After the rules: even a rule on / or /dev cannot replace these. */
	push2(v, "--dev", "/dev");
	push2(v, "--proc", "/proc");
	/*
	 * sysctl and /proc/sysrq-trigger check the uid, not a capability:
	 * run by root, the sandbox's uid 0 is the host's uid 0 and could set
	 * kernel.core_pattern. bwrap's own cover of /proc/sys is skipped in a
	 * user namespace, so the whole new /proc is made read-only.
	 */
	push2(v, "--remount-ro", "/proc");
	/* After the rules too: sbx's resolver, the allowed names its own. */
	if (pl->bridge_fd >= 0) {
		snprintf(fd, sizeof fd, "%d", FD_RESOLV);
		push3(v, "--ro-bind-data", fd, "/etc/resolv.conf");
		snprintf(fd, sizeof fd, "%d", FD_HOSTS);
		push3(v, "--ro-bind-data", fd, "/etc/hosts");
	}
	push2(v, "--chdir", o->root);
	add_env(v, pl->env);
}

/* The shim's line inside: what it must do before it runs the command. */
static void
shim_args(const struct plan *pl, const struct bwrap_priv *bp,
    struct strv *v)
{
	int ports[LOCAL_MAX];
	size_t i, nlocal;
	char **c;

	push2(v, pl->o->self, SHIM_ARG);
	/* The shim installs the filter (FD_SECCOMP); as root, after --ro-dev. */
	if (geteuid() == 0)
		strv_push(v, "--ro-dev");
	strv_push(v, "--seccomp");
	if (pl->bridge_fd >= 0) {
		/* The capture: the shim makes its sockets inside. */
		strv_push(v, "--bridge");
		strv_push(v, "--capture");
		strv_pushf(v, "%d", netns_pool(pl->o));
		if ((nlocal = proxy_local_ports(pl->o->hosts, pl->o->nhosts,
		    ports, LOCAL_MAX)) > 0) {
			strv_push(v, "--local");
			strv_pushf(v, "%zu", nlocal);
		}
	}
	strv_push(v, "--wrapped-env");
	if (pl->tty_fds)
		strv_push(v, "--tty");
	/* RLIMIT_NPROC inside: its user namespace counts only its own. */
	if (limits_nproc(pl->lim) > 0) {
		strv_push(v, "--procs");
		strv_pushf(v, "%ld", limits_nproc(pl->lim));
	}
	for (i = 0; i + 1 < bp->reopen.n; i += 2) {
		strv_push(v, "--reopen");
		push2(v, bp->reopen.v[i], bp->reopen.v[i + 1]);
	}
	/* What the shim checks, NUL-separated on FD_MOUNTS (bwrap takes
	 * no more than 9000 words). */
	if (bp->checks.n > 0)
		strv_push(v, "--mounts");
	strv_push(v, "--");
	for (c = pl->o->cmd; c && *c; c++)
		strv_push(v, *c);
}

/* The words NUL-separated, as bwrap's --args reads them. */
static unsigned char *
join0(const struct strv *v, size_t *len)
{
	size_t i, n = 0;
	char *buf, *p;

	for (i = 0; i < v->n; i++)
		n += strlen(v->v[i]) + 1;
	p = buf = xmalloc(n);
	for (i = 0; i < v->n; i++)
		p = stpcpy(p, v->v[i]) + 1;
	*len = n;
	return (unsigned char *)buf;
}

static void
add_fd(struct launch *l, int num, int src, unsigned char *data, size_t len)
{
	l->fd[l->nfd].num = num;
	l->fd[l->nfd].src = src;
	l->fd[l->nfd].data = data;
	l->fd[l->nfd].len = len;
	l->nfd++;
}

/* Each writable folder, so that bwrap is never taken from one. */
static void
writable_dirs(const struct sbx_opts *o, struct strv *w)
{
	size_t i;

	if (o->root)
		strv_push(w, o->root);
	for (i = 0; i < o->write.n; i++)
		strv_push(w, o->write.v[i]);
	for (i = 0; i < o->scope.n; i++)
		strv_push(w, o->scope.v[i]);
}

/* bwrap by absolute path on PATH, outside every writable folder. */
static int
bwrap_search(const struct sbx_opts *o, char **path, struct sbx_err *e)
{
	struct strv w = { NULL, 0, 0 };
	char real[PATH_MAX];
	size_t i;
	int ok = 1;

	writable_dirs(o, &w);
	*path = find_program("bwrap", &w);
	if (*path == NULL) {
		strv_free(&w);
		return sbx_errf(e, ERR_UNAVAILABLE, "bwrap: not found on PATH "
		    "(outside the writable folders): install bubblewrap "
		    "(apt-get install bubblewrap, dnf install bubblewrap)");
	}
	/* A PATH entry outside may still link into a writable folder. */
	if (realpath(*path, real) == NULL)
		ok = 0;
	for (i = 0; ok && i < w.n; i++)
		if (path_under(real, w.v[i]))
			ok = 0;
	strv_free(&w);
	if (!ok) {
		sbx_errf(e, ERR_UNAVAILABLE, "bwrap: %s: resolves into a "
		    "writable folder; install bubblewrap elsewhere",
		    shown(*path));
		free(*path);
		*path = NULL;
		return -1;
	}
	return 0;
}

/*
 * bwrap_search(), once per process: the probe and the build ask with the
 * same options, and the search costs an access() of every PATH entry and
 * a realpath().
 */
static int
bwrap_find(const struct sbx_opts *o, char **path, struct sbx_err *e)
{
	static const struct sbx_opts *asked;
	static char *found;
	static struct sbx_err why;

	if (asked != o) {
		free(found);
		asked = o;
		found = NULL;
		if (bwrap_search(o, &found, &why) < 0)
			found = NULL;
	}
	if (found == NULL) {
		*e = why;
		*path = NULL;
		return -1;
	}
	*path = xstrdup(found);
	return 0;
}

/* --dry-run: the relay of each host loopback port, and where it leads. */
static void
describe_local(const struct sbx_opts *o, struct strv *dry)
{
	int ports[LOCAL_MAX];
	size_t i, n = proxy_local_ports(o->hosts, o->nhosts, ports, LOCAL_MAX);

	for (i = 0; i < n; i++)
		strv_pushf(dry, "# allowed_local localhost:%d: 127.0.0.1:%d and "
		    "[::1]:%d inside are sbx's relay to the host's "
		    "127.0.0.1:%d (then [::1]:%d); no other host port", ports[i],
		    ports[i], ports[i], ports[i], ports[i]);
}

/*
 * What --dry-run shows beside the line, for a dry run alone: the args in
 * place of "--args 3", the filter, the descriptors and the shim's checks.
 */
static void
describe(const struct plan *pl, const struct bwrap_priv *bp,
    const struct strv *args, struct launch *l)
{
	const struct rule *r;
	char *d, *q;
	size_t i;

	strv_push(&l->shown, l->argv.v[0]);
	for (i = 0; i < args->n; i++)
		strv_push(&l->shown, args->v[i]);
	for (i = 3; i < l->argv.n; i++)
		strv_push(&l->shown, l->argv.v[i]);
	d = seccomp_describe(pl->o, flavour(pl));
	strv_pushf(&l->dry, "# %s", d);
	free(d);
	if (flavour(pl) & SECCOMP_NOTIFY_ENTRIES)
		strv_push(&l->dry, "# supervisor: creating, renaming, linking "
		    "and removing entries of writable folders judged at the "
		    "call, in the sandbox's root; git folders made in the run "
		    "held as existing ones");
	for (i = 0; i < pl->pol->missing.n; i++) {
		q = shell_quote(pl->pol->missing.v[i]);
		strv_pushf(&l->dry, "# supervisor: held %s (missing)", q);
		free(q);
	}
	/* A missing --deny path in a writable folder, by its first part. */
	for (i = 0; i < pl->pol->n; i++) {
		r = &pl->pol->r[i];
		if (r->kind == RULE_WRITE || r->type != PATH_MISSING ||
		    policy_holder(pl->pol, r->path) == NULL)
			continue;
		q = shell_quote(r->path);
		strv_pushf(&l->dry, "# supervisor: held %s (missing)", q);
		free(q);
	}
	for (i = 0; i < bp->binds.n; i++) {
		q = shell_quote(bp->binds.v[i]);
		strv_pushf(&l->dry, "# fd %zu: %s (opened when sbx checked "
		    "it)", FD_FIRST_BIND + i, q);
		free(q);
	}
	for (i = 0; i + 2 < bp->checks.n; i += 3) {
		q = shell_quote(bp->checks.v[i + 2]);
		strv_pushf(&l->dry, "# shim checks: %s %s %s",
		    bp->checks.v[i], bp->checks.v[i + 1], q);
		free(q);
	}
	if (pl->bridge_fd < 0)
		return;
	strv_pushf(&l->dry, "# resolver: %s:53 inside (UDP, TCP), "
	    "named by /etc/resolv.conf; /etc/hosts holds only localhost "
	    "and this machine's name", NETNS_DNS);
	strv_pushf(&l->dry, "# capture: allowed names resolve to "
	    "addresses of %s (lo, this run only); a connection to one "
	    "on a port it may reach goes to the proxy as CONNECT NAME:PORT; "
	    "other names NXDOMAIN, other addresses unreachable",
	    NETNS_RANGE);
	describe_local(pl->o, &l->dry);
}

/*
 * Entries go to the supervisor where anything is held in a writable
 * folder (a missing name, a folder above a held path, git folders made
 * in the run); refusals and set-id modes always do.
 */
static int
flavour(const struct plan *pl)
{
	const struct policy *pol = pl->pol;
	size_t i;
	int held = pl->o->protect || pol->missing.n > 0;

	for (i = 0; !held && i < pol->n; i++)
		held = pol->r[i].kind != RULE_WRITE &&
		    policy_holder(pol, pol->r[i].path) != NULL;
	/* A Unix socket's bind(2) makes a name: judged where they are. */
	return SECCOMP_FOR_BWRAP | (held ? SECCOMP_NOTIFY_ENTRIES : 0) |
	    (held && pl->o->allow_unix ? SECCOMP_NOTIFY_BIND : 0);
}

/* The supervisor's view: the policy, resolved in the sandbox's root. */
static struct sup *
supervisor(const struct plan *pl)
{
	struct sup_conf c;

	memset(&c, 0, sizeof(c));
	c.pol = pl->pol;
	c.own_mounts = 1;
	c.hold_git = pl->o->protect;
	c.net = NET_ALL;	/* the network namespace and proxy judge */
	return notify_new(&c);
}

int
bwrap_build(const struct plan *pl, struct launch *l, struct sbx_err *e)
{
	struct bwrap_priv *bp = xcalloc(1, sizeof(*bp));
	struct strv args = { NULL, 0, 0 };
	unsigned char *bpf = NULL, *argbytes;
	char *bwrap = NULL, *d, fd[16];
	size_t bpflen = 0, alen = 0, i;

	l->priv = bp;
	bp->self = pl->o->self;
	bp->dry = pl->o->dry_run;
	bp->pol = pl->pol;
	if (pl->o->dry_run) {
		/* Where it would be found; a dry run works without bwrap. */
		if ((bwrap = find_program("bwrap", NULL)) == NULL)
			bwrap = xstrdup("/usr/bin/bwrap");
	} else if (bwrap_find(pl->o, &bwrap, e) < 0)
		return -1;
	if ((!pl->o->dry_run && notify_probe(e) < 0) ||
	    reopen_list(pl, &bp->reopen, e) < 0 ||
	    seccomp_build(pl->o, flavour(pl), &bpf, &bpflen, e) < 0) {
		free(bwrap);
		return -1;
	}
	bp->sup = supervisor(pl);
	bwrap_args(pl, bp, &args);
	if (bp->failed != NULL) {
		sbx_errf(e, ERR_PATH, "%s", bp->failed);
		strv_free(&args);
		free(bwrap);
		return -1;
	}
	strv_push(&l->argv, bwrap);
	snprintf(fd, sizeof(fd), "%d", FD_ARGS);
	push2(&l->argv, "--args", fd);
	strv_push(&l->argv, "--");
	shim_args(pl, bp, &l->argv);
	if (bp->dry)
		describe(pl, bp, &args, l);
	argbytes = join0(&args, &alen);
	add_fd(l, FD_ARGS, -1, argbytes, alen);
	if (bp->checks.n > 0) {
		argbytes = join0(&bp->checks, &alen);
		add_fd(l, FD_MOUNTS, -1, argbytes, alen);
	}
	add_fd(l, FD_SECCOMP, -1, bpf, bpflen);
	if (pl->bridge_fd >= 0) {
		add_fd(l, FD_BRIDGE, pl->bridge_fd, NULL, 0);
		d = netns_resolv();
		add_fd(l, FD_RESOLV, -1, (unsigned char *)d, strlen(d));
		d = netns_hosts(pl->o);
		add_fd(l, FD_HOSTS, -1, (unsigned char *)d, strlen(d));
	}
	for (i = 0; i < bp->binds.n; i++)
		if (!bp->dry)
			add_fd(l, FD_FIRST_BIND + (int)i, bp->fds[i], NULL, 0);
	l->status_fd = FD_STATUS;
	l->take_fd = take_listener;
	l->flags = L_SHIM | L_PIDNS | L_SPARE_LEADER | L_OWN_NPROC;
	/* bwrap, the shim, the bridge */
	l->helpers = 2 + (pl->bridge_fd >= 0);
	strv_free(&args);
	free(bwrap);
	return 0;
}

/* The shim sent the filter's listener: the supervisor answers it. */
static void
take_listener(void *priv, int fd, pid_t shim)
{
	notify_start(((struct bwrap_priv *)priv)->sup, fd, shim);
}

/* After the run: the supervisor stops. */
void
bwrap_finish(struct launch *l)
{
	notify_stop(((struct bwrap_priv *)l->priv)->sup);
}

/* What the supervisor refused goes into the result. */
void
bwrap_report(const struct launch *l, struct exec_result *res)
{
	notify_denied(((struct bwrap_priv *)l->priv)->sup, &res->denied,
	    &res->ndenied);
}

void
bwrap_release(void *priv)
{
	struct bwrap_priv *bp = priv;
	size_t i;

	if (bp == NULL)
		return;
	notify_free(bp->sup);
	strv_free(&bp->reopen);
	for (i = 0; i < bp->binds.n; i++)
		if (bp->fds[i] >= 0)
			close(bp->fds[i]);
	free(bp->fds);
	strv_free(&bp->binds);
	strv_free(&bp->checks);
	free(bp->failed);
	free(bp);
}

/* ---- what went wrong ---- */

static int
read_file_int(const char *path, long *val)
{
	char buf[32];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	*val = strtol(buf, NULL, 10);
	return 0;
}

static int
in_container(void)
{
	return access("/.dockerenv", F_OK) == 0 ||
	    access("/run/.containerenv", F_OK) == 0;
}

/* How to make user namespaces work here, from what blocks them. */
static const char *
userns_fix(void)
{
	long v;

	if (read_file_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
	    &v) == 0 && v == 1)
		return "AppArmor restricts unprivileged user namespaces "
		    "(Ubuntu 24.04 and later): allow them with 'sysctl "
		    "kernel.apparmor_restrict_unprivileged_userns=0' or give "
		    "bwrap an AppArmor profile with 'userns,'";
	if (read_file_int("/proc/sys/kernel/unprivileged_userns_clone",
	    &v) == 0 && v == 0)
		return "unprivileged user namespaces are off: "
		    "'sysctl kernel.unprivileged_userns_clone=1'";
	if (read_file_int("/proc/sys/user/max_user_namespaces", &v) == 0 &&
	    v == 0)
		return "user namespaces are off: "
		    "'sysctl user.max_user_namespaces=15000'";
	if (in_container())
		return "in a container whose seccomp profile forbids "
		    "unshare(2) and mount(2): run it with a profile that "
		    "allows them, or use --backend landlock";
	return "user namespaces are unavailable here; "
	    "try --backend landlock";
}

/* The fix for bwrap's failure line. */
static const char *
bwrap_fix(const char *line)
{
	if (strstr(line, "uid map") || strstr(line, "namespace") ||
	    strstr(line, "Operation not permitted") ||
	    strstr(line, "Permission denied"))
		return userns_fix();
	if (strstr(line, "Unknown option") || strstr(line, "disable-userns"))
		return "bubblewrap 0.8 or later is needed: upgrade it";
	return "see bwrap(1); or use --backend landlock";
}

/* bwrap's failure, one line: its own message and the fix. */
static int
bwrap_failed(const char *line, int status, struct sbx_err *e)
{
	char buf[300];

	snprintf(buf, sizeof(buf), "%s", line);
	buf[strcspn(buf, "\n")] = '\0';
	if (strncmp(buf, "bwrap: ", 7) == 0)
		memmove(buf, buf + 7, strlen(buf + 7) + 1);
	if (buf[0] == '\0' && status >= 0)
		snprintf(buf, sizeof(buf), "exit status %d", status);
	else if (buf[0] == '\0')
		snprintf(buf, sizeof(buf), "it ended before the command ran");
	return sbx_errf(e, ERR_UNAVAILABLE, "bwrap: %s: %s", shown(buf),
	    bwrap_fix(buf));
}

/*
 * The sandbox did not start: an inherited file the shim could not open
 * by its name inside, or bwrap ended before the shim ran (its first line
 * of stderr says why). Anything else keeps proc.c's message.
 */
void
bwrap_explain(const struct launch *l, const struct start_fail *f,
    struct sbx_err *e)
{
	const struct bwrap_priv *bp = l->priv;
	const char *path = "?";
	size_t i;

	if (f->step == STEP_REOPEN) {
		for (i = 0; i + 1 < bp->reopen.n; i += 2)
			if (bp->reopen.v[i][0] - '0' == f->fd)
				path = bp->reopen.v[i + 1];
		sbx_errf(e, ERR_POLICY, "%s (%s) cannot be opened by that "
		    "name inside the sandbox (%s); pipe it in instead",
		    std_fd_name[f->fd & 3], shown(path), f->err == ESTALE ?
		    "another file has it there" : strerror(f->err));
	} else if (f->step < 0)
		bwrap_failed(f->line, -1, e);
}

/*
 * Quick: bwrap is found (the launch is the trial). Full (--probe): one
 * real run, cached for the process.
 */
int
bwrap_probe(const struct sbx_opts *o, int full, char *info, size_t infolen,
    struct sbx_err *e)
{
	static int done, ok;
	static struct sbx_err saved;
	const char *argv[32];
	char *path = NULL, line[300];
	size_t n = 0, i;
	int st;

	if (bwrap_find(o, &path, e) < 0)
		return -1;
	snprintf(info, infolen, "%s", path);
	if (!full || done) {
		free(path);
		if (done && !ok)
			*e = saved;
		return done && !ok ? -1 : 0;
	}
	done = 1;
	for (i = 0; base_opts[i]; i++)
		argv[n++] = base_opts[i];
	argv[n++] = "--unshare-net";
	argv[n++] = "--dev";
	argv[n++] = "/dev";
	argv[n++] = "--proc";
	argv[n++] = "/proc";
	argv[n++] = "--";
	argv[n++] = path;
	argv[n++] = "--version";
	argv[n] = NULL;
	memmove(argv + 1, argv, (n + 1) * sizeof(*argv));
	argv[0] = path;
	st = proc_probe(argv, line, sizeof(line));
	ok = st == 0;
	if (!ok)
		bwrap_failed(line, st, &saved);
	free(path);
	if (!ok)
		*e = saved;
	return ok ? 0 : -1;
}
