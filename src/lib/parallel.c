#include "parallel.h"

#include <omp.h>

/* OpenBLAS's own thread control (libopenblas exports these). */
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);

void gpc_parallel_blas(size_t n)
{
    static int all = 0; /* the number OpenBLAS chose at start-up */
    if (all == 0)
        all = openblas_get_num_threads();
    openblas_set_num_threads(n >= GPC_PARALLEL_MIN_ROWS ? all : 1);
}

int gpc_parallel_classes(size_t n, size_t C)
{
    return C >= 2 && n >= GPC_PARALLEL_MIN_CLASS_ROWS && n < GPC_PARALLEL_MAX_CLASS_ROWS &&
           omp_get_max_threads() > 1;
}
