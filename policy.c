/*
 * policy.c: compiles the file-system options into the ordered rule list that
 * every backend enforces. Order: WRITE root (unless --scope), WRITE each
 * --write, with --scope READONLY root then WRITE each scope path; WRITE
 * each --cache folder; then READONLY for the protected list and each
 * --deny-write, and DENY_READ for each --deny-read; a later rule overrides
 * the earlier ones below its path. A --deny path that does not exist is a
 * rule on its first missing component (type PATH_MISSING). Each run puts
 * its private temp folder's rules in front (policy_with_tmp()).
 * The rules are neutral: how a backend keeps a read-only path below a
 * writable folder from being renamed away is the backend's own business.
 * Invariants: every rule path is absolute and resolved (no symlink in it),
 * except placeholders, missing --deny paths and the missing names, whose
 * parent is resolved; the protected list never fails the run but for a
 * git config that cannot be read whole (what it names is unknown): a
 * protected path that cannot be used is skipped. A protected name is
 * held whether or not it exists: one that does not exist is either a
 * rule with a placeholder (an empty folder or file that bwrap mounts
 * read-only, a name the others refuse to make) or goes to the policy's
 * missing list, held by name (Seatbelt, the Landlock supervisor; bwrap
 * seals the folder when it lies in the home, see policy->home). No I/O
 * besides stat, readdir, realpath, readlink, reading a git folder's
 * pointer files and git configs (gitcfg.c parses them), and the O_PATH
 * descriptors that note the held paths' inodes (note_held()).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pwd.h>
#include "sbx.h"

#define GIT_DEPTH	4	/* commondir and gitdir pointers followed */
#define LINK_DEPTH	8	/* dangling links followed to a name */
#define NESTED_MAX	512	/* folders looked at for repositories below a
				   writable folder outside any repository */
#define WORKTREES_MAX	32	/* linked worktrees read in a git folder */
#define INCLUDE_DEPTH	10	/* git's bound on nested config includes */
#define CONFIG_MAX	(1024 * 1024)	/* the largest git config read; a
				   larger one fails the run */

/* What bwrap's --dev binds in, and what Landlock lets the command open. */
const char *const sbx_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", NULL
};

/*
 * What git reads as configuration or runs as code in a git folder: held
 * in every git folder that a writable path contains or is, as an empty
 * read-only placeholder when missing. commondir redirects config and
 * hooks to another folder: its placeholder names the git folder itself
 * ("."), which git reads as no redirection. modules/ holds the git
 * folders of submodules, and one made there is used as it is by the next
 * "git submodule update --init" outside: read-only whole. worktrees/
 * holds those of linked worktrees, whose index, HEAD and logs a commit
 * there writes: a missing one is a placeholder, an existing one keeps
 * each worktree's pointers and config read-only (worktree_names). A .git
 * made in a git folder comes first for git: in a bare repository it is
 * the repository the next push or fetch outside runs hooks from (git's
 * enter_repo() tries "path/.git" before "path"); held as an empty folder,
 * which git passes over.
 */
static const struct {
	const char	*name;
	enum path_type	 create;
} git_names[] = {
	{ "hooks", PATH_DIR }, { "config", PATH_FILE },
	{ "config.worktree", PATH_FILE }, { "commondir", PATH_OTHER },
	{ "modules", PATH_DIR }, { ".git", PATH_DIR }, { NULL, 0 }
};

/* In worktrees/NAME: where its common folder and its checkout are. */
static const struct {
	const char	*name;
	enum path_type	 create;
} worktree_names[] = {
	{ "commondir", PATH_MISSING }, { "gitdir", PATH_MISSING },
	{ "config.worktree", PATH_FILE }, { NULL, 0 }
};

/*
 * Editor, agent and tool configuration in every writable folder, whether
 * or not it exists. A missing one, file or folder, is held by an empty
 * read-only folder: git shows no empty folder to "git status" or adds it
 * with "git add -A", where an empty file would be a new file to it.
 */
static const char *const workspace_names[] = {
	".gitmodules", ".envrc", ".mcp.json", "opencode.json", ".vscode",
	".idea", ".zed", ".claude", ".cursor", ".gemini", ".codex", ".kiro",
	".amazonq", ".roo", ".continue", ".husky", ".devcontainer", NULL
};

/*
 * What a home holds that runs code, or says where code comes from, in
 * programs started later outside the sandbox: held wherever it is
 * writable, whether or not it exists, by name. Shells (and what their
 * start-up files source on common systems), the login and desktop
 * session, user services and D-Bus activation, git, ssh and gpg, the
 * folders on PATH, editors and agents, and package tools whose
 * configuration names programs to run. On macOS launchd starts what
 * ~/Library/LaunchAgents holds at the next login, and a preference file
 * can name a program to run (a terminal's start-up command).
 */
static const char *const home_files[] = {
	".profile", ".bash_profile", ".bash_login", ".bashrc", ".bash_logout",
	".bash_aliases", ".bashrc.d", ".zshrc", ".zshenv", ".zprofile",
	".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc",
	".login", ".logout", ".inputrc", ".config/fish", ".bash_completion",
	".bash_completion.d", ".tmux.conf", ".config/tmux",
	".pam_environment", ".xprofile", ".xsession", ".xsessionrc",
	".xinitrc", ".config/environment.d", ".config/autostart",
	".config/systemd", ".local/share/systemd", ".local/share/dbus-1",
	".config/plasma-workspace", ".config/user-dirs.dirs",
	".local/share/applications", ".config/dconf", ".config/i3",
	".config/sway", ".config/hypr", ".config/kitty", ".config/alacritty",
	".config/starship.toml",
	".gitconfig", ".config/git", ".ssh", ".gnupg", ".config/gh",
	".local/bin", "bin", "go/bin", ".pyenv", ".rustup", ".nvm", ".volta",
	".bun", ".deno", ".npm-global", ".local/share/pnpm", ".sdkman",
	".asdf", ".local/share/mise", ".config/mise", ".node_modules",
	".node_libraries", ".local/lib", ".ipython", ".jupyter", ".gdbinit",
	".config/gdb",
	".vimrc", ".gvimrc", ".exrc", ".vim", ".config/nvim",
	".local/share/nvim", ".emacs",
	".emacs.el", ".emacs.d", ".config/emacs", ".vscode", ".config/Code",
	".cursor", ".config/Cursor", ".claude", ".claude.json", ".codex",
	".gemini", ".config/zed", ".config/opencode", ".kiro", ".continue",
	".npmrc", ".yarnrc", ".yarnrc.yml", ".cargo/config",
	".cargo/config.toml", ".cargo/bin", ".gradle/init.d",
	".gradle/gradle.properties", ".m2/settings.xml", ".docker", ".kube",
	".aws", ".config/direnv", ".Rprofile", ".psqlrc", ".config/go",
	".config/pip", ".pip", ".cache/pip", ".config/pnpm", ".bunfig.toml",
	".cargo/env", ".rbenv", ".rvm", ".nodenv", ".goenv", ".jenv",
	".ghcup", ".cabal/bin", ".elan", ".juliaup", ".opam", ".fnm",
	".local/share/fnm", ".local/share/uv", ".local/share/pipx",
	".local/share/gem", ".gem", ".bundle/config", ".gemrc", ".irbrc",
	".pythonrc", ".pythonrc.py", ".lesskey", ".config/lesskey",
	".curlrc", ".config/.curlrc", ".wgetrc", ".config/wgetrc", ".netrc",
	".mailcap", ".config/mimeapps.list", ".local/share/mime",
	".lldbinit", ".ghci", ".guile", ".sbclrc", ".sqliterc", ".octaverc",
	".Renviron", ".R", ".perldb", ".direnvrc", ".screenrc", ".editrc",
	".nanorc", ".config/nano", ".config/helix", ".config/micro",
	".config/nushell", ".xonshrc", ".config/xonsh", ".config/powershell",
	".config/elvish", ".dir_colors", ".config/procps", ".config/htop",
	".config/containers", ".condarc", ".terraformrc", ".vscode-server",
	".cursor-server", ".config/JetBrains", ".local/share/JetBrains",
	"Library/LaunchAgents", "Library/Preferences", NULL
};

/*
 * Paths already walked (git folders, configs), each with the smallest
 * depth it was walked at: found again at that depth or deeper, a walk
 * would find nothing new, so a cycle, or a fan of submodules or
 * includes that all name one path, costs one walk per depth, not one per
 * way there.
 */
struct seen {
	char	**path;
	int	 *depth;
	size_t	  n;
	size_t	  cap;
};

/* A remote's URL, and the repository whose config named it. */
struct remote {
	char	*url;
	char	*top;		/* NULL: read for no repository */
	int	 depth;
};

/*
 * A rule list under construction, and the protected names that do not
 * exist in a folder that does (policy->missing).
 */
struct plist {
	struct rule	*r;
	size_t		 n;
	size_t		 cap;
	struct strv	 missing;
	struct seen	 gitdirs;	/* the git folders walked */
	struct seen	 configs;	/* the git configs read */
	const char	*home;		/* resolved, or NULL */
	int		 sweep;		/* earlier placeholders are removed */
	struct strv	 marked;	/* folders that held an earlier
					   version's mark (sweep_stale()) */
	char		*memo_dir;	/* real_dir()'s last folder */
	char		*memo_real;	/* and its real path, or NULL */
	struct strv	 globals;	/* the user's and system's git configs */
	char		*config_err;	/* a config that could not be read
					   whole: the run fails */
	struct strv	 rewrites;	/* url.BASE.insteadOf: prefix, BASE,
					   in pairs */
	struct remote	*remotes;	/* the remotes' URLs seen, rewritten
					   once every config is read */
	size_t		 nremotes;
	struct strv	 plain;		/* folders protect_in() found to be
					   no link: ~/.config, once */
	const char	*list_under;	/* protect_in() reads the folders
					   below this one whole (the home) */
	struct listing	*lists;		/* the folders it read */
	size_t		 nlists;
};

