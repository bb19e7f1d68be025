/* test_score — Brier scores, AUC, reliability bins and the expected
 * calibration error on cases worked out by hand, their edge cases, and
 * properties on random data: the AUC against a count over all pairs, the
 * AUC of 1 - p, the two Brier scores of two classes, where each probability
 * falls against the edges. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "report/score.h"
#include "tap.h"

#define N_OF(a) (sizeof(a) / sizeof *(a))
#define EPS 1e-15

/* Case A, binary, five cases with a tie at 0.7:
 *   p   0.9 0.7 0.7 0.3 0.1
 *   hit 1   1   0   0   1
 * Brier: (0.1^2 + 0.3^2 + 0.7^2 + 0.3^2 + 0.9^2) / 5
 *      = (0.01 + 0.09 + 0.49 + 0.09 + 0.81) / 5 = 1.49 / 5 = 0.298.
 * AUC: positives {0.9, 0.7, 0.1} against negatives {0.7, 0.3}, 6 pairs:
 *   0.9 beats both (2), 0.7 ties 0.7 and beats 0.3 (1.5), 0.1 beats none:
 *   3.5 / 6 = 7/12.  By ranks (ascending 0.1:1, 0.3:2, 0.7:3.5, 0.7:3.5,
 *   0.9:5), R+ = 1 + 3.5 + 5 = 9.5 and U = 9.5 - 3*4/2 = 3.5: the same.
 * Two bins, [0, 0.5) and [0.5, 1]:
 *   bin 0: {0.3, 0.1}, mean p 0.2, observed 1/2, count 2
 *   bin 1: {0.9, 0.7, 0.7}, mean p 2.3/3, observed 2/3, count 3
 *   ECE = 2/5 |0.2 - 0.5| + 3/5 |2.3/3 - 2/3| = 0.12 + 0.06 = 0.18.
 * Five bins of width 0.2: {0.1} {0.3} {} {0.7, 0.7} {0.9}:
 *   ECE = (|0.1 - 1| + |0.3 - 0| + 2 |0.7 - 0.5| + |0.9 - 1|) / 5
 *       = (0.9 + 0.3 + 0.4 + 0.1) / 5 = 0.34.
 * One bin: |mean p - mean hit| = |2.7/5 - 3/5| = 0.06.
 * A thousand bins (more bins than cases): every case alone but the two at
 *   0.7, which share [0.7, 0.701): the same sum as five bins, 0.34. */
static const double a_p[] = {0.9, 0.7, 0.7, 0.3, 0.1};
static const int a_hit[] = {1, 1, 0, 0, 1};

static void check_bin(const gpc_score_bin *bin, double lo, double hi, double mean_pred,
                      double observed, size_t count, const char *what)
{
    TEST_CLOSE(bin->lo, lo, 0, 0, "%s: lo", what);
    TEST_CLOSE(bin->hi, hi, 0, 0, "%s: hi", what);
    TEST_OK(bin->count == count, "%s: count %zu (want %zu)", what, bin->count, count);
    if (count == 0) {
        TEST_OK(isnan(bin->mean_pred) && isnan(bin->observed), "%s: empty, means NaN", what);
        return;
    }
    TEST_CLOSE(bin->mean_pred, mean_pred, EPS, EPS, "%s: mean predicted", what);
    TEST_CLOSE(bin->observed, observed, EPS, EPS, "%s: observed", what);
}

