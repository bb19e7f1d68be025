/* parallel — when the O(n^2) loops run on several threads.
 *
 * Small problems stay on one thread: waking and then spin-waiting OpenMP
 * threads costs more than the loop there, and on a loaded machine the spinning
 * can slow a small fit down many times over. */
#ifndef GPC_PARALLEL_H
#define GPC_PARALLEL_H

#define GPC_PARALLEL_MIN_ROWS 400

#endif
