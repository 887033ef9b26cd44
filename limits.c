/*
 * limits.c: the resource limits (--mem, --procs, --file-size, --cpu) and
 * the usage in the result. Each limit holds by the strongest mechanism
 * the machine offers, chosen once before the run (limits_plan()), so that
 * --dry-run and --probe say which:
 *
 *  - a cgroup for --mem and --procs, bounding the whole tree: cgroup v2
 *    where a folder at or above sbx's own group has the memory and pids
 *    controllers and sbx may write there (root, or a delegated subtree);
 *    else cgroup v1, where those hierarchies are mounted (the v1/v2 hybrid
 *    many CI machines run) and sbx may make a group in them. The group is
 *    made below sbx's own, so every limit above it still applies;
 *  - else an rlimit per process: RLIMIT_DATA for --mem (not RLIMIT_AS,
 *    which runtimes that reserve large address ranges, Go, V8, the JVM,
 *    exceed at start without using them); RLIMIT_NPROC for --procs, which
 *    the kernel counts per user: inside bwrap's own user namespace it
 *    counts the sandbox's processes only, so the shim sets it there
 *    (L_OWN_NPROC); elsewhere it counts all the user's processes, so sbx
 *    adds those running now; root is exempt from it everywhere, so --procs
 *    as root without a cgroup is refused;
 *  - always RLIMIT_FSIZE for --file-size; RLIMIT_CPU for --cpu, per
 *    process, and sbx also adds up the tree's CPU time and ends the run
 *    when the total reaches the limit.
 *
 * The child joins the groups and takes the rlimits before exec
 * (limits_child(): async-signal-safe, on what limits_prepare() opened).
 * After the run, every descendant reaped (by sbx, a subreaper, or by a
 * reaper below it that sbx reaped in turn), sbx reads the tree's usage
 * from getrusage(RUSAGE_CHILDREN), the groups' peaks and which limit the
 * kernel enforced, and removes the groups; an exit that skips that (fail())
 * removes them too. Every descriptor opened here is close-on-exec.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "sbx.h"

enum mech { M_NONE, M_RLIMIT, M_CG1, M_CG2 };
static const char *const mech_names[] = { "none", "rlimit", "cgroup-v1",
    "cgroup-v2" };

#define CG_MEM	0	/* the memory group (v2: the one group) */
#define CG_PIDS	1	/* v1 only */

struct cgroup {
	char	*parent;	/* where it is made */
	char	*dir;		/* once made */
	int	 join;		/* its cgroup.procs, for the child; -1 */
};

struct rlim {
	int	 res;
	rlim_t	 cur;
	rlim_t	 max;
};

struct limits {
	const struct sbx_opts	*o;
	enum mech		 mem;	/* how --mem holds */
	enum mech		 procs;	/* how --procs holds */
	struct cgroup		 cg[2];
	struct rlim		 rl[4];
	size_t			 nrl;
	struct rusage		 base;	/* sbx's children's before the run */
	int			 helpers;	/* sbx's own in the groups */
	int64_t			 cpu_next;	/* when to add up the tree */
	unsigned		 hit;	/* LIMIT_* */
};

static struct limits *current;	/* for the exit path */
static void at_exit(void);
static int64_t first_look(int64_t);

/* ---- cgroup files ---- */

static int
write_file(const char *dir, const char *name, const char *val)
{
	char *path = path_join(dir, name);
	int fd, rc = -1, saved;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
		rc = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ?
		    0 : -1;
		saved = errno;
		close(fd);
		errno = saved;
	}
	free(path);
	return rc;
}

static ssize_t
read_file(const char *dir, const char *name, char *buf, size_t size)
{
	char *path = path_join(dir, name);
	ssize_t n = -1;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	free(path);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* The number after "key " in a flat keyed file (memory.events); -1. */
static long long
read_key(const char *dir, const char *name, const char *key)
{
	char buf[4096], *p = buf;
	size_t k = strlen(key);

	if (read_file(dir, name, buf, sizeof(buf)) <= 0)
		return -1;
	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, k) == 0 && p[k] == ' ')
			return strtoll(p + k + 1, NULL, 10);
	return -1;
}

