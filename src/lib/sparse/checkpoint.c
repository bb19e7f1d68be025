#include "sparse/checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "io/keyfile.h"
#include "io/matio.h"
#include "io/output.h"

#define CHECKPOINT_VERSION 1

/* ---- writing ------------------------------------------------------------ */

static void write_settings(FILE *f, const gpc_checkpoint_settings *set, const gpc_train *t)
{
    fprintf(f, "gpc-svgp-checkpoint %d\n", CHECKPOINT_VERSION);
    fprintf(f, "likelihood %s\nkernel %s\ndim %zu\ncases %llu\ndata %llu\nlatent %zu\n",
            set->likelihood, set->kernel, set->dim, (unsigned long long)set->cases,
            set->data_hash, set->latent);
    fprintf(f, "batch %zu\nseed %llu\nrho %.17g\nlearning_rate %.17g\nfixed %s\n"
               "fix_inducing %d\n",
            set->batch, (unsigned long long)set->seed, set->rho, set->lr, set->fixed,
            set->fix_inducing);
    fprintf(f, "step %llu\nepoch %llu\nnext_batch %llu\njitter %.17g\n",
            (unsigned long long)t->step, (unsigned long long)t->epoch,
            (unsigned long long)t->batch, t->jitter);
}

/* Per inducing input j: for each latent function m_c[j] and S_c's row j,
 * then z_j and its Adam moments. */
static void write_inducing(FILE *f, const gpc_train *t)
{
    const gpc_svgp *s = t->s;
    size_t np = t->nparams;
    fprintf(f, "inducing %zu\n# m S1..S%zu z1..z%zu mz1..mz%zu vz1..vz%zu\n", s->m, s->m, s->dim,
            s->dim, s->dim);
    for (size_t j = 0; j < s->m; j++) {
        const char *sep = "";
        for (size_t c = 0; c < s->C; c++) {
            fprintf(f, "%s%.17g", sep, gsl_matrix_get(s->M, c, j));
            sep = " ";
            for (size_t l = 0; l < s->m; l++)
                fprintf(f, " %.17g", gsl_matrix_get(s->S[c], j, l));
        }
        const double *z = s->Z->data + j * s->dim, *mz = t->adam_m + np + j * s->dim,
                     *vz = t->adam_v + np + j * s->dim;
        for (const double *a[] = {z, mz, vz}, **p = a; p < a + 3; p++)
            for (size_t l = 0; l < s->dim; l++)
                fprintf(f, " %.17g", (*p)[l]);
        fputc('\n', f);
    }
}

int gpc_checkpoint_write(const char *path, const gpc_checkpoint_settings *set,
                         const gpc_kernel *k, const gpc_train *t)
{
    gpc_output *o;
    int st = gpc_output_open(path, &o);
    if (st != GPC_OK)
        return st;
    gpc_output_durable(o);
    FILE *f = gpc_output_file(o);
    write_settings(f, set, t);
    fprintf(f, "hyperparameters %zu\n", t->nparams);
    for (size_t j = 0; j < t->nparams; j++)
        fprintf(f, "%s %.17g %.17g %.17g\n", gpc_kernel_param_name(k, j), t->theta[j],
                t->adam_m[j], t->adam_v[j]);
    write_inducing(f, t);
    if ((st = gpc_output_flush(o)) != GPC_OK) {
        gpc_output_abort(o);
        return st;
    }
    return gpc_output_commit(o);
}

/* ---- reading ------------------------------------------------------------ */

static int bad(gpc_keyfile *r, const char *what)
{
    return gpc_fail(GPC_EINPUT, "%s:%zu: %s", r->name, r->line, what);
}

/* "key value" into a string buffer of size bytes. */
static int read_word(gpc_keyfile *r, const char *key, char *buf, size_t size)
{
    char *v;
    int st = gpc_keyfile_expect(r, key, &v);
    if (st == GPC_OK && strlen(v) >= size)
        st = bad(r, "value too long");
    if (st == GPC_OK)
        snprintf(buf, size, "%s", v);
    return st;
}

static int read_double(gpc_keyfile *r, const char *key, double *x)
{
    char *v;
    int st = gpc_keyfile_expect(r, key, &v);
    return st == GPC_OK ? gpc_keyfile_number(r, v, x, NULL) : st;
}

/* "key N" with N a whole number (counts, the seed, the data's hash). */
static int read_u64(gpc_keyfile *r, const char *key, uint64_t *out)
{
    char *v, *e;
    int st = gpc_keyfile_expect(r, key, &v);
    if (st != GPC_OK)
        return st;
    errno = 0;
    unsigned long long x = strtoull(v, &e, 10);
    if (e == v || *v == '-' || errno || e[strspn(e, " \t")] != '\0')
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%s' needs a whole number", r->name, r->line, key);
    *out = (uint64_t)x;
    return GPC_OK;
}

