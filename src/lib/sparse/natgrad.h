/* natgrad — a natural-gradient step for one class's q(v) = N(m, S) in the
 * sparse variational method (gpc(7), SPARSE VARIATIONAL METHOD,
 * Optimisation).  In the Gaussian's natural parameters theta1 = S^-1 m,
 * theta2 = -1/2 S^-1 the natural gradient of the bound is its ordinary
 * gradient in the mean parameters (m, S + m m'), which is
 * (dm - 2 dS m, dS) from the bound's gradient (dm, dS) in (m, S); a step of
 * size rho is then
 *     S'^-1 = S^-1 - 2 rho dS,   S'^-1 m' = S^-1 m + rho (dm - 2 dS m).
 * With a Gaussian likelihood rho = 1 lands on the optimum in one step;
 * for the others the step size decreases over the steps. */
#ifndef GPC_NATGRAD_H
#define GPC_NATGRAD_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

/* The step above, in place; Sinv is S^-1 if the caller has it (the bound
 * computes it), else NULL.  GPC_ENUM (message set) if the new precision is
 * not positive definite (the step was too long: retry with a smaller rho);
 * m and S are then unchanged. */
int gpc_natgrad_step(gsl_vector *m, gsl_matrix *S, const gsl_matrix *Sinv, const gsl_vector *dm,
                     const gsl_matrix *dS, double rho);

#endif
