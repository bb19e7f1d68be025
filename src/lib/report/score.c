/* score — log predictive probability, Brier score, AUC and calibration bins. */
#include "report/score.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "base/err.h"

size_t gpc_score_argmax(const double *p, size_t C)
{
    size_t best = 0;
    for (size_t c = 1; c < C; c++)
        if (p[c] > p[best])
            best = c;
    return best;
}

int gpc_score_check_sum(const double *p, size_t C, size_t col)
{
    double sum = 0.0;
    for (size_t c = 0; c < C; c++)
        sum += p[c];
    if (!(fabs(sum - 1.0) <= GPC_SCORE_SUM_TOL))
        return gpc_fail(GPC_EINPUT, "the %zu class probabilities from column %zu sum to "
                        "%.10g, not 1", C, col, sum);
    return GPC_OK;
}

double gpc_score_mean_log(const double *P, size_t n, size_t C, const size_t *y)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += log(P[i * C + y[i]]);
    return sum / n;
}

double gpc_score_brier(const double *P, size_t n, size_t C, const size_t *y)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double b = 0.0;
        for (size_t k = 0; k < C; k++) {
            double d = P[i * C + k] - (k == y[i]);
            b += d * d;
        }
        sum += b;
    }
    return sum / n;
}

double gpc_score_brier_binary(const double *pred, const int *hit, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = pred[i] - (hit[i] != 0);
        sum += d * d;
    }
    return sum / n;
}

typedef struct {
    double score;
    int positive;
} scored_case;

static int by_score(const void *a, const void *b)
{
    double x = ((const scored_case *)a)->score, y = ((const scored_case *)b)->score;
    return (x > y) - (x < y);
}

/* Sorted by score, the cases fall in groups of equal scores.  A positive
 * case of a group wins against every negative case of the groups below and
 * ties with the negatives of its own group: twice its wins are
 * 2 (negatives below) + (negatives in the group).  This is the rank-sum
 * form of the Mann-Whitney statistic with midranks for ties, kept in whole
 * numbers so that the only rounding is the final division. */
double gpc_score_auc(const double *pred, const int *hit, size_t n)
{
    scored_case *cases = gpc_mallocarray(n ? n : 1, sizeof *cases);
    uint64_t npos = 0, nneg = 0, twice_wins = 0;
    for (size_t i = 0; i < n; i++) {
        cases[i] = (scored_case){pred[i], hit[i] != 0};
        npos += cases[i].positive;
    }
    qsort(cases, n, sizeof *cases, by_score);
    for (size_t start = 0, end; start < n; start = end) {
        uint64_t pos_here = 0, neg_here = 0;
        for (end = start; end < n && cases[end].score == cases[start].score; end++) {
            pos_here += cases[end].positive;
            neg_here += !cases[end].positive;
        }
        twice_wins += pos_here * (2 * nneg + neg_here);
        nneg += neg_here;
    }
    free(cases);
    if (npos == 0 || nneg == 0)
        return NAN;
    return (double)twice_wins / (2.0 * (double)npos * (double)nneg);
}

/* The bin of a probability p in [0, 1] among nbins with edges b / nbins:
 * p * nbins rounded down, moved by one where rounding put it on the wrong
 * side of an edge as the edges are stored. */
static size_t bin_of(double p, size_t nbins)
{
    size_t b = (size_t)(p * (double)nbins);
    if (b >= nbins)
        b = nbins - 1;
    if (b > 0 && p < (double)b / (double)nbins)
        b--;
    else if (b + 1 < nbins && p >= (double)(b + 1) / (double)nbins)
        b++;
    return b;
}

int gpc_score_reliability(const double *pred, const int *hit, size_t n, size_t nbins,
                          gpc_score_bin *bins)
{
    if (nbins == 0)
        return gpc_fail(GPC_EUSAGE, "a reliability diagram needs at least one bin");
    for (size_t i = 0; i < n; i++)
        if (!(pred[i] >= 0.0 && pred[i] <= 1.0))
            return gpc_fail(GPC_EINPUT, "case %zu: %.17g is not a probability", i + 1, pred[i]);
    /* sums first, in mean_pred and observed, then divided */
    for (size_t b = 0; b < nbins; b++)
        bins[b] = (gpc_score_bin){(double)b / (double)nbins, (double)(b + 1) / (double)nbins,
                                  0.0, 0.0, 0};
    for (size_t i = 0; i < n; i++) {
        gpc_score_bin *bin = &bins[bin_of(pred[i], nbins)];
        bin->mean_pred += pred[i];
        bin->observed += hit[i] != 0;
        bin->count++;
    }
    for (size_t b = 0; b < nbins; b++) {
        if (bins[b].count == 0) {
            bins[b].mean_pred = bins[b].observed = NAN;
            continue;
        }
        bins[b].mean_pred /= (double)bins[b].count;
        bins[b].observed /= (double)bins[b].count;
    }
    return GPC_OK;
}

double gpc_score_ece(const gpc_score_bin *bins, size_t nbins)
{
    size_t n = 0;
    for (size_t b = 0; b < nbins; b++)
        n += bins[b].count;
    if (n == 0)
        return NAN;
    double ece = 0.0;
    for (size_t b = 0; b < nbins; b++)
        if (bins[b].count > 0)
            ece += (double)bins[b].count / (double)n *
                   fabs(bins[b].mean_pred - bins[b].observed);
    return ece;
}

void gpc_score_top_label(const double *P, size_t n, size_t C, const size_t *y,
                         double *confidence, int *correct)
{
    for (size_t i = 0; i < n; i++) {
        size_t top = gpc_score_argmax(P + i * C, C);
        confidence[i] = P[i * C + top];
        correct[i] = top == y[i];
    }
}
