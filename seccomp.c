/*
 * seccomp.c: the seccomp filter that both Linux backends load, generated
 * here as raw classic BPF (struct sock_filter[]) with no library and no
 * kernel headers. The filter is a deny list in front of an allow-all: it
 * refuses the system calls that reach past a file-system sandbox (mounts,
 * namespaces, keyrings, modules, kernel tunables, io_uring, the tty input
 * queue, sockets of other families) and, for the Landlock backend that has
 * no pid namespace, the calls that reach into other processes. Invariants:
 * a foreign architecture or x32 call kills the process; every jump is
 * forward; every argument check is a block that always returns.
 *
 * The numbers with a rule are found by a balanced search tree, not a
 * chain: the kernel decides at load time which numbers the filter always
 * allows by running it once per number (its action cache): a chain of
 * 110 tests took some 100 steps per number and 210-250 us to load on every
 * launch, the tree about 10 steps and 90-120 us. The tree's leaves are
 * runs of consecutive numbers with one action, not numbers: a third fewer
 * instructions for the kernel to check, translate and compile at each
 * load.
 * seccomp_install() is async-signal-safe and allocates nothing, because it
 * runs in the child between fork and exec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif
#include "sbx.h"

#ifdef __linux__

/* Classic BPF and seccomp ABI: stable, so spelled out here. */
struct sfilter {
	uint16_t	code;
	uint8_t		jt;
	uint8_t		jf;
	uint32_t	k;
};

struct sfprog {
	unsigned short	 len;
	struct sfilter	*filter;
};

#define BPF_LD_W_ABS	0x20	/* A = *(u32 *)(seccomp_data + k) */
#define BPF_ALU_AND_K	0x54	/* A &= k */
#define BPF_JEQ_K	0x15
#define BPF_JGE_K	0x35
#define BPF_JSET_K	0x45
#define BPF_RET_K	0x06
#define BPF_JA		0x05	/* pc += k: the one long jump */

#define RET_KILL_PROCESS 0x80000000U
#define RET_ERRNO	 0x00050000U
#define RET_USER_NOTIF	 0x7fc00000U	/* to the supervisor (notify.c) */
#define RET_ALLOW	 0x7fff0000U

#ifndef SECCOMP_SET_MODE_FILTER
#define SECCOMP_SET_MODE_FILTER	1
#endif
#define FILTER_NEW_LISTENER	(1U << 3)
#define FILTER_WAIT_KILLABLE	(1U << 5)	/* Linux 5.19 */
#ifndef SECCOMP_MODE_FILTER
#define SECCOMP_MODE_FILTER	2
#endif
#ifndef PR_SET_SECCOMP
#define PR_SET_SECCOMP		22
#endif
#ifndef PR_SET_NO_NEW_PRIVS
#define PR_SET_NO_NEW_PRIVS	38
#endif

/* struct seccomp_data: nr, arch, ip, args[6]; little-endian on both. */
#define OFF_NR		0
#define OFF_ARCH	4
#define OFF_ARG(i)	(16 + 8 * (i))	/* low 32 bits of args[i] */

#define MAX_INSNS	1024	/* the kernel takes 4096 */
#define MAX_FIX		32	/* rules with an argument check */

/* Socket families and ioctl numbers (the same on x86_64 and aarch64). */
#define F_UNIX		1
#define F_INET		2
#define F_INET6		10
#define F_NETLINK	16
#define NETLINK_ROUTE_	0
#define IOC_TIOCSTI	0x5412
#define IOC_TIOCLINUX	0x541c
#define IOC_FIOSETOWN	0x8901	/* SIGIO to a process of one's choice */
#define IOC_SIOCSPGRP	0x8902
#define F_SETOWN_	8
#define F_SETOWN_EX_	15
/* Every CLONE_NEW* bit: TIME, NS, CGROUP, UTS, IPC, USER, PID, NET. */
#define CLONE_NEW_ANY	0x7e020080U
#define MODE_FMT	0170000
#define MODE_CHR	0020000
#define MODE_BLK	0060000

/*
 * The first system call number this list was not written against. Newer
 * calls get ENOSYS, as from an older kernel (libc falls back), so that a
 * future mount or namespace call cannot slip past a list that predates it.
 */
#define NR_UNREVIEWED	470

