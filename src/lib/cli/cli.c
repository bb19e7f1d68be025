#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/comm.h"
#include "base/err.h"
#include "base/parallel.h"
#include "io/colnames.h"
#include "io/labels.h"
#include "io/libsvm.h"
#include "io/npy.h"
#include "linalg/blas.h"
#include "linalg/pdense.h"
#include "methods/model.h"
#include "sparse/scratch.h"

#ifndef GPC_VERSION
#define GPC_VERSION "unknown"
#endif

/* Large blocks stay in the heap once freed, to be reused: the methods
 * allocate the same work matrices of megabytes at every step, and glibc
 * would otherwise map each afresh and unmap it on free, so that every step
 * paid a page fault per 4 KiB touched (a third of a sparse minibatch step
 * at m = 500, b = 1000).  The peak memory is the same; it is returned to
 * the system at exit rather than at each free. */
static void keep_freed_memory(void)
{
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

void gpc_cli_init(int argc, char **argv)
{
    (void)argc;
    gpc_set_progname(argv[0]);
    keep_freed_memory();
    gpc_blas_init();
    setlocale(LC_ALL, "C");
    gpc_gsl_quiet();
    gpc_output_remove_on_signals();
    gpc_comm_world(); /* the processes of the run: one, or MPI's ranks */
}

void gpc_cli_version(void)
{
    printf("%s (gpc) %s\n", gpc_progname(), GPC_VERSION);
    printf("BLAS: %s", gpc_blas_config());
    if (strcmp(gpc_blas_core(), gpc_blas_detected_core()) != 0)
        printf(" (chosen by gpc: OpenBLAS did not recognise this CPU and chose %s)",
               gpc_blas_detected_core());
    printf("\n");
    if (gpc_parallel_adaptive())
        printf("Threads: %d now, at most %d (fewer while other processes keep the cores busy)\n",
               gpc_parallel_threads(), gpc_parallel_max_threads());
    else
        printf("Threads: %d (GPC_THREAD_POLICY=fixed)\n", gpc_parallel_max_threads());
    gpc_cli_exit_written();
}

void gpc_cli_exit_written(void)
{
    /* a long help may have failed already, in printf, which left errno */
    if (!ferror(stdout))
        errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout))
        gpc_die(GPC_EINPUT, "<stdout>: write error: %s", strerror(errno ? errno : EIO));
    exit(0);
}

void gpc_cli_usage(const char *fmt, ...)
{
    va_list ap;
    gpc_err_before_message();
    fprintf(stderr, "%s: ", gpc_progname());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help' for more information.\n", gpc_progname());
    gpc_exit(GPC_EUSAGE); /* as gpc_die: temporaries removed */
}

/* --zero-based and --one-based contradict each other. */
static void set_base(gpc_libsvm_base mode)
{
    gpc_libsvm_base now = gpc_libsvm_get_base();
    if (now != GPC_LIBSVM_AUTO && now != mode)
        gpc_cli_usage("--zero-based and --one-based contradict each other; give one");
    gpc_libsvm_set_base(mode);
}

static const char *label_column;

const char *gpc_cli_label_column(void) { return label_column; }

int gpc_cli_common(int c, const char *arg, gpc_format *fmt)
{
    switch (c) {
    case GPC_CLI_OPT_LABEL_COLUMN:
        if (!*arg)
            gpc_cli_usage("--label-column: give the column's name or number");
        label_column = arg;
        return 1;
    case GPC_CLI_OPT_PROCESS_GRID: {
        int p, q;
        if (gpc_pgrid_parse(arg, &p, &q) != GPC_OK || gpc_pgrid_request(p, q, 0) != GPC_OK)
            gpc_cli_usage("--process-grid: %s", gpc_errmsg());
        return 1;
    }
    case GPC_CLI_OPT_BLOCK_SIZE:
        gpc_pgrid_request(0, 0, (int)gpc_cli_long("--block-size", arg, 1, 1L << 20));
        return 1;
    case 'v': gpc_verbosity = gpc_verbosity < 2 ? 2 : gpc_verbosity < 4 ? gpc_verbosity + 1 : 4; return 1;
    case 'q': gpc_verbosity = 0; return 1;
    case GPC_CLI_OPT_HEADER: gpc_matio_set_header(GPC_HEADER_YES); return 1;
    case GPC_CLI_OPT_NO_HEADER: gpc_matio_set_header(GPC_HEADER_NO); return 1;
    case GPC_CLI_OPT_ZERO_BASED: set_base(GPC_LIBSVM_ZERO); return 1;
    case GPC_CLI_OPT_ONE_BASED: set_base(GPC_LIBSVM_ONE); return 1;
    case 'V': gpc_cli_version();
    case 'F':
        if (gpc_format_parse(arg, fmt) != GPC_OK)
            gpc_cli_usage("%s", gpc_errmsg());
        return 1;
    case '?': /* getopt has already said what is wrong */
        fprintf(stderr, "Try '%s --help' for more information.\n", gpc_progname());
        gpc_exit(GPC_EUSAGE);
    default: return 0;
    }
}

double gpc_cli_double(const char *opt, const char *arg)
{
    char *end;
    errno = 0;
    double x = strtod(arg, &end);
    if (end == arg || *end || errno == ERANGE || !isfinite(x))
        gpc_cli_usage("option %s: '%s' is not a finite number", opt, arg);
    return x;
}

long gpc_cli_long(const char *opt, const char *arg, long min, long max)
{
    char *end;
    errno = 0;
    long x = strtol(arg, &end, 10);
    if (end == arg || *end || errno == ERANGE || x < min || x > max)
        gpc_cli_usage("option %s: '%s' is not a whole number from %ld to %ld", opt, arg, min,
                      max);
    return x;
}

