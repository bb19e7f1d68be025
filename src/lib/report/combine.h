/* combine — fixed rules for combining the class probabilities that several
 * classifiers (e.g. one per feature set) give the same cases (Kittler,
 * Hatef, Duin & Matas 1998), the baselines data integration is compared
 * with:
 *   sum      the mean of the J probabilities of each class;
 *   product  their product, normalised over the classes: the classifiers'
 *            likelihoods multiplied under equal class priors, computed in
 *            logs so that no case underflows.
 * A matrix of one column holds p(y = +1) of a binary problem, the other
 * class's probability its complement. */
#ifndef GPC_COMBINE_H
#define GPC_COMBINE_H

#include <stddef.h>

#include <gsl/gsl_matrix.h>

typedef enum { GPC_COMBINE_SUM, GPC_COMBINE_PRODUCT } gpc_combine_rule;

/* "sum" or "product"; GPC_EUSAGE (message set) otherwise. */
int gpc_combine_parse(const char *name, gpc_combine_rule *rule);

/* out (m x C) from the J matrices p[j] (m x C each, probabilities in
 * [0, 1]).  With the product rule a case that some classifier gives
 * probability 0 in every class it is not 0 in elsewhere has no answer:
 * GPC_ENUM naming the case (1-based). */
int gpc_combine(gpc_combine_rule rule, gsl_matrix *const *p, size_t J, gsl_matrix *out);

#endif
