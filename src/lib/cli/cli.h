/* cli — what every tool main shares: start-up, the common options, number
 * and hyperparameter arguments, and writing a matrix output whole or not at
 * all. */
#ifndef GPC_CLI_H
#define GPC_CLI_H

#include <getopt.h>

#include <gsl/gsl_matrix.h>

#include "hyper/evidence.h"
#include "io/labels.h"
#include "io/matio.h"
#include "kernels/kernel.h"
#include "liks/lik.h"
#include "sparse/rows.h"

/* The options every tool has, to end its getopt_long table with: --header
 * and --no-header (long only; values no tool's own options use) say how to
 * read the first line of text inputs (matio.h), --zero-based and
 * --one-based how LIBSVM files number their features (libsvm.h). */
enum {
    GPC_CLI_OPT_HEADER = 0x7f00,
    GPC_CLI_OPT_NO_HEADER,
    GPC_CLI_OPT_ZERO_BASED,
    GPC_CLI_OPT_ONE_BASED
};
#define GPC_CLI_COMMON_OPTIONS                                                              \
    {"verbose", no_argument, NULL, 'v'}, {"quiet", no_argument, NULL, 'q'},                  \
    {"header", no_argument, NULL, GPC_CLI_OPT_HEADER},                                       \
    {"no-header", no_argument, NULL, GPC_CLI_OPT_NO_HEADER},                                 \
    {"zero-based", no_argument, NULL, GPC_CLI_OPT_ZERO_BASED},                               \
    {"one-based", no_argument, NULL, GPC_CLI_OPT_ONE_BASED},                                 \
    {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}

/* --label-column=NAME|N, in the option table of the tools that read
 * labels: the labels are that column of X (gpc_cli_read_training). */
enum { GPC_CLI_OPT_LABEL_COLUMN = 0x7f10 };
/* The dense Laplace approximation's process grid (linalg/pdense), for the
 * tools that fit it: gpc-fit, gpc-evidence, gpc-hmc and gpc-predict. */
enum { GPC_CLI_OPT_PROCESS_GRID = 0x7f20, GPC_CLI_OPT_BLOCK_SIZE };
#define GPC_CLI_PROCESS_GRID_OPTIONS                                                         \
    {"process-grid", required_argument, NULL, GPC_CLI_OPT_PROCESS_GRID},                     \
    {"block-size", required_argument, NULL, GPC_CLI_OPT_BLOCK_SIZE}
#define GPC_CLI_PROCESS_GRID_HELP                                                            \
    "      --process-grid=PxQ   the binary Laplace approximation's matrices spread over\n"   \
    "                           P x Q ranks (MPI build; default: the squarest grid of\n"    \
    "                           all ranks when there are several; 1x1 on one)\n"            \
    "      --block-size=NB      rows and columns of a block on that grid (default 64)\n"
#define GPC_CLI_LABEL_COLUMN_OPTION                                                          \
    {"label-column", required_argument, NULL, GPC_CLI_OPT_LABEL_COLUMN}
#define GPC_CLI_LABEL_COLUMN_HELP                                                            \
    "      --label-column=NAME|N  the labels are the column of X named NAME in its\n"       \
    "                           header (or its Nth, from 1), the inputs the other\n"        \
    "                           columns: one CSV holds both; give no labels file\n"

/* The --label-column given, or NULL. */
const char *gpc_cli_label_column(void);

/* Their --help lines. */
#define GPC_CLI_HEADER_HELP                                                                  \
    "      --header             the first line of CSV and labels files is a header\n"     \
    "                           (found without it unless its names are numbers)\n"        \
    "      --no-header          no input has a header line\n"                              \
    "      --zero-based         LIBSVM indices start at 0 (found without it in a file\n"   \
    "                           with an index 0)\n"                                        \
    "      --one-based          LIBSVM indices start at 1, and an index 0 is an error\n"

/* The --help lines of the multiclass options, the same in every tool. */
#define GPC_CLI_MULTICLASS_HELP                                                              \
    "      --multiclass=HOW     softmax (multiclass Laplace; the default with three or\n"      \
    "                           more classes and -M laplace) or ovr (one-vs-rest: one\n"       \
    "                           binary classifier of the method per class, their\n"          \
    "                           probabilities normalised)\n"
#define GPC_CLI_PER_CLASS_HELP                                                               \
    "      --per-class          with three or more classes (softmax): one set of\n"           \
    "                           hyperparameters per class, named log_v0.c1, ...\n"

/* Set the program name, the C locale and a non-aborting GSL error handler. */
void gpc_cli_init(int argc, char **argv);

