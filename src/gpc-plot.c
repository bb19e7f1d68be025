/* gpc-plot — pictures through gnuplot: the reliability diagram of
 * predictions, the traces of hyperparameter chains, and the decision
 * surface of a model on a plane through its inputs.  The drawing is in
 * plot.c, the plane's numbers in surface.c, the bins in score.c. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "cli/cli.h"
#include "io/labels.h"
#include "io/matio.h"
#include "io/output.h"
#include "methods/model.h"
#include "report/plot.h"
#include "report/score.h"
#include "report/surface.h"
#include "sampling/chain.h"

static void usage(void)
{
    printf("Usage: %s reliability [OPTION]... PRED Y\n"
           "  or:  %s trace [OPTION]... CHAIN...\n"
           "  or:  %s surface [OPTION]... MODEL\n"
           "Draw a picture with gnuplot, as PNG or SVG.\n"
           "  reliability  the reliability diagram of predictions PRED (as written by\n"
           "               gpc-predict) against the true labels Y, read as gpc-score reads\n"
           "               them: mean predicted probability against observed frequency\n"
           "               per bin (binary: p(y=+1); multiclass: the top class's\n"
           "               probability against its accuracy), the diagonal, the cases\n"
           "               per bin below, and the expected calibration error in the key\n"
           "  trace        chains from gpc-hmc: one panel per hyperparameter against the\n"
           "               iteration, each chain a line of its own colour, the burn-in\n"
           "               shaded\n"
           "  surface      a model from gpc-fit on a plane through two of its inputs,\n"
           "               the others held fixed, over a grid around its training\n"
           "               inputs: binary, p(y=+1|x) as a heat map with its contours\n"
           "               (0.5 heavy); multiclass, the most probable class as coloured\n"
           "               regions, paler where its probability is lower; and the\n"
           "               training points marked by class\n"
           "\n"
           "  -o, --output=FILE  write the picture here (default: standard output)\n"
           "  -F, --format=FMT   png or svg (default: from the suffix of -o, else png)\n"
           "      --title=TEXT   the picture's title (default: what is drawn, of which file)\n"
           "  -W, --width=PX     width in pixels (default: by the kind and panels)\n"
           "  -H, --height=PX    height in pixels\n"
           "reliability:\n"
           "      --bins=B       B equal-width bins over [0, 1] (default 10)\n"
           "  -m, --model=FILE   the labels are of this model's classes (as gpc-score -m)\n"
           "      --column=N     the probabilities start at column N of PRED (default 1,\n"
           "                     or where the header line's p.A columns start)\n"
           "trace:\n"
           "  -b, --burn=B       iterations shown as burn-in (default: the first third of\n"
           "                     the shortest chain, or the step's warm-up if longer, as\n"
           "                     gpc-hmc --summary)\n"
           "surface:\n"
           "      --grid=N       N grid points per side (default 100, 2 to 2000)\n"
           "      --margin=F     the grid extends F times each input's range beyond it\n"
           "                     on each side (default 0.1)\n"
           "      --axes=A,B     the inputs across and up, by column name or number\n"
           "                     (default 1,2)\n"
           "      --at=NAME=VALUE[,NAME=VALUE]...\n"
           "                     hold these other inputs (name or number) at these\n"
           "                     values (default: their means over the training inputs)\n"
           "      --scale=FILE   the model was fitted on inputs standardised by gpc-scale\n"
           "                     with these statistics (gpc-scale --save): axes, --at and\n"
           "                     points are in the original units\n"
           "      --table=FILE   also write the grid's numbers: each point's inputs (in\n"
           "                     the units of the axes) and its class probabilities\n"
           GPC_CLI_HEADER_HELP
           "  -q, --quiet        no messages except errors\n"
           "  -v, --verbose      more messages (gnuplot's warnings)\n"
           "  -h, --help         show this help and exit\n"
           "  -V, --version      show the version and exit\n"
           "\n"
           "Exit status: 0 success, 1 numerical failure, 2 usage error, 3 input or output\n"
           "error (also when gnuplot is missing or fails).\n",
           gpc_progname(), gpc_progname(), gpc_progname());
    gpc_cli_exit_written(); /* exit 0, or 3 if the help could not be written */
}

