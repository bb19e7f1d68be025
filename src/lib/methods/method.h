/* method — one interface for every inference method.
 *
 * Each approximation to the posterior over the latent function (Laplace,
 * EP/TAP, naive mean field, ...) is a table of operations on a workspace
 * of its own.  Models, tools, the optimiser and the samplers reach the
 * methods only through this table, so the model file knows no method's
 * internals and a new method is one new file (its operations) and one
 * table entry (a gpc_method value and its line in method.c's table).
 *
 * A method fits at given hyperparameters (evidence), forgets its warm start
 * (forget), hands out its fitted state as an n x width matrix with named
 * columns for the model file (state_get) and takes it back to predict from
 * (state_set), predicts latent moments at test inputs (predict) and gives
 * the leave-one-out moments of the training cases from its cavities (loo).
 * Settings peculiar to a method (damping, tolerance, label noise) go
 * through one generic call (set), so no caller pokes a workspace.
 *
 * Binary methods take labels -1/+1 in a vector y and have one latent
 * function.  A multiclass method (softmax Laplace with C classes) takes
 * class indices 0..C-1 in y (the model records the user's class names; the
 * method only sees indices) and has C latent functions, and the table is
 * shaped for both:
 *   - latent functions: L = 1 for a binary method, L = C for a multiclass
 *     one (gpc_method_ops.latent is 0 for "one per class");
 *   - state: state_width values per case and latent function, so a
 *     multiclass method's state is n x (state_width C), its columns named
 *     after the binary pattern with the class number appended ("f1 .. fC");
 *   - predictions: predict (and loo) fill an m x L matrix of latent means
 *     and an m x L*L matrix of covariances (row i holds case i's L x L
 *     covariance, row-major): one column each for a binary method;
 *   - probabilities: prob maps the moments to class probabilities, p(y = +1)
 *     alone for a binary method (whose other class is its complement) and
 *     all C for a multiclass one.
 * The method computes its own cross-covariances from the kernel, so a
 * method with one kernel per class needs nothing more from its callers. */
#ifndef GPC_METHOD_H
#define GPC_METHOD_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"
#include "liks/lik.h"

/* Index into the method table. */
typedef enum {
    GPC_METHOD_LAPLACE = 0,
    GPC_METHOD_EP = 1,   /* expectation propagation (= adaptive TAP); probit or step */
    GPC_METHOD_NAIVE = 2, /* naive mean field (Opper & Winther); probit or step, no evidence */
    GPC_METHOD_SOFTMAX = 3, /* multiclass Laplace ("laplace" with the softmax likelihood) */
    GPC_METHOD_LAPLACE_OVR = 4, /* one-vs-rest: C binary classifiers (method-ovr.c) */
    GPC_METHOD_EP_OVR = 5,
    GPC_METHOD_NAIVE_OVR = 6,
    GPC_METHOD_VB = 7,   /* variational Bayes, multinomial probit (method-vb.c) */
    GPC_METHOD_SVGP = 8, /* sparse variational, binary (method-svgp.c) */
    GPC_METHOD_SVGP_MC = 9, /* sparse variational, multinomial probit (method-svgp.c) */
    GPC_METHOD_NESTED_EP = 10 /* nested EP, multinomial probit (method-nested-ep.c) */
} gpc_method;

/* Settings a method may take through gpc_method_ops.set. */
typedef enum {
    GPC_SET_DAMPING,     /* in (0, 1]: 1 is plain updates */
    GPC_SET_TOL,         /* convergence tolerance in (0, 1) */
    GPC_SET_LABEL_NOISE, /* probability of a flipped label, in [0, 1/2) */
    GPC_SET_INDUCING,    /* the number of inducing inputs (a whole number >= 1) */
    GPC_SET_SEED,        /* the seed of a random choice the method makes */
    GPC_SET_EVIDENCE    /* what evidence returns: a gpc_evidence_kind */
} gpc_method_setting;

/* The objectives a method with a choice offers (variational Bayes): the
 * Laplace approximation to the log evidence at the method's mode (the
 * default), or the method's own variational lower bound. */
typedef enum { GPC_EVIDENCE_LAPLACE = 0, GPC_EVIDENCE_BOUND = 1 } gpc_evidence_kind;

/* What set returns for a setting the method does not have (the caller
 * words the message, since it knows the option's name). */
