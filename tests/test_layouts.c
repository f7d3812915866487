/* test_layouts.c: every layout map of reference/layouts against docs/spec/layouts.md §12's golden vectors,
 * its own inverse, its padding rule, batch strides, one-hot probes and a second formulation
 * (tests/layout_ref.c: the sources' pad/view/permute sequences through a generic N-d permute).
 * Prints the seed; `test_layouts SEED` replays. Exit 0 all passed, 1 a check failed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout_ref.h"
#include "layouts/layouts.h"

static int failures;
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

#define CHECK(cond, ...)                                                                                   \
    do {                                                                                                   \
        if (!(cond)) {                                                                                     \
            if (failures++ < 40) {                                                                         \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                               \
                printf(__VA_ARGS__);                                                                       \
                printf("\n");                                                                              \
            }                                                                                              \
        }                                                                                                  \
    } while (0)

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Parses "k=v,k=v" into the plan's key/value arrays. */
static int plan_str(qc_layout *L, const char *map, int64_t B, int64_t R, int64_t C, int eb, const char *params,
                    char *err, size_t errlen)
{
    const qc_layout_desc *d = qcref_layout_find(map);
    if (!d) {
        snprintf(err, errlen, "no map %s", map);
        return 2;
    }
    static char buf[8][32];
    const char *keys[8];
    int64_t vals[8];
    int n = 0;
    for (const char *s = params; s && *s && n < 8;) {
        const char *eq = strchr(s, '='), *end = strchr(s, ',');
        if (!end)
            end = s + strlen(s);
        snprintf(buf[n], sizeof buf[n], "%.*s", (int)(eq - s), s);
        keys[n] = buf[n];
        vals[n] = strtoll(eq + 1, NULL, 10);
        n++;
        s = *end ? end + 1 : end;
    }
    return qcref_layout_plan(L, d, B, R, C, eb, keys, vals, n, err, errlen);
}

static qc_layout must_plan(const char *map, int64_t B, int64_t R, int64_t C, int eb, const char *params)
{
    qc_layout L;
    char err[256];
    if (plan_str(&L, map, B, R, C, eb, params, err, sizeof err)) {
        printf("FAIL plan %s %lldx%lld: %s\n", map, (long long)R, (long long)C, err);
        exit(1);
    }
    return L;
}

