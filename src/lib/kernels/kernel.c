#include "kernels/kernel.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_math.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "io/colnames.h"
#include "linalg/vexp.h"

typedef enum { T_ARD, T_SE, T_LINEAR, T_NN, T_BIAS, T_JITTER, T_GRAM } term_type;

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
} term;

struct gpc_kernel {
    size_t dim, nterms;
    size_t nparams;  /* hyperparameters of one copy of the terms */
    size_t copies;   /* 1, or C for ":per-class=C": C independent sets of them */
    size_t total;    /* copies * nparams: the length of theta */
    term terms[GPC_KERNEL_MAX_TERMS];
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

static const char *const type_names[] = {"ard", "se", "linear", "nn", "bias", "jitter", "gram"};
#define N_TYPES (sizeof type_names / sizeof type_names[0])

/* ---- parsing ----------------------------------------------------------- */

static size_t term_nparams(term_type t, size_t ncols)
{
    switch (t) {
    case T_ARD: return 1 + ncols;
    case T_SE: return 2;
    case T_LINEAR: return 1;
    case T_NN: return 3;
    default: return 1; /* bias, jitter */
    }
}

/* Parse "1-3,5" into a sorted-as-given list of 0-based columns. */
static int parse_cols(const char *what, const char *s, size_t dim, size_t **cols,
                      size_t *ncols)
{
    size_t cap = 8, n = 0;
    size_t *c = gpc_malloc(cap * sizeof *c);
    const char *p = s;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b;
        if (end == p)
            goto bad;
        b = a;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p)
                goto bad;
        }
        if (a < 1 || b < a || (size_t)b > dim) {
            free(c);
            return gpc_fail(GPC_EUSAGE, "%s '%s': columns run from 1 to %zu", what, s, dim);
        }
        for (long j = a; j <= b; j++) {
            if (n == cap)
                c = gpc_realloc(c, (cap *= 2) * sizeof *c);
            c[n++] = (size_t)(j - 1);
        }
        p = end;
        if (*p == ',' && p[1] != '\0')
            p++;
        else if (*p)
            goto bad;
    }
    if (n == 0)
        goto bad;
    for (size_t i = 0; i < n; i++) /* a repeated column would repeat a name */
        for (size_t j = 0; j < i; j++)
            if (c[i] == c[j]) {
                size_t twice = c[i] + 1;
                free(c);
                return gpc_fail(GPC_EUSAGE, "%s '%s': column %zu appears twice", what, s, twice);
            }
    *cols = c;
    *ncols = n;
    return GPC_OK;
bad:
    free(c);
    return gpc_fail(GPC_EUSAGE, "%s '%s': expected a list like 1-3,5", what, s);
}

static int parse_term(const char *text, size_t dim, term *t)
{
    char name[64];
    const char *at = strchr(text, '@');
    size_t len = at ? (size_t)(at - text) : strlen(text);
    if (len == 0 || len >= sizeof name)
        return gpc_fail(GPC_EUSAGE, "kernel spec: empty or overlong term '%s'", text);
    memcpy(name, text, len);
    name[len] = '\0';
    size_t i;
    for (i = 0; i < N_TYPES && strcmp(name, type_names[i]) != 0; i++)
        ;
    if (i == N_TYPES)
        return gpc_fail(GPC_EUSAGE,
                        "unknown kernel term '%s' (use ard, se, linear, nn, bias, jitter, gram)",
                        name);
    t->type = (term_type)i;
    t->all_cols = at == NULL;
    if (at) {
        int rc = parse_cols("kernel columns", at + 1, dim, &t->cols, &t->ncols);
        if (rc)
            return rc;
    } else {
        t->ncols = dim;
        t->cols = gpc_mallocarray(dim ? dim : 1, sizeof *t->cols);
        for (size_t j = 0; j < dim; j++)
            t->cols[j] = j;
    }
    t->nparams = term_nparams(t->type, t->ncols);
    return GPC_OK;
}

static void term_local_name(const term *t, int simplex, size_t p, char *buf, size_t size)
{
    static const char *const nn_names[] = {"log_v0", "log_s0", "log_s"};
    if (simplex && p == 0 && t->type != T_JITTER) {
        snprintf(buf, size, "log_weight");
        return;
    }
    switch (t->type) {
    case T_ARD:
        if (p == 0)
            snprintf(buf, size, "log_v0");
        else
            snprintf(buf, size, "log_w%zu", t->cols[p - 1] + 1);
        break;
    case T_SE: snprintf(buf, size, p == 0 ? "log_v0" : "log_w"); break;
    case T_LINEAR:
    case T_GRAM: snprintf(buf, size, "log_v"); break;
    case T_NN: snprintf(buf, size, "%s", nn_names[p]); break;
    case T_BIAS: snprintf(buf, size, "log_bias"); break;
    case T_JITTER: snprintf(buf, size, "log_jitter"); break;
    }
}

typedef struct {
    char name[32];
    size_t term;
} local_name;

static int local_name_cmp(const void *a, const void *b)
{
    return strcmp(((const local_name *)a)->name, ((const local_name *)b)->name);
}

/* Names are the terms' own unless two terms would share one; then every name
 * of the clashing terms gets the prefix "t<k>.".  Clashes are found by
 * sorting the names, not by comparing every pair: ard+ard over thousands of
 * columns would otherwise take minutes. */
static void assign_names(gpc_kernel *k)
{
    int clash[GPC_KERNEL_MAX_TERMS] = {0};
    local_name *all = gpc_mallocarray(k->nparams ? k->nparams : 1, sizeof *all);
    size_t n = 0;
    for (size_t t = 0; t < k->nterms; t++)
        for (size_t p = 0; p < k->terms[t].nparams; p++, n++) {
            term_local_name(&k->terms[t], k->simplex, p, all[n].name, sizeof all[n].name);
            all[n].term = t;
        }
    qsort(all, n, sizeof *all, local_name_cmp);
    /* Within a run of equal names every term meets a different one next to it
     * (names within one term are distinct). */
    for (size_t i = 1; i < n; i++)
        if (all[i].term != all[i - 1].term && strcmp(all[i].name, all[i - 1].name) == 0)
            clash[all[i].term] = clash[all[i - 1].term] = 1;
    free(all);
    for (size_t t = 0; t < k->nterms; t++)
        for (size_t p = 0; p < k->terms[t].nparams; p++) {
            char buf[32];
            term_local_name(&k->terms[t], k->simplex, p, buf, sizeof buf);
            if (clash[t])
                snprintf(k->names[k->terms[t].offset + p], GPC_NAME_MAX, "t%zu.%s", t + 1, buf);
            else
                snprintf(k->names[k->terms[t].offset + p], GPC_NAME_MAX, "%s", buf);
        }
    /* per-class copies: the class number appended, "log_v0.c2" */
    for (size_t c = k->copies; c-- > 0;)
        for (size_t j = 0; j < k->nparams; j++) {
            char buf[GPC_NAME_MAX];
            snprintf(buf, sizeof buf, "%s", k->names[j]);
            if (k->copies > 1)
                snprintf(k->names[c * k->nparams + j], GPC_NAME_MAX, "%.36s.c%u", buf,
                         (unsigned)(c + 1) % 10000u);
        }
}

/* The given spec without blanks is canonical up to the discrete clause,
 * which gpc_kernel_parse rewrites.  A spec too long to keep whole is an error:
 * cut short, it would name another kernel in the model file. */