/* Set one "name=value" pair; returns 0 for an unknown name. */
static int set_named(gpc_kernel *k, double *theta, const char *item)
{
    const char *eq = strchr(item, '=');
    char name[GPC_NAME_MAX + 8];
    snprintf(name, sizeof name, "%.*s", (int)(eq - item), item);
    long j = gpc_kernel_param_index(k, name);
    if (j < 0)
        return 0;
    theta[j] = gpc_cli_double(name, eq + 1);
    return 1;
}

static void list_names(const gpc_kernel *k, char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t j = 0; j < gpc_kernel_nparams(k); j++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", j ? " " : "", gpc_kernel_param_label(k, j));
    }
}

unsigned char *gpc_cli_fixed_mask(const gpc_kernel *k, const char *list)
{
    if (!list)
        return NULL;
    unsigned char *fixed = gpc_calloc(gpc_kernel_nparams(k), 1);
    char *copy = gpc_strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long j = gpc_kernel_param_index(k, t);
        if (j < 0)
            gpc_cli_usage("--fix: kernel '%s' has no hyperparameter '%s' (see gpc-kernel "
                          "--list)", gpc_kernel_spec(k), t);
        fixed[j] = 1;
    }
    free(copy);
    return fixed;
}

void gpc_cli_params(gpc_kernel *k, const char *arg)
{
    size_t p = gpc_kernel_nparams(k), count = 0;
    double *theta = gpc_malloc(p * sizeof *theta);
    memcpy(theta, gpc_kernel_params(k), p * sizeof *theta);
    char *copy = gpc_strdup(arg), *save = NULL, names[1024];
    int named = strchr(arg, '=') != NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (named != (strchr(item, '=') != NULL))
            gpc_cli_usage("hyperparameters '%s': give all as name=value or all as values", arg);
        if (named && !set_named(k, theta, item)) {
            list_names(k, names, sizeof names);
            gpc_cli_usage("unknown hyperparameter in '%s'; kernel '%s' has: %s", item,
                          gpc_kernel_spec(k), names);
        }
        if (!named && count < p)
            theta[count] = gpc_cli_double("--params", item);
        count++;
    }
    if (!named && count != p) {
        list_names(k, names, sizeof names);
        gpc_cli_usage("kernel '%s' has %zu hyperparameters (%s), %zu given", gpc_kernel_spec(k),
                      p, names, count);
    }
    gpc_kernel_set_params(k, theta);
    free(copy);
    free(theta);
}

/* One line of a parameter file, without its end and its comment. */
typedef struct {
    char *s;
    size_t len, cap;
} params_line;

static void params_line_push(params_line *b, char c)
{
    if (b->len + 2 > b->cap) {
        b->cap = b->cap ? 2 * b->cap : 128;
        b->s = gpc_realloc(b->s, b->cap);
    }
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
}

/* Line lineno of f into b, up to a newline, CRLF or a lone CR (old Mac
 * files), without the '#' comment; *end set when f had nothing more.
 * Read a byte at a time, so that a NUL is refused where it is met: a
 * binary file is not read whole first. */
static int params_line_read(FILE *f, const char *name, size_t lineno, params_line *b, int *end)
{
    int c, comment = 0;
    size_t got = 0;
    if (!b->s) {
        b->cap = 128;
        b->s = gpc_malloc(b->cap);
    }
    b->len = 0;
    b->s[0] = '\0';
    while ((c = getc(f)) != EOF && c != '\n') {
        got++;
        if (c == '\r') {
            int next = getc(f);
            if (next != '\n' && next != EOF)
                ungetc(next, f);
            break;
        }
        comment |= c == '#';
        if (comment)
            continue;
        params_line_push(b, (char)c);
        if (c == '\0')
            return gpc_text_refuse_nul(name, lineno, b->s, b->s + b->len,
                                       "a parameter file is text, 'name value' lines");
    }
    *end = c == EOF && got == 0;
    return GPC_OK;
}

/* "name value" in s, its value into theta. */
static int params_line_parse(gpc_kernel *k, const char *s, const char *name, size_t lineno,
                             double *theta)
{
    char pname[256], rest[2];
    double x;
    if (sscanf(s, "%255s %lf %1s", pname, &x, rest) != 2 || !isfinite(x))
        return gpc_fail(GPC_EINPUT, "%s:%zu: expected 'name value'", name, lineno);
    long j = gpc_kernel_param_index(k, pname);
    if (j < 0)
        return gpc_fail(GPC_EINPUT, "%s:%zu: kernel '%s' has no hyperparameter '%s'", name,
                        lineno, gpc_kernel_spec(k), pname);
    theta[j] = x;
    return GPC_OK;
}

int gpc_cli_params_file_read(gpc_kernel *k, const char *path)
{
    FILE *f;
    const char *name;
    int st = gpc_input_open(path, &f, &name), end = 0;
    if (st != GPC_OK)
        return st;
    size_t p = gpc_kernel_nparams(k);
    double *theta = gpc_malloc((p ? p : 1) * sizeof *theta);
    memcpy(theta, gpc_kernel_params(k), p * sizeof *theta);
    params_line b = {NULL, 0, 0};
    for (size_t line = 1; st == GPC_OK; line++) {
        st = params_line_read(f, name, line, &b, &end);
        if (st != GPC_OK || end)
            break;
        if (b.s[strspn(b.s, " \t")] != '\0')
            st = params_line_parse(k, b.s, name, line, theta);
    }
    if (st == GPC_OK && ferror(f))
        st = gpc_fail(GPC_EINPUT, "%s: read error: %s", name, strerror(errno ? errno : EIO));
    gpc_input_close(f);
    if (st == GPC_OK)
        gpc_kernel_set_params(k, theta);
    free(b.s);
    free(theta);
    return st;
}