/* ---- golden vectors, docs/spec/layouts.md §12 ---- */
static void golden(void)
{
    qc_layout L = must_plan("sf128x4", 2, 200, 6, 1, "");
    CHECK(L.Rg == 256 && L.Cg == 8 && L.dst_elems == 2048, "sf128x4 200x6 padded size");
    static const int64_t rc[][3] = {{0, 0, 0},    {0, 3, 3},     {1, 0, 16},     {31, 0, 496},   {32, 0, 4},
                                    {96, 0, 12},  {0, 4, 512},   {127, 7, 1023}, {128, 0, 1024}, {199, 5, 1657}};
    for (int i = 0; i < 10; i++)
        CHECK(L.desc->fwd(&L, rc[i][0], rc[i][1]) == rc[i][2], "sf128x4 (%lld,%lld) -> %lld", (long long)rc[i][0],
              (long long)rc[i][1], (long long)L.desc->fwd(&L, rc[i][0], rc[i][1]));
    uint8_t *src = calloc(2 * 200 * 6, 1), *dst = malloc(qcref_layout_dst_bytes(&L));
    src[200 * 6] = 7; /* expert 1, (0, 0) */
    qcref_layout_apply(&L, src, dst, NULL);
    CHECK(qcref_layout_dst_bytes(&L) == 4096 && dst[2048] == 7, "sf128x4 expert 1 starts at 2048");
    free(src), free(dst);

    static const int64_t s32[] = {0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13};
    static const int64_t s16[] = {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7};
    qc_layout a = must_plan("trtllm_shuffle_a", 1, 64, 1, 1, ""), b = must_plan("trtllm_shuffle_a", 1, 64, 1, 1,
                                                                                    "epilogue_tile_m=64");
    for (int n = 0; n < 12; n++) {
        int64_t g, c;
        a.desc->inv(&a, n, &g, &c);
        CHECK(g == s32[n], "shuffle_a bs32 row %d <- %lld", n, (long long)g);
        b.desc->inv(&b, n, &g, &c);
        CHECK(g == s16[n], "shuffle_a bs16 row %d <- %lld", n, (long long)g);
    }
    static const int64_t ro[] = {0, 4, 1, 5, 2, 6, 3, 7};
    qc_layout r = must_plan("gated_reorder", 1, 8, 1, 1, "");
    for (int n = 0; n < 8; n++) {
        int64_t g, c;
        r.desc->inv(&r, n, &g, &c);
        CHECK(g == ro[n], "gated_reorder M=8 row %d <- %lld", n, (long long)g);
    }
    static const int64_t w13[] = {0, 2, 4, 6, 8, 10, 12, 14, 32, 34, 36, 38};
    qc_layout w = must_plan("trtllm_gated_w13", 1, 64, 1, 1, "");
    for (int n = 0; n < 12; n++) {
        int64_t g, c;
        w.desc->inv(&w, n, &g, &c);
        CHECK(g == w13[n], "gated W13 M=64 row %d <- %lld", n, (long long)g);
    }
    static const int64_t il[][3] = {{0, 0, 0}, {63, 0, 63}, {64, 1, 0}, {127, 1, 63}, {128, 0, 64}, {255, 1, 127}};
    qc_layout iv = must_plan("w13_interleave", 1, 256, 1, 1, "group=64");
    for (int i = 0; i < 6; i++)
        CHECK(iv.desc->fwd(&iv, il[i][1] * 128 + il[i][2], 0) == il[i][0], "interleave (h=%lld, j=%lld)",
              (long long)il[i][1], (long long)il[i][2]);
    static const int64_t hop[][4] = {{0, 0, 0, 0}, {0, 1, 0, 2},  {1, 0, 0, 4},   {8, 0, 0, 1},
                                     {16, 0, 1, 0}, {128, 0, 0, 32}, {0, 2, 0, 64}, {256, 0, 8, 0}};
    qc_layout h = must_plan("triton_hopper_mx_scale", 1, 512, 4, 1, "num_warps=8");
    for (int i = 0; i < 8; i++) {
        int64_t o = h.desc->fwd(&h, hop[i][0], hop[i][1]);
        CHECK(o == hop[i][2] * 32 * h.Cg + hop[i][3], "hopper (%lld,%lld) -> row %lld col %lld", (long long)hop[i][0],
              (long long)hop[i][1], (long long)(o / (32 * h.Cg)), (long long)(o % (32 * h.Cg)));
    }
    static const int64_t aw[][3] = {{0, 0, 0},    {0, 15, 15},  {0, 16, 256}, {1, 0, 16},
                                    {15, 31, 511}, {0, 32, 512}, {16, 0, 1024}};
    qc_layout sw = must_plan("aiter_shuffle_weight", 1, 32, 64, 1, "");
    for (int i = 0; i < 7; i++)
        CHECK(sw.desc->fwd(&sw, aw[i][0], aw[i][1]) == aw[i][2], "aiter shuffle_weight (%lld,%lld)", (long long)aw[i][0],
              (long long)aw[i][1]);
    static const int64_t as[][3] = {{0, 0, 0}, {16, 0, 1}, {0, 4, 2}, {1, 0, 4}, {0, 1, 64}, {31, 7, 255}, {32, 0, 256}};
    qc_layout ss = must_plan("aiter_shuffle_scale", 1, 64, 8, 1, "");
    for (int i = 0; i < 7; i++)
        CHECK(ss.desc->fwd(&ss, as[i][0], as[i][1]) == as[i][2], "aiter shuffle_scale (%lld,%lld)", (long long)as[i][0],
              (long long)as[i][1]);
    qc_layout dg = must_plan("deepgemm_packed_ue8m0", 1, 5, 6, 4, "");
    CHECK(dg.Rg == 8 && dg.Cg == 8 && dg.dst_elems == 64, "packed ue8m0 mn=5 SK=6: A=8, PK=2");
    CHECK(dg.desc->fwd(&dg, 4, 4) / 4 == 12, "word (r=4, p=1) at int32 index 12");
    float ones[30];
    for (int i = 0; i < 30; i++)
        ones[i] = 1.0f;
    uint8_t packed[64];
    CHECK(qcref_layout_apply(&dg, (const uint8_t *)ones, packed, NULL) == 0, "pack 1.0");
    for (int r2 = 0; r2 < 8; r2++)
        CHECK(packed[(1 * 8 + r2) * 4 + 2] == 0 && packed[(1 * 8 + r2) * 4 + 1] == (r2 < 5 ? 127 : 0),
              "byte 2 of word (r=%d, 1) is K-block 6: zero padding", r2);
}

