#include "io/matio.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/err.h"
#include "io/colnames.h"
#include "io/libsvm.h"
#include "io/npy.h"

/* ---- names and small helpers ------------------------------------------- */

static int is_std(const char *name) { return !name || strcmp(name, "-") == 0; }

static const char *in_name(const char *name) { return is_std(name) ? "<stdin>" : name; }

static int out_of_memory(const char *name)
{
    return gpc_fail(GPC_EINPUT, "%s: out of memory", name);
}

/* err is an errno value; 0 means the stream failed without saying why. */
static int write_error(const char *name, int err)
{
    return gpc_fail(GPC_EINPUT, "%s: write error: %s", name, strerror(err ? err : EIO));
}

/* Room for need elements of size bytes at p, doubling the capacity; returns the
 * (possibly moved) array, or NULL with p still valid when memory runs out. */
static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap : 1024;
    while (n < need) {
        if (n > SIZE_MAX / 2 / size)
            return NULL;
        n *= 2;
    }
    void *q = realloc(p, n * size);
    if (q)
        *cap = n;
    return q;
}

/* ---- reading the stream -------------------------------------------------- */

/* Lone carriage returns, the line ends of old Mac files, as newlines, so that
 * every text reader (matrices, CSV, LIBSVM, labels, models) counts the lines
 * a user's editor shows, instead of reading one long line.  A CR before a
 * newline (CRLF) stays, for the readers take it as a blank; .npy bytes are
 * not text and stay as they are. */
static void lone_cr_to_newline(char *buf, size_t len)
{
    if (gpc_npy_is(buf, len))
        return;
    char *end = buf + len;
    for (char *p = memchr(buf, '\r', len); p; p = memchr(p + 1, '\r', (size_t)(end - p - 1)))
        if (p + 1 == end || p[1] != '\n')
            *p = '\n';
}

/* The whole stream in memory, NUL-terminated so strtod cannot run past the
 * last token, a text's lone CRs as newlines.  Reading everything first is
 * what lets pipes work in one pass: the format is decided from the first
 * bytes without putting them back. */
static int slurp(FILE *f, const char *name, char **out, size_t *len)
{
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        char *b = grow(buf, &cap, n + 65536, 1);
        if (!b) {
            free(buf);
            return out_of_memory(name);
        }
        buf = b;
        size_t want = cap - n - 1, got = fread(buf + n, 1, want, f);
        n += got;
        if (got < want) /* fread only stops short at end of file or on an error */
            break;
    }
    if (ferror(f)) {
        int err = errno;
        free(buf);
        return gpc_fail(GPC_EINPUT, "%s: read error: %s", name, strerror(err ? err : EIO));
    }
    buf[n] = '\0';
    lone_cr_to_newline(buf, n);
    *out = buf;
    *len = n;
    return GPC_OK;
}

static int empty_input(const char *name)
{
    return gpc_fail(GPC_EINPUT, "%s: empty input, no rows", name);
}

/* ---- text ------------------------------------------------------------------ */

/* What becomes of each column of a file read with options (gpc_read_opts). */
enum { ACT_NUMBER, ACT_LABEL, ACT_SKIP };

typedef struct {
    const char *name;
    double *val; /* row-major values so far */
    size_t nval, capval;
    size_t *line; /* source line of each row */
    size_t rows, caprows;
    size_t cols; /* fields per line, set by the first row */
    const gpc_read_opts *opts; /* NULL: every field is a number */
    gpc_source *src;           /* the header's names, for the options */
    unsigned char *act;        /* each field's ACT_, once the first row is seen */
    size_t nact;               /* fields act covers */
    long label_col;            /* 0-based field of the labels, or -1 */
    size_t dropped;            /* fields that are not columns of the matrix */
    char **labels;             /* the label of each row so far, NULL-terminated */
    size_t caplabels;
    int one_row;               /* a line at a time (gpc_matrix_lines): the caller takes
                                * each row as it comes, so no row's line is kept */
} text_rows;

/* '\r' counts as a blank so CRLF files read like LF files. */
static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

static int push_value(text_rows *t, double x)
{
    double *v = grow(t->val, &t->capval, t->nval + 1, sizeof *v);
    if (!v)
        return out_of_memory(t->name);
    t->val = v;
    t->val[t->nval++] = x;
    return GPC_OK;
}

static int push_row(text_rows *t, size_t lineno)
{
    if (t->one_row) {
        t->rows++;
        return GPC_OK;
    }
    size_t *l = grow(t->line, &t->caprows, t->rows + 1, sizeof *l);
    if (!l)
        return out_of_memory(t->name);
    t->line = l;
    t->line[t->rows++] = lineno;
    return GPC_OK;
}

/* The token [tok, end) as a finite double.  strtod also takes "inf", "nan" and
 * overflows such as 1e999 to infinity; all of these are rejected, since no
 * model can use them.  Underflow to a subnormal or zero is accepted. */
