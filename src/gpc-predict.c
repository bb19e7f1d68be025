/* gpc-predict — class probabilities, latent means and variances and labels
 * for new inputs from a model written by gpc-fit. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/progress.h"
#include "cli/cli.h"
#include "io/colnames.h"
#include "io/labels.h"
#include "io/matio.h"
#include "io/npy.h"
#include "methods/method.h"
#include "methods/model.h"
#include "sampling/chain.h"
#include "sparse/rows.h"
#include "sparse/scratch.h"

static void usage(void)
{
    printf("Usage: %s -m MODEL [OPTION]... [XS]\n"
           "Predict for the inputs XS (one case per row; default standard input) with a\n"
           "model from gpc-fit.  Writes one row per case with the columns chosen by -c.\n"
           "\n"
           "  -m, --model=FILE      the model (required)\n"
           "  -c, --columns=LIST    comma-separated, from: p (p(y=+1|x), averaged over the\n"
           "                        latent Gaussian), plugin (the likelihood at the latent\n"
           "                        mean), mean, var (latent mean and variance), cov (the\n"
           "                        latent covariance), label (the model's positive class\n"
           "                        if p >= 1/2, else its negative one: numeric classes as\n"
           "                        their numbers, words as +1/-1 under a '# label:' line\n"
           "                        naming them); default p,mean,var,label.  A multiclass\n"
           "                        model of C classes writes p, plugin, mean and var as\n"
           "                        C columns each, cov as C*C (row-major) and label as\n"
           "                        the most probable class (words as their numbers\n"
           "                        1..C), under a '#' line naming the columns by class\n"
           "                        (p.A p.B ... label); default p,label\n"
           "      --plugin          use the plug-in probability for p and label\n"
           "      --chain=FILE      average over the hyperparameter samples of a chain\n"
           "                        from gpc-hmc (run on the model's training data,\n"
           "                        with a Laplace model of the chain's likelihood, or\n"
           "                        a vb model for a gibbs chain):\n"
           "                        p and plugin are averaged, mean and var are the\n"
           "                        moments of the latent mixture.  Repeat it to pool\n"
           "                        chains of one posterior (same data, method,\n"
           "                        kernel, prior), every kept sample weighing the same\n"
           "      --loo[=HOW]       predict each training case of the model with that case\n"
           "                        left out, instead of new inputs: cavity (default; the\n"
           "                        estimate the fitted approximation gives for free) or\n"
           "                        exact (n refits at the model's hyperparameters)\n"
           "  -b, --burn=B          with --chain: samples to discard first from each\n"
           "                        chain (default: the first third, or the step's\n"
           "                        warm-up if longer; at least the warm-up)\n"
           "      --thin=T          with --chain: use every T-th sample of each chain\n"
           "                        after its burn-in (default 1)\n"
           "  -o, --output=FILE     write here (default: standard output)\n"
           "  -F, --format=FMT      output format: text (default) or npy\n"
           GPC_CLI_HEADER_HELP
           GPC_CLI_LABEL_COLUMN_HELP
           "  -q, --quiet           no messages except errors\n"
           "  -v, --verbose         more messages\n"
           "  -h, --help            show this help and exit\n"
           "  -V, --version         show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 numerical failure, 2 usage error, 3 input or output\n"
           "error.\n",
           gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

enum { OPT_PLUGIN = 256, OPT_CHAIN, OPT_THIN, OPT_LOO };

static const struct option long_options[] = {
    {"model", required_argument, NULL, 'm'},
    {"columns", required_argument, NULL, 'c'},
    {"plugin", no_argument, NULL, OPT_PLUGIN},
    {"chain", required_argument, NULL, OPT_CHAIN},
    {"burn", required_argument, NULL, 'b'},
    {"thin", required_argument, NULL, OPT_THIN},
    {"loo", optional_argument, NULL, OPT_LOO},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'F'},
    GPC_CLI_LABEL_COLUMN_OPTION,
    GPC_CLI_COMMON_OPTIONS};

typedef enum { COL_P, COL_PLUGIN, COL_MEAN, COL_VAR, COL_COV, COL_LABEL } column;
static const char *const column_names[] = {"p", "plugin", "mean", "var", "cov", "label"};
#define N_KINDS (sizeof column_names / sizeof column_names[0])
#define MAX_COLUMNS 16

static size_t parse_columns(const char *list, column *cols)
{
    char *copy = gpc_strdup(list), *save = NULL;
    size_t n = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t c = 0;
        while (c < N_KINDS && strcmp(t, column_names[c]) != 0)
            c++;
        if (c == N_KINDS)
            gpc_cli_usage("--columns: unknown column '%s' (use p, plugin, mean, var, cov, "
                          "label)", t);
        if (n == MAX_COLUMNS)
            gpc_cli_usage("--columns: at most %d columns", MAX_COLUMNS);
        cols[n++] = (column)c;
    }
    free(copy);
    if (n == 0)
        gpc_cli_usage("--columns: no columns given");
    return n;
}

/* Per test case, averaged over the hyperparameter samples used: the
 * probabilities, the plug-in ones, and the latent mixture's first two
 * moments (mean and mean + cov: E[f f']). */
