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
 *   # adapt 66 0.8                        (only when the step is adapted)
 *   # leapfrog 20
 *   # persistence 0
 *   # seed 1
 *   # fixed log_w2,log_w5                 (only with gpc-hmc --fix)
 *   # columns age bmi blood%20pressure    (only for inputs with a header)
 *   iteration log_v0 log_w1 ... potential log_evidence accepted step
 *   1 -0.19 -2.05 ... 112.7 -95.2 1 0.1
 *
 * The step column holds the step the row's trajectory was run with.  With
 * '# adapt W DELTA' the step starts at '# step' and is tuned by dual
 * averaging (adapt.h) towards the acceptance rate DELTA over iterations
 * 1..W, from the acceptance probability of each trajectory, which such a
 * chain writes in a column accept_prob after step; from iteration W + 1 on
 * it is frozen at the averaged step.  The warm-up's rows are thus the whole
 * state of the adaptation: it is replayed from them to continue a chain.
 * Iterations 1..W are never used as samples (gpc_chain_burn).
 * With persistence > 0 the momentum of each row follows in columns
 * p.<name>, since the next iteration starts from it.  The last row is the
 * whole state of the run (iterations are seeded by their number), so a chain
 * is extended by appending rows.
 *
 * A chain of gpc-hmc's Gibbs sampler for the multinomial probit model
 * (gibbs.h) says '# method gibbs' and '# likelihood mprobit', has no
 * leapfrog or persistence lines (its step is the Metropolis-Hastings step
 * on theta), names its second fixed column log_p_y (log N(y | 0, I + K)
 * summed over the classes, with its constants) and ends each row with the
 * auxiliary values y, class by class (columns y<c>.<i>, C n of them): with
 * theta they are the whole state, so the last row again continues the run.
 *
 * 'columns' names the input columns as the model file does (gpc-formats(5):
 * blanks and other bytes as %XX), dim of them; the column line still names
 * the hyperparameters by number, and a reader names the length scales
 * after the columns as well (gpc_kernel_name_columns: "log_w.blood_pressure").
 *
 * Every header key but 'fixed', 'adapt' and 'columns' is required, exactly
 * once (leapfrog and persistence only without gibbs, which has no adapt
 * either); 'fixed' names the hyperparameters the run keeps, in the
 * kernel's order, and is there only when it names some.  Each key has the
 * value the gpc-hmc option of the same meaning accepts; '# gpc-chain 1' is
 * the first line.
 * Rows are written whole and flushed one at a time, so a run that is killed
 * leaves every finished iteration on disk; a last row without its newline
 * (the run was killed while writing it) is dropped with a warning. */
#ifndef GPC_CHAIN_H
#define GPC_CHAIN_H

#include <stdio.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "kernels/kernel.h"
#include "liks/lik.h"
#include "sampling/adapt.h"
#include "sampling/hmc.h"

#define GPC_CHAIN_VERSION 1

typedef struct {
    char kernel[1024];
    int gibbs;            /* method gibbs (else HMC over an evidence) */
    int ep;               /* HMC over the EP evidence (method ep), else Laplace's */
    size_t classes;       /* with gibbs: C, from the columns */
    gpc_lik lik;
    size_t dim, ntrain;
    unsigned long long data_hash;
    double prior_mean, prior_sd;
    gpc_hmc_opts hmc;     /* hmc.step: the step of the next iteration */
    long adapt;           /* warm-up iterations adapting the step; 0: fixed */
    double target;        /* with adapt: the acceptance rate aimed at */
    char *fixed;          /* the names --fix keeps, comma-separated, or NULL; a
                             chain read from a file owns its copy */
    char **colnames;      /* read from '# columns' (the writer takes the names
                             from the kernel): the inputs' names, or NULL */
} gpc_chain_settings;

typedef struct {
    gpc_chain_settings set;
    size_t p, rows;
    char (*names)[GPC_NAME_MAX];
    long *iteration;
    double *theta;     /* rows x p */
    double *mom;       /* rows x p, or NULL without persistence */
    double *state;     /* rows x (classes ntrain): y of a gibbs chain, else NULL */
    size_t nstate;     /* classes ntrain, or 0 */
    double *potential, *log_evidence;
    int *accepted;
    double *step;        /* the step of each row */
    double *accept_prob; /* with adapt: each row's acceptance probability, else NULL */
    char *text;        /* the file as read, for extending it verbatim */
    size_t text_len;   /* its complete part: without a row cut short */
    size_t file_len;   /* bytes read, with such a row */
    int regular;       /* read from a regular file, whose identity follows */
    unsigned long long dev, ino;
} gpc_chain;

/* The hyperparameters of k marked in fixed (NULL: none), comma-separated in
 * k's order, as the chain's 'fixed' line holds them; NULL when none is
 * marked.  The caller frees it. */
char *gpc_chain_fixed_list(const gpc_kernel *k, const unsigned char *fixed);

/* A hash of the training data, to tell when a chain is extended on other data. */
unsigned long long gpc_chain_data_hash(const gsl_matrix *X, const gsl_vector *y);

