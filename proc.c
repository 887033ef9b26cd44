/*
 * proc.c: runs the launch line and watches it. One child is forked; it
 * starts a new session (its own process group, no controlling terminal),
 * keeps only fds 0-2 plus the numbered ones a backend needs, and reports an
 * exec failure through a close-on-exec status pipe. sbx then drives one
 * poll() loop: signals arrive through a self-pipe, output is drained until
 * it would block, deadlines (timeout, kill grace, the 2 s drain) come from
 * CLOCK_MONOTONIC. On Linux sbx is a child subreaper, so every descendant,
 * also one that left the process group, stays below sbx and is killed with
 * the command. A pid is never signalled after it was reaped: after the
 * leader is reaped only the live descendants found in /proc are signalled.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/mman.h>
#include <sys/prctl.h>
#endif

#include "sbx.h"

#define DRAIN_MS	2000	/* a background child holding the pipes */
#define MAX_POLL	1100
#define READ_CHUNK	65536

static int sigpipe_fds[2] = { -1, -1 };

struct loop {
	struct run	*r;
	pid_t		 pid;		/* the direct child */
	int		 out, err;	/* capture pipes, -1 once at EOF */
	int		 status;	/* status pipe, -1 once at EOF */
	int		 reaped;	/* the direct child */
	int		 wstatus;	/* its wait status */
	int		 have_cmd;	/* the command's own status is known */
	int		 cmd_status;
	int		 started;
	int		 exec_errno;
	int		 setup_failed;	/* landlock/sandbox refused in child */
	int		 reopen_fd;	/* the shim could not reopen it, or -1 */
	int		 term_sent;
	int		 killed;
	int64_t		 start;
	int64_t		 timeout_at;
	int64_t		 kill_at;
	int64_t		 drain_at;
	char		 msg[5];	/* a partial status message */
	size_t		 msglen;
};

static void
on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int saved = errno;

	(void)!write(sigpipe_fds[1], &c, 1);
	errno = saved;
}

static int
signals_setup(void)
{
	/*
	 * Every signal whose default would end sbx and orphan the command
	 * is an interruption: the command is stopped and sbx exits 128+N.
	 */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
	    SIGUSR2, SIGALRM, SIGCHLD };
	struct sigaction sa;
	size_t i;

	if (pipe(sigpipe_fds) < 0)
		return -1;
	for (i = 0; i < 2; i++)
		if (set_cloexec(sigpipe_fds[i]) < 0 ||
		    set_nonblock(sigpipe_fds[i]) < 0)
			return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -1;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/*
 * In the child: the dispositions and mask a fresh program expects, also
 * for signals sbx's own parent left ignored (a shell's background job
 * ignores SIGINT and SIGQUIT).
 */
