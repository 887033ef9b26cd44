/*
 * bwrap.c: the bubblewrap backend, one row of the backend table.
 * bwrap_build() is a pure function of the plan: it fills the launch (the
 * bwrap options passed NUL-separated on FD_ARGS, the seccomp program on
 * FD_SECCOMP, the shim's line) and neither forks, execs nor exits. What
 * only bwrap needs lives here: the pins that keep a read-only path from
 * being renamed away, the placeholders bwrap makes for missing protected
 * paths (and sbx's own "." for git's commondir) and the locks that keep
 * runs from removing each other's, the seals that keep names from being
 * made in a folder of the home where a placeholder would shadow a file, the
 * inherited descriptors the shim reopens inside, the descriptors of the
 * checked paths that bwrap binds (--bind-fd, --ro-bind-fd) and the list
 * of mounts the shim checks inside before the command (FD_MOUNTS), and
 * the reading of bwrap's own failure line. Invariants: every path handed to bwrap is
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
	struct strv	 placeholders;	/* mount points bwrap creates */
	struct strv	 dots;		/* placeholders sbx writes: "." */
	struct strv	 seal;		/* folders that get no new entries */
	struct strv	 reopen;	/* fd digit, path: for the shim */
	struct strv	 lockdir;	/* the folders of the placeholders */
	int		*lock;		/* one descriptor per folder */
};

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
	check(bp, strcmp(op, "--bind-fd") ? "ro" : "rw", id, path);
}

/*
 * An entry of a sealed folder, which no check of sbx's named: bound by
 * the descriptor of what is there now, opened without following a link.
 * One that is gone or became a link stays under the seal, read-only.
 */
static void
bind_entry(struct strv *v, struct bwrap_priv *bp, const char *op,
    const char *path)
{
	struct stat st;
	int fd;

	if (bp->binds.n == MAX_BINDS) {
		if (bp->failed == NULL)
			bp->failed = xasprintf("more than %d paths to bind "
			    "(entries of a writable home)", MAX_BINDS);
		return;
	}
	if ((fd = open_nolinks(path, &st)) >= 0)
		bind_opened(v, bp, op, path, fd, &st);
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

static int
has(const struct strv *v, const char *s)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->v[i], s) == 0)
			return 1;
	return 0;
}

static char *
folder_of(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');

	if (slash != NULL)
		*(slash == dir ? slash + 1 : slash) = '\0';
	return dir;
}

/* path would be a new entry of a sealed folder: the seal holds it. */
static int
sealed_in(const struct bwrap_priv *bp, const char *path)
{
	char *dir = folder_of(path);
	int r = has(&bp->seal, dir);

	free(dir);
	return r;
}

/*
 * A --deny-read or --deny-write path that does not exist stays absent.
 * In a writable folder the command could make it, so a mount point holds
 * it: /dev/null, as for a denied file (bwrap makes an empty file on the
 * host, removed after the run like the protected placeholders).
 * Elsewhere nothing of the command's can make it, and bwrap could not
 * make a mount point either.
 */
