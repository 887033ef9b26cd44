/*
 * timing.c: the account of a launch that SBX_TIMING=1 asks for: one line
 * on stderr per phase, "sbx: timing: PHASE N us", its wall time on
 * CLOCK_MONOTONIC from the end of the previous phase. A part measured
 * within a phase (the git configs of the policy walk; what the child or
 * the shim inside the sandbox reports over the status socket, TP_*) gets
 * a line "PHASE/PART N us" of its own and counts in its phase too; what
 * the child, the keeper or the shim measured inside ("in/PART") overlaps
 * the parent's start and run, as they overlap each other. Off
 * (the default), it costs one getenv() at start and a test of timing_on
 * per phase; nothing here runs in the child but timing_us(), which is
 * async-signal-safe.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbx.h"

int timing_on;
static int64_t last;

/* What the child and the shim report (ST_TIME's step): their names. */
static const char *const part_names[NTPARTS] = {
	[TP_MOUNTS] = "in/mounts",	/* the shim's mount checks */
	[TP_CONFINE] = "in/confine",	/* Landlock, caps, filter; the
					   shim's devices, caps, filter */
	[TP_SECCOMP] = "in/seccomp",	/* the filter's load alone */
	[TP_CAPTURE] = "in/capture",	/* the shim's netns sockets */
	[TP_BRIDGE] = "in/bridge",	/* the shim's bridge to the proxy */
	[TP_FORK] = "in/fork",		/* the keeper's fork of the command,
					   to its close of sbx's fds */
};

int64_t
timing_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The first thing main() does: the clock of the first phase starts. */
void
timing_init(void)
{
	const char *v = getenv("SBX_TIMING");

	timing_on = v != NULL && *v != '\0' && strcmp(v, "0") != 0;
	if (timing_on)
		last = timing_us();
}

/* The phase that ends now. */
void
timing_mark(const char *phase)
{
	int64_t now = timing_us();

	fprintf(stderr, "sbx: timing: %s %lld us\n", phase,
	    (long long)(now - last));
	last = now;
}

/* A part of the phase under way, measured on its own. */
void
timing_part(const char *part, int64_t us)
{
	fprintf(stderr, "sbx: timing: %s %lld us\n", part, (long long)us);
}

/* A part the child or the shim reported (ST_TIME). */
void
timing_reported(int which, int64_t us)
{
	if (which >= 0 && which < NTPARTS && part_names[which] != NULL)
		timing_part(part_names[which], us);
}