/*
 * A folder's entries as one readdir(3) found them, sorted, with their
 * types: the home's ~190 candidates are looked up here instead of by
 * ~190 lstat(2) calls, most of them of missing names. A folder that
 * cannot be read whole (unreadable, more than LIST_MAX entries, a type
 * readdir does not give) is not listed (ok 0): its names are looked at
 * one by one, as before.
 */
#define LIST_MAX	4096
#define FS_GETFLAGS_	0x80086601UL	/* FS_IOC_GETFLAGS */
#define FS_CASEFOLD_	0x40000000	/* FS_CASEFOLD_FL */
struct listing {
	char		*dir;
	int		 ok;
	struct strv	 ents;		/* each its DT_ type, then its name */
};

/* The folder that holds path, absolute ("/" for "/x"): a new string. */
static char *
parent_dir(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');

	if (slash != NULL)
		slash[slash == dir] = '\0';
	return dir;
}

static enum path_type
type_of(const char *path)
{
	struct stat st;

	if (stat(path, &st) == -1)
		return PATH_MISSING;
	if (S_ISDIR(st.st_mode))
		return PATH_DIR;
	if (S_ISREG(st.st_mode))
		return PATH_FILE;
	return PATH_OTHER;
}

/*
 * The first line of a small file, without its newline; -1 when it cannot
 * be read. Git's pointer files (commondir, a .git file) are one line.
 */
static int
read_line(const char *path, char *buf, size_t size)
{
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return 0;
}

/* The folder d holds nothing but "." and ".."; d is closed. */
static int
dir_empty(DIR *d)
{
	struct dirent *de;
	int n = 0;

	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n == 0;
}

/*
 * What a placeholder of this kind holds: an empty folder, an empty file,
 * or (PATH_OTHER) a file that reads "." (git's commondir naming its own
 * folder). Such a one may be another sbx run's placeholder.
 */
static int
is_placeholder(const char *path, enum path_type create)
{
	struct stat st;
	char buf[4];
	DIR *d;

	if (stat(path, &st) == -1)
		return 0;
	if (create == PATH_OTHER)
		return S_ISREG(st.st_mode) && st.st_size == 2 &&
		    read_line(path, buf, sizeof(buf)) == 0 &&
		    strcmp(buf, ".") == 0;
	if (S_ISREG(st.st_mode))
		return st.st_size == 0;
	if (!S_ISDIR(st.st_mode) || (d = opendir(path)) == NULL)
		return 0;
	return dir_empty(d);
}

/* 1 when path was walked at depth or less; else noted at depth, 0. */
static int
seen_before(struct seen *s, const char *path, int depth)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->path[i], path) == 0) {
			if (s->depth[i] <= depth)
				return 1;
			s->depth[i] = depth;
			return 0;
		}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->path = xrealloc(s->path, s->cap * sizeof(*s->path));
		s->depth = xrealloc(s->depth, s->cap * sizeof(*s->depth));
	}
	s->path[s->n] = xstrdup(path);
	s->depth[s->n++] = depth;
	return 0;
}

static void
seen_free(struct seen *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->path[i]);
	free(s->path);
	free(s->depth);
	memset(s, 0, sizeof(*s));
}

static int
plist_has(const struct plist *l, const char *path)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->r[i].path, path) == 0)
			return 1;
	return 0;
}

static void
plist_add(struct plist *l, enum rule_kind kind, const char *path,
    enum path_type type, int implicit, enum path_type create)
{
	struct rule *r;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->r = xrealloc(l->r, l->cap * sizeof(*l->r));
	}
	r = &l->r[l->n++];
	r->kind = kind;
	r->path = xstrdup(path);
	r->type = type;
	r->implicit = implicit;
	r->create = create;
	r->fresh = 0;
}

static void
plist_free(struct plist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->r[i].path);
	free(l->r);
	l->r = NULL;
	l->n = l->cap = 0;
	strv_free(&l->missing);
	seen_free(&l->gitdirs);
	seen_free(&l->configs);
	strv_free(&l->globals);
	free(l->config_err);
	l->config_err = NULL;
	free(l->memo_dir);
	free(l->memo_real);
	l->memo_dir = l->memo_real = NULL;
	strv_free(&l->rewrites);
	strv_free(&l->plain);
	strv_free(&l->marked);
	for (i = 0; i < l->nlists; i++) {
		strv_free(&l->lists[i].ents);
		free(l->lists[i].dir);
	}
	free(l->lists);
	l->lists = NULL;
	l->nlists = 0;
	while (l->nremotes > 0) {
		l->nremotes--;
		free(l->remotes[l->nremotes].url);
		free(l->remotes[l->nremotes].top);
	}
	free(l->remotes);
	l->remotes = NULL;
}

/* The deepest writable folder that holds path, or NULL. */
static const char *
writable_holder(const struct strv *w, const char *path)
{
	const char *best = NULL;
	size_t i;

	for (i = 0; i < w->n; i++)
		if (path_under(path, w->v[i]) &&
		    (best == NULL || strlen(w->v[i]) > strlen(best)))
			best = w->v[i];
	return best;
}

static int
under_any(const struct strv *v, const char *path)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (path_under(path, v->v[i]))
			return 1;
	return 0;
}

/* v without the paths at or below one of d. */
static void
drop_under(struct strv *v, const struct strv *d)
{
	size_t i, n = 0;

	for (i = 0; i < v->n; i++) {
		if (under_any(d, v->v[i]))
			free(v->v[i]);
		else
			v->v[n++] = v->v[i];
	}
	v->n = n;
	if (v->v != NULL)
		v->v[n] = NULL;
}

static int
strv_has(const struct strv *v, const char *path)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->v[i], path) == 0)
			return 1;
	return 0;
}

static void
push_unique(struct strv *v, const char *path)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->v[i], path) == 0)
			return;
	strv_push(v, path);
}

/*
 * The folders that end up writable: the root unless --scope; each --write,
 * except, with --scope, one inside the root but outside every scope path
 * (scope applies after --write); each scope path.
 */
static void
compute_writable(const struct sbx_opts *o, struct strv *w)
{
	size_t i;

	if (o->scope.n == 0)
		push_unique(w, o->root);
	for (i = 0; i < o->write.n; i++) {
		if (o->scope.n > 0 && path_under(o->write.v[i], o->root) &&
		    !under_any(&o->scope, o->write.v[i]))
			continue;
		push_unique(w, o->write.v[i]);
	}
	for (i = 0; i < o->scope.n; i++)
		push_unique(w, o->scope.v[i]);
	for (i = 0; i < o->cache_dirs.n; i++)
		push_unique(w, o->cache_dirs.v[i]);
}

/*
 * path lies below a folder already held read-only (a submodule's git
 * folder in a held modules/): nothing there to hold again, and no
 * placeholder could be made in it.
 */
static int
held_above(const struct plist *l, const char *path)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->r[i].kind == RULE_READONLY &&
		    strcmp(l->r[i].path, path) != 0 &&
		    path_under(path, l->r[i].path))
			return 1;
	return 0;
}

/*
 * The names an earlier version held as empty folders although they name
 * files: no one else makes a folder .envrc or .mcp.json, so one that is
 * empty is that version's mark.
 */
static const char *const stale_marks[] = {
	".envrc", ".gitmodules", ".mcp.json", "opencode.json", NULL
};

static int
is_mark(const char *name)
{
	size_t i;

	for (i = 0; stale_marks[i]; i++)
		if (strcmp(name, stale_marks[i]) == 0)
			return 1;
	return 0;
}

/* name in dfd is an empty folder. */
static int
empty_dir_at(int dfd, const char *name)
{
	int fd;
	DIR *d;

	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return 0;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	return dir_empty(d);
}

/* The folder dfd holds a mark, as an empty folder: an earlier run's. */
static int
marked(int dfd)
{
	size_t i;

	for (i = 0; stale_marks[i]; i++)
		if (empty_dir_at(dfd, stale_marks[i]))
			return 1;
	return 0;
}

/*
 * An earlier version's placeholder at path (an empty folder or file that
 * it made for a missing name, left behind when that run was killed),
 * removed when no live run of that version still holds it: those runs
 * keep a shared lock on the placeholder's folder while they live. Never
 * hooks or config, which a repository keeps empty on its own. An empty
 * folder a user may keep on purpose (.vscode, .idea, .claude, ...) only
 * in a folder that holds that version's mark as well (stale_marks, seen
 * in l->marked): a user's own empty .vscode stays. 1 when it is gone.
 */
static int
sweep_stale(struct plist *l, const char *path, enum path_type create)
{
	const char *name = strrchr(path, '/') + 1;
	struct stat st;
	char *dir;
	int dfd, fd, gone = 0, git;

	if (strcmp(name, "hooks") == 0 || strcmp(name, "config") == 0 ||
	    !is_placeholder(path, create))
		return 0;
	dir = parent_dir(path);
	git = strcmp(strrchr(dir, '/') ? strrchr(dir, '/') : dir, "/.git") ==
	    0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		free(dir);
		return 0;
	}
	if (create == PATH_DIR && !git && !is_mark(name) &&
	    !strv_has(&l->marked, dir) && !marked(dfd)) {
		free(dir);
		close(dfd);
		return 0;
	}
	if (create == PATH_DIR && !git && is_mark(name) &&
	    !strv_has(&l->marked, dir))
		strv_push(&l->marked, dir);
	free(dir);
	if (flock(dfd, LOCK_EX | LOCK_NB) == 0) {
		/* rmdir(2) removes only an empty folder: nothing the user
		 * put there since is lost. A file is read again, unlinked
		 * only as the placeholder it was. */
		if (create == PATH_DIR)
			gone = unlinkat(dfd, name, AT_REMOVEDIR) == 0;
		else if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC | O_NONBLOCK)) >= 0) {
			if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
			    st.st_nlink == 1 && is_placeholder(path, create))
				gone = unlinkat(dfd, name, 0) == 0;
			close(fd);
		}
		(void)flock(dfd, LOCK_UN);
	}
	close(dfd);
	return gone;
}