typedef struct {
    gsl_matrix *p, *plugin, *mean, *second;
    size_t samples;
} averages;

/* For n >= 1 cases (the matrix readers refuse an empty input). */
static averages averages_alloc(const gpc_model *m, size_t n)
{
    size_t L = gpc_model_latent(m), P = gpc_model_prob_columns(m);
    averages a = {gpc_matrix_calloc(n, P), gpc_matrix_calloc(n, P), gpc_matrix_calloc(n, L),
                  gpc_matrix_calloc(n, L * L), 0};
    return a;
}

static void averages_free(averages *a)
{
    gsl_matrix_free(a->p);
    gsl_matrix_free(a->plugin);
    gsl_matrix_free(a->mean);
    gsl_matrix_free(a->second);
}

typedef enum { LOO_NONE, LOO_CAVITY, LOO_EXACT } loo_mode;

/* Predict with the model's current hyperparameters and mode (or leave one
 * out of its training cases); add to a. */
static void accumulate(const gpc_model *m, const gsl_matrix *Xs, loo_mode loo, averages *a)
{
    size_t n = Xs->size1, L = gpc_model_latent(m);
    gpc_prediction *pr = gpc_prediction_alloc(m, n);
    if (loo == LOO_CAVITY)
        gpc_cli_check(gpc_model_loo(m, pr));
    else if (loo == LOO_EXACT)
        gpc_cli_check(gpc_model_loo_exact(m, pr));
    else
        gpc_cli_check(gpc_model_predict(m, Xs, pr));
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < L; c++) {
            double mc = gsl_matrix_get(pr->mean, i, c);
            for (size_t e = 0; e < L; e++)
                *gsl_matrix_ptr(a->second, i, c * L + e) +=
                    gsl_matrix_get(pr->cov, i, c * L + e) + mc * gsl_matrix_get(pr->mean, i, e);
        }
    gsl_matrix_add(a->p, pr->prob);
    gsl_matrix_add(a->plugin, pr->plugin);
    gsl_matrix_add(a->mean, pr->mean);
    a->samples++;
    gpc_prediction_free(pr);
}

/* A gibbs chain's row r as the model's hyperparameters and state: y, class
 * c of case i in column c. */
static void set_sample(gpc_model *m, const gpc_chain *ch, size_t r)
{
    size_t n = m->X->size1;
    const double *y = ch->state + r * ch->nstate;
    gpc_kernel_set_params(m->kernel, ch->theta + r * ch->p);
    for (size_t c = 0; c < ch->set.classes; c++)
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(m->state, i, c, y[c * n + i]);
}

/* A chain, read and checked against the model: the model must be of its
 * training data and kernel, and of the method whose posterior it samples. */