static int canonical_spec(gpc_kernel *k, const char *given)
{
    size_t j = 0;
    for (const char *p = given; *p; p++)
        if (!isspace((unsigned char)*p)) {
            if (j + 1 == sizeof k->spec)
                return gpc_fail(GPC_EUSAGE, "kernel spec too long (more than %zu characters)",
                                sizeof k->spec - 1);
            k->spec[j++] = *p;
        }
    k->spec[j] = '\0';
    return GPC_OK;
}

/* The columns flagged in flags[0..dim) as a 1-based list in increasing order,
 * runs of three or more as a range: "1-3,5,7,8". */
static void format_cols(const unsigned char *flags, size_t dim, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t a = 0; a < dim; a++) {
        if (!flags[a])
            continue;
        size_t b = a;
        while (b + 1 < dim && flags[b + 1])
            b++;
        const char *sep = len ? "," : "";
        int w;
        if (b >= a + 2)
            w = snprintf(buf + len, size - len, "%s%zu-%zu", sep, a + 1, b + 1);
        else if (b == a + 1)
            w = snprintf(buf + len, size - len, "%s%zu,%zu", sep, a + 1, b + 1);
        else
            w = snprintf(buf + len, size - len, "%s%zu", sep, a + 1);
        if (w < 0 || (size_t)w >= size - len)
            return; /* cannot happen: the list is never longer than the one given */
        len += (size_t)w;
        a = b;
    }
}

/* ":per-class=C": C >= 2 classes, each with its own hyperparameters. */
static int parse_per_class(gpc_kernel *k, const char *value, const char *spec)
{
    char *end;
    errno = 0;
    unsigned long C = strtoul(value, &end, 10);
    if (k->copies > 1)
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s': per-class= is given twice", spec);
    if (!isdigit((unsigned char)value[0]) || *end || errno || C < 2 || C > GPC_KERNEL_MAX_CLASSES)
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s': per-class needs the number of classes, "
                        "2 to %d, as in ard:per-class=3", spec, GPC_KERNEL_MAX_CLASSES);
    k->copies = C;
    return GPC_OK;
}

/* ":simplex" or ":simplex=SHAPE,RATE": the terms weighted on the simplex,
 * with the Gamma hyperprior on the weights' Dirichlet parameters. */
static int parse_simplex(gpc_kernel *k, const char *value, const char *spec)
{
    if (k->simplex)
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s': simplex is given twice", spec);
    k->simplex = 1;
    k->dir_shape = k->dir_rate = 1.0;
    if (!value)
        return GPC_OK;
    char *end;
    errno = 0;
    double a = strtod(value, &end), b = 0.0;
    if (end != value && *end == ',') {
        const char *p = end + 1;
        b = strtod(p, &end);
        if (end == p)
            b = 0.0;
    }
    if (*end || errno || !(a > 0 && a < 1e6) || !(b > 0 && b < 1e6))
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s': simplex=SHAPE,RATE needs the shape and "
                        "rate of the Gamma prior on the weights' Dirichlet parameters, both "
                        "positive, as in se@1-4+se@5-9:simplex=1,1", spec);
    k->dir_shape = a;
    k->dir_rate = b;
    return GPC_OK;
}

/* ":discrete=COLUMNS": the columns whose distance is the 0/1 mismatch. */
static int parse_discrete(gpc_kernel *k, const char *value, const char *spec)
{
    if (!value)
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s': discrete needs its columns, as in "
                        "discrete=2,4", spec);
    if (k->discrete)
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s': discrete= is given twice "
                        "(list all discrete columns in one clause)", spec);
    if (strchr(value, '+'))
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s': the discrete clause comes after all "
                        "the terms, as in ard+bias:discrete=2,4", spec);
    size_t *cols, n;
    int rc = parse_cols("discrete columns", value, k->dim, &cols, &n);
    if (rc != GPC_OK)
        return gpc_fail(rc, "kernel spec '%s': %s", spec, gpc_errmsg());
    k->discrete = gpc_calloc(k->dim, 1);
    for (size_t l = 0; l < n; l++)
        k->discrete[cols[l]] = 1;
    free(cols);
    return GPC_OK;
}

#define CLAUSES "discrete=COLUMNS, per-class=C and simplex[=SHAPE,RATE], e.g. " \
                "ard+bias:discrete=2,4"

/* The clauses after the terms: ':'-separated items "name" or "name=value". */
static int parse_clauses(gpc_kernel *k, const char *text, const char *spec)
{
    char *copy = gpc_strdup(text), *p = copy;
    int rc = GPC_OK;
    for (;;) {
        char *end = strchr(p, ':'), *value;
        if (end)
            *end = '\0';
        if ((value = strchr(p, '=')) != NULL)
            *value++ = '\0';
        if (*p == '\0')
            rc = gpc_fail(GPC_EUSAGE, "kernel spec '%s': empty clause after ':' (the clauses "
                          "are " CLAUSES ")", spec);
        else if (strcmp(p, "per-class") == 0)
            rc = parse_per_class(k, value ? value : "", spec);
        else if (strcmp(p, "discrete") == 0)
            rc = parse_discrete(k, value, spec);
        else if (strcmp(p, "simplex") == 0)
            rc = parse_simplex(k, value, spec);
        else
            rc = gpc_fail(GPC_EUSAGE, "kernel spec '%s': unknown clause '%s' (the clauses are "
                          CLAUSES ")", spec, p);
        if (rc != GPC_OK || !end)
            break;
        p = end + 1;
    }
    free(copy);
    return rc;
}

/* The simplex needs two weighted terms (jitter is not weighted), and the
 * terms that read inputs must read separate feature sets: weights of terms
 * over shared columns would not say which features matter. */
static int check_simplex(const gpc_kernel *k, const char *spec)
{
    size_t J = 0;
    for (size_t t = 0; t < k->nterms; t++)
        J += k->terms[t].type != T_JITTER;
    if (J < 2)
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s': simplex weights two or more terms "
                        "(jitter is not weighted), as in se@1-4+se@5-9:simplex", spec);
    size_t *owner = gpc_calloc(k->dim ? k->dim : 1, sizeof *owner); /* term + 1, or 0 */
    int rc = GPC_OK;
    for (size_t t = 0; t < k->nterms && rc == GPC_OK; t++) {
        const term *tm = &k->terms[t];
        if (tm->type == T_JITTER || tm->type == T_BIAS)
            continue; /* they read no inputs */
        for (size_t l = 0; l < tm->ncols && rc == GPC_OK; l++) {
            size_t c = tm->cols[l];
            if (owner[c])
                rc = gpc_fail(GPC_EUSAGE, "kernel spec '%s': terms %zu and %zu both read "
                              "column %zu; on the simplex each term weighs its own feature "
                              "set (give each its columns with @, as in se@1-4+se@5-9:simplex)",
                              spec, owner[c], t + 1, c + 1);
            owner[c] = t + 1;
        }
    }
    free(owner);
    return rc;
}

/* Give the ard and se terms their per-column discrete flags; every discrete
 * column must be read by one of them. */
static int apply_discrete(gpc_kernel *k, const char *spec)
{
    unsigned char *used = gpc_calloc(k->dim ? k->dim : 1, 1);
    for (size_t ti = 0; ti < k->nterms; ti++) {
        term *t = &k->terms[ti];
        if (t->type != T_ARD && t->type != T_SE)
            continue;
        for (size_t l = 0; l < t->ncols; l++)
            if (k->discrete[t->cols[l]]) {
                if (!t->disc)
                    t->disc = gpc_calloc(t->ncols, 1);
                t->disc[l] = 1;
                used[t->cols[l]] = 1;
            }
    }
    int rc = GPC_OK;
    for (size_t c = 0; c < k->dim && rc == GPC_OK; c++)
        if (k->discrete[c] && !used[c])
            rc = gpc_fail(GPC_EUSAGE, "kernel spec '%s': discrete column %zu is read by no ard "
                          "or se term, so marking it would have no effect", spec, c + 1);
    free(used);
    return rc;
}

