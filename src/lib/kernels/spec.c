#include "kernels/kernel.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "io/colnames.h"
#include "kernels/kernel-impl.h"

/* The terms' names in the spec, and what each makes. */
typedef struct {
    const char *name;
    term_type type;
    int iso, nu2;
} term_name;

static const term_name term_names[] = {
    {"ard", T_ARD, 0, 0},
    {"se", T_SE, 1, 0},
    {"linear", T_LINEAR, 0, 0},
    {"nn", T_NN, 0, 0},
    {"bias", T_BIAS, 0, 0},
    {"jitter", T_JITTER, 0, 0},
    {"gram", T_GRAM, 0, 0},
    {"matern12", T_MATERN, 1, 1},
    {"matern32", T_MATERN, 1, 3},
    {"matern52", T_MATERN, 1, 5},
    {"matern12ard", T_MATERN, 0, 1},
    {"matern32ard", T_MATERN, 0, 3},
    {"matern52ard", T_MATERN, 0, 5},
    {"rq", T_RQ, 1, 0},
    {"rqard", T_RQ, 0, 0},
    {"periodic", T_PERIODIC, 1, 0},
    {"periodicard", T_PERIODIC, 0, 0},
};
#define N_TERM_NAMES (sizeof term_names / sizeof term_names[0])
#define TERM_LIST "ard, se, matern12, matern32, matern52, matern12ard, matern32ard, " \
                  "matern52ard, rq, rqard, periodic, periodicard, poly<degree>, linear, nn, " \
                  "bias, jitter, gram"

/* ---- parsing ----------------------------------------------------------- */

