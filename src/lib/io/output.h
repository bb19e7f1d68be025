/* output — output files that appear whole or not at all, and never replace
 * what they write to.
 *
 * gpc_output_open decides how a path is written:
 *   "-"                      standard output, written directly;
 *   /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N
 *                            the descriptor itself, written directly;
 *   a regular file, or a path that does not exist yet
 *                            a temporary file beside it, renamed over it by
 *                            gpc_output_commit (a symlink is followed, so the
 *                            link stays and its target is replaced; an existing
 *                            file keeps its permission bits);
 *   a device, FIFO or socket opened and written directly: replacing it by a
 *                            regular file would destroy it (so is a link that
 *                            leads to one, or to /dev/stdout and the like);
 *   a directory or ""        an error.
 * A regular file that another run is writing (a chain being sampled: it
 * holds a write lock on it) is never replaced: opening it, or putting a
 * temporary over it, fails with "another run is writing this file".
 * Every write, flush and close is checked; gpc_output_commit reports a full
 * device (/dev/full) or disk as a write error.  Temporary files not yet
 * committed are removed when gpc_die runs and on SIGINT, SIGTERM, SIGHUP and
 * SIGPIPE (gpc_output_remove_on_signals). */
#ifndef GPC_OUTPUT_H
#define GPC_OUTPUT_H

#include <stdio.h>

typedef struct gpc_output gpc_output;

/* GPC_EUSAGE for an empty name, GPC_EINPUT when the path cannot be written. */
int gpc_output_open(const char *path, gpc_output **out);
FILE *gpc_output_file(gpc_output *o);
const char *gpc_output_name(const gpc_output *o);
/* 1 if o appears whole or not at all (a temporary renamed by the commit),
 * 0 if it is written directly (standard output, a device): a tool that
 * writes as it goes, and may fail part way, writes so only to the former. */
int gpc_output_whole(const gpc_output *o);
/* Flush and check for write errors, without committing: a tool with two
 * outputs flushes both before it commits either. */
int gpc_output_flush(gpc_output *o);
/* Put a temporary in place now and go on writing to the same file, for
 * logs (chains) that must be on disk whole after every row: from here on a
 * write goes straight to the file, gpc_output_commit only flushes and
 * closes it, and gpc_output_abort leaves it.  A no-op for direct outputs. */
int gpc_output_publish(gpc_output *o);
/* Flush and check; rename a temporary into place.  Frees o. */
int gpc_output_commit(gpc_output *o);
/* Make gpc_output_commit durable: the temporary's data synced to the device
 * before it is renamed, and the rename synced after (checkpoints that must
 * survive a crash of the machine, not only of the process). */
void gpc_output_durable(gpc_output *o);
/* Remove the temporary file (a direct output is left as written).  Frees o. */
void gpc_output_abort(gpc_output *o);

/* Take the write lock that marks a file as being written by this run, on
 * an open descriptor of it; 0 if another process holds it. */
int gpc_output_lock(int fd);

/* Remove live temporaries when one of those signals arrives, then die of it
 * as the default action would (so the caller's shell sees the signal). */
void gpc_output_remove_on_signals(void);

#endif
