/* fp4.c: two E2M1 codes per byte (docs/spec/formats.md §3.3). Element 2i goes to bits 0-3 and element 2i+1 to
 * bits 4-7, as torch's float4_e2m1fn_x2, PTX cvt.rn.satfinite.e2m1x2 (with the operands passed as
 * (odd, even)), torchao after pytorch/ao PR #3123, DeepGEMM, modelopt and triton_kernels do.
 * swap = 1 is the opposite order some checkpoints use (sglang swap_weight_nibbles, PR #23625). */
#include "formats.h"

void qcref_fp4_pack(const uint8_t *codes, size_t n, int swap, uint8_t *packed)
{
    unsigned lo_shift = swap ? 4 : 0, hi_shift = swap ? 0 : 4;
    for (size_t i = 0; i < n; i += 2) {
        uint8_t even = codes[i] & 0xFu;
        uint8_t odd = i + 1 < n ? (codes[i + 1] & 0xFu) : 0;
        packed[i / 2] = (uint8_t)((even << lo_shift) | (odd << hi_shift));
    }
}

void qcref_fp4_unpack(const uint8_t *packed, size_t n, int swap, uint8_t *codes)
{
    unsigned lo_shift = swap ? 4 : 0, hi_shift = swap ? 0 : 4;
    for (size_t i = 0; i < n; i++)
        codes[i] = (uint8_t)((packed[i / 2] >> ((i & 1) ? hi_shift : lo_shift)) & 0xFu);
}