#if defined(__x86_64__)
#define AUDIT_ARCH_NATIVE 0xc000003eU
#define X32_BIT		0x40000000U
enum {
	NR_ioctl = 16, NR_socket = 41, NR_clone = 56, NR_mknod = 133,
	NR_personality = 135, NR_unshare = 272, NR_mknodat = 259,
	NR_creat = 85, NR_chmod = 90, NR_fchmod = 91, NR_fchmodat = 268,
	NR_seccomp = 317
};
/* Refused for every flavour. */
static const int deny_all[] = {
	103,		/* syslog */
	134,		/* uselib */
	153,		/* vhangup */
	154,		/* modify_ldt */
	155,		/* pivot_root */
	156,		/* _sysctl */
	159,		/* adjtimex */
	161,		/* chroot */
	163,		/* acct */
	164,		/* settimeofday */
	165, 166,	/* mount, umount2 */
	167, 168,	/* swapon, swapoff */
	169,		/* reboot */
	170, 171,	/* sethostname, setdomainname */
	172, 173,	/* iopl, ioperm */
	174, 175, 176, 177, 178,	/* create/init/delete_module, ... */
	179,		/* quotactl */
	180,		/* nfsservctl */
	212,		/* lookup_dcookie */
	227,		/* clock_settime */
	246, 320,	/* kexec_load, kexec_file_load */
	248, 249, 250,	/* add_key, request_key, keyctl */
	256, 279,	/* migrate_pages, move_pages */
	298,		/* perf_event_open */
	303, 304,	/* name_to_handle_at, open_by_handle_at */
	305,		/* clock_adjtime */
	308,		/* setns */
	313,		/* finit_module */
	321,		/* bpf */
	323,		/* userfaultfd */
	425, 426, 427,	/* io_uring_setup, _enter, _register */
	428, 429, 430, 431, 432, 433,	/* open_tree ... fspick */
	442, 443,	/* mount_setattr, quotactl_fd */
	467		/* open_tree_attr */
};
/*
 * Refused for Landlock only: no pid namespace hides other processes, no
 * IPC namespace hides their System V objects and POSIX message queues
 * (mq_unlink removes another process's queue), and Landlock does not cover
 * modes, times and extended attributes (an owner may change them
 * on any of its files, read-only or not; root on most of the system).
 * fanotify_init: an unprivileged user gets FAN_REPORT_FID inode marks,
 * which Landlock does not check.
 *
 * Reviewed for Landlock (December 2026): every call below NR_UNREVIEWED
 * that changes an object reachable outside without a path Landlock checks.
 * Refused or judged here: the lists above and below, the file-system
 * ioctls that change inodes (fs_ioctl_check), set-id modes (chmod_check,
 * open_check, creat_check, mknod_check), other processes (signals,
 * priorities, ptrace, process_vm_*, kcmp, pidfd_getfd, process_madvise),
 * keyrings, namespaces (unshare, clone flags, setns), personality, mounts.
 * Left allowed, because they touch only the caller's own processes and
 * objects, or only read: timers and timerfd, memfd, pidfd_open, inotify
 * (judged on --deny-read paths), statmount and listmount, syncfs,
 * fadvise and readahead (the page cache), futex, landlock_*, seccomp,
 * lsm_set_self_attr, map_shadow_stack, mseal, cachestat, the xattr and
 * file_getattr reads. Left allowed and able to hold something of the
 * host's while the run lasts (released when the command's processes end):
 * flock and record locks on files it may open, leases on files its user
 * owns, the termios of a terminal it was given, bound ports (--net).
 * Device ioctls are Landlock's (LANDLOCK_ACCESS_FS_IOCTL_DEV, abi 5).
 */
static const int deny_landlock[] = {
	101,		/* ptrace */
	310, 311,	/* process_vm_readv, process_vm_writev */
	312,		/* kcmp */
	438,		/* pidfd_getfd */
	440,		/* process_madvise */
	463, 466, 469,	/* setxattrat, removexattrat, file_setattr */
	29, 30, 31,	/* shmget, shmat, shmctl */
	64, 65, 66, 220,	/* semget, semop, semctl, semtimedop */
	68, 69, 70, 71,	/* msgget, msgsnd, msgrcv, msgctl */
	240, 241, 242,	/* mq_open, mq_unlink, mq_timedsend */
	243, 244, 245,	/* mq_timedreceive, mq_notify, mq_getsetattr */
	300, 301	/* fanotify_init, fanotify_mark */
};
/*
 * Owner changes succeed and do nothing, for every flavour: root in CI
 * unpacks tarballs of other owners (tar, cp -a, package managers that
 * chown), which under bwrap fail for want of those users in the user
 * namespace, and under Landlock, which does not cover owners, would reach
 * the host's files. No ownership change ever leaves the sandbox.
 */
static const int chown_calls[] = {
	92, 93, 94, 260		/* chown, fchown, lchown, fchownat */
};
enum { NR_utimensat = 280, NR_prlimit64 = 302, NR_setpriority = 141 };
/*
 * Metadata that Landlock does not govern: refused, or (with the
 * supervisor) judged by path in notify.c.
 */
static const int meta[] = {
	132, 235, 261,	/* utime, utimes, futimesat */
	188, 189, 190, 197, 198, 199	/* set/removexattr family */
};
/*
 * The calls that add, remove or rename an entry, for the supervisor where
 * a folder holds a hole (open(2) and openat(2) only with a writing flag).
 */
