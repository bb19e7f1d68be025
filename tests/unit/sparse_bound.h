/* sparse_bound — the whole sparse variational bound as the tests
 * difference it: each kernel's K_ZZ factored (NAN when any would need
 * jitter, so that differences never cross a change of jitter), the shard
 * statistics of all rows of X (labels y, likelihood lik with its ctx), and
 * the global part at the data scale, with its gradients where the
 * pointers are not NULL. */
#ifndef GPC_TEST_SPARSE_BOUND_H
#define GPC_TEST_SPARSE_BOUND_H

#include <math.h>

#include "base/err.h"
#include "kernels/class-kernels.h"
#include "sparse/bound.h"
#include "sparse/inducing.h"
#include "sparse/shard.h"

static inline double sparse_bound(const gpc_kernel *k, const gsl_matrix *Z, const gsl_matrix *M,
                                  gsl_matrix *const *S, const gsl_matrix *X, const double *y,
                                  gpc_shard_lik lik, const void *ctx, double scale,
                                  gsl_matrix *dM, gsl_matrix **dS, double *dtheta,
                                  gsl_matrix *dZ)
{
    size_t m = Z->size1, C = M->size1, nK = gpc_shard_kernel_count(k);
    gpc_class_kernels *ck = gpc_class_kernels_alloc(k, C);
    gsl_matrix **L = malloc(nK * sizeof *L);
    double jitter, elbo = NAN;
    int ok = 1;
    for (size_t g = 0; g < nK; g++) {
        L[g] = gsl_matrix_alloc(m, m);
        ok &= gpc_inducing_factor(ck->k[g], Z, L[g], &jitter) == GPC_OK && jitter == 0.0;
    }
    gpc_shard_stats *st = gpc_shard_stats_alloc(m, C, Z->size2, gpc_kernel_nparams(k));
    if (ok && gpc_shard_add_rows(k, Z, L, M, S, X, y, 0, lik, ctx, st) == GPC_OK)
        gpc_bound_eval(k, Z, L, M, S, st, scale, &elbo, dM, dS, NULL, dtheta, dZ);
    gpc_shard_stats_free(st);
    for (size_t g = 0; g < nK; g++)
        gsl_matrix_free(L[g]);
    free(L);
    gpc_class_kernels_free(ck);
    return elbo;
}

#endif
