/*
 * seatbelt.c: the macOS backend. seatbelt_build() turns the compiled policy
 * into an SBPL profile for /usr/bin/sandbox-exec and the launch line that
 * carries it; it is a pure function (no fork, no exec, no exit, no file
 * system access) that gives the same text on every platform, so --dry-run
 * and the golden tests run anywhere. The profile goes to sandbox-exec on
 * descriptor 3, never in argv. seatbelt_probe() checks that sandbox-exec
 * works here.
 * Invariants: a path reaches the profile only through put_str(), which
 * writes one Scheme string literal that cannot end early, after
 * path_problem() has passed it (or the run is refused), either as it is or
 * as a regex in which every metacharacter of the path is escaped
 * (put_regex()); the policy's rules keep their order, because in SBPL the
 * last matching rule wins; every operation name and filter form the
 * profile uses is also in the probe's profile, so a macOS that does not
 * know one fails the probe instead of every run. No rule of the policy is
 * filtered out: the folders above a read-only path are pinned here, in
 * SBPL's terms.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sbx.h"

#ifdef __APPLE__
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#endif

#define SANDBOX_EXEC	"/usr/bin/sandbox-exec"

/*
 * The longest string (bytes between the quotes) we put in a profile.
 * libsandbox's reader, a TinyScheme fork, reads a string into a fixed
 * buffer and rejects a literal of about 1 KiB ("Error reading string");
 * this stays clear of it whether the limit counts escaped or read bytes.
 */
#define SBPL_STR_MAX	1000

/*
 * Always the same, before the file rules. Nothing may escape the sandbox
 * through another process: LaunchServices (open(1)), Apple Events
 * (osascript driving Terminal), launchd jobs (launchctl submit), or
 * signals to and process details (arguments, environment) of processes
 * outside it. No hard links at all: SBPL checks writes by path, so a new
 * name for a protected or read-only file would be a writable alias of it.
 */
static const char FIXED_RULES[] =
	"(deny lsopen)\n"
	"(deny appleevent-send)\n"
	"(deny job-creation)\n"
	"(deny signal)\n"
	"(allow signal (target same-sandbox))\n"
	"(deny process-info*)\n"
	"(allow process-info* (target same-sandbox))\n"
	"(deny file-link)\n";

/*
 * Daemons that would act for the command, outside the sandbox: cfprefsd
 * writes any preference domain (a terminal's start-up command); a mount
 * (hdiutil attach -mountpoint) can cover a protected folder; the
 * pasteboard holds copied passwords and takes a command planted for a
 * later paste; securityd (the login keychain) hands out the secrets whose
 * items already trust git or gh; sysmond lists every process with its
 * arguments; lsd's database chooses which program opens a URL scheme
 * later. Not trustd or secd: TLS certificate checks need the first, and
 * the second hands an unsigned program no other program's items. lsopen
 * covers open(1), which launchservicesd checks for the caller. launchd
 * itself refuses bootstrap and load to every sandboxed process; no
 * operation names its other requests (setenv): t/macos.bats checks.
 */
static const char DAEMON_RULES[] =
	"(deny user-preference-write)\n"
	"(deny file-mount file-unmount)\n"
	"(deny mach-lookup\n"
	"    (global-name \"com.apple.pasteboard.1\")\n"
	"    (global-name \"com.apple.SecurityServer\")\n"
	"    (global-name \"com.apple.sysmond\")\n"
	"    (global-name \"com.apple.lsd.modifydb\"))\n";

/*
 * Other processes' arguments and environments: kern.procargs2 gives any
 * process's, whatever process-info says, kern.proc.all and the lists by
 * user, terminal or session every process's entry. A process still reads
 * its own entry and its group's (kern.proc.pid.N, kern.proc.pgrp.N).
 */
static const char SYSCTL_RULES[] =
	"(deny sysctl-read\n"
	"    (sysctl-name-prefix \"kern.procargs\")\n"
	"    (sysctl-name-prefix \"kern.proc.\"))\n"
	"(allow sysctl-read\n"
	"    (sysctl-name-prefix \"kern.proc.pid.\")\n"
	"    (sysctl-name-prefix \"kern.proc.pgrp.\"))\n";

/*
 * What every program expects to write, whatever the policy: openpty()
 * opens /dev/ptmx for writing (Python's pty module, script, expect, tmux,
 * node-pty).
 */
