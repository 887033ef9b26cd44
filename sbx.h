/*
 * sbx.h: what crosses files. The options, the compiled policy, the launch
 * plan, the result, error kinds and the prototypes of each module. No code.
 */
#ifndef SBX_H
#define SBX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SBX_VERSION	"0.1.0"

enum {
	EXIT_TIMEDOUT = 124,
	EXIT_SBX = 125,
	EXIT_NOEXEC = 126,
	EXIT_NOTFOUND = 127
};

/* error=KIND in the result; err_kind_name() gives the string. */
enum err_kind {
	ERR_NONE,
	ERR_USAGE,		/* "usage": bad option or argument */
	ERR_PATH,		/* "path": a path that is missing or unusable */
	ERR_POLICY,		/* "policy": a policy the backend cannot enforce */
	ERR_UNAVAILABLE,	/* "unavailable": no OS sandbox works here */
	ERR_UNSUPPORTED,	/* "unsupported_platform" */
	ERR_SANDBOX,		/* "sandbox": the sandbox failed to start */
	ERR_PROXY,		/* "proxy" */
	ERR_SPAWN,		/* "spawn": fork, pipe, ... */
	ERR_RESULT,		/* "result": the result file */
	ERR_NOT_FOUND,		/* "not_found": command not found (127) */
	ERR_NOT_EXECUTABLE,	/* "not_executable": found, not runnable (126) */
	ERR_INTERNAL		/* "internal" */
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
enum backend { BACKEND_NONE, BACKEND_BWRAP, BACKEND_LANDLOCK,
    BACKEND_SEATBELT, BACKEND_HOST };
enum net_mode { NET_NONE, NET_ALL, NET_PROXY };

/* One --allow-host pattern, validated and normalised. */
struct host_pattern {
	char	*name;		/* lower case, no trailing dot, no "*." */
	int	 wildcard;	/* "*.name": subdomains of name only */
	int	 port;		/* 0: ports 80 and 443 */
};

struct sbx_opts {
	char		 *root;		/* absolute, resolved */
	struct strv	  write;	/* absolute, resolved (realpath) */
	struct strv	  deny_write;
	struct strv	  deny_read;
	struct strv	  scope;
	enum net_mode	  net;
	struct host_pattern *hosts;
	size_t		  nhosts;
	int		  allow_private;
	int		  protect;	/* default protected list; 0 with --no-protect */
	int		  allow_unix;	/* --allow-unix-sockets */
	struct strv	  env;		/* NAME=VALUE, what the command sees */
	int64_t		  timeout_ms;	/* 0: none */
	int64_t		  kill_after_ms;
	size_t		  max_output;
	enum sandbox_mode mode;
	enum backend	  backend;	/* asked with --backend, or NONE */
	int		  passthrough;
	int		  json;
	int		  dry_run;
	int		  probe;
	char		 *result_path;
	char		**cmd;		/* NULL-terminated command */
	char		 *self;		/* sbx's own executable, resolved */
	struct strv	  reopen;	/* bwrap: fd digit, path: for the shim */
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
					   empty placeholder, made if missing */
};

struct policy {
	struct rule	*r;
	size_t		 n;
	struct strv	 writable;	/* the folders that end up writable */
};

/*
 * Fixed descriptor numbers in the bwrap child; everything else above 2 is
 * closed before exec. bwrap reads and closes ARGS and SECCOMP; the shim
 * inside keeps STATUS and BRIDGE away from the command.
 */
#define FD_ARGS		3
#define FD_SECCOMP	4
#define FD_STATUS	5
#define FD_BRIDGE	6
#define BRIDGE_PORT	3128	/* 127.0.0.1 inside the sandbox's netns */
#define SHIM_ARG	"--sbx-internal-shim"
#define SHIM_ENV	"SBX_ENV_"	/* SBX_ENV_<n>=NAME=VALUE: for the shim */

/* What to run: built by a backend as a pure function of the options. */
struct launch {
	enum backend	 backend;
	struct strv	 argv;		/* to execve: argv.v[0] is absolute */
	struct strv	 args;		/* bwrap: passed NUL-separated on FD_ARGS */
	unsigned char	*seccomp;	/* BPF program (struct sock_filter[]) */
	size_t		  seccomp_len;	/* bytes */
	char		*profile;	/* seatbelt: the SBPL profile */
	struct strv	 placeholders;	/* mount points bwrap creates; removed after */
	int		 landlock;	/* apply landlock_apply() in the child */
	void		*landlock_plan;	/* landlock.c's own, built in the parent */
	int		 shim;		/* argv runs sbx's shim inside */
	int		 env_in_args;	/* bwrap: the environment is wrapped in
					   args (bwrap_env()); bwrap gets none */
};

struct exec_result {
	enum backend	 executor;
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
	enum err_kind	 error;
	char		*error_message;
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
const char *shown(const char *);
extern const char *const std_fd_name[3];	/* fds 0-2, for messages */
int	 sbx_errf(struct sbx_err *, enum err_kind, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
const char *err_kind_name(enum err_kind);
const char *backend_name(enum backend);
int	 parse_duration(const char *, int64_t *);
int	 parse_size(const char *, size_t *);
int64_t	 now_ms(void);
char	*shell_quote(const char *);
char	*path_join(const char *, const char *);
int	 path_under(const char *, const char *);
const char *signal_name(int);
int	 set_cloexec(int);
int	 set_nonblock(int);
char	*find_program(const char *, const struct strv *);
void	 exec_command(char **, char **);
size_t	 utf8_len(const unsigned char *, size_t);

/* policy.c */
int	 policy_compile(const struct sbx_opts *, struct policy *,
	    struct sbx_err *);
void	 policy_free(struct policy *);

/* bwrap.c (pure builder; no fork, no exec, no exit) */
int	 bwrap_build(const struct sbx_opts *, const struct policy *,
	    const char *, struct launch *, struct sbx_err *);
void	 bwrap_env(struct launch *, const struct strv *);
int	 bwrap_probe(const struct sbx_opts *, char **, struct sbx_err *);
int	 bwrap_find(const struct sbx_opts *, char **, struct sbx_err *);
const char *bwrap_fix(const char *);

/* seccomp.c */
int	 seccomp_build(const struct sbx_opts *, int, unsigned char **,
	    size_t *, struct sbx_err *);
#define SECCOMP_FOR_BWRAP	1
#define SECCOMP_FOR_LANDLOCK	2
int	 seccomp_install(const unsigned char *, size_t);

/* landlock.c */
int	 landlock_build(const struct sbx_opts *, const struct policy *,
	    struct launch *, struct sbx_err *);
int	 landlock_probe(const struct sbx_opts *, const struct policy *,
	    struct sbx_err *);
int	 landlock_apply(const struct launch *);
void	 landlock_free(void *);

/* seatbelt.c (pure builder) */
int	 seatbelt_build(const struct sbx_opts *, const struct policy *,
	    struct launch *, struct sbx_err *);
int	 seatbelt_probe(struct sbx_err *);

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
int	 proxy_start(const struct sbx_opts *, int, struct proxy **,
	    struct sbx_err *);
int	 proxy_bridge_fd(const struct proxy *);
int	 proxy_port(const struct proxy *);
void	 proxy_env(const struct proxy *, int, struct strv *);
size_t	 proxy_pollfds(struct proxy *, struct pollfd *, size_t);
void	 proxy_handle(struct proxy *, const struct pollfd *, size_t);
int64_t	 proxy_deadline(const struct proxy *);
void	 proxy_blocked(const struct proxy *, struct strv *);
void	 proxy_stop(struct proxy *);
int	 proxy_bridge_run(int, int);	/* (listening fd, FD_BRIDGE); in the sandbox */

/* proc.c: spawn, the one poll loop, reaping, kill escalation */
struct run {
	const struct sbx_opts	*o;
	const struct launch	*l;
	struct proxy		*proxy;
	struct exec_result	*res;
	int			 sig;	/* the signal that aborted sbx, or 0 */
	pid_t			 parent;	/* sbx's pid, for the child */
};
int	 proc_run(struct run *, struct sbx_err *);
int	 proc_kill_tree(int, int);
void	 proc_signals_default(void);

/* shim.c: sbx's own process inside the bwrap sandbox */
extern const char *const host_devices[];
int	 shim_main(int, char **);

#endif
