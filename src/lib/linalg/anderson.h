/* anderson — Anderson acceleration of a fixed-point map x -> G(x)
 * (Anderson 1965; Walker & Ni 2011), for the iterations whose plain steps
 * crawl: nested EP's parallel site updates and VB's mean-field sweeps.
 *
 * With r = G(x) - x and the last k changes of x and r between successive
 * iterates as the columns of dX and dR,
 *     gamma = argmin |r - dR gamma|,   step = d r - (dX + d dR) gamma,
 * d the damping of the plain step x + d r.  On a linear map this is GMRES
 * restarted every k steps: the few slow directions that make the plain
 * steps crawl are resolved in about as many steps.  The small least-squares
 * problem is solved by its normal equations, regularised by 1e-12 of their
 * trace.  The caller keeps the safeguards (a step that fails its test falls
 * back to the plain step, and the history is forgotten). */
#ifndef GPC_ANDERSON_H
#define GPC_ANDERSON_H

#include <stddef.h>

typedef struct {
    size_t N, depth; /* vector length, changes remembered */
    size_t k, next;  /* changes held, the column the next one goes to */
    int has_last;    /* xold, rold hold the previous iterate */
    double *dX, *dR; /* N x depth: the changes of x and r */
    double *xold, *rold;
} gpc_anderson;

gpc_anderson *gpc_anderson_alloc(size_t N, size_t depth);
void gpc_anderson_free(gpc_anderson *a);
/* Bytes a workspace for N and depth takes (saturating). */
size_t gpc_anderson_bytes(size_t N, size_t depth);

/* Forget the history. */
void gpc_anderson_reset(gpc_anderson *a);

/* Record the iterate x with its residual r = G(x) - x: the change from the
 * previous recorded iterate joins the history. */
void gpc_anderson_push(gpc_anderson *a, const double *x, const double *r);

/* The accelerated step from the last pushed iterate (whose residual is r)
 * into step (length N); 0, or -1 without a history or when the small
 * system is singular (step then untouched). */
int gpc_anderson_step(const gpc_anderson *a, const double *r, double d, double *step);

#endif