static int text_number(const char *name, size_t lineno, const char *tok, const char *end,
                       double *x)
{
    char *stop;
    int shown = end - tok > 64 ? 64 : (int)(end - tok);
    *x = strtod(tok, &stop);
    if (stop != end)
        return gpc_fail(GPC_EINPUT, "%s:%zu: '%.*s' is not a number", name, lineno, shown, tok);
    if (!isfinite(*x))
        return gpc_fail(GPC_EINPUT, "%s:%zu: non-finite value '%.*s'", name, lineno, shown, tok);
    return GPC_OK;
}

static const char UTF8_BOM[3] = "\xef\xbb\xbf";

/* What a matrix file is, for messages about bytes it should not hold. */
static const char MATRIX_IS[] = "a matrix is text or .npy";

int gpc_text_refuse_nul(const char *name, size_t lineno, const char *line, const char *end,
                        const char *what)
{
    const char *nul = memchr(line, '\0', (size_t)(end - line));
    if (!nul)
        return GPC_OK;
    return gpc_fail(GPC_EINPUT, "%s:%zu: a NUL byte at column %zu; the file looks binary (%s)",
                    name, lineno, (size_t)(nul - line) + 1, what);
}

/* A token that is not a number because of a byte the user cannot see in the
 * message (a byte-order mark, a NUL, a control or non-ASCII character) gets a
 * message that names that byte and its column (counted in bytes from 1); other
 * tokens are left to text_number.  GPC_OK if the token has no such byte. */
static int invisible_byte(const char *name, size_t lineno, const char *line, const char *tok,
                          const char *end)
{
    for (const char *q = tok; q < end; q++) {
        unsigned char b = (unsigned char)*q;
        size_t col = (size_t)(q - line) + 1;
        if ((size_t)(end - q) >= sizeof UTF8_BOM && memcmp(q, UTF8_BOM, sizeof UTF8_BOM) == 0) {
            if (lineno == 1 && col == 1)
                return gpc_fail(GPC_EINPUT, "%s:1: a UTF-8 byte-order mark at the start; save "
                                "the file without it (as plain UTF-8 or ASCII)", name);
            return gpc_fail(GPC_EINPUT, "%s:%zu: a UTF-8 byte-order mark at column %zu (were "
                            "files joined?); remove it", name, lineno, col);
        }
        if (b == 0) /* the line's first: tokens before this one were numbers */
            return gpc_text_refuse_nul(name, lineno, line, end, MATRIX_IS);
        if (b < 0x20 || b == 0x7f)
            return gpc_fail(GPC_EINPUT, "%s:%zu: a control character (byte 0x%02x) at column "
                            "%zu; numbers are separated by blanks or tabs", name, lineno, b, col);
        if (b >= 0x80)
            return gpc_fail(GPC_EINPUT, "%s:%zu: a non-ASCII byte 0x%02x at column %zu; numbers "
                            "are plain ASCII (e.g. '-', not a Unicode minus sign)", name, lineno,
                            b, col);
    }
    return GPC_OK;
}

/* A row wider than any matrix may be, refused at its line. */
static int too_wide(const char *name, size_t lineno)
{
    return gpc_fail(GPC_EINPUT, "%s:%zu: more than %u columns, the most a matrix may have; "
                    "keep the columns to be used (e.g. with cut)", name, lineno,
                    GPC_MATRIX_MAX_COLS);
}

/* ---- a column of labels, columns left out ------------------------------------ */

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether s is among the n sorted strings (a header may name hundreds of
 * thousands of columns, so no scan per column). */
static int in_list(char *const *sorted, size_t n, const char *s)
{
    return bsearch(&s, sorted, n, sizeof *sorted, by_string) != NULL;
}

/* "a, b, c" (cut to size) for messages. */
static void list_names(char *const *names, size_t n, char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t j = 0; j < n; j++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", j ? ", " : "", names[j]);
    }
}

/* The 0-based field of the label column among fields, named (names: n of
 * them, or NULL) or numbered; -1 when an optional one is absent. */
static int find_label_column(const text_rows *t, char *const *names, size_t fields,
                             size_t lineno, long *col)
{
    const char *spec = t->opts->label_column;
    for (size_t j = 0; names && j < fields; j++)
        if (strcmp(names[j], spec) == 0) {
            *col = (long)j;
            return GPC_OK;
        }
    char *end;
    errno = 0;
    long n = strtol(spec, &end, 10);
    int number = *spec >= '0' && *spec <= '9' && !*end && errno == 0;
    *col = -1;
    if (number && n >= 1 && (size_t)n <= fields) {
        *col = n - 1;
        return GPC_OK;
    }
    if (number)
        return gpc_fail(GPC_EINPUT, "%s:%zu: --label-column=%s, but the file has %zu "
                        "column%s", t->name, lineno, spec, fields, fields == 1 ? "" : "s");
    if (t->opts->optional)
        return GPC_OK;
    if (!names)
        return gpc_fail(GPC_EINPUT, "%s: --label-column=%s, but no header line names the "
                        "columns; give the column's number (1 to %zu)", t->name, spec, fields);
    char known[512];
    list_names(names, fields, known, sizeof known);
    return gpc_fail(GPC_EINPUT, "%s: --label-column=%s: no column has that name (the columns "
                    "are %s)", t->name, spec, known);
}