static long long
read_num(const char *dir, const char *name)
{
	char buf[64];

	if (read_file(dir, name, buf, sizeof(buf)) <= 0 ||
	    buf[0] < '0' || buf[0] > '9')
		return -1;
	return strtoll(buf, NULL, 10);
}

/* ---- where a group can be made ---- */

/*
 * The mount of a cgroup hierarchy from /proc/self/mountinfo: v2 (ctl
 * NULL) or the v1 one holding controller ctl; its mount point and the
 * group path it shows as its root.
 */
static int
find_mount(const char *ctl, char **point, char **root)
{
	char line[4096], *f[10], *sep, *opts, *o, *save;
	FILE *m = fopen("/proc/self/mountinfo", "re");
	int found = 0, i;

	if (m == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), m)) {
		/* id parent dev root point opts [tags] - type source super */
		if ((sep = strstr(line, " - ")) == NULL)
			continue;
		*sep = '\0';
		f[0] = strtok_r(line, " ", &save);
		for (i = 1; i < 5 && f[i - 1]; i++)
			f[i] = strtok_r(NULL, " ", &save);
		o = strtok_r(sep + 3, " ", &save);
		(void)strtok_r(NULL, " ", &save);
		opts = strtok_r(NULL, " \n", &save);
		if (i < 5 || f[4] == NULL || o == NULL || opts == NULL)
			continue;
		if (ctl == NULL)
			found = strcmp(o, "cgroup2") == 0;
		else if (strcmp(o, "cgroup") == 0)
			for (o = strtok_r(opts, ",", &save); o && !found;
			    o = strtok_r(NULL, ",", &save))
				found = strcmp(o, ctl) == 0;
		if (found) {
			*root = xstrdup(f[3]);
			*point = xstrdup(f[4]);
		}
	}
	fclose(m);
	return found;
}

/* sbx's own group in the hierarchy of ctl (NULL: v2's "0::"). */
static char *
own_group(const char *ctl)
{
	char line[4096], *path, *c, *col;
	FILE *f = fopen("/proc/self/cgroup", "re");
	char *found = NULL;

	if (f == NULL)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if ((c = strchr(line, ':')) == NULL ||
		    (path = strchr(c + 1, ':')) == NULL)
			continue;
		*path++ = '\0';
		if (ctl == NULL) {
			if (strcmp(line, "0") == 0 && c[1] == '\0')
				found = xstrdup(path);
			continue;
		}
		for (c = strtok_r(c + 1, ",", &col); c && !found;
		    c = strtok_r(NULL, ",", &col))
			if (strcmp(c, ctl) == 0)
				found = xstrdup(path);
	}
	fclose(f);
	return found;
}

/* Whether v2 folder dir enables every controller in need for children. */
static int
has_controllers(const char *dir, int mem, int pids)
{
	char buf[512], *w, *save;
	int have_mem = 0, have_pids = 0;

	if (read_file(dir, "cgroup.subtree_control", buf, sizeof(buf)) < 0)
		return 0;
	for (w = strtok_r(buf, " \n", &save); w; w = strtok_r(NULL, " \n",
	    &save)) {
		have_mem |= strcmp(w, "memory") == 0;
		have_pids |= strcmp(w, "pids") == 0;
	}
	return (!mem || have_mem) && (!pids || have_pids);
}

static int
writable(const char *dir)
{
	char *procs = path_join(dir, "cgroup.procs");
	int ok = access(dir, W_OK) == 0 && access(procs, W_OK) == 0;

	free(procs);
	return ok;
}

/*
 * The folder to make a group in: sbx's own group's folder or the nearest
 * one above it that serves (v2: has the controllers; both: writable, with
 * a writable cgroup.procs, which moving a process needs), never above the
 * mount. NULL when none does.
 */