static const char DEVICE_RULES[] =
	"(allow file-write*\n"
	"    (literal \"/dev/null\")\n"
	"    (literal \"/dev/zero\")\n"
	"    (literal \"/dev/dtracehelper\")\n"
	"    (literal \"/dev/tty\")\n"
	"    (literal \"/dev/ptmx\")\n"
	"    (subpath \"/dev/fd\"))\n";

/*
 * Terminals: /dev/tty and the ptys opened through /dev/ptmx inside (the
 * kernel gives the opener the com.apple.sandbox.pty extension for each),
 * and no other: every terminal window of the user's is a tty the user
 * owns, where what the command writes would show as escape sequences and
 * from which it could read what the user types. Metadata stays readable
 * (ttyname(3)) and ioctls stay allowed: a terminal the command inherits
 * is open already, and tcsetattr() on it must work.
 */
static const char TTY_RULES[] =
	"(deny file-read-data file-write* (regex #\"^/dev/(tty|pty).\"))\n"
	"(allow file-read-data file-write*\n"
	"    (require-all\n"
	"        (regex #\"^/dev/ttys[0-9]+$\")\n"
	"        (extension \"com.apple.sandbox.pty\")))\n";

/*
 * No network (--allow-host adds the proxy's port). A server may listen on
 * any address, as Node's listen(port) (::) and python3 -m http.server
 * (0.0.0.0) do, but only a connection that arrives on loopback reaches it,
 * none from the network. Outbound nothing, not even loopback: the host's
 * services there (ssh to localhost with the keys the command can read, a
 * notebook server whose token it can read, another run's proxy) are not
 * the command's to reach, and SBPL cannot tell the command's own servers
 * from them. TCP only, so a resolver on loopback carries nothing out.
 */
static const char NET_LOCAL_RULES[] =
	"(deny network-outbound)\n"
	"(deny network-inbound)\n"
	"(deny network-bind)\n"
	"(allow network-bind (local tcp \"*:*\"))\n"
	"(allow network-inbound (local tcp \"localhost:*\"))\n";

/* --allow-unix-sockets without --net: connect and bind by path. */
static const char NET_UNIX_ALLOW_RULES[] =
	"(allow network-outbound (remote unix-socket (path-regex #\"^/\")))\n"
	"(allow network-bind (local unix-socket (path-regex #\"^/\")))\n";

/*
 * --net without --allow-unix-sockets: as on Linux, no Unix sockets by path
 * (docker.sock, ssh-agent, gpg-agent), except mDNSResponder, which every
 * name lookup on macOS goes through.
 */
static const char NET_UNIX_DENY_RULES[] =
	"(deny network-outbound (remote unix-socket (path-regex #\"^/\")))\n"
	"(deny network-bind (local unix-socket (path-regex #\"^/\")))\n"
	"(allow network-outbound\n"
	"    (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\"))\n"
	"    (remote unix-socket (path-literal \"/var/run/mDNSResponder\")))\n";

/* A growable text buffer; xrealloc exits 125 on exhaustion. */
struct text {
	char	*s;
	size_t	 n;
	size_t	 cap;
};

static void
put_mem(struct text *t, const char *s, size_t len)
{
	if (t->n + len + 1 > t->cap) {
		while (t->n + len + 1 > t->cap)
			t->cap = t->cap ? t->cap * 2 : 4096;
		t->s = xrealloc(t->s, t->cap);
	}
	memcpy(t->s + t->n, s, len);
	t->n += len;
	t->s[t->n] = '\0';
}

static void
put(struct text *t, const char *s)
{
	put_mem(t, s, strlen(s));
}

/*
 * Why path cannot be written as an SBPL string, or NULL when it can.
 * Only backslash and double quote are escaped: those two escapes mean the
 * same in every Scheme reader. Control bytes are refused, not escaped:
 * libsandbox's reader is closed source, and were it to read "\n" or "\x01"
 * otherwise than we mean, a deny rule would name another path and silently
 * match nothing. A byte that is not UTF-8 is refused too (no macOS file
 * system can hold one, and 0xff reads as end of file in TinyScheme).
 */
