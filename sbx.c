/*
 * sbx.c: runs a command inside the operating system's sandbox and reports
 * what happened. main() is the table of contents: parse, validate, select a
 * backend and plan its launch (or print it for --dry-run), start the proxy,
 * run, report. Every error sbx detects goes through fail(): one line
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
#include <sys/file.h>
#include <sys/stat.h>

#include "sbx.h"

enum {
	OPT_DENY_WRITE = 256, OPT_DENY_READ, OPT_SCOPE, OPT_NO_NET, OPT_NET,
	OPT_ALLOW_HOST, OPT_ALLOW_PRIVATE, OPT_SANDBOX, OPT_BACKEND,
	OPT_DRY_RUN, OPT_PASSTHROUGH, OPT_RESULT, OPT_FORMAT, OPT_PROBE,
	OPT_NO_PROTECT, OPT_ALLOW_UNIX
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
	{ "timeout",		required_argument, NULL, 't' },
	{ "kill-after",		required_argument, NULL, 'k' },
	{ "max-output",		required_argument, NULL, 'm' },
	{ "sandbox",		required_argument, NULL, OPT_SANDBOX },
	{ "backend",		required_argument, NULL, OPT_BACKEND },
	{ "dry-run",		no_argument,	   NULL, OPT_DRY_RUN },
	{ "passthrough",	no_argument,	   NULL, OPT_PASSTHROUGH },
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
"                          host, *.domain, optional :PORT (repeatable)\n"
"      --allow-private     allowed hosts may resolve to private addresses\n"
"      --allow-unix-sockets  the command may create Unix sockets\n"
"      --no-protect        drop the default protected paths\n"
"  -e, --env NAME[=VALUE]  pass NAME, or set it (repeatable)\n"
"limits:\n"
"  -t, --timeout DUR       stop the command after DUR (1.5, 500ms, 30s, 2m, 1h)\n"
"  -k, --kill-after DUR    grace between SIGTERM and SIGKILL (default 2s)\n"
"  -m, --max-output SIZE   per-stream capture cap (default 1M; K, M, G)\n"
"executor:\n"
"      --sandbox MODE      os (default), auto, or host\n"
"      --backend NAME      bwrap, landlock or seatbelt\n"
"      --dry-run           print what would run, run nothing\n"
"      --probe             which backends work here, and why not\n"
"output:\n"
"      --passthrough       output straight through, uncaptured\n"
"      --result FILE       write the ExecResult to FILE\n"
"      --format FMT        kv (default) or json\n"
"  -h, --help              this help\n"
"  -V, --version           the version\n", f);
}

static struct sbx_opts opts;
static enum backend asked;	/* --backend as given */
static int result_fd = -1;