void gpc_chain_write_header(FILE *f, const gpc_chain_settings *s, const gpc_kernel *k);
void gpc_chain_write_row(FILE *f, const gpc_chain_settings *s, const gpc_hmc *h);

/* One row given by its values: theta (p), the potential and the second
 * fixed column, accepted, the trailing values (momenta with persistence, y
 * of a gibbs chain, or NULL) and, with adapt, the acceptance probability. */
typedef struct {
    long iteration;
    const double *theta;
    double potential, second;
    int accepted;
    const double *extra;
    double accept_prob;
} gpc_chain_row;

void gpc_chain_write_values(FILE *f, const gpc_chain_settings *s, size_t p,
                            const gpc_chain_row *r);

/* The method a chain's header names: laplace, ep or gibbs. */
const char *gpc_chain_method(const gpc_chain_settings *s);

/* The name of the second fixed column: log_evidence, or log_p_y with gibbs. */
const char *gpc_chain_second_name(const gpc_chain_settings *s);

/* Read a chain ("-": standard input); errors (GPC_EINPUT) name the file and
 * line.  dim > 0 is the number of input columns the chain must be for,
 * checked before anything is allocated by the chain's own numbers; 0 when
 * it is not known (then the file must be able to name dim columns). */
int gpc_chain_read(const char *path, size_t dim, gpc_chain **out);
void gpc_chain_free(gpc_chain *c);

/* Whether the m chains c[] (read from the files named names[]) sample one
 * posterior, so that pooling them means something: the same training data,
 * method, likelihood, kernel, prior and fixed hyperparameters as c[0] (the
 * sampler's step, leapfrog, persistence and seed may differ).  GPC_EINPUT
 * naming the first chain that differs, c[0]'s file and the setting. */
int gpc_chain_check_pool(gpc_chain *const *c, const char *const *names, size_t m);

/* ---- the step and the warm-up ------------------------------------------- */

/* The step for iteration it + 1 after iteration it, whose step was step and
 * whose acceptance probability alpha: with adaptation, a's update during
 * the warm-up and a's average from its end on; else step. */
double gpc_chain_next_step(const gpc_chain_settings *s, gpc_step_adapt *a, long it, double alpha,
                           double step);

/* The adaptation after the last row of c, replayed from the warm-up's rows,
 * and the step of c's next iteration in *step.  GPC_EINPUT (naming the
 * file name and the row) when a row's step is not the one the replay gives,
 * so the chain could not be continued exactly. */
int gpc_chain_resume_step(const gpc_chain *c, const char *name, gpc_step_adapt *a,
                          double *step);

/* Rows of c in the warm-up (iteration <= its adapt): never samples. */
size_t gpc_chain_warmup_rows(const gpc_chain *c);

/* The rows to discard from the first `rows` rows of c: burn if >= 0, else
 * the default, the first third or the warm-up if longer.  GPC_EINPUT naming
 * the file when burn would keep rows of the warm-up. */
int gpc_chain_burn(const gpc_chain *c, const char *name, long burn, size_t rows, size_t *out);

/* ---- writing a chain that survives interruption ------------------------- */

typedef struct gpc_chain_out gpc_chain_out;

/* A new chain file at path ("-" or NULL: standard output).  The header (or
 * the chain being copied) goes to gpc_chain_out_file; a file is written
 * beside path and renamed into place when the first row is on disk, so path
 * never holds a chain without rows from a run that failed at its start. */
int gpc_chain_out_create(const char *path, gpc_chain_out **out);
/* Append to the file c was read from, in place.  It must still be the same
 * file, ending where the read ended; a row cut short is cut off first. */
int gpc_chain_out_append(const char *path, const gpc_chain *c, gpc_chain_out **out);
FILE *gpc_chain_out_file(gpc_chain_out *o);
/* Write one row and flush it to the file before returning. */
int gpc_chain_out_row(gpc_chain_out *o, const gpc_chain_settings *s, const gpc_hmc *h);
int gpc_chain_out_values(gpc_chain_out *o, const gpc_chain_settings *s, size_t p,
                         const gpc_chain_row *r);
/* Finish: flush, put the file in place if no row did, close.  Frees o. */
int gpc_chain_out_close(gpc_chain_out *o);
/* Give up after an error: rows already in place stay (each is a complete
 * iteration), a file not yet in place is removed.  Frees o. */
void gpc_chain_out_abort(gpc_chain_out *o);

/* Called after every row of gpc_chain_run with the number of iterations
 * done in this run; nonzero stops the run. */
typedef int (*gpc_chain_stop_fn)(void *ctx, const gpc_hmc *h, long done);

/* Up to n iterations of h on U, each written to o as it finishes, until
 * stop says so; with s->adapt, a (from gpc_step_adapt_init for a new
 * chain, gpc_chain_resume_step for one continued) tunes s->hmc.step in
 * the warm-up.  Returns GPC_OK, a write error or the numerical failure of
 * an iteration (the rows before it are on disk); *done counts the rows. */
int gpc_chain_run(gpc_chain_out *o, gpc_hmc *h, const gpc_potential *U, gpc_chain_settings *s,
                  gpc_step_adapt *a, long n, gpc_chain_stop_fn stop, void *ctx, long *done);

#endif