static char *
group_parent(const char *ctl, int v2, int mem, int pids)
{
	char *point = NULL, *root = NULL, *own, *dir = NULL, *slash;
	size_t rl, pl;

	if (!find_mount(ctl, &point, &root) ||
	    (own = own_group(v2 ? NULL : ctl)) == NULL) {
		free(point);
		free(root);
		return NULL;
	}
	rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (strncmp(own, root, rl) == 0 && (own[rl] == '/' || own[rl] == '\0'))
		dir = xasprintf("%s%s", point, strcmp(own + rl, "/") ?
		    own + rl : "");
	pl = strlen(point);
	while (dir && !((!v2 || has_controllers(dir, mem, pids)) &&
	    writable(dir))) {
		slash = strrchr(dir, '/');
		if (strlen(dir) <= pl || slash == NULL || slash < dir + pl) {
			free(dir);
			dir = NULL;
		} else
			*slash = '\0';
	}
	free(point);
	free(root);
	free(own);
	return dir;
}

/* ---- the plan ---- */

static void
find_groups(struct limits *lim)
{
	const struct sbx_opts *o = lim->o;
	int mem = o->mem > 0, pids = o->procs > 0;

	if ((lim->cg[CG_MEM].parent = group_parent(NULL, 1, mem, pids))) {
		lim->mem = mem ? M_CG2 : M_NONE;
		lim->procs = pids ? M_CG2 : M_NONE;
		return;
	}
	if (mem && (lim->cg[CG_MEM].parent = group_parent("memory", 0, 1, 0)))
		lim->mem = M_CG1;
	if (pids && (lim->cg[CG_PIDS].parent = group_parent("pids", 0, 0, 1)))
		lim->procs = M_CG1;
}

/* How each limit will hold; an error when --procs cannot hold at all. */
int
limits_plan(const struct sbx_opts *o, struct limits **lp, struct sbx_err *e)
{
	struct limits *lim = xcalloc(1, sizeof(*lim));

	lim->o = o;
	lim->cg[0].join = lim->cg[1].join = -1;
	lim->cpu_next = -1;
	*lp = lim;
#ifdef __linux__
	if (o->mem > 0 || o->procs > 0)
		find_groups(lim);
#else
	/*
	 * macOS counts RLIMIT_NPROC per user with no namespace to narrow it,
	 * and bounds no memory a program maps (malloc's large blocks) by
	 * RLIMIT_DATA: neither limit would hold as asked.
	 */
	if (o->mem > 0)
		return sbx_errf(e, ERR_POLICY, "--mem: this platform offers no "
		    "memory limit for a process tree");
	if (o->procs > 0)
		return sbx_errf(e, ERR_POLICY, "--procs: this platform counts "
		    "processes only per user");
#endif
	if (o->mem > 0 && lim->mem == M_NONE)
		lim->mem = M_RLIMIT;
	if (o->procs > 0 && lim->procs == M_NONE)
		lim->procs = M_RLIMIT;
	if (lim->procs == M_RLIMIT && getuid() == 0)
		return sbx_errf(e, ERR_POLICY, "--procs: no cgroup can be made "
		    "here, and root is exempt from RLIMIT_NPROC");
	return 0;
}

/* --procs for the shim to set inside its user namespace, or 0. */
long
limits_nproc(const struct limits *lim)
{
	return lim && lim->procs == M_RLIMIT ? lim->o->procs : 0;
}

static const char *
where(const struct limits *lim, int which)
{
	const struct cgroup *c = &lim->cg[which];

	return c->parent ? c->parent : "";
}

