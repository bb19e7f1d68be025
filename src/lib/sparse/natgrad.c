#include "sparse/natgrad.h"

#include <gsl/gsl_blas.h>

#include "base/alloc.h"
#include "base/err.h"
#include "sparse/inducing.h"

int gpc_natgrad_step(gsl_vector *m, gsl_matrix *S, const gsl_matrix *Sinv, const gsl_vector *dm,
                     const gsl_matrix *dS, double rho)
{
    size_t n = m->size;
    gsl_matrix *P = gpc_matrix_alloc(n, n), *Snew = gpc_matrix_alloc(n, n);
    gsl_vector *t1 = gsl_vector_alloc(n), *dSm = gsl_vector_alloc(n);
    int rc = GPC_OK;
    if (Sinv)
        gsl_matrix_memcpy(P, Sinv);
    else if (gpc_inducing_spd_inverse(S, P, NULL) != 0) {
        rc = gpc_fail(GPC_ENUM, "a variational covariance is not positive definite");
        goto done;
    }
    /* theta1' = S^-1 m + rho (dm - 2 dS m) */
    gsl_blas_dgemv(CblasNoTrans, 1.0, P, m, 0.0, t1);
    gsl_blas_dgemv(CblasNoTrans, 1.0, dS, m, 0.0, dSm);
    gsl_blas_daxpy(rho, dm, t1);
    gsl_blas_daxpy(-2.0 * rho, dSm, t1);
    /* the new precision S^-1 - 2 rho dS, symmetric */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            P->data[i * P->tda + j] -= rho * (gsl_matrix_get(dS, i, j) + gsl_matrix_get(dS, j, i));
    if (gpc_inducing_spd_inverse(P, Snew, NULL) != 0) {
        rc = gpc_fail(GPC_ENUM, "a natural-gradient step of size %g leaves the variational "
                      "precision indefinite: take a smaller one", rho);
        goto done;
    }
    gsl_matrix_memcpy(S, Snew);
    gsl_blas_dgemv(CblasNoTrans, 1.0, S, t1, 0.0, m);
done:
    gsl_matrix_free(P);
    gsl_matrix_free(Snew);
    gsl_vector_free(t1);
    gsl_vector_free(dSm);
    return rc;
}