void gpc_cli_params_file(gpc_kernel *k, const char *path)
{
    gpc_cli_check(gpc_cli_params_file_read(k, path));
}

void gpc_cli_params_write(const gpc_kernel *k, gpc_output *o)
{
    gpc_cli_params_list(k, NULL, o);
}

void gpc_cli_params_list(const gpc_kernel *k, char *const *names, gpc_output *o)
{
    FILE *f = gpc_output_file(o);
    for (size_t j = 0; j < gpc_kernel_nparams(k); j++) {
        const char *label = gpc_kernel_param_label(k, j), *name = gpc_kernel_param_name(k, j);
        long col = names ? gpc_kernel_param_column(k, j) : -1;
        fprintf(f, "%s %.17g", label, gpc_kernel_params(k)[j]);
        /* the other name it goes by, and the column as the header writes it
         * where the label cannot */
        char word[GPC_NAME_MAX];
        int same = col >= 0 && gpc_colnames_word(names[col], word, sizeof word) &&
                   !strcmp(word, names[col]);
        if (col >= 0 && strcmp(label, name) != 0)
            fprintf(f, same ? "  # also %s" : "  # also %s, column '%s'", name, names[col]);
        else if (col >= 0)
            fprintf(f, "  # column '%s'", names[col]);
        fputc('\n', f);
    }
}

gpc_output *gpc_cli_output(const char *path)
{
    gpc_output *o;
    /* of several processes, the first alone writes (the others compute the
     * same model) */
    if (gpc_comm_rank(gpc_comm_world()) != 0)
        path = "/dev/null";
    gpc_cli_check(gpc_output_open(path, &o));
    return o;
}

void gpc_cli_stdin_claim(const char *what, const char *path)
{
    /* a copy, not the caller's pointer: a caller that names its inputs in
     * one buffer ("chain 1", "chain 2") would otherwise change the claim's
     * name to the next one's, and two '-' would pass as the same input */
    static char claimed[64];
    if (!path || strcmp(path, "-") != 0 || (claimed[0] && !strcmp(claimed, what)))
        return;
    if (claimed[0])
        gpc_cli_usage("%s and %s cannot both be standard input ('-')", claimed, what);
    snprintf(claimed, sizeof claimed, "%s", what);
}

void gpc_cli_stdin_claim_training(int argc, char **argv)
{
    if (argc - optind == 1 || argc - optind == 2)
        gpc_cli_stdin_claim("X", argv[optind]);
    if (argc - optind == 2)
        gpc_cli_stdin_claim("Y", argv[optind + 1]);
}

