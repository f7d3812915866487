/* boundary.c: scale-aware edge injection, the input key "boundaries": "quant" (docs/cases.md).
 *
 * An element lands on a rounding boundary only after its block's scale, and the scale depends on
 * the block's amax and the profile's rules, so edges written before the scale (generate.c) rarely
 * hit one: a kernel that rounds e2m1 ties away from zero passed every quant_nvfp4 instance. Here
 * each scale block of the instance's quant job gets boundary elements computed with the job's own
 * recipe and profile, through the reference's traced quantizer (the fp32 value each element has
 * right before the clamp and the cast):
 *   odd blocks, in turn: all zero, one NaN, one Inf, fp32 subnormals (scale underflow), a single
 *     nonzero, one +-FLT_MAX (scale overflow); not for recipes whose scale spans the tensor;
 *   even ("normal") blocks: the amax element moved into the top 1/64 of its binade (a
 *     power-of-two scale rounded down then lifts it above the format's max: saturation with
 *     finite inputs); elements whose scaled value is exactly a midpoint between two adjacent
 *     codes (ties); for fp32 scales, elements where x / s, x * fl32(1/s), x * rcp.approx(s) and
 *     x * fl32(max / amax) round to different codes (the element operations of formats.md §6.2).
 * Every value keeps |x| below the block's amax, so no block's scale moves after it is placed. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h"
#include "quant_job.h"

typedef struct span {
    int64_t r0, r1, c0, c1;
} span;

enum { TIE_ROUNDS = 8, ROUND_SLOTS = 4, NVARIANTS = 4 };
typedef enum block_class { B_NORMAL, B_ZERO, B_NAN, B_INF, B_SUBNORMAL, B_SINGLE, B_HUGE, B_SKIP } block_class;
static const block_class exclusive[] = {B_ZERO, B_NAN, B_INF, B_SUBNORMAL, B_SINGLE, B_HUGE};

static int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

/* The scale blocks of the job in the order of its canonical scales (recipes.h): block b has scale b. */
static int64_t spans_of(const qc_quant_job *j, span *out)
{
    int64_t rows = (int64_t)j->rows, cols = (int64_t)j->cols, n = 0;
    int64_t br = 1, bc = j->policy.group > 0 ? j->policy.group : cols;
    if (j->recipe == QC_RECIPE_TENSOR)
        br = rows, bc = cols;
    else if (j->recipe == QC_RECIPE_TOKEN)
        bc = cols;
    else if (j->recipe == QC_RECIPE_BLOCK)
        br = j->policy.block_r, bc = j->policy.block_c;
    if (rows == 0 || cols == 0 || br <= 0 || bc <= 0)
        return 0;
    for (int64_t ti = 0; ti < ceil_div(rows, br); ti++)
        for (int64_t tj = 0; tj < ceil_div(cols, bc); tj++, n++)
            if (out)
                out[n] = (span){ti * br, ti * br + br < rows ? ti * br + br : rows, tj * bc,
                                tj * bc + bc < cols ? tj * bc + bc : cols};
    return n;
}

static int64_t span_elems(const span *s) { return (s->r1 - s->r0) * (s->c1 - s->c0); }

/* The flat index of element k of a block (row-major inside it). */
static int64_t span_at(const span *s, int64_t cols, int64_t k)
{
    int64_t w = s->c1 - s->c0;
    return (s->r0 + k / w) * cols + s->c0 + k % w;
}

typedef struct trace {
    qc_quantized qz;
    float *pre; /* per element: the value before the clamp and the element cast */
} trace;

static int trace_run(const qc_quant_job *j, const float *x, trace *t)
{
    return qcref_quant_traced(j->recipe, &j->policy, x, j->rows, j->cols, j->has_static ? &j->static_scale : NULL,
                              j->has_gscale ? &j->gscale_encode : NULL, &t->qz, t->pre);
}

