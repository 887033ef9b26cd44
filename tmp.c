/*
 * tmp.c: the run's private temp folder on the host, for the rows of the
 * backend table that cannot give the command a /tmp of its own (Landlock,
 * Seatbelt, no sandbox): BASE/sbx-UID/run-XXXXXX, where BASE is /tmp
 * resolved, or on macOS the per-user temp folder (confstr(3)'s
 * _CS_DARWIN_USER_TEMP_DIR, which macOS makes for the user alone and which
 * Seatbelt sees as /private/var/folders/...). The command finds it in TMPDIR; the policy hides BASE (not on
 * macOS, tmp_hidden()) and grants the run folder alone
 * (policy_with_tmp()), so other runs' folders stay out of reach. Invariants: BASE/sbx-UID is the user's own folder
 * (mode 0700, not a link), or nothing is made; every descriptor opened
 * here is close-on-exec; removal goes through descriptors and never
 * follows a link the command planted. Each run holds an exclusive flock(2)
 * on its folder while it lives, so a folder nobody holds belongs to a run
 * that was killed (SIGKILL): the next run removes it. Runs make and sweep
 * folders only under an exclusive lock on BASE/sbx-UID, so a sweep never
 * meets a folder made but not yet locked.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "sbx.h"

#define TMP_BASE	"/tmp"
#define RUN_PREFIX	"run-"
#define MAX_DEPTH	64	/* deeper folders are moved up, not recursed */
#define MAX_PASSES	4096

struct tmp {
	char	*base;		/* TMP_BASE, resolved: what the policy hides */
	char	*path;		/* BASE/sbx-UID/run-XXXXXX */
	char	 name[32];	/* run-XXXXXX */
	int	 pfd;		/* BASE/sbx-UID */
	int	 fd;		/* the run folder, locked while the run lives */
};

static int
lock(int fd, int how)
{
	int r;

	while ((r = flock(fd, how)) < 0 && errno == EINTR)
		;
	return r;
}

/* BASE/sbx-UID, made if missing: a folder of the user's own, 0700. */
static int
open_parent(const char *parent, struct sbx_err *e)
{
	struct stat st;
	int fd;

	if (mkdir(parent, 0700) < 0 && errno != EEXIST)
		return sbx_errf(e, ERR_PATH, "temp folder %s: %s",
		    shown(parent), strerror(errno));
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sbx_errf(e, ERR_PATH, "temp folder %s: %s (use "
		    "--host-tmp, or remove it)", shown(parent),
		    errno == ELOOP ? "a symbolic link" : strerror(errno));
	/* Another user's folder, or one others may enter: not ours to use. */
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 077) != 0) {
		close(fd);
		return sbx_errf(e, ERR_PATH, "temp folder %s: not the user's "
		    "own with mode 0700 (remove it, or use --host-tmp)",
		    shown(parent));
	}
	return fd;
}

struct sweep {
	int		top;	/* the folder being emptied */
	unsigned	moved;	/* names made for folders moved up */
	int		left;	/* something could not be removed */
};

/*
 * Past MAX_DEPTH a folder is renamed up into the top folder, whose next
 * pass takes it: the depth of a tree the command made never costs more
 * than MAX_DEPTH descriptors.
 */
static void
move_up(struct sweep *s, int fd, const char *name)
{
	char to[32];
	int i;

	for (i = 0; i < 100; i++) {
		snprintf(to, sizeof(to), ".sbx-deep-%u", s->moved++);
		if (renameat(fd, name, s->top, to) == 0)
			return;
		if (errno != EEXIST && errno != ENOTEMPTY)
			break;
	}
	s->left = 1;
}

/* Empty the folder open at fd; nothing is followed, links are removed. */
static void
empty(struct sweep *s, int fd, int depth)
{
	struct dirent *de;
	struct stat st;
	int dfd, sub;
	DIR *d;

	if ((dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (d = fdopendir(dfd)) == NULL) {
		if (dfd >= 0)
			close(dfd);
		s->left = 1;
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(fd, de->d_name, 0) < 0)
				s->left = 1;
			continue;
		}
		if (depth >= MAX_DEPTH) {
			move_up(s, fd, de->d_name);
			continue;
		}
		/* A folder made without search or write rights (mkdir
		 * with mode 0): the user's own, so given them back. Nothing
		 * of the command's runs any more to swap it for a link. */
		if ((st.st_mode & 0700) != 0700)
			(void)fchmodat(fd, de->d_name, 0700, 0);
		sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			empty(s, sub, depth + 1);
			close(sub);
		}
		if (unlinkat(fd, de->d_name, AT_REMOVEDIR) < 0 &&
		    errno != ENOENT)
			s->left = 1;
	}
	closedir(d);
}

