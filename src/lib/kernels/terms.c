#include "kernels/kernel-impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_math.h>

/* A Matern or rq term: q from the columns, then its profile.  dk/dlog w_l
 * = dk/dq w_l d_l (ARD), dk/dlog w = dk/dq q (isotropic). */
static double distance_pair(const term *t, const double *eth, const double *xa,
                            const double *xb, double *g)
{
    double q = 0.0;
    if (t->iso) {
        for (size_t l = 0; l < t->ncols; l++)
            q += col_dist(t, l, 1.0, xa, xb);
        q *= eth[1];
    } else
        for (size_t l = 0; l < t->ncols; l++)
            q += col_dist(t, l, eth[1 + l], xa, xb);
    double dkdq, dalpha = 0.0;
    double kv = gpc_distance_profile(t, eth, q, g ? &dkdq : NULL, g ? &dalpha : NULL);
    if (!g)
        return kv;
    g[0] = kv;
    if (t->iso)
        g[1] = dkdq * q;
    else
        for (size_t l = 0; l < t->ncols; l++)
            g[1 + l] = col_dist(t, l, dkdq * eth[1 + l], xa, xb);
    if (t->type == T_RQ)
        g[t->nparams - 1] = dalpha;
    return kv;
}

/* MacKay's periodic term, per column: theta_l = pi (x_l - x'_l) / p_l,
 * k = v0 exp(-2 sum_l w_l sin^2 theta_l).  dk/dlog w_l = -2 k w_l sin^2
 * theta_l; dk/dlog p_l = 2 k w_l theta_l sin(2 theta_l).  sin^2, not
 * 1 - cos, keeps its relative accuracy as theta -> 0 (periods far beyond
 * the data). */
static double periodic_pair(const term *t, const double *eth, const double *xa,
                            const double *xb, double *g)
{
    size_t m = t->ncols;
    double q = 0.0, sum_s2 = 0.0, sum_ts = 0.0; /* the last two: isotropic */
    for (size_t l = 0; l < m; l++) {
        double w = eth[t->iso ? 1 : 1 + l], p = eth[t->iso ? 2 : 1 + m + l];
        double th = M_PI * (xa[t->cols[l]] - xb[t->cols[l]]) / p, sn, cs;
        if (!g) {
            sn = sin(th);
            q += w * sn * sn;
            continue;
        }
        sn = sin(th); /* the compiler joins the two into one sincos */
        cs = cos(th);
        q += w * sn * sn;
        double ts = th * 2.0 * sn * cs; /* theta sin(2 theta) */
        if (t->iso) {
            sum_s2 += sn * sn;
            sum_ts += ts;
        } else {
            g[1 + l] = w * sn * sn;
            g[1 + m + l] = w * ts;
        }
    }
    double kv = eth[0] * exp(-2.0 * q);
    if (!g)
        return kv;
    g[0] = kv;
    if (t->iso) {
        g[1] = -2.0 * kv * eth[1] * sum_s2;
        g[2] = 2.0 * kv * eth[1] * sum_ts;
    } else
        for (size_t l = 0; l < m; l++) {
            g[1 + l] *= -2.0 * kv;
            g[1 + m + l] *= 2.0 * kv;
        }
    return kv;
}

/* v (c + x.x')^P: dk/dlog v = k, dk/dlog c = v P (c + x.x')^(P-1) c. */
static double poly_pair(const term *t, const double *eth, const double *xa, const double *xb,
                        double *g)
{
    double dot = 0.0;
    for (size_t l = 0; l < t->ncols; l++)
        dot += xa[t->cols[l]] * xb[t->cols[l]];
    double u = eth[1] + dot, up = gsl_pow_int(u, t->degree - 1);
    double kv = eth[0] * up * u;
    if (g) {
        g[0] = kv;
        g[1] = eth[0] * t->degree * up * eth[1];
    }
    return kv;
}

/* Value of one term at a pair of rows (xa, xb); `same` says the pair is one
 * training case with itself (only jitter cares), and jb is xb's number among
 * the training cases (only gram cares: it reads xa's similarity to training
 * case jb from xa's own columns).  If g is not NULL it gets the derivatives
 * with respect to the term's log hyperparameters. */