enum { OPT_TITLE = 256, OPT_BINS, OPT_COLUMN, OPT_GRID, OPT_MARGIN, OPT_AXES, OPT_AT,
       OPT_SCALE, OPT_TABLE };

static const struct option long_options[] = {
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'F'},
    {"title", required_argument, NULL, OPT_TITLE},
    {"width", required_argument, NULL, 'W'},
    {"height", required_argument, NULL, 'H'},
    {"bins", required_argument, NULL, OPT_BINS},
    {"model", required_argument, NULL, 'm'},
    {"column", required_argument, NULL, OPT_COLUMN},
    {"burn", required_argument, NULL, 'b'},
    {"grid", required_argument, NULL, OPT_GRID},
    {"margin", required_argument, NULL, OPT_MARGIN},
    {"axes", required_argument, NULL, OPT_AXES},
    {"at", required_argument, NULL, OPT_AT},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"table", required_argument, NULL, OPT_TABLE},
    GPC_CLI_COMMON_OPTIONS};

typedef enum { KIND_RELIABILITY, KIND_TRACE, KIND_SURFACE } kind;
static const char *const kind_names[] = {"reliability", "trace", "surface"};

typedef struct {
    const char *output, *format, *title, *model;
    long width, height, bins, column, burn, grid;
    double margin;
    const char *axes, *scale, *table;
    char **at;     /* every --at given, in order */
    size_t nat;
    /* the kind an option given belongs to (for the check that it fits) */
    const char *bins_opt, *model_opt, *column_opt, *burn_opt, *grid_opt, *margin_opt;
} options;

static void parse_options(int argc, char **argv, options *o)
{
    int c;
    gpc_format unused;
    while ((c = getopt_long(argc, argv, "o:F:W:H:m:b:vqhV", long_options, NULL)) != -1) {
        if (c != 'F' && gpc_cli_common(c, optarg, &unused))
            continue;
        switch (c) {
        case 'o': o->output = optarg; break;
        case 'F': o->format = optarg; break;
        case OPT_TITLE: o->title = optarg; break;
        case 'W': o->width = gpc_cli_long("--width", optarg, 100, 20000); break;
        case 'H': o->height = gpc_cli_long("--height", optarg, 100, 20000); break;
        case OPT_BINS:
            o->bins = gpc_cli_long("--bins", optarg, 1, 1000000);
            o->bins_opt = "--bins";
            break;
        case 'm': o->model = o->model_opt = optarg; break;
        case OPT_COLUMN:
            o->column = gpc_cli_long("--column", optarg, 1, 1000000);
            o->column_opt = "--column";
            break;
        case 'b':
            o->burn = gpc_cli_long("--burn", optarg, 0, 100000000);
            o->burn_opt = "--burn";
            break;
        case OPT_GRID:
            o->grid = gpc_cli_long("--grid", optarg, 2, 2000);
            o->grid_opt = "--grid";
            break;
        case OPT_MARGIN:
            o->margin = gpc_cli_double("--margin", optarg);
            if (o->margin < 0.0 || o->margin > 10.0)
                gpc_cli_usage("option --margin: %s is not between 0 and 10", optarg);
            o->margin_opt = "--margin";
            break;
        case OPT_AXES: o->axes = optarg; break;
        case OPT_AT:
            o->at = gpc_reallocarray(o->at, o->nat + 1, sizeof *o->at);
            o->at[o->nat++] = optarg;
            break;
        case OPT_SCALE: o->scale = optarg; break;
        case OPT_TABLE: o->table = optarg; break;
        case 'h': usage();
        }
    }
}

