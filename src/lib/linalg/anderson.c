#include "linalg/anderson.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include "base/alloc.h"

gpc_anderson *gpc_anderson_alloc(size_t N, size_t depth)
{
    gpc_anderson *a = gpc_calloc(1, sizeof *a);
    size_t len = N ? N : 1;
    a->N = N;
    a->depth = depth ? depth : 1;
    a->dX = gpc_mallocarray(gpc_size_mul(len, a->depth), sizeof *a->dX);
    a->dR = gpc_mallocarray(gpc_size_mul(len, a->depth), sizeof *a->dR);
    a->xold = gpc_mallocarray(len, sizeof *a->xold);
    a->rold = gpc_mallocarray(len, sizeof *a->rold);
    return a;
}

void gpc_anderson_free(gpc_anderson *a)
{
    if (!a)
        return;
    free(a->dX);
    free(a->dR);
    free(a->xold);
    free(a->rold);
    free(a);
}

size_t gpc_anderson_bytes(size_t N, size_t depth)
{
    return gpc_doubles_bytes(N ? N : 1, gpc_size_add(gpc_size_mul(2, depth ? depth : 1), 2));
}

void gpc_anderson_reset(gpc_anderson *a)
{
    a->k = a->next = 0;
    a->has_last = 0;
}

void gpc_anderson_push(gpc_anderson *a, const double *x, const double *r)
{
    size_t N = a->N;
    if (a->has_last) {
        double *dx = a->dX + a->next * N, *dr = a->dR + a->next * N;
        for (size_t t = 0; t < N; t++) {
            dx[t] = x[t] - a->xold[t];
            dr[t] = r[t] - a->rold[t];
        }
        a->next = (a->next + 1) % a->depth;
        if (a->k < a->depth)
            a->k++;
    }
    memcpy(a->xold, x, N * sizeof *x);
    memcpy(a->rold, r, N * sizeof *r);
    a->has_last = 1;
}

int gpc_anderson_step(const gpc_anderson *a, const double *r, double d, double *step)
{
    size_t k = a->k, N = a->N;
    if (k == 0)
        return -1;
    double *A = gpc_mallocarray(k * k + k, sizeof *A), *b = A + k * k, tr = 0.0;
    for (size_t i = 0; i < k; i++) {
        const double *ri = a->dR + i * N;
        double v = 0.0;
        for (size_t t = 0; t < N; t++)
            v += ri[t] * r[t];
        b[i] = v;
        for (size_t j = 0; j <= i; j++) {
            const double *rj = a->dR + j * N;
            double u = 0.0;
            for (size_t t = 0; t < N; t++)
                u += ri[t] * rj[t];
            A[i * k + j] = A[j * k + i] = u;
        }
        tr += A[i * k + i];
    }
    for (size_t i = 0; i < k; i++)
        A[i * k + i] += 1e-12 * tr;
    gsl_matrix_view Av = gsl_matrix_view_array(A, k, k);
    gsl_vector_view bv = gsl_vector_view_array(b, k);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int st = tr > 0.0 ? gsl_linalg_cholesky_decomp1(&Av.matrix) : GSL_EDOM;
    if (st == GSL_SUCCESS)
        st = gsl_linalg_cholesky_svx(&Av.matrix, &bv.vector);
    gsl_set_error_handler(old);
    if (st == GSL_SUCCESS)
        for (size_t t = 0; t < N; t++) {
            double v = d * r[t];
            for (size_t i = 0; i < k; i++)
                v -= (a->dX[i * N + t] + d * a->dR[i * N + t]) * b[i];
            step[t] = v;
        }
    free(A);
    return st == GSL_SUCCESS ? 0 : -1;
}