double gpc_term_pair(const term *t, const double *eth, const double *xa, const double *xb,
                     size_t jb, int same, double *g)
{
    switch (t->type) {
    case T_ARD: {
        double q = 0.0;
        for (size_t l = 0; l < t->ncols; l++)
            q += col_dist(t, l, eth[1 + l], xa, xb);
        double kv = eth[0] * exp(-0.5 * q);
        if (g) {
            g[0] = kv;
            for (size_t l = 0; l < t->ncols; l++)
                g[1 + l] = col_dist(t, l, -0.5 * kv * eth[1 + l], xa, xb);
        }
        return kv;
    }
    case T_SE: {
        double q = 0.0;
        for (size_t l = 0; l < t->ncols; l++)
            q += col_dist(t, l, 1.0, xa, xb);
        double w = eth[1], kv = eth[0] * exp(-0.5 * w * q);
        if (g) {
            g[0] = kv;
            g[1] = -0.5 * kv * w * q;
        }
        return kv;
    }
    case T_LINEAR: {
        double dot = 0.0;
        for (size_t l = 0; l < t->ncols; l++)
            dot += xa[t->cols[l]] * xb[t->cols[l]];
        double kv = eth[0] * dot;
        if (g)
            g[0] = kv;
        return kv;
    }
    case T_NN: {
        double dab = 0.0, daa = 0.0, dbb = 0.0;
        for (size_t l = 0; l < t->ncols; l++) {
            double a = xa[t->cols[l]], b = xb[t->cols[l]];
            dab += a * b;
            daa += a * a;
            dbb += b * b;
        }
        double v0 = eth[0], s0 = eth[1], s = eth[2];
        double uab = s0 + s * dab, uaa = s0 + s * daa, ubb = s0 + s * dbb;
        double ea = 1.0 + 2.0 * uaa, eb = 1.0 + 2.0 * ubb;
        double rho = 2.0 * uab / sqrt(ea * eb);
        double kv = v0 * M_2_PI * asin(rho);
        if (g) {
            double dk_drho = v0 * M_2_PI / sqrt(1.0 - rho * rho);
            /* d rho = 2 du_ab / sqrt(ea eb) - rho (du_aa / ea + du_bb / eb) */
            double drho_s0 = 2.0 * s0 / sqrt(ea * eb) - rho * (s0 / ea + s0 / eb);
            double drho_s = 2.0 * s * dab / sqrt(ea * eb) - rho * (s * daa / ea + s * dbb / eb);
            g[0] = kv;
            g[1] = dk_drho * drho_s0;
            g[2] = dk_drho * drho_s;
        }
        return kv;
    }
    case T_BIAS: {
        double kv = eth[0];
        if (g)
            g[0] = kv;
        return kv;
    }
    case T_JITTER: {
        double kv = same ? eth[0] : 0.0;
        if (g)
            g[0] = kv;
        return kv;
    }
    case T_GRAM: {
        double kv = eth[0] * xa[t->cols[jb == GRAM_SELF ? 0 : 1 + jb]];
        if (g)
            g[0] = kv;
        return kv;
    }
    case T_MATERN:
    case T_RQ: return distance_pair(t, eth, xa, xb, g);
    case T_PERIODIC: return periodic_pair(t, eth, xa, xb, g);
    case T_POLY: return poly_pair(t, eth, xa, xb, g);
    }
    return 0.0;
}

/* dk_t(xa, xb)/dxa over the term's columns, into gx[0..ncols): the
 * gradient in the first input.  Zero for discrete columns (the mismatch
 * has no derivative) and for bias, jitter and gram; matern12's at zero
 * distance, where it has a cusp, is taken as 0. */
