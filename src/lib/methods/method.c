#include "methods/method.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"

/* Indexed by gpc_method: a new method adds its operations here. */
static const gpc_method_ops *const methods[] = {
    [GPC_METHOD_LAPLACE] = &gpc_method_laplace_ops,
    [GPC_METHOD_EP] = &gpc_method_ep_ops,
    [GPC_METHOD_NAIVE] = &gpc_method_naive_ops,
    [GPC_METHOD_SOFTMAX] = &gpc_method_softmax_ops,
    [GPC_METHOD_LAPLACE_OVR] = &gpc_method_laplace_ovr_ops,
    [GPC_METHOD_EP_OVR] = &gpc_method_ep_ovr_ops,
    [GPC_METHOD_NAIVE_OVR] = &gpc_method_naive_ovr_ops,
    [GPC_METHOD_VB] = &gpc_method_vb_ops,
    [GPC_METHOD_SVGP] = &gpc_method_svgp_ops,
    [GPC_METHOD_SVGP_MC] = &gpc_method_svgp_mc_ops,
    [GPC_METHOD_NESTED_EP] = &gpc_method_nested_ep_ops,
};

#define N_METHODS (sizeof methods / sizeof methods[0])

const gpc_method_ops *gpc_method_get(gpc_method method) { return methods[method]; }

const char *gpc_method_name(gpc_method method) { return methods[method]->name; }

/* The method of this name that takes lik, else the first of this name (whose
 * check_lik then words the refusal); 0 if no method has the name. */
static int find_index(const char *name, gpc_lik lik, gpc_method *method)
{
    int found = 0;
    for (size_t i = 0; i < N_METHODS; i++) {
        if (strcmp(methods[i]->name, name) != 0)
            continue;
        int takes = methods[i]->check_lik(lik) == GPC_OK;
        if (!found || takes)
            *method = (gpc_method)i;
        found = 1;
        if (takes)
            break;
    }
    return found;
}

const gpc_method_ops *gpc_method_find(const char *name, gpc_lik lik)
{
    gpc_method m;
    return find_index(name, lik, &m) ? methods[m] : NULL;
}

int gpc_method_known(const char *name)
{
    for (size_t i = 0; i < N_METHODS; i++)
        if (strcmp(methods[i]->name, name) == 0)
            return 1;
    return 0;
}

int gpc_method_check_bytes(size_t bytes, const char *title, size_t n, size_t C)
{
    char what[256];
    if (C > 2)
        snprintf(what, sizeof what, "the workspace of %s for %zu cases of %zu classes", title, n,
                 C);
    else
        snprintf(what, sizeof what, "the workspace of %s for %zu cases", title, n);
    /* it grows as n^2 (as C n^2 with C classes), so fewer cases gain most */
    return gpc_alloc_check(bytes, what,
                           C > 2 ? "use fewer cases (a random subset of them), fewer classes, or "
                                   "a machine with more memory"
                                 : "use fewer cases (a random subset of them) or a machine with "
                                   "more memory");
}

int gpc_method_check_memory(const gpc_method_ops *ops, size_t n, size_t C, const gpc_kernel *k,
                            int gradient)
{
    return gpc_method_check_bytes(ops->workspace(n, C, k, gradient), ops->title, n, C);
}

int gpc_method_ovr(gpc_method bin, gpc_method *ovr)
{
    switch (bin) {
    case GPC_METHOD_LAPLACE: *ovr = GPC_METHOD_LAPLACE_OVR; return GPC_OK;
    case GPC_METHOD_EP: *ovr = GPC_METHOD_EP_OVR; return GPC_OK;
    case GPC_METHOD_NAIVE: *ovr = GPC_METHOD_NAIVE_OVR; return GPC_OK;
    default: break;
    }
    return gpc_fail(GPC_EUSAGE, "one-vs-rest takes a binary method (laplace with logistic or "
                    "probit, ep, tap or naive), not %s", methods[bin]->title);
}

/* adaptive TAP has EP's fixed point */
static const char *unalias(const char *name) { return strcmp(name, "tap") == 0 ? "ep" : name; }

const gpc_method_ops *gpc_method_lookup(const char *name)
{
    gpc_method m;
    return find_index(unalias(name), GPC_LIK_PROBIT, &m) ? methods[m] : NULL;
}

int gpc_method_parse(const char *name, gpc_lik lik, gpc_method *method)
{
    if (!find_index(unalias(name), lik, method))
        return gpc_fail(GPC_EUSAGE, "unknown method '%s' (use laplace, ep, tap, naive, vb or svgp)",
                        name);
    return methods[*method]->check_lik(lik);
}

int gpc_method_binary_prob(void *ws, gpc_lik lik, double eps, const gsl_matrix *mean,
                           const gsl_matrix *cov, int plugin, gsl_matrix *p)
{
    (void)ws;
    for (size_t i = 0; i < mean->size1; i++) {
        double mu = gsl_matrix_get(mean, i, 0), v = gsl_matrix_get(cov, i, 0);
        double q = plugin ? exp(gpc_lik_logp(lik, 1.0, mu, NULL, NULL, NULL))
                          : gpc_lik_predict(lik, mu, v);
        gsl_matrix_set(p, i, 0, gpc_lik_noisy(eps, q));
    }
    return GPC_OK;
}

int gpc_method_predict_binary(gpc_method_latent_fn latent, const void *ws, const gpc_kernel *k,
                              const gsl_matrix *X, const gsl_matrix *Xs, gsl_matrix *mean,
                              gsl_matrix *var)
{
    size_t m = Xs->size1;
    gsl_matrix *Ks = gpc_matrix_alloc(X->size1, m);
    gsl_vector *kss = gpc_vector_alloc(m);
    gpc_kernel_cross(k, X, Xs, Ks);
    gpc_kernel_diag(k, Xs, kss);
    gsl_vector_view mu = gsl_matrix_column(mean, 0), v = gsl_matrix_column(var, 0);
    latent(ws, Ks, kss, &mu.vector, &v.vector);
    gsl_matrix_free(Ks);
    gsl_vector_free(kss);
    return GPC_OK;
}

int gpc_method_loo_sites(gpc_method_latent_fn latent, const void *ws, const gsl_matrix *K,
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
    gsl_vector_view mu = gsl_matrix_column(mean, 0), v = gsl_matrix_column(var, 0);
    latent(ws, Ks, kss, &mu.vector, &v.vector);
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