static const int entries[] = {
	83, 258,	/* mkdir, mkdirat */
	87, 263, 84,	/* unlink, unlinkat, rmdir */
	82, 264, 316,	/* rename, renameat, renameat2 */
	86, 265, 88, 266,	/* link, linkat, symlink, symlinkat */
	76		/* truncate */
};
enum { NR_open = 2, NR_openat = 257 };
/* Where a socket connects, binds or sends to: judged by the supervisor. */
static const int net_calls[] = {
	42, 49, 50,	/* connect, bind, listen */
	46, 307		/* sendmsg, sendmmsg */
};
enum { NR_sendto = 44, NR_bind = 49 };
/* Signals by pid, without Landlock's signal scope (abi < 6). */
static const int signal_calls[] = {
	62, 200, 234,	/* kill, tkill, tgkill */
	129, 297, 424	/* rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_send_signal */
};
enum { NR_fcntl = 72, NR_inotify_add_watch = 254 };
/* The scheduling and I/O priority of another process: pid 0 only. */
static const int self_only[] = {
	142, 144, 203, 314	/* sched_setparam, _setscheduler,
				   _setaffinity, _setattr */
};
enum { NR_ioprio_set = 251 };
#elif defined(__aarch64__)
#define AUDIT_ARCH_NATIVE 0xc00000b7U
enum {
	NR_ioctl = 29, NR_socket = 198, NR_clone = 220, NR_mknod = -1,
	NR_personality = 92, NR_unshare = 97, NR_mknodat = 33,
	NR_creat = -1, NR_chmod = -1, NR_fchmod = 52, NR_fchmodat = 53,
	NR_seccomp = 277
};
static const int deny_all[] = {
	116,		/* syslog */
	58,		/* vhangup */
	41,		/* pivot_root */
	171,		/* adjtimex */
	51,		/* chroot */
	89,		/* acct */
	170,		/* settimeofday */
	40, 39,		/* mount, umount2 */
	224, 225,	/* swapon, swapoff */
	142,		/* reboot */
	161, 162,	/* sethostname, setdomainname */
	105, 106, 273,	/* init_module, delete_module, finit_module */
	60,		/* quotactl */
	42,		/* nfsservctl */
	18,		/* lookup_dcookie */
	112,		/* clock_settime */
	104, 294,	/* kexec_load, kexec_file_load */
	217, 218, 219,	/* add_key, request_key, keyctl */
	238, 239,	/* migrate_pages, move_pages */
	241,		/* perf_event_open */
	264, 265,	/* name_to_handle_at, open_by_handle_at */
	266,		/* clock_adjtime */
	268,		/* setns */
	280,		/* bpf */
	282,		/* userfaultfd */
	425, 426, 427,	/* io_uring_setup, _enter, _register */
	428, 429, 430, 431, 432, 433,	/* open_tree ... fspick */
	442, 443,	/* mount_setattr, quotactl_fd */
	467		/* open_tree_attr */
};
static const int deny_landlock[] = {
	117,		/* ptrace */
	270, 271,	/* process_vm_readv, process_vm_writev */
	272,		/* kcmp */
	438,		/* pidfd_getfd */
	440,		/* process_madvise */
	463, 466, 469,	/* setxattrat, removexattrat, file_setattr */
	194, 195, 196,	/* shmget, shmctl, shmat */
	190, 191, 192, 193,	/* semget, semctl, semtimedop, semop */
	186, 187, 188, 189,	/* msgget, msgctl, msgrcv, msgsnd */
	180, 181, 182,	/* mq_open, mq_unlink, mq_timedsend */
	183, 184, 185,	/* mq_timedreceive, mq_notify, mq_getsetattr */
	262, 263	/* fanotify_init, fanotify_mark */
};
static const int chown_calls[] = {
	54, 55		/* fchownat, fchown */
};
enum { NR_utimensat = 88, NR_prlimit64 = 261, NR_setpriority = 140 };
static const int meta[] = {
	5, 6, 7, 14, 15, 16	/* set/removexattr family */
};
static const int entries[] = {
	34, 35,		/* mkdirat, unlinkat */
	38, 276,	/* renameat, renameat2 */
	37, 36,		/* linkat, symlinkat */
	45		/* truncate */
};
enum { NR_open = -1, NR_openat = 56 };
static const int net_calls[] = {
	203, 200, 201,	/* connect, bind, listen */
	211, 269	/* sendmsg, sendmmsg */
};
enum { NR_sendto = 206, NR_bind = 200 };
static const int signal_calls[] = {
	129, 130, 131,	/* kill, tkill, tgkill */
	138, 240, 424	/* rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_send_signal */
};
enum { NR_fcntl = 25, NR_inotify_add_watch = 27 };
static const int self_only[] = {
	118, 119, 122, 274	/* sched_setparam, _setscheduler,
				   _setaffinity, _setattr */
};
enum { NR_ioprio_set = 30 };
#endif
#define NR_clone3	435
#define NR_openat2	437
#define NR_fchmodat2	452

#if defined(__x86_64__) || defined(__aarch64__)

/* What a rule does with its number: a fixed answer, or an argument check. */
enum act {
	A_EPERM, A_ENOSYS, A_NOTIF, A_NOOP, H_SOCKET, H_IOCTL, H_NSFLAGS,
	H_PERSONALITY, H_MKNOD, H_MKNODAT, H_UTIMENSAT, H_SELF,
	H_SETPRIORITY, H_IOPRIO, H_OPEN, H_OPENAT, H_CREAT, H_CHMOD,
	H_CHMODAT, H_SENDTO, H_FCNTL, H_SECCOMP, N_ACT
};

struct scrule {
	uint32_t	nr;
	enum act	act;
};

struct prog {
	struct sfilter	f[MAX_INSNS];
	size_t		n;
	int		full;
	/* JA instructions to point at an argument check once it is placed */
	struct { size_t at; enum act act; } fix[MAX_FIX];
	size_t		nfix;
	uint32_t	entry;	/* the answer for an entry call: allow, or
				   ask the supervisor */
	uint32_t	owner;	/* for FIOSETOWN: allow, or ask */
	uint32_t	meta;	/* a chmod without set-id bits: allow, or
				   ask the supervisor */
	uint32_t	setid;	/* a chmod with one: ask, or refuse */
	int		fsioctl; /* judge the file-system ioctls */
};

static void
emit(struct prog *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	if (p->n == MAX_INSNS) {
		p->full = 1;
		return;
	}
	p->f[p->n].code = code;
	p->f[p->n].jt = jt;
	p->f[p->n].jf = jf;
	p->f[p->n].k = k;
	p->n++;
}

static void
ret(struct prog *p, uint32_t action)
{
	emit(p, BPF_RET_K, 0, 0, action);
}

/*
 * A refusal, answered EPERM and reported by sbx's supervisor (notify.c
 * takes any call it does not handle for one). eperm_shared() is for the
 * checks of calls that the supervisor does handle (ioctl, mknod, open,
 * creat, the chmod family, utimensat): the Landlock flavour refuses those
 * in the filter, unreported; the bwrap flavour hands them on, and the
 * supervisor makes the same checks again (set-id modes, device nodes, a
 * terminal's input) before it performs anything.
 */
static uint32_t
eperm(void)
{
	return RET_USER_NOTIF;
}

static uint32_t refusal_shared = RET_ERRNO | EPERM;

static uint32_t
eperm_shared(void)
{
	return refusal_shared;
}