static void
absent(struct strv *v, struct bwrap_priv *bp, const struct policy *pol,
    const struct rule *r)
{
	if (policy_holder(pol, r->path) == NULL || sealed_in(bp, r->path))
		return;
	null_file_checked(v, bp, r->path);
	strv_push(&bp->placeholders, r->path);
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
add_rule(struct strv *v, struct bwrap_priv *bp, const struct policy *pol,
    const struct rule *r)
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
		if (r->create == PATH_MISSING && r->type == PATH_MISSING) {
			absent(v, bp, pol, r);
			break;
		}
		if (r->create == PATH_MISSING) {
			bind_fd(v, bp, "--ro-bind-fd", r->path);
			break;
		}
		/* A placeholder: bwrap makes the mount point on the host if
		 * missing, which keeps the path from being created inside.
		 * Also used for an existing empty one, which may be another
		 * run's placeholder and vanish before bwrap binds it. A file
		 * that reads "." is written by sbx (bwrap_prepare()) and
		 * bound onto itself: git reads it outside during the run. */
		if (r->type == PATH_MISSING && sealed_in(bp, r->path))
			break;
		if (r->create == PATH_DIR)
			empty_dir_checked(v, bp, r->path);
		else if (r->create == PATH_OTHER) {
			push3(v, "--ro-bind", r->path, r->path);
			strv_push(&bp->dots, r->path);
		} else
			null_file_checked(v, bp, r->path);
		if (r->type == PATH_MISSING || r->create == PATH_OTHER)
			strv_push(&bp->placeholders, r->path);
		break;
	case RULE_DENY_READ:
		if (r->type == PATH_MISSING)
			absent(v, bp, pol, r);
		else if (r->type == PATH_DIR)
			empty_dir_checked(v, bp, r->path);
		else
			null_file_checked(v, bp, r->path);
		break;
	}
}

/*
 * Pins: a read-only path below a writable folder could be swapped out by
 * renaming one of its parents ("mv .git .git-old; mkdir .git") unless each
 * of those parents is itself a mount point, which rename(2) refuses with
 * EBUSY. So every folder strictly between a writable folder and a
 * read-only or denied path below it is bound onto itself: that grants
 * nothing new, it only pins the name.
 */
static void
pin_parents(const struct policy *pol, const char *path, struct strv *pins)
{
	const char *holder = policy_holder(pol, path);
	size_t hl;
	char *p, *s;

	if (holder == NULL || strcmp(holder, path) == 0)
		return;
	hl = strcmp(holder, "/") ? strlen(holder) : 0;
	p = xstrdup(path);
	for (s = p + hl + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		if (!has(pins, p))
			strv_push(pins, p);
		*s = '/';
	}
	free(p);
}

/*
 * The home's start-up names are held by name where they do not exist
 * (policy->missing), and a placeholder would shadow another file (an
 * empty ~/.bash_login hides ~/.profile from bash; an empty ~/.emacs,
 * ~/.emacs.d/init.el): bwrap has no way to hold a bare name. So the
 * folders they would be made in are sealed: bound read-only, with each of
 * their folders and files bound writable again, so that what exists stays
 * writable and nothing new can be made there. A seal's root is the home
 * when it is writable (the root, -w ~), else the writable folder in it
 * that holds the name (-w ~/.config); sealed are the root and every
 * folder between it and the deepest existing folder of each such name.
 */
static void
seal_list(const struct policy *pol, struct strv *seal, struct strv *roots)
{
	const char *root, *m;
	struct stat st;
	size_t i, rl;
	char *p, *s;

	for (i = 0; pol->home != NULL && i < pol->missing.n; i++) {
		m = pol->missing.v[i];
		if (!path_under(m, pol->home) ||
		    (root = policy_holder(pol, m)) == NULL)
			continue;
		if (path_under(pol->home, root))
			root = pol->home;
		if (!has(roots, root))
			strv_push(roots, root);
		if (!has(seal, root))
			strv_push(seal, root);
		rl = strcmp(root, "/") ? strlen(root) : 0;
		p = xstrdup(m);
		for (s = p + rl + 1; (s = strchr(s, '/')) != NULL; s++) {
			*s = '\0';
			if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode))
				break;
			if (!has(seal, p))
				strv_push(seal, p);
			*s = '/';
		}
		free(p);
	}
}

/* dir read-only, its entries writable but for the sealed folders. */
static void
seal(struct strv *v, struct bwrap_priv *bp, const struct strv *sl,
    const char *dir)
{
	struct dirent **de;
	struct stat st;
	char *sub;
	int n, i;

	bind_entry(v, bp, "--ro-bind-fd", dir);
	if ((n = scandir(dir, &de, NULL, alphasort)) < 0)
		return;
	for (i = 0; i < n; i++) {
		sub = path_join(dir, de[i]->d_name);
		/* A link stays: its target has rules of its own. An entry
		 * removed since (a lock file, say) is skipped by bwrap. */
		if (strcmp(de[i]->d_name, ".") && strcmp(de[i]->d_name, "..") &&
		    lstat(sub, &st) == 0) {
			if (has(sl, sub))
				seal(v, bp, sl, sub);
			else if (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))
				bind_entry(v, bp, "--bind-fd", sub);
		}
		free(sub);
		free(de[i]);
	}
	free(de);
}