/* ---- the generic properties, for every variant ---- */
typedef struct variant {
    const char *map;
    int eb;
    const char *params;
} variant;

static const variant variants[] = {
    {"sf128x4", 1, ""}, {"sf128x4", 2, ""}, {"sf8x4", 1, ""}, {"sf8x4", 2, ""}, {"block_scale_interleave", 1, ""},
    {"trtllm_shuffle_a", 1, ""}, {"trtllm_shuffle_a", 2, "epilogue_tile_m=64"},
    {"trtllm_shuffle_sf_a", 1, ""}, {"trtllm_shuffle_sf_a", 2, "epilogue_tile_m=64,num_elts_per_sf=32"},
    {"gated_reorder", 1, ""}, {"gated_reorder", 4, ""},
    {"trtllm_gated_w13", 1, ""}, {"trtllm_gated_w13", 1, "epilogue_tile_m=64"}, {"trtllm_gated_w13", 1, "sf=1"},
    {"block_major_k", 1, "block_k=32"}, {"block_major_k", 2, "block_k=64"}, {"block_major_k", 1, ""},
    {"deepgemm_mn_major", 4, ""}, {"deepgemm_packed_ue8m0", 4, ""}, {"deepgemm_packed_ue8m0", 4, "strict=0"},
    {"deepgemm_sf_transform", 4, ""}, {"deepgemm_sf_transform", 4, "gran_mn=128"},
    {"deepgemm_sf_transform", 4, "gran_mn=128,mn=TRIM"}, {"deepgemm_sf_transform", 4, "gran_mn=32,gran_k=32,arch=120"},
    {"deepgemm_sf_transform", 4, "arch=90"}, {"deepgemm_sf_transform", 4, "arch=90,gran_mn=128"},
    {"deepgemm_sf_transform", 4, "disable_ue8m0_cast=1"},
    {"aiter_shuffle_weight", 1, ""}, {"aiter_shuffle_weight", 2, ""}, {"aiter_shuffle_weight", 1, "int4=1"},
    {"aiter_shuffle_weight_gu", 1, ""}, {"aiter_shuffle_weight_gu", 1, "gate_up=0"},
    {"aiter_shuffle_weight_gu", 1, "nlane=32,kpack=8"}, {"aiter_shuffle_weight_gu", 2, "nlane=16,kpack=4"}, {"aiter_shuffle_weight_gu", 1, "nlane=16,kpack=4,gate_up=0"},
    {"aiter_shuffle_scale", 1, ""}, {"aiter_shuffle_scale_gu", 1, ""}, {"aiter_shuffle_scale_gu", 1, "gate_up=0"},
    {"triton_blackwell_scale", 1, ""}, {"triton_blackwell_act_scale", 1, ""},
    {"triton_hopper_mx_scale", 1, ""}, {"triton_hopper_mx_scale", 1, "num_warps=4"},
    {"w13_swap", 1, ""}, {"w13_swap", 2, ""}, {"w13_swap_pairs", 1, ""},
    {"w13_interleave", 1, "group=8"}, {"w13_interleave", 1, "group=16"}, {"w13_interleave", 2, "group=32"},
    {"w13_interleave", 1, "group=64"},
    {"w13_pad", 1, ""}, {"w13_pad", 1, "split=0"}, {"w13_pad", 1, "gated=0,align=128"}, {"w13_pad", 2, "align=16"},
    {"pad_nvfp4_weight", 1, ""}, {"pad_nvfp4_weight", 1, "n_align=128,k_align=0"},
    {"amx_vnni2", 2, ""}, {"amx_vnni2", 1, ""}, {"amx_vnni4", 1, ""}, {"amx_u4", 0, ""}, {"amx_mxfp4_scale", 1, ""},
    {"marlin_fp8_weight", 1, ""}, {"marlin_nvfp4_weight", 0, ""}, {"marlin_scale", 2, ""},
    {"marlin_scale", 2, "grouped=0"}, {"marlin_nvfp4_scale", 1, ""},
};

