#include "hyper/importance.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_randist.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/progress.h"
#include "hyper/evidence.h"
#include "hyper/prior.h"
#include "kernels/class-kernels.h"
#include "linalg/bmatrix.h"

/* log prod_c N(ybar_c | 0, I + K) without the 2 pi terms (the same for
 * every draw); -inf if I + K is not positive definite. */
static double log_weight(const gpc_kernel *k, const gsl_matrix *X, const double *ybar, size_t nc,
                         gsl_matrix *A, gsl_matrix *L, gsl_vector *ones, gsl_vector *z)
{
    size_t n = X->size1;
    gpc_kernel_matrix(k, X, A);
    if (gpc_bmatrix_factor(A, ones->data, L) != 0)
        return -INFINITY;
    double hl = gpc_bmatrix_half_log_det(L), lw = 0.0;
    for (size_t c = 0; c < nc; c++) {
        for (size_t i = 0; i < n; i++)
            z->data[i] = ybar[c * n + i];
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, L, z);
        double q;
        gsl_blas_ddot(z, z, &q);
        lw -= 0.5 * q + hl;
    }
    return lw;
}

int gpc_importance_mean(gpc_kernel *k, const gsl_matrix *X, const double *ybar, size_t nc,
                        const double *psi, size_t S, gsl_rng *r, double *phi_mean, double *ess)
{
    size_t n = X->size1, p = gpc_kernel_nparams(k);
    gsl_matrix *A = gpc_matrix_alloc(n, n), *L = gpc_matrix_alloc(n, n);
    gsl_vector *ones = gpc_vector_alloc(n), *z = gpc_vector_alloc(n);
    double *phi = gpc_mallocarray(S * p, sizeof *phi), *lw = gpc_mallocarray(S, sizeof *lw);
    double *theta = gpc_mallocarray(p, sizeof *theta), mx = -INFINITY;
    size_t J = gpc_kernel_weights(k, 0, NULL, NULL), *widx = gpc_mallocarray(J + 1, sizeof *widx);
    double *u = gpc_mallocarray(J + 1, sizeof *u), shape, rate;
    gpc_kernel_simplex(k, &shape, &rate);
    gpc_kernel_weights(k, 0, NULL, widx);
    gsl_vector_set_all(ones, 1.0);
    for (size_t s = 0; s < S; s++) {
        for (size_t j = 0; j < p; j++)
            if (!gpc_kernel_is_weight(k, j))
                phi[s * p + j] = gsl_ran_exponential(r, 1.0 / psi[j]); /* GSL takes the mean */
        if (J) { /* the weights from their Dirichlet prior, hyperprior included */
            gpc_prior_draw_weights(r, J, shape, rate, u);
            for (size_t t = 0; t < J; t++)
                phi[s * p + widx[t]] = exp(u[t]);
        }
        for (size_t j = 0; j < p; j++)
            theta[j] = log(phi[s * p + j]);
        gpc_kernel_set_params(k, theta);
        lw[s] = log_weight(k, X, ybar, nc, A, L, ones, z);
        mx = fmax(mx, lw[s]);
    }
    int st = GPC_OK;
    if (!isfinite(mx)) {
        st = gpc_fail(GPC_ENUM, "importance sampling: no draw of the hyperparameters from "
                      "their prior gives a usable kernel matrix");
    } else {
        double sw = 0.0, sw2 = 0.0;
        for (size_t j = 0; j < p; j++)
            phi_mean[j] = 0.0;
        for (size_t s = 0; s < S; s++) {
            double w = exp(lw[s] - mx);
            sw += w;
            sw2 += w * w;
            for (size_t j = 0; j < p; j++)
                phi_mean[j] += w * phi[s * p + j];
        }
        for (size_t j = 0; j < p; j++)
            phi_mean[j] /= sw;
        if (ess)
            *ess = sw * sw / sw2;
    }
    gsl_matrix_free(A);
    gsl_matrix_free(L);
    gsl_vector_free(ones);
    gsl_vector_free(z);
    free(phi);
    free(lw);
    free(theta);
    free(widx);
    free(u);
    return st;
}

