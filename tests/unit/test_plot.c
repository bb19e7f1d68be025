/* test_plot — the picture's temporary directory goes with a fatal signal,
 * and what removes it is safe in a signal handler: it allocates nothing
 * (a handler that interrupts malloc and calls it again can deadlock), so
 * this file watches malloc while the handler runs.  The directory holds a
 * data file of ours and one that only the script names (as gnuplot's
 * contour tables), made behind the library's back as gnuplot would. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "io/output.h"
#include "report/plot.h"
#include "tap.h"

/* ---- malloc, watched -------------------------------------------------------- */

/* Set just before the signal: from then on an allocation is a failure,
 * told by the exit status 99 of the process that made it. */
static volatile sig_atomic_t watching;

#if !defined(__SANITIZE_ADDRESS__) /* AddressSanitizer has its own malloc */
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);

static void allocated(void)
{
    if (watching) {
        static const char msg[] = "malloc in the signal handler\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(99);
    }
}

void *malloc(size_t n)
{
    allocated();
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    allocated();
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    allocated();
    return __libc_realloc(p, n);
}

void free(void *p)
{
    allocated();
    __libc_free(p);
}
#endif

/* ---- the test ------------------------------------------------------------- */

/* How many entries directory dir holds (-1 when it cannot be read). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* In a child: a picture's directory with its script, a data file and a
 * table gnuplot would write; then sig, with malloc watched. */
static void child(int sig, const char *tmp)
{
    gpc_output_remove_on_signals();
    gpc_plot *p;
    if (gpc_plot_open(GPC_PLOT_PNG, &p) != GPC_OK)
        _exit(2);
    FILE *f = gpc_plot_data_open(p, "bins.dat");
    if (!f || fputs("0 1 2\n", f) < 0 || gpc_plot_data_close(p, f) != GPC_OK)
        _exit(3);
    gpc_plot_put_data(p, "levels.dat");
    /* gnuplot's table: dir is the one entry of tmp */
    DIR *d = opendir(tmp);
    struct dirent *e;
    char path[4096];
    while (d && (e = readdir(d)) != NULL && e->d_name[0] == '.')
        ;
    if (!d || !e)
        _exit(4);
    snprintf(path, sizeof path, "%s/%s/levels.dat", tmp, e->d_name);
    closedir(d);
    FILE *t = fopen(path, "w");
    if (!t || fclose(t) != 0)
        _exit(5);
    fflush(gpc_plot_script(p));
    watching = 1;
    raise(sig);
    _exit(6); /* not reached: the handler dies of the signal */
}

static void test_signal(int sig, const char *name)
{
    char tmp[] = "/tmp/test_plot.XXXXXX";
    if (!mkdtemp(tmp)) {
        TEST_OK(0, "%s: mkdtemp", name);
        return;
    }
    setenv("TMPDIR", tmp, 1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        child(sig, tmp);
    int status = 0;
    waitpid(pid, &status, 0);
    TEST_OK(WIFSIGNALED(status) && WTERMSIG(status) == sig,
            "%s: the process dies of it, allocating nothing (%s %d)", name,
            WIFSIGNALED(status) ? "signal" : "exit status",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    TEST_OK(entries(tmp) == 0, "%s: the picture's directory is gone (%d entries left)", name,
            entries(tmp));
    /* what a failed test leaves, removed by hand */
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp);
}

int main(void)
{
    test_signal(SIGTERM, "SIGTERM");
    test_signal(SIGINT, "SIGINT");
    test_signal(SIGHUP, "SIGHUP");
    return tap_done();
}
