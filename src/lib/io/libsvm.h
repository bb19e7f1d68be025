/* libsvm — LIBSVM's sparse text format (matio and labels dispatch here).
 *
 * One case per line: "label index:value index:value ...", indices 1-based
 * and strictly ascending, features that are not written are 0; a line with
 * the label alone is a case whose features are all 0.  '#' starts a comment
 * (as in SVMlight), blank lines are skipped, a carriage return counts as a
 * blank.  gpc holds inputs densely: the matrix has a column for every index
 * up to the largest one in the file.
 *
 * A text is LIBSVM when the first line with two or more tokens (before any
 * '#') has a ':' and no ',' (CSV) in its second token; lines with one token
 * decide nothing, since a labels file or a one-column matrix is all such
 * lines. */
#ifndef GPC_LIBSVM_H
#define GPC_LIBSVM_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>

#include "io/matio.h"

/* Whether the len bytes at buf are LIBSVM text (see above). */
int gpc_libsvm_is(const char *buf, size_t len);

/* Parse the len bytes at buf, which must be followed by a NUL (buf[len] ==
 * '\0', as the matrix and labels readers leave it).  src->name names the
 * file in messages; src->line, src->rows and src->sparse are set (free with
 * gpc_source_free).  With out not NULL, the features as a new dense matrix,
 * rows x (largest index); with labels not NULL, the rows' labels as new
 * strings (free with gpc_libsvm_labels_free).  Errors are GPC_EINPUT with
 * "file:line: what is wrong; what would work", and leave nothing
 * allocated. */
int gpc_libsvm_read(const char *buf, size_t len, gpc_source *src, gsl_matrix **out,
                    char ***labels);

void gpc_libsvm_labels_free(char **labels, size_t n);

#endif
