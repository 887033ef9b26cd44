/*
 * tty.c: a pseudo-terminal of sbx's own for the command: with --tty, and
 * by default with --passthrough when standard input and output are
 * terminals. The command gets the pty's slave as its controlling
 * terminal (the shim inside a sandbox, or proc.c's keeper, takes it and
 * puts the command's process group in its foreground), so Ctrl-C, Ctrl-Z,
 * full-screen programs and TIOCSTI all act on that terminal, never on the
 * user's. sbx relays the bytes both ways as a loop part, through two
 * bounded buffers, and passes window sizes, stops and continues on.
 *
 * Invariants: every descriptor opened here is close-on-exec; sbx never
 * sets O_NONBLOCK on a descriptor it shares with its caller (it writes to
 * its standard output only after poll() said it may, at most PIPE_BUF at a
 * time to a pipe, a socket or a terminal); the user's terminal is raw only
 * while the command runs in the foreground, and tty_restore() puts back
 * the exact modes found, from every way out: the end of the run, fail(),
 * exit(), and before sbx stops itself with the command.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "sbx.h"

#define RELAY_BUF	65536

/* One direction of the relay: bytes from off to off + len are pending. */
struct relay {
	size_t	 off;
	size_t	 len;
	char	 b[RELAY_BUF];
};

struct tty {
	int		 master;
	int		 slave;		/* sbx's copy, until the child has it */
	unsigned	 fds;		/* the command's fds that are the pty */
	int		 in;		/* sbx's stdin, relayed in; -1 at EOF */
	int		 out;		/* sbx's stdout; -1 when captured */
	size_t		 chunk;		/* the most written to out at once */
	struct capture	*cap;
	int		 user;		/* a terminal of the user's, or -1 */
	int		 eof;		/* stdin ended: the EOF is owed */
	int		 mid_line;	/* the last byte relayed in was no \n */
	int		 live;		/* the master has not hung up */
	struct relay	 up;		/* the user's input, to the command */
	struct relay	 down;		/* the command's output, to the user */
};

/* The user's terminal modes while it is raw (fd -1: not raw). */
static struct termios saved;
static int saved_fd = -1;

/*
 * Which of the command's fds get the terminal (bits 0-2), or 0 for none.
 * With --passthrough a standard error that is not a terminal stays the
 * command's own (make 2>log keeps its log); captured, all three go to
 * the terminal, as they would on one.
 */
unsigned
tty_wanted(const struct sbx_opts *o)
{
	if (o->tty == TTY_OFF)
		return 0;
	if (o->tty == TTY_AUTO && !(o->passthrough && isatty(0) && isatty(1)))
		return 0;
	if (!o->passthrough)
		return 7;
	return 3 | (isatty(2) ? 4 : 0);
}

static int
first_tty(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (isatty(fd))
			return fd;
	return -1;
}