/* An option of another kind is a usage error, not silently ignored. */
static void check_kind_options(const options *o, kind k)
{
    const char *wrong = NULL, *of = NULL;
    if (k != KIND_RELIABILITY && (o->bins_opt || o->model_opt || o->column_opt)) {
        wrong = o->bins_opt ? "--bins" : o->model_opt ? "-m/--model" : "--column";
        of = "reliability";
    } else if (k != KIND_TRACE && o->burn_opt) {
        wrong = "--burn";
        of = "trace";
    } else if (k != KIND_SURFACE &&
               (o->grid_opt || o->margin_opt || o->axes || o->nat || o->scale || o->table)) {
        wrong = o->grid_opt ? "--grid" : o->margin_opt ? "--margin" : o->axes ? "--axes"
                : o->nat ? "--at" : o->scale ? "--scale" : "--table";
        of = "surface";
    }
    if (wrong)
        gpc_cli_usage("%s is an option of '%s', not of '%s'", wrong, of, kind_names[k]);
}

static kind parse_kind(const char *word)
{
    for (size_t k = 0; k < sizeof kind_names / sizeof *kind_names; k++)
        if (!strcmp(word, kind_names[k]))
            return (kind)k;
    gpc_cli_usage("unknown picture '%s' (use reliability, trace or surface)", word);
}

static gpc_plot_format picture_format(const options *o)
{
    gpc_plot_format fmt = GPC_PLOT_PNG;
    if (o->format) {
        if (gpc_plot_format_parse(o->format, &fmt) != GPC_OK)
            gpc_cli_usage("option -F: %s", gpc_errmsg());
    } else if (o->output && strcmp(o->output, "-") != 0 &&
               gpc_plot_format_of_path(o->output, &fmt) != GPC_OK)
        gpc_cli_usage("%s", gpc_errmsg());
    return fmt;
}

/* The path's last component, for titles. */
static const char *base_name(const char *path)
{
    const char *s = strrchr(gpc_cli_name(path), '/');
    return s ? s + 1 : gpc_cli_name(path);
}

/* ---- reliability ------------------------------------------------------------ */

/* Per case, the probability the calibration is of and its outcome:
 * binary, p(y=+1) and [y = +1]; multiclass, the top class's probability and
 * whether it is right. */
static void calibration_cases(const gsl_matrix *P, size_t first, int binary,
                              const gpc_labels *l, const char *pname, double *pred, int *hit)
{
    size_t n = l->n, C = l->nclasses;
    if (binary) {
        for (size_t i = 0; i < n; i++) {
            pred[i] = gsl_matrix_get(P, i, first);
            hit[i] = l->cls[i] == 1;
        }
        return;
    }
    double *probs = gpc_mallocarray(n, C * sizeof *probs);
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < C; c++) {
            double p = gsl_matrix_get(P, i, first + c);
            if (!(p >= 0.0 && p <= 1.0))
                gpc_die(GPC_EINPUT, "%s: row %zu: %.17g is not a probability", pname, i + 1, p);
            probs[i * C + c] = p;
        }
    for (size_t i = 0; i < n; i++)
        if (gpc_score_check_sum(probs + i * C, C, first + 1) != GPC_OK)
            gpc_die(GPC_EINPUT, "%s: row %zu: %s", pname, i + 1, gpc_errmsg());
    gpc_score_top_label(probs, n, C, l->cls, pred, hit);
    free(probs);
}

