/*
 * sbx.h: what crosses files. The options as parsed, the compiled policy,
 * the backend-neutral launch and the backend table's row, the result,
 * error kinds and the prototypes that other files call. No code.
 *
 * The pipeline reads one way: options -> policy (neutral rules) ->
 * environment -> a backend's plan (struct launch) -> supervision
 * (proc.c) -> capture -> result. No step rewrites what an earlier one
 * decided: the options stay as parsed.
 */
#ifndef SBX_H
#define SBX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SBX_VERSION	"0.3.0"

enum {
	EXIT_TIMEDOUT = 124,
	EXIT_SBX = 125,
	EXIT_NOEXEC = 126,
	EXIT_NOTFOUND = 127
};

/* error=KIND in the result: each kind beside its name (err_kind_name()). */
#define SBX_ERR_KINDS \
	X(ERR_NONE,		"")		\
	X(ERR_USAGE,		"usage")	/* bad option or argument */ \
	X(ERR_PATH,		"path")		/* a path missing or unusable */ \
	X(ERR_POLICY,		"policy")	/* not enforceable as asked */ \
	X(ERR_UNAVAILABLE,	"unavailable")	/* no OS sandbox works here */ \
	X(ERR_UNSUPPORTED,	"unsupported_platform") \
	X(ERR_SANDBOX,		"sandbox")	/* it failed to start */ \
	X(ERR_PROXY,		"proxy")	\
	X(ERR_SPAWN,		"spawn")	/* fork, pipe, ... */ \
	X(ERR_RESULT,		"result")	/* the result file */ \
	X(ERR_NOT_FOUND,	"not_found")	/* command not found (127) */ \
	X(ERR_NOT_EXECUTABLE,	"not_executable") /* found, not runnable */ \
	X(ERR_INTERNAL,		"internal")

enum err_kind {
#define X(kind, name) kind,
	SBX_ERR_KINDS
#undef X
};

struct sbx_err {
	enum err_kind	 kind;
	char		 msg[1024];	/* "what: why", no "sbx: " prefix */
};

/* A NULL-terminated, growable vector of owned strings. */
struct strv {
	char	**v;
	size_t	  n;
	size_t	  cap;
};

enum sandbox_mode { SANDBOX_OS, SANDBOX_AUTO, SANDBOX_HOST };
enum net_mode { NET_NONE, NET_ALL, NET_PROXY };
enum tty_mode { TTY_AUTO, TTY_ON, TTY_OFF };

/* One --allow-host pattern, validated and normalised (proxy_pattern()). */
struct host_pattern {
	char	*name;		/* lower case, no trailing dot, no "*." */
	int	 wildcard;	/* "*.name": subdomains of name only */
	int	 port;		/* 0: ports 80 and 443 */
	int	 local;		/* localhost:PORT, 127.0.0.1:PORT or
				   [::1]:PORT: that port of the host's own
				   loopback (name "localhost") */
};
#define LOCAL_MAX	16	/* host loopback ports (--allow-host
				   localhost:PORT) per run */

/* The options as parsed; paths absolute and resolved. Never rewritten. */
struct sbx_opts {
	char		 *root;
	struct strv	  write;
	struct strv	  deny_write;
	struct strv	  deny_read;
	struct strv	  scope;
	enum net_mode	  net;
	struct host_pattern *hosts;
	size_t		  nhosts;
	int		  allow_private;
	int		  protect;	/* default protected list; 0 with --no-protect */
	int		  allow_unix;	/* --allow-unix-sockets */
	int		  host_tmp;	/* --host-tmp: no private temp folder */
	struct strv	  cache;	/* --cache TOOL, each once, as given */
	char		 *cache_root;	/* where their folders live, resolved */
	struct strv	  cache_dirs;	/* those folders, made and resolved */
	struct strv	  env_args;	/* each -e as given */
	int64_t		  timeout_ms;	/* 0: none */
	int64_t		  kill_after_ms;
	size_t		  max_output;
	enum sandbox_mode mode;
	const char	 *backend;	/* --backend as given, or NULL */
	int		  passthrough;
	enum tty_mode	  tty;		/* --tty, --no-tty */
	size_t		  mem;		/* --mem; 0: no limit */
	long		  procs;	/* --procs */
	size_t		  file_size;	/* --file-size */
	int64_t		  cpu_ms;	/* --cpu */
	int		  json;
	int		  dry_run;
	int		  probe;
	char		 *result_path;
	char		**cmd;		/* NULL-terminated command */
	char		 *self;		/* sbx's own executable, resolved */
};