/* After --help or --version: exit 0 once standard output is flushed
 * without error, else exit 3 with the write error (a full device). */
_Noreturn void gpc_cli_exit_written(void);
/* "gpc-fit (gpc) 0.1.0" and exit as gpc_cli_exit_written. */
_Noreturn void gpc_cli_version(void);
/* "prog: message" plus "Try 'prog --help'." and exit 2. */
_Noreturn void gpc_cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Handle -v, -q, -V, -F, --header, --no-header, --zero-based,
 * --one-based, --label-column, --process-grid and --block-size; returns 1
 * if c was one of them. */
int gpc_cli_common(int c, const char *arg, gpc_format *fmt);

/* Whole-argument numbers, or a usage error naming the option. */
double gpc_cli_double(const char *opt, const char *arg);
long gpc_cli_long(const char *opt, const char *arg, long min, long max);

/* Set hyperparameters from "name=value,name=value" (others keep their
 * values) or from a list of exactly nparams numbers "v1,v2,...".  Usage
 * error on unknown names or a wrong count. */
void gpc_cli_params(gpc_kernel *k, const char *arg);
/* --fix=NAMES: a mask over k's hyperparameters, nonzero for those named
 * in the comma-separated list (NULL for no list); a usage error names an
 * unknown one.  The caller frees it. */
unsigned char *gpc_cli_fixed_mask(const gpc_kernel *k, const char *list);
/* Set hyperparameters from a file of "name value" lines ('#' comments), as
 * gpc-fit --params-out writes them; lines end in a newline, CRLF or a lone
 * CR.  An error (GPC_EINPUT: "file:line: ..." for a line that is not 'name
 * value', an unknown name, a NUL byte) leaves k as it was. */
int gpc_cli_params_file_read(gpc_kernel *k, const char *path);
/* The same, exiting with the message on an error. */
void gpc_cli_params_file(gpc_kernel *k, const char *path);
/* Open an output (see output.h) or die: tools open every output before
 * their work starts, so that a path they cannot write stops them at once
 * and no output is committed when another fails. */
gpc_output *gpc_cli_output(const char *path);

/* Write "name value" lines to o (the caller commits it). */
void gpc_cli_params_write(const gpc_kernel *k, gpc_output *o);
/* The same, with the name of the column an ard length scale weighs as a
 * comment after it ("log_w3 -2  # bmi") when names is not NULL. */
void gpc_cli_params_list(const gpc_kernel *k, char *const *names, gpc_output *o);

/* Note that the input what ("-H", "X") is read from path; when path is "-"
 * and another input already takes standard input, a usage error (exit 2):
 * two readers of one stream would leave the second one empty.  A claim
 * under the same name again is the same input, so inputs of one kind name
 * each its own ("chain 1", "chain 2"); what is copied, so it may be a buffer
 * the caller reuses. */
void gpc_cli_stdin_claim(const char *what, const char *path);
/* The same for "X" and "Y", the training set's remaining arguments (when
 * there are one or two), so that mains can claim every input before reading. */
void gpc_cli_stdin_claim_training(int argc, char **argv);

/* "<stdin>" for "-" or NULL, else path: how messages name a file. */
const char *gpc_cli_name(const char *path);

/* Labels of two or more classes, or of one class of a coding whose
 * meaning is fixed (-1/+1 or 0/1: a one-case problem, a test set of one
 * class), which is given its other class.  Unreadable labels die with
 * status 3. */
gpc_labels *gpc_cli_read_labels(const char *path);

/* The training set named by the two remaining arguments, inputs X and
 * labels Y: checks their number, that they are not both standard input,
 * that their row counts match and that most classes have more than one
 * case (gpc_labels_check_training); dies otherwise.  One argument is a LIBSVM
 * file that holds both, read once (a usage error for another file), or,
 * under --label-column, a file whose column that is holds the labels.  With
 * names not NULL, *names gets the inputs' column names (NULL if they have
 * none; free with gpc_colnames_free). */
void gpc_cli_read_training(int argc, char **argv, gsl_matrix **X, char ***names,
                           gpc_labels **labels);
/* Whether the training inputs it (or gpc_cli_read_inputs) read last were a
 * LIBSVM file whose indices start at 0 (libsvm.h), for the model to
 * record. */
int gpc_cli_training_zero_based(void);

/* A model fitted on a LIBSVM file numbered from 0 (or gpc-kernel's X) reads
 * LIBSVM inputs as numbered from 0 too, unless --zero-based or --one-based
 * said otherwise: a test file of the same data in which the first feature
 * is never written could not show it. */
