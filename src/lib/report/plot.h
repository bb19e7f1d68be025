/* plot — pictures drawn by gnuplot: a reliability diagram, the traces of
 * hyperparameter chains, and the decision surface of a model on a plane
 * through its inputs.
 *
 * A picture is made in a temporary directory of its own: a gnuplot script
 * and its data files are written there, `gnuplot -d SCRIPT` (no init files,
 * so a user's ~/.gnuplot cannot change the picture) draws it to a file
 * there, and gpc_plot_run copies that file to the caller's stream (an
 * output from output.h, committed by the caller).  The directory is removed
 * by gpc_plot_free and, if the program dies first, by gpc_die or by the
 * handler of a fatal signal (output.h), which also stops a gnuplot still
 * running: every file in it, ours or gnuplot's, is recorded by its path
 * before it is made, so that the handler need only unlink them.
 *
 * Terminals: pngcairo for PNG, svg for SVG (Debian's gnuplot-nox has both).
 * Text is drawn as given ("noenhanced": log_w1 is not a subscript), and
 * every string in a script is a gnuplot single-quoted literal. */
#ifndef GPC_PLOT_H
#define GPC_PLOT_H

#include <stdio.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "report/score.h"
#include "sampling/chain.h"

typedef enum { GPC_PLOT_PNG, GPC_PLOT_SVG } gpc_plot_format;

/* "png" or "svg" (GPC_EUSAGE otherwise). */
int gpc_plot_format_parse(const char *name, gpc_plot_format *fmt);
/* The format a file name's suffix says (.png, .svg, any case; png when the
 * name has no suffix, as /dev/stdout); GPC_EUSAGE for another suffix. */
int gpc_plot_format_of_path(const char *path, gpc_plot_format *fmt);

typedef struct gpc_plot gpc_plot;

/* A picture: makes the directory (under $TMPDIR or /tmp) and the script.
 * GPC_EINPUT when the directory cannot be made. */
int gpc_plot_open(gpc_plot_format fmt, gpc_plot **out);
/* Its size in pixels (default 640 x 480), settable until gpc_plot_run: the
 * terminal is set by a script of its own run first, so a figure can be
 * sized by what it found in its data. */
void gpc_plot_size(gpc_plot *p, int width, int height);
/* The script, to write gnuplot commands to. */
FILE *gpc_plot_script(gpc_plot *p);
/* A new data file called name (a plain file name) in the directory, or NULL
 * with a message (gpc_errmsg). */
FILE *gpc_plot_data_open(gpc_plot *p, const char *name);
/* Close a data file, checking that it was written whole. */
int gpc_plot_data_close(gpc_plot *p, FILE *f);
/* s as a gnuplot string literal ('it''s'), to f. */
void gpc_plot_put_string(FILE *f, const char *s);
/* The path of data file name as a gnuplot string literal, to the script
 * (and recorded for removal: gnuplot may be the one to write it). */
void gpc_plot_put_data(gpc_plot *p, const char *name);
/* Run gnuplot on the script and copy the picture to out (called name in
 * messages), only once it is seen to be whole.  GPC_EINPUT, with a message
 * that says to install gnuplot-nox, when gnuplot cannot be run or fails
 * (its last message in the message) or draws nothing; with one that names
 * a full disk when the script, the data or the picture could not be
 * written whole (gnuplot exits 0 after a failed write); and "name: write
 * error: ..." when out cannot be written. */
int gpc_plot_run(gpc_plot *p, FILE *out, const char *name);
/* Remove the directory and everything in it. */
void gpc_plot_free(gpc_plot *p);

/* ---- figures ------------------------------------------------------------- */

/* A reliability diagram of filled bins (score.h): mean predicted probability
 * against observed frequency per non-empty bin, with the diagonal, and below
 * it the number of cases per bin; the ECE in the key.  top_label: the
 * probabilities are the top class's confidence (multiclass), else p(y=+1).
 * title: the figure's title. */
int gpc_plot_reliability(gpc_plot *p, const gpc_score_bin *bins, size_t nbins, int top_label,
                         const char *title);

/* One panel per hyperparameter of the chains (which must name the same
 * ones, in the same order), in a grid, each chain a line of its own colour
 * named by names[i]; the first burn iterations of every panel shaded and
 * marked 'burn-in' (nothing when burn is 0). */
int gpc_plot_trace(gpc_plot *p, gpc_chain *const *chains, char *const *names, size_t nchains,
                   size_t burn, const char *title);
/* Rows and columns of the panel grid for k panels: about square, wider than
 * tall. */
void gpc_plot_grid_shape(size_t k, size_t *rows, size_t *cols);

/* A decision surface on a grid x grid lattice over [lo[0], hi[0]] x
 * [lo[1], hi[1]] (surface.h computes it), with the training points marked
 * by class (shape and colour) and named by class in the key.  Binary: the
 * probability p(y=+1) as a heat map from blue through white to red, with
 * contours at 0.1 .. 0.9 and the 0.5 one drawn heavy.  Multiclass: the
 * most probable class as regions of its colour, paler where its
 * probability is lower, the colour box naming the classes, and contours of
 * that probability at 0.5, 0.7 and 0.9. */
typedef struct {
    size_t grid;                /* points per side, >= 2 */
    double lo[2], hi[2];        /* the lattice's corners */
    size_t nclasses;            /* C, 2 for a binary model */
    const double *prob;         /* grid * grid values: prob[i * grid + j] at
                                 * (x1, x2) = (lo[0] + i h1, lo[1] + j h2);
                                 * p(y=+1), or the most probable class's */
    const size_t *cls;          /* multiclass: that class (0..C-1) per point;
                                 * NULL for a binary model */
    const gsl_matrix *points;   /* the training points on the plane, n x 2, or NULL
                                 * (a model that keeps none) */
    const size_t *point_class;  /* their classes, 0..C-1 (binary: 0 is y = -1) */
    char *const *classes;       /* the C classes' names */
    const char *axes[2];        /* the inputs' names */
    const char *title;
    const char *note;           /* a second line under the title (where the
                                 * plane lies), or "" */
} gpc_plot_surface_data;

int gpc_plot_surface(gpc_plot *p, const gpc_plot_surface_data *s);

#endif