/* A whitespace file's first comment line as one name per field, when it
 * has exactly that many words (gpc-predict's "# p mean var label"). */
static char **comment_names(const char *header, size_t fields)
{
    if (!header)
        return NULL;
    char *copy = gpc_strdup(header), *save = NULL;
    char **names = gpc_calloc(fields + 1, sizeof *names);
    size_t n = 0;
    for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (n == fields) {
            n++;
            break;
        }
        names[n++] = gpc_strdup(w);
    }
    free(copy);
    if (n != fields) {
        gpc_colnames_free(names);
        return NULL;
    }
    return names;
}

/* Decide, at the first row (of fields fields), what each field becomes. */
static int plan_columns(text_rows *t, char *const *names, size_t fields, size_t lineno)
{
    if (!t->opts || t->act)
        return GPC_OK;
    t->label_col = -1;
    t->act = gpc_calloc(fields ? fields : 1, 1);
    t->nact = fields;
    size_t kept = 0, n = 0;
    char **sorted = NULL;
    if (t->opts->only && names) {
        while (t->opts->only[n])
            n++;
        sorted = gpc_mallocarray(n ? n : 1, sizeof *sorted);
        memcpy(sorted, t->opts->only, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, by_string);
        for (size_t j = 0; j < fields; j++)
            kept += in_list(sorted, n, names[j]);
    }
    /* with none of the names there, every column is read, and the caller
     * says which of its names the file lacks */
    for (size_t j = 0; kept && j < fields; j++)
        if (!in_list(sorted, n, names[j]))
            t->act[j] = ACT_SKIP;
    free(sorted);
    if (t->opts->label_column) {
        int st = find_label_column(t, names, fields, lineno, &t->label_col);
        if (st != GPC_OK)
            return st;
        if (t->label_col >= 0)
            t->act[t->label_col] = ACT_LABEL;
    }
    for (size_t j = 0; j < fields; j++)
        t->dropped += t->act[j] == ACT_SKIP || (t->act[j] == ACT_LABEL && !t->opts->keep_place);
    if (t->dropped == fields)
        return gpc_fail(GPC_EINPUT, "%s:%zu: no column is left for the inputs besides the "
                        "labels", t->name, lineno);
    return GPC_OK;
}

static int act_of(const text_rows *t, size_t j)
{
    return t->act && j < t->nact ? t->act[j] : ACT_NUMBER;
}

/* The label of the current row, [tok, end); with keep_place a NaN holds
 * its place among the values. */
static int push_label(text_rows *t, const char *tok, const char *end)
{
    char **l = grow(t->labels, &t->caplabels, t->rows + 2, sizeof *l);
    if (!l)
        return out_of_memory(t->name);
    t->labels = l;
    t->labels[t->rows] = gpc_malloc((size_t)(end - tok) + 1);
    memcpy(t->labels[t->rows], tok, (size_t)(end - tok));
    t->labels[t->rows][end - tok] = '\0';
    t->labels[t->rows + 1] = NULL;
    if (!t->opts->keep_place)
        return GPC_OK;
    char *stop;
    double x = strtod(t->labels[t->rows], &stop);
    return push_value(t, *stop || stop == t->labels[t->rows] || !isfinite(x) ? NAN : x);
}

/* The fields of a whitespace line [p, eol), up to a comment. */
static size_t count_fields(const char *p, const char *eol)
{
    size_t n = 0;
    for (;;) {
        while (p < eol && is_blank(*p))
            p++;
        if (p == eol || *p == '#')
            return n;
        n++;
        while (p < eol && !is_blank(*p) && *p != '#')
            p++;
    }
}

/* Plan the columns of a whitespace file at its first row. */
static int plan_text(text_rows *t, const char *p, const char *eol, size_t lineno)
{
    if (!t->opts || t->act)
        return GPC_OK;
    size_t fields = count_fields(p, eol);
    if (fields == 0)
        return GPC_OK;
    char **names = comment_names(t->src->header, fields);
    int st = plan_columns(t, names, fields, lineno);
    gpc_colnames_free(names);
    return st;
}

/* One line [p, eol): its numbers become a row, unless it has none. */
static int text_line(text_rows *t, const char *p, const char *eol, size_t lineno)
{
    const char *line = p;
    size_t found = 0;
    int st = plan_text(t, p, eol, lineno);
    if (st != GPC_OK)
        return st;
    for (;;) {
        while (p < eol && is_blank(*p))
            p++;
        if (p == eol || *p == '#')
            break;
        const char *tok = p;
        while (p < eol && !is_blank(*p) && *p != '#')
            p++;
        if (found == GPC_MATRIX_MAX_COLS)
            return too_wide(t->name, lineno);
        int act = act_of(t, found);
        if (act != ACT_NUMBER) {
            found++;
            if (act == ACT_LABEL && (st = push_label(t, tok, p)) != GPC_OK)
                return st;
            continue;
        }
        double x;
        st = text_number(t->name, lineno, tok, p, &x);
        if (st != GPC_OK && invisible_byte(t->name, lineno, line, tok, p) != GPC_OK)
            return GPC_EINPUT;
        if (st == GPC_OK)
            st = push_value(t, x);
        if (st != GPC_OK)
            return st;
        found++;
    }
    if (found == 0)
        return GPC_OK;
    if (t->rows == 0)
        t->cols = found;
    else if (found != t->cols)
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected %zu columns, found %zu", t->name, lineno,
                        t->cols, found);
    return push_row(t, lineno);
}

