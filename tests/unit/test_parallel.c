/* Thread counts (parallel.h).  gpc links OpenBLAS's OpenMP build, in which
 * OpenBLAS's thread count is OpenMP's default: gpc_parallel_blas(0) sets
 * that to one, and gpc's own loops must still get their start-up count, and
 * OPENBLAS_NUM_THREADS must still set OpenBLAS's.  The test runs itself
 * again under fixed environments (two OpenMP threads whatever the machine,
 * with and without OPENBLAS_NUM_THREADS=1), so that it cannot pass on one
 * thread. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
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
        setenv("OMP_NUM_THREADS", "2", 1);
        unsetenv("OPENBLAS_NUM_THREADS");
        run_again(argv, "all");
    } else if (strcmp(phase, "all") == 0) {
        check_counts(2);
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        run_again(argv, "one");
    } else {
        check_counts(1);
    }
    return tap_done();
}
