/* matio — matrices in and out, text or NumPy .npy, and the opening of inputs.
 *
 * Readers detect the format from the first bytes ("\x93NUMPY" is .npy, anything
 * else is text), work on pipes in one pass, and report errors with the file
 * name and, for text, the line number.  The name "-" (or NULL) is standard
 * input / output and is reported as "<stdin>" / "<stdout>".
 *
 * Text: one row per line (lines end in LF, CRLF or a lone CR), numbers
 * separated by blanks or tabs, '#' starts a comment, blank lines are skipped; written with %.17g in the C locale, so a
 * round trip is exact.  Binary: .npy, written as version 1.0, little-endian
 * float64 ('<f8'), C order; read in versions 1.0, 2.0 and 3.0, 1-D (as one
 * column) or 2-D, in C or Fortran order, of floats ('f8' 'f4' 'f2'), integers
 * of 1 to 8 bytes and bools, either byte order, each converted to a double;
 * integers beyond 2^53, non-finite values and other dtypes are refused (see
 * npy.h). */
#ifndef GPC_MATIO_H
#define GPC_MATIO_H

#include <stdio.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "io/output.h"  /* gpc_output: how every tool writes its files */

typedef enum { GPC_FMT_TEXT = 0, GPC_FMT_NPY = 1 } gpc_format;

/* The most columns a matrix may have, in every format: 2^20, the most a
 * kernel takes (kernel.h), so that a matrix that reads can be used.  A wider
 * one is refused (GPC_EINPUT) where its width shows: the first row's line, a
 * LIBSVM index, a .npy shape; before anything is allocated for it. */
#define GPC_MATRIX_MAX_COLS 1048576u

/* Where each row of a matrix came from, for messages about a row. */
typedef struct {
    char name[256];  /* file name as given, or "<stdin>" */
    size_t *line;    /* line[i]: 1-based source line of row i; NULL for .npy */
    size_t rows;
    char *header;    /* the first comment line before the first row, without its
                      * '#' and the blanks after it (column names, as gpc-predict
                      * writes them); NULL if none */
    char **colnames; /* the columns' names from a CSV header line, one per column,
                      * NULL-terminated; NULL if none */
    int sparse;      /* read from a sparse (LIBSVM) file, whose columns past its
                      * largest index are 0: a caller expecting more columns
                      * may pad with zeros */
    int zero_based;  /* a sparse file whose indices were read as numbered from 0 */
} gpc_source;

/* Whether the first line of a CSV file or a labels file names the columns:
 * AUTO takes a CSV line with a field that is not a number as a header (and
 * a labels file's word above numbers, see labels.h), YES always takes the
 * first line, NO never.  Whitespace-separated text has no header line.  One
 * setting for the whole process: the tools' --header and --no-header. */
typedef enum { GPC_HEADER_AUTO = 0, GPC_HEADER_YES, GPC_HEADER_NO } gpc_header_mode;
void gpc_matio_set_header(gpc_header_mode mode);
gpc_header_mode gpc_matio_header(void);

/* Open path for reading ("-" or NULL: standard input, named "<stdin>" in
 * *name).  A directory, or a path that cannot be opened, is GPC_EINPUT with a
 * message naming it.  Close with gpc_input_close, which leaves stdin open. */
int gpc_input_open(const char *path, FILE **f, const char **name);
void gpc_input_close(FILE *f);
/* The whole of path (as gpc_input_open opens it) in memory, NUL-terminated:
 * *len bytes in *text (free it); unless it is .npy, a lone CR (the line end
 * of old Mac files) comes as a newline, so that lines end in LF or CRLF.  Readers of keyed files parse this, so that
 * every count a file states can be checked against what it holds before
 * anything is allocated for it. */
int gpc_input_read_all(const char *path, char **text, size_t *len, const char **name);

/* Text readers refuse a NUL byte rather than stop at it, which would cut a
 * field or a line short without a word.  For the first NUL in [line, end),
 * line being the start of line lineno of the file name: GPC_EINPUT with
 * "name:lineno: a NUL byte at column C; the file looks binary (what)",
 * what saying what the file should be; GPC_OK if there is none. */
int gpc_text_refuse_nul(const char *name, size_t lineno, const char *line, const char *end,
                        const char *what);

/* Parse "text" or "npy" (also "txt"); GPC_EUSAGE on anything else. */
int gpc_format_parse(const char *s, gpc_format *fmt);

/* Read a whole matrix.  Errors (GPC_EINPUT, message set): missing or unreadable
 * file, empty input, ragged rows, non-numeric tokens, NaN or Inf, truncated or
 * unsupported .npy.  On success *out is a new matrix; if src is not NULL it is
 * filled (free with gpc_source_free). */