static int text_matrix(text_rows *t, gsl_matrix **out)
{
    if (t->rows == 0)
        return empty_input(t->name);
    gsl_matrix *m = gpc_matrix_alloc(t->rows, t->cols - t->dropped);
    if (!m)
        return out_of_memory(t->name);
    memcpy(m->data, t->val, t->nval * sizeof *t->val); /* fresh matrix: tda == cols */
    *out = m;
    return GPC_OK;
}

/* The rows read (if st is GPC_OK) as the matrix *out, their lines in src;
 * frees what the reading held either way. */
static int finish_rows(text_rows *t, int st, gsl_matrix **out, gpc_source *src)
{
    if (st == GPC_OK)
        st = text_matrix(t, out);
    free(t->val);
    if (st != GPC_OK) {
        free(t->line);
        free(t->act);
        t->act = NULL;
        gpc_colnames_free(t->labels);
        t->labels = NULL;
        return st;
    }
    src->line = t->line;
    src->rows = t->rows;
    return GPC_OK;
}

/* The text of a comment line [p, eol) after '#' and blanks, without a
 * trailing CR; NULL if the line is not a comment. */
static char *header_line(const char *p, const char *eol)
{
    while (p < eol && is_blank(*p))
        p++;
    if (p == eol || *p != '#')
        return NULL;
    for (p++; p < eol && is_blank(*p); p++)
        ;
    size_t len = (size_t)(eol - p);
    if (len > 0 && p[len - 1] == '\r')
        len--;
    char *h = gpc_malloc(len + 1);
    memcpy(h, p, len);
    h[len] = '\0';
    return h;
}

/* ---- column names and CSV ---------------------------------------------------- */

static gpc_header_mode header_mode = GPC_HEADER_AUTO;

void gpc_matio_set_header(gpc_header_mode mode) { header_mode = mode; }

gpc_header_mode gpc_matio_header(void) { return header_mode; }

/* The fields of one line, unquoted and NUL-terminated in buf at off[0..n). */
typedef struct {
    char *buf;
    size_t capbuf;
    size_t *off;
    size_t capoff, n;
} csv_fields;

static void csv_fields_free(csv_fields *f)
{
    free(f->buf);
    free(f->off);
}

static const char *field(const csv_fields *f, size_t j) { return f->buf + f->off[j]; }

/* A line is not a row when it is blank or a comment (CSV has no comments,
 * but pandas and R never write a line that starts with '#'). */
static int skipped_line(const char *p, const char *eol)
{
    while (p < eol && is_blank(*p))
        p++;
    return p == eol || *p == '#';
}

/* Split [p, eol) at commas outside double quotes (RFC 4180: a quote inside
 * a quoted field is written twice); blanks around a field are dropped.  A
 * record is one line: a quoted field that runs past it is an error. */
static int csv_split(csv_fields *f, const char *name, size_t lineno, const char *p,
                     const char *eol)
{
    size_t len = (size_t)(eol - p), used = 0;
    char *b = grow(f->buf, &f->capbuf, len + 1 + len / 2 + 2, 1);
    if (!b)
        return out_of_memory(name);
    f->buf = b;
    f->n = 0;
    for (;;) {
        size_t *o = grow(f->off, &f->capoff, f->n + 1, sizeof *o);
        if (!o)
            return out_of_memory(name);
        f->off = o;
        f->off[f->n++] = used;
        if (f->n > GPC_MATRIX_MAX_COLS)
            return too_wide(name, lineno);
        while (p < eol && is_blank(*p))
            p++;
        if (p < eol && *p == '"') {
            for (p++;; p++) {
                if (p == eol)
                    return gpc_fail(GPC_EINPUT, "%s:%zu: field %zu opens a quote that the line "
                                    "does not close (a record is one line; write values "
                                    "without line breaks)", name, lineno, f->n);
                if (*p == '"' && !(p + 1 < eol && p[1] == '"'))
                    break;
                b[used++] = *p;
                p += *p == '"'; /* a doubled quote stands for one */
            }
            for (p++; p < eol && is_blank(*p); p++)
                ;
            if (p < eol && *p != ',')
                return gpc_fail(GPC_EINPUT, "%s:%zu: text after the closing quote of field %zu",
                                name, lineno, f->n);
        } else {
            const char *s = p;
            while (p < eol && *p != ',')
                p++;
            const char *e = p;
            while (e > s && is_blank(e[-1]))
                e--;
            memcpy(b + used, s, (size_t)(e - s));
            used += (size_t)(e - s);
        }
        b[used++] = '\0';
        if (p == eol)
            return GPC_OK;
        p++; /* the comma */
    }
}

static int is_number(const char *s)
{
    char *stop;
    if (!*s)
        return 0;
    double x = strtod(s, &stop);
    (void)x;
    return *stop == '\0';
}