static const char *
path_problem(const char *path)
{
	const unsigned char *s = (const unsigned char *)path;
	size_t	 len = strlen(path), i, k, out = 0;

	if (path[0] != '/')
		return "not an absolute path";
	for (i = 0; i < len; i += k) {
		if (s[i] < 0x20 || s[i] == 0x7f)
			return "control character in path";
		if ((k = utf8_len(s + i, len - i)) == 0)
			return "path is not valid UTF-8";
		out += (s[i] == '\\' || s[i] == '"') ? 2 : k;
	}
	if (out > SBPL_STR_MAX)
		return "path too long for a Seatbelt profile";
	return NULL;
}

/*
 * Refuse path, named on one printable line: control bytes and bytes that
 * are not UTF-8 as \xHH, and a long path cut in the middle so the reason
 * still fits the message.
 */
static int
refuse(const char *path, const char *why, struct sbx_err *e)
{
	const unsigned char *s = (const unsigned char *)path;
	struct text t = { NULL, 0, 0 };
	size_t	 len = strlen(path), i, k;
	int	 cut = len > 300;
	char	 hex[8];

	for (i = 0; i < len; i += k) {
		if (cut && i >= 120) {
			put(&t, "...");
			i = len - 120;
			cut = 0;
		}
		k = utf8_len(s + i, len - i);
		if (k == 0 || s[i] < 0x20 || s[i] == 0x7f) {
			snprintf(hex, sizeof(hex), "\\x%02x", s[i]);
			put(&t, hex);
			k = 1;
		} else
			put_mem(&t, path + i, k);
	}
	sbx_errf(e, ERR_POLICY, "seatbelt: %s: %s", t.s, why);
	free(t.s);
	return -1;
}

/*
 * Write s as a string literal. For a path, path_problem(path) must be
 * NULL; a regex made of such a path (put_regex()) has its bytes, and
 * backslashes.
 */
static void
put_str(struct text *t, const char *s)
{
	const char *p;

	put(t, "\"");
	for (p = s; *p != '\0'; p++) {
		if (*p == '\\' || *p == '"')
			put_mem(t, "\\", 1);
		put_mem(t, p, 1);
	}
	put(t, "\"");
}

/* The bytes between the quotes once put_str() has escaped s. */
static size_t
str_len(const char *s)
{
	size_t	 n = 0;

	for (; *s != '\0'; s++)
		n += (*s == '\\' || *s == '"') ? 2 : 1;
	return n;
}

/*
 * The part of path a command could create anew: below the shallowest
 * writable folder (or file) that holds it; that folder's length, or 0
 * when none does. Above it every folder exists, and Seatbelt sees an
 * existing file by the name it has on disk.
 */
static size_t
fold_from(const struct policy *p, const char *path)
{
	size_t	 i, n, best = 0;

	for (i = 0; i < p->writable.n; i++) {
		if (!path_under(path, p->writable.v[i]))
			continue;
		n = strlen(p->writable.v[i]);
		if (best == 0 || n < best)
			best = n;
	}
	return best;
}

/*
 * path as a regex, ^path(/.*)?$ for its tree or ^path$ for itself, in
 * which each ASCII letter
 * from byte `from` on is a class of its two cases and every metacharacter
 * is escaped. APFS and HFS+ ignore case by default and a name being made
 * is checked as the command spelled it: without this, mkdir .git/HOOKS or
 * >> ~/.ZSHRC would pass a deny on .git/hooks or ~/.zshrc, and git or zsh
 * would read the file under its protected name later. Only ASCII letters
 * fold: every protected name is ASCII, and another letter in a name of the
 * user's is matched as given. On a volume that respects case the deny
 * also covers the other spellings.
 */
static void
put_regex(struct text *r, const char *path, size_t from, int tree)
{
	const unsigned char *s = (const unsigned char *)path;
	char	 c[5];
	size_t	 i;

	put(r, "^");
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= from && s[i] < 0x80 && isalpha(s[i])) {
			snprintf(c, sizeof(c), "[%c%c]", toupper(s[i]),
			    tolower(s[i]));
			put(r, c);
			continue;
		}
		if (s[i] < 0x80 && strchr(".[]()*+?{}|^$\\", s[i]) != NULL)
			put_mem(r, "\\", 1);
		put_mem(r, path + i, 1);
	}
	put(r, tree ? "(/.*)?$" : "$");
}

/*
 * A denied tree: a regex of every spelling below the writable folder that
 * holds it (put_regex()), or, outside every writable folder, where nothing
 * can be created, (subpath). sock: as a Unix socket's address filter.
 */