/* The one place that reports an sbx failure; exits 125. */
static void
fail(const struct sbx_err *e, int write_result)
{
	struct exec_result r;

	fprintf(stderr, "sbx: %s\n", e->msg);
	if (write_result && (result_fd >= 0 || !opts.passthrough)) {
		memset(&r, 0, sizeof(r));
		r.executor = opts.backend;
		r.error = e->kind;
		r.error_message = (char *)e->msg;
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

/* --allow-host PATTERN: host, *.domain, optional :PORT. */
static void
add_host(const char *arg)
{
	struct host_pattern h;
	char *s = xstrdup(arg), *p, *name, *last, *end;
	long port;

	memset(&h, 0, sizeof(h));
	for (p = s; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	if ((p = strchr(s, ':')) != NULL) {
		errno = 0;
		port = strtol(p + 1, &end, 10);
		if (p[1] < '0' || p[1] > '9' || *end || errno || port < 1 ||
		    port > 65535)
			usage_err("--allow-host %s: bad port", shown(arg));
		h.port = (int)port;
		*p = '\0';
	}
	name = s;
	if (strncmp(name, "*.", 2) == 0) {
		h.wildcard = 1;
		name += 2;
	}
	if (*name && name[strlen(name) - 1] == '.')
		name[strlen(name) - 1] = '\0';
	if (*name == '\0' || strlen(name) > 253 || name[0] == '.' ||
	    strstr(name, "..") || strspn(name, "abcdefghijklmnopqrstuvwxyz"
	    "0123456789-_.") != strlen(name))
		usage_err("--allow-host %s: not a host name or *.domain pattern",
		    shown(arg));
	last = strrchr(name, '.') ? strrchr(name, '.') + 1 : name;
	if (strspn(last, "0123456789") == strlen(last) ||
	    (strncmp(last, "0x", 2) == 0 &&
	    strspn(last + 2, "0123456789abcdef") == strlen(last + 2)))
		usage_err("--allow-host %s: IP addresses are not allowed, "
		    "name the host", shown(arg));
	h.name = xstrdup(name);
	free(s);
	opts.hosts = xrealloc(opts.hosts, (opts.nhosts + 1) * sizeof(h));
	opts.hosts[opts.nhosts++] = h;
}

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

/* Set NAME=VALUE in env, replacing an earlier NAME. */
static void
env_put(struct strv *env, const char *entry)
{
	size_t i, n = strcspn(entry, "=");

	for (i = 0; i < env->n; i++)
		if (strncmp(env->v[i], entry, n) == 0 && env->v[i][n] == '=') {
			free(env->v[i]);
			env->v[i] = xstrdup(entry);
			return;
		}
	strv_push(env, entry);
}

/* The command's environment: the default allowlist, then each -e. */
static void
build_env(const struct strv *e_args)
{
	extern char **environ;
	char **ep, *v;
	size_t i;

	for (ep = environ; ep && *ep; ep++)
		if (strchr(*ep, '=') && env_default(*ep))
			env_put(&opts.env, *ep);
	for (i = 0; i < e_args->n; i++) {
		if (strchr(e_args->v[i], '=')) {
			env_put(&opts.env, e_args->v[i]);
		} else if ((v = getenv(e_args->v[i])) != NULL) {
			char *entry = xasprintf("%s=%s", e_args->v[i], v);

			env_put(&opts.env, entry);
			free(entry);
		}
	}
	if (opts.env.v == NULL)
		opts.env.v = xcalloc(1, sizeof(char *));	/* empty, not NULL */
}

static void
check_env_arg(const char *arg)
{
	size_t n = strcspn(arg, "=");

	if (n == 0)
		usage_err("-e %s: no variable name", shown(arg));
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

static enum backend
parse_backend(const char *s)
{
	if (strcmp(s, "bwrap") == 0)
		return BACKEND_BWRAP;
	if (strcmp(s, "landlock") == 0)
		return BACKEND_LANDLOCK;
	if (strcmp(s, "seatbelt") == 0)
		return BACKEND_SEATBELT;
	usage_err("--backend %s: must be bwrap, landlock or seatbelt",
	    shown(s));
}

struct raw {
	struct strv	 write, deny_write, deny_read, scope, env;
	const char	*root;
	const char	*script;
	int		 net, no_net;
};

static void
set_duration(const char *opt, const char *arg, int64_t *ms)
{
	if (parse_duration(arg, ms) < 0)
		usage_err("%s %s: not a duration (1.5, 500ms, 30s, 2m, 1h; "
		    "at most 30 days)", opt, shown(arg));
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
	case OPT_NO_PROTECT: opts.protect = 0; break;
	case 'e': check_env_arg(arg); strv_push(&raw->env, arg); break;
	case 't': set_duration("--timeout", arg, &opts.timeout_ms); break;
	case 'k': set_duration("--kill-after", arg, &opts.kill_after_ms); break;
	case 'm':
		if (parse_size(arg, &opts.max_output) < 0)
			usage_err("--max-output %s: not a size (1M, 512K, ...; "
			    "at most 64G)", shown(arg));
		break;
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
	if (opts.mode == SANDBOX_HOST && opts.backend != BACKEND_NONE)
		usage_err("--sandbox host and --backend: host runs no sandbox");
	opts.net = raw->net ? NET_ALL : opts.nhosts ? NET_PROXY : NET_NONE;
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
		parse_opt(c, optarg, raw);
	}
	check_conflicts(raw);
	set_command(raw, argc, argv);
}

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

static void
resolve_all(const char *opt, const struct strv *in, struct strv *out)
{
	size_t i;
	char *r;

	for (i = 0; i < in->n; i++) {
		r = resolve(opt, in->v[i], 0);
		strv_push(out, r);
		free(r);
	}
}

/* Every path absolute and real; a missing one is an error, never a skip. */
static void
resolve_paths(const struct raw *raw, const char *argv0)
{
	char *self;

	opts.root = resolve("--root", raw->root ? raw->root : ".", 1);
	resolve_all("--write", &raw->write, &opts.write);
	resolve_all("--deny-write", &raw->deny_write, &opts.deny_write);
	resolve_all("--deny-read", &raw->deny_read, &opts.deny_read);
	resolve_all("--scope", &raw->scope, &opts.scope);
#ifdef __linux__
	(void)argv0;
	self = realpath("/proc/self/exe", NULL);
#else
	self = strchr(argv0, '/') ? realpath(argv0, NULL) :
	    find_program(argv0, NULL);
#endif
	opts.self = self ? self : xstrdup("sbx");
}

static void
open_result(void)
{
	struct sbx_err e;

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

/* The backend that will run: asked for, or the first that works here. */
static enum backend
select_backend(const struct policy *pol, char **bwrap, struct sbx_err *e)
{
	struct sbx_err e2;
	enum backend want = opts.backend;

	if (opts.mode == SANDBOX_HOST)
		return BACKEND_HOST;
	if (want == BACKEND_SEATBELT)
		return seatbelt_probe(e) == 0 ? BACKEND_SEATBELT : BACKEND_NONE;
#if defined(__linux__)
	if (want != BACKEND_LANDLOCK) {
		/* The launch itself is the trial run: see run_and_report(). */
		if (bwrap_find(&opts, bwrap, e) == 0)
			return BACKEND_BWRAP;
		if (want == BACKEND_BWRAP)
			return BACKEND_NONE;
	}
	if (landlock_probe(&opts, pol, &e2) == 0)
		return BACKEND_LANDLOCK;
	if (want == BACKEND_LANDLOCK)
		*e = e2;
	else
		sbx_errf(e, ERR_UNAVAILABLE, "no OS sandbox works here: %.400s;"
		    " %.400s", e->msg, e2.msg);
	return BACKEND_NONE;
#elif defined(__APPLE__)
	(void)pol;
	(void)bwrap;
	(void)e2;
	if (want != BACKEND_NONE)
		return sbx_errf(e, ERR_UNAVAILABLE, "%s: Linux only",
		    backend_name(want)), BACKEND_NONE;
	return seatbelt_probe(e) == 0 ? BACKEND_SEATBELT : BACKEND_NONE;
#else
	(void)pol;
	(void)bwrap;
	(void)e2;
	return sbx_errf(e, ERR_UNSUPPORTED, "no OS sandbox for this "
	    "platform (try --sandbox host)"), BACKEND_NONE;
#endif
}

/* With --dry-run and an explicit backend, plan without probing. */
static enum backend
dry_backend(char **bwrap)
{
	if (opts.backend == BACKEND_BWRAP) {
		*bwrap = find_program("bwrap", NULL);
		if (*bwrap == NULL)
			*bwrap = xstrdup("/usr/bin/bwrap");
	}
	return opts.backend;
}

/* Everything a backend's builder allocated for a launch. */
static void
launch_free(struct launch *l)
{
	strv_free(&l->argv);
	strv_free(&l->args);
	strv_free(&l->placeholders);
	free(l->seccomp);
	free(l->profile);
	landlock_free(l->landlock_plan);
	memset(l, 0, sizeof(*l));
}

static void
host_launch(struct launch *l)
{
	char **p;

	l->backend = BACKEND_HOST;
	for (p = opts.cmd; *p; p++)
		strv_push(&l->argv, *p);
}

static int
build(enum backend b, const struct policy *pol, const char *bwrap,
    struct launch *l, struct sbx_err *e)
{
	size_t i;

	l->backend = b;
	switch (b) {
	case BACKEND_BWRAP:
	case BACKEND_SEATBELT:
		/* sbx's shim runs inside both. */
		for (i = 0; i < opts.deny_read.n; i++)
			if (path_under(opts.self, opts.deny_read.v[i]))
				return sbx_errf(e, ERR_POLICY, "--deny-read %s: "
				    "hides sbx itself (%s), which runs inside",
				    shown(opts.deny_read.v[i]), shown(opts.self));
		if (b == BACKEND_SEATBELT)
			return seatbelt_build(&opts, pol, l, e);
		return bwrap_build(&opts, pol, bwrap, l, e);
	case BACKEND_LANDLOCK:
		return landlock_build(&opts, pol, l, e);
	default:
		host_launch(l);
		return 0;
	}
}

/* A device node bwrap's --dev binds in from the host, /dev/tty aside. */
static int
bound_device(const char *path)
{
	size_t i;

	for (i = 0; host_devices[i]; i++)
		if (strcmp(path, host_devices[i]) == 0)
			return strcmp(path, "/dev/tty") != 0;
	return 0;
}

/*
 * The descriptors the command inherits from sbx's caller (0; 1 and 2 with
 * --passthrough) were opened on the host's own mounts, and a mount
 * namespace does not change that: from a directory, openat(2) reaches the
 * host's whole tree, and through /proc/self/fd/N a file read-only here can
 * be reopened for writing, or have its mode changed, wherever the host's
 * mount allows it. Directories and O_PATH descriptors are refused under
 * every sandbox. Under bwrap the shim reopens a named file held read-only,
 * and /dev/null and the like, by name inside the sandbox (--reopen): the
 * new descriptor is bound by the sandbox's mounts.
 */
static int
check_inherited(enum backend b, struct sbx_err *e)
{
	char link[32], path[PATH_MAX], num[2];
	struct stat st;
	int fd, fl, last = opts.passthrough ? 2 : 0;
	ssize_t n;

	for (fd = 0; fd <= last; fd++) {
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
		if (b != BACKEND_BWRAP)
			continue;
		if (S_ISBLK(st.st_mode))
			return sbx_errf(e, ERR_POLICY, "%s is a block device: "
			    "the command could reopen it for writing; pipe it "
			    "in instead", std_fd_name[fd]);
		if (!(S_ISREG(st.st_mode) && (fl & O_ACCMODE) == O_RDONLY &&
		    st.st_nlink > 0) && !S_ISCHR(st.st_mode))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = '\0';
		if (S_ISCHR(st.st_mode)) {
			/* A terminal, say: no name inside to reopen. */
			if (!bound_device(path))
				continue;
		} else if (path[0] != '/')
			return sbx_errf(e, ERR_POLICY, "%s: cannot tell the "
			    "file's name (%s) to reopen it inside the sandbox; "
			    "pipe it in instead", std_fd_name[fd],
			    n < 0 ? strerror(errno) : "not a path");
		num[0] = (char)('0' + fd);
		num[1] = '\0';
		strv_push(&opts.reopen, num);
		strv_push(&opts.reopen, path);
	}
	return 0;
}

/*
 * Choose and build. --sandbox os fails closed; --sandbox auto falls back to
 * no sandbox, saying so on stderr and in the result (isolation=none).
 */
static void
plan(struct policy *pol, struct launch *l)
{
	struct sbx_err e;
	char *bwrap = NULL;
	enum backend b;

	memset(&e, 0, sizeof(e));
	/* No sandbox, no file-system policy to compile. */
	if (opts.mode != SANDBOX_HOST && policy_compile(&opts, pol, &e) < 0)
		fail(&e, 1);
	if (opts.dry_run && opts.backend != BACKEND_NONE)
		b = dry_backend(&bwrap);
	else
		b = select_backend(pol, &bwrap, &e);
	if (b == BACKEND_NONE && opts.mode == SANDBOX_AUTO) {
		fprintf(stderr, "sbx: warning: running unconfined: %s\n", e.msg);
		b = BACKEND_HOST;
	}
	if (b == BACKEND_NONE) {
		if (e.kind != ERR_UNSUPPORTED && e.kind != ERR_POLICY)
			e.kind = ERR_UNAVAILABLE;
		fail(&e, 1);
	}
	asked = opts.backend;
	opts.backend = b;
	if ((b != BACKEND_HOST && check_inherited(b, &e) < 0) ||
	    build(b, pol, bwrap, l, &e) < 0)
		fail(&e, 1);
	free(bwrap);
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

/* The exact launch: env -i, the environment, and the argv, args expanded. */
static void
dry_run(struct launch *l)
{
	struct strv line = { NULL, 0, 0 };
	size_t i;

	if (l->profile)
		printf("%s\n", l->profile);
	if (l->backend == BACKEND_BWRAP)
		bwrap_env(l, &opts.env);
	strv_push(&line, "env");
	strv_push(&line, "-i");
	for (i = 0; !l->env_in_args && i < opts.env.n; i++)
		strv_push(&line, opts.env.v[i]);
	for (i = 0; i < l->argv.n; i++) {
		if (l->shim && i == 1 && l->args.n > 0 &&
		    strcmp(l->argv.v[1], "--args") == 0) {
			size_t j;

			for (j = 0; j < l->args.n; j++)
				strv_push(&line, l->args.v[j]);
			i++;	/* and the fd number */
			continue;
		}
		strv_push(&line, l->argv.v[i]);
	}
	print_quoted(stdout, line.v, " ");
	strv_free(&line);
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
	struct policy pol;
	struct sbx_err e;
	char *path = NULL;
	int bw = 0, ll = 0, sb = 0;

	memset(&pol, 0, sizeof(pol));
	memset(&e, 0, sizeof(e));
	if (opts.root == NULL)
		opts.root = realpath(".", NULL);
	if (policy_compile(&opts, &pol, &e) < 0)
		memset(&pol, 0, sizeof(pol));
#if defined(__linux__)
	printf("platform=linux\n");
	bw = bwrap_probe(&opts, &path, &e) == 0;
	probe_line("bwrap", bw, bw ? path : e.msg, bw ? "path" : "error");
	memset(&e, 0, sizeof(e));
	ll = landlock_probe(&opts, &pol, &e) == 0;
	probe_line("landlock", ll, e.msg, ll ? "info" : "error");
	printf("seatbelt=unavailable\nseatbelt_error=macOS only\n");
#elif defined(__APPLE__)
	printf("platform=macos\n");
	printf("bwrap=unavailable\nbwrap_error=Linux only\n");
	printf("landlock=unavailable\nlandlock_error=Linux only\n");
	sb = seatbelt_probe(&e) == 0;
	probe_line("seatbelt", sb, e.msg, "error");
#else
	printf("platform=other\n");
#endif
	printf("default=%s\n", bw ? "bwrap" : ll ? "landlock" :
	    sb ? "seatbelt" : "none");
	free(path);
	policy_free(&pol);
	return bw || ll || sb ? 0 : EXIT_SBX;
}

/*
 * Mount points bwrap makes for missing protected paths. Removing one while
 * another sbx run has it mounted would detach that run's read-only cover
 * (the kernel unmounts what lies on a removed name in every namespace).
 * So each run holds a shared lock on the folder of each placeholder while
 * its sandbox lives, and removes a placeholder only if it can take the
 * lock exclusively at once: the last run out cleans up.
 */
struct placeholders {
	struct strv	 path;
	struct strv	 dir;	/* the distinct folders holding them */
	int		*lock;	/* one descriptor per folder */
};

static char *
folder_of(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');

	if (slash != NULL)
		*(slash == dir ? slash + 1 : slash) = '\0';
	return dir;
}

/*
 * One lock per folder: flock() locks belong to an open file description,
 * so two descriptors of sbx's own on one folder would refuse each other
 * the exclusive lock.
 */
static void
lock_placeholders(const struct launch *l, struct placeholders *ph)
{
	size_t i, j;
	char *dir;

	memset(ph, 0, sizeof(*ph));
	ph->lock = xcalloc(l->placeholders.n + 1, sizeof(int));
	for (i = 0; i < l->placeholders.n; i++) {
		strv_push(&ph->path, l->placeholders.v[i]);
		dir = folder_of(l->placeholders.v[i]);
		for (j = 0; j < ph->dir.n && strcmp(ph->dir.v[j], dir); j++)
			;
		if (j == ph->dir.n) {
			strv_push(&ph->dir, dir);
			ph->lock[j] = open(dir, O_RDONLY | O_DIRECTORY |
			    O_CLOEXEC);
			if (ph->lock[j] >= 0)
				while (flock(ph->lock[j], LOCK_SH) < 0 &&
				    errno == EINTR)
					;
		}
		free(dir);
	}
}

static void
remove_placeholders(struct placeholders *ph)
{
	struct stat st;
	size_t i, j;
	char *dir;

	for (j = 0; j < ph->dir.n; j++) {
		if (ph->lock[j] < 0)
			continue;
		if (flock(ph->lock[j], LOCK_EX | LOCK_NB) < 0) {
			close(ph->lock[j]);
			continue;
		}
		for (i = ph->path.n; i-- > 0; ) {
			dir = folder_of(ph->path.v[i]);
			if (strcmp(dir, ph->dir.v[j]) == 0 &&
			    lstat(ph->path.v[i], &st) == 0) {
				if (S_ISDIR(st.st_mode))
					rmdir(ph->path.v[i]);
				else if (S_ISREG(st.st_mode) && st.st_size == 0)
					unlink(ph->path.v[i]);
			}
			free(dir);
		}
		close(ph->lock[j]);
	}
	strv_free(&ph->path);
	strv_free(&ph->dir);
	free(ph->lock);
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

/* One run of the launch; the proxy lives exactly as long as it. */
static int
attempt(struct launch *l, struct run *r, struct exec_result *res,
    struct sbx_err *e)
{
	int bridge = l->backend == BACKEND_BWRAP, rc;

	memset(res, 0, sizeof(*res));
	memset(r, 0, sizeof(*r));
	memset(e, 0, sizeof(*e));
	res->executor = l->backend;
	res->isolated = l->backend != BACKEND_HOST;
	if (!opts.passthrough) {
		res->out = capture_new(opts.max_output);
		res->err = capture_new(opts.max_output);
	}
	r->o = &opts;
	r->l = l;
	r->res = res;
	if (opts.net == NET_PROXY &&
	    proxy_start(&opts, bridge, &r->proxy, e) < 0)
		fail(e, 1);
	if (r->proxy)
		proxy_env(r->proxy, bridge, &opts.env);
	if (l->backend == BACKEND_BWRAP)
		bwrap_env(l, &opts.env);
	rc = proc_run(r, e);
	if (r->proxy) {
		proxy_blocked(r->proxy, &res->blocked);
		proxy_stop(r->proxy);
	}
	return rc;
}

/* bwrap ended before the shim ran: its first line of stderr says why. */
static void
launch_failed(const struct exec_result *res, struct sbx_err *e)
{
	const char *p[3], *msg;
	size_t len[3], n;
	uint64_t cut;
	char line[300];

	line[0] = '\0';
	if (res->err) {
		capture_parts(res->err, p, len, &cut);
		n = memchr(p[0], '\n', len[0]) ?
		    (size_t)((const char *)memchr(p[0], '\n', len[0]) - p[0]) :
		    len[0];
		n = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
		memcpy(line, p[0], n);
		line[n] = '\0';
	}
	msg = line;
	if (strncmp(msg, "bwrap: ", 7) == 0)
		msg += 7;
	if (*msg == '\0')
		msg = "it ended before the command ran";
	sbx_errf(e, ERR_UNAVAILABLE, "bwrap: %s: %s", shown(msg),
	    bwrap_fix(msg));
}

/*
 * Nothing of the command's ran: the default selection moves on to the
 * next backend; --sandbox auto falls back to no sandbox, saying so.
 */
static int
fallback(const struct policy *pol, struct launch *l, struct sbx_err *e)
{
	struct sbx_err e2;

	launch_free(l);
	if (asked == BACKEND_NONE && landlock_probe(&opts, pol, &e2) == 0 &&
	    build(BACKEND_LANDLOCK, pol, NULL, l, &e2) == 0)
		return 0;
	if (opts.mode != SANDBOX_AUTO)
		return -1;
	fprintf(stderr, "sbx: warning: running unconfined: %s\n", e->msg);
	host_launch(l);
	return 0;
}

static int
run_and_report(const struct policy *pol, struct launch *l)
{
	struct placeholders ph;
	struct exec_result res;
	struct run r;
	struct sbx_err e;
	int rc;

	lock_placeholders(l, &ph);
	while (attempt(l, &r, &res, &e) < 0) {
		opts.backend = l->backend;	/* for a failure's result */
		if (e.kind == ERR_UNAVAILABLE && l->backend == BACKEND_BWRAP &&
		    !res.timed_out && !res.aborted) {
			launch_failed(&res, &e);
			capture_free(res.out);
			capture_free(res.err);
			strv_free(&res.blocked);
			if (fallback(pol, l, &e) == 0)
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
	remove_placeholders(&ph);
	rc = exit_status(&r, &e);
	/* A result that cannot be delivered is sbx's failure: 125. */
	if ((result_fd >= 0 || !opts.passthrough) &&
	    result_write(result_fd >= 0 ? result_fd : 1, &res, opts.json) < 0) {
		fprintf(stderr, "sbx: result: %s\n", strerror(errno));
		rc = EXIT_SBX;
	}
	capture_free(res.out);
	capture_free(res.err);
	strv_free(&res.blocked);
	return rc;
}

/* What main() holds, let go before it returns (sanitizer builds check). */
static void
teardown(struct raw *raw, struct policy *pol, struct launch *l)
{
	size_t i;

	launch_free(l);
	policy_free(pol);
	strv_free(&raw->write);
	strv_free(&raw->deny_write);
	strv_free(&raw->deny_read);
	strv_free(&raw->scope);
	strv_free(&raw->env);
	strv_free(&opts.write);
	strv_free(&opts.deny_write);
	strv_free(&opts.deny_read);
	strv_free(&opts.scope);
	strv_free(&opts.env);
	strv_free(&opts.reopen);
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
		if (fcntl(fd, F_GETFD) < 0 &&
		    open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
			exit(EXIT_SBX);
}

int
main(int argc, char **argv)
{
	struct raw raw;
	struct policy pol;
	struct launch l;
	int rc;

	if (argc > 1 && strcmp(argv[1], SHIM_ARG) == 0)
		return shim_main(argc, argv);
	hold_std_fds();
	memset(&raw, 0, sizeof(raw));
	memset(&pol, 0, sizeof(pol));
	memset(&l, 0, sizeof(l));
	parse_args(argc, argv, &raw);
	if (opts.probe)
		rc = probe();
	else {
		build_env(&raw.env);
		resolve_paths(&raw, argv[0]);
		open_result();
		plan(&pol, &l);
		if (opts.dry_run) {
			dry_run(&l);
			rc = 0;
		} else
			rc = run_and_report(&pol, &l);
	}
	teardown(&raw, &pol, &l);
	return rc;
}