void
proc_signals_default(void)
{
	sigset_t none;
	int sig;

	for (sig = 1; sig < 65; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (signal(sig, SIG_DFL) != SIG_ERR)
			continue;
#ifdef __linux__
		/*
		 * libc refuses its own reserved signals (32-34), yet a glibc
		 * parent such as GNU make may leave them ignored: ask the
		 * kernel (handler, flags, restorer, mask; SIG_DFL is 0).
		 */
		{
			unsigned long ksa[4] = { 0, 0, 0, 0 };

			syscall(SYS_rt_sigaction, sig, ksa, NULL, 8);
		}
#endif
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* A memory file holding data, for bwrap's --args and --seccomp. */
static int
data_fd(const void *p, size_t n)
{
	int fd = -1;

#ifdef __linux__
	fd = (int)syscall(SYS_memfd_create, "sbx", 1U /* MFD_CLOEXEC */);
#endif
	if (fd < 0) {
		char tmpl[] = "/tmp/sbx-data-XXXXXX";

		if ((fd = mkstemp(tmpl)) < 0)
			return -1;
		unlink(tmpl);
		set_cloexec(fd);
	}
	if (n > 0 && write(fd, p, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void
close_from(int lowfd)
{
#if defined(__linux__) && defined(SYS_close_range)
	if (syscall(SYS_close_range, lowfd, ~0U, 0) == 0)
		return;
#elif defined(__linux__)
	if (syscall(436, lowfd, ~0U, 0) == 0)
		return;
#endif
	{
		long max = sysconf(_SC_OPEN_MAX);
		int fd;

		if (max < 0 || max > 65536)
			max = 65536;
		for (fd = lowfd; fd < max; fd++)
			close(fd);
	}
}

static void
child_fail(int fd, char kind, int err)
{
	char m[5];

	m[0] = kind;
	memcpy(m + 1, &err, 4);
	(void)!write(fd, m, sizeof(m));
	_exit(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

/*
 * The child, after fork(): only async-signal-safe work. Every wanted fd is
 * first moved above the numbered range so that dup2() onto 3..6 cannot
 * clobber a source that happens to sit there.
 */
static void
child(const struct run *r, int outw, int errw, int statusw, int argsfd,
    int bpffd, int bridgefd)
{
	static char *noenv[] = { NULL };
	int src[4] = { argsfd, bpffd, statusw, bridgefd };
	int dst[4] = { FD_ARGS, FD_SECCOMP, FD_STATUS, FD_BRIDGE };
	int i, hi;

	proc_signals_default();
	setsid();
#ifdef __linux__
	/* Should sbx itself be killed, the command does not run on alone. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != r->parent)
		_exit(EXIT_SBX);
#endif
	if (outw >= 0 && (dup2(outw, 1) < 0 || dup2(errw, 2) < 0))
		child_fail(statusw, 'E', errno);
	for (i = 0; i < 4; i++) {
		if (src[i] < 0)
			continue;
		if ((hi = fcntl(src[i], F_DUPFD_CLOEXEC, 64)) < 0)
			child_fail(statusw, 'E', errno);
		src[i] = hi;
	}
	statusw = src[2];
	if (r->l->shim) {
		/* bwrap and the shim inherit exactly these. */
		for (i = 0; i < 4; i++)
			if (src[i] >= 0 && dup2(src[i], dst[i]) < 0)
				child_fail(statusw, 'E', errno);
		close_from(FD_BRIDGE + 1);
		statusw = FD_STATUS;
	} else {
		if (dup2(statusw, 3) < 0)
			child_fail(statusw, 'E', errno);
		statusw = 3;
		fcntl(statusw, F_SETFD, FD_CLOEXEC);
		close_from(4);
	}
	if (chdir(r->o->root) < 0)
		child_fail(statusw, 'E', errno);
#ifdef __linux__
	if (r->l->landlock && landlock_apply(r->l) < 0)
		child_fail(statusw, 'L', errno);
#endif
	exec_command(r->l->argv.v, r->l->env_in_args ? noenv : r->o->env.v);
	child_fail(statusw, 'E', errno);
}

static int
make_pipe(int p[2], struct sbx_err *e)
{
#ifdef __linux__
	if (pipe2(p, O_CLOEXEC) < 0)
		return sbx_errf(e, ERR_SPAWN, "pipe: %s", strerror(errno));
#else
	if (pipe(p) < 0)
		return sbx_errf(e, ERR_SPAWN, "pipe: %s", strerror(errno));
	set_cloexec(p[0]);
	set_cloexec(p[1]);
#endif
	return 0;
}

static int
spawn(struct loop *lp, struct sbx_err *e)
{
	const struct launch *l = lp->r->l;
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, st[2];
	int argsfd = -1, bpffd = -1, bridgefd = -1;

	if (!lp->r->o->passthrough &&
	    (make_pipe(outp, e) < 0 || make_pipe(errp, e) < 0))
		return -1;
	if (make_pipe(st, e) < 0)
		return -1;
	if (l->args.n > 0) {
		const struct strv *a = &l->args;
		size_t i, n = 0;
		char *buf, *p;

		for (i = 0; i < a->n; i++)
			n += strlen(a->v[i]) + 1;
		p = buf = xmalloc(n);
		for (i = 0; i < a->n; i++)
			p = stpcpy(p, a->v[i]) + 1;
		argsfd = data_fd(buf, n);
		free(buf);
		if (l->seccomp_len > 0)
			bpffd = data_fd(l->seccomp, l->seccomp_len);
		if (argsfd < 0 || (l->seccomp_len > 0 && bpffd < 0))
			return sbx_errf(e, ERR_SPAWN, "memfd: %s",
			    strerror(errno));
	}
	if (l->backend == BACKEND_BWRAP && lp->r->proxy)
		bridgefd = proxy_bridge_fd(lp->r->proxy);
	lp->start = now_ms();
	lp->r->parent = getpid();
	lp->pid = fork();
	if (lp->pid < 0)
		return sbx_errf(e, ERR_SPAWN, "fork: %s", strerror(errno));
	if (lp->pid == 0)
		child(lp->r, outp[1], errp[1], st[1], argsfd, bpffd, bridgefd);
	/*
	 * The child calls setsid() rather than both sides setpgid(): a new
	 * session also drops the controlling terminal (no TIOCSTI, no job
	 * control signals from it), and setsid() fails for a process that
	 * is already a group leader. Until it has run, signal_all() falls
	 * back to the pid.
	 */
	if (argsfd >= 0)
		close(argsfd);
	if (bpffd >= 0)
		close(bpffd);
	if (bridgefd >= 0)
		close(bridgefd);
	close(st[1]);
	lp->status = st[0];
	set_nonblock(lp->status);
	lp->out = outp[0];
	lp->err = errp[0];
	if (outp[1] >= 0) {
		close(outp[1]);
		close(errp[1]);
		set_nonblock(lp->out);
		set_nonblock(lp->err);
	}
	return 0;
}

#ifdef __linux__
struct pinfo {
	pid_t	pid;
	pid_t	ppid;
	char	state;
	int	bwrap;
};

/* Every process's parent, state and whether it is bwrap, from /proc. */
static struct pinfo *
scan_procs(size_t *np)
{
	struct pinfo *t = NULL;
	size_t n = 0, cap = 0;
	struct dirent *d;
	char path[300], buf[512], *p;
	DIR *dir;
	ssize_t len;
	int fd;

	if ((dir = opendir("/proc")) == NULL)
		return NULL;
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		/* "pid (comm) S ppid ...": comm may hold spaces and ')'. */
		if (len <= 0 || (buf[len] = '\0', p = strrchr(buf, ')')) == NULL)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			t = xrealloc(t, cap * sizeof(*t));
		}
		t[n].pid = atoi(buf);
		t[n].state = p[2];
		t[n].ppid = atoi(p + 4);
		t[n].bwrap = strstr(buf, "(bwrap)") != NULL;
		n++;
	}
	closedir(dir);
	*np = n;
	return t;
}

/*
 * Signal every live descendant of sbx; returns how many were signalled.
 * bwrap itself is spared SIGTERM: it would answer with SIGKILL to the whole
 * sandbox, while the command inside deserves its grace.
 */
int
proc_kill_tree(int sig, int spare_bwrap)
{
	struct pinfo *t;
	size_t n = 0, i, head = 0, tail = 0;
	pid_t *queue;
	int count = 0;
	siginfo_t si;

	/*
	 * No child at all, live or zombie, means no descendant: as the
	 * subreaper sbx inherits every orphan. Spares the /proc scan.
	 */
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 &&
	    errno == ECHILD)
		return 0;
	if ((t = scan_procs(&n)) == NULL)
		return 0;
	queue = xmalloc((n + 1) * sizeof(*queue));
	queue[tail++] = getpid();
	while (head < tail) {
		pid_t parent = queue[head++];

		for (i = 0; i < n; i++) {
			if (t[i].ppid != parent || t[i].pid == 0)
				continue;
			queue[tail++] = t[i].pid;
			if (t[i].state != 'Z' && !(spare_bwrap && t[i].bwrap)) {
				kill(t[i].pid, sig);
				if (sig == SIGTERM)
					kill(t[i].pid, SIGCONT);
				count++;
			}
			t[i].pid = 0;	/* visit once */
		}
	}
	free(queue);
	free(t);
	return count;
}
#else
int
proc_kill_tree(int sig, int spare_bwrap)
{
	(void)sig;
	(void)spare_bwrap;
	return 0;
}
#endif

/* SIGTERM (with SIGCONT) or SIGKILL to the group and every descendant. */
static void
signal_all(struct loop *lp, int sig)
{
	int bwrap = lp->r->l->backend == BACKEND_BWRAP;

	/*
	 * bwrap leads the group; a SIGTERM to it would end the sandbox at
	 * once. Its descendants are all found in /proc, so no group kill.
	 */
	if (!lp->reaped && !(bwrap && sig != SIGKILL)) {
		if (kill(-lp->pid, sig) < 0 && errno == ESRCH)
			kill(lp->pid, sig);
		if (sig == SIGTERM)
			kill(-lp->pid, SIGCONT);
	}
	proc_kill_tree(sig, sig != SIGKILL && bwrap);
}

/* SIGKILL until no live descendant is left (a forking tree takes rounds). */
static void
kill_everything(struct loop *lp)
{
	int i;

	signal_all(lp, SIGKILL);
	for (i = 0; i < 200; i++) {
		if (proc_kill_tree(SIGKILL, 0) == 0)
			break;
		usleep(1000);
	}
	lp->killed = 1;
}

/* Read one stream until it would block; -1 once at EOF. */
static void
drain(int *fd, struct capture *c)
{
	static char buf[READ_CHUNK];
	ssize_t n;

	while (*fd >= 0) {
		n = read(*fd, buf, sizeof(buf));
		if (n > 0) {
			capture_add(c, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		close(*fd);
		*fd = -1;
	}
}

/*
 * Status messages: 'S' the shim started inside the sandbox, 'E' errno the
 * command could not be executed, 'L' errno the sandbox could not be set up
 * in the child, 'R' fd << 16 | errno the shim could not reopen an inherited
 * fd inside the sandbox, 'W' status the command's own wait status (from the
 * shim).
 */
static void
read_status(struct loop *lp)
{
	ssize_t n;
	int v;

	while (lp->status >= 0) {
		n = read(lp->status, lp->msg + lp->msglen, 5 - lp->msglen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(lp->status);
			lp->status = -1;
			/* Host path: EOF at exec means it started. */
			if (!lp->r->l->shim && !lp->exec_errno &&
			    !lp->setup_failed)
				lp->started = 1;
			return;
		}
		lp->msglen += (size_t)n;
		if (lp->msglen < 5)
			continue;
		lp->msglen = 0;
		memcpy(&v, lp->msg + 1, 4);
		switch (lp->msg[0]) {
		case 'S': lp->started = 1; break;
		case 'E': lp->exec_errno = v ? v : EIO; lp->started = 0; break;
		case 'L': lp->setup_failed = v ? v : EIO; break;
		case 'R':
			lp->reopen_fd = v >> 16 & 3;
			lp->setup_failed = v & 0xffff ? v & 0xffff : EIO;
			break;
		case 'W': lp->have_cmd = 1; lp->cmd_status = v; break;
		}
	}
}

static void
reap(struct loop *lp)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == lp->pid) {
			lp->reaped = 1;
			lp->wstatus = st;
		}
}

/* The command's own process is gone (its status is known). */
static int
cmd_done(const struct loop *lp)
{
	return lp->have_cmd || lp->reaped;
}

static int64_t
earliest(int64_t a, int64_t b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

static void
start_termination(struct loop *lp)
{
	if (lp->term_sent)
		return;
	lp->term_sent = 1;
	signal_all(lp, SIGTERM);
	lp->kill_at = now_ms() + lp->r->o->kill_after_ms;
}

static void
on_sbx_signals(struct loop *lp)
{
	unsigned char sigs[64];
	ssize_t n, i;

	while ((n = read(sigpipe_fds[0], sigs, sizeof(sigs))) > 0)
		for (i = 0; i < n; i++) {
			if (sigs[i] == SIGCHLD)
				continue;
			if (lp->r->sig && lp->term_sent && !lp->killed)
				kill_everything(lp);	/* asked twice */
			lp->r->sig = sigs[i];
			lp->r->res->aborted = 1;
			start_termination(lp);
		}
	reap(lp);
}

static void
on_deadlines(struct loop *lp, int64_t now)
{
	if (lp->timeout_at >= 0 && now >= lp->timeout_at && !cmd_done(lp)) {
		lp->timeout_at = -1;
		lp->r->res->timed_out = 1;
		start_termination(lp);
	}
	if (lp->kill_at >= 0 && now >= lp->kill_at && !lp->killed)
		kill_everything(lp);
	if (lp->drain_at >= 0 && now >= lp->drain_at) {
		lp->drain_at = -1;
		if (!lp->killed)
			kill_everything(lp);
		/* Whatever still holds the pipes now is out of reach. */
		drain(&lp->out, lp->r->res->out);
		drain(&lp->err, lp->r->res->err);
		if (lp->out >= 0)
			close(lp->out);
		if (lp->err >= 0)
			close(lp->err);
		lp->out = lp->err = -1;
	}
}

/* After the command's own process: leftovers get the drain window. */
static void
after_cmd(struct loop *lp, int64_t now)
{
	if (!cmd_done(lp) || lp->killed)
		return;
	/*
	 * bwrap's pid namespace ends with bwrap, taking every process in
	 * it: once bwrap is reaped there is nothing left to sweep, and it
	 * ends by itself when the shim does (bounded by the drain window).
	 */
	if (lp->r->l->backend == BACKEND_BWRAP && lp->out < 0 && lp->err < 0) {
		if (lp->reaped)
			lp->killed = 1;
		else if (lp->drain_at < 0)
			lp->drain_at = now + DRAIN_MS;
		return;
	}
	if (lp->out < 0 && lp->err < 0) {
		kill_everything(lp);
		return;
	}
	if (lp->drain_at < 0)
		lp->drain_at = now + DRAIN_MS;
}

/*
 * As a subreaper sbx inherits every orphan of the command; reap them all
 * before returning, or they stay zombies of a pid 1 that may never reap
 * them (containers, microVMs), looking alive to kill -0. Bounded: 2 s.
 */
static void
reap_all(struct loop *lp)
{
	int64_t until = now_ms() + 2000;
	pid_t p;
	int st;

	while (now_ms() < until) {
		p = waitpid(-1, &st, WNOHANG);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			return;		/* ECHILD: none left */
		if (p == lp->pid && !lp->reaped) {
			lp->reaped = 1;
			lp->wstatus = st;
		}
		if (p == 0) {
			proc_kill_tree(SIGKILL, 0);
			usleep(1000);
		}
	}
}

static int
finished(const struct loop *lp)
{
	return lp->reaped && lp->out < 0 && lp->err < 0 && lp->status < 0;
}

static size_t
fill_pollfds(struct loop *lp, struct pollfd *fds)
{
	size_t n = 0;

	fds[n].fd = sigpipe_fds[0];
	fds[n++].events = POLLIN;
	fds[n].fd = lp->out;
	fds[n++].events = POLLIN;
	fds[n].fd = lp->err;
	fds[n++].events = POLLIN;
	fds[n].fd = lp->status;
	fds[n++].events = POLLIN;
	if (lp->r->proxy)
		n += proxy_pollfds(lp->r->proxy, fds + n, MAX_POLL - n);
	return n;
}

static int
poll_timeout(const struct loop *lp, int64_t now)
{
	int64_t t = -1;

	if (!cmd_done(lp))
		t = earliest(t, lp->timeout_at);
	if (!lp->killed)
		t = earliest(t, lp->kill_at);
	t = earliest(t, lp->drain_at);
	if (lp->r->proxy)
		t = earliest(t, proxy_deadline(lp->r->proxy));
	if (t < 0)
		return -1;
	return t <= now ? 0 : (int)(t - now);
}

static void
loop_once(struct loop *lp)
{
	static struct pollfd fds[MAX_POLL];
	size_t n = fill_pollfds(lp, fds);
	int64_t now = now_ms();
	int rc;

	rc = poll(fds, n, poll_timeout(lp, now));
	if (rc < 0 && errno != EINTR)
		return;
	if (rc > 0) {
		if (fds[0].revents)
			on_sbx_signals(lp);
		if (fds[1].revents)
			drain(&lp->out, lp->r->res->out);
		if (fds[2].revents)
			drain(&lp->err, lp->r->res->err);
		if (fds[3].revents)
			read_status(lp);
	}
	/*
	 * Also on a timeout: the proxy's own deadlines (idle connections)
	 * are cleared only by proxy_handle(); skipping it after poll()
	 * returned 0 made every later poll() return at once, a busy loop.
	 */
	if (lp->r->proxy)
		proxy_handle(lp->r->proxy, fds + 4, n - 4);
	reap(lp);
	now = now_ms();
	on_deadlines(lp, now);
	after_cmd(lp, now);
}

static void
fill_result(struct loop *lp)
{
	struct exec_result *res = lp->r->res;
	int st = lp->have_cmd ? lp->cmd_status : lp->wstatus;

	res->duration_ms = now_ms() - lp->start;
	res->started = lp->started && !lp->exec_errno && !lp->setup_failed;
	if (!res->started)
		return;
	if (WIFEXITED(st)) {
		res->exited = 1;
		res->exit_code = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st))
		res->signal = WTERMSIG(st);
}

/* An inherited file the shim could not open by its name inside. */
static int
reopen_error(const struct loop *lp, struct sbx_err *e)
{
	const struct strv *ro = &lp->r->o->reopen;
	const char *path = "?";
	size_t i;

	for (i = 0; i + 1 < ro->n; i += 2)
		if (ro->v[i][0] - '0' == lp->reopen_fd)
			path = ro->v[i + 1];
	return sbx_errf(e, ERR_POLICY, "%s (%s) cannot be opened by that "
	    "name inside the sandbox (%s); pipe it in instead",
	    std_fd_name[lp->reopen_fd], shown(path),
	    lp->setup_failed == ESTALE ? "another file has it there" :
	    strerror(lp->setup_failed));
}

/* The result when the command never ran: exec or sandbox setup failed. */
static int
start_error(struct loop *lp, struct sbx_err *e)
{
	const char *name = lp->r->o->cmd[0];

	if (lp->reopen_fd >= 0)
		return reopen_error(lp, e);
	if (lp->setup_failed)
		return sbx_errf(e, ERR_SANDBOX, "sandbox setup: %s",
		    strerror(lp->setup_failed));
	if (lp->exec_errno == ENOENT)
		return sbx_errf(e, ERR_NOT_FOUND, "%s: command not found", name);
	if (lp->exec_errno)
		return sbx_errf(e, ERR_NOT_EXECUTABLE, "%s: %s", name,
		    strerror(lp->exec_errno));
	/* The sandbox program ended before sbx's shim ran inside it. */
	return sbx_errf(e, ERR_UNAVAILABLE, "%s: the sandbox failed to start",
	    backend_name(lp->r->l->backend));
}

int
proc_run(struct run *r, struct sbx_err *e)
{
	struct loop lp;

	memset(&lp, 0, sizeof(lp));
	lp.r = r;
	lp.out = lp.err = lp.status = lp.reopen_fd = -1;
	lp.timeout_at = lp.kill_at = lp.drain_at = -1;
	if (signals_setup() < 0)
		return sbx_errf(e, ERR_SPAWN, "signals: %s", strerror(errno));
#ifdef __linux__
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
	if (spawn(&lp, e) < 0)
		return -1;
	if (r->o->timeout_ms > 0)
		lp.timeout_at = lp.start + r->o->timeout_ms;
	while (!finished(&lp))
		loop_once(&lp);
	reap_all(&lp);
	fill_result(&lp);
	if (!r->res->started && !r->res->timed_out && !r->res->aborted)
		return start_error(&lp, e);
	return 0;
}