int gpc_kernel_parse(const char *spec, size_t dim, gpc_kernel **out)
{
    /* Every term keeps a list of its columns and ard a weight per column, so
     * an absurd dimension (from a damaged model or chain file) would end in
     * "out of memory" without saying why; no data set comes near this one. */
    if (dim > GPC_KERNEL_MAX_DIM)
        return gpc_fail(GPC_EINPUT, "kernel for %zu input columns: more than gpc handles "
                        "(at most %u)", dim, GPC_KERNEL_MAX_DIM);
    gpc_kernel *k = gpc_calloc(1, sizeof *k);
    k->dim = dim;
    k->copies = 1;
    if (canonical_spec(k, spec) != GPC_OK) {
        free(k);
        return GPC_EUSAGE;
    }
    if (k->spec[0] == '\0') {
        free(k);
        return gpc_fail(GPC_EUSAGE, "empty kernel spec (try ard)");
    }
    /* terms[] is the sum of terms, clauses what follows the first ':' */
    char *terms = gpc_strdup(k->spec), *clauses = strchr(terms, ':');
    if (clauses)
        *clauses++ = '\0';
    size_t len = strlen(terms);
    if (len == 0) {
        free(terms);
        free(k);
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s' has no terms before ':' (try ard%s)", spec,
                        strchr(spec, ':'));
    }
    if (terms[0] == '+' || terms[len - 1] == '+' || strstr(terms, "++")) {
        free(terms);
        free(k);
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s' has an empty term", spec);
    }
    char *copy = gpc_strdup(terms), *save = NULL;
    int rc = GPC_OK;
    for (char *tok = strtok_r(copy, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
        if (k->nterms == GPC_KERNEL_MAX_TERMS) {
            rc = gpc_fail(GPC_EUSAGE, "kernel spec: more than %d terms", GPC_KERNEL_MAX_TERMS);
            break;
        }
        term *t = &k->terms[k->nterms];
        if ((rc = parse_term(tok, dim, t)) != GPC_OK)
            break;
        t->text = gpc_strdup(tok);
        t->offset = k->nparams;
        k->nparams += t->nparams;
        k->nterms++;
    }
    free(copy);
    if (rc == GPC_OK && k->nterms == 0)
        rc = gpc_fail(GPC_EUSAGE, "kernel spec '%s' has no terms", spec);
    if (rc == GPC_OK && clauses)
        rc = parse_clauses(k, clauses, spec);
    if (rc == GPC_OK && k->discrete)
        rc = apply_discrete(k, spec);
    if (rc == GPC_OK && k->simplex)
        rc = check_simplex(k, spec);
    if (rc == GPC_OK && (k->discrete || k->copies > 1 || k->simplex)) {
        /* canonical: the terms as given, the discrete columns in increasing
         * order, the simplex's hyperprior unless it is the default, the
         * number of classes (last: gpc_kernel_base cuts it off) */
        char list[sizeof k->spec] = "", simplex[80] = "", classes[32] = "";
        if (k->discrete) {
            strcpy(list, ":discrete=");
            format_cols(k->discrete, dim, list + strlen(list), sizeof list - strlen(list));
        }
        if (k->simplex && k->dir_shape == 1.0 && k->dir_rate == 1.0)
            strcpy(simplex, ":simplex");
        else if (k->simplex)
            snprintf(simplex, sizeof simplex, ":simplex=%.17g,%.17g", k->dir_shape, k->dir_rate);
        if (k->copies > 1)
            snprintf(classes, sizeof classes, ":per-class=%zu", k->copies);
        int w = snprintf(k->spec, sizeof k->spec, "%s%s%s%s", terms, list, simplex, classes);
        /* the list is never longer than the one given, but a spec cut short
         * would name another kernel */
        if (w < 0 || (size_t)w >= sizeof k->spec)
            rc = gpc_fail(GPC_EUSAGE, "kernel spec too long (more than %zu characters)",
                          sizeof k->spec - 1);
    }
    free(terms);
    if (rc) {
        gpc_kernel_free(k);
        return rc;
    }
    k->total = k->copies * k->nparams;
    k->theta = gpc_calloc(k->total, sizeof *k->theta);
    k->etheta = gpc_calloc(k->total, sizeof *k->etheta);
    k->names = gpc_calloc(k->total, sizeof *k->names);
    assign_names(k);
    double *th0 = gpc_mallocarray(k->total, sizeof *th0);
    gpc_kernel_default_params(k, th0);
    gpc_kernel_set_params(k, th0);
    free(th0);
    *out = k;
    return GPC_OK;
}

void gpc_kernel_free(gpc_kernel *k)
{
    if (!k)
        return;
    for (size_t t = 0; t < k->nterms; t++) {
        free(k->terms[t].cols);
        free(k->terms[t].disc);
        free(k->terms[t].text);
    }
    free(k->discrete);
    free(k->theta);
    free(k->etheta);
    free(k->names);
    free(k->labels);
    gpc_colnames_free(k->colnames);
    free(k);
}

gpc_kernel *gpc_kernel_clone(const gpc_kernel *k)
{
    gpc_kernel *c;
    if (gpc_kernel_parse(k->spec, k->dim, &c) != GPC_OK)
        return NULL;
    gpc_kernel_set_params(c, k->theta);
    gpc_kernel_name_columns(c, k->colnames);
    return c;
}

const char *gpc_kernel_spec(const gpc_kernel *k) { return k->spec; }
size_t gpc_kernel_dim(const gpc_kernel *k) { return k->dim; }
size_t gpc_kernel_nparams(const gpc_kernel *k) { return k->total; }
size_t gpc_kernel_copies(const gpc_kernel *k) { return k->copies; }

gpc_kernel *gpc_kernel_base(const gpc_kernel *k)
{
    char *spec = gpc_strdup(k->spec), *clause = strstr(spec, ":per-class=");
    gpc_kernel *b;
    if (clause)
        *clause = '\0';
    int rc = gpc_kernel_parse(spec, k->dim, &b);
    free(spec);
    if (rc != GPC_OK)
        return NULL;
    gpc_kernel_set_params(b, k->theta);
    gpc_kernel_name_columns(b, k->colnames);
    return b;
}
const char *gpc_kernel_param_name(const gpc_kernel *k, size_t j) { return k->names[j]; }

char *const *gpc_kernel_colnames(const gpc_kernel *k) { return k->colnames; }

const char *gpc_kernel_param_label(const gpc_kernel *k, size_t j)
{
    return k->labels ? k->labels[j] : k->names[j];
}

/* names[j] with its "log_w<col+1>" written "log_w.<word>" in label; 0 if
 * the column's name gives no word or the label would be too long. */
static int column_label(const gpc_kernel *k, size_t j, size_t col, char *label)
{
    char word[GPC_NAME_MAX], num[32];
    if (!gpc_colnames_word(k->colnames[col], word, sizeof word))
        return 0;
    snprintf(num, sizeof num, "log_w%zu", col + 1);
    const char *name = k->names[j], *at = strstr(name, num);
    if (!at)
        return 0;
    int w = snprintf(label, GPC_NAME_MAX, "%.*slog_w.%s%s", (int)(at - name), name, word,
                     at + strlen(num));
    return w > 0 && w < GPC_NAME_MAX;
}

