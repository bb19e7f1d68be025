/* gpc-plot — pictures through gnuplot: the reliability diagram of
 * predictions, the traces of hyperparameter chains, and the decision
 * surface of a model on two inputs.  The drawing is in plot.c, the bins in
 * score.c. */
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
           "  surface      a model from gpc-fit on two input columns: p(y=+1|x) over a\n"
           "               grid around its training inputs as a heat map, its contours\n"
           "               (0.5 heavy), and the training points marked by class\n"
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
           "                     the shortest chain, as gpc-hmc --summary)\n"
           "surface:\n"
           "      --grid=N       N grid points per side (default 100, 2 to 2000)\n"
           "      --margin=F     the grid extends F times each input's range beyond it\n"
           "                     on each side (default 0.1)\n"
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

enum { OPT_TITLE = 256, OPT_BINS, OPT_COLUMN, OPT_GRID, OPT_MARGIN };

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
    GPC_CLI_COMMON_OPTIONS};

typedef enum { KIND_RELIABILITY, KIND_TRACE, KIND_SURFACE } kind;
static const char *const kind_names[] = {"reliability", "trace", "surface"};

typedef struct {
    const char *output, *format, *title, *model;
    long width, height, bins, column, burn, grid;
    double margin;
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
    } else if (k != KIND_SURFACE && (o->grid_opt || o->margin_opt)) {
        wrong = o->grid_opt ? "--grid" : "--margin";
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

static void draw_surface(gpc_plot *p, const options *o, int nargs, char **args)
{
    if (nargs != 1)
        gpc_cli_usage("surface: expected one model file");
    const char *path = args[0], *name = gpc_cli_name(path);
    gpc_cli_stdin_claim("the model", path);
    gpc_model *m;
    gpc_cli_check(gpc_model_read(path, &m));
    if (m->X->size2 != 2)
        gpc_die(GPC_EINPUT, "%s: the model has %zu input columns; a surface is drawn for a "
                "model of 2 (fit one on two columns to see its decision surface)", name,
                m->X->size2);
    if (gpc_model_prob_columns(m) != 1)
        gpc_die(GPC_EINPUT, "%s: the model has %zu classes; a surface is drawn for a binary "
                "model (fit one class against the rest to see its surface)", name,
                m->nclasses);
    size_t N = (size_t)o->grid;
    gpc_plot_surface_data s = {.grid = N, .X = m->X, .y = m->y};
    gpc_plot_surface_extent(m->X, o->margin, s.lo, s.hi);
    gsl_matrix *G = gpc_plot_surface_inputs(s.lo, s.hi, N);
    gpc_prediction *pr = gpc_prediction_alloc(m, N * N);
    gpc_cli_check(gpc_model_predict(m, G, pr));
    double *prob = gpc_mallocarray(N * N, sizeof *prob);
    for (size_t i = 0; i < N * N; i++)
        prob[i] = gsl_matrix_get(pr->prob, i, 0);
    char title[512];
    snprintf(title, sizeof title, "p(y = %s | x) of %s (%s, %s, kernel %s)",
             gpc_model_class(m, 1), base_name(path), m->method, gpc_lik_name(m->lik),
             gpc_kernel_spec(m->kernel));
    s.prob = prob;
    s.classes[0] = gpc_model_class(m, 0);
    s.classes[1] = gpc_model_class(m, 1);
    s.axes[0] = m->colnames ? m->colnames[0] : "x1";
    s.axes[1] = m->colnames ? m->colnames[1] : "x2";
    s.title = o->title ? o->title : title;
    gpc_cli_check(gpc_plot_surface(p, &s));
    free(prob);
    gpc_prediction_free(pr);
    gsl_matrix_free(G);
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
    switch (k) {
    case KIND_RELIABILITY: draw_reliability(p, &o, nargs, args); break;
    case KIND_TRACE: draw_trace(p, &o, nargs, args, &panels); break;
    case KIND_SURFACE: draw_surface(p, &o, nargs, args); break;
    }
    int w, h;
    picture_size(&o, k, panels, &w, &h);
    gpc_plot_size(p, w, h);
    gpc_cli_check(gpc_plot_run(p, gpc_output_file(out), gpc_output_name(out)));
    gpc_plot_free(p);
    gpc_cli_check(gpc_output_commit(out));
    return 0;
}
