/* scratch — a text matrix as rows (rows.h) read a batch at a time, through
 * a scratch copy of its numbers (gpc(7), SPARSE VARIATIONAL METHOD,
 * Streaming and memory).  The text is read once, a line at a time, and each
 * row's doubles go to an anonymous file in $TMPDIR (else /tmp), removed as
 * soon as it is made, so that nothing is left behind however the process
 * ends; the rows are then read from it as from a .npy file.  Memory holds a
 * line and a write buffer, whatever the number of rows; the disk holds 8
 * bytes a number (and, reading standard input whose rows are of one number,
 * a copy of the text, in case it proves to be LIBSVM). */
#ifndef GPC_SCRATCH_H
#define GPC_SCRATCH_H

#include "io/labels.h"
#include "sparse/rows.h"

/* The text matrix at path ("-": standard input, "<stdin>" in messages) in
 * the formats gpc_matrix_read takes, as rows; *names gets the column names
 * of a CSV header (NULL-terminated, free with gpc_colnames_free) or NULL.
 * When the input is not text but .npy or LIBSVM (which gpc_matrix_read
 * reads whole): GPC_OK with *out NULL, the input left to be read again from
 * its start (standard input: what was read of it, and the rest, in a
 * scratch file that becomes standard input; a LIBSVM file whose first cases
 * are labels alone shows only at its first pair).  GPC_EINPUT (message set) for
 * what gpc_matrix_read refuses, with the same message naming the file and
 * line, and for a scratch file that cannot be made or written; nothing is
 * left open then. */
int gpc_rows_open_text(const char *path, gpc_rows **out, char ***names);

/* The text labels file at path as rows of codes (gpc_labels_stream in
 * labels.h: 8 bytes a case in the scratch file, the distinct labels in
 * memory) and their classes in *sum, as gpc_labels_read_present finds them
 * in the whole file; map the codes to values with gpc_rows_map_codes.
 * *out is NULL (and *sum empty) for standard input, and for a file that is
 * not plain text labels or that the whole-file reader would refuse, or when
 * no scratch file can be written: the whole-file reader then reads it, or
 * says why not. */
void gpc_rows_open_labels(const char *path, gpc_rows **out, gpc_labels_summary *sum);

/* The directory scratch files go to: $TMPDIR when set and not empty, else
 * /tmp. */
const char *gpc_scratch_dir(void);

#endif
