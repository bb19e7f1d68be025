#include "io/npy.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"

/* Little-endian integers of nbytes bytes, whatever the host order. */
static uint64_t get_le(const unsigned char *p, int nbytes)
{
    uint64_t x = 0;
    for (int k = nbytes - 1; k >= 0; k--)
        x = x << 8 | p[k];
    return x;
}

static void put_le(unsigned char *p, uint64_t x, int nbytes)
{
    for (int k = 0; k < nbytes; k++, x >>= 8)
        p[k] = (unsigned char)(x & 0xff);
}


/* ---- reading ---------------------------------------------------------------- */

static const char NPY_MAGIC[6] = "\x93NUMPY"; /* six bytes, no NUL */

int gpc_npy_is(const char *buf, size_t len)
{
    return len >= sizeof NPY_MAGIC && memcmp(buf, NPY_MAGIC, sizeof NPY_MAGIC) == 0;
}

typedef struct {
    char descr[64];
    int fortran;
    int ndim;
    size_t dims[2]; /* the first two dimensions */
} npy_header;

/* A cursor over the header, a Python dict literal such as
 * {'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), } */
typedef struct {
    const char *p, *end;
} cursor;

static void skip_space(cursor *c)
{
    while (c->p < c->end && isspace((unsigned char)*c->p))
        c->p++;
}

static int eat(cursor *c, char ch)
{
    skip_space(c);
    if (c->p == c->end || *c->p != ch)
        return 0;
    c->p++;
    return 1;
}

static int eat_word(cursor *c, const char *w)
{
    size_t n = strlen(w);
    skip_space(c);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
        return 0;
    c->p += n;
    return 1;
}

/* A quoted string without escapes (all numpy writes for keys and simple dtypes). */
static int read_string(cursor *c, char *out, size_t size)
{
    skip_space(c);
    if (c->p == c->end || (*c->p != '\'' && *c->p != '"'))
        return 0;
    char quote = *c->p++;
    size_t n = 0;
    for (; c->p < c->end && *c->p != quote; c->p++) {
        if (n + 1 >= size)
            return 0;
        out[n++] = *c->p;
    }
    if (c->p == c->end)
        return 0;
    c->p++;
    out[n] = '\0';
    return 1;
}

static int read_size(cursor *c, size_t *v)
{
    skip_space(c);
    if (c->p == c->end || !isdigit((unsigned char)*c->p))
        return 0;
    size_t x = 0;
    for (; c->p < c->end && isdigit((unsigned char)*c->p); c->p++) {
        size_t d = (size_t)(*c->p - '0');
        if (x > (SIZE_MAX - d) / 10)
            return 0;
        x = 10 * x + d;
    }
    if (c->p < c->end && *c->p == 'L') /* Python 2 wrote longs as 3L */
        c->p++;
    *v = x;
    return 1;
}

/* (n,), (n, m), () or longer tuples; the caller checks the dimension. */
static int read_shape(cursor *c, npy_header *h)
{
    if (!eat(c, '('))
        return 0;
    h->ndim = 0;
    while (!eat(c, ')')) {
        size_t d;
        if (!read_size(c, &d))
            return 0;
        if (h->ndim < 2)
            h->dims[h->ndim] = d;
        h->ndim++;
        if (!eat(c, ','))
            return eat(c, ')');
    }
    return 1;
}

static int bad_header(const char *name, const char *why)
{
    return gpc_fail(GPC_EINPUT, "%s: bad .npy header: %s", name, why);
}

/* A descr that is not a string: a list of fields, as numpy writes for a
 * structured array (a record array, or what df.to_records() gives). */
static int not_simple_dtype(cursor *c, const char *name)
{
    skip_space(c);
    if (c->p < c->end && *c->p == '[')
        return gpc_fail(GPC_EINPUT, "%s: unsupported dtype: a structured array (named fields); "
                        "save the fields as one plain array, np.column_stack([a[f] for f in "
                        "a.dtype.names]).astype('<f8')", name);
    return gpc_fail(GPC_EINPUT, "%s: unsupported dtype (not a simple type); save "
                    "arr.astype('<f8')", name);
}