static int
put_tree(struct text *t, const struct policy *p, const char *path,
    int sock, struct sbx_err *e)
{
	struct text r = { NULL, 0, 0 };
	size_t	 from = fold_from(p, path);

	if (from == 0) {
		put(t, "(subpath ");
		put_str(t, path);
		put(t, ")");
		return 0;
	}
	put_regex(&r, path, from, 1);
	if (str_len(r.s) > SBPL_STR_MAX) {
		free(r.s);
		return refuse(path, "path too long for a Seatbelt profile", e);
	}
	put(t, sock ? "(path-regex " : "(regex ");
	put_str(t, r.s);
	put(t, ")");
	free(r.s);
	return 0;
}

/* A writable rule: a whole tree, or a writable file, which is itself. */
static int
rule_is_tree(const struct rule *r)
{
	return r->kind != RULE_WRITE || r->type == PATH_DIR;
}

static int
put_rule(struct text *t, const struct policy *p, const struct rule *r,
    struct sbx_err *e)
{
	switch (r->kind) {
	case RULE_WRITE:
		put(t, "(allow file-write* ");
		put(t, rule_is_tree(r) ? "(subpath " : "(literal ");
		put_str(t, r->path);
		put(t, "))\n");
		return 0;
	case RULE_READONLY:
		put(t, "(deny file-write* ");
		break;
	case RULE_DENY_READ:
		/* A clone would be a readable copy, were it checked as a read. */
		put(t, "(deny file-read* file-write* file-clone ");
		break;
	}
	if (put_tree(t, p, r->path, 0, e) == -1)
		return -1;
	put(t, r->implicit ? ") ; protected\n" : ")\n");
	return 0;
}

/* The protected names that do not exist: none may be made. */
static int
put_missing(struct text *t, const struct policy *p, struct sbx_err *e)
{
	size_t	 i;

	for (i = 0; i < p->missing.n; i++) {
		put(t, "(deny file-write* ");
		if (put_tree(t, p, p->missing.v[i], 0, e) == -1)
			return -1;
		put(t, ") ; protected, not there yet\n");
	}
	return 0;
}

/*
 * The policy's rules in order, the missing protected names where the
 * protected list begins: after the last writable path, so that none of
 * those allows it again, and before --deny-write and --deny-read.
 */
static int
put_policy(struct text *t, const struct policy *p, struct sbx_err *e)
{
	size_t	 i, split = 0;

	for (i = 0; i < p->n; i++)
		if (p->r[i].kind == RULE_WRITE)
			split = i + 1;
	for (i = 0; i <= p->n; i++) {
		if (i == split && put_missing(t, p, e) == -1)
			return -1;
		if (i < p->n && put_rule(t, p, &p->r[i], e) == -1)
			return -1;
	}
	return 0;
}

/* Whether the policy leaves dir writable: its last matching rule. */
static int
writable(const struct policy *p, const char *dir)
{
	const struct rule *r;
	int	 w = 0;
	size_t	 i;

	for (i = 0; i < p->n; i++) {
		r = &p->r[i];
		if (rule_is_tree(r) ? path_under(dir, r->path) :
		    strcmp(dir, r->path) == 0)
			w = r->kind == RULE_WRITE;
	}
	return w;
}

/* Push each writable folder above path onto v, once. */
static void
push_writable_parents(const struct policy *p, const char *path,
    struct strv *v)
{
	char	*dir, *slash;
	size_t	 i;

	dir = xstrdup(path);
	while ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (!writable(p, dir))
			continue;
		for (i = 0; i < v->n && strcmp(v->v[i], dir) != 0; i++)
			;
		if (i == v->n)
			strv_push(v, dir);
	}
	free(dir);
}

/*
 * One pinned folder: itself, in every spelling of what lies below the
 * shallowest writable folder. These folders exist, and Seatbelt should
 * see the one that moves by its name on disk, but whether it takes the
 * name the command typed for the source of rename(2) is not documented:
 * the fold costs nothing where it does not.
 */
static int
put_pin(struct text *t, const struct policy *p, const char *dir,
    struct sbx_err *e)
{
	struct text r = { NULL, 0, 0 };
	size_t	 from = fold_from(p, dir);

