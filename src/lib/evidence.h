/* evidence — the approximate log marginal likelihood of a training set as a
 * function of the kernel's log hyperparameters, in the shape the optimiser
 * and samplers take (gpc_objective).  Workspaces are allocated once, and each
 * mode search is warm-started from the previous one. */
#ifndef GPC_EVIDENCE_H
#define GPC_EVIDENCE_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernel.h"
#include "laplace.h"
#include "lik.h"

typedef struct {
    gpc_kernel *kernel;     /* owned: its parameters follow each evaluation */
    const gsl_matrix *X;
    const gsl_vector *y;
    gpc_laplace *laplace;
} gpc_evidence;

/* Labels must be -1/+1 and y must have X's row count (the caller checks). */
gpc_evidence *gpc_evidence_alloc(const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                                 gpc_lik lik);
void gpc_evidence_free(gpc_evidence *e);

/* gpc_objective: log evidence at theta and, if grad is not NULL, its gradient. */
int gpc_evidence_eval(void *ctx, const double *theta, double *value, double *grad);

#endif
