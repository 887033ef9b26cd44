/*
 * proc.c: runs a launch and watches it, whatever the backend. One child is
 * forked; it starts a new session (its own process group, no controlling
 * terminal but sbx's own pseudo-terminal when the run has one, which a shim
 * inside or the keeper below takes: tty.c), joins the run's cgroups and
 * takes its rlimits (limits.c), keeps only fds 0-2 plus the numbered ones
 * the launch lists, and reports on a close-on-exec status socket, in one
 * encoding (proc_status()) shared with the shim inside a sandbox: a start,
 * a failed step, and the command's wait statuses, with a terminal also
 * its stops and continues. sbx then drives
 * one poll() loop: signals arrive through a self-pipe made once, output is
 * drained until it would block, deadlines (timeout, kill grace, the 2 s
 * drain) come from CLOCK_MONOTONIC, and other parts of sbx (the proxy)
 * plug in as loop parts. On Linux sbx is a child subreaper, so every
 * descendant, also one that left the process group, stays below sbx and is
 * killed with the command. A pid is never signalled after it was reaped:
 * after the leader is reaped only the live descendants found in /proc are
 * signalled. What proc.c knows of a backend is the launch's flags.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#endif

#include "sbx.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL	0	/* macOS: sbx ignores SIGPIPE */
#endif


#define DRAIN_MS	2000	/* a background child holding the pipes */
#define KEEPER_MS	20	/* a keeper's own end, before a /proc sweep */
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
	int		 setup_failed;	/* a setup step failed: errno */
	int		 term_sent;
	int		 killed;
	int64_t		 start;
	int64_t		 timeout_at;
	int64_t		 kill_at;
	int64_t		 drain_at;
	int64_t		 sweep_at;	/* no keeper's end by then: sweep */
	int		 run_timed;	/* SBX_TIMING: "run" printed */
};

/* One status message; a packet socket keeps each whole. */
struct status_msg {
	char		kind;		/* enum status_kind */
	unsigned char	step;		/* ST_SETUP: enum setup_step */
	unsigned char	arg;		/* STEP_REOPEN: the descriptor */
	char		pad;
	int32_t		val;		/* errno, a wait status, a descriptor */
	int32_t		pid;		/* the sender */
};

static const char *const step_names[NSTEPS] = {
	"chdir", "descriptors", "reopen", "device remount",
	"capability drop", "seccomp", "landlock", "proxy bridge", "shim",
	"keeper", "terminal", "resource limits",
	"capture (resolver, host loopback relay)",
	"mounts (a path changed while sbx started; try again)"
};

static void
on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int saved = errno;

	(void)!write(sigpipe_fds[1], &c, 1);
	errno = saved;
}

/* The self-pipe, the handlers and the subreaper: once per sbx. */
int
proc_init(void)
{
	/*
	 * Every signal whose default would end sbx and orphan the command
	 * is an interruption: the command is stopped and sbx exits 128+N.
	 */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
	    SIGUSR2, SIGALRM, SIGCHLD };
	struct sigaction sa;
	size_t i;

	if (sigpipe_fds[0] >= 0)
		return 0;
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
#ifdef __linux__
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
	return 0;
}

/* The terminal's signals, which do not interrupt: they go to tty.c. */
static int
catch_tty_signals(void)
{
	static const int sigs[] = { SIGWINCH, SIGCONT, SIGTSTP };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -1;
	return 0;
}

/*
 * Send one status message; async-signal-safe (the child, the shim). It
 * goes by send(2) with no address, which no filter of sbx's stops: the
 * Landlock child's filter sends every sendmsg(2) to a supervisor that is
 * not running yet when the child reports its listener (ST_FD, whose
 * descriptor sbx then takes with pidfd_getfd(2): proc_take_fd()).
 */
void
proc_status(int fd, int kind, int step, int arg, int val)
{
	struct status_msg m;

	memset(&m, 0, sizeof(m));
	m.kind = (char)kind;
	m.step = (unsigned char)step;
	m.arg = (unsigned char)arg;
	m.val = val;
	m.pid = (int32_t)getpid();
	(void)!send(fd, &m, sizeof(m), MSG_NOSIGNAL);
}

/* One status message followed by a text (ST_DENIED): one packet. */
void
proc_status_text(int fd, int kind, const char *text)
{
	struct {
		struct status_msg	m;
		char			text[STATUS_TEXT_MAX];
	} p;
	size_t n = strlen(text);

	if (n >= sizeof(p.text))
		n = sizeof(p.text) - 1;
	memset(&p.m, 0, sizeof(p.m));
	p.m.kind = (char)kind;
	p.m.pid = (int32_t)getpid();
	memcpy(p.text, text, n);
	(void)!send(fd, &p, sizeof(p.m) + n, MSG_NOSIGNAL);
}

/*
 * The child's side of ST_FD: report descriptor fd, then wait until sbx
 * has taken its copy (its answer is a ST_GO whose value is 0 or an
 * errno), so that the descriptor is not closed under it.
 */
