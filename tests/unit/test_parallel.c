/* Thread counts (parallel.h).  gpc links OpenBLAS's OpenMP build, in which
 * OpenBLAS's thread count is OpenMP's default: gpc_parallel_blas(0) sets
 * that to one, and gpc's own loops must still get their start-up count, and
 * OPENBLAS_NUM_THREADS must still set OpenBLAS's.  The test runs itself
 * again under fixed environments (two OpenMP threads whatever the machine,
 * with and without OPENBLAS_NUM_THREADS=1, GPC_THREAD_POLICY=fixed), so that
 * it cannot pass on one thread.  Then, with the policy that follows the
 * load, it keeps more processes busy than there are cores and checks that
 * the count falls to one (that it is all threads on an idle machine cannot be
 * checked on a shared one: gpc_parallel_fit's cases say it). */
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/parallel.h"
#include "tap.h"

int openblas_get_parallel(void);
int openblas_get_num_threads(void);

/* The threads a region sized as gpc's own loops are sized runs on. */
static int region_threads(void)
{
    int seen = 0;
#pragma omp parallel num_threads(gpc_parallel_threads())
    {
#pragma omp single
        seen = omp_get_num_threads();
    }
    return seen;
}

static void check_counts(int blas_all)
{
    TEST_OK(openblas_get_parallel() == 2, "OpenBLAS is its OpenMP build (%d; 1 is pthreads)",
            openblas_get_parallel());
    TEST_OK(gpc_parallel_threads() == 2, "own loops: %d threads, OMP_NUM_THREADS=2",
            gpc_parallel_threads());
    gpc_parallel_blas(GPC_PARALLEL_MIN_ROWS);
    TEST_OK(openblas_get_num_threads() == blas_all, "from %d rows OpenBLAS has %d thread(s) (want %d)",
            GPC_PARALLEL_MIN_ROWS, openblas_get_num_threads(), blas_all);
    gpc_parallel_blas(GPC_PARALLEL_MIN_ROWS - 1);
    TEST_OK(openblas_get_num_threads() == 1, "below %d rows OpenBLAS has %d thread(s)",
            GPC_PARALLEL_MIN_ROWS, openblas_get_num_threads());
    gpc_parallel_blas(0);
    TEST_OK(gpc_parallel_threads() == 2 && region_threads() == 2,
            "one-thread BLAS leaves own loops their 2 threads (%d)", region_threads());
    TEST_OK(gpc_parallel_classes(GPC_PARALLEL_MIN_CLASS_ROWS, 3),
            "classes side by side after one-thread BLAS");
    TEST_OK(!gpc_parallel_classes(GPC_PARALLEL_MIN_CLASS_ROWS - 1, 3) &&
                !gpc_parallel_classes(GPC_PARALLEL_MAX_CLASS_ROWS, 3) &&
                !gpc_parallel_classes(GPC_PARALLEL_MIN_CLASS_ROWS, 1),
            "classes one after another outside the limits");
}

static void check_fit(void)
{
    TEST_OK(gpc_parallel_fit(2, 2, 0) == 2, "idle machine: all threads");
    TEST_OK(gpc_parallel_fit(2, 2, 1) == 1, "one other busy task on two cores: one thread");
    TEST_OK(gpc_parallel_fit(2, 2, 4) == 1, "overloaded: still one thread");
    TEST_OK(gpc_parallel_fit(4, 64, 61) == 3, "three idle cores of 64: three threads");
    TEST_OK(gpc_parallel_fit(8, 64, 0) == 8, "never more than asked for");
    TEST_OK(gpc_parallel_fit(2, 2, -1) == 2, "load unknown: all threads");
}

