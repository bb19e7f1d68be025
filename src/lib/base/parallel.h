/* parallel — when the O(n^2) loops and the BLAS run on several threads.
 *
 * Small problems stay on one thread: waking and then spin-waiting threads
 * (OpenMP's and OpenBLAS's) costs more than the work there, and on a loaded
 * machine the spinning can slow a small fit down many times over. */
#ifndef GPC_PARALLEL_H
#define GPC_PARALLEL_H

#include <stddef.h>

#define GPC_PARALLEL_MIN_ROWS 400

/* A multiclass method runs its classes' work (factorisations, solves,
 * products with the C matrices) side by side, on OpenMP threads each calling
 * one-thread BLAS, from GPC_PARALLEL_MIN_CLASS_ROWS rows up (a class's
 * Cholesky factor then takes tens of microseconds, far more than waking a
 * thread) to below GPC_PARALLEL_MAX_CLASS_ROWS.  Up to there this beats
 * letting OpenBLAS spread each class's work over its threads: the softmax
 * evidence with gradient (C = 4, two cores) takes 0.39 s against 0.58 s at
 * n = 1000 and 2.46 s against 3.00 s at n = 2000, and a fit on 400 cases
 * of 3 classes 1.04 s against 1.67 s (1.34 s on one thread). */
#define GPC_PARALLEL_MIN_CLASS_ROWS 100
#define GPC_PARALLEL_MAX_CLASS_ROWS 2048

/* Whether C classes of n rows each run side by side: C >= 2,
 * GPC_PARALLEL_MIN_CLASS_ROWS <= n < GPC_PARALLEL_MAX_CLASS_ROWS and OpenMP
 * has more than one thread. */
int gpc_parallel_classes(size_t n, size_t C);

/* Let OpenBLAS use all its threads (OPENBLAS_NUM_THREADS, else OpenMP's
 * count) for n x n work with n at least GPC_PARALLEL_MIN_ROWS, and one
 * thread below that (n = 0: one thread).  gpc links OpenBLAS's OpenMP build,
 * whose work runs on the same OpenMP threads as gpc's own loops: with
 * OpenBLAS's pthreads build the two pools spun on the cores each other
 * needed, and at n = 1000 on two cores a factorisation after a parallel loop
 * took twice as long, a loop after a BLAS call up to twice as long.  In that
 * build OpenBLAS's thread count is OpenMP's, so this sets OpenMP's default
 * too, and a BLAS call inside a parallel region runs on one thread. */
void gpc_parallel_blas(size_t n);

/* The number of threads of gpc's own parallel loops: OpenMP's at start-up
 * (OMP_NUM_THREADS, by default one per core).  Every parallel region names
 * it (num_threads), since gpc_parallel_blas changes OpenMP's default. */
int gpc_parallel_threads(void);

#endif