/* Point the long jump at instruction `at` to the next one emitted. */
static void
land(struct prog *p, size_t at)
{
	if (!p->full)
		p->f[at].k = (uint32_t)(p->n - at - 1);
}

/*
 * socket(2): the family is an int (the low word of args[0]). Netlink is
 * let through for NETLINK_ROUTE only (getaddrinfo, getifaddrs); AF_UNIX
 * only on request, because a read-only view of the host still lets a
 * process connect() to docker.sock, the session bus or ssh-agent.
 */
static void
socket_check(struct prog *p, int unix_ok, int inet_ok)
{
	uint32_t inet = inet_ok ? RET_ALLOW : eperm();

	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(0));
	emit(p, BPF_JEQ_K, 0, 1, F_INET);
	ret(p, inet);
	emit(p, BPF_JEQ_K, 0, 1, F_INET6);
	ret(p, inet);
	emit(p, BPF_JEQ_K, 0, 1, F_UNIX);
	ret(p, unix_ok ? RET_ALLOW : eperm());
	emit(p, BPF_JEQ_K, 0, 3, F_NETLINK);
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(2));
	emit(p, BPF_JEQ_K, 0, 1, NETLINK_ROUTE_);
	ret(p, inet);
	ret(p, eperm());
}

/*
 * The file-system ioctls that only read, in the three families (types
 * 'f', 'X' and 0x94) where the others change a file or its file system:
 * inode flags (chattr +i, +a), project ids, fs-verity (a file made
 * immutable for good), encryption policies and keys, labels, btrfs
 * subvolumes and snapshots, and for root freeze, thaw, trim and shutdown.
 * Landlock judges none of them (LANDLOCK_ACCESS_FS_IOCTL_DEV covers
 * devices only), and a descriptor opened for reading is enough. Cloning
 * and deduplication write only through a descriptor Landlock opened for
 * writing (or, deduplicating, leave the bytes as they were).
 */
static const uint32_t fs_ioctl_reads[] = {
	0x80086601, 0x80046601,	/* FS_IOC_GETFLAGS, FS_IOC32_GETFLAGS */
	0xc020660b,		/* FS_IOC_FIEMAP */
	0x801c581f,		/* FS_IOC_FSGETXATTR */
	0x40049409, 0x4020940d,	/* FICLONE, FICLONERANGE */
	0xc0189436,		/* FIDEDUPERANGE */
	0x81009431,		/* FS_IOC_GETFSLABEL */
	0x400c6615, 0xc0096616,	/* FS_IOC_GET_ENCRYPTION_POLICY(_EX) */
	0x40106614, 0xc080661a,	/* ..._PWSALT, ..._KEY_STATUS */
	0x8010661b,		/* FS_IOC_GET_ENCRYPTION_NONCE */
	0xc0046686, 0xc0286687	/* FS_IOC_MEASURE_VERITY, _READ_VERITY_METADATA */
};
#define IOC_SETVERSION		0x40087602	/* FS_IOC_SETVERSION */
#define IOC32_SETVERSION	0x40047602	/* FS_IOC32_SETVERSION */
#define IOC_TYPE		0xff00
#define IOC_TYPE_F		0x6600	/* 'f': FS_IOC_*, ext4, fscrypt */
#define IOC_TYPE_X		0x5800	/* 'X': xfs, FS_IOC_FSSETXATTR, FIFREEZE */
#define IOC_TYPE_BTRFS		0x9400	/* btrfs, FICLONE, FS_IOC_SETFSLABEL */

static void
fs_ioctl_check(struct prog *p)
{
	size_t i, n = sizeof fs_ioctl_reads / sizeof fs_ioctl_reads[0];

	for (i = 0; i < n; i++) {
		emit(p, BPF_JEQ_K, 0, 1, fs_ioctl_reads[i]);
		ret(p, RET_ALLOW);
	}
	emit(p, BPF_JEQ_K, 1, 0, IOC_SETVERSION);
	emit(p, BPF_JEQ_K, 0, 1, IOC32_SETVERSION);
	ret(p, eperm_shared());
	emit(p, BPF_ALU_AND_K, 0, 0, IOC_TYPE);
	emit(p, BPF_JEQ_K, 2, 0, IOC_TYPE_F);
	emit(p, BPF_JEQ_K, 1, 0, IOC_TYPE_X);
	emit(p, BPF_JEQ_K, 0, 1, IOC_TYPE_BTRFS);
	ret(p, eperm_shared());
}

/* ioctl(2) takes an unsigned int command: compare the low word only. */
static void
ioctl_check(struct prog *p)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(1));
	emit(p, BPF_JEQ_K, 0, 1, IOC_TIOCSTI);
	ret(p, eperm_shared());
	emit(p, BPF_JEQ_K, 0, 1, IOC_TIOCLINUX);
	ret(p, eperm_shared());
	/* Without Landlock's signal scope: who gets SIGIO is judged. */
	if (p->owner != RET_ALLOW) {
		emit(p, BPF_JEQ_K, 0, 1, IOC_FIOSETOWN);
		ret(p, p->owner);
		emit(p, BPF_JEQ_K, 0, 1, IOC_SIOCSPGRP);
		ret(p, p->owner);
	}
	if (p->fsioctl)
		fs_ioctl_check(p);
	ret(p, RET_ALLOW);
}

/* fcntl(2): F_SETOWN and F_SETOWN_EX pick who gets SIGIO: judged. */
static void
fcntl_check(struct prog *p)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(1));
	emit(p, BPF_JEQ_K, 1, 0, F_SETOWN_);
	emit(p, BPF_JEQ_K, 0, 1, F_SETOWN_EX_);
	ret(p, RET_USER_NOTIF);
	ret(p, RET_ALLOW);
}

