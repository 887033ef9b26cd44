/*
 * util.c: small utilities shared by every file: checked allocation (out of
 * memory is an sbx failure, exit 125), string vectors, error records,
 * duration and size parsing with every range checked, shell quoting for
 * --dry-run, finding a program by absolute path only, and the one
 * capability drop that both Linux sandboxes use.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "sbx.h"

static void
oom(void)
{
	static const char msg[] = "sbx: out of memory\n";

	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(EXIT_SBX);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		oom();
	return p;
}

char *
xstrdup(const char *s)
{
	char *d = strdup(s);

	if (d == NULL)
		oom();
	return d;
}

static char *
xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	return s;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

static void
strv_add(struct strv *sv, char *s)
{
	if (sv->n + 2 > sv->cap) {
		sv->cap = sv->cap ? sv->cap * 2 : 8;
		sv->v = xrealloc(sv->v, sv->cap * sizeof(*sv->v));
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void
strv_push(struct strv *sv, const char *s)
{
	strv_add(sv, xstrdup(s));
}

/*
 * A refusal for a result's list (denied): named once, where first seen,
 * while there is room; the caller counts every one. Without this, a
 * library that retries (glibc's NSS, trying a socket per lookup) would
 * fill the list and push the refusal that matters out of it.
 */
void
denied_push(struct strv *sv, const char *text, size_t len)
{
	size_t i;

	if (len == 0 || sv->n >= DENIED_MAX)
		return;
	for (i = 0; i < sv->n; i++)
		if (strncmp(sv->v[i], text, len) == 0 && sv->v[i][len] == '\0')
			return;
	strv_pushf(sv, "%.*s", (int)len, text);
}

void
strv_pushf(struct strv *sv, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strv_add(sv, xvasprintf(fmt, ap));
	va_end(ap);
}

void
strv_free(struct strv *sv)
{
	size_t i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

/* NAME=VALUE in env, replacing an earlier NAME: the one env setter. */
void
env_put(struct strv *env, const char *name, const char *value)
{
	size_t i, n = strlen(name);

	for (i = 0; i < env->n; i++)
		if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=') {
			free(env->v[i]);
			env->v[i] = xasprintf("%s=%s", name, value);
			return;
		}
	strv_pushf(env, "%s=%s", name, value);
}

/* NAME's value in env, or NULL. */
const char *
env_get(const struct strv *env, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < env->n; i++)
		if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=')
			return env->v[i] + n + 1;
	return NULL;
}

/* NAME gets value, or value added, a space apart, to what NAME holds. */
void
env_add(struct strv *env, const char *name, const char *value)
{
	const char *old = env_get(env, name);
	char *both;

	if (old == NULL || *old == '\0') {
		env_put(env, name, value);
		return;
	}
	both = xasprintf("%s %s", old, value);
	env_put(env, name, both);
	free(both);
}

int
sbx_errf(struct sbx_err *e, enum err_kind kind, const char *fmt, ...)
{
	va_list ap;

	e->kind = kind;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

const char *
err_kind_name(enum err_kind k)
{
	static const char *const names[] = {
#define X(kind, name) name,
		SBX_ERR_KINDS
#undef X
	};

	if ((size_t)k >= sizeof(names) / sizeof(names[0]))
		return "internal";
	return names[k];
}

int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * A duration: a decimal number with an optional fraction and unit (ms, s,
 * m, h; none means seconds). Limited to 30 days so that every deadline
 * fits in an int64 of milliseconds and poll()'s int timeout.
 */
int
parse_duration(const char *s, int64_t *ms)
{
	const int64_t max = 30LL * 24 * 3600 * 1000;
	int64_t whole = 0, frac = 0, scale = 1, mult;
	const char *p = s;

	if (*p < '0' || *p > '9')
		if (!(*p == '.' && p[1] >= '0' && p[1] <= '9'))
			return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (*p - '0');
		if (whole > max)
			return -1;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale < 1000000000) {
				frac = frac * 10 + (*p - '0');
				scale *= 10;
			}
	}
	if (strcmp(p, "ms") == 0)
		mult = 1;
	else if (*p == '\0' || strcmp(p, "s") == 0)
		mult = 1000;
	else if (strcmp(p, "m") == 0)
		mult = 60 * 1000;
	else if (strcmp(p, "h") == 0)
		mult = 3600 * 1000;
	else
		return -1;
	if (whole > max / mult)
		return -1;
	*ms = whole * mult + frac * mult / scale;
	if (*ms > max)
		return -1;
	/* A positive duration below one millisecond still means a limit. */
	if (*ms == 0 && (whole || frac))
		*ms = 1;
	return 0;
}

