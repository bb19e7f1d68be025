#include "sampling/chain.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/hash.h"
#include "io/colnames.h"
#include "io/matio.h"
#include "io/output.h"

unsigned long long gpc_chain_data_hash(const gsl_matrix *X, const gsl_vector *y)
{
    /* row by row, each row's inputs then its label */
    unsigned long long h = GPC_HASH_START;
    for (size_t i = 0; i < X->size1; i++) {
        double yi = gsl_vector_get(y, i);
        h = gpc_hash_doubles(h, gsl_matrix_const_ptr(X, i, 0), X->size2);
        h = gpc_hash_doubles(h, &yi, 1);
    }
    return h;
}

const char *gpc_chain_second_name(const gpc_chain_settings *s)
{
    return s->gibbs ? "log_p_y" : "log_evidence";
}

const char *gpc_chain_method(const gpc_chain_settings *s)
{
    return s->gibbs ? "gibbs" : s->ep ? "ep" : "laplace";
}

/* The likelihoods each method's chains take. */
static int chain_lik_fits(const gpc_chain_settings *s)
{
    if (s->gibbs)
        return s->lik == GPC_LIK_MPROBIT;
    if (s->ep)
        return s->lik == GPC_LIK_PROBIT || s->lik == GPC_LIK_STEP || s->lik == GPC_LIK_MPROBIT;
    return s->lik != GPC_LIK_MPROBIT && s->lik != GPC_LIK_STEP;
}

/* The trailing values of a row: momenta with persistence, y with gibbs. */
static size_t extra_values(const gpc_chain_settings *s, size_t p)
{
    return s->gibbs ? s->classes * s->ntrain : s->hmc.persistence > 0 ? p : 0;
}

void gpc_chain_write_header(FILE *f, const gpc_chain_settings *s, const gpc_kernel *k)
{
    fprintf(f, "# gpc-chain %d\n# method %s\n# likelihood %s\n# kernel %s\n# dim %zu\n",
            GPC_CHAIN_VERSION, gpc_chain_method(s), gpc_lik_name(s->lik), s->kernel,
            s->dim);
    fprintf(f, "# training %zu 0x%016llx\n# prior normal %.17g %.17g\n", s->ntrain, s->data_hash,
            s->prior_mean, s->prior_sd);
    fprintf(f, "# step %.17g\n", s->hmc.step);
    if (s->adapt)
        fprintf(f, "# adapt %ld %.17g\n", s->adapt, s->target);
    if (!s->gibbs)
        fprintf(f, "# leapfrog %d\n# persistence %.17g\n", s->hmc.leapfrog, s->hmc.persistence);
    fprintf(f, "# seed %lu\n", s->hmc.seed);
    if (s->fixed)
        fprintf(f, "# fixed %s\n", s->fixed);
    /* the inputs' column names, so that a summary or a trace can name the
     * length scales after them */
    gpc_colnames_write_line(f, "# columns", gpc_kernel_colnames(k));
    size_t p = gpc_kernel_nparams(k);
    fputs("iteration", f);
    for (size_t j = 0; j < p; j++)
        fprintf(f, " %s", gpc_kernel_param_name(k, j));
    fprintf(f, " potential %s accepted step%s", gpc_chain_second_name(s),
            s->adapt ? " accept_prob" : "");
    for (size_t j = 0; !s->gibbs && s->hmc.persistence > 0 && j < p; j++)
        fprintf(f, " p.%s", gpc_kernel_param_name(k, j));
    for (size_t c = 0; s->gibbs && c < s->classes; c++)
        for (size_t i = 0; i < s->ntrain; i++)
            fprintf(f, " y%zu.%zu", c + 1, i + 1);
    fputc('\n', f);
}

void gpc_chain_write_values(FILE *f, const gpc_chain_settings *s, size_t p,
                            const gpc_chain_row *r)
{
    fprintf(f, "%ld", r->iteration);
    for (size_t j = 0; j < p; j++)
        fprintf(f, " %.17g", r->theta[j]);
    fprintf(f, " %.17g %.17g %d %.17g", r->potential, r->second, r->accepted, s->hmc.step);
    if (s->adapt)
        fprintf(f, " %.17g", r->accept_prob);
    for (size_t j = 0, ne = extra_values(s, p); j < ne; j++)
        fprintf(f, " %.17g", r->extra[j]);
    fputc('\n', f);
}

/* An HMC state as a row: its momenta trail it with persistence. */
static gpc_chain_row hmc_row(const gpc_hmc *h)
{
    gpc_chain_row r = {h->iteration, h->theta, h->U, h->aux, h->accepted, h->mom,
                       h->accept_prob};
    return r;
}

void gpc_chain_write_row(FILE *f, const gpc_chain_settings *s, const gpc_hmc *h)
{
    gpc_chain_row r = hmc_row(h);
    gpc_chain_write_values(f, s, h->p, &r);
}

/* ---- reading ----------------------------------------------------------- */

typedef struct {
    const char *name;
    char *base;      /* the text copy */
    char *pos, *end; /* its unread part */
    size_t line;
    int cut;         /* the line just returned had no newline */
} cursor;

