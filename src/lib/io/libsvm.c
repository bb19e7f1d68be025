#include "io/libsvm.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"

/* '\r' counts as a blank so CRLF files read like LF files. */
static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* The next token of [*p, eol) before any '#' in [*tok, *end), moving *p past
 * it; 0 when the line has no more. */
static int next_token(const char **p, const char *eol, const char **tok, const char **end)
{
    const char *q = *p;
    while (q < eol && is_blank(*q))
        q++;
    *p = q;
    if (q == eol || *q == '#')
        return 0;
    *tok = q;
    while (q < eol && !is_blank(*q) && *q != '#')
        q++;
    *end = *p = q;
    return 1;
}

static const char *colon_in(const char *tok, const char *end)
{
    return memchr(tok, ':', (size_t)(end - tok));
}

/* Whether any of the bytes of set occurs in [p, end) (a NUL is not one of
 * them, though strchr finds it as the set's end). */
static int strpbrk_in(const char *p, const char *end, const char *set)
{
    for (; p < end; p++)
        if (*p && strchr(set, *p))
            return 1;
    return 0;
}

/* How much of a token a message shows. */
static int shown(const char *tok, const char *end)
{
    return end - tok > 40 ? 40 : (int)(end - tok);
}

static const char *end_of_line(const char *p, const char *end)
{
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    return eol ? eol : end;
}

int gpc_libsvm_is(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *eol = end_of_line(p, end), *q = p, *t1, *e1, *t2, *e2;
        /* a comma or a quote before the comment is CSV's (a header whose
         * names hold blanks and a ':'), never LIBSVM's */
        if (next_token(&q, eol, &t1, &e1) && next_token(&q, eol, &t2, &e2)) {
            const char *hash = memchr(p, '#', (size_t)(eol - p));
            return colon_in(t2, e2) && !strpbrk_in(p, hash ? hash : eol, ",\"");
        }
        p = eol < end ? eol + 1 : end;
    }
    return 0;
}

/* ---- numbering ----------------------------------------------------------- */

static gpc_libsvm_base base_mode = GPC_LIBSVM_AUTO;

void gpc_libsvm_set_base(gpc_libsvm_base mode) { base_mode = mode; }
gpc_libsvm_base gpc_libsvm_get_base(void) { return base_mode; }

/* ---- parsing ------------------------------------------------------------- */

typedef struct {
    const char *name;
    gpc_libsvm_base mode;
    gsl_matrix *x;      /* NULL on the first pass, which checks and counts */
    size_t base;        /* second pass: the index of the first column, 0 or 1 */
    size_t rows, top;   /* rows so far; the largest index so far */
    size_t top_line;    /* the line of the first occurrence of the largest index */
    size_t *line, cap;  /* first pass: the source line of each row */
    char **label;       /* first pass, if wanted: the label of each row */
    size_t first_pairs; /* the first line with index:value pairs (0: none yet) */
    size_t zero_line;   /* the first line with index 0 (0: none) */
} parser;

static const char UTF8_BOM[3] = "\xef\xbb\xbf";

/* A label is any token without ':' (a ':' means the label was left out) and
 * without bytes that would make an invisible class of their own. */
static int check_label(const parser *ps, size_t lineno, const char *tok, const char *end)
{
    if (colon_in(tok, end))
        return gpc_fail(GPC_EINPUT, "%s:%zu: the line starts with '%.*s', not a label: every "
                        "line is 'label index:value ...' (a label alone is a case whose "
                        "features are all 0)", ps->name, lineno, shown(tok, end), tok);
    if (end - tok >= 3 && memcmp(tok, UTF8_BOM, sizeof UTF8_BOM) == 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: a UTF-8 byte-order mark before the label; save "
                        "the file without it (as plain UTF-8 or ASCII)", ps->name, lineno);
    for (const char *q = tok; q < end; q++) {
        unsigned char b = (unsigned char)*q;
        if (b < 0x20 || b == 0x7f)
            return gpc_fail(GPC_EINPUT, "%s:%zu: a control character (byte 0x%02x) in the "
                            "label; the file looks binary or damaged (a label is a number or "
                            "a word)", ps->name, lineno, b);
    }
    return GPC_OK;
}

