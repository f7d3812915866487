/* layouts.h: every scale and weight layout that a seed path hands to a kernel, as a bit-exact
 * index map with its inverse and its padding rule (docs/spec/layouts.md §1-§8, §13; names as in
 * docs/spec/cli.md "Layout maps").
 *
 * The model. A map takes a row-major source tensor [B, R, C] of elements (4, 8, 16 or 32 bits;
 * any whole number of bytes for a plain permutation) to a destination buffer of B batches
 * (experts) of dst_elems elements each. Between the two sits the padded *grid* [Rg, Cg]:
 *   - fwd(g, c) maps every grid cell to a destination element; it is injective, and onto except
 *     for *derived* elements (AMX int8 compensation words) that the map computes from the data;
 *   - inv(o) is its inverse (returns 1 for a derived element);
 *   - row_src(g) says which source row a grid row holds (-1: a padding row). It is g itself
 *     (g < R) for most maps, g / gran for DeepGEMM's per-row broadcast of 128x128 scales and the
 *     half-split padding of W13; grid columns c >= C are padding.
 * Padding cells get the map's rule: zero, a constant (aiter's 0x7F = e8m0 1.0) or undefined (the
 * real code allocates with torch.empty: written as zero here, and never compared).
 * A few maps also transform values (DeepGEMM packs fp32 powers of two into UE8M0 bytes; Marlin's
 * NVFP4 scales become S0E5M3 bytes): enc/dec, with dec the inverse on enc's valid domain and a
 * strict mode in which enc rejects what lies outside it.
 *
 * Index maps are pure QC_HD functions without allocation, so they compile as CUDA/HIP code too;
 * the descriptor table (function pointers, parameter names, sources) is host-only. Adding a map is
 * one descriptor in a family file plus one row in layouts.c. */
#ifndef QCREF_LAYOUTS_H
#define QCREF_LAYOUTS_H

#include <stddef.h>
#include <stdint.h>

#include "../qc_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum qc_pad_rule {
    QC_PAD_ZERO,      /* padding bytes are 0 (every implementation that materialises them) */
    QC_PAD_CONST,     /* padding bytes are pad_byte (aiter guinterleave scales: 0x7F) */
    QC_PAD_UNDEFINED, /* the real code leaves them uninitialised: qcheck writes 0, never compares */
    QC_PAD_NONE       /* the map has no padding for any shape */
} qc_pad_rule;

#define QC_LAYOUT_MAX_PARAMS 8
#define QC_LAYOUT_MAX_DERIVED 8

typedef struct qc_layout_param {
    const char *name;  /* NULL ends the list */
    int64_t def;       /* default value */
    const char *doc;   /* allowed values and meaning, for `qcheck layout list` */
} qc_layout_param;

struct qc_layout_desc;

/* One planned instance of a map: the descriptor, the shape, the parameters and what plan()
 * derived from them. Plain data, so that it can be copied to a device. */
typedef struct qc_layout {
    const struct qc_layout_desc *desc;
    int64_t B, R, C;             /* source [B, R, C] in elements */
    int elem_bytes;              /* what the caller asked for (0: the map's natural element) */
    int in_bits, out_bits;       /* element width of source and destination (4 = one nibble) */
    int64_t p[QC_LAYOUT_MAX_PARAMS];
    int64_t Rg, Cg;              /* the padded grid */
    int64_t dst_elems;           /* destination elements per batch (out_bits each) */
    int64_t d[QC_LAYOUT_MAX_DERIVED]; /* map-specific constants set by plan() */
    qc_pad_rule pad;
    uint8_t pad_byte;
} qc_layout;

typedef struct qc_layout_desc {
    const char *name;
    int variant;          /* lets one set of functions serve several rows of the table */
    const char *summary;  /* one line: what the map is */
    const char *source;   /* spec section and the public function it reproduces */
    const char *shapes;   /* the shape contract in words (also what plan() enforces) */
    const char *padding;  /* the padding rule in words */
    qc_layout_param params[QC_LAYOUT_MAX_PARAMS];
    /* Validates elem bits, shape and parameters; fills Rg, Cg, dst_elems, d[], pad, in/out bits.
     * Returns 0, or 2 with a message naming the rule that the shape breaks. Host only. */
    int (*plan)(qc_layout *L, char *err, size_t errlen);
    int64_t (*fwd)(const qc_layout *L, int64_t g, int64_t c);
    int (*inv)(const qc_layout *L, int64_t o, int64_t *g, int64_t *c);
    int64_t (*row_src)(const qc_layout *L, int64_t g);         /* NULL: g < R ? g : -1 */
    int (*enc)(const qc_layout *L, uint32_t in, uint32_t *out); /* NULL: copy; nonzero: rejected */
    uint32_t (*dec)(const qc_layout *L, uint32_t out);
    void (*derive)(const qc_layout *L, const uint8_t *src, uint8_t *dst); /* one batch */
} qc_layout_desc;

/* ---- the table (layouts.c) ---- */
int qcref_layout_count(void);
const qc_layout_desc *qcref_layout_at(int i);
const qc_layout_desc *qcref_layout_find(const char *name);
int qcref_layout_param_index(const qc_layout_desc *d, const char *name); /* -1 if unknown */
const char *qc_pad_rule_name(qc_pad_rule r);

/* Plans map d for source [B, R, C] of elem_bytes-byte elements (0: the map's natural element;
 * 4-bit maps take 0). keys/vals override parameter defaults. Returns 0 or 2 with err set. */
int qcref_layout_plan(qc_layout *L, const qc_layout_desc *d, int64_t B, int64_t R, int64_t C, int elem_bytes,
                      const char *const *keys, const int64_t *vals, int nkv, char *err, size_t errlen);

