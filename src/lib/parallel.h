/* parallel — when the O(n^2) loops and the BLAS run on several threads.
 *
 * Small problems stay on one thread: waking and then spin-waiting threads
 * (OpenMP's and OpenBLAS's) costs more than the work there, and on a loaded
 * machine the spinning can slow a small fit down many times over. */
#ifndef GPC_PARALLEL_H
#define GPC_PARALLEL_H

#include <stddef.h>

#define GPC_PARALLEL_MIN_ROWS 400

/* Below GPC_PARALLEL_MIN_ROWS, where OpenBLAS stays on one thread, a
 * multiclass method runs its classes' work (factorisations, solves, products
 * with the C matrices) side by side from this many rows up: a class's
 * Cholesky factor then takes tens of microseconds, far more than waking a
 * thread. */
#define GPC_PARALLEL_MIN_CLASS_ROWS 100

/* Whether C classes of n rows each run side by side (OpenMP threads, each
 * calling one-thread BLAS): C >= 2, GPC_PARALLEL_MIN_CLASS_ROWS <= n <
 * GPC_PARALLEL_MIN_ROWS and OpenMP has more than one thread. */
int gpc_parallel_classes(size_t n, size_t C);

/* Let OpenBLAS use all its threads for n x n work with n at least
 * GPC_PARALLEL_MIN_ROWS, and one thread below that. */
void gpc_parallel_blas(size_t n);

#endif
