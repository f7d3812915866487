/* quant_job.c: a recipe, its profile, a shape and the recipe's --param keys resolved into one
 * job, and the byte layout of its outputs; shared by `qcheck quant`/`dequant` and the harness's
 * quant op so that both read params and write bytes the same way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant_job.h"
#include "cli.h"
#include "qc_checked.h"

static int plan_scale_layout(qc_quant_job *j, const char *map, char *err, size_t errlen);

static int u8_scales(const qc_quant_job *j) { return j->recipe >= QC_RECIPE_MXFP8; }

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), QC_EXIT_USAGE)

static int parse_dim(const char *key, const char *v, size_t *out, char *err, size_t errlen)
{
    uint64_t n;
    if (!v)
        return FAIL("%s is required", key);
    if (qc_parse_u64(v, (uint64_t)QC_MAX_ELEMS, &n))
        return FAIL("%s=%s is not a non-negative integer of at most 2^40", key, v);
    *out = (size_t)n;
    return QC_EXIT_OK;
}

/* What a number param may hold. A runtime scale (static_scale, the nvfp4 global scale) is data: any
 * fp32, NaN, infinite and 0 included, for real code gets those (torchao's global scale of a tensor
 * whose amax is NaN is NaN: golden/real/torchao-0.18.0/nvfp4_quantize-amax_nan-*.h5). A bound or an
 * eps is a setting: a NaN or infinite one would make every output NaN or zero and prove nothing. */
enum { QC_NUM_ANY, QC_NUM_POSITIVE, QC_NUM_NONNEGATIVE };

static int parse_float(const char *key, const char *v, int kind, float *out, char *err, size_t errlen)
{
    char *end;
    *out = strtof(v, &end);
    if (end == v || *end != '\0')
        return FAIL("param %s=%s is not a number", key, v);
    if (kind != QC_NUM_ANY && (!isfinite(*out) || *out < 0 || (*out == 0 && kind == QC_NUM_POSITIVE)))
        return FAIL("param %s=%s is not a finite number %s", key, v, kind == QC_NUM_POSITIVE ? "> 0" : ">= 0");
    return QC_EXIT_OK;
}

static int parse_int(const char *key, const char *v, int *out, char *err, size_t errlen)
{
    int64_t n;
    if (qc_parse_i64(v, 1, 1 << 20, &n))
        return FAIL("param %s=%s is not a positive integer of at most 2^20", key, v);
    *out = (int)n;
    return QC_EXIT_OK;
}

static int param_elem(qc_quant_job *j, const char *key, const char *v, int *elem, char *err, size_t errlen)
{
    static const struct { qc_recipe r; const char *key; qc_format ok[3]; } allowed[] = {
        {QC_RECIPE_TENSOR, "fp8", {QC_E4M3FN, QC_E4M3FNUZ, QC_E5M2}},
        {QC_RECIPE_TOKEN, "fp8", {QC_E4M3FN, QC_E4M3FNUZ, QC_E5M2}},
        {QC_RECIPE_TOKEN_GROUP, "fp8", {QC_E4M3FN, QC_E4M3FNUZ, QC_E2M1}},
        {QC_RECIPE_BLOCK, "fp8", {QC_E4M3FN, QC_E4M3FNUZ, QC_E5M2}},
        {QC_RECIPE_MXFP8, "elem", {QC_E4M3FN, QC_E5M2, QC_E4M3FNUZ}},
        {QC_RECIPE_MXFP6, "elem", {QC_E2M3, QC_E3M2, QC_E2M3}},
    };
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        if (allowed[i].r != j->recipe || strcmp(allowed[i].key, key) != 0)
            continue;
        int f = qc_format_from_name(v);
        for (int k = 0; k < 3; k++)
            if (f >= 0 && (qc_format)f == allowed[i].ok[k]) {
                *elem = f;
                return QC_EXIT_OK;
            }
        return FAIL("param %s=%s is not an element format of recipe %s", key, v, qc_recipe_name(j->recipe));
    }
    return -1; /* not an element key of this recipe */
}