/* The next line (NUL-terminated in place), or NULL at the end. */
static char *next_line(cursor *c)
{
    if (c->pos >= c->end)
        return NULL;
    char *s = c->pos, *nl = memchr(s, '\n', (size_t)(c->end - s));
    c->cut = nl == NULL;
    if (nl) {
        *nl = '\0';
        c->pos = nl + 1;
    } else {
        c->pos = c->end;
    }
    c->line++;
    s[strcspn(s, "\r")] = '\0';
    return s;
}

static int read_text(const char *path, gpc_chain *ch)
{
    FILE *f;
    const char *name;
    int st = gpc_input_open(path, &f, &name);
    if (st != GPC_OK)
        return st;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = gpc_malloc(cap + 1);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = gpc_realloc(buf, (cap *= 2) + 1);
    }
    struct stat sb;
    int err = ferror(f), stat_ok = fstat(fileno(f), &sb) == 0;
    gpc_input_close(f);
    if (err) {
        free(buf);
        return gpc_fail(GPC_EINPUT, "%s: read error", name);
    }
    buf[n] = '\0';
    ch->text = buf;
    ch->text_len = ch->file_len = n;
    ch->regular = stat_ok && S_ISREG(sb.st_mode) && f != stdin;
    ch->dev = stat_ok ? (unsigned long long)sb.st_dev : 0;
    ch->ino = stat_ok ? (unsigned long long)sb.st_ino : 0;
    return GPC_OK;
}

/* ---- the header: every key once, each value as its option takes it ---- */

enum { K_VERSION, K_METHOD, K_LIK, K_KERNEL, K_DIM, K_TRAINING, K_PRIOR, K_STEP, K_LEAPFROG,
       K_PERSISTENCE, K_SEED, K_FIXED, K_ADAPT, NKEYS };

static const struct {
    const char *name;
    int nvalues;      /* tokens after the key */
    const char *form; /* for messages */
} keys[NKEYS] = {
    {"gpc-chain", 1, "1"},
    {"method", 1, "laplace, ep or gibbs"},
    {"likelihood", 1, "logistic, probit, step, softmax or mprobit"},
    {"kernel", 1, "a kernel spec"},
    {"dim", 1, "a whole number of input columns, at least 1"},
    {"training", 2, "the number of cases, at least 1, and a hash 0x..."},
    {"prior", 3, "normal MEAN SD, with SD > 0"},
    {"step", 1, "a positive number"},
    {"leapfrog", 1, "a whole number from 1 to 100000"},
    {"persistence", 1, "a number in [0, 1)"},
    {"seed", 1, "a whole number from 0 to 4294967295"},
    {"fixed", 1, "hyperparameter names separated by commas"},
    {"adapt", 2, "the warm-up's iterations, from 1 to 100000000, and an acceptance rate in "
                 "(0, 1)"},
};

/* The whole token as a finite number (the test gpc_cli_double makes). */
static int to_double(const char *t, double *x)
{
    char *e;
    errno = 0;
    *x = strtod(t, &e);
    return e != t && *e == '\0' && errno != ERANGE && isfinite(*x);
}

/* The whole token as a decimal count in [min, max]. */
static int to_count(const char *t, unsigned long long min, unsigned long long max,
                    unsigned long long *x)
{
    char *e;
    if (t[0] < '0' || t[0] > '9')
        return 0;
    errno = 0;
    *x = strtoull(t, &e, 10);
    return *e == '\0' && errno != ERANGE && *x >= min && *x <= max;
}

static int to_hash(const char *t, unsigned long long *x)
{
    size_t n = strlen(t);
    if (n < 3 || n > 18 || t[0] != '0' || t[1] != 'x' ||
        strspn(t + 2, "0123456789abcdefABCDEF") != n - 2)
        return 0;
    *x = strtoull(t + 2, NULL, 16);
    return 1;
}

