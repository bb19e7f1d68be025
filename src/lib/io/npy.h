/* npy — NumPy .npy arrays, the binary matrix format (matio dispatches here).
 *
 * Read: versions 1.0, 2.0 and 3.0, 1-D (one column) or 2-D, in C or Fortran
 * order, of the dtypes numpy and pandas write for numbers, each converted to
 * a double on reading: floats '<f8' '<f4' '<f2', signed and unsigned integers
 * of 1, 2, 4 or 8 bytes ('|i1' '|u1' '<i2' ... '<u8'), and bools '|b1' (as
 * 0 and 1), in either byte order ('<' or '>').  Refused, each with a message
 * that says what to save instead: integers above 2^53 in magnitude (not every
 * one is a double, and rounding one silently could merge two labels or ids),
 * NaN and infinities, and other dtypes (objects, which numpy pickles;
 * structured records; complex; strings; dates).  Labels may also be strings:
 * '<U' (numpy's fixed-width UTF-32, read as UTF-8) or '|S' (bytes), each
 * without its NUL padding.
 *
 * Written: version 1.0, '<f8', C order, the header padded so that the data
 * start at a multiple of 64 bytes as numpy does. */
#ifndef GPC_NPY_H
#define GPC_NPY_H

#include <stdio.h>
#include <gsl/gsl_matrix.h>

#include "io/matio.h"

/* Whether buf starts with the .npy magic string. */
int gpc_npy_is(const char *buf, size_t len);

/* The array in the len bytes at b as a new matrix; src->name names the file
 * in messages ("x.npy: row 3: ..."), and src->rows is set.  Errors are
 * GPC_EINPUT with a message that says what numpy call would write a readable
 * file. */
int gpc_npy_read(const unsigned char *b, size_t len, gpc_source *src, gsl_matrix **out);

/* Called with each label in turn: len bytes at label (NUL-terminated too). */
typedef void (*gpc_npy_label_fn)(void *ctx, const char *label, size_t len);

/* The labels in the len bytes at b, a 1-D array or one column, passed to
 * take in order: numbers as the shortest text that reads back exactly
 * ("%.17g": int64 3 is "3", True is "1"), strings in UTF-8.  A string label
 * must be one word: an empty one, or one with a blank or a control
 * character, is an error naming its case ("y.npy: case 7: ..."). */
int gpc_npy_read_labels(const unsigned char *b, size_t len, const char *name,
                        gpc_npy_label_fn take, void *ctx);

/* Where a .npy file's numbers are, from its first len bytes (its header
 * whole), for reading rows in place: rows x cols (cols 1 for a 1-D array),
 * starting data_offset bytes into the file, and plain_f8 when they are
 * little-endian doubles in C order (each row's cols numbers one after the
 * other).  GPC_EINPUT (message set) for a header that is not one. */
typedef struct {
    size_t rows, cols, data_offset;
    int plain_f8;
} gpc_npy_layout;
int gpc_npy_layout_read(const unsigned char *b, size_t len, const char *name,
                        gpc_npy_layout *out);

/* m to f; the caller checks the stream for errors. */
void gpc_npy_write(FILE *f, const gsl_matrix *m);

#endif
