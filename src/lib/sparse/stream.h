/* stream — the order in which the sparse variational method visits the
 * training rows (gpc(7), SPARSE VARIATIONAL METHOD, Streaming and memory).
 * Epoch e visits row (a_e k + c_e) mod n at its k-th place, a_e prime to n
 * and both drawn from the seed and e by a counter-based generator
 * (SplitMix64): a full shuffle of any n in O(1) memory, the same on any
 * number of threads or processes, and a function of (seed, epoch, place)
 * alone, so a run continued from a checkpoint visits the rows in the order
 * an uninterrupted one would. */
#ifndef GPC_STREAM_H
#define GPC_STREAM_H

#include <stdint.h>

typedef struct {
    uint64_t n, a, c;
} gpc_stream_order;

/* Epoch epoch's order of n >= 1 rows for seed. */
gpc_stream_order gpc_stream_order_for(uint64_t seed, uint64_t epoch, uint64_t n);

/* The row at place k (0 <= k < n). */
uint64_t gpc_stream_row(const gpc_stream_order *o, uint64_t k);

#endif
