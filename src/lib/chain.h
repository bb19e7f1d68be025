/* chain — files of hyperparameter samples from gpc-hmc.
 *
 * A text table that people, R (read.table(f, header = TRUE)) and pandas
 * (read_csv(f, sep=r"\s+", comment="#")) read directly: '#' lines with the
 * run's settings, one line of column names, then one row per iteration:
 *
 *   # gpc-chain 1
 *   # method laplace
 *   # likelihood logistic
 *   # kernel ard
 *   # dim 7
 *   # training 200 0x1f2e3d4c5b6a7988     (cases and a hash of X and y)
 *   # prior normal -3 3
 *   # step 0.1
 *   # leapfrog 20
 *   # persistence 0
 *   # seed 1
 *   iteration log_v0 log_w1 ... potential log_evidence accepted step
 *   1 -0.19 -2.05 ... 112.7 -95.2 1 0.1
 *
 * With persistence > 0 the momentum of each row follows in columns
 * p.<name>, since the next iteration starts from it.  The last row is the
 * whole state of the run (iterations are seeded by their number), so a chain
 * is extended by appending rows. */
#ifndef GPC_CHAIN_H
#define GPC_CHAIN_H

#include <stdio.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "hmc.h"
#include "kernel.h"
#include "lik.h"

#define GPC_CHAIN_VERSION 1

typedef struct {
    char kernel[1024];
    gpc_lik lik;
    size_t dim, ntrain;
    unsigned long long data_hash;
    double prior_mean, prior_sd;
    gpc_hmc_opts hmc;
} gpc_chain_settings;

typedef struct {
    gpc_chain_settings set;
    size_t p, rows;
    char (*names)[GPC_NAME_MAX];
    long *iteration;
    double *theta;     /* rows x p */
    double *mom;       /* rows x p, or NULL without persistence */
    double *potential, *log_evidence;
    int *accepted;
    char *text;        /* the file as read, for extending it verbatim */
    size_t text_len;
} gpc_chain;

/* A hash of the training data, to tell when a chain is extended on other data. */
unsigned long long gpc_chain_data_hash(const gsl_matrix *X, const gsl_vector *y);

void gpc_chain_write_header(FILE *f, const gpc_chain_settings *s, const gpc_kernel *k);
void gpc_chain_write_row(FILE *f, const gpc_chain_settings *s, const gpc_hmc *h);

/* Read a chain; errors (GPC_EINPUT) name the file and line. */
int gpc_chain_read(const char *path, gpc_chain **out);
void gpc_chain_free(gpc_chain *c);

#endif
