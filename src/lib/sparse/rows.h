/* rows — the training inputs as the minibatch fit reads them, a few rows at
 * a time (gpc(7), SPARSE VARIATIONAL METHOD, Streaming and memory): from a
 * matrix in memory, or from a .npy file of doubles read where they lie
 * (pread, row by row: nothing of the file is kept, so memory does not grow
 * with the number of rows).  Both give the same numbers, and the same hash
 * of them, so a fit does not depend on the file's format. */
#ifndef GPC_ROWS_H
#define GPC_ROWS_H

#include <stddef.h>
#include <stdint.h>

typedef struct gpc_rows gpc_rows;

/* The n rows of dim doubles at X (row-major), not copied: X must outlive
 * the view.  name is for messages. */
gpc_rows *gpc_rows_memory(const double *X, uint64_t n, size_t dim, const char *name);

/* The rows of the .npy file at path (a 2-D array of little-endian doubles
 * in C order, as numpy.save writes float64 arrays; a 1-D one is one
 * column).  GPC_EINPUT (message set) for a file that cannot be read, is
 * not such an array (saying how to save one), or is shorter than its
 * header says. */
int gpc_rows_open_npy(const char *path, gpc_rows **out);

/* The n rows of dim doubles (native byte order, row-major) that the open
 * file fd holds from byte offset on, read as a .npy file's are; the rows
 * own fd and close it.  name is for messages. */
gpc_rows *gpc_rows_open_fd(int fd, uint64_t offset, uint64_t n, size_t dim, const char *name);

/* 1 if path is a regular .npy file that gpc_rows_open_npy reads in place
 * (doubles in C order), 0 otherwise (including when it cannot be read:
 * the whole-file reader then says why). */
int gpc_rows_npy_in_place(const char *path);

void gpc_rows_close(gpc_rows *r);
uint64_t gpc_rows_count(const gpc_rows *r);
size_t gpc_rows_dim(const gpc_rows *r);
const char *gpc_rows_name(const gpc_rows *r);

/* Rows first .. first + count - 1 into x (count x dim, row-major).
 * GPC_EINPUT (message set) if they cannot be read or hold a number that is
 * not finite (naming the row, from 1). */
int gpc_rows_read(gpc_rows *r, uint64_t first, size_t count, double *x);

/* Labels of two classes as one column of rows: the two values it holds,
 * neg < pos, by one pass over it.  GPC_EINPUT (message set) for a column
 * of one class, or of more than two, naming the first value beyond two. */
int gpc_rows_binary_classes(gpc_rows *y, double *neg, double *pos);

/* From here on gpc_rows_read gives -1 for neg and +1 for pos (any other
 * value is an error naming its row). */
void gpc_rows_map_binary(gpc_rows *y, double neg, double pos);

/* From here on gpc_rows_read takes each number as a code 0 .. ncodes - 1
 * and gives value[code] for it (copied); any other number is an error
 * naming its row.  For labels stored as codes (sparse/scratch.h). */
void gpc_rows_map_codes(gpc_rows *y, const double *value, size_t ncodes);

/* A hash (FNV-1a over the bytes of the numbers, row by row, each row's
 * inputs then its label) of all rows X and their labels y (one column of
 * as many rows), read in blocks; GPC_EINPUT as gpc_rows_read. */
int gpc_rows_hash(gpc_rows *X, gpc_rows *y, unsigned long long *hash);

#endif
