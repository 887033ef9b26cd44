/*
 * sbx.c: runs a command inside the operating system's sandbox and reports
 * what happened. main() is the table of contents: parse the options,
 * resolve their paths, compile the policy, pick a row of the backend
 * table, start the proxy, build the environment once, let the backend plan
 * its launch, then print it (--dry-run) or run it and report. The core
 * never names a backend: what it knows of one is its row and the neutral
 * launch it builds. Every error sbx detects goes through fail(): one line
 * "sbx: what: why" on stderr, error=KIND in the result where one can be
 * written, exit 125. Nothing is run before the whole policy is known to be
 * enforceable as asked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "sbx.h"

static int host_build(const struct plan *, struct launch *, struct sbx_err *);

/*
 * The backends, in the order the default tries them. A row that does not
 * belong to this platform says so from its probe (ERR_UNSUPPORTED).
 */
static const struct backend backends[] = {
	{ "bwrap", "path", bwrap_probe, bwrap_build,
	    BE_OS | BE_BRIDGE | BE_TRIAL | BE_OWN_TMP, NULL,
	    bwrap_finish, bwrap_explain, bwrap_release, bwrap_report },
	{ "landlock", "info", landlock_probe, landlock_build,
	    BE_OS | BE_CAPTURE,
	    NULL, landlock_finish, NULL, landlock_release, landlock_report },
	{ "seatbelt", "path", seatbelt_probe, seatbelt_build, BE_OS,
	    NULL, NULL, NULL, NULL, NULL },
	{ "host", NULL, NULL, host_build, 0, NULL, NULL, NULL, NULL, NULL },
};
#define NBACKENDS	(sizeof(backends) / sizeof(backends[0]))
#define HOST_ROW	(&backends[NBACKENDS - 1])

enum {
	OPT_DENY_WRITE = 256, OPT_DENY_READ, OPT_SCOPE, OPT_NO_NET, OPT_NET,
	OPT_ALLOW_HOST, OPT_ALLOW_PRIVATE, OPT_SANDBOX, OPT_BACKEND,
	OPT_DRY_RUN, OPT_PASSTHROUGH, OPT_RESULT, OPT_FORMAT, OPT_PROBE,
	OPT_NO_PROTECT, OPT_ALLOW_UNIX, OPT_TTY, OPT_NO_TTY, OPT_MEM,
	OPT_PROCS, OPT_FILE_SIZE, OPT_CPU, OPT_CACHE, OPT_HOST_TMP
};