static void term_input_grad(const term *t, const double *eth, const double *xa,
                            const double *xb, double kv, double *gx)
{
    size_t m = t->ncols;
    for (size_t l = 0; l < m; l++)
        gx[l] = 0.0;
    switch (t->type) {
    case T_ARD:
    case T_SE:
    case T_MATERN:
    case T_RQ: {
        double q = 0.0;
        for (size_t l = 0; l < m; l++)
            q += col_dist(t, l, eth[t->iso ? 1 : 1 + l], xa, xb);
        double dkdq;
        gpc_distance_profile(t, eth, q, &dkdq, NULL);
        for (size_t l = 0; l < m; l++)
            if (!(t->disc && t->disc[l])) {
                double w = eth[t->iso ? 1 : 1 + l];
                gx[l] = dkdq * 2.0 * w * (xa[t->cols[l]] - xb[t->cols[l]]);
            }
        break;
    }
    case T_PERIODIC:
        for (size_t l = 0; l < m; l++) {
            double w = eth[t->iso ? 1 : 1 + l], p = eth[t->iso ? 2 : 1 + m + l];
            double th = M_PI * (xa[t->cols[l]] - xb[t->cols[l]]) / p;
            gx[l] = -2.0 * kv * w * sin(2.0 * th) * M_PI / p;
        }
        break;
    case T_LINEAR:
        for (size_t l = 0; l < m; l++)
            gx[l] = eth[0] * xb[t->cols[l]];
        break;
    case T_POLY: {
        double dot = 0.0;
        for (size_t l = 0; l < m; l++)
            dot += xa[t->cols[l]] * xb[t->cols[l]];
        double d = eth[0] * t->degree * gsl_pow_int(eth[1] + dot, t->degree - 1);
        for (size_t l = 0; l < m; l++)
            gx[l] = d * xb[t->cols[l]];
        break;
    }
    case T_NN: {
        double dab = 0.0, daa = 0.0, dbb = 0.0;
        for (size_t l = 0; l < m; l++) {
            double a = xa[t->cols[l]], b = xb[t->cols[l]];
            dab += a * b;
            daa += a * a;
            dbb += b * b;
        }
        double s0 = eth[1], s = eth[2];
        double ea = 1.0 + 2.0 * (s0 + s * daa), eb = 1.0 + 2.0 * (s0 + s * dbb);
        double rho = 2.0 * (s0 + s * dab) / sqrt(ea * eb);
        double dk_drho = eth[0] * M_2_PI / sqrt(1.0 - rho * rho);
        /* d rho / d a_l = 2 s b_l / sqrt(ea eb) - rho (2 s a_l) / ea */
        for (size_t l = 0; l < m; l++)
            gx[l] = dk_drho * (2.0 * s * xb[t->cols[l]] / sqrt(ea * eb) -
                               rho * 2.0 * s * xa[t->cols[l]] / ea);
        break;
    }
    default: break; /* bias, jitter, gram */
    }
}

void gpc_kernel_pair_input_grad(const gpc_kernel *k, const double *xa, const double *xb,
                                double *gx, double *scratch)
{
    double tv[GPC_KERNEL_MAX_TERMS] = {0}, adj[GPC_KERNEL_MAX_TERMS];
    for (size_t t = 0; t < k->nterms; t++)
        tv[t] = gpc_term_pair(&k->terms[t], k->etheta + k->terms[t].offset, xa, xb, GRAM_SELF,
                              0, NULL);
    if (k->tree) {
        double val[GPC_KERNEL_MAX_NODES], nadj[GPC_KERNEL_MAX_NODES];
        gpc_kernel_tree_value(k, tv, val);
        gpc_kernel_tree_adjoints(k, val, nadj, adj);
    } else
        for (size_t t = 0; t < k->nterms; t++)
            adj[t] = 1.0;
    for (size_t l = 0; l < k->dim; l++)
        gx[l] = 0.0;
    for (size_t t = 0; t < k->nterms; t++) {
        const term *tm = &k->terms[t];
        term_input_grad(tm, k->etheta + tm->offset, xa, xb, tv[t], scratch);
        for (size_t l = 0; l < tm->ncols; l++)
            gx[tm->cols[l]] += adj[t] * scratch[l];
    }
}