static gpc_chain *read_chain(const gpc_model *m, const char *path)
{
    gpc_chain *ch;
    const char *name = gpc_cli_name(path);
    /* the model's inputs bound the chain's sizes before they are used */
    gpc_cli_check(gpc_chain_read(path, m->X->size2, &ch));
    if (!m->y) /* an inducing model: no training data to compare */
        gpc_die(GPC_EINPUT, "%s: a chain predicts through a model of its training data fitted "
                "with -M laplace, ep or vb, not %s", name, m->method);
    if (strcmp(ch->set.kernel, gpc_kernel_spec(m->kernel)) != 0 ||
        ch->set.ntrain != m->X->size1 || ch->set.data_hash != gpc_chain_data_hash(m->X, m->y))
        gpc_die(GPC_EINPUT, "%s: the chain is not for this model (kernel or training data "
                "differ); fit the model on the chain's data with -k '%s'", name,
                ch->set.kernel);
    /* a Gibbs chain's rows are (theta, y), and the variational model's
     * predictions from its state ybar are exactly the predictive given y */
    if (ch->set.gibbs && strcmp(m->method, gpc_method_name(GPC_METHOD_VB)) != 0)
        gpc_die(GPC_EINPUT, "%s: a gibbs chain predicts through a model of the same data fitted "
                "with -M vb, not %s; fit one with -M vb -O none", name, m->method);
    /* the samples are of the posterior under the Laplace evidence with this
     * likelihood; under another method they would be averaged wrongly */
    const char *evidence = gpc_chain_method(&ch->set);
    if (!ch->set.gibbs && (strcmp(m->method, evidence) != 0 || ch->set.lik != m->lik ||
                           m->label_noise != 0.0))
        gpc_die(GPC_EINPUT, "%s: the chain was sampled under the %s evidence with the "
                "%s likelihood, the model is %s %s%s; fit it with -M %s -l %s", name,
                ch->set.ep ? "EP" : "Laplace", gpc_lik_name(ch->set.lik), m->method,
                gpc_lik_name(m->lik), m->label_noise != 0.0 ? " with label noise" : "",
                evidence, gpc_lik_name(ch->set.lik));
    return ch;
}

/* The first row of chain ch that is a sample: after its burn-in, with rows
 * left. */
static size_t first_sample(const gpc_chain *ch, const char *name, long burn)
{
    size_t first;
    gpc_cli_check(gpc_chain_burn(ch, name, burn, ch->rows, &first));
    if (first >= ch->rows)
        gpc_die(GPC_EINPUT, "%s: no samples left after a burn-in of %zu%s", name, first,
                ch->set.adapt ? " (extend the chain past its warm-up)" : "");
    return first;
}

/* The samples of the chains after each one's burn-in, every thin-th,
 * refitted (a Gibbs chain's: set from the row) and averaged with equal
 * weights, so that a longer chain counts for more samples.  Every chain is
 * read and checked before the first refit. */
static void accumulate_chains(gpc_model *m, char **paths, size_t nch, long burn, long thin,
                              const gsl_matrix *Xs, averages *a)
{
    gpc_chain **ch = gpc_mallocarray(nch, sizeof *ch);
    const char **names = gpc_mallocarray(nch, sizeof *names);
    size_t *first = gpc_mallocarray(nch, sizeof *first), total = 0, done = 0;
    for (size_t k = 0; k < nch; k++) {
        names[k] = gpc_cli_name(paths[k]);
        ch[k] = read_chain(m, paths[k]);
        first[k] = first_sample(ch[k], names[k], burn);
        total += (ch[k]->rows - first[k] + (size_t)thin - 1) / (size_t)thin;
    }
    /* pooled samples must be draws of one posterior */
    gpc_cli_check(gpc_chain_check_pool(ch, names, nch));
    gpc_progress clock;
    gpc_progress_start(&clock, "sample", 0, (long)total, gpc_progress_clock());
    for (size_t k = 0; k < nch; k++)
        for (size_t r = first[k]; r < ch[k]->rows; r += (size_t)thin) {
            if (ch[k]->set.gibbs)
                set_sample(m, ch[k], r);
            else
                gpc_cli_check(gpc_model_refit(m, ch[k]->theta + r * ch[k]->p));
            accumulate(m, Xs, LOO_NONE, a);
            char line[160];
            if (++done % 20 == 0)
                gpc_info(1, "%s", gpc_progress_format(&clock, (long)done, gpc_progress_clock(),
                                                      line, sizeof line));
        }
    for (size_t k = 0; k < nch; k++)
        gpc_chain_free(ch[k]);
    free(ch);
    free(names);
    free(first);
}

static int has_column(const column *cols, size_t ncols, column c)
{
    for (size_t j = 0; j < ncols; j++)
        if (cols[j] == c)
            return 1;
    return 0;
}

/* The predictions in their final form, per case: probabilities (m x P),
 * plug-in ones, latent means (m x L) and covariances (m x L*L). */
typedef struct {
    const gpc_model *m;
    size_t L, P;
    gsl_matrix *p, *plugin, *mean, *cov;
    int use_plugin; /* the label follows the plug-in probabilities */
    int words;      /* class names are not all numbers */
} results;

