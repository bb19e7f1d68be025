#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ep.h"
#include "laplace.h"

void gpc_model_free(gpc_model *m)
{
    if (!m)
        return;
    gpc_kernel_free(m->kernel);
    gsl_matrix_free(m->X);
    gsl_vector_free(m->y);
    gsl_vector_free(m->f);
    gsl_vector_free(m->tau);
    gsl_vector_free(m->nu);
    free(m);
}

int gpc_model_write(FILE *out, const char *name, const gpc_model *m)
{
    const gpc_kernel *k = m->kernel;
    size_t n = m->X->size1, d = m->X->size2, p = gpc_kernel_nparams(k);
    fprintf(out, "gpc-model %d\nmethod %s\nlikelihood %s", GPC_MODEL_VERSION, m->method,
            gpc_lik_name(m->lik));
    if (m->label_noise > 0.0)
        fprintf(out, " %.17g", m->label_noise);
    fprintf(out, "\nkernel %s\ndim %zu\n", gpc_kernel_spec(k), d);
    fprintf(out, "hyperparameters %zu\n", p);
    for (size_t j = 0; j < p; j++)
        fprintf(out, "%s %.17g\n", gpc_kernel_param_name(k, j), gpc_kernel_params(k)[j]);
    fprintf(out, "fit %s\nlog_evidence %.17g\ntraining %zu\n# y %s x1..x%zu\n", m->fit,
            m->log_evidence, n, m->tau ? "tau nu" : "f", d);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%g", gsl_vector_get(m->y, i));
        if (m->tau)
            fprintf(out, " %.17g %.17g", gsl_vector_get(m->tau, i), gsl_vector_get(m->nu, i));
        else
            fprintf(out, " %.17g", gsl_vector_get(m->f, i));
        for (size_t l = 0; l < d; l++)
            fprintf(out, " %.17g", gsl_matrix_get(m->X, i, l));
        fputc('\n', out);
    }
    if (ferror(out))
        return gpc_fail(GPC_EINPUT, "%s: write error: %s", name, strerror(errno));
    return GPC_OK;
}

/* ---- reading ----------------------------------------------------------- */

typedef struct {
    FILE *f;
    const char *name;
    char *buf;
    size_t cap;
    size_t line;
} reader;

/* Next line that is neither blank nor a comment, without its newline;
 * NULL at the end. */
static char *next_line(reader *r)
{
    while (getline(&r->buf, &r->cap, r->f) >= 0) {
        r->line++;
        char *s = r->buf;
        s[strcspn(s, "\r\n")] = '\0';
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s && *s != '#')
            return s;
    }
    return NULL;
}

/* Read "key value" where value is the rest of the line. */
static int expect_key(reader *r, const char *key, char **value)
{
    char *s = next_line(r);
    size_t kl = strlen(key);
    if (!s)
        return gpc_fail(GPC_EINPUT, "%s:%zu: model file ends early, expected '%s'", r->name,
                        r->line, key);
    if (strncmp(s, key, kl) != 0 || (s[kl] != ' ' && s[kl] != '\t'))
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected '%s ...' in a gpc model file", r->name,
                        r->line, key);
    s += kl;
    while (*s == ' ' || *s == '\t')
        s++;
    *value = s;
    return GPC_OK;
}

static int parse_number(reader *r, const char *s, double *x, char **end)
{
    char *e;
    errno = 0;
    *x = strtod(s, &e);
    if (e == s || !isfinite(*x))
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected a finite number at '%.20s'", r->name,
                        r->line, s);
    if (end)
        *end = e;
    else if (e[strspn(e, " \t")] != '\0')
        return gpc_fail(GPC_EINPUT, "%s:%zu: unexpected text '%.20s'", r->name, r->line, e);
    return GPC_OK;
}

static int parse_count(reader *r, const char *key, size_t *out)
{
    char *v;
    double x = 0.0;
    int st = expect_key(r, key, &v);
    if (st == GPC_OK)
        st = parse_number(r, v, &x, NULL);
    if (st == GPC_OK && (x < 0 || x != floor(x) || x > 1e9))
        st = gpc_fail(GPC_EINPUT, "%s:%zu: '%s' needs a count", r->name, r->line, key);
    *out = (size_t)x;
    return st;
}

