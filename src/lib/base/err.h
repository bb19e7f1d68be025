/* err — exit codes, error messages and the die() helper shared by all tools.
 *
 * Library functions do not exit: they return one of the GPC_E* codes below and
 * leave a one-line message in gpc_errmsg().  Tool mains turn that into
 * "prog: message" on standard error and the matching exit status. */
#ifndef GPC_ERR_H
#define GPC_ERR_H

#include <stdarg.h>

enum {
    GPC_OK = 0,
    GPC_ENUM = 1,   /* numerical failure: not positive definite, no convergence */
    GPC_EUSAGE = 2, /* bad options or settings */
    GPC_EINPUT = 3  /* input, format or I/O error */
};

/* Record a message (printf-style) and return status, for `return gpc_fail(...)`. */
int gpc_fail(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The last recorded message. */
const char *gpc_errmsg(void);

void gpc_set_progname(const char *argv0);
const char *gpc_progname(void);

/* Print "prog: message" and exit with status, after the cleanup handlers ran
 * (temporary output files are removed, so no half-written file survives). */
_Noreturn void gpc_die(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Exit with status as gpc_die does (cleanup handlers first), for callers
 * that have printed their own message, such as usage errors. */
_Noreturn void gpc_exit(int status);
/* gpc_die with the last recorded library message. */
_Noreturn void gpc_die_last(int status);
/* "prog: message" on standard error, no exit. */
void gpc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Verbosity for progress lines: 0 quiet, 1 normal (default), 2 verbose. */
extern int gpc_verbosity;
void gpc_info(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Register a function run by gpc_die before exiting, and by the handler of
 * SIGINT, SIGTERM, SIGHUP and SIGPIPE (gpc_output_remove_on_signals) before
 * the process dies of the signal: so it must be async-signal-safe (unlink,
 * rmdir; no malloc, no stdio).  At most a few. */
void gpc_on_die(void (*fn)(void));
/* Run the registered functions now, newest first, each at most once. */
void gpc_cleanup(void);
/* Run those functions and exit with status, for exits that print their own
 * message (usage errors). */
_Noreturn void gpc_exit(int status);

/* For a run of several processes (base/comm): before runs ahead of every
 * message that ends the process (an error, a usage error; NULL: none), and
 * leave(status) in place of exit(status) once the handlers have run (NULL:
 * exit).  A process other than the first mutes its warnings and progress
 * lines with gpc_err_mute. */
void gpc_err_set_hooks(void (*before)(void), void (*leave)(int status));
void gpc_err_before_message(void);
extern int gpc_err_mute;

/* Install a GSL error handler that does not abort; GSL errors surface as
 * return codes instead. */
void gpc_gsl_quiet(void);

#endif