/* Hold real, a resolved path that exists, when a writable folder has it. */
static void
hold(struct plist *l, const struct strv *w, const char *real,
    enum path_type create, int by_name)
{
	if (!writable_holder(w, real) || plist_has(l, real) ||
	    held_above(l, real))
		return;
	/* A placeholder of an earlier version's, swept: a missing name.
	 * Only at its own name: never what a link there points to. */
	if (create != PATH_MISSING && by_name && l->sweep &&
	    sweep_stale(l, real, create)) {
		push_unique(&l->missing, real);
		return;
	}
	plist_add(l, RULE_READONLY, real, type_of(real), 1, PATH_MISSING);
}

/*
 * A missing path, its existing part resolved: a name that every backend
 * holds without a file (see policy->missing): nothing is made on the
 * host for it.
 */
static void
hold_missing(struct plist *l, const struct strv *w, const char *path)
{
	if (!writable_holder(w, path) || plist_has(l, path) ||
	    held_above(l, path))
		return;
	push_unique(&l->missing, path);
}

/* The longest part of path that exists (lstat), a new string. */
static char *
existing_part(const char *path)
{
	char *dir = xstrdup(path), *s;
	struct stat st;

	while (lstat(dir, &st) < 0 && (s = strrchr(dir, '/')) != NULL)
		*(s == dir ? s + 1 : s) = '\0';
	return dir;
}

/*
 * The symbolic links on the way to path that lie in a writable folder
 * (.git/hooks pointing to a shared hooks folder, ~/.bashrc or ~/.config
 * linked by stow): held by name, as missing names are, so that the
 * command can neither remove one nor point it elsewhere (the Landlock
 * supervisor and Seatbelt refuse it; bwrap seals it in the home only).
 */
static void
hold_links(struct plist *l, const struct strv *w, const char *path)
{
	char cur[PATH_MAX], real[PATH_MAX];
	const char *s = path, *e;
	struct stat st;
	size_t n;

	cur[0] = '\0';
	while (*s == '/') {
		e = strchr(s + 1, '/');
		n = e != NULL ? (size_t)(e - s) : strlen(s);
		if (strlen(cur) + n >= sizeof(cur))
			return;
		strncat(cur, s, n);
		if (lstat(cur, &st) < 0)
			return;
		if (S_ISLNK(st.st_mode)) {
			if (writable_holder(w, cur) && !held_above(l, cur))
				push_unique(&l->missing, cur);
			if (realpath(cur, real) == NULL)
				return;
			snprintf(cur, sizeof(cur), "%s", strcmp(real, "/") ?
			    real : "");
		}
		if (e == NULL)
			return;
		s = e;
	}
}

/*
 * dir resolved, a folder, into real (PATH_MAX): the last answer kept, as
 * the home's candidates share their folders (~/.config, ~/.local/share).
 * 0, or -1 when it is no folder.
 */
static int
real_dir(struct plist *l, const char *dir, char *real)
{
	if (l->memo_dir == NULL || strcmp(l->memo_dir, dir) != 0) {
		free(l->memo_dir);
		free(l->memo_real);
		l->memo_dir = xstrdup(dir);
		l->memo_real = realpath(dir, real) != NULL &&
		    type_of(real) == PATH_DIR ? xstrdup(real) : NULL;
	}
	if (l->memo_real == NULL)
		return -1;
	strcpy(real, l->memo_real);
	return 0;
}

/*
 * Protect one candidate: at its real target when that lies in a writable
 * folder (elsewhere it is read-only already). A missing one goes to
 * hold_missing(), its existing part resolved, a placeholder only where
 * its folder exists; through a symbolic link to nowhere, at the name the
 * link points to: the command could make it.
 */
static void
protect(struct plist *l, const struct strv *w, const char *path,
    enum path_type create, int depth)
{
	char real[PATH_MAX], link[PATH_MAX], *dir, *up, *p;
	const char *rest;
	struct stat st;
	ssize_t n;

	/* Most names are missing: realpath(3) of one reads every part's
	 * link in vain; lstat(2) says so first. */
	if (lstat(path, &st) == 0 && realpath(path, real) != NULL) {
		if (strcmp(real, path) != 0)
			hold_links(l, w, path);
		hold(l, w, real, create, 0);
		return;
	}
	if (errno != ENOENT)
		return;
	dir = existing_part(path);
	rest = path + strlen(dir) - (strcmp(dir, "/") == 0);
	p = NULL;
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		hold_links(l, w, path);
		if (depth < LINK_DEPTH &&
		    (n = readlink(dir, link, sizeof(link) - 1)) > 0) {
			link[n] = '\0';
			up = xstrdup(dir);
			*strrchr(up, '/') = '\0';
			p = xasprintf("%s%s%s", link[0] == '/' ? "" : up,
			    link[0] == '/' ? "" : "/", link);
			free(up);
			up = xasprintf("%s%s", p, rest);
			protect(l, w, up, create, depth + 1);
			free(up);
		}
	} else if (real_dir(l, dir, real) == 0) {
		p = xasprintf("%s%s", strcmp(real, "/") ? real : "", rest);
		/* A placeholder needs its folder; deeper, only the name. */
		hold_missing(l, w, p);
	}
	free(p);
	free(dir);
}

static int
ent_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

/* dir's listing, read now or before. */
static const struct listing *
listing_of(struct plist *l, const char *dir)
{
	struct listing *li;
	struct dirent *de;
	char buf[NAME_MAX + 2];
	size_t i;
	DIR *d;

	for (i = 0; i < l->nlists; i++)
		if (strcmp(l->lists[i].dir, dir) == 0)
			return &l->lists[i];
	l->lists = xrealloc(l->lists, (l->nlists + 1) * sizeof(*l->lists));
	li = &l->lists[l->nlists++];
	memset(li, 0, sizeof(*li));
	li->dir = xstrdup(dir);
	if ((d = opendir(dir)) == NULL)
		return li;
#ifdef __linux__
	/* A case-insensitive folder (casefold) finds .BASHRC by .bashrc;
	 * a listing compares names exactly: looked up one by one. */
	{
		long flags = 0;	/* an int, or a word: room for both */

		if (ioctl(dirfd(d), FS_GETFLAGS_, &flags) == 0 &&
		    (flags & FS_CASEFOLD_)) {
			closedir(d);
			return li;
		}
	}
#endif
	li->ok = 1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type == DT_UNKNOWN || li->ents.n >= LIST_MAX) {
			li->ok = 0;
			break;
		}
		buf[0] = (char)de->d_type;
		snprintf(buf + 1, sizeof(buf) - 1, "%s", de->d_name);
		strv_push(&li->ents, buf);
	}
	closedir(d);
	if (li->ok && li->ents.n > 1)
		qsort(li->ents.v, li->ents.n, sizeof(char *), ent_cmp);
	return li;
}

/*
 * lstat(2) of path, for what protect_in() asks of it (whether it exists,
 * is a link, a folder): from its folder's listing below list_under, else
 * of the path itself. Only st_mode's type is set from a listing.
 */
static int
probe(struct plist *l, char *path, struct stat *st)
{
	const struct listing *li;
	char *slash = strrchr(path, '/'), key[NAME_MAX + 2], *k = key, **hit;

	if (l->list_under == NULL || slash == NULL || slash == path ||
	    strlen(slash + 1) > NAME_MAX)
		return lstat(path, st);
	*slash = '\0';
	li = path_under(path, l->list_under) ? listing_of(l, path) : NULL;
	*slash = '/';
	if (li == NULL || !li->ok)
		return lstat(path, st);
	key[0] = 0;
	strcpy(key + 1, slash + 1);
	hit = li->ents.n > 0 ? bsearch(&k, li->ents.v, li->ents.n,
	    sizeof(char *), ent_cmp) : NULL;
	if (hit == NULL) {
		errno = ENOENT;
		return -1;
	}
	memset(st, 0, sizeof(*st));
	st->st_mode = DTTOIF((unsigned char)(*hit)[0]);
	return 0;
}

/*
 * Protect dir/name, dir resolved. Most candidates are missing or have no
 * symlink on the way, and then dir/name is its own real path: an
 * lstat(2) of each component of name, up to the first missing one,
 * instead of realpath(3), which reads the link of every component from
 * / (70 of the 179 names of the home have a folder: .config/fish). What
 * protect() decides for such a path is decided here the same way; a
 * link anywhere goes to protect().
 */
static void
protect_in(struct plist *l, const struct strv *w, const char *dir,
    const char *name, enum path_type create)
{
	struct stat st;
	char *p, *s, *slash;

	p = path_join(dir, name);
	for (s = p + strlen(p) - strlen(name); ; s = slash + 1) {
		if ((slash = strchr(s, '/')) != NULL)
			*slash = '\0';
		if (slash != NULL && strv_has(&l->plain, p)) {
			*slash = '/';
			continue;
		}
		if (probe(l, p, &st) < 0) {
			/* Missing, in a folder that exists: held by name. */
			if (slash != NULL)
				*slash = '/';
			if (errno == ENOENT)
				hold_missing(l, w, p);
			break;
		}
		if (slash != NULL)
			*slash = '/';
		if (S_ISLNK(st.st_mode)) {
			protect(l, w, p, create, 0);
			break;
		}
		if (slash == NULL) {
			hold(l, w, p, create, 1);
			break;
		}
		/* A file on the way: nothing can be made below it. */
		if (!S_ISDIR(st.st_mode))
			break;
		*slash = '\0';
		strv_push(&l->plain, p);
		*slash = '/';
	}
	free(p);
}

static void protect_gitdir_at(struct plist *, const struct strv *,
    const char *, int);

/*
 * A pointer file of git's: its first line, after prefix, resolved
 * against the folder base when relative. NULL when there is none.
 */
static char *
git_pointer(const char *file, const char *prefix, const char *base)
{
	char buf[PATH_MAX], *v;
	size_t n = strlen(prefix);

	if (read_line(file, buf, sizeof(buf)) < 0 || strncmp(buf, prefix, n))
		return NULL;
	v = buf + n;
	if (*v == '\0')
		return NULL;
	return *v == '/' ? xstrdup(v) : path_join(base, v);
}

