#include "io/labels.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "io/libsvm.h"
#include "io/matio.h"
#include "io/npy.h"

static const char NPY_MAGIC[] = "\x93NUMPY";

/* The labels as read: each token with its line, before classes are known. */
typedef struct {
    const char *name;
    char **tok;   /* n tokens, each its own string */
    size_t *line; /* source line of each token; 0 for .npy */
    size_t n, cap;
} tokens;

static void tokens_free(tokens *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->tok[i]);
    free(t->tok);
    free(t->line);
}

static void push(tokens *t, const char *s, size_t len, size_t line)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->tok = gpc_reallocarray(t->tok, t->cap, sizeof *t->tok);
        t->line = gpc_reallocarray(t->line, t->cap, sizeof *t->line);
    }
    t->tok[t->n] = gpc_malloc(len + 1);
    memcpy(t->tok[t->n], s, len);
    t->tok[t->n][len] = '\0';
    t->line[t->n++] = line;
}

int gpc_labels_number(const char *s, double *x)
{
    char *end;
    errno = 0;
    *x = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(*x);
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* One line of a text labels file: a comment, or exactly one token. */
static int text_line(tokens *t, const char *s, const char *eol, size_t line)
{
    while (s < eol && is_blank(*s))
        s++;
    while (eol > s && is_blank(eol[-1]))
        eol--;
    if (s == eol)
        return gpc_fail(GPC_EINPUT, "%s:%zu: blank line: every case needs its label (a "
                        "missing one would shift the rest onto the wrong cases)", t->name, line);
    if (*s == '#')
        return GPC_OK;
    for (const char *p = s; p < eol; p++)
        if (is_blank(*p))
            return gpc_fail(GPC_EINPUT, "%s:%zu: expected one label, found '%.*s'", t->name,
                            line, (int)(eol - s > 60 ? 60 : eol - s), s);
    push(t, s, (size_t)(eol - s), line);
    return GPC_OK;
}

static int read_text(tokens *t, const char *text, size_t len)
{
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        size_t line = 1;
        for (const char *p = text; p < nul; p++)
            line += *p == '\n';
        return gpc_fail(GPC_EINPUT, "%s:%zu: a NUL byte: this is not a text labels file",
                        t->name, line);
    }
    /* an editor's invisible mark would glue itself to the first label and
     * make a class of its own */
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        return gpc_fail(GPC_EINPUT, "%s:1: a UTF-8 byte-order mark at the start; save the file "
                        "without it (as plain UTF-8 or ASCII)", t->name);
    const char *s = text, *end = text + len;
    for (size_t line = 1; s < end; line++) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        if (!eol)
            eol = end;
        int st = text_line(t, s, eol, line);
        if (st != GPC_OK)
            return st;
        s = eol + 1;
    }
    return GPC_OK;
}

/* Drop the first token, a header line's column name. */
static void drop_first(tokens *t)
{
    free(t->tok[0]);
    memmove(t->tok, t->tok + 1, (t->n - 1) * sizeof *t->tok);
    memmove(t->line, t->line + 1, (t->n - 1) * sizeof *t->line);
    t->n--;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether every label after the first is seen at least twice. */
static int no_single_below(const tokens *t)
{
    size_t n = t->n - 1;
    char **sorted = gpc_mallocarray(n, sizeof *sorted);
    memcpy(sorted, t->tok + 1, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, by_string);
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++)
        ok = (i > 0 && !strcmp(sorted[i], sorted[i - 1])) ||
             (i + 1 < n && !strcmp(sorted[i], sorted[i + 1]));
    free(sorted);
    return ok;
}

/* A first line that names the column rather than labelling a case: always
 * under --header; otherwise a word above labels that are all numbers (as
 * pandas writes a Series of codes), or a word seen once above words of two
 * or more classes each seen at least twice (a class of one case among
 * those is far less likely than a header; --no-header keeps it).  A word
 * that labels only the first case above words with other single ones may
 * be either: it is kept, with a warning naming --header. */
enum { HEADER_KEEP, HEADER_DROP, HEADER_NAME, HEADER_DOUBT };

