#include "base/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/err.h"

void gpc_out_of_memory(size_t size)
{
    if (size == SIZE_MAX)
        gpc_die(GPC_EINPUT, "out of memory (the size overflows)");
    gpc_die(GPC_EINPUT, "out of memory (%zu bytes)", size);
}

/* n * size, or SIZE_MAX when that overflows. */
static size_t product(size_t n, size_t size)
{
    return size && n > SIZE_MAX / size ? SIZE_MAX : n * size;
}

void *gpc_malloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        gpc_out_of_memory(size);
    return p;
}

void *gpc_calloc(size_t n, size_t size)
{
    size_t bytes = product(n, size);
    void *p = bytes == SIZE_MAX ? NULL : calloc(n ? n : 1, size ? size : 1);
    if (!p)
        gpc_out_of_memory(bytes);
    return p;
}

void *gpc_mallocarray(size_t n, size_t size)
{
    size_t bytes = product(n, size);
    if (bytes == SIZE_MAX)
        gpc_out_of_memory(bytes);
    return gpc_malloc(bytes);
}

void *gpc_reallocarray(void *p, size_t n, size_t size)
{
    size_t bytes = product(n, size);
    void *q = bytes == SIZE_MAX ? NULL : realloc(p, bytes ? bytes : 1);
    if (!q)
        gpc_out_of_memory(bytes);
    return q;
}

void *gpc_realloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        gpc_out_of_memory(size);
    return q;
}

char *gpc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(gpc_malloc(n), s, n);
}

/* GSL reports a failed allocation through its error handler and returns
 * NULL; the quiet handler gpc installs lets it come back here. */
gsl_matrix *gpc_matrix_alloc(size_t n1, size_t n2)
{
    gsl_matrix *m = gsl_matrix_alloc(n1, n2);
    if (!m)
        gpc_out_of_memory(product(product(n1, n2), sizeof(double)));
    return m;
}

gsl_matrix *gpc_matrix_calloc(size_t n1, size_t n2)
{
    gsl_matrix *m = gpc_matrix_alloc(n1, n2);
    gsl_matrix_set_zero(m);
    return m;
}

gsl_vector *gpc_vector_alloc(size_t n)
{
    gsl_vector *v = gsl_vector_alloc(n);
    if (!v)
        gpc_out_of_memory(product(n, sizeof(double)));
    return v;
}

gsl_vector *gpc_vector_calloc(size_t n)
{
    gsl_vector *v = gpc_vector_alloc(n);
    gsl_vector_set_zero(v);
    return v;
}

/* ---- sizes checked before allocating ----------------------------------- */

size_t gpc_size_mul(size_t a, size_t b)
{
    return product(a, b);
}

size_t gpc_size_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

size_t gpc_doubles_bytes(size_t rows, size_t cols)
{
    return gpc_size_mul(gpc_size_mul(rows, cols), sizeof(double));
}

/* The address space mapped now, from /proc (Linux); 0 where unknown, which
 * leaves the limit itself as the bound. */
static size_t mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    long page = sysconf(_SC_PAGESIZE);
    if (!f)
        return 0;
    if (fscanf(f, "%lu", &pages) != 1)
        pages = 0;
    fclose(f);
    return page > 0 ? gpc_size_mul(pages, (size_t)page) : 0;
}

gpc_memory gpc_memory_available(void)
{
    gpc_memory mem = {SIZE_MAX, 0};
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
        mem.bytes = gpc_size_mul((size_t)pages, (size_t)page);
    /* under ulimit -v an allocation past the limit fails at once, but the
     * libraries' buffers and thread stacks already count against it */
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        size_t limit = rl.rlim_cur > SIZE_MAX ? SIZE_MAX : (size_t)rl.rlim_cur;
        size_t mapped = mapped_bytes(), left = limit > mapped ? limit - mapped : 0;
        if (left < mem.bytes) {
            mem.bytes = left;
            mem.limited = 1;
        }
    }
    return mem;
}

/* "5.12 GB", "312 MB", "4.1 kB" or "512 bytes": three digits in the unit
 * that keeps them above 1 ("2400 TB" past the largest unit). */
static void format_size(size_t bytes, char *buf, size_t size)
{
    static const char *unit[] = {"TB", "GB", "MB", "kB"};
    double b = (double)bytes, scale = 1e12;
    for (size_t u = 0; u < sizeof unit / sizeof unit[0]; u++, scale /= 1e3)
        if (b >= scale) {
            snprintf(buf, size, b / scale >= 1e3 ? "%.0f %s" : "%.3g %s", b / scale, unit[u]);
            return;
        }
    snprintf(buf, size, "%zu byte%s", bytes, bytes == 1 ? "" : "s");
}

int gpc_alloc_fits(size_t bytes, gpc_memory mem, const char *what, const char *hint)
{
    if (bytes <= mem.bytes && bytes != SIZE_MAX)
        return GPC_OK;
    char need[32], have[32];
    format_size(bytes, need, sizeof need);
    format_size(mem.bytes, have, sizeof have);
    if (bytes == SIZE_MAX)
        return gpc_fail(GPC_EINPUT, "%s would take more memory than any machine can address; "
                        "%s", what, hint);
    if (mem.limited)
        return gpc_fail(GPC_EINPUT, "%s would take %s, more than the %s that the address-space "
                        "limit (ulimit -v) leaves; %s", what, need, have, hint);
    return gpc_fail(GPC_EINPUT, "%s would take %s, more than this machine's %s of memory; %s",
                    what, need, have, hint);
}

int gpc_alloc_check(size_t bytes, const char *what, const char *hint)
{
    return gpc_alloc_fits(bytes, gpc_memory_available(), what, hint);
}