static int label_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Labels two columns' words share ("a b" and "a_b") go back to the numbered
 * names, so that every label names one hyperparameter.  Found by sorting. */
static void unshare_labels(gpc_kernel *k)
{
    char **byname = gpc_mallocarray(k->total ? k->total : 1, sizeof *byname);
    size_t n = 0;
    for (size_t j = 0; j < k->total; j++)
        if (strcmp(k->labels[j], k->names[j]) != 0)
            byname[n++] = k->labels[j];
    qsort(byname, n, sizeof *byname, label_cmp);
    unsigned char *shared = gpc_calloc(k->total ? k->total : 1, 1);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(byname[i], byname[i - 1])) {
            shared[(size_t)(byname[i] - k->labels[0]) / GPC_NAME_MAX] = 1;
            shared[(size_t)(byname[i - 1] - k->labels[0]) / GPC_NAME_MAX] = 1;
        }
    for (size_t j = 0; j < k->total; j++)
        if (shared[j])
            memcpy(k->labels[j], k->names[j], GPC_NAME_MAX);
    free(shared);
    free(byname);
}

void gpc_kernel_name_columns(gpc_kernel *k, char *const *colnames)
{
    char **copy = gpc_colnames_copy(colnames);
    free(k->labels);
    gpc_colnames_free(k->colnames);
    k->labels = NULL;
    k->colnames = copy;
    if (!copy)
        return;
    size_t ncols = gpc_colnames_count(copy);
    k->labels = gpc_calloc(k->total ? k->total : 1, sizeof *k->labels);
    for (size_t j = 0; j < k->total; j++) {
        long col = gpc_kernel_param_column(k, j);
        if (col < 0 || (size_t)col >= ncols || !column_label(k, j, (size_t)col, k->labels[j]))
            memcpy(k->labels[j], k->names[j], GPC_NAME_MAX);
    }
    unshare_labels(k);
}
const double *gpc_kernel_params(const gpc_kernel *k) { return k->theta; }

long gpc_kernel_param_column(const gpc_kernel *k, size_t j)
{
    size_t local = j % k->nparams;
    for (size_t t = 0; t < k->nterms; t++) {
        const term *tm = &k->terms[t];
        if (local >= tm->offset && local < tm->offset + tm->nparams)
            return tm->type == T_ARD && local > tm->offset
                       ? (long)tm->cols[local - tm->offset - 1] : -1;
    }
    return -1;
}

long gpc_kernel_param_index(const gpc_kernel *k, const char *name)
{
    for (size_t j = 0; j < k->total; j++)
        if (strcmp(k->names[j], name) == 0)
            return (long)j;
    for (size_t j = 0; k->labels && j < k->total; j++)
        if (strcmp(k->labels[j], name) == 0)
            return (long)j;
    return -1;
}

/* Shift one copy's log weights so that the weights sum to one: the kernel
 * depends only on their ratios, and the stored values are then the logs of
 * the weights themselves. */
static void normalise_weights(const gpc_kernel *k, double *theta)
{
    double mx = -INFINITY, sum = 0.0;
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type != T_JITTER)
            mx = fmax(mx, theta[k->terms[t].offset]);
    if (!isfinite(mx))
        return; /* a NaN or infinite weight is the caller's to report */
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type != T_JITTER)
            sum += exp(theta[k->terms[t].offset] - mx);
    double lse = mx + log(sum);
    if (fabs(lse) < 1e-14)
        return; /* already normalised: setting stored values changes no bit */
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type != T_JITTER)
            theta[k->terms[t].offset] -= lse;
}

void gpc_kernel_set_params(gpc_kernel *k, const double *theta)
{
    memcpy(k->theta, theta, k->total * sizeof *theta);
    if (k->simplex)
        for (size_t c = 0; c < k->copies; c++)
            normalise_weights(k, k->theta + c * k->nparams);
    for (size_t j = 0; j < k->total; j++)
        k->etheta[j] = exp(k->theta[j]);
}

int gpc_kernel_simplex(const gpc_kernel *k, double *shape, double *rate)
{
    if (shape)
        *shape = k->dir_shape;
    if (rate)
        *rate = k->dir_rate;
    return k->simplex;
}

int gpc_kernel_is_weight(const gpc_kernel *k, size_t j)
{
    if (!k->simplex || j >= k->total)
        return 0;
    j %= k->nparams;
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].offset == j)
            return k->terms[t].type != T_JITTER;
    return 0;
}

const char *gpc_kernel_weight_term(const gpc_kernel *k, size_t t)
{
    for (size_t i = 0; i < k->nterms; i++)
        if (k->terms[i].type != T_JITTER && t-- == 0)
            return k->terms[i].text;
    return NULL;
}

size_t gpc_kernel_weights(const gpc_kernel *k, size_t copy, double *w, size_t *index)
{
    size_t J = 0;
    if (!k->simplex)
        return 0;
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type != T_JITTER) {
            size_t j = copy * k->nparams + k->terms[t].offset;
            if (w)
                w[J] = k->etheta[j];
            if (index)
                index[J] = j;
            J++;
        }
    return J;
}


/* The starting values of one copy of the terms. */
static void default_params_one(const gpc_kernel *k, double *theta)
{
    for (size_t t = 0; t < k->nterms; t++) {
        const term *tm = &k->terms[t];
        double *th = theta + tm->offset;
        switch (tm->type) {
        case T_ARD:
        case T_SE:
            th[0] = 0.0;
            for (size_t p = 1; p < tm->nparams; p++)
                th[p] = -2.0;
            break;
        case T_LINEAR:
        case T_GRAM: th[0] = 0.0; break;
        case T_NN: th[0] = th[1] = th[2] = 0.0; break;
        case T_BIAS: th[0] = -3.0; break;
        case T_JITTER: th[0] = -6.0; break;
        }
        if (k->simplex && tm->type != T_JITTER)
            th[0] = 0.0; /* equal weights */
    }
}

void gpc_kernel_default_params(const gpc_kernel *k, double *theta)
{
    for (size_t c = 0; c < k->copies; c++)
        default_params_one(k, theta + c * k->nparams);
}

/* ---- evaluation -------------------------------------------------------- */

/* The distance of an ard or se term in its column l, times c: the squared
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

/* Value of one term at a pair of rows (xa, xb); `same` says the pair is one
 * training case with itself (only jitter cares), and jb is xb's number among
 * the training cases (only gram cares: it reads xa's similarity to training
 * case jb from xa's own columns).  If g is not NULL it gets the derivatives
 * with respect to the term's log hyperparameters. */
