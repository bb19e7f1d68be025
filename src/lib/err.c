#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#define MAX_ON_DIE 8

static char errmsg[1024];
static const char *progname = "gpc";
static void (*on_die[MAX_ON_DIE])(void);
static int n_on_die;
int gpc_verbosity = 1;

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

void gpc_exit(int status)
{
    for (int i = n_on_die - 1; i >= 0; i--)
        on_die[i]();
    exit(status);
}

void gpc_die(int status, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    gpc_exit(status);
}

void gpc_die_last(int status)
{
    fprintf(stderr, "%s: %s\n", progname, errmsg[0] ? errmsg : "failed");
    gpc_exit(status);
}

void gpc_warn(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void gpc_info(int level, const char *fmt, ...)
{
    if (gpc_verbosity < level)
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
