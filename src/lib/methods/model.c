#include "methods/model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_math.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/progress.h"
#include "io/colnames.h"
#include "io/keyfile.h"
#include "io/matio.h"
#include "methods/method.h"

void gpc_model_free(gpc_model *m)
{
    if (!m)
        return;
    gpc_kernel_free(m->kernel);
    gsl_matrix_free(m->X);
    gsl_vector_free(m->y);
    gsl_matrix_free(m->state);
    for (size_t c = 0; m->class_store && c < m->nclasses; c++)
        free(m->class_store[c]);
    free(m->class_store);
    gpc_colnames_free(m->colnames);
    free(m);
}

const char *gpc_model_class(const gpc_model *m, size_t c)
{
    if (m->classes)
        return m->classes[c];
    return c ? "1" : "-1";
}

const gpc_method_ops *gpc_model_method(const gpc_model *m)
{
    return gpc_method_find(m->method, m->lik);
}

size_t gpc_model_latent(const gpc_model *m)
{
    const gpc_method_ops *ops = gpc_model_method(m);
    return ops->latent ? (size_t)ops->latent : m->nclasses;
}

size_t gpc_model_prob_columns(const gpc_model *m)
{
    return gpc_model_method(m)->latent ? 1 : m->nclasses;
}

size_t gpc_model_state_columns(const gpc_model *m)
{
    const gpc_method_ops *ops = gpc_model_method(m);
    size_t width = ops->inducing ? 1 + m->X->size1 : ops->state_width;
    return width * gpc_model_latent(m);
}

/* The header of an inducing model's rows: "# m S1..S50 z1..z7", and for
 * several latent functions "# m1 S1.1..S1.50 m2 S2.1..S2.50 z1..z7". */
static void write_inducing_columns(FILE *out, const gpc_model *m)
{
    size_t L = gpc_model_latent(m), rows = m->X->size1;
    fputs("#", out);
    for (size_t c = 1; c <= L; c++) {
        if (L == 1)
            fprintf(out, " m S1..S%zu", rows);
        else
            fprintf(out, " m%zu S%zu.1..S%zu.%zu", c, c, c, rows);
    }
    fprintf(out, " z1..z%zu\n", m->X->size2);
}

/* The header of the training lines: "# y f x1..x7", and for a multiclass
 * model each state column once per class ("# y f1 f2 f3 x1..x4"). */
static void write_columns_line(FILE *out, const gpc_method_ops *ops, size_t L, size_t d)
{
    fputs("# y", out);
    for (size_t c = 1; c <= L; c++) {
        const char *s = ops->state_columns;
        while (*s) {
            size_t len = strcspn(s, " ");
            fprintf(out, " %.*s", (int)len, s);
            if (!ops->latent)
                fprintf(out, "%zu", c);
            s += len + strspn(s + len, " ");
        }
    }
    fprintf(out, " x1..x%zu\n", d);
}

/* A label as written: -1/1 for a binary method, else the class number 1..C. */
static double label_written(const gpc_method_ops *ops, double y)
{
    return ops->latent ? y : y + 1.0;
}

