/* class-kernels — the kernels and labels of a multiclass method.
 *
 * A multiclass method (softmax Laplace, variational Bayes, one-vs-rest)
 * evaluates its C latent functions through base kernels: one shared by
 * every class, or one per class when the kernel spec ends in
 * ":per-class=C" (gpc_kernel_copies), each copy holding its class's
 * hyperparameters.  Its labels arrive as class indices 0..C-1 in a vector of
 * doubles. */
#ifndef GPC_CLASS_KERNELS_H
#define GPC_CLASS_KERNELS_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"

typedef struct {
    size_t C;        /* classes */
    size_t nK;       /* base kernels: C (per class) or 1 (shared) */
    size_t nparams;  /* hyperparameters of each base kernel */
    gpc_kernel **k;  /* nK base kernels */
} gpc_class_kernels;

/* The base kernels of k (its per-class copies, or one shared) for C
 * classes, at k's hyperparameters. */
gpc_class_kernels *gpc_class_kernels_alloc(const gpc_kernel *k, size_t C);
/* Their shape, without them: the hyperparameters of each base kernel, and
 * in *per_class whether there is one per class (for workspace sizes). */
size_t gpc_class_kernels_nparams(const gpc_kernel *k, int *per_class);
void gpc_class_kernels_free(gpc_class_kernels *ck);

/* Class c's base kernel. */
const gpc_kernel *gpc_class_kernel(const gpc_class_kernels *ck, size_t c);

/* Take k's hyperparameters, class by class; GPC_EUSAGE (message set,
 * naming the method title) if k has another shape. */
int gpc_class_kernels_set(gpc_class_kernels *ck, const gpc_kernel *k, const char *title);

/* The cross-covariances K(X, Xs) (n x m) and prior variances at the rows of
 * Xs of each base kernel, nK of each, allocated here. */
typedef struct {
    size_t nK;
    gsl_matrix **Ks;
    gsl_vector **kss;
} gpc_class_cross;

gpc_class_cross *gpc_class_cross_alloc(const gpc_class_kernels *ck, const gsl_matrix *X,
                                       const gsl_matrix *Xs);
void gpc_class_cross_free(gpc_class_cross *cc);

/* cls[i] = y[i] as a class index below C; GPC_EUSAGE (message set) for
 * anything else. */
int gpc_class_indices(const gsl_vector *y, size_t C, size_t *cls);

#endif
