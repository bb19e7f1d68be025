#include "sparse/rows.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/hash.h"
#include "io/npy.h"

struct gpc_rows {
    uint64_t n;
    size_t dim;
    const double *X;  /* in memory, or NULL */
    int fd;           /* the file, or -1 */
    off_t offset;     /* where its numbers start */
    char *name;
    int mapped;       /* binary labels: neg and pos read as -1 and +1 */
    double neg, pos;
    double *code_value; /* labels as codes 0 .. ncodes - 1, read as these values */
    size_t ncodes;
};

static gpc_rows *rows_new(uint64_t n, size_t dim, const char *name)
{
    gpc_rows *r = gpc_calloc(1, sizeof *r);
    r->n = n;
    r->dim = dim;
    r->fd = -1;
    r->name = gpc_strdup(name);
    return r;
}

gpc_rows *gpc_rows_memory(const double *X, uint64_t n, size_t dim, const char *name)
{
    gpc_rows *r = rows_new(n, dim, name);
    r->X = X;
    return r;
}

/* The header: numpy writes it within the first 4096 bytes for any 2-D
 * array of numbers (64 to 128 bytes in practice). */
#define NPY_HEADER_MAX 4096

static int open_failed(const char *path, const char *what)
{
    return gpc_fail(GPC_EINPUT, "%s: cannot %s: %s", path, what, strerror(errno));
}

int gpc_rows_open_npy(const char *path, gpc_rows **out)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return open_failed(path, "open");
    unsigned char head[NPY_HEADER_MAX];
    ssize_t got = pread(fd, head, sizeof head, 0);
    struct stat sb;
    gpc_npy_layout lay;
    int st = got < 0 || fstat(fd, &sb) != 0 ? open_failed(path, "read")
                                            : gpc_npy_layout_read(head, (size_t)got, path, &lay);
    if (st == GPC_OK && !lay.plain_f8)
        st = gpc_fail(GPC_EINPUT, "%s: minibatch fits read the rows where they lie, which takes "
                      "float64 in C order: save X with numpy.save(path, "
                      "numpy.ascontiguousarray(X, dtype=numpy.float64)), or give it as text",
                      path);
    if (st == GPC_OK &&
        ((uint64_t)sb.st_size < lay.data_offset ||
         ((uint64_t)sb.st_size - lay.data_offset) / sizeof(double) / lay.cols < lay.rows))
        st = gpc_fail(GPC_EINPUT, "%s: truncated: its header says %zu rows of %zu numbers, "
                      "more than the file holds", path, lay.rows, lay.cols);
    if (st != GPC_OK) {
        close(fd);
        return st;
    }
    gpc_rows *r = rows_new(lay.rows, lay.cols, path);
    r->fd = fd;
    r->offset = (off_t)lay.data_offset;
    *out = r;
    return GPC_OK;
}

gpc_rows *gpc_rows_open_fd(int fd, uint64_t offset, uint64_t n, size_t dim, const char *name)
{
    gpc_rows *r = rows_new(n, dim, name);
    r->fd = fd;
    r->offset = (off_t)offset;
    return r;
}

int gpc_rows_npy_in_place(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    unsigned char head[NPY_HEADER_MAX];
    ssize_t got = pread(fd, head, sizeof head, 0);
    close(fd);
    gpc_npy_layout lay;
    int ok = got > 0 && gpc_npy_is((const char *)head, (size_t)got) &&
             gpc_npy_layout_read(head, (size_t)got, path, &lay) == GPC_OK && lay.plain_f8;
    return ok;
}

void gpc_rows_close(gpc_rows *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->code_value);
    free(r->name);
    free(r);
}

uint64_t gpc_rows_count(const gpc_rows *r) { return r->n; }
size_t gpc_rows_dim(const gpc_rows *r) { return r->dim; }
const char *gpc_rows_name(const gpc_rows *r) { return r->name; }

/* count x dim doubles from the file at row first, whole (pread may return
 * less than asked). */