const char *gpc_cli_name(const char *path)
{
    return !path || strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* l's classes made two when only one is present (see gpc_cli_read_labels);
 * name is the file's, for the message.  1 when the one present is the
 * positive class, whose index is then 1: its cases' indices are to be
 * made so. */
static int second_class(gpc_labels *l, const char *name)
{
    if (l->nclasses >= 2)
        return 0;
    /* one class is fine when the labels are a coding whose meaning is fixed
     * (a one-case problem, a test set of one class); words or other numbers
     * need both classes to tell which is positive */
    double v = l->numeric ? strtod(l->names[0], NULL) : NAN;
    if (v != -1.0 && v != 0.0 && v != 1.0)
        gpc_die(GPC_EINPUT, "%s: every one of the %zu labels is '%s': a classifier needs cases "
                "of at least two classes (one is enough only for -1/+1 or 0/1 labels, whose "
                "meaning is fixed)", name, l->n, l->names[0]);
    l->names = gpc_reallocarray(l->names, 2, sizeof *l->names);
    l->nclasses = 2;
    if (v == 1.0) { /* the positive class; the negative is named as -1/+1 would name it */
        l->names[1] = l->names[0];
        l->names[0] = gpc_strdup("-1");
        return 1;
    }
    l->names[1] = gpc_strdup("1");
    return 0;
}

/* l as it is with two or more classes, or given its other class (see
 * gpc_cli_read_labels); name is the file's, for the message. */
static gpc_labels *two_classes(gpc_labels *l, const char *name)
{
    if (second_class(l, name))
        for (size_t i = 0; i < l->n; i++)
            l->cls[i] = 1;
    return l;
}

gpc_labels *gpc_cli_read_labels(const char *path)
{
    gpc_labels *l;
    gpc_cli_check(gpc_labels_read_present(path, &l));
    return two_classes(l, gpc_cli_name(path));
}

/* Whether the inputs gpc_cli_read_inputs or gpc_cli_read_training read
 * last were a LIBSVM file numbered from 0. */
static int training_zero_based;

int gpc_cli_training_zero_based(void) { return training_zero_based; }

void gpc_cli_model_base(int zero_based)
{
    if (zero_based && gpc_libsvm_get_base() == GPC_LIBSVM_AUTO)
        gpc_libsvm_set_base(GPC_LIBSVM_ZERO);
}

/* A LIBSVM file as the whole training set, its labels the first token of
 * each line: read once, so that it may come from standard input. */
static void read_libsvm_training(const char *path, gsl_matrix **X, gpc_labels **labels)
{
    char *text;
    size_t len;
    const char *name;
    gpc_cli_stdin_claim("X", path);
    gpc_cli_check(gpc_input_read_all(path, &text, &len, &name));
    if (!gpc_libsvm_is(text, len))
        gpc_cli_usage("%s is not a LIBSVM file ('label index:value ...'), so the labels are "
                      "needed too: give X Y", name);
    gpc_source src = {.line = NULL};
    snprintf(src.name, sizeof src.name, "%s", name);
    char **tok;
    int st = gpc_libsvm_read(text, len, &src, X, &tok);
    free(text);
    gpc_cli_check(st);
    *labels = two_classes(gpc_labels_of_tokens(tok, src.rows), name);
    gpc_libsvm_labels_free(tok, src.rows);
    training_zero_based = src.zero_based;
    gpc_source_free(&src);
    gpc_cli_check(gpc_labels_check_training(*labels, name));
}

/* X whose --label-column holds the labels: one reading of one file. */
static void read_labelled_training(const char *xpath, gsl_matrix **X, char ***names,
                                   gpc_labels **labels)
{
    gpc_read_opts opts = {.label_column = label_column};
    gpc_source src;
    char **tok;
    gpc_cli_check(gpc_matrix_read_with(xpath, &opts, X, &src, &tok, NULL));
    const char *name = gpc_cli_name(xpath);
    *labels = two_classes(gpc_labels_of_tokens(tok, (*X)->size1), name);
    gpc_colnames_free(tok);
    if (names)
        *names = src.colnames;
    else
        gpc_colnames_free(src.colnames);
    src.colnames = NULL;
    gpc_source_free(&src);
    gpc_cli_check(gpc_labels_check_training(*labels, name));
}

void gpc_cli_read_training(int argc, char **argv, gsl_matrix **X, char ***names,
                           gpc_labels **labels)
{
    char **own = NULL;
    if (label_column && argc - optind != 1)
        gpc_cli_usage("--label-column=%s takes the labels from a column of X: give X alone, "
                      "without a labels file", label_column);
    if (label_column) {
        gpc_cli_stdin_claim("X", argv[optind]);
        read_labelled_training(argv[optind], X, names, labels);
        return;
    }
    if (argc - optind == 1) {
        read_libsvm_training(argv[optind], X, labels);
        if (names)
            *names = NULL;
        return;
    }
    if (argc - optind != 2)
        gpc_cli_usage("expected two files, the inputs X and the labels Y (or a LIBSVM file "
                      "X alone, whose lines start with the labels)");
    const char *xpath = argv[optind], *ypath = argv[optind + 1];
    gpc_cli_stdin_claim("X", xpath);
    gpc_cli_stdin_claim("Y", ypath);
    *X = gpc_cli_read_inputs(xpath, &own);
    if (names)
        *names = own;
    else
        gpc_colnames_free(own);
    *labels = gpc_cli_read_labels(ypath);
    if ((*labels)->n != (*X)->size1)
        gpc_die(GPC_EINPUT, "%s has %zu labels but %s has %zu rows; they must match",
                gpc_cli_name(ypath), (*labels)->n, gpc_cli_name(xpath), (*X)->size1);
    gpc_cli_check(gpc_labels_check_training(*labels, gpc_cli_name(ypath)));
}

/* Y as a .npy column of two numbers read in place, and the classes' names
 * ("%.17g" of each, as the whole-file reader spells numbers); 0 when it is
 * not that (more classes: the whole-file reader takes it). */
static int stream_npy_labels(const char *ypath, gpc_cli_stream *s)
{
    double neg, pos;
    char a[32], b[32];
    if (gpc_rows_open_npy(ypath, &s->y) != GPC_OK)
        return 0;
    if (gpc_rows_binary_classes(s->y, &neg, &pos) != GPC_OK) {
        gpc_rows_close(s->y);
        s->y = NULL;
        return 0;
    }
    gpc_rows_map_binary(s->y, neg, pos);
    snprintf(a, sizeof a, "%.17g", neg);
    snprintf(b, sizeof b, "%.17g", pos);
    char *tok[2] = {a, b};
    s->labels = gpc_labels_of_tokens(tok, 2);
    return 1;
}

/* X read a batch at a time: a .npy file of doubles where it lies, text
 * through a scratch copy of its numbers (sparse/scratch.h); s->X stays
 * NULL for what only the whole-file reader takes (another .npy dtype, a
 * LIBSVM file), the input then ready to be read again. */
static void open_stream_inputs(const char *xpath, const char *ypath, gpc_cli_stream *s)
{
    gpc_cli_stdin_claim("X", xpath);
    gpc_cli_stdin_claim("Y", ypath);
    if (gpc_rows_npy_in_place(xpath))
        gpc_cli_check(gpc_rows_open_npy(xpath, &s->X));
    else
        gpc_cli_check(gpc_rows_open_text(xpath, &s->X, &s->names));
}

static void class_method(const gpc_labels *l, int lik_named, const char *multiclass,
                         gpc_method *method, gpc_lik *lik);

/* Y as a text file of labels read through a scratch file of codes
 * (sparse/scratch.h), each code read as the number gpc_cli_class_vector
 * gives its class, with the same checks; 0 when it is not that (standard
 * input, .npy, LIBSVM, or a file the whole-file reader refuses, in its own
 * words). */
static int stream_text_labels(const char *ypath, int lik_named, gpc_method *method,
                              gpc_lik *lik, gpc_cli_stream *s)
{
    gpc_labels_summary sum;
    gpc_rows_open_labels(ypath, &s->y, &sum);
    if (!s->y)
        return 0;
    gpc_labels *l = s->labels = sum.labels;
    const char *name = gpc_cli_name(ypath);
    size_t C = l->nclasses, single = 0;
    int positive = second_class(l, name);
    for (size_t c = 0; c < C; c++)
        single += sum.count[c] == 1;
    gpc_cli_check(gpc_labels_check_single(l, single, name));
    class_method(l, lik_named, NULL, method, lik);
    int latent = gpc_method_get(*method)->latent;
    double *value = gpc_mallocarray(sum.ncodes ? sum.ncodes : 1, sizeof *value);
    for (size_t k = 0; k < sum.ncodes; k++) {
        size_t c = sum.class_of[k] == SIZE_MAX ? 0 : sum.class_of[k] + (size_t)positive;
        value[k] = latent ? (c == 1 ? 1.0 : -1.0) : (double)c;
    }
    gpc_rows_map_codes(s->y, value, sum.ncodes);
    free(value);
    gpc_labels_summary_free(&sum);
    return 1;
}

void gpc_cli_stream_open(int argc, char **argv, int lik_named, gpc_method *method,
                         gpc_lik *lik, gpc_cli_stream *s)
{
    memset(s, 0, sizeof *s);
    if (!label_column && argc - optind == 2)
        open_stream_inputs(argv[optind], argv[optind + 1], s);
    if (!s->X) {
        gpc_cli_read_training(argc, argv, &s->Xmem, &s->names, &s->labels);
        s->ymem = gpc_cli_class_vector(s->labels, lik_named, NULL, method, lik);
        s->X = gpc_rows_memory(s->Xmem->data, s->Xmem->size1, s->Xmem->size2,
                               gpc_cli_name(argv[optind]));
        s->y = gpc_rows_memory(s->ymem->data, s->ymem->size, 1, "the labels");
        return;
    }
    const char *xpath = argv[optind], *ypath = argv[optind + 1];
    /* labels of two classes as numbers are read in place; more classes, or
     * labels as text, are read whole (8 bytes a case) */
    int npy = gpc_method_get(*method)->latent && gpc_rows_npy_in_place(ypath) &&
              stream_npy_labels(ypath, s);
    if (!npy && !stream_text_labels(ypath, lik_named, method, lik, s)) {
        s->labels = gpc_cli_read_labels(ypath);
        gpc_cli_check(gpc_labels_check_training(s->labels, gpc_cli_name(ypath)));
        s->ymem = gpc_cli_class_vector(s->labels, lik_named, NULL, method, lik);
        s->y = gpc_rows_memory(s->ymem->data, s->ymem->size, 1, gpc_cli_name(ypath));
    }
    if (gpc_rows_count(s->y) != gpc_rows_count(s->X))
        gpc_die(GPC_EINPUT, "%s has %llu labels but %s has %llu rows; they must match",
                gpc_cli_name(ypath), (unsigned long long)gpc_rows_count(s->y),
                gpc_cli_name(xpath), (unsigned long long)gpc_rows_count(s->X));
}

void gpc_cli_stream_close(gpc_cli_stream *s)
{
    gpc_rows_close(s->X);
    gpc_rows_close(s->y);
    gsl_matrix_free(s->Xmem);
    gsl_vector_free(s->ymem);
    gpc_colnames_free(s->names);
    gpc_labels_free(s->labels);
}

/* --multiclass=softmax: the joint model, which is Laplace's. */
static void choose_softmax(int lik_named, gpc_method *method, gpc_lik *lik)
{
    if (*method != GPC_METHOD_LAPLACE && *method != GPC_METHOD_SOFTMAX) {
        if (!gpc_method_get(*method)->latent)
            gpc_cli_usage("--multiclass=softmax is multiclass Laplace; %s is multiclass "
                          "itself: leave --multiclass out", gpc_method_get(*method)->title);
        gpc_cli_usage("--multiclass=softmax is multiclass Laplace; give -M laplace (or "
                      "--multiclass=ovr for one-vs-rest %s)", gpc_method_get(*method)->title);
    }
    if (lik_named && *lik != GPC_LIK_SOFTMAX)
        gpc_cli_usage("--multiclass=softmax takes the softmax likelihood, not %s",
                      gpc_lik_name(*lik));
    *lik = GPC_LIK_SOFTMAX;
    *method = GPC_METHOD_SOFTMAX;
}

/* The method and likelihood for the classes of l, as gpc_cli_class_vector
 * settles them (it needs their names and number, not the cases'). */
static void class_method(const gpc_labels *l, int lik_named, const char *multiclass,
                         gpc_method *method, gpc_lik *lik)
{
    char found[512];
    /* the classes are named, so that a stray label (a typo, a header) that
     * made a third class is easy to spot */
    gpc_labels_list(l->names, l->nclasses, found, sizeof found);
    if (multiclass && strcmp(multiclass, "ovr") == 0) {
        /* two classifiers of one binary problem, mirror images whose summed
         * evidence would count the data twice */
        if (l->nclasses == 2)
            gpc_cli_usage("--multiclass=ovr with two classes (%s) is the binary classifier "
                          "twice; leave it out", found);
        if (gpc_method_ovr(*method, method) != GPC_OK)
            gpc_cli_usage("--multiclass=ovr: %s", gpc_errmsg());
    } else if (multiclass && strcmp(multiclass, "softmax") == 0) {
        choose_softmax(lik_named, method, lik);
    } else if (multiclass) {
        gpc_cli_usage("--multiclass: '%s' is not softmax or ovr", multiclass);
    } else if (l->nclasses > 2 && *method == GPC_METHOD_LAPLACE && !lik_named) {
        *lik = GPC_LIK_SOFTMAX;
        gpc_info(1, "%zu classes (%s): multiclass Laplace with the softmax likelihood",
                 l->nclasses, found);
    } else if (l->nclasses > 2 && *method == GPC_METHOD_EP && !lik_named) {
        *lik = GPC_LIK_MPROBIT;
        *method = GPC_METHOD_NESTED_EP;
        gpc_info(1, "%zu classes (%s): nested EP with the multinomial probit likelihood",
                 l->nclasses, found);
    } else if (l->nclasses > 2 && *method == GPC_METHOD_SVGP && !lik_named) {
        *lik = GPC_LIK_MPROBIT;
        *method = GPC_METHOD_SVGP_MC;
        gpc_info(1, "%zu classes (%s): the sparse variational method with the multinomial "
                 "probit likelihood", l->nclasses, found);
    }
    if (*method == GPC_METHOD_LAPLACE && *lik == GPC_LIK_SOFTMAX)
        *method = GPC_METHOD_SOFTMAX;
    if (*method == GPC_METHOD_EP && *lik == GPC_LIK_MPROBIT)
        *method = GPC_METHOD_NESTED_EP;
    const gpc_method_ops *ops = gpc_method_get(*method);
    if (l->nclasses > 2 && ops->latent)
        gpc_cli_usage("the labels have %zu classes (%s), but %s with the %s likelihood is "
                      "binary; use %s (gpc-fit and gpc-evidence also take --multiclass=ovr)",
                      l->nclasses, found, ops->title, gpc_lik_name(*lik),
                      *method == GPC_METHOD_LAPLACE ? "-l softmax"
                      : *method == GPC_METHOD_EP    ? "-l mprobit (nested EP)"
                                                    : "-M laplace -l softmax");
}

gsl_vector *gpc_cli_class_vector(const gpc_labels *l, int lik_named, const char *multiclass,
                                 gpc_method *method, gpc_lik *lik)
{
    class_method(l, lik_named, multiclass, method, lik);
    if (gpc_method_get(*method)->latent)
        return gpc_labels_binary(l);
    gsl_vector *y = gpc_vector_alloc(l->n);
    for (size_t i = 0; i < l->n; i++)
        gsl_vector_set(y, i, (double)l->cls[i]);
    return y;
}

gpc_lik gpc_cli_lik(const char *name)
{
    gpc_lik lik;
    if (gpc_lik_parse(name, &lik) != GPC_OK)
        gpc_cli_usage("%s", gpc_errmsg());
    return lik;
}

void gpc_cli_method(const char *method_name, const char *lik_name, gpc_method *method,
                    gpc_lik *lik)
{
    const gpc_method_ops *ops = gpc_method_lookup(method_name);
    /* an unknown method is named after the likelihood has been checked */
    *lik = gpc_cli_lik(lik_name ? lik_name : ops ? ops->default_lik : "probit");
    if (gpc_method_parse(method_name, *lik, method) != GPC_OK)
        gpc_cli_usage("%s", gpc_errmsg());
}

gpc_evidence *gpc_cli_evidence(const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                               size_t C, gpc_lik lik, gpc_method method, int gradient)
{
    gpc_cli_check(gpc_method_check_memory(gpc_method_get(method), X->size1, C, k, gradient));
    return gpc_evidence_alloc(k, X, y, C, lik, method);
}

void gpc_cli_damping(gpc_evidence *ev, double damping)
{
    if (isnan(damping)) /* not given: the method's own */
        return;
    if (gpc_evidence_set_damping(ev, damping) != GPC_OK)
        gpc_cli_usage("%s", gpc_errmsg());
}

void gpc_cli_objective(gpc_evidence *ev, const char *name, int choosing)
{
    if (!name)
        return;
    if (gpc_evidence_set_objective(ev, name) != GPC_OK)
        gpc_cli_usage("%s", gpc_errmsg());
    if (choosing && strcmp(name, "bound") == 0)
        gpc_warn("the variational bound prefers weak kernels: it charges every case the Occam "
                 "factor of a unit-noise regression however confidently it is classified, so "
                 "its optimum switches inputs off; the default --objective=laplace does not");
}

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) { stop_signal = sig; }