/* The 0-based field a label column given by its number names, or -1. */
static long numbered_label(const gpc_read_opts *o)
{
    const char *spec = o ? o->label_column : NULL;
    if (!spec || !*spec || strspn(spec, "0123456789") != strlen(spec))
        return -1;
    return strtol(spec, NULL, 10) - 1;
}

/* Whether the first row's fields are names rather than numbers (a label
 * column given by its number may hold words in a row of data). */
static int is_header(const csv_fields *f, const gpc_read_opts *o)
{
    if (header_mode != GPC_HEADER_AUTO)
        return header_mode == GPC_HEADER_YES;
    long label = numbered_label(o);
    for (size_t j = 0; j < f->n; j++)
        if ((long)j != label && *field(f, j) && !is_number(field(f, j)))
            return 1;
    return 0;
}

/* The names of a header line, checked: every column named, no name twice. */
static int take_names(const csv_fields *f, const char *name, size_t lineno, char ***out)
{
    for (size_t j = 0; j < f->n; j++)
        if (!*field(f, j))
            return gpc_fail(GPC_EINPUT, "%s:%zu: column %zu has no name%s", name, lineno, j + 1,
                            j == 0 ? " (pandas writes its index so: save with index=False, or "
                                     "name the column)" : "; name every column");
    char **names = gpc_mallocarray(f->n + 1, sizeof *names);
    for (size_t j = 0; j < f->n; j++)
        names[j] = gpc_strdup(field(f, j));
    names[f->n] = NULL;
    size_t i, j;
    if (gpc_colnames_repeated(names, f->n, &i, &j)) {
        int st = gpc_fail(GPC_EINPUT, "%s:%zu: columns %zu and %zu are both named '%s'; names "
                          "must differ", name, lineno, i + 1, j + 1, names[j]);
        gpc_colnames_free(names);
        return st;
    }
    *out = names;
    return GPC_OK;
}

/* One data line's fields as a row of numbers. */
static int csv_row(text_rows *t, const csv_fields *f, char **names, size_t lineno)
{
    size_t want = (names || t->rows) ? t->cols : f->n;
    if (f->n != want)
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected %zu columns, found %zu", t->name, lineno,
                        want, f->n);
    int st = plan_columns(t, names, f->n, lineno);
    if (st != GPC_OK)
        return st;
    for (size_t j = 0; j < f->n; j++) {
        const char *s = field(f, j);
        double x;
        int act = act_of(t, j);
        if (act == ACT_SKIP)
            continue;
        if (act == ACT_LABEL && !*s)
            return gpc_fail(GPC_EINPUT, "%s:%zu: the label (column %zu%s%s%s) is empty; every "
                            "case needs its label (drop the rows without one first, e.g. "
                            "df.dropna() in pandas)", t->name, lineno, j + 1, names ? ", " : "",
                            names ? names[j] : "", "");
        if (act == ACT_LABEL) {
            if ((st = push_label(t, s, s + strlen(s))) != GPC_OK)
                return st;
            continue;
        }
        if (!*s)
            return gpc_fail(GPC_EINPUT, "%s:%zu: column %zu%s%s%s is empty; every value is "
                            "needed (drop or fill in missing values first, e.g. "
                            "df.dropna() in pandas)", t->name, lineno, j + 1,
                            names ? " (" : "", names ? names[j] : "", names ? ")" : "");
        st = text_number(t->name, lineno, s, s + strlen(s), &x);
        if (st == GPC_OK)
            st = push_value(t, x);
        if (st != GPC_OK)
            return st;
    }
    t->cols = f->n;
    return push_row(t, lineno);
}

/* One line [p, eol) of a CSV file, line lineno: a comment, the header
 * (into src->colnames) or a row; *first until the header or the first row. */
static int csv_line(text_rows *t, csv_fields *f, int *first, const char *p, const char *eol,
                    size_t lineno)
{
    gpc_source *src = t->src;
    const char *name = t->name;
    if (lineno == 1 && (size_t)(eol - p) >= sizeof UTF8_BOM &&
        memcmp(p, UTF8_BOM, sizeof UTF8_BOM) == 0)
        p += sizeof UTF8_BOM; /* as spreadsheets write UTF-8 CSV */
    int st = GPC_OK;
    if (skipped_line(p, eol)) {
        if (*first && !src->header)
            src->header = header_line(p, eol);
    } else if ((st = gpc_text_refuse_nul(name, lineno, p, eol, MATRIX_IS)) == GPC_OK &&
               (st = csv_split(f, name, lineno, p, eol)) == GPC_OK) {
        if (*first && is_header(f, t->opts)) {
            st = take_names(f, name, lineno, &src->colnames);
            t->cols = f->n;
        } else {
            st = csv_row(t, f, src->colnames, lineno);
        }
        *first = 0;
    }
    return st;
}

static int read_csv(text_rows *tr, const char *buf, size_t len, gsl_matrix **out)
{
    text_rows t = *tr;
    csv_fields f = {.buf = NULL};
    const char *p = buf, *end = buf + len;
    int st = GPC_OK, first = 1;
    for (size_t lineno = 1; p < end && st == GPC_OK; lineno++) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        st = csv_line(&t, &f, &first, p, eol, lineno);
        p = eol < end ? eol + 1 : end;
    }
    csv_fields_free(&f);
    st = finish_rows(&t, st, out, t.src);
    *tr = t;
    return st;
}

