/* kernel-impl — what the kernel module's files share: the parsed form of a
 * spec (its terms and the tree that joins them) and the per-pair values of
 * the terms.  Private to src/lib/kernels. */
#ifndef GPC_KERNEL_IMPL_H
#define GPC_KERNEL_IMPL_H

#include <math.h>
#include <stddef.h>

#include <gsl/gsl_math.h>

#include "kernels/kernel.h"

typedef enum {
    T_ARD, T_SE, T_LINEAR, T_NN, T_BIAS, T_JITTER, T_GRAM,
    T_MATERN,   /* matern12, 32, 52 and their ARD forms (nu2 = 2 nu, iso) */
    T_RQ,       /* rq, rqard */
    T_PERIODIC, /* periodic, periodicard */
    T_POLY      /* poly<degree> */
} term_type;

typedef struct {
    term_type type;
    size_t *cols;   /* input columns this term reads (0-based) */
    size_t ncols;
    int all_cols;   /* no '@' in the spec: every column */
    size_t offset;  /* first hyperparameter of the term in theta */
    size_t nparams;
    /* For ard and se: disc[l] != 0 if column cols[l] is discrete (its distance
     * is the 0/1 mismatch instead of the squared difference); NULL if none of
     * the term's columns is, so the common case keeps its plain loops. */
    unsigned char *disc;
    char *text;     /* the term as the spec writes it, "se@1-76" */
    int iso;        /* matern, rq, periodic: one w (and p) for all columns */
    int nu2;        /* matern: 2 nu, that is 1, 3 or 5 */
    int degree;     /* poly: the power */
} term;

/* A node of the tree of sums and products over the terms.  The nodes are
 * stored children first (postfix), the root last; a node's children are
 * kids[first .. first + count). */
typedef enum { N_TERM, N_SUM, N_PROD } node_kind;
typedef struct {
    node_kind kind;
    size_t term;  /* N_TERM: the term's index */
    size_t first, count;
} node;
#define GPC_KERNEL_MAX_NODES (2 * GPC_KERNEL_MAX_TERMS)

struct gpc_kernel {
    size_t dim, nterms;
    size_t nparams;  /* hyperparameters of one copy of the terms */
    size_t copies;   /* 1, or C for ":per-class=C": C independent sets of them */
    size_t total;    /* copies * nparams: the length of theta */
    term terms[GPC_KERNEL_MAX_TERMS];
    /* tree != 0: the spec has a product, and the terms combine as the
     * nodes say; else they are summed in order, as every spec without '*'
     * always was */
    int tree;
    size_t nnodes;
    node nodes[GPC_KERNEL_MAX_NODES];
    size_t kids[GPC_KERNEL_MAX_NODES];
    double *theta;
    double *etheta; /* exp(theta), kept in step with theta */
    char (*names)[GPC_NAME_MAX];
    /* the input columns' names (gpc_kernel_name_columns), or NULL; then
     * labels[j] names hyperparameter j by its column where it weighs one */
    char **colnames;
    char (*labels)[GPC_NAME_MAX];
    unsigned char *discrete; /* per input column, from ":discrete=COLS"; NULL if none */
    /* ":simplex": every term but jitter is weighted by beta_t^2 on the
     * simplex, its first parameter the weight's log (normalised on setting);
     * the weights have a Dirichlet prior whose parameters have a
     * Gamma(dir_shape, dir_rate) hyperprior. */
    int simplex;
    double dir_shape, dir_rate;
    char spec[1024];
};

/* Whether a term is built on the scaled squared distance q (and so reads
 * discrete columns as 0/1 mismatches). */
static inline int term_on_distance(const term *t)
{
    return t->type == T_ARD || t->type == T_SE || t->type == T_MATERN || t->type == T_RQ;
}

/* The distance of a term built on q in its column l, times c: the squared
 * difference, or for a discrete column 0 if the values are equal and 1 if not
 * (Kim & Ghahramani 2008, eq. 12).  c * d * d is evaluated as before discrete
 * columns existed, so continuous results are bit for bit unchanged. */