static void test_binary_by_hand(void)
{
    size_t n = N_OF(a_p);
    TEST_CLOSE(gpc_score_brier_binary(a_p, a_hit, n), 0.298, EPS, EPS, "A: binary Brier");
    TEST_CLOSE(gpc_score_auc(a_p, a_hit, n), 7.0 / 12.0, EPS, 0, "A: AUC with a tie");

    gpc_score_bin two[2];
    TEST_OK(gpc_score_reliability(a_p, a_hit, n, 2, two) == GPC_OK, "A: two bins");
    check_bin(&two[0], 0, 0.5, 0.2, 0.5, 2, "A: bin [0, 0.5)");
    check_bin(&two[1], 0.5, 1, 2.3 / 3, 2.0 / 3, 3, "A: bin [0.5, 1]");
    TEST_CLOSE(gpc_score_ece(two, 2), 0.18, 1e-14, 0, "A: ECE, 2 bins");

    gpc_score_bin five[5];
    TEST_OK(gpc_score_reliability(a_p, a_hit, n, 5, five) == GPC_OK, "A: five bins");
    check_bin(&five[0], 0, 0.2, 0.1, 1, 1, "A: bin [0, 0.2)");
    check_bin(&five[1], 0.2, 0.4, 0.3, 0, 1, "A: bin [0.2, 0.4)");
    check_bin(&five[2], 0.4, 0.6, 0, 0, 0, "A: bin [0.4, 0.6)");
    check_bin(&five[3], 0.6, 0.8, 0.7, 0.5, 2, "A: bin [0.6, 0.8)");
    check_bin(&five[4], 0.8, 1, 0.9, 1, 1, "A: bin [0.8, 1]");
    TEST_CLOSE(gpc_score_ece(five, 5), 0.34, 1e-14, 0, "A: ECE, 5 bins");

    gpc_score_bin one;
    TEST_OK(gpc_score_reliability(a_p, a_hit, n, 1, &one) == GPC_OK, "A: one bin");
    check_bin(&one, 0, 1, 0.54, 0.6, 5, "A: the one bin [0, 1]");
    TEST_CLOSE(gpc_score_ece(&one, 1), 0.06, 1e-14, 0, "A: ECE, 1 bin");

    gpc_score_bin many[1000];
    TEST_OK(gpc_score_reliability(a_p, a_hit, n, 1000, many) == GPC_OK, "A: 1000 bins");
    size_t occupied = 0;
    for (size_t b = 0; b < 1000; b++)
        occupied += many[b].count > 0;
    TEST_OK(occupied == 4, "A: 1000 bins, 4 occupied (got %zu)", occupied);
    check_bin(&many[700], 0.7, 0.701, 0.7, 0.5, 2, "A: bin [0.7, 0.701)");
    check_bin(&many[999], 0.999, 1, 0, 0, 0, "A: last of 1000 bins empty");
    TEST_CLOSE(gpc_score_ece(many, 1000), 0.34, 1e-14, 0, "A: ECE, 1000 bins");
}

/* Case B, three classes, four cases (y as class indices):
 *   P = 0.7 0.2  0.1   y 0    (p - o)^2: 0.09 + 0.04 + 0.01   = 0.14
 *       0.1 0.3  0.6     2               0.01 + 0.09 + 0.16   = 0.26
 *       0.2 0.4  0.4     2               0.04 + 0.16 + 0.36   = 0.56
 *       0.5 0.25 0.25    1               0.25 + 0.5625 + 0.0625 = 0.875
 * Brier = 1.835 / 4 = 0.45875.
 * Top label (the first of equals): classes 0, 2, 1, 0 with probabilities
 *   0.7, 0.6, 0.4, 0.5; right, right, wrong (y = 2), wrong (y = 1).
 * Two bins: [0, 0.5): {0.4 wrong}, mean 0.4, observed 0, count 1;
 *   [0.5, 1]: {0.7, 0.6, 0.5}, mean 0.6, observed 2/3, count 3;
 *   ECE = 1/4 * 0.4 + 3/4 * |0.6 - 2/3| = 0.1 + 0.05 = 0.15.
 * Mean log: (log 0.7 + log 0.6 + log 0.4 + log 0.25) / 4. */
static void test_multiclass_by_hand(void)
{
    const double P[] = {0.7, 0.2, 0.1, 0.1, 0.3, 0.6, 0.2, 0.4, 0.4, 0.5, 0.25, 0.25};
    const size_t y[] = {0, 2, 2, 1};
    TEST_CLOSE(gpc_score_brier(P, 4, 3, y), 0.45875, EPS, EPS, "B: multiclass Brier");
    TEST_CLOSE(gpc_score_mean_log(P, 4, 3, y), (log(0.7) + log(0.6) + log(0.4) + log(0.25)) / 4,
               EPS, 0, "B: mean log probability");
    TEST_OK(gpc_score_argmax(P + 6, 3) == 1, "B: argmax of 0.2 0.4 0.4 is the first of equals");
    double conf[4];
    int right[4];
    gpc_score_top_label(P, 4, 3, y, conf, right);
    TEST_OK(conf[0] == 0.7 && conf[1] == 0.6 && conf[2] == 0.4 && conf[3] == 0.5,
            "B: top-label probabilities 0.7 0.6 0.4 0.5");
    TEST_OK(right[0] == 1 && right[1] == 1 && right[2] == 0 && right[3] == 0,
            "B: top label right, right, wrong, wrong");
    gpc_score_bin bins[2];
    TEST_OK(gpc_score_reliability(conf, right, 4, 2, bins) == GPC_OK, "B: two bins");
    check_bin(&bins[0], 0, 0.5, 0.4, 0, 1, "B: bin [0, 0.5)");
    check_bin(&bins[1], 0.5, 1, 0.6, 2.0 / 3, 3, "B: bin [0.5, 1]");
    TEST_CLOSE(gpc_score_ece(bins, 2), 0.15, 1e-14, 0, "B: top-label ECE");
}

