/* layout_kernels.h: the layout maps of docs/spec/layouts.md on the device (layout_kernels.cu),
 * every map but the block-scale swizzles, which kernels.cu keeps (qck_launch_swizzle). The host
 * turns a planned qc_layout into a qck_layout_map (named parameters resolved, the grid recomputed
 * from the spec's shape rules); the kernel runs one thread per destination element (per byte of
 * two 4-bit elements) and gathers it from the source. */
#ifndef QCK_LAYOUT_KERNELS_H
#define QCK_LAYOUT_KERNELS_H

#include "launch.h"
#include "layouts/layouts.h"

/* The maps layout_kernels.cu implements. */
enum qck_layout_id {
    QCK_LM_SHUFFLE_A, QCK_LM_SHUFFLE_SF_A, QCK_LM_GATED_REORDER, QCK_LM_GATED_W13, QCK_LM_BLOCK_MAJOR_K,
    QCK_LM_DG_MN_MAJOR, QCK_LM_DG_PACKED, QCK_LM_AITER_W, QCK_LM_AITER_W_GU, QCK_LM_AITER_S,
    QCK_LM_TK_BW, QCK_LM_TK_BW_ACT, QCK_LM_TK_HOPPER, QCK_LM_W13_SWAP, QCK_LM_W13_PAIRS, QCK_LM_W13_INTERLEAVE,
    QCK_LM_W13_PAD, QCK_LM_PAD_NVFP4, QCK_LM_AMX_VNNI2, QCK_LM_AMX_VNNI4, QCK_LM_AMX_U4, QCK_LM_AMX_MX4S,
    QCK_LM_MARLIN_SCALE, QCK_LM_MARLIN_W, QCK_LM_MARLIN_NV_SCALE, QCK_LM_AITER_S_GU, QCK_LM_IDENTITY,
    QCK_LM_DG_TRANSFORM /* host only: becomes DG_MN_MAJOR, IDENTITY or DG_PACKED */
};

/* One map instance as the kernel sees it: plain data, passed by value. */
typedef struct qck_layout_map {
    int id;                    /* enum qck_layout_id */
    int in_bits, out_bits;     /* 4 (nibbles), or 8 * bytes */
    int64_t B, R, C;           /* source [B, R, C] elements */
    int64_t Rg, Cg;            /* the padded grid, from the spec's rule for this map */
    int64_t dst_elems;         /* destination elements per batch */
    int64_t a[4];              /* the map's parameters, resolved (layout_kernels.cu says which) */
    uint8_t pad;               /* the byte padding cells get */
} qck_layout_map;

/* Fills m from the plan. Returns 0; 1 when the map is not one of these (why says so); 2 when the
 * plan's destination size is not the one the spec's shape rule gives (why says both). */
int qck_layout_map_of(const qc_layout *L, qck_layout_map *m, char *why, size_t n);
size_t qck_layout_src_bytes(const qck_layout_map *m);
size_t qck_layout_dst_bytes(const qck_layout_map *m);
/* x (source bytes) -> y (destination bytes). *bad (device, preset to ~0) gets the lowest global
 * source element a value transform rejects (strict=1 of deepgemm_packed_ue8m0, marlin_nvfp4_scale). */
gpuError_t qck_launch_layout(const qck_layout_map *m, const uint8_t *x, uint8_t *y, unsigned long long *bad, int sms,
                             gpuStream_t s);
/* The inverse: y (destination bytes) -> x (source bytes; padding dropped, derived words skipped).
 * Only for a map that qck_layout_invertible accepts: whole-byte elements moved unchanged, each
 * source element at one place (each thread then writes its own source element). */
int qck_layout_invertible(const qck_layout_map *m);
gpuError_t qck_launch_layout_inverse(const qck_layout_map *m, const uint8_t *y, uint8_t *x, int sms, gpuStream_t s);

#endif