	if (from == 0 || from == strlen(dir)) {
		put(t, "\n    (literal ");
		put_str(t, dir);
		put(t, ")");
		return 0;
	}
	put_regex(&r, dir, from, 0);
	if (str_len(r.s) > SBPL_STR_MAX) {
		free(r.s);
		return refuse(dir, "path too long for a Seatbelt profile", e);
	}
	put(t, "\n    (regex ");
	put_str(t, r.s);
	put(t, ")");
	free(r.s);
	return 0;
}

/*
 * SBPL matches paths, not files: renaming a writable folder above a
 * read-only path (mv .git g; edit g/hooks; mv g .git) would carry the path
 * out of its rule. rename(2) checks file-write-unlink on what it moves, so
 * each writable folder above a read-only or unreadable path, or above a
 * missing protected name, stays put, up to and including the writable
 * folder that holds it (mv ws other/ws works between two writable
 * folders).
 */
static int
put_pinned_parents(struct text *t, const struct policy *p,
    struct sbx_err *e)
{
	struct strv v = { NULL, 0, 0 };
	size_t	 i;
	int	 rc = 0;

	for (i = 0; i < p->n; i++)
		if (p->r[i].kind != RULE_WRITE)
			push_writable_parents(p, p->r[i].path, &v);
	for (i = 0; i < p->missing.n; i++)
		push_writable_parents(p, p->missing.v[i], &v);
	if (v.n == 0)
		return 0;
	put(t, "; the folders above them stay where they are\n");
	put(t, "(deny file-write-unlink");
	for (i = 0; i < v.n && rc == 0; i++)
		rc = put_pin(t, p, v.v[i], e);
	put(t, ")\n");
	strv_free(&v);
	return rc;
}

/*
 * The run's own temp folder (TMPDIR): writable, and kept where it is, out
 * of which a command could otherwise move it beyond the cleanup. Before
 * the policy, so that a --deny-write or --deny-read over it still wins.
 * The per-user cache folder (confstr(_CS_DARWIN_USER_CACHE_DIR)) stays
 * read-only: clang's and swift's module caches there, like xcrun's cache
 * in the per-user temp folder, are read by the user's later builds outside,
 * and a planted module or tool path would run there. With no folder in the
 * plan (a dry run, --host-tmp) the rules are shown as a comment, $TMPDIR
 * in place of the path.
 */
static int
put_tmp_rules(struct text *t, const char *tmpdir, struct sbx_err *e)
{
	const char *why, *path = tmpdir ? tmpdir : "$TMPDIR";
	const char *c = tmpdir ? "" : "; ";

	if (tmpdir != NULL && (why = path_problem(tmpdir)) != NULL)
		return refuse(tmpdir, why, e);
	put(t, tmpdir ? "; temp: the run's own folder\n" :
	    "; temp: none in this plan; with a folder of its own, a run has\n");
	put(t, c);
	put(t, "(allow file-write* (subpath ");
	put_str(t, path);
	put(t, "))\n");
	put(t, c);
	put(t, "(deny file-write-unlink (literal ");
	put_str(t, path);
	put(t, "))\n");
	return 0;
}

static int
put_file_rules(struct text *t, const struct plan *pl, struct sbx_err *e)
{
	const struct policy *p = pl->pol;
	const char *why;
	size_t	 i;

	for (i = 0; i < p->n; i++)
		if ((why = path_problem(p->r[i].path)) != NULL)
			return refuse(p->r[i].path, why, e);
	for (i = 0; i < p->missing.n; i++)
		if ((why = path_problem(p->missing.v[i])) != NULL)
			return refuse(p->missing.v[i], why, e);
	put(t, "\n; files: readable everywhere, writable only where allowed\n");
	put(t, "(deny file-write*)\n");
	put(t, DEVICE_RULES);
	put(t, "; terminals: /dev/tty and the ones opened inside, no other\n");
	put(t, TTY_RULES);
	if (put_tmp_rules(t, pl->tmpdir, e) == -1)
		return -1;
	put(t, "; the policy, in order: the last matching rule wins\n");
	if (put_policy(t, p, e) == -1 || put_pinned_parents(t, p, e) == -1)
		return -1;
	/*
	 * Last, so that no writable path allows it again: a set-user-ID copy
	 * of a program left in a folder others reach would run as the user
	 * (as root, for a run by root).
	 */
	put(t, "; no set-user-ID or set-group-ID bit, wherever it writes\n");
	put(t, "(deny file-write-setugid)\n");
	return 0;
}