/* One "key: value" entry; seen collects a bit per key. */
static int read_entry(cursor *c, const char *name, npy_header *h, int *seen)
{
    char key[32];
    if (!read_string(c, key, sizeof key) || !eat(c, ':'))
        return bad_header(name, "expected a quoted key and ':'");
    if (strcmp(key, "descr") == 0) {
        if (!read_string(c, h->descr, sizeof h->descr))
            return not_simple_dtype(c, name);
        *seen |= 1;
    } else if (strcmp(key, "fortran_order") == 0) {
        if (eat_word(c, "True"))
            h->fortran = 1;
        else if (eat_word(c, "False"))
            h->fortran = 0;
        else
            return bad_header(name, "'fortran_order' is not True or False");
        *seen |= 2;
    } else if (strcmp(key, "shape") == 0) {
        if (!read_shape(c, h))
            return bad_header(name, "'shape' is not a tuple of integers");
        *seen |= 4;
    } else {
        return gpc_fail(GPC_EINPUT, "%s: bad .npy header: unknown key '%s'", name, key);
    }
    return GPC_OK;
}

static int read_dict(cursor *c, const char *name, npy_header *h)
{
    int seen = 0;
    if (!eat(c, '{'))
        return bad_header(name, "expected '{'");
    while (!eat(c, '}')) {
        int st = read_entry(c, name, h, &seen);
        if (st != GPC_OK)
            return st;
        if (!eat(c, ',')) {
            if (!eat(c, '}'))
                return bad_header(name, "expected ',' or '}'");
            break;
        }
    }
    if (seen != 7)
        return bad_header(name, "needs 'descr', 'fortran_order' and 'shape'");
    return GPC_OK;
}

/* Magic, version and header length; *data is where the values start. */
static int npy_header_read(const unsigned char *b, size_t len, const char *name, npy_header *h,
                           size_t *data)
{
    if (len < 8)
        return gpc_fail(GPC_EINPUT, "%s: truncated .npy header", name);
    /* Versions 2.0 and 3.0 differ from 1.0 only in a 4-byte header length. */
    int nbytes = b[6] == 1 ? 2 : b[6] == 2 || b[6] == 3 ? 4 : 0;
    if (!nbytes)
        return gpc_fail(GPC_EINPUT, "%s: unsupported .npy version %d.%d", name, b[6], b[7]);
    size_t start = 8 + (size_t)nbytes;
    if (len < start || get_le(b + 8, nbytes) > len - start)
        return gpc_fail(GPC_EINPUT, "%s: truncated .npy header", name);
    size_t hlen = (size_t)get_le(b + 8, nbytes);
    cursor c = {(const char *)b + start, (const char *)b + start + hlen};
    int st = read_dict(&c, name, h);
    *data = start + hlen;
    return st;
}

static int npy_check_shape(const npy_header *h, const char *name)
{
    if (h->ndim != 1 && h->ndim != 2)
        return gpc_fail(GPC_EINPUT, "%s: array has %d dimensions; need 1 or 2", name, h->ndim);
    if (h->dims[0] == 0)
        return gpc_fail(GPC_EINPUT, "%s: empty input, no rows", name);
    if (h->ndim == 2 && h->dims[1] == 0)
        return gpc_fail(GPC_EINPUT, "%s: empty input, no columns", name);
    if (h->ndim == 2 && h->dims[1] > GPC_MATRIX_MAX_COLS)
        return gpc_fail(GPC_EINPUT, "%s: %zu columns, more than the %u a matrix may have; "
                        "keep the columns to be used", name, h->dims[1],
                        GPC_MATRIX_MAX_COLS);
    return GPC_OK;
}

int gpc_npy_layout_read(const unsigned char *b, size_t len, const char *name,
                        gpc_npy_layout *out)
{
    npy_header h = {{0}, 0, 0, {0, 0}};
    size_t data;
    if (!gpc_npy_is((const char *)b, len))
        return gpc_fail(GPC_EINPUT, "%s: not a .npy file", name);
    int st = npy_header_read(b, len, name, &h, &data);
    if (st == GPC_OK)
        st = npy_check_shape(&h, name);
    if (st != GPC_OK)
        return st;
    out->rows = h.dims[0];
    out->cols = h.ndim == 2 ? h.dims[1] : 1;
    out->data_offset = data;
    out->plain_f8 = !h.fortran && strcmp(h.descr, "<f8") == 0;
    return GPC_OK;
}