int
proc_give_fd(int status, int fd)
{
	struct status_msg m;
	ssize_t n;

	proc_status(status, ST_FD, 0, 0, fd);
	while ((n = recv(status, &m, sizeof(m), 0)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(m) || m.kind != ST_GO)
		return errno = EPROTO, -1;
	return m.val ? (errno = m.val, -1) : 0;
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
#ifdef __linux__
		/*
		 * The kernel's own call (handler, flags, restorer, mask;
		 * SIG_DFL is 0): libc refuses its reserved signals (32-34),
		 * which a glibc parent such as GNU make may leave ignored,
		 * and libc's wrapper may write its own state, which a child
		 * that shares sbx's memory (proc_spawn_shared()) must not.
		 */
		{
			unsigned long ksa[4] = { 0, 0, 0, 0 };

			syscall(SYS_rt_sigaction, sig, ksa, NULL, 8);
		}
#else
		(void)signal(sig, SIG_DFL);
#endif
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * Wait for pid and report each change of it on fd (ST_WAIT, the wait
 * status as is): with jobctl also its stops and continues. Its last
 * status, or -1. For the shim, the init of bwrap's pid namespace, where
 * the command's orphans go: any other child is reaped on the way.
 */
int
proc_wait_report(pid_t pid, int fd, int jobctl)
{
	int st, opt = jobctl ? WUNTRACED | WCONTINUED : 0;
	pid_t w;

	for (;;) {
		w = waitpid(-1, &st, opt);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w != pid)
			continue;
		proc_status(fd, ST_WAIT, 0, 0, st);
		if (!WIFSTOPPED(st) && !WIFCONTINUED(st))
			return st;
	}
}

/* A memory file holding data (bwrap's --args and --seccomp, say). */
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

/* Close every descriptor above 2 that the launch does not number. */
static void
keep_only(const struct launch *l)
{
	int fd, top = l->status_fd;
	size_t i;

	for (i = 0; i < l->nfd; i++)
		if (l->fd[i].num > top)
			top = l->fd[i].num;
	for (fd = 3; fd < top; fd++) {
		for (i = 0; i < l->nfd && l->fd[i].num != fd; i++)
			;
		if (i == l->nfd && fd != l->status_fd)
			close(fd);
	}
	close_from(top + 1);
}

static void
child_fail(int fd, int kind, int step, int err)
{
	proc_status(fd, kind, step, 0, err);
	_exit(err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

/*
 * The command's own process, after fork(): only async-signal-safe work.
 * Every wanted fd is first moved above the numbered range so that dup2()
 * onto the launch's numbers cannot clobber a source that happens to sit
 * there.
 */
static void
command(const struct run *r, int outw, int errw, int statusw, int *src)
{
	const struct launch *l = r->l;
	int64_t t;
	size_t i;
	int hi;

	if (outw >= 0 && (dup2(outw, 1) < 0 || dup2(errw, 2) < 0))
		child_fail(statusw, ST_SETUP, STEP_FDS, errno);
	if ((hi = fcntl(statusw, F_DUPFD_CLOEXEC, 64)) < 0)
		child_fail(statusw, ST_SETUP, STEP_FDS, errno);
	statusw = hi;
	for (i = 0; i < l->nfd; i++) {
		if ((hi = fcntl(src[i], F_DUPFD_CLOEXEC, 64)) < 0)
			child_fail(statusw, ST_SETUP, STEP_FDS, errno);
		src[i] = hi;
	}
	/* Numbered descriptors stay open across exec; the status socket
	 * only when a shim inside reports on it. */
	for (i = 0; i < l->nfd; i++)
		if (dup2(src[i], l->fd[i].num) < 0)
			child_fail(statusw, ST_SETUP, STEP_FDS, errno);
	if (dup2(statusw, l->status_fd) < 0)
		child_fail(statusw, ST_SETUP, STEP_FDS, errno);
	statusw = l->status_fd;
	if (!(l->flags & L_SHIM))
		fcntl(statusw, F_SETFD, FD_CLOEXEC);
	keep_only(l);
	if (chdir(r->cwd) < 0)
		child_fail(statusw, ST_SETUP, STEP_CHDIR, errno);
	t = timing_on ? timing_us() : 0;
	if (l->confine && (i = (size_t)l->confine(l->priv)) != 0)
		child_fail(statusw, ST_SETUP, (int)i, errno);
	if (timing_on && l->confine)
		proc_status(statusw, ST_TIME, TP_CONFINE, 0,
		    (int)(timing_us() - t));
	exec_command(l->argv.v, l->envp.v);
	child_fail(statusw, ST_EXEC, 0, errno);
}

#ifdef __linux__
static volatile sig_atomic_t sbx_gone;

static void
on_sbx_gone(int sig)
{
	(void)sig;
	sbx_gone = 1;
}

static int kill_tree(int, pid_t);

/* Every descendant, SIGKILLed until none is left; then the keeper ends. */
static void
keeper_sweep(void)
{
	int i;

	for (i = 0; i < 1000 && kill_tree(SIGKILL, 0) > 0; i++)
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	_exit(EXIT_SBX);
}

/* The keeper's command, started vfork-style: its own copy of src. */
struct keeper_start {
	const struct run	*r;
	int			 outw, errw, statusw, ex;
	int			 src[LAUNCH_MAXFD];
};

static int
keeper_child(void *arg)
{
	struct keeper_start *k = arg;

	proc_signals_default();
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	close(k->ex);
	command(k->r, k->outw, k->errw, k->statusw, k->src);
	_exit(EXIT_SBX);
}

/*
 * The keeper: with no pid namespace to end the tree when sbx dies, a
 * process of sbx's own stands between sbx and the command. It is the
 * subreaper of the command's tree, so every descendant, also one that
 * called setsid() or forked twice, stays below it; it gets a signal when
 * sbx dies, even by SIGKILL, and then kills exactly its descendants. It
 * reports the command's start and its exact wait status, as the shim does
 * inside bwrap, reaps the rest, and ends when no descendant is left. The
 * command cannot signal it: Landlock scopes signals to the sandbox.
 */
static void
keeper(const struct run *r, pid_t parent, int outw, int errw, int statusw,
    int *src)
{
	struct sigaction sa;
	int ex[2], st, nul;
	pid_t cmd, w;
	int64_t t;
	char c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sbx_gone;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
	prctl(PR_SET_PDEATHSIG, SIGUSR2, 0, 0, 0);
	if (getppid() != parent)
		_exit(EXIT_SBX);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	/* The group's SIGTERM is the command's; sbx's SIGKILL ends this. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	/* The session's leader holds the terminal, the command its front. */
	if (r->tty && tty_take(0) < 0)
		child_fail(statusw, ST_SETUP, STEP_TTY, errno);
	t = timing_on ? timing_us() : 0;
	if (pipe2(ex, O_CLOEXEC) < 0)
		child_fail(statusw, ST_SETUP, STEP_KEEPER, errno);
	/*
	 * With nothing to do before its exec but set up descriptors (no
	 * sandbox to enter, no terminal), the command starts vfork-style;
	 * Landlock's waits on sbx in confine() first: forked (see
	 * proc_spawn_shared()).
	 */
	if (!r->tty && r->l->confine == NULL) {
		struct keeper_start k;

		k.r = r;
		k.outw = outw;
		k.errw = errw;
		k.statusw = statusw;
		k.ex = ex[0];
		memcpy(k.src, src, sizeof(k.src));
		cmd = proc_spawn_shared(keeper_child, &k);
	} else if ((cmd = fork()) == 0) {
		if (r->tty)
			tty_foreground(0);
		proc_signals_default();
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		close(ex[0]);
		command(r, outw, errw, statusw, src);
	}
	if (cmd < 0)
		child_fail(statusw, ST_SETUP, STEP_KEEPER, errno);
	if (r->tty)
		tty_give(0, cmd);
	/* None of sbx's descriptors: the status socket and the exec pipe. */
	if ((nul = open("/dev/null", O_RDWR)) >= 0) {
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
	}
	close(ex[1]);
	if ((statusw = fcntl(statusw, F_DUPFD_CLOEXEC, 64)) < 0 ||
	    (ex[0] = fcntl(ex[0], F_DUPFD_CLOEXEC, 64)) < 0 ||
	    dup2(statusw, 3) < 0 || dup2(ex[0], 4) < 0)
		_exit(EXIT_SBX);
	close_from(5);
	statusw = 3;
	/* EOF at the command's exec (or its end): it started. */
	while (read(4, &c, 1) < 0 && errno == EINTR && !sbx_gone)
		;
	close(4);
	if (timing_on)
		proc_status(statusw, ST_TIME, TP_FORK, 0,
		    (int)(timing_us() - t));
	proc_status(statusw, ST_STARTED, 0, 0, 0);
	for (;;) {
		if (sbx_gone)
			keeper_sweep();
		/* On a terminal, also the command's stops and continues. */
		w = waitpid(-1, &st, r->tty ? WUNTRACED | WCONTINUED : 0);
		if (w == cmd)
			proc_status(statusw, ST_WAIT, 0, 0, st);
		else if (w < 0 && errno == ECHILD)
			_exit(0);
	}
}
#endif

/*
 * The run's cgroups and rlimits, and sbx's own terminal on the fds it
 * covers: first, on descriptors that nothing has moved or closed yet, and
 * before any fork, so the keeper too is in the groups.
 */
static void
child_resources(const struct run *r, int statusw)
{
	int fd;

	if (r->lim && limits_child(r->lim) < 0)
		child_fail(statusw, ST_SETUP, STEP_LIMITS, errno);
	for (fd = 0; r->tty && fd < 3; fd++)
		if ((tty_fds(r->tty) & (1U << fd)) &&
		    dup2(tty_slave(r->tty), fd) < 0)
			child_fail(statusw, ST_SETUP, STEP_TTY, errno);
}

/*
 * sbx's child: a new session (its own process group, no controlling
 * terminal but sbx's own, which a shim inside or the keeper takes), a
 * signal should sbx die, then the keeper or the command.
 */
static void
child(const struct run *r, pid_t parent, int outw, int errw, int statusw,
    int *src)
{
	proc_signals_default();
	setsid();
	child_resources(r, statusw);
#ifdef __linux__
	if (r->l->flags & L_KEEPER)
		keeper(r, parent, outw, errw, statusw, src);
	/* Should sbx itself be killed, the command does not run on alone. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(EXIT_SBX);
#else
	(void)parent;
	/* No keeper: the command leads the session and takes the terminal. */
	if (r->tty && !(r->l->flags & L_SHIM) && tty_take(0) < 0)
		child_fail(statusw, ST_SETUP, STEP_TTY, errno);
#endif
	command(r, outw, errw, statusw, src);
}

#ifdef __linux__
/*
 * A child that starts as vfork(2) does: in the caller's memory, the
 * caller's thread held until the child's exec or exit. A fork would copy
 * the caller's page tables for the child to drop them at once at its
 * exec: 0.1-0.2 ms of each of sbx's launches. fn runs on a stack of its
 * own and must write nothing of the caller's but errno: only system
 * calls, on its own frames and what arg hands it. Every signal is
 * blocked around it, so that the child, which inherits the mask, runs
 * none of the caller's handlers before it sets each signal to its
 * default (proc_signals_default()); fn must do that before anything
 * that could take one. Not for a child that lives on without an exec
 * (the keeper): the caller would wait for it; nor for one that waits on
 * another process before its exec (Landlock's command hands its filter's
 * listener to sbx first): the caller, every signal blocked, could not
 * hear that process die, and the two would wait on each other.
 */
#define SHARED_STACK	(128 * 1024)
#if defined(__SANITIZE_ADDRESS__)
#define SBX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SBX_ASAN 1
#endif
#endif
#ifndef SBX_ASAN
#define SBX_ASAN 0
#endif
static unsigned char shared_stack[SHARED_STACK] __attribute__((aligned(64)));

pid_t
proc_spawn_shared(int (*fn)(void *), void *arg)
{
	sigset_t all, old;
	int saved;
	pid_t pid;

	sigfillset(&all);
	if (sigprocmask(SIG_SETMASK, &all, &old) < 0)
		return -1;
#if SBX_ASAN
	/* AddressSanitizer cannot follow a child on a stack of its own in
	 * shared memory (it warns on the command's stderr): forked. */
	(void)shared_stack;
	if ((pid = fork()) == 0)
		_exit(fn(arg));
#else
	pid = clone(fn, shared_stack + SHARED_STACK,
	    CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
#endif
	saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return pid;
}

/* sbx's child of a launch with no keeper (bwrap), as above. */
struct shared_start {
	const struct run	*r;
	pid_t			 parent;
	int			 outw, errw, statusw;
	int			 src[LAUNCH_MAXFD];	/* the child's copy */
};

static int
shared_child(void *arg)
{
	struct shared_start *a = arg;

	child(a->r, a->parent, a->outw, a->errw, a->statusw, a->src);
	_exit(EXIT_SBX);
}

static pid_t
spawn_shared(const struct run *r, pid_t parent, int outw, int errw,
    int statusw, const int *src)
{
	struct shared_start a;

	a.r = r;
	a.parent = parent;
	a.outw = outw;
	a.errw = errw;
	a.statusw = statusw;
	memcpy(a.src, src, sizeof(a.src));
	return proc_spawn_shared(shared_child, &a);
}
#endif

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

/* The status socket: packets, so every message arrives whole. */
static int
status_socket(const struct launch *l, int st[2], struct sbx_err *e)
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, st) < 0)
		return sbx_errf(e, ERR_SPAWN, "socketpair: %s",
		    strerror(errno));
	set_cloexec(st[0]);
	set_cloexec(st[1]);
#ifdef __linux__
	/* Each message carries its sender's pid as sbx sees it: the shim's
	 * own getpid() is 1 in bwrap's pid namespace. */
	{
		int on = 1;

		(void)setsockopt(st[0], SOL_SOCKET, SO_PASSCRED, &on,
		    sizeof(on));
	}
#endif
	/* What tells the shim it runs in a launch of sbx's (shim.c). */
	if (l->flags & L_SHIM)
		proc_status(st[0], ST_GO, 0, 0, timing_on);
	return 0;
}

/* The launch's numbered descriptors, as sbx's own, close-on-exec. */
static int
launch_fds(const struct launch *l, int *src, struct sbx_err *e)
{
	size_t i;

	for (i = 0; i < l->nfd; i++) {
		src[i] = l->fd[i].src >= 0 ? dup(l->fd[i].src) :
		    data_fd(l->fd[i].data, l->fd[i].len);
		if (src[i] < 0)
			return sbx_errf(e, ERR_SPAWN, "descriptor %d: %s",
			    l->fd[i].num, strerror(errno));
		set_cloexec(src[i]);
	}
	return 0;
}

static int
spawn(struct loop *lp, struct sbx_err *e)
{
	const struct launch *l = lp->r->l;
	int outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, st[2];
	int src[LAUNCH_MAXFD];
	pid_t parent = getpid();
	size_t i;

	for (i = 0; i < LAUNCH_MAXFD; i++)
		src[i] = -1;
	if (lp->r->res->out && !lp->r->tty &&
	    (make_pipe(outp, e) < 0 || make_pipe(errp, e) < 0))
		return -1;
	if (status_socket(l, st, e) < 0 || launch_fds(l, src, e) < 0)
		return -1;
	lp->start = now_ms();
#ifdef __linux__
	if (!(l->flags & L_KEEPER))
		lp->pid = spawn_shared(lp->r, parent, outp[1], errp[1], st[1],
		    src);
	else
#endif
	if ((lp->pid = fork()) == 0)
		child(lp->r, parent, outp[1], errp[1], st[1], src);
	if (lp->pid < 0)
		return sbx_errf(e, ERR_SPAWN, "fork: %s", strerror(errno));
	if (timing_on)
		timing_mark("spawn");
	/*
	 * The child calls setsid() rather than both sides setpgid(): a new
	 * session also drops the controlling terminal (no TIOCSTI, no job
	 * control signals from it), and setsid() fails for a process that
	 * is already a group leader. Until it has run, signal_all() falls
	 * back to the pid.
	 */
	for (i = 0; i < l->nfd; i++)
		close(src[i]);
	close(st[1]);
	if (lp->r->tty)
		tty_started(lp->r->tty);
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
	pid_t		pid;
	pid_t		ppid;
	char		state;
	long		threads;
	uint64_t	ticks;	/* its CPU time and its reaped children's */
};

/*
 * "ppid pgrp ... utime stime cutime cstime priority nice num_threads":
 * fields 4 to 20 of stat.
 */
static void
parse_stat(const char *p, struct pinfo *pi)
{
	char *end;
	long long v;
	int i;

	pi->ppid = (pid_t)strtol(p, &end, 10);
	for (i = 5; i <= 20 && end != p; i++) {
		p = end;
		if (i >= 14 && i <= 17)
			pi->ticks += strtoull(p, &end, 10);
		else if ((v = strtoll(p, &end, 10)), i == 20)
			pi->threads = (long)v;
	}
}

/*
 * Dead and only waiting to be reaped: a zombie with no thread left. A
 * process whose main thread exited shows as a zombie while its other
 * threads run on, and must be killed like any other.
 */
static int
gone(const struct pinfo *pi)
{
	return pi->state == 'Z' && pi->threads <= 1;
}

/* Every process's parent, state and CPU ticks, from /proc. */
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
		memset(&t[n], 0, sizeof(t[n]));
		t[n].pid = atoi(buf);
		t[n].state = p[2];
		parse_stat(p + 4, &t[n]);
		n++;
	}
	closedir(dir);
	*np = n;
	return t;
}

