#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#define MAX_ON_DIE 8

static char errmsg[1024];
static const char *progname = "gpc";
static void (*on_die[MAX_ON_DIE])(void);
static volatile int n_on_die; /* read by the signal path too */
int gpc_verbosity = 1;
int gpc_err_mute;
static void (*hook_before)(void);
static void (*hook_leave)(int status);

void gpc_err_set_hooks(void (*before)(void), void (*leave)(int status))
{
    hook_before = before;
    hook_leave = leave;
}

void gpc_err_before_message(void)
{
    if (hook_before)
        hook_before();
}

int gpc_fail(int status, const char *fmt, ...)
{
    /* format aside first: the arguments may include gpc_errmsg() itself */
    char buf[sizeof errmsg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    memcpy(errmsg, buf, sizeof errmsg);
    return status;
}

const char *gpc_errmsg(void) { return errmsg; }

void gpc_set_progname(const char *argv0)
{
    const char *slash = strrchr(argv0, '/');
    progname = slash ? slash + 1 : argv0;
}

const char *gpc_progname(void) { return progname; }

void gpc_on_die(void (*fn)(void))
{
    if (n_on_die < MAX_ON_DIE)
        on_die[n_on_die++] = fn;
}

/* Under AddressSanitizer (make check SANITIZE=1) the leak check runs at a
 * normal exit only.  gpc_die exits from deep inside a tool with whatever the
 * tool holds still allocated, and the system frees it; reporting that as a
 * leak would say nothing, while a leak on the way to a normal exit (a return
 * from main) is a real one.  So the automatic end-of-process check is off
 * (leak_check_at_exit=0) and this handler runs it unless gpc_die is exiting. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
static int dying;
static void leak_check(void)
{
    if (!dying)
        __lsan_do_leak_check();
}
static void __attribute__((constructor)) leak_check_hook(void) { atexit(leak_check); }
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "leak_check_at_exit=0"; }
#define DYING() (dying = 1)
#else
#define DYING() ((void)0)
#endif

/* Each handler runs once, newest first, whether a die or a signal comes
 * first (a signal during gpc_die's handlers runs only those not yet run). */
void gpc_cleanup(void)
{
    while (n_on_die > 0)
        on_die[--n_on_die]();
}

static _Noreturn void die_now(int status)
{
    DYING();
    gpc_cleanup();
    if (hook_leave)
        hook_leave(status);
    exit(status);
}

void gpc_exit(int status) { die_now(status); }

void gpc_die(int status, const char *fmt, ...)
{
    va_list ap;
    gpc_err_before_message();
    fprintf(stderr, "%s: ", progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    die_now(status);
}

void gpc_die_last(int status)
{
    gpc_err_before_message();
    fprintf(stderr, "%s: %s\n", progname, errmsg[0] ? errmsg : "failed");
    die_now(status);
}

void gpc_warn(const char *fmt, ...)
{
    if (gpc_err_mute)
        return;
    va_list ap;
    fprintf(stderr, "%s: ", progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void gpc_info(int level, const char *fmt, ...)
{
    if (gpc_verbosity < level || gpc_err_mute)
        return;
    va_list ap;
    fprintf(stderr, "%s: ", progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void gsl_quiet_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)file;
    (void)line;
    (void)gsl_errno;
    snprintf(errmsg, sizeof errmsg, "%s", reason);
}

void gpc_gsl_quiet(void) { gsl_set_error_handler(gsl_quiet_handler); }