void gpc_cli_catch_stop_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
}

int gpc_cli_stop_signal(void) { return stop_signal; }

const char *gpc_cli_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP"
                                                                               : "a signal";
}

void gpc_cli_end_by_signal(int sig)
{
    signal(sig, SIG_DFL);
    raise(sig);
    _exit(128 + sig); /* not reached: the default action ends the process */
}

/* The inducing inputs of FILE: a model of an inducing method (its
 * inducing block), or a matrix of the inputs' columns. */
static gsl_matrix *read_inducing_inputs(const char *path, char *const *names, size_t dim)
{
    char head[16] = "";
    FILE *f = strcmp(path, "-") != 0 ? fopen(path, "r") : NULL;
    if (f) {
        if (!fgets(head, sizeof head, f))
            head[0] = '\0';
        fclose(f);
    }
    if (strncmp(head, "gpc-model", 9) != 0)
        return gpc_cli_read_inputs_for(path, names, dim, "inducing inputs");
    gpc_model *m;
    gpc_cli_check(gpc_model_read(path, &m));
    if (!gpc_model_method(m)->inducing || m->X->size2 != dim)
        gpc_die(GPC_EINPUT, "%s: a model of %s on %zu inputs, not of inducing inputs for %zu",
                gpc_cli_name(path), gpc_model_method(m)->title, m->X->size2, dim);
    gsl_matrix *Z = gpc_matrix_alloc(m->X->size1, dim);
    gsl_matrix_memcpy(Z, m->X);
    gpc_model_free(m);
    return Z;
}