/* ---- element types ---------------------------------------------------------- */

/* What is being read, for messages: a matrix's rows, or labels' cases, whose
 * advice differs (labels may be strings). */
typedef struct {
    const char *name;
    int labels;
} npy_reader;

static const char *where(const npy_reader *r, size_t i, char *buf, size_t size)
{
    snprintf(buf, size, "%s: %s %zu", r->name, r->labels ? "case" : "row", i + 1);
    return buf;
}

typedef enum { DT_FLOAT, DT_INT, DT_UINT, DT_BOOL, DT_UNICODE, DT_BYTES } dtype_kind;

typedef struct {
    dtype_kind kind;
    size_t size; /* bytes per element */
    int big;     /* big-endian */
} npy_dtype;

static uint64_t get_be(const unsigned char *p, int nbytes)
{
    uint64_t x = 0;
    for (int k = 0; k < nbytes; k++)
        x = x << 8 | p[k];
    return x;
}

/* Integers of nbytes bytes in either byte order, whatever the host order;
 * each size is a case of its own so that the compiler unrolls the loops
 * (reading a float64 file costs a third more without). */
static uint64_t get_uint(const unsigned char *p, size_t nbytes, int big)
{
    switch (nbytes) {
    case 1:
        return p[0];
    case 2:
        return big ? get_be(p, 2) : get_le(p, 2);
    case 4:
        return big ? get_be(p, 4) : get_le(p, 4);
    case 8:
        return big ? get_be(p, 8) : get_le(p, 8);
    default:
        return big ? get_be(p, (int)nbytes) : get_le(p, (int)nbytes);
    }
}

/* A dtype refused, with the reason and what to save instead. */
static int refuse_dtype(const npy_reader *r, const char *descr)
{
    const char *why = "not a type gpc reads", *save = "arr.astype('<f8')";
    switch (descr[0] ? descr[1] : '\0') {
    case 'O':
        why = "an object array: pickled Python objects, which gpc does not unpickle";
        if (r->labels)
            save = "y.astype(str) for words or y.astype('<i8') for integers";
        break;
    case 'c':
        why = "complex numbers";
        save = "arr.real.astype('<f8'), or the real and imaginary parts as two columns";
        break;
    case 'U':
    case 'S':
        why = r->labels ? "strings of no characters, or too long to hold"
                        : "strings; a matrix holds numbers";
        save = r->labels ? "y.astype(str)" : "arr.astype('<f8') if the strings are numbers";
        break;
    case 'M':
    case 'm':
        why = "dates or times";
        break;
    case 'f':
        why = "floats of a size other than 2, 4 or 8 bytes";
        break;
    case 'V':
        why = "raw bytes or records";
        break;
    }
    return gpc_fail(GPC_EINPUT, "%s: unsupported dtype '%s' (%s); save %s", r->name, descr, why,
                    save);
}

/* Byte order, kind and count of a simple descr such as '<f8', '|u1' or '<U12'. */
static int split_descr(const char *d, char *order, char *kind, size_t *count)
{
    if (!d[0] || !d[1] || !d[2])
        return 0;
    size_t n = 0;
    for (const char *p = d + 2; *p; p++) {
        size_t digit = (size_t)(*p - '0');
        if (!isdigit((unsigned char)*p) || n > (SIZE_MAX - digit) / 10)
            return 0;
        n = 10 * n + digit;
    }
    *order = d[0];
    *kind = d[1];
    *count = n;
    return 1;
}

static int is_int_size(size_t n) { return n == 1 || n == 2 || n == 4 || n == 8; }

/* The kind and size of descr; strings only for labels. */
static int dtype_kind_of(char kind, size_t count, int labels, npy_dtype *t)
{
    t->size = count;
    if (kind == 'f' && (count == 2 || count == 4 || count == 8))
        t->kind = DT_FLOAT;
    else if ((kind == 'i' || kind == 'u') && is_int_size(count))
        t->kind = kind == 'i' ? DT_INT : DT_UINT;
    else if (kind == 'b' && count == 1)
        t->kind = DT_BOOL;
    else if (labels && kind == 'U' && count > 0 && count <= SIZE_MAX / 4) {
        t->kind = DT_UNICODE; /* numpy's UTF-32, 4 bytes a character */
        t->size = 4 * count;
    } else if (labels && kind == 'S' && count > 0)
        t->kind = DT_BYTES;
    else
        return 0;
    return 1;
}

