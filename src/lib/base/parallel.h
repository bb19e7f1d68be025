/* parallel — how many threads the O(n^2) loops and the BLAS run on.
 *
 * Small problems stay on one thread: waking and then waiting for threads
 * (OpenMP's and OpenBLAS's) costs more than the work there.  And gpc never
 * takes more threads than the machine has idle cores: on a shared node, under
 * `make -j` or `parallel` with more processes than cores, every barrier of a
 * parallel loop waits for a thread that the scheduler has set aside for a
 * time slice, and a fit on 178 cases took 3.9 s on two threads against 0.9 s
 * on one under four busy processes on two cores.  So the count is the
 * smaller of OpenMP's at start-up (OMP_NUM_THREADS, by default one per core)
 * and the cores that other processes leave idle, counted from the kernel's
 * number of runnable tasks (/proc/loadavg) at most every
 * GPC_PARALLEL_RECHECK_MS.  GPC_THREAD_POLICY=fixed keeps OpenMP's count
 * whatever the load (the tests that compare thread counts need that). */
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

/* How often the load is looked at again: reading /proc/loadavg takes a few
 * microseconds, and a fit's parallel loops run thousands of times a second. */
#define GPC_PARALLEL_RECHECK_MS 100

/* Whether C classes of n rows each are set to run side by side: C >= 2,
 * GPC_PARALLEL_MIN_CLASS_ROWS <= n < GPC_PARALLEL_MAX_CLASS_ROWS and OpenMP
 * has more than one thread.  On a busy machine their loop then runs on the
 * one thread gpc_parallel_threads gives, one class after another. */
int gpc_parallel_classes(size_t n, size_t C);

/* Let OpenBLAS use its threads for n x n work with n at least
 * GPC_PARALLEL_MIN_ROWS, and one thread below that (n = 0: one thread):
 * OPENBLAS_NUM_THREADS where it is set, whatever the load (OpenBLAS's
 * count changes results in their last digits, and setting it is how a user
 * makes runs match bit for bit), else as many as gpc's own loops get.
 * gpc links OpenBLAS's OpenMP build, whose work runs on the same OpenMP
 * threads as gpc's own loops: with OpenBLAS's pthreads build the two pools
 * spun on the cores each other needed, and at n = 1000 on two cores a
 * factorisation after a parallel loop took twice as long, a loop after a
 * BLAS call up to twice as long.  In that build OpenBLAS's thread count is
 * OpenMP's, so this sets OpenMP's default too, and a BLAS call inside a
 * parallel region runs on one thread. */
void gpc_parallel_blas(size_t n);

/* The number of threads of gpc's own parallel loops now: OpenMP's at
 * start-up, or fewer while other processes keep the cores busy.  Every
 * parallel region names it (num_threads), since gpc_parallel_blas changes
 * OpenMP's default.  Inside a parallel region it gives the last count. */
int gpc_parallel_threads(void);

/* The most threads gpc_parallel_threads can give: OpenMP's count at
 * start-up.  Per-thread scratch is made for this many. */
int gpc_parallel_max_threads(void);

/* The threads to use with `cores` online, `others` runnable tasks of other
 * processes and at most `max`: the idle cores, at least one.  others < 0
 * (the load cannot be read): max. */
int gpc_parallel_fit(int max, long cores, long others);

/* The number of runnable tasks in the text of /proc/loadavg ("0.52 0.61
 * 0.70 3/412 9876": 3), or -1 when the text is not of that form. */
long gpc_parallel_parse_loadavg(const char *text);

/* Whether the count follows the load (GPC_THREAD_POLICY is not "fixed"). */
int gpc_parallel_adaptive(void);

/* Read the environment (OMP_NUM_THREADS through OpenMP,
 * OPENBLAS_NUM_THREADS, GPC_THREAD_POLICY) again; done once at start-up. */
void gpc_parallel_init(void);

#endif