/*
 * The policy as bwrap options: the writable structure (the seal right
 * after the writable folder that holds it), then the pins, then the
 * exceptions (every rule after the last writable one), so that no pin
 * covers an exception and each pin lies on its writable folder. A sealed
 * folder is a mount point already: a pin there would unseal it.
 */
static void
add_policy(struct strv *v, struct bwrap_priv *bp, const struct policy *pol)
{
	struct strv pins = { NULL, 0, 0 }, roots = { NULL, 0, 0 };
	struct strv sealed = { NULL, 0, 0 };
	const char *h;
	size_t i, j, split = 0;

	seal_list(pol, &bp->seal, &roots);
	for (i = 0; i < pol->n; i++)
		if (pol->r[i].kind == RULE_WRITE)
			split = i + 1;
	for (i = split; i < pol->n; i++)
		pin_parents(pol, pol->r[i].path, &pins);
	for (i = 0; i < split; i++) {
		/* The same folder twice (the root, and -w of it): once, or
		 * the second bind would lift the seal. */
		if (pol->r[i].kind == RULE_WRITE &&
		    has(&sealed, pol->r[i].path))
			continue;
		add_rule(v, bp, pol, &pol->r[i]);
		/* Each seal right after the writable folder that holds it. */
		for (j = 0; pol->r[i].kind == RULE_WRITE && j < roots.n; j++)
			if ((h = policy_holder(pol, roots.v[j])) != NULL &&
			    strcmp(pol->r[i].path, h) == 0) {
				seal(v, bp, &bp->seal, roots.v[j]);
				strv_push(&sealed, h);
				roots.v[j][0] = '\0';
			}
	}
	strv_free(&roots);
	strv_free(&sealed);
	for (i = 0; i < pins.n; i++)
		if (!has(&bp->seal, pins.v[i]))
			bind_fd(v, bp, "--bind-fd", pins.v[i]);
	for (i = split; i < pol->n; i++)
		add_rule(v, bp, pol, &pol->r[i]);
	strv_free(&pins);
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
	add_policy(v, bp, pl->pol);
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
	char **c;
	size_t i;

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

/*
 * What --dry-run shows beside the line, for a dry run alone: the args in
 * place of "--args 3", the filter, the descriptors and the shim's checks.
 */
static void
describe(const struct plan *pl, const struct bwrap_priv *bp,
    const struct strv *args, struct launch *l)
{
	char *d, *q;
	size_t i;

	strv_push(&l->shown, l->argv.v[0]);
	for (i = 0; i < args->n; i++)
		strv_push(&l->shown, args->v[i]);
	for (i = 3; i < l->argv.n; i++)
		strv_push(&l->shown, l->argv.v[i]);
	d = seccomp_describe(pl->o, SECCOMP_FOR_BWRAP);
	strv_pushf(&l->dry, "# %s", d);
	free(d);
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
	if (reopen_list(pl, &bp->reopen, e) < 0 ||
	    seccomp_build(pl->o, SECCOMP_FOR_BWRAP, &bpf, &bpflen, e) < 0) {
		free(bwrap);
		return -1;
	}
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
	l->flags = L_SHIM | L_PIDNS | L_SPARE_LEADER | L_OWN_NPROC;
	/* bwrap, the shim and its refusals' thread, the bridge */
	l->helpers = 3 + (pl->bridge_fd >= 0);
	strv_free(&args);
	free(bwrap);
	return 0;
}

/*
 * A placeholder that reads ".": made here, before bwrap binds it onto
 * itself, unless another run's is there. Outside, git reads it during
 * the run as no redirection.
 */
static void
write_dot(const char *path)
{
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0)
		return;
	if (write(fd, ".\n", 2) != 2)
		(void)unlink(path);
	close(fd);
}