/*
 * sbx's descendants, parents before children, moved to the front of t;
 * how many. NULL when there is no child at all, live or zombie: as the
 * subreaper sbx inherits every orphan, so that spares the /proc scan.
 */
static struct pinfo *
descendants(size_t *count)
{
	struct pinfo *t, tmp;
	size_t n = 0, i, head = 0, tail = 0;
	siginfo_t si;
	pid_t parent;

	*count = 0;
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 &&
	    errno == ECHILD)
		return NULL;
	if ((t = scan_procs(&n)) == NULL)
		return NULL;
	/* t[0, tail) are found; t[head] is the next parent to look below. */
	for (parent = getpid();; parent = t[head++].pid) {
		for (i = tail; i < n; i++)
			if (t[i].ppid == parent) {
				tmp = t[tail];
				t[tail++] = t[i];
				t[i] = tmp;
			}
		if (head == tail)
			break;
	}
	*count = tail;
	return t;
}

/*
 * Signal every live descendant of sbx but spare (0: none); returns how
 * many were signalled.
 */
static int
kill_tree(int sig, pid_t spare)
{
	struct pinfo *t = NULL;
	size_t n, i;
	int count = 0;

	if ((t = descendants(&n)) == NULL)
		return 0;
	for (i = 0; i < n; i++) {
		if (gone(&t[i]) || t[i].pid == spare)
			continue;
		kill(t[i].pid, sig);
		if (sig == SIGTERM)
			kill(t[i].pid, SIGCONT);
		count++;
	}
	free(t);
	return count;
}

