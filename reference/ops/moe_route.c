/* moe_route.c: MoE routing (docs/spec/layouts.md §9.1), fp32 in a fixed order, exp correctly rounded
 * (arith/exp_cr.h). */
#include <math.h>
#include <string.h>

#include "arith/exp_cr.h"
#include "moe.h"


static const char *const method_names[QC_ROUTE_COUNT] = {"softmax", "renorm_naive",   "renormalize", "sigmoid",
                                                         "sigmoid_renorm", "topk_sigmoid", "llama4", "deepseek_v3",
                                                         "deepseek_v2"};

const char *qc_route_method_name(int m) { return m >= 0 && m < QC_ROUTE_COUNT ? method_names[m] : "?"; }

int qc_route_method_from_name(const char *s)
{
    for (int m = 0; m < QC_ROUTE_COUNT; m++)
        if (strcmp(method_names[m], s) == 0)
            return m;
    return -1;
}

const char *qcref_route_check(const qc_route_cfg *c)
{
    if (c->experts <= 0 || c->experts > QC_MAX_EXPERTS)
        return "experts must be in [1, 1024]";
    if (c->top_k <= 0 || c->top_k > c->experts)
        return "top_k must be in [1, experts]";
    if (c->method == QC_ROUTE_LLAMA4 && c->top_k != 1)
        return "llama4 routing is top-1";
    if (c->n_shared < 0 || c->n_shared > 1)
        return "n_shared (fused shared experts) must be 0 or 1";
    if ((c->method == QC_ROUTE_DEEPSEEK_V3 || c->method == QC_ROUTE_DEEPSEEK_V2) && c->n_group > 0) {
        if (c->experts % c->n_group)
            return "deepseek_v2/v3: experts must be a multiple of n_group";
        if (c->topk_group <= 0 || c->topk_group > c->n_group)
            return "deepseek_v2/v3: topk_group must be in [1, n_group]";
        if (c->topk_group * (c->experts / c->n_group) < c->top_k)
            return "deepseek_v2/v3: the kept groups hold fewer than top_k experts";
    }
    return NULL;
}

/* a ranks before b: larger, NaN below everything, equal values by lower index. */
static int before(float a, int ia, float b, int ib)
{
    if (isnan(a) || isnan(b))
        return isnan(a) == isnan(b) ? ia < ib : !isnan(a);
    return a > b || (a == b && ia < ib);
}

void qcref_topk(const float *v, const unsigned char *cand, int n, int k, int *idx)
{
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int i = 0; i < n; i++) {
            if (cand && !cand[i])
                continue;
            int taken = 0;
            for (int q = 0; q < j && !taken; q++)
                taken = idx[q] == i;
            if (!taken && (best < 0 || before(v[i], i, v[best], best)))
                best = i;
        }
        idx[j] = best;
    }
}

static float sigmoid(float t) { return 1.0f / (1.0f + qcref_expf(-t)); }

static void softmax(const float *z, int n, float *p)
{
    float mx = -INFINITY, sum = 0.0f;
    for (int i = 0; i < n; i++)
        mx = z[i] > mx ? z[i] : mx;
    for (int i = 0; i < n; i++)
        sum += p[i] = qcref_expf(z[i] - mx);
    for (int i = 0; i < n; i++)
        p[i] = p[i] / sum;
}

static float sum_of(const float *w, int k)
{
    float s = 0.0f;
    for (int j = 0; j < k; j++)
        s += w[j];
    return s;
}

/* The candidate mask of grouped routing: the topk_group groups with the best group score, the sum
 * of the group's `per_group` largest sb (V3: the two largest; V2: the max). */
static void deepseek_groups(const qc_route_cfg *c, const float *sb, int per_group, unsigned char *cand)
{
    int ng = c->n_group > 0 ? c->n_group : 1, gs = c->experts / ng, top2[2], keep[QC_MAX_EXPERTS];
    float score[QC_MAX_EXPERTS];
    int n = gs >= per_group ? per_group : 1;
    for (int g = 0; g < ng; g++) {
        qcref_topk(sb + g * gs, NULL, gs, n, top2);
        score[g] = sb[g * gs + top2[0]] + (n == 2 ? sb[g * gs + top2[1]] : 0.0f);
    }
    qcref_topk(score, NULL, ng, c->n_group > 0 ? c->topk_group : 1, keep);
    memset(cand, 0, (size_t)c->experts);
    for (int j = 0; j < (c->n_group > 0 ? c->topk_group : 1); j++)
        memset(cand + keep[j] * gs, 1, (size_t)gs);
}