#define GPC_METHOD_NO_SETTING (-1)

typedef struct {
    const char *name;          /* as in model files and -M: "laplace", "ep", "naive";
                                * two methods may share a name and differ by likelihood */
    const char *title;         /* for messages: "the Laplace approximation", "EP", ... */
    const char *state_columns; /* names of the state columns: "f", "tau nu", "x" */
    size_t state_width;        /* state values per training case */
    int inducing;              /* the state belongs to inducing inputs the method chose
                                * (inducing_inputs), not to the training cases: one row
                                * per inducing input, 1 + (their number) values per
                                * latent function (state_width is 0) */
    int has_evidence;          /* 0: evidence sets NaN and refuses a gradient */
    int latent;                /* latent functions: 1 (labels -1/+1), or 0 for one
                                * per class (labels 0..C-1, any C >= 2) */
    int label_noise;           /* takes GPC_SET_LABEL_NOISE */
    const char *default_lik;   /* the likelihood when none is named: "logistic", "probit" */
    int wide_averages;         /* its averaged probabilities can be far less confident
                                * than its plug-in ones where the approximation's latent
                                * covariance is too wide (softmax Laplace at large signal
                                * variances): gpc-predict warns when they are */

    /* GPC_OK if the method takes likelihood lik, else GPC_EUSAGE (message set). */
    int (*check_lik)(gpc_lik lik);

    /* Workspace for n training cases of C classes (2 for a binary method)
     * under kernel k (its shape: hyperparameters, kernels per class);
     * gradient says whether gradients will be asked. */
    void *(*alloc)(size_t n, size_t C, const gpc_kernel *k, int gradient, gpc_lik lik);
    /* The bytes that workspace takes, with what its fits allocate later and,
     * when gradient is set, what the first gradient adds: its n x n
     * matrices and its vectors, all but a few kilobytes.  Computed with the
     * saturating sizes of alloc.h (SIZE_MAX when they overflow), so that it
     * can be checked before alloc (gpc_method_check_memory). */
    size_t (*workspace)(size_t n, size_t C, const gpc_kernel *k, int gradient);
    void (*free)(void *ws);
    int (*set)(void *ws, gpc_method_setting key, double value);

    /* Fit at the kernel's current parameters: log evidence and, if grad is
     * not NULL, its gradient in the log hyperparameters. */
    int (*evidence)(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                    double *log_evidence, double *grad);
    void (*forget)(void *ws); /* the next fit starts afresh */

    /* The fitted state, n x state_width, and back (computes K from k). */
    void (*state_get)(const void *ws, gsl_matrix *state);
    int (*state_set)(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                     const gsl_matrix *state);

    /* An inducing method's inputs after a fit (m x dim), else NULL. */
    const gsl_matrix *(*inducing_inputs)(const void *ws);
    /* An inducing method's inputs given (m x dim, copied) in place of its
     * own choice; q starts afresh. */
    void (*set_inducing_inputs)(void *ws, const gsl_matrix *Z);
    /* An inducing method's evidence with its inputs moved to Z (m x dim, as
     * inducing_inputs has them; q warm-started from where it was) and, if
     * grad is not NULL, its gradient in the log hyperparameters (grad) and
     * in Z (dZ, m x dim). NULL for a method whose inputs cannot move. */
    int (*evidence_inducing)(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                             const gsl_vector *y, const gsl_matrix *Z, double *log_evidence,
                             double *grad, gsl_matrix *dZ);

    /* Latent means (m x L) and covariances (m x L*L, one row per case) at
     * the m rows of Xs, for the training inputs X and kernel k of the fit
     * or state_set. */
    int (*predict)(const void *ws, const gpc_kernel *k, const gsl_matrix *X,
                   const gsl_matrix *Xs, gsl_matrix *mean, gsl_matrix *cov);
    /* Leave-one-out latent moments of the n training cases from the
     * cavities, shaped as predict's. */
    int (*loo)(const void *ws, const gsl_vector *y, gsl_matrix *mean, gsl_matrix *cov);

    /* Class probabilities from latent moments shaped as predict's, under
     * likelihood lik with label-flip probability eps: the likelihood
     * averaged over the latent Gaussian, or with plugin at its mean.  p is
     * m x 1 (p(y = +1)) for a binary method (gpc_method_binary_prob), m x C
     * for a multiclass one. */
    int (*prob)(void *ws, gpc_lik lik, double eps, const gsl_matrix *mean, const gsl_matrix *cov,
                int plugin, gsl_matrix *p);

    /* One line to standard error about the last fit (gpc_info level 1). */
    void (*report)(const void *ws, double log_evidence);
} gpc_method_ops;