/* ---- the generic engine (layout_engine.c): any map, any buffer, no allocation ---- */
size_t qcref_layout_src_bytes(const qc_layout *L);
size_t qcref_layout_dst_bytes(const qc_layout *L);
int64_t qcref_layout_row_src(const qc_layout *L, int64_t g);
/* Writes every destination byte. Returns 0, or 1 when enc rejected source element *bad. */
int qcref_layout_apply(const qc_layout *L, const uint8_t *src, uint8_t *dst, int64_t *bad);
/* Reconstructs the source from a destination buffer (the valid region only; padding ignored). */
void qcref_layout_inverse(const qc_layout *L, const uint8_t *dst, uint8_t *src);
QC_HD uint32_t qcref_layout_load(const uint8_t *buf, int64_t i, int bits);
QC_HD void qcref_layout_store(uint8_t *buf, int64_t i, int bits, uint32_t v);

/* ---- helpers shared by the plans ---- */
/* elem_bytes must be one of the allowed sizes (a list ending in 0); 0 picks the first. */
int qc_layout_elem(qc_layout *L, const int *allowed, char *err, size_t errlen);
static inline QC_HD int64_t qc_pad_to(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int qc_layout_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* dst_elems = rows * cols, checked: 2 naming the map when the product overflows or passes
 * QC_MAX_ELEMS (reference/qc_checked.h). Every plan sets its destination size through it. */
int qc_layout_set_dst(qc_layout *L, int64_t rows, int64_t cols, char *err, size_t errlen);

/* ---- the closed-form index maps, by family (each file cites its sources) ---- */
/* sf128x4.c, layouts.md §1 */
QC_HD int64_t qcref_sf128x4_offset(int64_t r, int64_t c, int64_t Cp);
QC_HD void qcref_sf128x4_coords(int64_t o, int64_t Cp, int64_t *r, int64_t *c);
QC_HD int64_t qcref_sf8x4_offset(int64_t r, int64_t c, int64_t Cp);
QC_HD void qcref_sf8x4_coords(int64_t o, int64_t Cp, int64_t *r, int64_t *c);
/* trtllm.c, layouts.md §2 */
QC_HD int64_t qcref_trtllm_shuffle_block(int64_t epilogue_tile_m);
QC_HD int64_t qcref_trtllm_shuffle_src_row(int64_t n, int64_t bs);
QC_HD int64_t qcref_trtllm_shuffle_dst_row(int64_t r, int64_t bs);
QC_HD int64_t qcref_gated_reorder_src_row(int64_t n, int64_t M);
QC_HD int64_t qcref_gated_reorder_dst_row(int64_t r, int64_t M);
/* deepgemm.c, layouts.md §3 */
QC_HD int64_t qcref_deepgemm_mn_major_addr(int64_t r, int64_t j, int64_t MN);
QC_HD int qcref_deepgemm_ue8m0_byte(uint32_t f32_bits, int strict, uint8_t *out);
/* aiter.c, layouts.md §4 */
QC_HD int64_t qcref_aiter_shuffle_weight_offset(int64_t n, int64_t k, int64_t K, int64_t kp);
QC_HD int64_t qcref_aiter_shuffle_scale_offset(int64_t r, int64_t c, int64_t Cp);
/* triton_mx.c, layouts.md §5 */
QC_HD void qcref_triton_hopper_scale_rc(int64_t m, int64_t k, int64_t W, int64_t *row, int64_t *col);
/* w13.c, layouts.md §6 */
QC_HD int64_t qcref_w13_interleave_row(int64_t h, int64_t j, int64_t g);
/* marlin.c, layouts.md §8 */
QC_HD int64_t qcref_marlin_weight_perm(int64_t j, int bits);
QC_HD int64_t qcref_marlin_weight_perm_inv(int64_t v, int bits);
QC_HD int64_t qcref_marlin_scale_perm(int64_t j, int grouped);
QC_HD int64_t qcref_marlin_scale_perm_inv(int64_t v, int grouped);
QC_HD uint8_t qcref_marlin_s0e5m3_from_e4m3(uint8_t e4m3);

/* The descriptors, one per map (the table in layouts.c lists them). */
extern const qc_layout_desc qcref_layout_sf128x4, qcref_layout_sf8x4, qcref_layout_block_scale_interleave;
extern const qc_layout_desc qcref_layout_trtllm_shuffle_a, qcref_layout_trtllm_shuffle_sf_a,
    qcref_layout_gated_reorder, qcref_layout_trtllm_gated_w13, qcref_layout_block_major_k;
extern const qc_layout_desc qcref_layout_deepgemm_mn_major, qcref_layout_deepgemm_packed_ue8m0,
    qcref_layout_deepgemm_sf_transform;
extern const qc_layout_desc qcref_layout_aiter_shuffle_weight, qcref_layout_aiter_shuffle_weight_gu,
    qcref_layout_aiter_shuffle_scale, qcref_layout_aiter_shuffle_scale_gu;
extern const qc_layout_desc qcref_layout_triton_blackwell_scale, qcref_layout_triton_blackwell_act_scale,
    qcref_layout_triton_hopper_mx_scale;
extern const qc_layout_desc qcref_layout_w13_swap, qcref_layout_w13_swap_pairs, qcref_layout_w13_interleave,
    qcref_layout_w13_pad, qcref_layout_pad_nvfp4_weight;
extern const qc_layout_desc qcref_layout_amx_vnni2, qcref_layout_amx_vnni4, qcref_layout_amx_u4,
    qcref_layout_amx_mxfp4_scale;
extern const qc_layout_desc qcref_layout_marlin_fp8_weight, qcref_layout_marlin_nvfp4_weight,
    qcref_layout_marlin_scale, qcref_layout_marlin_nvfp4_scale;

#ifdef __cplusplus
}
#endif

#endif