/* The fixed block sizes of mx (32) and nvfp4 (16): the param is accepted only with its value. */
static int param_fixed_block(qc_quant_job *j, const char *v, char *err, size_t errlen)
{
    int want = j->recipe == QC_RECIPE_NVFP4 ? 16 : 32, got;
    if (parse_int("block", v, &got, err, errlen))
        return QC_EXIT_USAGE;
    if (got != want)
        return FAIL("param block=%s: recipe %s has block %d (OCP MX / NVFP4 define it)", v, qc_recipe_name(j->recipe),
                    want);
    return QC_EXIT_OK;
}

/* nvfp4 sf=ue8m0 is the UE8M0 branch of TRT-LLM cvt_warp_fp16_to_fp4 (docs/spec/formats.md §4.2 3''):
 * e8m0 scales cvt.rp.satfinite(vecMax * rcp(6)) over 16 elements and no global scale, which is
 * the MXFP4 flashinfer-fast row with block 16. The job becomes that recipe, so one quantizer
 * holds the rule; the outputs are those of mxfp4 (PREFIX.q, PREFIX.scale of e8m0 bytes). */
static int use_ue8m0_scales(qc_quant_job *j, char *err, size_t errlen)
{
    if (strcmp(j->profile->name, "flashinfer-fast") != 0)
        return FAIL("param sf=ue8m0 is the TRT-LLM/flashinfer UE8M0 branch: use profile flashinfer-fast (got %s)",
                    j->profile->name);
    if (j->has_gscale)
        return FAIL("param sf=ue8m0 takes no global scale (gscale_encode/gscale_decode)");
    j->recipe = QC_RECIPE_MXFP4;
    j->profile = qc_recipe_profile_find("flashinfer-fast", QC_RECIPE_MXFP4);
    return j->profile ? QC_EXIT_OK : QC_EXIT_USAGE;
}

/* The keys a quantization job reads: the job's own and the recipes' (docs/spec/cli.md). */
static const char *const job_keys[] = {"recipe", "profile", "rows", "cols", "in-dtype", "layout"};
static const char *const recipe_keys[] = {"fp8", "elem", "group", "eps", "ue8m0", "scale_layout", "block",
                                          "static_scale", "gscale_encode", "gscale_decode", "fp8_max", "sf"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int listed(const char *const *keys, size_t n, const char *k)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(keys[i], k))
            return 1;
    return 0;
}

/* One recipe key of the params; the policy is built after them, once the element format is known. */
typedef struct overrides {
    int elem, ue8m0, group, br, bc, has_eps, has_max, sf_ue8m0;
    float eps, fmax;
} overrides;