static inline double col_dist(const term *t, size_t l, double c, const double *xa,
                              const double *xb)
{
    double a = xa[t->cols[l]], b = xb[t->cols[l]];
    if (t->disc && t->disc[l])
        return a != b ? c : 0.0;
    double d = a - b;
    return c * d * d;
}

/* jb for a pair whose second row is no training case: a gram term reads
 * the first row's similarity to itself. */
#define GRAM_SELF ((size_t)-1)

double gpc_term_pair(const term *t, const double *eth, const double *xa, const double *xb,
                     size_t jb, int same, double *g);
double gpc_kernel_pair(const gpc_kernel *k, const double *xa, const double *xb, size_t jb,
                       int same);
void gpc_kernel_simplex_correct(const gpc_kernel *k, double *g);
void gpc_kernel_pair_grad(const gpc_kernel *k, const double *xa, const double *xb, size_t jb,
                          int same, double *g);

/* The gradient of k(xa, xb) in xa, into gx[dim]; scratch of the most
 * columns a term reads. */
void gpc_kernel_pair_input_grad(const gpc_kernel *k, const double *xa, const double *xb,
                                double *gx, double *scratch);

/* The tree's value from its terms' values tv[nterms]; val is scratch of
 * nnodes. */
double gpc_kernel_tree_value(const gpc_kernel *k, const double *tv, double *val);
/* The derivative of the tree's value with respect to each term's value,
 * into adj[nterms], from the node values val that gpc_kernel_tree_value
 * left; scratch of nnodes in nadj. */
void gpc_kernel_tree_adjoints(const gpc_kernel *k, const double *val, double *nadj,
                              double *adj);

/* A distance term's value and derivatives from q: *dkdq = dk/dq, and for
 * rq *dalpha = dk/dlog alpha (either pointer may be NULL).  Inline: the
 * gradient contraction calls it at every pair. */
/* rq's h(z) = z / (1 + z) - log1p(z), whose two parts cancel for small z:
 * there the series sum_{i >= 2} (-1)^(i+1) (i - 1)/i z^i, to full
 * precision in at most 17 terms below z = 0.1. */
static inline double rq_shape_term(double z)
{
    if (z >= 0.1)
        return z / (1.0 + z) - log1p(z);
    double sum = 0.0, zi = z;
    for (int i = 2; i < 40; i++) {
        zi *= -z;                   /* (-1)^(i+1) z^i */
        double ti = zi * (double)(i - 1) / (double)i;
        sum += ti;
        if (fabs(ti) <= 1e-17 * fabs(sum))
            break;
    }
    return sum;
}

static inline double gpc_distance_profile(const term *t, const double *eth, double q,
                                          double *dkdq, double *dalpha)
{
    double v0 = eth[0], kv = 0.0, d = 0.0;
    if (t->type == T_MATERN) {
        double r = sqrt(q);
        if (t->nu2 == 1) {
            double e = exp(-r);
            kv = v0 * e;
            /* dk/dq = -k / (2 r), unbounded at r = 0; every w_l d_l it
             * multiplies is at most q = r^2, so the derivatives tend to 0
             * there, and are 0 at r = 0 */
            d = r > 0.0 ? -0.5 * kv / r : 0.0;
        } else if (t->nu2 == 3) {
            double s = M_SQRT3 * r, e = exp(-s);
            kv = v0 * (1.0 + s) * e;
            d = -1.5 * v0 * e;
        } else {
            double s = sqrt(5.0) * r, e = exp(-s);
            kv = v0 * (1.0 + s + (5.0 / 3.0) * q) * e;
            d = -(5.0 / 6.0) * v0 * (1.0 + s) * e;
        }
    } else if (t->type == T_RQ) {
        double alpha = eth[t->nparams - 1], z = q / (2.0 * alpha), lz = log1p(z);
        kv = v0 * exp(-alpha * lz);
        d = -0.5 * kv / (1.0 + z);
        if (dalpha)
            *dalpha = kv * alpha * rq_shape_term(z);
    } else { /* ard, se */
        kv = v0 * exp(-0.5 * q);
        d = -0.5 * kv;
    }
    if (dkdq)
        *dkdq = d;
    return kv;
}

#endif