/* clone(2) and unshare(2): flags in args[0] (CLONE_BACKWARDS on both). */
static void
nsflags_check(struct prog *p)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(0));
	emit(p, BPF_JSET_K, 0, 1, CLONE_NEW_ANY);
	ret(p, eperm());
	ret(p, RET_ALLOW);
}

/* personality(2): only the default and the query (0xffffffff). */
static void
personality_check(struct prog *p)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(0));
	emit(p, BPF_JEQ_K, 0, 1, 0);
	ret(p, RET_ALLOW);
	emit(p, BPF_JEQ_K, 0, 1, 0xffffffffU);
	ret(p, RET_ALLOW);
	ret(p, eperm());
}

#define MODE_SETID	06000	/* S_ISUID | S_ISGID */

/*
 * mknod(2), mknodat(2): FIFOs and sockets are ordinary; a device node is
 * a way around every file rule (a block device of the host disk), for a
 * root that kept CAP_MKNOD. A regular file made by mknod takes its mode
 * as given: never a set-id one.
 */
static void
mknod_check(struct prog *p, int modearg)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(modearg));
	emit(p, BPF_JSET_K, 4, 0, MODE_SETID);
	emit(p, BPF_ALU_AND_K, 0, 0, MODE_FMT);
	emit(p, BPF_JEQ_K, 2, 0, MODE_CHR);
	emit(p, BPF_JEQ_K, 1, 0, MODE_BLK);
	ret(p, p->entry);
	ret(p, eperm_shared());
}

/*
 * The chmod family, for every flavour: a set-user-ID or set-group-ID
 * file left in a writable folder runs later, outside, as its owner (root,
 * where root ran the command) for whoever can reach it. The filter cannot
 * tell a folder from a file: a mode with a set-id bit goes to the
 * supervisor, which lets a folder take it (set-group-ID only hands the
 * folder's group on to new entries: "tar -xf" of a shared tree) and
 * refuses it on anything else. Only the Landlock flavour without a
 * supervisor for metadata refuses it here, on folders too. mode_t is 32
 * bits and the kernel keeps 16: the low word is the mode.
 */
static void
chmod_check(struct prog *p, int modearg)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(modearg));
	emit(p, BPF_JSET_K, 0, 1, MODE_SETID);
	ret(p, p->setid);
	ret(p, p->meta);
}

/*
 * seccomp(2) with SECCOMP_FILTER_FLAG_NEW_LISTENER: refused, plainly (no
 * listener answers it). While sbx's listener lives the kernel refuses a
 * second one anyway (EBUSY); but a process that outlived sbx could take
 * one then and answer CONTINUE to every call sbx's filter hands on. A
 * filter without a listener still goes in: nested sandboxes stack.
 */
#define FILTER_FLAG_NEW_LISTENER	8U

static void
listener_check(struct prog *p)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(1));
	emit(p, BPF_JSET_K, 0, 1, FILTER_FLAG_NEW_LISTENER);
	ret(p, RET_ERRNO | EPERM);
	ret(p, RET_ALLOW);
}

/* creat(2) always creates: its mode is args[1]. */
static void
creat_check(struct prog *p)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(1));
	emit(p, BPF_JSET_K, 0, 1, MODE_SETID);
	ret(p, eperm_shared());
	ret(p, p->entry);
}

/*
 * open(2), openat(2): only a writing flag (O_WRONLY, O_RDWR, O_CREAT,
 * O_TRUNC; O_TMPFILE needs one of the first two) can add or change an
 * entry, so reads never reach the supervisor.
 */
#define OPEN_WRITING	(01 | 02 | 0100 | 01000)

/*
 * sendto(2) with no address (a connected socket's send) and without
 * MSG_FASTOPEN (which connects a TCP socket) goes nowhere new: allowed.
 */
#define MSG_FASTOPEN_	0x20000000U

static void
sendto_check(struct prog *p)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(3));
	emit(p, BPF_JSET_K, 5, 0, MSG_FASTOPEN_);
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(4));
	emit(p, BPF_JEQ_K, 0, 3, 0);
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(4) + 4);
	emit(p, BPF_JEQ_K, 0, 1, 0);
	ret(p, RET_ALLOW);
	ret(p, RET_USER_NOTIF);
}

/*
 * open(2), openat(2): a mode with a set-id bit is refused where the call
 * may create (O_CREAT, O_TMPFILE); the mode argument of any other open is
 * not read by the kernel. Then, with the supervisor for entries, a
 * writing flag goes to it.
 */
#define OPEN_CREATES	(0100 | 020000000)	/* O_CREAT, __O_TMPFILE */

static void
open_check(struct prog *p, int flagsarg)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(flagsarg));
	emit(p, BPF_JSET_K, 0, 3, OPEN_CREATES);
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(flagsarg + 1));
	emit(p, BPF_JSET_K, 0, 1, MODE_SETID);
	ret(p, eperm_shared());
	if (p->entry == RET_ALLOW) {
		ret(p, RET_ALLOW);
		return;
	}
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(flagsarg));
	emit(p, BPF_JSET_K, 0, 1, OPEN_WRITING);
	ret(p, RET_USER_NOTIF);
	ret(p, RET_ALLOW);
}

/*
 * Landlock leaves file metadata alone, and an owner may change it on any
 * of its files: utimensat(2) is let through for an open descriptor only
 * (a NULL path, futimens), so "touch" cannot reach a read-only file.
 */
static void
utimensat_check(struct prog *p)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(1));
	emit(p, BPF_JEQ_K, 0, 2, 0);
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(1) + 4);
	emit(p, BPF_JEQ_K, 1, 0, 0);
	ret(p, eperm_shared());
	ret(p, RET_ALLOW);
}