/* The value tokens v[] of key k into the settings; 0 if they are not valid. */
static int header_value(int k, char **v, gpc_chain_settings *set)
{
    unsigned long long u;
    double x;
    switch (k) {
    case K_VERSION: return !strcmp(v[0], "1");
    case K_METHOD:
        set->gibbs = !strcmp(v[0], "gibbs");
        set->ep = !strcmp(v[0], "ep");
        return set->gibbs || set->ep || !strcmp(v[0], "laplace");
    case K_LIK:
        /* the sampler's evidences take only these (as -l); which goes with
         * which method is checked once the header is read */
        if (!strcmp(v[0], "logistic"))
            set->lik = GPC_LIK_LOGISTIC;
        else if (!strcmp(v[0], "step"))
            set->lik = GPC_LIK_STEP;
        else if (!strcmp(v[0], "probit"))
            set->lik = GPC_LIK_PROBIT;
        else if (!strcmp(v[0], "softmax"))
            set->lik = GPC_LIK_SOFTMAX;
        else if (!strcmp(v[0], "mprobit"))
            set->lik = GPC_LIK_MPROBIT;
        else
            return 0;
        return 1;
    case K_KERNEL:
        return snprintf(set->kernel, sizeof set->kernel, "%s", v[0]) < (int)sizeof set->kernel;
    case K_DIM:
        if (!to_count(v[0], 1, SIZE_MAX, &u))
            return 0;
        set->dim = (size_t)u;
        return 1;
    case K_TRAINING:
        if (!to_count(v[0], 1, SIZE_MAX, &u) || !to_hash(v[1], &set->data_hash))
            return 0;
        set->ntrain = (size_t)u;
        return 1;
    case K_PRIOR:
        return !strcmp(v[0], "normal") && to_double(v[1], &set->prior_mean) &&
               to_double(v[2], &set->prior_sd) && set->prior_sd > 0;
    case K_STEP: return to_double(v[0], &set->hmc.step) && set->hmc.step > 0;
    case K_LEAPFROG:
        if (!to_count(v[0], 1, 100000, &u))
            return 0;
        set->hmc.leapfrog = (int)u;
        return 1;
    case K_PERSISTENCE:
        if (!to_double(v[0], &x) || !(x >= 0 && x < 1))
            return 0;
        set->hmc.persistence = x;
        return 1;
    case K_SEED:
        if (!to_count(v[0], 0, 4294967295ull, &u))
            return 0;
        set->hmc.seed = (unsigned long)u;
        return 1;
    case K_FIXED: /* the names are checked against the kernel with the columns */
        set->fixed = gpc_strdup(v[0]);
        return 1;
    case K_ADAPT:
        if (!to_count(v[0], 1, 100000000, &u) || !to_double(v[1], &set->target) ||
            !(set->target > 0 && set->target < 1))
            return 0;
        set->adapt = (long)u;
        return 1;
    }
    return 0;
}

/* Split s at blanks into at most max tokens; returns how many there were
 * (more than max means too many). */
static int tokens(char *s, char **tok, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (n < max)
            tok[n] = t;
        n++;
    }
    return n;
}

static size_t count_words(const char *s);

/* "# columns NAME...": the names, encoded, as many as dim says (checked
 * with the kernel, as the names of the hyperparameters). */
static int columns_line(cursor *c, char *s, gpc_chain_settings *set)
{
    if (set->colnames)
        return gpc_fail(GPC_EINPUT, "%s:%zu: 'columns' is set again; a chain has one value "
                        "for each setting", c->name, c->line);
    size_t n = count_words(s), k = 0;
    set->colnames = gpc_calloc(n + 1, sizeof *set->colnames);
    char *save = NULL;
    for (char *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (!(set->colnames[k] = gpc_colnames_decode(t)))
            return gpc_fail(GPC_EINPUT, "%s:%zu: bad column name '%s' ('%%' must start "
                            "'%%XX', two hex digits, not 00); restore the line as gpc-hmc "
                            "wrote it", c->name, c->line, t);
        k++;
    }
    size_t first, second;
    if (gpc_colnames_repeated(set->colnames, k, &first, &second))
        return gpc_fail(GPC_EINPUT, "%s:%zu: column %zu has the name of column %zu, '%s'; "
                        "restore the line as gpc-hmc wrote it", c->name, c->line, second + 1,
                        first + 1, set->colnames[second]);
    return GPC_OK;
}

/* One "# key value..." line; seen[k] records the line of each key. */
static int header_line(cursor *c, char *s, gpc_chain_settings *set, size_t *seen)
{
    if (strncmp(s + 1 + strspn(s + 1, " \t"), "columns", 7) == 0) {
        char *rest = s + 1 + strspn(s + 1, " \t") + 7;
        if (*rest == '\0' || *rest == ' ' || *rest == '\t')
            return columns_line(c, rest, set);
    }
    char *tok[5];
    int n = tokens(s + 1, tok, 5), k;
    if (n < 1)
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected '# key value'", c->name, c->line);
    for (k = 0; k < NKEYS && strcmp(tok[0], keys[k].name) != 0; k++)
        ;
    if (k == NKEYS)
        return gpc_fail(GPC_EINPUT, "%s:%zu: unknown chain setting '%s'", c->name, c->line,
                        tok[0]);
    if (seen[k])
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%s' is set again (first on line %zu); a chain "
                        "has one value for each setting", c->name, c->line, tok[0], seen[k]);
    seen[k] = c->line;
    if (k == K_VERSION && n == 2 && strcmp(tok[1], "1") != 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: chain file version %s is not supported (this "
                        "gpc reads version %d)", c->name, c->line, tok[1], GPC_CHAIN_VERSION);
    if (n - 1 != keys[k].nvalues || !header_value(k, tok + 1, set))
        return gpc_fail(GPC_EINPUT, "%s:%zu: bad '%s' setting: expected %s; restore the "
                        "line as gpc-hmc wrote it", c->name, c->line, tok[0], keys[k].form);
    return GPC_OK;
}

