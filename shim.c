/*
 * shim.c: sbx's own binary in a hidden mode, run inside the bwrap and
 * Seatbelt sandboxes as the command's parent:
 *
 *	sbx --sbx-internal-shim [--ro-dev] [--seccomp] [--bridge]
 *	    [--capture N [--local L]] [--wrapped-env] [--tty] [--procs N] [--mounts]
 *	    [--reopen FD PATH]... -- CMD...
 *
 * It runs only as part of a launch: proc.c queues a go message on the
 * status socket (FD_STATUS) before the sandbox starts, and without one the
 * shim refuses. bwrap reports a command that was not found as its own exit
 * status 1 and a signal as 128+N, so sbx could not tell "never started"
 * from "ran and exited". The shim tells sbx on FD_STATUS, in proc.c's one
 * encoding (proc_status()): started when it runs (the sandbox is up), the
 * errno when the command cannot be executed, the command's exact wait
 * status, or which setup step failed. With --bridge it first listens on
 * 127.0.0.1:BRIDGE_PORT in the sandbox's network namespace and forks the
 * bridge that hands each connection to sbx's proxy over FD_BRIDGE, so the
 * port is open before the command runs. With --capture N (bwrap, under
 * --allow-host) it first makes the sockets of netns.c's capture in the
 * sandbox's network namespace (DNS, N ports) and hands them to sbx, which
 * sets them up and serves them: the sandbox's resolver and the capture of
 * connections to the names it answers; with --local L also two sockets
 * for each of L host loopback ports (--allow-host localhost:PORT), which
 * sbx binds to 127.0.0.1:PORT and [::1]:PORT inside and relays. FD_STATUS and FD_BRIDGE are made
 * close-on-exec at once: the command inherits neither. Under Seatbelt,
 * FD_ARGS still holds the profile sandbox-exec read (-f /dev/fd/3): the
 * shim closes it (under bwrap it is already closed).
 *
 * With --mounts (bwrap), before anything else, it checks the mounts bwrap
 * made against the list on FD_MOUNTS (check_mounts()): a path swapped for
 * a symbolic link while sbx started sends bwrap's mount elsewhere, and
 * then nothing runs.
 *
 * The shim, not bwrap, installs the seccomp filter (--seccomp: from
 * FD_SECCOMP), so that first, run by root (--ro-dev), it can use the two
 * capabilities bwrap left it: bwrap binds the host's /dev/null, /dev/tty,
 * ... writable, and the sandbox's uid 0, being the host's, could chmod or
 * chown those host nodes. They are remounted read-only (device access
 * kept), then every capability goes for good (bounding set, securebits
 * locked) before the filter and the command. Any failure here is reported
 * with its step and nothing runs. The shim ignores SIGTERM, SIGINT and
 * SIGHUP so that it outlives the command to report it; sbx's SIGKILL ends
 * it.
 *
 * With --tty, fd 0 is sbx's own pseudo-terminal: the shim, the session's
 * leader (bwrap's --new-session; proc.c's setsid() under Seatbelt), takes
 * it as its controlling terminal and runs the command in a process group
 * of its own in its foreground, as a shell runs a job, so that Ctrl-C and
 * Ctrl-Z reach the command; it reports the command's stops and continues
 * too. With --procs N it sets RLIMIT_NPROC for the command: counted in the
 * sandbox's own user namespace, N more than the shim and its bridge.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "sbx.h"

static void
send_status(int kind, int step, int arg, int v)
{
	proc_status(FD_STATUS, kind, step, arg, v);
}

/* SBX_TIMING: what part (TP_*) took since *t, to sbx; *t starts anew. */
static void
time_part(int part, int64_t *t)
{
	int64_t now;

	if (!timing_on)
		return;
	now = timing_us();
	send_status(ST_TIME, part, 0, (int)(now - *t));
	*t = now;
}

/* The filter's listener, until sbx's supervisor has it; -1: none. */
static int listener = -1;

#ifdef __linux__

