/* libsvm — LIBSVM's sparse text format (matio and labels dispatch here).
 *
 * One case per line: "label index:value index:value ...", indices strictly
 * ascending, features that are not written are 0; a line with the label
 * alone is a case whose features are all 0.  '#' starts a comment (as in
 * SVMlight), blank lines are skipped, a carriage return counts as a blank.
 * gpc holds inputs densely: the matrix has a column for every index from the
 * first one up to the largest one in the file.
 *
 * Indices are numbered from 1 (LIBSVM's own files) or from 0 (what
 * scikit-learn's dump_svmlight_file writes by default).  By default a file
 * with an index 0 anywhere is numbered from 0, index 0 its first column, and
 * any other from 1, as LIBSVM's and scikit-learn's readers decide; a file
 * numbered from 0 in which the first feature is always 0 (so never written)
 * cannot show it, and needs GPC_LIBSVM_ZERO (the tools' --zero-based).
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

/* How indices are numbered: by the file (AUTO, see above), from 0 or from 1
 * (an index 0 is then an error).  One setting for the whole process: the
 * tools' --zero-based and --one-based. */
typedef enum { GPC_LIBSVM_AUTO = 0, GPC_LIBSVM_ZERO, GPC_LIBSVM_ONE } gpc_libsvm_base;
void gpc_libsvm_set_base(gpc_libsvm_base mode);
gpc_libsvm_base gpc_libsvm_get_base(void);

/* Whether the len bytes at buf are LIBSVM text (see above). */
int gpc_libsvm_is(const char *buf, size_t len);

/* Parse the len bytes at buf, which must be followed by a NUL (buf[len] ==
 * '\0', as the matrix and labels readers leave it).  src->name names the
 * file in messages; src->line, src->rows, src->sparse and src->zero_based are
 * set (free with gpc_source_free).  With out not NULL, the features as a new
 * dense matrix, rows x (largest index + 1 - first index); with labels not NULL, the rows' labels as new
 * strings (free with gpc_libsvm_labels_free).  Errors are GPC_EINPUT with
 * "file:line: what is wrong; what would work", and leave nothing
 * allocated. */
int gpc_libsvm_read(const char *buf, size_t len, gpc_source *src, gsl_matrix **out,
                    char ***labels);

void gpc_libsvm_labels_free(char **labels, size_t n);

#endif
