/* model — a fitted classifier and its versioned, self-describing text file.
 *
 *   gpc-model 1
 *   method laplace
 *   likelihood logistic     (EP: "likelihood step 0.05" adds a label-flip
 *                            probability; absent means 0)
 *   classes no yes          (the user's labels of y = -1 and y = +1; absent,
 *                            as in older files, means "-1 1")
 *   kernel ard+bias
 *   dim 7
 *   hyperparameters 9
 *   log_v0 1.2345
 *   ...                     (one "name value" line per hyperparameter)
 *   fit ml | map normal -3 3 | none
 *   log_evidence -93.1
 *   training 200
 *   # y f x1 ... xd
 *   -1 -0.53 0.12 ...       (one line per training case: label, latent mode, inputs)
 *
 * With method ep each training line holds the label, the site precision
 * tau and the site nu (precision times mean), then the inputs; with method
 * naive (naive mean field, which has no evidence: "log_evidence none") the
 * label, x_i (the latent mean is K x) and the inputs.
 *
 * The state columns and their names come from the method's table
 * (method.h); this module knows no method's internals.
 *
 * Numbers are written with %.17g, so a model read back predicts exactly what
 * the fitted one did. */
#ifndef GPC_MODEL_H
#define GPC_MODEL_H

#include <stdio.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernel.h"
#include "lik.h"

#define GPC_MODEL_VERSION 1

typedef struct {
    char method[32];       /* "laplace", "ep" or "naive" */
    gpc_lik lik;
    double label_noise;    /* probability of a flipped label (EP only), else 0 */
    gpc_kernel *kernel;    /* with the fitted hyperparameters */
    char fit[64];          /* how they were chosen: "ml", "map normal -3 3", "none" */
    double log_evidence;
    gsl_matrix *X;         /* training inputs, n x dim */
    gsl_vector *y;         /* labels -1/+1 */
    char *classes[2];      /* the user's names of -1 and +1, one token each; NULL
                            * means "-1" and "1".  Owned by a model that was read;
                            * a tool that builds one may point them at its labels */
    gsl_matrix *state;     /* the method's fitted state, n x its state_width (method.h) */
} gpc_model;

void gpc_model_free(gpc_model *m);
/* The user's name of class c: 0 for y = -1, 1 for y = +1. */
const char *gpc_model_class(const gpc_model *m, int c);
int gpc_model_write(FILE *out, const char *name, const gpc_model *m);
/* Read a model; errors (GPC_EINPUT) name the file and line. */
int gpc_model_read(const char *path, gpc_model **out);

/* Latent mean and variance and p(y = +1 | x) (averaged over the latent
 * Gaussian) for every row of Xs; NULL outputs are skipped.  Xs must have
 * dim columns (the caller checks, to name the file). */
int gpc_model_predict(const gpc_model *m, const gsl_matrix *Xs, gsl_vector *mean,
                      gsl_vector *var, gsl_vector *prob);

/* Leave-one-out predictions of the training cases: each from its cavity,
 * the approximate posterior with its own likelihood term divided out (Opper
 * & Winther's estimate; for naive mean field the cavity is the solution's
 * own, with the prior variance).  The outputs are as gpc_model_predict's. */
int gpc_model_loo(const gpc_model *m, gsl_vector *mean, gsl_vector *var, gsl_vector *prob);

/* The same by n refits, each without one training case, at the model's
 * hyperparameters and label noise: the exact leave-one-out of the method. */
int gpc_model_loo_exact(const gpc_model *m, gsl_vector *mean, gsl_vector *var,
                        gsl_vector *prob);

/* Set the hyperparameters to theta and find the latent mode there afresh
 * (updating f and log_evidence), e.g. for each sample of a chain. */
int gpc_model_refit(gpc_model *m, const double *theta);

#endif