/* The exclusive classes rewrite a whole block, so they are placed before any scale is traced. */
static void write_exclusive(block_class c, const span *s, int64_t cols, uint64_t *rng, float *x)
{
    int64_t n = span_elems(s), one = (int64_t)(qc_rng_next(rng) % (uint64_t)n);
    for (int64_t k = 0; k < n; k++) {
        float *v = &x[span_at(s, cols, k)];
        if (c == B_ZERO)
            *v = k == one ? -0.0f : 0.0f;
        else if (c == B_SINGLE)
            *v = k != one ? 0.0f : *v != 0.0f ? *v : 1.0f;
        else if (c == B_SUBNORMAL)
            *v = ldexpf((float)((qc_rng_next(rng) & 0x7FFFFF) | 1), -149) * (k & 1 ? -1.0f : 1.0f);
        else if (c == B_HUGE)
            *v = k == one ? copysignf(FLT_MAX, *v) : *v * 1e30f;
        else if (k == one)
            *v = c == B_NAN ? NAN : copysignf(INFINITY, *v);
    }
}

/* A scale that spans the tensor (tensor recipe; nvfp4's global scale when none is given) would
 * carry a block's NaN, Inf or FLT_MAX into every other block: those blocks get no such class. */
static int global_amax(const qc_quant_job *j) { return j->recipe == QC_RECIPE_NVFP4 && !j->has_gscale; }

static block_class class_of(const qc_quant_job *j, int64_t b, int64_t nblocks)
{
    if (b % 2 == 0 || j->recipe == QC_RECIPE_TENSOR || nblocks < 2)
        return B_NORMAL;
    block_class c = exclusive[(b / 2) % (int64_t)(sizeof exclusive / sizeof exclusive[0])];
    if (global_amax(j) && (c == B_NAN || c == B_INF || c == B_HUGE))
        return B_SINGLE;
    return c;
}

/* The element of largest magnitude (the block's amax), or -1 when the amax is 0 or not finite. */
static int64_t anchor_of(const span *s, int64_t cols, const float *x)
{
    int64_t best = -1;
    float m = 0.0f;
    for (int64_t k = 0; k < span_elems(s); k++) {
        float a = fabsf(x[span_at(s, cols, k)]);
        if (!isfinite(a))
            return -1;
        if (a > m)
            m = a, best = span_at(s, cols, k);
    }
    return best;
}

/* Positive midpoints between adjacent finite codes of f, ascending (0 and the smallest code included). */
static int midpoints(qc_format f, double *mid, int cap)
{
    double grid[256];
    int ng = qc_format_grid(f, grid, 256), n = 0;
    for (int i = 0; i + 1 < ng && n < cap; i++)
        mid[n++] = (grid[i] + grid[i + 1]) / 2;
    return n;
}

typedef struct slot {
    int64_t at;
    float target; /* the scaled value the element must take */
    float ratio;  /* scaled / x of the block, the first guess */
} slot;

/* Moves each slot's element until its traced scaled value is its target (monotone in x). */
static int refine_ties(const qc_quant_job *j, float *x, slot *sl, int64_t ns, trace *t)
{
    for (int round = 0; round < TIE_ROUNDS; round++) {
        if (trace_run(j, x, t))
            return -1;
        int64_t open = 0;
        for (int64_t i = 0; i < ns; i++) {
            float v = t->pre[sl[i].at], *xi = &x[sl[i].at];
            if (v == sl[i].target)
                continue;
            open++;
            float next = (float)((double)*xi + ((double)sl[i].target - v) / sl[i].ratio);
            *xi = next != *xi && isfinite(next) ? next : nextafterf(*xi, v < sl[i].target ? INFINITY : -INFINITY);
        }
        if (!open)
            break;
    }
    return 0;
}

/* The element operations kernels use on an fp32 scale (formats.md §6.2), as codes, each under the
 * profile's div_mode (what a kernel that swaps the operation would compute). */
