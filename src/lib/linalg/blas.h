/* blas — which of OpenBLAS's kernels the tools run on.
 *
 * OpenBLAS picks its kernels for the CPU when it loads.  A release older
 * than the CPU (Debian 12 has 0.3.21; an Emerald Rapids Xeon, family 6
 * model 207, is newer) does not recognise it and falls back to its Prescott
 * kernels, SSE3 only: on such a machine a 2000 x 2000 matrix product runs at
 * 32 GFlop/s instead of 150.  gpc_blas_init chooses again from the CPU's own
 * feature flags, unless the user has chosen with OPENBLAS_CORETYPE. */
#ifndef GPC_BLAS_H
#define GPC_BLAS_H

/* Call before any BLAS work and before any thread starts: where OpenBLAS
 * fell back to Prescott on a CPU with AVX-512 (F, CD, DQ, BW, VL) or with
 * AVX2 and FMA, switch to its SkylakeX or Haswell kernels.  Idempotent. */
void gpc_blas_init(void);

/* The name of the kernels OpenBLAS runs now, e.g. "SkylakeX". */
const char *gpc_blas_core(void);

/* OpenBLAS's description of itself: version, build options, kernels. */
const char *gpc_blas_config(void);

/* The kernels OpenBLAS chose itself, before gpc_blas_init (the same as
 * gpc_blas_core when it changed nothing). */
const char *gpc_blas_detected_core(void);

/* The kernels the CPU's features call for under the rule above, or NULL
 * where the CPU has neither feature set. */
const char *gpc_blas_core_for_cpu(void);

#endif
