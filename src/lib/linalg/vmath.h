/* vmath — exp, log and erfc over an array, several at a time where the CPU
 * can.
 *
 * The kernel matrices of the squared-exponential kernels spend much of their
 * time in exp, one call per pair of inputs, and the multinomial probit's
 * integrals in erfc, log and exp, hundreds per case.  Where the CPU has
 * AVX-512 or AVX2 with FMA, glibc's vector library (libmvec) takes eight or
 * four at a time, within a few ulp of libm (test_vmath measures it);
 * elsewhere, and for the last few, libm.  The choice follows the CPU, so
 * results are the same from run to run on one machine. */
#ifndef GPC_VMATH_H
#define GPC_VMATH_H

#include <stddef.h>

/* x[i] <- exp(x[i]) for i < n. */
void gpc_exp_array(double *x, size_t n);
/* x[i] <- log(x[i]) for i < n. */
void gpc_log_array(double *x, size_t n);
/* x[i] <- erfc(x[i]) for i < n. */
void gpc_erfc_array(double *x, size_t n);

#endif