static char *git_top(const char *);
static void protect_config(struct plist *, const struct strv *, const char *,
    const char *, int);
static void protect_top_configs(struct plist *, const struct strv *,
    const char *, const char *, const char *, int);
static void protect_worktree_configs(struct plist *, const struct strv *,
    const char *, int);

/*
 * A linked worktree, its folder sub in g/worktrees: hooks and programs
 * run from its own top there, so the shared config, its own
 * config.worktree and the others are read again from that top (a
 * relative core.hooksPath, husky's .husky/_, is a folder in each
 * worktree). Its .git file, which names sub, is held.
 */
static void
protect_linked(struct plist *l, const struct strv *w, const char *g,
    const char *sub, int depth)
{
	char *top, *p;

	top = git_top(sub);
	if (strcmp(top, sub) != 0) {
		p = path_join(top, ".git");
		if (type_of(p) == PATH_FILE)
			protect(l, w, p, PATH_MISSING, 0);
		free(p);
		protect_top_configs(l, w, g, sub, top, depth);
	}
	free(top);
}

/*
 * g/worktrees: a placeholder when missing; else each worktree's names.
 * A worktree made there during the run is a git folder the command made
 * (see the man page's CAVEATS): it serves only a checkout that points to
 * it.
 */
static void
protect_worktrees(struct plist *l, const struct strv *w, const char *g,
    int depth)
{
	struct dirent *de;
	char *wt, *sub;
	size_t i, n = 0;
	DIR *d;

	wt = path_join(g, "worktrees");
	if ((d = opendir(wt)) == NULL) {
		if (errno == ENOENT)
			protect_in(l, w, g, "worktrees", PATH_DIR);
		free(wt);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		/* More than a person keeps: the command may have made them
		 * to slow or break the next run. The whole folder is held
		 * (no worktree can be added in the run), the rest unread. */
		if (++n > WORKTREES_MAX) {
			protect(l, w, wt, PATH_DIR, 0);
			break;
		}
		sub = path_join(wt, de->d_name);
		if (type_of(sub) == PATH_DIR) {
			for (i = 0; worktree_names[i].name; i++)
				protect_in(l, w, sub, worktree_names[i].name,
				    worktree_names[i].create);
			protect_linked(l, w, g, sub, depth);
		}
		free(sub);
	}
	closedir(d);
	free(wt);
}

/* Keys whose value is a program to run: a shell command (config_program). */
static const char *const git_program_keys[] = {
	"core.fsmonitor", "core.editor", "core.pager", "core.sshcommand",
	"core.askpass", "core.gitproxy", "sequence.editor", "gpg.program",
	"gpg.*.program", "credential.helper", "credential.*.helper",
	"diff.external", "diff.*.textconv", "diff.*.command",
	"filter.*.clean", "filter.*.smudge", "filter.*.process",
	"merge.*.driver", "pager.*", "alias.*", "submodule.*.update",
	"remote.*.uploadpack", "remote.*.receivepack",
	"uploadpack.packobjectshook", "core.alternaterefscommand",
	"difftool.*.cmd", "difftool.*.path", "mergetool.*.cmd",
	"mergetool.*.path", "interactive.difffilter", "tar.*.command",
	"sendemail.smtpserver", "sendemail.tocmd", "sendemail.cccmd",
	"sendemail.headercmd", "sendemail.*.smtpserver", "sendemail.*.tocmd",
	"sendemail.*.cccmd", "sendemail.*.headercmd", "trailer.*.command",
	"trailer.*.cmd", "gpg.ssh.defaultkeycommand", "web.browser",
	"browser.*.cmd", "browser.*.path", "man.*.cmd", "man.*.path",
	"guitool.*.cmd", "imap.tunnel", "sendemail.sendmailcmd",
	"sendemail.*.sendmailcmd", "instaweb.httpd", "instaweb.modulepath",
	"lfs.customtransfer.*.path", "lfs.extension.*.clean",
	"lfs.extension.*.smudge", "hook.*.command", NULL
};

/*
 * key matches pattern, where "*" stands for a subsection, or at the end
 * for the rest of the key (an alias's name may hold a dot).
 */
static int
key_is(const char *key, const char *pat)
{
	const char *star = strchr(pat, '*'), *dot;

	if (star == NULL)
		return strcmp(key, pat) == 0;
	if (strncmp(key, pat, (size_t)(star - pat)) != 0)
		return 0;
	key += star - pat;
	if (star[1] == '\0')
		return *key != '\0';
	return (dot = strrchr(key, '.')) != NULL && dot != key &&
	    strcmp(dot, star + 1) == 0;
}

/*
 * A key that a config written during the run may not hold (the
 * supervisor judges a new git folder's config by these, policy_git_key()):
 * one that names a program, a hooks or template folder, another config,
 * a work tree, a transport helper, or lets a protocol run one.
 */
static int
key_held(const char *key, const char *val)
{
	static const char *const held[] = {
		"include.path", "includeif.*.path", "core.hookspath",
		"init.templatedir", "core.worktree", "remote.*.vcs",
		"url.*.insteadof", "url.*.pushinsteadof", "protocol.*",
		NULL
	};
	size_t i;

	for (i = 0; held[i]; i++)
		if (key_is(key, held[i]))
			return 1;
	for (i = 0; git_program_keys[i]; i++)
		if (key_is(key, git_program_keys[i]))
			return 1;
	/* "helper::address" and "ext::command" run git-remote-helper. */
	return val != NULL && (key_is(key, "remote.*.url") ||
	    key_is(key, "remote.*.pushurl")) && strstr(val, "::") != NULL;
}

struct key_judge {
	char	*why;
	size_t	 size;
};

static void
judge_key(void *arg, const char *key, const char *val)
{
	struct key_judge *j = arg;

	if (j->why[0] == '\0' && key_held(key, val))
		snprintf(j->why, j->size, "%s", key);
}

/* 1 when a git config's text holds no such key; else 0, the key in why. */
int
policy_git_config_ok(const char *text, size_t len, char *why, size_t size)
{
	struct key_judge j;

	j.why = why;
	j.size = size;
	why[0] = '\0';
	gitcfg_parse(text, len, judge_key, &j);
	return why[0] == '\0';
}

static char *first_missing(const char *);
static int protect_dotgit(struct plist *, const struct strv *, const char *,
    int);
static void protect_gitdir_at(struct plist *, const struct strv *,
    const char *, int);
static int is_gitdir(const char *);

/*
 * A submodule's folder: top and the path .gitmodules gives, spelled as
 * git spells it ("./lib//sub/" is lib/sub). NULL for a path git refuses
 * (absolute, or with a ".." part).
 */
static char *
submodule_dir(const char *top, const char *val)
{
	char *copy, *part, *save, *rel, *dir;
	size_t n = 0;

	if (val[0] == '/')
		return NULL;
	copy = xstrdup(val);
	rel = xmalloc(strlen(val) + 1);
	for (part = strtok_r(copy, "/", &save); part != NULL;
	    part = strtok_r(NULL, "/", &save)) {
		if (strcmp(part, "..") == 0) {
			free(copy);
			free(rel);
			return NULL;
		}
		if (strcmp(part, ".") == 0)
			continue;
		n += (size_t)sprintf(rel + n, "%s%s", n ? "/" : "", part);
	}
	free(copy);
	dir = n ? path_join(top, rel) : NULL;
	free(rel);
	return dir;
}

/*
 * A submodule whose .git is missing: held as an empty folder when its
 * folder exists (git takes it as no repository). When the folder is
 * missing too, its first missing part is held as an empty read-only
 * folder, as git's checkout leaves a submodule not yet cloned: a name
 * below a missing folder is one that bwrap cannot hold.
 */
static void
protect_submodule_missing(struct plist *l, const struct strv *w,
    const char *dir)
{
	char *git, *m;

	if ((m = first_missing(dir)) != NULL) {
		protect(l, w, m, PATH_DIR, 0);
		free(m);
		return;
	}
	git = path_join(dir, ".git");
	protect(l, w, git, PATH_DIR, 0);
	free(git);
}

/*
 * A git config being read: the file, and the repository it is read for.
 * top is where hooks and programs run (the worktree's top), from where a
 * relative hooks folder or program is found; NULL when there is none (a
 * global config read for no repository). depth is the git folder's, and
 * bounds submodules; include counts the includes that led here.
 */
struct cfgwalk {
	struct plist		*l;
	const struct strv	*w;
	const char		*path;
	const char		*top;
	int			 depth;
	int			 include;
};

static void config_read(const struct cfgwalk *, const char *, int);

/* A walk of the configs read for the repository whose top is top. */
static struct cfgwalk
walk_for(struct plist *l, const struct strv *w, const char *top, int depth)
{
	struct cfgwalk c;

	memset(&c, 0, sizeof(c));
	c.l = l;
	c.w = w;
	c.top = top;
	c.depth = depth;
	return c;
}

/*
 * A path in a config as git's interpolate_path() reads it: "~" and
 * "~/..." in HOME, "~user/..." in that user's home, a relative one from
 * base. A new string, or NULL when it names nothing sbx can find.
 */
static char *
config_path(const struct cfgwalk *c, const char *val, const char *base)
{
	const char *rest, *home = c->l->home;
	struct passwd *pw = NULL;
	char *user;

	if (val[0] == '/')
		return xstrdup(val);
	if (val[0] != '~')
		return base != NULL ? path_join(base, val) : NULL;
	rest = val + 1 + strcspn(val + 1, "/");
	if (rest > val + 1) {
		user = xasprintf("%.*s", (int)(rest - val - 1), val + 1);
		pw = getpwnam(user);
		free(user);
		home = pw != NULL ? pw->pw_dir : NULL;
	}
	if (home == NULL || home[0] != '/')
		return NULL;
	return *rest == '\0' ? xstrdup(home) : path_join(home, rest + 1);
}

/*
 * include.path, includeIf.*.path: held, and read the same way. Every
 * condition counts as true: what an includeIf names on one branch, or in
 * one folder, is read there by git outside.
 */