void gpc_cli_model_base(int zero_based);

/* The labels as the method takes them: -1/+1 for a binary method, class
 * indices for a multiclass one, after choosing the multiclass method:
 * multiclass "ovr" makes the method one-vs-rest over the binary one,
 * "softmax" makes it multiclass Laplace, and NULL leaves the choice to the
 * labels: with three or more classes, Laplace with no likelihood named
 * (lik_named 0) becomes multiclass Laplace.  A binary method for three or
 * more classes is a usage error naming the classes. */
gsl_vector *gpc_cli_class_vector(const gpc_labels *l, int lik_named, const char *multiclass,
                                 gpc_method *method, gpc_lik *lik);

/* The likelihood by name, or a usage error. */
gpc_lik gpc_cli_lik(const char *name);

/* The method by name and the likelihood (name NULL: logistic for Laplace,
 * probit for the others); usage errors as they arise. */
void gpc_cli_method(const char *method_name, const char *lik_name, gpc_method *method,
                    gpc_lik *lik);

/* The evidence of method for the training set (gpc_evidence_alloc), after
 * checking that the method's workspace fits in memory, with the gradient's
 * scratch when gradient says gradients will be asked (dies with status 3
 * and the sizes if not): so that a problem too large for the machine is
 * refused before anything of that size is allocated. */
gpc_evidence *gpc_cli_evidence(const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                               size_t C, gpc_lik lik, gpc_method method, int gradient);

/* Set EP's damping (usage error outside (0, 1], or other than 1 without EP). */
void gpc_cli_damping(gpc_evidence *ev, double damping);

/* --objective=NAME (NULL: not given, the method's default); a usage error
 * for an unknown name or a method without the choice.  choosing: the
 * hyperparameters will be chosen by it (optimised or sampled), when the
 * variational bound is worth a warning. */
void gpc_cli_objective(gpc_evidence *ev, const char *name, int choosing);
/* Long runs (chains, minibatch fits) stop between steps when SIGINT,
 * SIGTERM or SIGHUP arrives, so that what they write is whole: the handler
 * only records the signal.  A signal ignored when the program starts stays
 * ignored (nohup ignores SIGHUP, and a shell without job control makes
 * background jobs ignore SIGINT). */
void gpc_cli_catch_stop_signals(void);
/* The signal that asked the run to stop, 0 if none. */
int gpc_cli_stop_signal(void);
const char *gpc_cli_signal_name(int sig);
/* End the process by sig as its default action would (status 128 + sig in
 * the shell), so that a calling shell or batch system sees it. */
_Noreturn void gpc_cli_end_by_signal(int sig);

/* The training data of a minibatch fit, read a batch at a time where the
 * files allow: X a .npy file of doubles in C order is read in place, and so
 * is Y when it is a .npy column of numbers (of two classes); X as text (or
 * CSV, or standard input) and Y as a text file of labels are read once, a
 * line at a time, into scratch files (sparse/scratch.h) read likewise;
 * other inputs (a LIBSVM file, --label-column, labels on standard input)
 * are read whole and viewed in place. */
typedef struct {
    gpc_rows *X, *y;      /* the rows and their labels, -1/+1 */
    gsl_matrix *Xmem;     /* the inputs when read whole, else NULL */
    gsl_vector *ymem;     /* the labels -1/+1 when read whole, else NULL */
    char **names;         /* the inputs' column names, or NULL */
    gpc_labels *labels;   /* the classes: their number and names */
} gpc_cli_stream;

/* Open them, the binary method and likelihood checked against the labels
 * as gpc_cli_class_vector does; dies on bad input as gpc_cli_read_training
 * does. */
void gpc_cli_stream_open(int argc, char **argv, int lik_named, gpc_method *method,
                         gpc_lik *lik, gpc_cli_stream *s);
void gpc_cli_stream_close(gpc_cli_stream *s);

/* Set an inducing method's number of inducing inputs (0: its default) and
 * the seed of their choice, or its inducing inputs themselves from path
 * (non-NULL): a model file of an inducing method (its inducing block) or a
 * matrix of the inputs' columns (names, as the training inputs have them).
 * Usage error for m > 0 or path with another method, both at once, and a
 * kernel with a gram term, whose columns hold the training cases. */
void gpc_cli_inducing(gpc_evidence *ev, const gpc_kernel *k, size_t m, const char *path,
                      char *const *names, unsigned long seed);