/* The averages over the samples as results (a's matrices are reused). */
static results finish(const gpc_model *m, averages *a, int use_plugin)
{
    results r = {m, gpc_model_latent(m), gpc_model_prob_columns(m), a->p, a->plugin, a->mean,
                 a->second, use_plugin, 0};
    double k = 1.0 / (double)a->samples, x;
    gsl_matrix_scale(r.p, k);
    gsl_matrix_scale(r.plugin, k);
    gsl_matrix_scale(r.mean, k);
    for (size_t i = 0; i < r.mean->size1; i++)
        for (size_t c = 0; c < r.L; c++)
            for (size_t e = 0; e < r.L; e++) {
                double mc = gsl_matrix_get(r.mean, i, c), me = gsl_matrix_get(r.mean, i, e);
                double v = k * gsl_matrix_get(r.cov, i, c * r.L + e) - mc * me;
                gsl_matrix_set(r.cov, i, c * r.L + e, c == e ? fmax(0.0, v) : v);
            }
    for (size_t c = 0; c < m->nclasses; c++)
        r.words |= !gpc_labels_number(gpc_model_class(m, c), &x);
    return r;
}

/* A two-class model of a multiclass method (VB, softmax) as a binary one:
 * p and plugin of the later (positive) class, and the latent difference
 * f+ - f- (the function whose sign decides) with its variance, so that
 * every two-class model writes the same columns and scores as binary. */
static void as_binary(results *r, averages *a)
{
    if (r->P != 2 || r->L != 2)
        return;
    size_t n = r->mean->size1;
    gsl_matrix *p = gpc_matrix_alloc(n, 1), *plugin = gpc_matrix_alloc(n, 1);
    gsl_matrix *mean = gpc_matrix_alloc(n, 1), *cov = gpc_matrix_alloc(n, 1);
    for (size_t i = 0; i < n; i++) {
        double v = gsl_matrix_get(r->cov, i, 0) + gsl_matrix_get(r->cov, i, 3) -
                   gsl_matrix_get(r->cov, i, 1) - gsl_matrix_get(r->cov, i, 2);
        gsl_matrix_set(p, i, 0, gsl_matrix_get(r->p, i, 1));
        gsl_matrix_set(plugin, i, 0, gsl_matrix_get(r->plugin, i, 1));
        gsl_matrix_set(mean, i, 0, gsl_matrix_get(r->mean, i, 1) - gsl_matrix_get(r->mean, i, 0));
        gsl_matrix_set(cov, i, 0, fmax(0.0, v));
    }
    averages_free(a); /* r's matrices are a's */
    *a = (averages){p, plugin, mean, cov, a->samples};
    *r = (results){r->m, 1, 1, p, plugin, mean, cov, r->use_plugin, r->words};
}

/* Columns a column kind takes: one per class or latent function for a
 * multiclass model, cov L*L of them, label one. */
static size_t kind_width(const results *r, column c)
{
    switch (c) {
    case COL_P:
    case COL_PLUGIN: return r->P;
    case COL_MEAN:
    case COL_VAR: return r->L;
    case COL_COV: return r->L * r->L;
    case COL_LABEL: return 1;
    }
    return 0;
}

/* The predicted class of case i: a binary model's positive class if its
 * probability is at least 1/2, a multiclass model's most probable one. */
static size_t predicted_class(const results *r, size_t i)
{
    const gsl_matrix *p = r->use_plugin ? r->plugin : r->p;
    if (r->P == 1)
        return gsl_matrix_get(p, i, 0) >= 0.5;
    gsl_vector_const_view row = gsl_matrix_const_row(p, i);
    return gsl_vector_max_index(&row.vector);
}

/* The label column's number (for .npy, and for the '# label:' line that
 * says which number is which class): a class's own number when the
 * classes are numbers, else -1/+1 (binary) or the class number 1..C.  Text
 * writes the class itself, as the training labels spelt it. */
static double label_value(const results *r, size_t c)
{
    double x;
    if (!r->words && gpc_labels_number(gpc_model_class(r->m, c), &x))
        return x;
    return r->P == 1 ? (c ? 1.0 : -1.0) : (double)(c + 1);
}