static const struct option longopts[] = {
	{ "root",		required_argument, NULL, 'C' },
	{ "write",		required_argument, NULL, 'w' },
	{ "deny-write",		required_argument, NULL, OPT_DENY_WRITE },
	{ "deny-read",		required_argument, NULL, OPT_DENY_READ },
	{ "scope",		required_argument, NULL, OPT_SCOPE },
	{ "no-net",		no_argument,	   NULL, OPT_NO_NET },
	{ "net",		no_argument,	   NULL, OPT_NET },
	{ "allow-host",		required_argument, NULL, OPT_ALLOW_HOST },
	{ "allow-private",	no_argument,	   NULL, OPT_ALLOW_PRIVATE },
	{ "allow-unix-sockets",	no_argument,	   NULL, OPT_ALLOW_UNIX },
	{ "no-protect",		no_argument,	   NULL, OPT_NO_PROTECT },
	{ "env",		required_argument, NULL, 'e' },
	{ "cache",		required_argument, NULL, OPT_CACHE },
	{ "host-tmp",		no_argument,	   NULL, OPT_HOST_TMP },
	{ "timeout",		required_argument, NULL, 't' },
	{ "kill-after",		required_argument, NULL, 'k' },
	{ "max-output",		required_argument, NULL, 'm' },
	{ "mem",		required_argument, NULL, OPT_MEM },
	{ "procs",		required_argument, NULL, OPT_PROCS },
	{ "file-size",		required_argument, NULL, OPT_FILE_SIZE },
	{ "cpu",		required_argument, NULL, OPT_CPU },
	{ "sandbox",		required_argument, NULL, OPT_SANDBOX },
	{ "backend",		required_argument, NULL, OPT_BACKEND },
	{ "dry-run",		no_argument,	   NULL, OPT_DRY_RUN },
	{ "passthrough",	no_argument,	   NULL, OPT_PASSTHROUGH },
	{ "tty",		no_argument,	   NULL, OPT_TTY },
	{ "no-tty",		no_argument,	   NULL, OPT_NO_TTY },
	{ "result",		required_argument, NULL, OPT_RESULT },
	{ "format",		required_argument, NULL, OPT_FORMAT },
	{ "probe",		no_argument,	   NULL, OPT_PROBE },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "version",		no_argument,	   NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static void
usage(FILE *f)
{
	fputs(
"usage: sbx [OPTION]... [--] COMMAND [ARG]...\n"
"       sbx [OPTION]... -c SCRIPT [ARG]...\n"
"       sbx --probe\n"
"\n"
"policy:\n"
"  -C, --root DIR          working folder and workspace (default: .)\n"
"  -w, --write PATH        also writable (repeatable)\n"
"      --deny-write PATH   stays read-only, even inside a writable path\n"
"                          (repeatable)\n"
"      --deny-read PATH    cannot be read from inside (repeatable)\n"
"      --scope PATH        root read-only except these paths (repeatable)\n"
"      --no-net            no network at all (the default)\n"
"      --net               unrestricted network\n"
"      --allow-host PAT    network only to these hosts, via sbx's proxy;\n"
"                          host, *.domain, optional :PORT, or a URL;\n"
"                          localhost:PORT: that port of the host's loopback\n"
"                          (repeatable)\n"
"      --allow-private     allowed hosts may resolve to private addresses\n"
"      --allow-unix-sockets  the command may create Unix sockets\n"
"      --no-protect        drop the default protected paths\n"
"  -e, --env NAME[=VALUE]  pass NAME, or set it (repeatable)\n"
"      --cache TOOL        TOOL's cache writable, in sbx's own folder: npm,\n"
"                          yarn, pnpm, pip, go, cargo, maven, gradle, ccache\n"
"                          (repeatable)\n"
"      --host-tmp          no private temp folder: the host's /tmp, read-only\n"
"limits:\n"
"  -t, --timeout DUR       stop the command after DUR (1.5, 500ms, 30s, 2m, 1h)\n"
"  -k, --kill-after DUR    grace between SIGTERM and SIGKILL (default 2s)\n"
"  -m, --max-output SIZE   per-stream capture cap (default 1M; K, M, G)\n"
"      --mem SIZE          memory limit for the command's tree\n"
"      --procs N           limit on processes and threads\n"
"      --file-size SIZE    no file written may grow past SIZE\n"
"      --cpu DUR           CPU-time limit\n"
"executor:\n"
"      --sandbox MODE      os (default), auto, or host\n"
"      --backend NAME      bwrap, landlock or seatbelt\n"
"      --dry-run           print what would run, run nothing\n"
"      --probe             which backends work here, and why not\n"
"output:\n"
"      --passthrough       output straight through, uncaptured\n"
"      --tty, --no-tty     a pseudo-terminal of sbx's own for the command\n"
"                          (default with --passthrough on a terminal), or never\n"
"      --result FILE       write the ExecResult to FILE\n"
"      --format FMT        kv (default) or json\n"
"  -h, --help              this help\n"
"  -V, --version           the version\n", f);
}

static struct sbx_opts opts;
static int result_fd = -1;
static int stdout_closed;	/* fd 1 was closed: held on /dev/null */
static const char *executor;	/* the row that ran or failed, for results */
static struct limits *lim;	/* how the resource limits hold */
static struct tmp *live_tmp;	/* the run's temp folder, removed on exit */

/* The one place that reports an sbx failure; exits 125. */
static void
fail(const struct sbx_err *e, int write_result)
{
	struct exec_result r;

	tty_restore();		/* the message on a terminal as found */
	tmp_remove(live_tmp);
	live_tmp = NULL;
	fprintf(stderr, "sbx: %s\n", e->msg);
	if (write_result && (result_fd >= 0 || !opts.passthrough)) {
		memset(&r, 0, sizeof(r));
		r.executor = executor;
		r.error = e->kind;
		r.error_message = e->msg;
		result_write(result_fd >= 0 ? result_fd : 1, &r, opts.json);
	}
	exit(EXIT_SBX);
}

static void usage_err(const char *, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* Bad input: one line, exit 125, no result (the options are not known). */
static void
usage_err(const char *fmt, ...)
{
	struct sbx_err e;
	va_list ap;

	e.kind = ERR_USAGE;
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	fail(&e, 0);
	exit(EXIT_SBX);
}

/* ---- options ---- */

struct raw {
	struct strv	 write, deny_write, deny_read, scope;
	const char	*root;
	const char	*script;
	int		 net, no_net;
	int		 tty, no_tty;
};

static void
add_host(const char *arg)
{
	struct host_pattern h;
	const char *why;

	int ports[LOCAL_MAX + 1];

	if (proxy_pattern(arg, &h, &why) < 0)
		usage_err("--allow-host %s: %s", shown(arg), why);
	opts.hosts = xrealloc(opts.hosts, (opts.nhosts + 1) * sizeof(h));
	opts.hosts[opts.nhosts++] = h;
	if (proxy_local_ports(opts.hosts, opts.nhosts, ports, LOCAL_MAX + 1) >
	    LOCAL_MAX)
		usage_err("--allow-host %s: at most %d ports of the host's "
		    "loopback", shown(arg), LOCAL_MAX);
}

/* allowed_local in the result: "localhost:PORT", each port once. */
static void
allowed_local(struct strv *out)
{
	int ports[LOCAL_MAX];
	size_t i, n = proxy_local_ports(opts.hosts, opts.nhosts, ports,
	    LOCAL_MAX);

	for (i = 0; i < n; i++)
		strv_pushf(out, "localhost:%d", ports[i]);
}

/* --cache TOOL: a tool of cache.c's table, each once. */
static void
add_cache(const char *arg)
{
	size_t i;

	if (!cache_known(arg))
		usage_err("--cache %s: must be one of %s", shown(arg),
		    cache_list());
	for (i = 0; i < opts.cache.n; i++)
		if (strcmp(opts.cache.v[i], arg) == 0)
			return;
	strv_push(&opts.cache, arg);
}

static enum sandbox_mode
parse_mode(const char *s)
{
	if (strcmp(s, "os") == 0)
		return SANDBOX_OS;
	if (strcmp(s, "auto") == 0)
		return SANDBOX_AUTO;
	if (strcmp(s, "host") == 0)
		return SANDBOX_HOST;
	usage_err("--sandbox %s: must be os, auto or host", shown(s));
}

/* --backend NAME: a row of the table that is an OS sandbox. */
static const char *
parse_backend(const char *s)
{
	size_t i;

	for (i = 0; i < NBACKENDS; i++)
		if ((backends[i].flags & BE_OS) &&
		    strcmp(s, backends[i].name) == 0)
			return backends[i].name;
	usage_err("--backend %s: must be bwrap, landlock or seatbelt",
	    shown(s));
}

static void
set_duration(const char *opt, const char *arg, int64_t *ms)
{
	if (parse_duration(arg, ms) < 0)
		usage_err("%s %s: not a duration (1.5, 500ms, 30s, 2m, 1h; "
		    "at most 30 days)", opt, shown(arg));
}

static void
set_size(const char *opt, const char *arg, size_t *size)
{
	if (parse_size(arg, size) < 0)
		usage_err("%s %s: not a size (1M, 512K, ...; at most 64G)",
		    opt, shown(arg));
}

/* A count of processes: at most the kernel's own ceiling of pids. */
static void
set_count(const char *opt, const char *arg, long *n)
{
	char *end;

	errno = 0;
	*n = strtol(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno ||
	    *n > 4194304)
		usage_err("%s %s: not a number of processes (0 to 4194304)",
		    opt, shown(arg));
}

/*
 * -e NAME[=VALUE]: a name no program could read as one (empty; a space,
 * a tab, a newline or another control byte in it) is bad input. Other
 * bytes stay allowed: names with dots or dashes exist.
 */
static void
env_name_check(const char *arg)
{
	size_t i, n = strcspn(arg, "=");

	if (n == 0)
		usage_err("-e %s: no variable name", shown(arg));
	for (i = 0; i < n; i++)
		if ((unsigned char)arg[i] <= ' ' || arg[i] == 0x7f)
			usage_err("-e %s: not a variable name (a space or "
			    "control character in it)", shown(arg));
}

static void
parse_opt(int c, const char *arg, struct raw *raw)
{
	switch (c) {
	case 'C': raw->root = arg; break;
	case 'w': strv_push(&raw->write, arg); break;
	case OPT_DENY_WRITE: strv_push(&raw->deny_write, arg); break;
	case OPT_DENY_READ: strv_push(&raw->deny_read, arg); break;
	case OPT_SCOPE: strv_push(&raw->scope, arg); break;
	case OPT_NO_NET: raw->no_net = 1; break;
	case OPT_NET: raw->net = 1; break;
	case OPT_ALLOW_HOST: add_host(arg); break;
	case OPT_ALLOW_PRIVATE: opts.allow_private = 1; break;
	case OPT_ALLOW_UNIX: opts.allow_unix = 1; break;
	case OPT_HOST_TMP: opts.host_tmp = 1; break;
	case OPT_CACHE: add_cache(arg); break;
	case OPT_NO_PROTECT: opts.protect = 0; break;
	case 'e':
		env_name_check(arg);
		strv_push(&opts.env_args, arg);
		break;
	case 't': set_duration("--timeout", arg, &opts.timeout_ms); break;
	case 'k': set_duration("--kill-after", arg, &opts.kill_after_ms); break;
	case 'm': set_size("--max-output", arg, &opts.max_output); break;
	case OPT_MEM: set_size("--mem", arg, &opts.mem); break;
	case OPT_FILE_SIZE: set_size("--file-size", arg, &opts.file_size);
		break;
	case OPT_PROCS: set_count("--procs", arg, &opts.procs); break;
	case OPT_CPU: set_duration("--cpu", arg, &opts.cpu_ms); break;
	case OPT_TTY: opts.tty = TTY_ON; raw->tty = 1; break;
	case OPT_NO_TTY: opts.tty = TTY_OFF; raw->no_tty = 1; break;
	case OPT_SANDBOX: opts.mode = parse_mode(arg); break;
	case OPT_BACKEND: opts.backend = parse_backend(arg); break;
	case OPT_DRY_RUN: opts.dry_run = 1; break;
	case OPT_PASSTHROUGH: opts.passthrough = 1; break;
	case OPT_RESULT: opts.result_path = xstrdup(arg); break;
	case OPT_FORMAT:
		if (strcmp(arg, "kv") && strcmp(arg, "json"))
			usage_err("--format %s: must be kv or json", shown(arg));
		opts.json = strcmp(arg, "json") == 0;
		break;
	case OPT_PROBE: opts.probe = 1; break;
	case 'c': raw->script = arg; break;
	case 'h': usage(stdout); exit(0);
	case 'V': printf("sbx %s\n", SBX_VERSION); exit(0);
	}
}

/* The word that named the option just parsed, for messages. */
static const char *
opt_word(int argc, char **argv, int c)
{
	static char shortopt[3];

	if (optind - 2 >= 0 && optind - 2 < argc &&
	    strncmp(argv[optind - 2], "--", 2) == 0 && argv[optind - 2][2])
		return argv[optind - 2];
	shortopt[0] = '-';
	shortopt[1] = (char)c;
	return shortopt;
}

static void
bad_option(int c, int argc, char **argv)
{
	/* After a short option at the very end, optind may be past argc. */
	const char *word = optind - 1 < argc ? argv[optind - 1] : "";

	if (optopt > 0 && optopt < 256 && strncmp(word, "--", 2) != 0)
		usage_err("-%c: %s", optopt, c == ':' ? "missing argument" :
		    "unknown option");
	if (c == ':')
		usage_err("%s: missing argument", shown(word));
	usage_err("%s: unknown option", shown(word));
}

/* The command: the words after the options, or bash -c SCRIPT. */
static void
set_command(const struct raw *raw, int argc, char **argv)
{
	struct strv cmd = { NULL, 0, 0 };
	char *bash;
	int i;

	if (raw->script) {
		bash = find_program("bash", NULL);
		strv_push(&cmd, bash ? bash : "/bin/sh");
		free(bash);
		strv_push(&cmd, "-c");
		strv_push(&cmd, raw->script);
	}
	for (i = optind; i < argc; i++)
		strv_push(&cmd, argv[i]);
	if (cmd.n == 0 && !opts.probe)
		usage_err("no command given (see sbx --help)");
	if (cmd.n > 0 && cmd.v[0][0] == '\0')
		usage_err("the command is an empty word");
	opts.cmd = cmd.v;
}

static void
check_conflicts(const struct raw *raw)
{
	if (raw->net && raw->no_net)
		usage_err("--net and --no-net: pick one");
	if (raw->net && opts.nhosts)
		usage_err("--net and --allow-host: --net already allows "
		    "every host");
	if (raw->no_net && opts.nhosts)
		usage_err("--no-net and --allow-host: pick one");
	if (opts.mode == SANDBOX_HOST && opts.backend != NULL)
		usage_err("--sandbox host and --backend: host runs no sandbox");
	if (raw->tty && raw->no_tty)
		usage_err("--tty and --no-tty: pick one");
	opts.net = raw->net ? NET_ALL : opts.nhosts ? NET_PROXY : NET_NONE;
}

/*
 * The value of -e NAME=VALUE, once copied, is wiped from sbx's own
 * argument memory: /proc/PID/cmdline is readable by every local user for
 * the whole run. optarg points into argv whichever form was used (-e N=V,
 * -eN=V, --env N=V, --env=N=V).
 */
static void
hide_value(char *arg)
{
	char *eq = strchr(arg, '=');

	if (eq != NULL)
		memset(eq + 1, '\0', strlen(eq + 1));
}

static void
parse_args(int argc, char **argv, struct raw *raw)
{
	int c;

	opts.protect = 1;
	opts.kill_after_ms = 2000;
	opts.max_output = 1 << 20;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:C:w:e:t:k:m:c:hV", longopts,
	    NULL)) != -1) {
		if (c == '?' || c == ':')
			bad_option(c, argc, argv);
		/* "--" ends the options; it is never an option's value. */
		if (optarg != NULL && strcmp(optarg, "--") == 0)
			usage_err("%s: missing argument (-- ends the options)",
			    shown(opt_word(argc, argv, c)));
		parse_opt(c, optarg, raw);
		if (c == 'e')
			hide_value(optarg);
	}
	check_conflicts(raw);
	set_command(raw, argc, argv);
}