/* Remove name, a folder in pfd open (and locked) at fd. */
static void
remove_tree(int pfd, const char *name, int fd)
{
	struct sweep s;
	unsigned moved;
	int pass;

	/* Most runs leave their folder empty: one rmdir, no scan. */
	if (unlinkat(pfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
		return;
	memset(&s, 0, sizeof(s));
	s.top = fd;
	for (pass = 0; pass < MAX_PASSES; pass++) {
		s.left = 0;
		moved = s.moved;
		empty(&s, fd, 0);
		if (unlinkat(pfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return;
		/* Only moved-up folders justify another pass. */
		if ((errno != ENOTEMPTY && errno != EEXIST) ||
		    (s.left && s.moved == moved))
			return;
	}
}

/*
 * The folders of runs that were killed: nobody holds their lock. A
 * folder's link count is 2 and one for each folder in it: at 3 the run's
 * own is the only one, and there is nothing to read (a file system that
 * does not count them, btrfs, says 1: read).
 */
static void
sweep_stale(int pfd, const char *mine)
{
	struct dirent *de;
	struct stat st;
	int dfd, fd;
	DIR *d;

	if (fstat(pfd, &st) == 0 && st.st_nlink == 3)
		return;
	if ((dfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, RUN_PREFIX, strlen(RUN_PREFIX)) != 0 ||
		    strcmp(de->d_name, mine) == 0)
			continue;
		fd = openat(pfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			remove_tree(pfd, de->d_name, fd);
		close(fd);
	}
	closedir(d);
}

/* The run folder, made, opened and locked under the parent's lock. */
static int
make_run(struct tmp *t, const char *parent, struct sbx_err *e)
{
	char *tmpl, *slash;

	tmpl = xasprintf("%s/" RUN_PREFIX "XXXXXX", parent);
	if (mkdtemp(tmpl) == NULL) {
		sbx_errf(e, ERR_PATH, "temp folder %s: %s", shown(parent),
		    strerror(errno));
		free(tmpl);
		return -1;
	}
	slash = strrchr(tmpl, '/');
	snprintf(t->name, sizeof(t->name), "%s", slash + 1);
	t->path = tmpl;
	t->fd = openat(t->pfd, t->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (t->fd < 0 || lock(t->fd, LOCK_EX) < 0)
		return sbx_errf(e, ERR_PATH, "temp folder %s: %s",
		    shown(t->path), strerror(errno));
	return 0;
}

/* BASE, resolved into real; -1 with *e set. */
static int
base_of(char *real, struct sbx_err *e)
{
	const char *base = TMP_BASE;
#ifdef __APPLE__
	char user[PATH_MAX];
	size_t n = confstr(_CS_DARWIN_USER_TEMP_DIR, user, sizeof(user));

	if (n > 0 && n <= sizeof(user))
		base = user;
#endif
	if (realpath(base, real) == NULL)
		return sbx_errf(e, ERR_PATH, "temp folder %s: %s", shown(base),
		    strerror(errno));
	return 0;
}

int
tmp_create(struct tmp **out, struct sbx_err *e)
{
	struct tmp *t = xcalloc(1, sizeof(*t));
	char real[PATH_MAX], *parent;
	int rc;

	t->pfd = t->fd = -1;
	if (base_of(real, e) < 0) {
		free(t);
		return -1;
	}
	t->base = xstrdup(real);
	parent = xasprintf("%s/sbx-%lu", strcmp(real, "/") ? real : "",
	    (unsigned long)geteuid());
	if ((t->pfd = open_parent(parent, e)) < 0) {
		free(parent);
		tmp_remove(t);
		return -1;
	}
	lock(t->pfd, LOCK_EX);
	rc = make_run(t, parent, e);
	if (rc == 0)
		sweep_stale(t->pfd, t->name);
	lock(t->pfd, LOCK_UN);
	free(parent);
	if (rc < 0) {
		tmp_remove(t);
		return -1;
	}
	*out = t;
	return 0;
}

const char *
tmp_path(const struct tmp *t)
{
	return t->path;
}

/*
 * What the policy hides for reading: the host's /tmp, as bwrap's own /tmp
 * does. Not on macOS: system services keep sockets in /private/tmp, and the
 * Seatbelt profile keeps the rest readable as it is; NULL there.
 */
const char *
tmp_hidden(const struct tmp *t)
{
#ifdef __APPLE__
	(void)t;
	return NULL;
#else
	return t->base;
#endif
}

/* After the run: its folder goes, whatever the command left in it. */
void
tmp_remove(struct tmp *t)
{
	if (t == NULL)
		return;
	if (t->fd >= 0) {
		remove_tree(t->pfd, t->name, t->fd);
		close(t->fd);
	}
	if (t->pfd >= 0)
		close(t->pfd);
	free(t->base);
	free(t->path);
	free(t);
}