static void draw_reliability(gpc_plot *p, const options *o, int nargs, char **args)
{
    if (nargs != 2)
        gpc_cli_usage("reliability: expected two files, the predictions and the labels");
    const char *ppath = args[0], *ypath = args[1], *pname = gpc_cli_name(ppath);
    gpc_cli_stdin_claim("the predictions", ppath);
    gpc_cli_stdin_claim("the labels", ypath);
    gpc_cli_stdin_claim("the model (-m)", o->model);
    gsl_matrix *P;
    gpc_source src;
    int binary;
    long col = o->column;
    P = gpc_cli_read_predictions(ppath, &src);
    gpc_labels *l = gpc_cli_read_test_labels(ypath, o->model, src.header, &binary, &col,
                                     o->column_opt != NULL);
    gpc_source_free(&src);
    size_t first = (size_t)col - 1, width = binary ? 1 : l->nclasses, n = P->size1;
    if (first + width > P->size2)
        gpc_die(GPC_EINPUT, "%s has %zu columns, too few for %s from column %ld", pname,
                P->size2, binary ? "p(y=+1|x)" : "the class probabilities", col);
    if (l->n != n)
        gpc_die(GPC_EINPUT, "%s has %zu labels but %s has %zu rows; they must match",
                gpc_cli_name(ypath), l->n, pname, n);
    double *pred = gpc_mallocarray(n, sizeof *pred);
    int *hit = gpc_mallocarray(n, sizeof *hit);
    calibration_cases(P, first, binary, l, pname, pred, hit);
    gpc_score_bin *bins = gpc_mallocarray((size_t)o->bins, sizeof *bins);
    if (gpc_score_reliability(pred, hit, n, (size_t)o->bins, bins) != GPC_OK)
        gpc_die(GPC_EINPUT, "%s: %s", pname, gpc_errmsg());
    char title[512];
    snprintf(title, sizeof title, "reliability of %s against %s", base_name(ppath),
             base_name(ypath));
    gpc_cli_check(gpc_plot_reliability(p, bins, (size_t)o->bins, !binary,
                                       o->title ? o->title : title));
    free(bins);
    free(pred);
    free(hit);
    gsl_matrix_free(P);
    gpc_labels_free(l);
}

/* ---- trace ------------------------------------------------------------------ */

static void draw_trace(gpc_plot *p, const options *o, int nargs, char **args, size_t *panels)
{
    if (nargs < 1)
        gpc_cli_usage("trace: expected one or more chain files");
    for (int i = 0; i < nargs; i++) {
        char what[32];
        snprintf(what, sizeof what, "chain %d", i + 1);
        gpc_cli_stdin_claim(what, args[i]);
    }
    size_t m = (size_t)nargs;
    gpc_chain **c = gpc_calloc(m, sizeof *c);
    char **names = gpc_calloc(m, sizeof *names);
    const char **files = gpc_calloc(m, sizeof *files);
    for (size_t i = 0; i < m; i++) {
        gpc_cli_check(gpc_chain_read(args[i], 0, &c[i]));
        names[i] = (char *)base_name(args[i]);
        files[i] = gpc_cli_name(args[i]);
    }
    /* one panel per hyperparameter, one burn-in: the chains of one posterior */
    gpc_cli_check(gpc_chain_check_pool(c, files, m));
    free(files);
    size_t n = c[0]->rows;
    for (size_t i = 1; i < m; i++)
        if (c[i]->rows < n)
            n = c[i]->rows; /* the burn-in of the common length, as --summary */
    size_t burn = o->burn >= 0 ? (size_t)o->burn : n / 3;
    for (size_t i = 0; o->burn < 0 && i < m; i++) {
        /* the step's warm-up is burn-in too, as --summary discards it; a
         * chain still in it is drawn whole, with its last row kept */
        size_t w = gpc_chain_warmup_rows(c[i]);
        burn = w >= n ? (n ? n - 1 : 0) : w > burn ? w : burn;
    }
    if (burn >= n)
        gpc_die(GPC_EINPUT, "%s: a burn-in of %zu leaves none of its %zu iterations", args[0],
                burn, n);
    char title[512];
    if (m == 1)
        snprintf(title, sizeof title, "hyperparameters along %s (burn-in %zu of %zu "
                 "iterations)", base_name(args[0]), burn, n);
    else
        snprintf(title, sizeof title, "hyperparameters along %zu chains (burn-in %zu of the "
                 "%zu iterations they share)", m, burn, n);
    *panels = c[0]->p;
    gpc_cli_check(gpc_plot_trace(p, c, names, m, burn, o->title ? o->title : title));
    for (size_t i = 0; i < m; i++)
        gpc_chain_free(c[i]);
    free(c);
    free(names);
}

/* ---- surface ---------------------------------------------------------------- */