/*
 * The compiled file-system policy: rules in the order they apply, each
 * overriding the earlier ones below its path (mount semantics: bwrap binds,
 * Seatbelt's last match). policy_compile() builds it from the options:
 * the root (unless --scope), --write, then --scope (root read-only, the
 * scope paths writable), then the protected list and --deny-write, then
 * --deny-read.
 */
enum rule_kind { RULE_WRITE, RULE_READONLY, RULE_DENY_READ };
enum path_type { PATH_MISSING, PATH_DIR, PATH_FILE, PATH_OTHER };

struct rule {
	enum rule_kind	 kind;
	char		*path;		/* absolute, resolved */
	enum path_type	 type;
	int		 implicit;	/* from the default protected list */
	enum path_type	 create;	/* PATH_DIR or PATH_FILE: held as an
					   empty placeholder, made if missing;
					   PATH_OTHER: a file that reads "."
					   (git's commondir: no redirection) */
	int		 fresh;		/* RULE_WRITE: a new, empty folder of
					   the run's own, not the host's (a
					   private /tmp); only for BE_OWN_TMP */
};

struct policy {
	struct rule	*r;
	size_t		 n;
	struct strv	 writable;	/* the folders that end up writable */
	struct strv	 missing;	/* protected names that do not exist, in
					   a writable folder (their existing part
					   resolved): held by name, no file */
	char		*home;		/* $HOME, resolved, or NULL: where a
					   backend may keep new names from being
					   made at all (bwrap seals the folders
					   of the missing names below it) */
};

/* The device nodes every sandbox offers (bwrap's --dev binds these). */
extern const char *const sbx_devices[];

/*
 * Fixed descriptor numbers in the bwrap and Seatbelt child; everything
 * else above 2 is closed before exec. bwrap reads and closes ARGS and
 * SECCOMP; sandbox-exec reads its profile from ARGS (-f /dev/fd/3) and
 * leaves it open, so the shim closes it; the shim keeps STATUS and
 * BRIDGE away from the command.
 */
#define FD_ARGS		3
#define FD_SECCOMP	4
#define FD_STATUS	5
#define FD_BRIDGE	6
#define FD_RESOLV	7	/* bwrap --ro-bind-data: /etc/resolv.conf */
#define FD_HOSTS	8	/* and /etc/hosts (netns.c) */
#define FD_MOUNTS	9	/* bwrap: what the shim checks of the mounts */
#define BRIDGE_PORT	3128	/* 127.0.0.1 inside the sandbox's netns */
#define SHIM_ARG	"--sbx-internal-shim"
#define SHIM_ENV	"SBX_ENV_"	/* SBX_ENV_<n>=NAME=VALUE: for the shim */

/* What every builder gets: the options, the policy, the final environment. */
struct plan {
	const struct sbx_opts	*o;
	const struct policy	*pol;
	const struct strv	*env;	/* NAME=VALUE, exactly what the command sees */
	int			 bridge_fd;	/* the proxy's bridge for the child, or -1 */
	int			 proxy_port;	/* the proxy on 127.0.0.1 (no bridge), or 0 */
	const char		*tmpdir;	/* the run's private temp folder (TMPDIR),
						   or NULL with --host-tmp */
	unsigned		 tty_fds;	/* the command's fds (bits 0-2) that
						   are sbx's pseudo-terminal */
	const struct limits	*lim;		/* how each resource limit holds */
};

/* A descriptor the child gets at a fixed number. */
struct launch_fd {
	int		 num;
	int		 src;		/* a descriptor of sbx's, or -1 */
	unsigned char	*data;		/* or these bytes, in a memory file */
	size_t		 len;
};