static double term_pair(const term *t, const double *eth, const double *xa, const double *xb,
                        size_t jb, int same, double *g)
{
    switch (t->type) {
    case T_ARD: {
        double q = 0.0;
        for (size_t l = 0; l < t->ncols; l++)
            q += col_dist(t, l, eth[1 + l], xa, xb);
        double kv = eth[0] * exp(-0.5 * q);
        if (g) {
            g[0] = kv;
            for (size_t l = 0; l < t->ncols; l++)
                g[1 + l] = col_dist(t, l, -0.5 * kv * eth[1 + l], xa, xb);
        }
        return kv;
    }
    case T_SE: {
        double q = 0.0;
        for (size_t l = 0; l < t->ncols; l++)
            q += col_dist(t, l, 1.0, xa, xb);
        double w = eth[1], kv = eth[0] * exp(-0.5 * w * q);
        if (g) {
            g[0] = kv;
            g[1] = -0.5 * kv * w * q;
        }
        return kv;
    }
    case T_LINEAR: {
        double dot = 0.0;
        for (size_t l = 0; l < t->ncols; l++)
            dot += xa[t->cols[l]] * xb[t->cols[l]];
        double kv = eth[0] * dot;
        if (g)
            g[0] = kv;
        return kv;
    }
    case T_NN: {
        double dab = 0.0, daa = 0.0, dbb = 0.0;
        for (size_t l = 0; l < t->ncols; l++) {
            double a = xa[t->cols[l]], b = xb[t->cols[l]];
            dab += a * b;
            daa += a * a;
            dbb += b * b;
        }
        double v0 = eth[0], s0 = eth[1], s = eth[2];
        double uab = s0 + s * dab, uaa = s0 + s * daa, ubb = s0 + s * dbb;
        double ea = 1.0 + 2.0 * uaa, eb = 1.0 + 2.0 * ubb;
        double rho = 2.0 * uab / sqrt(ea * eb);
        double kv = v0 * M_2_PI * asin(rho);
        if (g) {
            double dk_drho = v0 * M_2_PI / sqrt(1.0 - rho * rho);
            /* d rho = 2 du_ab / sqrt(ea eb) - rho (du_aa / ea + du_bb / eb) */
            double drho_s0 = 2.0 * s0 / sqrt(ea * eb) - rho * (s0 / ea + s0 / eb);
            double drho_s = 2.0 * s * dab / sqrt(ea * eb) - rho * (s * daa / ea + s * dbb / eb);
            g[0] = kv;
            g[1] = dk_drho * drho_s0;
            g[2] = dk_drho * drho_s;
        }
        return kv;
    }
    case T_BIAS: {
        double kv = eth[0];
        if (g)
            g[0] = kv;
        return kv;
    }
    case T_JITTER: {
        double kv = same ? eth[0] : 0.0;
        if (g)
            g[0] = kv;
        return kv;
    }
    case T_GRAM: {
        double kv = eth[0] * xa[t->cols[jb == GRAM_SELF ? 0 : 1 + jb]];
        if (g)
            g[0] = kv;
        return kv;
    }
    }
    return 0.0;
}

static double kernel_pair(const gpc_kernel *k, const double *xa, const double *xb, size_t jb,
                          int same)
{
    double sum = 0.0;
    for (size_t t = 0; t < k->nterms; t++)
        sum += term_pair(&k->terms[t], k->etheta + k->terms[t].offset, xa, xb, jb, same, NULL);
    return sum;
}

/* On the simplex a weight's log moves every weight: with beta_t^2 =
 * exp(theta_t) / sum_s exp(theta_s), dK/dtheta_t = K_t - beta_t^2 sum_s K_s,
 * where K_t is the term's value, which is what the terms give as their
 * derivative.  Correct the nparams derivatives g in place. */
static void simplex_correct(const gpc_kernel *k, double *g)
{
    if (!k->simplex)
        return;
    double sum = 0.0;
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type != T_JITTER)
            sum += g[k->terms[t].offset];
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type != T_JITTER)
            g[k->terms[t].offset] -= k->etheta[k->terms[t].offset] * sum;
}

/* All derivatives of k(xa, xb) with respect to theta, into g[nparams]. */
static void kernel_pair_grad(const gpc_kernel *k, const double *xa, const double *xb,
                             size_t jb, int same, double *g)
{
    for (size_t t = 0; t < k->nterms; t++) {
        const term *tm = &k->terms[t];
        term_pair(tm, k->etheta + tm->offset, xa, xb, jb, same, g + tm->offset);
    }
    simplex_correct(k, g);
}

static const double *row(const gsl_matrix *X, size_t i) { return X->data + i * X->tda; }

/* The O(n^2) loops below run their rows in parallel.  Every entry is computed
 * by one thread from the same operands, so results do not depend on the
 * number of threads. */
#define ROW_CHUNK 256

/* The columns an ARD term reads, transposed (ncols x n), so that a row of
 * its matrix runs along contiguous memory; NULL for other terms. */
static double *ard_columns(const term *t, const gsl_matrix *X)
{
    if (t->type != T_ARD || t->disc)
        return NULL;
    size_t n = X->size1;
    double *xt = gpc_mallocarray(t->ncols * n, sizeof *xt);
    for (size_t j = 0; j < n; j++)
        for (size_t l = 0; l < t->ncols; l++)
            xt[l * n + j] = row(X, j)[t->cols[l]];
    return xt;
}

/* out[j] += the ARD term's value between the point whose term columns are xi
 * and point j < count of a set whose term columns are transposed in xt
 * (ncols rows, stride apart): the exponents of a chunk first, eight at a
 * time summed over the columns in a register (the same sums, in the same
 * order, as one column at a time over the chunk, which stored and reloaded
 * them at every column), then their exps at once. */
typedef double vec8d __attribute__((vector_size(8 * sizeof(double)), aligned(sizeof(double))));

__attribute__((target_clones("avx512f", "avx2", "default"))) static void
add_ard_values(const gpc_kernel *k, const term *t, const double *xi, const double *xt,
               size_t stride, size_t count, double *out)
{
    const double *eth = k->etheta + t->offset;
    double e[ROW_CHUNK];
    for (size_t j0 = 0; j0 < count; j0 += ROW_CHUNK) {
        size_t m = count - j0 < ROW_CHUNK ? count - j0 : ROW_CHUNK;
        size_t j = 0;
        for (; j + 8 <= m; j += 8) { /* eight exponents summed in a register */
            vec8d q = {0};
            for (size_t l = 0; l < t->ncols; l++) {
                vec8d d;
                memcpy(&d, xt + l * stride + j0 + j, sizeof d);
                d = xi[l] - d;
                q += eth[1 + l] * d * d;
            }
            q *= -0.5;
            memcpy(e + j, &q, sizeof q);
        }
        for (; j < m; j++) {
            double q = 0.0;
            for (size_t l = 0; l < t->ncols; l++) {
                double d = xi[l] - xt[l * stride + j0 + j];
                q += eth[1 + l] * d * d;
            }
            e[j] = q * -0.5;
        }
        gpc_exp_array(e, m);
        for (j = 0; j < m; j++)
            out[j0 + j] += eth[0] * e[j];
    }
}

/* Row i of an ARD term without discrete columns from its transposed
 * columns xt (n points). */
/* A case's columns of one ARD term: on the stack up to ROW_ON_STACK of
 * them, else on the heap (a term may weigh up to GPC_KERNEL_MAX_DIM
 * columns, far more than a thread's stack holds). */
#define ROW_ON_STACK 128
static double *row_buffer(const term *t, double *stack)
{
    return t->ncols <= ROW_ON_STACK ? stack : gpc_mallocarray(t->ncols, sizeof *stack);
}

static void add_ard_row(const gpc_kernel *k, const term *t, const double *xt, size_t n, size_t i,
                        double *Ki)
{
    double stack[ROW_ON_STACK] = {0}, *xi = row_buffer(t, stack);
    for (size_t l = 0; l < t->ncols; l++)
        xi[l] = xt[l * n + i];
    add_ard_values(k, t, xi, xt, n, i + 1, Ki);
    if (xi != stack)
        free(xi);
}

/* Add one term's values k(x_i, x_j), j <= i, to Ki[0..i], for the terms
 * add_ard_row does not take: an ARD term with discrete columns has its own
 * loop without a call per pair. */