/*
 * The CPU time of sbx's live descendants (a zombie's too, until reaped),
 * each with its reaped children's: what getrusage(RUSAGE_CHILDREN) does
 * not hold yet.
 */
int64_t
proc_tree_cpu_ms(void)
{
	struct pinfo *t;
	uint64_t ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);
	size_t n, i;

	if ((t = descendants(&n)) == NULL)
		return 0;
	for (i = 0; i < n; i++)
		ticks += t[i].ticks;
	free(t);
	return (int64_t)(ticks * 1000 / (uint64_t)(hz > 0 ? hz : 100));
}
#else
static int
kill_tree(int sig, pid_t spare)
{
	(void)sig;
	(void)spare;
	return 0;
}

int64_t
proc_tree_cpu_ms(void)
{
	return 0;
}
#endif

/* SIGTERM (with SIGCONT) or SIGKILL to the group and every descendant. */
static void
signal_all(struct loop *lp, int sig)
{
	int spare = sig != SIGKILL && (lp->r->l->flags & L_SPARE_LEADER);

	/*
	 * A leader to spare (bwrap) would answer a SIGTERM by ending the
	 * whole sandbox at once, while the command inside deserves its grace.
	 * Its descendants are all found in /proc, so no group signal then.
	 */
	if (!lp->reaped && !spare) {
		if (kill(-lp->pid, sig) < 0 && errno == ESRCH)
			kill(lp->pid, sig);
		if (sig == SIGTERM)
			kill(-lp->pid, SIGCONT);
	}
	kill_tree(sig, spare ? lp->pid : 0);
}

