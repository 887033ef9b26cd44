/*
 * bwrap.c: the bubblewrap backend. bwrap_build() is a pure function of the
 * options and the compiled policy: it fills the launch (argv, the bwrap
 * options passed NUL-separated on FD_ARGS, the seccomp program for
 * FD_SECCOMP, the placeholders bwrap will create) and neither forks, execs
 * nor exits. bwrap_probe() finds bwrap by absolute path outside every
 * writable folder and proves it works here with one real run, cached for
 * the process. Invariants: every path handed to bwrap is absolute, so none
 * can be read as an option; the sandbox always gets its own user, pid, ipc,
 * uts and (unless --net) network namespaces, a new session, no capabilities
 * once the shim has run (see shim.c for root), the seccomp filter,
 * and its own /dev and /proc mounted after the policy so no rule can hide
 * them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sbx.h"

#define PROBE_TIMEOUT_MS	10000

/*
 * Namespaces and privileges, the same for every run. --unshare-user also
 * when root: the command's capabilities then exist only in its own user
 * namespace, and the mounts made for it are locked there, so it cannot
 * unmount a read-only bind to uncover what lies below. --new-session leaves no controlling terminal, so TIOCSTI cannot push
 * input into the user's shell (CVE-2017-5226). --as-pid-1: sbx's shim is
 * the namespace's init, so bwrap forks no reaper of its own; when the shim
 * exits the kernel ends every process left inside.
 */