/* The '#' lines up to the column line, which is returned in *cols. */
static int parse_header(cursor *c, gpc_chain_settings *set, char **cols)
{
    size_t seen[NKEYS] = {0};
    char *s = next_line(c);
    if (!s)
        return gpc_fail(GPC_EINPUT, "%s: empty: not a gpc chain file", c->name);
    if (strncmp(s, "# gpc-chain", 11) != 0 || (s[11] != ' ' && s[11] != '\t'))
        return gpc_fail(GPC_EINPUT, "%s:1: not a gpc chain file (it should start with "
                        "'# gpc-chain %d')", c->name, GPC_CHAIN_VERSION);
    int st;
    for (; s && s[0] == '#'; s = next_line(c))
        if ((st = header_line(c, s, set, seen)) != GPC_OK)
            return st;
    for (int k = 0; k < NKEYS; k++) {
        int hmc_only = k == K_LEAPFROG || k == K_PERSISTENCE || k == K_ADAPT;
        if (k == K_FIXED || (k == K_ADAPT && !seen[k]))
            continue; /* optional */
        if (set->gibbs && hmc_only && seen[k])
            return gpc_fail(GPC_EINPUT, "%s:%zu: a gibbs chain has no '%s' setting; restore "
                            "the header as gpc-hmc wrote it", c->name, seen[k], keys[k].name);
        if (!seen[k] && !(set->gibbs && hmc_only))
            return gpc_fail(GPC_EINPUT, "%s: no '# %s' line in the header (before line %zu); "
                            "restore it as gpc-hmc wrote it", c->name, keys[k].name,
                            c->line + (s == NULL));
    }
    if (!chain_lik_fits(set))
        return gpc_fail(GPC_EINPUT, "%s:%zu: method %s with likelihood %s: a gibbs chain is "
                        "for mprobit, an ep chain for probit, step or mprobit, a laplace "
                        "chain for the others; restore the header as gpc-hmc wrote it",
                        c->name, seen[K_LIK], gpc_chain_method(set), gpc_lik_name(set->lik));
    if (!s)
        return gpc_fail(GPC_EINPUT, "%s: no column line after the header; the chain is "
                        "incomplete", c->name);
    if (c->cut)
        return gpc_fail(GPC_EINPUT, "%s:%zu: the column line has no end of line; the chain "
                        "is incomplete", c->name, c->line);
    *cols = s;
    return GPC_OK;
}

/* Without the data, an input dimension is believed up to this; parsing a
 * kernel costs a few words per column, so this is a few MB at most. */
#define DIM_BELIEVED 65536

/* The chain's dim against what is known before the kernel is parsed, since
 * the kernel allocates by it: the data's, or what the column line can name
 * (ARD kernels name a weight per input column). */
static int check_dim(const cursor *c, const gpc_chain_settings *set, size_t dim,
                     size_t cols_len)
{
    if (dim && set->dim != dim)
        return gpc_fail(GPC_EINPUT, "%s: the chain was run on inputs with %zu columns, these "
                        "have %zu; give the data it was run on", c->name, set->dim, dim);
    if (!dim && set->dim > DIM_BELIEVED && set->dim > cols_len)
        return gpc_fail(GPC_EINPUT, "%s: dim %zu is more than the chain's columns can name; "
                        "restore the line as gpc-hmc wrote it", c->name, set->dim);
    return GPC_OK;
}

/* The number of blank-separated words of s (not changed). */
static size_t count_words(const char *s)
{
    size_t n = 0;
    for (const char *t = s; *t;) {
        t += strspn(t, " \t");
        if (*t) {
            n++;
            t += strcspn(t, " \t");
        }
    }
    return n;
}

/* A gibbs chain's classes from its column count: the columns after the
 * fixed ones are y, C per training case, C at least 2. */
static int gibbs_classes(cursor *c, const char *s, gpc_chain *ch)
{
    size_t words = count_words(s), fixed = 5 + ch->p, n = ch->set.ntrain;
    if (words <= fixed || (words - fixed) % n != 0 || (words - fixed) / n < 2 ||
        (words - fixed) / n > GPC_KERNEL_MAX_CLASSES)
        return gpc_fail(GPC_EINPUT, "%s:%zu: a gibbs chain's columns end in y, 2 or more "
                        "classes for each of its %zu training cases; found %zu columns after "
                        "the %zu fixed ones", c->name, c->line, n,
                        words > fixed ? words - fixed : 0, fixed);
    ch->set.classes = (words - fixed) / n;
    return GPC_OK;
}

/* The 'fixed' names: the kernel's, each once, in its order (as
 * gpc_chain_fixed_list writes them). */
static int check_fixed(const cursor *c, const char *list, const gpc_kernel *k)
{
    char *copy = gpc_strdup(list), *save = NULL;
    long last = -1;
    int st = GPC_OK;
    for (char *t = strtok_r(copy, ",", &save); t && st == GPC_OK;
         t = strtok_r(NULL, ",", &save)) {
        long j = gpc_kernel_param_index(k, t);
        if (j <= last)
            st = gpc_fail(GPC_EINPUT, "%s: fixed hyperparameter '%s' %s; restore the line as "
                          "gpc-hmc wrote it", c->name, t,
                          j < 0 ? "is not one of the kernel's" : "is out of the kernel's order");
        last = j;
    }
    free(copy);
    return st;
}

