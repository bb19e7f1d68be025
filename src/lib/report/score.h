/* score — how good class probabilities are against the true classes: the
 * mean log predictive probability, the Brier score, the area under the ROC
 * curve, and calibration (reliability bins and the expected calibration
 * error).
 *
 * Everything works on plain arrays, so that a tool that scores predictions
 * and one that draws reliability diagrams share the same numbers:
 *   - class probabilities as an n x C row-major array P (row i: case i's
 *     probability of each class, in the classes' order) with the true class
 *     indices y[i] in 0 .. C-1;
 *   - or one probability per case, pred[i] in [0, 1], with an outcome
 *     hit[i] (1: the event the probability is of happened, 0: it did not),
 *     e.g. p(y = +1) and [y = +1], or the top label's probability and
 *     whether the top label was right (gpc_score_top_label). */
#ifndef GPC_SCORE_H
#define GPC_SCORE_H

#include <stddef.h>

/* The class a case is predicted to be: the most probable of its C
 * probabilities, the first of equals. */
size_t gpc_score_argmax(const double *p, size_t C);

/* How far from 1 the sum of a case's class probabilities may be: a
 * predictor's rows (gpc-predict's, written with %.17g) miss it by rounding
 * only, far below this, while columns that are not its p columns (a
 * label, a latent mean) miss it by far more. */
#define GPC_SCORE_SUM_TOL 1e-6

/* GPC_OK when the C class probabilities p of one case sum to 1 within
 * GPC_SCORE_SUM_TOL; else GPC_EINPUT with the message "the C class
 * probabilities from column COL sum to S, not 1", col the column (from 1)
 * where they start, for the caller to put after its file and row.  A sum
 * that is not a number does not pass. */
int gpc_score_check_sum(const double *p, size_t C, size_t col);

/* The mean over the n cases of log P[i][y[i]] (natural log; -inf when a
 * true class has probability 0). */
double gpc_score_mean_log(const double *P, size_t n, size_t C, const size_t *y);

/* Brier's score (Brier 1950), summed over the classes: the mean over the
 * cases of sum_k (P[i][k] - [y[i] = k])^2.  From 0 (perfect) to 2.  For two
 * classes this is twice gpc_score_brier_binary, which counts the error of
 * one class only. */
double gpc_score_brier(const double *P, size_t n, size_t C, const size_t *y);

/* The binary Brier score: the mean over the cases of (pred[i] - hit[i])^2,
 * pred[i] the probability of the positive class and hit[i] 1 when case i is
 * of it.  From 0 (perfect) to 1. */
double gpc_score_brier_binary(const double *pred, const int *hit, size_t n);

/* The area under the ROC curve of scores pred[i] for positives (hit[i] 1)
 * against negatives (hit[i] 0): the probability that a random positive
 * case scores higher than a random negative one, a tie counting one half
 * (the Mann-Whitney statistic over n+ n- pairs), computed exactly from the
 * ranks in O(n log n).  NaN when there is no positive or no negative case
 * (the AUC is then undefined). */
double gpc_score_auc(const double *pred, const int *hit, size_t n);

/* One bin of a reliability diagram: the cases whose predicted probability
 * is in [lo, hi) ([lo, 1] for the last bin). */
typedef struct {
    double lo, hi;    /* edges: b/B and (b+1)/B of B equal-width bins */
    double mean_pred; /* mean predicted probability of its cases; NaN if empty */
    double observed;  /* fraction of its cases with hit 1; NaN if empty */
    size_t count;     /* number of its cases */
} gpc_score_bin;

/* Fill bins[0 .. nbins-1] with the nbins equal-width bins over [0, 1] of
 * the n cases (pred[i], hit[i]).  A probability of exactly 1 goes in the
 * last bin, one equal to an inner edge in the bin the edge starts, by the
 * edges as stored (so a case lies between its bin's lo and hi as printed).
 * GPC_EUSAGE for nbins 0, GPC_EINPUT for a pred outside [0, 1] or NaN
 * (naming the case, from 1), else GPC_OK. */
int gpc_score_reliability(const double *pred, const int *hit, size_t n, size_t nbins,
                          gpc_score_bin *bins);

/* The expected calibration error of filled bins: sum over bins of
 * (count_b / n) |mean_pred_b - observed_b|, n the cases in all of them
 * (empty bins add nothing).  NaN when every bin is empty. */
double gpc_score_ece(const gpc_score_bin *bins, size_t nbins);

/* For each of the n cases of P (n x C, row-major): the probability of its
 * predicted class (gpc_score_argmax) in confidence[i], and 1 in correct[i]
 * when that class is y[i], else 0: the top-label calibration of Guo et al.
 * (2017), whose ECE is that of gpc_score_reliability over these. */
void gpc_score_top_label(const double *P, size_t n, size_t C, const size_t *y,
                         double *confidence, int *correct);

#endif