/* One class only, probabilities exactly 0 and 1, bad arguments. */
static void test_edges(void)
{
    const double p[] = {0.2, 0.4};
    const int ones[] = {1, 1}, zeros[] = {0, 0};
    TEST_OK(isnan(gpc_score_auc(p, ones, 2)), "AUC of positives only is NaN");
    TEST_OK(isnan(gpc_score_auc(p, zeros, 2)), "AUC of negatives only is NaN");
    TEST_OK(isnan(gpc_score_auc(p, ones, 0)), "AUC of no case is NaN");
    gpc_score_bin one;
    gpc_score_reliability(p, ones, 2, 1, &one);
    /* mean p 0.3 against all positive: |0.3 - 1| */
    TEST_CLOSE(gpc_score_ece(&one, 1), 0.7, EPS, EPS, "ECE of one class is defined: 0.7");

    /* perfect and certain: Brier 0, AUC 1, ECE 0; 0 in the first bin and
     * 1 in the last, none in between */
    const double sure[] = {0, 1, 1, 0};
    const int sure_hit[] = {0, 1, 1, 0};
    TEST_CLOSE(gpc_score_brier_binary(sure, sure_hit, 4), 0, 0, 0, "p 0 and 1 right: Brier 0");
    TEST_CLOSE(gpc_score_auc(sure, sure_hit, 4), 1, 0, 0, "p 0 and 1 right: AUC 1");
    gpc_score_bin ten[10];
    TEST_OK(gpc_score_reliability(sure, sure_hit, 4, 10, ten) == GPC_OK, "p 0 and 1: ten bins");
    check_bin(&ten[0], 0, 0.1, 0, 0, 2, "p = 0 in the first bin");
    check_bin(&ten[9], 0.9, 1, 1, 1, 2, "p = 1 in the last bin");
    for (size_t b = 1; b < 9; b++)
        TEST_OK(ten[b].count == 0 && isnan(ten[b].mean_pred), "bin %zu empty", b);
    TEST_CLOSE(gpc_score_ece(ten, 10), 0, 0, 0, "p 0 and 1 right: ECE 0");
    /* all wrong: Brier 1, AUC 0, ECE 1 */
    const int wrong[] = {1, 0, 0, 1};
    TEST_CLOSE(gpc_score_brier_binary(sure, wrong, 4), 1, 0, 0, "p 0 and 1 wrong: Brier 1");
    TEST_CLOSE(gpc_score_auc(sure, wrong, 4), 0, 0, 0, "p 0 and 1 wrong: AUC 0");
    gpc_score_reliability(sure, wrong, 4, 3, ten);
    TEST_CLOSE(gpc_score_ece(ten, 3), 1, 0, 0, "p 0 and 1 wrong: ECE 1");
    /* every score tied: AUC 1/2 */
    const double flat[] = {0.5, 0.5, 0.5};
    const int mixed[] = {1, 0, 1};
    TEST_CLOSE(gpc_score_auc(flat, mixed, 3), 0.5, 0, 0, "all tied: AUC 1/2");

    TEST_OK(gpc_score_reliability(p, ones, 2, 0, &one) == GPC_EUSAGE, "no bins: usage error");
    const double bad[] = {0.5, 1.5}, nan_p[] = {NAN, 0.5};
    TEST_OK(gpc_score_reliability(bad, ones, 2, 2, ten) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "case 2: 1.5 is not a probability"),
            "1.5 is not a probability (%s)", gpc_errmsg());
    const double above[] = {0.5, 1.0000001};
    TEST_OK(gpc_score_reliability(above, ones, 2, 2, ten) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "case 2: 1.0000001000000001 is not a probability"),
            "1.0000001 shown to the digit that makes it no probability (%s)", gpc_errmsg());
    TEST_OK(gpc_score_reliability(nan_p, ones, 2, 2, ten) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "case 1"),
            "NaN is not a probability (%s)", gpc_errmsg());
    gpc_score_reliability(p, ones, 0, 2, ten);
    TEST_OK(isnan(gpc_score_ece(ten, 2)), "ECE of no case is NaN");
}

/* A probability equal to an edge b/B, as stored, is in bin b, and the
 * largest double below it in bin b - 1: the bins hold what their printed
 * edges say, whatever p * B rounds to. */
static void test_edges_as_stored(void)
{
    int ok = 1;
    gpc_score_bin bins[200];
    const int hit[] = {1, 1};
    for (size_t B = 1; B <= 200 && ok; B++)
        for (size_t b = 1; b < B && ok; b++) {
            double p[] = {(double)b / (double)B, nextafter((double)b / (double)B, 0)};
            gpc_score_reliability(p, hit, 2, B, bins);
            ok = bins[b].count == 1 && bins[b].mean_pred == p[0] && bins[b - 1].count == 1 &&
                 bins[b - 1].mean_pred == p[1];
            if (!ok)
                printf("# B %zu, edge %zu: counts %zu %zu\n", B, b, bins[b - 1].count,
                       bins[b].count);
        }
    TEST_OK(ok, "an edge b/B falls in bin b, just below it in bin b - 1, B up to 200");
}

