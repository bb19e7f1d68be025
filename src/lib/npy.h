/* npy — NumPy .npy arrays, the binary matrix format (matio dispatches here).
 *
 * Read: versions 1.0, 2.0 and 3.0, 1-D (one column) or 2-D, little-endian
 * float64 in C order.  Written: version 1.0, '<f8', C order, the header
 * padded so that the data starts at a multiple of 64 bytes as numpy does. */
#ifndef GPC_NPY_H
#define GPC_NPY_H

#include <stdio.h>
#include <gsl/gsl_matrix.h>

#include "matio.h"

/* Whether buf starts with the .npy magic string. */
int gpc_npy_is(const char *buf, size_t len);

/* The array in the len bytes at b as a new matrix; src->name names the file
 * in messages, and src->rows is set.  Errors are GPC_EINPUT with a message
 * that says what numpy call would write a readable file. */
int gpc_npy_read(const unsigned char *b, size_t len, gpc_source *src, gsl_matrix **out);

/* m to f; the caller checks the stream for errors. */
void gpc_npy_write(FILE *f, const gsl_matrix *m);

#endif
