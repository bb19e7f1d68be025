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

/* ---- sizes checked before allocating -------------------------------------
 *
 * A workspace whose size follows from its input (n^2 per class for n cases)
 * is checked against the memory the process may use before any of it is
 * allocated.  Linux lends memory it does not have, so each n x n matrix of
 * a workspace too large for the machine is granted, and the process is
 * killed when it touches them (status 137, no message, its temporary files
 * left behind); the check turns that into a message and exit status 3.
 *
 * Sizes are computed with the saturating products and sums below: a result
 * that does not fit in size_t is SIZE_MAX, which no machine has, so a size
 * from a file's dimensions never wraps round to a small number. */

/* a * b and a + b, or SIZE_MAX when the result does not fit in size_t
 * (SIZE_MAX stays SIZE_MAX through a sum, and a product with anything but
 * 0). */
size_t gpc_size_mul(size_t a, size_t b);
size_t gpc_size_add(size_t a, size_t b);
/* The bytes of rows x cols doubles, saturating. */
size_t gpc_doubles_bytes(size_t rows, size_t cols);

/* The memory a process may still take: the machine's physical memory or,
 * when a limit on the address space (RLIMIT_AS, ulimit -v) leaves less,
 * that limit less what is mapped already (limited then 1).  SIZE_MAX when
 * neither is known. */
typedef struct {
    size_t bytes;
    int limited;
} gpc_memory;
gpc_memory gpc_memory_available(void);

/* GPC_OK if bytes fit in mem, else GPC_EINPUT with the message
 * "WHAT would take 5.12 GB, more than this machine's 4.1 GB of memory; HINT"
 * (under a limit: "more than the 1.9 GB that the address-space limit
 * (ulimit -v) leaves"; bytes SIZE_MAX: "more than any machine can
 * address").  what names the workspace and its sizes, hint says what to
 * try. */
int gpc_alloc_fits(size_t bytes, gpc_memory mem, const char *what, const char *hint);
/* gpc_alloc_fits against gpc_memory_available(): call before allocating. */
int gpc_alloc_check(size_t bytes, const char *what, const char *hint);

#endif
