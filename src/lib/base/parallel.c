#include "base/parallel.h"

#include <dirent.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* OpenBLAS's own thread control (libopenblas exports these). */
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);

/* The thread counts at start-up, before anything here has changed them:
 * OpenMP's for gpc's own loops, and OpenBLAS's for its work from
 * GPC_PARALLEL_MIN_ROWS rows up.  OpenBLAS's OpenMP build ignores
 * OPENBLAS_NUM_THREADS and follows OpenMP's count, so the variable is read
 * here to keep its meaning with either build.  Read in a constructor so that
 * no thread can race the first call. */
static int own_threads = 1, blas_threads = 1;
static int adaptive = 1;   /* GPC_THREAD_POLICY is not "fixed" */
static int blas_fixed = 0; /* OPENBLAS_NUM_THREADS is set */
static long online_cores = 1;

/* The idle cores when last looked at, and when to look again. */
static long idle_cores = 1;
static struct timespec next_check;

void gpc_parallel_init(void)
{
    own_threads = omp_get_max_threads();
    blas_threads = openblas_get_num_threads();
    const char *env = getenv("OPENBLAS_NUM_THREADS");
    char *end;
    long n = env ? strtol(env, &end, 10) : 0;
    blas_fixed = env && end != env && *end == '\0' && n > 0 && n <= 1024;
    if (blas_fixed)
        blas_threads = (int)n;
    if (own_threads < 1)
        own_threads = 1;
    if (blas_threads < 1)
        blas_threads = 1;
    const char *policy = getenv("GPC_THREAD_POLICY");
    adaptive = !(policy && strcmp(policy, "fixed") == 0);
    online_cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (online_cores < 1)
        online_cores = 1;
    idle_cores = own_threads > blas_threads ? own_threads : blas_threads;
    next_check = (struct timespec){0, 0};
}

__attribute__((constructor)) static void read_thread_counts(void) { gpc_parallel_init(); }

int gpc_parallel_fit(int max, long cores, long others)
{
    if (others < 0)
        return max;
    long idle = cores - others;
    return idle < 1 ? 1 : idle < max ? (int)idle : max;
}

long gpc_parallel_parse_loadavg(const char *text)
{
    double avg[3];
    long running, total;
    char slash;
    if (sscanf(text, "%lf %lf %lf %ld%c%ld", &avg[0], &avg[1], &avg[2], &running, &slash,
               &total) != 6 ||
        slash != '/' || running < 0 || total < running)
        return -1;
    return running;
}

/* Up to size - 1 bytes of a small file of /proc, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, buf, size - 1);
    close(fd);
    if (got >= 0)
        buf[got] = '\0';
    return got;
}

/* This process's threads that are runnable now (the caller at least): the
 * kernel counts them among the runnable tasks, and OpenMP's threads may
 * still be spinning after a loop. */
static long own_runnable(void)
{
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return 1;
    long count = 0;
    struct dirent *entry;
    char path[64], stat[512];
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", entry->d_name);
        if (read_small(path, stat, sizeof stat) <= 0)
            continue;
        const char *paren = strrchr(stat, ')'); /* the name may hold anything */
        if (paren && paren[1] == ' ' && paren[2] == 'R')
            count++;
    }
    closedir(dir);
    return count > 0 ? count : 1;
}

/* Runnable tasks of other processes, or -1 when /proc cannot say. */
static long others_runnable(void)
{
    char text[256];
    if (read_small("/proc/loadavg", text, sizeof text) <= 0)
        return -1;
    long running = gpc_parallel_parse_loadavg(text);
    if (running < 0)
        return -1;
    long others = running - own_runnable();
    return others > 0 ? others : 0;
}

static void look_at_load(void)
{
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
        return;
    if (now.tv_sec < next_check.tv_sec ||
        (now.tv_sec == next_check.tv_sec && now.tv_nsec < next_check.tv_nsec))
        return;
    int most = own_threads > blas_threads ? own_threads : blas_threads;
    idle_cores = gpc_parallel_fit(most, online_cores, others_runnable());
    long ns = now.tv_nsec + GPC_PARALLEL_RECHECK_MS * 1000000L;
    next_check.tv_sec = now.tv_sec + ns / 1000000000L;
    next_check.tv_nsec = ns % 1000000000L;
}

/* The threads for work that could take `most`: all of them when the policy
 * is fixed, else no more than the idle cores.  Inside a parallel region the
 * last count stands, so that no two threads update it. */
static int threads_now(int most)
{
    if (adaptive && most > 1 && !omp_in_parallel())
        look_at_load();
    if (!adaptive)
        return most;
    return idle_cores < most ? (int)idle_cores : most;
}

int gpc_parallel_threads(void) { return threads_now(own_threads); }

int gpc_parallel_max_threads(void) { return own_threads; }

int gpc_parallel_adaptive(void) { return adaptive; }

/* OpenBLAS's count changes its results in their last digits, so a count
 * the user set stands whatever the load: that is how runs are made to match
 * bit for bit. */
void gpc_parallel_blas(size_t n)
{
    int threads = n < GPC_PARALLEL_MIN_ROWS ? 1 : blas_fixed ? blas_threads
                                                             : threads_now(blas_threads);
    openblas_set_num_threads(threads);
}

int gpc_parallel_classes(size_t n, size_t C)
{
    return C >= 2 && n >= GPC_PARALLEL_MIN_CLASS_ROWS && n < GPC_PARALLEL_MAX_CLASS_ROWS &&
           own_threads > 1;
}
