#include "base/parallel.h"

#include <omp.h>
#include <stdlib.h>

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

__attribute__((constructor)) static void read_thread_counts(void)
{
    own_threads = omp_get_max_threads();
    blas_threads = openblas_get_num_threads();
    const char *env = getenv("OPENBLAS_NUM_THREADS");
    char *end;
    long n = env ? strtol(env, &end, 10) : 0;
    if (env && end != env && *end == '\0' && n > 0 && n <= 1024)
        blas_threads = (int)n;
    if (own_threads < 1)
        own_threads = 1;
    if (blas_threads < 1)
        blas_threads = 1;
}

int gpc_parallel_threads(void) { return own_threads; }

void gpc_parallel_blas(size_t n)
{
    openblas_set_num_threads(n >= GPC_PARALLEL_MIN_ROWS ? blas_threads : 1);
}

int gpc_parallel_classes(size_t n, size_t C)
{
    return C >= 2 && n >= GPC_PARALLEL_MIN_CLASS_ROWS && n < GPC_PARALLEL_MAX_CLASS_ROWS &&
           own_threads > 1;
}