/* ---- paths ---- */

static char *
resolve(const char *opt, const char *path, int want_dir)
{
	struct sbx_err e;
	struct stat st;
	char *r;

	if ((r = realpath(path, NULL)) == NULL) {
		sbx_errf(&e, ERR_PATH, "%s %s: %s", opt, shown(path),
		    strerror(errno));
		fail(&e, 1);
	}
	if (want_dir && (stat(r, &st) < 0 || !S_ISDIR(st.st_mode))) {
		sbx_errf(&e, ERR_PATH, "%s %s: %s", opt, shown(path),
		    strerror(ENOTDIR));
		fail(&e, 1);
	}
	return r;
}

/* A missing rest of a path with an empty, "." or ".." component. */
static int
bad_rest(const char *rest)
{
	const char *c;
	size_t n;

	for (c = rest;; c += n + 1) {
		n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return 1;
		if (c[n] == '\0')
			return 0;
	}
}

/*
 * A path that may be missing (--deny-read, --deny-write): its longest
 * existing part resolved, the missing rest appended as written. A rest
 * with "." or "..", or that starts at a dangling symbolic link, has no
 * one place it names: an error.
 */
static char *
resolve_missing(const char *opt, const char *path)
{
	struct sbx_err e;
	struct stat st;
	char *abs, *dir, *cut, *real = NULL, *r, *cwd;
	const char *rest;
	size_t n;

	if ((r = realpath(path, NULL)) != NULL || errno != ENOENT)
		return r ? r : resolve(opt, path, 0);
	cwd = resolve("--root", ".", 1);
	abs = path[0] == '/' ? xstrdup(path) : path_join(cwd, path);
	free(cwd);
	while ((n = strlen(abs)) > 1 && abs[n - 1] == '/')
		abs[n - 1] = '\0';
	/* dir is abs cut shorter and shorter; rest points into abs. */
	dir = xstrdup(abs);
	for (cut = strrchr(dir, '/'); cut != NULL; cut = strrchr(dir, '/')) {
		*cut = '\0';
		if ((real = realpath(*dir ? dir : "/", NULL)) != NULL ||
		    errno != ENOENT)
			break;
	}
	if (real == NULL) {
		free(dir);
		free(abs);
		return resolve(opt, path, 0);
	}
	rest = abs + (cut - dir) + 1;
	/* Its first component: missing, unless a link to nowhere. */
	r = xasprintf("%s/%.*s", strcmp(real, "/") ? real : "",
	    (int)strcspn(rest, "/"), rest);
	n = lstat(r, &st) == 0;
	free(r);
	r = path_join(real, rest);
	if (bad_rest(rest) || n) {
		sbx_errf(&e, ERR_PATH, "%s %s: %s", opt, shown(path),
		    bad_rest(rest) ? "a missing path with '.' or '..' in it" :
		    "a symbolic link to a missing path");
		fail(&e, 1);
	}
	free(dir);
	free(abs);
	free(real);
	return r;
}

