/* softmax-lik — E[log softmax_y(f)] under independent Gaussian marginals. */
#include "sparse/softmax-lik.h"

#include <math.h>

#include "liks/lse.h"

double gpc_shard_softmax_lik(const void *ctx, size_t C, double y, const double *mu,
                             const double *s2, double *g, double *h)
{
    /* the workspace is scratch: const only in the shard's signature */
    gpc_lse_work *w = (gpc_lse_work *)ctx;
    if (!(y >= 0.0 && y < (double)C && y == floor(y)) || gpc_lse_work_classes(w) != C) {
        for (size_t c = 0; c < C; c++)
            g[c] = h[c] = NAN;
        return NAN;
    }
    size_t cy = (size_t)y;
    double e = gpc_lse_expect(w, mu, s2, g, h);
    for (size_t c = 0; c < C; c++) {
        g[c] = (c == cy) - g[c];
        h[c] = -h[c];
    }
    return mu[cy] - e;
}