/* The index before the colon of [tok, end): 1 .. GPC_MATRIX_MAX_COLS. */
static int parse_index(const parser *ps, size_t lineno, const char *tok, const char *colon,
                       const char *end, size_t *idx)
{
    int n = shown(tok, end);
    if (colon - tok == 3 && memcmp(tok, "qid", 3) == 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s': qid marks ranking data (SVMrank), and "
                        "gpc classifies; remove the qid:N tokens, e.g. with sed "
                        "'s/ qid:[^ ]*//'", ps->name, lineno, n, tok);
    if (*tok == '-' && colon - tok > 1)
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s': index %.*s is negative; indices start at "
                        "0 or 1", ps->name, lineno, n, tok, (int)(colon - tok), tok);
    size_t v = 0;
    for (const char *q = tok; q < colon; q++) {
        if (*q < '0' || *q > '9')
            return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s' has no whole-number index before ':'; "
                            "features are index:value with index 1, 2, 3, ...", ps->name,
                            lineno, n, tok);
        v = v * 10 + (size_t)(*q - '0');
        if (v > GPC_MATRIX_MAX_COLS)
            return gpc_fail(GPC_EINPUT, "%s:%zu: index %.*s is beyond the %u columns gpc can "
                            "hold (inputs are held densely, a column for every index up to "
                            "the largest); renumber the features that occur as 1, 2, 3, ...",
                            ps->name, lineno, (int)(colon - tok > 40 ? 40 : colon - tok), tok,
                            GPC_MATRIX_MAX_COLS);
    }
    if (colon == tok)
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s' has no index before ':'; features are "
                        "index:value with index 1, 2, 3, ...", ps->name, lineno, n, tok);
    if (v == 0 && ps->mode == GPC_LIBSVM_ONE)
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s': index 0 in a file read as numbered from 1 "
                        "(--one-based); leave the option out, or give --zero-based, to read "
                        "index 0 as the first column", ps->name, lineno, n, tok);
    *idx = v;
    return GPC_OK;
}

/* The value after the colon: a finite number, whole. */
static int parse_value(const parser *ps, size_t lineno, const char *tok, const char *colon,
                       const char *end, double *x)
{
    int n = shown(tok, end);
    const char *v = colon + 1;
    if (v == end)
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s' has no value after ':'", ps->name, lineno,
                        n, tok);
    char *stop;
    *x = strtod(v, &stop);
    if (stop != end)
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s': '%.*s' is not a number", ps->name, lineno,
                        n, tok, shown(v, end), v);
    if (!isfinite(*x))
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s': the value is not a finite number; NaN, "
                        "infinities and overflows cannot be used (impute the value, or leave "
                        "the pair out for 0)", ps->name, lineno, n, tok);
    return GPC_OK;
}

/* A token after the label that is not index:value. */
static int not_a_pair(const parser *ps, size_t lineno, const char *tok, const char *end,
                      int first)
{
    int n = shown(tok, end);
    if (first && ps->first_pairs && ps->first_pairs != lineno)
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s' is not index:value: a line of plain "
                        "numbers, but line %zu is LIBSVM 'label index:value ...'; write every "
                        "line in one format", ps->name, lineno, n, tok, ps->first_pairs);
    return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s' is not index:value; after the label every "
                    "token is a feature's index:value", ps->name, lineno, n, tok);
}

/* One index:value token, its index after the line's previous one (*after is
 * that index plus 1, 0 before the first); on the second pass its value goes
 * into the current row. */
static int feature(parser *ps, size_t lineno, const char *tok, const char *end, size_t *after)
{
    const char *colon = colon_in(tok, end);
    size_t idx = 0; /* set when the status is GPC_OK, which the compiler cannot see */
    double x = 0.0;
    int st = parse_index(ps, lineno, tok, colon, end, &idx);
    if (st == GPC_OK)
        st = parse_value(ps, lineno, tok, colon, end, &x);
    if (st != GPC_OK)
        return st;
    if (idx < *after)
        return gpc_fail(GPC_EINPUT, "%s:%zu: index %zu after index %zu; indices must be "
                        "strictly ascending (sort each line's pairs by index, each index "
                        "once)", ps->name, lineno, idx, *after - 1);
    *after = idx + 1;
    if (ps->x) {
        gsl_matrix_set(ps->x, ps->rows, idx - ps->base, x);
        return GPC_OK;
    }
    if (idx == 0 && !ps->zero_line)
        ps->zero_line = lineno;
    if (idx > ps->top || !ps->top_line) {
        ps->top = idx;
        ps->top_line = lineno;
    }
    return GPC_OK;
}

static void push_row(parser *ps, size_t lineno, const char *tok, const char *end)
{
    if (ps->rows == ps->cap) {
        ps->cap = ps->cap ? 2 * ps->cap : 1024;
        ps->line = gpc_reallocarray(ps->line, ps->cap, sizeof *ps->line);
        if (ps->label)
            ps->label = gpc_reallocarray(ps->label, ps->cap, sizeof *ps->label);
    }
    ps->line[ps->rows] = lineno;
    if (ps->label) {
        size_t len = (size_t)(end - tok);
        char *s = gpc_malloc(len + 1);
        memcpy(s, tok, len);
        s[len] = '\0';
        ps->label[ps->rows] = s;
    }
}