char *gpc_chain_fixed_list(const gpc_kernel *k, const unsigned char *fixed)
{
    size_t p = gpc_kernel_nparams(k), len = 1;
    for (size_t j = 0; fixed && j < p; j++)
        len += fixed[j] ? strlen(gpc_kernel_param_name(k, j)) + 1 : 0;
    if (len == 1)
        return NULL;
    char *s = gpc_malloc(len), *e = s;
    for (size_t j = 0; j < p; j++)
        if (fixed[j])
            e += sprintf(e, "%s%s", e == s ? "" : ",", gpc_kernel_param_name(k, j));
    return s;
}

/* The hyperparameters named after the '# columns' line (as the summary
 * and the trace show them; the column line keeps the numbered names, so
 * that a chain reads the same with or without the line), or NULL if the
 * line does not name dim columns. */
static char (*column_labels(const cursor *c, const gpc_chain *ch, gpc_kernel *k))[GPC_NAME_MAX]
{
    size_t n = gpc_colnames_count(ch->set.colnames);
    if (n != ch->set.dim) {
        gpc_fail(GPC_EINPUT, "%s: the 'columns' line names %zu columns, dim is %zu; restore "
                 "the line as gpc-hmc wrote it", c->name, n, ch->set.dim);
        return NULL;
    }
    gpc_kernel_name_columns(k, ch->set.colnames);
    char (*labels)[GPC_NAME_MAX] = gpc_calloc(ch->p ? ch->p : 1, sizeof *labels);
    for (size_t j = 0; j < ch->p; j++)
        snprintf(labels[j], GPC_NAME_MAX, "%s", gpc_kernel_param_label(k, j));
    return labels;
}

/* The column line: iteration, the names, the fixed columns, the momenta or
 * a gibbs chain's y. */