/* CSV if the first line that is not blank or a comment has a comma or a
 * quote, which no whitespace-separated matrix has. */
static int is_csv(const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        if (!skipped_line(p, eol))
            return memchr(p, ',', (size_t)(eol - p)) || memchr(p, '"', (size_t)(eol - p));
        p = eol < end ? eol + 1 : end;
    }
    return 0;
}

/* One line [p, eol) of a whitespace file, line lineno: a comment (the
 * first, before any row, kept as src->header) or a row. */
static int plain_line(text_rows *t, const char *p, const char *eol, size_t lineno)
{
    if (t->rows == 0 && !t->src->header)
        t->src->header = header_line(p, eol);
    int st = text_line(t, p, eol, lineno);
    if (st != GPC_OK && t->rows == 0 && strstr(gpc_errmsg(), "is not a number"))
        st = gpc_fail(st, "%s (if that line names the columns, write the file as CSV, or "
                      "make the line a comment with '#')", gpc_errmsg());
    return st;
}

static int read_text(text_rows *tr, const char *buf, size_t len, gsl_matrix **out)
{
    text_rows t = *tr;
    const char *p = buf, *end = buf + len;
    int st = GPC_OK;
    for (size_t lineno = 1; p < end && st == GPC_OK; lineno++) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        st = plain_line(&t, p, eol, lineno);
        p = eol < end ? eol + 1 : end;
    }
    st = finish_rows(&t, st, out, t.src);
    *tr = t;
    return st;
}

/* ---- a text matrix a line at a time ------------------------------------------ */

struct gpc_matrix_lines {
    text_rows t;
    gpc_source src; /* the name, the header's column names */
    csv_fields f;
    int csv;        /* 1 CSV, 0 whitespace, -1 until the first line that is a row */
    int first;      /* CSV: no header or row yet */
    int other;      /* .npy or LIBSVM, which gpc_matrix_read reads whole */
};

gpc_matrix_lines *gpc_matrix_lines_new(const char *name)
{
    gpc_matrix_lines *ml = gpc_calloc(1, sizeof *ml);
    snprintf(ml->src.name, sizeof ml->src.name, "%s", in_name(name));
    ml->t = (text_rows){.name = ml->src.name, .src = &ml->src, .label_col = -1, .one_row = 1};
    ml->csv = -1;
    ml->first = 1;
    return ml;
}

/* The format, decided as gpc_matrix_read decides it for a whole file, at
 * the first line that is not blank or a comment (a .npy file's magic
 * string is its first line's start). */
static void decide_format(gpc_matrix_lines *ml, const char *p, const char *eol, size_t lineno)
{
    size_t len = (size_t)(eol - p);
    if (ml->csv >= 0 || skipped_line(p, eol))
        return;
    ml->other = (lineno == 1 && gpc_npy_is(p, len)) || gpc_libsvm_is(p, len);
    ml->csv = memchr(p, ',', len) || memchr(p, '"', len);
}

int gpc_matrix_lines_feed(gpc_matrix_lines *ml, const char *p, const char *eol, size_t lineno,
                          const double **row)
{
    *row = NULL;
    decide_format(ml, p, eol, lineno);
    if (ml->other)
        return GPC_OK;
    size_t before = ml->t.rows;
    ml->t.nval = 0;
    int st = ml->csv == 1 ? csv_line(&ml->t, &ml->f, &ml->first, p, eol, lineno)
                          : plain_line(&ml->t, p, eol, lineno);
    if (st == GPC_OK && ml->t.rows > before)
        *row = ml->t.val;
    return st;
}

int gpc_matrix_lines_other(const gpc_matrix_lines *ml) { return ml->other; }
size_t gpc_matrix_lines_rows(const gpc_matrix_lines *ml) { return ml->t.rows; }
size_t gpc_matrix_lines_cols(const gpc_matrix_lines *ml) { return ml->t.cols; }

char **gpc_matrix_lines_take_colnames(gpc_matrix_lines *ml)
{
    char **names = ml->src.colnames;
    ml->src.colnames = NULL;
    return names;
}

int gpc_matrix_lines_end(const gpc_matrix_lines *ml)
{
    return ml->t.rows ? GPC_OK : empty_input(ml->t.name);
}

void gpc_matrix_lines_free(gpc_matrix_lines *ml)
{
    if (!ml)
        return;
    free(ml->t.val);
    csv_fields_free(&ml->f);
    gpc_source_free(&ml->src);
    free(ml);
}

/* ---- public reading API -------------------------------------------------- */

int gpc_format_parse(const char *s, gpc_format *fmt)
{
    if (s && (strcmp(s, "text") == 0 || strcmp(s, "txt") == 0))
        *fmt = GPC_FMT_TEXT;
    else if (s && strcmp(s, "npy") == 0)
        *fmt = GPC_FMT_NPY;
    else
        return gpc_fail(GPC_EUSAGE, "unknown format '%s' (use text or npy)", s ? s : "");
    return GPC_OK;
}