static void
config_include(const struct cfgwalk *c, const char *val)
{
	char *dir, *p;

	dir = parent_dir(c->path);
	if ((p = config_path(c, val, dir)) != NULL) {
		protect(c->l, c->w, p, PATH_MISSING, 0);
		/* git reads INCLUDE_DEPTH nested includes and fails at the
		 * next one, so what lies deeper is never read. */
		if (c->include < INCLUDE_DEPTH)
			config_read(c, p, c->include + 1);
	}
	free(p);
	free(dir);
}

/*
 * The next word of a shell command at *cmd, its quotes taken off ("'/x
 * y' z" is /x y), and *cmd moved past it; the shell's operators (";",
 * "|", "&", "<", ">", "(", ")") end a word. NULL at the end.
 */
static char *
next_word(const char **cmd)
{
	const char *s = *cmd;
	char *w, *o, q = 0;

	s += strspn(s, " \t\n;|&<>()");
	if (*s == '\0')
		return NULL;
	w = o = xmalloc(strlen(s) + 1);
	for (; *s != '\0'; s++) {
		if (q == 0 && strchr(" \t\n;|&<>()", *s) != NULL)
			break;
		if (q == 0 && (*s == '\'' || *s == '"'))
			q = *s;
		else if (q != 0 && *s == q)
			q = 0;
		else if (q != '\'' && *s == '\\' && s[1] != '\0')
			*o++ = *++s;
		else
			*o++ = *s;
	}
	*o = '\0';
	*cmd = s;
	return w;
}

/* What ends a piece of a shell command: blanks, operators, quotes,
 * expansions, and "=" and ":" (VAR=./x, PATH=./bin:$PATH). */
#define SHELL_SEP " \t\n;|&<>()`$'\"{}=:\\"

/*
 * cmd with $HOME and ${HOME} put in, the one variable whose value sbx
 * knows as git's shell will: "!$HOME/w/x" runs /home/u/w/x.
 */
static char *
expand_home(const char *cmd, const char *home)
{
	const char *s;
	size_t n = 0, len;
	char *r, *o;

	if (home == NULL)
		return xstrdup(cmd);
	for (s = cmd; (s = strchr(s, '$')) != NULL; s++)
		n++;
	len = strlen(home);
	o = r = xmalloc(strlen(cmd) + n * len + 1);
	for (s = cmd; *s != '\0'; ) {
		n = 0;
		/* ${HOME}, ${HOME:-x}, ${HOME-x}: HOME is set */
		if (strncmp(s, "${HOME", 6) == 0 && strchr("}:-", s[6]) &&
		    s[6] != '\0' && strchr(s, '}') != NULL)
			n = (size_t)(strchr(s, '}') - s) + 1;
		else if (strncmp(s, "$HOME", 5) == 0 && s[5] != '_' &&
		    !isalnum((unsigned char)s[5]))
			n = 5;
		if (n > 0) {
			memcpy(o, home, len);
			o += len;
			s += n;
		} else
			*o++ = *s++;
	}
	*o = '\0';
	return r;
}

/*
 * One piece of a shell command, held where it names a file: a path
 * (one with a "/"), from each folder in dirs when relative; or a bare
 * name that is a file in one of them ("sh x.sh" runs x.sh, while a
 * bare command name is found on PATH, outside: not the command's).
 */
static void
program_piece(const struct cfgwalk *c, const char *tok,
    const struct strv *dirs, int bare)
{
	size_t i;
	char *p;

	if (*tok == '\0' || *tok == '-')
		return;
	if (*tok == '/' || *tok == '~') {
		if ((p = config_path(c, tok, NULL)) != NULL)
			protect(c->l, c->w, p, PATH_MISSING, 0);
		free(p);
		return;
	}
	for (i = 0; i < dirs->n; i++) {
		p = path_join(dirs->v[i], tok);
		if (strchr(tok, '/') != NULL ||
		    (bare && type_of(p) == PATH_FILE))
			protect(c->l, c->w, p, PATH_MISSING, 0);
		free(p);
	}
}

/*
 * The pieces of a shell command, one by one: each is held as
 * program_piece() says, and a folder that "cd", "pushd" or a "-C" (env,
 * git, make) moves to, past its options, becomes one more folder that
 * relative pieces are found from: from the top and from the last such
 * folder ("cd a && cd b && ./x" runs a/b/x).
 */
struct pieces {
	const struct cfgwalk	*c;
	struct strv		 dirs;
	int			 shell;
	int			 cd;	/* the next piece is a folder */
};

static void
piece(struct pieces *ps, const char *tok)
{
	const char *top = ps->c->top;
	char *p;

	/* A bound on the folders, each of which every piece is found in. */
	if (ps->cd && top != NULL && *tok != '-' && ps->dirs.n < 64) {
		p = tok[0] == '/' ? xstrdup(tok) : path_join(ps->dirs.n > 1 ?
		    ps->dirs.v[ps->dirs.n - 1] : top, tok);
		strv_push(&ps->dirs, p);
		free(p);
		if (tok[0] != '/') {
			p = path_join(top, tok);
			strv_push(&ps->dirs, p);
			free(p);
		}
	}
	if (!(ps->cd && *tok == '-'))
		ps->cd = ps->shell && (strcmp(tok, "cd") == 0 ||
		    strcmp(tok, "pushd") == 0 || strcmp(tok, "-C") == 0 ||
		    strcmp(tok, "--chdir") == 0);
	program_piece(ps->c, tok, &ps->dirs, ps->shell);
}

/* Pieces start from the top alone, no cd seen. */
static void
pieces_start(struct pieces *ps)
{
	strv_free(&ps->dirs);
	if (ps->c->top != NULL)
		strv_push(&ps->dirs, ps->c->top);
	ps->cd = 0;
}

/*
 * A program a key names ("!" before a shell command in an alias). A
 * shell command can run any file, so sbx holds every file it can see
 * named: each word as the shell quotes it ("'/a b/x'"), and each piece
 * between the shell's special characters, $HOME put in ("sh -c './x'",
 * "PATH=./bin:$PATH tool", "echo `./x`"), relative ones from the top and
 * from each folder a "cd" in it names ("cd tools && ./x"). What a
 * variable other than HOME, or a script, names is not seen (CAVEATS).
 * An alias without "!" is git's own command: only its paths count.
 */
static void
config_program(const struct cfgwalk *c, const char *val, int shell)
{
	const char *cmd = val + (val[0] == '!');
	struct pieces ps;
	char *word, *text, *tok, *save;

	memset(&ps, 0, sizeof(ps));
	ps.c = c;
	ps.shell = shell || val[0] == '!';
	/* The words as the shell quotes them ... */
	pieces_start(&ps);
	while ((word = next_word(&cmd)) != NULL) {
		piece(&ps, word);
		free(word);
	}
	/* ... and the pieces between its special characters. */
	pieces_start(&ps);
	text = expand_home(val + (val[0] == '!'), c->l->home);
	for (tok = strtok_r(text, SHELL_SEP, &save); tok != NULL;
	    tok = strtok_r(NULL, SHELL_SEP, &save))
		piece(&ps, tok);
	free(text);
	strv_free(&ps.dirs);
}

/*
 * submodule.*.path (in .gitmodules): a submodule's .git, a folder or a
 * pointer, is where git status outside runs git again, with that
 * folder's config.
 */
static void
config_submodule(const struct cfgwalk *c, const char *val)
{
	char *dir, *p;

	if (c->top == NULL || c->depth >= GIT_DEPTH ||
	    (dir = submodule_dir(c->top, val)) == NULL)
		return;
	p = path_join(dir, ".git");
	if (protect_dotgit(c->l, c->w, p, c->depth + 1) == 0)
		protect_submodule_missing(c->l, c->w, dir);
	free(p);
	free(dir);
}

/*
 * A value git runs as "git-PREFIX<value>" (a credential helper, a remote
 * helper): found on PATH when a bare name, from the top when it holds a
 * "/" ("foo/x" runs ./git-credential-foo/x).
 */
static void
config_prefixed(const struct cfgwalk *c, const char *prefix,
    const char *val)
{
	char *cmd;

	if (val[0] == '!' || val[0] == '/' || val[0] == '~')
		return;
	cmd = xasprintf("%s%s", prefix, val);
	config_program(c, cmd, 0);
	free(cmd);
}

/* p is what git takes as a repository: p/.git, or a git folder. */
static int
is_repo(const char *p)
{
	char *git = path_join(p, ".git");
	struct stat st;
	int r;

	r = lstat(git, &st) == 0 || (type_of(p) == PATH_DIR && is_gitdir(p));
	free(git);
	return r;
}

/*
 * p, named by a remote's URL: a repository git push runs the hooks of.
 * Held as a git folder is. A folder that is not one yet gets .git and
 * HEAD held as empty read-only folders, and a missing one its first
 * missing folder: no repository can be made there.
 */
static void
config_local_repo(const struct cfgwalk *c, const char *p)
{
	char *git;

	switch (type_of(p)) {
	case PATH_FILE:
		protect_dotgit(c->l, c->w, p, c->depth + 1);
		break;
	case PATH_DIR:
		git = path_join(p, ".git");
		if (protect_dotgit(c->l, c->w, git, c->depth + 1) == 0) {
			if (is_gitdir(p))
				protect_gitdir_at(c->l, c->w, p, c->depth + 1);
			else {
				protect_in(c->l, c->w, p, ".git", PATH_DIR);
				protect_in(c->l, c->w, p, "HEAD", PATH_DIR);
			}
		}
		free(git);
		break;
	default:
		protect_submodule_missing(c->l, c->w, p);
		break;
	}
}

/*
 * remote.*.url, remote.*.pushurl, url.BASE.insteadOf's BASE: a
 * repository on this machine (a path, file://, ~/), and BASE.git, which
 * git also tries; "ext::CMD" runs CMD; "HELPER::..." runs
 * git-remote-HELPER. A URL of another machine names nothing here.
 */