/*
 * Without a pid namespace a process of the same user is in reach of
 * prlimit(2), setpriority(2), ioprio_set(2) and the sched_set*(2) calls
 * (its CPUs, its policy: SCHED_IDLE outlives the sandbox): only the caller
 * itself (pid 0) is let through, and never PRIO_USER or IOPRIO_WHO_USER
 * (every process of the user).
 */
static void
self_check(struct prog *p)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(0));
	emit(p, BPF_JEQ_K, 1, 0, 0);
	ret(p, eperm());
	ret(p, RET_ALLOW);
}

/* setpriority(2)'s PRIO_USER and ioprio_set(2)'s IOPRIO_WHO_USER */
enum { WHO_PRIO_USER = 2, WHO_IOPRIO_USER = 3 };

/* (which, who) calls: never which == user, else who must be 0 (self). */
static void
who_check(struct prog *p, uint32_t user)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(0));
	emit(p, BPF_JEQ_K, 2, 0, user);
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARG(1));
	emit(p, BPF_JEQ_K, 1, 0, 0);
	ret(p, eperm());
	ret(p, RET_ALLOW);
}

static void
head(struct prog *p)
{
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_ARCH);
	emit(p, BPF_JEQ_K, 1, 0, AUDIT_ARCH_NATIVE);
	ret(p, RET_KILL_PROCESS);
	emit(p, BPF_LD_W_ABS, 0, 0, OFF_NR);
#ifdef X32_BIT
	/* x32 calls share the arch value; their numbers carry this bit. */
	emit(p, BPF_JGE_K, 0, 1, X32_BIT);
	ret(p, RET_KILL_PROCESS);
#endif
	emit(p, BPF_JGE_K, 0, 1, NR_UNREVIEWED);
	ret(p, RET_ERRNO | ENOSYS);
}

/*
 * The numbers below NR_UNREVIEWED cut into runs: each a stretch of
 * consecutive numbers with one action, a stretch with no rule (allowed)
 * between them. deny_all's 60-odd numbers are some 20 runs (mount to
 * nfsservctl is one), and each run is one instruction of the tree.
 */
#define A_ALLOW	N_ACT		/* a run with no rule */

struct nrrun {
	uint32_t	lo;
	int		act;
};

static size_t
runs_of(const struct scrule *r, size_t n, struct nrrun *out)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++) {
		if (m == 0 && r[i].nr > 0)
			out[m++] = (struct nrrun){ 0, A_ALLOW };
		else if (m > 0 && r[i].nr > r[i - 1].nr + 1)
			out[m++] = (struct nrrun){ r[i - 1].nr + 1, A_ALLOW };
		if (m == 0 || out[m - 1].act != (int)r[i].act ||
		    r[i].nr != r[i - 1].nr + 1)
			out[m++] = (struct nrrun){ r[i].nr, (int)r[i].act };
	}
	if (n > 0 && r[n - 1].nr + 1 < NR_UNREVIEWED)
		out[m++] = (struct nrrun){ r[n - 1].nr + 1, A_ALLOW };
	return m;
}

/* The instructions tree() emits for runs [a, b). */
static size_t
tree_size(size_t a, size_t b)
{
	size_t mid, left;

	if (b - a == 1)
		return 1;
	mid = a + (b - a) / 2;
	left = tree_size(a, mid);
	return 1 + (left > 255) + left + tree_size(mid, b);
}

/* A run's answer: a return, or the long jump to its argument check. */
static void
run_answer(struct prog *p, int act)
{
	switch (act) {
	case A_ALLOW: ret(p, RET_ALLOW); return;
	case A_EPERM: ret(p, eperm()); return;
	case A_ENOSYS: ret(p, RET_ERRNO | ENOSYS); return;
	case A_NOTIF: ret(p, RET_USER_NOTIF); return;
	case A_NOOP: ret(p, RET_ERRNO | 0); return;	/* 0, runs nothing */
	}
	if (p->nfix == MAX_FIX) {
		p->full = 1;
		return;
	}
	p->fix[p->nfix].at = p->n;
	p->fix[p->nfix++].act = (enum act)act;
	emit(p, BPF_JA, 0, 0, 0);
}

/*
 * Runs [a, b), sorted, which are all that reach here: a balanced search
 * on their first numbers, below run mid to the left (right after the
 * test), from it on to the right.
 */
static void
tree(struct prog *p, const struct nrrun *r, size_t a, size_t b)
{
	size_t mid, left, ja;

	if (b - a == 1) {
		run_answer(p, r[a].act);
		return;
	}
	mid = a + (b - a) / 2;
	left = tree_size(a, mid);
	if (left <= 255) {
		emit(p, BPF_JGE_K, (uint8_t)left, 0, r[mid].lo);
		tree(p, r, a, mid);
	} else {
		emit(p, BPF_JGE_K, 0, 1, r[mid].lo);
		ja = p->n;
		emit(p, BPF_JA, 0, 0, 0);	/* to the right half */
		tree(p, r, a, mid);
		land(p, ja);
	}
	tree(p, r, mid, b);
}

static void
add(struct scrule *r, size_t *n, int nr, enum act act)
{
	if (nr < 0)
		return;
	r[*n].nr = (uint32_t)nr;
	r[(*n)++].act = act;
}

/* Insertion sort: the lists are short and nearly in order already. */
static void
sort_rules(struct scrule *r, size_t n)
{
	struct scrule t;
	size_t i, j;

	for (i = 1; i < n; i++) {
		t = r[i];
		for (j = i; j > 0 && r[j - 1].nr > t.nr; j--)
			r[j] = r[j - 1];
		r[j] = t;
	}
}