static void add_term_row(const gpc_kernel *k, const term *t, const gsl_matrix *X, size_t i,
                         double *Ki)
{
    const double *eth = k->etheta + t->offset, *xi = row(X, i);
    if (t->type != T_ARD) {
        for (size_t j = 0; j <= i; j++)
            Ki[j] += term_pair(t, eth, xi, row(X, j), j, i == j, NULL);
        return;
    }
    const unsigned char *disc = t->disc; /* the other ARD terms go by add_ard_row */
    for (size_t j = 0; j <= i; j++) {
        const double *xj = row(X, j);
        double q = 0.0;
        for (size_t l = 0; l < t->ncols; l++) {
            double a = xi[t->cols[l]], b = xj[t->cols[l]], d = a - b;
            q += disc[l] ? (a != b ? eth[1 + l] : 0.0) : eth[1 + l] * d * d;
        }
        Ki[j] += eth[0] * exp(-0.5 * q);
    }
}

/* The strict lower triangle of the n x n matrix S (rows ld apart) copied to
 * the upper, in tiles so that the strided side stays in cache. */
#define MIRROR_TILE 32
static void mirror_lower(double *S, size_t n, size_t ld)
{
    size_t tiles = (n + MIRROR_TILE - 1) / MIRROR_TILE;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(dynamic, 1) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t ta = 0; ta < tiles; ta++)
        for (size_t b0 = ta * MIRROR_TILE; b0 < n; b0 += MIRROR_TILE)
            for (size_t a = ta * MIRROR_TILE; a < (ta + 1) * MIRROR_TILE && a < n; a++)
                for (size_t b = b0 > a + 1 ? b0 : a + 1; b < b0 + MIRROR_TILE && b < n; b++)
                    S[a * ld + b] = S[b * ld + a];
}

void gpc_kernel_matrix(const gpc_kernel *k, const gsl_matrix *X, gsl_matrix *K)
{
    size_t n = X->size1;
    double *xt[GPC_KERNEL_MAX_TERMS];
    for (size_t t = 0; t < k->nterms; t++)
        xt[t] = ard_columns(&k->terms[t], X);
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(dynamic, 16) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t i = 0; i < n; i++) {
        double *Ki = K->data + i * K->tda;
        for (size_t j = 0; j <= i; j++)
            Ki[j] = 0.0;
        for (size_t t = 0; t < k->nterms; t++)
            if (xt[t])
                add_ard_row(k, &k->terms[t], xt[t], n, i, Ki);
            else
                add_term_row(k, &k->terms[t], X, i, Ki);
    }
    mirror_lower(K->data, n, K->tda);
    for (size_t t = 0; t < k->nterms; t++)
        free(xt[t]);
}

/* Row i, training case i against every test case: the terms in the kernel's
 * order, as kernel_pair adds them; ARD terms from the test inputs' columns
 * transposed in xt[t]. */
static void cross_row(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                      double *const *xt, size_t i, double *Ki)
{
    size_t m = Xs->size1;
    for (size_t j = 0; j < m; j++)
        Ki[j] = 0.0;
    for (size_t ti = 0; ti < k->nterms; ti++) {
        const term *t = &k->terms[ti];
        if (xt[ti]) {
            double stack[ROW_ON_STACK] = {0}, *xi = row_buffer(t, stack);
            for (size_t l = 0; l < t->ncols; l++)
                xi[l] = row(X, i)[t->cols[l]];
            add_ard_values(k, t, xi, xt[ti], m, m, Ki);
            if (xi != stack)
                free(xi);
            continue;
        }
        for (size_t j = 0; j < m; j++)
            Ki[j] += term_pair(t, k->etheta + t->offset, row(Xs, j), row(X, i), i, 0, NULL);
    }
}

void gpc_kernel_cross(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                      gsl_matrix *Ks)
{
    double *xt[GPC_KERNEL_MAX_TERMS];
    for (size_t t = 0; t < k->nterms; t++)
        xt[t] = ard_columns(&k->terms[t], Xs);
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (X->size1 >= GPC_PARALLEL_MIN_ROWS)
    for (size_t i = 0; i < X->size1; i++)
        cross_row(k, X, Xs, xt, i, Ks->data + i * Ks->tda);
    for (size_t t = 0; t < k->nterms; t++)
        free(xt[t]);
}

void gpc_kernel_diag(const gpc_kernel *k, const gsl_matrix *Xs, gsl_vector *d)
{
    for (size_t i = 0; i < Xs->size1; i++)
        gsl_vector_set(d, i, kernel_pair(k, row(Xs, i), row(Xs, i), GRAM_SELF, 1));
}

void gpc_kernel_grad_matrix(const gpc_kernel *k, const gsl_matrix *X, size_t j, gsl_matrix *dK)
{
    double *g = gpc_malloc(k->nparams * sizeof *g);
    for (size_t a = 0; a < X->size1; a++)
        for (size_t b = 0; b <= a; b++) {
            kernel_pair_grad(k, row(X, a), row(X, b), b, a == b, g);
            gsl_matrix_set(dK, a, b, g[j]);
            gsl_matrix_set(dK, b, a, g[j]);
        }
    free(g);
}

/* Rows are split into a fixed number of blocks, whatever the number of
 * threads; each block accumulates into its own buffers, which are then added
 * in block order, so the sums are the same on any machine. */
#define CONTRACT_BLOCKS 16

/* First row of block b of nb, balancing the triangle's a + 1 pairs per row. */
static size_t block_start(size_t n, size_t b, size_t nb)
{
    return b >= nb ? n : (size_t)(n * sqrt((double)b / nb));
}

/* The operands of a contraction, read-only and shared by all blocks. */
typedef struct {
    const gpc_kernel *k;
    const gsl_matrix *X, *R;
    const double *u, *v;
    double alpha, beta;
} contraction;

/* Row a of the contraction for one ARD term, fused: the term's value and its
 * d + 1 derivatives are formed and used pair by pair without a call per pair.
 * dK/dlog w_l = -1/2 w_l d_l k with d_l = (x_l - x'_l)^2 (or the 0/1 mismatch
 * for a discrete column), dK/dlog v0 = k. */
static void contract_row_ard(const contraction *c, const term *t, size_t a, double *s, double *B)
{
    size_t p = c->k->nparams, m = t->ncols, o = t->offset;
    const double *eth = c->k->etheta + o, *xa = row(c->X, a);
    const double *Ra = c->R->data + a * c->R->tda;
    const unsigned char *disc = t->disc;
    double hw[m], dd[m], sl[m + 1];
    for (size_t l = 0; l < m; l++)
        hw[l] = -0.5 * eth[1 + l];
    for (size_t l = 0; l <= m; l++)
        sl[l] = 0.0;
    double *Ba = B + a * p + o;
    for (size_t b = 0; b <= a; b++) {
        const double *xb = row(c->X, b);
        double q = 0.0;
        if (disc)
            for (size_t l = 0; l < m; l++) {
                double x = xa[t->cols[l]], y = xb[t->cols[l]], d = x - y;
                dd[l] = disc[l] ? (x != y ? 1.0 : 0.0) : d * d;
                q += eth[1 + l] * dd[l];
            }
        else
            for (size_t l = 0; l < m; l++) {
                double d = xa[t->cols[l]] - xb[t->cols[l]];
                dd[l] = d * d;
                q += eth[1 + l] * dd[l];
            }
        double kv = eth[0] * exp(-0.5 * q);
        double w2 = a == b ? 1.0 : 2.0; /* an off-diagonal pair stands for two */
        double mk = w2 * (c->alpha * c->u[a] * c->u[b] + c->beta * Ra[b]) * kv;
        double *Bb = B + b * p + o;
        double kvb = kv * c->v[b], kva = a == b ? 0.0 : kv * c->v[a];
        sl[0] += mk;
        Ba[0] += kvb;
        Bb[0] += kva;
        for (size_t l = 0; l < m; l++) {
            double e = hw[l] * dd[l];
            sl[1 + l] += mk * e;
            Ba[1 + l] += kvb * e;
            Bb[1 + l] += kva * e;
        }
    }
    for (size_t l = 0; l <= m; l++)
        s[o + l] += sl[l];
}