/* An empty file, or one that reads ".": a placeholder, as made. */
static int
placeholder_file(const char *path, const struct stat *st)
{
	char buf[3];
	ssize_t n;
	int fd;

	if (!S_ISREG(st->st_mode) || st->st_size > 2)
		return 0;
	if (st->st_size == 0)
		return 1;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n == 2 && memcmp(buf, ".\n", 2) == 0;
}

/*
 * Removing a placeholder while another sbx run has it mounted would detach
 * that run's read-only cover (the kernel unmounts what lies on a removed
 * name in every namespace). So each run holds a shared lock on the folder
 * of each placeholder while its sandbox lives, and removes a placeholder
 * only if it can take the lock exclusively at once: the last run out
 * cleans up. One lock per folder: flock() locks belong to an open file
 * description, so two descriptors of one run on one folder would refuse
 * each other the exclusive lock.
 */
int
bwrap_prepare(struct launch *l, struct sbx_err *e)
{
	struct bwrap_priv *bp = l->priv;
	size_t i, j;
	char *dir;

	(void)e;
	bp->lock = xcalloc(bp->placeholders.n + 1, sizeof(int));
	for (i = 0; i < bp->placeholders.n; i++) {
		dir = folder_of(bp->placeholders.v[i]);
		for (j = 0; j < bp->lockdir.n && strcmp(bp->lockdir.v[j], dir);
		    j++)
			;
		if (j == bp->lockdir.n) {
			strv_push(&bp->lockdir, dir);
			bp->lock[j] = open(dir, O_RDONLY | O_DIRECTORY |
			    O_CLOEXEC);
			if (bp->lock[j] >= 0)
				while (flock(bp->lock[j], LOCK_SH) < 0 &&
				    errno == EINTR)
					;
		}
		free(dir);
	}
	for (i = 0; i < bp->dots.n; i++)
		write_dot(bp->dots.v[i]);
	return 0;
}

/* The last run out removes the placeholders: each still empty, as made. */
void
bwrap_finish(struct launch *l)
{
	struct bwrap_priv *bp = l->priv;
	struct stat st;
	size_t i, j;
	char *dir;

	for (j = 0; bp->lock && j < bp->lockdir.n; j++) {
		if (bp->lock[j] < 0)
			continue;
		if (flock(bp->lock[j], LOCK_EX | LOCK_NB) < 0) {
			close(bp->lock[j]);
			continue;
		}
		for (i = bp->placeholders.n; i-- > 0; ) {
			const char *p = bp->placeholders.v[i];

			dir = folder_of(p);
			if (strcmp(dir, bp->lockdir.v[j]) == 0 &&
			    lstat(p, &st) == 0) {
				if (S_ISDIR(st.st_mode))
					rmdir(p);
				else if (placeholder_file(p, &st))
					unlink(p);
			}
			free(dir);
		}
		close(bp->lock[j]);
	}
	free(bp->lock);
	bp->lock = NULL;
	strv_free(&bp->lockdir);
}

void
bwrap_release(void *priv)
{
	struct bwrap_priv *bp = priv;
	size_t i;

	if (bp == NULL)
		return;
	strv_free(&bp->placeholders);
	strv_free(&bp->dots);
	strv_free(&bp->seal);
	strv_free(&bp->reopen);
	for (i = 0; i < bp->binds.n; i++)
		if (bp->fds[i] >= 0)
			close(bp->fds[i]);
	free(bp->fds);
	strv_free(&bp->binds);
	strv_free(&bp->checks);
	free(bp->failed);
	strv_free(&bp->lockdir);
	free(bp->lock);
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