static uint32_t variant_code(int v, float x, float s, float amax, const qc_recipe_policy *p)
{
    float y;
    int fast = p->div_mode == QC_DIV_FAST;
    switch (v) {
    case 0:
        y = qcref_div(x, s, p->div_mode);
        break;
    case 1:
        y = qcref_mul(x, qcref_recip(s, p->div_mode), fast);
        break;
    case 2:
        y = qcref_mul(x, qcref_rcp_approx_ftz(s), 1);
        break;
    default:
        y = qcref_mul(x, qcref_div(p->elem_max, amax, p->div_mode), fast);
        break;
    }
    return qcref_encode(p->elem, qcref_recipe_clamp(y, p), &p->cast);
}

/* The variant of the profile's own element operation, and of the one a kernel most often swaps it
 * for (a division for a multiplication, or x * fl32(1/s) for a division): the pair a block must
 * separate. */
static int own_variant(const qc_recipe_policy *p)
{
    return p->elem_op == QC_ELEM_DIV ? 0 : p->elem_op == QC_ELEM_MUL_MAX_AMAX ? 3 : 1;
}
static int swapped_variant(const qc_recipe_policy *p) { return p->elem_op == QC_ELEM_DIV ? 1 : 0; }

/* Writes, into up to ROUND_SLOTS free elements of the block, values near midpoints that separate
 * every pair of element operations that can be separated there. Returns 1 when the profile's own
 * operation and its swap were separated. */
static int place_rounding(const qc_quant_job *j, float scale, float amax, const double *mid, int nmid,
                          const int64_t *free_at, int nfree, float *x)
{
    int separated[NVARIANTS][NVARIANTS] = {{0}}, used = 0;
    for (int m = nmid - 1; m >= 0 && used < nfree; m--) {
        float x0 = (float)(mid[m] * scale);
        for (int d = -8; d <= 8 && used < nfree; d++) {
            float c = x0;
            for (int k = 0; k < abs(d); k++)
                c = nextafterf(c, d > 0 ? INFINITY : 0.0f);
            if (!(fabsf(c) < amax))
                continue;
            uint32_t code[NVARIANTS];
            int news = 0;
            for (int v = 0; v < NVARIANTS; v++)
                code[v] = variant_code(v, c, scale, amax, &j->policy);
            for (int a = 0; a < NVARIANTS; a++)
                for (int b = a + 1; b < NVARIANTS; b++)
                    news += code[a] != code[b] && !separated[a][b];
            if (!news)
                continue;
            for (int a = 0; a < NVARIANTS; a++)
                for (int b = a + 1; b < NVARIANTS; b++)
                    separated[a][b] |= code[a] != code[b];
            x[free_at[used]] = used % 2 ? -c : c;
            used++;
        }
    }
    int a = own_variant(&j->policy), b = swapped_variant(&j->policy);
    return separated[a < b ? a : b][a < b ? b : a];
}

static int fp32_scales(const qc_quant_job *j) { return j->recipe <= QC_RECIPE_BLOCK && j->policy.pow2 == QC_POW2_NONE; }

typedef struct plan {
    span *spans;
    int64_t nblocks;
    int64_t *anchor; /* per block: its amax element, or -1 (not a normal block) */
    slot *ties;
    int64_t nties;
} plan;

/* The tie slots of every normal block: midpoints below the anchor's scaled value, both signs,
 * rotating through the format's midpoints from block to block. */