/* Row a for any other term, through the generic pair derivatives. */
static void contract_row_term(const contraction *c, const term *t, size_t a, double *g,
                              double *s, double *B)
{
    size_t p = c->k->nparams, o = t->offset, np = t->nparams;
    const double *Ra = c->R->data + a * c->R->tda;
    double *Ba = B + a * p + o;
    for (size_t b = 0; b <= a; b++) {
        term_pair(t, c->k->etheta + o, row(c->X, a), row(c->X, b), b, a == b, g);
        double w2 = a == b ? 1.0 : 2.0;
        double mm = w2 * (c->alpha * c->u[a] * c->u[b] + c->beta * Ra[b]);
        double *Bb = B + b * p + o;
        double vb = c->v[b], va = a == b ? 0.0 : c->v[a];
        for (size_t j = 0; j < np; j++) {
            s[o + j] += g[j] * mm;
            Ba[j] += g[j] * vb;
            Bb[j] += g[j] * va;
        }
    }
}

static void contract_rows(const contraction *c, size_t lo, size_t hi, double *s, double *B)
{
    double *g = gpc_malloc(c->k->nparams * sizeof *g);
    for (size_t a = lo; a < hi; a++)
        for (size_t ti = 0; ti < c->k->nterms; ti++) {
            const term *t = &c->k->terms[ti];
            if (t->type == T_ARD)
                contract_row_ard(c, t, a, s, B);
            else
                contract_row_term(c, t, a, g, s, B);
        }
    free(g);
}

/* A kernel that is one ard or se term without discrete columns, alone or
 * plus jitter, has a contraction that two matrix products give: this is that
 * term, or NULL for any other kernel.  Jitter adds to the diagonal only, so
 * off it the kernel's matrix holds the term's values bit for bit. */
static const term *product_term(const gpc_kernel *k)
{
    if (k->copies != 1 || k->simplex || k->nterms > 2)
        return NULL;
    const term *found = NULL;
    for (size_t ti = 0; ti < k->nterms; ti++) {
        const term *t = &k->terms[ti];
        if ((t->type == T_ARD || t->type == T_SE) && !t->disc && !found)
            found = t;
        else if (t->type != T_JITTER)
            return NULL;
    }
    return found;
}

/* The term's values Kt (K off the diagonal) and G = M o Kt with M = alpha
 * u u' + beta R, both n x n in full and with zeros on the diagonal.  Full,
 * for dgemm: OpenBLAS multiplies matrices this small by a few columns
 * without packing them (on AVX-512 CPUs), and at 200 rows the contraction
 * runs 1.5 times as fast as with dsymm on one triangle. */
static void product_matrices(const contraction *c, const gsl_matrix *K, double *Kt, double *G)
{
    size_t n = K->size1;
    const double *u = c->u;
    double alpha = c->alpha, beta = c->beta;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t a = 0; a < n; a++) {
        const double *Ka = K->data + a * K->tda, *Ra = c->R->data + a * c->R->tda;
        double *Ga = G + a * n, au = alpha * u[a];
        memcpy(Kt + a * n, Ka, n * sizeof *Kt);
        Kt[a * n + a] = Ga[a] = 0.0;
#pragma omp simd /* -O2 alone leaves the loop scalar */
        for (size_t b = 0; b < a; b++)
            Ga[b] = (au * u[b] + beta * Ra[b]) * Ka[b];
    }
    mirror_lower(G, n, n);
}

/* The term's m columns, each less its mean, into xc (n x m): distances do
 * not change, and the expansion below then subtracts terms of the size of
 * the spread of x, not of x itself. */
static void centred_columns(const term *t, const gsl_matrix *X, double *xc)
{
    size_t n = X->size1, m = t->ncols;
    for (size_t l = 0; l < m; l++) {
        double mean = 0.0;
        for (size_t a = 0; a < n; a++)
            mean += row(X, a)[t->cols[l]];
        mean /= (double)n;
        for (size_t a = 0; a < n; a++)
            xc[a * m + l] = row(X, a)[t->cols[l]] - mean;
    }
}

/* The term's derivatives with respect to its log w from the per-column sums
 * e[l] of d_l times the term's values: -1/2 w_l e[l] for ard, -1/2 w sum_l
 * e[l] for se (one w for all its columns). */
static void weight_derivs(const term *t, const double *eth, const double *e, double *out)
{
    if (t->type == T_ARD) {
        for (size_t l = 0; l < t->ncols; l++)
            out[1 + l] = -0.5 * eth[1 + l] * e[l];
        return;
    }
    double sum = 0.0;
    for (size_t l = 0; l < t->ncols; l++)
        sum += e[l];
    out[1] = -0.5 * eth[1] * sum;
}

/* The right-hand sides of the two products, from the centred columns xc
 * (n x m): Z = [v, v o x_l, v o x_l^2] (n x (2m + 1)), Y = [1, x_l]
 * (n x (m + 1)). */
static void right_sides(const double *xc, const double *v, size_t n, size_t m, double *Z,
                        double *Y)
{
    size_t wz = 2 * m + 1, wy = m + 1;
    for (size_t a = 0; a < n; a++) {
        const double *xa = xc + a * m;
        double *Za = Z + a * wz, *Ya = Y + a * wy;
        Za[0] = v[a];
        Ya[0] = 1.0;
        for (size_t l = 0; l < m; l++) {
            Za[1 + l] = v[a] * xa[l];
            Za[1 + m + l] = v[a] * xa[l] * xa[l];
            Ya[1 + l] = xa[l];
        }
    }
}

/* P = Kt Z and Q = G Y (n rows, wz and wy columns). */
static void multiply(const double *Kt, const double *G, size_t n, const double *Z, size_t wz,
                     const double *Y, size_t wy, double *P, double *Q)
{
    gsl_matrix_const_view Ktv = gsl_matrix_const_view_array(Kt, n, n),
                          Gv = gsl_matrix_const_view_array(G, n, n),
                          Zv = gsl_matrix_const_view_array(Z, n, wz),
                          Yv = gsl_matrix_const_view_array(Y, n, wy);
    gsl_matrix_view Pv = gsl_matrix_view_array(P, n, wz), Qv = gsl_matrix_view_array(Q, n, wy);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &Ktv.matrix, &Zv.matrix, 0.0, &Pv.matrix);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &Gv.matrix, &Yv.matrix, 0.0, &Qv.matrix);
}

/* The contraction for product_term's kernel from its matrix K, with no call
 * to exp and no pass over the pairs.  With d_l,ab = (x_al - x_bl)^2,
 *     sum_b Kt_ab v_b d_l,ab = x_al^2 (Kt v)_a - 2 x_al (Kt (v o x_l))_a
 *                              + (Kt (v o x_l^2))_a
 *     sum_ab G_ab d_l,ab    = 2 sum_a (x_al^2 (G 1)_a - x_al (G x_l)_a):
 * the products of Kt with n x (2m + 1) columns and of G with n x (m + 1).
 * The diagonal, where d = 0 exactly but its three parts would cancel only to
 * rounding, is left out of both and added where it counts, in dK/dlog v0 =
 * Kt (Kt_aa = v0) and in jitter's dK = j I. */
