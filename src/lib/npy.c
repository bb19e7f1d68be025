#include "npy.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

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

/* One "key: value" entry; seen collects a bit per key. */
static int read_entry(cursor *c, const char *name, npy_header *h, int *seen)
{
    char key[32];
    if (!read_string(c, key, sizeof key) || !eat(c, ':'))
        return bad_header(name, "expected a quoted key and ':'");
    if (strcmp(key, "descr") == 0) {
        if (!read_string(c, h->descr, sizeof h->descr))
            return gpc_fail(GPC_EINPUT, "%s: unsupported dtype (not a simple type); need "
                            "float64 '<f8', save arr.astype('<f8')", name);
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

static int npy_check(const npy_header *h, const char *name)
{
    if (strcmp(h->descr, "<f8") != 0)
        return gpc_fail(GPC_EINPUT, "%s: unsupported dtype '%s'; need little-endian float64 "
                        "'<f8', save arr.astype('<f8')", name, h->descr);
    if (h->fortran)
        return gpc_fail(GPC_EINPUT, "%s: Fortran-order array not supported; save "
                        "np.ascontiguousarray(arr)", name);
    if (h->ndim != 1 && h->ndim != 2)
        return gpc_fail(GPC_EINPUT, "%s: array has %d dimensions; need 1 or 2", name, h->ndim);
    if (h->dims[0] == 0)
        return gpc_fail(GPC_EINPUT, "%s: empty input, no rows", name);
    if (h->ndim == 2 && h->dims[1] == 0)
        return gpc_fail(GPC_EINPUT, "%s: empty input, no columns", name);
    return GPC_OK;
}

/* Values decoded from little-endian bytes whatever the host order. */
static int npy_values(const unsigned char *b, size_t len, const gpc_source *src, size_t rows,
                      size_t cols, gsl_matrix **out)
{
    if (cols > SIZE_MAX / 8 / rows)
        return gpc_fail(GPC_EINPUT, "%s: .npy shape too large", src->name);
    size_t want = rows * cols, have = len / 8;
    if (have < want) /* extra bytes after the data are ignored, as numpy does */
        return gpc_fail(GPC_EINPUT, "%s: truncated .npy: expected %zu values, found %zu",
                        src->name, want, have);
    gsl_matrix *m = gpc_matrix_alloc(rows, cols);
    if (!m)
        return gpc_fail(GPC_EINPUT, "%s: out of memory", src->name);
    for (size_t k = 0; k < want; k++) {
        uint64_t bits = get_le(b + 8 * k, 8);
        memcpy(&m->data[k], &bits, sizeof bits);
        if (!isfinite(m->data[k])) {
            char where[300];
            gsl_matrix_free(m);
            return gpc_fail(GPC_EINPUT, "%s: non-finite value",
                            gpc_source_where(src, k / cols, where, sizeof where));
        }
    }
    *out = m;
    return GPC_OK;
}

int gpc_npy_read(const unsigned char *b, size_t len, gpc_source *src, gsl_matrix **out)
{
    const char *name = src->name;
    npy_header h = {.ndim = 0};
    size_t data = 0;
    int st = npy_header_read(b, len, name, &h, &data);
    if (st == GPC_OK)
        st = npy_check(&h, name);
    if (st != GPC_OK)
        return st;
    size_t rows = h.dims[0], cols = h.ndim == 2 ? h.dims[1] : 1;
    src->rows = rows;
    return npy_values(b + data, len - data, src, rows, cols, out);
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