static int
devices_readonly(void)
{
	size_t i;

	for (i = 0; sbx_devices[i]; i++)
		if (mount(NULL, sbx_devices[i], NULL, MS_REMOUNT | MS_BIND |
		    MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL) < 0 &&
		    errno != ENOENT)
			return -1;
	return 0;
}

static int
load_seccomp(void)
{
	unsigned char buf[65536];
	size_t n = 0;
	int64_t t;
	ssize_t r;

	while (n < sizeof(buf) &&
	    ((r = read(FD_SECCOMP, buf + n, sizeof(buf) - n)) > 0 ||
	    (r < 0 && errno == EINTR)))
		if (r > 0)
			n += (size_t)r;
	close(FD_SECCOMP);
	if (n == 0 || n == sizeof(buf)) {
		errno = EINVAL;
		return -1;
	}
	/*
	 * Always with a listener: sbx's supervisor holds the protected names
	 * and reports the refusals through it. Without one (a kernel before
	 * 5.0, a sandbox around this one that took it) the launch fails:
	 * sbx checked for it before, and never runs with less.
	 */
	t = timing_on ? timing_us() : 0;
	if ((listener = seccomp_install(buf, n, 1)) < 0)
		return -1;
	set_cloexec(listener);
	time_part(TP_SECCOMP, &t);
	return 0;
}
#endif

/*
 * The capture's sockets (netns_shim()) take descriptors past 64, and a
 * process with a second thread (the refusals') that grows its descriptor
 * table waits out an RCU grace period in the kernel (expand_fdtable():
 * 9-16 ms a launch here). Grown while the shim has one thread, it costs
 * nothing; the kernel never shrinks it.
 */
static void
reserve_fds(int nports)
{
	int fd = fcntl(FD_STATUS, F_DUPFD_CLOEXEC, 2 * (FD_MOUNTS + 3 + nports));

	if (fd >= 0)
		close(fd);
}

/* Before anything of the command's: devices, capabilities, filter. */
static int
confine(int ro_dev, int seccomp)
{
#ifdef __linux__
	if (ro_dev && devices_readonly() < 0)
		return STEP_DEVICES;
	if (ro_dev && caps_drop(0, 1) < 0)
		return STEP_CAPS;
	if (seccomp && load_seccomp() < 0)
		return STEP_SECCOMP;
#else
	(void)ro_dev;
	(void)seccomp;
#endif
	return -1;
}

/*
 * --reopen N PATH: make fd N, inherited from sbx's caller, a descriptor of
 * the same file opened by name inside the sandbox, with the same access
 * mode, status flags and offset, so that /proc/self/fd/N leads to the
 * sandbox's mounts and not the host's. ESTALE: another file has the name.
 */
