/* minibatch — the sparse variational method fitted by minibatches over
 * epochs (sparse/train), as a run: its start (from the k-means start of
 * the inducing inputs, or from a checkpoint of an earlier run), a progress
 * line per epoch, a durable checkpoint after every epoch and when asked to
 * stop, a time limit, and the bound over all rows at the end. */
#ifndef GPC_MINIBATCH_H
#define GPC_MINIBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel.h"
#include "sparse/checkpoint.h"
#include "sparse/rows.h"
#include "sparse/train.h"

typedef struct {
    gpc_train_opts train;
    size_t latent;            /* latent functions: 1 (binary) or C */
    gpc_svgp_lik lik;         /* the cases' likelihood (sparse/shard) */
    size_t inducing;          /* m (cut to the number of cases) */
    uint64_t epochs;          /* epochs in all, counting those of a checkpoint */
    double time_limit;        /* seconds; 0: none */
    int start_scales;         /* a fresh run's length scales start from the
                               * inducing inputs (gpc_kernel_start_scales),
                               * those fixed (train.fixed) excepted */
    const char *checkpoint;   /* the file, or NULL for none */
    gpc_checkpoint_settings set; /* what a checkpoint records of the run (the
                                  * caller fills the data's hash and names) */
    int (*stop)(void);        /* nonzero when a signal asked the run to stop */
    /* after every note_every-th epoch (0: never): note writes text (a
     * held-out score) into buf of size bytes, appended to the epoch's
     * line; ctx is note_ctx */
    void (*note)(void *ctx, const gpc_train *t, gpc_kernel *k, char *buf, size_t size);
    void *note_ctx;
    uint64_t note_every;
} gpc_minibatch_opts;

typedef struct {
    gpc_train *train;   /* the state reached (the caller frees it) */
    double bound;       /* the bound over all rows at that state */
    int stopped;        /* stop() asked it to stop before the last epoch */
    int timed_out;      /* the time limit did */
    int resumed;        /* it began from the checkpoint */
} gpc_minibatch_result;

/* Fit o->lik to the rows and labels of data (as the likelihood takes them:
 * -1/+1, or class indices), read a batch at a time, starting from k's
 * hyperparameters.  The inducing inputs start at the k-means clustering of
 * all rows up to 10000 of them (or 20 m), else of that many rows of a
 * seeded order; with o->start_scales the length scales start from their
 * distances.  GPC_EINPUT (message set) for rows or a checkpoint that
 * cannot be read, or a checkpoint of another run; GPC_ENUM for a step that
 * fails; the last checkpoint written stays. */
int gpc_minibatch_fit(gpc_kernel *k, const gpc_train_data *data, const gpc_minibatch_opts *o,
                      gpc_minibatch_result *r);

#endif
