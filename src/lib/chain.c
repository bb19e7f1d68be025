#include "chain.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

unsigned long long gpc_chain_data_hash(const gsl_matrix *X, const gsl_vector *y)
{
    /* FNV-1a over the bytes of the numbers, row by row */
    unsigned long long h = 14695981039346656037ull;
    for (size_t i = 0; i < X->size1; i++) {
        double v[2] = {gsl_vector_get(y, i), 0.0};
        for (size_t l = 0; l <= X->size2; l++) {
            const unsigned char *b = (const unsigned char *)(l < X->size2
                                                                 ? gsl_matrix_const_ptr(X, i, l)
                                                                 : &v[0]);
            for (size_t k = 0; k < sizeof(double); k++)
                h = (h ^ b[k]) * 1099511628211ull;
        }
    }
    return h;
}

void gpc_chain_write_header(FILE *f, const gpc_chain_settings *s, const gpc_kernel *k)
{
    fprintf(f, "# gpc-chain %d\n# method laplace\n# likelihood %s\n# kernel %s\n# dim %zu\n",
            GPC_CHAIN_VERSION, gpc_lik_name(s->lik), s->kernel, s->dim);
    fprintf(f, "# training %zu 0x%016llx\n# prior normal %.17g %.17g\n", s->ntrain, s->data_hash,
            s->prior_mean, s->prior_sd);
    fprintf(f, "# step %.17g\n# leapfrog %d\n# persistence %.17g\n# seed %lu\n", s->hmc.step,
            s->hmc.leapfrog, s->hmc.persistence, s->hmc.seed);
    size_t p = gpc_kernel_nparams(k);
    fputs("iteration", f);
    for (size_t j = 0; j < p; j++)
        fprintf(f, " %s", gpc_kernel_param_name(k, j));
    fputs(" potential log_evidence accepted step", f);
    for (size_t j = 0; s->hmc.persistence > 0 && j < p; j++)
        fprintf(f, " p.%s", gpc_kernel_param_name(k, j));
    fputc('\n', f);
}

void gpc_chain_write_row(FILE *f, const gpc_chain_settings *s, const gpc_hmc *h)
{
    fprintf(f, "%ld", h->iteration);
    for (size_t j = 0; j < h->p; j++)
        fprintf(f, " %.17g", h->theta[j]);
    fprintf(f, " %.17g %.17g %d %.17g", h->U, h->aux, h->accepted, s->hmc.step);
    for (size_t j = 0; s->hmc.persistence > 0 && j < h->p; j++)
        fprintf(f, " %.17g", h->mom[j]);
    fputc('\n', f);
}

/* ---- reading ----------------------------------------------------------- */

typedef struct {
    const char *name;
    char *pos, *end; /* unread part of the text copy */
    size_t line;
} cursor;

