#include "linalg/vmath.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* glibc's libmvec, by the x86-64 vector function ABI's names; declared for
 * the instruction sets they take their vectors in, which clang needs to
 * pass a vector register to them.  For each function f: f_avx2 and
 * f_avx512 apply it to the whole vectors of x and return how many. */
#define VECTOR_FUNCTION(f)                                                       \
    __attribute__((target("avx2,fma"))) __m256d _ZGVdN4v_##f(__m256d x);         \
    __attribute__((target("avx512f"))) __m512d _ZGVeN8v_##f(__m512d x);          \
    __attribute__((target("avx2,fma"))) static size_t f##_avx2(double *x, size_t n) \
    {                                                                            \
        size_t i = 0;                                                            \
        for (; i + 4 <= n; i += 4)                                               \
            _mm256_storeu_pd(x + i, _ZGVdN4v_##f(_mm256_loadu_pd(x + i)));       \
        return i;                                                                \
    }                                                                            \
    __attribute__((target("avx512f"))) static size_t f##_avx512(double *x, size_t n) \
    {                                                                            \
        size_t i = 0;                                                            \
        for (; i + 8 <= n; i += 8)                                               \
            _mm512_storeu_pd(x + i, _ZGVeN8v_##f(_mm512_loadu_pd(x + i)));       \
        return i;                                                                \
    }

VECTOR_FUNCTION(exp)
VECTOR_FUNCTION(log)
VECTOR_FUNCTION(erfc)

enum { SCALAR, AVX2, AVX512 };

/* libgcc reads the CPU's features before main; asking is a load */
static int vector_level(void)
{
    if (__builtin_cpu_supports("avx512f"))
        return AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return AVX2;
    return SCALAR;
}

#define VECTORISED(f, x, n)                                                      \
    (vector_level() == AVX512 ? f##_avx512(x, n) : vector_level() == AVX2 ? f##_avx2(x, n) : 0)
#else
#define VECTORISED(f, x, n) 0
#endif

#define ARRAY_FUNCTION(name, f)                                                  \
    void name(double *x, size_t n)                                               \
    {                                                                            \
        for (size_t i = VECTORISED(f, x, n); i < n; i++)                         \
            x[i] = f(x[i]);                                                      \
    }

ARRAY_FUNCTION(gpc_exp_array, exp)
ARRAY_FUNCTION(gpc_log_array, log)
ARRAY_FUNCTION(gpc_erfc_array, erfc)
