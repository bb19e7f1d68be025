/* lik — binary likelihoods p(y | f) for y in {-1, +1}: log density and its
 * first three derivatives with respect to the latent f, and the predictive
 * probability p(y = +1) averaged over a Gaussian latent N(mu, var).
 *
 * Any of them can carry label noise, a probability eps that the observed
 * label was flipped: eps + (1 - 2 eps) p(y | f) (Opper & Winther 1998; Kim &
 * Ghahramani 2008).  The step likelihood H(y f) has no useful derivatives, so
 * only expectation propagation and mean-field methods take it, and they take
 * label noise too; the Laplace approximation does neither. */
#ifndef GPC_LIK_H
#define GPC_LIK_H

typedef enum {
    GPC_LIK_LOGISTIC = 0, /* sigma(y f) = 1 / (1 + exp(-y f)) */
    GPC_LIK_PROBIT = 1,   /* Phi(y f), the standard normal CDF */
    GPC_LIK_STEP = 2,     /* H(y f): 1 if y f > 0, else 0 */
    GPC_LIK_SOFTMAX = 3,  /* multiclass: p(y = c | f) = exp(f_c) / sum_k exp(f_k), over
                           * C latent functions; its own method (softmax.h) evaluates
                           * it, and the binary functions below do not take it */
    GPC_LIK_MPROBIT = 4   /* multinomial probit: the class is the argmax of f + e, e ~
                           * N(0, I) (C >= 2 latent functions); evaluated by mprobit.h
                           * for variational Bayes (vb.h), not by the functions below */
} gpc_lik;

/* "logistic", "probit", "step", "softmax" or "mprobit"; GPC_EUSAGE
 * (message set) otherwise. */
int gpc_lik_parse(const char *name, gpc_lik *lik);
const char *gpc_lik_name(gpc_lik lik);

/* log p(y|f), computed in log space so it is accurate for any f (no overflow,
 * no log(0)).  If d1/d2/d3 are not NULL they receive the first, second and
 * third derivatives of log p(y|f) with respect to f. */
double gpc_lik_logp(gpc_lik lik, double y, double f, double *d1, double *d2, double *d3);

/* p(y = +1) = integral of p(+1|f) N(f | mu, var) df.  Exact for probit
 * (Phi(mu / sqrt(1 + var))) and step (Phi(mu / sqrt(var))); for logistic
 * accurate to 1e-9 absolute. */
double gpc_lik_predict(gpc_lik lik, double mu, double var);

/* log p(y = +1 | x) averaged as above, accurate in log space also when the
 * probability is tiny (for the mean log predictive probability).  For y = -1
 * use gpc_lik_predict_log(lik, -mu, var), by symmetry of both likelihoods. */
double gpc_lik_predict_log(gpc_lik lik, double mu, double var);

/* The probability p of a label under label noise eps: eps + (1 - 2 eps) p. */
double gpc_lik_noisy(double eps, double p);

#endif