extern const gpc_method_ops gpc_method_laplace_ops, gpc_method_ep_ops, gpc_method_naive_ops,
    gpc_method_softmax_ops, gpc_method_laplace_ovr_ops, gpc_method_ep_ovr_ops,
    gpc_method_naive_ovr_ops, gpc_method_vb_ops, gpc_method_svgp_ops,
    gpc_method_svgp_mc_ops, gpc_method_nested_ep_ops;

/* The operations of a method. */
const gpc_method_ops *gpc_method_get(gpc_method method);

/* A method by its name in a model file (no synonyms) and its likelihood;
 * NULL if unknown. */
const gpc_method_ops *gpc_method_find(const char *name, gpc_lik lik);

/* Whether name is a method's name in a model file. */
int gpc_method_known(const char *name);

/* A method by its option name (-M), synonyms included ("tap" is EP, whose
 * fixed point adaptive TAP shares), with its binary likelihoods; NULL if
 * unknown. */
const gpc_method_ops *gpc_method_lookup(const char *name);

/* "laplace", "ep" or its synonym "tap", or "naive", with likelihood lik
 * ("laplace" with softmax is the multiclass method); GPC_EUSAGE (message
 * set) otherwise, or for a likelihood the method does not take. */
int gpc_method_parse(const char *name, gpc_lik lik, gpc_method *method);
const char *gpc_method_name(gpc_method method);

/* GPC_OK if the workspace of ops for n cases of C classes (2 for a binary
 * method) under kernel k, with the gradient's scratch when gradient is
 * set, fits in the memory the process may take (gpc_alloc_check); else
 * GPC_EINPUT with the sizes and what to try.  Called before ops->alloc, so
 * that a problem too large for the machine is a message and not a process
 * killed for want of memory. */
int gpc_method_check_memory(const gpc_method_ops *ops, size_t n, size_t C, const gpc_kernel *k,
                            int gradient);

/* The same for a workspace of bytes that title (a method or a sampler) would
 * take for n cases of C classes. */
int gpc_method_check_bytes(size_t bytes, const char *title, size_t n, size_t C);

/* The one-vs-rest method over binary method bin; GPC_EUSAGE (message set)
 * if bin is not binary. */
int gpc_method_ovr(gpc_method bin, gpc_method *ovr);

/* A binary method's p(y = +1) for each row: the likelihood averaged over
 * the latent Gaussian N(mean, cov) (or at the mean, with plugin), with
 * labels flipped with probability eps. */
int gpc_method_binary_prob(void *ws, gpc_lik lik, double eps, const gsl_matrix *mean,
                           const gsl_matrix *cov, int plugin, gsl_matrix *p);

/* A binary method's latent predictor: means and variances at m test cases
 * from the cross-covariances Ks (n x m, overwritten) and prior variances
 * kss. */
typedef void (*gpc_method_latent_fn)(const void *ws, gsl_matrix *Ks, const gsl_vector *kss,
                                     gsl_vector *mean, gsl_vector *var);

/* predict for a binary method with one kernel: the cross-covariances of k
 * between X and Xs, then latent. */
int gpc_method_predict_binary(gpc_method_latent_fn latent, const void *ws, const gpc_kernel *k,
                              const gsl_matrix *X, const gsl_matrix *Xs, gsl_matrix *mean,
                              gsl_matrix *var);

/* Leave-one-out from Gaussian sites of a binary method: divide site i
 * (precision tau_i, precision times mean nu_i) out of the posterior
 * marginals, which latent gives at the training inputs from K.  For
 * methods whose posterior is a product of Gaussian sites (EP; Laplace,
 * whose sites are the curvature at the mode).  mean and var are n x 1. */
int gpc_method_loo_sites(gpc_method_latent_fn latent, const void *ws, const gsl_matrix *K,
                         const gsl_vector *tau, const gsl_vector *nu, gsl_matrix *mean,
                         gsl_matrix *var);

#endif