/* A size: digits with an optional K, M or G (powers of 1024), at most 64G. */
int
parse_size(const char *s, size_t *out)
{
	const unsigned long long max = 64ULL << 30;
	unsigned long long v = 0, mult = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned long long)(*p - '0');
		if (v > max)
			return -1;
	}
	switch (*p) {
	case '\0':		break;
	case 'k': case 'K':	mult = 1ULL << 10; p++; break;
	case 'm': case 'M':	mult = 1ULL << 20; p++; break;
	case 'g': case 'G':	mult = 1ULL << 30; p++; break;
	default:		return -1;
	}
	if (*p == 'b' || *p == 'B')
		p++;
	if (*p != '\0' || v > max / mult || v * mult > (unsigned long long)SIZE_MAX / 2)
		return -1;
	*out = (size_t)(v * mult);
	return 0;
}

/* Quote for a POSIX shell: bare when safe, else in single quotes. */
char *
shell_quote(const char *s)
{
	const char *p;
	size_t n = 3;
	char *q, *d;

	if (*s != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,@%") == strlen(s))
		return xstrdup(s);
	for (p = s; *p; p++)
		n += *p == '\'' ? 4 : 1;
	q = d = xmalloc(n);
	*d++ = '\'';
	for (p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(d, "'\\''", 4);
			d += 4;
		} else
			*d++ = *p;
	}
	*d++ = '\'';
	*d = '\0';
	return q;
}

/* dir/name, with no double slash when dir is "/"; no printf on this path. */
char *
path_join(const char *dir, const char *name)
{
	size_t dl = strcmp(dir, "/") ? strlen(dir) : 0, nl = strlen(name);
	char *p = xmalloc(dl + nl + 2);

	memcpy(p, dir, dl);
	p[dl] = '/';
	memcpy(p + dl + 1, name, nl + 1);
	return p;
}

/* 1 when path is dir or lies below it (both absolute and clean). */
int
path_under(const char *path, const char *dir)
{
	/* One pass that stops at the first difference: the policy asks this
	 * of every held name against every writable folder, and most differ
	 * within a few bytes (a strlen and a strncmp each were 8% of a
	 * launch's instructions). */
	if (dir[0] == '/' && dir[1] == '\0')
		return path[0] == '/';
	while (*dir != '\0' && *path == *dir) {
		path++;
		dir++;
	}
	return *dir == '\0' && (*path == '\0' || *path == '/');
}

/*
 * A field of /proc/self/mountinfo (a root, a mount point) as the kernel
 * writes it, \ooo for a space, a tab, a newline or a backslash: decoded
 * in place.
 */
void
mnt_unescape(char *s)
{
	char *d = s;

	for (; *s; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
			    (s[3] - '0'));
			s += 3;
		} else
			*d = *s;
	}
	*d = '\0';
}

/*
 * The mount table, /proc/self/mountinfo, in one buffer (*buf, freed by
 * the caller), read with read(2) and cut up in place: no stdio, no copy
 * of each line. Each line's device, root, mount point (both decoded) and
 * options point into it. 0 lines when it cannot be read.
 */