static int64_t plan_ties(const qc_quant_job *j, plan *pl, const trace *t, const float *x, const double *mid, int nmid,
                         int reserve)
{
    int64_t cols = (int64_t)j->cols, n = 0;
    for (int64_t b = 0; b < pl->nblocks; b++) {
        int64_t a = pl->anchor[b];
        if (a < 0 || !(fabsf(t->pre[a]) > 0) || !isfinite(t->pre[a]))
            continue;
        float top = fabsf(t->pre[a]), ratio = t->pre[a] / x[a];
        int64_t free = span_elems(&pl->spans[b]) - 1 - reserve;
        int reach = 0;
        while (reach < nmid && mid[reach] < top)
            reach++;
        int64_t cap = free / 2 > 14 ? free / 2 : 14; /* half the block, or all of a 16-element one */
        int64_t want = reach * 2 < free ? reach * 2 : free;
        want = want < cap ? want : cap;
        if (reach == 0)
            continue;
        for (int64_t k = 0, e = 0; k < want && e < span_elems(&pl->spans[b]); e++) {
            int64_t at = span_at(&pl->spans[b], cols, e);
            if (at == a)
                continue;
            int m = (int)((b * want / 2 + k / 2) % reach);
            float target = (float)(k % 2 ? -mid[m] : mid[m]);
            pl->ties[n++] = (slot){at, target, ratio};
            k++;
        }
    }
    return n;
}

/* Moves an anchor below the top 1/64 of its binade into it, with random low bits (again, when
 * redraw): a round amax gives a round scale, where the element operations agree. */
static void draw_anchor(uint64_t *rng, float *a, int redraw)
{
    int e;
    float m = 1.0f - (float)((qc_rng_next(rng) >> 40) + 1) * 0x1p-30f;
    if (redraw || fabsf(frexpf(*a, &e)) < m) {
        frexpf(*a, &e);
        *a = copysignf(ldexpf(m, e), *a);
    }
}

/* 1 when the instance gets a NaN element inside its normal block: it has no NaN block (one block,
 * or the tensor recipe's one scale) and its amax ignores NaN (an fmaxf reduction), so the NaN
 * changes no scale and still reaches the clamp and the cast, where fminf/fmaxf clamps make it
 * +max (formats.md B20) and a missing clamp leaves it NaN. */
static int nan_probe(const qc_quant_job *j, const plan *pl)
{
    return j->policy.amax_nan == QC_AMAX_NAN_IGNORE && !global_amax(j) &&
           (pl->nblocks < 2 || j->recipe == QC_RECIPE_TENSOR);
}

/* The NaN of nan_probe: in the element the ties and the rounding slots leave free (the one before
 * the last ROUND_SLOTS elements that are not the anchor). */
static void place_nan(const qc_quant_job *j, const plan *pl, float *x)
{
    int64_t cols = (int64_t)j->cols;
    for (int64_t b = 0; nan_probe(j, pl) && b < pl->nblocks; b++) {
        int64_t a = pl->anchor[b], skip = fp32_scales(j) ? ROUND_SLOTS : 0;
        if (a < 0 || span_elems(&pl->spans[b]) < skip + 3)
            continue;
        for (int64_t e = span_elems(&pl->spans[b]) - 1; e >= 0; e--) {
            int64_t at = span_at(&pl->spans[b], cols, e);
            if (at != a && skip-- == 0) {
                x[at] = NAN;
                break;
            }
        }
    }
}

/* Ties and rounding slots of every normal block for the anchors as they are; returns how many
 * blocks with fp32 scales could not separate the profile's operation from its swap (their
 * rounding slots found no input where the two round to different codes). */
static int64_t place_all(const qc_quant_job *j, float *x, plan *pl, trace *t, const double *mid, int nmid,
                         uint8_t *unseparated)
{
    int64_t cols = (int64_t)j->cols, missed = 0;
    if (trace_run(j, x, t))
        return 0;
    int reserve = (fp32_scales(j) ? ROUND_SLOTS : 0) + nan_probe(j, pl);
    pl->nties = plan_ties(j, pl, t, x, mid, nmid, reserve);
    if (refine_ties(j, x, pl->ties, pl->nties, t) || !fp32_scales(j) || trace_run(j, x, t))
        return 0;
    for (int64_t b = 0; b < pl->nblocks; b++) { /* the last free elements of each normal block */
        int64_t a = pl->anchor[b], at[ROUND_SLOTS];
        unseparated[b] = 0;
        if (a < 0 || span_elems(&pl->spans[b]) < ROUND_SLOTS + 2)
            continue;
        int nfree = 0;
        for (int64_t e = span_elems(&pl->spans[b]) - 1; e >= 0 && nfree < ROUND_SLOTS; e--)
            if (span_at(&pl->spans[b], cols, e) != a)
                at[nfree++] = span_at(&pl->spans[b], cols, e);
        unseparated[b] = !place_rounding(j, t->qz.scale_f32[b], fabsf(x[a]), mid, nmid, at, nfree, x);
        missed += unseparated[b];
    }
    return missed;
}