static void check_parse(void)
{
    TEST_OK(gpc_parallel_parse_loadavg("0.52 0.61 0.70 3/412 9876\n") == 3, "loadavg: 3 runnable");
    TEST_OK(gpc_parallel_parse_loadavg("12.00 8.50 4.25 130/2048 1") == 130, "loadavg: 130");
    TEST_OK(gpc_parallel_parse_loadavg("0.52 0.61 0.70 3 412") == -1, "no slash: unknown");
    TEST_OK(gpc_parallel_parse_loadavg("0.52 0.61 3/412") == -1, "two averages: unknown");
    TEST_OK(gpc_parallel_parse_loadavg("0.5 0.6 0.7 9/4 1") == -1, "more runnable than tasks");
    TEST_OK(gpc_parallel_parse_loadavg("") == -1, "empty: unknown");
}

/* gpc_parallel_threads after the load has been looked at again. */
static int threads_after_recheck(void)
{
    struct timespec pause = {0, (GPC_PARALLEL_RECHECK_MS + 20) * 1000000L};
    nanosleep(&pause, NULL);
    return gpc_parallel_threads();
}

/* With twice as many busy processes as cores, the count is one; OpenBLAS's
 * follows it unless OPENBLAS_NUM_THREADS set it (blas_set). */
static void check_load(int blas_set)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    TEST_OK(gpc_parallel_adaptive(), "the count follows the load by default");
    TEST_OK(gpc_parallel_max_threads() == 2, "at most OMP_NUM_THREADS=2");
    pid_t busy[256];
    int nbusy = (int)(cores > 0 && cores < 128 ? 2 * cores : 2);
    for (int k = 0; k < nbusy; k++)
        if ((busy[k] = fork()) == 0)
            for (volatile unsigned long spin = 0;; spin++)
                ;
    int loaded = threads_after_recheck();
    gpc_parallel_blas(GPC_PARALLEL_MIN_ROWS);
    int blas_loaded = openblas_get_num_threads();
    int region = region_threads();
    for (int k = 0; k < nbusy; k++)
        kill(busy[k], SIGKILL);
    for (int k = 0; k < nbusy; k++)
        waitpid(busy[k], NULL, 0);
    TEST_OK(loaded == 1, "%d busy processes on %ld cores: %d thread(s)", nbusy, cores, loaded);
    TEST_OK(blas_loaded == (blas_set ? blas_set : 1), "and OpenBLAS has %d (OPENBLAS_NUM_THREADS %s)",
            blas_loaded, blas_set ? "set: it stands" : "unset: one");
    TEST_OK(region == 1, "and a loop runs on %d", region);
}

/* Run this test again with the environment changed, the counts of checks
 * so far carried over, so that the runs print one TAP stream. */
static void run_again(char **argv, const char *phase)
{
    char counts[64];
    snprintf(counts, sizeof counts, "%d %d", tap_count, tap_failed);
    setenv("GPC_TEST_PARALLEL_TAP", counts, 1);
    setenv("GPC_TEST_PARALLEL_PHASE", phase, 1);
    fflush(stdout);
    execv("/proc/self/exe", argv);
    TEST_OK(0, "could not run the test again");
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *phase = getenv("GPC_TEST_PARALLEL_PHASE");
    const char *counts = getenv("GPC_TEST_PARALLEL_TAP");
    if (counts && sscanf(counts, "%d %d", &tap_count, &tap_failed) != 2)
        tap_count = tap_failed = 0;
    if (!phase) {
        check_fit();
        check_parse();
        setenv("OMP_NUM_THREADS", "2", 1);
        setenv("GPC_THREAD_POLICY", "fixed", 1);
        unsetenv("OPENBLAS_NUM_THREADS");
        run_again(argv, "all");
    } else if (strcmp(phase, "all") == 0) {
        check_counts(2);
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        run_again(argv, "one");
    } else if (strcmp(phase, "one") == 0) {
        check_counts(1);
        unsetenv("OPENBLAS_NUM_THREADS");
        unsetenv("GPC_THREAD_POLICY");
        run_again(argv, "load");
    } else if (strcmp(phase, "load") == 0) {
        check_load(0);
        setenv("OPENBLAS_NUM_THREADS", "2", 1);
        run_again(argv, "load-blas-set");
    } else {
        check_load(2);
    }
    return tap_done();
}