#define COUNT(a)	(sizeof (a) / sizeof (a)[0])
#define MAX_RULES	(COUNT(deny_all) + COUNT(deny_landlock) + COUNT(meta) + \
	COUNT(entries) + COUNT(net_calls) + COUNT(signal_calls) + \
	COUNT(chown_calls) + COUNT(self_only) + N_ACT + 16)

static void
add_all(struct scrule *r, size_t *n, const int *nrs, size_t count,
    enum act act)
{
	size_t i;

	for (i = 0; i < count; i++)
		add(r, n, nrs[i], act);
}

/*
 * The rules of a flavour, into r (MAX_RULES long), and the answers the
 * argument checks give where they let a call through.
 */
static size_t
collect(struct prog *p, int flavour, struct scrule *r)
{
	int landlock = flavour & SECCOMP_FOR_LANDLOCK;
	int notify = flavour & SECCOMP_NOTIFY_META;
	int ent = flavour & SECCOMP_NOTIFY_ENTRIES;
	size_t n = 0;

	refusal_shared = landlock ? RET_ERRNO | EPERM : RET_USER_NOTIF;
	p->owner = flavour & SECCOMP_NOTIFY_SIGNALS ? RET_USER_NOTIF :
	    RET_ALLOW;
	p->entry = ent ? RET_USER_NOTIF : RET_ALLOW;
	p->meta = !landlock ? RET_ALLOW : notify ? RET_USER_NOTIF :
	    eperm_shared();
	p->setid = !landlock || notify ? RET_USER_NOTIF : eperm_shared();
	p->fsioctl = landlock;
	add_all(r, &n, deny_all, COUNT(deny_all), A_EPERM);
	if (landlock) {
		add_all(r, &n, deny_landlock, COUNT(deny_landlock), A_EPERM);
		add_all(r, &n, meta, COUNT(meta), notify ? A_NOTIF : A_EPERM);
		add(r, &n, NR_utimensat, notify ? A_NOTIF : H_UTIMENSAT);
		add(r, &n, NR_prlimit64, H_SELF);
		add(r, &n, NR_setpriority, H_SETPRIORITY);
		add(r, &n, NR_ioprio_set, H_IOPRIO);
		add_all(r, &n, self_only, COUNT(self_only), H_SELF);
	}
	if (flavour & SECCOMP_NOTIFY_NET) {
		add_all(r, &n, net_calls, COUNT(net_calls), A_NOTIF);
		add(r, &n, NR_sendto, H_SENDTO);
	}
	if (flavour & SECCOMP_NOTIFY_WATCH)
		add(r, &n, NR_inotify_add_watch, A_NOTIF);
	if ((flavour & SECCOMP_NOTIFY_BIND) && !(flavour & SECCOMP_NOTIFY_NET))
		add(r, &n, NR_bind, A_NOTIF);
	if (flavour & SECCOMP_NOTIFY_SIGNALS) {
		add_all(r, &n, signal_calls, COUNT(signal_calls), A_NOTIF);
		add(r, &n, NR_fcntl, H_FCNTL);
	}
	if (ent)
		add_all(r, &n, entries, COUNT(entries), A_NOTIF);
	add_all(r, &n, chown_calls, COUNT(chown_calls), A_NOOP);
	/* clone3 passes its flags, openat2 its mode, in memory that BPF
	 * cannot read: ENOSYS, as from an older kernel, and libc falls back. */
	add(r, &n, NR_clone3, A_ENOSYS);
	add(r, &n, NR_openat2, A_ENOSYS);
	add(r, &n, NR_socket, H_SOCKET);
	add(r, &n, NR_ioctl, H_IOCTL);
	add(r, &n, NR_clone, H_NSFLAGS);
	add(r, &n, NR_unshare, H_NSFLAGS);
	add(r, &n, NR_personality, H_PERSONALITY);
	add(r, &n, NR_mknod, H_MKNOD);
	add(r, &n, NR_mknodat, H_MKNODAT);
	add(r, &n, NR_open, H_OPEN);
	add(r, &n, NR_openat, H_OPENAT);
	add(r, &n, NR_creat, H_CREAT);
	add(r, &n, NR_chmod, H_CHMOD);
	add(r, &n, NR_fchmod, H_CHMOD);
	add(r, &n, NR_fchmodat, H_CHMODAT);
	add(r, &n, NR_fchmodat2, H_CHMODAT);
	add(r, &n, NR_seccomp, H_SECCOMP);
	return n;
}

static void
check(struct prog *p, enum act a, int unix_ok, int inet_ok)
{
	switch (a) {
	case H_SOCKET: socket_check(p, unix_ok, inet_ok); break;
	case H_IOCTL: ioctl_check(p); break;
	case H_NSFLAGS: nsflags_check(p); break;
	case H_PERSONALITY: personality_check(p); break;
	case H_MKNOD: mknod_check(p, 1); break;
	case H_MKNODAT: mknod_check(p, 2); break;
	case H_UTIMENSAT: utimensat_check(p); break;
	case H_OPEN: open_check(p, 1); break;
	case H_OPENAT: open_check(p, 2); break;
	case H_CREAT: creat_check(p); break;
	case H_CHMOD: chmod_check(p, 1); break;
	case H_CHMODAT: chmod_check(p, 2); break;
	case H_SENDTO: sendto_check(p); break;
	case H_FCNTL: fcntl_check(p); break;
	case H_SECCOMP: listener_check(p); break;
	case H_SELF: self_check(p); break;
	case H_SETPRIORITY: who_check(p, WHO_PRIO_USER); break;
	case H_IOPRIO: who_check(p, WHO_IOPRIO_USER); break;
	default: p->full = 1; break;
	}
}

