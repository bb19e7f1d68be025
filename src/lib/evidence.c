#include "evidence.h"

#include <stdlib.h>

gpc_evidence *gpc_evidence_alloc(const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                                 gpc_lik lik)
{
    gpc_evidence *e = malloc(sizeof *e);
    e->kernel = gpc_kernel_clone(k);
    e->X = X;
    e->y = y;
    e->laplace = gpc_laplace_alloc(X->size1, gpc_kernel_nparams(k), lik);
    return e;
}

void gpc_evidence_free(gpc_evidence *e)
{
    if (!e)
        return;
    gpc_kernel_free(e->kernel);
    gpc_laplace_free(e->laplace);
    free(e);
}

int gpc_evidence_eval(void *ctx, const double *theta, double *value, double *grad)
{
    gpc_evidence *e = ctx;
    gpc_kernel_set_params(e->kernel, theta);
    return gpc_laplace_evidence(e->laplace, e->kernel, e->X, e->y, value, grad);
}