static const int64_t rows_list[] = {1, 2, 3, 4, 16, 31, 32, 33, 48, 64, 96, 127, 128, 129, 256};
static const int64_t cols_list[] = {1, 2, 3, 4, 8, 31, 32, 33, 64, 65, 128};

static int is_packed(const qc_layout *L) { return L->in_bits == 32 && L->out_bits == 8; }
static int is_nv_scale(const qc_layout *L) { return L->desc->enc && L->in_bits == 8; }

/* A random source inside the valid domain of the map's value transform. */
static void fill_valid(const qc_layout *L, uint8_t *src)
{
    size_t n = qcref_layout_src_bytes(L);
    if (is_packed(L)) {
        for (size_t i = 0; i < n / 4; i++) {
            uint32_t u = (uint32_t)(1 + rnd() % 254) << 23; /* normal positive powers of two */
            memcpy(src + 4 * i, &u, 4);
        }
    } else if (is_nv_scale(L)) {
        for (size_t i = 0; i < n; i++)
            src[i] = (uint8_t)(rnd() % 0x7F); /* non-negative finite e4m3 */
    } else {
        for (size_t i = 0; i < n; i++)
            src[i] = (uint8_t)rnd();
    }
}

static int64_t src_elem_bytes(const qc_layout *L) { return L->in_bits == 4 ? 1 : L->in_bits / 8; }

/* Is destination element o padding (not derived, no valid source)? */
static int is_padding(const qc_layout *L, int64_t o)
{
    int64_t g, c;
    if (L->desc->inv(L, o, &g, &c))
        return 0;
    return qcref_layout_row_src(L, g) < 0 || c >= L->C;
}

static void check_bijection(const qc_layout *L, const char *tag)
{
    uint8_t *seen = calloc((size_t)L->dst_elems, 1);
    int64_t bad = 0;
    for (int64_t g = 0; g < L->Rg; g++)
        for (int64_t c = 0; c < L->Cg; c++) {
            int64_t o = L->desc->fwd(L, g, c), g2 = -1, c2 = -1;
            if (o < 0 || o >= L->dst_elems || seen[o]) {
                if (bad++ < 3)
                    CHECK(0, "%s: fwd(%lld,%lld) = %lld out of range or hit twice", tag, (long long)g, (long long)c,
                          (long long)o);
                continue;
            }
            seen[o] = 1;
            int d = L->desc->inv(L, o, &g2, &c2);
            if ((d || g2 != g || c2 != c) && bad++ < 3)
                CHECK(0, "%s: inv(fwd(%lld,%lld)) = (%lld,%lld)", tag, (long long)g, (long long)c, (long long)g2,
                      (long long)c2);
        }
    int64_t derived = 0;
    for (int64_t o = 0; o < L->dst_elems; o++) {
        int64_t g, c;
        if (!seen[o]) {
            derived++;
            CHECK(L->desc->inv(L, o, &g, &c) != 0, "%s: dst element %lld has no grid preimage", tag, (long long)o);
        }
    }
    CHECK(derived == L->dst_elems - L->Rg * L->Cg, "%s: %lld derived elements, expected %lld", tag,
          (long long)derived, (long long)(L->dst_elems - L->Rg * L->Cg));
    CHECK(bad == 0, "%s: %lld bijection errors", tag, (long long)bad);
    free(seen);
}

