/* surface — the numbers behind a decision surface: a plane through a
 * model's inputs, on a grid, in the user's units.
 *
 * Two inputs, the axes, vary over the grid; every other input is held at a
 * value of its own (by default its mean over the training inputs), so a
 * model of any width can be looked at one slice at a time.  When the model
 * was fitted on inputs standardised by gpc-scale, the user thinks in the
 * original units: the axes, the held values and the training points are
 * then in those units, and each grid point is standardised with gpc-scale's
 * statistics before the model sees it, exactly as `gpc-scale -r` would
 * standardise it (so gpc-predict on those inputs gives the same numbers).
 *
 * Drawing is plot.h's; this module only computes. */
#ifndef GPC_SURFACE_H
#define GPC_SURFACE_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>

typedef struct {
    size_t dim;          /* the model's input columns */
    size_t axis[2];      /* the inputs across and up, 0-based and distinct */
    const double *at;    /* dim values in user units where the plane lies;
                          * those of the two axes are not used */
    const double *mean;  /* per input, x_model = (x - mean) / sd; both NULL */
    const double *sd;    /* when the model's units are the user's */
    double lo[2], hi[2]; /* the grid's corners along the axes, user units */
    size_t grid;         /* points per side, >= 2 */
} gpc_surface;

/* gpc-scale's statistics (a 2 x dim matrix: means, then standard
 * deviations) as mean and sd, each of dim values, with a constant column's
 * sd taken as 1, as gpc-scale applies them.  GPC_EINPUT, naming what,
 * when the matrix is not 2 x dim or an sd is negative or not finite. */
int gpc_surface_scaling(const gsl_matrix *stats, size_t dim, const char *what, double *mean,
                        double *sd);

/* Input j between the user's units and the model's. */
double gpc_surface_to_model(const gpc_surface *s, size_t j, double x);
double gpc_surface_to_user(const gpc_surface *s, size_t j, double z);

/* The means of the columns of X (the model's training inputs, model units)
 * in user units, into at (dim values). */
void gpc_surface_means(const gpc_surface *s, const gsl_matrix *X, double *at);

/* lo and hi along the axes: the training inputs' range (user units)
 * widened by margin times its length on each side (by margin itself, or 1
 * when margin is 0, when all the values are equal). */
void gpc_surface_extent(gpc_surface *s, const gsl_matrix *X, double margin);

/* The user-unit coordinate of grid index i along axis a (0 or 1). */
double gpc_surface_coord(const gpc_surface *s, size_t a, size_t i);

/* The grid's points as model inputs: grid * grid rows of dim columns, row
 * i * grid + j at axis values (coord(0, i), coord(1, j)), the other
 * columns at their held values, all in model units. */
gsl_matrix *gpc_surface_inputs(const gpc_surface *s);

/* The training inputs X (model units) projected on the plane: n x 2, the
 * two axes' values in user units. */
gsl_matrix *gpc_surface_points(const gpc_surface *s, const gsl_matrix *X);

/* Per row of class probabilities P (n x C), the most probable class (the
 * first of equals) and its probability. */
void gpc_surface_top(const gsl_matrix *P, size_t *cls, double *p);

#endif