/* A block whose scale has a nearly exact reciprocal (fl32(1/s) off by 2^-30, say) has almost no
 * input where x / s and x * fl32(1/s) part: its anchor is drawn again, up to ANCHOR_DRAWS times. */
enum { ANCHOR_DRAWS = 8 };

static int inject(const qc_quant_job *j, uint64_t *rng, float *x, plan *pl, trace *t)
{
    for (int64_t b = 0; b < pl->nblocks; b++) {
        block_class c = class_of(j, b, pl->nblocks);
        if (c != B_NORMAL)
            write_exclusive(c, &pl->spans[b], (int64_t)j->cols, rng, x);
        pl->anchor[b] = c == B_NORMAL ? anchor_of(&pl->spans[b], (int64_t)j->cols, x) : -1;
        if (pl->anchor[b] >= 0)
            draw_anchor(rng, &x[pl->anchor[b]], 0);
    }
    double mid[256];
    int nmid = midpoints(j->policy.elem, mid, 256);
    uint8_t *unseparated = calloc((size_t)pl->nblocks, 1);
    if (nmid == 0 || !unseparated)
        return free(unseparated), 0;
    for (int draw = 0; place_all(j, x, pl, t, mid, nmid, unseparated) && draw < ANCHOR_DRAWS; draw++)
        for (int64_t b = 0; b < pl->nblocks; b++)
            if (unseparated[b])
                draw_anchor(rng, &x[pl->anchor[b]], 1);
    place_nan(j, pl, x);
    free(unseparated);
    return 0;
}

int qc_boundary_inject(const qc_params *p, uint64_t *rng, float *x, int64_t n, char *err, size_t errlen)
{
    qc_quant_job j;
    if (qc_quant_job_from_params(p, 0, &j, err, errlen))
        return 2;
    if ((int64_t)(j.rows * j.cols) != n) {
        snprintf(err, errlen, "\"boundaries\": \"quant\" needs an input of rows*cols = %zu elements (it has %lld)",
                 j.rows * j.cols, (long long)n);
        return 2;
    }
    if (j.in_dtype != QC_F32) {
        snprintf(err, errlen, "\"boundaries\": \"quant\" places fp32 values: it needs in-dtype f32");
        return 2;
    }
    plan pl = {0};
    trace t = {0};
    pl.nblocks = spans_of(&j, NULL);
    if (pl.nblocks == 0)
        return 0;
    pl.spans = malloc(sizeof *pl.spans * (size_t)pl.nblocks);
    pl.anchor = malloc(sizeof *pl.anchor * (size_t)pl.nblocks);
    pl.ties = malloc(sizeof *pl.ties * (size_t)n);
    t.pre = malloc(sizeof *t.pre * (size_t)n);
    int rc = 0;
    if (!pl.spans || !pl.anchor || !pl.ties || !t.pre || qc_quant_job_alloc(&j, &t.qz)) {
        snprintf(err, errlen, "out of memory placing the boundary elements");
        rc = 2;
    } else {
        spans_of(&j, pl.spans);
        inject(&j, rng, x, &pl, &t);
    }
    qc_quant_job_free(&t.qz);
    free(pl.spans), free(pl.anchor), free(pl.ties), free(t.pre);
    return rc;
}

/* ---- coverage: which boundaries an input reaches under its quant job ---- */