#define LAUNCH_MAXFD	264	/* FD_ARGS..FD_MOUNTS, bwrap's --bind-fd */

/*
 * What to run, the same shape for every backend: built by a backend as a
 * pure function of the plan, read by proc.c, which never asks which
 * backend it runs.
 */
struct launch {
	const struct backend *be;
	struct strv	 argv;		/* to execve: argv.v[0] is absolute */
	struct strv	 envp;		/* execve's environment */
	struct launch_fd fd[LAUNCH_MAXFD];
	size_t		 nfd;
	int		 status_fd;	/* the child's end of the status socket */
	unsigned	 flags;		/* L_* */
	int		 helpers;	/* processes of the sandbox's own (bwrap,
					   the shim) that --procs does not count */
	int		(*confine)(void *);	/* in the child before exec, on priv */
	void		(*take_fd)(void *, int, pid_t);	/* a descriptor the
					   child reported (ST_FD), and its pid */
	struct strv	 dry;		/* --dry-run: lines before the launch line */
	struct strv	 shown;		/* --dry-run: the line, if not argv */
	void		*priv;		/* the backend's own (be->release) */
};
#define L_SHIM		0x1	/* status_fd stays open across exec: a shim
				   inside reports the start and the status */
#define L_PIDNS		0x2	/* own pid namespace: it ends with its leader */
#define L_SPARE_LEADER	0x4	/* SIGTERM the leader's descendants, not it */
#define L_KEEPER	0x8	/* no pid namespace: a keeper process of sbx's
				   ends the tree should sbx die (proc.c) */
#define L_OWN_NPROC	0x10	/* RLIMIT_NPROC is set inside, by the shim */

/* Why the sandbox did not start, as the child or the shim reported it. */
struct start_fail {
	int	 step;		/* STEP_*, or -1: it ended before reporting */
	int	 err;		/* errno */
	int	 fd;		/* STEP_REOPEN: which descriptor */
	char	 line[300];	/* the sandbox program's first line of stderr */
};

struct exec_result;

/* One row of the backend table (sbx.c). */
struct backend {
	const char	*name;
	const char	*info_key;	/* --probe prints NAME_KEY=info */
	/* Works here? full: a real trial run, else a quick check. */
	int	(*probe)(const struct sbx_opts *, int, char *, size_t,
		    struct sbx_err *);
	int	(*build)(const struct plan *, struct launch *, struct sbx_err *);
	unsigned flags;			/* BE_* */
	/* Optional: before the spawn, after the run, a failed start. */
	int	(*prepare)(struct launch *, struct sbx_err *);
	void	(*finish)(struct launch *);
	void	(*explain)(const struct launch *, const struct start_fail *,
		    struct sbx_err *);
	void	(*release)(void *);
	/* Optional: what the sandbox refused, into the result. */
	void	(*report)(const struct launch *, struct exec_result *);
};
#define BE_OS		0x1	/* an OS sandbox: --backend NAME, the default */
#define BE_BRIDGE	0x2	/* the proxy reaches it through the bridge */
#define BE_TRIAL	0x4	/* the launch is its trial: a failed start
				   moves on to the next row */
#define BE_CAPTURE	0x8	/* the proxy is reached at 127.0.0.1:BRIDGE_PORT,
				   redirected to its listener (the supervisor) */
#define BE_OWN_TMP	0x10	/* gives the command a /tmp of its own (a
				   fresh rule); other rows get a per-run
				   folder on the host */

/* A resource limit that ended or hampered the command (limit=NAME). */
#define LIMIT_MEM	0x1
#define LIMIT_PROCS	0x2
#define LIMIT_FSIZE	0x4
#define LIMIT_CPU	0x8