static int read_file(gpc_rows *r, uint64_t first, size_t count, double *x)
{
    size_t want = count * r->dim * sizeof(double), done = 0;
    off_t at = r->offset + (off_t)(first * r->dim * sizeof(double));
    while (done < want) {
        ssize_t got = pread(r->fd, (char *)x + done, want - done, at + (off_t)done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? open_failed(r->name, "read")
                           : gpc_fail(GPC_EINPUT, "%s: ends before row %llu: the file was "
                                      "cut short", r->name, (unsigned long long)first + 1);
        done += (size_t)got;
    }
    return GPC_OK;
}

static int read_plain(gpc_rows *r, uint64_t first, size_t count, double *x)
{
    if (first > r->n || count > r->n - first)
        return gpc_fail(GPC_EINPUT, "%s: rows %llu to %llu asked of %llu", r->name,
                        (unsigned long long)first + 1, (unsigned long long)(first + count),
                        (unsigned long long)r->n);
    if (r->X) {
        memcpy(x, r->X + first * r->dim, count * r->dim * sizeof *x);
        return GPC_OK;
    }
    int st = read_file(r, first, count, x);
    for (size_t i = 0; st == GPC_OK && i < count * r->dim; i++)
        if (!isfinite(x[i]))
            st = gpc_fail(GPC_EINPUT, "%s: row %llu: column %zu is not a finite number",
                          r->name, (unsigned long long)(first + i / r->dim) + 1,
                          i % r->dim + 1);
    return st;
}

static int read_mapped(gpc_rows *r, uint64_t first, size_t count, double *x)
{
    int st = read_plain(r, first, count, x);
    for (size_t i = 0; st == GPC_OK && r->mapped && i < count; i++) {
        if (x[i] != r->neg && x[i] != r->pos)
            st = gpc_fail(GPC_EINPUT, "%s: case %llu: label %.17g is neither of the two "
                          "classes %.17g and %.17g", r->name,
                          (unsigned long long)(first + i) + 1, x[i], r->neg, r->pos);
        x[i] = x[i] == r->pos ? 1.0 : -1.0;
    }
    for (size_t i = 0; st == GPC_OK && r->code_value && i < count * r->dim; i++) {
        if (!(x[i] >= 0 && x[i] < (double)r->ncodes && x[i] == floor(x[i])))
            st = gpc_fail(GPC_EINPUT, "%s: case %llu: %.17g is not the code of a label (0 to "
                          "%zu)", r->name, (unsigned long long)(first + i / r->dim) + 1, x[i],
                          r->ncodes - 1);
        else
            x[i] = r->code_value[(size_t)x[i]];
    }
    return st;
}

void gpc_rows_map_codes(gpc_rows *y, const double *value, size_t ncodes)
{
    free(y->code_value);
    y->code_value = gpc_mallocarray(ncodes ? ncodes : 1, sizeof *y->code_value);
    memcpy(y->code_value, value, ncodes * sizeof *value);
    y->ncodes = ncodes;
}

int gpc_rows_read(gpc_rows *r, uint64_t first, size_t count, double *x)
{
    return read_mapped(r, first, count, x);
}

void gpc_rows_map_binary(gpc_rows *y, double neg, double pos)
{
    y->mapped = 1;
    y->neg = neg;
    y->pos = pos;
}

#define BLOCK 4096

int gpc_rows_binary_classes(gpc_rows *y, double *neg, double *pos)
{
    double *x = gpc_mallocarray(BLOCK * y->dim, sizeof *x), v[2] = {0, 0};
    size_t seen = 0;
    int st = y->dim == 1 ? GPC_OK
                         : gpc_fail(GPC_EINPUT, "%s: %zu columns; labels are one", y->name,
                                    y->dim);
    for (uint64_t first = 0; st == GPC_OK && first < y->n; first += BLOCK) {
        size_t count = y->n - first < BLOCK ? (size_t)(y->n - first) : BLOCK;
        st = read_plain(y, first, count, x);
        for (size_t i = 0; st == GPC_OK && i < count; i++) {
            if ((seen > 0 && x[i] == v[0]) || (seen > 1 && x[i] == v[1]))
                continue;
            if (seen == 2)
                st = gpc_fail(GPC_EINPUT, "%s: case %llu: a third class (%.17g, after %.17g "
                              "and %.17g): the sparse variational method is binary", y->name,
                              (unsigned long long)(first + i) + 1, x[i], v[0], v[1]);
            else
                v[seen++] = x[i];
        }
    }
    if (st == GPC_OK && seen < 2)
        st = gpc_fail(GPC_EINPUT, "%s: every case is of one class (%.17g): a classifier needs "
                      "two", y->name, v[0]);
    free(x);
    *neg = fmin(v[0], v[1]);
    *pos = fmax(v[0], v[1]);
    return st;
}

int gpc_rows_hash(gpc_rows *X, gpc_rows *y, unsigned long long *hash)
{
    unsigned long long h = GPC_HASH_START;
    size_t d = X->dim;
    double *x = gpc_mallocarray(BLOCK * (d + 1), sizeof *x), *yb = x + BLOCK * d;
    int st = y->n == X->n && y->dim == 1
                 ? GPC_OK
                 : gpc_fail(GPC_EINPUT, "%s: %llu labels for %llu rows", y->name,
                            (unsigned long long)y->n, (unsigned long long)X->n);
    for (uint64_t first = 0; st == GPC_OK && first < X->n; first += BLOCK) {
        size_t count = X->n - first < BLOCK ? (size_t)(X->n - first) : BLOCK;
        st = gpc_rows_read(X, first, count, x);
        if (st == GPC_OK)
            st = gpc_rows_read(y, first, count, yb);
        for (size_t i = 0; st == GPC_OK && i < count; i++) {
            h = gpc_hash_doubles(h, x + i * d, d);
            h = gpc_hash_doubles(h, yb + i, 1);
        }
    }
    free(x);
    *hash = h;
    return st;
}