const char *const qc_coverage_names[QC_COV_COUNT] = {"ties", "saturation", "nan_inf", "zero_block",
                                                     "subnormal_scale", "scale_underflow", "scale_overflow",
                                                     "partial_block", "eps_floor", "elem_op_split"};

static int is_midpoint(float v, const double *mid, int nmid)
{
    double a = fabs((double)v);
    for (int i = 0; i < nmid; i++)
        if (a == mid[i])
            return 1;
    return 0;
}

/* A block's scale as the dequant multiplier: fp32 scales as they are, bytes decoded. */
static float scale_value(const qc_quant_job *j, const qc_quantized *qz, int64_t b)
{
    if (j->recipe == QC_RECIPE_NVFP4)
        return qcref_decode(QC_E4M3FN, qz->scale_u8[b], &j->policy.sf_cast);
    if (j->recipe >= QC_RECIPE_MXFP8)
        return qcref_e8m0_decode(qz->scale_u8[b], j->policy.dequant_e8m0);
    return qz->scale_f32[b];
}

/* Whether the profile's eps, not the block's amax, sets the scale (formats.md §6.2): the scale of
 * every recipe but nvfp4 comes from qcref_scale_from_amax, where eps is applied, unless the
 * scale is static or an MX byte is taken from the amax itself. */
static int eps_binds(const qc_quant_job *j, float amax)
{
    const qc_recipe_policy *p = &j->policy;
    if (j->has_static || j->recipe == QC_RECIPE_NVFP4 || (j->recipe >= QC_RECIPE_MXFP8 && p->mx_rule == QC_MX_E8M0_OF_AMAX))
        return 0;
    if (p->eps_at != QC_EPS_SCALE)
        return p->eps_at == QC_EPS_AMAX && amax < p->eps;
    qc_recipe_policy none = *p;
    none.eps_at = QC_EPS_NONE;
    float with = qcref_scale_from_amax(amax, p), without = qcref_scale_from_amax(amax, &none);
    return memcmp(&with, &without, sizeof with) != 0;
}

/* Whether an element of the block gets another code from the element operation kernels swap for
 * the profile's (x / s for x * fl32(1/s), or the reverse; formats.md §6.2). */
static int splits_elem_op(const qc_quant_job *j, const span *s, const float *x, float sc, float amax)
{
    int own = own_variant(&j->policy), swapped = swapped_variant(&j->policy);
    for (int64_t k = 0; fp32_scales(j) && isfinite(sc) && k < span_elems(s); k++) {
        float v = x[span_at(s, (int64_t)j->cols, k)];
        if (isfinite(v) && variant_code(own, v, sc, amax, &j->policy) != variant_code(swapped, v, sc, amax, &j->policy))
            return 1;
    }
    return 0;
}