static int parse_dtype(const npy_reader *r, const char *descr, npy_dtype *t)
{
    char order, kind;
    size_t count;
    if (!split_descr(descr, &order, &kind, &count) || !dtype_kind_of(kind, count, r->labels, t))
        return refuse_dtype(r, descr);
    /* numpy writes '|' for types of one byte and for byte strings, '<' or
     * '>' for the others; '=' (native) never appears in a file. */
    int any_order = t->size == 1 || t->kind == DT_BYTES;
    if (!(order == '<' || order == '>' || (any_order && order == '|')))
        return gpc_fail(GPC_EINPUT, "%s: unsupported dtype '%s' (byte order '%c'; a .npy file "
                        "says '<' or '>'); save arr.astype('<f8')", r->name, descr, order);
    t->big = order == '>';
    return GPC_OK;
}

/* ---- numbers ---------------------------------------------------------------- */

/* IEEE half precision: sign, 5 exponent bits (bias 15), 10 fraction bits. */
static double half_value(unsigned h)
{
    unsigned exponent = h >> 10 & 0x1f, fraction = h & 0x3ff;
    double x;
    if (exponent == 0)
        x = ldexp(fraction, -24); /* zero and subnormals */
    else if (exponent == 31)
        x = fraction ? NAN : INFINITY;
    else
        x = ldexp(fraction + 1024, (int)exponent - 25);
    return h & 0x8000 ? -x : x;
}