static void
body(struct prog *p, int flavour, int unix_ok, int inet_ok)
{
	struct scrule r[MAX_RULES];
	struct nrrun runs[2 * MAX_RULES + 1];
	size_t n, m, i, done[N_ACT];
	enum act a;

	n = collect(p, flavour, r);
	sort_rules(r, n);
	for (i = 1; i < n; i++)
		if (r[i].nr == r[i - 1].nr) {	/* a list with a slip */
			p->full = 1;
			return;
		}
	for (i = 0; i < n; i++)
		if (r[i].nr >= NR_UNREVIEWED) {	/* head() answers those */
			p->full = 1;
			return;
		}
	if ((m = runs_of(r, n, runs)) == 0) {
		ret(p, RET_ALLOW);
		return;
	}
	tree(p, runs, 0, m);

	/* The argument checks, each once, where the leaves jump to. */
	for (a = 0; a < N_ACT; a++)
		done[a] = (size_t)-1;
	for (i = 0; i < p->nfix && !p->full; i++) {
		a = p->fix[i].act;
		if (done[a] == (size_t)-1) {
			done[a] = p->n;
			check(p, a, unix_ok, inet_ok);
		}
		p->f[p->fix[i].at].k = (uint32_t)(done[a] - p->fix[i].at - 1);
	}
}

/* The flavour, in one line for --dry-run. */
char *
seccomp_describe(const struct sbx_opts *o, int flavour)
{
	int ll = flavour & SECCOMP_FOR_LANDLOCK;

	return xasprintf("seccomp flavour=%s inet=%s unix=%s%s%s%s%s%s chown=noop",
	    ll ? "landlock" : "bwrap",
	    !ll || o->net == NET_ALL ? "yes" :
	    flavour & SECCOMP_NOTIFY_NET ? "supervisor" : "no",
	    o->allow_unix ? "yes" : "no",
	    !ll ? "" : flavour & SECCOMP_NOTIFY_META ?
	    " metadata=supervisor" : " metadata=refused",
	    flavour & SECCOMP_NOTIFY_ENTRIES ? " entries=supervisor" :
	    ll ? " entries=landlock" : " entries=mounts",
	    !ll || flavour & SECCOMP_NOTIFY_META ? " setid=supervisor" : "",
	    ll ? " other_processes=refused" : "",
	    ll ? "" : " refusals=reported");
}

int
seccomp_build(const struct sbx_opts *o, int flavour, unsigned char **prog,
    size_t *len, struct sbx_err *e)
{
	static struct prog p;
	int inet_ok;

	/*
	 * Landlock has no network namespace: without the supervisor
	 * judging where sockets go, --no-net is this filter.
	 */
	inet_ok = !(flavour & SECCOMP_FOR_LANDLOCK) || o->net == NET_ALL ||
	    (flavour & SECCOMP_NOTIFY_NET);
	p.n = p.nfix = 0;	/* no memset: only what is emitted is read */
	p.full = 0;
	head(&p);
	body(&p, flavour, o->allow_unix, inet_ok);
	if (p.full)
		return sbx_errf(e, ERR_INTERNAL,
		    "seccomp: filter too long, or a number listed twice");
	*len = p.n * sizeof p.f[0];
	*prog = xmalloc(*len);
	memcpy(*prog, p.f, *len);
	return 0;
}

#else	/* a Linux architecture this filter was not written for */

char *
seccomp_describe(const struct sbx_opts *o, int flavour)
{
	(void)o;
	(void)flavour;
	return xstrdup("seccomp unsupported architecture");
}

int
seccomp_build(const struct sbx_opts *o, int flavour, unsigned char **prog,
    size_t *len, struct sbx_err *e)
{
	(void)o; (void)flavour; (void)prog; (void)len;
	return sbx_errf(e, ERR_UNAVAILABLE,
	    "seccomp: unsupported architecture");
}

#endif

/*
 * In the child between fork and exec: no allocation, no stdio. With
 * listener, the filter's notifications go to the descriptor it returns
 * (the supervisor's, notify.c); a call the supervisor has taken waits
 * for its answer, and only a fatal signal ends the wait (WAIT_KILLABLE),
 * so an operation sbx performed is never retried behind its back.
 */
int
seccomp_install(const unsigned char *prog, size_t len, int listener)
{
	struct sfprog fp;
	long r;

	if (len == 0 || len % sizeof(struct sfilter) != 0 ||
	    len / sizeof(struct sfilter) > 4096) {
		errno = EINVAL;
		return -1;
	}
	fp.len = (unsigned short)(len / sizeof(struct sfilter));
	fp.filter = (struct sfilter *)(uintptr_t)prog;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return -1;
#ifdef SYS_seccomp
	if (listener) {
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		    FILTER_NEW_LISTENER | FILTER_WAIT_KILLABLE, &fp);
		if (r < 0 && errno == EINVAL)
			r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    FILTER_NEW_LISTENER, &fp);
		return (int)r;
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
#else
	(void)r;
	if (listener)
		return errno = ENOSYS, -1;
#endif
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0);
}

#else	/* !__linux__ */

char *
seccomp_describe(const struct sbx_opts *o, int flavour)
{
	(void)o;
	(void)flavour;
	return xstrdup("seccomp needs linux");
}

int
seccomp_build(const struct sbx_opts *o, int flavour, unsigned char **prog,
    size_t *len, struct sbx_err *e)
{
	(void)o; (void)flavour; (void)prog; (void)len;
	return sbx_errf(e, ERR_UNSUPPORTED, "seccomp: needs linux");
}

int
seccomp_install(const unsigned char *prog, size_t len, int listener)
{
	(void)prog; (void)len; (void)listener;
	errno = ENOSYS;
	return -1;
}

#endif
