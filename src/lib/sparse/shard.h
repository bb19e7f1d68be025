/* shard — what a set of training rows contributes to the sparse variational
 * bound (gpc(7), SPARSE VARIATIONAL METHOD, What a shard computes): with
 * each row's kernel column whitened, a_i = L^-1 k(Z, x_i) (K_ZZ = L L'),
 * sums over its rows of
 *     lambda_i                       the expected log likelihoods,
 *     G_c = sum_i g_ic a_i           (g_ic = d lambda_i / d mu_ic),
 *     H_c = sum_i h_ic a_i a_i'      (h_ic = d lambda_i / d s2_ic),
 * and the gradient through the rows' own kernel values k(Z, x_i) and
 * k(x_i, x_i), in every hyperparameter and every coordinate of Z, at given
 * L and q(v_c) = N(m_c, S_c).  Whitening each row (rather than summing
 * k_i k_i' and whitening the sum) keeps the statistics accurate however
 * badly K_ZZ is conditioned.  Shards add: the statistics of a set of rows
 * are the sums of those of its parts, so processes can each take a part
 * and sum them.
 *
 * The latent functions' kernel is one shared by the C classes, or with
 * the kernel's ":per-class=C" clause one per class, each with its own
 * hyperparameters (its block of theta, class by class) and its own K_ZZ:
 * everything below that takes L takes one factor per kernel. */
#ifndef GPC_SHARD_H
#define GPC_SHARD_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>

#include "base/comm.h"
#include "kernels/kernel.h"

/* The kernels of the latent functions: 1 (shared) or C (one per class). */
size_t gpc_shard_kernel_count(const gpc_kernel *k);

/* The classes whose latent functions kernel g of nK covers: all C when
 * they share it, class g alone when each has its own. */
typedef struct {
    size_t first, count;
} gpc_shard_span;
gpc_shard_span gpc_shard_classes(size_t nK, size_t C, size_t g);

/* One case's expected log likelihood lambda from its C marginals N(mu_c,
 * s2_c), with g[c] = d lambda / d mu_c and h[c] = d lambda / d s2_c; y is
 * its label as the caller codes it, ctx the caller's. */
typedef double (*gpc_shard_lik)(const void *ctx, size_t C, double y, const double *mu,
                                const double *s2, double *g, double *h);

/* The binary likelihoods' gpc_shard_lik (C = 1, y = -1 or +1): ctx points
 * to the gpc_lik, logistic or probit, and lambda is its expectation by
 * gpc_lik_expect. */
double gpc_shard_binary_lik(const void *ctx, size_t C, double y, const double *mu,
                            const double *s2, double *g, double *h);

typedef struct {
    size_t m, C, dim, nparams;
    size_t rows;       /* the rows summed */
    double lambda;     /* sum of lambda_i */
    gsl_matrix *G;     /* C x m, row c is G_c (whitened) */
    gsl_matrix **H;    /* C matrices m x m */
    double *dtheta;    /* nparams: all of k's, every class's block */
    gsl_matrix *dZ;    /* m x dim */
    int kernel_grads;  /* 1 (the default): sum dtheta and dZ; 0: leave them
                        * at 0, for steps that move q alone and need not
                        * pay for the kernel's derivatives */
    int input_grads;   /* 1 (the default): sum dZ; 0: leave it at 0 (Z fixed) */
} gpc_shard_stats;

gpc_shard_stats *gpc_shard_stats_alloc(size_t m, size_t C, size_t dim, size_t nparams);
void gpc_shard_stats_free(gpc_shard_stats *st);
void gpc_shard_stats_zero(gpc_shard_stats *st);
/* sum += part. */
void gpc_shard_stats_add(gpc_shard_stats *sum, const gpc_shard_stats *part);

/* The statistics as one vector of doubles, for processes to sum (the rows,
 * lambda, G, every H_c, dtheta, dZ): its length, and st into buf and back
 * (exactly). */
size_t gpc_shard_stats_packed(const gpc_shard_stats *st);
void gpc_shard_stats_pack(const gpc_shard_stats *st, double *buf);
void gpc_shard_stats_unpack(gpc_shard_stats *st, const double *buf);

/* st, each process's sums over its own rows (made with status rc), becomes
 * their sum over the processes, added in process order, on every one; or
 * the status and message of the first process that failed. */
int gpc_shard_stats_sum(gpc_comm *comm, gpc_shard_stats *st, int rc);

/* Add the statistics of the rows of Xb (labels yb) to st, at inducing
 * inputs Z, kernel k, the factors L[g] of each kernel's K_ZZ
 * (sparse/inducing), M (C x m, row c is m_c) and S[c].  GPC_ENUM (message set) if a likelihood value or
 * derivative is not finite, naming the row (first + its index in Xb). */
int gpc_shard_add_rows(const gpc_kernel *k, const gsl_matrix *Z, gsl_matrix *const *L,
                       const gsl_matrix *M, gsl_matrix *const *S, const gsl_matrix *Xb,
                       const double *yb, size_t first, gpc_shard_lik lik, const void *ctx,
                       gpc_shard_stats *st);

/* The marginals N(mean_ic, var_ic) (rows x C) of the latent functions at
 * the rows of Xs under q, as the shards compute them (the latent functions
 * are independent under q). */
void gpc_shard_marginals(const gpc_kernel *k, const gsl_matrix *Z, gsl_matrix *const *L,
                         const gsl_matrix *M, gsl_matrix *const *S, const gsl_matrix *Xs,
                         gsl_matrix *mean, gsl_matrix *var);

#endif