static int
reopen_fd(int fd, const char *path)
{
	struct stat a, b;
	int fl, nfd;
	off_t off;

	if ((fl = fcntl(fd, F_GETFL)) < 0 || fstat(fd, &a) < 0)
		return -1;
	/* O_NONBLOCK: a FIFO put in the file's place cannot hold the shim. */
	nfd = open(path, (fl & (O_ACCMODE | O_APPEND)) | O_NOCTTY |
	    O_NONBLOCK | O_CLOEXEC);
	if (nfd < 0)
		return -1;
	if (fstat(nfd, &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino || a.st_rdev != b.st_rdev ||
	    (a.st_mode & S_IFMT) != (b.st_mode & S_IFMT)) {
		close(nfd);
		errno = ESTALE;
		return -1;
	}
	if (S_ISREG(a.st_mode) && ((off = lseek(fd, 0, SEEK_CUR)) < 0 ||
	    lseek(nfd, off, SEEK_SET) < 0))
		goto fail;
	if (fcntl(nfd, F_SETFL, fl) < 0 || dup2(nfd, fd) < 0)
		goto fail;
	close(nfd);
	return 0;
fail:
	close(nfd);
	return -1;
}

static int
bridge_listen(void)
{
	struct sockaddr_in sin;
	int fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(BRIDGE_PORT);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(fd, 128) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
start_bridge(void)
{
	pid_t pid;
	int lfd;

	if ((lfd = bridge_listen()) < 0)
		return -1;
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
#ifdef __linux__
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
#endif
		_exit(proxy_bridge_run(lfd, FD_BRIDGE) < 0 ? 1 : 0);
	}
	close(lfd);
	close(FD_BRIDGE);
	return 0;
}

extern char **environ;

/*
 * The command's environment: with --wrapped-env (bwrap) each variable
 * arrives as SBX_ENV_<n>=NAME=VALUE (bwrap_env()) and nothing else
 * passes; otherwise (Seatbelt) the shim's own, as it is.
 */
static char **
command_env(int wrapped)
{
	size_t n = 0, k = 0, len = strlen(SHIM_ENV);
	char **v, **e, *eq;

	if (!wrapped)
		return environ;
	for (e = environ; *e; e++)
		n++;
	v = xcalloc(n + 1, sizeof(char *));
	for (e = environ; *e; e++)
		if (strncmp(*e, SHIM_ENV, len) == 0 &&
		    (eq = strchr(*e, '=')) != NULL)
			v[k++] = eq + 1;
	return v;
}

static void
run_command(char **cmd, char **envp, int tty)
{
	if (tty)
		tty_foreground(0);
	proc_signals_default();
	exec_command(cmd, envp);
	send_status(ST_EXEC, 0, 0, errno);
	_exit(errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

/* The command's start in the shim's memory (proc_spawn_shared()). */
struct command_start {
	char	**argv;
	char	**envp;
};

static int
command_child(void *arg)
{
	struct command_start *c = arg;

	run_command(c->argv, c->envp, 0);
	return EXIT_SBX;
}

/*
 * Started by sbx as part of a launch, or not at all. Run by hand, the
 * shim would run its command with no sandbox, no result and no warning,
 * and a tool that lets "sbx ..." through as safe would let that through
 * too. proc.c leaves a go message queued on the status socket before the
 * launch starts; a command line alone cannot make a descriptor that is a
 * Unix packet socket holding one.
 */
static int
launched_by_sbx(void)
{
	struct status_msg_peek { char kind, step, arg, pad; int32_t val; } m;
	int type = 0, domain = 0;
	socklen_t len = sizeof(type), dlen = sizeof(domain);
	ssize_t n;

	if (getsockopt(FD_STATUS, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    type != SOCK_SEQPACKET)
		return 0;
#ifdef SO_DOMAIN
	if (getsockopt(FD_STATUS, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) < 0 ||
	    domain != AF_UNIX)
		return 0;
#else
	(void)domain;
	(void)dlen;
#endif
	n = recv(FD_STATUS, &m, sizeof(m), MSG_DONTWAIT);
	if (n < 1 || m.kind != ST_GO)
		return 0;
	/* sbx's SBX_TIMING: the shim reports its parts too (ST_TIME). */
	timing_on = n == (ssize_t)sizeof(m) && m.val == 1;
	return 1;
}

/* Whether --deny-read hides sbx itself, which must run inside. */
int
shim_check(const struct sbx_opts *o, struct sbx_err *e)
{
	size_t i;

	for (i = 0; i < o->deny_read.n; i++)
		if (path_under(o->self, o->deny_read.v[i]))
			return sbx_errf(e, ERR_POLICY, "--deny-read %s: hides "
			    "sbx itself (%s), which runs inside",
			    shown(o->deny_read.v[i]), shown(o->self));
	return 0;
}

struct shim_opts {
	int	 bridge, ro_dev, seccomp, wrapped, tty, mounts;
	int	 capture;	/* --capture N: N sockets to listen, or -1 */
	int	 local;		/* --local L: L host loopback ports */
	long	 procs;
};

/* The shim's options; the index of "--", or -1 when they are not its. */
static int
parse(int argc, char **argv, struct shim_opts *so)
{
	char *end;
	int i;

	for (i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--bridge") == 0)
			so->bridge = 1;
		else if (strcmp(argv[i], "--capture") == 0 && i + 1 < argc &&
		    (so->capture = (int)strtol(argv[i + 1], &end, 10)) >= 0 &&
		    so->capture <= NETNS_POOL && *end == '\0')
			i++;
		else if (strcmp(argv[i], "--local") == 0 && i + 1 < argc &&
		    (so->local = (int)strtol(argv[i + 1], &end, 10)) >= 0 &&
		    so->local <= LOCAL_MAX && *end == '\0')
			i++;
		else if (strcmp(argv[i], "--tty") == 0)
			so->tty = 1;
		else if (strcmp(argv[i], "--procs") == 0 && i + 1 < argc &&
		    (so->procs = strtol(argv[i + 1], &end, 10)) > 0 &&
		    *end == '\0')
			i++;
		else if (strcmp(argv[i], "--ro-dev") == 0)
			so->ro_dev = 1;
		else if (strcmp(argv[i], "--seccomp") == 0)
			so->seccomp = 1;
		else if (strcmp(argv[i], "--wrapped-env") == 0)
			so->wrapped = 1;
		else if (strcmp(argv[i], "--mounts") == 0)
			so->mounts = 1;
		else if (strcmp(argv[i], "--reopen") == 0 && i + 2 < argc &&
		    argv[i + 1][0] >= '0' && argv[i + 1][0] <= '2' &&
		    argv[i + 1][1] == '\0' && argv[i + 2][0] == '/')
			i += 2;	/* done below, before anything else */
		else
			return -1;
	}
	return i + 1 < argc ? i : -1;
}

/* --reopen N PATH, each: a failure ends the launch. */
static int
reopen_all(int argc, char **argv, int end)
{
	int j, fd;

	(void)argc;
	for (j = 2; j < end; j++) {
		if (strcmp(argv[j], "--reopen") != 0)
			continue;
		fd = argv[j + 1][0] - '0';
		if (reopen_fd(fd, argv[j + 2]) < 0) {
			send_status(ST_SETUP, STEP_REOPEN, fd, errno);
			return -1;
		}
		j += 2;
	}
	return 0;
}

#ifdef __linux__
/* Whether a check of this kind names path. */
static int
expected(const struct strv *c, const char *mp, const char *kind)
{
	size_t j;

	for (j = 0; j + 2 < c->n; j += 3)
		if (strcmp(c->v[j], kind) == 0 && strcmp(c->v[j + 2], mp) == 0)
			return 1;
	return 0;
}

/* The checks: KIND ID PATH words, NUL-separated, on FD_MOUNTS. */
static int
read_checks(struct strv *c)
{
	char *buf = NULL, *p;
	size_t len = 0, cap = 0;
	ssize_t n;

	for (;;) {
		if (len + 4096 > cap)
			buf = xrealloc(buf, cap = 2 * cap + 8192);
		if ((n = read(FD_MOUNTS, buf + len, cap - len)) < 0 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(FD_MOUNTS);
	for (p = buf; p < buf + len; p += strlen(p) + 1) {
		if (memchr(p, '\0', (size_t)(buf + len - p)) == NULL)
			break;
		strv_push(c, p);
	}
	free(buf);
	return c->n > 0 && c->n % 3 == 0 ? 0 : -1;
}

/* The mount point and rw flag of each line of /proc/self/mountinfo. */
struct mnt {
	char	*path;		/* in the table's buffer */
	int	 rw;
};

/* The table (mnt_read()), each line's mount point and rw flag. */
static size_t
read_mounts(struct mnt **out, char **buf)
{
	struct mnt_line *l;
	struct mnt *m;
	size_t n, i;

	*out = NULL;
	if ((n = mnt_read(&l, buf)) == 0)
		return 0;
	m = xcalloc(n, sizeof(*m));
	for (i = 0; i < n; i++) {
		m[i].path = l[i].at;
		m[i].rw = strncmp(l[i].opts, "rw", 2) == 0 &&
		    (l[i].opts[2] == ',' || l[i].opts[2] == '\0');
	}
	free(l);
	*out = m;
	return n;
}

/* A later check at the same path overrides this one (j). */
static int
overridden(const struct strv *c, size_t j)
{
	size_t k;

	for (k = j + 3; k + 2 < c->n; k += 3)
		if (strcmp(c->v[k + 2], c->v[j + 2]) == 0)
			return 1;
	return 0;
}

/* A kind of check whose path is writable by the policy. */
static int
writable_kind(const char *kind)
{
	return strcmp(kind, "rw") == 0 || strcmp(kind, "wro") == 0;
}

/*
 * The mounts as bwrap made them, before anything of the command's runs:
 * every checked path is there, reached without a link, as the inode sbx
 * checked (rw, wro, ro) or an empty read-only cover, with the last mount
 * there read-only or not as asked (wro: a writable path on a read-only
 * mount of the host's); and no writable mount lies anywhere else but
 * bwrap's own /dev and the run's /tmp: not even the host's own mounts
 * below a writable path, which a folder swapped while bwrap mounts would
 * leave uncovered where a read-only path was asked. A folder swapped (for
 * a symbolic link, or with another folder) while sbx started sends a
 * mount elsewhere, and bwrap's name lookups follow it: caught here, the
 * launch fails (closed).
 */
static int
check_mounts(void)
{
	struct strv c = { NULL, 0, 0 };
	unsigned long long dev, ino;
	struct mnt *m = NULL;
	char *table = NULL;
	struct stat st;
	size_t n = 0, i, j;
	int fd, ok = 1, rw;

	if (read_checks(&c) < 0 || (n = read_mounts(&m, &table)) == 0)
		ok = 0;
	for (i = 0; ok && i < n; i++)
		if (m[i].rw && !path_under(m[i].path, "/dev") &&
		    !expected(&c, m[i].path, "rw") &&
		    !expected(&c, m[i].path, "tmp"))
			ok = 0;
	for (j = 0; ok && j + 2 < c.n; j += 3) {
		if (overridden(&c, j))
			continue;
		if ((fd = open_nolinks(c.v[j + 2], &st)) < 0) {
			ok = 0;
			break;
		}
		close(fd);
		rw = strcmp(c.v[j], "rw") == 0 || strcmp(c.v[j], "tmp") == 0;
		if ((writable_kind(c.v[j]) || strcmp(c.v[j], "ro") == 0) &&
		    (sscanf(c.v[j + 1], "%llu:%llu", &dev, &ino) != 2 ||
		    dev != (unsigned long long)st.st_dev ||
		    ino != (unsigned long long)st.st_ino))
			ok = 0;
		/* The last mount on the path: as asked. */
		for (i = n; ok && i-- > 0; )
			if (strcmp(m[i].path, c.v[j + 2]) == 0)
				break;
		if (ok && (i == (size_t)-1 || m[i].rw != rw))
			ok = 0;
	}
	free(m);
	free(table);
	strv_free(&c);
	if (!ok)
		errno = EXDEV;
	return ok ? 0 : -1;
}
#endif

/*
 * As the init of bwrap's pid namespace, once the command has ended: what
 * it left is killed (as the namespace's end would) and reaped here. The
 * kernel's own end of a namespace reaps with SIGCHLD ignored, which drops
 * the CPU time of whatever it reaps from every parent's count, and so
 * from the usage in sbx's result. Not as anything but pid 1: kill(-1)
 * would reach every process of the user.
 */
static void
end_namespace(void)
{
	if (getpid() != 1)
		return;
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

/*
 * Before the command: the terminal taken, RLIMIT_NPROC set (the shim and
 * its bridge already count). The failed step, or -1.
 */
static int
job_setup(const struct shim_opts *so)
{
	struct rlimit r;

	if (so->tty && tty_take(0) < 0)
		return STEP_TTY;
	if (so->procs > 0) {
		r.rlim_cur = r.rlim_max = (rlim_t)(so->procs + 1 + so->bridge);
		if (setrlimit(RLIMIT_NPROC, &r) < 0)
			return STEP_LIMITS;
	}
	return -1;
}

int
shim_main(int argc, char **argv)
{
	struct command_start cmd;
	struct shim_opts so;
	int i, st, step;
	int64_t t;
	pid_t pid;

	if (!launched_by_sbx()) {
		fprintf(stderr, "sbx: %s: for sbx's own use inside a sandbox "
		    "it launches\n", SHIM_ARG);
		return EXIT_SBX;
	}
#ifdef __linux__
	/*
	 * Not dumpable: the command, the shim's child in the same user
	 * namespace, could otherwise open /proc/1/fd/FD_STATUS and forge the
	 * report (a setup failure: its output dropped) or take FD_BRIDGE.
	 * The command's own execve() makes it dumpable again.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return EXIT_SBX;
#endif
	set_cloexec(FD_STATUS);
	/* Seatbelt's profile: sandbox-exec read it and left it open. */
	(void)close(FD_ARGS);
	memset(&so, 0, sizeof(so));
	so.capture = -1;
	if ((i = parse(argc, argv, &so)) < 0) {
		send_status(ST_SETUP, STEP_SHIM, 0, EINVAL);
		return EXIT_SBX;
	}
	if (so.bridge)
		set_cloexec(FD_BRIDGE);
#ifdef __linux__
	t = timing_on ? timing_us() : 0;
	if (so.mounts && check_mounts() < 0) {
		send_status(ST_SETUP, STEP_MOUNTS, 0, errno);
		return EXIT_SBX;
	}
	time_part(TP_MOUNTS, &t);
#endif
	if (reopen_all(argc, argv, i) < 0)
		return EXIT_SBX;
	if (so.capture >= 0) {
		/* bwrap read these (--ro-bind-data); the command gets neither. */
		(void)close(FD_RESOLV);
		(void)close(FD_HOSTS);
	}
	t = timing_on ? timing_us() : 0;
	if ((step = confine(so.ro_dev, so.seccomp)) >= 0) {
		send_status(ST_SETUP, step, 0, errno);
		return EXIT_SBX;
	}
	time_part(TP_CONFINE, &t);
	if (so.capture >= 0)
		reserve_fds(so.capture);
	/*
	 * The listener to sbx, before anything can be refused: sbx answers
	 * the filter from now on. The shim keeps no copy: should sbx die,
	 * the calls the filter hands on fail (ENOSYS) instead of waiting.
	 */
	if (listener >= 0) {
		if (proc_give_fd(FD_STATUS, listener) < 0) {
			send_status(ST_SETUP, STEP_SECCOMP, 0, errno);
			return EXIT_SBX;
		}
		close(listener);
		listener = -1;
	}
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* The capture's sockets, before the bridge shares FD_BRIDGE. */
	t = timing_on ? timing_us() : 0;
	if (so.capture >= 0 && (!so.bridge ||
	    netns_shim(FD_BRIDGE, so.capture, so.local) < 0)) {
		send_status(ST_SETUP, STEP_CAPTURE, 0, errno);
		return EXIT_SBX;
	}
	if (so.capture >= 0)
		time_part(TP_CAPTURE, &t);
	if (so.bridge && start_bridge() < 0) {
		send_status(ST_SETUP, STEP_BRIDGE, 0, errno);
		return EXIT_SBX;
	}
	if (so.bridge)
		time_part(TP_BRIDGE, &t);
	if ((step = job_setup(&so)) >= 0) {
		send_status(ST_SETUP, step, 0, errno);
		return EXIT_SBX;
	}
	send_status(ST_STARTED, 0, 0, 0);
	cmd.argv = argv + i + 1;
	cmd.envp = command_env(so.wrapped);
	/* With a terminal the child changes its signals' handling before
	 * its exec (tty_foreground()): forked. */
#ifdef __linux__
	if (!so.tty)
		pid = proc_spawn_shared(command_child, &cmd);
	else
#endif
	if ((pid = fork()) == 0)
		run_command(cmd.argv, cmd.envp, so.tty);
	/* The child has its copy, or has exec'd (or ended) already. */
	if (cmd.envp != environ)
		free(cmd.envp);
	if (pid < 0) {
		send_status(ST_EXEC, 0, 0, errno);
		return EXIT_SBX;
	}
	if (so.tty) {
		/* Both sides, as a shell does: whichever runs first. */
		setpgid(pid, pid);
		tcsetpgrp(0, pid);
	}
	if ((st = proc_wait_report(pid, FD_STATUS, so.tty)) < 0)
		return EXIT_SBX;
	end_namespace();
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