static int column_line(cursor *c, char *s, gpc_chain *ch)
{
    gpc_kernel *k;
    if (gpc_kernel_parse(ch->set.kernel, ch->set.dim, &k) != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s: bad kernel setting: %s", c->name, gpc_errmsg());
    snprintf(ch->set.kernel, sizeof ch->set.kernel, "%s", gpc_kernel_spec(k));
    size_t p = ch->p = gpc_kernel_nparams(k);
    size_t nmom = !ch->set.gibbs && ch->set.hmc.persistence > 0 ? p : 0;
    if (ch->set.gibbs && gibbs_classes(c, s, ch) != GPC_OK) {
        gpc_kernel_free(k);
        return GPC_EINPUT;
    }
    if (ch->set.fixed && check_fixed(c, ch->set.fixed, k) != GPC_OK) {
        gpc_kernel_free(k);
        return GPC_EINPUT;
    }
    ch->nstate = ch->set.gibbs ? ch->set.classes * ch->set.ntrain : 0;
    size_t want_len = 64 + 48 * ch->nstate;
    ch->names = gpc_calloc(p, sizeof *ch->names);
    for (size_t j = 0; j < p; j++) {
        snprintf(ch->names[j], GPC_NAME_MAX, "%s", gpc_kernel_param_name(k, j));
        want_len += 2 * (strlen(ch->names[j]) + 3);
    }
    char (*labels)[GPC_NAME_MAX] = NULL;
    if (ch->set.colnames && !(labels = column_labels(c, ch, k))) {
        gpc_kernel_free(k);
        return GPC_EINPUT;
    }
    gpc_kernel_free(k);
    char *want = gpc_malloc(want_len);
    size_t n = (size_t)sprintf(want, "iteration");
    for (size_t j = 0; j < p; j++)
        n += (size_t)sprintf(want + n, " %s", ch->names[j]);
    n += (size_t)sprintf(want + n, " potential %s accepted step%s",
                         gpc_chain_second_name(&ch->set), ch->set.adapt ? " accept_prob" : "");
    for (size_t j = 0; j < nmom; j++)
        n += (size_t)sprintf(want + n, " p.%s", ch->names[j]);
    for (size_t cl = 0; cl < ch->set.classes && ch->set.gibbs; cl++)
        for (size_t i = 0; i < ch->set.ntrain; i++)
            n += (size_t)sprintf(want + n, " y%zu.%zu", cl + 1, i + 1);
    /* compare word by word, so that blanks may differ */
    char *save_a = NULL, *save_b = NULL, *copy = gpc_strdup(want);
    char *a = strtok_r(s, " \t", &save_a), *b = strtok_r(copy, " ", &save_b);
    while (a && b && !strcmp(a, b)) {
        a = strtok_r(NULL, " \t", &save_a);
        b = strtok_r(NULL, " ", &save_b);
    }
    free(copy);
    int st = GPC_OK;
    if (a || b)
        st = gpc_fail(GPC_EINPUT, "%s:%zu: expected the columns '%s'", c->name, c->line, want);
    free(want);
    for (size_t j = 0; st == GPC_OK && labels && j < p; j++)
        memcpy(ch->names[j], labels[j], GPC_NAME_MAX);
    free(labels);
    return st;
}

/* Room for rows up to cap. */
static void grow_rows(gpc_chain *ch, size_t cap)
{
    size_t p = ch->p;
    ch->iteration = gpc_reallocarray(ch->iteration, cap, sizeof *ch->iteration);
    ch->theta = gpc_reallocarray(ch->theta, cap, p * sizeof *ch->theta);
    if (!ch->set.gibbs && ch->set.hmc.persistence > 0)
        ch->mom = gpc_reallocarray(ch->mom, cap, p * sizeof *ch->mom);
    if (ch->nstate)
        ch->state = gpc_reallocarray(ch->state, cap, ch->nstate * sizeof *ch->state);
    ch->potential = gpc_reallocarray(ch->potential, cap, sizeof *ch->potential);
    ch->log_evidence = gpc_reallocarray(ch->log_evidence, cap, sizeof *ch->log_evidence);
    ch->accepted = gpc_reallocarray(ch->accepted, cap, sizeof *ch->accepted);
    ch->step = gpc_reallocarray(ch->step, cap, sizeof *ch->step);
    if (ch->set.adapt)
        ch->accept_prob = gpc_reallocarray(ch->accept_prob, cap, sizeof *ch->accept_prob);
}

/* One row into row r; v has room for every column. */
static int data_row(cursor *c, char *s, gpc_chain *ch, size_t r, double *v)
{
    size_t p = ch->p, na = ch->set.adapt ? 1 : 0;
    size_t ncol = 5 + p + na + (ch->mom ? p : 0) + ch->nstate;
    char *e;
    errno = 0;
    long it = strtol(s, &e, 10);
    if (e == s || (*e != ' ' && *e != '\t') || errno == ERANGE || it < 1 || it == LONG_MAX)
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected an iteration number (1 or more) and "
                        "%zu numbers", c->name, c->line, ncol - 1);
    for (size_t j = 1; j < ncol; j++) {
        s = e;
        v[j] = strtod(s, &e);
        if (e == s || !isfinite(v[j]))
            return gpc_fail(GPC_EINPUT, "%s:%zu: expected %zu numbers", c->name, c->line, ncol);
    }
    if (e[strspn(e, " \t")] != '\0')
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected %zu numbers", c->name, c->line, ncol);
    if (v[3 + p] != 0.0 && v[3 + p] != 1.0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: the accepted column holds %g; expected 0 or 1",
                        c->name, c->line, v[3 + p]);
    if (!(v[4 + p] > 0))
        return gpc_fail(GPC_EINPUT, "%s:%zu: the step column holds %g; expected a positive "
                        "number", c->name, c->line, v[4 + p]);
    if (na && !(v[5 + p] >= 0 && v[5 + p] <= 1))
        return gpc_fail(GPC_EINPUT, "%s:%zu: the accept_prob column holds %g; expected a "
                        "number in [0, 1]", c->name, c->line, v[5 + p]);
    if (r > 0 && it != ch->iteration[r - 1] + 1)
        return gpc_fail(GPC_EINPUT, "%s:%zu: iteration %ld does not follow %ld", c->name,
                        c->line, it, ch->iteration[r - 1]);
    ch->iteration[r] = it;
    memcpy(ch->theta + r * p, v + 1, p * sizeof *v);
    ch->potential[r] = v[1 + p];
    ch->log_evidence[r] = v[2 + p];
    ch->accepted[r] = v[3 + p] != 0.0;
    ch->step[r] = v[4 + p];
    if (na)
        ch->accept_prob[r] = v[5 + p];
    if (ch->mom)
        memcpy(ch->mom + r * p, v + 5 + p + na, p * sizeof *v);
    if (ch->nstate)
        memcpy(ch->state + r * ch->nstate, v + 5 + p, ch->nstate * sizeof *v);
    return GPC_OK;
}

static int parse_rows(cursor *c, gpc_chain *ch)
{
    size_t cap = 0;
    double *v = gpc_mallocarray(6 + 2 * ch->p + ch->nstate, sizeof *v);
    int st = GPC_OK;
    char *s;
    while (st == GPC_OK && (s = next_line(c))) {
        if (c->cut) {
            /* killed while writing it: the rows before are whole */
            gpc_warn("%s:%zu: the last row has no end of line (the run was stopped while "
                     "writing it); it is left out", c->name, c->line);
            ch->text_len = (size_t)(s - c->base);
            break;
        }
        if (s[strspn(s, " \t")] == '\0')
            continue;
        if (ch->rows == cap)
            grow_rows(ch, cap = cap ? 2 * cap : 256);
        if ((st = data_row(c, s, ch, ch->rows, v)) == GPC_OK)
            ch->rows++;
    }
    free(v);
    return st;
}

int gpc_chain_read(const char *path, size_t dim, gpc_chain **out)
{
    gpc_chain *ch = gpc_calloc(1, sizeof *ch);
    int st = read_text(path, ch);
    if (st != GPC_OK) {
        free(ch);
        return st;
    }
    char *copy = gpc_malloc(ch->text_len + 1), *cols = NULL;
    memcpy(copy, ch->text, ch->text_len + 1);
    cursor c = {!path || !strcmp(path, "-") ? "<stdin>" : path, copy, copy,
                copy + ch->text_len, 0, 0};
    if ((st = parse_header(&c, &ch->set, &cols)) == GPC_OK &&
        (st = check_dim(&c, &ch->set, dim, strlen(cols))) == GPC_OK &&
        (st = column_line(&c, cols, ch)) == GPC_OK)
        st = parse_rows(&c, ch);
    free(copy);
    if (st != GPC_OK) {
        gpc_chain_free(ch);
        return st;
    }
    *out = ch;
    return GPC_OK;
}