/*
 * --allow-host localhost:PORT: that port of the host's loopback, and no
 * other ("localhost" is 127.0.0.1 and ::1 to SBPL).
 */
static void
put_local_rules(struct text *t, const struct sbx_opts *o)
{
	int ports[LOCAL_MAX];
	size_t i, n = proxy_local_ports(o->hosts, o->nhosts, ports, LOCAL_MAX);
	char line[80];

	if (n > 0)
		put(t, "; the host's loopback ports allowed (--allow-host "
		    "localhost:PORT)\n");
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "(allow network-outbound "
		    "(remote tcp \"localhost:%d\"))\n", ports[i]);
		put(t, line);
	}
}

/* The proxy listens on 127.0.0.1:port; "localhost" is all SBPL takes. */
static int
put_net_rules(struct text *t, const struct plan *pl, struct sbx_err *e)
{
	const struct sbx_opts *o = pl->o;
	char	 line[80];

	if (o->net == NET_ALL) {
		if (!o->allow_unix) {
			put(t, "\n; network: all, but no Unix sockets\n");
			put(t, NET_UNIX_DENY_RULES);
		}
		return 0;
	}
	if (o->net == NET_PROXY && (pl->proxy_port <= 0 ||
	    pl->proxy_port > 65535))
		return sbx_errf(e, ERR_INTERNAL, "seatbelt: --allow-host: "
		    "no port for the proxy");
	put(t, o->net == NET_PROXY ?
	    "\n; network: only the proxy; servers listen for loopback only\n" :
	    "\n; network: none; servers listen for loopback only\n");
	put(t, NET_LOCAL_RULES);
	if (o->net == NET_PROXY) {
		snprintf(line, sizeof(line), "(allow network-outbound "
		    "(remote tcp \"localhost:%d\"))\n", pl->proxy_port);
		put(t, line);
		put_local_rules(t, o);
	}
	if (o->allow_unix)
		put(t, NET_UNIX_ALLOW_RULES);
	return 0;
}

/*
 * connect(2) to a Unix socket is network-outbound, not a file read: where
 * --allow-unix-sockets opens them, one below a --deny-read path (an agent's
 * socket, docker.sock) is refused as well.
 */
static int
put_denied_sockets(struct text *t, const struct plan *pl, struct sbx_err *e)
{
	const struct policy *p = pl->pol;
	size_t	 i;
	int	 first = 1;

	if (!pl->o->allow_unix)
		return 0;
	for (i = 0; i < p->n; i++) {
		if (p->r[i].kind != RULE_DENY_READ)
			continue;
		if (first)
			put(t, "; no Unix socket below a --deny-read path\n");
		first = 0;
		put(t, "(deny network-outbound (remote unix-socket ");
		if (put_tree(t, p, p->r[i].path, 1, e) == -1)
			return -1;
		put(t, "))\n");
	}
	return 0;
}

int
seatbelt_build(const struct plan *pl, struct launch *l, struct sbx_err *e)
{
	const struct sbx_opts *o = pl->o;
	struct text t = { NULL, 0, 0 };
	char **c;

	if (shim_check(o, e) < 0)
		return -1;
	put(&t, "(version 1)\n(allow default)\n");
	put(&t, "\n; nothing escapes through other processes\n");
	put(&t, FIXED_RULES);
	put(&t, "; nor through daemons that would act for it\n");
	put(&t, DAEMON_RULES);
	put(&t, "; nor reads the arguments and environments of others\n");
	put(&t, SYSCTL_RULES);
	if (put_file_rules(&t, pl, e) == -1 || put_net_rules(&t, pl, e) == -1 ||
	    put_denied_sockets(&t, pl, e) == -1) {
		free(t.s);
		return -1;
	}

	/* A dry run prints the profile first, as it is. */
	strv_push(&l->dry, t.s);
	/*
	 * sbx's shim runs inside, as under bwrap: sandbox-exec would report
	 * a command it cannot run with its own status, not 127 or 126.
	 * The profile goes on a descriptor, not in argv, where every local
	 * user could read it (and the --deny-read paths it names) with
	 * ps(1), and where it would compete with the environment for
	 * ARG_MAX; proc.c writes it to an unlinked 0600 file.
	 */
	l->flags = L_SHIM;
	l->helpers = 1;		/* the shim */
	l->status_fd = FD_STATUS;
	l->fd[0].num = FD_ARGS;
	l->fd[0].src = -1;
	l->fd[0].data = (unsigned char *)t.s;
	l->fd[0].len = t.n;
	l->nfd = 1;
	strv_push(&l->argv, SANDBOX_EXEC);
	strv_push(&l->argv, "-f");
	strv_pushf(&l->argv, "/dev/fd/%d", FD_ARGS);
	strv_push(&l->argv, "--");
	strv_push(&l->argv, o->self);
	strv_push(&l->argv, SHIM_ARG);
	/* sbx's own terminal: the shim leads the session and takes it. */
	if (pl->tty_fds)
		strv_push(&l->argv, "--tty");
	strv_push(&l->argv, "--");
	for (c = o->cmd; c != NULL && *c != NULL; c++)
		strv_push(&l->argv, *c);
	for (c = pl->env->v; c && *c; c++)
		strv_push(&l->envp, *c);
	return 0;
}