void gpc_importance_rates(size_t p, const double *phi, double a, double b, double *psi)
{
    for (size_t j = 0; j < p; j++)
        psi[j] = (a + 1.0) / (b + phi[j]);
}

void gpc_importance_opts_default(gpc_importance_opts *o)
{
    o->samples = 1000;
    o->shape = 1e-6;
    o->rate = 1e-6;
    o->max_iterations = 50;
    o->tol = 0.01;
    o->seed = 1;
}

/* Class c's ybar (column c of the n x C state) into out, class-major. */
static void class_ybar(const gsl_matrix *state, size_t c, double *out)
{
    for (size_t i = 0; i < state->size1; i++)
        out[i] = gsl_matrix_get(state, i, c);
}

int gpc_importance_fit(gpc_evidence *ev, const gpc_kernel *k, const gsl_matrix *X, size_t C,
                       const gpc_importance_opts *o, double *theta, gpc_importance_result *res)
{
    size_t n = X->size1, P = gpc_kernel_nparams(k);
    gpc_class_kernels *ck = gpc_class_kernels_alloc(k, C);
    size_t p = ck->nparams;
    gsl_matrix *state = gpc_matrix_alloc(n, C);
    double *ybar = gpc_mallocarray(n * C, sizeof *ybar), *phi = gpc_mallocarray(p, sizeof *phi);
    double *psi = gpc_mallocarray(P, sizeof *psi);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, o->seed);
    for (size_t j = 0; j < P; j++)
        psi[j] = 1.0; /* prior means 1 to start, as the rates' own mean is unknown */
    int st = GPC_OK;
    gpc_progress clock; /* the updates stop at convergence, so the count is a cap */
    gpc_progress_start(&clock, "importance update", 0, o->max_iterations, gpc_progress_clock());
    clock.at_most = 1;
    char head[256];
    res->converged = 0;
    for (res->iterations = 0; res->iterations < o->max_iterations && !res->converged;) {
        if ((st = gpc_evidence_eval(ev, theta, &res->bound, NULL)) != GPC_OK)
            break;
        gpc_evidence_state(ev, state);
        double moved = 0.0;
        res->min_ess = INFINITY;
        for (size_t kk = 0; kk < ck->nK && st == GPC_OK; kk++) {
            size_t nc = ck->nK > 1 ? 1 : C;
            for (size_t c = 0; c < nc; c++)
                class_ybar(state, ck->nK > 1 ? kk : c, ybar + c * n);
            double ess;
            st = gpc_importance_mean(ck->k[kk], X, ybar, nc, psi + kk * p, o->samples, r, phi,
                                     &ess);
            for (size_t j = 0; j < p && st == GPC_OK; j++) {
                double t = log(phi[j]);
                moved = fmax(moved, fabs(t - theta[kk * p + j]));
                theta[kk * p + j] = t;
            }
            gpc_importance_rates(p, phi, o->shape, o->rate, psi + kk * p);
            res->min_ess = fmin(res->min_ess, ess);
        }
        if (st != GPC_OK)
            break;
        res->iterations++;
        res->converged = moved <= o->tol;
        clock.ended = res->converged;
        gpc_info(res->iterations % 10 == 0 || res->converged ? 1 : 2, "%s; bound %.10g, largest "
                 "move of a log hyperparameter %.3g, effective sample size %.0f of %zu",
                 gpc_progress_format(&clock, res->iterations, gpc_progress_clock(), head,
                                     sizeof head),
                 res->bound, moved, res->min_ess, o->samples);
    }
    if (st == GPC_OK) /* the fit at the final hyperparameters, for the model */
        st = gpc_evidence_eval(ev, theta, &res->bound, NULL);
    gsl_rng_free(r);
    free(psi);
    free(phi);
    free(ybar);
    gsl_matrix_free(state);
    gpc_class_kernels_free(ck);
    return st;
}