/* --dry-run: how each limit asked for holds. */
void
limits_describe(const struct limits *lim, struct strv *dry)
{
	const struct sbx_opts *o = lim->o;
	int pids = lim->procs == M_CG1 ? CG_PIDS : CG_MEM;

	if (o->mem > 0)
		strv_pushf(dry, "# limit memory=%zu: %s%s%s", o->mem,
		    mech_names[lim->mem], lim->mem >= M_CG1 ? " below " : "",
		    lim->mem >= M_CG1 ? where(lim, CG_MEM) : "");
	if (o->procs > 0)
		strv_pushf(dry, "# limit procs=%ld: %s%s%s", o->procs,
		    mech_names[lim->procs], lim->procs >= M_CG1 ? " below " :
		    "", lim->procs >= M_CG1 ? where(lim, pids) : "");
	if (o->file_size > 0)
		strv_pushf(dry, "# limit file_size=%zu: rlimit", o->file_size);
	if (o->cpu_ms > 0)
		strv_pushf(dry, "# limit cpu=%lldms: rlimit, and the tree's "
		    "total", (long long)o->cpu_ms);
}

/* A trial group in parent: made and removed at once. */
static int
trial(const char *parent)
{
	char *dir;
	int ok;

	if (parent == NULL)
		return 0;
	dir = xasprintf("%s/sbx-probe-%ld", parent, (long)getpid());
	ok = mkdir(dir, 0755) == 0;
	if (ok)
		rmdir(dir);
	free(dir);
	return ok;
}

/* --probe: the mechanism each limit would use here. */
void
limits_probe(const struct sbx_opts *o, struct strv *out)
{
	struct sbx_opts all = *o;
	struct limits lim;
	struct sbx_err e;
	struct limits *p = NULL;

	all.mem = 1;
	all.procs = 1;
	if (limits_plan(&all, &p, &e) < 0 && p->procs == M_RLIMIT)
		p->procs = M_NONE;
	lim = *p;
	if (lim.mem >= M_CG1 && !trial(lim.cg[CG_MEM].parent))
		lim.mem = M_RLIMIT;
	if (lim.procs >= M_CG1 && !trial(lim.cg[lim.procs == M_CG1 ?
	    CG_PIDS : CG_MEM].parent))
		lim.procs = getuid() == 0 ? M_NONE : M_RLIMIT;
	strv_pushf(out, "limit_mem=%s", mech_names[lim.mem]);
	strv_pushf(out, "limit_procs=%s", mech_names[lim.procs]);
	strv_push(out, "limit_file_size=rlimit");
	strv_push(out, "limit_cpu=rlimit");
	limits_free(p);
}

/* ---- before the run ---- */

static int
make_group(struct cgroup *c, int v1, const char *what, struct sbx_err *e)
{
	static unsigned seq;
	char *procs;

	c->dir = xasprintf("%s/sbx-%ld-%u", c->parent, (long)getpid(), seq++);
	if (mkdir(c->dir, 0755) < 0) {
		free(c->dir);
		c->dir = NULL;
		return sbx_errf(e, ERR_POLICY, "%s: cgroup below %s: %s", what,
		    shown(c->parent), strerror(errno));
	}
	/*
	 * v1: the child joins by its thread ("tasks"): moving the current
	 * thread alone skips the kernel's lock of every thread group, whose
	 * taking waits out an RCU grace period (3 ms here, on each launch).
	 * Just forked, the child has that one thread.
	 */
	procs = path_join(c->dir, v1 ? "tasks" : "cgroup.procs");
	c->join = open(procs, O_WRONLY | O_CLOEXEC);
	free(procs);
	if (c->join < 0)
		return sbx_errf(e, ERR_POLICY, "%s: cgroup %s: %s", what,
		    shown(c->dir), strerror(errno));
	return 0;
}

static int
set_group(struct cgroup *c, const char *file, const char *val,
    const char *what, struct sbx_err *e)
{
	if (write_file(c->dir, file, val) < 0)
		return sbx_errf(e, ERR_POLICY, "%s: %s/%s: %s", what,
		    shown(c->dir), file, strerror(errno));
	return 0;
}