size_t
mnt_read(struct mnt_line **out, char **buf)
{
	char *b = NULL, *line, *next, *f[7], *p;
	size_t len = 0, cap = 0, n = 0, max = 0;
	struct mnt_line *m = NULL;
	ssize_t r;
	int fd, k;

	*out = NULL;
	*buf = NULL;
	if ((fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	for (;;) {
		if (cap - len < 4096)
			b = xrealloc(b, cap = 2 * cap + 16384);
		if ((r = read(fd, b + len, cap - len - 1)) < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (r < 0 || b == NULL) {
		free(b);
		return 0;
	}
	b[len] = '\0';
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... */
	for (line = b; *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		else
			next = line + strlen(line);
		for (k = 0, p = line; k < 7 && p != NULL; k++)
			f[k] = strsep(&p, " ");
		if (k < 7 || f[5] == NULL)
			continue;
		mnt_unescape(f[3]);
		mnt_unescape(f[4]);
		if (n == max)
			m = xrealloc(m, (max = 2 * max + 64) * sizeof(*m));
		m[n].dev = f[2];
		m[n].root = f[3];
		m[n].at = f[4];
		m[n].opts = f[5];
		n++;
	}
	*out = m;
	*buf = b;
	return n;
}

const char *
signal_name(int sig)
{
	static const struct { int sig; const char *name; } t[] = {
		{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" },
		{ SIGQUIT, "SIGQUIT" }, { SIGILL, "SIGILL" },
		{ SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },
		{ SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
		{ SIGKILL, "SIGKILL" }, { SIGUSR1, "SIGUSR1" },
		{ SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
		{ SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" },
		{ SIGTERM, "SIGTERM" }, { SIGCHLD, "SIGCHLD" },
		{ SIGCONT, "SIGCONT" }, { SIGSTOP, "SIGSTOP" },
		{ SIGTSTP, "SIGTSTP" }, { SIGTTIN, "SIGTTIN" },
		{ SIGTTOU, "SIGTTOU" }, { SIGURG, "SIGURG" },
		{ SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
		{ SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" },
		{ SIGWINCH, "SIGWINCH" }, { SIGIO, "SIGIO" },
		{ SIGSYS, "SIGSYS" },
	};
	static char buf[16];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].sig == sig)
			return t[i].name;
	snprintf(buf, sizeof(buf), "SIG%d", sig);
	return buf;
}

int
set_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);

	return fl < 0 ? -1 : fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/*
 * The absolute path of an executable named name, searched in $PATH, or
 * NULL. Relative PATH entries and entries inside any of the folders in
 * avoid (the writable ones) are skipped: a sandboxed command must not be
 * able to plant the sandbox program that the next run executes.
 */
char *
find_program(const char *name, const struct strv *avoid)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL, *full;
	size_t i;
	int skip;

	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir && !found;
	    dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] != '/')
			continue;
		skip = 0;
		for (i = 0; avoid && i < avoid->n; i++)
			if (path_under(dir, avoid->v[i]))
				skip = 1;
		if (skip)
			continue;
		full = path_join(dir, name);
		if (access(full, X_OK) == 0)
			found = full;
		else
			free(full);
	}
	free(copy);
	return found;
}

/*
 * sbx's own executable, resolved: the shim it runs inside a sandbox, and
 * a protected path when it lies in a writable folder.
 */
char *
self_path(const char *argv0)
{
	char *self;
#ifdef __linux__
	char buf[PATH_MAX];
	struct stat a, b;
	ssize_t n;

	/* The kernel's link is already absolute and resolved: one call, not
	 * realpath(3)'s one per component. It names this very file, or
	 * (moved, deleted) nothing is trusted. */
	(void)argv0;
	self = NULL;
	if ((n = readlink("/proc/self/exe", buf, sizeof(buf) - 1)) > 0 &&
	    buf[0] == '/') {
		buf[n] = '\0';
		if (stat("/proc/self/exe", &a) == 0 && stat(buf, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			self = xstrdup(buf);
	}
#else
	self = strchr(argv0, '/') ? realpath(argv0, NULL) :
	    find_program(argv0, NULL);
#endif
	return self ? self : xstrdup("sbx");
}

/* Run the file at path; a script without #! goes to /bin/sh, as execvp. */
static void
exec_file(const char *path, char **argv, char **envp)
{
	size_t n;
	char **sh;

	execve(path, argv, envp);
	if (errno != ENOEXEC)
		return;
	for (n = 0; argv[n]; n++)
		;
	if ((sh = malloc((n + 2) * sizeof(*sh))) == NULL)
		return;
	sh[0] = "sh";
	sh[1] = (char *)path;
	memcpy(sh + 2, argv + 1, n * sizeof(*sh));
	execve("/bin/sh", sh, envp);
	free(sh);
	errno = ENOEXEC;
}

/*
 * execvp() with the shell's answer to "not found": a name without a slash
 * is searched in envp's PATH; when no entry holds it, errno is ENOENT (127)
 * even if some entry could not be searched, and EACCES (126) only when a
 * file by that name exists but cannot be run. Returns only on failure.
 * Called after fork(): no allocation on the common path.
 */
void
exec_command(char **argv, char **envp)
{
	const char *path = "/usr/local/bin:/usr/bin:/bin", *p, *end;
	char buf[4096];
	struct stat st;
	int found = 0;
	size_t i, n, len = strlen(argv[0]);

	if (strchr(argv[0], '/')) {
		exec_file(argv[0], argv, envp);
		return;
	}
	for (i = 0; envp[i]; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			path = envp[i] + 5;
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		n = end ? (size_t)(end - p) : strlen(p);
		if (n + len + 3 <= sizeof(buf)) {
			memcpy(buf, n ? p : ".", n ? n : 1);
			n = n ? n : 1;
			buf[n] = '/';
			memcpy(buf + n + 1, argv[0], len + 1);
			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
				exec_file(buf, argv, envp);
				found = 1;
			}
		}
		if (end == NULL)
			break;
	}
	errno = found ? EACCES : ENOENT;
}

/* Length of the valid UTF-8 sequence at p (1 to 4), or 0 when invalid. */
size_t
utf8_len(const unsigned char *p, size_t n)
{
	size_t len, i;
	unsigned cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

const char *const std_fd_name[3] = {
	"standard input", "standard output", "standard error"
};

/* A path or value made safe for a one-line message. */
const char *
shown(const char *s)
{
	static char buf[4][512];
	static int k;
	char *d = buf[k = (k + 1) % 4];
	size_t n = 0;

	for (; *s && n + 5 < sizeof(buf[0]); s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(d + n, 5, "\\x%02x", c);
		else
			d[n++] = (char)c;
	}
	d[n] = '\0';
	return d;
}

#ifdef __linux__
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT			47
#define PR_CAP_AMBIENT_CLEAR_ALL	4
#endif
#ifndef PR_SET_SECUREBITS
#define PR_SET_SECUREBITS		28
#endif
/* NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, NO_CAP_AMBIENT_RAISE, all locked */
#define SECUREBITS_LOCKED		0xef

/*
 * Every capability but those in keep (bit N: capability N), for good: the
 * bounding set (where there are capabilities to lose, which needs
 * CAP_SETPCAP), the ambient set, the permitted, effective and inheritable
 * sets; with lock, the securebits too, so that no later execve() or uid 0
 * brings any back. Runs between fork and exec: system calls only.
 */
int
caps_drop(uint64_t keep, int lock)
{
	struct { uint32_t version; int pid; } h = { 0x20080522, 0 };
	struct { uint32_t eff, perm, inh; } d[2];
	int cap;

	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	if (d[0].perm | d[1].perm | d[0].inh | d[1].inh) {
		for (cap = 0; cap < 64; cap++) {
			if (keep >> cap & 1)
				continue;
			/* Reading is cheap; a drop commits new credentials. */
			if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 0 ||
			    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
				continue;
			/* EINVAL: past the kernel's last capability. EPERM: no
			 * CAP_SETPCAP (a container may withhold it); no_new_privs
			 * keeps the bounding set from mattering then. */
			if (errno == EINVAL || errno == EPERM)
				break;
			return -1;
		}
		if (lock && prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED, 0, 0,
		    0) < 0)
			return -1;
	}
	(void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	d[0].perm &= (uint32_t)keep;
	d[1].perm &= (uint32_t)(keep >> 32);
	d[0].eff = d[0].perm;
	d[1].eff = d[1].perm;
	d[0].inh = d[1].inh = 0;
	return (int)syscall(SYS_capset, &h, d);
}
#else
int
caps_drop(uint64_t keep, int lock)
{
	(void)keep;
	(void)lock;
	return 0;
}
#endif

#ifndef O_PATH
#define O_PATH	O_RDONLY
#endif

/* One component of a path into name; the rest after it, or NULL. */
static const char *
next_name(const char *p, char *name, size_t size)
{
	size_t n;

	while (*p == '/')
		p++;
	if (*p == '\0')
		return NULL;
	n = strcspn(p, "/");
	if (n >= size)
		n = size - 1;
	memcpy(name, p, n);
	name[n] = '\0';
	return p + n;
}

#if defined(__linux__) && defined(SYS_openat2)
#define RESOLVE_NO_SYMLINKS_	0x04
#define RESOLVE_NO_MAGICLINKS_	0x02

/*
 * open_nolinks() by openat2(2) with RESOLVE_NO_SYMLINKS. -1 with ENOSYS
 * when the kernel cannot (or refuses, E2BIG, an unknown flag): the
 * caller walks. "." and ".." are refused as the walk refuses them.
 */
static int
open_resolved(const char *path, struct stat *st)
{
	struct { uint64_t flags, mode, resolve; } how;
	const char *c;
	size_t n;
	int fd;

	for (c = path; *c != '\0'; c += n) {
		c += strspn(c, "/");
		n = strcspn(c, "/");
		if ((n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.')) {
			errno = EINVAL;
			return -1;
		}
	}
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS_ | RESOLVE_NO_MAGICLINKS_;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0) {
		if (errno == E2BIG || errno == EPERM || errno == EINVAL)
			errno = ENOSYS;
		return -1;
	}
	if (fstat(fd, st) < 0 || S_ISLNK(st->st_mode)) {
		close(fd);
		errno = ELOOP;
		return -1;
	}
	return fd;
}
#endif

/*
 * An O_PATH descriptor on path (absolute, resolved), reached from / one
 * component at a time without following a symbolic link anywhere: a name
 * swapped for a link between a check and a use cannot send the use
 * elsewhere. -1 with errno ELOOP when a component is a link; st is what
 * the descriptor holds. Close-on-exec. openat() for /: musl's open()
 * adds an fcntl() for O_CLOEXEC.
 */
int
open_nolinks(const char *path, struct stat *st)
{
	char name[NAME_MAX + 1];
	const char *p = path;
	int fd, nfd, walked = 0;

	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
#if defined(__linux__) && defined(SYS_openat2)
	/* One call where the kernel has openat2(2) (5.6): the same walk,
	 * every link refused, a trailing one handed back as itself. Older
	 * kernels, and sbx inside sbx (its filter says ENOSYS), walk. */
	if ((fd = open_resolved(path, st)) >= 0 || errno != ENOSYS)
		return fd;
#endif
	if ((fd = openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) < 0)
		return -1;
	while ((p = next_name(p, name, sizeof(name))) != NULL) {
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		nfd = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (nfd < 0)
			return -1;
		fd = nfd;
		walked = 1;
		if (fstat(fd, st) < 0 || S_ISLNK(st->st_mode)) {
			close(fd);
			errno = ELOOP;
			return -1;
		}
	}
	/* The last component's fstat() above is what it holds. */
	if (!walked && fstat(fd, st) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * open_nolinks() for many paths in a row: the folders on the way stay
 * open from one path to the next, so a path that shares its folders with
 * the one before (sorted paths: siblings) costs one openat() and one
 * fstat(), not three calls per component. Each descriptor is reached
 * exactly as open_nolinks() reaches it, from / without following a link;
 * the walk owns them, and one it returns stays valid until the next
 * call.
 */
#define NOLINKS_DEPTH	64

struct nolinks {
	int		 fd[NOLINKS_DEPTH + 1];	/* after i names; [0]: / */
	struct stat	 st[NOLINKS_DEPTH + 1];
	size_t		 end[NOLINKS_DEPTH + 1]; /* the first i names end */
	char		 held[PATH_MAX];	/* the names held, joined */
	int		 n;			/* names held; -1: none */
	int		 deep;			/* past NOLINKS_DEPTH */
};

struct nolinks *
nolinks_new(void)
{
	struct nolinks *w = xcalloc(1, sizeof(*w));

	w->n = -1;
	w->deep = -1;
	return w;
}

/* Keep the first n names open, close the ones below. */
static void
nolinks_keep(struct nolinks *w, int n)
{
	for (; w->n > n; w->n--)
		close(w->fd[w->n]);
}

void
nolinks_free(struct nolinks *w)
{
	if (w == NULL)
		return;
	nolinks_keep(w, -1);
	if (w->deep >= 0)
		close(w->deep);
	free(w);
}

/* Name i+1 held is name (len bytes). */
static int
nolinks_held(const struct nolinks *w, int i, const char *name, size_t len)
{
	return i < w->n && w->end[i + 1] - w->end[i] - 1 == len &&
	    memcmp(w->held + w->end[i] + 1, name, len) == 0;
}

/* One name further, at depth i: held when the stack has room. */
static int
nolinks_step(struct nolinks *w, int i, int at, const char *name,
    struct stat *st)
{
	size_t len = strlen(name);
	int fd;

	if ((fd = openat(at, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, st) < 0 || S_ISLNK(st->st_mode)) {
		close(fd);
		errno = ELOOP;
		return -1;
	}
	if (i >= NOLINKS_DEPTH || w->end[i] + 1 + len >= sizeof(w->held))
		return fd;
	w->fd[i + 1] = fd;
	w->st[i + 1] = *st;
	w->held[w->end[i]] = '/';
	memcpy(w->held + w->end[i] + 1, name, len);
	w->end[i + 1] = w->end[i] + 1 + len;
	w->n = i + 1;
	return fd;
}

int
nolinks_open(struct nolinks *w, const char *path, struct stat *st)
{
	char name[NAME_MAX + 1];
	const char *p = path;
	int i = 0, fd, at, held = 1;

	if (w->deep >= 0) {
		close(w->deep);
		w->deep = -1;
	}
	if (path[0] != '/')
		return errno = EINVAL, -1;
	if (w->n < 0) {
		if ((w->fd[0] = openat(AT_FDCWD, "/", O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) < 0)
			return -1;
		if (fstat(w->fd[0], &w->st[0]) < 0) {
			close(w->fd[0]);
			return -1;
		}
		w->n = 0;
		w->end[0] = 0;
	}
	at = w->fd[0];
	*st = w->st[0];
	while ((p = next_name(p, name, sizeof(name))) != NULL) {
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			return errno = EINVAL, -1;
		if (held && nolinks_held(w, i, name, strlen(name))) {
			at = w->fd[++i];
			*st = w->st[i];
			continue;
		}
		if (held)
			nolinks_keep(w, i);
		fd = nolinks_step(w, i, at, name, st);
		/* Past the stack, each step closes the one before. */
		if (w->n != i + 1)
			held = 0;
		if (!held && w->deep >= 0) {
			close(w->deep);
			w->deep = -1;
		}
		if (fd < 0)
			return -1;
		if (!held)
			w->deep = fd;
		at = fd;
		i++;
	}
	return at;
}

/*
 * The inodes sbx checked, by resolved path: the -C, -w, --scope, --cache
 * and existing --deny paths, each opened once when the options were
 * resolved (sbx.c). A backend grants or holds the very inode checked, by
 * its descriptor or by comparing what it opens with it.
 */
static struct checked {
	char	*path;
	int	 fd;
	dev_t	 dev;
	ino_t	 ino;
} *checked;
static size_t nchecked;

void
checked_add(const char *path, int fd, const struct stat *st)
{
	checked_note(path, fd, st, 1);
}

/*
 * keep 0: the inode alone, the descriptor closed (a --deny path, a held
 * path: thousands of them must not use up the descriptors).
 */
void
checked_note(const char *path, int fd, const struct stat *st, int keep)
{
	size_t i;

	for (i = 0; i < nchecked; i++)
		if (strcmp(checked[i].path, path) == 0) {
			close(fd);
			return;
		}
	if (!keep) {
		close(fd);
		fd = -1;
	}
	checked = xrealloc(checked, (nchecked + 1) * sizeof(*checked));
	checked[nchecked].path = xstrdup(path);
	checked[nchecked].fd = fd;
	checked[nchecked].dev = st->st_dev;
	checked[nchecked].ino = st->st_ino;
	nchecked++;
}

/* The checked descriptor of path, or -1 (not one of sbx's checks). */
int
checked_fd(const char *path)
{
	size_t i;

	for (i = 0; i < nchecked; i++)
		if (strcmp(checked[i].path, path) == 0)
			return checked[i].fd;
	return -1;
}

/* 0 when path was checked as another inode than st; 1 otherwise. */
int
checked_same(const char *path, const struct stat *st)
{
	size_t i;

	for (i = 0; i < nchecked; i++)
		if (strcmp(checked[i].path, path) == 0)
			return checked[i].dev == st->st_dev &&
			    checked[i].ino == st->st_ino;
	return 1;
}

/*
 * The deepest folder of w that holds the folder path's name lies in (a
 * writable folder is held by the one above it), or NULL.
 */
static const char *
holder_in(const struct strv *w, const char *path)
{
	const char *best = NULL, *slash = strrchr(path, '/');
	size_t i, n = slash == NULL || slash == path ? 1 : (size_t)(slash - path);
	char *dir = xasprintf("%.*s", (int)n, path);

	for (i = 0; w != NULL && i < w->n; i++)
		if (path_under(dir, w->v[i]) &&
		    (best == NULL || strlen(w->v[i]) > strlen(best)))
			best = w->v[i];
	free(dir);
	return best;
}

/*
 * 1 when st, a folder, was checked under another name than path in the
 * same writable folder of w: it was swapped there while sbx started. A
 * file may have hard links, and a folder other names through bind mounts
 * outside: neither counts.
 */
int
checked_elsewhere(const char *path, const struct stat *st,
    const struct strv *w)
{
	const char *h = holder_in(w, path), *g;
	size_t i;

	if (!S_ISDIR(st->st_mode) || h == NULL)
		return 0;
	for (i = 0; i < nchecked; i++)
		if (checked[i].dev == st->st_dev &&
		    checked[i].ino == st->st_ino &&
		    strcmp(checked[i].path, path) != 0 &&
		    (g = holder_in(w, checked[i].path)) != NULL &&
		    strcmp(g, h) == 0)
			return 1;
	return 0;
}

/* The inode path was checked as, if it was; 0 otherwise. */
int
checked_id(const char *path, struct file_id *id)
{
	size_t i;

	for (i = 0; i < nchecked; i++)
		if (strcmp(checked[i].path, path) == 0) {
			id->dev = checked[i].dev;
			id->ino = checked[i].ino;
			return 1;
		}
	return 0;
}

/*
 * path as a command line names it, walked one component at a time from
 * the working folder or /, following a symbolic link only where it lies
 * outside every folder of w: a link inside one may have been made by an
 * earlier sandboxed command, and following it would grant a place that
 * command chose. Returns an O_PATH descriptor on what path names and its
 * resolved name in *real; or -1 with errno set; or -2 with the link in
 * *real (the folder that holds it lies in w).
 */
int
walk_checked(const char *path, const struct strv *w, char **real)
{
	char name[NAME_MAX + 1], target[PATH_MAX], *cur, *rest, *s;
	const char *p;
	struct stat st;
	int fd, nfd, hops = 0;
	ssize_t n;
	size_t i;

	*real = NULL;
	if (path[0] == '/') {
		cur = xstrdup("/");
		fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		if ((cur = getcwd(NULL, 0)) == NULL)
			return -1;
		fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	rest = xstrdup(path);
	if (fd < 0)
		goto fail;
	for (p = rest; (p = next_name(p, name, sizeof(name))) != NULL; ) {
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			nfd = openat(fd, "..", O_PATH | O_DIRECTORY |
			    O_CLOEXEC);
			if ((s = strrchr(cur, '/')) != NULL)
				s[s == cur] = '\0';
		} else
			nfd = openat(fd, name, O_PATH | O_NOFOLLOW |
			    O_CLOEXEC);
		if (nfd < 0 && errno != ELOOP)
			goto fail;
		if (nfd >= 0 && fstat(nfd, &st) < 0) {
			close(nfd);
			goto fail;
		}
		if (nfd >= 0 && !S_ISLNK(st.st_mode)) {
			close(fd);
			fd = nfd;
			if (strcmp(name, "..") != 0) {
				s = path_join(cur, name);
				free(cur);
				cur = s;
			}
			continue;
		}
		/* A symbolic link in the folder cur. */
		if (nfd >= 0)
			close(nfd);
		for (i = 0; w != NULL && i < w->n; i++)
			if (path_under(cur, w->v[i])) {
				*real = path_join(cur, name);
				free(cur);
				free(rest);
				close(fd);
				return -2;
			}
		if (++hops > 40 || (n = readlinkat(fd, name, target,
		    sizeof(target) - 1)) <= 0) {
			errno = hops > 40 ? ELOOP : errno;
			goto fail;
		}
		target[n] = '\0';
		s = xasprintf("%s%s", target, p);
		free(rest);
		rest = s;
		p = rest;
		if (target[0] == '/') {
			close(fd);
			free(cur);
			cur = xstrdup("/");
			if ((fd = open("/", O_PATH | O_DIRECTORY |
			    O_CLOEXEC)) < 0)
				goto fail;
		}
	}
	free(rest);
	*real = cur;
	return fd;
fail:
	n = errno;
	if (fd >= 0)
		close(fd);
	free(cur);
	free(rest);
	errno = (int)n;
	return -1;
}
