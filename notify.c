/*
 * notify.c: the supervisor below every Linux backend. The sandbox's own
 * layer judges what it can: a backend's mounts (read-only binds, the
 * sandbox's /dev and /proc) or the kernel's grants of write below a folder
 * (the backend hands their inodes over as cf->granted). The calls that no
 * such layer can judge reach this supervisor as seccomp user
 * notifications (SECCOMP_RET_USER_NOTIF) and are answered here, by sbx,
 * outside the sandbox, with the whole policy in view:
 *
 *  - creating, opening for writing, removing, renaming and linking entries
 *    of a folder that holds a protected or denied path (a "hole"), and of
 *    the folders made in one during the run, and bind(2)'s Unix names:
 *    sbx performs these operations itself, refusing the held names, on
 *    what it resolved. Where the kernel grants the write the call may go
 *    on and be judged again there: a path raced after the check reaches
 *    only what the grant allows.
 *  - metadata (chmod, utimes, extended attributes), where the backend asks
 *    for it: judged by the path of the file it would change, and performed
 *    here on the file sbx resolved itself, or refused;
 *  - with the backend's own rules in cf (own_mounts: paths resolve in the
 *    sandbox's root and its mounts judge what no rule holds), network,
 *    signal and watch calls where the kernel's scopes are missing.
 *
 * Invariants: every argument is read once from the target's memory into
 * sbx's own, and the notification is checked to be still valid (the pid
 * not reused) before anything is acted on; paths are resolved from
 * descriptors sbx opened itself, with magic links refused, and judged by
 * the kernel's own name of what was opened; what sbx performs, it performs
 * on that descriptor, never on a path it built. The supervisor is a thread
 * of sbx's own with its own umask and working folder (unshare(CLONE_FS))
 * and the command's capabilities (capset() on the thread), so a file it
 * creates is the file the command would have created. A refusal is
 * recorded (the first few, and a count) for the result.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#ifdef __linux__
#include <sched.h>
#include <sys/syscall.h>
#endif
#include "sbx.h"

#ifdef __linux__

/* The seccomp notification ABI (stable; spelled out, no kernel headers). */
struct sdata {
	int32_t		nr;
	uint32_t	arch;
	uint64_t	ip;
	uint64_t	args[6];
};

struct snotif {
	uint64_t	id;
	uint32_t	pid;
	uint32_t	flags;
	struct sdata	data;
};

struct sresp {
	uint64_t	id;
	int64_t		val;
	int32_t		error;
	uint32_t	flags;
};

struct saddfd {
	uint64_t	id;
	uint32_t	flags;
	uint32_t	srcfd;
	uint32_t	newfd;
	uint32_t	newfd_flags;
};

#define IOC_NOTIF_RECV		0xc0502100UL
#define IOC_NOTIF_SEND		0xc0182101UL
#define IOC_NOTIF_ID_VALID	0x40082102UL
#define IOC_NOTIF_ADDFD		0x40182103UL
#define IOC_NOTIF_SET_FLAGS	0x40082104UL
#define RESP_CONTINUE		1U
#define ADDFD_SEND		2U
#define FD_SYNC_WAKE_UP		1ULL

#define NR_openat2		437
#define RESOLVE_NO_MAGICLINKS	0x02ULL
#define RESOLVE_IN_ROOT		0x10ULL
#define AT_FD_CWD		(-100)

#define MAX_GRANTED	4096	/* folders with a kernel write grant */
#define MAX_LINK_DEPTH	40

/* What a trapped call does, once its arguments are read. */
enum op {
	OP_OPEN, OP_MKDIR, OP_MKNOD, OP_UNLINK, OP_RMDIR, OP_RENAME, OP_LINK,
	OP_SYMLINK, OP_TRUNCATE, OP_CHMOD, OP_UTIMES, OP_SETXATTR,
	OP_REMOVEXATTR, OP_CONNECT, OP_BIND, OP_LISTEN, OP_SENDTO, OP_SENDMSG,
	OP_SENDMMSG, OP_KILL, OP_TKILL, OP_TGKILL, OP_SIGQUEUE, OP_TGSIGQUEUE,
	OP_PIDFD_SIGNAL, OP_FCNTL, OP_IOCTL, OP_WATCH, NOPS
};

static const char *const op_names[NOPS] = {
	"open", "mkdir", "mknod", "unlink", "rmdir", "rename", "link",
	"symlink", "truncate", "chmod", "utimes", "setxattr", "removexattr",
	"connect", "bind", "listen", "sendto", "sendmsg", "sendmmsg",
	"kill", "tkill", "tgkill", "sigqueue", "tgsigqueue",
	"pidfd_send_signal", "fcntl", "ioctl", "watch"
};

/*
 * Each trapped call's arguments: which hold the folder descriptor, the
 * path, the second folder and path (rename, link), the flags, the mode, a
 * descriptor (the f* forms), and its own shape. -1: not there.
 */
enum shape { SH_PLAIN, SH_OPEN2, SH_UTIME, SH_UTIMES, SH_UTIMENS,
    SH_AT_FLAGS };

struct sysc {
	int		nr;
	enum op		op;
	signed char	dirfd, path, dirfd2, path2, flags, mode, fd;
	unsigned char	shape;
	unsigned char	nofollow;	/* acts on a final symlink itself */
	int		fixed_flags;	/* creat(2): O_CREAT|O_WRONLY|O_TRUNC */
};

#if defined(__x86_64__)
static const struct sysc calls[] = {
	{ 2,   OP_OPEN,     -1, 0, -1, -1, 1, 2, -1, SH_PLAIN, 0, 0 },
	{ 257, OP_OPEN,      0, 1, -1, -1, 2, 3, -1, SH_PLAIN, 0, 0 },
	{ 85,  OP_OPEN,     -1, 0, -1, -1, -1, 1, -1, SH_PLAIN, 0,
	    O_CREAT | O_WRONLY | O_TRUNC },
	{ NR_openat2, OP_OPEN, 0, 1, -1, -1, -1, -1, -1, SH_OPEN2, 0, 0 },
	{ 83,  OP_MKDIR,    -1, 0, -1, -1, -1, 1, -1, SH_PLAIN, 1, 0 },
	{ 258, OP_MKDIR,     0, 1, -1, -1, -1, 2, -1, SH_PLAIN, 1, 0 },
	{ 133, OP_MKNOD,    -1, 0, -1, -1, -1, 1, -1, SH_PLAIN, 1, 0 },
	{ 259, OP_MKNOD,     0, 1, -1, -1, -1, 2, -1, SH_PLAIN, 1, 0 },
	{ 87,  OP_UNLINK,   -1, 0, -1, -1, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 263, OP_UNLINK,    0, 1, -1, -1, 2, -1, -1, SH_PLAIN, 1, 0 },
	{ 84,  OP_RMDIR,    -1, 0, -1, -1, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 82,  OP_RENAME,   -1, 0, -1, 1, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 264, OP_RENAME,    0, 1, 2, 3, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 316, OP_RENAME,    0, 1, 2, 3, 4, -1, -1, SH_PLAIN, 1, 0 },
	{ 86,  OP_LINK,     -1, 0, -1, 1, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 265, OP_LINK,      0, 1, 2, 3, 4, -1, -1, SH_PLAIN, 1, 0 },
	{ 88,  OP_SYMLINK,  -1, 0, -1, 1, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 266, OP_SYMLINK,  -1, 0, 1, 2, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 76,  OP_TRUNCATE, -1, 0, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 90,  OP_CHMOD,    -1, 0, -1, -1, -1, 1, -1, SH_PLAIN, 0, 0 },
	{ 91,  OP_CHMOD,    -1, -1, -1, -1, -1, 1, 0, SH_PLAIN, 0, 0 },
	{ 268, OP_CHMOD,     0, 1, -1, -1, -1, 2, -1, SH_PLAIN, 0, 0 },
	{ 452, OP_CHMOD,     0, 1, -1, -1, 3, 2, -1, SH_AT_FLAGS, 0, 0 },
	{ 132, OP_UTIMES,   -1, 0, -1, -1, -1, -1, -1, SH_UTIME, 0, 0 },
	{ 235, OP_UTIMES,   -1, 0, -1, -1, -1, -1, -1, SH_UTIMES, 0, 0 },
	{ 261, OP_UTIMES,    0, 1, -1, -1, -1, -1, -1, SH_UTIMES, 0, 0 },
	{ 280, OP_UTIMES,    0, 1, -1, -1, 3, -1, -1, SH_UTIMENS, 0, 0 },
	{ 188, OP_SETXATTR, -1, 0, -1, -1, 4, -1, -1, SH_PLAIN, 0, 0 },
	{ 189, OP_SETXATTR, -1, 0, -1, -1, 4, -1, -1, SH_PLAIN, 1, 0 },
	{ 190, OP_SETXATTR, -1, -1, -1, -1, 4, -1, 0, SH_PLAIN, 0, 0 },
	{ 197, OP_REMOVEXATTR, -1, 0, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 198, OP_REMOVEXATTR, -1, 0, -1, -1, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 199, OP_REMOVEXATTR, -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 42,  OP_CONNECT,  -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 49,  OP_BIND,     -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 50,  OP_LISTEN,   -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 44,  OP_SENDTO,   -1, -1, -1, -1, 3, -1, 0, SH_PLAIN, 0, 0 },
	{ 46,  OP_SENDMSG,  -1, -1, -1, -1, 2, -1, 0, SH_PLAIN, 0, 0 },
	{ 307, OP_SENDMMSG, -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 62,  OP_KILL,     -1, -1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 200, OP_TKILL,    -1, -1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 234, OP_TGKILL,   -1, -1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 129, OP_SIGQUEUE, -1, -1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 297, OP_TGSIGQUEUE, -1, -1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 424, OP_PIDFD_SIGNAL, -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 72,  OP_FCNTL,    -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 16,  OP_IOCTL,    -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 254, OP_WATCH,    -1, 1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
};
#elif defined(__aarch64__)
static const struct sysc calls[] = {
	{ 56,  OP_OPEN,      0, 1, -1, -1, 2, 3, -1, SH_PLAIN, 0, 0 },
	{ NR_openat2, OP_OPEN, 0, 1, -1, -1, -1, -1, -1, SH_OPEN2, 0, 0 },
	{ 34,  OP_MKDIR,     0, 1, -1, -1, -1, 2, -1, SH_PLAIN, 1, 0 },
	{ 33,  OP_MKNOD,     0, 1, -1, -1, -1, 2, -1, SH_PLAIN, 1, 0 },
	{ 35,  OP_UNLINK,    0, 1, -1, -1, 2, -1, -1, SH_PLAIN, 1, 0 },
	{ 38,  OP_RENAME,    0, 1, 2, 3, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 276, OP_RENAME,    0, 1, 2, 3, 4, -1, -1, SH_PLAIN, 1, 0 },
	{ 37,  OP_LINK,      0, 1, 2, 3, 4, -1, -1, SH_PLAIN, 1, 0 },
	{ 36,  OP_SYMLINK,  -1, 0, 1, 2, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 45,  OP_TRUNCATE, -1, 0, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 52,  OP_CHMOD,    -1, -1, -1, -1, -1, 1, 0, SH_PLAIN, 0, 0 },
	{ 53,  OP_CHMOD,     0, 1, -1, -1, -1, 2, -1, SH_PLAIN, 0, 0 },
	{ 452, OP_CHMOD,     0, 1, -1, -1, 3, 2, -1, SH_AT_FLAGS, 0, 0 },
	{ 88,  OP_UTIMES,    0, 1, -1, -1, 3, -1, -1, SH_UTIMENS, 0, 0 },
	{ 5,   OP_SETXATTR, -1, 0, -1, -1, 4, -1, -1, SH_PLAIN, 0, 0 },
	{ 6,   OP_SETXATTR, -1, 0, -1, -1, 4, -1, -1, SH_PLAIN, 1, 0 },
	{ 7,   OP_SETXATTR, -1, -1, -1, -1, 4, -1, 0, SH_PLAIN, 0, 0 },
	{ 14,  OP_REMOVEXATTR, -1, 0, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 15,  OP_REMOVEXATTR, -1, 0, -1, -1, -1, -1, -1, SH_PLAIN, 1, 0 },
	{ 16,  OP_REMOVEXATTR, -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 203, OP_CONNECT,  -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 200, OP_BIND,     -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 201, OP_LISTEN,   -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 206, OP_SENDTO,   -1, -1, -1, -1, 3, -1, 0, SH_PLAIN, 0, 0 },
	{ 211, OP_SENDMSG,  -1, -1, -1, -1, 2, -1, 0, SH_PLAIN, 0, 0 },
	{ 269, OP_SENDMMSG, -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 129, OP_KILL,     -1, -1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 130, OP_TKILL,    -1, -1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 131, OP_TGKILL,   -1, -1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 138, OP_SIGQUEUE, -1, -1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 240, OP_TGSIGQUEUE, -1, -1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
	{ 424, OP_PIDFD_SIGNAL, -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 25,  OP_FCNTL,    -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 29,  OP_IOCTL,    -1, -1, -1, -1, -1, -1, 0, SH_PLAIN, 0, 0 },
	{ 27,  OP_WATCH,    -1, 1, -1, -1, -1, -1, -1, SH_PLAIN, 0, 0 },
};
#else
static const struct sysc calls[] = { { -1, OP_OPEN, -1, -1, -1, -1, -1, -1,
    -1, SH_PLAIN, 0, 0 } };
#endif
#define NCALLS	(sizeof(calls) / sizeof(calls[0]))

/* A folder with a kernel write grant, by inode. */
struct inode {
	dev_t	dev;
	ino_t	ino;
};

/* A port on loopback, or an abstract name, that the sandbox bound. */
struct bound {
	int		 port;
	int		 type;		/* SOCK_STREAM, SOCK_DGRAM; 0: abstract */
	ino_t		 ino;		/* the socket's: still the same one? */
	char		 name[108];	/* abstract: the name, NUL bytes as '@' */
};

struct sup {
	struct rule	*r;		/* the policy's rules, in order */
	size_t		 n;
	int		 net;		/* judged here: NET_NONE or NET_PROXY */
	int		 scope;		/* signals, abstract sockets: judged here */
	pid_t		 keeper;	/* whose descendants the sandbox is */
	int		 proxy_port;	/* the proxy's own, on 127.0.0.1 */
	int		 local[LOCAL_MAX];	/* the host's loopback ports
					   the command may connect to */
	size_t		 nlocal;
	struct bound	*bound;		/* the sandbox's loopback ports */
	size_t		 nbound;
	size_t		 capbound;
	struct inode	*granted;	/* folders the kernel lets write below */
	size_t		 ngranted;
	int		 own_mounts;	/* resolve in the sandbox's root; its
					   mounts judge */
	int		 hold_git;	/* new git folders are held */
	int		 root;		/* the sandbox's "/", opened once */
	struct inode	*held;		/* the rules' folders, as checked */
	enum rule_kind	*heldkind;	/* when sbx started, and their kinds */
	size_t		 nheld;
	int		 keep_caps;	/* the command's capabilities (root) */
	int		 listener;
	int		 stop[2];	/* a byte on stop[1] ends the thread */
	pthread_t	 thread;
	int		 running;
	pthread_mutex_t	 lock;		/* denied, ndenied */
	pthread_mutex_t	 slow_lock;	/* slow, nslow */
	pthread_cond_t	 slow_done;
	struct slow_open *slow;		/* FIFO opens that wait */
	int		 nslow;
	struct strv	 denied;
	uint64_t	 ndenied;
};

/* One trapped call, its arguments in sbx's own memory. */
struct req {
	const struct sysc *c;
	struct snotif	 n;
	char		 path[PATH_MAX];
	char		 path2[PATH_MAX];
	int		 flags;
	unsigned	 mode;
	int		 follow;
	int		 kernel;	/* only the kernel can do this one */
};

/* ---- the policy, by path ---- */

/*
 * The rule that decides path: the last one at or above it. /proc, /sys
 * and /dev are never written, whatever a rule says (as with the sandbox's
 * own mounts, made after the rules).
 */
static enum rule_kind
decide(const struct sup *s, const char *path)
{
	enum rule_kind k = RULE_READONLY;
	size_t i;

	if (path_under(path, "/proc") || path_under(path, "/sys") ||
	    path_under(path, "/dev"))
		return RULE_READONLY;
	for (i = 0; i < s->n; i++)
		if (path_under(path, s->r[i].path))
			k = s->r[i].kind;
	return k;
}

/* path is a writable folder's entry that holds an exception below it. */
static int
holds_exception(const struct sup *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->r[i].kind != RULE_WRITE &&
		    strcmp(s->r[i].path, path) != 0 &&
		    path_under(s->r[i].path, path))
			return 1;
	return 0;
}

/* ---- denials ---- */

static void
deny_text(struct sup *s, const char *text)
{
	pthread_mutex_lock(&s->lock);
	s->ndenied++;
	denied_push(&s->denied, text, strlen(text));
	pthread_mutex_unlock(&s->lock);
}

static void
deny_note(struct sup *s, enum op op, const char *path)
{
	char *t = xasprintf("%s %s", op_names[op], path);

	deny_text(s, t);
	free(t);
}

static void refusal_text(const struct snotif *, char *, size_t);

/* ---- reading the target ---- */

/* A string from the target's memory, a page at a time. */
static int
read_str(pid_t pid, uint64_t addr, char *buf, size_t max)
{
	size_t got = 0, chunk;
	struct iovec l, r;
	ssize_t n;

	if (addr == 0)
		return errno = EFAULT, -1;
	while (got < max) {
		chunk = 4096 - ((addr + got) & 4095);
		if (chunk > max - got)
			chunk = max - got;
		l.iov_base = buf + got;
		l.iov_len = chunk;
		r.iov_base = (void *)(uintptr_t)(addr + got);
		r.iov_len = chunk;
		if ((n = process_vm_readv(pid, &l, 1, &r, 1, 0)) <= 0)
			return errno = EFAULT, -1;
		if (memchr(buf + got, '\0', (size_t)n) != NULL)
			return 0;
		got += (size_t)n;
	}
	return errno = ENAMETOOLONG, -1;
}

static int
read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l, r;

	l.iov_base = buf;
	l.iov_len = len;
	r.iov_base = (void *)(uintptr_t)addr;
	r.iov_len = len;
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 :
	    (errno = EFAULT, -1);
}