static void reset(gsl_matrix **out, gpc_source *src)
{
    *out = NULL;
    if (src)
        *src = (gpc_source){.line = NULL};
}

/* The header's names without those of the fields left out of the matrix. */
static void drop_names(gpc_source *s, const text_rows *t)
{
    if (!s->colnames || !t->dropped)
        return;
    size_t k = 0;
    for (size_t j = 0; s->colnames[j]; j++) {
        int act = act_of(t, j);
        if (act == ACT_SKIP || (act == ACT_LABEL && !t->opts->keep_place))
            free(s->colnames[j]);
        else
            s->colnames[k++] = s->colnames[j];
    }
    s->colnames[k] = NULL;
}

/* A .npy matrix's label column (by number) as text, the shortest that
 * reads back exactly, taken out of *m (or left as NaN with keep_place). */
static int npy_labels(text_rows *t, gsl_matrix **m)
{
    int st = plan_columns(t, NULL, (*m)->size2, 0);
    if (st != GPC_OK || t->label_col < 0)
        return st;
    size_t n = (*m)->size1, d = (*m)->size2, j = (size_t)t->label_col;
    gsl_matrix *r = gpc_matrix_alloc(n, d - t->dropped);
    t->labels = gpc_calloc(n + 1, sizeof *t->labels);
    for (size_t i = 0; i < n; i++) {
        char buf[40];
        double x = gsl_matrix_get(*m, i, j);
        snprintf(buf, sizeof buf, "%.15g", x);
        if (strtod(buf, NULL) != x)
            snprintf(buf, sizeof buf, "%.17g", x);
        t->labels[i] = gpc_strdup(buf);
        for (size_t c = 0, o = 0; c < d; c++)
            if (c != j || t->opts->keep_place)
                gsl_matrix_set(r, i, o++, c == j ? NAN : gsl_matrix_get(*m, i, c));
    }
    gsl_matrix_free(*m);
    *m = r;
    return GPC_OK;
}

/* The matrix of buf (len bytes) in whichever format it is. */
static int parse_matrix(text_rows *t, char *buf, size_t len, gsl_matrix **out)
{
    int st;
    if (gpc_npy_is(buf, len)) {
        st = gpc_npy_read((const unsigned char *)buf, len, t->src, out);
        if (st == GPC_OK && t->opts && t->opts->label_column)
            st = npy_labels(t, out);
        return st;
    }
    if (gpc_libsvm_is(buf, len)) {
        if (t->opts && t->opts->label_column && !t->opts->optional)
            return gpc_fail(GPC_EUSAGE, "%s is a LIBSVM file, whose lines start with their "
                            "labels; leave out --label-column", t->name);
        return gpc_libsvm_read(buf, len, t->src, out, NULL);
    }
    return is_csv(buf, len) ? read_csv(t, buf, len, out) : read_text(t, buf, len, out);
}

static int read_stream_with(FILE *f, const char *name, const gpc_read_opts *opts,
                            gsl_matrix **out, gpc_source *src, char ***labels,
                            size_t *label_col)
{
    reset(out, src);
    if (labels)
        *labels = NULL;
    if (label_col)
        *label_col = 0;
    name = in_name(name);
    char *buf = NULL;
    size_t len = 0;
    int st = slurp(f, name, &buf, &len);
    if (st != GPC_OK)
        return st;
    gpc_source s = {.line = NULL};
    snprintf(s.name, sizeof s.name, "%s", name);
    text_rows t = {.name = name, .opts = opts, .src = &s, .label_col = -1};
    st = parse_matrix(&t, buf, len, out);
    free(buf);
    if (st == GPC_OK)
        drop_names(&s, &t);
    free(t.act);
    if (st == GPC_OK && labels)
        *labels = t.labels;
    else
        gpc_colnames_free(t.labels);
    if (st == GPC_OK && label_col)
        *label_col = t.label_col >= 0 && t.labels ? (size_t)t.label_col + 1 : 0;
    if (st == GPC_OK && src)
        *src = s;
    else
        gpc_source_free(&s);
    return st;
}

int gpc_matrix_read_stream(FILE *f, const char *name, gsl_matrix **out, gpc_source *src)
{
    return read_stream_with(f, name, NULL, out, src, NULL, NULL);
}

int gpc_matrix_read_with(const char *path, const gpc_read_opts *opts, gsl_matrix **out,
                         gpc_source *src, char ***labels, size_t *label_col)
{
    reset(out, src);
    FILE *f;
    const char *name;
    int st = gpc_input_open(path, &f, &name);
    if (st != GPC_OK)
        return st;
    st = read_stream_with(f, path, opts, out, src, labels, label_col);
    gpc_input_close(f);
    return st;
}