static double float_value(const npy_dtype *t, const unsigned char *p)
{
    uint64_t bits = get_uint(p, t->size, t->big);
    if (t->size == 2)
        return half_value((unsigned)bits);
    if (t->size == 4) {
        uint32_t b32 = (uint32_t)bits;
        float f;
        memcpy(&f, &b32, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Beyond 2^53 in magnitude not every integer is a double: such a value is
 * refused rather than rounded, since it is likely an identifier or a count
 * whose last digits matter. */
#define EXACT_INTEGER_LIMIT ((uint64_t)1 << 53)

static int integer_value(const npy_reader *r, const npy_dtype *t, const unsigned char *p,
                         size_t i, double *x)
{
    uint64_t u = get_uint(p, t->size, t->big);
    int negative = 0;
    if (t->kind == DT_INT) {
        unsigned bits = 8 * (unsigned)t->size;
        if (bits < 64 && (u >> (bits - 1) & 1))
            u |= ~(uint64_t)0 << bits; /* sign-extend to 64 bits */
        negative = (int)(u >> 63);
    }
    uint64_t magnitude = negative ? ~u + 1 : u;
    if (magnitude > EXACT_INTEGER_LIMIT) {
        char at[300];
        return gpc_fail(GPC_EINPUT, "%s: integer %s%llu is too large for a double to hold "
                        "exactly (its magnitude is above 2^53 = 9007199254740992); %s",
                        where(r, i, at, sizeof at), negative ? "-" : "",
                        (unsigned long long)magnitude,
                        r->labels ? "save the labels as strings, y.astype(str)"
                                  : "scale the column down, or save arr.astype('<f8') "
                                    "to accept the rounding");
    }
    *x = negative ? -(double)magnitude : (double)magnitude;
    return GPC_OK;
}

/* Element i (for messages) at p as a finite double. */
static int number_at(const npy_reader *r, const npy_dtype *t, const unsigned char *p, size_t i,
                     double *x)
{
    if (t->kind == DT_BOOL) {
        *x = p[0] != 0; /* any nonzero byte is True, as numpy reads it */
        return GPC_OK;
    }
    if (t->kind != DT_FLOAT)
        return integer_value(r, t, p, i, x);
    *x = float_value(t, p);
    if (!isfinite(*x)) {
        char at[300];
        return gpc_fail(GPC_EINPUT, "%s: non-finite value", where(r, i, at, sizeof at));
    }
    return GPC_OK;
}

/* The data must hold rows x cols elements of t->size bytes; the product is
 * checked before anything is allocated for it. */
static int check_data_size(const npy_reader *r, size_t rows, size_t cols, size_t size,
                           size_t len)
{
    if (cols > SIZE_MAX / size / rows)
        return gpc_fail(GPC_EINPUT, "%s: .npy shape too large", r->name);
    size_t want = rows * cols, have = len / size;
    if (have < want) /* extra bytes after the data are ignored, as numpy does */
        return gpc_fail(GPC_EINPUT, "%s: truncated .npy: expected %zu values, found %zu",
                        r->name, want, have);
    return GPC_OK;
}

/* The values in C or Fortran order as a row-major matrix. */
static int npy_values(const npy_reader *r, const npy_dtype *t, int fortran,
                      const unsigned char *b, size_t rows, size_t cols, gsl_matrix **out)
{
    gsl_matrix *m = gpc_matrix_alloc(rows, cols);
    /* The file runs along the rows in C order, down the columns in Fortran
     * order: the inner loop follows the file. */
    size_t outer_n = fortran ? cols : rows, inner_n = fortran ? rows : cols;
    const unsigned char *p = b;
    for (size_t outer = 0; outer < outer_n; outer++) {
        for (size_t inner = 0; inner < inner_n; inner++, p += t->size) {
            size_t i = fortran ? inner : outer, j = fortran ? outer : inner;
            int st = number_at(r, t, p, i, &m->data[i * m->tda + j]);
            if (st != GPC_OK) {
                gsl_matrix_free(m);
                return st;
            }
        }
    }
    *out = m;
    return GPC_OK;
}

/* Header, shape and dtype of the file; *data is where the values start. */
static int npy_open(const npy_reader *r, const unsigned char *b, size_t len, npy_header *h,
                    npy_dtype *t, size_t *data)
{
    int st = npy_header_read(b, len, r->name, h, data);
    if (st == GPC_OK)
        st = npy_check_shape(h, r->name);
    if (st == GPC_OK)
        st = parse_dtype(r, h->descr, t);
    return st;
}

int gpc_npy_read(const unsigned char *b, size_t len, gpc_source *src, gsl_matrix **out)
{
    npy_reader r = {.name = src->name, .labels = 0};
    npy_header h = {.ndim = 0};
    npy_dtype t;
    size_t data = 0;
    int st = npy_open(&r, b, len, &h, &t, &data);
    if (st != GPC_OK)
        return st;
    size_t rows = h.dims[0], cols = h.ndim == 2 ? h.dims[1] : 1;
    st = check_data_size(&r, rows, cols, t.size, len - data);
    if (st != GPC_OK)
        return st;
    src->rows = rows;
    return npy_values(&r, &t, h.fortran, b + data, rows, cols, out);
}

/* ---- labels ----------------------------------------------------------------- */

static size_t utf8_put(char *out, uint32_t c)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xc0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | c >> 12);
        out[1] = (char)(0x80 | (c >> 6 & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | c >> 18);
    out[1] = (char)(0x80 | (c >> 12 & 0x3f));
    out[2] = (char)(0x80 | (c >> 6 & 0x3f));
    out[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

/* Element i at p of a '<U' array in UTF-8 (at most t->size bytes, as no
 * character takes more than 4 bytes in either), without the NULs that pad it. */
static int unicode_label(const npy_reader *r, const npy_dtype *t, const unsigned char *p,
                         size_t i, char *out, size_t *len)
{
    size_t nchar = t->size / 4, n = 0;
    while (nchar > 0 && get_uint(p + 4 * (nchar - 1), 4, t->big) == 0)
        nchar--;
    for (size_t c = 0; c < nchar; c++) {
        uint64_t code = get_uint(p + 4 * c, 4, t->big);
        if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
            char at[300];
            return gpc_fail(GPC_EINPUT, "%s: character %zu (0x%llx) is not a Unicode "
                            "character; save the labels with y.astype(str)",
                            where(r, i, at, sizeof at), c + 1, (unsigned long long)code);
        }
        n += utf8_put(out + n, (uint32_t)code);
    }
    *len = n;
    return GPC_OK;
}

/* A label from a string is one token, as on a line of a text labels file:
 * not empty, without blanks or control characters, which would split it or
 * hide in every file and message that names the class. */
static int check_word(const npy_reader *r, size_t i, const char *s, size_t len)
{
    char at[300];
    if (len == 0)
        return gpc_fail(GPC_EINPUT, "%s: an empty label: every case needs its label",
                        where(r, i, at, sizeof at));
    for (size_t k = 0; k < len; k++) {
        unsigned char c = (unsigned char)s[k];
        int shown = len > 60 ? 60 : (int)len;
        if (c == ' ')
            return gpc_fail(GPC_EINPUT, "%s: label '%.*s' has a blank; a label is one word: "
                            "save np.char.replace(y, ' ', '_')", where(r, i, at, sizeof at),
                            shown, s);
        if (c < 0x20 || c == 0x7f)
            return gpc_fail(GPC_EINPUT, "%s: label has a control character (byte 0x%02x at "
                            "byte %zu); a label is one word of printable characters",
                            where(r, i, at, sizeof at), c, k + 1);
    }
    return GPC_OK;
}

/* Element i at p as the text of a label in out (room for t->size bytes and
 * more than a number's 24). */
static int label_at(const npy_reader *r, const npy_dtype *t, const unsigned char *p, size_t i,
                    char *out, size_t *len)
{
    *len = 0;
    if (t->kind == DT_UNICODE) {
        int st = unicode_label(r, t, p, i, out, len);
        if (st != GPC_OK)
            return st;
    } else if (t->kind == DT_BYTES) {
        size_t n = t->size;
        while (n > 0 && p[n - 1] == 0)
            n--;
        memcpy(out, p, n);
        *len = n;
    } else {
        double x;
        int st = number_at(r, t, p, i, &x);
        /* the shortest text that reads back exactly, so labels compare and
         * print as the numbers they are */
        if (st == GPC_OK)
            *len = (size_t)snprintf(out, 32, "%.17g", x);
        return st;
    }
    out[*len] = '\0';
    return check_word(r, i, out, *len);
}

int gpc_npy_read_labels(const unsigned char *b, size_t len, const char *name,
                        gpc_npy_label_fn take, void *ctx)
{
    npy_reader r = {.name = name, .labels = 1};
    npy_header h = {.ndim = 0};
    npy_dtype t;
    size_t data = 0;
    int st = npy_open(&r, b, len, &h, &t, &data);
    if (st != GPC_OK)
        return st;
    if (h.ndim == 2 && h.dims[1] != 1)
        return gpc_fail(GPC_EINPUT, "%s: labels must be one column, found %zu", name, h.dims[1]);
    size_t n = h.dims[0];
    st = check_data_size(&r, n, 1, t.size, len - data);
    if (st != GPC_OK)
        return st;
    char *text = gpc_malloc(t.size + 32);
    for (size_t i = 0; i < n && st == GPC_OK; i++) {
        size_t tlen;
        st = label_at(&r, &t, b + data + i * t.size, i, text, &tlen);
        if (st == GPC_OK)
            take(ctx, text, tlen);
    }
    free(text);
    return st;
}


/* ---- writing ---------------------------------------------------------------- */

/* Version 1.0 header padded with spaces to a '\n' so that the data starts at a
 * multiple of 64 bytes, as numpy itself writes it. */
static void write_npy_header(FILE *f, const gsl_matrix *m)
{
    char dict[128];
    int n = snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, "
                     "'shape': (%zu, %zu), }", m->size1, m->size2);
    size_t hlen = (size_t)n + 1;
    hlen += (64 - (10 + hlen) % 64) % 64;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    put_le(pre + 8, hlen, 2);
    fwrite(pre, 1, sizeof pre, f);
    fprintf(f, "%s%*s\n", dict, (int)(hlen - 1 - (size_t)n), "");
}

void gpc_npy_write(FILE *f, const gsl_matrix *m)
{
    unsigned char chunk[8 * 512];
    size_t used = 0;
    write_npy_header(f, m);
    for (size_t i = 0; i < m->size1 && !ferror(f); i++) {
        for (size_t j = 0; j < m->size2; j++) {
            double x = gsl_matrix_get(m, i, j);
            uint64_t bits;
            memcpy(&bits, &x, sizeof bits);
            put_le(chunk + used, bits, 8);
            used += 8;
            if (used == sizeof chunk) {
                fwrite(chunk, 1, used, f);
                used = 0;
            }
        }
    }
    fwrite(chunk, 1, used, f);
}