/* Random probabilities on a grid of 0.05 (so that many tie) and outcomes. */
static void random_cases(gsl_rng *r, double *p, int *hit, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (double)gsl_rng_uniform_int(r, 21) / 20.0;
        hit[i] = gsl_rng_uniform(r) < 0.3 + 0.4 * p[i];
    }
}

/* The Mann-Whitney statistic over every pair, as 2 wins + ties. */
static double auc_by_pairs(const double *p, const int *hit, size_t n)
{
    double twice = 0, pairs = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (hit[i] && !hit[j]) {
                twice += p[i] > p[j] ? 2 : p[i] == p[j];
                pairs++;
            }
    return twice / (2 * pairs);
}

static void test_random(void)
{
    enum { N = 300 };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 20170614);
    double p[N], q[N], P2[2 * N];
    int hit[N];
    size_t y[N];
    for (int rep = 0; rep < 5; rep++) {
        size_t n = 20 + (size_t)rep * 70;
        random_cases(r, p, hit, n);
        double auc = gpc_score_auc(p, hit, n);
        TEST_CLOSE(auc, auc_by_pairs(p, hit, n), 1e-15, 0, "AUC by ranks = pair count, n %zu",
                   n);
        for (size_t i = 0; i < n; i++)
            q[i] = 1 - p[i];
        TEST_CLOSE(gpc_score_auc(q, hit, n), 1 - auc, 1e-15, 1e-15,
                   "AUC(1 - p) = 1 - AUC(p), n %zu", n);
        for (size_t i = 0; i < n; i++) {
            P2[2 * i] = 1 - p[i];
            P2[2 * i + 1] = p[i];
            y[i] = (size_t)hit[i];
        }
        TEST_CLOSE(gpc_score_brier(P2, n, 2, y), 2 * gpc_score_brier_binary(p, hit, n), 1e-15, 0,
                   "two classes: multiclass Brier = twice the binary, n %zu", n);
        /* bins partition the cases, each within its edges, and their means
         * weighted by count are the overall means */
        gpc_score_bin bins[7];
        gpc_score_reliability(p, hit, n, 7, bins);
        size_t total = 0;
        double sum_pred = 0, sum_hit = 0, want_pred = 0, want_hit = 0;
        int within = 1;
        for (size_t b = 0; b < 7; b++) {
            total += bins[b].count;
            if (bins[b].count == 0)
                continue;
            sum_pred += bins[b].count * bins[b].mean_pred;
            sum_hit += bins[b].count * bins[b].observed;
            within = within && bins[b].mean_pred >= bins[b].lo && bins[b].mean_pred <= bins[b].hi;
        }
        for (size_t i = 0; i < n; i++) {
            want_pred += p[i];
            want_hit += hit[i];
        }
        TEST_OK(total == n && within, "7 bins: counts sum to %zu, means within edges", n);
        TEST_CLOSE(sum_pred, want_pred, 1e-12, 0, "7 bins: weighted mean p, n %zu", n);
        TEST_CLOSE(sum_hit, want_hit, 1e-12, 0, "7 bins: weighted observed, n %zu", n);
    }
    gsl_rng_free(r);
}

/* Rows of class probabilities: one off by rounding passes, one short of 1
 * by a tenth, one over it, and one with a NaN sum do not, the message
 * naming the column where the probabilities start and their sum. */
static void test_check_sum(void)
{
    const double third[] = {1.0 / 3, 1.0 / 3, 1.0 / 3}, rounded[] = {0.3333333, 0.3333333,
                                                                     0.3333333};
    const double shy[] = {0.3, 0.3, 0.3}, over[] = {0.5, 0.5, 0.2}, nan3[] = {0.5, NAN, 0.5};
    TEST_OK(gpc_score_check_sum(third, 3, 1) == GPC_OK, "sum: thirds pass");
    TEST_OK(gpc_score_check_sum(rounded, 3, 1) == GPC_OK, "sum: thirds to 7 digits pass");
    TEST_OK(gpc_score_check_sum(shy, 3, 2) == GPC_EINPUT, "sum: 0.9 fails");
    TEST_OK(!strcmp(gpc_errmsg(), "the 3 class probabilities from column 2 sum to 0.9, not 1"),
            "sum: the message names the column and the sum: %s", gpc_errmsg());
    TEST_OK(gpc_score_check_sum(over, 3, 1) == GPC_EINPUT, "sum: 1.2 fails");
    TEST_OK(gpc_score_check_sum(nan3, 3, 1) == GPC_EINPUT, "sum: NaN fails");
}

int main(void)
{
    test_binary_by_hand();
    test_multiclass_by_hand();
    test_edges();
    test_edges_as_stored();
    test_random();
    test_check_sum();
    return tap_done();
}