void gpc_chain_free(gpc_chain *c)
{
    if (!c)
        return;
    free(c->names);
    free(c->iteration);
    free(c->theta);
    free(c->mom);
    free(c->state);
    free(c->potential);
    free(c->log_evidence);
    free(c->accepted);
    free(c->step);
    free(c->accept_prob);
    free(c->text);
    free(c->set.fixed);
    gpc_colnames_free(c->set.colnames);
    free(c);
}

/* ---- the step and the warm-up ------------------------------------------- */

double gpc_chain_next_step(const gpc_chain_settings *s, gpc_step_adapt *a, long it, double alpha,
                           double step)
{
    if (!s->adapt || it > s->adapt)
        return step; /* fixed, or frozen since the warm-up's end */
    double next = gpc_step_adapt_update(a, alpha);
    return it < s->adapt ? next : gpc_step_adapt_final(a);
}

int gpc_chain_resume_step(const gpc_chain *c, const char *name, gpc_step_adapt *a,
                          double *step)
{
    const gpc_chain_settings *s = &c->set;
    double next = s->hmc.step;
    gpc_step_adapt_init(a, next, s->target);
    *step = next;
    if (!s->adapt || c->rows == 0)
        return GPC_OK;
    if (c->iteration[0] != 1)
        return gpc_fail(GPC_EINPUT, "%s: the chain's rows start at iteration %ld, not 1: its "
                        "step adaptation cannot be replayed to continue it", name,
                        c->iteration[0]);
    for (size_t r = 0; r < c->rows; r++) {
        /* the same arithmetic as the run, so the same bits */
        if (c->step[r] != next)
            return gpc_fail(GPC_EINPUT, "%s: iteration %ld has step %.17g where the chain's "
                            "adaptation gives %.17g: its rows were changed, and it cannot be "
                            "continued exactly", name, c->iteration[r], c->step[r], next);
        next = gpc_chain_next_step(s, a, c->iteration[r], c->accept_prob[r], next);
    }
    *step = next;
    return GPC_OK;
}

size_t gpc_chain_warmup_rows(const gpc_chain *c)
{
    size_t r = 0;
    while (r < c->rows && c->iteration[r] <= c->set.adapt)
        r++;
    return r;
}

int gpc_chain_burn(const gpc_chain *c, const char *name, long burn, size_t rows, size_t *out)
{
    size_t warm = gpc_chain_warmup_rows(c);
    if (warm > rows)
        warm = rows;
    if (burn >= 0 && (size_t)burn < warm)
        return gpc_fail(GPC_EINPUT, "%s: a burn-in of %ld would keep iterations of the "
                        "step's warm-up (the first %ld, with the step still changing); give "
                        "--burn=%zu or more", name, burn, c->set.adapt, warm);
    size_t third = rows / 3;
    *out = burn >= 0 ? (size_t)burn : warm > third ? warm : third;
    return GPC_OK;
}

/* ---- pooling ------------------------------------------------------------- */

/* The settings that fix a chain's target distribution, each as a short
 * text for messages. */
enum { P_METHOD, P_LIK, P_DATA, P_KERNEL, P_PRIOR, P_FIXED, NPOOL };

static const char *const pool_names[NPOOL] = {"method", "likelihood", "training data",
                                              "kernel", "prior", "list of fixed hyperparameters"};

static void pool_setting(const gpc_chain_settings *s, int k, char *buf, size_t size)
{
    switch (k) {
    case P_METHOD: snprintf(buf, size, "%s", gpc_chain_method(s)); break;
    case P_LIK: snprintf(buf, size, "%s", gpc_lik_name(s->lik)); break;
    case P_DATA:
        /* the hash covers the values; the sizes say at a glance what differs */
        snprintf(buf, size, "%zu cases of %zu columns, hash 0x%016llx", s->ntrain, s->dim,
                 s->data_hash);
        break;
    case P_KERNEL: snprintf(buf, size, "%s", s->kernel); break;
    case P_PRIOR: snprintf(buf, size, "normal %.17g %.17g", s->prior_mean, s->prior_sd); break;
    case P_FIXED: snprintf(buf, size, "%s", s->fixed ? s->fixed : "none"); break;
    }
}

int gpc_chain_check_pool(gpc_chain *const *c, const char *const *names, size_t m)
{
    char a[1100], b[1100];
    for (size_t i = 1; i < m; i++)
        for (int k = 0; k < NPOOL; k++) {
            pool_setting(&c[0]->set, k, a, sizeof a);
            pool_setting(&c[i]->set, k, b, sizeof b);
            if (strcmp(a, b) != 0)
                return gpc_fail(GPC_EINPUT, "%s: %s '%s' differs from %s's '%s': the chains "
                                "sample different posteriors, which cannot be pooled; give "
                                "chains run on the same data with the same settings (seeds may "
                                "differ)", names[i], pool_names[k], b, names[0], a);
        }
    return GPC_OK;
}