static void
config_remote(const struct cfgwalk *c, const char *url)
{
	const char *colon, *slash, *sep;
	char *p, *alt;

	if (strncmp(url, "ext::", 5) == 0) {
		config_program(c, url + 5, 1);
		return;
	}
	if ((sep = strstr(url, "::")) != NULL &&
	    (strchr(url, '/') == NULL || sep < strchr(url, '/'))) {
		p = xasprintf("%.*s", (int)(sep - url), url);
		config_prefixed(c, "git-remote-", p);
		free(p);
		return;
	}
	if (strncmp(url, "file://", 7) == 0) {
		/* file://HOST/path: this machine's only as localhost */
		url += 7;
		if (*url != '/' && strncmp(url, "localhost/", 10) != 0)
			return;
		url += strcspn(url, "/");
	} else if (strstr(url, "://") != NULL)
		return;
	else if ((colon = strchr(url, ':')) != NULL &&
	    ((slash = strchr(url, '/')) == NULL || colon < slash))
		return;		/* host:path, over ssh */
	if (*url == '\0' || c->depth >= GIT_DEPTH ||
	    (p = config_path(c, url, c->top)) == NULL)
		return;
	/* A link on the way is held by name: pointed elsewhere, it would
	 * lead git to a repository of the command's. */
	hold_links(c->l, c->w, p);
	config_local_repo(c, p);
	/* Where p is not a repository, git tries p.git/.git and p.git. */
	if (!is_repo(p)) {
		alt = xasprintf("%s.git", p);
		hold_links(c->l, c->w, alt);
		config_local_repo(c, alt);
		free(alt);
	}
	free(p);
}

/*
 * core.worktree: the worktree is elsewhere, and hooks and programs run
 * from there. The config is read again with that top (relative to the
 * git folder, where the config lies; from an included file, only an
 * absolute one is known).
 */
static void
config_worktree(const struct cfgwalk *c, const char *val)
{
	struct cfgwalk d = *c;
	char *dir, *top;

	if (c->top == NULL || (c->include > 0 && val[0] != '/'))
		return;
	dir = parent_dir(c->path);
	top = config_path(c, val, dir);
	free(dir);
	if (top == NULL || strcmp(top, c->top) == 0) {
		free(top);
		return;
	}
	d.top = top;
	config_read(&d, c->path, c->include);
	protect_worktree_configs(c->l, c->w, top, c->depth);
	free(top);
}

/* A remote's URL, kept for the rewrites of url.*.insteadOf. */
static void
note_remote(const struct cfgwalk *c, const char *url)
{
	struct remote *r;

	if (c->l->nremotes >= 4096)
		return;
	c->l->remotes = xrealloc(c->l->remotes,
	    (c->l->nremotes + 1) * sizeof(*c->l->remotes));
	r = &c->l->remotes[c->l->nremotes++];
	r->url = xstrdup(url);
	r->top = c->top != NULL ? xstrdup(c->top) : NULL;
	r->depth = c->depth;
}

/*
 * Once every config is read: each remote's URL as url.*.insteadOf
 * rewrites it (the longest prefix), held as config_remote() holds one.
 * Every config's rewrites count for every remote: which one git reads
 * depends on where it runs.
 */
static void
protect_rewritten(struct plist *l, const struct strv *w)
{
	struct cfgwalk c;
	size_t i, k, n, best;
	char *url;

	for (i = 0; i < l->nremotes; i++) {
		best = (size_t)-1;
		n = 0;
		for (k = 0; k + 1 < l->rewrites.n; k += 2)
			if (strncmp(l->remotes[i].url, l->rewrites.v[k],
			    strlen(l->rewrites.v[k])) == 0 &&
			    strlen(l->rewrites.v[k]) > n) {
				n = strlen(l->rewrites.v[k]);
				best = k;
			}
		if (best == (size_t)-1)
			continue;
		c = walk_for(l, w, l->remotes[i].top, l->remotes[i].depth);
		url = xasprintf("%s%s", l->rewrites.v[best + 1],
		    l->remotes[i].url + n);
		config_remote(&c, url);
		free(url);
	}
}

/*
 * One key of a git config that names a file git reads as configuration,
 * a folder it runs hooks or copies them from, or a program it runs: held
 * where writable. A key without a value names nothing.
 */
static void
config_entry(void *arg, const char *key, const char *val)
{
	const struct cfgwalk *c = arg;
	char *p;
	size_t i;

	if (val == NULL || *val == '\0')
		return;
	if (key_is(key, "submodule.*.path"))
		config_submodule(c, val);
	else if (strcmp(key, "include.path") == 0 ||
	    key_is(key, "includeif.*.path"))
		config_include(c, val);
	/* Hooks run from core.hooksPath; git init and git clone copy
	 * init.templateDir's hooks (and its config) into the new folder. */
	else if (strcmp(key, "core.hookspath") == 0 ||
	    strcmp(key, "init.templatedir") == 0) {
		if ((p = config_path(c, val, c->top)) != NULL)
			protect(c->l, c->w, p, PATH_DIR, 0);
		free(p);
	} else if (strcmp(key, "core.worktree") == 0)
		config_worktree(c, val);
	else if (key_is(key, "remote.*.url") ||
	    key_is(key, "remote.*.pushurl")) {
		config_remote(c, val);
		note_remote(c, val);
	} else if (key_is(key, "branch.*.remote") ||
	    key_is(key, "branch.*.pushremote") ||
	    strcmp(key, "remote.pushdefault") == 0) {
		/* A remote's name, or, with a "/", a URL of its own. */
		if (strchr(val, '/') != NULL) {
			config_remote(c, val);
			note_remote(c, val);
		}
	} else if (key_is(key, "url.*.insteadof") ||
	    key_is(key, "url.*.pushinsteadof")) {
		/* url.BASE.insteadOf = PREFIX: a URL that starts with
		 * PREFIX goes to BASE and the rest (read at the end). */
		p = xasprintf("%.*s", (int)(strrchr(key, '.') - key - 4),
		    key + 4);
		strv_push(&c->l->rewrites, val);
		strv_push(&c->l->rewrites, p);
		free(p);
	} else if (key_is(key, "remote.*.vcs"))
		config_prefixed(c, "git-remote-", val);
	else
		for (i = 0; git_program_keys[i]; i++)
			if (key_is(key, git_program_keys[i])) {
				config_program(c, val,
				    !key_is(key, "alias.*"));
				/* A helper that is neither a path nor a shell
				 * command is git's: "git credential-VALUE". */
				if (key_is(key, "credential.helper") ||
				    key_is(key, "credential.*.helper"))
					config_prefixed(c, "git-credential-",
					    val);
				return;
			}
}

/*
 * A config's text, whole: NULL when there is none to read (missing, not
 * a regular file: a FIFO an include names would block). One larger than
 * CONFIG_MAX, or that fails while read, fails the run (l->config_err):
 * what it names is unknown, and a part of it read as the whole could
 * miss what git reads.
 */