static void
resolve_all(const char *opt, const struct strv *in, struct strv *out)
{
	size_t i;
	char *r;
	int may_miss = strncmp(opt, "--deny-", 7) == 0;

	for (i = 0; i < in->n; i++) {
		r = may_miss ? resolve_missing(opt, in->v[i]) :
		    resolve(opt, in->v[i], 0);
		strv_push(out, r);
		free(r);
	}
}

/*
 * One path given to -C, -w or --scope, walked again by its descriptors
 * (walk_checked()): it must reach what realpath(3) gave, and pass through
 * no symbolic link that lies in a folder of w. The inode reached is the
 * one every backend grants (checked_add()).
 */
static void
check_named(const char *opt, const char *given, const char *resolved,
    const struct strv *w, int keep)
{
	char link[40], here[PATH_MAX], *real;
	struct sbx_err e;
	struct stat st;
	ssize_t n;
	int fd;

	fd = walk_checked(given, w, &real);
	if (fd == -2) {
		sbx_errf(&e, ERR_PATH, "%s %s: %s is a symbolic link in a "
		    "folder writable in this run, so a sandboxed command may "
		    "have made it; to %s its target on purpose, name it: "
		    "%s %s", opt, shown(given), shown(real),
		    strncmp(opt, "--deny", 6) ? "grant" : "deny", opt,
		    shown(resolved));
		fail(&e, 1);
	}
	if (fd < 0) {
		sbx_errf(&e, ERR_PATH, "%s %s: %s", opt, shown(given),
		    strerror(errno));
		fail(&e, 1);
	}
	n = -1;
#ifdef __linux__
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, here, sizeof(here) - 1);
#else
	(void)link;
#endif
	if (n >= 0)
		here[n] = '\0';
	if (strcmp(real, resolved) != 0 || (n >= 0 &&
	    strcmp(here, resolved) != 0) || fstat(fd, &st) < 0) {
		sbx_errf(&e, ERR_PATH, "%s %s: changed while sbx started "
		    "(%s, then %s); try again", opt, shown(given),
		    shown(resolved), shown(strcmp(real, resolved) ? real :
		    here));
		fail(&e, 1);
	}
	checked_note(resolved, fd, &st, keep);
	free(real);
}

/* An existing --deny path or cache folder: the inode it is now. */
static void
check_held(const char *opt, const char *resolved)
{
	struct sbx_err e;
	struct stat st;
	int fd;

	if ((fd = open_nolinks(resolved, &st)) >= 0) {
		checked_add(resolved, fd, &st);
		return;
	}
	if (errno == ENOENT)
		return;
	sbx_errf(&e, ERR_PATH, "%s %s: %s", opt, shown(resolved),
	    errno == ELOOP ? "changed while sbx started; try again" :
	    strerror(errno));
	fail(&e, 1);
}

/*
 * A --deny path, walked as -w is: a link in a writable folder on the way
 * would deny its target and leave the folder that was there writable
 * under the name it was swapped to. A missing one stays absent, held by
 * its first missing name.
 */
static void
check_deny(const char *opt, const char *given, const char *resolved,
    const struct strv *w)
{
	struct stat st;
	char *real;
	int fd;

	if ((fd = walk_checked(given, w, &real)) == -1 && errno == ENOENT &&
	    lstat(resolved, &st) < 0)
		return;
	if (fd >= 0)
		close(fd);
	free(real);
	check_named(opt, given, resolved, w, 0);
}

