/* train — the sparse variational method by minibatches (gpc(7), SPARSE
 * VARIATIONAL METHOD, Optimisation): each step takes the next b rows of the
 * epoch's order (sparse/stream), sums their shard statistics at the
 * current state, scales the data terms by n / b, and moves
 *   - q by a natural step of size rho_t = rho / sqrt(1 + t / T), t the
 *     steps taken and T the steps of one epoch (a step that would leave a
 *     precision indefinite is halved until it does not);
 *   - the log hyperparameters and Z by one step of Adam (Kingma & Ba 2015)
 *     of size lr_t = lr / sqrt(1 + t / T) up the same gradient, those
 *     fixed left where they are.
 * An epoch is ceil(n / B) batches of B or fewer rows, their sizes
 * differing by one at most.
 * The state is everything a continued run needs: q, Z, the
 * hyperparameters, Adam's moments, the step count and the batch in the
 * epoch.  The order is a function of the seed, the epoch and the batch, so
 * a run stopped after any step and continued from its state ends where an
 * uninterrupted one does, bit for bit. */
#ifndef GPC_TRAIN_H
#define GPC_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel.h"
#include "sparse/rows.h"
#include "base/comm.h"
#include "sparse/svgp.h"

/* The training rows and their labels, one column of as many rows as the
 * likelihood takes them (-1/+1), each in memory or read from a file as
 * needed. */
typedef struct {
    gpc_rows *rows;
    gpc_rows *labels;
} gpc_train_data;

typedef struct {
    size_t batch;                /* rows per step B, at least 1 */
    double rho;                  /* the natural step's size at the start, in (0, 1] */
    double lr;                   /* Adam's step size for the hyperparameters and Z, at
                                  * the start */
    uint64_t seed;               /* of the epochs' orders */
    const unsigned char *fixed;  /* hyperparameters Adam leaves alone (NULL: none) */
    int fix_inducing;            /* Z stays where it is */
    gpc_comm *comm;              /* the processes that share each batch, each
                                  * reading and summing its share of the rows
                                  * (base/comm); every one takes the same step */
} gpc_train_opts;

/* Defaults: batch 256, rho 0.2, lr 0.01, seed 1, nothing fixed, this
 * process alone (gpc_comm_world). */
void gpc_train_defaults(gpc_train_opts *o);

typedef struct {
    gpc_svgp *s;        /* Z, q, and L at the current hyperparameters */
    size_t nparams;
    double *theta;      /* the log hyperparameters */
    double *adam_m;     /* Adam's first and second moments over (theta, Z): */
    double *adam_v;     /* nparams + m dim entries each */
    uint64_t step;      /* steps taken */
    uint64_t epoch;     /* whole epochs done */
    uint64_t batch;     /* the next step's batch in its epoch, from 0 */
    double epoch_bound; /* this epoch's steps' bound estimates, summed */
    uint64_t epoch_steps; /* and their number */
    double jitter;      /* the largest jitter K_ZZ needed so far */
} gpc_train;

/* A state for C latent functions, m inducing inputs of dim columns and
 * nparams hyperparameters: q the prior, Z zero, moments zero. */
gpc_train *gpc_train_alloc(size_t C, size_t m, size_t dim, size_t nparams);
void gpc_train_free(gpc_train *t);

/* One step on the next batch.  k is the kernel (its parameters are
 * set to theta); *bound the step's estimate of the bound (the batch's
 * terms scaled by n / b, less the KL).  GPC_ENUM (message set) if the
 * bound or its gradient is not finite, or K_ZZ cannot be factored,
 * GPC_EINPUT if the rows cannot be read; the state is then as before the
 * step. */
int gpc_train_step(gpc_train *t, gpc_kernel *k, const gpc_train_data *d, gpc_svgp_lik lik,
                   const gpc_train_opts *o, double *bound);

#endif