/* What to make of the first of n labels, from counts over the others:
 * numbers of them are numbers, again equal the first, others (from the
 * third on) differ from the second; no_single when each of them is seen at
 * least twice among them.  HEADER_NAME and HEADER_DOUBT are a drop and a
 * keep that say why. */
static int header_verdict(size_t n, int first_is_number, size_t numbers, size_t again,
                          size_t others, int no_single)
{
    gpc_header_mode mode = gpc_matio_header();
    if (mode == GPC_HEADER_NO || n < 2 || (mode == GPC_HEADER_AUTO && first_is_number))
        return HEADER_KEEP;
    if (mode == GPC_HEADER_YES || numbers == n - 1)
        return HEADER_DROP;
    /* a word seen once above words of classes seen twice or more is the
     * column's name ("class" as pandas writes a Series), not a class of
     * one case */
    if (!again && others && numbers == 0 && no_single)
        return HEADER_NAME;
    return !again && others ? HEADER_DOUBT : HEADER_KEEP;
}

/* Say why the first label, tok at line, is dropped or kept (verdict as
 * header_verdict gives it); 1 when it is dropped. */
static int header_said(int verdict, const char *name, size_t line, const char *tok)
{
    if (verdict == HEADER_NAME)
        gpc_info(1, "%s:%zu: '%s' is taken as the column's name (pass --no-header if it is a "
                 "label)", name, line, tok);
    else if (verdict == HEADER_DOUBT)
        gpc_warn("%s:%zu: '%s' labels only this case; if the line is a header, pass --header",
                 name, line, tok);
    return verdict == HEADER_DROP || verdict == HEADER_NAME;
}

static void header_label(tokens *t)
{
    double x;
    size_t numbers = 0, again = 0, others = 0;
    for (size_t i = 1; i < t->n; i++) {
        numbers += (size_t)gpc_labels_number(t->tok[i], &x);
        again += strcmp(t->tok[i], t->tok[0]) == 0;
        others += i > 1 && strcmp(t->tok[i], t->tok[1]) != 0;
    }
    int v = t->n < 2 ? HEADER_KEEP
                     : header_verdict(t->n, gpc_labels_number(t->tok[0], &x), numbers, again,
                                      others, 0);
    /* whether every label after the first is seen twice is asked only when
     * it decides, for it sorts them */
    if (v == HEADER_DOUBT && numbers == 0 && no_single_below(t))
        v = HEADER_NAME;
    if (header_said(v, t->name, t->line[0], t->tok[0]))
        drop_first(t);
}

static void take_npy_label(void *t, const char *s, size_t len) { push(t, s, len, 0); }

/* A one-column .npy file: numbers (as the shortest exact text, so that they
 * compare and print as numbers) or strings. */
static int read_npy(tokens *t, const char *text, size_t len)
{
    return gpc_npy_read_labels((const unsigned char *)text, len, t->name, take_npy_label, t);
}

/* A LIBSVM file: the first token of each line, with its line. */
static int read_libsvm(tokens *t, const char *text, size_t len)
{
    gpc_source src = {.line = NULL};
    snprintf(src.name, sizeof src.name, "%s", t->name);
    char **labels;
    int st = gpc_libsvm_read(text, len, &src, NULL, &labels);
    for (size_t i = 0; st == GPC_OK && i < src.rows; i++)
        push(t, labels[i], strlen(labels[i]), src.line[i]);
    if (st == GPC_OK)
        gpc_libsvm_labels_free(labels, src.rows);
    gpc_source_free(&src);
    return st;
}

/* The labels of a file's contents (len bytes and a NUL), called name. */
static int tokens_of_text(const char *text, size_t len, const char *name, tokens *t)
{
    int st;
    *t = (tokens){.name = name};
    if (len >= sizeof NPY_MAGIC - 1 && memcmp(text, NPY_MAGIC, sizeof NPY_MAGIC - 1) == 0)
        st = read_npy(t, text, len);
    else if (gpc_libsvm_is(text, len))
        st = read_libsvm(t, text, len);
    else if ((st = read_text(t, text, len)) == GPC_OK)
        header_label(t);
    if (st == GPC_OK && t->n == 0)
        st = gpc_fail(GPC_EINPUT, "%s: no labels", t->name);
    if (st != GPC_OK)
        tokens_free(t);
    return st;
}