/*
 * Each path once more, by descriptors: a -C, -w or --scope path must not
 * pass through a symbolic link that lies in a folder writable in this run
 * (or in the root, writable but for --scope), and every path must still
 * be what it resolved to. What the backends grant is what was checked.
 */
static void
check_paths(const struct raw *raw)
{
	struct strv w = { NULL, 0, 0 };
	size_t i;

	strv_push(&w, opts.root);
	for (i = 0; i < opts.write.n; i++)
		strv_push(&w, opts.write.v[i]);
	for (i = 0; i < opts.scope.n; i++)
		strv_push(&w, opts.scope.v[i]);
	for (i = 0; i < opts.cache_dirs.n; i++)
		strv_push(&w, opts.cache_dirs.v[i]);
	check_named("-C", raw->root ? raw->root : ".", opts.root, &w, 1);
	for (i = 0; i < opts.write.n; i++)
		check_named("-w", raw->write.v[i], opts.write.v[i], &w, 1);
	for (i = 0; i < opts.scope.n; i++)
		check_named("--scope", raw->scope.v[i], opts.scope.v[i], &w,
		    1);
	for (i = 0; i < opts.cache_dirs.n; i++)
		check_held("--cache", opts.cache_dirs.v[i]);
	for (i = 0; i < opts.deny_write.n; i++)
		check_deny("--deny-write", raw->deny_write.v[i],
		    opts.deny_write.v[i], &w);
	for (i = 0; i < opts.deny_read.n; i++)
		check_deny("--deny-read", raw->deny_read.v[i],
		    opts.deny_read.v[i], &w);
	strv_free(&w);
}

/*
 * Every path absolute and real. A missing one is an error, never a skip,
 * except for --deny-read and --deny-write: those stay absent.
 */
static void
resolve_paths(const struct raw *raw)
{
	struct sbx_err e;

	opts.root = resolve("--root", raw->root ? raw->root : ".", 1);
	resolve_all("--write", &raw->write, &opts.write);
	resolve_all("--deny-write", &raw->deny_write, &opts.deny_write);
	resolve_all("--deny-read", &raw->deny_read, &opts.deny_read);
	resolve_all("--scope", &raw->scope, &opts.scope);
	if (timing_on)
		timing_mark("paths");
	if (opts.cache.n > 0 && cache_prepare(&opts.cache, &opts.cache_root,
	    &opts.cache_dirs, &e) < 0)
		fail(&e, 1);
	if (timing_on)
		timing_mark("cache");
	check_paths(raw);
	if (timing_on)
		timing_mark("check");
}

/* Before anything that could fail with a result: it goes where asked. */
static void
open_result(void)
{
	struct sbx_err e;

	/* Where the result would go is closed: the run would be lost to
	 * the caller, so none starts. */
	if (stdout_closed && (opts.dry_run || (opts.result_path == NULL &&
	    !opts.passthrough))) {
		sbx_errf(&e, ERR_RESULT, "standard output is closed: the %s "
		    "has nowhere to go%s", opts.dry_run ? "plan" : "result",
		    opts.dry_run ? "" : " (--result FILE writes it to a file)");
		fail(&e, 0);
	}
	if (opts.result_path == NULL || opts.dry_run || opts.probe)
		return;
	result_fd = open(opts.result_path,
	    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (result_fd < 0) {
		sbx_errf(&e, ERR_RESULT, "--result %s: %s",
		    shown(opts.result_path), strerror(errno));
		fail(&e, 0);
	}
}

/* ---- the environment, built once ---- */

static int
env_default(const char *entry)
{
	static const char *names[] = { "PATH", "HOME", "USER", "LOGNAME",
	    "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR" };
	size_t i, n = strcspn(entry, "=");

	if (strncmp(entry, "LC_", 3) == 0)
		return 1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && strncmp(entry, names[i], n) == 0)
			return 1;
	return 0;
}

/* NAME=VALUE split in place at its first '='. */
static void
env_put_entry(struct strv *env, const char *entry)
{
	size_t n = strcspn(entry, "=");
	char *name = xasprintf("%.*s", (int)n, entry);

	env_put(env, name, entry + n + (entry[n] == '='));
	free(name);
}

/*
 * What the command sees, in order: the default allowlist from sbx's own
 * environment, TMPDIR for the private temp folder, each -e, the --cache
 * variables (not over a -e), then the proxy's variables (proxy_port > 0).
 */
static void
build_env(int proxy_port, const char *tmpdir, struct strv *env)
{
	extern char **environ;
	const char *v;
	char **ep;
	size_t i;

	for (ep = environ; ep && *ep; ep++)
		if (strchr(*ep, '=') && env_default(*ep))
			env_put_entry(env, *ep);
	if (tmpdir != NULL)
		env_put(env, "TMPDIR", tmpdir);
	for (i = 0; i < opts.env_args.n; i++) {
		if (strchr(opts.env_args.v[i], '='))
			env_put_entry(env, opts.env_args.v[i]);
		else if ((v = getenv(opts.env_args.v[i])) != NULL)
			env_put(env, opts.env_args.v[i], v);
	}
	cache_env(&opts.cache, opts.cache_root, env);
	if (proxy_port > 0)
		proxy_env(proxy_port, env);
	if (env->v == NULL)
		env->v = xcalloc(1, sizeof(char *));	/* empty, not NULL */
}

/* ---- the backend table ---- */

static const struct backend *
row_named(const char *name)
{
	size_t i;

	for (i = 0; i < NBACKENDS; i++)
		if (strcmp(backends[i].name, name) == 0)
			return &backends[i];
	return NULL;
}

/* Add a reason to the message of why no row serves ("a; b"). */
static void
add_reason(struct sbx_err *all, const struct sbx_err *one)
{
	size_t n = strlen(all->msg), room = sizeof(all->msg) - n;

	if (one->msg[0] == '\0' || room < 3)
		return;
	if (n > 0) {
		memcpy(all->msg + n, "; ", 3);
		n += 2;
		room -= 2;
	}
	memcpy(all->msg + n, one->msg, strnlen(one->msg, room - 1));
	all->msg[n + strnlen(one->msg, room - 1)] = '\0';
}

/*
 * The row that will run: the one asked for, or the first OS sandbox from
 * `from` on whose quick probe passes. NULL with *e saying why; the
 * reasons of the rows tried (a row of another platform is no reason)
 * gather in *reasons, which a failed trial launch may have begun.
 */