/* The name of input j in messages, titles and the table. */
static const char *input_name(const gpc_model *m, size_t j, char *buf, size_t size)
{
    if (m->colnames)
        return m->colnames[j];
    snprintf(buf, size, "x%zu", j + 1);
    return buf;
}

/* The input column that tok (len bytes: a column name of the model, or a
 * number from 1) names, for option opt; a usage error otherwise. */
static size_t input_column(const gpc_model *m, const char *mname, const char *tok,
                           size_t len, const char *opt)
{
    size_t dim = m->X->size2;
    if (len > 0 && strspn(tok, "0123456789") >= len) {
        long c = strtol(tok, NULL, 10);
        if (c >= 1 && (size_t)c <= dim)
            return (size_t)c - 1;
        gpc_cli_usage("option %s: column %.*s: %s has input columns 1 to %zu", opt, (int)len,
                      tok, mname, dim);
    }
    for (size_t j = 0; m->colnames && j < dim; j++)
        if (strlen(m->colnames[j]) == len && !strncmp(m->colnames[j], tok, len))
            return j;
    if (!m->colnames)
        gpc_cli_usage("option %s: '%.*s': %s has no column names (it was fitted without a "
                      "header line); give its columns by number, 1 to %zu", opt, (int)len, tok,
                      mname, dim);
    gpc_cli_usage("option %s: '%.*s' is not an input column of %s; its columns are %s, %s%s "
                  "(or give a number, 1 to %zu)", opt, (int)len, tok, mname, m->colnames[0],
                  m->colnames[1], dim > 2 ? ", ..." : "", dim);
}

/* Where the inputs not drawn are held by default: the means of the model's
 * rows, which are the training inputs or an inducing method's inputs. */
static const char *held_at(const gpc_model *m)
{
    return m->y ? "their training means" : "the means of the inducing inputs";
}

/* --axes=A,B, else the first two inputs. */
static void choose_axes(const options *o, const gpc_model *m, const char *mname, size_t *axis)
{
    axis[0] = 0;
    axis[1] = 1;
    if (!o->axes) {
        if (m->X->size2 > 2)
            gpc_info(1, "%s has %zu inputs: drawing the first two (choose them with --axes), "
                     "the others at %s", mname, m->X->size2, held_at(m));
        return;
    }
    const char *comma = strchr(o->axes, ',');
    if (!comma || strchr(comma + 1, ','))
        gpc_cli_usage("option --axes: expected two columns A,B, not '%s'", o->axes);
    axis[0] = input_column(m, mname, o->axes, (size_t)(comma - o->axes), "--axes");
    axis[1] = input_column(m, mname, comma + 1, strlen(comma + 1), "--axes");
    if (axis[0] == axis[1])
        gpc_cli_usage("option --axes: '%s' names column %zu twice; give two different inputs",
                      o->axes, axis[0] + 1);
}

/* One NAME=VALUE of --at (len bytes at item) into at, marking it given. */
static void held_value(const gpc_model *m, const char *mname, const size_t *axis,
                       const char *item, size_t len, double *at, unsigned char *given)
{
    const char *eq = memchr(item, '=', len);
    for (const char *e = eq; e && (e = memchr(e + 1, '=', len - (size_t)(e - item) - 1));)
        eq = e; /* the last '=': a value has none */
    if (!eq)
        gpc_cli_usage("option --at: expected NAME=VALUE, not '%.*s'", (int)len, item);
    size_t j = input_column(m, mname, item, (size_t)(eq - item), "--at");
    char buf[64], value[128];
    if (j == axis[0] || j == axis[1])
        gpc_cli_usage("option --at: %s is an axis of the picture; hold only the other inputs",
                      input_name(m, j, buf, sizeof buf));
    if (given[j])
        gpc_cli_usage("option --at: %s is given twice", input_name(m, j, buf, sizeof buf));
    snprintf(value, sizeof value, "%.*s", (int)(len - (size_t)(eq + 1 - item)), eq + 1);
    at[j] = gpc_cli_double("--at", value);
    if (!isfinite(at[j]))
        gpc_cli_usage("option --at: %s=%s is not a finite number", input_name(m, j, buf,
                      sizeof buf), value);
    given[j] = 1;
}

