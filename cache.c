/*
 * cache.c: --cache TOOL, the download and build caches of package managers
 * and compilers. A cache written inside the sandbox must never be read by
 * the same tool run outside later: npm, go, cargo, maven and ccache caches
 * hold code and objects that run or link without a second look. So the
 * sandbox's caches live in a root of sbx's own, $XDG_CACHE_HOME/sbx (by
 * default ~/.cache/sbx), one folder per tool, and the tool is pointed at
 * them by its variables; the user's own caches stay read-only like the rest
 * of the home folder, and so do install and bin folders (~/.cargo/bin,
 * ~/go/bin, ~/.local/bin). Invariants: each granted folder is made when
 * missing (mode 0700) and must then be a folder of the user's own, not a
 * link (an earlier run given -w ~ could have planted one to widen a later
 * run's grant); its parent inside the root is never granted, so no run can
 * swap a granted folder for a link either. The table below is what the man
 * page documents, name by name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sbx.h"

#define MAX_DIRS	2
#define MAX_VARS	3
#define MAX_LINKS	3

/* A variable set to a prefix and folder dir of the tool (append: to the
 * value already there, space-separated, as Java's *_OPTS are). */
struct cvar {
	const char	*name;
	const char	*prefix;
	int		 dir;
	int		 append;
};

struct tool {
	const char	*name;
	const char	*dirs[MAX_DIRS];	/* below the root */
	struct cvar	 vars[MAX_VARS];
	/* A fixed setting: NAME=VALUE, or NULL. */
	const char	*set;
	/*
	 * Moved whole, the tool's home loses the user's settings: these
	 * files of the user's own home (below $home_var, else ~/home_dir)
	 * are linked into the first folder, read-only as they are.
	 */
	const char	*home_var;
	const char	*home_dir;
	const char	*links[MAX_LINKS];
};

static const struct tool tools[] = {
	{ "npm", { "npm" }, { { "npm_config_cache", "", 0, 0 } },
	    NULL, NULL, NULL, { NULL } },
	/* yarn 1 reads YARN_CACHE_FOLDER; yarn 2 and later keep their
	 * global cache in YARN_GLOBAL_FOLDER. */
	{ "yarn", { "yarn/cache", "yarn/global" },
	    { { "YARN_CACHE_FOLDER", "", 0, 0 },
	      { "YARN_GLOBAL_FOLDER", "", 1, 0 } },
	    NULL, NULL, NULL, { NULL } },
	/* pnpm hard-links store files into node_modules by default: a
	 * later run could change a workspace's files through the store. */
	{ "pnpm", { "pnpm/store", "pnpm/cache" },
	    { { "npm_config_store_dir", "", 0, 0 },
	      { "npm_config_cache_dir", "", 1, 0 } },
	    "npm_config_package_import_method=clone-or-copy",
	    NULL, NULL, { NULL } },
	{ "pip", { "pip" }, { { "PIP_CACHE_DIR", "", 0, 0 } },
	    NULL, NULL, NULL, { NULL } },
	{ "go", { "go/build", "go/mod" },
	    { { "GOCACHE", "", 0, 0 }, { "GOMODCACHE", "", 1, 0 } },
	    NULL, NULL, NULL, { NULL } },
	/* Cargo has no variable for its cache alone, only CARGO_HOME. */
	{ "cargo", { "cargo" }, { { "CARGO_HOME", "", 0, 0 } },
	    NULL, "CARGO_HOME", ".cargo", { "config.toml", "config", NULL } },
	{ "maven", { "maven/repository" },
	    { { "MAVEN_OPTS", "-Dmaven.repo.local=", 0, 1 } },
	    NULL, NULL, NULL, { NULL } },
	{ "gradle", { "gradle" }, { { "GRADLE_USER_HOME", "", 0, 0 } },
	    NULL, "GRADLE_USER_HOME", ".gradle",
	    { "gradle.properties", "init.d", NULL } },
	{ "ccache", { "ccache" }, { { "CCACHE_DIR", "", 0, 0 } },
	    NULL, NULL, NULL, { NULL } },
};
#define NTOOLS	(sizeof(tools) / sizeof(tools[0]))

static const struct tool *
tool_named(const char *name)
{
	size_t i;

	for (i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i].name, name) == 0)
			return &tools[i];
	return NULL;
}

int
cache_known(const char *name)
{
	return tool_named(name) != NULL;
}

/* For messages: "npm, yarn, ..., ccache". */
const char *
cache_list(void)
{
	static char buf[200];
	size_t i, n = 0;

	for (i = 0; i < NTOOLS && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
		    i ? ", " : "", tools[i].name);
	return buf;
}

static const char *
home(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if ((h == NULL || *h != '/') && (pw = getpwuid(getuid())) != NULL)
		h = pw->pw_dir;
	return h != NULL && *h == '/' ? h : NULL;
}

