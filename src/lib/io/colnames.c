#include "io/colnames.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"

size_t gpc_colnames_count(char *const *names)
{
    size_t n = 0;
    while (names && names[n])
        n++;
    return n;
}

char **gpc_colnames_copy(char *const *names)
{
    if (!names)
        return NULL;
    size_t n = gpc_colnames_count(names);
    char **c = gpc_mallocarray(n + 1, sizeof *c);
    for (size_t j = 0; j < n; j++)
        c[j] = gpc_strdup(names[j]);
    c[n] = NULL;
    return c;
}

void gpc_colnames_free(char **names)
{
    for (size_t j = 0; names && names[j]; j++)
        free(names[j]);
    free(names);
}

/* ---- names sorted ---------------------------------------------------------- */

/* A name and its place in its list. */
typedef struct {
    const char *name;
    size_t at;
} placed;

static int by_name_then_place(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* names[0..n) with their places, sorted by name and then by place: equal
 * names stand together, each name's earliest place first.  Comparing every
 * pair instead takes minutes on a header of 10^5 names. */
static placed *sorted(char *const *names, size_t n)
{
    placed *s = gpc_mallocarray(n ? n : 1, sizeof *s);
    for (size_t j = 0; j < n; j++)
        s[j] = (placed){names[j], j};
    qsort(s, n, sizeof *s, by_name_then_place);
    return s;
}

/* The first of the n sorted entries whose name is not below name. */
static size_t lower_bound(const placed *s, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int gpc_colnames_repeated(char *const *names, size_t n, size_t *first, size_t *second)
{
    placed *s = sorted(names, n);
    size_t best = SIZE_MAX, start = 0;
    for (size_t k = 1; k < n; k++) {
        if (strcmp(s[k - 1].name, s[k].name) != 0) {
            start = k; /* a new name's run */
            continue;
        }
        if (s[k].at < best) {
            best = s[k].at;
            *first = s[start].at;
        }
    }
    free(s);
    if (best == SIZE_MAX)
        return 0;
    *second = best;
    return 1;
}

/* ---- names in kernel specs ------------------------------------------------- */

static int name_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static int name_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.'; }

/* Append the n bytes at s to the string being built. */
typedef struct {
    char *s;
    size_t len, cap;
} builder;

static void append(builder *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = 2 * (b->len + n + 1);
        b->s = gpc_realloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

/* "age, bmi, dose" (cut short when long), for messages. */
static void list_names(char *const *names, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t j = 0; names[j] && used + 1 < size; j++) {
        int w = snprintf(buf + used, size - used, "%s'%s'", j ? ", " : "", names[j]);
        if (w < 0 || (size_t)w >= size - used) {
            snprintf(buf + (size > 5 ? size - 5 : 0), size > 5 ? 5 : size, " ...");
            break;
        }
        used += (size_t)w;
    }
}

/* Whether a name can be written in a spec without quotes. */
static int bare(const char *name)
{
    if (!name_start(name[0]))
        return 0;
    for (const char *p = name; *p; p++)
        if (!name_char(*p))
            return 0;
    return 1;
}

/* A hint for a name not found: how names that need quotes are written. */
static const char *quote_hint(char *const *names)
{
    for (size_t j = 0; names[j]; j++)
        if (!bare(names[j]))
            return "; write a name with blanks or other signs in double quotes, a quote in it "
                   "doubled, as in ard@\"worst radius\"";
    return "";
}

/* The name [p, p + n) as its 1-based column number. */
static int column_of(const char *p, size_t n, char *const *names, const char *xname,
                     size_t *col)
{
    if (!names)
        return gpc_fail(GPC_EUSAGE, "kernel spec names a column, '%.*s', but %s has no header "
                        "line naming its columns (write it as CSV with a header, pass "
                        "--header, or give the column's number)", (int)n, p, xname);
    for (size_t j = 0; names[j]; j++)
        if (strlen(names[j]) == n && memcmp(names[j], p, n) == 0) {
            *col = j + 1;
            return GPC_OK;
        }
    char known[512];
    list_names(names, known, sizeof known);
    return gpc_fail(GPC_EUSAGE, "kernel spec: %s has no column named '%.*s' (its columns: %s)%s",
                    xname, (int)n, p, known, quote_hint(names));
}

/* Append column number col. */
static void append_number(builder *b, size_t col)
{
    char num[32];
    int w = snprintf(num, sizeof num, "%zu", col);
    append(b, num, (size_t)w);
}

/* The quoted name at *pp ('"' first, '""' a quote in it) as its column
 * number; *pp moves past the closing quote. */
static int quoted_name(builder *b, const char **pp, char *const *names, const char *xname)
{
    const char *p = *pp + 1;
    builder name = {NULL, 0, 0};
    append(&name, "", 0);
    for (;; p++) {
        if (*p == '\0') {
            free(name.s);
            return gpc_fail(GPC_EUSAGE, "kernel spec: unterminated quote in '%s' (close the "
                            "name with '\"'; a quote in a name is written '\"\"')", *pp);
        }
        if (*p == '"' && p[1] != '"')
            break;
        append(&name, p, 1);
        p += *p == '"'; /* '""' stands for one quote */
    }
    int st = name.len == 0
                 ? gpc_fail(GPC_EUSAGE, "kernel spec: empty column name '\"\"' in a column list")
                 : GPC_OK;
    size_t col;
    if (st == GPC_OK && (st = column_of(name.s, name.len, names, xname, &col)) == GPC_OK)
        append_number(b, col);
    free(name.s);
    *pp = p + 1;
    return st;
}

/* Where a list item or a range's end may start and end: a quoted name
 * stands alone there, so that '3"a"' cannot run two numbers together. */
static int item_edge(char c) { return c == ',' || c == '-' || c == '\0'; }

/* A column list from *pp up to the next operator or parenthesis (for a
 * term's list) or clause (':'): names become numbers, everything else is copied for the
 * kernel parser to judge.  *pp moves to the list's end. */
static int resolve_list(builder *b, const char **pp, const char *stops, char *const *names,
                        const char *xname)
{
    const char *start = *pp, *p = start;
    while (*p && !strchr(stops, *p)) {
        if (*p == '"') {
            if (p > start && !item_edge(p[-1]))
                return gpc_fail(GPC_EUSAGE, "kernel spec: a quoted name must stand alone "
                                "between commas, as in ard@\"worst radius\",age (at '%s')", p);
            const char *q = p;
            int st = quoted_name(b, &q, names, xname);
            if (st != GPC_OK)
                return st;
            if (!item_edge(*q) && !strchr(stops, *q))
                return gpc_fail(GPC_EUSAGE, "kernel spec: a quoted name must stand alone "
                                "between commas, as in ard@\"worst radius\",age (at '%s')", p);
            p = q;
            continue;
        }
        /* a bare name starts a list item or a range's end, never mid-token */
        if (!name_start(*p) || (p > start && name_char(p[-1]))) {
            append(b, p++, 1);
            continue;
        }
        const char *q = p;
        while (*q && name_char(*q))
            q++;
        size_t col;
        int st = column_of(p, (size_t)(q - p), names, xname, &col);
        if (st != GPC_OK)
            return st;
        append_number(b, col);
        p = q;
    }
    *pp = p;
    return GPC_OK;
}

int gpc_colnames_resolve(const char *spec, char *const *names, const char *xname, char **out)
{
    builder b = {NULL, 0, 0};
    append(&b, "", 0);
    *out = NULL;
    const char *p = spec;
    while (*p) {
        const char *list = NULL;
        if (*p == '@')
            list = p + 1;
        else if (*p == ':' && strncmp(p + 1, "discrete=", 9) == 0)
            list = p + 10;
        if (!list) {
            append(&b, p++, 1);
            continue;
        }
        append(&b, p, (size_t)(list - p));
        /* a column list ends at the next operator, parenthesis or clause
         * (outside quotes): one after a clause is the kernel parser's to
         * refuse */
        const char *stops = "+*():";
        p = list;
        int st = resolve_list(&b, &p, stops, names, xname);
        if (st != GPC_OK) {
            free(b.s);
            return st;
        }
    }
    *out = b.s;
    return GPC_OK;
}

int gpc_colnames_word(const char *name, char *buf, size_t size)
{
    size_t n = strlen(name);
    if (n == 0 || n >= size)
        return 0;
    for (size_t j = 0; j < n; j++)
        buf[j] = name_char(name[j]) ? name[j] : '_';
    buf[n] = '\0';
    return 1;
}

/* ---- matching a model's columns -------------------------------------------- */

int gpc_colnames_match(char *const *model, char *const *input, const char *xname,
                       size_t **index)
{
    size_t n = gpc_colnames_count(model), m = gpc_colnames_count(input);
    size_t *ix = gpc_mallocarray(n ? n : 1, sizeof *ix);
    placed *s = sorted(input, m);
    for (size_t j = 0; j < n; j++) {
        size_t k = lower_bound(s, m, model[j]);
        if (k == m || strcmp(s[k].name, model[j]) != 0) {
            char known[512];
            list_names(input, known, sizeof known);
            free(s);
            free(ix);
            return gpc_fail(GPC_EINPUT, "%s has no column named '%s', which the model was "
                            "trained on (its columns: %s)", xname, model[j], known);
        }
        ix[j] = s[k].at;
    }
    free(s);
    *index = ix;
    return GPC_OK;
}

/* ---- names in the model file ------------------------------------------------ */

static int plain(unsigned char c) { return c > 0x20 && c < 0x7f && c != '%' && c != '#'; }

void gpc_colnames_write_line(FILE *f, const char *key, char *const *names)
{
    if (!names)
        return;
    fputs(key, f);
    for (size_t j = 0; names[j]; j++) {
        char *e = gpc_colnames_encode(names[j]);
        fprintf(f, " %s", e);
        free(e);
    }
    fputc('\n', f);
}

char *gpc_colnames_encode(const char *name)
{
    char *e = gpc_malloc(3 * strlen(name) + 1), *q = e;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        q += plain(*p) ? sprintf(q, "%c", *p) : sprintf(q, "%%%02X", *p);
    *q = '\0';
    return e;
}

static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

char *gpc_colnames_decode(const char *token)
{
    char *d = gpc_malloc(strlen(token) + 1), *q = d;
    for (const char *p = token; *p; p++) {
        if (*p != '%') {
            *q++ = *p;
            continue;
        }
        int hi = hex(p[1]), lo = hi < 0 ? -1 : hex(p[2]);
        if (lo < 0 || (hi == 0 && lo == 0)) {
            free(d);
            return NULL;
        }
        *q++ = (char)(16 * hi + lo);
        p += 2;
    }
    *q = '\0';
    return d;
}