/* The values the other inputs are held at: every --at, the rest at their
 * training means (in the surface's units). */
static void held_values(const options *o, const gpc_model *m, const char *mname,
                        const gpc_surface *s, double *at, unsigned char *given)
{
    gpc_surface_means(s, m->X, at);
    for (size_t k = 0; k < o->nat; k++) {
        if (!*o->at[k])
            gpc_cli_usage("option --at: expected NAME=VALUE[,NAME=VALUE]..., not nothing");
        for (const char *item = o->at[k], *end; *item; item = *end ? end + 1 : end) {
            end = item + strcspn(item, ",");
            held_value(m, mname, s->axis, item, (size_t)(end - item), at, given);
        }
    }
}

/* --scale=FILE: gpc-scale's statistics of the model's inputs. */
static void read_scaling(const char *path, size_t dim, double **mean, double **sd)
{
    gsl_matrix *stats = gpc_cli_read_matrix(path, 0, NULL);
    *mean = gpc_mallocarray(dim, sizeof **mean);
    *sd = gpc_mallocarray(dim, sizeof **sd);
    gpc_cli_check(gpc_surface_scaling(stats, dim, gpc_cli_name(path), *mean, *sd));
    gsl_matrix_free(stats);
}

/* Where the plane lies, for the title: the held inputs by name when few
 * (or given by --at), the rest counted. */
static void slice_note(const gpc_model *m, const gpc_surface *s, const unsigned char *given,
                       char *note, size_t size)
{
    size_t dim = s->dim, others = dim - 2, shown = 0, len = 0;
    note[0] = '\0';
    for (size_t j = 0; j < dim && len < size; j++) {
        if (j == s->axis[0] || j == s->axis[1] || !(given[j] || others <= 4))
            continue;
        char buf[64];
        len += (size_t)snprintf(note + len, size - len, "%s%s = %g", shown ? ", " : "at ",
                                input_name(m, j, buf, sizeof buf), s->at[j]);
        shown++;
    }
    if (others > shown && len < size)
        snprintf(note + len, size - len, "%sthe %s%zu at %s", shown ? "; " : "",
                 shown ? "other " : "other inputs: all ", others - shown, held_at(m));
}

/* The grid as numbers: one row per point (in prob's order), the model's
 * inputs in the surface's units, then p(y=+1) (binary) or the class
 * probabilities, the most probable class and its probability. */
static void write_table(gpc_output *t, const gpc_model *m, const gpc_surface *s,
                        const gsl_matrix *P, const size_t *top)
{
    FILE *f = gpc_output_file(t);
    size_t N = s->grid, C = P->size2;
    char buf[64];
    fputs("#", f);
    for (size_t j = 0; j < s->dim; j++)
        fprintf(f, " %s", input_name(m, j, buf, sizeof buf));
    if (C == 1)
        fputs(" p", f);
    for (size_t c = 0; C > 1 && c < C; c++)
        fprintf(f, " p.%s", gpc_model_class(m, c));
    fputs(C > 1 ? " top p.top\n" : "\n", f);
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; k < N; k++) {
            size_t r = i * N + k;
            for (size_t j = 0; j < s->dim; j++) {
                double x = j == s->axis[0] ? gpc_surface_coord(s, 0, i)
                           : j == s->axis[1] ? gpc_surface_coord(s, 1, k) : s->at[j];
                fprintf(f, "%s%.17g", j ? " " : "", x);
            }
            for (size_t c = 0; c < C; c++)
                fprintf(f, " %.17g", gsl_matrix_get(P, r, c));
            if (C > 1)
                fprintf(f, " %s %.17g", gpc_model_class(m, top[r]), gsl_matrix_get(P, r, top[r]));
            fputc('\n', f);
        }
}