static int read_tokens(const char *path, tokens *t)
{
    char *text;
    size_t len;
    const char *name;
    *t = (tokens){.name = NULL};
    int st = gpc_input_read_all(path, &text, &len, &name);
    if (st != GPC_OK)
        return st;
    st = tokens_of_text(text, len, name, t);
    free(text);
    return st;
}

/* "file:line" for case i, or "file: case i" for .npy. */
static const char *where(const tokens *t, size_t i, char *buf, size_t size)
{
    if (t->line[i])
        snprintf(buf, size, "%s:%zu", t->name, t->line[i]);
    else
        snprintf(buf, size, "%s: case %zu", t->name, i + 1);
    return buf;
}

/* ---- classes ----------------------------------------------------------------- */

static int all_numbers(char *const *s, size_t n)
{
    double x;
    for (size_t i = 0; i < n; i++)
        if (!gpc_labels_number(s[i], &x))
            return 0;
    return 1;
}

static int compare_names(const char *a, const char *b, int numeric)
{
    if (!numeric)
        return strcmp(a, b);
    double x, y;
    gpc_labels_number(a, &x);
    gpc_labels_number(b, &y);
    return (x > y) - (x < y);
}

/* qsort has no context argument: the tokens and their kind for the one
 * sort in progress. */
static char *const *sort_tok;
static int sort_numeric;

/* Case indices by label, ties by position, so that each class's first
 * case comes first within its run. */
static int by_label(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = compare_names(sort_tok[i], sort_tok[j], sort_numeric);
    return c ? c : (i > j) - (i < j);
}

static gpc_labels *labels_alloc(size_t n)
{
    gpc_labels *l = gpc_calloc(1, sizeof *l);
    l->n = n;
    l->cls = gpc_mallocarray(n, sizeof *l->cls);
    return l;
}

/* The classes of the tokens, sorted; each case's class index. */
static gpc_labels *classes_of(const tokens *t)
{
    gpc_labels *l = labels_alloc(t->n);
    l->numeric = all_numbers(t->tok, t->n);
    size_t *order = gpc_mallocarray(t->n, sizeof *order);
    for (size_t i = 0; i < t->n; i++)
        order[i] = i;
    sort_tok = t->tok;
    sort_numeric = l->numeric;
    qsort(order, t->n, sizeof *order, by_label);
    l->names = gpc_mallocarray(t->n, sizeof *l->names);
    for (size_t r = 0; r < t->n; r++) {
        const char *s = t->tok[order[r]];
        if (r == 0 || compare_names(l->names[l->nclasses - 1], s, l->numeric) != 0)
            l->names[l->nclasses++] = gpc_strdup(s);
        l->cls[order[r]] = l->nclasses - 1;
    }
    free(order);
    return l;
}

long gpc_labels_find(char *const *names, size_t nclasses, int numeric, const char *name)
{
    double x;
    if (numeric && !gpc_labels_number(name, &x))
        return -1;
    for (size_t c = 0; c < nclasses; c++)
        if (compare_names(names[c], name, numeric) == 0)
            return (long)c;
    return -1;
}

/* Labels whose classes are those present in t, at least min_classes of
 * them; t is freed. */
static int present(tokens *t, size_t min_classes, gpc_labels **out)
{
    int st = GPC_OK;
    gpc_labels *l = classes_of(t);
    if (l->nclasses < min_classes)
        st = gpc_fail(GPC_EINPUT, "%s: every one of the %zu labels is '%s': a classifier "
                      "needs cases of at least two classes", t->name, t->n, l->names[0]);
    tokens_free(t);
    if (st != GPC_OK) {
        gpc_labels_free(l);
        return st;
    }
    *out = l;
    return GPC_OK;
}

static int read_present(const char *path, size_t min_classes, gpc_labels **out)
{
    tokens t;
    *out = NULL;
    int st = read_tokens(path, &t);
    return st == GPC_OK ? present(&t, min_classes, out) : st;
}