static char *
config_text(struct plist *l, const char *path, size_t *len)
{
	struct stat st;
	size_t cap;
	ssize_t n = 0;
	char *buf;
	int fd, err = 0;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	cap = st.st_size < CONFIG_MAX ? (size_t)st.st_size + 1 :
	    CONFIG_MAX + 1;
	buf = xmalloc(cap);
	/* To its end, not to st_size: the file may grow meanwhile. */
	for (*len = 0; *len <= CONFIG_MAX; *len += (size_t)n) {
		if (*len == cap) {
			cap = 2 * cap < CONFIG_MAX + 1 ? 2 * cap :
			    CONFIG_MAX + 1;
			buf = xrealloc(buf, cap);
		}
		if ((n = read(fd, buf + *len, cap - *len)) <= 0) {
			err = errno;
			break;
		}
	}
	close(fd);
	if (n < 0 || *len > CONFIG_MAX) {
		if (l->config_err == NULL)
			l->config_err = n < 0 ? xasprintf("%s: %s",
			    shown(path), strerror(err)) : xasprintf("%s: a "
			    "git config larger than %d MiB: what it names is "
			    "unknown", shown(path), CONFIG_MAX >> 20);
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * Read the config at path for what it names, once for each repository
 * and include depth (a config that includes itself, or a fan of
 * includes, costs one read per depth).
 */
static void
config_parse(const struct cfgwalk *from, const char *path, int include)
{
	struct cfgwalk c = *from;
	char *key, *text;
	size_t len;
	int done;

	key = xasprintf("%d %s\n%s", c.depth, c.top ? c.top : "", path);
	done = seen_before(&c.l->configs, key, include);
	free(key);
	if (done || (text = config_text(c.l, path, &len)) == NULL)
		return;
	c.path = path;
	c.include = include;
	gitcfg_parse(text, len, config_entry, &c);
	free(text);
}

/* SBX_TIMING: the time in git configs, an include counted once. */
static int64_t config_us;
static int config_depth;

static void
config_read(const struct cfgwalk *from, const char *path, int include)
{
	int64_t t = timing_on && config_depth == 0 ? timing_us() : 0;

	config_depth++;
	config_parse(from, path, include);
	if (--config_depth == 0 && timing_on)
		config_us += timing_us() - t;
}

/* A repository's config (or .gitmodules) at cfg, its worktree's top. */
static void
protect_config(struct plist *l, const struct strv *w, const char *cfg,
    const char *top, int depth)
{
	struct cfgwalk c = walk_for(l, w, top, depth);

	config_read(&c, cfg, 0);
}

/*
 * GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n> and GIT_CONFIG_VALUE_<n> in sbx's
 * environment: git run later from the same shell reads them as config.
 * They come from no file: a relative include among them names nothing.
 * (GIT_CONFIG_PARAMETERS, git's own quoting of -c, is not read: CAVEATS.)
 */
static void
protect_env_config(struct plist *l, const struct strv *w, const char *top)
{
	struct cfgwalk c;
	const char *e, *k, *v;
	char name[40], *key, *p;
	long i, n;

	if ((e = getenv("GIT_CONFIG_COUNT")) == NULL ||
	    (n = strtol(e, NULL, 10)) <= 0)
		return;
	c = walk_for(l, w, top, 0);
	c.path = "/dev/null";
	for (i = 0; i < n && i < 1000; i++) {
		snprintf(name, sizeof(name), "GIT_CONFIG_KEY_%ld", i);
		k = getenv(name);
		snprintf(name, sizeof(name), "GIT_CONFIG_VALUE_%ld", i);
		if (k == NULL || (v = getenv(name)) == NULL)
			continue;
		/* Section and name in lower case; a subsection as it is. */
		key = xstrdup(k);
		for (p = key; *p != '\0' && *p != '.'; p++)
			*p = (char)tolower((unsigned char)*p);
		for (p = strrchr(key, '.') ? strrchr(key, '.') : key; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		config_entry(&c, key, v);
		free(key);
	}
}

/*
 * What git reads for the worktree whose top is top besides the
 * repository's own config: the user's and the system's configs, the
 * environment's, and the worktree's .gitmodules (depth bounds a
 * submodule path that leads back through a link).
 */
static void
protect_worktree_configs(struct plist *l, const struct strv *w,
    const char *top, int depth)
{
	size_t i;
	char *p;

	for (i = 0; i < l->globals.n; i++)
		protect_config(l, w, l->globals.v[i], top, 0);
	protect_env_config(l, w, top);
	p = path_join(top, ".gitmodules");
	protect_config(l, w, p, top, depth);
	free(p);
}

/*
 * Every config git reads for the worktree at top: the shared config in
 * common (the git folder), the worktree's own config.worktree in own
 * (the same folder, or its worktrees/NAME), and the others.
 */
static void
protect_top_configs(struct plist *l, const struct strv *w,
    const char *common, const char *own, const char *top, int depth)
{
	char *p;

	p = path_join(common, "config");
	protect_config(l, w, p, top, 0);
	free(p);
	p = path_join(own, "config.worktree");
	protect_config(l, w, p, top, 0);
	free(p);
	protect_worktree_configs(l, w, top, depth);
}

/* Where hooks and aliases run for git folder g: its worktree's top. */
static char *
git_top(const char *g)
{
	const char *base = strrchr(g, '/');
	char *p, *wt;

	if (base != NULL && strcmp(base, "/.git") == 0) {
		return parent_dir(g);
	}
	/* worktrees/NAME: its gitdir file names the checkout's .git. */
	p = path_join(g, "gitdir");
	wt = git_pointer(p, "", g);
	free(p);
	if (wt != NULL && (p = strrchr(wt, '/')) != NULL && p != wt) {
		*p = '\0';
		return wt;
	}
	free(wt);
	return xstrdup(g);
}

/*
 * A git folder, g resolved: every name of git_names, and the git folder
 * that its commondir names, when that lies in a writable folder too.
 */
static void
protect_gitdir(struct plist *l, const struct strv *w, const char *g,
    int depth)
{
	char *p, *common, *top;
	size_t i;

	/* A submodule path of "." names its own git folder again. */
	if (seen_before(&l->gitdirs, g, depth))
		return;
	for (i = 0; git_names[i].name; i++)
		protect_in(l, w, g, git_names[i].name, git_names[i].create);
	protect_worktrees(l, w, g, depth);
	/* What its config names: a hooks folder, included configs,
	 * programs, when they lie in a writable folder. */
	top = git_top(g);
	protect_top_configs(l, w, g, g, top, depth);
	free(top);
	p = path_join(g, "commondir");
	if ((common = git_pointer(p, "", g)) != NULL) {
		protect_gitdir_at(l, w, common, depth + 1);
		free(common);
	}
	free(p);
}

/* A git dir at path, which may be or pass through a symlink. */
static void
protect_gitdir_at(struct plist *l, const struct strv *w, const char *path,
    int depth)
{
	char real[PATH_MAX];

	if (depth <= GIT_DEPTH && realpath(path, real) != NULL &&
	    type_of(real) == PATH_DIR)
		protect_gitdir(l, w, real, depth);
}

/* dir is a bare repository (or a git folder): HEAD, objects/, refs/. */
static int
is_gitdir(const char *dir)
{
	char *head = path_join(dir, "HEAD"), *obj = path_join(dir, "objects"),
	    *refs = path_join(dir, "refs");
	int r;

	r = type_of(head) == PATH_FILE && type_of(obj) == PATH_DIR &&
	    type_of(refs) == PATH_DIR;
	free(head);
	free(obj);
	free(refs);
	return r;
}

/*
 * A .git: a folder is a git folder; a file (a gitdir pointer) is held
 * read-only so it cannot be pointed at a git dir the command made, and
 * the git folder it names is held where it is writable. 0 when there is
 * none.
 */
static int
protect_dotgit(struct plist *l, const struct strv *w, const char *git,
    int depth)
{
	char *dir, *target;
	struct stat st;

	if (lstat(git, &st) < 0)
		return 0;
	if (stat(git, &st) == 0 && S_ISDIR(st.st_mode)) {
		protect_gitdir_at(l, w, git, depth);
		return 1;
	}
	protect(l, w, git, PATH_MISSING, 0);
	dir = xstrdup(git);
	*strrchr(dir, '/') = '\0';
	if ((target = git_pointer(git, "gitdir: ", dir)) != NULL)
		protect_gitdir_at(l, w, target, depth);
	free(target);
	free(dir);
	return 1;
}

/*
 * The repositories that hold a writable folder: the folder itself and each
 * of its parents, as a bare repository or by their .git (a writable .git
 * folder belongs to the repository above), with protect_dotgit(). 1 when
 * the folder itself is a repository (its top, or a bare one); 0 when a
 * folder above is; -1 when none is.
 */
static int
protect_repos(struct plist *l, const struct strv *w, const char *folder)
{
	char *dir, *git, *slash;
	int top = -1, found, first = 1;

	dir = xstrdup(folder);
	for (;;) {
		found = is_gitdir(dir);
		if (found)
			protect_gitdir_at(l, w, dir, 0);
		git = path_join(dir, ".git");
		found |= protect_dotgit(l, w, git, 0);
		free(git);
		if (first)
			top = found ? 1 : -1;
		else if (found && top == -1)
			top = 0;
		first = 0;
		if (strcmp(dir, "/") == 0)
			break;
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(dir);
	return top;
}

/*
 * One folder's subfolders, each a repository (bare, or by its .git) held
 * with its git folder, or else kept in next to be looked into. Counts
 * each in *seen and stops at NESTED_MAX.
 */
static void
nested_level(struct plist *l, const struct strv *w, const char *folder,
    struct strv *next, size_t *seen)
{
	struct dirent *de;
	struct stat st;
	char *sub, *git;
	DIR *d;

	if ((d = opendir(folder)) == NULL)
		return;
	while (*seen < NESTED_MAX && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, ".git") == 0)
			continue;
		sub = path_join(folder, de->d_name);
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
			(*seen)++;
			git = path_join(sub, ".git");
			if (is_gitdir(sub))
				protect_gitdir_at(l, w, sub, 0);
			else if (!protect_dotgit(l, w, git, 0) &&
			    next != NULL &&
			    strcmp(de->d_name, "node_modules") != 0)
				strv_push(next, sub);
			free(git);
		}
		free(sub);
	}
	closedir(d);
}

/*
 * The repositories below a writable folder that no repository holds
 * (-C ~/src, -w ~): in its folders, then in theirs (not node_modules,
 * which holds packages, not checkouts), not deeper, and in at most
 * NESTED_MAX folders, so that a large tree costs no more than a few
 * milliseconds of launch. The first level is looked at whole before the
 * second, so a large folder cannot use up the count before its siblings
 * are seen. Deeper ones are a caveat (see the man page).
 */
static void
protect_nested(struct plist *l, const struct strv *w, const char *folder)
{
	struct strv next = { 0 };
	size_t i, seen = 0;

	nested_level(l, w, folder, &next, &seen);
	for (i = 0; i < next.n; i++)
		nested_level(l, w, next.v[i], NULL, &seen);
	strv_free(&next);
}

static char *
home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;
	char real[PATH_MAX];

	if ((h == NULL || *h != '/') && (pw = getpwuid(getuid())) != NULL)
		h = pw->pw_dir;
	if (h == NULL || *h != '/' || realpath(h, real) == NULL)
		return NULL;
	return xstrdup(real);
}

/*
 * The configs git reads in every repository besides its own: the
 * system's, the user's (XDG_CONFIG_HOME's or ~/.config's git/config, and
 * ~/.gitconfig), and those GIT_CONFIG_SYSTEM and GIT_CONFIG_GLOBAL name
 * instead. All of them, whichever git would choose: git outside may run
 * with another environment than sbx's.
 */
static void
global_configs(struct plist *l)
{
	const char *e;

	strv_push(&l->globals, "/etc/gitconfig");
	if ((e = getenv("GIT_CONFIG_SYSTEM")) != NULL && e[0] == '/')
		strv_push(&l->globals, e);
	if ((e = getenv("XDG_CONFIG_HOME")) != NULL && e[0] == '/')
		strv_pushf(&l->globals, "%s/git/config", e);
	if (l->home != NULL) {
		strv_pushf(&l->globals, "%s/.config/git/config", l->home);
		strv_pushf(&l->globals, "%s/.gitconfig", l->home);
	}
	if ((e = getenv("GIT_CONFIG_GLOBAL")) != NULL && e[0] == '/')
		strv_push(&l->globals, e);
}

/*
 * Each writable folder's repositories and, but in sbx's own cache
 * folders, which no editor or agent opens, its editor and agent names;
 * the user's and system's git configs and what they name (for each
 * repository, and for none); then the home's names.
 */