static size_t term_nparams(const term *t)
{
    size_t ncols = t->ncols;
    switch (t->type) {
    case T_ARD: return 1 + ncols;
    case T_SE: return 2;
    case T_LINEAR: return 1;
    case T_NN: return 3;
    case T_MATERN: return t->iso ? 2 : 1 + ncols;
    case T_RQ: return t->iso ? 3 : 2 + ncols;
    case T_PERIODIC: return t->iso ? 3 : 1 + 2 * ncols;
    case T_POLY: return 2;
    default: return 1; /* bias, jitter, gram */
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
        if (b < a && a >= 1 && (size_t)a <= dim) {
            free(c);
            return gpc_fail(GPC_EUSAGE, "%s '%s': the range %ld-%ld runs downward (write %ld-%ld)",
                            what, s, a, b, b, a);
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

/* "poly<P>": the degree P, 1 to GPC_KERNEL_MAX_DEGREE; 0 if name is
 * no polynomial, -1 if its degree is bad. */
static int poly_degree(const char *name)
{
    if (strncmp(name, "poly", 4) != 0)
        return 0;
    const char *d = name + 4;
    if (!isdigit((unsigned char)d[0]) || d[0] == '0' || strlen(d) > 2)
        return -1;
    for (const char *c = d; *c; c++)
        if (!isdigit((unsigned char)*c))
            return -1;
    int p = atoi(d);
    return p <= GPC_KERNEL_MAX_DEGREE ? p : -1;
}

/* The term named name (len bytes): its type.  Messages say what is wrong;
 * the parser adds where. */
static int parse_term_name(const char *name, size_t len, term *t)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return gpc_fail(GPC_EUSAGE, "empty or overlong term name");
    memcpy(buf, name, len);
    buf[len] = '\0';
    size_t i;
    for (i = 0; i < N_TERM_NAMES && strcmp(buf, term_names[i].name) != 0; i++)
        ;
    if (i < N_TERM_NAMES) {
        t->type = term_names[i].type;
        t->iso = term_names[i].iso;
        t->nu2 = term_names[i].nu2;
        return GPC_OK;
    }
    int deg = poly_degree(buf);
    if (deg < 0)
        return gpc_fail(GPC_EUSAGE, "polynomial term '%s': its degree must be a whole number "
                        "from 1 to %d written after the name, as in poly2", buf,
                        GPC_KERNEL_MAX_DEGREE);
    if (deg == 0)
        return gpc_fail(GPC_EUSAGE, "unknown kernel term '%s' (use " TERM_LIST ")", buf);
    t->type = T_POLY;
    t->degree = deg;
    return GPC_OK;
}

/* The term's columns: the list cols, or every column if NULL. */
static int parse_term_cols(const char *cols, size_t dim, term *t)
{
    t->all_cols = cols == NULL;
    if (cols) {
        int rc = parse_cols("kernel columns", cols, dim, &t->cols, &t->ncols);
        if (rc)
            return rc;
    } else {
        t->ncols = dim;
        t->cols = gpc_mallocarray(dim ? dim : 1, sizeof *t->cols);
        for (size_t j = 0; j < dim; j++)
            t->cols[j] = j;
    }
    t->nparams = term_nparams(t);
    return GPC_OK;
}

/* The column (0-based) that the term's p-th hyperparameter weighs alone
 * (a length scale or period of an ARD form), or -1. */
static long term_param_column(const term *t, size_t p)
{
    if (p == 0)
        return -1;
    switch (t->type) {
    case T_ARD: return (long)t->cols[p - 1];
    case T_MATERN:
    case T_RQ: return !t->iso && p <= t->ncols ? (long)t->cols[p - 1] : -1;
    case T_PERIODIC: return t->iso ? -1 : (long)t->cols[(p - 1) % t->ncols];
    default: return -1;
    }
}

static void term_local_name(const term *t, int simplex, size_t p, char *buf, size_t size)
{
    static const char *const nn_names[] = {"log_v0", "log_s0", "log_s"};
    long col = term_param_column(t, p);
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
    case T_MATERN:
    case T_RQ:
        if (p == 0)
            snprintf(buf, size, "log_v0");
        else if (p + 1 == t->nparams && t->type == T_RQ)
            snprintf(buf, size, "log_alpha");
        else if (col >= 0)
            snprintf(buf, size, "log_w%ld", col + 1);
        else
            snprintf(buf, size, "log_w");
        break;
    case T_PERIODIC:
        if (p == 0)
            snprintf(buf, size, "log_v0");
        else if (col >= 0)
            snprintf(buf, size, "log_%c%ld", p <= t->ncols ? 'w' : 'p', col + 1);
        else
            snprintf(buf, size, p == 1 ? "log_w" : "log_p");
        break;
    case T_POLY: snprintf(buf, size, p == 0 ? "log_v" : "log_c"); break;
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

/* The given spec without blanks is canonical up to redundant parentheses
 * (node_text drops them) and the discrete clause,
 * which gpc_kernel_parse rewrites.  A spec too long to keep whole is an error:
 * cut short, it would name another kernel in the model file. */
static int canonical_spec(gpc_kernel *k, const char *given, size_t *where)
{
    size_t j = 0;
    for (const char *p = given; *p; p++)
        if (!isspace((unsigned char)*p)) {
            if (j + 1 == sizeof k->spec)
                return gpc_fail(GPC_EUSAGE, "kernel spec too long (more than %zu characters)",
                                sizeof k->spec - 1);
            where[j] = (size_t)(p - given);
            k->spec[j++] = *p;
        }
    where[j] = strlen(given);
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
    if (strpbrk(value, "+*()"))
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
    if (k->tree)
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s': simplex weighs a sum of single terms, "
                        "and this one has a product", spec);
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

/* Give the terms built on q their per-column discrete flags; every discrete
 * column must be read by one of them, and none by a periodic term. */
static int apply_discrete(gpc_kernel *k, const char *spec)
{
    unsigned char *used = gpc_calloc(k->dim ? k->dim : 1, 1);
    int rc = GPC_OK;
    for (size_t ti = 0; ti < k->nterms && rc == GPC_OK; ti++) {
        term *t = &k->terms[ti];
        if (t->type == T_PERIODIC)
            for (size_t l = 0; l < t->ncols && rc == GPC_OK; l++)
                if (k->discrete[t->cols[l]])
                    rc = gpc_fail(GPC_EUSAGE, "kernel spec '%s': term %zu (%s) is periodic in "
                                  "column %zu, which is discrete; a period needs a distance "
                                  "along the column (leave the column out of the periodic "
                                  "term)", spec, ti + 1, t->text, t->cols[l] + 1);
        if (!term_on_distance(t))
            continue;
        for (size_t l = 0; l < t->ncols; l++)
            if (k->discrete[t->cols[l]]) {
                if (!t->disc)
                    t->disc = gpc_calloc(t->ncols, 1);
                t->disc[l] = 1;
                used[t->cols[l]] = 1;
            }
    }
    for (size_t c = 0; c < k->dim && rc == GPC_OK; c++)
        if (k->discrete[c] && !used[c])
            rc = gpc_fail(GPC_EUSAGE, "kernel spec '%s': discrete column %zu is read by no ard, "
                          "se, matern or rq term, so marking it would have no effect", spec,
                          c + 1);
    free(used);
    return rc;
}

/* ---- the expression of terms ------------------------------------------ */

/* A node while parsing: nested sums and nested products are flattened as
 * they are built, so that the tree has alternating kinds. */
typedef struct {
    node_kind kind;
    size_t term, n;
    size_t kid[GPC_KERNEL_MAX_TERMS];
} parse_node;

typedef struct {
    gpc_kernel *k;
    const char *s;      /* the terms without blanks */
    size_t pos, dim;
    const char *given;  /* the spec as given, for messages */
    const size_t *where; /* where[i]: s[i]'s place in given */
    size_t npool;
    /* each node made joins two or more subtrees, so there are fewer than
     * twice as many nodes as terms */
    parse_node pool[GPC_KERNEL_MAX_NODES];
} parser;

/* A message about the spec at s[i], as "at character N" of the spec as
 * given. */
static int fail_at(const parser *ps, size_t i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(const parser *ps, size_t i, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (ps->given[ps->where[i]] == '\0')
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s': %s, at its end", ps->given, what);
    return gpc_fail(GPC_EUSAGE, "kernel spec '%s': %s, at character %zu", ps->given, what,
                    ps->where[i] + 1);
}

static int is_operator(char c) { return c == '+' || c == '*' || c == '(' || c == ')'; }

/* A node of the given kind over kids[0..n), taking in the children of kids
 * of the same kind; one kid is itself. */
static size_t make_node(parser *ps, node_kind kind, const size_t *kids, size_t n)
{
    if (n == 1)
        return kids[0];
    size_t id = ps->npool++;
    parse_node *nd = &ps->pool[id];
    nd->kind = kind;
    nd->n = 0;
    for (size_t i = 0; i < n; i++) {
        const parse_node *c = &ps->pool[kids[i]];
        if (c->kind == kind)
            for (size_t j = 0; j < c->n; j++)
                nd->kid[nd->n++] = c->kid[j];
        else
            nd->kid[nd->n++] = kids[i];
    }
    return id;
}

/* What ends a term or a parenthesised group. */
static int check_follow(const parser *ps, const char *what)
{
    char c = ps->s[ps->pos];
    if (c == '\0' || c == '+' || c == '*' || c == ')')
        return GPC_OK;
    return fail_at(ps, ps->pos, "expected '+', '*' or ')' after %s, not '%c'", what, c);
}

/* A term, NAME[@COLUMNS], at s[pos]. */
static int parse_leaf(parser *ps, size_t *id)
{
    gpc_kernel *k = ps->k;
    size_t start = ps->pos, p = start;
    while (isalnum((unsigned char)ps->s[p]))
        p++;
    if (k->nterms == GPC_KERNEL_MAX_TERMS)
        return fail_at(ps, start, "more than %d terms", GPC_KERNEL_MAX_TERMS);
    term *t = &k->terms[k->nterms];
    if (parse_term_name(ps->s + start, p - start, t) != GPC_OK)
        return fail_at(ps, start, "%s", gpc_errmsg());
    char *cols = NULL;
    size_t c0 = p + 1;
    if (ps->s[p] == '@') {
        for (p = c0; ps->s[p] && !is_operator(ps->s[p]); p++)
            ;
        if (p == c0)
            return fail_at(ps, c0 - 1, "'@' needs the term's columns, as in ard@1-3");
        cols = gpc_malloc(p - c0 + 1);
        memcpy(cols, ps->s + c0, p - c0);
        cols[p - c0] = '\0';
    }
    int rc = parse_term_cols(cols, ps->dim, t);
    free(cols);
    if (rc != GPC_OK) {
        memset(t, 0, sizeof *t);
        return fail_at(ps, c0, "%s", gpc_errmsg());
    }
    t->text = gpc_malloc(p - start + 1);
    memcpy(t->text, ps->s + start, p - start);
    t->text[p - start] = '\0';
    t->offset = k->nparams;
    k->nparams += t->nparams;
    *id = ps->npool++;
    ps->pool[*id] = (parse_node){.kind = N_TERM, .term = k->nterms++};
    ps->pos = p;
    return check_follow(ps, "a term");
}

static int parse_sum(parser *ps, size_t *id);

/* A term or a parenthesised sum. */
static int parse_factor(parser *ps, size_t *id)
{
    size_t at = ps->pos;
    char c = ps->s[at];
    if (c == '(') {
        ps->pos++;
        if (ps->s[ps->pos] == ')')
            return fail_at(ps, at, "empty parentheses");
        int rc = parse_sum(ps, id);
        if (rc != GPC_OK)
            return rc;
        if (ps->s[ps->pos] != ')')
            return fail_at(ps, at, "the '(' here is not closed");
        ps->pos++;
        return check_follow(ps, "')'");
    }
    if (isalnum((unsigned char)c))
        return parse_leaf(ps, id);
    if (c == '\0' && at > 0)
        return fail_at(ps, at, "an empty term after '%c'", ps->s[at - 1]);
    if (c == ')')
        return fail_at(ps, at, "an empty term before ')'");
    if (c == '+' || c == '*')
        return fail_at(ps, at, "an empty term before '%c'", c);
    return fail_at(ps, at, "expected a term, not '%c'", c);
}

/* factor { op factor }, op '*' for products and '+' for sums. */
static int parse_list(parser *ps, char op, size_t *id)
{
    size_t kids[GPC_KERNEL_MAX_TERMS], n = 0;
    for (;;) {
        size_t kid;
        int rc = op == '*' ? parse_factor(ps, &kid) : parse_list(ps, '*', &kid);
        if (rc != GPC_OK)
            return rc;
        kids[n++] = kid; /* at most one per term */
        if (ps->s[ps->pos] != op)
            break;
        ps->pos++;
    }
    *id = make_node(ps, op == '*' ? N_PROD : N_SUM, kids, n);
    return GPC_OK;
}

static int parse_sum(parser *ps, size_t *id) { return parse_list(ps, '+', id); }

/* The parsed tree into k->nodes, children first; returns the node's index. */
static size_t emit_node(gpc_kernel *k, const parser *ps, size_t id)
{
    const parse_node *pn = &ps->pool[id];
    size_t kids[GPC_KERNEL_MAX_TERMS];
    for (size_t i = 0; i < pn->n; i++)
        kids[i] = emit_node(k, ps, pn->kid[i]);
    size_t me = k->nnodes++, first = 0;
    for (size_t i = 0; i < k->nnodes - 1; i++) /* the kids used so far */
        first += k->nodes[i].kind == N_TERM ? 0 : k->nodes[i].count;
    memcpy(k->kids + first, kids, pn->n * sizeof *kids);
    k->nodes[me] = (node){.kind = pn->kind, .term = pn->term, .first = first,
                          .count = pn->kind == N_TERM ? 0 : pn->n};
    return me;
}

/* The terms' expression s: the terms into k->terms, the tree into
 * k->nodes; k->tree unless it is a plain sum of terms. */
static int parse_expression(gpc_kernel *k, const char *s, const char *given,
                            const size_t *where)
{
    parser *ps = gpc_calloc(1, sizeof *ps);
    *ps = (parser){.k = k, .s = s, .dim = k->dim, .given = given, .where = where};
    size_t root;
    int rc = parse_sum(ps, &root);
    if (rc == GPC_OK && s[ps->pos] == ')')
        rc = fail_at(ps, ps->pos, "')' closes no '('");
    if (rc == GPC_OK) {
        emit_node(k, ps, root);
        const node *r = &k->nodes[k->nnodes - 1];
        k->tree = r->kind == N_PROD;
        for (size_t i = 0; r->kind == N_SUM && i < r->count; i++)
            k->tree |= k->nodes[k->kids[r->first + i]].kind != N_TERM;
    }
    free(ps);
    return rc;
}

/* Append node i's text to buf (of size, *len used): terms as given, sums
 * in parentheses only as factors of a product, so that specs that differ
 * only in redundant parentheses have one canonical form. */
static void node_text(const gpc_kernel *k, size_t i, int factor, char *buf, size_t size,
                      size_t *len)
{
    const node *nd = &k->nodes[i];
    int w;
    if (nd->kind == N_TERM) {
        w = snprintf(buf + *len, size - *len, "%s", k->terms[nd->term].text);
    } else {
        int paren = factor && nd->kind == N_SUM;
        w = snprintf(buf + *len, size - *len, "%s", paren ? "(" : "");
        *len += w > 0 && (size_t)w < size - *len ? (size_t)w : 0;
        for (size_t c = 0; c < nd->count; c++) {
            if (c > 0) {
                w = snprintf(buf + *len, size - *len, "%c", nd->kind == N_SUM ? '+' : '*');
                *len += w > 0 && (size_t)w < size - *len ? (size_t)w : 0;
            }
            node_text(k, k->kids[nd->first + c], nd->kind == N_PROD, buf, size, len);
        }
        w = snprintf(buf + *len, size - *len, "%s", paren ? ")" : "");
    }
    /* never cut short: the text is no longer than the terms as given */
    *len += w > 0 && (size_t)w < size - *len ? (size_t)w : 0;
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
    size_t *where = gpc_mallocarray(sizeof k->spec, sizeof *where);
    if (canonical_spec(k, spec, where) != GPC_OK) {
        free(where);
        free(k);
        return GPC_EUSAGE;
    }
    if (k->spec[0] == '\0') {
        free(where);
        free(k);
        return gpc_fail(GPC_EUSAGE, "empty kernel spec (try ard)");
    }
    /* terms[] is the sum of terms, clauses what follows the first ':' */
    char *terms = gpc_strdup(k->spec), *clauses = strchr(terms, ':');
    if (clauses)
        *clauses++ = '\0';
    size_t len = strlen(terms);
    if (len == 0) {
        free(where);
        free(terms);
        free(k);
        return gpc_fail(GPC_EUSAGE, "kernel spec '%s' has no terms before ':' (try ard%s)", spec,
                        strchr(spec, ':'));
    }
    int rc = parse_expression(k, terms, spec, where);
    free(where);
    if (rc == GPC_OK) { /* the terms without redundant parentheses */
        size_t tlen = 0;
        node_text(k, k->nnodes - 1, 0, terms, len + 1, &tlen);
        terms[tlen] = '\0';
        if (!clauses)
            memcpy(k->spec, terms, tlen + 1);
    }
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
    /* a length scale, "log_w<col>", or a period, "log_p<col>" */
    const char *name = k->names[j], *at = NULL;
    char kind = 'w';
    for (const char *c = "wp"; *c && !at; c++) {
        snprintf(num, sizeof num, "log_%c%zu", *c, col + 1);
        if ((at = strstr(name, num)) != NULL)
            kind = *c;
    }
    if (!at)
        return 0;
    int w = snprintf(label, GPC_NAME_MAX, "%.*slog_%c.%s%s", (int)(at - name), name, kind, word,
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
            return term_param_column(tm, local - tm->offset);
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
        case T_MATERN:
        case T_RQ:
        case T_PERIODIC:
            /* length scales as ard's; alpha, the periods: 1 */
            th[0] = 0.0;
            for (size_t p = 1; p < tm->nparams; p++)
                th[p] = -2.0;
            if (tm->type == T_RQ)
                th[tm->nparams - 1] = 0.0;
            if (tm->type == T_PERIODIC)
                for (size_t p = tm->iso ? 2 : 1 + tm->ncols; p < tm->nparams; p++)
                    th[p] = 0.0;
            break;
        case T_POLY: th[0] = th[1] = 0.0; break;
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