struct exec_result {
	const char	*executor;	/* the backend's name, or NULL */
	int		 isolated;
	int		 started;
	int		 exited;	/* exit_code valid */
	int		 exit_code;
	int		 signal;	/* 0: none */
	int		 timed_out;
	int		 aborted;
	int64_t		 duration_ms;
	struct capture	*out;
	struct capture	*err;
	struct strv	 blocked;	/* hosts the proxy refused */
	struct strv	 blocked_why;	/* "HOST REASON", the same order */
	struct strv	 denied;	/* "OP PATH": the first DENIED_MAX
					   distinct refusals */
	uint64_t	 ndenied;	/* and how many in all */
	int		 have_usage;	/* the command ran: usage known */
	int64_t		 cpu_user_ms;	/* the whole tree's */
	int64_t		 cpu_sys_ms;
	int64_t		 max_rss_kb;	/* the largest process's peak */
	int64_t		 mem_peak_kb;	/* the cgroup's; 0: no memory cgroup */
	int64_t		 procs_peak;	/* the cgroup's; 0: no pids cgroup */
	unsigned	 limit;		/* LIMIT_*: what ended or hampered it */
	const char	*limit_mem;	/* how --mem held: "cgroup-v2",
					   "cgroup-v1", "rlimit"; NULL: no --mem */
	struct strv	 allowed_local;	/* "localhost:PORT": host loopback
					   ports the command could reach */
	enum err_kind	 error;
	const char	*error_message;
};

/* util.c */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xasprintf(const char *, ...)
	    __attribute__((format(printf, 1, 2)));