/* A folder of the user's own, reached without a link. */
static int
own_dir(const char *path, struct sbx_err *e)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid())
		return sbx_errf(e, ERR_PATH, "--cache: %s: not a folder of the "
		    "user's own (a symbolic link?); remove it", shown(path));
	return 0;
}

/*
 * mkdir -p, new folders 0700; then it must be the user's own folder, and
 * so must each folder on the way below the first keep bytes (the cache
 * root, checked when it was made): another user's folder there could
 * have its entries swapped for links.
 */
static int
make_dir(const char *path, size_t keep, struct sbx_err *e)
{
	char *p, *s;

	p = xstrdup(path);
	for (s = p + 1;; s++) {
		s = strchr(s, '/');
		if (s)
			*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST) {
			/* Say which folder was being made: the root below
			 * a home that is not there reads as a riddle. */
			if (s != NULL)
				sbx_errf(e, ERR_PATH, "--cache: making %s: %s: "
				    "%s", shown(path), shown(p),
				    strerror(errno));
			else
				sbx_errf(e, ERR_PATH, "--cache: %s: %s",
				    shown(p), strerror(errno));
			free(p);
			return -1;
		}
		if (s == NULL)
			break;
		if ((size_t)(s - p) > keep && own_dir(p, e) < 0) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	free(p);
	return own_dir(path, e);
}

/* The user's own settings, linked into the moved home when missing. */
static void
link_settings(const struct tool *t, const char *dir)
{
	const char *v = t->home_var ? getenv(t->home_var) : NULL, *h;
	char *from, *to, *own;
	struct stat st;
	size_t i;

	if (v != NULL && *v == '/')
		own = xstrdup(v);
	else if ((h = home()) != NULL && t->home_dir != NULL)
		own = path_join(h, t->home_dir);
	else
		return;
	for (i = 0; i < MAX_LINKS && t->links[i]; i++) {
		from = path_join(own, t->links[i]);
		to = path_join(dir, t->links[i]);
		if (stat(from, &st) == 0 && lstat(to, &st) < 0)
			(void)symlink(from, to);
		free(from);
		free(to);
	}
	free(own);
}

/*
 * The root ($XDG_CACHE_HOME/sbx, else ~/.cache/sbx) and each tool's
 * folders, made and resolved: *root and dirs get them.
 */
int
cache_prepare(const struct strv *names, char **root, struct strv *dirs,
    struct sbx_err *e)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h;
	const struct tool *t;
	char *r, *d, real[PATH_MAX];
	size_t i, j;

	if (x != NULL && *x == '/')
		r = path_join(x, "sbx");
	else if ((h = home()) != NULL)
		r = xasprintf("%s/.cache/sbx", strcmp(h, "/") ? h : "");
	else
		return sbx_errf(e, ERR_PATH, "--cache: no home folder "
		    "(HOME is not set)");
	if (make_dir(r, strlen(r), e) < 0 || realpath(r, real) == NULL) {
		if (e->kind == ERR_NONE)
			sbx_errf(e, ERR_PATH, "--cache: %s: %s", shown(r),
			    strerror(errno));
		free(r);
		return -1;
	}
	free(r);
	*root = xstrdup(real);
	for (i = 0; i < names->n; i++) {
		t = tool_named(names->v[i]);
		for (j = 0; j < MAX_DIRS && t->dirs[j]; j++) {
			d = path_join(*root, t->dirs[j]);
			if (make_dir(d, strlen(*root), e) < 0) {
				free(d);
				return -1;
			}
			strv_push(dirs, d);
			if (j == 0)
				link_settings(t, d);
			free(d);
		}
	}
	return 0;
}

/* NAME=VALUE for NAME, or added to its value; not over a -e NAME. */
static void
put(struct strv *env, const char *name, const char *value, int append)
{
	if (env_get(env, name) != NULL && !append)
		return;
	env_add(env, name, value);
}

/* Each tool's variables, pointing at its folders below root. */
void
cache_env(const struct strv *names, const char *root, struct strv *env)
{
	const struct tool *t;
	const struct cvar *v;
	char *val, *name;
	size_t i, j, eq;

	for (i = 0; root && i < names->n; i++) {
		t = tool_named(names->v[i]);
		for (j = 0; j < MAX_VARS && t->vars[j].name; j++) {
			v = &t->vars[j];
			val = xasprintf("%s%s/%s", v->prefix, root,
			    t->dirs[v->dir]);
			put(env, v->name, val, v->append);
			free(val);
		}
		if (t->set != NULL) {
			eq = strcspn(t->set, "=");
			name = xasprintf("%.*s", (int)eq, t->set);
			put(env, name, t->set + eq + 1, 0);
			free(name);
		}
	}
}