int gpc_model_write(FILE *out, const char *name, const gpc_model *m)
{
    const gpc_kernel *k = m->kernel;
    const gpc_method_ops *ops = gpc_model_method(m);
    size_t n = m->X->size1, d = m->X->size2, p = gpc_kernel_nparams(k);
    if (!ops)
        return gpc_fail(GPC_EUSAGE, "%s: unknown method '%s'", name, m->method);
    fprintf(out, "gpc-model %d\nmethod %s\nlikelihood %s", GPC_MODEL_VERSION, m->method,
            gpc_lik_name(m->lik));
    if (m->label_noise > 0.0)
        fprintf(out, " %.17g", m->label_noise);
    fputs("\nclasses", out);
    for (size_t c = 0; c < m->nclasses; c++)
        fprintf(out, " %s", gpc_model_class(m, c));
    fprintf(out, "\nkernel %s\ndim %zu\n", gpc_kernel_spec(k), d);
    gpc_colnames_write_line(out, "columns", m->colnames); /* the training inputs' names */
    if (m->zero_based)
        fputs("libsvm zero-based\n", out);
    fprintf(out, "hyperparameters %zu\n", p);
    for (size_t j = 0; j < p; j++)
        fprintf(out, "%s %.17g\n", gpc_kernel_param_name(k, j), gpc_kernel_params(k)[j]);
    fprintf(out, "fit %s\n", m->fit);
    if (isfinite(m->log_evidence))
        fprintf(out, "log_evidence %.17g\n", m->log_evidence);
    else
        fprintf(out, "log_evidence none\n");
    if (ops->inducing) {
        fprintf(out, "inducing %zu\n", n);
        write_inducing_columns(out, m);
    } else {
        fprintf(out, "training %zu\n", n);
        write_columns_line(out, ops, gpc_model_latent(m), d);
    }
    for (size_t i = 0; i < n; i++) {
        if (!ops->inducing)
            fprintf(out, "%g ", label_written(ops, gsl_vector_get(m->y, i)));
        for (size_t c = 0; c < m->state->size2; c++)
            fprintf(out, "%s%.17g", c ? " " : "", gsl_matrix_get(m->state, i, c));
        for (size_t l = 0; l < d; l++)
            fprintf(out, " %.17g", gsl_matrix_get(m->X, i, l));
        fputc('\n', out);
    }
    if (ferror(out))
        return gpc_fail(GPC_EINPUT, "%s: write error: %s", name, strerror(errno));
    return GPC_OK;
}

/* ---- reading ----------------------------------------------------------- */

/* "classes A B ...": distinct tokens, two for a binary method ("classes
 * NEG POS"), at least two for a multiclass one. */