static int
still_valid(const struct sup *s, const struct req *q)
{
	uint64_t id = q->n.id;

	return ioctl(s->listener, IOC_NOTIF_ID_VALID, &id) == 0;
}

/* The target's umask, from /proc (Linux 4.7 and later). */
static unsigned
target_umask(pid_t pid)
{
	char path[64], buf[2048], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 022;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 022;
	buf[n] = '\0';
	if ((p = strstr(buf, "\nUmask:\t")) == NULL)
		return 022;
	return (unsigned)strtoul(p + 8, NULL, 8) & 0777;
}

/* ---- resolving, as the target would ---- */

/* The folder a relative path starts from: the target's cwd or dirfd. */
static int
base_fd(const struct req *q, int dirfd)
{
	char path[64];

	if (dirfd == AT_FD_CWD)
		snprintf(path, sizeof(path), "/proc/%u/cwd", q->n.pid);
	else
		snprintf(path, sizeof(path), "/proc/%u/fd/%d", q->n.pid, dirfd);
	return open(path, O_PATH | O_CLOEXEC);
}

struct openhow {
	uint64_t	flags;
	uint64_t	mode;
	uint64_t	resolve;
};

/* openat2() with magic links refused: /proc/self is sbx's, not theirs. */
static int
open_in(int dir, const char *path, int flags)
{
	struct openhow how;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.resolve = RESOLVE_NO_MAGICLINKS;
	return (int)syscall(NR_openat2, dir, path, &how, sizeof(how));
}

/* The kernel's name of what fd opened; " (deleted)" taken off. */
static int
fd_path(int fd, char *out, size_t size)
{
	struct stat st;
	char link[64];
	ssize_t n;
	size_t dl = sizeof(" (deleted)") - 1;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, out, size - 1)) <= 0 || out[0] != '/')
		return errno = ENOENT, -1;
	out[n] = '\0';
	/* The kernel's mark of a removed file, unless the name is the
	 * file's own ("x (deleted)" is a name anyone may give). */
	if ((size_t)n > dl && strcmp(out + n - dl, " (deleted)") == 0 &&
	    fstat(fd, &st) == 0 && st.st_nlink == 0)
		out[n - dl] = '\0';
	return 0;
}

/*
 * path as the target would reach it, magic links refused: an absolute one
 * (or a link to one) from the sandbox's own "/", never sbx's. With its
 * own mounts a relative one starts from the kernel's name of its folder in
 * the sandbox, so that ".." and links lead where they lead there.
 */
static int
open_root(const struct sup *s, const char *path, int flags)
{
	struct openhow how;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.resolve = RESOLVE_NO_MAGICLINKS | RESOLVE_IN_ROOT;
	return (int)syscall(NR_openat2, s->root, path, &how, sizeof(how));
}

static int
resolve_at(const struct sup *s, int base, const char *path, int flags)
{
	char full[PATH_MAX];

	if (path[0] == '/')
		return open_root(s, path, flags);
	if (!s->own_mounts)
		return open_in(base, path, flags);
	if (fd_path(base, full, sizeof(full)) < 0)
		return -1;
	if (strlen(full) + strlen(path) + 2 > sizeof(full))
		return errno = ENAMETOOLONG, -1;
	strcat(strcmp(full, "/") ? strcat(full, "/") : full, path);
	return open_root(s, full, flags);
}

/* dir's entry name, a link followed as the target would follow it. */
static int
open_follow(const struct sup *s, int dir, const char *name, int flags)
{
	return resolve_at(s, dir, name, flags);
}

/*
 * A path split into its folder, opened (following links as the kernel
 * would, magic links refused), and its last name. "/" and names ending in
 * "/", "." or ".." have no last name of their own: ENOENT-like cases go
 * back to the kernel by the caller (EINVAL here).
 */