double gpc_kernel_tree_value(const gpc_kernel *k, const double *tv, double *val)
{
    for (size_t i = 0; i < k->nnodes; i++) {
        const node *nd = &k->nodes[i];
        if (nd->kind == N_TERM) {
            val[i] = tv[nd->term];
            continue;
        }
        double acc = val[k->kids[nd->first]];
        for (size_t c = 1; c < nd->count; c++)
            acc = nd->kind == N_SUM ? acc + val[k->kids[nd->first + c]]
                                    : acc * val[k->kids[nd->first + c]];
        val[i] = acc;
    }
    return val[k->nnodes - 1];
}

void gpc_kernel_tree_adjoints(const gpc_kernel *k, const double *val, double *nadj,
                              double *adj)
{
    nadj[k->nnodes - 1] = 1.0;
    for (size_t i = k->nnodes; i-- > 0;) {
        const node *nd = &k->nodes[i];
        const size_t *kid = k->kids + nd->first;
        if (nd->kind == N_TERM) {
            adj[nd->term] = nadj[i];
        } else if (nd->kind == N_SUM) {
            for (size_t c = 0; c < nd->count; c++)
                nadj[kid[c]] = nadj[i];
        } else {
            /* the product of the other factors, as prefix times suffix
             * products: no division, so a zero factor gives no 0/0 */
            double prefix = nadj[i];
            for (size_t c = 0; c < nd->count; c++) {
                nadj[kid[c]] = prefix;
                prefix *= val[kid[c]];
            }
            double suffix = 1.0;
            for (size_t c = nd->count; c-- > 0;) {
                nadj[kid[c]] *= suffix;
                suffix *= val[kid[c]];
            }
        }
    }
}

double gpc_kernel_pair(const gpc_kernel *k, const double *xa, const double *xb, size_t jb,
                       int same)
{
    if (k->tree) {
        double tv[GPC_KERNEL_MAX_TERMS], val[GPC_KERNEL_MAX_NODES];
        for (size_t t = 0; t < k->nterms; t++)
            tv[t] = gpc_term_pair(&k->terms[t], k->etheta + k->terms[t].offset, xa, xb, jb, same,
                                  NULL);
        return gpc_kernel_tree_value(k, tv, val);
    }
    double sum = 0.0;
    for (size_t t = 0; t < k->nterms; t++)
        sum += gpc_term_pair(&k->terms[t], k->etheta + k->terms[t].offset, xa, xb, jb, same, NULL);
    return sum;
}

/* On the simplex a weight's log moves every weight: with beta_t^2 =
 * exp(theta_t) / sum_s exp(theta_s), dK/dtheta_t = K_t - beta_t^2 sum_s K_s,
 * where K_t is the term's value, which is what the terms give as their
 * derivative.  Correct the nparams derivatives g in place. */
void gpc_kernel_simplex_correct(const gpc_kernel *k, double *g)
{
    if (!k->simplex)
        return;
    double sum = 0.0;
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type != T_JITTER)
            sum += g[k->terms[t].offset];
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type != T_JITTER)
            g[k->terms[t].offset] -= k->etheta[k->terms[t].offset] * sum;
}

/* All derivatives of k(xa, xb) with respect to theta, into g[nparams]. */
void gpc_kernel_pair_grad(const gpc_kernel *k, const double *xa, const double *xb, size_t jb,
                          int same, double *g)
{
    double tv[GPC_KERNEL_MAX_TERMS] = {0};
    for (size_t t = 0; t < k->nterms; t++) {
        const term *tm = &k->terms[t];
        tv[t] = gpc_term_pair(tm, k->etheta + tm->offset, xa, xb, jb, same, g + tm->offset);
    }
    if (k->tree) {
        /* the product rule: each term's derivatives times the derivative of
         * the tree with respect to the term's value */
        double val[GPC_KERNEL_MAX_NODES], nadj[GPC_KERNEL_MAX_NODES], adj[GPC_KERNEL_MAX_TERMS];
        gpc_kernel_tree_value(k, tv, val);
        gpc_kernel_tree_adjoints(k, val, nadj, adj);
        for (size_t t = 0; t < k->nterms; t++)
            for (size_t p = 0; p < k->terms[t].nparams; p++)
                g[k->terms[t].offset + p] *= adj[t];
    }
    gpc_kernel_simplex_correct(k, g);
}