/* apply, padding rule, inverse(apply(x)) == x, the second formulation, batch strides. */
static void check_roundtrip(const qc_layout *L, const char *tag)
{
    size_t sb = qcref_layout_src_bytes(L), db = qcref_layout_dst_bytes(L);
    uint8_t *src = malloc(sb + 1), *dst = malloc(db + 1), *back = malloc(sb + 1), *ref = malloc(db + 1);
    fill_valid(L, src);
    memset(dst, 0xA5, db);
    int64_t badi = -1;
    CHECK(qcref_layout_apply(L, src, dst, &badi) == 0, "%s: apply rejected element %lld of a valid source", tag,
          (long long)badi);
    int64_t eo = L->out_bits == 4 ? 1 : L->out_bits / 8, pad_bad = 0;
    if (L->pad != QC_PAD_UNDEFINED && L->out_bits != 4)
        for (int64_t b = 0; b < L->B; b++)
            for (int64_t o = 0; o < L->dst_elems; o++)
                if (is_padding(L, o))
                    for (int64_t k = 0; k < eo; k++) {
                        uint8_t want = L->pad == QC_PAD_CONST ? L->pad_byte : 0;
                        pad_bad += dst[(b * L->dst_elems + o) * eo + k] != want;
                    }
    CHECK(pad_bad == 0, "%s: %lld padding bytes break the %s rule", tag, (long long)pad_bad, qc_pad_rule_name(L->pad));
    memset(back, 0x5A, sb);
    qcref_layout_inverse(L, dst, back);
    CHECK(memcmp(back, src, sb) == 0, "%s: inverse(apply(x)) != x", tag);

    memset(ref, 0, db);
    if (ref_layout_apply(L, src, ref) == 0) {
        int64_t diff = 0, first = -1;
        for (size_t i = 0; i < db; i++) {
            int64_t o = L->out_bits == 4 ? (int64_t)i * 2 : (int64_t)i / eo;
            if (L->pad == QC_PAD_UNDEFINED && is_padding(L, o % L->dst_elems))
                continue;
            if (dst[i] != ref[i] && diff++ == 0)
                first = (int64_t)i;
        }
        CHECK(diff == 0, "%s: %lld bytes differ from the source's reshape/permute (first at byte %lld: %02x vs %02x)",
              tag, (long long)diff, (long long)first, first >= 0 ? dst[first] : 0, first >= 0 ? ref[first] : 0);
    } else {
        CHECK(0, "%s: no second formulation", tag);
    }

    if (L->B > 1) { /* batch b of the output depends on batch b of the input only, at stride dst_elems */
        qc_layout one = *L;
        one.B = 1;
        size_t sb1 = qcref_layout_src_bytes(&one), db1 = qcref_layout_dst_bytes(&one);
        uint8_t *d1 = malloc(db1 + 1);
        for (int64_t b = 0; b < L->B; b++) {
            qcref_layout_apply(&one, src + b * sb1, d1, NULL);
            CHECK(memcmp(d1, dst + b * db1, db1) == 0, "%s: batch %lld differs from its own apply", tag, (long long)b);
        }
        free(d1);
    }
    free(src), free(dst), free(back), free(ref);
}

/* One-hot probes: one nonzero element at (r, c) changes exactly the destination elements that the
 * closed-form map predicts (its value, or its encoding, at fwd(g, c) for every grid row g holding r). */