int gpc_labels_read(const char *path, gpc_labels **out)
{
    return read_present(path, 2, out);
}

int gpc_labels_read_present(const char *path, gpc_labels **out)
{
    return read_present(path, 1, out);
}

int gpc_labels_parse(const char *text, size_t len, const char *name, gpc_labels **out)
{
    tokens t;
    *out = NULL;
    int st = tokens_of_text(text, len, name, &t);
    return st == GPC_OK ? present(&t, 1, out) : st;
}

gpc_labels *gpc_labels_of_tokens(char *const *tok, size_t n)
{
    tokens t = {.tok = (char **)tok, .n = n};
    return classes_of(&t);
}

size_t gpc_labels_single(const gpc_labels *l)
{
    size_t *count = gpc_calloc(l->nclasses ? l->nclasses : 1, sizeof *count), single = 0;
    for (size_t i = 0; i < l->n; i++)
        count[l->cls[i]]++;
    for (size_t c = 0; c < l->nclasses; c++)
        single += count[c] == 1;
    free(count);
    return single;
}

int gpc_labels_check_training(const gpc_labels *l, const char *name)
{
    return gpc_labels_check_single(l, l->nclasses < 3 ? 0 : gpc_labels_single(l), name);
}

int gpc_labels_check_single(const gpc_labels *l, size_t single, const char *name)
{
    /* cases, not classes, are counted, so that a toy set of four cases in
     * three classes, two of them seen once, still trains */
    if (l->nclasses < 3 || 2 * single <= l->n)
        return GPC_OK;
    return gpc_fail(GPC_EINPUT, "%s: %zu classes for %zu cases, and %zu of the cases are the "
                    "only one of their class: is this a column of IDs or of measurements? give "
                    "the column of class labels (three or more classes with more than half of "
                    "the cases alone in their class are refused)", name, l->nclasses, l->n,
                    single);
}

void gpc_labels_list(char *const *names, size_t nclasses, char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t c = 0; c < nclasses; c++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", c ? " " : "", names[c]);
    }
}

int gpc_labels_read_classes(const char *path, char *const *names, size_t nclasses,
                            gpc_labels **out)
{
    tokens t;
    *out = NULL;
    int st = read_tokens(path, &t);
    if (st != GPC_OK)
        return st;
    gpc_labels *l = labels_alloc(t.n);
    l->numeric = all_numbers(names, nclasses);
    for (size_t i = 0; i < t.n && st == GPC_OK; i++) {
        long c = gpc_labels_find(names, nclasses, l->numeric, t.tok[i]);
        if (c < 0) {
            char at[300], known[512];
            gpc_labels_list(names, nclasses, known, sizeof known);
            st = gpc_fail(GPC_EINPUT, "%s: label '%s' is not one of the model's classes (%s)",
                          where(&t, i, at, sizeof at), t.tok[i], known);
        }
        l->cls[i] = (size_t)c;
    }
    l->names = gpc_mallocarray(nclasses, sizeof *l->names);
    for (size_t c = 0; c < nclasses; c++)
        l->names[l->nclasses++] = gpc_strdup(names[c]);
    tokens_free(&t);
    if (st != GPC_OK) {
        gpc_labels_free(l);
        return st;
    }
    *out = l;
    return GPC_OK;
}

void gpc_labels_free(gpc_labels *l)
{
    if (!l)
        return;
    for (size_t c = 0; c < l->nclasses; c++)
        free(l->names[c]);
    free(l->names);
    free(l->cls);
    free(l);
}

gsl_vector *gpc_labels_binary(const gpc_labels *l)
{
    gsl_vector *y = gpc_vector_alloc(l->n);
    for (size_t i = 0; i < l->n; i++)
        gsl_vector_set(y, i, l->cls[i] == 1 ? 1.0 : -1.0);
    return y;
}

/* The classes a prediction file's header line names ("p.A p.B p.C label",
 * as gpc-predict writes a multiclass model's predictions), and the 1-based
 * column of the first; 0 if the header names fewer than two. */
