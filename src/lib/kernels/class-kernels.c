#include "kernels/class-kernels.h"

#include <math.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "base/err.h"

size_t gpc_class_kernels_nparams(const gpc_kernel *k, int *per_class)
{
    size_t copies = gpc_kernel_copies(k);
    *per_class = copies > 1;
    return gpc_kernel_nparams(k) / copies;
}

gpc_class_kernels *gpc_class_kernels_alloc(const gpc_kernel *k, size_t C)
{
    gpc_class_kernels *ck = gpc_calloc(1, sizeof *ck);
    size_t copies = gpc_kernel_copies(k);
    ck->C = C;
    ck->nK = copies > 1 ? C : 1;
    ck->nparams = gpc_kernel_nparams(k) / copies;
    ck->k = gpc_calloc(ck->nK, sizeof *ck->k);
    for (size_t c = 0; c < ck->nK; c++) {
        ck->k[c] = gpc_kernel_base(k);
        if (copies == ck->nK)
            gpc_kernel_set_params(ck->k[c], gpc_kernel_params(k) + c * ck->nparams);
    }
    return ck;
}

void gpc_class_kernels_free(gpc_class_kernels *ck)
{
    if (!ck)
        return;
    for (size_t c = 0; c < ck->nK; c++)
        gpc_kernel_free(ck->k[c]);
    free(ck->k);
    free(ck);
}

const gpc_kernel *gpc_class_kernel(const gpc_class_kernels *ck, size_t c)
{
    return ck->k[ck->nK > 1 ? c : 0];
}

int gpc_class_kernels_set(gpc_class_kernels *ck, const gpc_kernel *k, const char *title)
{
    size_t copies = gpc_kernel_copies(k), p = gpc_kernel_nparams(k) / copies;
    if (copies != ck->nK || p != ck->nparams)
        return gpc_fail(GPC_EUSAGE, "kernel '%s' has %zu sets of %zu hyperparameters; %s over "
                        "%zu classes was set up for %zu of %zu", gpc_kernel_spec(k), copies, p,
                        title, ck->C, ck->nK, ck->nparams);
    for (size_t c = 0; c < copies; c++)
        gpc_kernel_set_params(ck->k[c], gpc_kernel_params(k) + c * p);
    return GPC_OK;
}

gpc_class_cross *gpc_class_cross_alloc(const gpc_class_kernels *ck, const gsl_matrix *X,
                                       const gsl_matrix *Xs)
{
    gpc_class_cross *cc = gpc_calloc(1, sizeof *cc);
    cc->nK = ck->nK;
    cc->Ks = gpc_calloc(ck->nK, sizeof *cc->Ks);
    cc->kss = gpc_calloc(ck->nK, sizeof *cc->kss);
    for (size_t c = 0; c < ck->nK; c++) {
        cc->Ks[c] = gpc_matrix_alloc(X->size1, Xs->size1);
        cc->kss[c] = gpc_vector_alloc(Xs->size1);
        gpc_kernel_cross(ck->k[c], X, Xs, cc->Ks[c]);
        gpc_kernel_diag(ck->k[c], Xs, cc->kss[c]);
    }
    return cc;
}

void gpc_class_cross_free(gpc_class_cross *cc)
{
    if (!cc)
        return;
    for (size_t c = 0; c < cc->nK; c++) {
        gsl_matrix_free(cc->Ks[c]);
        gsl_vector_free(cc->kss[c]);
    }
    free(cc->Ks);
    free(cc->kss);
    free(cc);
}

int gpc_class_indices(const gsl_vector *y, size_t C, size_t *cls)
{
    for (size_t i = 0; i < y->size; i++) {
        double c = gsl_vector_get(y, i);
        if (!(c >= 0.0 && c < (double)C && c == floor(c)))
            return gpc_fail(GPC_EUSAGE, "label %g of case %zu is not a class index below %zu",
                            c, i + 1, C);
        cls[i] = (size_t)c;
    }
    return GPC_OK;
}
