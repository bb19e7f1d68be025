/* folds — k-fold cross-validation: which fold each case is held out in, and
 * the rows of a file that one side of a fold keeps.
 *
 * Stratified assignment deals the cases out like cards: the cases of each
 * class in a random order, class after class, to folds 0, 1, ..., K-1, 0,
 * 1, ... in turn, and the fold numbers are then shuffled.  So the fold
 * sizes differ by at most one, and so do each class's counts per fold
 * (every run of consecutive positions covers the folds evenly), and which
 * folds get the extra cases is left to chance.  Plain k-fold is the same
 * deal with every case in one class. */
#ifndef GPC_FOLDS_H
#define GPC_FOLDS_H

#include <stddef.h>
#include <stdio.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>

#include "io/matio.h"

/* Fold fold[i] in 0 .. K-1 for each of n cases of classes cls[i] (NULL:
 * plain k-fold), drawing from r.  GPC_EUSAGE (message set) unless
 * 2 <= K <= n. */
int gpc_folds_assign(const size_t *cls, size_t n, size_t K, gsl_rng *r, size_t *fold);

/* R repeats, each its own deal from one generator seeded with seed (so the
 * first repeat is the same for every R): fold[i * R + j] is case i's fold in
 * repeat j, in 0 .. K-1.  Errors as gpc_folds_assign. */
int gpc_folds_repeated(const size_t *cls, size_t n, size_t K, unsigned long seed, size_t R,
                       size_t *fold);

/* Column col (0-based) of a fold assignment F read from src, as fold
 * numbers in fold[0 .. F->size1 - 1]: GPC_EINPUT with the file and line
 * for a value that is not a whole number from 0 to 1000000000. */
int gpc_folds_column(const gsl_matrix *F, const gpc_source *src, size_t col, long *fold);

/* Write to out (called outname) the rows of a file's contents (len bytes
 * of text, as gpc_input_read_all gives them; called name) whose keep[] is
 * nonzero, for n rows in all.
 *
 * Text kept as text is cut line by line, so rows come out byte for byte
 * as they were: lines that are blank or start with '#' go to the output
 * whatever keep says, and so does a header line: the first row-like line
 * when the header setting (matio.h) is YES, or when it is AUTO, the file
 * has one row more than n and that line has a field (between blanks or
 * commas) that is not a number.  Rows are the other lines: matrix rows,
 * labels, LIBSVM lines alike.
 *
 * A .npy file, or any file with fmt_given set to a format other than its
 * own, is read as a matrix (matio.h) and its rows written in fmt (.npy as
 * float64; text with the CSV header's names, if it had one).
 *
 * GPC_EINPUT with a message naming the file when its rows are not n. */
int gpc_folds_cut(const char *text, size_t len, const char *name, const unsigned char *keep,
                  size_t n, int fmt_given, gpc_format fmt, FILE *out, const char *outname);

/* Write to out (called outname) the rows of M (read from name) whose
 * keep[] is nonzero, all M's columns, in fmt (text with the columns' names
 * colnames, if not NULL, as CSV under a header line).  GPC_EINPUT with a
 * message when no row is kept or on a write error. */
int gpc_folds_cut_rows(const gsl_matrix *M, char *const *colnames, const unsigned char *keep,
                       const char *name, gpc_format fmt, FILE *out, const char *outname);

#endif
