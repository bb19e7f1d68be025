#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

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
