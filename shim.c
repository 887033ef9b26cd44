/*
 * shim.c: sbx's own binary in a hidden mode, run by bwrap inside the
 * sandbox as the command's parent:
 *
 *	sbx --sbx-internal-shim [--ro-dev] [--seccomp] [--bridge]
 *	    [--wrapped-env] [--reopen FD PATH]... -- CMD...
 *
 * bwrap reports a command that was not found as its own exit status 1 and a
 * signal as 128+N, so sbx could not tell "never started" from "ran and
 * exited". The shim tells sbx on FD_STATUS: 'S' when it runs (the sandbox
 * is up), 'E' errno when the command cannot be executed, 'W' status with
 * the command's exact wait status. With --bridge it first listens on
 * 127.0.0.1:BRIDGE_PORT in the sandbox's network namespace and forks the
 * bridge that hands each connection to sbx's proxy over FD_BRIDGE, so the
 * port is open before the command runs. FD_STATUS and FD_BRIDGE are made
 * close-on-exec at once: the command inherits neither.
 *
 * The shim, not bwrap, installs the seccomp filter (--seccomp: from
 * FD_SECCOMP), so that first, run by root (--ro-dev), it can use the two
 * capabilities bwrap left it: bwrap binds the host's /dev/null, /dev/tty,
 * ... writable, and the sandbox's uid 0, being the host's, could chmod or
 * chown those host nodes. They are remounted read-only (device access
 * kept), then every capability goes for good (bounding set, securebits
 * locked) before the filter and the command. Any failure here is reported
 * as 'L' and nothing runs. The shim ignores
 * SIGTERM, SIGINT and SIGHUP so that it outlives the command to report it;
 * sbx's SIGKILL ends it.
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
send_status(char kind, int v)
{
	char m[5];

	m[0] = kind;
	memcpy(m + 1, &v, 4);
	(void)!write(FD_STATUS, m, sizeof(m));
}

/* What bwrap's --dev binds from the host. */
const char *const host_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", NULL
};

#ifdef __linux__

static int
devices_readonly(void)
{
	size_t i;

	for (i = 0; host_devices[i]; i++)
		if (mount(NULL, host_devices[i], NULL, MS_REMOUNT | MS_BIND |
		    MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL) < 0 &&
		    errno != ENOENT)
			return -1;
	return 0;
}

/* Every capability, for good: bounding set, ambient, securebits, sets. */
static int
drop_capabilities(void)
{
	struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
	struct { uint32_t eff, perm, inh; } data[2];
	int cap;

	for (cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno != EINVAL)
				return -1;
			break;	/* past the kernel's last capability */
		}
	/* NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, NO_CAP_AMBIENT_RAISE: locked. */
	if (prctl(PR_SET_SECUREBITS, 0xef, 0, 0, 0) < 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -1;
	memset(data, 0, sizeof(data));
	return (int)syscall(SYS_capset, &hdr, data);
}

static int
load_seccomp(void)
{
	unsigned char buf[65536];
	size_t n = 0;
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
	return seccomp_install(buf, n);
}
#endif

/* Before anything of the command's: devices, capabilities, filter. */
static int
confine(int ro_dev, int seccomp)
{
#ifdef __linux__
	if (ro_dev && (devices_readonly() < 0 || drop_capabilities() < 0))
		return -1;
	if (seccomp && load_seccomp() < 0)
		return -1;
#else
	(void)ro_dev;
	(void)seccomp;
#endif
	return 0;
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
run_command(char **cmd, char **envp)
{
	proc_signals_default();
	exec_command(cmd, envp);
	send_status('E', errno);
	_exit(errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

int
shim_main(int argc, char **argv)
{
	int i, j, fd, bridge = 0, ro_dev = 0, seccomp = 0, wrapped = 0, st;
	pid_t pid, w;

#ifdef __linux__
	/*
	 * Not dumpable: the command, the shim's child in the same user
	 * namespace, could otherwise open /proc/1/fd/FD_STATUS and forge the
	 * report ('L': "sandbox setup failed", its output dropped) or take
	 * FD_BRIDGE. The command's own execve() makes it dumpable again.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return EXIT_SBX;
#endif
	set_cloexec(FD_STATUS);
	for (i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--bridge") == 0)
			bridge = 1;
		else if (strcmp(argv[i], "--ro-dev") == 0)
			ro_dev = 1;
		else if (strcmp(argv[i], "--seccomp") == 0)
			seccomp = 1;
		else if (strcmp(argv[i], "--wrapped-env") == 0)
			wrapped = 1;
		else if (strcmp(argv[i], "--reopen") == 0 && i + 2 < argc &&
		    argv[i + 1][0] >= '0' && argv[i + 1][0] <= '2' &&
		    argv[i + 1][1] == '\0' && argv[i + 2][0] == '/')
			i += 2;	/* done below, before anything else */
		else
			return EXIT_SBX;
	}
	if (i + 1 >= argc)
		return EXIT_SBX;
	if (bridge)
		set_cloexec(FD_BRIDGE);
	for (j = 2; j < i; j++) {
		if (strcmp(argv[j], "--reopen") != 0)
			continue;
		fd = argv[j + 1][0] - '0';
		if (reopen_fd(fd, argv[j + 2]) < 0) {
			send_status('R', fd << 16 | (errno & 0xffff));
			return EXIT_SBX;
		}
		j += 2;
	}
	if (confine(ro_dev, seccomp) < 0) {
		send_status('L', errno);
		return EXIT_SBX;
	}
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	if (bridge && start_bridge() < 0) {
		fprintf(stderr, "sbx: bridge: %s\n", strerror(errno));
		return EXIT_SBX;
	}
	send_status('S', 0);
	if ((pid = fork()) < 0) {
		send_status('E', errno);
		return EXIT_SBX;
	}
	if (pid == 0)
		run_command(argv + i + 1, command_env(wrapped));
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (w < 0)
		return EXIT_SBX;
	send_status('W', st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
