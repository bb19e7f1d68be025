/* softmax-lik — the softmax likelihood as a shard likelihood of the sparse
 * variational method (sparse/shard.h, gpc(7) SPARSE VARIATIONAL METHOD):
 * for a case of class y in 0 .. C-1 whose latent values have the independent
 * marginals N(mu_c, s2_c) under q,
 *
 *   lambda = E[log softmax_y(f)] = mu_y - E[log sum_c exp f_c],
 *   g_c = d lambda / d mu_c = [c = y] - E[softmax_c(f)],
 *   h_c = d lambda / d s2_c = -d E[log sum exp f] / d s2_c,
 *
 * by the rule of liks/lse (accurate to about 1e-12 in lambda, g and h). */
#ifndef GPC_SOFTMAX_LIK_H
#define GPC_SOFTMAX_LIK_H

#include <stddef.h>

/* ctx is a gpc_lse_work * (liks/lse.h) allocated for the C classes.  The
 * workspace is scratch that every call writes, so a caller that evaluates
 * cases on several threads gives each thread its own.  NaN (which the shard
 * reports for its row) if y is not a class 0 .. C-1, C is not the
 * workspace's, or a marginal is not finite or has a negative variance. */
double gpc_shard_softmax_lik(const void *ctx, size_t C, double y, const double *mu,
                             const double *s2, double *g, double *h);

#endif
