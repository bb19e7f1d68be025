/* alloc — memory that is there or a clean exit.
 *
 * Every allocation in gpc goes through these.  Running out of memory is not
 * something a tool can work around, so instead of returning NULL they print
 * "prog: out of memory (N bytes)" and exit with status 3 after the gpc_die
 * cleanup handlers ran (no temporary output file survives).  Sizes read from
 * files are checked against what the file can hold before they get here, so
 * a hostile header cannot ask for gigabytes. */
#ifndef GPC_ALLOC_H
#define GPC_ALLOC_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

void *gpc_malloc(size_t size);
/* n elements of size bytes each, zeroed; the product is checked for overflow. */
void *gpc_calloc(size_t n, size_t size);
/* n elements of size bytes each; overflow of n * size is out of memory. */
void *gpc_reallocarray(void *p, size_t n, size_t size);
void *gpc_mallocarray(size_t n, size_t size);
void *gpc_realloc(void *p, size_t size);
char *gpc_strdup(const char *s);

gsl_matrix *gpc_matrix_alloc(size_t n1, size_t n2);
gsl_matrix *gpc_matrix_calloc(size_t n1, size_t n2);
gsl_vector *gpc_vector_alloc(size_t n);
gsl_vector *gpc_vector_calloc(size_t n);

/* Die with the out-of-memory message for a request of size bytes. */
_Noreturn void gpc_out_of_memory(size_t size);

#endif