/* SIGKILL until no live descendant is left (a forking tree takes rounds). */
static void
kill_everything(struct loop *lp)
{
	int i;

	signal_all(lp, SIGKILL);
	for (i = 0; i < 200; i++) {
		if (kill_tree(SIGKILL, 0) == 0)
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
 * The command's wait status, from the shim or the keeper. Stopped, on a
 * terminal of sbx's own (Ctrl-Z): sbx stops too, unless it is ending the
 * run; a continue needs nothing (sbx's own SIGCONT resumed it).
 */
static void
on_wait_status(struct loop *lp, int st)
{
	if (WIFSTOPPED(st)) {
		if (lp->r->tty && !lp->term_sent)
			tty_stopped(lp->r->tty);
		return;
	}
	if (WIFCONTINUED(st))
		return;
	lp->have_cmd = 1;
	lp->cmd_status = st;
}

/*
 * The status socket. Without a shim, its end of exec (EOF with no
 * message) means the command started; with one, the shim says so.
 */
#ifdef __linux__
#define NR_pidfd_open	434
#define NR_pidfd_getfd	438
#endif

/* The descriptor a child reported (ST_FD), copied from it; or -1. */
static int
take_reported_fd(const struct status_msg *m)
{
	int pidfd, fd = -1;

#ifdef __linux__
	if (m->pid <= 0)
		return errno = ESRCH, -1;
	if ((pidfd = (int)syscall(NR_pidfd_open, m->pid, 0)) >= 0) {
		fd = (int)syscall(NR_pidfd_getfd, pidfd, m->val, 0);
		close(pidfd);
	}
#else
	(void)m;
	(void)pidfd;
	errno = ENOSYS;
#endif
	return fd;
}

/* A refusal the shim saw (ST_DENIED): counted, the first few named. */
static void
on_denied(struct loop *lp, const char *text, size_t len)
{
	struct exec_result *res = lp->r->res;

	res->ndenied++;
	denied_push(&res->denied, text, len);
}

/*
 * One message; its pid the kernel's, in sbx's own pid namespace, where the
 * socket passes credentials (0 when it tells none: never the sender's
 * word, which inside a pid namespace names another process).
 */
static ssize_t
recv_status(int fd, void *buf, size_t size)
{
	struct status_msg *m = buf;
	ssize_t n;
#ifdef __linux__
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(struct ucred))];
	} c;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *ch;
	struct ucred uc;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = buf;
	iov.iov_len = size;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = c.b;
	mh.msg_controllen = sizeof(c.b);
	if ((n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) <
	    (ssize_t)sizeof(*m))
		return n;
	m->pid = 0;
	for (ch = CMSG_FIRSTHDR(&mh); ch; ch = CMSG_NXTHDR(&mh, ch))
		if (ch->cmsg_level == SOL_SOCKET &&
		    ch->cmsg_type == SCM_CREDENTIALS) {
			memcpy(&uc, CMSG_DATA(ch), sizeof(uc));
			m->pid = uc.pid;
		}
#else
	n = recv(fd, buf, size, MSG_DONTWAIT);
#endif
	return n;
}

