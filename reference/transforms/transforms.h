/* transforms.h: the checkpoint converters of sglang/vLLM/DeepSeek (docs/spec/formats.md §7, §8,
 * formats.md §12 item 10). Plain functions over caller-owned arrays; row-major shapes. */
#ifndef QCREF_TRANSFORMS_H
#define QCREF_TRANSFORMS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* formats.md §7.1 normalize_e4m3fn_to_e4m3fnuz: bytes 0x80 (FN -0) -> 0x00, every other byte kept (so FN NaN
 * 0x7F/0xFF become finite +-240 in FNUZ), each scale doubled. */
void qcref_normalize_e4m3fn_to_e4m3fnuz(uint8_t *w, size_t n, float *scales, size_t nscales);

/* formats.md §7.4 per_tensor_dequantize: fp16(fl32(e4m3fn(t) * s)); writes f16 codes. */
void qcref_per_tensor_dequantize(const uint8_t *t, size_t n, float s, uint16_t *out_f16);

/* formats.md §7.3 convert_to_channelwise: rows of shard i hold scales[i]; out has sum(widths) entries. */
void qcref_convert_to_channelwise(const float *scales, const size_t *widths, size_t nshards, float *out);

/* formats.md §7.2 requantize_with_max_scale: w [sum(widths), k] e4m3fn, in place; returns the max scale.
 * Shards are requantized only if scales[nshards-1] > -448 (the unfused-checkpoint test against
 * the loader's very negative sentinel); fp16_intermediate 1: sglang/vLLM, 0: AMD ATOM (fp32). */
float qcref_requantize_with_max_scale(uint8_t *w, size_t k, const float *scales, const size_t *widths,
                                      size_t nshards, int fp16_intermediate);
/* Whether requantize_with_max_scale requantizes at all: scales[nshards-1] > -448 (a checkpoint
 * fused on disk keeps the loader's sentinel in the shards after the first). */
int qcref_requant_applies(const float *scales, size_t nshards);

/* formats.md §8.1 cast_e2m1fn_to_e4m3fn: packed e2m1 [rows, cols/2] with e8m0 scales [rows, cols/32] ->
 * e4m3fn [rows, cols] and one e8m0 scale per tile x tile (tile 128 or 32) [ceil(rows/t), ceil(cols/t)].
 * zero8_negative: table[8] is -0.0 (sglang tools/convert_mxfp4_to_fp8.py) instead of +0.0.
 * Returns the number of 1 x 32 sub-blocks whose scale is below max_tile(S) * 2^-14, i.e. where the
 * cast is not lossless (0 = lossless). */
size_t qcref_cast_e2m1fn_to_e4m3fn(const uint8_t *packed, const uint8_t *scale_e8m0, size_t rows, size_t cols,
                                   int tile, int zero8_negative, uint8_t *out_e4m3, uint8_t *out_scale);

/* formats.md §8.2 convert_mxfp8_weight_to_block_fp8: e4m3fn [n, k] with e8m0 bytes [n, k/32] -> e4m3fn [n, k]
 * and fp32 scales [ceil(n/128), ceil(k/128)] (shift decoder, bf16 intermediate, x / s). 0, or -1 when out
 * of memory. */
int qcref_convert_mxfp8_weight_to_block_fp8(const uint8_t *w, const uint8_t *scale_u8, size_t n, size_t k,
                                            uint8_t *out_w, float *out_scale);

/* formats.md §8.3 requant_weight_ue8m0: e4m3fn [n, k] with weight_scale_inv fp32 [ceil(n/128), ceil(k/128)] ->
 * e4m3fn [n, k] and the scales replicated per row and packed: int32 [ceil(kb/4), round_up(n, 4)]
 * of ue8m0 bytes, MN-major (kb = ceil(k/128)). 0, or -1 when out of memory. */
int qcref_requant_weight_ue8m0(const uint8_t *w, const float *scale_inv, size_t n, size_t k, uint8_t *out_w,
                               uint8_t *out_packed);
size_t qcref_requant_weight_ue8m0_packed_bytes(size_t n, size_t k);

#ifdef __cplusplus
}
#endif

#endif