/*
 * The groups, with their limits. helpers: processes of sbx's own that
 * run in them (bwrap, the shim, a keeper), which --procs does not count.
 * Swap is closed to the group (v2 memory.swap.max, v1 memsw), so that
 * --mem bounds memory and swap together.
 */
static int
make_groups(struct limits *lim, int helpers, struct sbx_err *e)
{
	char mem[32], procs[32];
	struct cgroup *pc = &lim->cg[lim->procs == M_CG1 ? CG_PIDS : CG_MEM];

	snprintf(mem, sizeof(mem), "%zu", lim->o->mem);
	snprintf(procs, sizeof(procs), "%ld", lim->o->procs + helpers);
	if (lim->mem == M_CG2 || lim->procs == M_CG2) {
		if (make_group(&lim->cg[CG_MEM], 0, "--mem/--procs", e) < 0 ||
		    (lim->mem == M_CG2 && set_group(&lim->cg[CG_MEM],
		    "memory.max", mem, "--mem", e) < 0))
			return -1;
		if (lim->mem == M_CG2)
			(void)write_file(lim->cg[CG_MEM].dir, "memory.swap.max",
			    "0");
	} else if (lim->mem == M_CG1) {
		if (make_group(&lim->cg[CG_MEM], 1, "--mem", e) < 0 ||
		    set_group(&lim->cg[CG_MEM], "memory.limit_in_bytes", mem,
		    "--mem", e) < 0)
			return -1;
		(void)write_file(lim->cg[CG_MEM].dir,
		    "memory.memsw.limit_in_bytes", mem);
	}
	if (lim->procs == M_CG1 && make_group(pc, 1, "--procs", e) < 0)
		return -1;
	if (lim->procs >= M_CG1 &&
	    set_group(pc, "pids.max", procs, "--procs", e) < 0)
		return -1;
	return 0;
}

/*
 * Tasks (threads) of the user now: what RLIMIT_NPROC counts. The owner of
 * /proc/PID picks the processes (reading every status file cost 4 ms of
 * a 15 ms launch); it is the effective user, and root for a process that
 * is not dumpable, so a set-user-ID or non-dumpable process of the user
 * goes uncounted, and the limit ends that much lower than asked.
 */
static long
user_tasks(void)
{
	char path[300], buf[512], *p;
	struct dirent *d;
	struct stat st;
	uid_t uid = getuid();
	long n = 0;
	ssize_t len;
	DIR *dir;
	int fd, i;

	if ((dir = opendir("/proc")) == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9' ||
		    fstatat(dirfd(dir), d->d_name, &st, 0) < 0 ||
		    st.st_uid != uid)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0 || (buf[len] = '\0', p = strrchr(buf, ')')) == NULL)
			continue;
		/* num_threads is field 20; p + 2 is field 3 */
		for (p += 2, i = 3; i < 20 && p; i++)
			if ((p = strchr(p, ' ')) != NULL)
				p++;
		if (p)
			n += strtol(p, NULL, 10);
	}
	closedir(dir);
	return n;
}

static void
add_rlimit(struct limits *lim, int res, rlim_t cur, rlim_t max)
{
	struct rlimit now;
	struct rlim *r = &lim->rl[lim->nrl++];

	/* Only ever lower: an unprivileged hard limit cannot be raised. */
	if (getrlimit(res, &now) == 0 && now.rlim_max != RLIM_INFINITY) {
		if (max > now.rlim_max)
			max = now.rlim_max;
		if (cur > max)
			cur = max;
	}
	r->res = res;
	r->cur = cur;
	r->max = max;
}