size_t gpc_labels_header_classes(const char *header, char ***names, long *first)
{
    size_t n = 0, col = 0;
    char *copy = gpc_strdup(header ? header : ""), *save = NULL;
    *names = NULL;
    for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        col++;
        if (strncmp(t, "p.", 2) != 0 || !t[2] || (n > 0 && col != (size_t)*first + n))
            continue;
        if (n == 0)
            *first = (long)col;
        *names = gpc_reallocarray(*names, n + 1, sizeof **names);
        (*names)[n++] = gpc_strdup(t + 2);
    }
    free(copy);
    return n;
}

/* ---- labels a line at a time ------------------------------------------------- */

/* A distinct label: its token, its cases and the first of them, counted
 * with the first case and without it (for when it is a header). */
typedef struct {
    char *tok;
    size_t count, count1;
    size_t first, first1; /* SIZE_MAX: none */
} distinct;

struct gpc_labels_stream {
    tokens t;        /* the line's token, as the whole-file reader takes it */
    distinct *d;     /* in order of first sight: a case's code is its index */
    size_t nd;
    size_t *slot;    /* open addressing over d: index + 1, 0 empty */
    size_t nslot;
    size_t n;        /* cases */
    size_t code0, code1, line0;
};

gpc_labels_stream *gpc_labels_stream_new(const char *name)
{
    gpc_labels_stream *ls = gpc_calloc(1, sizeof *ls);
    ls->t.name = name;
    ls->nslot = 64;
    ls->slot = gpc_calloc(ls->nslot, sizeof *ls->slot);
    return ls;
}