int gpc_input_open(const char *path, FILE **f, const char **name)
{
    *name = in_name(path);
    if (is_std(path)) {
        *f = stdin;
        return GPC_OK;
    }
    *f = fopen(path, "rb");
    if (!*f)
        return gpc_fail(GPC_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    /* fopen opens a directory for reading on Linux, and the first read fails
     * with EISDIR, which line readers would take for the end of the file. */
    struct stat sb;
    if (fstat(fileno(*f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(*f);
        *f = NULL;
        return gpc_fail(GPC_EINPUT, "%s: is a directory; give a file", path);
    }
    return GPC_OK;
}

void gpc_input_close(FILE *f)
{
    if (f && f != stdin)
        fclose(f);
}

int gpc_input_read_all(const char *path, char **text, size_t *len, const char **name)
{
    FILE *f;
    *text = NULL;
    *len = 0;
    int st = gpc_input_open(path, &f, name);
    if (st != GPC_OK)
        return st;
    st = slurp(f, *name, text, len);
    gpc_input_close(f);
    return st;
}

int gpc_matrix_read(const char *path, gsl_matrix **out, gpc_source *src)
{
    return gpc_matrix_read_with(path, NULL, out, src, NULL, NULL);
}

void gpc_source_free(gpc_source *src)
{
    if (!src)
        return;
    free(src->line);
    free(src->header);
    for (size_t j = 0; src->colnames && src->colnames[j]; j++)
        free(src->colnames[j]);
    free(src->colnames);
    src->line = NULL;
    src->header = NULL;
    src->colnames = NULL;
    src->rows = 0;
}

const char *gpc_source_where(const gpc_source *src, size_t i, char *buf, size_t size)
{
    if (!src)
        snprintf(buf, size, "row %zu", i + 1);
    else if (src->line && i < src->rows)
        snprintf(buf, size, "%s:%zu", src->name, src->line[i]);
    else
        snprintf(buf, size, "%s: row %zu", src->name, i + 1);
    return buf;
}

/* ---- writing ----------------------------------------------------------------- */

static void write_text(FILE *f, const gsl_matrix *m)
{
    for (size_t i = 0; i < m->size1 && !ferror(f); i++) {
        for (size_t j = 0; j < m->size2; j++)
            fprintf(f, j ? " %.17g" : "%.17g", gsl_matrix_get(m, i, j));
        fputc('\n', f);
    }
}

/* A CSV field: quoted when a reader would otherwise split, trim or skip it
 * (a byte-order mark at the start of the file is dropped) or take the file
 * for another format (.npy's magic string), or when always is set. */
static void write_csv_field(FILE *f, const char *s, int always)
{
    size_t n = strlen(s);
    int quote = always || n == 0 || strpbrk(s, ",\"\r\n") || is_blank(s[0]) ||
                is_blank(s[n - 1]) || s[0] == '#' ||
                (n >= sizeof UTF8_BOM && memcmp(s, UTF8_BOM, sizeof UTF8_BOM) == 0) ||
                !strncmp(s, "\x93NUMPY", 6); /* a file that starts so is read as .npy */
    if (!quote) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') /* written twice */
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_csv(FILE *f, const gsl_matrix *m, char *const *names)
{
    /* a header line without a comma or a quote would not be read as CSV,
     * so a single name is quoted */
    for (size_t j = 0; j < m->size2; j++) {
        if (j)
            fputc(',', f);
        write_csv_field(f, names[j], m->size2 == 1);
    }
    fputc('\n', f);
    for (size_t i = 0; i < m->size1 && !ferror(f); i++) {
        for (size_t j = 0; j < m->size2; j++)
            fprintf(f, j ? ",%.17g" : "%.17g", gsl_matrix_get(m, i, j));
        fputc('\n', f);
    }
}

int gpc_matrix_write_tokens(FILE *f, const char *name, const gsl_matrix *m, gpc_format fmt,
                            size_t col, char *const *text)
{
    if (fmt != GPC_FMT_TEXT)
        return gpc_matrix_write(f, name, m, fmt);
    name = is_std(name) ? "<stdout>" : name;
    errno = 0;
    for (size_t i = 0; i < m->size1 && !ferror(f); i++) {
        for (size_t j = 0; j < m->size2; j++) {
            if (j)
                fputc(' ', f);
            if (j == col)
                fputs(text[i], f);
            else
                fprintf(f, "%.17g", gsl_matrix_get(m, i, j));
        }
        fputc('\n', f);
    }
    if (fflush(f) != 0 || ferror(f))
        return write_error(name, errno);
    return GPC_OK;
}

int gpc_matrix_write_named(FILE *f, const char *name, const gsl_matrix *m, gpc_format fmt,
                           char *const *names)
{
    if (!names || fmt != GPC_FMT_TEXT)
        return gpc_matrix_write(f, name, m, fmt);
    name = is_std(name) ? "<stdout>" : name;
    errno = 0;
    write_csv(f, m, names);
    if (fflush(f) != 0 || ferror(f))
        return write_error(name, errno);
    return GPC_OK;
}

int gpc_matrix_write(FILE *f, const char *name, const gsl_matrix *m, gpc_format fmt)
{
    name = is_std(name) ? "<stdout>" : name;
    errno = 0;
    if (fmt == GPC_FMT_NPY)
        gpc_npy_write(f, m);
    else
        write_text(f, m);
    /* Flushing here reports a full disk against this file, while errno still
     * says why. */
    if (fflush(f) != 0 || ferror(f))
        return write_error(name, errno);
    return GPC_OK;
}