void gpc_cli_inducing(gpc_evidence *ev, const gpc_kernel *k, size_t m, const char *path,
                      char *const *names, unsigned long seed)
{
    if (m && path)
        gpc_cli_usage("--inducing and --inducing-inputs exclude each other");
    if (path && !ev->ops->inducing)
        gpc_cli_usage("--inducing-inputs applies to -M svgp");
    if (gpc_evidence_set_inducing(ev, m, seed) != GPC_OK)
        gpc_cli_usage("%s", gpc_errmsg());
    if (path) {
        gsl_matrix *Z = read_inducing_inputs(path, names, gpc_kernel_dim(k));
        gpc_cli_check(gpc_evidence_set_inducing_inputs(ev, Z));
        gsl_matrix_free(Z);
    }
    if (ev->ops->inducing && gpc_kernel_has_gram(k))
        gpc_cli_usage("a gram term's columns hold the similarities to the training cases, "
                      "and %s predicts through inducing inputs instead: compute the kernel "
                      "with another term, or use a dense method", ev->ops->title);
}

void gpc_cli_label_noise(gpc_evidence *ev, double eps)
{
    if (gpc_evidence_set_label_noise(ev, eps) != GPC_OK)
        gpc_cli_usage("--label-noise: %s", gpc_errmsg());
}