/* Value j of column kind c for case i. */
static double value(const results *r, column c, size_t i, size_t j)
{
    const gsl_matrix *p = r->use_plugin ? r->plugin : r->p;
    switch (c) {
    case COL_P: return gsl_matrix_get(p, i, j);
    case COL_PLUGIN: return gsl_matrix_get(r->plugin, i, j);
    case COL_MEAN: return gsl_matrix_get(r->mean, i, j);
    case COL_VAR: return gsl_matrix_get(r->cov, i, j * r->L + j);
    case COL_COV: return gsl_matrix_get(r->cov, i, j);
    case COL_LABEL: return label_value(r, predicted_class(r, i));
    }
    return 0.0;
}

static gsl_matrix *output_matrix(const results *r, const column *cols, size_t ncols)
{
    size_t n = r->mean->size1, w = 0;
    for (size_t j = 0; j < ncols; j++)
        w += kind_width(r, cols[j]);
    gsl_matrix *res = gpc_matrix_alloc(n, w);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0, o = 0; j < ncols; j++)
            for (size_t e = 0; e < kind_width(r, cols[j]); e++)
                gsl_matrix_set(res, i, o++, value(r, cols[j], i, e));
    return res;
}

/* The text output names its columns in a '#' line, which numpy's
 * genfromtxt(names=True) reads and loadtxt, R and pandas skip as a comment:
 * "# p mean var label" for a binary model, by class for a multiclass one
 * ("# p.setosa p.versicolor p.virginica label"; cov.a.b is the covariance
 * of the latent functions of classes a and b).  A label column of word
 * classes gets a line saying which number stands for which class, for
 * tools that want numbers (-F npy writes them). */
static void write_header(FILE *f, const results *r, const column *cols, size_t ncols)
{
    const gpc_model *m = r->m;
    fputc('#', f);
    for (size_t j = 0; j < ncols; j++)
        for (size_t e = 0; e < kind_width(r, cols[j]); e++) {
            if (cols[j] == COL_LABEL || r->P == 1)
                fprintf(f, " %s", column_names[cols[j]]);
            else if (cols[j] == COL_COV)
                fprintf(f, " cov.%s.%s", gpc_model_class(m, e / r->L),
                        gpc_model_class(m, e % r->L));
            else
                fprintf(f, " %s.%s", column_names[cols[j]], gpc_model_class(m, e));
        }
    fputc('\n', f);
    if (!r->words || !has_column(cols, ncols, COL_LABEL))
        return;
    fputs("# label:", f);
    for (size_t c = 0; c < m->nclasses; c++)
        fprintf(f, "%s %g %s", c ? "," : "", label_value(r, c), gpc_model_class(m, c));
    fputc('\n', f);
}

/* The label column's text, each case's predicted class as the model names
 * it (pointers into the model), and its place among the output's columns;
 * NULL without a label column. */
static char **label_text(const results *r, const column *cols, size_t ncols, size_t *col)
{
    *col = 0;
    for (size_t j = 0; j < ncols && cols[j] != COL_LABEL; j++)
        *col += kind_width(r, cols[j]);
    if (!has_column(cols, ncols, COL_LABEL))
        return NULL;
    size_t n = r->mean->size1;
    char **text = gpc_mallocarray(n, sizeof *text);
    for (size_t i = 0; i < n; i++)
        text[i] = (char *)gpc_model_class(r->m, predicted_class(r, i));
    return text;
}

/* Test cases per block of a prediction made a block at a time: the block's
 * inputs and results (C^2 latent covariances a case) stay a few megabytes. */
#define PREDICT_BLOCK 2048

/* Whether names (or NULL) are the model's columns as they stand. */
static int same_columns(const gpc_model *m, char *const *names)
{
    if (!names || !m->colnames)
        return !names && !m->colnames;
    size_t j = 0;
    for (; names[j] && m->colnames[j]; j++)
        if (strcmp(names[j], m->colnames[j]) != 0)
            return 0;
    return !names[j] && !m->colnames[j];
}

/* The test inputs as rows read a block at a time, when that is how they
 * are predicted: by a model of inducing inputs (whose predictions need no
 * training cases), into a text output that appears whole, from a regular
 * file whose columns are the model's as they stand (a .npy file of doubles
 * read in place, or text through a scratch copy).  NULL otherwise (and for
 * what the rows reader leaves to the whole-file reader, or refuses): the
 * whole-file reader then takes the file, with its column matching and its
 * messages. */