/* The training points' classes, 0..C-1 (binary: 0 for y = -1). */
static size_t *point_classes(const gpc_model *m, int binary)
{
    size_t n = m->y->size, *c = gpc_mallocarray(n, sizeof *c);
    for (size_t i = 0; i < n; i++) {
        double y = gsl_vector_get(m->y, i);
        c[i] = binary ? (size_t)(y > 0) : (size_t)y;
    }
    return c;
}

static void surface_title(const options *o, const gpc_model *m, const char *path, int binary,
                          char *title, size_t size)
{
    if (o->title) {
        snprintf(title, size, "%s", o->title);
        return;
    }
    char what[160];
    if (binary)
        snprintf(what, sizeof what, "p(y = %s | x)", gpc_model_class(m, 1));
    else
        snprintf(what, sizeof what, "most probable class");
    snprintf(title, size, "%s of %s (%s, %s, kernel %s)", what, base_name(path), m->method,
             gpc_lik_name(m->lik), gpc_kernel_spec(m->kernel));
}

/* The plane a surface is drawn on, and the storage its pointers use. */
typedef struct {
    gpc_surface s;
    double *mean, *sd, *at;
    unsigned char *given; /* per input, whether --at gave its value */
} plane;

/* The plane of the options through model m (called name). */
static void plane_of(const options *o, const gpc_model *m, const char *name, plane *pl)
{
    size_t dim = m->X->size2;
    pl->s = (gpc_surface){.dim = dim, .grid = (size_t)o->grid};
    choose_axes(o, m, name, pl->s.axis);
    pl->mean = pl->sd = NULL;
    if (o->scale)
        read_scaling(o->scale, dim, &pl->mean, &pl->sd);
    pl->s.mean = pl->mean;
    pl->s.sd = pl->sd;
    pl->at = gpc_mallocarray(dim, sizeof *pl->at);
    pl->given = gpc_calloc(dim, 1);
    held_values(o, m, name, &pl->s, pl->at, pl->given);
    pl->s.at = pl->at;
    gpc_surface_extent(&pl->s, m->X, o->margin);
}

static void plane_free(plane *pl)
{
    free(pl->mean);
    free(pl->sd);
    free(pl->at);
    free(pl->given);
}

/* The model's predictions on the plane's grid; the probability drawn at
 * each point into prob (p(y=+1), or the most probable class's) and, for a
 * multiclass model, that class into a new *top (else NULL). */
static gpc_prediction *predict_grid(const gpc_model *m, const gpc_surface *s, double *prob,
                                    size_t **top)
{
    size_t n = s->grid * s->grid;
    gsl_matrix *G = gpc_surface_inputs(s);
    gpc_prediction *pr = gpc_prediction_alloc(m, n);
    gpc_cli_check(gpc_model_predict(m, G, pr));
    gsl_matrix_free(G);
    *top = NULL;
    if (pr->prob->size2 > 1) {
        *top = gpc_mallocarray(n, sizeof **top);
        gpc_surface_top(pr->prob, *top, prob);
    } else
        for (size_t i = 0; i < n; i++)
            prob[i] = gsl_matrix_get(pr->prob, i, 0);
    return pr;
}

