/* parallel — when the O(n^2) loops and the BLAS run on several threads.
 *
 * Small problems stay on one thread: waking and then spin-waiting threads
 * (OpenMP's and OpenBLAS's) costs more than the work there, and on a loaded
 * machine the spinning can slow a small fit down many times over. */
#ifndef GPC_PARALLEL_H
#define GPC_PARALLEL_H

#include <stddef.h>

#define GPC_PARALLEL_MIN_ROWS 400

/* Let OpenBLAS use all its threads for n x n work with n at least
 * GPC_PARALLEL_MIN_ROWS, and one thread below that. */
void gpc_parallel_blas(size_t n);

#endif
