/* fnuz.c: normalize_e4m3fn_to_e4m3fnuz (docs/spec/formats.md §7.1; sglang fp8_utils.py, identical in vLLM and AMD
 * ATOM). value_fnuz(b) = value_fn(b) / 2 for every byte but 0x80, 0x7F, 0xFF, so doubling the
 * scales keeps the dequantized values; 0x80 (FN -0, FNUZ NaN) is zeroed; FN NaN 0x7F/0xFF are left
 * and become +-240 [derived]. */
#include "transforms.h"

void qcref_normalize_e4m3fn_to_e4m3fnuz(uint8_t *w, size_t n, float *scales, size_t nscales)
{
    for (size_t i = 0; i < n; i++)
        if (w[i] == 0x80)
            w[i] = 0x00;
    for (size_t i = 0; i < nscales; i++)
        scales[i] *= 2.0f;
}