static int recipe_key(qc_quant_job *j, const char *key, const char *v, overrides *o, char *err, size_t errlen)
{
    int rc = param_elem(j, key, v, &o->elem, err, errlen);
    if (rc >= 0)
        return rc;
    qc_recipe r = j->recipe;
    if (strcmp(key, "fp8_max") == 0 && r <= QC_RECIPE_TOKEN_GROUP)
        return o->has_max = 1, parse_float(key, v, QC_NUM_POSITIVE, &o->fmax, err, errlen);
    if (strcmp(key, "eps") == 0 && r == QC_RECIPE_TOKEN_GROUP)
        return o->has_eps = 1, parse_float(key, v, QC_NUM_NONNEGATIVE, &o->eps, err, errlen);
    if (strcmp(key, "group") == 0 && r == QC_RECIPE_TOKEN_GROUP)
        return parse_int(key, v, &o->group, err, errlen);
    if (strcmp(key, "ue8m0") == 0 && (r == QC_RECIPE_TOKEN_GROUP || r == QC_RECIPE_BLOCK)) {
        if (strcmp(v, "0") && strcmp(v, "1"))
            return FAIL("param ue8m0=%s must be 0 or 1", v);
        o->ue8m0 = v[0] == '1';
        return QC_EXIT_OK;
    }
    if (strcmp(key, "scale_layout") == 0 && r == QC_RECIPE_TOKEN_GROUP) {
        int l = qc_scale_layout_from_name(v);
        if (l < 0)
            return FAIL("param scale_layout=%s (known: row, col, col_tma, packed_ue8m0)", v);
        j->layout = (qc_scale_layout)l;
        return QC_EXIT_OK;
    }
    if (strcmp(key, "block") == 0 && r == QC_RECIPE_BLOCK) {
        char rows[16];
        const char *x = strchr(v, 'x');
        int64_t br, bc;
        if (!x || (size_t)(x - v) >= sizeof rows)
            return FAIL("param block=%s is not RxC (e.g. 128x128)", v);
        snprintf(rows, sizeof rows, "%.*s", (int)(x - v), v);
        if (qc_parse_i64(rows, 1, 1 << 20, &br) || qc_parse_i64(x + 1, 1, 1 << 20, &bc))
            return FAIL("param block=%s is not RxC with R and C in [1, 2^20] (e.g. 128x128)", v);
        o->br = (int)br, o->bc = (int)bc;
        return QC_EXIT_OK;
    }
    if (strcmp(key, "block") == 0 && r >= QC_RECIPE_MXFP8)
        return param_fixed_block(j, v, err, errlen);
    if (strcmp(key, "static_scale") == 0 && r == QC_RECIPE_TENSOR)
        return j->has_static = 1, parse_float(key, v, QC_NUM_ANY, &j->static_scale, err, errlen);
    if ((strcmp(key, "gscale_encode") == 0 || strcmp(key, "gscale_decode") == 0) && r == QC_RECIPE_NVFP4) {
        if (j->has_gscale)
            return FAIL("params gscale_encode and gscale_decode: give one (the decode scale is the encode's reciprocal)");
        rc = parse_float(key, v, QC_NUM_ANY, &j->gscale_encode, err, errlen);
        if (!rc && key[7] == 'd') /* the decode form is the reciprocal of the encode scale */
            j->gscale_encode = 1.0f / j->gscale_encode;
        j->has_gscale = 1;
        return rc;
    }
    if (strcmp(key, "sf") == 0 && r == QC_RECIPE_NVFP4) {
        if (strcmp(v, "e4m3") && strcmp(v, "ue8m0"))
            return FAIL("param sf=%s (known: e4m3, ue8m0)", v);
        o->sf_ue8m0 = strcmp(v, "ue8m0") == 0;
        return QC_EXIT_OK;
    }
    return FAIL("param %s does not apply to recipe %s (qcheck quant --help lists each recipe's params)", key,
                qc_recipe_name(r));
}

static int apply_params(const qc_params *p, qc_quant_job *j, char *err, size_t errlen)
{
    overrides o = {.elem = -1};
    j->layout = QC_SL_ROW;
    for (int i = 0; i < p->n; i++)
        if (listed(recipe_keys, COUNT(recipe_keys), p->key[i]) && recipe_key(j, p->key[i], p->val[i], &o, err, errlen))
            return QC_EXIT_USAGE;
    if (o.sf_ue8m0 && use_ue8m0_scales(j, err, errlen))
        return QC_EXIT_USAGE;
    j->policy = qc_recipe_profile_policy(j->profile, o.elem, o.ue8m0);
    if (o.sf_ue8m0)
        j->policy.group = 16;
    if (o.has_max)
        j->policy.elem_max = j->policy.clamp_max = o.fmax;
    if (o.has_eps)
        j->policy.eps = o.eps;
    if (o.group)
        j->policy.group = o.group;
    if (o.br)
        j->policy.block_r = o.br, j->policy.block_c = o.bc;
    if (j->layout == QC_SL_PACKED_UE8M0 && j->policy.pow2 == QC_POW2_NONE)
        return FAIL("scale_layout=packed_ue8m0 needs power-of-two scales: add param ue8m0=1");
    return QC_EXIT_OK;
}

