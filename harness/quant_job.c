/* quant_job.c: a recipe, its profile, a shape and the recipe's --param keys resolved into one
 * job, and the byte layout of its outputs; shared by `qcheck quant`/`dequant` and the harness's
 * quant op so that both read params and write bytes the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant_job.h"

static int plan_scale_layout(qc_args *a, qc_quant_job *j, const char *map);

static int parse_shape(const char *cmd, const char *s, size_t *m, size_t *k)
{
    char *end;
    unsigned long long a = strtoull(s, &end, 10), b;
    if (end == s || (*end != 'x' && *end != 'X'))
        goto bad;
    const char *t = end + 1;
    b = strtoull(t, &end, 10);
    if (end == t || *end != '\0')
        goto bad;
    *m = (size_t)a;
    *k = (size_t)b;
    return QC_EXIT_OK;
bad:
    qc_error(cmd, "--shape '%s' is not MxK (two non-negative integers, e.g. 4x256)", s);
    return QC_EXIT_USAGE;
}

static int parse_float(const char *cmd, const char *key, const char *v, float *out)
{
    char *end;
    *out = strtof(v, &end);
    if (end == v || *end != '\0') {
        qc_error(cmd, "--param %s=%s is not a number", key, v);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

static int parse_int(const char *cmd, const char *key, const char *v, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || n <= 0 || n > 1 << 20) {
        qc_error(cmd, "--param %s=%s is not a positive integer", key, v);
        return QC_EXIT_USAGE;
    }
    *out = (int)n;
    return QC_EXIT_OK;
}

static int param_elem(const char *cmd, qc_quant_job *j, const char *key, const char *v, int *elem)
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
        qc_error(cmd, "--param %s=%s is not an element format of recipe %s", key, v, qc_recipe_name(j->recipe));
        return QC_EXIT_USAGE;
    }
    return -1; /* not an element key of this recipe */
}