static const struct backend *
select_row(const struct backend *from, struct sbx_err *reasons,
    struct sbx_err *e)
{
	const struct backend *b;
	struct sbx_err pe;
	char info[512];

	if (opts.mode == SANDBOX_HOST)
		return HOST_ROW;
	if (opts.backend != NULL && from == backends) {
		b = row_named(opts.backend);
		memset(&pe, 0, sizeof(pe));
		if (opts.dry_run ||
		    b->probe(&opts, 0, info, sizeof(info), &pe) == 0)
			return b;
		*e = pe;
		if (e->kind != ERR_UNSUPPORTED && e->kind != ERR_POLICY)
			e->kind = ERR_UNAVAILABLE;
		return NULL;
	}
	for (b = opts.backend ? HOST_ROW : from; b < HOST_ROW; b++) {
		memset(&pe, 0, sizeof(pe));
		if (!(b->flags & BE_OS))
			continue;
		if (b->probe(&opts, 0, info, sizeof(info), &pe) == 0)
			return b;
		if (pe.kind != ERR_UNSUPPORTED)
			add_reason(reasons, &pe);
	}
	if (reasons->msg[0] == '\0')
		sbx_errf(e, ERR_UNSUPPORTED, "no OS sandbox for this platform "
		    "(try --sandbox host)");
	else
		sbx_errf(e, ERR_UNAVAILABLE, "no OS sandbox works here: %.900s",
		    reasons->msg);
	return NULL;
}

/* --sandbox auto: no row serves, so no sandbox, said on stderr. */
static const struct backend *
unconfined(const struct sbx_err *why)
{
	if (opts.mode != SANDBOX_AUTO)
		return NULL;
	fprintf(stderr, "sbx: warning: running unconfined: %s\n", why->msg);
	return HOST_ROW;
}

static int
host_build(const struct plan *pl, struct launch *l, struct sbx_err *e)
{
	char **p;

	(void)e;
	for (p = pl->o->cmd; *p; p++)
		strv_push(&l->argv, *p);
	for (p = pl->env->v; p && *p; p++)
		strv_push(&l->envp, *p);
	l->status_fd = 3;
	l->flags = L_KEEPER;
	return 0;
}

/*
 * The descriptors the command inherits from sbx's caller (0; 1 and 2 with
 * --passthrough) were opened on the host's own mounts: from a directory,
 * openat(2) reaches the host's whole tree, whatever the sandbox. So a
 * directory or an O_PATH descriptor there is refused under every OS
 * sandbox; what else a backend must do about them is its own business.
 */
static int
check_inherited(struct sbx_err *e)
{
	struct stat st;
	int fd, fl, last = opts.passthrough ? 2 : 0;
	unsigned tty = tty_wanted(&opts);

	for (fd = 0; fd <= last; fd++) {
		if (tty & (1U << fd))
			continue;	/* sbx's own terminal there */
		if ((fl = fcntl(fd, F_GETFL)) < 0 || fstat(fd, &st) < 0)
			return sbx_errf(e, ERR_POLICY, "%s: %s",
			    std_fd_name[fd], strerror(errno));
#ifdef O_PATH
		if (fl & O_PATH)
			return sbx_errf(e, ERR_POLICY, "%s is an O_PATH "
			    "descriptor: the command could reach the host's "
			    "files through it", std_fd_name[fd]);
#endif
		if (S_ISDIR(st.st_mode))
			return sbx_errf(e, ERR_POLICY, "%s is a directory: the "
			    "command could reach the host's files through it",
			    std_fd_name[fd]);
	}
	return 0;
}

/* ---- one attempt: proxy, environment, plan, then print or run ---- */

struct attempt {
	const struct backend	*be;
	struct proxy		*proxy;
	struct strv		 env;
	struct launch		 l;
	struct policy		 pol;	/* the options' and the temp folder's */
	struct tmp		*tmp;	/* the temp folder sbx made, or NULL */
};

static void
attempt_free(struct attempt *a)
{
	size_t i;

	if (a->be && a->be->release)
		a->be->release(a->l.priv);
	for (i = 0; i < a->l.nfd; i++)
		free(a->l.fd[i].data);
	strv_free(&a->l.argv);
	strv_free(&a->l.envp);
	strv_free(&a->l.dry);
	strv_free(&a->l.shown);
	strv_free(&a->env);
	proxy_stop(a->proxy);
	policy_free(&a->pol);
	if (a->tmp == live_tmp)
		live_tmp = NULL;
	tmp_remove(a->tmp);
	memset(a, 0, sizeof(*a));
}

/*
 * The run's private temp folder, and the policy with it: the row's own
 * /tmp (BE_OWN_TMP), or a folder sbx makes on the host and removes after
 * the run; none with --host-tmp. *dir: its path, for TMPDIR, or NULL.
 */
static int
private_tmp(struct attempt *a, const struct policy *base, const char **dir,
    struct sbx_err *e)
{
	char *slash_tmp;

	*dir = NULL;
	if (opts.host_tmp) {
		policy_with_tmp(base, NULL, 0, NULL, &a->pol);
		return 0;
	}
	if (a->be->flags & BE_OWN_TMP) {
		/* /tmp where it is (a link on some systems: its target). */
		slash_tmp = realpath("/tmp", NULL);
		policy_with_tmp(base, slash_tmp ? slash_tmp : "/tmp", 1, NULL,
		    &a->pol);
		free(slash_tmp);
		*dir = a->pol.r[0].path;
		return 0;
	}
	/* A dry run makes nothing on the host: its plan shows no folder. */
	if (opts.dry_run) {
		policy_with_tmp(base, NULL, 0, NULL, &a->pol);
		return 0;
	}
	if (tmp_create(&a->tmp, e) < 0)
		return -1;
	live_tmp = a->tmp;
	*dir = tmp_path(a->tmp);
	policy_with_tmp(base, *dir, 0, tmp_hidden(a->tmp), &a->pol);
	return 0;
}

/*
 * The temp folder and the proxy first (TMPDIR and the proxy's port go
 * into the environment), then the plan.
 */