static void contract_products(const contraction *c, const term *t, const gsl_matrix *K,
                              double *s, gsl_matrix *B)
{
    const gpc_kernel *k = c->k;
    size_t n = K->size1, m = t->ncols, o = t->offset, wz = 2 * m + 1, wy = m + 1;
    const double *eth = k->etheta + o;
    double *Kt = gpc_mallocarray(2 * n * n + n * m + 2 * n * (wz + wy) + m, sizeof *Kt);
    double *G = Kt + n * n, *xc = G + n * n, *Z = xc + n * m, *P = Z + n * wz, *Y = P + n * wz,
           *Q = Y + n * wy, *e = Q + n * wy;
    product_matrices(c, K, Kt, G);
    centred_columns(t, c->X, xc);
    right_sides(xc, c->v, n, m, Z, Y);
    multiply(Kt, G, n, Z, wz, Y, wy, P, Q);

    /* s, with e[l] = sum_ab G_ab d_l,ab and M's diagonal for the v0 and
     * jitter derivatives */
    double v0 = eth[0], mdiag = 0.0, sumG = 0.0;
    for (size_t l = 0; l < m; l++)
        e[l] = 0.0;
    for (size_t a = 0; a < n; a++) {
        const double *xa = xc + a * m, *Qa = Q + a * wy;
        mdiag += c->alpha * c->u[a] * c->u[a] + c->beta * c->R->data[a * c->R->tda + a];
        sumG += Qa[0];
        for (size_t l = 0; l < m; l++)
            e[l] += 2.0 * xa[l] * (xa[l] * Qa[0] - Qa[1 + l]);
    }
    s[o] = sumG + v0 * mdiag;
    weight_derivs(t, eth, e, s + o);
    /* B, row by row with e[l] = sum_b Kt_ab v_b d_l,ab */
    for (size_t a = 0; a < n; a++) {
        const double *xa = xc + a * m, *Pa = P + a * wz;
        double *Ba = B->data + a * B->tda + o;
        Ba[0] = Pa[0] + v0 * c->v[a];
        for (size_t l = 0; l < m; l++)
            e[l] = xa[l] * xa[l] * Pa[0] - 2.0 * xa[l] * Pa[1 + l] + Pa[1 + m + l];
        weight_derivs(t, eth, e, Ba);
    }
    for (size_t ti = 0; ti < k->nterms; ti++) {
        const term *jt = &k->terms[ti];
        if (jt->type != T_JITTER)
            continue;
        double jv = k->etheta[jt->offset];
        s[jt->offset] = jv * mdiag;
        for (size_t a = 0; a < n; a++)
            B->data[a * B->tda + jt->offset] = jv * c->v[a];
    }
    free(Kt);
}

void gpc_kernel_grad_contract(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *K,
                              const gsl_vector *u, double alpha, const gsl_matrix *R,
                              double beta, const gsl_vector *v, double *s, gsl_matrix *B)
{
    size_t n = X->size1, p = k->nparams, nb = n < 4 * CONTRACT_BLOCKS ? 1 : CONTRACT_BLOCKS;
    double *ub = gpc_malloc(2 * n * sizeof *ub), *vb = ub + n;
    for (size_t i = 0; i < n; i++) {
        ub[i] = gsl_vector_get(u, i);
        vb[i] = gsl_vector_get(v, i);
    }
    contraction c = {k, X, R, ub, vb, alpha, beta};
    /* The products run up to GPC_KERNEL_CONTRACT_PRODUCT_ROWS = 1400 rows,
     * where they take about half the time of the pass over the pairs on one
     * thread or two (3.8 against 7.2 ms at 1000 rows on two), for two more
     * n x n matrices, at most 31 MiB.  Above that the scratch passes 32 MiB,
     * which glibc's malloc maps afresh at every call: the page faults made
     * the products slower than the pass at 1450 rows, and the pass keeps the
     * peak memory of a method at two n x n matrices. */
    const term *t = K ? product_term(k) : NULL;
    if (t && n > 0 && n <= GPC_KERNEL_CONTRACT_PRODUCT_ROWS) {
        contract_products(&c, t, K, s, B);
        free(ub);
        return;
    }
    double *sbuf = gpc_calloc(nb * p, sizeof *sbuf), *Bbuf = gpc_calloc(nb * n * p, sizeof *Bbuf);
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(dynamic, 1) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t b = 0; b < nb; b++)
        contract_rows(&c, block_start(n, b, nb), block_start(n, b + 1, nb), sbuf + b * p,
                      Bbuf + b * n * p);
    for (size_t j = 0; j < p; j++) {
        s[j] = 0.0;
        for (size_t b = 0; b < nb; b++)
            s[j] += sbuf[b * p + j];
    }
    simplex_correct(k, s);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < p; j++) {
            double sum = 0.0;
            for (size_t b = 0; b < nb; b++)
                sum += Bbuf[(b * n + i) * p + j];
            gsl_matrix_set(B, i, j, sum);
        }
        simplex_correct(k, B->data + i * B->tda);
    }
    free(ub);
    free(sbuf);
    free(Bbuf);
}

/* ---- precomputed Gram matrices ----------------------------------------- */

static int gram_width(const gpc_kernel *k, const term *t, size_t ntrain)
{
    if (t->ncols == ntrain + 1)
        return GPC_OK;
    return gpc_fail(GPC_EINPUT, "kernel '%s': its gram term %zu reads %zu columns, a case's "
                    "similarity to itself and to each training case, so it needs %zu training "
                    "cases, not %zu", k->spec, (size_t)(t - k->terms) + 1, t->ncols,
                    t->ncols - 1, ntrain);
}

int gpc_kernel_check_train(const gpc_kernel *k, const gsl_matrix *X)
{
    size_t n = X->size1;
    for (size_t ti = 0; ti < k->nterms; ti++) {
        const term *t = &k->terms[ti];
        if (t->type != T_GRAM)
            continue;
        int rc = gram_width(k, t, n);
        if (rc != GPC_OK)
            return rc;
        double scale = 0.0;
        for (size_t i = 0; i < n; i++)
            scale = fmax(scale, fabs(row(X, i)[t->cols[0]]));
        double tol = 1e-10 * scale;
        for (size_t i = 0; i < n; i++) {
            const double *xi = row(X, i);
            if (!(fabs(xi[t->cols[0]] - xi[t->cols[1 + i]]) <= tol))
                return gpc_fail(GPC_EINPUT, "gram term %zu: training case %zu's similarity to "
                                "itself is %.17g in column %zu but %.17g in column %zu (its "
                                "column among the training cases)", ti + 1, i + 1,
                                xi[t->cols[0]], t->cols[0] + 1, xi[t->cols[1 + i]],
                                t->cols[1 + i] + 1);
            for (size_t j = 0; j < i; j++) {
                double a = xi[t->cols[1 + j]], b = row(X, j)[t->cols[1 + i]];
                if (!(fabs(a - b) <= tol))
                    return gpc_fail(GPC_EINPUT, "gram term %zu: the training Gram matrix is not "
                                    "symmetric: case %zu to %zu is %.17g, case %zu to %zu is "
                                    "%.17g", ti + 1, i + 1, j + 1, a, j + 1, i + 1, b);
            }
        }
    }
    return GPC_OK;
}

int gpc_kernel_check_test(const gpc_kernel *k, size_t ntrain)
{
    for (size_t ti = 0; ti < k->nterms; ti++)
        if (k->terms[ti].type == T_GRAM) {
            int rc = gram_width(k, &k->terms[ti], ntrain);
            if (rc != GPC_OK)
                return rc;
        }
    return GPC_OK;
}

int gpc_kernel_has_gram(const gpc_kernel *k)
{
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type == T_GRAM)
            return 1;
    return 0;
}
