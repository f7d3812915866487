/* amx_gemm.h: the cpu-amx GEMM kernels (amx_gemm.c): sgl-kernel CPU's W8A16 fp8 block GEMM and its
 * W8A8 int8 GEMM on AMX tiles, and the plain bf16 GEMM they share (benchmarks).
 *
 * Weights are packed once (sgl-kernel convert_weight_packed, docs/spec/layouts.md §7): blocks of 32 output
 * rows, VNNI-2 [K/2, 32, 2] for fp8/bf16, VNNI-4 [K/4, 32, 4] plus 32 int32 compensation words for
 * int8. Unlike sgl-kernel, N is padded with zero rows to a multiple of 32 and K with zero columns
 * to the tile depth, so any N and K work; the padding never reaches the output.
 * Activations live in a zero-padded buffer of mp x kp (mp = M rounded up to 32) in tile order. Every call writes
 * exactly the M x N outputs of columns [n0, n1) (n0 % 32 == 0) and nothing else; the callers of
 * these functions must have had qc_cpu_amx_unavailable() return NULL first (the tile permission). */
#ifndef QC_AMX_GEMM_H
#define QC_AMX_GEMM_H

#include <stdint.h>

/* NULL when this CPU and kernel can run the AMX kernels (the XTILEDATA permission is then granted
 * to the process), else the reason (kernels/cpu/cpu_backend.c). */
const char *qc_cpu_amx_unavailable(void);

/* LDTILECFG with palette 1 and eight tiles of 16 rows x 64 bytes, the shape every kernel here
 * uses (they configure it themselves; bench_amx's peak loop calls it). */
void qc_amx_tiles_configure(void);

typedef enum qc_amx_wtype { QC_AMX_W_FP8, QC_AMX_W_BF16, QC_AMX_W_S8 } qc_amx_wtype;

typedef struct qc_amx_weights {
    qc_amx_wtype type;
    int64_t n, k;     /* logical shape [n, k] */
    int64_t np, kp;   /* padded: np % 32 == 0; kp % 32 (fp8, bf16) or % 64 (s8) == 0 */
    void *packed;     /* np / 32 blocks (fp8: kp*32 codes; bf16: kp*32 codes; s8: kp*32 + 128 bytes) */
    float *scale;     /* fp8: block scales [ceil(n/128), scale_cols], code * scale is the weight */
    int64_t scale_cols;
} qc_amx_weights;

/* w [n, k] row-major; fp8: e4m3fn codes with block scales [ceil(n/128), ceil(k/128)]. 0, or 2
 * when out of memory. */
int qc_amx_pack_fp8(const uint8_t *w, const float *scale, int64_t n, int64_t k, qc_amx_weights *out);
int qc_amx_pack_bf16(const uint16_t *w, int64_t n, int64_t k, qc_amx_weights *out);
int qc_amx_pack_s8(const int8_t *w, int64_t n, int64_t k, qc_amx_weights *out);
void qc_amx_weights_free(qc_amx_weights *w);

typedef struct qc_amx_act {
    int64_t m, mp, kp;
    int64_t esize; /* bytes per element: 2 (bf16) or 1 (u8) */
    void *data;    /* bf16 codes or u8 (s8 + 128), zero beyond [m, k], in tile order: each block of
                    * 32 rows is [kp * esize / 64][32 rows][64 bytes] */
} qc_amx_act;

int qc_amx_act_bf16(const uint16_t *a, int64_t m, int64_t k, const qc_amx_weights *w, qc_amx_act *out);
int qc_amx_act_u8(const int8_t *a, int64_t m, int64_t k, const qc_amx_weights *w, qc_amx_act *out);
void qc_amx_act_free(qc_amx_act *a);

/* Rows [r0, r1) of a (r0 % 32 == 0, r1 <= a->m) as a view of a's buffer, not to be freed: threads
 * may split M this way, each writing rows [r0, r1) of c through c + r0 * n. */
qc_amx_act qc_amx_act_rows(const qc_amx_act *a, int64_t r0, int64_t r1);

/* c [m, n] row-major: f32 when out_f32, else bf16 codes (RNE). bias [n] or NULL. Columns [n0, n1)
 * only (n0 % 32 == 0, n1 <= n): disjoint ranges may run on different threads. 0, or 2 when out of
 * memory.
 *   fp8:  c = sum_k a[m][k] * bf16(fl32(w[n][k] * s)) in fp32 (TDPBF16PS) + bias  (sgl-kernel
 *         fp8_scaled_mm_cpu: unpack_B, then a bf16 brgemm)
 *   bf16: c = sum_k a * w in fp32 + bias
 *   s8:   c = fl32(acc - comp) * as[m] * bs[n] (+ bias fused) with acc the u8 x s8 int32 sum
 *         (TDPBUSD), sgl-kernel int8_scaled_mm_cpu's epilogue (gemm_int8.cpp) */
int qc_amx_gemm_fp8(const qc_amx_act *a, const qc_amx_weights *w, const float *bias, int out_f32, void *c,
                    int64_t n0, int64_t n1);
int qc_amx_gemm_bf16(const qc_amx_act *a, const qc_amx_weights *w, const float *bias, int out_f32, void *c,
                     int64_t n0, int64_t n1);
int qc_amx_gemm_s8(const qc_amx_act *a, const float *as, const qc_amx_weights *w, const float *bs, const float *bias,
                   int out_f32, void *c, int64_t n0, int64_t n1);

/* The blocking of the kernels (amx_gemm.c, BLIS's loops): nc, the panel of output columns, kc, the
 * K chunk, mc, the group of rows whose A chunk stays in L2, and rows, the rows taken at a time
 * (nc, mc, rows multiples of 32, kc of 64).
 * Results are the same for every blocking; bench_amx --sweep measures them. Not thread-safe: set
 * it before any kernel runs. */
typedef struct qc_amx_blocking {
    int64_t nc, kc, mc, rows;
} qc_amx_blocking;
void qc_amx_set_blocking(const qc_amx_blocking *b); /* ignored unless nc, mc, rows % 32 == 0, kc % 64 == 0 */
qc_amx_blocking qc_amx_get_blocking(void);

#endif