/* Set EP's label-flip probability (usage error outside [0, 1/2) or without EP). */
void gpc_cli_label_noise(gpc_evidence *ev, double eps);

/* The kernel for spec and inputs of dimension dim (read from xpath), its
 * hyperparameters set from params_file and then params (either may be NULL);
 * the spec may name the columns by names (NULL if the inputs have none, see
 * colnames.h); dies on errors. */
gpc_kernel *gpc_cli_kernel(const char *spec, size_t dim, char *const *names, const char *xpath,
                           const char *params_file, const char *params);

/* The kernel of a classifier for labels l, method and training inputs X
 * (read from xpath, with column names or NULL): as gpc_cli_kernel, with per_class adding ":per-class=C" for the C
 * classes.  Usage error for a per-class kernel with a binary method or
 * another number of classes; input error for gram columns that X's rows do
 * not fit (gpc_kernel_check_train). */
gpc_kernel *gpc_cli_class_kernel(const char *spec, int per_class, const gpc_labels *l,
                                 gpc_method method, const gsl_matrix *X, char *const *names,
                                 const char *xpath, const char *params_file,
                                 const char *params);
/* The same for inputs of dim columns not in memory (read a batch at a
 * time), without the gram columns' check. */
gpc_kernel *gpc_cli_class_kernel_dim(const char *spec, int per_class, const gpc_labels *l,
                                     gpc_method method, size_t dim, char *const *names,
                                     const char *xpath, const char *params_file,
                                     const char *params);

/* A line on standard error per copy of k's hyperparameters with its weights
 * on the simplex, "weights: se@1-2 0.0463, se@3-4 0.954"; nothing for a
 * kernel without the simplex clause. */
void gpc_cli_report_weights(const gpc_kernel *k);

/* Die with the matching status after a failed library call. */
void gpc_cli_check(int status);

/* Write m to o in fmt and commit it; dies on error, and with status 1 when
 * m holds a NaN or an infinity. */
void gpc_cli_write_matrix(gpc_output *o, const gsl_matrix *m, gpc_format fmt);

/* The same, column col of row i written as text[i] in text (text NULL:
 * as gpc_cli_write_matrix). */
void gpc_cli_write_tokens(gpc_output *o, const gsl_matrix *m, gpc_format fmt, size_t col,
                          char *const *text);

/* Rows of m appended to o as text, column col as text[i] (text NULL: all
 * numbers), without committing: for an output written a block at a time
 * (gpc_output_whole), committed by the caller after the last.  Dies as
 * gpc_cli_write_matrix. */
void gpc_cli_write_text_rows(gpc_output *o, const gsl_matrix *m, size_t col, char *const *text);

/* Predictions as gpc-predict and gpc-combine write them, read back: the
 * column the '#' line names "label" may hold the classes' names, and
 * stays in the matrix (as its number when it is one, else NaN) so that the
 * other columns keep their places; dies on errors. */
gsl_matrix *gpc_cli_read_predictions(const char *path, gpc_source *src);

/* Read a matrix or die; with expect_cols > 0 also check its width, naming
 * what the width should match ("the model's inputs").  A sparse (LIBSVM)
 * file narrower than that is padded with zero columns, since the features
 * past its largest index are 0. */
gsl_matrix *gpc_cli_read_matrix(const char *path, size_t expect_cols, const char *what);

/* Inputs and their columns' names from a header line (NULL if none; free
 * with gpc_colnames_free); dies on errors. */
gsl_matrix *gpc_cli_read_inputs(const char *path, char ***names);

/* Inputs for a kernel or model fitted on dim columns called names (NULL if
 * unnamed): matched to them by name when the file names its columns too
 * (extra columns ignored unread, so a column of labels is no obstacle),
 * else by position, less the --label-column if one is given (with no such
 * column in the file, nothing is left out), when their number must be dim
 * (a sparse file's missing last columns are zeros; what names the fitted
 * inputs in the message; dim 0 takes any width); dies on errors. */
gsl_matrix *gpc_cli_read_inputs_for(const char *path, char *const *names, size_t dim,
                                    const char *what);

/* The labels of a test set, with the classes that name the probability
 * columns of predictions: the model's (model_path) when given (a class may
 * then be absent), else those of the predictions' header line when it names
 * two or more (so a test set without some class is read right), else those
 * present in the labels (two: binary).  *binary says which; a header also
 * gives the first probability column in *col unless col_given.  Dies on
 * errors. */
gpc_labels *gpc_cli_read_test_labels(const char *ypath, const char *model_path,
                                     const char *header, int *binary, long *col, int col_given);

#endif