#ifdef __APPLE__
/*
 * The probe's profile uses every operation and filter form the real one
 * does, so a macOS that lacks one fails here, with sandbox-exec's message,
 * and not every run.
 */
#define PROBE_DIR	"/private/var/empty/sbx-probe"
static const char *
probe_profile(void)
{
	static char buf[8192];
	int	 n;

	n = snprintf(buf, sizeof(buf), "(version 1)\n(allow default)\n%s%s%s"
	    "(deny file-write*)\n%s%s"
	    "(allow file-write* (subpath \"" PROBE_DIR "\"))\n"
	    "(allow file-write* (literal \"" PROBE_DIR "/f\"))\n"
	    "(deny file-write* (regex \"^" PROBE_DIR "/\\\\.[Gg](/.*)?$\"))\n"
	    "(deny file-read* file-write* file-clone"
	    " (subpath \"" PROBE_DIR "/r\"))\n"
	    "(deny file-write-unlink (literal \"" PROBE_DIR "\")"
	    " (regex \"^" PROBE_DIR "/[Gg]$\"))\n"
	    "(deny file-write-setugid)\n"
	    "%s(allow network-outbound (remote tcp \"localhost:1\"))\n%s%s"
	    "(deny network-outbound (remote unix-socket"
	    " (subpath \"" PROBE_DIR "\")))\n"
	    "(deny network-outbound (remote unix-socket"
	    " (path-regex \"^" PROBE_DIR "/[Ss](/.*)?$\")))\n",
	    FIXED_RULES, DAEMON_RULES, SYSCTL_RULES, DEVICE_RULES, TTY_RULES,
	    NET_LOCAL_RULES, NET_UNIX_ALLOW_RULES, NET_UNIX_DENY_RULES);
	return n > 0 && (size_t)n < sizeof(buf) ? buf : NULL;
}

int
seatbelt_probe(const struct sbx_opts *o, int full, char *info,
    size_t infolen, struct sbx_err *e)
{
	const char *argv[] = { SANDBOX_EXEC, "-p", NULL, "--", "/usr/bin/true",
	    NULL };
	char line[256];
	int st;

	(void)o;
	(void)full;
	if (access(SANDBOX_EXEC, X_OK) == -1)
		return sbx_errf(e, ERR_UNAVAILABLE, "seatbelt: %s: %s",
		    SANDBOX_EXEC, strerror(errno));
	if ((argv[2] = probe_profile()) == NULL)
		return sbx_errf(e, ERR_INTERNAL, "seatbelt: probe profile too long");
	if ((st = proc_probe(argv, line, sizeof(line))) == 0) {
		snprintf(info, infolen, "%s", SANDBOX_EXEC);
		return 0;
	}
	if (line[0] != '\0')
		return sbx_errf(e, ERR_UNAVAILABLE, "seatbelt: %s", shown(line));
	return sbx_errf(e, ERR_UNAVAILABLE,
	    "seatbelt: sandbox-exec failed with status %d", st);
}
#else
int
seatbelt_probe(const struct sbx_opts *o, int full, char *info,
    size_t infolen, struct sbx_err *e)
{
	(void)o;
	(void)full;
	(void)info;
	(void)infolen;
	return sbx_errf(e, ERR_UNSUPPORTED, "seatbelt: macOS only");
}
#endif