void	 strv_push(struct strv *, const char *);
void	 strv_pushf(struct strv *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	 strv_free(struct strv *);
void	 denied_push(struct strv *, const char *, size_t);
void	 env_put(struct strv *, const char *, const char *);
const char *env_get(const struct strv *, const char *);
void	 env_add(struct strv *, const char *, const char *);
const char *shown(const char *);
extern const char *const std_fd_name[3];	/* fds 0-2, for messages */
int	 sbx_errf(struct sbx_err *, enum err_kind, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
const char *err_kind_name(enum err_kind);
int	 parse_duration(const char *, int64_t *);
int	 parse_size(const char *, size_t *);
int64_t	 now_ms(void);
char	*shell_quote(const char *);
char	*path_join(const char *, const char *);
int	 path_under(const char *, const char *);
void	 mnt_unescape(char *);
/* One line of /proc/self/mountinfo, pointing into mnt_read()'s buffer. */
struct mnt_line {
	char	*dev;		/* MAJ:MIN */
	char	*root;		/* the mount's root in its file system */
	char	*at;		/* the mount point */
	char	*opts;		/* the mount's own options (rw,nosuid,...) */
};
size_t	 mnt_read(struct mnt_line **, char **);
const char *signal_name(int);
int	 set_cloexec(int);
int	 set_nonblock(int);
char	*find_program(const char *, const struct strv *);
char	*self_path(const char *);
void	 exec_command(char **, char **);
size_t	 utf8_len(const unsigned char *, size_t);
int	 caps_drop(uint64_t, int);
struct stat;
int	 open_nolinks(const char *, struct stat *);
struct nolinks;
struct nolinks *nolinks_new(void);
int	 nolinks_open(struct nolinks *, const char *, struct stat *);
void	 nolinks_free(struct nolinks *);
int	 walk_checked(const char *, const struct strv *, char **);
void	 checked_add(const char *, int, const struct stat *);
void	 checked_note(const char *, int, const struct stat *, int);
int	 checked_fd(const char *);
int	 checked_same(const char *, const struct stat *);
int	 checked_elsewhere(const char *, const struct stat *,
	    const struct strv *);
struct file_id;
int	 checked_id(const char *, struct file_id *);

/*
 * timing.c: SBX_TIMING=1, a launch's phases on stderr. Callers test
 * timing_on first, so an account that is off costs a branch per phase.
 */
enum time_part {
	TP_MOUNTS, TP_CONFINE, TP_SECCOMP, TP_CAPTURE, TP_BRIDGE, TP_FORK,
	NTPARTS
};
extern int timing_on;
int64_t	 timing_us(void);
void	 timing_init(void);
void	 timing_mark(const char *);
void	 timing_part(const char *, int64_t);
void	 timing_reported(int, int64_t);
/* gitcfg.c: each key (lower case but its subsection) and value of a git
 * config's text; value NULL for a key without "=". */
void	 gitcfg_parse(const char *, size_t,
	    void (*)(void *, const char *, const char *), void *);

/* policy.c */
int	 policy_compile(const struct sbx_opts *, struct policy *,
	    struct sbx_err *);
const char *policy_holder(const struct policy *, const char *);
void	 policy_with_tmp(const struct policy *, const char *, int, const char *,
	    struct policy *);
void	 policy_free(struct policy *);
int	 policy_git_config_ok(const char *, size_t, char *, size_t);

/* tmp.c: the run's private temp folder on the host (rows without BE_OWN_TMP) */
struct tmp;
int	 tmp_create(struct tmp **, struct sbx_err *);
const char *tmp_path(const struct tmp *);
const char *tmp_hidden(const struct tmp *);
void	 tmp_remove(struct tmp *);

/* cache.c: --cache TOOL */
int	 cache_known(const char *);
const char *cache_list(void);
int	 cache_prepare(const struct strv *, char **, struct strv *,
	    struct sbx_err *);
void	 cache_env(const struct strv *, const char *, struct strv *);

/* bwrap.c, landlock.c, seatbelt.c: the rows of the backend table */
int	 bwrap_probe(const struct sbx_opts *, int, char *, size_t,
	    struct sbx_err *);
int	 bwrap_build(const struct plan *, struct launch *, struct sbx_err *);
void	 bwrap_finish(struct launch *);
void	 bwrap_report(const struct launch *, struct exec_result *);
void	 bwrap_explain(const struct launch *, const struct start_fail *,
	    struct sbx_err *);
void	 bwrap_release(void *);
int	 landlock_probe(const struct sbx_opts *, int, char *, size_t,
	    struct sbx_err *);
int	 landlock_build(const struct plan *, struct launch *,
	    struct sbx_err *);
void	 landlock_finish(struct launch *);
void	 landlock_report(const struct launch *, struct exec_result *);
void	 landlock_release(void *);
int	 seatbelt_probe(const struct sbx_opts *, int, char *, size_t,
	    struct sbx_err *);
int	 seatbelt_build(const struct plan *, struct launch *,
	    struct sbx_err *);

/* seccomp.c; the flavour is a set of these */
#define SECCOMP_FOR_BWRAP	1
#define SECCOMP_FOR_LANDLOCK	2
#define SECCOMP_NOTIFY_META	4	/* chmod, utimes, xattrs: to notify.c */
#define SECCOMP_NOTIFY_ENTRIES	8	/* entry calls: to notify.c (holes) */
#define SECCOMP_NOTIFY_NET	16	/* connect, bind, send: to notify.c */
#define SECCOMP_NOTIFY_SIGNALS	32	/* signals by pid (landlock abi < 6) */
#define SECCOMP_NOTIFY_WATCH	64	/* inotify watches (--deny-read) */
#define SECCOMP_NOTIFY_BIND	128	/* bind(2): its Unix names, to notify.c */
int	 seccomp_build(const struct sbx_opts *, int, unsigned char **,
	    size_t *, struct sbx_err *);
char	*seccomp_describe(const struct sbx_opts *, int);
int	 seccomp_install(const unsigned char *, size_t, int);

/*
 * notify.c: the supervisor below the Linux backends. The calls a
 * backend's filter hands on (seccomp user notification) are judged by
 * sbx, outside, with the whole policy in view: held names at the moment
 * of the call, metadata, the network and signals where the backend
 * cannot say, and the filter's refusals, reported.
 */
struct sup;
struct file_id {
	dev_t	dev;
	ino_t	ino;
};
struct sup_conf {
	const struct policy	*pol;
	const struct file_id	*granted;	/* folders the kernel judges
						   writes below (Landlock) */
	size_t			 ngranted;
	int			 own_mounts;	/* paths resolve in the sandbox's
						   root; its mounts judge what
						   no rule holds (bwrap) */
	int			 hold_git;	/* git folders made in the run
						   are held too */
	int			 keep_caps;	/* the command keeps CAP_DAC_* */
	int			 net;		/* judged: NET_NONE, NET_PROXY */
	int			 proxy_port;
	int			 scope;		/* signals, abstract sockets */
	const struct host_pattern *hosts;	/* --allow-host: its host
						   loopback ports */
	size_t			 nhosts;
};
struct sup *notify_new(const struct sup_conf *);
void	 notify_start(struct sup *, int, pid_t);
void	 notify_stop(struct sup *);
void	 notify_denied(struct sup *, struct strv *, uint64_t *);
void	 notify_free(struct sup *);
int	 notify_probe(struct sbx_err *);

/* capture.c */
struct capture	*capture_new(size_t);
void		 capture_add(struct capture *, const char *, size_t);
uint64_t	 capture_total(const struct capture *);
int		 capture_truncated(const struct capture *);
void		 capture_parts(const struct capture *, const char *[3],
		    size_t [3], uint64_t *);
void		 capture_free(struct capture *);

/* result.c */
int	 result_write(int, const struct exec_result *, int);

/* proxy.c */
struct proxy;
struct pollfd;
int	 proxy_pattern(const char *, struct host_pattern *, const char **);
int	 proxy_start(const struct sbx_opts *, int, struct proxy **,
	    struct sbx_err *);
int	 proxy_bridge_fd(const struct proxy *);
void	 proxy_env(int, struct strv *);
int	 proxy_port(const struct proxy *);
void	 proxy_blocked(const struct proxy *, struct strv *, struct strv *);
void	 proxy_stop(struct proxy *);
size_t	 proxy_pollfds(void *, struct pollfd *, size_t);
void	 proxy_handle(void *, const struct pollfd *, size_t);
int64_t	 proxy_deadline(const void *);
int	 proxy_bridge_run(int, int);	/* (listening fd, FD_BRIDGE); in the sandbox */
int	 proxy_name_ports(const struct host_pattern *, size_t, const char *,
	    int *, int);
size_t	 proxy_local_ports(const struct host_pattern *, size_t, int *, size_t);
int	 proxy_local_port(const struct host_pattern *, size_t, int);
void	 proxy_local(struct proxy *, int, int, int64_t);

void	 proxy_captured(struct proxy *, int, const char *, int, int64_t);
void	 proxy_refused(struct proxy *, const char *, int, const char *);

/* netns.c: names and connections captured in bwrap's netns (--allow-host) */
#define NETNS_ADDR	"198.18.0.1"	/* on lo, /15: the synthetic range */
#define NETNS_RANGE	"198.18.0.0/15"
#define NETNS_DNS	"127.0.0.53"	/* sbx's resolver inside, port 53 */
#define NETNS_POOL	64		/* listeners: names x their ports */
#define NETNS_FDS	(2 + 2 * LOCAL_MAX + NETNS_POOL)	/* the shim's
					   sockets: DNS, loopback relays, pool */
struct netns;
char	*netns_resolv(void);
char	*netns_hosts(const struct sbx_opts *);
int	 netns_pool(const struct sbx_opts *);
struct netns *netns_new(const struct host_pattern *, size_t);
int	 netns_setup(struct netns *, const int *, size_t, int *);
size_t	 netns_nlocal(const struct netns *);
size_t	 netns_fds(const struct netns *, int *, size_t);
void	 netns_ready(struct netns *, struct proxy *, int, int64_t);
void	 netns_free(struct netns *);
int	 netns_shim(int, int, int);

/*
 * proc.c: spawn, the one poll loop, reaping, kill escalation. Other
 * parts of sbx that need the loop (the proxy) plug in as loop parts.
 */
struct loop_part {
	void	 *ctx;
	size_t	(*pollfds)(void *, struct pollfd *, size_t);
	void	(*handle)(void *, const struct pollfd *, size_t);
	int64_t	(*deadline)(const void *);
};

struct tty;
struct limits;
struct run {
	const struct launch	*l;
	struct tty		*tty;		/* a terminal of sbx's own, or NULL */
	struct limits		*lim;		/* resource limits and usage */
	const char		*cwd;
	const char		*what;		/* the command's name */
	int64_t			 timeout_ms;
	int64_t			 kill_after_ms;
	struct loop_part	*parts;
	size_t			 nparts;
	struct exec_result	*res;		/* out and err: NULL passes through */
	int			 sig;		/* the signal that aborted sbx */
	struct start_fail	 fail;
};
int	 proc_init(void);
int	 proc_run(struct run *, struct sbx_err *);
int	 proc_probe(const char *const *, char *, size_t);

/*
 * The status socket between a child (or the shim inside a sandbox) and
 * proc.c: one message each, a kind, a step and a value.
 */
enum status_kind {
	ST_GO = 'G',		/* queued by sbx: this is a launch of its own;
				   val 1: SBX_TIMING is on */
	ST_STARTED = 'S',	/* the sandbox is up (the shim runs) */
	ST_EXEC = 'E',		/* the command could not be executed: errno */
	ST_SETUP = 'L',		/* a setup step failed: step, errno */
	ST_WAIT = 'W',		/* the command's own wait status */
	ST_FD = 'F',		/* a descriptor for the launch (take_fd); sbx
				   answers ST_GO when it has its copy */
	ST_DENIED = 'D',	/* the shim: the filter refused "OP DETAIL",
				   the text after the message */
	ST_TIME = 'T'		/* SBX_TIMING: part step (TP_*) took val us */
};
#define STATUS_TEXT_MAX	256	/* an ST_DENIED text, NUL included */
#define DENIED_MAX	16	/* distinct refusals named in a result;
				   every one counted */
enum setup_step {
	STEP_CHDIR, STEP_FDS, STEP_REOPEN, STEP_DEVICES, STEP_CAPS,
	STEP_SECCOMP, STEP_LANDLOCK, STEP_BRIDGE, STEP_SHIM, STEP_KEEPER,
	STEP_TTY, STEP_LIMITS, STEP_CAPTURE, STEP_MOUNTS, NSTEPS
};
void	 proc_status(int, int, int, int, int);
void	 proc_status_text(int, int, const char *);
int	 proc_give_fd(int, int);
void	 proc_signals_default(void);
pid_t	 proc_spawn_shared(int (*)(void *), void *);
int	 proc_wait_report(pid_t, int, int);
int64_t	 proc_tree_cpu_ms(void);

/*
 * tty.c: a pseudo-terminal of sbx's own. The command gets its slave as
 * its controlling terminal; sbx relays the bytes in the one loop (a loop
 * part), keeps the user's terminal raw for the run and restores it on
 * every way out, and passes window sizes, stops and continues on.
 */
unsigned tty_wanted(const struct sbx_opts *);
int	 tty_open(struct tty **, unsigned, struct capture *, struct sbx_err *);
int	 tty_slave(const struct tty *);
unsigned tty_fds(const struct tty *);
void	 tty_started(struct tty *);
void	 tty_signal(struct tty *, int);
void	 tty_stopped(struct tty *);
int	 tty_live(const struct tty *);
void	 tty_hangup(struct tty *);
void	 tty_close(struct tty *);
void	 tty_restore(void);
size_t	 tty_pollfds(void *, struct pollfd *, size_t);
void	 tty_handle(void *, const struct pollfd *, size_t);
int64_t	 tty_deadline(const void *);
int	 tty_take(int);
void	 tty_foreground(int);
void	 tty_give(int, pid_t);

/*
 * limits.c: --mem, --procs, --file-size and --cpu, each by the strongest
 * mechanism here (a cgroup, else an rlimit), and the tree's usage.
 */
int	 limits_plan(const struct sbx_opts *, struct limits **,
	    struct sbx_err *);
long	 limits_nproc(const struct limits *);
void	 limits_describe(const struct limits *, struct strv *);
void	 limits_probe(const struct sbx_opts *, struct strv *);
int	 limits_prepare(struct limits *, const struct launch *,
	    struct sbx_err *);
int	 limits_child(const struct limits *);
int64_t	 limits_deadline(const struct limits *);
int	 limits_check(struct limits *, int64_t);
void	 limits_finish(struct limits *, struct exec_result *);
void	 limits_free(struct limits *);

/* shim.c: sbx's own process inside the bwrap and Seatbelt sandboxes */
int	 shim_check(const struct sbx_opts *, struct sbx_err *);
int	 shim_main(int, char **);

#endif