static void check_probes(const qc_layout *L, const char *tag)
{
    size_t sb = qcref_layout_src_bytes(L), db = qcref_layout_dst_bytes(L);
    uint8_t *src = calloc(sb + 1, 1), *base = malloc(db + 1), *dst = malloc(db + 1), *want = malloc(db + 1);
    qcref_layout_apply(L, src, base, NULL);
    int64_t ei = src_elem_bytes(L), eo = L->out_bits == 4 ? 1 : L->out_bits / 8, bad = 0;
    for (int64_t r = 0; r < L->R && bad < 3; r++)
        for (int64_t c = 0; c < L->C && bad < 3; c++) {
            int64_t e = r * L->C + c;
            uint32_t v;
            if (is_packed(L))
                v = 0x40000000u; /* 2.0f */
            else if (L->in_bits == 4)
                v = 0xA;
            else if (is_nv_scale(L))
                v = 0x38; /* 1.0 in e4m3 */
            else
                v = 0x5Au << (8 * ((r + c) % ei)); /* one nonzero byte, its position varies */
            qcref_layout_store(src, e, L->in_bits, v);
            qcref_layout_apply(L, src, dst, NULL);
            qcref_layout_store(src, e, L->in_bits, 0);
            uint32_t ov = v;
            if (L->desc->enc)
                L->desc->enc(L, v, &ov);
            memcpy(want, base, db);
            int64_t hits = 0;
            for (int64_t g = 0; g < L->Rg; g++)
                if (qcref_layout_row_src(L, g) == r) {
                    qcref_layout_store(want, L->desc->fwd(L, g, c), L->out_bits, ov);
                    hits++;
                }
            int64_t diff = 0;
            for (size_t i = 0; i < db; i++) {
                int64_t o = L->out_bits == 4 ? (int64_t)i * 2 : (int64_t)i / eo, g, cc;
                if (L->desc->derive && L->desc->inv(L, o % L->dst_elems, &g, &cc))
                    continue; /* derived words (AMX compensation) follow the data */
                diff += dst[i] != want[i];
            }
            if (diff || hits == 0 || ov == 0) {
                bad++;
                CHECK(0, "%s: one-hot probe at (%lld,%lld): %lld bytes off the predicted offsets (hits %lld)", tag,
                      (long long)r, (long long)c, (long long)diff, (long long)hits);
            }
        }
    (void)ei;
    free(src), free(base), free(dst), free(want);
}

static int64_t trim_mn(const char *params, int64_t R, char *out, size_t n)
{
    const char *t = strstr(params, "mn=TRIM");
    if (!t) {
        snprintf(out, n, "%s", params);
        return 0;
    }
    int64_t mn = R * 128 - (R > 1 ? 77 : 0);
    snprintf(out, n, "%.*smn=%lld", (int)(t - params), params, (long long)mn);
    return mn;
}

static void properties(void)
{
    int nv = (int)(sizeof variants / sizeof variants[0]);
    int *covered = calloc((size_t)qcref_layout_count(), sizeof(int));
    for (int v = 0; v < nv; v++) {
        int accepted = 0, probed = 0, untiled = 0;
        for (size_t ri = 0; ri < sizeof rows_list / sizeof rows_list[0]; ri++)
            for (size_t ci = 0; ci < sizeof cols_list / sizeof cols_list[0]; ci++) {
                int64_t R = rows_list[ri], C = cols_list[ci];
                char params[128], err[256], tag[256];
                trim_mn(variants[v].params, R, params, sizeof params);
                qc_layout L;
                if (plan_str(&L, variants[v].map, 1, R, C, variants[v].eb, params, err, sizeof err)) {
                    CHECK(strstr(err, variants[v].map) != NULL, "%s: rejection message '%s' does not name the map",
                          variants[v].map, err);
                    continue;
                }
                if (L.Rg * L.Cg > (1 << 16))
                    continue; /* the broadcast recipes multiply rows by gran_mn: keep the run short */
                accepted++;
                untiled += L.Rg * L.Cg != R * C;
                snprintf(tag, sizeof tag, "%s[eb=%d %s] %lldx%lld", variants[v].map, variants[v].eb, params,
                         (long long)R, (long long)C);
                check_bijection(&L, tag);
                qc_layout L3;
                plan_str(&L3, variants[v].map, 3, R, C, variants[v].eb, params, err, sizeof err);
                check_roundtrip(&L3, tag);
                if (R * C * (int64_t)qcref_layout_dst_bytes(&L) <= (1 << 18) || probed == 0) {
                    check_probes(&L, tag);
                    probed++;
                }
            }
        CHECK(accepted >= 2, "%s[%s]: only %d shapes accepted", variants[v].map, variants[v].params, accepted);
        CHECK(probed >= 1, "%s[%s]: no shape small enough for one-hot probes", variants[v].map, variants[v].params);
        for (int i = 0; i < qcref_layout_count(); i++)
            if (!strcmp(qcref_layout_at(i)->name, variants[v].map))
                covered[i] += accepted, covered[i] += 0 * untiled;
    }
    for (int i = 0; i < qcref_layout_count(); i++)
        CHECK(covered[i] > 0, "map %s has no tested variant", qcref_layout_at(i)->name);
    free(covered);
}