/* ---- writing ------------------------------------------------------------- */

struct gpc_chain_out {
    gpc_output *out; /* a new chain: a file put in place with its first row, a
                        device, or standard output (see output.h) */
    FILE *f;         /* where the rows go */
    char *path;      /* the chain appended to in place; NULL for a new one */
};

static int busy(const char *path)
{
    return gpc_fail(GPC_EINPUT, "%s: another run is writing this chain; extend it when that "
                    "run is done", path);
}

int gpc_chain_out_create(const char *path, gpc_chain_out **out)
{
    *out = NULL;
    gpc_output *o;
    int st = gpc_output_open(path, &o);
    if (st != GPC_OK)
        return st;
    gpc_chain_out *c = gpc_calloc(1, sizeof *c);
    c->out = o;
    c->f = gpc_output_file(o);
    *out = c;
    return GPC_OK;
}

int gpc_chain_out_append(const char *path, const gpc_chain *c, gpc_chain_out **out)
{
    *out = NULL;
    if (!c->regular)
        return gpc_fail(GPC_EINPUT, "%s: not a regular file, so it cannot be extended in "
                        "place; give -o FILE", path);
    int fd = open(path, O_WRONLY | O_APPEND);
    if (fd < 0)
        return gpc_fail(GPC_EINPUT, "%s: cannot open for writing: %s", path, strerror(errno));
    if (!gpc_output_lock(fd)) { /* the lock a new chain holds too */
        close(fd);
        return busy(path);
    }
    struct stat sb;
    /* another run may have extended it since it was read: appending would
     * repeat or interleave iterations */
    if (fstat(fd, &sb) != 0 || (unsigned long long)sb.st_dev != c->dev ||
        (unsigned long long)sb.st_ino != c->ino || (size_t)sb.st_size != c->file_len) {
        close(fd);
        return gpc_fail(GPC_EINPUT, "%s: the file changed while it was read (is another run "
                        "extending it?); try again when it is done", path);
    }
    FILE *f = NULL;
    if ((c->text_len < c->file_len && ftruncate(fd, (off_t)c->text_len) != 0) ||
        !(f = fdopen(fd, "ab"))) {
        int err = errno;
        close(fd);
        return gpc_fail(GPC_EINPUT, "%s: cannot write: %s", path, strerror(err));
    }
    gpc_chain_out *o = gpc_calloc(1, sizeof *o);
    o->f = f;
    o->path = gpc_strdup(path);
    *out = o;
    return GPC_OK;
}

FILE *gpc_chain_out_file(gpc_chain_out *o) { return o->f; }

static int flush(gpc_chain_out *o)
{
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        return gpc_fail(GPC_EINPUT, "%s: write error: %s", o->path,
                        strerror(errno ? errno : EIO));
    return GPC_OK;
}

int gpc_chain_out_values(gpc_chain_out *o, const gpc_chain_settings *s, size_t p,
                         const gpc_chain_row *r)
{
    gpc_chain_write_values(o->f, s, p, r);
    /* a new file goes in place with its first row, and every row is
     * flushed before the next iteration starts */
    return o->out ? gpc_output_publish(o->out) : flush(o);
}

int gpc_chain_out_row(gpc_chain_out *o, const gpc_chain_settings *s, const gpc_hmc *h)
{
    gpc_chain_row r = hmc_row(h);
    return gpc_chain_out_values(o, s, h->p, &r);
}

int gpc_chain_out_close(gpc_chain_out *o)
{
    int st;
    if (o->out) {
        st = gpc_output_commit(o->out);
    } else {
        st = flush(o);
        if (fclose(o->f) != 0 && st == GPC_OK)
            st = gpc_fail(GPC_EINPUT, "%s: write error: %s", o->path, strerror(errno));
    }
    free(o->path);
    free(o);
    return st;
}

void gpc_chain_out_abort(gpc_chain_out *o)
{
    if (!o)
        return;
    if (o->out) {
        gpc_output_abort(o->out);
    } else {
        fflush(o->f);
        fclose(o->f);
    }
    free(o->path);
    free(o);
}

int gpc_chain_run(gpc_chain_out *o, gpc_hmc *h, const gpc_potential *U, gpc_chain_settings *s,
                  gpc_step_adapt *a, long n, gpc_chain_stop_fn stop, void *ctx, long *done)
{
    int st = GPC_OK;
    for (*done = 0; *done < n;) {
        if ((st = gpc_hmc_iterate(h, U, &s->hmc)) != GPC_OK ||
            (st = gpc_chain_out_row(o, s, h)) != GPC_OK)
            break;
        /* the row holds the step it was run with; the next may differ */
        s->hmc.step = gpc_chain_next_step(s, a, h->iteration, h->accept_prob, s->hmc.step);
        ++*done;
        if (stop && stop(ctx, h, *done))
            break;
    }
    return st;
}