static void
compute_protected(const struct strv *w, const struct strv *cache,
    const char *home, struct plist *l)
{
	size_t i, j;
	int64_t t;

	l->home = home;
	global_configs(l);
	for (i = 0; i < w->n; i++) {
		/* In a repository below its top (-w repo/sub): a .git made
		 * there would be the repository git outside finds first in
		 * that folder. In none: the repositories below it. */
		switch (protect_repos(l, w, w->v[i])) {
		case 0:
			protect_in(l, w, w->v[i], ".git", PATH_DIR);
			break;
		case -1:
			protect_nested(l, w, w->v[i]);
			break;
		}
		for (j = 0; j < cache->n && strcmp(cache->v[j], w->v[i]); j++)
			;
		if (type_of(w->v[i]) != PATH_DIR || j < cache->n)
			continue;
		/* Looked up in the folder's listing, read once. */
		l->list_under = w->v[i];
		for (j = 0; workspace_names[j]; j++)
			protect_in(l, w, w->v[i], workspace_names[j], PATH_DIR);
		l->list_under = NULL;
	}
	/* Outside any repository, a relative hooks folder or program names
	 * nothing known; the rest counts for the next git init or clone. */
	for (i = 0; i < l->globals.n; i++) {
		protect(l, w, l->globals.v[i], PATH_MISSING, 0);
		protect_config(l, w, l->globals.v[i], NULL, 0);
	}
	protect_env_config(l, w, NULL);
	protect_rewritten(l, w);
	/* Candidates in $HOME count wherever they are writable: -w ~/.config
	 * exposes .config/fish as much as a writable $HOME does. */
	if (home == NULL)
		return;
	t = timing_on ? timing_us() : 0;
	l->list_under = home;
	for (j = 0; home_files[j]; j++)
		protect_in(l, w, home, home_files[j], PATH_MISSING);
	l->list_under = NULL;
	if (timing_on)
		timing_part("policy/home", timing_us() - t);
}

static int
check_deny_read(const char *path, struct sbx_err *e)
{
	struct stat st;

	/* Missing: it stays absent (first_missing()); nothing to check. */
	if (stat(path, &st) == -1)
		return 0;
	/* Mounts hide a name, not an inode: another name stays readable. */
	if (S_ISREG(st.st_mode) && st.st_nlink > 1)
		return sbx_errf(e, ERR_POLICY, "--deny-read %s: the file has "
		    "%lu hard links; the other names would stay readable",
		    shown(path), (unsigned long)st.st_nlink);
	return 0;
}

/*
 * A --deny-read or --deny-write path that does not exist stays absent:
 * the rule holds its first missing component, whose folder exists, so
 * that neither it nor anything below it can be made (a mount point or a
 * grant around it needs an existing folder). path's existing part is
 * resolved (sbx.c). NULL when path exists.
 */
static char *
first_missing(const char *path)
{
	struct stat st;
	char *p, *s;

	if (lstat(path, &st) == 0)
		return NULL;
	p = xstrdup(path);
	for (s = p + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		if (lstat(p, &st) < 0)
			return p;
		*s = '/';
	}
	return p;
}

/*
 * A rule of kind at path would change nothing: the last rule on a path
 * at, above or below it is already the same rule (-w . with the default
 * root). Under bwrap each rule is a mount, so it is left out.
 */
static int
restates(const struct plist *l, enum rule_kind kind, const char *path)
{
	size_t i = l->n;

	while (i-- > 0) {
		if (strcmp(l->r[i].path, path) == 0)
			return l->r[i].kind == kind;
		if (path_under(l->r[i].path, path) ||
		    path_under(path, l->r[i].path))
			return 0;
	}
	return 0;
}

static void
add_all(struct plist *l, const struct strv *v, enum rule_kind kind)
{
	size_t i;
	char *m;

	for (i = 0; i < v->n; i++) {
		if (restates(l, kind, v->v[i]))
			continue;
		if (kind != RULE_WRITE && (m = first_missing(v->v[i]))) {
			if (!plist_has(l, m))
				plist_add(l, kind, m, PATH_MISSING, 0,
				    PATH_MISSING);
			free(m);
		} else
			plist_add(l, kind, v->v[i], type_of(v->v[i]), 0,
			    PATH_MISSING);
	}
}

/*
 * The inode of each held path below a writable folder, and of each folder
 * between them (checked_add()): a backend that finds one of them under
 * another name, or another inode at the name, while it starts, fails
 * instead of granting around a folder that was swapped.
 */
static void
note_held(const struct plist *l, const struct strv *w)
{
	const char *holder;
	struct stat st;
	char *p, *s;
	size_t i;
	int fd;

	for (i = 0; i < l->n; i++) {
		if (l->r[i].kind == RULE_WRITE || l->r[i].type == PATH_MISSING ||
		    (holder = writable_holder(w, l->r[i].path)) == NULL)
			continue;
		p = xstrdup(l->r[i].path);
		while (strcmp(p, holder) != 0) {
			if (checked_fd(p) < 0 &&
			    (fd = open_nolinks(p, &st)) >= 0)
				checked_note(p, fd, &st, 0);
			if ((s = strrchr(p, '/')) == NULL || s == p)
				break;
			*s = '\0';
		}
		free(p);
	}
}

int
policy_compile(const struct sbx_opts *o, struct policy *p, struct sbx_err *e)
{
	struct plist l, prot;
	char *home;
	size_t i;

	memset(p, 0, sizeof(*p));
	memset(&l, 0, sizeof(l));
	memset(&prot, 0, sizeof(prot));
	for (i = 0; i < o->deny_read.n; i++)
		if (check_deny_read(o->deny_read.v[i], e) == -1)
			return -1;
	compute_writable(o, &p->writable);
	home = home_dir();
	p->home = home != NULL ? xstrdup(home) : NULL;
	if (o->scope.n == 0)
		plist_add(&l, RULE_WRITE, o->root, PATH_DIR, 0, PATH_MISSING);
	add_all(&l, &o->write, RULE_WRITE);
	if (o->scope.n > 0) {
		plist_add(&l, RULE_READONLY, o->root, PATH_DIR, 0,
		    PATH_MISSING);
		add_all(&l, &o->scope, RULE_WRITE);
	}
	/* sbx's own cache folders: writable whatever --scope says. */
	add_all(&l, &o->cache_dirs, RULE_WRITE);
	if (o->protect) {
		prot.sweep = !o->dry_run;
		compute_protected(&p->writable, &o->cache_dirs, home, &prot);
		if (prot.config_err != NULL) {
			sbx_errf(e, ERR_POLICY, "%s", prot.config_err);
			free(home);
			plist_free(&prot);
			plist_free(&l);
			policy_free(p);
			return -1;
		}
		/*
		 * sbx itself, when it lies in a writable folder (./sbx run
		 * from its checkout): a command that replaced it would run
		 * unconfined the next time the user starts sbx.
		 */
		if (o->self != NULL && o->self[0] == '/')
			protect(&prot, &p->writable, o->self, PATH_MISSING,
			    LINK_DEPTH);
	}
	free(home);
	/* Below a --deny-write or --deny-read path, nothing can be made or
	 * changed anyway: a protected name there would only be a mount on
	 * what the deny rule then hides (bwrap's shim would find its own
	 * placeholder gone and fail the launch). */
	for (i = 0; i < prot.n; i++)
		if (!under_any(&o->deny_write, prot.r[i].path) &&
		    !under_any(&o->deny_read, prot.r[i].path))
			plist_add(&l, RULE_READONLY, prot.r[i].path,
			    prot.r[i].type, 1, prot.r[i].create);
	drop_under(&prot.missing, &o->deny_write);
	drop_under(&prot.missing, &o->deny_read);
	add_all(&l, &o->deny_write, RULE_READONLY);
	add_all(&l, &o->deny_read, RULE_DENY_READ);
	note_held(&l, &p->writable);
	p->missing = prot.missing;
	memset(&prot.missing, 0, sizeof(prot.missing));
	plist_free(&prot);
	p->r = l.r;
	p->n = l.n;
	if (timing_on)
		timing_part("policy/gitcfg", config_us);
	return 0;
}

/* The deepest folder that ends up writable and holds path, or NULL. */
const char *
policy_holder(const struct policy *p, const char *path)
{
	return writable_holder(&p->writable, path);
}

/*
 * The policy of one run: the private temp folder's rules first, so that
 * every rule the options make (-C or -w below /tmp, --deny-read) applies
 * on top of it; then base's rules. dir NULL: base alone (--host-tmp).
 * fresh: dir is a new, empty folder of the backend's own (bwrap's tmpfs),
 * which holds no host path; otherwise a folder on the host, granted, and
 * hide, when not NULL, the folder below which it lies, hidden for reading
 * (the host's /tmp and other runs' folders).
 */
void
policy_with_tmp(const struct policy *base, const char *dir, int fresh,
    const char *hide, struct policy *out)
{
	struct plist l;
	size_t i;

	memset(&l, 0, sizeof(l));
	memset(out, 0, sizeof(*out));
	if (dir != NULL && !fresh && hide != NULL)
		plist_add(&l, RULE_DENY_READ, hide, PATH_DIR, 0, PATH_MISSING);
	if (dir != NULL) {
		plist_add(&l, RULE_WRITE, dir, PATH_DIR, 0, PATH_MISSING);
		l.r[l.n - 1].fresh = fresh;
	}
	for (i = 0; i < base->n; i++) {
		plist_add(&l, base->r[i].kind, base->r[i].path,
		    base->r[i].type, base->r[i].implicit, base->r[i].create);
		l.r[l.n - 1].fresh = base->r[i].fresh;
	}
	for (i = 0; i < base->writable.n; i++)
		strv_push(&out->writable, base->writable.v[i]);
	for (i = 0; i < base->missing.n; i++)
		strv_push(&out->missing, base->missing.v[i]);
	out->home = base->home ? xstrdup(base->home) : NULL;
	/* A fresh folder holds no host path: nothing in it is pinned. */
	if (dir != NULL && !fresh)
		push_unique(&out->writable, dir);
	out->r = l.r;
	out->n = l.n;
}

void
policy_free(struct policy *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->r[i].path);
	free(p->r);
	p->r = NULL;
	p->n = 0;
	strv_free(&p->writable);
	strv_free(&p->missing);
	free(p->home);
	p->home = NULL;
}