static void
plan_rlimits(struct limits *lim, unsigned flags)
{
	const struct sbx_opts *o = lim->o;
	rlim_t secs, n;

	if (lim->mem == M_RLIMIT)
		add_rlimit(lim, RLIMIT_DATA, o->mem, o->mem);

	if (lim->procs == M_RLIMIT && !(flags & L_OWN_NPROC)) {
		n = (rlim_t)(user_tasks() + o->procs + lim->helpers);
		add_rlimit(lim, RLIMIT_NPROC, n, n);
	}
	if (o->file_size > 0)
		add_rlimit(lim, RLIMIT_FSIZE, o->file_size, o->file_size);
	if (o->cpu_ms > 0) {
		/* Whole seconds: SIGXCPU at the limit, SIGKILL one later. */
		secs = (rlim_t)((o->cpu_ms + 999) / 1000);
		add_rlimit(lim, RLIMIT_CPU, secs, secs + 1);
	}
}

/*
 * Before the spawn: the groups made, the rlimits worked out, the usage
 * so far noted. proc.c's keeper (L_KEEPER) runs in the groups too.
 */
int
limits_prepare(struct limits *lim, const struct launch *l, struct sbx_err *e)
{
	static int registered;

	lim->nrl = 0;
	lim->hit = 0;
	current = lim;
	if (!registered && atexit(at_exit) == 0)
		registered = 1;
	getrusage(RUSAGE_CHILDREN, &lim->base);
	lim->helpers = l->helpers + ((l->flags & L_KEEPER) ? 1 : 0);
	if (make_groups(lim, lim->helpers, e) < 0)
		return -1;
	plan_rlimits(lim, l->flags);
	if (lim->o->cpu_ms > 0)
		lim->cpu_next = now_ms() + first_look(lim->o->cpu_ms);
	return 0;
}

/* In the child, before exec: only async-signal-safe calls. */
int
limits_child(const struct limits *lim)
{
	struct rlimit r;
	size_t i;

	for (i = 0; i < 2; i++)
		if (lim->cg[i].join >= 0 && write(lim->cg[i].join, "0", 1) < 0)
			return -1;
	for (i = 0; i < lim->nrl; i++) {
		r.rlim_cur = lim->rl[i].cur;
		r.rlim_max = lim->rl[i].max;
#ifdef __linux__
		/* The kernel's own call: libc's setrlimit() may fall back to
		 * signalling each of its threads, and this child can share
		 * sbx's memory (proc_spawn_shared()). */
		if (prlimit(0, lim->rl[i].res, &r, NULL) < 0)
			return -1;
#else
		if (setrlimit(lim->rl[i].res, &r) < 0)
			return -1;
#endif
	}
	return 0;
}

/* ---- during the run: the tree's CPU time ---- */

static int64_t
ms_of(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000 + tv->tv_usec / 1000;
}

/* The tree's CPU time so far: the reaped part, and the live part. */
static int64_t
tree_cpu_ms(const struct limits *lim)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return ms_of(&ru.ru_utime) - ms_of(&lim->base.ru_utime) +
	    ms_of(&ru.ru_stime) - ms_of(&lim->base.ru_stime) +
	    proc_tree_cpu_ms();
}

int64_t
limits_deadline(const struct limits *lim)
{
	return lim->cpu_next;
}

/*
 * The tree can spend at most one CPU's worth per CPU per unit of time, so
 * the next look at it is due when what is left could be spent at the
 * earliest: few looks while far from the limit, close ones near it.
 */
static int64_t
first_look(int64_t left_ms)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	left_ms /= ncpu > 0 ? ncpu : 1;
	return left_ms > 20 ? left_ms : 20;
}

/* Whether the tree's CPU time reached --cpu. */
int
limits_check(struct limits *lim, int64_t now)
{
	int64_t used;

	if (lim->cpu_next < 0 || now < lim->cpu_next)
		return 0;
	used = tree_cpu_ms(lim);
	if (used >= lim->o->cpu_ms) {
		lim->hit |= LIMIT_CPU;
		lim->cpu_next = -1;
		return 1;
	}
	lim->cpu_next = now + first_look(lim->o->cpu_ms - used);
	return 0;
}

/* ---- after the run ---- */