static gpc_rows *stream_inputs(const gpc_model *m, const char *xpath, gpc_format fmt,
                               const gpc_output *output)
{
    if (!gpc_model_method(m)->inducing || fmt != GPC_FMT_TEXT || !gpc_output_whole(output) ||
        strcmp(xpath, "-") == 0)
        return NULL;
    gpc_rows *rows = NULL;
    char **names = NULL;
    int st = gpc_rows_npy_in_place(xpath) ? gpc_rows_open_npy(xpath, &rows)
                                          : gpc_rows_open_text(xpath, &rows, &names);
    if (st == GPC_OK && rows &&
        (gpc_rows_dim(rows) != m->X->size2 || !same_columns(m, names))) {
        gpc_rows_close(rows);
        rows = NULL;
    }
    gpc_colnames_free(names);
    return st == GPC_OK ? rows : NULL;
}

/* Softmax Laplace's averaged probabilities against its plug-in ones: where
 * the approximation's latent covariance is too wide (large signal
 * variances at ML-II or MAP hyperparameters) the averages are far less
 * confident than the plug-in probabilities and score much worse, while
 * nested EP's and VB's averages stay within a hundredth of their plug-in
 * ones (make table-calibration).  Summed over the cases: the plug-in
 * probability of the plug-in's most probable class, less the averaged
 * probability of the same class.  Judged on the first block of test cases
 * and said before any output, so that the message comes first however the
 * output is piped on. */
typedef struct {
    double plugin, averaged;
    uint64_t cases;
} shrinkage;

#define SHRINKAGE_WARN 0.1 /* mean shrinkage of the top class that is warned */

static void add_shrinkage(const results *r, shrinkage *s)
{
    for (size_t i = 0; i < r->p->size1; i++) {
        size_t top = 0;
        for (size_t c = 1; c < r->P; c++)
            if (gsl_matrix_get(r->plugin, i, c) > gsl_matrix_get(r->plugin, i, top))
                top = c;
        s->plugin += gsl_matrix_get(r->plugin, i, top);
        s->averaged += gsl_matrix_get(r->p, i, top);
        s->cases++;
    }
}

/* A model of a method whose averages can be too wide (wide_averages in
 * method.h) whose averaged probabilities are given (not --plugin) and
 * shrink on average by more than SHRINKAGE_WARN. */
static void warn_shrinkage(const gpc_model *m, const shrinkage *s, int plugin)
{
    if (plugin || !gpc_model_method(m)->wide_averages || s->cases == 0)
        return;
    double p = s->plugin / (double)s->cases, a = s->averaged / (double)s->cases;
    if (p - a > SHRINKAGE_WARN)
        gpc_warn("the averaged probabilities are much less confident than the plug-in ones "
                 "(mean probability of the most probable class %.3f against %.3f): the "
                 "Laplace approximation's latent covariance is too wide here, so they are "
                 "likely under-confident; compare --plugin, or fit by nested EP (-M ep), "
                 "whose averages do not shrink so", a, p);
}

/* The predictions of the rows, a block at a time, written to output as
 * they come (the header first) and committed after the last. */