/* The pair, close-on-exec, the slave given the user's modes and size. */
static int
open_pair(struct tty *t, struct sbx_err *e)
{
	struct termios tio;
	struct winsize ws;
	char *name;

	if ((t->master = posix_openpt(O_RDWR | O_NOCTTY)) < 0)
		return sbx_errf(e, ERR_SPAWN, "pseudo-terminal: %s",
		    strerror(errno));
	if (set_cloexec(t->master) < 0 || grantpt(t->master) < 0 ||
	    unlockpt(t->master) < 0 || (name = ptsname(t->master)) == NULL ||
	    (t->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return sbx_errf(e, ERR_SPAWN, "pseudo-terminal: %s",
		    strerror(errno));
	if (t->user >= 0 && tcgetattr(t->user, &tio) == 0)
		tcsetattr(t->slave, TCSANOW, &tio);
	if (t->user < 0 || ioctl(t->user, TIOCGWINSZ, &ws) < 0 ||
	    ws.ws_row == 0 || ws.ws_col == 0) {
		memset(&ws, 0, sizeof(ws));
		ws.ws_row = 24;
		ws.ws_col = 80;
	}
	ioctl(t->slave, TIOCSWINSZ, &ws);
	return set_nonblock(t->master);
}

/* A terminal for the run; cap: its output is captured there. */
int
tty_open(struct tty **tp, unsigned fds, struct capture *cap,
    struct sbx_err *e)
{
	static int registered;
	struct tty *t = xcalloc(1, sizeof(*t));
	struct stat st;

	t->master = t->slave = -1;
	t->fds = fds;
	t->cap = cap;
	t->in = 0;
	t->out = cap ? -1 : 1;
	t->user = first_tty();
	t->live = 1;
	/* Only a pipe, a socket or a terminal can make a write block. */
	t->chunk = fstat(1, &st) == 0 && (S_ISFIFO(st.st_mode) ||
	    S_ISSOCK(st.st_mode) || isatty(1)) ? PIPE_BUF : RELAY_BUF;
	*tp = t;
	if (!registered && atexit(tty_restore) == 0)
		registered = 1;
	return open_pair(t, e);
}

int
tty_slave(const struct tty *t)
{
	return t->slave;
}

unsigned
tty_fds(const struct tty *t)
{
	return t->fds;
}

/*
 * The user's terminal raw, its modes read afresh (the shell may have
 * changed them while sbx was stopped). Run in the background, sbx stops
 * here (SIGTTOU) until it is brought to the foreground, as vim does.
 */
static void
raw_on(void)
{
	struct termios tio;

	if (saved_fd >= 0 || !isatty(0) || tcgetattr(0, &saved) < 0)
		return;
	tio = saved;
	tio.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR |
	    IGNCR | ICRNL | IXON);
	tio.c_oflag &= ~(tcflag_t)OPOST;
	tio.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
	tio.c_cflag &= ~(tcflag_t)(CSIZE | PARENB);
	tio.c_cflag |= CS8;
	tio.c_cc[VMIN] = 1;
	tio.c_cc[VTIME] = 0;
	if (tcsetattr(0, TCSANOW, &tio) == 0)
		saved_fd = 0;
}

/*
 * The modes found, back; SIGTTOU blocked, so that a run left in the
 * background still puts the terminal back on its way out.
 */
void
tty_restore(void)
{
	sigset_t ttou, old;

	if (saved_fd < 0)
		return;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetattr(saved_fd, TCSANOW, &saved);
	sigprocmask(SIG_SETMASK, &old, NULL);
	saved_fd = -1;
}

/* After the fork: the child holds the slave now; the user's goes raw. */
void
tty_started(struct tty *t)
{
	if (t->slave >= 0)
		close(t->slave);
	t->slave = -1;
	raw_on();
}

static void
resize(const struct tty *t)
{
	struct winsize ws;

	/* On the master, the kernel also sends the command SIGWINCH. */
	if (t->user >= 0 && ioctl(t->user, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_row > 0 && ws.ws_col > 0)
		ioctl(t->master, TIOCSWINSZ, &ws);
}

/* Raw again and the command's foreground continued (it may have been). */
static void
resume(struct tty *t)
{
	pid_t pg;

	raw_on();
	resize(t);
	/* The slave's foreground group, as sbx's pid namespace numbers it. */
	if ((pg = tcgetpgrp(t->master)) > 0)
		kill(-pg, SIGCONT);
}

/*
 * Signals to sbx that concern the terminal: a new window size; SIGTSTP
 * (kill -TSTP sbx) stops the command as Ctrl-Z would, and its report then
 * stops sbx; SIGCONT (fg, bg) resumes.
 */
void
tty_signal(struct tty *t, int sig)
{
	if (sig == SIGWINCH)
		resize(t);
	else if (sig == SIGTSTP)
		ioctl(t->master, TIOCSIG, SIGTSTP);
	else if (sig == SIGCONT && t->master >= 0)
		resume(t);
}

/*
 * The command stopped (Ctrl-Z): as outside, the user's shell gets its
 * terminal back. sbx restores the modes and stops its own process group
 * with SIGTSTP; fg continues it, and it continues the command. A run that
 * is not interactive (the user's terminal not raw) stops nothing; nor does
 * a process group without job control (orphaned), where SIGTSTP is void.
 */
void
tty_stopped(struct tty *t)
{
	struct sigaction dfl, old;

	if (saved_fd < 0)
		return;
	tty_restore();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGTSTP, &dfl, &old);
	kill(0, SIGTSTP);
	sigaction(SIGTSTP, &old, NULL);
	resume(t);
}

/* The output is still open: the command's side, or bytes owed to stdout. */
int
tty_live(const struct tty *t)
{
	return t->live || t->down.len > 0;
}

/* The drain window is over: whatever still holds the slave is cut off. */
void
tty_hangup(struct tty *t)
{
	t->live = 0;
	t->down.len = 0;
}

void
tty_close(struct tty *t)
{
	if (t == NULL)
		return;
	tty_restore();
	if (t->master >= 0)
		close(t->master);
	if (t->slave >= 0)
		close(t->slave);
	free(t);
}

/* ---- the relay, a loop part ---- */

static size_t
room(const struct relay *r)
{
	return sizeof(r->b) - r->off - r->len;
}

static void
consumed(struct relay *r, size_t n)
{
	r->off += n;
	r->len -= n;
	if (r->len == 0)
		r->off = 0;
}

/* Free the tail for reading: move the pending bytes to the front. */
static void
compact(struct relay *r)
{
	if (r->off > 0 && room(r) < sizeof(r->b) / 2) {
		memmove(r->b, r->b + r->off, r->len);
		r->off = 0;
	}
}

size_t
tty_pollfds(void *ctx, struct pollfd *fds, size_t max)
{
	struct tty *t = ctx;

	if (max < 3)
		return 0;
	compact(&t->up);
	compact(&t->down);
	fds[0].fd = -1;
	fds[0].events = 0;
	/* A full buffer reads nothing: a hung-up master would spin poll(). */
	if (t->live && (t->cap || room(&t->down) > 0))
		fds[0].events |= POLLIN;
	if (t->live && (t->up.len > 0 || t->eof))
		fds[0].events |= POLLOUT;
	if (fds[0].events)
		fds[0].fd = t->master;
	fds[1].fd = t->live && t->in >= 0 && room(&t->up) > 0 ? t->in : -1;
	fds[1].events = POLLIN;
	fds[2].fd = t->out >= 0 && t->down.len > 0 ? t->out : -1;
	fds[2].events = POLLOUT;
	return 3;
}

/* sbx's stdin into the up buffer; at its end the EOF is owed. */
static void
read_in(struct tty *t)
{
	ssize_t n = read(t->in, t->up.b + t->up.off + t->up.len, room(&t->up));

	if (n > 0) {
		t->up.len += (size_t)n;
		return;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	t->in = -1;
	t->eof = 1;
}

/*
 * The end of a non-terminal stdin, as a terminal gives it: the EOF
 * character, after another one that ends a partial line. A command that
 * put its terminal out of canonical mode reads no end.
 */
static void
send_eof(struct tty *t)
{
	struct termios tio;
	char c[2];

	t->eof = 0;
	if (tcgetattr(t->master, &tio) < 0 || !(tio.c_lflag & ICANON))
		return;
	c[0] = c[1] = (char)tio.c_cc[VEOF];
	(void)!write(t->master, c, t->mid_line ? 2 : 1);
}

static void
write_up(struct tty *t)
{
	ssize_t n;

	if (t->up.len > 0) {
		n = write(t->master, t->up.b + t->up.off, t->up.len);
		if (n > 0) {
			t->mid_line = t->up.b[t->up.off + n - 1] != '\n';
			consumed(&t->up, (size_t)n);
		} else if (n < 0 && errno != EAGAIN && errno != EINTR)
			t->up.len = 0;	/* hung up: nobody reads it */
	}
	if (t->up.len == 0 && t->eof)
		send_eof(t);
}

/*
 * The command's output: one read per readiness, which is all a terminal
 * holds at a time (a read until EAGAIN cost a system call per 4 KiB).
 * EIO, or 0: every holder of the slave is gone.
 */
static void
read_down(struct tty *t)
{
	static char buf[RELAY_BUF];
	ssize_t n;

	if (t->cap)
		n = read(t->master, buf, sizeof(buf));
	else if (room(&t->down) == 0)
		return;
	else
		n = read(t->master, t->down.b + t->down.off + t->down.len,
		    room(&t->down));
	if (n > 0 && t->cap)
		capture_add(t->cap, buf, (size_t)n);
	else if (n > 0)
		t->down.len += (size_t)n;
	else if (n == 0 || (errno != EAGAIN && errno != EINTR))
		t->live = 0;
}

static void
write_down(struct tty *t)
{
	size_t k = t->down.len < t->chunk ? t->down.len : t->chunk;
	ssize_t n = write(t->out, t->down.b + t->down.off, k);

	if (n > 0)
		consumed(&t->down, (size_t)n);
	else if (n < 0 && errno != EINTR && errno != EAGAIN)
		t->down.len = 0;	/* stdout is gone: drop, as a pipe would */
}

void
tty_handle(void *ctx, const struct pollfd *fds, size_t n)
{
	struct tty *t = ctx;

	if (n < 3)
		return;
	if (fds[1].revents)
		read_in(t);
	if (fds[0].revents & (POLLOUT | POLLERR | POLLHUP))
		write_up(t);
	if (fds[0].revents & (POLLIN | POLLERR | POLLHUP))
		read_down(t);
	if (fds[2].revents && t->down.len > 0)
		write_down(t);
}

int64_t
tty_deadline(const void *ctx)
{
	(void)ctx;
	return -1;
}

/* ---- in the session that owns the terminal ---- */

/* A session leader with no terminal takes fd's as its controlling one. */
int
tty_take(int fd)
{
	return ioctl(fd, TIOCSCTTY, 0);
}

/*
 * In the command's process, before exec: a process group of its own, in
 * the terminal's foreground, as a shell puts a job there. SIGTTOU is
 * ignored meanwhile: a background group may not otherwise change it.
 */
void
tty_foreground(int fd)
{
	struct sigaction ign, old;

	setpgid(0, 0);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGTTOU, &ign, &old);
	tcsetpgrp(fd, getpgrp());
	sigaction(SIGTTOU, &old, NULL);
}

/*
 * In the terminal's session leader (the shim, the keeper), after the fork:
 * the command's process group is the terminal's foreground. The command
 * does the same itself (tty_foreground()): whichever runs first.
 */
void
tty_give(int fd, pid_t pid)
{
	setpgid(pid, pid);
	tcsetpgrp(fd, pid);
}