/*
 * The groups' peaks, and whether their limits ended or hampered the
 * command: the kernel killed a process of the tree for memory; or memory
 * ran short (the group reached its limit: a fork or an allocation in the
 * kernel failed, or the tree was held to reclaiming) and the command did
 * not succeed; or the group refused a fork.
 */
static void
group_usage(struct limits *lim, struct exec_result *res)
{
	const char *m = lim->cg[CG_MEM].dir;
	const char *p = lim->cg[lim->procs == M_CG1 ? CG_PIDS : CG_MEM].dir;
	int failed = !res->exited || res->exit_code != 0;
	long long v;

	if (m && lim->mem == M_CG2) {
		if ((v = read_num(m, "memory.peak")) >= 0)
			res->mem_peak_kb = v / 1024;
		if (read_key(m, "memory.events", "oom_kill") > 0 || (failed &&
		    read_key(m, "memory.events", "max") > 0))
			lim->hit |= LIMIT_MEM;
	} else if (m && lim->mem == M_CG1) {
		if ((v = read_num(m, "memory.max_usage_in_bytes")) >= 0)
			res->mem_peak_kb = v / 1024;
		if (read_key(m, "memory.oom_control", "oom_kill") > 0 ||
		    (failed && read_num(m, "memory.failcnt") > 0))
			lim->hit |= LIMIT_MEM;
	}
	if (p && lim->procs >= M_CG1) {
		/* The command's, as --procs counts them: not sbx's own. */
		if ((v = read_num(p, "pids.peak")) > lim->helpers)
			res->procs_peak = v - lim->helpers;
		if (read_key(p, "pids.events", "max") > 0)
			lim->hit |= LIMIT_PROCS;
	}
}

static void
remove_groups(struct limits *lim)
{
	size_t i;
	int tries;

	for (i = 0; i < 2; i++) {
		if (lim->cg[i].join >= 0)
			close(lim->cg[i].join);
		lim->cg[i].join = -1;
		if (lim->cg[i].dir == NULL)
			continue;
		/* The last tasks may still be leaving it. */
		for (tries = 0; rmdir(lim->cg[i].dir) < 0 && errno == EBUSY &&
		    tries < 100; tries++)
			usleep(1000);
		free(lim->cg[i].dir);
		lim->cg[i].dir = NULL;
	}
}

static void
at_exit(void)
{
	if (current)
		remove_groups(current);
}

/*
 * After the run, every descendant reaped: the usage, the groups' peaks,
 * which limit ended or hampered the command, and the groups removed.
 */
void
limits_finish(struct limits *lim, struct exec_result *res)
{
	struct rusage ru;
	int64_t rss;

	/* Which mechanism held --mem: under an rlimit an allocation that
	 * fails is the program's own error, which sbx cannot see. */
	if (lim->o->mem > 0)
		res->limit_mem = mech_names[lim->mem];
	if (res->started) {
		getrusage(RUSAGE_CHILDREN, &ru);
		rss = ru.ru_maxrss;
#ifdef __APPLE__
		rss /= 1024;	/* bytes there, KiB on Linux */
#endif
		res->have_usage = 1;
		res->cpu_user_ms = ms_of(&ru.ru_utime) -
		    ms_of(&lim->base.ru_utime);
		res->cpu_sys_ms = ms_of(&ru.ru_stime) -
		    ms_of(&lim->base.ru_stime);
		res->max_rss_kb = rss;
		group_usage(lim, res);
		if (res->signal == SIGXCPU)
			lim->hit |= LIMIT_CPU;
		if (res->signal == SIGXFSZ)
			lim->hit |= LIMIT_FSIZE;
		res->limit = lim->hit;
	}
	remove_groups(lim);
	lim->cpu_next = -1;
}

void
limits_free(struct limits *lim)
{
	if (lim == NULL)
		return;
	remove_groups(lim);
	if (current == lim)
		current = NULL;
	free(lim->cg[0].parent);
	free(lim->cg[1].parent);
	free(lim);
}