static size_t hash_of(const char *s)
{
    size_t h = 14695981039346656037u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot of tok: where it is, or the empty one where it would go. */
static size_t *slot_of(gpc_labels_stream *ls, const char *tok)
{
    size_t i = hash_of(tok) & (ls->nslot - 1);
    while (ls->slot[i] && strcmp(ls->d[ls->slot[i] - 1].tok, tok) != 0)
        i = (i + 1) & (ls->nslot - 1);
    return &ls->slot[i];
}

/* Twice the slots, at half full, so that a probe stays short. */
static void rehash(gpc_labels_stream *ls)
{
    free(ls->slot);
    ls->nslot *= 2;
    ls->slot = gpc_calloc(ls->nslot, sizeof *ls->slot);
    for (size_t c = 0; c < ls->nd; c++)
        *slot_of(ls, ls->d[c].tok) = c + 1;
}

/* The code of tok (taken over), a new one at its first sight. */
static size_t code_of(gpc_labels_stream *ls, char *tok)
{
    size_t *at = slot_of(ls, tok);
    if (*at) {
        free(tok);
        return *at - 1;
    }
    ls->d = gpc_reallocarray(ls->d, ls->nd + 1, sizeof *ls->d);
    ls->d[ls->nd] = (distinct){.tok = tok, .first = ls->n, .first1 = SIZE_MAX};
    *at = ++ls->nd;
    if (2 * ls->nd > ls->nslot)
        rehash(ls);
    return ls->nd - 1;
}

int gpc_labels_stream_feed(gpc_labels_stream *ls, const char *p, const char *eol,
                           size_t lineno, long *code)
{
    *code = -1;
    if (memchr(p, '\0', (size_t)(eol - p)))
        return gpc_fail(GPC_EINPUT, "%s:%zu: a NUL byte: this is not a text labels file",
                        ls->t.name, lineno);
    if (lineno == 1 && eol - p >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
        return gpc_fail(GPC_EINPUT, "%s:1: a UTF-8 byte-order mark at the start; save the file "
                        "without it (as plain UTF-8 or ASCII)", ls->t.name);
    ls->t.n = 0;
    int st = text_line(&ls->t, p, eol, lineno);
    if (st != GPC_OK || ls->t.n == 0)
        return st;
    size_t c = code_of(ls, ls->t.tok[0]);
    ls->t.n = 0; /* the token is the table's now */
    distinct *d = &ls->d[c];
    d->count++;
    if (ls->n > 0) {
        d->count1++;
        d->first1 = d->first1 == SIZE_MAX ? ls->n : d->first1;
    }
    if (ls->n == 0) {
        ls->code0 = c;
        ls->line0 = lineno;
    } else if (ls->n == 1) {
        ls->code1 = c;
    }
    ls->n++;
    *code = (long)c;
    return GPC_OK;
}

/* Whether the first label is the column's name, as header_label decides
 * for the whole file, from the counts of the distinct labels. */
static int stream_header(const gpc_labels_stream *ls)
{
    if (ls->n < 2)
        return 0;
    double x;
    size_t numbers = 0;
    int no_single = 1;
    for (size_t c = 0; c < ls->nd; c++) {
        if (gpc_labels_number(ls->d[c].tok, &x))
            numbers += ls->d[c].count1;
        no_single &= ls->d[c].count1 != 1;
    }
    size_t again = ls->d[ls->code0].count1;
    size_t others = ls->n - 1 - ls->d[ls->code1].count1;
    const char *tok0 = ls->d[ls->code0].tok;
    int v = header_verdict(ls->n, gpc_labels_number(tok0, &x), numbers, again, others,
                           no_single);
    return header_said(v, ls->t.name, ls->line0, tok0);
}

/* Codes by their label, ties by their first case (sort_tok, sort_numeric
 * as for by_label); firsts[c] is code c's first case. */
static const size_t *sort_first;

static int by_code(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = compare_names(sort_tok[i], sort_tok[j], sort_numeric);
    return c ? c : (sort_first[i] > sort_first[j]) - (sort_first[i] < sort_first[j]);
}

int gpc_labels_stream_end(gpc_labels_stream *ls, gpc_labels_summary *out)
{
    *out = (gpc_labels_summary){.labels = NULL};
    if (ls->n == 0)
        return gpc_fail(GPC_EINPUT, "%s: no labels", ls->t.name);
    int drop = stream_header(ls);
    size_t nd = ls->nd, live = 0;
    char **tok = gpc_mallocarray(nd, sizeof *tok);
    size_t *first = gpc_mallocarray(nd, sizeof *first), *order = gpc_mallocarray(nd, sizeof *order);
    for (size_t c = 0; c < nd; c++) {
        tok[c] = ls->d[c].tok;
        first[c] = drop ? ls->d[c].first1 : ls->d[c].first;
        if ((drop ? ls->d[c].count1 : ls->d[c].count) > 0)
            order[live++] = c;
    }
    gpc_labels *l = gpc_calloc(1, sizeof *l);
    l->n = ls->n - (size_t)drop;
    l->numeric = 1;
    double x;
    for (size_t r = 0; r < live; r++)
        l->numeric &= gpc_labels_number(tok[order[r]], &x);
    sort_tok = tok;
    sort_numeric = l->numeric;
    sort_first = first;
    qsort(order, live, sizeof *order, by_code);
    l->names = gpc_mallocarray(live, sizeof *l->names);
    out->class_of = gpc_mallocarray(nd, sizeof *out->class_of);
    out->count = gpc_calloc(live, sizeof *out->count);
    for (size_t c = 0; c < nd; c++)
        out->class_of[c] = SIZE_MAX; /* a header's code, of no case */
    for (size_t r = 0; r < live; r++) {
        size_t c = order[r];
        if (r == 0 || compare_names(l->names[l->nclasses - 1], tok[c], l->numeric) != 0)
            l->names[l->nclasses++] = gpc_strdup(tok[c]);
        out->class_of[c] = l->nclasses - 1;
        out->count[l->nclasses - 1] += drop ? ls->d[c].count1 : ls->d[c].count;
    }
    out->labels = l;
    out->ncodes = nd;
    out->drop_first = drop;
    free(tok);
    free(first);
    free(order);
    return GPC_OK;
}

void gpc_labels_summary_free(gpc_labels_summary *s)
{
    free(s->class_of);
    free(s->count);
    s->class_of = s->count = NULL;
}

void gpc_labels_stream_free(gpc_labels_stream *ls)
{
    if (!ls)
        return;
    for (size_t c = 0; c < ls->nd; c++)
        free(ls->d[c].tok);
    free(ls->d);
    free(ls->slot);
    tokens_free(&ls->t);
    free(ls);
}