static void route_deepseek(const qc_route_cfg *c, const float *z, int *ids, float *w)
{
    float s[QC_MAX_EXPERTS], sb[QC_MAX_EXPERTS] = {0}; /* = {0}: GCC 12 -O2 -g cannot see that experts > 0 */
    unsigned char cand[QC_MAX_EXPERTS];
    for (int e = 0; e < c->experts; e++) {
        s[e] = sigmoid(z[e]);
        sb[e] = s[e] + (c->bias ? c->bias[e] : 0.0f); /* fp32, never bf16 (layouts.md T-RT3) */
    }
    deepseek_groups(c, sb, 2, cand);
    if (c->mask_zero) { /* every expert competes; the masked ones with score 0 */
        for (int e = 0; e < c->experts; e++)
            sb[e] = cand[e] ? sb[e] : 0.0f;
        qcref_topk(sb, NULL, c->experts, c->top_k, ids);
    } else
        qcref_topk(sb, cand, c->experts, c->top_k, ids);
    for (int j = 0; j < c->top_k; j++)
        w[j] = s[ids[j]];
}

static void route_deepseek_v2(const qc_route_cfg *c, const float *z, int *ids, float *w)
{
    float p[QC_MAX_EXPERTS];
    unsigned char cand[QC_MAX_EXPERTS];
    softmax(z, c->experts, p);
    deepseek_groups(c, p, 1, cand);
    for (int e = 0; e < c->experts; e++)
        p[e] = cand[e] ? p[e] : 0.0f;
    qcref_topk(p, NULL, c->experts, c->top_k, ids);
    for (int j = 0; j < c->top_k; j++)
        w[j] = p[ids[j]];
}

int qcref_route(const qc_route_cfg *c, const float *z, int *ids, float *w)
{
    if (qcref_route_check(c))
        return -1;
    float p[QC_MAX_EXPERTS];
    int k = c->top_k, renorm = 0;
    float eps = 0.0f;
    switch (c->method) {
    case QC_ROUTE_SOFTMAX:
    case QC_ROUTE_RENORM_NAIVE:
        softmax(z, c->experts, p);
        qcref_topk(p, NULL, c->experts, k, ids);
        for (int j = 0; j < k; j++)
            w[j] = p[ids[j]];
        renorm = c->method == QC_ROUTE_RENORM_NAIVE;
        break;
    case QC_ROUTE_RENORMALIZE: {
        float sel[QC_MAX_EXPERTS] = {0}; /* = {0}: as sb above */
        qcref_topk(z, NULL, c->experts, k, ids);
        for (int j = 0; j < k; j++)
            sel[j] = z[ids[j]];
        softmax(sel, k, w);
        break;
    }
    case QC_ROUTE_SIGMOID:
    case QC_ROUTE_SIGMOID_RENORM:
        for (int e = 0; e < c->experts; e++)
            p[e] = sigmoid(z[e]);
        qcref_topk(p, NULL, c->experts, k, ids);
        for (int j = 0; j < k; j++)
            w[j] = p[ids[j]];
        renorm = c->method == QC_ROUTE_SIGMOID_RENORM, eps = 1e-20f;
        break;
    case QC_ROUTE_TOPK_SIGMOID:
    case QC_ROUTE_LLAMA4:
        qcref_topk(z, NULL, c->experts, k, ids);
        for (int j = 0; j < k; j++)
            w[j] = sigmoid(z[ids[j]]);
        break;
    case QC_ROUTE_DEEPSEEK_V2:
        route_deepseek_v2(c, z, ids, w);
        renorm = c->renorm;
        break;
    default:
        route_deepseek(c, z, ids, w);
        renorm = c->renorm, eps = 1e-20f;
        break;
    }
    float routed = sum_of(w, k);
    if (c->n_shared) { /* sglang topk.py: the shared column is sum(routed) / rsf before the renorm */
        ids[k] = c->experts;
        w[k] = routed / c->rsf;
    }
    for (int j = 0; j < k + c->n_shared; j++) {
        if (renorm)
            w[j] = w[j] / (routed + eps);
        if (c->rsf_in_weights)
            w[j] = w[j] * c->rsf;
    }
    return 0;
}