static int
open_parent(const struct sup *s, const struct req *q, int dirfd,
    const char *path, char *name, size_t namesize)
{
	char dir[PATH_MAX];
	const char *slash;
	int base, fd;
	size_t len = strlen(path);

	if (len == 0)
		return errno = ENOENT, -1;
	while (len > 1 && path[len - 1] == '/')
		len--;
	memcpy(dir, path, len);
	dir[len] = '\0';
	slash = strrchr(dir, '/');
	if (strlen(slash ? slash + 1 : dir) >= namesize)
		return errno = ENAMETOOLONG, -1;
	strcpy(name, slash ? slash + 1 : dir);
	if (name[0] == '\0' || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		return errno = EINVAL, -1;
	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		dir[slash - dir] = '\0';
	if (dir[0] == '/')
		return open_root(s, dir, O_PATH | O_DIRECTORY);
	if ((base = base_fd(q, dirfd)) < 0)
		return -1;
	fd = resolve_at(s, base, dir, O_PATH | O_DIRECTORY);
	close(base);
	return fd;
}

/* ---- the fast path: does the kernel grant writes here? ---- */

static int
granted_inode(const struct sup *s, const struct stat *st)
{
	size_t i;

	for (i = 0; i < s->ngranted; i++)
		if (s->granted[i].dev == st->st_dev &&
		    s->granted[i].ino == st->st_ino)
			return 1;
	return 0;
}

/* dir, or a folder above it, holds a kernel write grant. */
static int
kernel_writes(const struct sup *s, int dir)
{
	struct stat st, up;
	int fd = dup(dir), next, depth;

	if (fd < 0)
		return 0;
	for (depth = 0; depth < 256; depth++) {
		if (fstat(fd, &st) < 0)
			break;
		if (granted_inode(s, &st)) {
			close(fd);
			return 1;
		}
		if ((next = openat(fd, "..", O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) < 0)
			break;
		close(fd);
		fd = next;
		if (fstat(fd, &up) == 0 && up.st_dev == st.st_dev &&
		    up.st_ino == st.st_ino)
			break;	/* "/" */
	}
	close(fd);
	return 0;
}

/* ---- answers ---- */

static void
answer(struct sup *s, const struct req *q, int64_t val, int err)
{
	struct sresp r;

	memset(&r, 0, sizeof(r));
	r.id = q->n.id;
	r.val = val;
	r.error = err ? -err : 0;
	(void)ioctl(s->listener, IOC_NOTIF_SEND, &r);
}

static void
go_on(struct sup *s, const struct req *q)
{
	struct sresp r;

	memset(&r, 0, sizeof(r));
	r.id = q->n.id;
	r.flags = RESP_CONTINUE;
	(void)ioctl(s->listener, IOC_NOTIF_SEND, &r);
}

/* Refuse, and remember it for the result. */
static void
refuse(struct sup *s, const struct req *q, const char *path, int err)
{
	deny_note(s, q->c->op, path);
	answer(s, q, 0, err);
}

/* Hand fd to the target as the call's result, atomically. */
static void
give_fd(struct sup *s, const struct req *q, int fd, int cloexec)
{
	struct saddfd a;
	int r;

	memset(&a, 0, sizeof(a));
	a.id = q->n.id;
	a.flags = ADDFD_SEND;
	a.srcfd = (uint32_t)fd;
	a.newfd_flags = cloexec ? O_CLOEXEC : 0;
	r = ioctl(s->listener, IOC_NOTIF_ADDFD, &a);
	/* Before Linux 5.14 no ADDFD_SEND: add it, then answer its number
	 * (a signal between the two leaves the target one more descriptor,
	 * never a wrong one). */
	if (r < 0 && errno == EINVAL) {
		a.flags = 0;
		if ((r = ioctl(s->listener, IOC_NOTIF_ADDFD, &a)) >= 0)
			answer(s, q, r, 0);
	}
	if (r < 0 && errno != ENOENT)
		answer(s, q, 0, errno == EMFILE ? EMFILE : EIO);
	close(fd);
}

/* ---- what an operation lands on ---- */

enum zone {
	Z_KERNEL,	/* the kernel grants writes here: let it judge */
	Z_PERFORM,	/* writable, the kernel cannot say: sbx performs it */
	Z_READONLY,	/* not writable */
	Z_HELD,		/* a protected or --deny-write name, or a folder above one */
	Z_GITCONFIG,	/* a git folder's config: judged by its text */
	Z_DENIED	/* --deny-read */
};

/* How an operation treats the entry it names (zone_of()). */
#define ZA_AWAY		1	/* removes what is there */
#define ZA_MAKE		2	/* makes one */
#define ZA_MKDIR	4	/* makes a folder, by mkdir(2) */
#define ZA_MOVEDIR	8	/* moves a folder in */

/*
 * A held folder is judged by its inode as well as by its name: a command
 * outside (or another run) may swap it with a name that the policy lets
 * write, and then its path says nothing. The nearest folder at or above
 * pfd that a rule named decides, as the nearest rule does by name: a
 * writable folder below a read-only one (--scope in the root, -w below
 * a --deny-write folder) stays writable. None: k stands. With own mounts
 * a held folder is a mount point, which no rename moves.
 */
static enum rule_kind
held_inode(const struct sup *s, int pfd, enum rule_kind k)
{
	struct stat st, up;
	size_t i;
	int fd, next, depth;

	if (s->nheld == 0 || s->own_mounts ||
	    (fd = fcntl(pfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return k;
	for (depth = 0; depth < 256 && fstat(fd, &st) == 0; depth++) {
		for (i = s->nheld; i-- > 0; )	/* the last rule wins */
			if (s->held[i].dev == st.st_dev &&
			    s->held[i].ino == st.st_ino) {
				close(fd);
				return s->heldkind[i];
			}
		next = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (next < 0 || fstat(next, &up) < 0 ||
		    (up.st_dev == st.st_dev && up.st_ino == st.st_ino)) {
			if (next >= 0)
				close(next);
			break;
		}
		close(fd);
		fd = next;
	}
	close(fd);
	return k;
}

static int
ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), e = strlen(end);

	return n >= e && strcmp(s + n - e, end) == 0;
}

/*
 * The folder dfd (open), whose resolved path is dir, is a git folder:
 * .git, or one that has a HEAD. What cannot be looked at is taken for
 * one: a command that made a folder above unsearchable must not make its
 * holds go away.
 */
static int
git_folder_at(int dfd, const char *dir)
{
	struct stat st;

	if (ends_with(dir, "/.git"))
		return 1;
	if (fstatat(dfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	return errno != ENOENT;
}

/* The same by path alone, resolved in the sandbox's root. */
static int
git_folder(const struct sup *s, const char *dir)
{
	int fd, r;

	if (ends_with(dir, "/.git"))
		return 1;
	if ((fd = open_root(s, dir, O_PATH | O_DIRECTORY)) < 0)
		return errno != ENOENT && errno != ENOTDIR;
	r = git_folder_at(fd, dir);
	close(fd);
	return r;
}

/* The folder above dfd (dir), a git folder. */
static int
git_parent(const struct sup *s, int dfd, const char *dir)
{
	char up[PATH_MAX];
	const char *slash = strrchr(dir, '/');
	int fd, r;

	if (slash == NULL || slash == dir || (size_t)(slash - dir) >=
	    sizeof(up))
		return 0;
	memcpy(up, dir, (size_t)(slash - dir));
	up[slash - dir] = '\0';
	if (dfd < 0)
		return git_folder(s, up);
	if ((fd = openat(dfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 1;
	r = git_folder_at(fd, up);
	close(fd);
	return r;
}

#define CONFIG_MAX_	(1024 * 1024)	/* policy.c's bound on a git config */

/* What git reads in a git folder as configuration or a pointer. */
static int
git_held_name(const char *name)
{
	return strcmp(name, "config") == 0 ||
	    strcmp(name, "config.worktree") == 0 ||
	    strcmp(name, "commondir") == 0 || strcmp(name, "gitdir") == 0;
}

/*
 * A config in the folder dir (open, O_PATH) that may stand in a git
 * folder: a regular file of one name, no one writing it (a read lease is
 * granted only then), whose text holds no program. 1 when absent or so.
 */
static int
config_ok_at(int dir, const char *name, char *why, size_t whysize)
{
	struct stat st;
	char *text;
	ssize_t len;
	int fd, ok;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_size > CONFIG_MAX_)
		return 0;
	if ((fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) < 0)
		return 0;
	if (fcntl(fd, F_SETSIG, SIGURG) < 0 ||
	    fcntl(fd, F_SETLEASE, F_RDLCK) < 0) {
		close(fd);
		return 0;
	}
	text = xmalloc((size_t)st.st_size + 1);
	len = pread(fd, text, (size_t)st.st_size + 1, 0);
	ok = len == (ssize_t)st.st_size &&
	    policy_git_config_ok(text, (size_t)len, why, whysize);
	(void)fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);
	free(text);
	return ok;
}

/* A hooks folder that holds no hook: none, or a folder of *.sample. */
static int
hooks_ok_at(int dir)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd, ok = 1;

	if (fstatat(dir, "hooks", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode) || (fd = openat(dir, "hooks", O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (d = fdopendir(fd)) == NULL)
		return 0;
	while (ok && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    !ends_with(e->d_name, ".sample"))
			ok = 0;
	closedir(d);
	return ok;
}

/*
 * A HEAD made in a folder that had none makes it a git folder, whatever
 * its name: git finds a bare repository, or a folder of HEAD, objects and
 * refs, as well as a .git, and runs what its config and hooks say. So
 * what it holds then is judged as it would have been had HEAD come
 * first: a config and config.worktree whose text holds no program and
 * that no one can write, a hooks folder of samples, no commondir or
 * gitdir. A HEAD that is already there (git renames HEAD.lock over it)
 * changes nothing.
 */
static enum zone
head_zone(const struct sup *s, int dfd, const char *dir, char *why,
    size_t whysize)
{
	int fd, ok;

	if (dfd >= 0)
		fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	else
		fd = open_root(s, dir, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return Z_HELD;
	ok = faccessat(fd, "HEAD", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
	    (faccessat(fd, "commondir", F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno == ENOENT &&
	    faccessat(fd, "gitdir", F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno == ENOENT && hooks_ok_at(fd) &&
	    config_ok_at(fd, "config", why, whysize) &&
	    config_ok_at(fd, "config.worktree", why, whysize));
	close(fd);
	return ok ? Z_PERFORM : Z_HELD;
}

/*
 * A git folder made during the run is held as one that existed is: what
 * git outside reads as configuration or runs as code there cannot be made
 * but as git makes it. A git folder is one named .git or one with a HEAD,
 * anywhere (a bare repository, a submodule's or a worktree's folder, a
 * folder git would find by its HEAD, objects and refs). There: a hook
 * other than a *.sample; config and config.worktree, which only a rename
 * of a file whose text holds no program (Z_GITCONFIG) puts there;
 * commondir and gitdir, which point git at other folders; hooks, but as a
 * folder made by mkdir(2). A HEAD that makes a folder a git folder is
 * judged by what the folder already holds (head_zone()). In a .git tree,
 * no folder moved in from elsewhere, whose hooks no one judged. Anywhere,
 * a .git that is not a folder made by mkdir(2): a pointer to a git
 * folder, or a folder that comes with hooks. dir is the folder's resolved
 * path.
 */
static enum zone
git_zone(const struct sup *s, int dfd, const char *dir, const char *name,
    int how, char *why, size_t whysize)
{
	const char *base = strrchr(dir, '/') + 1;
	int tree;

	if (!s->hold_git || !(how & ZA_MAKE))
		return Z_PERFORM;
	if (strcmp(name, ".git") == 0)
		return how & ZA_MKDIR ? Z_PERFORM : Z_HELD;
	tree = ends_with(dir, "/.git") || strstr(dir, "/.git/") != NULL;
	if (tree && how & ZA_MOVEDIR)
		return Z_HELD;
	if (strcmp(base, "hooks") == 0 && (tree || git_parent(s, dfd, dir)))
		return ends_with(name, ".sample") ? Z_PERFORM : Z_HELD;
	if (strcmp(name, "HEAD") == 0)
		return head_zone(s, dfd, dir, why, whysize);
	if (!git_held_name(name) && strcmp(name, "hooks") != 0)
		return Z_PERFORM;
	if (dfd >= 0 ? !git_folder_at(dfd, dir) : !git_folder(s, dir))
		return Z_PERFORM;
	if (strcmp(name, "hooks") == 0)
		return how & ZA_MKDIR ? Z_PERFORM : Z_HELD;
	if (strcmp(name, "commondir") == 0 || strcmp(name, "gitdir") == 0)
		return Z_HELD;
	return Z_GITCONFIG;
}

/*
 * The same for a file that exists, by its resolved path: opened to write,
 * linked, truncated. Its HEAD may be written: the folder is a git folder
 * already.
 */
static enum zone
git_file_zone(const struct sup *s, const char *path)
{
	char dir[PATH_MAX], why[8];
	const char *slash = strrchr(path, '/');
	enum zone z;

	if (!s->hold_git || slash == NULL || (size_t)(slash - path) >=
	    sizeof(dir) || strcmp(slash + 1, "HEAD") == 0)
		return Z_PERFORM;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	z = git_zone(s, -1, dir[0] ? dir : "/", slash + 1, ZA_MAKE, why,
	    sizeof(why));
	return z == Z_GITCONFIG ? Z_HELD : z;
}

/* Paths of the sandbox's own: its own /dev, /proc and /sys. */
static int
own_tree(const char *path)
{
	return path_under(path, "/dev") || path_under(path, "/proc") ||
	    path_under(path, "/sys");
}

/* The entry name in the folder pfd: where it lands; its path in full. */
static enum zone
zone_of(const struct sup *s, int pfd, const char *name, int how, char *full,
    size_t size)
{
	char dir[PATH_MAX], why[256];
	enum rule_kind k;
	enum zone z;

	if (fd_path(pfd, dir, sizeof(dir)) < 0 ||
	    strlen(dir) + strlen(name) + 2 > size)
		return Z_READONLY;
	strcpy(full, strcmp(dir, "/") ? dir : "");
	strcat(full, "/");
	strcat(full, name);
	/* The sandbox's own mounts judge what no rule holds. */
	if (s->own_mounts && own_tree(full))
		return Z_PERFORM;
	k = decide(s, full);
	if (k == RULE_WRITE)
		k = held_inode(s, pfd, k);
	if (k == RULE_DENY_READ)
		return Z_DENIED;
	if (k != RULE_WRITE)
		return decide(s, dir) == RULE_WRITE ? Z_HELD :
		    s->own_mounts ? Z_PERFORM : Z_READONLY;
	/* Removing or renaming a folder above an exception carries it off. */
	if (how & ZA_AWAY && holds_exception(s, full))
		return Z_HELD;
	why[0] = '\0';
	if ((z = git_zone(s, pfd, dir, name, how, why, sizeof(why))) !=
	    Z_PERFORM) {
		if (why[0] && strlen(full) + strlen(why) + 2 <= size) {
			strcat(full, " ");
			strcat(full, why);
		}
		return z;
	}
	/*
	 * Where a grant lets the kernel write, it could do the call itself,
	 * but it reads the path again: a thread that swaps a folder on it
	 * for a link meanwhile lands the call where nothing judged it. When
	 * git folders made in the run are held, anything in a grant may be
	 * one, so sbx performs it on what it judged.
	 */
	if (s->own_mounts || s->ngranted == 0 || s->hold_git)
		return Z_PERFORM;
	return kernel_writes(s, pfd) ? Z_KERNEL : Z_PERFORM;
}

/*
 * The errno of a refusal. A held name that is not there may not be made
 * (EACCES); one that is answers as the mount point it is with own mounts
 * (held: EEXIST for mkdir, EBUSY for a rename, EROFS for a write).
 */
static int
zone_errno(enum zone z, int pfd, const char *name, int held)
{
	struct stat st;

	switch (z) {
	case Z_DENIED:
	case Z_GITCONFIG:
		return EACCES;
	case Z_HELD:
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return EACCES;
		return held;
	default:
		return EROFS;
	}
}

/*
 * The target's own descriptors by the names it may use for them:
 * /proc/self/fd/N, /proc/thread-self/fd/N, /dev/fd/N, /dev/stdin, ...
 * Resolved here, /proc/self would be sbx's. 1 with *fd set, else 0.
 */
static int
self_fd(const char *path, int *fd)
{
	static const char *const pre[] = { "/proc/self/fd/",
	    "/proc/thread-self/fd/", "/dev/fd/", NULL };
	static const char *const std[] = { "/dev/stdin", "/dev/stdout",
	    "/dev/stderr", NULL };
	const char *p;
	char *end;
	long n;
	int i;

	for (i = 0; std[i]; i++)
		if (strcmp(path, std[i]) == 0)
			return *fd = i, 1;
	for (i = 0; pre[i]; i++) {
		if (strncmp(path, pre[i], strlen(pre[i])) != 0)
			continue;
		p = path + strlen(pre[i]);
		errno = 0;
		n = strtol(p, &end, 10);
		if (*p >= '0' && *p <= '9' && *end == '\0' && !errno &&
		    n <= INT_MAX)
			return *fd = (int)n, 1;
	}
	return 0;
}

/* The target's descriptor fd, as a descriptor of sbx's own (O_PATH). */
static int
target_fd(const struct req *q, int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", q->n.pid, fd);
	return open(path, O_PATH | O_CLOEXEC);
}

/*
 * The object a metadata call names: its descriptor (O_PATH), the folder
 * and name it was found by when follow is off (for calls that act on a
 * symbolic link itself), and its path.
 */
static int
open_object(const struct sup *s, const struct req *q, int dirfd,
    const char *path, int follow, int *pfd, char *name, size_t namesize)
{
	int fd;

	*pfd = -1;
	if (q->c->path < 0 || path[0] == '\0') {
		/* The f* forms, and *at with an empty path: the descriptor. */
		return target_fd(q, q->c->path < 0 ?
		    (int)q->n.data.args[q->c->fd] : dirfd);
	}
	if (self_fd(path, &fd))
		return target_fd(q, fd);
	if ((*pfd = open_parent(s, q, dirfd, path, name, namesize)) < 0) {
		/* ".", "..", "/", "dir/": a folder named by the whole path. */
		if (errno != EINVAL)
			return -1;
		if (path[0] == '/')
			return open_root(s, path, O_PATH | O_DIRECTORY);
		if ((fd = base_fd(q, dirfd)) < 0)
			return -1;
		*pfd = resolve_at(s, fd, path, O_PATH | O_DIRECTORY);
		close(fd);
		fd = *pfd;
		*pfd = -1;
		return fd;
	}
	fd = follow ? open_follow(s, *pfd, name, O_PATH) :
	    openat(*pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/* ---- the operations ---- */

static int
open_flags(const struct req *q)
{
	return q->flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * A FIFO's open waits for the other end: on a thread of its own, so that
 * the supervisor keeps serving. At most SLOW_MAX wait at once; one whose
 * caller went away (killed, or its call interrupted by a signal) is woken
 * by SIG_SLOW, which interrupts its open(2), and so is every one when the
 * run ends.
 */
#define SLOW_MAX	64
#define SIG_SLOW	(SIGRTMIN + 1)

struct slow_open {
	struct sup	*s;
	struct req	 q;
	int		 ofd;
	pthread_t	 t;
	volatile sig_atomic_t cancel;
	struct slow_open *next;
};

static void
slow_wake(int sig)
{
	(void)sig;
}

static void *
slow_open_main(void *arg)
{
	struct slow_open *so = arg, **pp;
	struct sup *s = so->s;
	char self[64];
	sigset_t one;
	int fd = -1, err = EINTR;

	sigemptyset(&one);
	sigaddset(&one, SIG_SLOW);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", so->ofd);
	while (!so->cancel) {
		fd = open(self, open_flags(&so->q) | O_CLOEXEC | O_NOCTTY);
		if (fd >= 0 || errno != EINTR) {
			err = errno;
			break;
		}
	}
	close(so->ofd);
	if (fd < 0)
		answer(s, &so->q, 0, err);
	else
		give_fd(s, &so->q, fd, so->q.flags & O_CLOEXEC);
	pthread_mutex_lock(&s->slow_lock);
	for (pp = &s->slow; *pp; pp = &(*pp)->next)
		if (*pp == so) {
			*pp = so->next;
			break;
		}
	s->nslow--;
	pthread_cond_broadcast(&s->slow_done);
	pthread_mutex_unlock(&s->slow_lock);
	free(so);
	return NULL;
}

/* 0: answered from another thread; -1: cannot (EAGAIN: too many wait). */
static int
open_slowly(struct sup *s, const struct req *q, int ofd)
{
	pthread_attr_t attr;
	struct slow_open *so;
	int r;

	pthread_mutex_lock(&s->slow_lock);
	if (s->nslow >= SLOW_MAX) {
		pthread_mutex_unlock(&s->slow_lock);
		errno = EAGAIN;
		return -1;
	}
	so = xcalloc(1, sizeof(*so));
	so->s = s;
	so->q = *q;
	so->ofd = ofd;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	r = pthread_create(&so->t, &attr, slow_open_main, so);
	pthread_attr_destroy(&attr);
	if (r == 0) {
		so->next = s->slow;
		s->slow = so;
		s->nslow++;
	} else
		free(so);
	pthread_mutex_unlock(&s->slow_lock);
	errno = r ? EAGAIN : 0;
	return r == 0 ? 0 : -1;
}

static int still_valid(const struct sup *, const struct req *);

/* Wake the waiting opens whose caller is gone, or all of them. */
static void
slow_wake_all(struct sup *s, int all)
{
	struct slow_open *so;

	pthread_mutex_lock(&s->slow_lock);
	for (so = s->slow; so; so = so->next) {
		if (all || (!so->cancel && !still_valid(s, &so->q)))
			so->cancel = 1;
		if (so->cancel)
			pthread_kill(so->t, SIG_SLOW);
	}
	pthread_mutex_unlock(&s->slow_lock);
}

static pid_t stat_field(pid_t, int);

/*
 * /dev/tty opened by sbx would be sbx's own terminal: the target's
 * controlling terminal (tty_nr in /proc/PID/stat) is reopened through
 * whichever of its standard descriptors is that terminal. None: ENXIO, as
 * the kernel answers a process without one.
 */
static void
ctty_open(struct sup *s, const struct req *q)
{
	char path[64];
	struct stat st;
	dev_t tty = (dev_t)stat_field((pid_t)q->n.pid, 4);
	int i, fd;

	for (i = 0; tty != 0 && i < 3; i++) {
		snprintf(path, sizeof(path), "/proc/%u/fd/%d", q->n.pid, i);
		if (stat(path, &st) < 0 || !S_ISCHR(st.st_mode) ||
		    st.st_rdev != tty)
			continue;
		if ((fd = open(path, open_flags(q) | O_CLOEXEC |
		    O_NOCTTY)) < 0)
			answer(s, q, 0, errno);
		else
			give_fd(s, q, fd, q->flags & O_CLOEXEC);
		return;
	}
	answer(s, q, 0, ENXIO);
}

/*
 * What an existing object opened for writing may be: the policy's say by
 * its path where no kernel grant judges it, a held file of
 * a git folder made in the run on every backend. 0, or the errno.
 */
static int
existing_ok(const struct sup *s, const char *path)
{
	if (s->own_mounts)
		return git_file_zone(s, path) == Z_PERFORM ? 0 : EACCES;
	if (decide(s, path) != RULE_WRITE)
		return decide(s, path) == RULE_DENY_READ ? EACCES : EROFS;
	return git_file_zone(s, path) == Z_PERFORM ? 0 : EACCES;
}

/*
 * A device sbx may open for writing on the command's behalf where the
 * kernel's grants judge: those they let it open (sbx_devices), and a
 * terminal's other end (--tty). The sandbox's own /dev holds no other.
 */
static int
device_ok(const struct stat *st)
{
	struct stat d;
	unsigned maj = major(st->st_rdev);
	size_t i;

	if (!S_ISCHR(st->st_mode))
		return 0;
	if ((maj >= 136 && maj <= 143) || st->st_rdev == makedev(5, 2))
		return 1;
	for (i = 0; sbx_devices[i]; i++)
		if (stat(sbx_devices[i], &d) == 0 && S_ISCHR(d.st_mode) &&
		    d.st_rdev == st->st_rdev)
			return 1;
	return 0;
}

/* What the object ofd reached may be written: 0, or the errno. */
static int
object_ok(const struct sup *s, const char *path, const struct stat *st)
{
	if (S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode))
		return 0;	/* no file's text: a pipe's, a socket's */
	if (!s->own_mounts && (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)))
		return device_ok(st) ? 0 : EACCES;
	if (path[0] != '/')
		return s->own_mounts ? 0 : EACCES;	/* anon_inode:[...] */
	return existing_ok(s, path);
}

/* ofd (O_PATH), reached by the call, opened as it asks and handed over. */
static void
open_reached(struct sup *s, const struct req *q, int ofd)
{
	char path[PATH_MAX], self[64];
	struct stat st;
	int fd, err;

	/* A pipe, a socket, an anonymous inode: no path ("pipe:[N]"). */
	if (fstat(ofd, &st) < 0) {
		close(ofd);
		refuse(s, q, q->path, EACCES);
		return;
	}
	if (fd_path(ofd, path, sizeof(path)) < 0) {
		if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
			close(ofd);
			refuse(s, q, q->path, EACCES);
			return;
		}
		path[0] = '\0';
	}
	if ((err = object_ok(s, path, &st)) != 0) {
		close(ofd);
		refuse(s, q, path, err);
		return;
	}
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0)) {
		close(ofd);
		ctty_open(s, q);
		return;
	}
	if (S_ISFIFO(st.st_mode) && !(q->flags & O_NONBLOCK)) {
		if (open_slowly(s, q, ofd) == 0)
			return;
		close(ofd);
		answer(s, q, 0, EAGAIN);
		return;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", ofd);
	fd = open(self, open_flags(q) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	close(ofd);
	if (fd >= 0 && !(q->flags & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (fd < 0)
		answer(s, q, 0, errno);
	else
		give_fd(s, q, fd, q->flags & O_CLOEXEC);
}

/* An existing entry opened for writing in a folder sbx performs for. */
static void
open_existing(struct sup *s, const struct req *q, int pfd, const char *name,
    int ofd)
{
	struct stat st;

	if (fstat(ofd, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (!q->follow) {
			close(ofd);
			answer(s, q, 0, ELOOP);
			return;
		}
		close(ofd);
		if ((ofd = open_follow(s, pfd, name, O_PATH)) < 0) {
			answer(s, q, 0, errno == ELOOP ? EACCES : errno);
			return;
		}
	}
	if (q->flags & O_CREAT && q->flags & O_EXCL) {
		close(ofd);
		answer(s, q, 0, EEXIST);
		return;
	}
	/* A link may lead anywhere: judge what it reached. */
	open_reached(s, q, ofd);
}

/* A set-id file is never made: the filter's own refusal, as it words it. */
static void
refuse_setid(struct sup *s, const struct req *q)
{
	char text[STATUS_TEXT_MAX];

	refusal_text(&q->n, text, sizeof(text));
	deny_text(s, text);
	answer(s, q, 0, EPERM);
}

/* open(2) and its kin with a writing flag, where the kernel cannot judge. */
static void
do_open(struct sup *s, const struct req *q, int pfd, const char *name)
{
	unsigned mode = q->mode & 07777 & ~target_umask(q->n.pid);
	int ofd, fd, tries;

	if (q->flags & O_CREAT && q->mode & (S_ISUID | S_ISGID)) {
		refuse_setid(s, q);
		return;
	}
	for (tries = 0; tries < 8; tries++) {
		ofd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (ofd >= 0) {
			open_existing(s, q, pfd, name, ofd);
			return;
		}
		if (errno != ENOENT || !(q->flags & O_CREAT)) {
			answer(s, q, 0, errno);
			return;
		}
		/* O_NOFOLLOW and O_EXCL: nothing planted meanwhile is used. */
		fd = openat(pfd, name, q->flags | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC | O_NOCTTY, mode);
		if (fd >= 0) {
			give_fd(s, q, fd, q->flags & O_CLOEXEC);
			return;
		}
		if (errno != EEXIST && errno != ELOOP) {
			answer(s, q, 0, errno);
			return;
		}
		if (q->flags & O_EXCL) {
			answer(s, q, 0, EEXIST);
			return;
		}
	}
	answer(s, q, 0, EAGAIN);
}

/* O_TMPFILE: the path names the folder, which gets an unnamed file. */
static void
do_tmpfile(struct sup *s, const struct req *q, int dirfd)
{
	unsigned mode = q->mode & 07777 & ~target_umask(q->n.pid);
	char path[PATH_MAX];
	int base = -1, dfd, fd;

	if (q->mode & (S_ISUID | S_ISGID)) {
		refuse_setid(s, q);
		return;
	}
	if (q->path[0] == '/')
		dfd = open_root(s, q->path, O_PATH | O_DIRECTORY);
	else if ((base = base_fd(q, dirfd)) >= 0)
		dfd = resolve_at(s, base, q->path, O_PATH | O_DIRECTORY);
	else
		dfd = -1;
	if (base >= 0)
		close(base);
	if (dfd < 0) {
		answer(s, q, 0, errno == ELOOP ? EACCES : errno);
		return;
	}
	if (fd_path(dfd, path, sizeof(path)) < 0 ||
	    (!s->own_mounts && decide(s, path) != RULE_WRITE)) {
		refuse(s, q, path, EROFS);
	} else if (!s->own_mounts && !s->hold_git && kernel_writes(s, dfd)) {
		go_on(s, q);
	} else if ((fd = openat(dfd, ".", q->flags | O_CLOEXEC, mode)) < 0) {
		answer(s, q, 0, errno);
	} else
		give_fd(s, q, fd, q->flags & O_CLOEXEC);
	close(dfd);
}

/* mkdir, mknod, unlink, rmdir, symlink: one entry of one folder. */
static void
do_entry(struct sup *s, const struct req *q, int pfd, const char *name)
{
	unsigned mode = q->mode & 07777 & ~target_umask(q->n.pid);
	int r = -1, rmdir = q->c->op == OP_RMDIR ||
	    (q->c->op == OP_UNLINK && q->flags & AT_REMOVEDIR);

	switch (q->c->op) {
	case OP_MKDIR:
		r = mkdirat(pfd, name, mode);
		break;
	case OP_MKNOD:
		r = mknodat(pfd, name, (q->mode & S_IFMT) | mode, 0);
		break;
	case OP_UNLINK:
	case OP_RMDIR:
		r = unlinkat(pfd, name, rmdir ? AT_REMOVEDIR : 0);
		break;
	case OP_SYMLINK:
		r = symlinkat(q->path, pfd, name);
		break;
	default:
		errno = ENOSYS;
		break;
	}
	answer(s, q, 0, r < 0 ? errno : 0);
}

/* The errno a held name that exists gives, by operation: a mount's. */
static int
held_errno(enum op op)
{
	switch (op) {
	case OP_MKDIR: case OP_MKNOD: case OP_SYMLINK: case OP_LINK:
		return EEXIST;
	case OP_UNLINK: case OP_RMDIR: case OP_RENAME:
		return EBUSY;
	default:
		return EROFS;
	}
}

/* How an operation on one entry treats it (ZA_*). */
static int
entry_how(const struct req *q)
{
	switch (q->c->op) {
	case OP_UNLINK: case OP_RMDIR:
		return ZA_AWAY;
	case OP_MKDIR:
		return ZA_MAKE | ZA_MKDIR;
	case OP_OPEN:
		return q->flags & O_CREAT ? ZA_MAKE : 0;
	case OP_SYMLINK:
		/* A link at a missing folder above held paths (~/.config
		 * for .config/git/config) would lead them all elsewhere:
		 * refused as a removal of that folder is. */
		return ZA_MAKE | ZA_AWAY;
	default:
		return ZA_MAKE;
	}
}

/*
 * The target's own descriptor reopened (/proc/self/fd/N, /dev/stdout):
 * sbx reopens it through the target's /proc and judges what it reached.
 * Under the kernel's grants it may be judged again when no git folder made
 * in the run is held: a file that a grant lets write is then one that sbx
 * would let write (a held one is outside every grant).
 */
static void
reopen_own(struct sup *s, const struct req *q, int fd)
{
	int ofd;

	if (!s->own_mounts && !s->hold_git) {
		go_on(s, q);
		return;
	}
	if ((ofd = target_fd(q, fd)) < 0)
		answer(s, q, 0, errno == ENOENT ? EBADF : errno);
	else
		open_reached(s, q, ofd);
}

/* What the kernel answers for ".", ".." or "/" as the entry to act on. */
static int
dot_errno(const struct req *q)
{
	switch (q->c->op) {
	case OP_MKDIR: case OP_MKNOD: case OP_SYMLINK:
		return EEXIST;
	case OP_RMDIR:
		return EINVAL;
	case OP_UNLINK:
		return q->flags & AT_REMOVEDIR ? EINVAL : EISDIR;
	default:
		return EISDIR;
	}
}

/* An operation on one entry of one folder (open, mkdir, unlink, ...). */
static void
one_entry(struct sup *s, const struct req *q, int dirfd)
{
	const char *path = q->c->op == OP_SYMLINK ? q->path2 : q->path;
	char name[NAME_MAX + 1], full[PATH_MAX];
	int pfd, fd;
	enum zone z;

	if (q->c->op == OP_OPEN && self_fd(q->path, &fd)) {
		reopen_own(s, q, fd);
		return;
	}
	if (q->c->op == OP_OPEN && strncmp(q->path, "/proc/", 6) == 0) {
		/* The sandbox's own /proc is read-only whole; no grant lets
		 * write below /proc but through a link there to a file
		 * elsewhere (/proc/self/fd/N/name, /proc/PID/cwd/name),
		 * which the kernel judges by where the file is: in a grant,
		 * even a held git folder made in the run. */
		if (s->own_mounts)
			answer(s, q, 0, EROFS);
		else if (s->hold_git)
			refuse(s, q, q->path, EACCES);
		else
			go_on(s, q);
		return;
	}
	if ((pfd = open_parent(s, q, dirfd, path, name, sizeof(name))) < 0) {
		/* "/", ".", "..", a name ending in "/": the kernel answers,
		 * where no name of the sandbox's can be reached by it. */
		if (errno == EINVAL && !s->own_mounts)
			go_on(s, q);
		else if (errno == EINVAL)
			answer(s, q, 0, dot_errno(q));
		else
			answer(s, q, 0, errno == ELOOP ? EACCES : errno);
		return;
	}
	z = zone_of(s, pfd, name, entry_how(q), full, sizeof(full));
	/* Devices: the kernel's own grants say which may be opened. */
	if (z == Z_KERNEL || (z == Z_READONLY && q->c->op == OP_OPEN &&
	    path_under(full, "/dev")))
		go_on(s, q);
	else if (z != Z_PERFORM)
		refuse(s, q, full, zone_errno(z, pfd, name,
		    held_errno(q->c->op)));
	else if (q->c->op == OP_OPEN)
		do_open(s, q, pfd, name);
	else
		do_entry(s, q, pfd, name);
	close(pfd);
}

/*
 * link(2)'s source as an object of its own: an empty path with
 * AT_EMPTY_PATH, or the target's /proc/self/fd/N (how an O_TMPFILE file is
 * given a name). -1 when it is an ordinary path.
 */
static int
link_source(const struct req *q, int dirfd)
{
	int fd;

	if (q->path[0] == '\0' && q->flags & AT_EMPTY_PATH)
		return target_fd(q, dirfd);
	if (self_fd(q->path, &fd))
		return target_fd(q, fd);
	return -1;
}

/*
 * A hard link by its source descriptor: into a writable folder only, and
 * never a second name for a held file of a git folder, through which it
 * could be written.
 */
static void
link_fd(struct sup *s, const struct req *q, int src, int dirfd2)
{
	char n2[NAME_MAX + 1], f2[PATH_MAX], path[PATH_MAX], self[64];
	int p2;
	enum zone z;

	if (fd_path(src, path, sizeof(path)) < 0 ||
	    (!s->own_mounts && decide(s, path) != RULE_WRITE)) {
		refuse(s, q, q->path, EXDEV);
		return;
	}
	if (git_file_zone(s, path) != Z_PERFORM) {
		refuse(s, q, path, EACCES);
		return;
	}
	if ((p2 = open_parent(s, q, dirfd2, q->path2, n2, sizeof(n2))) < 0) {
		answer(s, q, 0, errno == EINVAL ? EEXIST : errno);
		return;
	}
	z = zone_of(s, p2, n2, ZA_AWAY | ZA_MAKE, f2, sizeof(f2));
	if (z != Z_KERNEL && z != Z_PERFORM)
		refuse(s, q, f2, zone_errno(z, p2, n2, EEXIST));
	else {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", src);
		answer(s, q, 0, linkat(AT_FDCWD, self, p2, n2,
		    AT_SYMLINK_FOLLOW) < 0 ? errno : 0);
	}
	close(p2);
}

#define RENAME_EXCHANGE_	2

/*
 * A file renamed onto a git folder's config (git's config.lock): judged
 * by its text, which nothing may change between the reading and the
 * rename. A read lease (F_SETLEASE) is granted only while no one has the
 * file open for writing, and any open for writing breaks it: so the text
 * read under a lease that still holds after the rename is the text that
 * git outside will read. A lease broken meanwhile takes the new name off
 * again. The lease's break signal is SIGURG, which does nothing to sbx.
 */
static void
config_rename(struct sup *s, const struct req *q, int p1, const char *n1,
    int p2, const char *n2, const char *full)
{
	char why[256], *text = NULL;
	struct stat st, now;
	ssize_t len = -1;
	int fd, err = EACCES;

	why[0] = '\0';
	if ((fd = openat(p1, n1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) < 0) {
		answer(s, q, 0, errno == ELOOP ? EACCES : errno);
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_size > CONFIG_MAX_ ||
	    fcntl(fd, F_SETSIG, SIGURG) < 0 ||
	    fcntl(fd, F_SETLEASE, F_RDLCK) < 0)
		goto out;
	text = xmalloc((size_t)st.st_size + 1);
	len = pread(fd, text, (size_t)st.st_size + 1, 0);
	if (len != (ssize_t)st.st_size ||
	    !policy_git_config_ok(text, (size_t)len, why, sizeof(why)))
		goto out;
	if (syscall(SYS_renameat2, p1, n1, p2, n2, q->flags) < 0) {
		err = errno;
		goto out;
	}
	if (fcntl(fd, F_GETLEASE) == F_RDLCK && fstat(fd, &now) == 0 &&
	    now.st_nlink == 1 && fstatat(p2, n2, &now, AT_SYMLINK_NOFOLLOW) ==
	    0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev)
		err = 0;
	else if (fstatat(p2, n2, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
	    now.st_ino == st.st_ino && now.st_dev == st.st_dev)
		(void)unlinkat(p2, n2, 0);
out:
	(void)fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);
	free(text);
	if (err == 0)
		answer(s, q, 0, 0);
	else if (err == EACCES) {
		char *t = xasprintf("%s%s%s", full, why[0] ? " " : "", why);

		refuse(s, q, t, EACCES);
		free(t);
	} else
		answer(s, q, 0, err);
}

/* The ZA_* of rename's target: a folder moved in, or a file. */
static int
moved_how(int pfd, const char *name)
{
	struct stat st;

	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode))
		return ZA_AWAY | ZA_MAKE | ZA_MOVEDIR;
	return ZA_AWAY | ZA_MAKE;
}

/* rename(2) and link(2) by path, both folders open. */
static void
two_paths(struct sup *s, const struct req *q, int p1, const char *n1, int p2,
    const char *n2)
{
	char f1[PATH_MAX], f2[PATH_MAX];
	int link = q->c->op == OP_LINK, r;
	int swap = !link && q->flags & RENAME_EXCHANGE_;
	enum zone z1, z2;

	z1 = zone_of(s, p1, n1, link ? 0 : swap ? moved_how(p2, n2) :
	    ZA_AWAY, f1, sizeof(f1));
	z2 = zone_of(s, p2, n2, link ? ZA_AWAY | ZA_MAKE : moved_how(p1, n1),
	    f2, sizeof(f2));
	if (link && git_file_zone(s, f1) != Z_PERFORM)
		refuse(s, q, f1, EACCES);
	else if (z1 != Z_KERNEL && z1 != Z_PERFORM)
		refuse(s, q, f1, link ? EXDEV : zone_errno(z1, p1, n1, EBUSY));
	else if (z2 == Z_GITCONFIG && !link && !swap)
		config_rename(s, q, p1, n1, p2, n2, f2);
	else if (z2 != Z_KERNEL && z2 != Z_PERFORM)
		refuse(s, q, f2, zone_errno(z2, p2, n2, link ? EEXIST :
		    EBUSY));
	else if (z1 == Z_KERNEL && z2 == Z_KERNEL)
		go_on(s, q);
	else {
		if (link)
			r = linkat(p1, n1, p2, n2, 0);
		else
			r = (int)syscall(SYS_renameat2, p1, n1, p2, n2,
			    q->flags);
		answer(s, q, 0, r < 0 ? errno : 0);
	}
}

/*
 * rename(2) and link(2): two entries; the kernel judges when grants cover
 * both. A hard link is a second name of its file: into a writable folder
 * only from one, as a bind mount gives EXDEV across mounts; and renaming a
 * held name, or a folder above one, away is refused (EBUSY, a mount
 * point's answer).
 */
static void
two_entries(struct sup *s, const struct req *q, int dirfd, int dirfd2)
{
	char n1[NAME_MAX + 1], n2[NAME_MAX + 1];
	int p1 = -1, p2 = -1, link = q->c->op == OP_LINK, src;

	if (link && (src = link_source(q, dirfd)) >= 0) {
		link_fd(s, q, src, dirfd2);
		close(src);
		return;
	}
	if ((p1 = open_parent(s, q, dirfd, q->path, n1, sizeof(n1))) < 0) {
		answer(s, q, 0, errno == EINVAL ? EBUSY : errno == ELOOP ?
		    EACCES : errno);
		return;
	}
	/* Following a link: the file it reaches is what gets a name. */
	if (link && q->flags & AT_SYMLINK_FOLLOW) {
		if ((src = open_follow(s, p1, n1, O_PATH)) < 0)
			answer(s, q, 0, errno == ELOOP ? EACCES : errno);
		else {
			link_fd(s, q, src, dirfd2);
			close(src);
		}
	} else if ((p2 = open_parent(s, q, dirfd2, q->path2, n2,
	    sizeof(n2))) < 0)
		answer(s, q, 0, errno == EINVAL ? EBUSY : errno == ELOOP ?
		    EACCES : errno);
	else
		two_paths(s, q, p1, n1, p2, n2);
	close(p1);
	if (p2 >= 0)
		close(p2);
}

/* The target's times, whatever the call's shape, as timespec[2] or NULL. */
static int
read_times(const struct req *q, struct timespec *ts, struct timespec **out)
{
	uint64_t addr = q->n.data.args[q->c->path + 1];
	struct { int64_t a, m; } ub;
	struct { int64_t s, us; } tv[2];

	*out = NULL;
	if (addr == 0)
		return 0;
	*out = ts;
	switch (q->c->shape) {
	case SH_UTIME:
		if (read_mem(q->n.pid, addr, &ub, sizeof(ub)) < 0)
			return -1;
		ts[0].tv_sec = ub.a;
		ts[1].tv_sec = ub.m;
		ts[0].tv_nsec = ts[1].tv_nsec = 0;
		return 0;
	case SH_UTIMES:
		if (read_mem(q->n.pid, addr, tv, sizeof(tv)) < 0)
			return -1;
		ts[0].tv_sec = tv[0].s;
		ts[0].tv_nsec = tv[0].us * 1000;
		ts[1].tv_sec = tv[1].s;
		ts[1].tv_nsec = tv[1].us * 1000;
		return 0;
	default:
		return read_mem(q->n.pid, addr, ts, 2 * sizeof(*ts));
	}
}

/* chmod, utimes, the xattr calls: judged by the file they would change. */
static int
perform_meta(const struct req *q, int ofd, int pfd, const char *name,
    const struct stat *st)
{
	char self[64], xname[256];
	struct timespec ts[2], *tp;
	unsigned char *val = NULL;
	size_t size;
	int r;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", ofd);
	switch (q->c->op) {
	case OP_CHMOD:
		if (S_ISLNK(st->st_mode))
			return errno = EOPNOTSUPP, -1;
		return fchmodat(AT_FDCWD, self, q->mode & 07777, 0);
	case OP_UTIMES:
		if (read_times(q, ts, &tp) < 0)
			return -1;
		if (S_ISLNK(st->st_mode) && pfd >= 0)
			return utimensat(pfd, name, tp, AT_SYMLINK_NOFOLLOW);
		return utimensat(AT_FDCWD, self, tp, 0);
	default:
		break;
	}
	/* The extended attributes: user.* cannot sit on a link, the others
	 * need capabilities the command does not have. */
	if (S_ISLNK(st->st_mode))
		return errno = EPERM, -1;
	if (read_str(q->n.pid, q->n.data.args[q->c->path < 0 ? 1 :
	    q->c->path + 1], xname, sizeof(xname)) < 0)
		return -1;
	if (q->c->op == OP_REMOVEXATTR)
		return removexattr(self, xname);
	size = (size_t)q->n.data.args[(q->c->path < 0 ? 1 : q->c->path + 1) +
	    2];
	if (size > 65536)
		return errno = E2BIG, -1;
	if (size > 0 && ((val = malloc(size)) == NULL ||
	    read_mem(q->n.pid, q->n.data.args[(q->c->path < 0 ? 1 :
	    q->c->path + 1) + 1], val, size) < 0)) {
		free(val);
		return errno = EFAULT, -1;
	}
	r = setxattr(self, xname, val, size, q->flags);
	free(val);
	return r;
}

static void
metadata(struct sup *s, const struct req *q, int dirfd)
{
	char name[NAME_MAX + 1], path[PATH_MAX];
	struct stat st;
	enum rule_kind k;
	int ofd, pfd = -1, r;

	name[0] = '\0';
	ofd = open_object(s, q, dirfd, q->path, q->follow, &pfd, name,
	    sizeof(name));
	if (ofd < 0) {
		/* A magic link sbx will not follow for the target. */
		r = errno;
		if (pfd >= 0)
			close(pfd);
		/* Not there (touch's utimensat after a failed open): the
		 * kernel's own answer, no refusal of sbx's. */
		if (r == ELOOP)
			refuse(s, q, q->path, EACCES);
		else
			answer(s, q, 0, r);
		return;
	}
	if (fstat(ofd, &st) < 0 || fd_path(ofd, path, sizeof(path)) < 0) {
		refuse(s, q, q->path, EACCES);
		goto out;
	}
	k = decide(s, path);
	if (k != RULE_WRITE)
		refuse(s, q, path, k == RULE_DENY_READ ? EACCES : EROFS);
	else if (q->c->op == OP_CHMOD && !S_ISDIR(st.st_mode) &&
	    q->mode & (S_ISUID | S_ISGID))
		refuse(s, q, path, EPERM);
	else {
		r = perform_meta(q, ofd, pfd, name, &st);
		answer(s, q, 0, r < 0 ? errno : 0);
	}
out:
	close(ofd);
	if (pfd >= 0)
		close(pfd);
}

/* truncate(2) by path: the file it reaches, if writable, is cut. */
static void
truncate_path(struct sup *s, const struct req *q)
{
	char name[NAME_MAX + 1], path[PATH_MAX], self[64];
	int ofd, pfd = -1, fd;
	struct stat st;

	if ((ofd = open_object(s, q, AT_FD_CWD, q->path, 1, &pfd, name,
	    sizeof(name))) < 0) {
		answer(s, q, 0, errno == ELOOP ? EACCES : errno);
		goto out;
	}
	if (fstat(ofd, &st) < 0 || fd_path(ofd, path, sizeof(path)) < 0 ||
	    existing_ok(s, path) != 0) {
		refuse(s, q, q->path, EROFS);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		answer(s, q, 0, S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
		goto out;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", ofd);
	if ((fd = open(self, O_WRONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		answer(s, q, 0, errno);
		goto out;
	}
	answer(s, q, 0, ftruncate(fd, (off_t)q->n.data.args[1]) < 0 ?
	    errno : 0);
	close(fd);
out:
	if (ofd >= 0)
		close(ofd);
	if (pfd >= 0)
		close(pfd);
}

/* ---- the network: connect, bind, send ---- */

#define NR_pidfd_open	434
#define NR_pidfd_getfd	438
#define PIDFD_THREAD_	O_EXCL
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN	0x20000000
#endif
#define MAX_BOUND	1024
#define MAX_DGRAM	65536

/* The target's socket fd, as a descriptor of sbx's own. */
static int
take_socket(const struct req *q, int fd)
{
	int pidfd, sfd;

	pidfd = (int)syscall(NR_pidfd_open, q->n.pid, PIDFD_THREAD_);
	if (pidfd < 0)
		return -1;
	sfd = (int)syscall(NR_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	return sfd;
}

static int
sock_opt(int fd, int level, int name)
{
	int v = -1;
	socklen_t len = sizeof(v);

	return getsockopt(fd, level, name, &v, &len) < 0 ? -1 : v;
}

/* 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104; 0 for anything else. */
static int
loopback(const struct sockaddr_storage *a)
{
	const struct sockaddr_in *v4 = (const void *)a;
	const struct sockaddr_in6 *v6 = (const void *)a;
	static const unsigned char one[16] = { [15] = 1 };
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (a->ss_family == AF_INET)
		return (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
	if (a->ss_family != AF_INET6)
		return 0;
	return memcmp(&v6->sin6_addr, one, 16) == 0 ||
	    (memcmp(&v6->sin6_addr, mapped, 12) == 0 &&
	    v6->sin6_addr.s6_addr[12] == 127);
}

/* The wildcard address: 0.0.0.0 or ::. */
static int
wildcard(const struct sockaddr_storage *a)
{
	const struct sockaddr_in *v4 = (const void *)a;
	const struct sockaddr_in6 *v6 = (const void *)a;
	static const unsigned char zero[16];

	if (a->ss_family == AF_INET)
		return v4->sin_addr.s_addr == htonl(INADDR_ANY);
	return memcmp(&v6->sin6_addr, zero, 16) == 0;
}

static int
port_of(const struct sockaddr_storage *a)
{
	return ntohs(a->ss_family == AF_INET ?
	    ((const struct sockaddr_in *)a)->sin_port :
	    ((const struct sockaddr_in6 *)a)->sin6_port);
}

static void
set_port(struct sockaddr_storage *a, int port)
{
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)a)->sin6_port = htons((uint16_t)port);
}

/* An address for messages: 1.2.3.4:443, [::1]:80. */
static const char *
addr_text(const struct sockaddr_storage *a)
{
	static char out[80];
	char ip[INET6_ADDRSTRLEN];

	if (a->ss_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)a)->sin_addr,
		    ip, sizeof(ip));
		snprintf(out, sizeof(out), "%s:%d", ip, port_of(a));
	} else {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)a)->sin6_addr,
		    ip, sizeof(ip));
		snprintf(out, sizeof(out), "[%s]:%d", ip, port_of(a));
	}
	return out;
}

/* The sockaddr the call names, copied once; 0, or -1 with errno. */
static int
read_addr(const struct req *q, uint64_t addr, uint64_t len,
    struct sockaddr_storage *a)
{
	memset(a, 0, sizeof(*a));
	if (addr == 0 || len < sizeof(sa_family_t))
		return errno = EINVAL, -1;
	if (len > sizeof(*a))
		len = sizeof(*a);
	if (read_mem(q->n.pid, addr, a, (size_t)len) < 0)
		return -1;
	if ((a->ss_family == AF_INET && len < sizeof(struct sockaddr_in)) ||
	    (a->ss_family == AF_INET6 && len < sizeof(struct sockaddr_in6)))
		return errno = EINVAL, -1;
	return 0;
}

/*
 * A port the sandbox bound on loopback, of this type, still held by the
 * socket that bound it: its inode is on /proc/net's list for the port.
 * A port the sandbox let go may be another program's by now.
 */
static int
still_bound(const struct bound *b)
{
	static const char *const files[2][2] = {
		{ "/proc/net/tcp", "/proc/net/tcp6" },
		{ "/proc/net/udp", "/proc/net/udp6" }
	};
	char line[512];
	unsigned port;
	unsigned long ino;
	FILE *f;
	int i, found = 0;

	for (i = 0; i < 2 && !found; i++) {
		if ((f = fopen(files[b->type == SOCK_DGRAM][i], "re")) == NULL)
			continue;
		while (!found && fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%x %*s %*s %*s "
			    "%*s %*s %*s %*s %lu", &port, &ino) == 2 &&
			    (int)port == b->port && (ino_t)ino == b->ino)
				found = 1;
		fclose(f);
	}
	return found;
}

static const struct bound *
own_port(const struct sup *s, int port, int type)
{
	size_t i;

	for (i = s->nbound; i-- > 0; )
		if (s->bound[i].type != 0 && s->bound[i].port == port &&
		    s->bound[i].type == type && still_bound(&s->bound[i]))
			return &s->bound[i];
	return NULL;
}

static struct bound *
new_bound(struct sup *s)
{
	if (s->nbound == MAX_BOUND)
		return NULL;
	if (s->nbound == s->capbound) {
		s->capbound = s->capbound ? 2 * s->capbound : 16;
		s->bound = xrealloc(s->bound, s->capbound * sizeof(*s->bound));
	}
	memset(&s->bound[s->nbound], 0, sizeof(s->bound[0]));
	return &s->bound[s->nbound++];
}

static void
note_abstract(struct sup *s, const char *name, ino_t ino)
{
	struct bound *b = new_bound(s);

	if (b == NULL)
		return;
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->ino = ino;
}

static void
note_bound(struct sup *s, int sfd, int type)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	struct stat st;
	struct bound *b;

	if (getsockname(sfd, (struct sockaddr *)&a, &len) < 0 ||
	    fstat(sfd, &st) < 0 || (b = new_bound(s)) == NULL)
		return;
	b->port = port_of(&a);
	b->type = type;
	b->ino = st.st_ino;
}

/*
 * A TCP stream to a host loopback port the user allowed (--allow-host
 * localhost:PORT): to 127.0.0.1, ::1 or ::ffff:127.0.0.1 exactly, the
 * addresses "localhost" names, and that port alone. TCP (or MPTCP, which
 * falls back to it) only: an SCTP stream to the port is another service.
 */
static int
host_local(const struct sup *s, const struct sockaddr_storage *a, int sfd,
    int type)
{
	const struct sockaddr_in *v4 = (const void *)a;
	const struct sockaddr_in6 *v6 = (const void *)a;
	static const unsigned char mapped[16] = { [10] = 0xff, [11] = 0xff,
	    [12] = 127, [15] = 1 };
	size_t i;
	int proto;

	if (type != SOCK_STREAM || s->nlocal == 0 || ((proto = sock_opt(sfd,
	    SOL_SOCKET, SO_PROTOCOL)) != IPPROTO_TCP && proto != 262 /*MPTCP*/))
		return 0;
	if (a->ss_family == AF_INET ?
	    v4->sin_addr.s_addr != htonl(INADDR_LOOPBACK) :
	    !IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr) &&
	    memcmp(&v6->sin6_addr, mapped, 16) != 0)
		return 0;
	for (i = 0; i < s->nlocal; i++)
		if (s->local[i] == port_of(a))
			return 1;
	return 0;
}

/*
 * Where a connection or a datagram may go: sbx's proxy (the address the
 * proxy variables name, 127.0.0.1:BRIDGE_PORT, is redirected to where it
 * really listens), a host loopback port the user allowed, or a loopback
 * port the sandbox itself holds. *a is made the address to use; else the
 * errno the sandbox's own network namespace would give (no route, or
 * nobody listening on its private loopback).
 */
static int
destination(const struct sup *s, struct sockaddr_storage *a, int sfd,
    int type)
{
	if (a->ss_family != AF_INET && a->ss_family != AF_INET6)
		return EAFNOSUPPORT;
	if (!loopback(a))
		return ENETUNREACH;
	if (host_local(s, a, sfd, type))
		return 0;
	if (s->net == NET_PROXY && type == SOCK_STREAM &&
	    port_of(a) == BRIDGE_PORT) {
		if (a->ss_family == AF_INET6) {
			/* The proxy listens on IPv4: ::ffff:127.0.0.1. */
			struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)a;

			memset(&v6->sin6_addr, 0, 16);
			v6->sin6_addr.s6_addr[10] = v6->sin6_addr.s6_addr[11] =
			    0xff;
			v6->sin6_addr.s6_addr[12] = 127;
			v6->sin6_addr.s6_addr[15] = 1;
		}
		set_port(a, s->proxy_port);
		return 0;
	}
	return own_port(s, port_of(a), type) ? 0 : ECONNREFUSED;
}

/*
 * bind(2): on loopback only, where the port is the sandbox's; the
 * wildcard address becomes loopback (an IPv6 socket that takes IPv4 too
 * gets ::ffff:127.0.0.1), since a port open on every address would take
 * connections from the network.
 */
static int
loopback_bind(struct sup *s, int sfd, struct sockaddr_storage *a, int type)
{
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)a;
	socklen_t len;

	if (wildcard(a)) {
		if (a->ss_family == AF_INET)
			((struct sockaddr_in *)a)->sin_addr.s_addr =
			    htonl(INADDR_LOOPBACK);
		else {
			memset(&v6->sin6_addr, 0, 16);
			if (sock_opt(sfd, IPPROTO_IPV6, IPV6_V6ONLY) == 1)
				v6->sin6_addr.s6_addr[15] = 1;
			else {
				v6->sin6_addr.s6_addr[10] = 0xff;
				v6->sin6_addr.s6_addr[11] = 0xff;
				v6->sin6_addr.s6_addr[12] = 127;
				v6->sin6_addr.s6_addr[15] = 1;
			}
		}
	} else if (!loopback(a))
		return errno = EADDRNOTAVAIL, -1;
	len = a->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
	    sizeof(struct sockaddr_in6);
	if (bind(sfd, (struct sockaddr *)a, len) < 0)
		return -1;
	note_bound(s, sfd, type);
	return 0;
}

static socklen_t
addr_len(const struct sockaddr_storage *a)
{
	return a->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
	    sizeof(struct sockaddr_in6);
}

/* A stream that is connected already: where it sends is settled. */
static int
connected(int sfd)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);

	return getpeername(sfd, (struct sockaddr *)&a, &len) == 0;
}

/* What a sendto(2) or sendmsg(2) names, copied once into sbx's memory. */
struct sendcopy {
	struct sockaddr_storage	 to;
	socklen_t		 tolen;		/* 0: no address (connected) */
	unsigned char		*buf;
	size_t			 len;
};

/*
 * The call's address and its one buffer. More buffers, or control data
 * (descriptors, which are the target's numbers, or options), are refused
 * rather than half sent: datagram senders pass one buffer. 0, or the
 * errno to answer with (EOPNOTSUPP: to refuse and record).
 */
static int
read_send(const struct req *q, struct sendcopy *c)
{
	const uint64_t *a = q->n.data.args;
	struct { uint64_t name; uint32_t namelen, pad; uint64_t iov,
	    iovlen, control, controllen; } m;
	struct { uint64_t base, len; } v;
	uint64_t name, namelen, base, len;

	memset(c, 0, sizeof(*c));
	if (q->c->op == OP_SENDMSG) {
		if (read_mem(q->n.pid, a[1], &m, sizeof(m)) < 0)
			return EFAULT;
		if (m.iovlen > 1 || m.controllen > 0)
			return EOPNOTSUPP;
		if (m.iovlen == 1 && read_mem(q->n.pid, m.iov, &v,
		    sizeof(v)) < 0)
			return EFAULT;
		name = m.name;
		namelen = m.namelen;
		base = m.iovlen ? v.base : 0;
		len = m.iovlen ? v.len : 0;
	} else {
		name = a[4];
		namelen = a[5];
		base = a[1];
		len = a[2];
	}
	if (len > MAX_DGRAM)
		return EMSGSIZE;
	if (name != 0) {
		if (read_addr(q, name, namelen, &c->to) < 0)
			return errno;
		c->tolen = namelen > sizeof(c->to) ? sizeof(c->to) :
		    (socklen_t)namelen;
	}
	c->len = (size_t)len;
	c->buf = xmalloc(c->len + 1);
	if (c->len > 0 && read_mem(q->n.pid, base, c->buf, c->len) < 0) {
		free(c->buf);
		c->buf = NULL;
		return EFAULT;
	}
	return 0;
}

/* Send the copy from sbx's own descriptor of the socket; answer. */
static void
send_copy(struct sup *s, const struct req *q, int sfd, struct sendcopy *c)
{
	struct msghdr mh;
	struct iovec iov;
	ssize_t r;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = c->buf;
	iov.iov_len = c->len;
	mh.msg_name = c->tolen ? &c->to : NULL;
	mh.msg_namelen = c->tolen;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	r = sendmsg(sfd, &mh, (q->flags & ~MSG_FASTOPEN) | MSG_DONTWAIT |
	    MSG_NOSIGNAL);
	answer(s, q, r < 0 ? 0 : r, r < 0 ? errno : 0);
}

/*
 * sendto(2), sendmsg(2) on an IPv4 or IPv6 socket: a connected stream
 * (no fast open) sends where it was judged to go; anything else is judged
 * and then sent by sbx from a copy, so that no address written after the
 * check is used (a datagram socket's address in a sendmsg overrides the
 * one it connected to).
 */
static void
net_send(struct sup *s, const struct req *q, int sfd, int type)
{
	struct sendcopy c;
	int err;

	if (type == SOCK_STREAM && connected(sfd) && !(q->flags & MSG_FASTOPEN)) {
		go_on(s, q);
		return;
	}
	if ((err = read_send(q, &c)) != 0) {
		if (err == EOPNOTSUPP)
			refuse(s, q, "(several buffers or control data)", err);
		else
			answer(s, q, 0, err);
		return;
	}
	if (c.tolen == 0 && !connected(sfd))
		answer(s, q, 0, type == SOCK_STREAM ? ENOTCONN : EDESTADDRREQ);
	else if (c.tolen && (err = destination(s, &c.to, sfd, type)) != 0)
		refuse(s, q, addr_text(&c.to), err);
	else
		send_copy(s, q, sfd, &c);
	free(c.buf);
}

/* ---- abstract Unix sockets, where the kernel does not scope them ---- */

/* An abstract address, as /proc/net/unix shows it ('@' for each NUL). */
static int
abstract_name(const struct sockaddr_storage *a, socklen_t len, char *out)
{
	const struct sockaddr_un *u = (const void *)a;
	size_t i, n;

	if (a->ss_family != AF_UNIX || len <= sizeof(sa_family_t) ||
	    u->sun_path[0] != '\0')
		return 0;
	n = len - sizeof(sa_family_t);
	if (n > sizeof(u->sun_path))
		n = sizeof(u->sun_path);
	for (i = 0; i < n && i < 107; i++)
		out[i] = u->sun_path[i] ? u->sun_path[i] : '@';
	out[i] = '\0';
	return 1;
}

/* The name is held by the socket of the sandbox that bound it. */
static int
abstract_held(const struct sup *s, const char *name)
{
	char line[512], path[256];
	unsigned long ino;
	size_t i;
	FILE *f;
	int found = 0;

	for (i = 0; i < s->nbound; i++) {
		if (s->bound[i].type != 0 || strcmp(s->bound[i].name, name))
			continue;
		if ((f = fopen("/proc/net/unix", "re")) == NULL)
			return 0;
		while (!found && fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %255s",
			    &ino, path) == 2 && (ino_t)ino == s->bound[i].ino &&
			    strcmp(path, name) == 0)
				found = 1;
		fclose(f);
		if (found)
			return 1;
	}
	return 0;
}

/*
 * sendto(2), sendmsg(2) on a Unix socket below abi 6: sent by sbx from
 * a copy, so that no abstract name written after the check is used; an
 * abstract name that is not the sandbox's own is refused.
 */
static void
unix_send(struct sup *s, const struct req *q, int sfd)
{
	struct sendcopy c;
	char name[108];
	int err;

	if ((err = read_send(q, &c)) != 0) {
		if (err == EOPNOTSUPP)
			refuse(s, q, "(several buffers or control data)", err);
		else
			answer(s, q, 0, err);
		return;
	}
	if (c.tolen && abstract_name(&c.to, c.tolen, name) &&
	    !abstract_held(s, name))
		refuse(s, q, name, EPERM);
	else
		send_copy(s, q, sfd, &c);
	free(c.buf);
}

static int proc_path(const struct req *, char *, size_t);

/*
 * bind(2) of a Unix socket to a name of the file system makes an entry,
 * as mknod(2) does: judged where the name lands, and performed here on
 * the command's own socket from inside the folder sbx resolved (this
 * thread's working folder, its own: unshare(CLONE_FS)), so that a folder
 * swapped for a link meanwhile cannot move it; under the command's umask.
 */
static void
path_bind(struct sup *s, struct req *q, int sfd,
    const struct sockaddr_storage *to, socklen_t len)
{
	const struct sockaddr_un *from = (const void *)to;
	char path[PATH_MAX], name[NAME_MAX + 1], full[PATH_MAX];
	size_t off = offsetof(struct sockaddr_un, sun_path), n;
	struct sockaddr_un un;
	int pfd, here, r, err;
	enum zone z;

	n = len > off ? strnlen(from->sun_path, len - off) : 0;
	memcpy(path, from->sun_path, n);
	path[n] = '\0';
	/* /proc/self/cwd/NAME, /proc/self/root/PATH: what they lead to. */
	if (proc_path(q, path, sizeof(path)) < 0) {
		refuse(s, q, path, EACCES);
		return;
	}
	if ((pfd = open_parent(s, q, AT_FD_CWD, path, name,
	    sizeof(name))) < 0) {
		answer(s, q, 0, errno == EINVAL ? EADDRINUSE :
		    errno == ELOOP ? EACCES : errno);
		return;
	}
	/* Never let go on: the kernel would read the address again. A
	 * grant's folder is one the policy lets write, as performed. */
	z = zone_of(s, pfd, name, ZA_MAKE, full, sizeof(full));
	if (z != Z_PERFORM && z != Z_KERNEL) {
		refuse(s, q, full, zone_errno(z, pfd, name, EADDRINUSE));
	} else if ((here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    fchdir(pfd) < 0) {
		answer(s, q, 0, errno);
		if (here >= 0)
			close(here);
	} else {
		memset(&un, 0, sizeof(un));
		un.sun_family = AF_UNIX;
		memcpy(un.sun_path, name, strlen(name) + 1);
		umask(target_umask(q->n.pid));
		r = bind(sfd, (struct sockaddr *)&un, (socklen_t)(off +
		    strlen(name) + 1));
		err = errno;
		umask(0);
		if (fchdir(here) < 0) {
			r = -1;
			err = EIO;
		}
		close(here);
		answer(s, q, 0, r < 0 ? err : 0);
	}
	close(pfd);
}

/*
 * A Unix socket where the kernel scopes none: an abstract name is the
 * sandbox's own once one of its sockets bound it, and only those can be
 * reached. Where a socket connects or sends to is read once and used by
 * sbx, so a name of the file system cannot turn abstract after the
 * check. Where held names are judged here, every bind is done here
 * (path_bind() for a name of the file system); elsewhere one to a name of
 * the file system goes on, for the kernel's grants to judge.
 */
static void
unix_call(struct sup *s, struct req *q, int sfd)
{
	const uint64_t *a = q->n.data.args;
	struct sockaddr_storage to;
	socklen_t len;
	char name[108];
	struct stat st;
	int r, abstract;

	/*
	 * Where held names are judged here, every bind(2) is done here, on
	 * the address as read once: let go on, the kernel would read it
	 * again from the command's memory, which another of its threads
	 * may have changed to a name of the file system since.
	 */
	if (q->c->op == OP_BIND && (s->own_mounts || s->hold_git) &&
	    (len = (socklen_t)a[2]) > sizeof(sa_family_t)) {
		if (len > sizeof(to)) {
			answer(s, q, 0, EINVAL);
			return;
		}
		if (read_addr(q, a[1], len, &to) < 0) {
			answer(s, q, 0, errno);
			return;
		}
		if (to.ss_family == AF_UNIX &&
		    len <= sizeof(struct sockaddr_un) &&
		    !abstract_name(&to, len, name)) {
			path_bind(s, q, sfd, &to, len);
			return;
		}
		/* Abstract, another family, too long: as the kernel says. */
		r = bind(sfd, (struct sockaddr *)&to, len);
		if (r == 0 && s->scope && abstract_name(&to, len, name) &&
		    fstat(sfd, &st) == 0)
			note_abstract(s, name, st.st_ino);
		answer(s, q, 0, r < 0 ? errno : 0);
		return;
	}
	if (!s->scope || q->c->op == OP_LISTEN ||
	    (q->c->op == OP_SENDTO && a[4] == 0)) {
		go_on(s, q);
		return;
	}
	if (q->c->op == OP_SENDMSG || q->c->op == OP_SENDTO) {
		/* A stream's address cannot redirect it: the kernel refuses
		 * one on a stream socket (EISCONN, EOPNOTSUPP). */
		if (sock_opt(sfd, SOL_SOCKET, SO_TYPE) == SOCK_STREAM)
			go_on(s, q);
		else
			unix_send(s, q, sfd);
		return;
	}
	len = (socklen_t)a[2];
	if (len == sizeof(sa_family_t) && q->c->op == OP_BIND) {
		/* autobind: the kernel picks an abstract name */
		memset(&to, 0, sizeof(to));
		to.ss_family = AF_UNIX;
		r = bind(sfd, (struct sockaddr *)&to, len);
		len = sizeof(to);
		if (r == 0 && getsockname(sfd, (struct sockaddr *)&to,
		    &len) == 0 && abstract_name(&to, len, name) &&
		    fstat(sfd, &st) == 0)
			note_abstract(s, name, st.st_ino);
		answer(s, q, 0, r < 0 ? errno : 0);
		return;
	}
	if (read_addr(q, a[1], len, &to) < 0) {
		answer(s, q, 0, errno);
		return;
	}
	if (len > sizeof(to))
		len = sizeof(to);
	abstract = abstract_name(&to, len, name);
	if (q->c->op == OP_BIND) {
		if (!abstract) {
			go_on(s, q);
			return;
		}
		r = bind(sfd, (struct sockaddr *)&to, len);
		if (r == 0 && fstat(sfd, &st) == 0)
			note_abstract(s, name, st.st_ino);
		answer(s, q, 0, r < 0 ? errno : 0);
		return;
	}
	if (abstract && !abstract_held(s, name)) {
		refuse(s, q, name, EPERM);
		return;
	}
	r = connect(sfd, (struct sockaddr *)&to, len);
	answer(s, q, 0, r < 0 ? errno : 0);
}

/* connect, bind, listen, sendto, sendmsg on an IPv4 or IPv6 socket. */
static void
net_call(struct sup *s, struct req *q)
{
	const uint64_t *a = q->n.data.args;
	struct sockaddr_storage to;
	int sfd, dom, type, err, r;
	socklen_t len;

	if ((sfd = take_socket(q, (int)a[0])) < 0) {
		answer(s, q, 0, errno == EBADF ? EBADF : ENOTSOCK);
		return;
	}
	dom = sock_opt(sfd, SOL_SOCKET, SO_DOMAIN);
	type = sock_opt(sfd, SOL_SOCKET, SO_TYPE);
	/* With its own mounts only bind(2) comes here, for its Unix names:
	 * the sandbox's network namespace judges the rest. */
	if (s->own_mounts && dom != AF_UNIX) {
		go_on(s, q);
		goto out;
	}
	if (dom == AF_UNIX) {
		unix_call(s, q, sfd);
		goto out;
	}
	if (dom != AF_INET && dom != AF_INET6) {
		/* Netlink: let through only where the filter allows it. */
		go_on(s, q);
		goto out;
	}
	if (q->c->op == OP_SENDMMSG) {
		answer(s, q, 0, ENOSYS);	/* libcs fall back to sendmsg */
		goto out;
	}
	if (q->c->op == OP_SENDTO || q->c->op == OP_SENDMSG) {
		net_send(s, q, sfd, type);
		goto out;
	}
	if (q->c->op == OP_LISTEN) {
		/* Unbound, listen(2) would bind every address: loopback. */
		memset(&to, 0, sizeof(to));
		to.ss_family = (sa_family_t)dom;
		len = sizeof(to);
		if (getsockname(sfd, (struct sockaddr *)&to, &len) == 0 &&
		    port_of(&to) == 0 && loopback_bind(s, sfd, &to, type) < 0)
			answer(s, q, 0, errno);
		else
			go_on(s, q);
		goto out;
	}
	if (read_addr(q, a[1], a[2], &to) < 0) {
		answer(s, q, 0, errno);
		goto out;
	}
	if (to.ss_family == AF_UNSPEC && q->c->op == OP_CONNECT) {
		go_on(s, q);	/* a datagram socket let go of its peer */
		goto out;
	}
	if (q->c->op == OP_BIND) {
		r = loopback_bind(s, sfd, &to, type);
		if (r < 0 && errno == EADDRNOTAVAIL)
			refuse(s, q, addr_text(&to), EADDRNOTAVAIL);
		else
			answer(s, q, 0, r < 0 ? errno : 0);
		goto out;
	}
	if ((err = destination(s, &to, sfd, type)) != 0) {
		/* A datagram socket's connect sends nothing: a libc probing
		 * which source address it would get is no refusal to show;
		 * what it then sends is. */
		if (type == SOCK_DGRAM)
			answer(s, q, 0, err);
		else
			refuse(s, q, addr_text(&to), err);
		goto out;
	}
	r = connect(sfd, (struct sockaddr *)&to, addr_len(&to));
	answer(s, q, 0, r < 0 ? errno : 0);
out:
	close(sfd);
}

/* ---- signals, where the kernel does not scope them ---- */

#define F_SETOWN_EX_	15
#define FIOSETOWN_	0x8901
#define SIOCSPGRP_	0x8902

/* A field of /proc/PID/stat after the command name; 0 when unknown. */
static pid_t
stat_field(pid_t pid, int field)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) S ppid pgrp ...": comm may hold spaces and ')'. */
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	for (i = 0, p += 2; i < field && p; i++)
		if ((p = strchr(p, ' ')) != NULL)
			p++;
	return p ? (pid_t)atoi(p) : 0;
}

static pid_t
parent_of(pid_t pid)
{
	return stat_field(pid, 1);
}

/* pid is a process of the sandbox: a descendant of the keeper. */
static int
in_sandbox(const struct sup *s, pid_t pid)
{
	int depth;

	if (pid <= 1 || s->keeper <= 1 || pid == s->keeper)
		return 0;
	for (depth = 0; depth < 4096 && pid > 1; depth++) {
		pid = parent_of(pid);
		if (pid == s->keeper)
			return 1;
	}
	return 0;
}

/* The thread group a thread id belongs to, from /proc; 0 when gone. */
static pid_t
tgid_of(pid_t tid)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (p = strstr(buf, "\nTgid:")) ? (pid_t)atoi(p + 6) : 0;
}

/*
 * kill(-1) or kill(-pgrp): to the sandbox's processes of that set only,
 * as the kernel's signal scope would: each one signalled, the others
 * spared. The caller itself is spared by kill(-1), as by the kernel.
 */
static int
kill_set(const struct sup *s, const struct req *q, pid_t pgrp, int sig)
{
	struct dirent *d;
	pid_t pid, self = tgid_of(q->n.pid);
	int sent = 0, others = 0;
	DIR *dir;

	if ((dir = opendir("/proc")) == NULL)
		return EPERM;
	while ((d = readdir(dir)) != NULL) {
		if ((pid = (pid_t)atoi(d->d_name)) <= 1)
			continue;
		if (pgrp == 0 ? pid == self : stat_field(pid, 2) != pgrp)
			continue;
		if (!in_sandbox(s, pid)) {
			others++;
			continue;
		}
		if (kill(pid, sig) == 0)
			sent++;
	}
	closedir(dir);
	return sent ? 0 : others ? EPERM : ESRCH;
}

/* A pidfd's process, from its fdinfo; 0 when unknown. */
static pid_t
pidfd_pid(int fd)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if ((f = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (p = strstr(buf, "Pid:")) ? (pid_t)atoi(p + 4) : 0;
}

/* SIGIO's owner: a process or group of the sandbox (or none). */
static int
owner_ok(const struct sup *s, const struct req *q, int type, pid_t who)
{
	if (who == 0)
		return 1;
	if (type == 2 || who < 0)	/* F_OWNER_PGRP, or -pgrp */
		return (who < 0 ? -who : who) == stat_field(tgid_of(q->n.pid), 2);
	return in_sandbox(s, type == 0 ? tgid_of(who) : who);
}

/* F_SETOWN_EX and FIOSETOWN: judged from a copy, performed on the file. */
static void
set_owner(struct sup *s, const struct req *q)
{
	const uint64_t *a = q->n.data.args;
	struct { int type; int pid; } ex;
	int fd, pid, r;

	if (q->c->op == OP_FCNTL && (int)a[1] != F_SETOWN_EX_) {
		/* F_SETOWN: the pid is in a register, no race. */
		if (owner_ok(s, q, 1, (pid_t)(int)a[2]))
			go_on(s, q);
		else
			refuse(s, q, "SIGIO owner", EPERM);
		return;
	}
	if (q->c->op == OP_IOCTL) {
		if (read_mem(q->n.pid, a[2], &pid, sizeof(pid)) < 0) {
			answer(s, q, 0, EFAULT);
			return;
		}
		ex.type = pid < 0 ? 2 : 1;
		ex.pid = pid < 0 ? -pid : pid;
	} else if (read_mem(q->n.pid, a[2], &ex, sizeof(ex)) < 0) {
		answer(s, q, 0, EFAULT);
		return;
	}
	if (!owner_ok(s, q, ex.type, (pid_t)ex.pid)) {
		refuse(s, q, "SIGIO owner", EPERM);
		return;
	}
	if ((fd = take_socket(q, (int)a[0])) < 0) {
		answer(s, q, 0, EBADF);
		return;
	}
	r = fcntl(fd, F_SETOWN_EX_, &ex);
	answer(s, q, 0, r < 0 ? errno : 0);
	close(fd);
}

/*
 * A signal by pid: to a process of the sandbox, or refused with EPERM,
 * as the kernel's signal scope refuses it. A pid checked here could
 * be reused before the kernel delivers: pidfd_send_signal(2) is exact,
 * kill(2) to a pid is not, the window being the time a process needs to
 * die and its pid to be handed out again.
 */
static void
signal_call(struct sup *s, const struct req *q)
{
	const uint64_t *a = q->n.data.args;
	pid_t pid = (pid_t)(int)a[0];
	char what[32];
	int fd, err;

	switch (q->c->op) {
	case OP_KILL:
		if (pid == 0) {
			go_on(s, q);	/* its own group */
			return;
		}
		if (pid == -1 || pid < 0) {
			err = kill_set(s, q, pid == -1 ? 0 : -pid, (int)a[1]);
			answer(s, q, 0, err);
			return;
		}
		break;
	case OP_TKILL:
		pid = tgid_of(pid);
		break;
	case OP_PIDFD_SIGNAL:
		if ((fd = take_socket(q, (int)a[0])) < 0) {
			answer(s, q, 0, EBADF);
			return;
		}
		pid = pidfd_pid(fd);
		close(fd);
		break;
	case OP_FCNTL:
	case OP_IOCTL:
		set_owner(s, q);
		return;
	default:	/* tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo: a tgid */
		break;
	}
	if (in_sandbox(s, pid)) {
		go_on(s, q);
		return;
	}
	snprintf(what, sizeof(what), "pid %d", (int)pid);
	refuse(s, q, what, EPERM);
}

/* ---- inotify: no watch under a --deny-read path ---- */

#define IN_DONT_FOLLOW_	0x02000000U

/*
 * inotify_add_watch(2): a watch would name the entries made later in a
 * denied folder, which an empty folder mounted over it hides. The path
 * is resolved here and judged; the watch is added here, by sbx, on the
 * target's own inotify descriptor and on what sbx resolved, so no path
 * changed after the check is watched.
 */
static void
watch(struct sup *s, const struct req *q)
{
	const uint64_t *a = q->n.data.args;
	char name[NAME_MAX + 1], path[PATH_MAX], self[64];
	int ofd, pfd = -1, ifd, wd;
	size_t i;

	ofd = open_object(s, q, AT_FD_CWD, q->path,
	    !((uint32_t)a[2] & IN_DONT_FOLLOW_), &pfd, name, sizeof(name));
	if (pfd >= 0)
		close(pfd);
	if (ofd < 0) {
		answer(s, q, 0, errno == ELOOP ? EACCES : errno);
		return;
	}
	if (fd_path(ofd, path, sizeof(path)) < 0) {
		close(ofd);
		refuse(s, q, q->path, EACCES);
		return;
	}
	for (i = 0; i < s->n; i++)
		if (s->r[i].kind == RULE_DENY_READ &&
		    path_under(path, s->r[i].path)) {
			close(ofd);
			refuse(s, q, path, EACCES);
			return;
		}
	if ((ifd = take_socket(q, (int)a[0])) < 0) {
		close(ofd);
		answer(s, q, 0, EBADF);
		return;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", ofd);
	wd = inotify_add_watch(ifd, self, (uint32_t)a[2] & ~IN_DONT_FOLLOW_);
	answer(s, q, wd < 0 ? 0 : wd, wd < 0 ? errno : 0);
	close(ifd);
	close(ofd);
}

/* ---- one notification ---- */

static const struct sysc *
find_call(int nr)
{
	size_t i;

	for (i = 0; i < NCALLS; i++)
		if (calls[i].nr == nr)
			return &calls[i];
	return NULL;
}

/* The call's arguments, read once into q. */
static int
read_req(struct req *q)
{
	const struct sysc *c = q->c;
	const uint64_t *a = q->n.data.args;
	struct openhow how;

	q->path[0] = q->path2[0] = '\0';
	q->flags = c->flags >= 0 ? (int)a[c->flags] : c->fixed_flags;
	q->mode = c->mode >= 0 ? (unsigned)a[c->mode] : 0;
	if (c->path >= 0 && a[c->path] != 0 &&
	    read_str(q->n.pid, a[c->path], q->path, sizeof(q->path)) < 0)
		return -1;
	if (c->path2 >= 0 &&
	    read_str(q->n.pid, a[c->path2], q->path2, sizeof(q->path2)) < 0)
		return -1;
	if (c->shape == SH_OPEN2) {
		if (a[3] < sizeof(how))
			return errno = EINVAL, -1;
		memset(&how, 0, sizeof(how));
		if (read_mem(q->n.pid, a[2], &how, sizeof(how)) < 0)
			return -1;
		/* RESOLVE_* asks for more than sbx does: the kernel decides. */
		if (how.resolve != 0)
			q->kernel = 1;
		q->flags = (int)how.flags;
		q->mode = (unsigned)how.mode;
	}
	if (c->op == OP_OPEN)
		q->follow = !(q->flags & O_NOFOLLOW);
	else if (c->shape == SH_UTIMENS || c->shape == SH_AT_FLAGS)
		q->follow = !(q->flags & AT_SYMLINK_NOFOLLOW);
	else
		q->follow = !c->nofollow;
	return 0;
}

/*
 * With its own mounts a path through /proc/PID/root or /proc/PID/cwd (a
 * magic link, which sbx does not follow for the target) is the path below
 * it in the sandbox's root, or in the target's own folder: every process
 * there shares one root, and only its own folder is the target's to name.
 * 1 when path was rewritten, -1 when it names another's folder.
 */
static int
proc_path(const struct req *q, char *path, size_t size)
{
	char rest[PATH_MAX], cwd[64], base[PATH_MAX];
	const char *p = path + 6, *e;
	int fd, self;

	if (strncmp(path, "/proc/", 6) != 0)
		return 0;
	self = strncmp(p, "self/", 5) == 0 || strncmp(p, "thread-self/", 12) == 0;
	if (!self && (*p < '0' || *p > '9'))
		return 0;
	if ((e = strchr(p, '/')) == NULL)
		return 0;
	e++;
	if (strncmp(e, "task/", 5) == 0 && (e = strchr(e + 5, '/')) != NULL)
		e++;
	if (e == NULL)
		return 0;
	if (strncmp(e, "root", 4) == 0 && (e[4] == '/' || e[4] == '\0')) {
		snprintf(rest, sizeof(rest), "/%s", e[4] ? e + 5 : "");
		snprintf(path, size, "%s", rest);
		return 1;
	}
	if (strncmp(e, "cwd", 3) != 0 || (e[3] != '/' && e[3] != '\0'))
		return 0;
	if (!self)
		return -1;
	snprintf(rest, sizeof(rest), "%s", e[3] ? e + 4 : "");
	snprintf(cwd, sizeof(cwd), "/proc/%u/cwd", q->n.pid);
	if ((fd = open(cwd, O_PATH | O_CLOEXEC)) < 0)
		return -1;
	if (fd_path(fd, base, sizeof(base)) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	if (strlen(base) + strlen(rest) + 2 > size)
		return -1;
	strcpy(path, strcmp(base, "/") ? base : "");
	strcat(path, "/");
	strcat(path, rest);
	return 1;
}

/*
 * A call the filter refuses that is also one sbx performs (the flavour for
 * own mounts hands both on): a device node, a set-id regular file by
 * mknod, a terminal ioctl (TIOCSTI, TIOCLINUX) where signals are not
 * judged here.
 */
static int
filter_refused(const struct sup *s, const struct req *q)
{
	unsigned fmt = q->mode & S_IFMT;

	switch (q->c->op) {
	case OP_MKNOD:
		return fmt == S_IFCHR || fmt == S_IFBLK ||
		    ((fmt == S_IFREG || fmt == 0) &&
		    q->mode & (S_ISUID | S_ISGID));
	case OP_IOCTL:
	case OP_FCNTL:
		return !s->scope;
	default:
		return 0;
	}
}

static void
handle(struct sup *s, struct req *q)
{
	const struct sysc *c = q->c;
	const uint64_t *a = q->n.data.args;
	int dirfd = c->dirfd >= 0 ? (int)a[c->dirfd] : AT_FD_CWD;
	int dirfd2 = c->dirfd2 >= 0 ? (int)a[c->dirfd2] : AT_FD_CWD;

	if (read_req(q) < 0) {
		if (still_valid(s, q))
			answer(s, q, 0, errno);
		return;
	}
	if (!still_valid(s, q))
		return;		/* gone; its pid may be another's now */
	if (q->kernel || (c->op == OP_OPEN && (q->flags & O_PATH))) {
		go_on(s, q);
		return;
	}
	if (c->op == OP_OPEN && (q->flags & O_TMPFILE) == O_TMPFILE) {
		do_tmpfile(s, q, dirfd);
		return;
	}
	if (filter_refused(s, q)) {
		refuse_setid(s, q);
		return;
	}
	if (s->own_mounts && (proc_path(q, q->path, sizeof(q->path)) < 0 ||
	    proc_path(q, q->path2, sizeof(q->path2)) < 0)) {
		refuse(s, q, q->path, EACCES);
		return;
	}
	switch (c->op) {
	case OP_RENAME:
	case OP_LINK:
		two_entries(s, q, dirfd, dirfd2);
		break;
	case OP_SYMLINK:
		one_entry(s, q, dirfd2);
		break;
	case OP_TRUNCATE:
		truncate_path(s, q);
		break;
	case OP_CONNECT:
	case OP_BIND:
	case OP_LISTEN:
	case OP_SENDTO:
	case OP_SENDMSG:
	case OP_SENDMMSG:
		net_call(s, q);
		break;
	case OP_KILL: case OP_TKILL: case OP_TGKILL: case OP_SIGQUEUE:
	case OP_TGSIGQUEUE: case OP_PIDFD_SIGNAL: case OP_FCNTL: case OP_IOCTL:
		signal_call(s, q);
		break;
	case OP_WATCH:
		watch(s, q);
		break;
	case OP_CHMOD:
	case OP_UTIMES:
	case OP_SETXATTR:
	case OP_REMOVEXATTR:
		metadata(s, q, dirfd);
		break;
	default:
		one_entry(s, q, dirfd);
		break;
	}
}

/* ---- the thread ---- */

/*
 * The supervisor acts as the command: its own umask (0: the target's is
 * applied by hand) and working folder, and the command's capabilities,
 * on this thread alone (capset(2) changes the calling thread).
 */
static int
become_command(const struct sup *s)
{
	struct { uint32_t version; int pid; } h = { 0x20080522, 0 };
	struct { uint32_t eff, perm, inh; } d[2];
	uint32_t keep = s->keep_caps ? (1U << 1 | 1U << 2) : 0;

	if (unshare(CLONE_FS) < 0)
		return -1;
	umask(0);
	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	d[0].eff &= keep;
	d[0].perm &= keep;
	d[0].inh = d[1].eff = d[1].perm = d[1].inh = 0;
	return (int)syscall(SYS_capset, &h, d);
}

static void *
sup_main(void *arg)
{
	struct sup *s = arg;
	struct pollfd p[2];
	struct req *q;
	char text[STATUS_TEXT_MAX];
	int n;

	if (become_command(s) < 0)
		return NULL;	/* every trapped call then fails: ENOSYS */
	q = xmalloc(sizeof(*q));
	p[0].fd = s->listener;
	p[0].events = POLLIN;
	p[1].fd = s->stop[0];
	p[1].events = POLLIN;
	for (;;) {
		if ((n = poll(p, 2, s->nslow ? 100 : -1)) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (s->nslow)
			slow_wake_all(s, 0);
		if (n == 0)
			continue;
		if (p[1].revents)
			break;
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break;	/* nothing left that could ask */
		if (!(p[0].revents & POLLIN))
			continue;
		memset(&q->n, 0, sizeof(q->n));
		if (ioctl(s->listener, IOC_NOTIF_RECV, &q->n) < 0)
			continue;	/* ENOENT: the caller went away */
		q->kernel = 0;
		if ((q->c = find_call(q->n.data.nr)) == NULL) {
			/* Not one of these calls: a refusal of the filter's. */
			refusal_text(&q->n, text, sizeof(text));
			/* What was read is the caller's, not a reused pid's. */
			if (still_valid(s, q))
				deny_text(s, text);
			answer(s, q, 0, EPERM);
			continue;
		}
		handle(s, q);
	}
	free(q);
	return NULL;
}

/*
 * The supervisor for a plan: the policy's rules, and the folders whose
 * grants let the kernel judge writes below them.
 */
struct sup *
notify_new(const struct sup_conf *cf)
{
	const struct policy *pol = cf->pol;
	const struct file_id *granted = cf->granted;
	size_t n = cf->ngranted;
	struct sup *s = xcalloc(1, sizeof(*s));
	size_t i, j, split = 0;

	/* The missing protected names are read-only rules where the
	 * protected list begins: after the last writable path. */
	s->r = xcalloc(pol->n + pol->missing.n + 1, sizeof(*s->r));
	for (i = 0; i < pol->n; i++)
		if (pol->r[i].kind == RULE_WRITE)
			split = i + 1;
	for (i = 0; i <= pol->n; i++) {
		if (i == split)
			for (j = 0; j < pol->missing.n; j++) {
				s->r[s->n].kind = RULE_READONLY;
				s->r[s->n].path = xstrdup(pol->missing.v[j]);
				s->r[s->n].type = PATH_MISSING;
				s->r[s->n++].implicit = 1;
			}
		if (i < pol->n) {
			s->r[s->n] = pol->r[i];
			s->r[s->n++].path = xstrdup(pol->r[i].path);
		}
	}
	/* The very folders the kernel's grants were added on, by descriptor:
	 * a name looked up again could be another folder by now. */
	s->granted = xcalloc(n + 1, sizeof(*s->granted));
	for (i = 0; i < n && s->ngranted < MAX_GRANTED; i++) {
		s->granted[s->ngranted].dev = granted[i].dev;
		s->granted[s->ngranted++].ino = granted[i].ino;
	}
	s->held = xcalloc(pol->n + 1, sizeof(*s->held));
	s->heldkind = xcalloc(pol->n + 1, sizeof(*s->heldkind));
	for (i = 0; i < pol->n; i++) {
		struct file_id id;

		if (checked_id(pol->r[i].path, &id)) {
			s->held[s->nheld].dev = id.dev;
			s->held[s->nheld].ino = id.ino;
			s->heldkind[s->nheld++] = pol->r[i].kind;
		}
	}
	s->keep_caps = cf->keep_caps;
	s->own_mounts = cf->own_mounts;
	s->hold_git = cf->hold_git;
	s->net = cf->net;
	s->proxy_port = cf->proxy_port;
	s->nlocal = proxy_local_ports(cf->hosts, cf->nhosts, s->local,
	    LOCAL_MAX);
	s->scope = cf->scope;
	s->listener = s->stop[0] = s->stop[1] = s->root = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->slow_lock, NULL);
	pthread_cond_init(&s->slow_done, NULL);
	return s;
}

/*
 * The listener arrived from the child: answer it on a thread of its own.
 * The child's parent is the keeper (proc.c): the sandbox is its
 * descendants, itself excluded.
 */
void
notify_start(struct sup *s, int listener, pid_t child)
{
	sigset_t all, old;
	uint64_t fl = FD_SYNC_WAKE_UP;
	struct sigaction sa;
	char path[64];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = slow_wake;	/* no SA_RESTART: open(2) returns */
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIG_SLOW, &sa, NULL);
	if (s->running || pipe(s->stop) < 0) {
		close(listener);
		return;
	}
	/* The sandbox's own "/" (its mount namespace), opened once: what
	 * the command's absolute paths and links mean. */
	snprintf(path, sizeof(path), "/proc/%d/root", (int)child);
	s->root = open(s->own_mounts ? path : "/", O_PATH | O_DIRECTORY |
	    O_CLOEXEC);
	set_cloexec(s->stop[0]);
	set_cloexec(s->stop[1]);
	s->listener = listener;
	s->keeper = parent_of(child);
	/* Wake the waiting thread on the same CPU: a shorter round trip. */
	(void)ioctl(listener, IOC_NOTIF_SET_FLAGS, &fl);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->running = pthread_create(&s->thread, NULL, sup_main, s) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void
notify_stop(struct sup *s)
{
	if (s == NULL || !s->running)
		return;
	(void)!write(s->stop[1], "x", 1);
	pthread_join(s->thread, NULL);
	s->running = 0;
	/* No FIFO open outlives the run: each answers, then ends. */
	pthread_mutex_lock(&s->slow_lock);
	while (s->nslow > 0) {
		struct timespec t;

		pthread_mutex_unlock(&s->slow_lock);
		slow_wake_all(s, 1);
		pthread_mutex_lock(&s->slow_lock);
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 50 * 1000 * 1000;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		if (s->nslow > 0)
			(void)pthread_cond_timedwait(&s->slow_done,
			    &s->slow_lock, &t);
	}
	pthread_mutex_unlock(&s->slow_lock);
	close(s->stop[0]);
	close(s->stop[1]);
	close(s->listener);
	if (s->root >= 0)
		close(s->root);
	s->listener = s->stop[0] = s->stop[1] = s->root = -1;
}

/* What was refused: the first few distinct, "OP PATH" each, and how many. */
void
notify_denied(struct sup *s, struct strv *out, uint64_t *count)
{
	size_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->denied.n; i++)
		denied_push(out, s->denied.v[i], strlen(s->denied.v[i]));
	*count += s->ndenied;
	pthread_mutex_unlock(&s->lock);
}

void
notify_free(struct sup *s)
{
	size_t i;

	if (s == NULL)
		return;
	notify_stop(s);
	for (i = 0; i < s->n; i++)
		free(s->r[i].path);
	free(s->r);
	free(s->granted);
	free(s->held);
	free(s->heldkind);
	free(s->bound);
	strv_free(&s->denied);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->slow_lock);
	pthread_cond_destroy(&s->slow_done);
	free(s);
}

/* ---- the filter's refusals, reported ---- */

/*
 * The filter for own mounts refuses what no sandboxed job needs (mounts,
 * namespaces, keyrings, Unix sockets unless allowed, device nodes, ...)
 * by handing the call to the supervisor, which answers EPERM, as the
 * filter would, and notes what was refused: the command's own calls can
 * make these notes, never their content beyond the path or number they
 * passed.
 */
enum detail { D_NONE, D_PATH0, D_PATH1, D_FD0, D_FAMILY, D_IOCTL,
    D_FLAGS };

struct refused {
	int		 nr;
	const char	*name;
	enum detail	 d;
};

static const struct refused refused_calls[] = {
#if defined(__x86_64__)
	{ 165, "mount", D_PATH1 }, { 166, "umount", D_PATH0 },
	{ 155, "pivot_root", D_PATH0 }, { 161, "chroot", D_PATH0 },
	{ 272, "unshare", D_FLAGS }, { 56, "clone", D_FLAGS },
	{ 308, "setns", D_NONE }, { 41, "socket", D_FAMILY },
	{ 16, "ioctl", D_IOCTL }, { 133, "mknod", D_PATH0 },
	{ 259, "mknod", D_PATH1 }, { 90, "chmod", D_PATH0 },
	{ 91, "chmod", D_FD0 }, { 268, "chmod", D_PATH1 },
	{ 452, "chmod", D_PATH1 }, { 2, "open", D_PATH0 },
	{ 257, "open", D_PATH1 }, { 85, "open", D_PATH0 },
	{ 248, "add_key", D_NONE }, { 249, "request_key", D_NONE },
	{ 250, "keyctl", D_NONE }, { 321, "bpf", D_NONE },
	{ 298, "perf_event_open", D_NONE }, { 323, "userfaultfd", D_NONE },
	{ 135, "personality", D_NONE }, { 169, "reboot", D_NONE },
	{ 167, "swapon", D_PATH0 }, { 170, "sethostname", D_NONE },
	{ 164, "settimeofday", D_NONE }, { 227, "clock_settime", D_NONE },
	{ 175, "init_module", D_NONE }, { 313, "finit_module", D_NONE },
	{ 246, "kexec_load", D_NONE }, { 303, "name_to_handle_at", D_PATH1 },
	{ 304, "open_by_handle_at", D_NONE }, { 103, "syslog", D_NONE },
	{ 163, "acct", D_PATH0 }, { 428, "open_tree", D_PATH1 },
	{ 429, "move_mount", D_NONE }, { 430, "fsopen", D_NONE },
	{ 442, "mount_setattr", D_PATH1 },
	{ 240, "mq_open", D_PATH0 }, { 241, "mq_unlink", D_PATH0 },
	{ 300, "fanotify_init", D_NONE }
#elif defined(__aarch64__)
	{ 40, "mount", D_PATH1 }, { 39, "umount", D_PATH0 },
	{ 41, "pivot_root", D_PATH0 }, { 51, "chroot", D_PATH0 },
	{ 97, "unshare", D_FLAGS }, { 220, "clone", D_FLAGS },
	{ 268, "setns", D_NONE }, { 198, "socket", D_FAMILY },
	{ 29, "ioctl", D_IOCTL }, { 33, "mknod", D_PATH1 },
	{ 52, "chmod", D_FD0 }, { 53, "chmod", D_PATH1 },
	{ 452, "chmod", D_PATH1 }, { 56, "open", D_PATH1 },
	{ 217, "add_key", D_NONE }, { 218, "request_key", D_NONE },
	{ 219, "keyctl", D_NONE }, { 280, "bpf", D_NONE },
	{ 241, "perf_event_open", D_NONE }, { 282, "userfaultfd", D_NONE },
	{ 92, "personality", D_NONE }, { 142, "reboot", D_NONE },
	{ 224, "swapon", D_PATH0 }, { 161, "sethostname", D_NONE },
	{ 170, "settimeofday", D_NONE }, { 112, "clock_settime", D_NONE },
	{ 105, "init_module", D_NONE }, { 273, "finit_module", D_NONE },
	{ 104, "kexec_load", D_NONE }, { 264, "name_to_handle_at", D_PATH1 },
	{ 265, "open_by_handle_at", D_NONE }, { 116, "syslog", D_NONE },
	{ 89, "acct", D_PATH0 }, { 428, "open_tree", D_PATH1 },
	{ 429, "move_mount", D_NONE }, { 430, "fsopen", D_NONE },
	{ 442, "mount_setattr", D_PATH1 },
	{ 180, "mq_open", D_PATH0 }, { 181, "mq_unlink", D_PATH0 },
	{ 262, "fanotify_init", D_NONE }
#else
	{ -1, "", D_NONE }	/* no filter of sbx's here */
#endif
};

static const char *
family_name(uint64_t f)
{
	switch (f) {
	case AF_UNIX: return "unix";
	case AF_INET: return "inet";
	case AF_INET6: return "inet6";
	case AF_NETLINK: return "netlink";
	case AF_PACKET: return "packet";
	default: return NULL;
	}
}

/* "OP DETAIL" for one refused call, into out. */
static void
refusal_text(const struct snotif *n, char *out, size_t size)
{
	const uint64_t *a = n->data.args;
	const struct refused *r = NULL;
	char path[STATUS_TEXT_MAX - 32];
	size_t i;

	for (i = 0; i < sizeof refused_calls / sizeof refused_calls[0]; i++)
		if (refused_calls[i].nr == n->data.nr)
			r = &refused_calls[i];
	if (r == NULL) {
		snprintf(out, size, "syscall %d", n->data.nr);
		return;
	}
	switch (r->d) {
	case D_PATH0:
	case D_PATH1:
		if (read_str(n->pid, a[r->d == D_PATH0 ? 0 : 1], path,
		    sizeof(path)) == 0)
			snprintf(out, size, "%s %s", r->name, path);
		else if (errno == ENAMETOOLONG)	/* cut, and marked so */
			snprintf(out, size, "%s %.*s...", r->name,
			    (int)sizeof(path) - 4, path);
		else
			snprintf(out, size, "%s", r->name);
		break;
	case D_FD0:
		snprintf(out, size, "%s fd %d", r->name, (int)a[0]);
		break;
	case D_FAMILY:
		if (family_name(a[0] & 0xffff) != NULL)
			snprintf(out, size, "%s %s", r->name,
			    family_name(a[0] & 0xffff));
		else
			snprintf(out, size, "%s family %d", r->name,
			    (int)(a[0] & 0xffff));
		break;
	case D_IOCTL:
		snprintf(out, size, "%s 0x%x", r->name, (unsigned)a[1]);
		break;
	case D_FLAGS:
		snprintf(out, size, "%s 0x%x", r->name, (unsigned)a[0]);
		break;
	default:
		snprintf(out, size, "%s", r->name);
		break;
	}
}

/*
 * The supervisor needs seccomp user notification with descriptors handed
 * to the target (SECCOMP_IOCTL_NOTIF_ADDFD, Linux 5.9) and openat2(2)
 * (5.6). SBX_NOTIFY_ABSENT=1 makes sbx answer as such a kernel would (a
 * test of the refusal; it can only take a backend away).
 */
int
notify_probe(struct sbx_err *e)
{
	struct utsname u;
	const char *t = getenv("SBX_NOTIFY_ABSENT");
	int major = 0, minor = 0;

	if (uname(&u) == 0)
		(void)sscanf(u.release, "%d.%d", &major, &minor);
	if ((t == NULL || strcmp(t, "1") != 0) &&
	    (major > 5 || (major == 5 && minor >= 9)))
		return 0;
	return sbx_errf(e, ERR_UNAVAILABLE, "seccomp user notification: "
	    "Linux %d.%d has none that sbx can use (5.9 or later is needed "
	    "to hold protected names at the moment of the call): upgrade "
	    "the kernel", major, minor);
}

#else	/* !__linux__ */

int
notify_probe(struct sbx_err *e)
{
	return sbx_errf(e, ERR_UNSUPPORTED, "seccomp user notification: "
	    "Linux only");
}

#endif	/* __linux__ */