gpc_kernel *gpc_cli_kernel(const char *spec, size_t dim, char *const *names, const char *xpath,
                           const char *params_file, const char *params)
{
    gpc_kernel *k;
    char *numbered;
    if (gpc_colnames_resolve(spec, names, gpc_cli_name(xpath), &numbered) != GPC_OK)
        gpc_cli_usage("%s", gpc_errmsg());
    int st = gpc_kernel_parse(numbered, dim, &k);
    free(numbered);
    if (st != GPC_OK)
        gpc_cli_usage("%s", gpc_errmsg());
    if (names)
        gpc_kernel_name_columns(k, names);
    if (params_file)
        gpc_cli_params_file(k, params_file);
    if (params)
        gpc_cli_params(k, params);
    return k;
}

gpc_kernel *gpc_cli_class_kernel_dim(const char *spec, int per_class, const gpc_labels *l,
                                     gpc_method method, size_t dim, char *const *names,
                                     const char *xpath, const char *params_file,
                                     const char *params)
{
    size_t C = l->nclasses;
    char *full = gpc_malloc(strlen(spec) + 32);
    sprintf(full, "%s", spec);
    /* --per-class with a spec that already says it is the same request */
    if (per_class && !strstr(spec, ":per-class="))
        sprintf(full + strlen(full), ":per-class=%zu", C);
    gpc_kernel *k = gpc_cli_kernel(full, dim, names, xpath, params_file, params);
    free(full);
    size_t copies = gpc_kernel_copies(k);
    if (copies > 1 && gpc_method_get(method)->latent)
        gpc_cli_usage("per-class hyperparameters need a multiclass method (-l softmax, or "
                      "--multiclass=ovr in gpc-fit and gpc-evidence); %s is binary",
                      gpc_method_get(method)->title);
    if (copies > 1 && copies != C)
        gpc_cli_usage("kernel '%s' has hyperparameters for %zu classes, the labels have %zu",
                      gpc_kernel_spec(k), copies, C);
    return k;
}

gpc_kernel *gpc_cli_class_kernel(const char *spec, int per_class, const gpc_labels *l,
                                 gpc_method method, const gsl_matrix *X, char *const *names,
                                 const char *xpath, const char *params_file,
                                 const char *params)
{
    gpc_kernel *k = gpc_cli_class_kernel_dim(spec, per_class, l, method, X->size2, names, xpath,
                                             params_file, params);
    gpc_cli_check(gpc_kernel_check_train(k, X));
    return k;
}

void gpc_cli_check(int status)
{
    if (status != GPC_OK)
        gpc_die_last(status);
}

/* The last line of defence against silent garbage: every result a tool
 * writes is a finite number. */
static void check_finite(const gsl_matrix *m)
{
    for (size_t i = 0; i < m->size1; i++)
        for (size_t j = 0; j < m->size2; j++)
            if (!isfinite(gsl_matrix_get(m, i, j)))
                gpc_die(GPC_ENUM, "the result is not a finite number (row %zu, column %zu is "
                        "%g), so nothing was written: the hyperparameters are probably out of "
                        "range (their logs far above 0)", i + 1, j + 1, gsl_matrix_get(m, i, j));
}

void gpc_cli_write_tokens(gpc_output *o, const gsl_matrix *m, gpc_format fmt, size_t col,
                          char *const *text)
{
    if (!text) {
        gpc_cli_write_matrix(o, m, fmt);
        return;
    }
    check_finite(m);
    gpc_cli_check(gpc_matrix_write_tokens(gpc_output_file(o), gpc_output_name(o), m, fmt, col,
                                          text));
    gpc_cli_check(gpc_output_commit(o));
}

void gpc_cli_write_text_rows(gpc_output *o, const gsl_matrix *m, size_t col, char *const *text)
{
    FILE *f = gpc_output_file(o);
    check_finite(m);
    gpc_cli_check(text ? gpc_matrix_write_tokens(f, gpc_output_name(o), m, GPC_FMT_TEXT, col, text)
                       : gpc_matrix_write(f, gpc_output_name(o), m, GPC_FMT_TEXT));
}

gsl_matrix *gpc_cli_read_predictions(const char *path, gpc_source *src)
{
    gpc_read_opts opts = {.label_column = "label", .optional = 1, .keep_place = 1};
    gsl_matrix *P;
    char **tok;
    gpc_cli_check(gpc_matrix_read_with(path, &opts, &P, src, &tok, NULL));
    gpc_colnames_free(tok);
    return P;
}

void gpc_cli_write_matrix(gpc_output *o, const gsl_matrix *m, gpc_format fmt)
{
    check_finite(m);
    /* on failure gpc_die removes the temporary */
    gpc_cli_check(gpc_matrix_write(gpc_output_file(o), gpc_output_name(o), m, fmt));
    gpc_cli_check(gpc_output_commit(o));
}

/* m with zero columns added up to cols: the features a sparse file does not
 * write, past its largest index, are 0. */
static gsl_matrix *pad_columns(gsl_matrix *m, size_t cols)
{
    gsl_matrix *r = gpc_matrix_calloc(m->size1, cols);
    gsl_matrix_view left = gsl_matrix_submatrix(r, 0, 0, m->size1, m->size2);
    gsl_matrix_memcpy(&left.matrix, m);
    gsl_matrix_free(m);
    return r;
}

