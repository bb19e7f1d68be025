/* checkpoint — the minibatch trainer's whole state on disk (gpc(7), SPARSE
 * VARIATIONAL METHOD, Checkpoints), written durably (a temporary beside the
 * file, synced, renamed, the rename synced) so that a run killed at any
 * moment leaves the last checkpoint whole, and read back to continue.
 *
 *   gpc-svgp-checkpoint 1
 *   likelihood logistic
 *   kernel ard
 *   dim 7
 *   cases 200               the training rows and a hash of their inputs
 *   data 1234567890         and labels, so that another data file is refused
 *   latent 1
 *   batch 256               the settings the run's result depends on
 *   seed 1
 *   rho 0.2
 *   learning_rate 0.01
 *   fixed -                 (or the fixed hyperparameters' names, comma-separated)
 *   fix_inducing 0
 *   step 140                where the run is: steps taken, whole epochs,
 *   epoch 17                the next batch in the epoch, and the largest
 *   next_batch 3            jitter K_ZZ needed
 *   jitter 0
 *   hyperparameters 8
 *   log_v0 0.12 0.0031 2.1e-05      value, Adam's first and second moment
 *   ...
 *   inducing 50
 *   # m S1..S50 z1..z7 mz1..mz7 vz1..vz7
 *   ...                     per inducing input and latent function m_c's
 *                           entry and S_c's row, then its inputs and their
 *                           Adam moments
 *
 * Numbers are written with %.17g, so a continued run starts from the very
 * bits the stopped one had. */
#ifndef GPC_CHECKPOINT_H
#define GPC_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel.h"
#include "sparse/train.h"

typedef struct {
    char likelihood[32];
    char kernel[1024];
    size_t dim;
    uint64_t cases;
    unsigned long long data_hash;
    size_t latent;
    size_t batch;
    uint64_t seed;
    double rho, lr;
    char fixed[1024];   /* "-" for none */
    int fix_inducing;
} gpc_checkpoint_settings;

/* Write t under the settings to path (durably; GPC_EINPUT, message set, if
 * it cannot be written).  k names the hyperparameters. */
int gpc_checkpoint_write(const char *path, const gpc_checkpoint_settings *set,
                         const gpc_kernel *k, const gpc_train *t);

/* Read a checkpoint: its settings into *set and a new state into *t, whose
 * hyperparameters must be k's by number and name (k is parsed from the
 * caller's spec).  GPC_EINPUT (message set, naming file and line) for a
 * file that is not a whole checkpoint. */
int gpc_checkpoint_read(const char *path, const gpc_kernel *k, gpc_checkpoint_settings *set,
                        gpc_train **t);

/* GPC_OK if a checkpoint's settings (file) are the run's (run), else
 * GPC_EINPUT naming path and the first setting that differs, both values,
 * and what to do. */
/* Whether settings a and b differ: if so, the first setting that does, as
 * "WHAT A AT_A, B AT_B" into buf. */
int gpc_checkpoint_diff(const gpc_checkpoint_settings *a, const gpc_checkpoint_settings *b,
                        const char *at_a, const char *at_b, char *buf, size_t size);
int gpc_checkpoint_same(const char *path, const gpc_checkpoint_settings *file,
                        const gpc_checkpoint_settings *run);

#endif
