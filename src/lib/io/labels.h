/* labels — class labels of any kind, one per line.
 *
 * A label is one token: a number (any codes: -1/+1, 0/1, 1..C, 3 5 7) or a
 * word ("setosa").  The classes are the distinct labels, in sorted order:
 * by value when every label is a number (so "1", "+1" and "1.0" are one
 * class, spelt as it first appears), else by byte order of the words.  Two
 * classes make a binary problem whose positive class is the later one, so
 * -1/+1 and 0/1 keep their meaning; three or more a multiclass one.
 *
 * '#' starts a comment line.  A blank line is an error: a missing label
 * would shift every label after it onto the wrong case.  A one-column .npy
 * file is read as numbers, or as words when it holds strings.  A first line
 * that names the column is dropped (see gpc_matio_header in matio.h).  A LIBSVM file (libsvm.h) gives the first token
 * of each of its lines.  Errors are GPC_EINPUT with the file and line. */
#ifndef GPC_LABELS_H
#define GPC_LABELS_H

#include <stddef.h>

#include <gsl/gsl_vector.h>

typedef struct {
    size_t n;        /* cases */
    size_t nclasses; /* distinct classes */
    char **names;    /* nclasses class names in order, as first written */
    size_t *cls;     /* n class indices, 0 .. nclasses - 1 */
    int numeric;     /* every class is a number (and names sort by value) */
} gpc_labels;

/* Training labels: the classes are those present, at least two. */
int gpc_labels_read(const char *path, gpc_labels **out);

/* The same, but one class is enough: for a caller that can tell from the
 * labels themselves what the other class is (reads the file once, so works
 * on a pipe). */
int gpc_labels_read_present(const char *path, gpc_labels **out);

/* The same from a file's contents already in memory: len bytes followed by
 * a NUL, as gpc_input_read_all gives them, called name in messages; for a
 * caller that goes on to use the text itself. */
int gpc_labels_parse(const char *text, size_t len, const char *name, gpc_labels **out);

/* The classes of n >= 1 labels already in memory (a LIBSVM file's first
 * tokens, read once with its features), as gpc_labels_read_present finds
 * them in a file. */
gpc_labels *gpc_labels_of_tokens(char *const *tok, size_t n);

/* Labels of given classes (a model's): a label that is none of them is an
 * error naming it; classes need not all be present. */
int gpc_labels_read_classes(const char *path, char *const *names, size_t nclasses,
                            gpc_labels **out);

void gpc_labels_free(gpc_labels *l);

/* The index of class name among names (numbers compared by value when
 * numeric), or -1. */
long gpc_labels_find(char *const *names, size_t nclasses, int numeric, const char *name);

/* A label that is a number, as a whole token and finite ("nan" and "inf"
 * are words): 1 and its value in *x, else 0. */
int gpc_labels_number(const char *s, double *x);

/* The number of classes that have a single case (and so of the cases that
 * are alone in their class). */
size_t gpc_labels_single(const gpc_labels *l);

/* GPC_OK if the labels can train a classifier; GPC_EINPUT (message set,
 * naming the file as name) when most classes have a single case, which
 * means: three or more classes, and more than half of the cases alone in
 * their class (which makes more than half of the classes single too).
 * Such labels are nearly always a column of IDs or of measurements given
 * in place of the classes (seq 1 1500 for 1500 cases), from which nothing
 * can be learnt, and their multiclass model would take memory and time
 * that grow with the number of classes (C n^2 and C n^3).  Two classes
 * pass whatever their counts (a one-case problem is a real test case), and
 * so do a few rare classes among common ones, and a toy set such as
 * "yes no maybe yes". */
int gpc_labels_check_training(const gpc_labels *l, const char *name);
/* The same for labels whose classes of a single case (gpc_labels_single)
 * are counted already: single of them. */
int gpc_labels_check_single(const gpc_labels *l, size_t single, const char *name);

/* The class names as "a b c" in buf (cut to size), for messages. */
void gpc_labels_list(char *const *names, size_t nclasses, char *buf, size_t size);

/* The classes a prediction file's header line names ("p.A p.B p.C label",
 * as gpc-predict writes a multiclass model's predictions: allocated names
 * in *names) and the 1-based column of the first; 0 if the header names
 * fewer than two. */
size_t gpc_labels_header_classes(const char *header, char ***names, long *first);

/* -1/+1 for a binary problem: +1 for the later class. */
gsl_vector *gpc_labels_binary(const gpc_labels *l);

/* Labels a line at a time, for a reader that keeps the classes but not
 * each case's label (a minibatch fit, whose labels go to a scratch file):
 * each case gets a code, the index of its label among the distinct labels
 * in order of first sight, and the end maps the codes to the classes that
 * gpc_labels_read_present finds in the whole file, with the same header
 * line rule.  Memory grows with the distinct labels, not with the cases.
 * Lines are given as the whole-file reader sees them: from 1, without
 * their newline, a lone CR ending one too; a text file only (a caller
 * hands .npy and LIBSVM files, and a file it refuses, to the whole-file
 * reader, whose messages then say why in the same words). */
typedef struct gpc_labels_stream gpc_labels_stream;
gpc_labels_stream *gpc_labels_stream_new(const char *name);
/* Line lineno [p, eol): *code is its case's code, or -1 for a comment.
 * GPC_EINPUT (message set) for a line the whole-file reader refuses. */
int gpc_labels_stream_feed(gpc_labels_stream *ls, const char *p, const char *eol,
                           size_t lineno, long *code);

typedef struct {
    gpc_labels *labels; /* n, nclasses, names, numeric as gpc_labels_read_present
                         * gives them; cls is NULL (each case's class is that
                         * of its code) */
    size_t *class_of;   /* ncodes: each code's class; SIZE_MAX for the code of
                         * a dropped header line alone */
    size_t *count;      /* nclasses: the cases of each class */
    size_t ncodes;
    int drop_first;     /* the first code was the column's name, not a case */
} gpc_labels_summary;

/* After the last line: the classes (free with gpc_labels_free and
 * gpc_labels_summary_free); GPC_EINPUT "no labels" when no line had one. */
int gpc_labels_stream_end(gpc_labels_stream *ls, gpc_labels_summary *out);
void gpc_labels_summary_free(gpc_labels_summary *s);
void gpc_labels_stream_free(gpc_labels_stream *ls);

#endif