/* m (read from path) made expect_cols wide, or die: a sparse (LIBSVM) file
 * that never reached the last columns has them as zeros. */
static gsl_matrix *fit_width(gsl_matrix *m, const gpc_source *src, const char *path,
                             size_t expect_cols, const char *what)
{
    int sparse = src->sparse;
    if (sparse && expect_cols && m->size2 < expect_cols)
        m = pad_columns(m, expect_cols);
    /* indices numbered from 0 are one less than the columns they fill */
    size_t shift = src->zero_based ? 1 : 0;
    if (sparse && expect_cols && m->size2 > expect_cols)
        gpc_die(GPC_EINPUT, "%s: its largest index is %zu, but %s has %zu columns; leave out "
                "the features past index %zu, which the fit never saw%s", gpc_cli_name(path),
                m->size2 - shift, what, expect_cols, expect_cols - shift,
                shift ? " (indices read as numbered from 0; --one-based reads them from 1)"
                      : "");
    if (expect_cols && m->size2 == expect_cols + 1 && !label_column)
        gpc_die(GPC_EINPUT, "%s: has %zu columns, but %s has %zu; if one of them holds the "
                "labels, give --label-column=N (its number, from 1)", gpc_cli_name(path),
                m->size2, what, expect_cols);
    if (expect_cols && m->size2 != expect_cols)
        gpc_die(GPC_EINPUT, "%s: has %zu columns, but %s has %zu", gpc_cli_name(path),
                m->size2, what, expect_cols);
    return m;
}

gsl_matrix *gpc_cli_read_matrix(const char *path, size_t expect_cols, const char *what)
{
    return gpc_cli_read_inputs_for(path, NULL, expect_cols, what);
}

void gpc_cli_report_weights(const gpc_kernel *k)
{
    size_t J = gpc_kernel_weights(k, 0, NULL, NULL), copies = gpc_kernel_copies(k);
    if (J == 0)
        return;
    double *w = gpc_mallocarray(J, sizeof *w);
    for (size_t c = 0; c < copies; c++) {
        char line[1024], cls[32] = "";
        size_t len = 0;
        gpc_kernel_weights(k, c, w, NULL);
        for (size_t t = 0; t < J && len < sizeof line; t++) {
            int n = snprintf(line + len, sizeof line - len, "%s%s %.4g", t ? ", " : "",
                             gpc_kernel_weight_term(k, t), w[t]);
            len += n > 0 ? (size_t)n : 0;
        }
        if (copies > 1)
            snprintf(cls, sizeof cls, " of class %zu", c + 1);
        gpc_info(1, "weights%s: %s", cls, line);
    }
    free(w);
}

gsl_matrix *gpc_cli_read_inputs(const char *path, char ***names)
{
    gsl_matrix *m;
    gpc_source src;
    gpc_cli_check(gpc_matrix_read(path, &m, &src));
    training_zero_based = src.zero_based;
    *names = src.colnames;
    src.colnames = NULL;
    gpc_source_free(&src);
    return m;
}

/* Column j of the result is column index[j] of m. */
static gsl_matrix *pick_columns(gsl_matrix *m, const size_t *index, size_t dim)
{
    gsl_matrix *r = gpc_matrix_alloc(m->size1, dim);
    for (size_t i = 0; i < m->size1; i++)
        for (size_t j = 0; j < dim; j++)
            gsl_matrix_set(r, i, j, gsl_matrix_get(m, i, index[j]));
    gsl_matrix_free(m);
    return r;
}

gsl_matrix *gpc_cli_read_inputs_for(const char *path, char *const *names, size_t dim,
                                    const char *what)
{
    gsl_matrix *m;
    gpc_source src;
    /* named columns are picked by name, which leaves a label column out
     * whatever it holds; unnamed ones by position, less the label column */
    gpc_read_opts opts = {.label_column = names ? NULL : label_column, .optional = 1,
                          .only = names};
    char **tok;
    size_t label_col;
    gpc_cli_check(gpc_matrix_read_with(path, &opts, &m, &src, &tok, &label_col));
    gpc_colnames_free(tok);
    if (names && src.colnames) {
        size_t *index;
        int st = gpc_colnames_match(names, src.colnames, gpc_cli_name(path), &index);
        gpc_source_free(&src);
        gpc_cli_check(st);
        m = pick_columns(m, index, dim);
        free(index);
        return m;
    }
    m = fit_width(m, &src, path, dim, what);
    gpc_source_free(&src);
    return m;
}

gpc_labels *gpc_cli_read_test_labels(const char *ypath, const char *model_path,
                                     const char *header, int *binary, long *col, int col_given)
{
    gpc_labels *labels;
    char **names;
    long first = 1;
    size_t C = model_path ? 0 : gpc_labels_header_classes(header, &names, &first);
    if (C >= 2) {
        int st = gpc_labels_read_classes(ypath, names, C, &labels);
        for (size_t c = 0; c < C; c++)
            free(names[c]);
        free(names);
        gpc_cli_check(st);
        *binary = 0;
        if (!col_given)
            *col = first;
        return labels;
    }
    if (!model_path) {
        labels = gpc_cli_read_labels(ypath);
        *binary = labels->nclasses == 2;
        return labels;
    }
    gpc_model *m;
    gpc_cli_check(gpc_model_read(model_path, &m));
    char **model_names = gpc_mallocarray(m->nclasses, sizeof *model_names);
    for (size_t c = 0; c < m->nclasses; c++)
        model_names[c] = (char *)gpc_model_class(m, c);
    *binary = m->nclasses == 2; /* every two-class model predicts as a binary one */
    int st = gpc_labels_read_classes(ypath, model_names, m->nclasses, &labels);
    free(model_names);
    gpc_model_free(m);
    gpc_cli_check(st);
    return labels;
}
