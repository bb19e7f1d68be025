/* model — a fitted classifier and its versioned, self-describing text file.
 *
 *   gpc-model 1
 *   method laplace
 *   likelihood logistic     (EP: "likelihood step 0.05" adds a label-flip
 *                            probability; absent means 0)
 *   classes no yes          (the user's labels of y = -1 and y = +1; absent,
 *                            as in older files, means "-1 1"; a multiclass
 *                            model names its C classes in order)
 *   kernel ard+bias
 *   dim 7
 *   columns age bmi ...     (optional: the training inputs' column names, from a
 *                            header line; a blank, '%', '#' or other byte that
 *                            cannot stand in a token is written %XX)
 *   libsvm zero-based       (optional: the training inputs were a LIBSVM file
 *                            whose indices start at 0, which the tools then
 *                            assume for LIBSVM inputs to predict)
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
 * A multiclass model (method laplace, likelihood softmax) writes each
 * training case's class as its number 1..C in the classes line, then the
 * method's state for each class in turn ("# y f1 f2 f3 x1..x4").
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

#include "kernels/kernel.h"
#include "liks/lik.h"
#include "methods/method.h"

#define GPC_MODEL_VERSION 1

typedef struct {
    char method[32];       /* "laplace", "ep" or "naive" */
    gpc_lik lik;
    double label_noise;    /* probability of a flipped label (EP only), else 0 */
    gpc_kernel *kernel;    /* with the fitted hyperparameters */
    char fit[128];         /* how they were chosen: "ml", "map normal -3 3", "none" */
    double log_evidence;
    gsl_matrix *X;         /* training inputs, n x dim */
    char **colnames;       /* their columns' names, NULL-terminated, or NULL (unnamed) */
    int zero_based;        /* they were a LIBSVM file with indices from 0 */
    gsl_vector *y;         /* labels -1/+1 (binary method), else class indices 0..C-1 */
    size_t nclasses;       /* C: 2 for a binary model */
    char *const *classes;  /* the user's names of the C classes in order (binary: of
                            * -1 and +1), one token each; NULL means "-1" and "1".
                            * A tool that builds a model may point them at its labels */
    char **class_store;    /* the names when the model owns them (read from a file) */
    gsl_matrix *state;     /* the method's fitted state, n x gpc_model_state_columns */
} gpc_model;

void gpc_model_free(gpc_model *m);
/* The user's name of class c (binary: 0 for y = -1, 1 for y = +1). */
const char *gpc_model_class(const gpc_model *m, size_t c);
/* The model's method (from its name and likelihood). */
const gpc_method_ops *gpc_model_method(const gpc_model *m);
/* Latent functions (1 binary, C multiclass), probability columns per case
 * (1 binary: p(y = +1); C multiclass) and state columns. */
size_t gpc_model_latent(const gpc_model *m);
size_t gpc_model_prob_columns(const gpc_model *m);
size_t gpc_model_state_columns(const gpc_model *m);
int gpc_model_write(FILE *out, const char *name, const gpc_model *m);
/* Read a model; errors (GPC_EINPUT) name the file and line. */
int gpc_model_read(const char *path, gpc_model **out);

/* Predictions for m cases, one row each: the latent means (m x L), their
 * covariances (m x L*L, row-major L x L per case: the variance when L = 1),
 * the class probabilities averaged over the latent Gaussian (m x P: p(y =
 * +1) for a binary model, one column per class for a multiclass one) and
 * the plug-in probabilities at the latent mean (m x P). */
typedef struct {
    gsl_matrix *mean, *cov, *prob, *plugin;
} gpc_prediction;

gpc_prediction *gpc_prediction_alloc(const gpc_model *m, size_t rows);
void gpc_prediction_free(gpc_prediction *p);

/* Predictions for every row of Xs.  Xs must have dim columns (the caller
 * checks, to name the file). */
int gpc_model_predict(const gpc_model *m, const gsl_matrix *Xs, gpc_prediction *out);

/* Leave-one-out predictions of the training cases: each from its cavity,
 * the approximate posterior with its own likelihood term divided out (Opper
 * & Winther's estimate; for naive mean field the cavity is the solution's
 * own, with the prior variance). */
int gpc_model_loo(const gpc_model *m, gpc_prediction *out);

/* The same by n refits, each without one training case, at the model's
 * hyperparameters and label noise: the exact leave-one-out of the method. */
int gpc_model_loo_exact(const gpc_model *m, gpc_prediction *out);

/* Set the hyperparameters to theta and find the latent mode there afresh
 * (updating f and log_evidence), e.g. for each sample of a chain. */
int gpc_model_refit(gpc_model *m, const double *theta);

#endif
