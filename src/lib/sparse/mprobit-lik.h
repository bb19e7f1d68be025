/* mprobit-lik — the multinomial probit of Girolami & Rogers (2006) as a
 * shard likelihood of the sparse variational method (gpc(7), SPARSE
 * VARIATIONAL METHOD).
 *
 * Each case has auxiliary values y ~ N(f, I) (C of them) and its class t is
 * the argmax of y.  With q(F, Y) = q(F) prod_i q(y_i), and q(F) giving case
 * i the independent marginals N(mu_c, s2_c) (q factorises over the
 * classes), the bound's terms in y_i are
 *     E_q(F)[log N(y; f, I)] = log N(y; mu, I) - 1/2 sum_c s2_c
 * plus the entropy of q(y_i), over the cone {y_t > y_j, j != t}.  Their
 * maximum over q(y_i) is the log normaliser of exp(that) on the cone, so
 * q(y_i) is N(mu, I) cut to the cone and the case's term is
 *     lambda(mu, s2) = log P(argmax(mu + e) = t) - 1/2 sum_c s2_c,  e ~ N(0, I),
 * with no further constant; its derivatives are
 *     g_c = d lambda / d mu_c = E[y_c | cone] - mu_c,   h_c = -1/2.
 * (Differentiating log of the integral of N(y; mu, I) over the cone in mu
 * brings down y - mu, whence g.)  Since h does not depend on
 * q, a natural-gradient step of size 1 (sparse/natgrad) is the closed-form
 * update of q(F) given q(Y) that -M vb makes, and a smaller step on a
 * minibatch its stochastic form; with the inducing inputs at the training
 * inputs the bound is -M vb's bound.  Cost per case: one integral of
 * gpc_mprobit_case, O(C) work at each of its 32 nodes. */
#ifndef GPC_MPROBIT_LIK_H
#define GPC_MPROBIT_LIK_H

#include <stddef.h>

#include "liks/mprobit.h"

/* The context of gpc_shard_mprobit_lik: a rule made for the C classes of
 * the problem (gpc_mprobit_rule_alloc(C)).  The rule is the integrals'
 * scratch, written by every call, so a context is not shared between
 * threads: each thread that sums rows has its own rule. */
typedef struct {
    gpc_mprobit_rule *rule;
} gpc_shard_mprobit;

/* The gpc_shard_lik (sparse/shard.h) of the multinomial probit: y is the
 * case's class index 0..C-1 as a double, ctx a gpc_shard_mprobit for C
 * classes.  Returns lambda above, with g[c] and h[c] = -1/2; NaN (which the
 * shard reports, naming the row) for a y that is not a class index. */
double gpc_shard_mprobit_lik(const void *ctx, size_t C, double y, const double *mu,
                             const double *s2, double *g, double *h);

#endif
