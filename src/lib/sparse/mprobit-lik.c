#include "sparse/mprobit-lik.h"

#include <math.h>

double gpc_shard_mprobit_lik(const void *ctx, size_t C, double y, const double *mu,
                             const double *s2, double *g, double *h)
{
    const gpc_shard_mprobit *mp = ctx;
    if (!(y >= 0.0 && y < (double)C && y == floor(y)))
        return NAN;
    /* E[y | cone] lands in g, then becomes g = E[y | cone] - mu */
    double lambda = gpc_mprobit_case(mp->rule, (size_t)y, mu, g);
    for (size_t c = 0; c < C; c++) {
        g[c] -= mu[c];
        h[c] = -0.5;
        lambda -= 0.5 * s2[c];
    }
    return lambda;
}