/* One line [p, eol): a row if it has a label, nothing if blank or a comment. */
static int parse_line(parser *ps, const char *p, const char *eol, size_t lineno)
{
    const char *lab, *lab_end, *tok, *end;
    if (!next_token(&p, eol, &lab, &lab_end))
        return GPC_OK;
    int st = check_label(ps, lineno, lab, lab_end);
    size_t after = 0;
    for (int first = 1; st == GPC_OK && next_token(&p, eol, &tok, &end); first = 0) {
        if (!colon_in(tok, end))
            return not_a_pair(ps, lineno, tok, end, first);
        if (!ps->first_pairs)
            ps->first_pairs = lineno;
        st = feature(ps, lineno, tok, end, &after);
    }
    if (st != GPC_OK)
        return st;
    if (!ps->x)
        push_row(ps, lineno, lab, lab_end);
    ps->rows++;
    return GPC_OK;
}

static int parse_all(parser *ps, const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    for (size_t lineno = 1; p < end; lineno++) {
        const char *eol = end_of_line(p, end), *hash = memchr(p, '#', (size_t)(eol - p));
        /* a NUL would end a token early, and the message would quote the
         * token cut short; in a comment any byte goes */
        int st = gpc_text_refuse_nul(ps->name, lineno, p, hash ? hash : eol,
                                     "a LIBSVM file is text");
        if (st == GPC_OK)
            st = parse_line(ps, p, eol, lineno);
        if (st != GPC_OK)
            return st;
        p = eol < end ? eol + 1 : end;
    }
    return GPC_OK;
}

/* The index of the first column: 0 when asked, or, unless 1 was asked (and
 * then an index 0 has already been refused), when an index 0 occurs anywhere
 * in the file, as LIBSVM's and scikit-learn's readers decide; else 1. */
static size_t file_base(const parser *ps)
{
    if (ps->mode == GPC_LIBSVM_ZERO)
        return 0;
    return ps->zero_line ? 0 : 1;
}

/* The columns: a column for every index from the base to the largest. */
static size_t columns(const parser *ps) { return ps->top + 1 - file_base(ps); }

/* The size of the dense matrix comes from the file, so it is checked before
 * anything is allocated for it: against overflow, and against the memory
 * the process may take (gpc_alloc_check). */
static int check_size(const parser *ps)
{
    if (ps->rows == 0)
        return gpc_fail(GPC_EINPUT, "%s: empty input, no rows", ps->name);
    if (!ps->first_pairs)
        return gpc_fail(GPC_EINPUT, "%s: no features: every line is a label alone; give the "
                        "features as index:value after each label", ps->name);
    size_t cols = columns(ps);
    if (cols > GPC_MATRIX_MAX_COLS) /* only index 2^20 numbered from 0 gets here */
        return gpc_fail(GPC_EINPUT, "%s:%zu: index %zu numbered from 0 is column %zu, beyond "
                        "the %u columns gpc can hold; renumber the features that occur as 0, "
                        "1, 2, ...", ps->name, ps->top_line, ps->top, cols,
                        GPC_MATRIX_MAX_COLS);
    if (ps->rows > SIZE_MAX / sizeof(double) / cols)
        return gpc_fail(GPC_EINPUT, "%s: %zu rows x %zu columns (the largest index) are too "
                        "many to hold densely; renumber the features that occur as 1, 2, 3, "
                        "..., or use fewer rows", ps->name, ps->rows, cols);
    char what[256];
    snprintf(what, sizeof what, "%s: %zu rows x %zu columns (the largest index) held densely",
             ps->name, ps->rows, cols);
    return gpc_alloc_check(gpc_doubles_bytes(ps->rows, cols), what,
                           "renumber the features that occur as 1, 2, 3, ..., or use fewer rows");
}

void gpc_libsvm_labels_free(char **labels, size_t n)
{
    if (!labels)
        return;
    for (size_t i = 0; i < n; i++)
        free(labels[i]);
    free(labels);
}

/* The first pass: every line checked, rows and columns counted. */
static int first_pass(parser *ps, const char *buf, size_t len, int want_labels)
{
    if (want_labels) /* grown with line, from here on */
        ps->label = gpc_mallocarray(1, sizeof *ps->label);
    int st = parse_all(ps, buf, len);
    if (st == GPC_OK)
        st = check_size(ps);
    if (st != GPC_OK) {
        gpc_libsvm_labels_free(ps->label, ps->rows);
        free(ps->line);
    }
    return st;
}

int gpc_libsvm_read(const char *buf, size_t len, gpc_source *src, gsl_matrix **out,
                    char ***labels)
{
    parser ps = {.name = src->name, .mode = base_mode};
    if (out)
        *out = NULL;
    if (labels)
        *labels = NULL;
    int st = first_pass(&ps, buf, len, labels != NULL);
    if (st != GPC_OK)
        return st;
    if (out) {
        /* the second pass cannot fail: the first has checked every line */
        parser fill = {.name = src->name, .mode = base_mode, .base = file_base(&ps),
                       .x = gpc_matrix_calloc(ps.rows, columns(&ps))};
        parse_all(&fill, buf, len);
        *out = fill.x;
    }
    if (labels)
        *labels = ps.label;
    src->line = ps.line;
    src->rows = ps.rows;
    src->sparse = 1;
    src->zero_based = file_base(&ps) == 0;
    return GPC_OK;
}