static int read_settings(gpc_keyfile *r, gpc_checkpoint_settings *set, gpc_train *pos,
                         double *jitter)
{
    char *v;
    uint64_t hash, fix;
    int st = gpc_keyfile_expect(r, "gpc-svgp-checkpoint", &v);
    if (st != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s:%zu: not a gpc checkpoint (it should start with "
                        "'gpc-svgp-checkpoint %d')", r->name, r->line, CHECKPOINT_VERSION);
    if (strcmp(v, "1") != 0)
        return bad(r, "checkpoint version not supported (this is version 1)");
    if ((st = read_word(r, "likelihood", set->likelihood, sizeof set->likelihood)) ||
        (st = read_word(r, "kernel", set->kernel, sizeof set->kernel)) ||
        (st = gpc_keyfile_count(r, "dim", &set->dim)) ||
        (st = read_u64(r, "cases", &set->cases)) || (st = read_u64(r, "data", &hash)) ||
        (st = gpc_keyfile_count(r, "latent", &set->latent)) ||
        (st = gpc_keyfile_count(r, "batch", &set->batch)) ||
        (st = read_u64(r, "seed", &set->seed)) || (st = read_double(r, "rho", &set->rho)) ||
        (st = read_double(r, "learning_rate", &set->lr)) ||
        (st = read_word(r, "fixed", set->fixed, sizeof set->fixed)) ||
        (st = read_u64(r, "fix_inducing", &fix)) || (st = read_u64(r, "step", &pos->step)) ||
        (st = read_u64(r, "epoch", &pos->epoch)) || (st = read_u64(r, "next_batch", &pos->batch)) ||
        (st = read_double(r, "jitter", jitter)))
        return st;
    set->data_hash = hash;
    set->fix_inducing = fix != 0;
    if (set->dim == 0 || set->latent == 0 || set->batch == 0 || set->cases == 0 ||
        pos->batch >= (set->cases + set->batch - 1) / set->batch)
        return bad(r, "the checkpoint's sizes are inconsistent: it is damaged");
    return GPC_OK;
}

/* "hyperparameters P" and P lines "name value m v", names as k's. */
static int read_theta(gpc_keyfile *r, const gpc_kernel *k, gpc_train *t)
{
    size_t p;
    int st = gpc_keyfile_count(r, "hyperparameters", &p);
    if (st == GPC_OK && p != t->nparams)
        return gpc_fail(GPC_EINPUT, "%s:%zu: %zu hyperparameters, but kernel '%s' has %zu",
                        r->name, r->line, p, gpc_kernel_spec(k), t->nparams);
    for (size_t j = 0; j < p && st == GPC_OK; j++) {
        char *v, *e;
        if ((st = gpc_keyfile_expect(r, gpc_kernel_param_name(k, j), &v)) != GPC_OK)
            break;
        double *to[3] = {&t->theta[j], &t->adam_m[j], &t->adam_v[j]};
        for (int i = 0; i < 3 && st == GPC_OK; i++, v = e)
            st = gpc_keyfile_number(r, v, to[i], i < 2 ? &e : NULL);
    }
    return st;
}

/* The inducing block: m rows of C (1 + m) + 3 dim numbers. */
static int read_inducing(gpc_keyfile *r, gpc_train *t)
{
    gpc_svgp *s = t->s;
    size_t np = t->nparams, want = s->C * (1 + s->m) + 3 * s->dim;
    for (size_t j = 0; j < s->m; j++) {
        char *line = gpc_keyfile_line(r), *e;
        if (!line)
            return gpc_fail(GPC_EINPUT, "%s:%zu: checkpoint truncated: %zu of %zu inducing "
                            "inputs", r->name, r->line, j, s->m);
        if (gpc_keyfile_tokens(line) != want)
            return gpc_fail(GPC_EINPUT, "%s:%zu: expected %zu numbers, found %zu", r->name,
                            r->line, want, gpc_keyfile_tokens(line));
        for (size_t c = 0; c < s->C; c++)
            for (size_t l = 0; l <= s->m; l++, line = e) {
                double x;
                if (gpc_keyfile_number(r, line, &x, &e) != GPC_OK)
                    return GPC_EINPUT;
                if (l == 0)
                    gsl_matrix_set(s->M, c, j, x);
                else
                    gsl_matrix_set(s->S[c], j, l - 1, x);
            }
        double *to[3] = {s->Z->data + j * s->dim, t->adam_m + np + j * s->dim,
                         t->adam_v + np + j * s->dim};
        for (int i = 0; i < 3; i++)
            for (size_t l = 0; l < s->dim; l++, line = e)
                if (gpc_keyfile_number(r, line, &to[i][l], &e) != GPC_OK)
                    return GPC_EINPUT;
    }
    if (gpc_keyfile_line(r))
        return bad(r, "unexpected text after the inducing inputs");
    return GPC_OK;
}

int gpc_checkpoint_read(const char *path, const gpc_kernel *k, gpc_checkpoint_settings *set,
                        gpc_train **out)
{
    char *text;
    size_t len, m = 0;
    gpc_keyfile r = {NULL, "checkpoint", NULL, NULL, 0};
    int st = gpc_input_read_all(path, &text, &len, &r.name);
    if (st != GPC_OK)
        return st;
    r.pos = text;
    r.end = text + len;
    int ends_in_newline = len > 0 && text[len - 1] == '\n'; /* the reader cuts lines in place */
    gpc_train pos = {0}, *t = NULL;
    double jitter = 0.0;
    st = read_settings(&r, set, &pos, &jitter);
    if (st == GPC_OK && set->dim != gpc_kernel_dim(k))
        st = gpc_fail(GPC_EINPUT, "%s: the checkpoint is for %zu input columns, not %zu",
                      r.name, set->dim, gpc_kernel_dim(k));
    /* the sizes bound what the rest of the file can hold before they are used */
    size_t np = gpc_kernel_nparams(k);
    if (st == GPC_OK && gpc_keyfile_next_is(&r, "hyperparameters") == 0)
        st = bad(&r, "expected 'hyperparameters'");
    if (st == GPC_OK) {
        /* peek at "inducing m" to size the state: it follows the p lines */
        const char *ind = strstr(r.pos, "\ninducing ");
        size_t row = ind && sscanf(ind + 10, "%zu", &m) == 1
                         ? gpc_size_add(gpc_size_mul(set->latent, gpc_size_add(m, 1)),
                                        gpc_size_mul(3, set->dim))
                         : SIZE_MAX;
        if (m == 0 || row == SIZE_MAX || m > gpc_keyfile_left(&r) / 2 / row)
            st = gpc_fail(GPC_EINPUT, "%s: the checkpoint's inducing block is missing or "
                          "larger than the file: it is damaged", r.name);
    }
    if (st == GPC_OK) {
        t = gpc_train_alloc(set->latent, m, set->dim, np);
        t->step = pos.step;
        t->epoch = pos.epoch;
        t->batch = pos.batch;
        t->jitter = jitter;
        st = read_theta(&r, k, t);
    }
    size_t mm;
    if (st == GPC_OK && (st = gpc_keyfile_count(&r, "inducing", &mm)) == GPC_OK)
        st = mm == m ? read_inducing(&r, t) : bad(&r, "expected the inducing block here");
    if (st == GPC_OK && !ends_in_newline)
        st = gpc_fail(GPC_EINPUT, "%s: the last line has no end of line, so the checkpoint "
                      "was cut short", r.name);
    free(text);
    if (st != GPC_OK) {
        gpc_train_free(t);
        return st;
    }
    *out = t;
    return GPC_OK;
}

/* ---- comparing ---------------------------------------------------------- */

int gpc_checkpoint_diff(const gpc_checkpoint_settings *a, const gpc_checkpoint_settings *b,
                        const char *at_a, const char *at_b, char *buf, size_t size)
{
    char x[64], y[64];
#define SAME_STR(field, what)                                                                \
    if (strcmp(a->field, b->field) != 0) {                                                   \
        snprintf(buf, size, "%s %s %s, %s %s", what, a->field, at_a, b->field, at_b);        \
        return 1;                                                                            \
    }
#define SAME_NUM(field, what, fmt, cast)                                                     \
    if (a->field != b->field) {                                                              \
        snprintf(x, sizeof x, fmt, (cast)a->field);                                          \
        snprintf(y, sizeof y, fmt, (cast)b->field);                                          \
        snprintf(buf, size, "%s %s %s, %s %s", what, x, at_a, y, at_b);                      \
        return 1;                                                                            \
    }
    SAME_STR(likelihood, "likelihood")
    SAME_STR(kernel, "kernel")
    SAME_NUM(dim, "input columns", "%llu", unsigned long long)
    SAME_NUM(cases, "cases", "%llu", unsigned long long)
    SAME_NUM(data_hash, "data hash", "%llu", unsigned long long)
    SAME_NUM(latent, "latent functions", "%llu", unsigned long long)
    SAME_NUM(batch, "batch", "%llu", unsigned long long)
    SAME_NUM(seed, "seed", "%llu", unsigned long long)
    SAME_NUM(rho, "natural step", "%.17g", double)
    SAME_NUM(lr, "learning rate", "%.17g", double)
    SAME_STR(fixed, "fixed hyperparameters")
    SAME_NUM(fix_inducing, "fixed inducing inputs", "%d", int)
#undef SAME_STR
#undef SAME_NUM
    return 0;
}

int gpc_checkpoint_same(const char *path, const gpc_checkpoint_settings *file,
                        const gpc_checkpoint_settings *run)
{
    char what[2400];
    if (!gpc_checkpoint_diff(file, run, "there", "here", what, sizeof what))
        return GPC_OK;
    return gpc_fail(GPC_EINPUT, "%s: the checkpoint is of another run (%s): give the options "
                    "and data it was written with, or remove it to start afresh", path, what);
}