/* The fixed block sizes of mx (32) and nvfp4 (16): the param is accepted only with its value. */
static int param_fixed_block(const char *cmd, qc_quant_job *j, const char *v)
{
    int want = j->recipe == QC_RECIPE_NVFP4 ? 16 : 32, got;
    if (parse_int(cmd, "block", v, &got))
        return QC_EXIT_USAGE;
    if (got != want) {
        qc_error(cmd, "--param block=%s: recipe %s has block %d (OCP MX / NVFP4 define it)", v,
                 qc_recipe_name(j->recipe), want);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

/* nvfp4 sf=ue8m0 is the UE8M0 branch of TRT-LLM cvt_warp_fp16_to_fp4 (spec/formats.md §4.2 3''):
 * e8m0 scales cvt.rp.satfinite(vecMax * rcp(6)) over 16 elements and no global scale, which is
 * the MXFP4 flashinfer-fast row with block 16. The job becomes that recipe, so one quantizer
 * holds the rule; the outputs are those of mxfp4 (PREFIX.q, PREFIX.scale of e8m0 bytes). */
static int use_ue8m0_scales(qc_args *a, qc_quant_job *j)
{
    if (strcmp(j->profile->name, "flashinfer-fast") != 0) {
        qc_error(a->cmd, "--param sf=ue8m0 is the TRT-LLM/flashinfer UE8M0 branch: use --profile flashinfer-fast "
                         "(got %s)", j->profile->name);
        return QC_EXIT_USAGE;
    }
    if (j->has_gscale) {
        qc_error(a->cmd, "--param sf=ue8m0 takes no global scale (gscale_encode/gscale_decode)");
        return QC_EXIT_USAGE;
    }
    j->recipe = QC_RECIPE_MXFP4;
    j->profile = qc_recipe_profile_find("flashinfer-fast", QC_RECIPE_MXFP4);
    return j->profile ? QC_EXIT_OK : QC_EXIT_USAGE;
}

/* Every --param of the command line; the policy is built after them, once the element format is known. */
static int apply_params(qc_args *a, qc_quant_job *j)
{
    int elem = -1, ue8m0 = 0, group = 0, br = 0, bc = 0, has_eps = 0, has_max = 0, sf_ue8m0 = 0;
    float eps = 0, fmax = 0;
    j->layout = QC_SL_ROW;
    {
        for (int i = 0; i < a->nopt; i++) {
            if (strcmp(a->key[i], "param") != 0)
                continue;
            a->used[i] = 1;
            const char *kv = a->val[i] ? a->val[i] : "";
            const char *eq = strchr(kv, '=');
            if (!eq) {
                qc_error(a->cmd, "--param '%s' is not k=v", kv);
                return QC_EXIT_USAGE;
            }
            char key[32];
            size_t kl = (size_t)(eq - kv) < sizeof key - 1 ? (size_t)(eq - kv) : sizeof key - 1;
            memcpy(key, kv, kl);
            key[kl] = '\0';
            const char *v = eq + 1;
            int rc = param_elem(a->cmd, j, key, v, &elem);
            if (rc >= 0) {
                if (rc)
                    return rc;
                continue;
            }
            qc_recipe r = j->recipe;
            rc = QC_EXIT_OK;
            if (strcmp(key, "fp8_max") == 0 && r <= QC_RECIPE_TOKEN_GROUP)
                rc = parse_float(a->cmd, key, v, &fmax), has_max = 1;
            else if (strcmp(key, "eps") == 0 && r == QC_RECIPE_TOKEN_GROUP)
                rc = parse_float(a->cmd, key, v, &eps), has_eps = 1;
            else if (strcmp(key, "group") == 0 && r == QC_RECIPE_TOKEN_GROUP)
                rc = parse_int(a->cmd, key, v, &group);
            else if (strcmp(key, "ue8m0") == 0 && (r == QC_RECIPE_TOKEN_GROUP || r == QC_RECIPE_BLOCK)) {
                if (strcmp(v, "0") && strcmp(v, "1")) {
                    qc_error(a->cmd, "--param ue8m0=%s must be 0 or 1", v);
                    return QC_EXIT_USAGE;
                }
                ue8m0 = v[0] == '1';
            } else if (strcmp(key, "scale_layout") == 0 && r == QC_RECIPE_TOKEN_GROUP) {
                int l = qc_scale_layout_from_name(v);
                if (l < 0) {
                    qc_error(a->cmd, "--param scale_layout=%s (known: row, col, col_tma, packed_ue8m0)", v);
                    return QC_EXIT_USAGE;
                }
                j->layout = (qc_scale_layout)l;
            } else if (strcmp(key, "block") == 0 && r == QC_RECIPE_BLOCK) {
                char *e1, *e2;
                long x = strtol(v, &e1, 10), y = *e1 == 'x' ? strtol(e1 + 1, &e2, 10) : 0;
                if (x <= 0 || y <= 0 || *e1 != 'x' || *e2 != '\0') {
                    qc_error(a->cmd, "--param block=%s is not RxC (e.g. 128x128)", v);
                    return QC_EXIT_USAGE;
                }
                br = (int)x, bc = (int)y;
            } else if (strcmp(key, "block") == 0 && r >= QC_RECIPE_MXFP8)
                rc = param_fixed_block(a->cmd, j, v);
            else if (strcmp(key, "static_scale") == 0 && r == QC_RECIPE_TENSOR)
                rc = parse_float(a->cmd, key, v, &j->static_scale), j->has_static = 1;
            else if ((strcmp(key, "gscale_encode") == 0 || strcmp(key, "gscale_decode") == 0) && r == QC_RECIPE_NVFP4) {
                rc = parse_float(a->cmd, key, v, &j->gscale_encode);
                if (!rc && key[7] == 'd') /* the decode form is the reciprocal of the encode scale */
                    j->gscale_encode = 1.0f / j->gscale_encode;
                j->has_gscale = 1;
            } else if (strcmp(key, "sf") == 0 && r == QC_RECIPE_NVFP4) {
                if (strcmp(v, "e4m3") && strcmp(v, "ue8m0")) {
                    qc_error(a->cmd, "--param sf=%s (known: e4m3, ue8m0)", v);
                    return QC_EXIT_USAGE;
                }
                sf_ue8m0 = strcmp(v, "ue8m0") == 0;
            } else {
                qc_error(a->cmd, "unknown --param '%s' for recipe %s (see qcheck %s --help)", key,
                         qc_recipe_name(r), a->cmd);
                return QC_EXIT_USAGE;
            }
            if (rc)
                return rc;
        }
    }
    if (sf_ue8m0 && use_ue8m0_scales(a, j))
        return QC_EXIT_USAGE;
    j->policy = qc_recipe_profile_policy(j->profile, elem, ue8m0);
    if (sf_ue8m0)
        j->policy.group = 16;
    if (has_max)
        j->policy.elem_max = j->policy.clamp_max = fmax;
    if (has_eps)
        j->policy.eps = eps;
    if (group)
        j->policy.group = group;
    if (br)
        j->policy.block_r = br, j->policy.block_c = bc;
    if (j->layout == QC_SL_PACKED_UE8M0 && j->policy.pow2 == QC_POW2_NONE) {
        qc_error(a->cmd, "scale_layout=packed_ue8m0 needs power-of-two scales: add --param ue8m0=1");
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

int qc_quant_job_setup(qc_args *a, qc_quant_job *j)
{
    memset(j, 0, sizeof *j);
    const char *rname = qc_opt(a, "recipe"), *shape = qc_opt(a, "shape"), *pname = qc_opt(a, "profile");
    if (!rname || !shape) {
        qc_error(a->cmd, "--recipe and --shape are required");
        return QC_EXIT_USAGE;
    }
    int r = qc_recipe_from_name(rname);
    if (qc_name_or_die(a->cmd, "recipe", rname, r, "tensor token token_group block mxfp8 mxfp6 mxfp4 nvfp4"))
        return QC_EXIT_USAGE;
    j->recipe = (qc_recipe)r;
    if (!pname)
        pname = qc_recipe_default_profile(j->recipe);
    j->profile = qc_recipe_profile_find(pname, j->recipe);
    if (!j->profile) {
        qc_error(a->cmd, "profile '%s' does not define recipe %s (qcheck list profiles says which do)", pname, rname);
        return QC_EXIT_USAGE;
    }
    const char *dt = qc_opt(a, "in-dtype");
    j->in_dtype = QC_F32;
    if (dt) {
        int f = qc_format_from_name(dt);
        if (f != QC_F32 && f != QC_BF16 && f != QC_F16) {
            qc_error(a->cmd, "--in-dtype '%s' (known: f32, bf16, f16)", dt);
            return QC_EXIT_USAGE;
        }
        j->in_dtype = (qc_format)f;
    }
    const char *layout = qc_opt(a, "layout");
    if (parse_shape(a->cmd, shape, &j->rows, &j->cols) || apply_params(a, j) || qc_check_all_used(a))
        return QC_EXIT_USAGE;
    const char *rule = qcref_recipe_shape_rule(j->recipe, &j->policy, j->rows, j->cols);
    if (rule) {
        qc_error(a->cmd, "shape %zux%zu: %s", j->rows, j->cols, rule);
        return QC_EXIT_USAGE;
    }
    if (layout && plan_scale_layout(a, j, layout))
        return QC_EXIT_USAGE;
    return QC_EXIT_OK;
}

int qc_quant_job_fp4(const qc_quant_job *j) { return j->policy.elem == QC_E2M1; }
static int u8_scales(const qc_quant_job *j) { return j->recipe >= QC_RECIPE_MXFP8; }

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

/* --layout MAP: plans the map on the scale grid, [rows, K/group] (block: [ceil(M/br), ceil(K/bc)]). */
static int plan_scale_layout(qc_args *a, qc_quant_job *j, const char *map)
{
    const qc_layout_desc *d = qcref_layout_find(map);
    size_t ns = qcref_recipe_nscales(j->recipe, &j->policy, j->rows, j->cols);
    size_t srows = j->recipe == QC_RECIPE_TENSOR ? 1
                   : j->recipe == QC_RECIPE_BLOCK ? (j->rows + (size_t)j->policy.block_r - 1) / (size_t)j->policy.block_r
                                                  : j->rows;
    char err[512];
    if (!d) {
        qc_error(a->cmd, "--layout: unknown map '%s' (qcheck layout list)", map);
        return QC_EXIT_USAGE;
    }
    if (j->recipe == QC_RECIPE_TOKEN_GROUP && j->layout != QC_SL_ROW) {
        qc_error(a->cmd, "--layout and --param scale_layout=%s both lay out the scales: choose one",
                 qc_scale_layout_name(j->layout));
        return QC_EXIT_USAGE;
    }
    if (srows == 0 || ns == 0) {
        qc_error(a->cmd, "--layout: an empty tensor has no scales to lay out");
        return QC_EXIT_USAGE;
    }
    if (qcref_layout_plan(&j->sf_layout, d, 1, (int64_t)srows, (int64_t)(ns / srows), u8_scales(j) ? 1 : 4, NULL,
                          NULL, 0, err, sizeof err)) {
        qc_error(a->cmd, "--layout %s on the %zux%zu scales: %s", map, srows, ns / srows, err);
        return QC_EXIT_USAGE;
    }
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
                           size_t *scale_bytes)
{
    size_t n = j->rows * j->cols, ns = qz->nscales;
    *q_bytes = qc_quant_job_fp4(j) ? (n + 1) / 2 : n;
    if (qc_quant_job_fp4(j))
        qcref_fp4_pack(qz->q, n, 0, qz->q);
    size_t canon = canonical_scale_bytes(j, ns);
    uint8_t *buf = malloc(canon + 1);
    if (!buf)
        return QC_EXIT_USAGE;
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
        qc_error("quant", "--layout %s rejects scale %lld (its value breaks the map's rule)",
                 j->sf_layout.desc->name, (long long)bad);
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