static int
plan(struct attempt *a, const struct policy *pol, struct sbx_err *e)
{
	struct plan pl;
	int bridge = (a->be->flags & BE_BRIDGE) != 0;

	executor = a->be->name;
	memset(&pl, 0, sizeof(pl));
	pl.bridge_fd = -1;
	if (private_tmp(a, pol, &pl.tmpdir, e) < 0)
		return -1;
	if (timing_on)
		timing_mark("tmp");
	if (opts.net == NET_PROXY &&
	    proxy_start(&opts, bridge, &a->proxy, e) < 0)
		return -1;
	if (timing_on)
		timing_mark("proxy");
	if (a->proxy && bridge)
		pl.bridge_fd = proxy_bridge_fd(a->proxy);
	else if (a->proxy)
		pl.proxy_port = proxy_port(a->proxy);
	/* The address the command is told; where it leads is the row's. */
	build_env(!a->proxy ? 0 : a->be->flags & (BE_BRIDGE | BE_CAPTURE) ?
	    BRIDGE_PORT : proxy_port(a->proxy), pl.tmpdir, &a->env);
	if ((a->be->flags & BE_OS) && check_inherited(e) < 0)
		return -1;
	pl.o = &opts;
	pl.pol = &a->pol;
	pl.env = &a->env;
	pl.tty_fds = tty_wanted(&opts);
	pl.lim = lim;
	a->l.be = a->be;
	if (a->be->build(&pl, &a->l, e) < 0)
		return -1;
	if (timing_on)
		timing_mark("build");
	return 0;
}

static void
print_quoted(FILE *f, char **v, const char *sep)
{
	char *q;

	for (; *v; v++) {
		q = shell_quote(*v);
		fputs(q, f);
		fputs(v[1] ? sep : "\n", f);
		free(q);
	}
}

/*
 * --dry-run: the backend's own lines (the Landlock rules, the Seatbelt
 * profile, the seccomp flavour), then the exact launch: env -i, the
 * environment, and the line, with what goes through descriptors shown in
 * place.
 */
static void
dry_run(const struct launch *l)
{
	const struct strv *line = l->shown.n ? &l->shown : &l->argv;
	struct strv all = { NULL, 0, 0 };
	size_t i;

	for (i = 0; i < l->dry.n; i++)
		printf("%s\n", l->dry.v[i]);
	strv_push(&all, "env");
	strv_push(&all, "-i");
	for (i = 0; i < l->envp.n; i++)
		strv_push(&all, l->envp.v[i]);
	for (i = 0; i < line->n; i++)
		strv_push(&all, line->v[i]);
	print_quoted(stdout, all.v, " ");
	strv_free(&all);
	fflush(stdout);
}

static void
probe_line(const char *name, int ok, const char *detail, const char *key)
{
	printf("%s=%s\n", name, ok ? "ok" : "unavailable");
	if (detail && *detail)
		printf("%s_%s=%s\n", name, key, shown(detail));
}

/* --probe: each backend, whether it works here, and why not. */
static int
probe(void)
{
	const struct backend *b, *first = NULL;
	struct strv lines = { NULL, 0, 0 };
	struct utsname u;
	struct sbx_err e;
	char info[512];
	size_t i;
	int ok;

	if (uname(&u) == 0 && strcmp(u.sysname, "Linux") == 0)
		printf("platform=linux\n");
	else if (strcmp(u.sysname, "Darwin") == 0)
		printf("platform=macos\n");
	else
		printf("platform=other\n");
	for (b = backends; b < HOST_ROW; b++) {
		memset(&e, 0, sizeof(e));
		info[0] = '\0';
		ok = b->probe(&opts, 1, info, sizeof(info), &e) == 0;
		probe_line(b->name, ok, ok ? info : e.msg,
		    ok ? b->info_key : "error");
		if (ok && first == NULL)
			first = b;
	}
	printf("default=%s\n", first ? first->name : "none");
	limits_probe(&opts, &lines);
	for (i = 0; i < lines.n; i++)
		printf("%s\n", lines.v[i]);
	strv_free(&lines);
	return first ? 0 : EXIT_SBX;
}

static int
exit_status(const struct run *r, const struct sbx_err *e)
{
	const struct exec_result *res = r->res;

	if (res->timed_out)
		return EXIT_TIMEDOUT;
	if (res->aborted)
		return 128 + r->sig;
	if (e->kind == ERR_NOT_FOUND)
		return EXIT_NOTFOUND;
	if (e->kind == ERR_NOT_EXECUTABLE)
		return EXIT_NOEXEC;
	if (e->kind != ERR_NONE)
		return EXIT_SBX;
	if (res->signal)
		return 128 + res->signal;
	return res->exit_code;
}

/* The run's loop parts: the proxy's, the terminal's. */
static size_t
loop_parts(struct attempt *a, struct tty *tty, struct loop_part *part)
{
	size_t n = 0;

	if (a->proxy) {
		part[n].ctx = a->proxy;
		part[n].pollfds = proxy_pollfds;
		part[n].handle = proxy_handle;
		part[n++].deadline = proxy_deadline;
	}
	if (tty) {
		part[n].ctx = tty;
		part[n].pollfds = tty_pollfds;
		part[n].handle = tty_handle;
		part[n++].deadline = tty_deadline;
	}
	return n;
}

/*
 * One run of the launch; the proxy lives exactly as long as it, the
 * terminal (when there is one) and the limits' groups too.
 */
static int
run_once(struct attempt *a, struct run *r, struct exec_result *res,
    struct sbx_err *e)
{
	struct loop_part part[2];
	unsigned fds = tty_wanted(&opts);
	struct tty *tty = NULL;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(r, 0, sizeof(*r));
	res->executor = a->be->name;
	res->isolated = (a->be->flags & BE_OS) != 0;
	allowed_local(&res->allowed_local);
	if (!opts.passthrough) {
		res->out = capture_new(opts.max_output);
		res->err = capture_new(opts.max_output);
	}
	r->l = &a->l;
	r->cwd = opts.root;
	r->what = opts.cmd[0];
	r->timeout_ms = opts.timeout_ms;
	r->kill_after_ms = opts.kill_after_ms;
	r->res = res;
	r->lim = lim;
	if (fds && tty_open(&tty, fds, res->out, e) < 0) {
		tty_close(tty);
		return -1;
	}
	r->tty = tty;
	r->nparts = loop_parts(a, tty, part);
	r->parts = r->nparts ? part : NULL;
	if (limits_prepare(lim, &a->l, e) < 0 ||
	    (a->be->prepare && a->be->prepare(&a->l, e) < 0)) {
		limits_finish(lim, res);
		tty_close(tty);
		return -1;
	}
	if (timing_on)
		timing_mark("prepare");
	rc = proc_run(r, e);
	tty_close(tty);
	r->tty = NULL;
	limits_finish(lim, res);
	if (a->be->finish)
		a->be->finish(&a->l);
	if (a->be->report)
		a->be->report(&a->l, res);
	if (rc < 0 && a->be->explain)
		a->be->explain(&a->l, &r->fail, e);
	r->parts = NULL;
	if (a->proxy)
		proxy_blocked(a->proxy, &res->blocked, &res->blocked_why);
	return rc;
}

