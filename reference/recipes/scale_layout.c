/* scale_layout.c: the token_group scale layouts of sglang (docs/spec/formats.md §6.2, §2.3):
 * row-major [M, G] fp32; column-major [G, M] fp32 (_per_token_group_quant_8bit_colmajor);
 * column-major TMA-aligned [G, round_up(M, 4)] fp32 with zero padding
 * (create_per_token_group_quant_fp8_output_scale); packed UE8M0: the byte E of each power-of-two
 * scale 2^(E-127), four consecutive groups little-endian in one int32, MN-major, M padded to 4
 * and G to 4 with zero bytes ([ceil(G/4), round_up(M, 4)] int32; sgl-kernel
 * per_token_group_quant_8bit with scale_ue8m0, DeepGEMM pack_ue8m0_to_int). */
#include <string.h>

#include "recipes.h"

static const char *const layout_names[QC_SL_COUNT] = {"row", "col", "col_tma", "packed_ue8m0"};

const char *qc_scale_layout_name(int l) { return l >= 0 && l < QC_SL_COUNT ? layout_names[l] : "?"; }

int qc_scale_layout_from_name(const char *s)
{
    for (int i = 0; i < QC_SL_COUNT; i++)
        if (strcmp(layout_names[i], s) == 0)
            return i;
    return -1;
}

static size_t round_up4(size_t v) { return (v + 3) / 4 * 4; }

size_t qc_scale_layout_size(qc_scale_layout l, size_t m, size_t g)
{
    switch (l) {
    case QC_SL_COL_TMA:      return 4 * g * round_up4(m);
    case QC_SL_PACKED_UE8M0: return 4 * ((g + 3) / 4) * round_up4(m);
    default:                 return 4 * m * g;
    }
}

/* The byte offset of scale (i, j) in the layout, and for packed_ue8m0 of its byte. */
static size_t offset(qc_scale_layout l, size_t m, size_t g, size_t i, size_t j)
{
    switch (l) {
    case QC_SL_COL:          return 4 * (j * m + i);
    case QC_SL_COL_TMA:      return 4 * (j * round_up4(m) + i);
    case QC_SL_PACKED_UE8M0: return 4 * ((j / 4) * round_up4(m) + i) + j % 4;
    default:                 (void)g; return 4 * (i * g + j);
    }
}

int qc_scale_layout_locate(qc_scale_layout l, size_t m, size_t g, size_t byte, size_t *i, size_t *j)
{
    size_t e = byte / 4, mp = round_up4(m); /* the fp32 (or int32 word) the byte is part of */
    switch (l) {
    case QC_SL_COL:          *j = m ? e / m : 0, *i = m ? e % m : 0; break;
    case QC_SL_COL_TMA:      *j = e / mp, *i = e % mp; break;
    case QC_SL_PACKED_UE8M0: *j = e / mp * 4 + byte % 4, *i = e % mp; break;
    default:                 *i = g ? e / g : 0, *j = g ? e % g : 0; break;
    }
    return *i >= m || *j >= g;
}

/* A power-of-two scale's e8m0 byte, or -1 when the scale is not 2^(E-127) for a byte E. +Inf is
 * byte 255 shifted into an fp32 (E << 23, as the inverse decodes it): sglang's JIT kernel writes 255
 * for an Inf amax (golden/real/sglang-0.5.23 jit-token_group-*-ue8m0col). */
static int pow2_byte(float s)
{
    uint32_t b = qc_f32_bits(s);
    if (b == 0x00400000u)
        return 0;
    if (b == QC_F32_INF)
        return 0xFF;
    if ((b & 0x807FFFFFu) != 0 || (b >> 23) == 0)
        return -1;
    return (int)(b >> 23);
}

int qc_scale_layout_apply(qc_scale_layout l, const float *row_major, size_t m, size_t g, uint8_t *out)
{
    memset(out, 0, qc_scale_layout_size(l, m, g));
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < g; j++) {
            float s = row_major[i * g + j];
            size_t o = offset(l, m, g, i, j);
            if (l == QC_SL_PACKED_UE8M0) {
                int e = pow2_byte(s);
                if (e < 0)
                    return -1; /* packed_ue8m0 needs power-of-two scales (ue8m0=1) */
                out[o] = (uint8_t)e;
            } else {
                memcpy(out + o, &s, 4);
            }
        }
    return 0;
}

int qc_scale_layout_inverse(qc_scale_layout l, const uint8_t *in, size_t m, size_t g, float *row_major)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < g; j++) {
            size_t o = offset(l, m, g, i, j);
            if (l == QC_SL_PACKED_UE8M0)
                row_major[i * g + j] = qcref_e8m0_decode(in[o], QC_E8M0_DEC_EXP2);
            else
                memcpy(&row_major[i * g + j], in + o, 4);
        }
    return 0;
}