static void predict_blocks(gpc_model *m, gpc_rows *rows, const column *cols, size_t ncols,
                           int plugin, gpc_output *output)
{
    uint64_t n = gpc_rows_count(rows);
    for (uint64_t first = 0; first < n; first += PREDICT_BLOCK) {
        size_t b = n - first < PREDICT_BLOCK ? (size_t)(n - first) : PREDICT_BLOCK, label_col;
        gsl_matrix *Xs = gpc_matrix_alloc(b, gpc_rows_dim(rows));
        gpc_cli_check(gpc_rows_read(rows, first, b, Xs->data));
        averages a = averages_alloc(m, b);
        accumulate(m, Xs, LOO_NONE, &a);
        results r = finish(m, &a, plugin);
        if (first == 0) {
            shrinkage s = {0};
            add_shrinkage(&r, &s);
            warn_shrinkage(m, &s, plugin);
        }
        as_binary(&r, &a);
        if (first == 0)
            write_header(gpc_output_file(output), &r, cols, ncols);
        gsl_matrix *res = output_matrix(&r, cols, ncols);
        char **text = label_text(&r, cols, ncols, &label_col);
        gpc_cli_write_text_rows(output, res, label_col, text);
        free(text);
        gsl_matrix_free(res);
        gsl_matrix_free(Xs);
        averages_free(&a);
    }
    gpc_cli_check(gpc_output_commit(output));
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *out = "-", *columns = NULL;
    char **chains = gpc_mallocarray((size_t)argc, sizeof *chains); /* the --chain files */
    size_t nchains = 0;
    int plugin = 0, c;
    loo_mode loo = LOO_NONE;
    long burn = -1, thin = 1;
    gpc_format fmt = GPC_FMT_TEXT;
    gpc_cli_init(argc, argv);
    while ((c = getopt_long(argc, argv, "m:b:c:o:F:vqhV", long_options, NULL)) != -1) {
        if (gpc_cli_common(c, optarg, &fmt))
            continue;
        switch (c) {
        case 'm': model_path = optarg; break;
        case OPT_CHAIN: chains[nchains++] = optarg; break;
        case 'b': burn = gpc_cli_long("--burn", optarg, 0, 100000000); break;
        case OPT_THIN: thin = gpc_cli_long("--thin", optarg, 1, 100000000); break;
        case 'c': columns = optarg; break;
        case 'o': out = optarg; break;
        case OPT_PLUGIN: plugin = 1; break;
        case OPT_LOO:
            if (!optarg || strcmp(optarg, "cavity") == 0)
                loo = LOO_CAVITY;
            else if (strcmp(optarg, "exact") == 0)
                loo = LOO_EXACT;
            else
                gpc_cli_usage("--loo: '%s' is not cavity or exact", optarg);
            break;
        case 'h': usage();
        }
    }
    if (!model_path)
        gpc_cli_usage("a model is required (-m FILE, as written by gpc-fit)");
    if (argc - optind > 1)
        gpc_cli_usage("expected at most one input file");
    if (loo != LOO_NONE && (nchains || argc - optind > 0))
        gpc_cli_usage("--loo predicts the model's own training cases: give no inputs and no "
                      "--chain");
    if (!nchains && (burn >= 0 || thin != 1))
        gpc_cli_usage("--burn and --thin apply to --chain");
    const char *xpath = optind < argc ? argv[optind] : "-";
    gpc_cli_stdin_claim("the model (-m)", model_path);
    for (size_t k = 0; k < nchains; k++) {
        /* each by its place, as two '-' are two claims */
        char what[48];
        snprintf(what, sizeof what, nchains > 1 ? "--chain %zu" : "--chain", k + 1);
        gpc_cli_stdin_claim(what, chains[k]);
    }
    if (loo == LOO_NONE)
        gpc_cli_stdin_claim("the inputs", xpath);
    gpc_output *output = gpc_cli_output(out);

    gpc_model *m;
    gpc_cli_check(gpc_model_read(model_path, &m));
    gpc_cli_model_base(m->zero_based);
    column cols[MAX_COLUMNS];
    size_t ncols = parse_columns(columns ? columns
                                         : m->nclasses == 2 ? "p,mean,var,label"
                                                                    : "p,label", cols);
    gpc_rows *rows = loo == LOO_NONE && !nchains ? stream_inputs(m, xpath, fmt, output) : NULL;
    if (rows) {
        predict_blocks(m, rows, cols, ncols, plugin, output);
        gpc_rows_close(rows);
        gpc_model_free(m);
        free(chains);
        return 0;
    }
    gsl_matrix *Xs = loo != LOO_NONE ? m->X : gpc_cli_read_inputs_for(xpath, m->colnames,
                                                                        m->X->size2,
                                                                        "the model's inputs");
    size_t n = Xs->size1;
    averages a = averages_alloc(m, n);
    if (nchains)
        accumulate_chains(m, chains, nchains, burn, thin, Xs, &a);
    else
        accumulate(m, Xs, loo, &a);
    results r = finish(m, &a, plugin);
    shrinkage s = {0};
    if (!nchains) /* over a chain the averages also spread over the hyperparameters */
        add_shrinkage(&r, &s);
    warn_shrinkage(m, &s, plugin);
    as_binary(&r, &a);
    gsl_matrix *res = output_matrix(&r, cols, ncols);
    if (fmt == GPC_FMT_TEXT)
        write_header(gpc_output_file(output), &r, cols, ncols);
    size_t label_col;
    char **text = label_text(&r, cols, ncols, &label_col);
    gpc_cli_write_tokens(output, res, fmt, label_col, text);
    free(text);
    gsl_matrix_free(res);
    if (Xs != m->X)
        gsl_matrix_free(Xs);
    averages_free(&a);
    gpc_model_free(m);
    free(chains);
    return 0;
}