static const char *const base_opts[] = {
	"--unshare-user", "--unshare-pid",
	"--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	"--die-with-parent", "--new-session", "--as-pid-1", "--cap-drop", "ALL",
	"--ro-bind", "/", "/", NULL
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

/* An empty folder nobody can write: a read-only tmpfs of mode 0555. */
static void
empty_dir(struct strv *v, const char *path)
{
	push2(v, "--perms", "0555");
	push2(v, "--tmpfs", path);
	push2(v, "--remount-ro", path);
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
add_rule(struct launch *l, const struct rule *r)
{
	struct strv *v = &l->args;

	switch (r->kind) {
	case RULE_WRITE:
		/* A device the user asked to write needs device access. */
		push3(v, r->type == PATH_OTHER ? "--dev-bind" : "--bind",
		    r->path, r->path);
		break;
	case RULE_READONLY:
		if (r->create == PATH_MISSING) {
			push3(v, "--ro-bind", r->path, r->path);
			break;
		}
		/* A placeholder: bwrap makes the mount point on the host if
		 * missing, which keeps the path from being created inside.
		 * Also used for an existing empty one, which may be another
		 * run's placeholder and vanish before bwrap binds it. */
		if (r->create == PATH_DIR)
			empty_dir(v, r->path);
		else
			null_file(v, r->path);
		if (r->type == PATH_MISSING)
			strv_push(&l->placeholders, r->path);
		break;
	case RULE_DENY_READ:
		if (r->type == PATH_DIR)
			empty_dir(v, r->path);
		else
			null_file(v, r->path);
		break;
	}
}

int
bwrap_build(const struct sbx_opts *o, const struct policy *p,
    const char *bwrap, struct launch *l, struct sbx_err *e)
{
	char fd[16];
	size_t i;
	char **c;
	int root = geteuid() == 0;

	if (bwrap == NULL || bwrap[0] != '/')
		return sbx_errf(e, ERR_INTERNAL, "bwrap: no absolute path");
	if (seccomp_build(o, SECCOMP_FOR_BWRAP, &l->seccomp, &l->seccomp_len,
	    e) < 0)
		return -1;
	l->backend = BACKEND_BWRAP;
	l->shim = 1;
	for (i = 0; base_opts[i]; i++)
		strv_push(&l->args, base_opts[i]);
	/*
	 * Run by root, the sandbox's uid 0 owns the host's device nodes that
	 * --dev binds in. The shim needs CAP_SYS_ADMIN to remount them
	 * read-only and CAP_SETPCAP to then drop every capability for good;
	 * nothing of the command's runs before it has.
	 */
	if (root) {
		push2(&l->args, "--cap-add", "CAP_SYS_ADMIN");
		push2(&l->args, "--cap-add", "CAP_SETPCAP");
	} else {
		/*
		 * A nested user namespace could regain capabilities for
		 * mount(2). The filter refuses them in any case; unprivileged,
		 * bwrap can say so too. As root it would nest the shim in a
		 * namespace that does not own the mounts it must remount.
		 */
		strv_push(&l->args, "--disable-userns");
	}
	if (o->net != NET_ALL)
		strv_push(&l->args, "--unshare-net");
	for (i = 0; i < p->n; i++)
		add_rule(l, &p->r[i]);
	/* After the rules: even a rule on / or /dev cannot replace these. */
	push2(&l->args, "--dev", "/dev");
	push2(&l->args, "--proc", "/proc");
	/*
	 * sysctl and /proc/sysrq-trigger check the uid, not a capability:
	 * run by root, the sandbox's uid 0 is the host's uid 0 and could set
	 * kernel.core_pattern. bwrap's own cover of /proc/sys is skipped in a
	 * user namespace, so the whole new /proc is made read-only.
	 */
	push2(&l->args, "--remount-ro", "/proc");
	push2(&l->args, "--chdir", o->root);

	strv_push(&l->argv, bwrap);
	snprintf(fd, sizeof(fd), "%d", FD_ARGS);
	push2(&l->argv, "--args", fd);
	strv_push(&l->argv, "--");
	push2(&l->argv, o->self, SHIM_ARG);
	/* The shim installs the filter (FD_SECCOMP); as root, after --ro-dev. */
	if (root)
		strv_push(&l->argv, "--ro-dev");
	strv_push(&l->argv, "--seccomp");
	if (o->net == NET_PROXY)
		strv_push(&l->argv, "--bridge");
	strv_push(&l->argv, "--wrapped-env");	/* bwrap_env() */
	for (i = 0; i + 1 < o->reopen.n; i += 2) {
		strv_push(&l->argv, "--reopen");
		push2(&l->argv, o->reopen.v[i], o->reopen.v[i + 1]);
	}
	strv_push(&l->argv, "--");
	for (c = o->cmd; c && *c; c++)
		strv_push(&l->argv, *c);
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
void
bwrap_env(struct launch *l, const struct strv *env)
{
	char name[32];
	size_t i;

	if (l->env_in_args)
		return;
	for (i = 0; i < env->n; i++) {
		snprintf(name, sizeof(name), "%s%zu", SHIM_ENV, i);
		strv_push(&l->args, "--setenv");
		push2(&l->args, name, env->v[i]);
	}
	l->env_in_args = 1;
}

/* ---- probe ---- */

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

const char *
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

/* The child of the probe run: stdin and stdout /dev/null, stderr the pipe. */
static void
probe_child(const char *bwrap, int errfd)
{
	const char *argv[32];
	char *noenv[] = { NULL };
	size_t n = 0, i;
	int nul;

	argv[n++] = "bwrap";
	for (i = 0; base_opts[i]; i++)
		argv[n++] = base_opts[i];
	argv[n++] = "--unshare-net";
	argv[n++] = "--dev";
	argv[n++] = "/dev";
	argv[n++] = "--proc";
	argv[n++] = "/proc";
	argv[n++] = "--";
	argv[n++] = bwrap;
	argv[n++] = "--version";
	argv[n] = NULL;
	if ((nul = open("/dev/null", O_RDWR)) < 0 ||
	    dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(errfd, 2) < 0)
		_exit(127);
	/* No environment, as for the launch (bwrap_env()). */
	execve(bwrap, (char *const *)argv, noenv);
	_exit(127);
}

/* Read the child's stderr until EOF or the deadline; keep the first line. */
static void
probe_read(int fd, char *line, size_t size)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	int64_t deadline = now_ms() + PROBE_TIMEOUT_MS;
	size_t len = 0;
	char buf[512];
	ssize_t n;

	line[0] = '\0';
	for (;;) {
		int64_t left = deadline - now_ms();

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return;
		if ((n = read(fd, buf, sizeof(buf))) <= 0)
			return;
		if (len + 1 < size) {
			size_t k = (size_t)n < size - 1 - len ?
			    (size_t)n : size - 1 - len;

			memcpy(line + len, buf, k);
			len += k;
			line[len] = '\0';
		}
	}
}

static int
probe_run(const char *bwrap, struct sbx_err *e)
{
	char line[512], *nl;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return sbx_errf(e, ERR_SPAWN, "pipe: %s", strerror(errno));
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return sbx_errf(e, ERR_SPAWN, "fork: %s", strerror(errno));
	}
	if (pid == 0)
		probe_child(bwrap, p[1]);
	close(p[1]);
	probe_read(p[0], line, sizeof(line));
	close(p[0]);
	kill(pid, SIGKILL);	/* a no-op once it exited; we have not reaped */
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return sbx_errf(e, ERR_UNAVAILABLE, "bwrap: probe: "
			    "waitpid: %s", strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if ((nl = strchr(line, '\n')) != NULL)
		*nl = '\0';
	if (line[0] == '\0')
		snprintf(line, sizeof(line), "exit status %d",
		    WIFEXITED(status) ? WEXITSTATUS(status) :
		    128 + WTERMSIG(status));
	return sbx_errf(e, ERR_UNAVAILABLE, "bwrap: %s: %s", line,
	    bwrap_fix(line));
}

int
bwrap_find(const struct sbx_opts *o, char **path, struct sbx_err *e)
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
		    "writable folder; install bubblewrap elsewhere", *path);
		free(*path);
		*path = NULL;
		return -1;
	}
	return 0;
}

int
bwrap_probe(const struct sbx_opts *o, char **path, struct sbx_err *e)
{
	static int done, ok;
	static char *found;
	static struct sbx_err saved;

	if (!done) {
		done = 1;
		memset(&saved, 0, sizeof(saved));
		if (bwrap_find(o, &found, &saved) == 0 &&
		    probe_run(found, &saved) == 0)
			ok = 1;
	}
	if (!ok) {
		*e = saved;
		return -1;
	}
	*path = xstrdup(found);
	return 0;
}