static unsigned block_coverage(const qc_quant_job *j, const span *s, int64_t b, const float *x, const trace *t,
                               const double *mid, int nmid, double overflow)
{
    int64_t cols = (int64_t)j->cols;
    unsigned hit = 0;
    float amax = 0.0f, sc = scale_value(j, &t->qz, b);
    int nan = 0;
    for (int64_t k = 0; k < span_elems(s); k++) {
        int64_t at = span_at(s, cols, k);
        float v = t->pre[at];
        nan |= x[at] != x[at];
        if (!isfinite(x[at]))
            hit |= 1u << QC_COV_NAN_INF;
        else if (isfinite(v) && is_midpoint(v, mid, nmid))
            hit |= 1u << QC_COV_TIES;
        else if (isfinite(v) && fabs((double)v) >= overflow)
            hit |= 1u << QC_COV_SATURATION;
        amax = fabsf(x[at]) > amax ? fabsf(x[at]) : amax;
    }
    if (amax == 0.0f)
        hit |= 1u << QC_COV_ZERO_BLOCK;
    if (eps_binds(j, nan && j->policy.amax_nan == QC_AMAX_NAN_PROPAGATE ? NAN : amax))
        hit |= 1u << QC_COV_EPS_FLOOR;
    if (splits_elem_op(j, s, x, sc, amax))
        hit |= 1u << QC_COV_ELEM_OP_SPLIT;
    int sub = j->recipe == QC_RECIPE_NVFP4 ? (t->qz.scale_u8[b] & 0x78) == 0 && (t->qz.scale_u8[b] & 7) != 0
                                           : sc != 0.0f && isfinite(sc) && fabsf(sc) < 0x1p-126f;
    if (sub) /* an fp32 subnormal, or nvfp4's e4m3 subnormal code */
        hit |= 1u << QC_COV_SUBNORMAL_SCALE;
    if (sc == 0.0f && amax > 0.0f && isfinite(amax))
        hit |= 1u << QC_COV_SCALE_UNDERFLOW;
    if (!isfinite(sc) && isfinite(amax))
        hit |= 1u << QC_COV_SCALE_OVERFLOW;
    if (j->recipe != QC_RECIPE_TENSOR && j->recipe != QC_RECIPE_TOKEN &&
        ((j->recipe == QC_RECIPE_BLOCK && s->r1 - s->r0 < j->policy.block_r) ||
         s->c1 - s->c0 < (j->recipe == QC_RECIPE_BLOCK ? j->policy.block_c : j->policy.group)))
        hit |= 1u << QC_COV_PARTIAL_BLOCK;
    return hit;
}

int qc_quant_job_coverage(const qc_quant_job *j, const float *x, unsigned *classes)
{
    int64_t n = (int64_t)(j->rows * j->cols), nb = spans_of(j, NULL);
    span *sp = malloc(sizeof *sp * (size_t)(nb ? nb : 1));
    trace t = {0};
    t.pre = malloc(sizeof *t.pre * (size_t)(n ? n : 1));
    int rc = !sp || !t.pre || qc_quant_job_alloc(j, &t.qz) ? 2 : 0;
    double mid[256], overflow = qc_format_overflow(j->policy.elem);
    int nmid = midpoints(j->policy.elem, mid, 256);
    *classes = 0;
    if (!rc && nb && !trace_run(j, x, &t)) {
        spans_of(j, sp);
        for (int64_t b = 0; b < nb; b++)
            *classes |= block_coverage(j, &sp[b], b, x, &t, mid, nmid, overflow);
    }
    qc_quant_job_free(&t.qz);
    free(sp), free(t.pre);
    return rc;
}

int qc_quant_coverage(const qc_params *p, const float *x, int64_t n, unsigned *classes, char *err, size_t errlen)
{
    qc_quant_job j;
    *classes = 0;
    if (qc_quant_job_from_params(p, 0, &j, err, errlen))
        return 2;
    if ((int64_t)(j.rows * j.cols) != n) {
        snprintf(err, errlen, "the input has %lld elements, the quant job rows*cols = %zu", (long long)n, j.rows * j.cols);
        return 2;
    }
    if (qc_quant_job_coverage(&j, x, classes)) {
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    return 0;
}

unsigned qc_quant_coverage_required(const qc_params *p)
{
    qc_quant_job j;
    char err[256];
    if (qc_quant_job_from_params(p, 0, &j, err, sizeof err))
        return 0;
    unsigned need = 1u << QC_COV_TIES;
    if (j.recipe != QC_RECIPE_TENSOR)
        need |= 1u << QC_COV_ZERO_BLOCK;
    if (j.recipe != QC_RECIPE_TENSOR && !global_amax(&j))
        need |= 1u << QC_COV_NAN_INF;
    if (j.recipe == QC_RECIPE_BLOCK || (j.recipe == QC_RECIPE_TOKEN_GROUP && j.policy.partial_group))
        need |= 1u << QC_COV_PARTIAL_BLOCK;
    if (eps_binds(&j, 0.0f)) /* an eps that an all-zero block reads */
        need |= 1u << QC_COV_EPS_FLOOR;
    return need;
}
