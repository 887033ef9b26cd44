/*
 * shim.c: sbx's own binary in a hidden mode, run by bwrap inside the
 * sandbox as the command's parent:
 *
 *	sbx --sbx-internal-shim [--bridge] -- COMMAND [ARG]...
 *
 * bwrap reports a command that was not found as its own exit status 1 and a
 * signal as 128+N, so sbx could not tell "never started" from "ran and
 * exited". The shim tells sbx on FD_STATUS: 'S' when it runs (the sandbox
 * is up), 'E' errno when the command cannot be executed, 'W' status with
 * the command's exact wait status. With --bridge it first listens on
 * 127.0.0.1:BRIDGE_PORT in the sandbox's network namespace and forks the
 * bridge that hands each connection to sbx's proxy over FD_BRIDGE, so the
 * port is open before the command runs. FD_STATUS and FD_BRIDGE are made
 * close-on-exec at once: the command inherits neither. The shim ignores
 * SIGTERM, SIGINT and SIGHUP so that it outlives the command to report it;
 * sbx's SIGKILL ends it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
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

static void
run_command(char **cmd)
{
	sigset_t none;

	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	exec_command(cmd, environ);
	send_status('E', errno);
	_exit(errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
}

int
shim_main(int argc, char **argv)
{
	int i = 2, bridge = 0, st;
	pid_t pid, w;

	set_cloexec(FD_STATUS);
	if (i < argc && strcmp(argv[i], "--bridge") == 0) {
		bridge = 1;
		set_cloexec(FD_BRIDGE);
		i++;
	}
	if (i >= argc || strcmp(argv[i], "--") != 0 || i + 1 >= argc)
		return EXIT_SBX;
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
		run_command(argv + i + 1);
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (w < 0)
		return EXIT_SBX;
	send_status('W', st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