/* The next line (NUL-terminated in place), or NULL at the end. */
static char *next_line(cursor *c)
{
    if (c->pos >= c->end)
        return NULL;
    char *s = c->pos, *nl = memchr(s, '\n', (size_t)(c->end - s));
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

static int read_text(const char *path, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return gpc_fail(GPC_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0, got;
    char *buf = gpc_malloc(cap + 1);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = gpc_realloc(buf, (cap *= 2) + 1);
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return gpc_fail(GPC_EINPUT, "%s: read error", path);
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return GPC_OK;
}

/* One "# key value" header line into the settings. */
static int header_line(cursor *c, const char *s, gpc_chain_settings *set)
{
    char key[32], a[1024], b[64];
    int k = sscanf(s, "# %31s %1023s %63s", key, a, b);
    if (k < 2)
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected '# key value'", c->name, c->line);
    if (!strcmp(key, "gpc-chain")) {
        if (strcmp(a, "1") != 0)
            return gpc_fail(GPC_EINPUT, "%s:%zu: chain file version %s is not supported",
                            c->name, c->line, a);
    } else if (!strcmp(key, "method")) {
        if (strcmp(a, "laplace") != 0)
            return gpc_fail(GPC_EINPUT, "%s:%zu: unknown method '%s'", c->name, c->line, a);
    } else if (!strcmp(key, "likelihood")) {
        if (gpc_lik_parse(a, &set->lik) != GPC_OK)
            return gpc_fail(GPC_EINPUT, "%s:%zu: %s", c->name, c->line, gpc_errmsg());
    } else if (!strcmp(key, "kernel")) {
        snprintf(set->kernel, sizeof set->kernel, "%s", a);
    } else if (!strcmp(key, "dim")) {
        set->dim = strtoul(a, NULL, 10);
    } else if (!strcmp(key, "training") && k == 3) {
        set->ntrain = strtoul(a, NULL, 10);
        set->data_hash = strtoull(b, NULL, 16);
    } else if (!strcmp(key, "prior") && !strcmp(a, "normal")) {
        if (sscanf(s, "# prior normal %lf %lf", &set->prior_mean, &set->prior_sd) != 2)
            return gpc_fail(GPC_EINPUT, "%s:%zu: expected '# prior normal MEAN SD'", c->name,
                            c->line);
    } else if (!strcmp(key, "step")) {
        set->hmc.step = strtod(a, NULL);
    } else if (!strcmp(key, "leapfrog")) {
        set->hmc.leapfrog = atoi(a);
    } else if (!strcmp(key, "persistence")) {
        set->hmc.persistence = strtod(a, NULL);
    } else if (!strcmp(key, "seed")) {
        set->hmc.seed = strtoul(a, NULL, 10);
    } else {
        return gpc_fail(GPC_EINPUT, "%s:%zu: unknown chain setting '%s'", c->name, c->line, key);
    }
    return GPC_OK;
}

/* The column line: iteration, the names, then the fixed columns. */
static int column_line(cursor *c, char *s, gpc_chain *ch)
{
    gpc_kernel *k;
    if (gpc_kernel_parse(ch->set.kernel, ch->set.dim, &k) != GPC_OK)
        return gpc_fail(GPC_EINPUT, "%s: bad kernel setting: %s", c->name, gpc_errmsg());
    ch->p = gpc_kernel_nparams(k);
    ch->names = gpc_calloc(ch->p, sizeof *ch->names);
    char want[8192] = "iteration";
    for (size_t j = 0; j < ch->p; j++) {
        snprintf(ch->names[j], GPC_NAME_MAX, "%s", gpc_kernel_param_name(k, j));
        strncat(want, " ", sizeof want - strlen(want) - 1);
        strncat(want, ch->names[j], sizeof want - strlen(want) - 1);
    }
    strncat(want, " potential log_evidence accepted step", sizeof want - strlen(want) - 1);
    for (size_t j = 0; ch->set.hmc.persistence > 0 && j < ch->p; j++) {
        strncat(want, " p.", sizeof want - strlen(want) - 1);
        strncat(want, ch->names[j], sizeof want - strlen(want) - 1);
    }
    gpc_kernel_free(k);
    if (strcmp(s, want) != 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected the columns '%s'", c->name, c->line, want);
    return GPC_OK;
}

static int data_row(cursor *c, char *s, gpc_chain *ch, size_t r)
{
    size_t p = ch->p, ncol = 5 + p + (ch->mom ? p : 0);
    double v[ncol];
    char *e;
    for (size_t j = 0; j < ncol; j++, s = e) {
        v[j] = strtod(s, &e);
        if (e == s || !isfinite(v[j]))
            return gpc_fail(GPC_EINPUT, "%s:%zu: expected %zu numbers", c->name, c->line, ncol);
    }
    if (s[strspn(s, " \t")] != '\0')
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected %zu numbers", c->name, c->line, ncol);
    ch->iteration[r] = (long)v[0];
    memcpy(ch->theta + r * p, v + 1, p * sizeof *v);
    ch->potential[r] = v[1 + p];
    ch->log_evidence[r] = v[2 + p];
    ch->accepted[r] = v[3 + p] != 0.0;
    if (ch->mom)
        memcpy(ch->mom + r * p, v + 5 + p, p * sizeof *v);
    if (r > 0 && ch->iteration[r] != ch->iteration[r - 1] + 1)
        return gpc_fail(GPC_EINPUT, "%s:%zu: iteration %ld does not follow %ld", c->name,
                        c->line, ch->iteration[r], ch->iteration[r - 1]);
    return GPC_OK;
}

static int parse(cursor *c, gpc_chain *ch)
{
    char *s;
    int st;
    while ((s = next_line(c)) && s[0] == '#')
        if ((st = header_line(c, s, &ch->set)) != GPC_OK)
            return st;
    if (c->line == 1 && s)
        return gpc_fail(GPC_EINPUT, "%s:1: not a gpc chain file (it should start with "
                        "'# gpc-chain %d')", c->name, GPC_CHAIN_VERSION);
    if (!s)
        return gpc_fail(GPC_EINPUT, "%s: no column line: not a gpc chain file", c->name);
    if ((st = column_line(c, s, ch)) != GPC_OK)
        return st;
    size_t cap = 256;
    ch->iteration = gpc_malloc(cap * sizeof *ch->iteration);
    ch->theta = gpc_malloc(cap * ch->p * sizeof *ch->theta);
    ch->mom = ch->set.hmc.persistence > 0 ? gpc_malloc(cap * ch->p * sizeof *ch->mom) : NULL;
    ch->potential = gpc_malloc(cap * sizeof *ch->potential);
    ch->log_evidence = gpc_malloc(cap * sizeof *ch->log_evidence);
    ch->accepted = gpc_malloc(cap * sizeof *ch->accepted);
    while ((s = next_line(c))) {
        if (s[strspn(s, " \t")] == '\0')
            continue;
        if (ch->rows == cap) {
            cap *= 2;
            ch->iteration = gpc_realloc(ch->iteration, cap * sizeof *ch->iteration);
            ch->theta = gpc_realloc(ch->theta, cap * ch->p * sizeof *ch->theta);
            if (ch->mom)
                ch->mom = gpc_realloc(ch->mom, cap * ch->p * sizeof *ch->mom);
            ch->potential = gpc_realloc(ch->potential, cap * sizeof *ch->potential);
            ch->log_evidence = gpc_realloc(ch->log_evidence, cap * sizeof *ch->log_evidence);
            ch->accepted = gpc_realloc(ch->accepted, cap * sizeof *ch->accepted);
        }
        if ((st = data_row(c, s, ch, ch->rows)) != GPC_OK)
            return st;
        ch->rows++;
    }
    return GPC_OK;
}

int gpc_chain_read(const char *path, gpc_chain **out)
{
    gpc_chain *ch = gpc_calloc(1, sizeof *ch);
    int st = read_text(path, &ch->text, &ch->text_len);
    if (st != GPC_OK) {
        free(ch);
        return st;
    }
    char *copy = gpc_malloc(ch->text_len + 1);
    memcpy(copy, ch->text, ch->text_len + 1);
    cursor c = {path, copy, copy + ch->text_len, 0};
    st = parse(&c, ch);
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
    free(c->potential);
    free(c->log_evidence);
    free(c->accepted);
    free(c->text);
    free(c);
}