static void
read_status(struct loop *lp)
{
	struct {
		struct status_msg	m;
		char			text[STATUS_TEXT_MAX];
	} p;
	struct status_msg m;
	ssize_t n;
	int fd;

	while (lp->status >= 0) {
		n = recv_status(lp->status, &p, sizeof(p));
		if (n >= (ssize_t)sizeof(m))
			m = p.m;
		if (n >= (ssize_t)sizeof(m) && m.kind == ST_DENIED) {
			on_denied(lp, p.text, (size_t)n - sizeof(m));
			continue;
		}
		if (n == (ssize_t)sizeof(m) && m.kind == ST_FD) {
			fd = lp->r->l->take_fd ? take_reported_fd(&m) : -1;
			proc_status(lp->status, ST_GO, 0, 0, fd < 0 ? errno : 0);
			if (fd >= 0)
				lp->r->l->take_fd(lp->r->l->priv, fd,
				    (pid_t)m.pid);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			close(lp->status);
			lp->status = -1;
			if (!(lp->r->l->flags & L_SHIM) && !lp->exec_errno &&
			    !lp->setup_failed && !lp->started) {
				lp->started = 1;
				if (timing_on)
					timing_mark("start");
			}
			return;
		}
		if ((size_t)n < sizeof(m))
			continue;
		switch (m.kind) {
		case ST_STARTED:
			lp->started = 1;
			if (timing_on)
				timing_mark("start");
			break;
		case ST_TIME: timing_reported(m.step, m.val); break;
		case ST_EXEC:
			lp->exec_errno = m.val ? m.val : EIO;
			lp->started = 0;
			break;
		case ST_SETUP:
			if (lp->setup_failed)
				break;
			lp->setup_failed = m.val ? m.val : EIO;
			lp->r->fail.step = m.step < NSTEPS ? m.step : STEP_SHIM;
			lp->r->fail.fd = m.arg;
			lp->r->fail.err = lp->setup_failed;
			break;
		case ST_WAIT: on_wait_status(lp, m.val); break;
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

/* The command's output is still open: the pipes, or the terminal. */
static int
output_open(const struct loop *lp)
{
	return lp->out >= 0 || lp->err >= 0 ||
	    (lp->r->tty && tty_live(lp->r->tty));
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
	lp->kill_at = now_ms() + lp->r->kill_after_ms;
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
			if (sigs[i] == SIGWINCH || sigs[i] == SIGCONT ||
			    sigs[i] == SIGTSTP) {
				if (lp->r->tty)
					tty_signal(lp->r->tty, sigs[i]);
				continue;
			}
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
	if (lp->r->lim && !cmd_done(lp) && !lp->term_sent &&
	    limits_check(lp->r->lim, now))
		start_termination(lp);
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
		if (lp->r->tty)
			tty_hangup(lp->r->tty);
	}
}

/* After the command's own process: leftovers get the drain window. */
static void
after_cmd(struct loop *lp, int64_t now)
{
	if (timing_on && cmd_done(lp) && !lp->run_timed) {
		lp->run_timed = 1;
		timing_mark("run");
	}
	if (!cmd_done(lp) || lp->killed)
		return;
	/*
	 * A pid namespace ends with its leader, taking every process in it:
	 * once the leader is reaped there is nothing left to sweep, and it
	 * ends by itself when the shim does (bounded by the drain window).
	 */
	if ((lp->r->l->flags & L_PIDNS) && !output_open(lp)) {
		if (lp->reaped)
			lp->killed = 1;
		else if (lp->drain_at < 0)
			lp->drain_at = now + DRAIN_MS;
		return;
	}
	/*
	 * The keeper ends by itself once nothing of the command's is left,
	 * and with it sbx's last child: the sweep then needs no scan of
	 * /proc (descendants()), which costs about 5 us for every process
	 * on the machine, every run. Leftovers keep it: a moment, then swept.
	 */
	if ((lp->r->l->flags & L_KEEPER) && !lp->reaped &&
	    !output_open(lp)) {
		if (lp->sweep_at < 0)
			lp->sweep_at = now + KEEPER_MS;
		if (now < lp->sweep_at)
			return;
	}
	if (!output_open(lp)) {
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
			kill_tree(SIGKILL, 0);
			usleep(1000);
		}
	}
}

static int
finished(const struct loop *lp)
{
	return lp->reaped && !output_open(lp) && lp->status < 0;
}

/* sbx's own four, then each loop part's; where each part's start. */
static size_t
fill_pollfds(struct loop *lp, struct pollfd *fds, size_t *at)
{
	size_t n = 0, i;

	fds[n].fd = sigpipe_fds[0];
	fds[n++].events = POLLIN;
	fds[n].fd = lp->out;
	fds[n++].events = POLLIN;
	fds[n].fd = lp->err;
	fds[n++].events = POLLIN;
	fds[n].fd = lp->status;
	fds[n++].events = POLLIN;
	for (i = 0; i < lp->r->nparts; i++) {
		const struct loop_part *pt = &lp->r->parts[i];

		at[i] = n;
		n += pt->pollfds(pt->ctx, fds + n, MAX_POLL - n);
	}
	at[i] = n;
	return n;
}

static int
poll_timeout(const struct loop *lp, int64_t now)
{
	int64_t t = -1;
	size_t i;

	if (!cmd_done(lp))
		t = earliest(t, lp->timeout_at);
	if (!cmd_done(lp) && !lp->term_sent && lp->r->lim)
		t = earliest(t, limits_deadline(lp->r->lim));
	if (!lp->killed)
		t = earliest(t, lp->kill_at);
	t = earliest(t, lp->drain_at);
	if (!lp->killed)
		t = earliest(t, lp->sweep_at);
	for (i = 0; i < lp->r->nparts; i++)
		t = earliest(t, lp->r->parts[i].deadline(lp->r->parts[i].ctx));
	if (t < 0)
		return -1;
	return t <= now ? 0 : (int)(t - now);
}

#define MAX_PARTS	4

static void
loop_once(struct loop *lp)
{
	static struct pollfd fds[MAX_POLL];
	size_t at[MAX_PARTS + 1], i, n = fill_pollfds(lp, fds, at);
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
	 * Also on a timeout: a part's own deadlines (the proxy's idle
	 * connections) are cleared only by its handler; skipping it after
	 * poll() returned 0 made every later poll() return at once, a busy
	 * loop.
	 */
	for (i = 0; i < lp->r->nparts; i++)
		lp->r->parts[i].handle(lp->r->parts[i].ctx, fds + at[i],
		    at[i + 1] - at[i]);
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

/* The first line the sandbox program wrote to stderr, when captured. */
static void
first_line(const struct capture *c, char *line, size_t size)
{
	const char *p[3];
	size_t len[3], n;
	uint64_t cut;

	line[0] = '\0';
	if (c == NULL)
		return;
	capture_parts(c, p, len, &cut);
	n = strcspn(p[0], "\n");
	n = n < len[0] ? n : len[0];
	n = n < size - 1 ? n : size - 1;
	memcpy(line, p[0], n);
	line[n] = '\0';
}

/*
 * The command never ran: it could not be executed, a setup step failed
 * (which one, and why), or the sandbox program ended before anything of
 * sbx's ran inside it (the backend may know more: be->explain).
 */
static int
start_error(struct loop *lp, struct sbx_err *e)
{
	struct start_fail *f = &lp->r->fail;
	const char *name = shown(lp->r->what);

	if (lp->setup_failed) {
		if (f->step == STEP_REOPEN)
			return sbx_errf(e, ERR_POLICY, "%s cannot be reopened "
			    "inside the sandbox: %s", std_fd_name[f->fd & 3],
			    strerror(f->err));
		return sbx_errf(e, ERR_SANDBOX, "sandbox setup: %s: %s",
		    step_names[f->step], strerror(f->err));
	}
	if (lp->exec_errno == ENOENT)
		return sbx_errf(e, ERR_NOT_FOUND, "%s: command not found", name);
	if (lp->exec_errno)
		return sbx_errf(e, ERR_NOT_EXECUTABLE, "%s: %s", name,
		    strerror(lp->exec_errno));
	f->step = -1;
	first_line(lp->r->res->err, f->line, sizeof(f->line));
	return sbx_errf(e, ERR_UNAVAILABLE, "%s: the sandbox failed to start",
	    lp->r->l->be->name);
}

int
proc_run(struct run *r, struct sbx_err *e)
{
	struct loop lp;

	memset(&lp, 0, sizeof(lp));
	memset(&r->fail, 0, sizeof(r->fail));
	lp.r = r;
	lp.out = lp.err = lp.status = -1;
	lp.timeout_at = lp.kill_at = lp.drain_at = lp.sweep_at = -1;
	if (r->nparts > MAX_PARTS)
		return sbx_errf(e, ERR_INTERNAL, "too many loop parts");
	if (proc_init() < 0 || (r->tty && catch_tty_signals() < 0))
		return sbx_errf(e, ERR_SPAWN, "signals: %s", strerror(errno));
	if (spawn(&lp, e) < 0)
		return -1;
	if (r->timeout_ms > 0)
		lp.timeout_at = lp.start + r->timeout_ms;
	while (!finished(&lp))
		loop_once(&lp);
	reap_all(&lp);
	if (timing_on)
		timing_mark("end");
	fill_result(&lp);
	if (!r->res->started && !r->res->timed_out && !r->res->aborted)
		return start_error(&lp, e);
	return 0;
}

/* ---- the one probe runner ---- */

#define PROBE_TIMEOUT_MS	10000

/* Read fd until EOF or the deadline; keep the first line. */
static void
probe_read(int fd, char *line, size_t size)
{
	struct pollfd pfd;
	int64_t deadline = now_ms() + PROBE_TIMEOUT_MS, left;
	size_t len = 0, k;
	char buf[512];
	ssize_t n;

	line[0] = '\0';
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		if ((left = deadline - now_ms()) <= 0 ||
		    poll(&pfd, 1, (int)left) <= 0)
			return;
		if ((n = read(fd, buf, sizeof(buf))) <= 0)
			return;
		k = (size_t)n < size - 1 - len ? (size_t)n : size - 1 - len;
		memcpy(line + len, buf, k);
		len += k;
		line[len] = '\0';
		line[strcspn(line, "\n")] = '\0';
		len = strlen(line);
	}
}

/*
 * A trial run of a sandbox program (--probe): argv[0] absolute, an empty
 * environment, stdin and stdout /dev/null, the first line of stderr kept.
 * Its exit status, 128+N for signal N, or -1 when it could not start.
 */
int
proc_probe(const char *const *argv, char *line, size_t size)
{
	char *noenv[] = { NULL };
	struct sbx_err e;
	int p[2], st, nul;
	pid_t pid;

	line[0] = '\0';
	if (make_pipe(p, &e) < 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		if ((nul = open("/dev/null", O_RDWR)) < 0 ||
		    dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		execve(argv[0], (char *const *)argv, noenv);
		_exit(127);
	}
	close(p[1]);
	probe_read(p[0], line, size);
	close(p[0]);
	kill(pid, SIGKILL);	/* a no-op once it exited; not reaped yet */
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