int qc_quant_job_from_params(const qc_params *p, int strict, qc_quant_job *j, char *err, size_t errlen)
{
    memset(j, 0, sizeof *j);
    for (int i = 0; strict && i < p->n; i++)
        if (!listed(job_keys, COUNT(job_keys), p->key[i]) && !listed(recipe_keys, COUNT(recipe_keys), p->key[i]))
            return FAIL("unknown param '%s' (a quantization reads %s and the recipe keys of qcheck quant --help)",
                        p->key[i], "recipe, profile, rows, cols, in-dtype, layout");
    const char *rname = qc_param(p, "recipe"), *pname = qc_param(p, "profile");
    int r = rname ? qc_recipe_from_name(rname) : -1;
    if (r < 0)
        return FAIL(rname ? "unknown recipe '%s' (known: tensor token token_group block mxfp8 mxfp6 mxfp4 nvfp4)"
                          : "recipe is required%s", rname ? rname : "");
    j->recipe = (qc_recipe)r;
    if (!pname)
        pname = qc_recipe_default_profile(j->recipe);
    j->profile = qc_recipe_profile_find(pname, j->recipe);
    if (!j->profile)
        return FAIL("profile '%s' does not define recipe %s (qcheck list profiles says which do)", pname, rname);
    const char *dt = qc_param(p, "in-dtype");
    j->in_dtype = QC_F32;
    if (dt) {
        int f = qc_format_from_name(dt);
        if (f != QC_F32 && f != QC_BF16 && f != QC_F16)
            return FAIL("in-dtype '%s' (known: f32, bf16, f16)", dt);
        j->in_dtype = (qc_format)f;
    }
    if (parse_dim("rows", qc_param(p, "rows"), &j->rows, err, errlen) ||
        parse_dim("cols", qc_param(p, "cols"), &j->cols, err, errlen))
        return QC_EXIT_USAGE;
    if (j->cols && j->rows > (size_t)QC_MAX_ELEMS / j->cols)
        return FAIL("shape %zux%zu has more than 2^40 elements", j->rows, j->cols);
    if (apply_params(p, j, err, errlen))
        return QC_EXIT_USAGE;
    j->policy = qcref_recipe_policy_for_input(&j->policy, j->in_dtype); /* what the input's type decides */
    const char *rule = qcref_recipe_shape_rule(j->recipe, &j->policy, j->rows, j->cols);
    if (rule)
        return FAIL("shape %zux%zu: %s", j->rows, j->cols, rule);
    const char *layout = qc_param(p, "layout");
    return layout ? plan_scale_layout(j, layout, err, errlen) : QC_EXIT_OK;
}

int qc_quant_job_fp4(const qc_quant_job *j) { return j->policy.elem == QC_E2M1; }

void qc_quant_job_scale_grid(const qc_quant_job *j, int64_t *rows, int64_t *cols)
{
    int64_t ns = (int64_t)qcref_recipe_nscales(j->recipe, &j->policy, j->rows, j->cols);
    *rows = j->recipe == QC_RECIPE_TENSOR ? 1
            : j->recipe == QC_RECIPE_BLOCK ? ((int64_t)j->rows + j->policy.block_r - 1) / j->policy.block_r
                                           : (int64_t)j->rows;
    *cols = *rows ? ns / *rows : 0;
}

size_t qc_quant_job_q_bytes(const qc_quant_job *j)
{
    size_t n = j->rows * j->cols;
    return qc_quant_job_fp4(j) ? (n + 1) / 2 : n;
}

/* Bytes of the scales in the recipe's canonical layout (row-major, or token_group's scale_layout). */
static size_t canonical_scale_bytes(const qc_quant_job *j, size_t n)
{
    if (u8_scales(j))
        return n;
    if (j->recipe == QC_RECIPE_TOKEN_GROUP)
        return qc_scale_layout_size(j->layout, j->rows, j->rows ? n / j->rows : 0);
    return 4 * n;
}

size_t qc_quant_job_scale_bytes(const qc_quant_job *j, size_t n)
{
    return j->has_sf_layout ? qcref_layout_dst_bytes(&j->sf_layout) : canonical_scale_bytes(j, n);
}

/* layout=MAP: plans the map on the scale grid, [rows, K/group] (block: [ceil(M/br), ceil(K/bc)]). */
static int plan_scale_layout(qc_quant_job *j, const char *map, char *err, size_t errlen)
{
    const qc_layout_desc *d = qcref_layout_find(map);
    size_t ns = qcref_recipe_nscales(j->recipe, &j->policy, j->rows, j->cols);
    size_t srows = j->recipe == QC_RECIPE_TENSOR ? 1
                   : j->recipe == QC_RECIPE_BLOCK ? (j->rows + (size_t)j->policy.block_r - 1) / (size_t)j->policy.block_r
                                                  : j->rows;
    char why[512];
    if (!d)
        return FAIL("layout: unknown map '%s' (qcheck layout list)", map);
    if (j->recipe == QC_RECIPE_TOKEN_GROUP && j->layout != QC_SL_ROW)
        return FAIL("layout and scale_layout=%s both lay out the scales: choose one", qc_scale_layout_name(j->layout));
    if (srows == 0 || ns == 0)
        return FAIL("layout: an empty tensor has no scales to lay out");
    if (qcref_layout_plan(&j->sf_layout, d, 1, (int64_t)srows, (int64_t)(ns / srows), u8_scales(j) ? 1 : 4, NULL,
                          NULL, 0, why, sizeof why))
        return FAIL("layout %s on the %zux%zu scales: %s", map, srows, ns / srows, why);
    j->has_sf_layout = 1;
    return QC_EXIT_OK;
}