static int read_classes(gpc_keyfile *r, gpc_model *m)
{
    char *v, *save;
    int st = gpc_keyfile_expect(r, "classes", &v);
    if (st != GPC_OK)
        return st;
    size_t cap = strlen(v) / 2 + 1; /* tokens are at least one byte and a blank apart */
    m->class_store = gpc_mallocarray(cap, sizeof *m->class_store);
    m->nclasses = 0;
    for (char *t = strtok_r(v, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
        m->class_store[m->nclasses++] = gpc_strdup(t);
    m->classes = m->class_store;
    size_t first, twice;
    if (gpc_colnames_repeated(m->class_store, m->nclasses, &first, &twice))
        return gpc_fail(GPC_EINPUT, "%s:%zu: class '%s' is named twice", r->name, r->line,
                        m->class_store[twice]);
    int binary = gpc_model_method(m)->latent != 0;
    if (binary ? m->nclasses != 2 : m->nclasses < 2)
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected 'classes %s', %s different class names",
                        r->name, r->line, binary ? "NEG POS" : "A B ...",
                        binary ? "two" : "at least two");
    return GPC_OK;
}

/* "columns A B ...": dim distinct names, as gpc_colnames_write_line encodes them. */
static int read_colnames(gpc_keyfile *r, gpc_model *m, size_t dim)
{
    char *v, *save;
    int st = gpc_keyfile_expect(r, "columns", &v);
    if (st != GPC_OK)
        return st;
    m->colnames = gpc_calloc(dim + 1, sizeof *m->colnames);
    size_t n = 0;
    for (char *t = strtok_r(v, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        char *name = n < dim ? gpc_colnames_decode(t) : NULL;
        if (!name)
            return gpc_fail(GPC_EINPUT, "%s:%zu: %s", r->name, r->line,
                            n < dim ? "a column name with a bad %-escape" :
                                      "more column names than dim");
        m->colnames[n++] = name;
    }
    if (n != dim)
        return gpc_fail(GPC_EINPUT, "%s:%zu: %zu column names for dim %zu", r->name, r->line,
                        n, dim);
    size_t first, twice;
    if (gpc_colnames_repeated(m->colnames, n, &first, &twice))
        return gpc_fail(GPC_EINPUT, "%s:%zu: column '%s' is named twice", r->name, r->line,
                        m->colnames[twice]);
    return GPC_OK;
}

/* "libsvm zero-based": how the training file numbered its features (a
 * file numbered from 1, or not LIBSVM, has no such line). */
static int read_libsvm_base(gpc_keyfile *r, gpc_model *m)
{
    char *v;
    int st = gpc_keyfile_expect(r, "libsvm", &v);
    if (st != GPC_OK)
        return st;
    v[strcspn(v, " \t\r")] = '\0';
    if (strcmp(v, "zero-based") != 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected 'libsvm zero-based', not 'libsvm %s'",
                        r->name, r->line, v);
    m->zero_based = 1;
    return GPC_OK;
}

/* "NAME" or "NAME EPS" with a label-flip probability EPS in [0, 1/2). */
static int parse_likelihood(gpc_keyfile *r, char *v, gpc_model *m)
{
    char *rest = v + strcspn(v, " \t");
    int has_eps = *rest != '\0';
    *rest = '\0';
    if (gpc_lik_parse(v, &m->lik) != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s:%zu: %s", r->name, r->line, gpc_errmsg());
    m->label_noise = 0.0;
    if (!has_eps)
        return GPC_OK;
    int st = gpc_keyfile_number(r, rest + 1, &m->label_noise, NULL);
    if (st == GPC_OK && !(m->label_noise >= 0.0 && m->label_noise < 0.5))
        st = gpc_fail(GPC_EINPUT, "%s:%zu: label noise %g is not in [0, 1/2)", r->name,
                      r->line, m->label_noise);
    return st;
}

/* A model the tools could not have written is refused rather than
 * predicted from: e.g. Laplace with the step likelihood gives 0.5
 * everywhere. */
static int check_method_likelihood(gpc_keyfile *r, gpc_model *m)
{
    const gpc_method_ops *ops = gpc_model_method(m);
    if (ops->check_lik(m->lik) != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s:%zu: method %s with the %s likelihood: %s", r->name,
                        r->line, m->method, gpc_lik_name(m->lik), gpc_errmsg());
    if (m->label_noise > 0.0 && !ops->label_noise)
        return gpc_fail(GPC_EINPUT, "%s:%zu: method %s takes no label noise", r->name,
                        r->line, m->method);
    return GPC_OK;
}

static int read_header(gpc_keyfile *r, gpc_model *m)
{
    char *v;
    size_t dim, p;
    int st;
    if ((st = gpc_keyfile_expect(r, "gpc-model", &v)) != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s:%zu: not a gpc model file (it should start with "
                        "'gpc-model %d')", r->name, r->line, GPC_MODEL_VERSION);
    if (strcmp(v, "1") != 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: model file version %s is not supported (this is "
                        "version %d)", r->name, r->line, v, GPC_MODEL_VERSION);
    if ((st = gpc_keyfile_expect(r, "method", &v)) != GPC_OK)
        return st;
    if (!gpc_method_known(v))
        return gpc_fail(GPC_EINPUT, "%s:%zu: unknown method '%s'", r->name, r->line, v);
    snprintf(m->method, sizeof m->method, "%s", v);
    if ((st = gpc_keyfile_expect(r, "likelihood", &v)) != GPC_OK)
        return st;
    if ((st = parse_likelihood(r, v, m)) != GPC_OK)
        return st;
    if ((st = check_method_likelihood(r, m)) != GPC_OK)
        return st;
    /* optional for a binary model: those written before classes were
     * recorded are -1/+1 */
    m->nclasses = 2;
    if (gpc_keyfile_next_is(r, "classes")) {
        if ((st = read_classes(r, m)) != GPC_OK)
            return st;
    } else if (!gpc_model_method(m)->latent) {
        return gpc_fail(GPC_EINPUT, "%s:%zu: a multiclass model needs its 'classes' line",
                        r->name, r->line + 1);
    }
    char spec[1024];
    if ((st = gpc_keyfile_expect(r, "kernel", &v)) != GPC_OK)
        return st;
    snprintf(spec, sizeof spec, "%s", v);
    if ((st = gpc_keyfile_count(r, "dim", &dim)) != GPC_OK)
        return st;
    if (dim > gpc_keyfile_left(r) / 2)
        return gpc_fail(GPC_EINPUT, "%s:%zu: dim %zu is more than the rest of the file can "
                        "hold; the model file is damaged", r->name, r->line, dim);
    if (dim == 0 || gpc_kernel_parse(spec, dim, &m->kernel) != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s:%zu: bad kernel or dimension: %s", r->name, r->line,
                        dim ? gpc_errmsg() : "dim is 0");
    if (gpc_keyfile_next_is(r, "columns") && (st = read_colnames(r, m, dim)) != GPC_OK)
        return st;
    if (gpc_keyfile_next_is(r, "libsvm") && (st = read_libsvm_base(r, m)) != GPC_OK)
        return st;
    gpc_kernel_name_columns(m->kernel, m->colnames);
    if ((st = gpc_keyfile_count(r, "hyperparameters", &p)) != GPC_OK)
        return st;
    if (p != gpc_kernel_nparams(m->kernel))
        return gpc_fail(GPC_EINPUT, "%s:%zu: kernel '%s' has %zu hyperparameters, not %zu",
                        r->name, r->line, spec, gpc_kernel_nparams(m->kernel), p);
    double *theta = gpc_malloc(p * sizeof *theta);
    for (size_t j = 0; j < p && st == GPC_OK; j++)
        if ((st = gpc_keyfile_expect(r, gpc_kernel_param_name(m->kernel, j), &v)) == GPC_OK)
            st = gpc_keyfile_number(r, v, &theta[j], NULL);
    if (st == GPC_OK)
        gpc_kernel_set_params(m->kernel, theta);
    free(theta);
    if (st != GPC_OK || (st = gpc_keyfile_expect(r, "fit", &v)) != GPC_OK)
        return st;
    snprintf(m->fit, sizeof m->fit, "%s", v);
    if ((st = gpc_keyfile_expect(r, "log_evidence", &v)) != GPC_OK)
        return st;
    if (strcmp(v, "none") == 0) { /* a method without an evidence (naive mean field) */
        m->log_evidence = GSL_NAN;
        return GPC_OK;
    }
    return gpc_keyfile_number(r, v, &m->log_evidence, NULL);
}

/* A training case's label as written: -1 or 1, or a class number 1..C. */
static int check_label(const gpc_keyfile *r, const gpc_model *m, const gpc_method_ops *ops, double x)
{
    if (ops->latent && x != 1.0 && x != -1.0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: label must be -1 or 1", r->name, r->line);
    if (!ops->latent && !(x >= 1 && x <= (double)m->nclasses && x == floor(x)))
        return gpc_fail(GPC_EINPUT, "%s:%zu: label must be a class number from 1 to %zu",
                        r->name, r->line, m->nclasses);
    return GPC_OK;
}

/* The rows: training cases (label, state, inputs) or, for an inducing
 * method, inducing inputs (state, inputs). */
static int read_training(gpc_keyfile *r, gpc_model *m)
{
    size_t n, d = gpc_kernel_dim(m->kernel);
    const gpc_method_ops *ops = gpc_model_method(m);
    const char *rows = ops->inducing ? "inducing inputs" : "training cases";
    int st = gpc_keyfile_count(r, ops->inducing ? "inducing" : "training", &n);
    if (st != GPC_OK)
        return st;
    if (n == 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: no %s", r->name, r->line, rows);
    /* per-row state, and the label column that training cases have */
    size_t s_cols = (ops->inducing ? 1 + n : ops->state_width) * gpc_model_latent(m);
    size_t lab = ops->inducing ? 0 : 1, want = lab + s_cols + d;
    if (want < s_cols || n > gpc_keyfile_left(r) / 2 / want)
        return gpc_fail(GPC_EINPUT, "%s:%zu: model file truncated: %zu %s of %zu numbers "
                        "cannot fit in the %zu bytes that follow", r->name, r->line, n, rows,
                        want, gpc_keyfile_left(r));
    m->X = gpc_matrix_alloc(n, d);
    m->y = lab ? gpc_vector_alloc(n) : NULL;
    m->state = gpc_matrix_alloc(n, s_cols);
    for (size_t i = 0; i < n; i++) {
        char *s = gpc_keyfile_line(r), *e;
        double x;
        if (!s)
            return gpc_fail(GPC_EINPUT, "%s:%zu: model file truncated: %zu of %zu %s",
                            r->name, r->line, i, n, rows);
        for (size_t c = 0; c < want; c++, s = e) {
            /* a short line (e.g. a classes line naming one class too many) is
             * named as such, not as a number missing at the end of the line */
            if (s[strspn(s, " \t")] == '\0')
                return gpc_fail(GPC_EINPUT, "%s:%zu: expected %zu numbers, found %zu", r->name,
                                r->line, want, c);
            if ((st = gpc_keyfile_number(r, s, &x, &e)) != GPC_OK)
                return st;
            if (c < lab && (st = check_label(r, m, ops, x)) != GPC_OK)
                return st;
            if (c < lab)
                gsl_vector_set(m->y, i, ops->latent ? x : x - 1.0);
            else if (c < lab + s_cols)
                gsl_matrix_set(m->state, i, c - lab, x);
            else
                gsl_matrix_set(m->X, i, c - lab - s_cols, x);
        }
        if (s[strspn(s, " \t")] != '\0')
            return gpc_fail(GPC_EINPUT, "%s:%zu: expected %zu numbers, found %zu", r->name,
                            r->line, want, want + gpc_keyfile_tokens(s));
    }
    if (gpc_keyfile_line(r))
        return gpc_fail(GPC_EINPUT, "%s:%zu: unexpected text after the %s", r->name, r->line,
                        rows);
    return GPC_OK;
}

/* The writer ends every line, the last too, with a newline.  A file cut
 * inside its last number still reads as numbers ("0.12345" cut to "0.12"),
 * so the newline is what tells a whole model from a truncated one. */
static int check_complete(const gpc_keyfile *r, int ends_in_newline)
{
    if (ends_in_newline)
        return GPC_OK;
    return gpc_fail(GPC_EINPUT, "%s:%zu: the last line has no end of line, so the model file "
                    "was cut short (a model ends with a newline); write it again with gpc-fit",
                    r->name, r->line);
}

/* The training inputs as gpc-fit takes them: a gram term's block edited
 * since (no longer symmetric, say) would be predicted from although no fit
 * accepts it.  The same check, tolerance and words as the fit's. */
static int check_inputs(const gpc_keyfile *r, const gpc_model *m)
{
    if (gpc_kernel_check_train(m->kernel, m->X) != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s: %s; the model file was changed after it was "
                        "written: fit the model again", r->name, gpc_errmsg());
    return GPC_OK;
}

int gpc_model_read(const char *path, gpc_model **out)
{
    char *text;
    size_t len;
    gpc_keyfile r = {NULL, "model file", NULL, NULL, 0};
    int st = gpc_input_read_all(path, &text, &len, &r.name);
    if (st != GPC_OK)
        return st;
    r.pos = text;
    r.end = text + len;
    int ends_in_newline = len > 0 && text[len - 1] == '\n'; /* the gpc_keyfile cuts lines in place */
    gpc_model *m = gpc_calloc(1, sizeof *m);
    st = read_header(&r, m);
    if (st == GPC_OK)
        st = read_training(&r, m);
    if (st == GPC_OK)
        st = check_complete(&r, ends_in_newline);
    if (st == GPC_OK)
        st = check_inputs(&r, m);
    free(text);
    if (st != GPC_OK) {
        gpc_model_free(m);
        return st;
    }
    *out = m;
    return GPC_OK;
}

/* A workspace of the model's method for its training cases, with its label
 * noise (no gradients are asked of it). */
static int model_workspace(const gpc_model *m, const gpc_method_ops **ops, void **ws)
{
    *ops = gpc_model_method(m);
    *ws = NULL;
    int st = gpc_method_check_memory(*ops, m->X->size1, m->nclasses, m->kernel, 0);
    if (st != GPC_OK)
        return st;
    *ws = (*ops)->alloc(m->X->size1, m->nclasses, m->kernel, 0, m->lik);
    if (m->label_noise > 0.0)
        return (*ops)->set(*ws, GPC_SET_LABEL_NOISE, m->label_noise);
    return GPC_OK;
}

/* An inducing model keeps its inducing inputs, not its training cases: no
 * refit or leave-one-out can start from it. */
static int check_has_training(const gpc_model *m, const char *what)
{
    if (gpc_model_method(m)->inducing)
        return gpc_fail(GPC_EUSAGE, "%s needs the training cases, and a model of %s keeps "
                        "only its inducing inputs: fit again from the data (gpc-fit), or "
                        "estimate the error by cross-validation (gpc-cv)", what,
                        gpc_model_method(m)->title);
    return GPC_OK;
}

/* The refit; without_evidence: only the state is wanted, so a method that
 * can skip the dearer of its objectives (vb's Laplace evidence) does, and
 * log_evidence becomes NaN. */
static int refit(gpc_model *m, const double *theta, int without_evidence)
{
    const gpc_method_ops *ops;
    void *ws;
    int has = check_has_training(m, "a refit at new hyperparameters");
    if (has != GPC_OK)
        return has;
    gpc_kernel_set_params(m->kernel, theta);
    int st = model_workspace(m, &ops, &ws);
    if (st == GPC_OK && without_evidence) /* methods without the choice ignore it */
        ops->set(ws, GPC_SET_EVIDENCE, GPC_EVIDENCE_BOUND);
    if (st == GPC_OK)
        st = ops->evidence(ws, m->kernel, m->X, m->y, &m->log_evidence, NULL);
    if (without_evidence)
        m->log_evidence = GSL_NAN;
    if (st == GPC_OK)
        ops->state_get(ws, m->state);
    ops->free(ws);
    return st;
}

int gpc_model_refit(gpc_model *m, const double *theta) { return refit(m, theta, 0); }

/* ---- prediction -------------------------------------------------------- */

#define PREDICT_BLOCK 512 /* test cases per block: bounds the n x m workspace */

gpc_prediction *gpc_prediction_alloc(const gpc_model *m, size_t rows)
{
    size_t L = gpc_model_latent(m), P = gpc_model_prob_columns(m), r = rows ? rows : 1;
    gpc_prediction *p = gpc_calloc(1, sizeof *p);
    p->mean = gpc_matrix_alloc(r, L);
    p->cov = gpc_matrix_alloc(r, L * L);
    p->prob = gpc_matrix_alloc(r, P);
    p->plugin = gpc_matrix_alloc(r, P);
    return p;
}

void gpc_prediction_free(gpc_prediction *p)
{
    if (!p)
        return;
    gsl_matrix_free(p->mean);
    gsl_matrix_free(p->cov);
    gsl_matrix_free(p->prob);
    gsl_matrix_free(p->plugin);
    free(p);
}

/* Rows s .. s + b - 1 of every output of p. */
typedef struct {
    gsl_matrix_view mean, cov, prob, plugin;
} prediction_rows;

static prediction_rows rows_of(gpc_prediction *p, size_t s, size_t b)
{
    prediction_rows v = {gsl_matrix_submatrix(p->mean, s, 0, b, p->mean->size2),
                         gsl_matrix_submatrix(p->cov, s, 0, b, p->cov->size2),
                         gsl_matrix_submatrix(p->prob, s, 0, b, p->prob->size2),
                         gsl_matrix_submatrix(p->plugin, s, 0, b, p->plugin->size2)};
    return v;
}

/* The probabilities of rows whose latent moments are in place. */
static int probabilities(const gpc_model *m, const gpc_method_ops *ops, void *ws,
                         prediction_rows *v)
{
    int st = ops->prob(ws, m->lik, m->label_noise, &v->mean.matrix, &v->cov.matrix, 0,
                       &v->prob.matrix);
    if (st == GPC_OK)
        st = ops->prob(ws, m->lik, m->label_noise, &v->mean.matrix, &v->cov.matrix, 1,
                       &v->plugin.matrix);
    return st;
}

/* The fitted posterior of the model's method, ready to predict from. */
static int predictor_init(const gpc_model *m, const gpc_method_ops **ops, void **ws)
{
    int st = model_workspace(m, ops, ws);
    if (st == GPC_OK)
        st = (*ops)->state_set(*ws, m->kernel, m->X, m->y, m->state);
    return st;
}

int gpc_model_predict(const gpc_model *m, const gsl_matrix *Xs, gpc_prediction *out)
{
    size_t ms = Xs->size1;
    const gpc_method_ops *ops;
    void *ws;
    int st = gpc_kernel_check_test(m->kernel, m->X->size1);
    if (st != GPC_OK)
        return st;
    st = predictor_init(m, &ops, &ws);
    for (size_t s = 0; st == GPC_OK && s < ms; s += PREDICT_BLOCK) {
        size_t b = ms - s < PREDICT_BLOCK ? ms - s : PREDICT_BLOCK;
        gsl_matrix_const_view xs = gsl_matrix_const_submatrix(Xs, s, 0, b, Xs->size2);
        prediction_rows v = rows_of(out, s, b);
        st = ops->predict(ws, m->kernel, m->X, &xs.matrix, &v.mean.matrix, &v.cov.matrix);
        if (st == GPC_OK)
            st = probabilities(m, ops, ws, &v);
    }
    ops->free(ws);
    return st;
}

/* ---- leave-one-out ----------------------------------------------------- */

int gpc_model_loo(const gpc_model *m, gpc_prediction *out)
{
    size_t n = m->X->size1;
    const gpc_method_ops *ops;
    void *ws;
    prediction_rows v = rows_of(out, 0, n);
    int st = predictor_init(m, &ops, &ws);
    if (st == GPC_OK)
        st = ops->loo(ws, m->y, &v.mean.matrix, &v.cov.matrix);
    if (st == GPC_OK)
        st = probabilities(m, ops, ws, &v);
    ops->free(ws);
    return st;
}

/* m without training case i, with state vectors of the right size. */
static gpc_model *model_without(const gpc_model *m, size_t i)
{
    size_t n = m->X->size1, d = m->X->size2;
    gpc_model *s = gpc_calloc(1, sizeof *s);
    *s = *m;
    s->class_store = NULL; /* the names stay m's */
    s->kernel = gpc_kernel_clone(m->kernel);
    s->X = gpc_matrix_alloc(n - 1, d);
    s->y = gpc_vector_alloc(n - 1);
    for (size_t a = 0, b = 0; a < n; a++) {
        if (a == i)
            continue;
        gsl_vector_const_view r = gsl_matrix_const_row(m->X, a);
        gsl_matrix_set_row(s->X, b, &r.vector);
        gsl_vector_set(s->y, b++, gsl_vector_get(m->y, a));
    }
    s->state = gpc_matrix_calloc(n - 1, m->state->size2);
    return s;
}

/* Row i of every output of a from row 0 of b. */
static void copy_row(gpc_prediction *a, size_t i, const gpc_prediction *b)
{
    gsl_matrix *to[] = {a->mean, a->cov, a->prob, a->plugin};
    const gsl_matrix *from[] = {b->mean, b->cov, b->prob, b->plugin};
    for (size_t k = 0; k < 4; k++) {
        gsl_vector_const_view r = gsl_matrix_const_row(from[k], 0);
        gsl_matrix_set_row(to[k], i, &r.vector);
    }
}

int gpc_model_loo_exact(const gpc_model *m, gpc_prediction *out)
{
    size_t n = m->X->size1;
    int has = check_has_training(m, "leave-one-out");
    if (has != GPC_OK)
        return has;
    if (n < 2)
        return gpc_fail(GPC_EUSAGE, "leave-one-out needs at least two training cases");
    if (gpc_kernel_has_gram(m->kernel))
        return gpc_fail(GPC_EUSAGE, "exact leave-one-out refits drop training cases, and the "
                        "columns of a gram term cannot follow; use the method's own estimate "
                        "(--loo without =exact) or refit with the Gram matrix recomputed");
    gpc_prediction *one = gpc_prediction_alloc(m, 1);
    int st = GPC_OK;
    gpc_progress clock; /* n refits of O(n^3) each: how long the rest will take */
    gpc_progress_start(&clock, "leave-one-out refit", 0, (long)n, gpc_progress_clock());
    char head[256];
    for (size_t i = 0; st == GPC_OK && i < n; i++) {
        gpc_model *s = model_without(m, i);
        gsl_matrix_const_view xi = gsl_matrix_const_submatrix(m->X, i, 0, 1, m->X->size2);
        st = refit(s, gpc_kernel_params(m->kernel), 1);
        if (st == GPC_OK)
            st = gpc_model_predict(s, &xi.matrix, one);
        if (st == GPC_OK)
            copy_row(out, i, one);
        else
            st = gpc_fail(st, "leave-one-out without training case %zu: %s", i + 1,
                          gpc_errmsg());
        gpc_model_free(s);
        if ((i + 1) % 50 == 0)
            gpc_info(1, "%s", gpc_progress_format(&clock, (long)(i + 1), gpc_progress_clock(),
                                                  head, sizeof head));
    }
    gpc_prediction_free(one);
    return st;
}