/* Shapes a map cannot take are errors that name the rule; values outside a transform's domain too. */
static void rejections(void)
{
    static const struct { const char *map; int64_t R, C; int eb; const char *params, *needle; } bad[] = {
        {"aiter_shuffle_weight", 17, 32, 1, "", "rows % 16"},
        {"aiter_shuffle_weight", 16, 48, 1, "", "cols % 32"},
        {"aiter_shuffle_weight", 16, 32, 4, "", "--elem-bytes 4"},
        {"trtllm_shuffle_sf_a", 100, 4, 1, "", "M % 128"},
        {"trtllm_shuffle_a", 40, 4, 1, "", "shuffle block 32"},
        {"gated_reorder", 7, 4, 1, "", "even"},
        {"marlin_fp8_weight", 8, 64, 1, "", "% 16"},
        {"marlin_scale", 2, 48, 2, "", "multiple of 64"},
        {"triton_hopper_mx_scale", 32, 4, 1, "num_warps=2", "num_warps=2"},
        {"w13_interleave", 96, 4, 1, "group=64", "not a multiple of group=64"},
        {"amx_vnni4", 16, 32, 1, "", "% 32"},
        {"deepgemm_sf_transform", 3, 4, 4, "gran_mn=128,mn=200", "ceil(mn/gran_mn)"},
        {"deepgemm_sf_transform", 3, 4, 4, "arch=80", "arch=80"},
        {"sf128x4", 4, 4, 1, "bogus=1", "unknown parameter 'bogus'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qc_layout L;
        char err[256] = "";
        int rc = plan_str(&L, bad[i].map, 1, bad[i].R, bad[i].C, bad[i].eb, bad[i].params, err, sizeof err);
        CHECK(rc == 2 && strstr(err, bad[i].needle), "%s %lldx%lld: expected an error naming '%s', got rc=%d '%s'",
              bad[i].map, (long long)bad[i].R, (long long)bad[i].C, bad[i].needle, rc, err);
    }
    /* strict UE8M0 packing rejects non-powers of two and names the element (T-DG2) */
    qc_layout L = must_plan("deepgemm_packed_ue8m0", 1, 2, 3, 4, "");
    float v[6] = {1, 2, 4, 3.0f, 8, 16};
    uint8_t out[64];
    int64_t badi = -1;
    CHECK(qcref_layout_apply(&L, (const uint8_t *)v, out, &badi) == 1 && badi == 3, "strict pack must reject 3.0 at 3");
    L = must_plan("deepgemm_packed_ue8m0", 1, 2, 3, 4, "strict=0");
    CHECK(qcref_layout_apply(&L, (const uint8_t *)v, out, &badi) == 0 && out[4 * 1 + 0] == 128,
          "non-strict pack truncates 3.0 to 2^1 (byte 128)");
    L = must_plan("marlin_nvfp4_scale", 1, 1, 64, 1, "");
    uint8_t s[64] = {0};
    s[5] = 0xB8; /* -1.0 */
    CHECK(qcref_layout_apply(&L, s, out, &badi) == 1 && badi == 5, "strict Marlin NVFP4 scales reject -1.0");
    /* S0E5M3 of every non-negative finite e4m3 code is distinct (the inverse exists) */
    int seen[256] = {0}, dup = 0;
    for (int c = 0; c < 0x7F; c++)
        dup += seen[qcref_marlin_s0e5m3_from_e4m3((uint8_t)c)]++ > 0;
    CHECK(dup == 0, "S0E5M3 encoding not injective on [0, 0x7E]");
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rng_state = strtoull(argv[1], NULL, 0);
    printf("test_layouts seed 0x%016" PRIx64 "\n", rng_state);
    golden();
    rejections();
    properties();
    printf("%d maps, %zu variants: %s (%d failures)\n", qcref_layout_count(), sizeof variants / sizeof variants[0],
           failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