int gpc_matrix_read(const char *path, gsl_matrix **out, gpc_source *src);
int gpc_matrix_read_stream(FILE *f, const char *name, gsl_matrix **out, gpc_source *src);
void gpc_source_free(gpc_source *src);
/* "train.txt:17" or "train.npy: row 17" (1-based), for messages about row i. */
const char *gpc_source_where(const gpc_source *src, size_t i, char *buf, size_t size);

/* Labels are read by labels.h; a column of a matrix file can hold them too.
 *
 * How gpc_matrix_read_with reads one file:
 *   label_column  NAME or N: the column read as labels (one token per row,
 *                 numbers or words, kept as written) instead of numbers.
 *                 NAME is looked up among the CSV header's names, or among
 *                 the blank-separated names of a whitespace file's first
 *                 comment line ("# p mean var label", as gpc-predict writes
 *                 it); a whole number that names no column is its 1-based
 *                 number.  A LIBSVM file holds its labels already and is
 *                 refused; a .npy file's column is taken by number.
 *   optional      a label_column NAME the file does not have is no error:
 *                 nothing is read as labels.
 *   keep_place    the label column stays in the matrix as NaN (so that the
 *                 other columns keep their numbers); else it is left out,
 *                 and so is its name from src->colnames.
 *   only          with a CSV header: only the columns of these names
 *                 (NULL-terminated) are read; the others are left out
 *                 unread, so they may hold words (a model's inputs picked
 *                 from a wider table). */
typedef struct {
    const char *label_column;
    int optional, keep_place;
    char *const *only;
} gpc_read_opts;

/* Read a matrix as gpc_matrix_read, as opts say (NULL: as gpc_matrix_read);
 * *labels (when not NULL) gets the label column's rows->size1 tokens,
 * NULL-terminated (NULL when there is no label column; free with
 * gpc_colnames_free), and *label_col its 1-based column in the file (0
 * when none).  Errors also for a label column that is not in the file and
 * a row whose label is empty. */
int gpc_matrix_read_with(const char *path, const gpc_read_opts *opts, gsl_matrix **out,
                         gpc_source *src, char ***labels, size_t *label_col);

/* A text matrix a line at a time, for a reader that keeps no more than a
 * row of it whatever its length (the minibatch fit's scratch copy, see
 * sparse/scratch.h): the formats, header, checks and messages of
 * gpc_matrix_read, whose text readers go through the same steps line by
 * line.  Lines are given as gpc_matrix_read sees them: from 1, without
 * their newline, a lone CR ending one too.  name is the file's ("-" or
 * NULL: "<stdin>"). */
typedef struct gpc_matrix_lines gpc_matrix_lines;
gpc_matrix_lines *gpc_matrix_lines_new(const char *name);
/* Line lineno [p, eol): *row gets its gpc_matrix_lines_cols numbers (kept
 * until the next line) when it is a row, else NULL (blank, comment,
 * header).  GPC_EINPUT (message set, naming the file and line) for a line
 * gpc_matrix_read would refuse. */
int gpc_matrix_lines_feed(gpc_matrix_lines *ml, const char *p, const char *eol, size_t lineno,
                          const double **row);
/* 1 once the first line that is a row shows a .npy or LIBSVM file, which
 * gpc_matrix_read reads whole: lines fed after it are ignored. */
int gpc_matrix_lines_other(const gpc_matrix_lines *ml);
size_t gpc_matrix_lines_rows(const gpc_matrix_lines *ml);
size_t gpc_matrix_lines_cols(const gpc_matrix_lines *ml);
/* The CSV header's names (NULL-terminated; free with gpc_colnames_free),
 * or NULL; the caller owns them. */
char **gpc_matrix_lines_take_colnames(gpc_matrix_lines *ml);
/* After the last line: GPC_EINPUT "empty input" if no line was a row. */
int gpc_matrix_lines_end(const gpc_matrix_lines *ml);
void gpc_matrix_lines_free(gpc_matrix_lines *ml);

/* Write m to f; returns GPC_EINPUT with a message on a write error. */
int gpc_matrix_write(FILE *f, const char *name, const gsl_matrix *m, gpc_format fmt);
/* Text as gpc_matrix_write, but column col (from 0) of row i written as
 * the token text[i] (a class's name) instead of its number; npy (which
 * holds numbers only) as gpc_matrix_write. */
int gpc_matrix_write_tokens(FILE *f, const char *name, const gsl_matrix *m, gpc_format fmt,
                            size_t col, char *const *text);
/* The same, but text with column names (NULL: none; one per column) is
 * CSV under a header line, so that the names reach the next tool. */
int gpc_matrix_write_named(FILE *f, const char *name, const gsl_matrix *m, gpc_format fmt,
                           char *const *names);

#endif