static void draw_surface(gpc_plot *p, const options *o, int nargs, char **args,
                         gpc_output **table)
{
    if (nargs != 1)
        gpc_cli_usage("surface: expected one model file");
    const char *path = args[0], *name = gpc_cli_name(path);
    gpc_cli_stdin_claim("the model", path);
    gpc_cli_stdin_claim("the statistics (--scale)", o->scale);
    if (o->table && !strcmp(o->table, "-") && (!o->output || !strcmp(o->output, "-")))
        gpc_cli_usage("--table - needs the picture elsewhere (-o FILE)");
    *table = o->table ? gpc_cli_output(o->table) : NULL;
    gpc_model *m;
    gpc_cli_check(gpc_model_read(path, &m));
    if (m->X->size2 < 2)
        gpc_die(GPC_EINPUT, "%s: the model has 1 input column; a surface needs two", name);
    plane pl;
    plane_of(o, m, name, &pl);
    size_t N = pl.s.grid, *top;
    double *prob = gpc_mallocarray(N * N, sizeof *prob);
    gpc_prediction *pr = predict_grid(m, &pl.s, prob, &top);
    if (*table)
        write_table(*table, m, &pl.s, pr->prob, top);
    int binary = top == NULL;
    /* a model that keeps only inducing inputs has no training points to mark */
    size_t ncls = binary ? 2 : pr->prob->size2, *pcls = m->y ? point_classes(m, binary) : NULL;
    char **classes = gpc_mallocarray(ncls, sizeof *classes), note[400], title[1024], ax[2][64];
    for (size_t c = 0; c < ncls; c++)
        classes[c] = (char *)gpc_model_class(m, c);
    slice_note(m, &pl.s, pl.given, note, sizeof note);
    surface_title(o, m, path, binary, title, sizeof title);
    gsl_matrix *points = m->y ? gpc_surface_points(&pl.s, m->X) : NULL;
    gpc_plot_surface_data d = {
        .grid = N, .lo = {pl.s.lo[0], pl.s.lo[1]}, .hi = {pl.s.hi[0], pl.s.hi[1]},
        .nclasses = ncls, .prob = prob, .cls = top, .points = points, .point_class = pcls,
        .classes = classes,
        .axes = {input_name(m, pl.s.axis[0], ax[0], sizeof ax[0]),
                 input_name(m, pl.s.axis[1], ax[1], sizeof ax[1])},
        .title = title, .note = note};
    gpc_cli_check(gpc_plot_surface(p, &d));
    gsl_matrix_free(points);
    free(classes);
    free(pcls);
    free(top);
    free(prob);
    gpc_prediction_free(pr);
    plane_free(&pl);
    gpc_model_free(m);
}

/* ---- main ------------------------------------------------------------------- */

/* Default sizes: a trace grows with its panels. */
static void picture_size(const options *o, kind k, size_t panels, int *w, int *h)
{
    size_t rows = 1, cols = 1;
    if (k == KIND_TRACE)
        gpc_plot_grid_shape(panels, &rows, &cols);
    *w = o->width > 0 ? (int)o->width
         : k == KIND_TRACE ? (int)(cols < 2 ? 560 : 320 * cols) : 720;
    *h = o->height > 0 ? (int)o->height
         : k == KIND_TRACE ? (int)(rows * 240 + 40) : k == KIND_SURFACE ? 640 : 720;
}

int main(int argc, char **argv)
{
    options o = {.bins = 10, .column = 1, .burn = -1, .grid = 100, .margin = 0.1};
    gpc_cli_init(argc, argv);
    parse_options(argc, argv, &o);
    if (optind >= argc)
        gpc_cli_usage("expected what to draw: reliability, trace or surface");
    kind k = parse_kind(argv[optind]);
    check_kind_options(&o, k);
    gpc_plot_format fmt = picture_format(&o);
    int nargs = argc - optind - 1;
    char **args = argv + optind + 1;
    /* the output is opened first, so that a path that cannot be written
     * stops the run before any work */
    gpc_output *out = gpc_cli_output(o.output ? o.output : "-");
    gpc_plot *p;
    gpc_cli_check(gpc_plot_open(fmt, &p));
    size_t panels = 1;
    gpc_output *table = NULL; /* surface --table */
    switch (k) {
    case KIND_RELIABILITY: draw_reliability(p, &o, nargs, args); break;
    case KIND_TRACE: draw_trace(p, &o, nargs, args, &panels); break;
    case KIND_SURFACE: draw_surface(p, &o, nargs, args, &table); break;
    }
    int w, h;
    picture_size(&o, k, panels, &w, &h);
    gpc_plot_size(p, w, h);
    gpc_cli_check(gpc_plot_run(p, gpc_output_file(out), gpc_output_name(out)));
    gpc_plot_free(p);
    /* the table only with its picture, both once drawn */
    if (table)
        gpc_cli_check(gpc_output_commit(table));
    gpc_cli_check(gpc_output_commit(out));
    free(o.at);
    return 0;
}