static void
result_free(struct exec_result *res)
{
	capture_free(res->out);
	capture_free(res->err);
	strv_free(&res->blocked);
	strv_free(&res->blocked_why);
	strv_free(&res->denied);
	strv_free(&res->allowed_local);
	memset(res, 0, sizeof(*res));
}

/*
 * Run, and when a row whose launch is its trial failed before anything of
 * the command's ran, move on to the next row that works (unless one was
 * asked for); --sandbox auto ends unconfined, saying so.
 */
static int
run_and_report(const struct policy *pol, const struct backend *be)
{
	struct exec_result res;
	struct attempt a;
	struct sbx_err e, why, reasons;
	struct run r;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&reasons, 0, sizeof(reasons));
	for (;;) {
		a.be = be;
		memset(&e, 0, sizeof(e));
		if (plan(&a, pol, &e) < 0)
			fail(&e, 1);
		if (run_once(&a, &r, &res, &e) == 0)
			break;
		if (e.kind == ERR_UNAVAILABLE && (be->flags & BE_TRIAL) &&
		    r.fail.step < 0 && !res.timed_out && !res.aborted) {
			add_reason(&reasons, &e);
			result_free(&res);
			attempt_free(&a);
			why = e;
			be = opts.backend ? NULL :
			    select_row(be + 1, &reasons, &why);
			if (be == NULL && (be = unconfined(&why)) == NULL)
				fail(&why, 1);
			continue;
		}
		if (e.kind == ERR_SPAWN || e.kind == ERR_SANDBOX ||
		    e.kind == ERR_INTERNAL || e.kind == ERR_UNAVAILABLE)
			fail(&e, 1);
		fprintf(stderr, "sbx: %s\n", e.msg);
		res.error = e.kind;
		res.error_message = e.msg;
		break;
	}
	if (timing_on)
		timing_mark("finish");
	rc = exit_status(&r, &e);
	/* A result that cannot be delivered is sbx's failure: 125. */
	if ((result_fd >= 0 || !opts.passthrough) &&
	    result_write(result_fd >= 0 ? result_fd : 1, &res, opts.json) < 0) {
		fprintf(stderr, "sbx: result: %s\n", strerror(errno));
		rc = EXIT_SBX;
	}
	if (timing_on)
		timing_mark("result");
	result_free(&res);
	attempt_free(&a);
	return rc;
}

/* Plan the chosen row and print it, running nothing. */
static int
dry(const struct policy *pol, const struct backend *be)
{
	struct attempt a;
	struct sbx_err e;

	memset(&a, 0, sizeof(a));
	memset(&e, 0, sizeof(e));
	a.be = be;
	if (plan(&a, pol, &e) < 0)
		fail(&e, 1);
	limits_describe(lim, &a.l.dry);
	dry_run(&a.l);
	attempt_free(&a);
	return 0;
}

/* What main() holds, let go before it returns (sanitizer builds check). */
static void
teardown(struct raw *raw, struct policy *pol)
{
	size_t i;

	policy_free(pol);
	limits_free(lim);
	lim = NULL;
	strv_free(&raw->write);
	strv_free(&raw->deny_write);
	strv_free(&raw->deny_read);
	strv_free(&raw->scope);
	strv_free(&opts.write);
	strv_free(&opts.deny_write);
	strv_free(&opts.deny_read);
	strv_free(&opts.scope);
	strv_free(&opts.env_args);
	strv_free(&opts.cache);
	strv_free(&opts.cache_dirs);
	free(opts.cache_root);
	for (i = 0; i < opts.nhosts; i++)
		free(opts.hosts[i].name);
	free(opts.hosts);
	for (i = 0; opts.cmd && opts.cmd[i]; i++)
		free(opts.cmd[i]);
	free(opts.cmd);
	free(opts.root);
	free(opts.self);
	free(opts.result_path);
}

/*
 * A closed 0, 1 or 2 would be reused by sbx's first pipe, and the command
 * would read or write sbx's internals: hold them on /dev/null instead.
 */
static void
hold_std_fds(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0) {
			if (open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) !=
			    fd)
				exit(EXIT_SBX);
			stdout_closed |= fd == 1;
		}
}

/* The policy, the row that will run it, and how each limit holds. */
static const struct backend *
choose(struct policy *pol)
{
	const struct backend *be;
	struct sbx_err e, reasons;

	memset(&e, 0, sizeof(e));
	memset(&reasons, 0, sizeof(reasons));
	/* No sandbox, no file-system policy to compile. */
	if (opts.mode != SANDBOX_HOST && policy_compile(&opts, pol, &e) < 0)
		fail(&e, 1);
	if (timing_on)
		timing_mark("policy");
	if ((be = select_row(backends, &reasons, &e)) == NULL &&
	    (be = unconfined(&e)) == NULL)
		fail(&e, 1);
	if (limits_plan(&opts, &lim, &e) < 0)
		fail(&e, 1);
	if (timing_on)
		timing_mark("select");
	return be;
}

int
main(int argc, char **argv)
{
	const struct backend *be;
	struct raw raw;
	struct policy pol;
	int rc;

	if (argc > 1 && strcmp(argv[1], SHIM_ARG) == 0)
		return shim_main(argc, argv);
	timing_init();
	hold_std_fds();
	memset(&raw, 0, sizeof(raw));
	memset(&pol, 0, sizeof(pol));
	parse_args(argc, argv, &raw);
	executor = opts.backend;
	opts.self = self_path(argv[0]);
	if (timing_on)
		timing_mark("parse");
	if (opts.probe) {
		opts.root = realpath(".", NULL);
		rc = probe();
	} else {
		open_result();
		resolve_paths(&raw);
		be = choose(&pol);
		rc = opts.dry_run ? dry(&pol, be) : run_and_report(&pol, be);
	}
	teardown(&raw, &pol);
	if (timing_on)
		timing_mark("cleanup");
	return rc;
}