/* "NAME" or "NAME EPS" with a label-flip probability EPS in [0, 1/2). */
static int parse_likelihood(reader *r, char *v, gpc_model *m)
{
    char *rest = v + strcspn(v, " \t");
    int has_eps = *rest != '\0';
    *rest = '\0';
    if (gpc_lik_parse(v, &m->lik) != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s:%zu: %s", r->name, r->line, gpc_errmsg());
    m->label_noise = 0.0;
    if (!has_eps)
        return GPC_OK;
    int st = parse_number(r, rest + 1, &m->label_noise, NULL);
    if (st == GPC_OK && !(m->label_noise >= 0.0 && m->label_noise < 0.5))
        st = gpc_fail(GPC_EINPUT, "%s:%zu: label noise %g is not in [0, 1/2)", r->name,
                      r->line, m->label_noise);
    return st;
}

static int read_header(reader *r, gpc_model *m)
{
    char *v;
    size_t dim, p;
    int st;
    if ((st = expect_key(r, "gpc-model", &v)) != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s:%zu: not a gpc model file (it should start with "
                        "'gpc-model %d')", r->name, r->line, GPC_MODEL_VERSION);
    if (strcmp(v, "1") != 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: model file version %s is not supported (this is "
                        "version %d)", r->name, r->line, v, GPC_MODEL_VERSION);
    if ((st = expect_key(r, "method", &v)) != GPC_OK)
        return st;
    if (strcmp(v, "laplace") != 0 && strcmp(v, "ep") != 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: unknown method '%s'", r->name, r->line, v);
    snprintf(m->method, sizeof m->method, "%s", v);
    if ((st = expect_key(r, "likelihood", &v)) != GPC_OK)
        return st;
    if ((st = parse_likelihood(r, v, m)) != GPC_OK)
        return st;
    char spec[1024];
    if ((st = expect_key(r, "kernel", &v)) != GPC_OK)
        return st;
    snprintf(spec, sizeof spec, "%s", v);
    if ((st = parse_count(r, "dim", &dim)) != GPC_OK)
        return st;
    if (dim == 0 || gpc_kernel_parse(spec, dim, &m->kernel) != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s:%zu: bad kernel or dimension: %s", r->name, r->line,
                        dim ? gpc_errmsg() : "dim is 0");
    if ((st = parse_count(r, "hyperparameters", &p)) != GPC_OK)
        return st;
    if (p != gpc_kernel_nparams(m->kernel))
        return gpc_fail(GPC_EINPUT, "%s:%zu: kernel '%s' has %zu hyperparameters, not %zu",
                        r->name, r->line, spec, gpc_kernel_nparams(m->kernel), p);
    double *theta = malloc(p * sizeof *theta);
    for (size_t j = 0; j < p && st == GPC_OK; j++)
        if ((st = expect_key(r, gpc_kernel_param_name(m->kernel, j), &v)) == GPC_OK)
            st = parse_number(r, v, &theta[j], NULL);
    if (st == GPC_OK)
        gpc_kernel_set_params(m->kernel, theta);
    free(theta);
    if (st != GPC_OK || (st = expect_key(r, "fit", &v)) != GPC_OK)
        return st;
    snprintf(m->fit, sizeof m->fit, "%s", v);
    if ((st = expect_key(r, "log_evidence", &v)) != GPC_OK)
        return st;
    return parse_number(r, v, &m->log_evidence, NULL);
}

static int read_training(reader *r, gpc_model *m)
{
    size_t n, d = gpc_kernel_dim(m->kernel);
    int st = parse_count(r, "training", &n);
    if (st != GPC_OK)
        return st;
    if (n == 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: no training cases", r->name, r->line);
    m->X = gsl_matrix_alloc(n, d);
    m->y = gsl_vector_alloc(n);
    int ep = strcmp(m->method, "ep") == 0;
    size_t s_cols = ep ? 2 : 1; /* per-case state: f, or the sites tau and nu */
    gsl_vector *state[2] = {gsl_vector_alloc(n), ep ? gsl_vector_alloc(n) : NULL};
    if (ep) {
        m->tau = state[0];
        m->nu = state[1];
    } else {
        m->f = state[0];
    }
    for (size_t i = 0; i < n; i++) {
        char *s = next_line(r), *e;
        double x;
        if (!s)
            return gpc_fail(GPC_EINPUT, "%s:%zu: model file truncated: %zu of %zu training "
                            "cases", r->name, r->line, i, n);
        for (size_t c = 0; c < d + 1 + s_cols; c++, s = e) {
            if ((st = parse_number(r, s, &x, &e)) != GPC_OK)
                return st;
            if (c == 0 && x != 1.0 && x != -1.0)
                return gpc_fail(GPC_EINPUT, "%s:%zu: label must be -1 or 1", r->name, r->line);
            if (c == 0)
                gsl_vector_set(m->y, i, x);
            else if (c <= s_cols)
                gsl_vector_set(state[c - 1], i, x);
            else
                gsl_matrix_set(m->X, i, c - 1 - s_cols, x);
        }
        if (s[strspn(s, " \t")] != '\0')
            return gpc_fail(GPC_EINPUT, "%s:%zu: expected %zu numbers", r->name, r->line,
                            d + 1 + s_cols);
    }
    if (next_line(r))
        return gpc_fail(GPC_EINPUT, "%s:%zu: unexpected text after the training cases",
                        r->name, r->line);
    return GPC_OK;
}

int gpc_model_read(const char *path, gpc_model **out)
{
    int is_stdin = !path || strcmp(path, "-") == 0;
    reader r = {is_stdin ? stdin : fopen(path, "r"), is_stdin ? "<stdin>" : path, NULL, 0, 0};
    if (!r.f)
        return gpc_fail(GPC_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    gpc_model *m = calloc(1, sizeof *m);
    int st = read_header(&r, m);
    if (st == GPC_OK)
        st = read_training(&r, m);
    if (st == GPC_OK && ferror(r.f))
        st = gpc_fail(GPC_EINPUT, "%s: read error: %s", r.name, strerror(errno));
    free(r.buf);
    if (!is_stdin)
        fclose(r.f);
    if (st != GPC_OK) {
        gpc_model_free(m);
        return st;
    }
    *out = m;
    return GPC_OK;
}

static int refit_ep(gpc_model *m)
{
    gpc_ep *e = gpc_ep_alloc(m->X->size1, 0);
    int st = gpc_ep_set_likelihood(e, m->lik, m->label_noise);
    if (st == GPC_OK)
        st = gpc_ep_evidence(e, m->kernel, m->X, m->y, &m->log_evidence, NULL);
    if (st == GPC_OK) {
        gsl_vector_memcpy(m->tau, e->tau);
        gsl_vector_memcpy(m->nu, e->nu);
    }
    gpc_ep_free(e);
    return st;
}

int gpc_model_refit(gpc_model *m, const double *theta)
{
    gpc_kernel_set_params(m->kernel, theta);
    if (m->tau)
        return refit_ep(m);
    gpc_laplace *w = gpc_laplace_alloc(m->X->size1, 0, m->lik);
    int st = gpc_laplace_evidence(w, m->kernel, m->X, m->y, &m->log_evidence, NULL);
    if (st == GPC_OK)
        gsl_vector_memcpy(m->f, w->f);
    gpc_laplace_free(w);
    return st;
}

/* ---- prediction -------------------------------------------------------- */

#define PREDICT_BLOCK 512 /* test cases per block: bounds the n x m workspace */

int gpc_model_predict(const gpc_model *m, const gsl_matrix *Xs, gsl_vector *mean,
                      gsl_vector *var, gsl_vector *prob)
{
    size_t n = m->X->size1, ms = Xs->size1;
    gpc_laplace *w = NULL;
    gpc_ep *e = NULL;
    int st;
    if (m->tau) {
        e = gpc_ep_alloc(n, 0);
        gpc_kernel_matrix(m->kernel, m->X, e->K);
        st = gpc_ep_set_sites(e, m->tau, m->nu);
    } else {
        w = gpc_laplace_alloc(n, 0, m->lik);
        gpc_kernel_matrix(m->kernel, m->X, w->K);
        st = gpc_laplace_set_mode(w, m->y, m->f);
    }
    for (size_t s = 0; st == GPC_OK && s < ms; s += PREDICT_BLOCK) {
        size_t b = ms - s < PREDICT_BLOCK ? ms - s : PREDICT_BLOCK;
        gsl_matrix_const_view xs = gsl_matrix_const_submatrix(Xs, s, 0, b, Xs->size2);
        gsl_matrix *Ks = gsl_matrix_alloc(n, b);
        gsl_vector *kss = gsl_vector_alloc(b), *mu = gsl_vector_alloc(b), *v = gsl_vector_alloc(b);
        gpc_kernel_cross(m->kernel, m->X, &xs.matrix, Ks);
        gpc_kernel_diag(m->kernel, &xs.matrix, kss);
        if (e)
            gpc_ep_predict(e, Ks, kss, mu, v);
        else
            gpc_laplace_predict(w, Ks, kss, mu, v);
        for (size_t i = 0; i < b; i++) {
            double mi = gsl_vector_get(mu, i), vi = gsl_vector_get(v, i);
            if (mean)
                gsl_vector_set(mean, s + i, mi);
            if (var)
                gsl_vector_set(var, s + i, vi);
            if (prob)
                gsl_vector_set(prob, s + i,
                               gpc_lik_noisy(m->label_noise, gpc_lik_predict(m->lik, mi, vi)));
        }
        gsl_matrix_free(Ks);
        gsl_vector_free(kss);
        gsl_vector_free(mu);
        gsl_vector_free(v);
    }
    gpc_laplace_free(w);
    gpc_ep_free(e);
    return st;
}
