/* comm — the processes a fit runs as (gpc(7), DISTRIBUTED FITS): their
 * number and this one's rank, and the collective steps they take together.
 * Every rank enters each collective at the same point of the run; a
 * failure leaves a step only through gpc_comm_status, so that no rank is
 * left waiting in a collective another has left.
 *
 * This build runs as one process: rank 0 of 1, every collective the
 * identity.  An MPI build gives the same interface over MPI_COMM_WORLD. */
#ifndef GPC_COMM_H
#define GPC_COMM_H

#include <stddef.h>

typedef struct gpc_comm gpc_comm;

/* The processes of this run. */
gpc_comm *gpc_comm_world(void);
int gpc_comm_rank(const gpc_comm *c);
int gpc_comm_size(const gpc_comm *c);

/* buf (n doubles) becomes the element-wise sum of every rank's buf, on
 * every rank, added in rank order (rank 0's, plus rank 1's, ...), so that
 * every rank holds the same bits whatever the timing.  GPC_OK or an error
 * status (message set). */
int gpc_comm_sum(gpc_comm *c, double *buf, size_t n);

/* buf (n doubles; n bytes) becomes rank 0's on every rank. */
int gpc_comm_broadcast(gpc_comm *c, double *buf, size_t n);
int gpc_comm_broadcast_bytes(gpc_comm *c, void *buf, size_t n);

/* Every rank's status st in; out, on every rank, the status of the first
 * rank (by rank) that failed, with its message, or GPC_OK. */
int gpc_comm_status(gpc_comm *c, int st);

/* Whether any rank's flag is set. */
int gpc_comm_any(gpc_comm *c, int flag);

/* The share of rank r among R of n places: [first, first + count), the
 * places floor(r n / R) to floor((r + 1) n / R) - 1, which differ in count
 * by one at most and cover every place once, in rank order. */
typedef struct {
    size_t first, count;
} gpc_comm_share;
gpc_comm_share gpc_comm_share_of(size_t n, int r, int R);

#endif