int qc_quant_job_alloc(const qc_quant_job *j, qc_quantized *qz)
{
    size_t n = j->rows * j->cols, ns = qcref_recipe_nscales(j->recipe, &j->policy, j->rows, j->cols);
    memset(qz, 0, sizeof *qz);
    qz->rows = j->rows, qz->cols = j->cols, qz->nscales = ns;
    qz->q = malloc(n + 1);
    qz->scale_f32 = malloc(4 * ns + 4);
    qz->scale_u8 = malloc(ns + 1);
    return qz->q && qz->scale_f32 && qz->scale_u8 ? 0 : -1;
}

void qc_quant_job_free(qc_quantized *qz) { free(qz->q), free(qz->scale_f32), free(qz->scale_u8); }

/* The bytes `qcheck quant` writes: PREFIX.q (FP4 packed two per byte), PREFIX.scale in the
 * recipe's scale layout. Packs qz->q in place for FP4. *scale is malloc'd (free it). */
int qc_quant_job_serialize(const qc_quant_job *j, qc_quantized *qz, size_t *q_bytes, uint8_t **scale,
                           size_t *scale_bytes, char *err, size_t errlen)
{
    size_t n = j->rows * j->cols, ns = qz->nscales;
    *q_bytes = qc_quant_job_q_bytes(j);
    if (qc_quant_job_fp4(j))
        qcref_fp4_pack(qz->q, n, 0, qz->q);
    size_t canon = canonical_scale_bytes(j, ns);
    uint8_t *buf = malloc(canon + 1);
    if (!buf)
        return FAIL("out of memory for the scales");
    if (u8_scales(j))
        memcpy(buf, qz->scale_u8, ns);
    else if (j->recipe == QC_RECIPE_TOKEN_GROUP)
        qc_scale_layout_apply(j->layout, qz->scale_f32, j->rows, j->rows ? ns / j->rows : 0, buf);
    else
        memcpy(buf, qz->scale_f32, 4 * ns);
    *scale = buf;
    *scale_bytes = canon;
    if (!j->has_sf_layout)
        return QC_EXIT_OK;
    *scale_bytes = qcref_layout_dst_bytes(&j->sf_layout);
    *scale = malloc(*scale_bytes + 1);
    int64_t bad = -1;
    int rc = !*scale || qcref_layout_apply(&j->sf_layout, buf, *scale, &bad);
    free(buf);
    if (rc) {
        free(*scale);
        *scale = NULL;
        snprintf(err, errlen, "layout %s rejects scale %lld (its value breaks the map's rule)", j->sf_layout.desc->name,
                 (long long)bad);
    }
    return rc ? QC_EXIT_USAGE : QC_EXIT_OK;
}

/* The inverse of qc_quant_job_serialize: fills qz (allocated) from the three byte buffers. */
void qc_quant_job_deserialize(const qc_quant_job *j, const uint8_t *q, const uint8_t *scale, const uint8_t *gscale,
                              qc_quantized *qz)
{
    size_t n = j->rows * j->cols, ns = qz->nscales;
    uint8_t *canon = NULL;
    if (j->has_sf_layout) { /* back to the canonical layout first */
        canon = calloc(canonical_scale_bytes(j, ns) + 1, 1);
        if (canon)
            qcref_layout_inverse(&j->sf_layout, scale, canon);
        scale = canon;
    }
    if (qc_quant_job_fp4(j))
        qcref_fp4_unpack(q, n, 0, qz->q);
    else
        memcpy(qz->q, q, n);
    if (u8_scales(j))
        memcpy(qz->scale_u8, scale, ns);
    else if (j->recipe == QC_RECIPE_TOKEN_GROUP)
        qc_scale_layout_inverse(j->layout, scale, j->rows, j->rows ? ns / j->rows : 0, qz->scale_f32);
    else
        memcpy(qz->scale_f32, scale, 4 * ns);
    if (gscale)
        memcpy(&qz->gscale, gscale, 4);
    free(canon);
}
