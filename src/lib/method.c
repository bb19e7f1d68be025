#include "method.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

/* Indexed by gpc_method: a new method adds its operations here. */
static const gpc_method_ops *const methods[] = {
    [GPC_METHOD_LAPLACE] = &gpc_method_laplace_ops,
    [GPC_METHOD_EP] = &gpc_method_ep_ops,
    [GPC_METHOD_NAIVE] = &gpc_method_naive_ops,
};

#define N_METHODS (sizeof methods / sizeof methods[0])

const gpc_method_ops *gpc_method_get(gpc_method method) { return methods[method]; }

const char *gpc_method_name(gpc_method method) { return methods[method]->name; }

static int find_index(const char *name, gpc_method *method)
{
    for (size_t i = 0; i < N_METHODS; i++)
        if (strcmp(methods[i]->name, name) == 0) {
            *method = (gpc_method)i;
            return 1;
        }
    return 0;
}

const gpc_method_ops *gpc_method_find(const char *name)
{
    gpc_method m;
    return find_index(name, &m) ? methods[m] : NULL;
}

/* adaptive TAP has EP's fixed point */
static const char *unalias(const char *name) { return strcmp(name, "tap") == 0 ? "ep" : name; }

const gpc_method_ops *gpc_method_lookup(const char *name) { return gpc_method_find(unalias(name)); }

int gpc_method_parse(const char *name, gpc_lik lik, gpc_method *method)
{
    if (!find_index(unalias(name), method))
        return gpc_fail(GPC_EUSAGE, "unknown method '%s' (use laplace, ep, tap or naive)", name);
    return methods[*method]->check_lik(lik);
}

void gpc_method_binary_prob(gpc_lik lik, double eps, const double *mean, const double *cov,
                            double *p)
{
    p[0] = gpc_lik_noisy(eps, gpc_lik_predict(lik, mean[0], cov[0]));
}

int gpc_method_loo_sites(const gpc_method_ops *ops, const void *ws, const gsl_matrix *K,
                         const gsl_vector *tau, const gsl_vector *nu, gsl_matrix *mean,
                         gsl_matrix *var)
{
    size_t n = K->size1;
    gsl_matrix *Ks = gpc_matrix_alloc(n, n);
    gsl_vector *kss = gpc_vector_alloc(n);
    int st = GPC_OK;
    /* the posterior marginals at the training inputs */
    gsl_matrix_memcpy(Ks, K);
    gsl_vector_const_view d = gsl_matrix_const_diagonal(K);
    gsl_vector_memcpy(kss, &d.vector);
    ops->predict(ws, Ks, kss, mean, var);
    for (size_t i = 0; st == GPC_OK && i < n; i++) {
        /* divide site i out of the marginal N(mu_i, v_i) */
        double t = gsl_vector_get(tau, i), s = gsl_vector_get(nu, i);
        double vi = gsl_matrix_get(var, i, 0), mi = gsl_matrix_get(mean, i, 0);
        double tc = 1.0 / vi - t;
        if (!(tc > 0.0) || !isfinite(tc))
            st = gpc_fail(GPC_ENUM, "leave-one-out: the cavity of training case %zu is "
                          "improper (its posterior variance %.3g is not below its site's)",
                          i + 1, vi);
        else {
            gsl_matrix_set(mean, i, 0, (mi / vi - s) / tc);
            gsl_matrix_set(var, i, 0, 1.0 / tc);
        }
    }
    gsl_matrix_free(Ks);
    gsl_vector_free(kss);
    return st;
}
