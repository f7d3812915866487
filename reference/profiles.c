/* profiles.c: the cast profiles of spec/cli.md "Names". Each row says which implementation it
 * reproduces and where that behaviour is written down; spec/formats.md holds the evidence
 * (§1.3 fp8 table, §2.2 e8m0 table, §3.2 fp4 table, §13 measured on an H200). */
#include <string.h>

#include "profiles.h"

static const qc_cast_profile cast_profiles[] = {
    {
        .name = "ml_dtypes",
        .reproduces = "ml_dtypes 0.6 astype (float8.h/mxfloat.h ConvertImpl): non-saturating, NaN keeps "
                      "its sign as the quiet NaN (e5m2 0x7E), e8m0 of zero or negative is NaN; bf16 as "
                      "ml_dtypes.bfloat16 (0x7FC0|sign), f16 as numpy.float16 (payload truncated)",
        .fp8 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_QUIET},
        .bf16 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_QUIET},
        .f16 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_PAYLOAD},
        .ties = QC_TIES_EVEN,
        .nonan = QC_NONAN_MLDTYPES,
        .zero_sign = QC_ZERO_KEEP,
        .e8m0 = QC_E8M0_MLDTYPES,
        .e8m0_decoder = QC_E8M0_DEC_TORCH,
    },
    {
        .name = "torch",
        .reproduces = "torch 2.11 eager/CUDA casts (c10 Float8_*.h, BFloat16.h, Half.h; measured on an H200, "
                      "spec §13): e4m3fn non-saturating with NaN 0x7F|sign, e5m2 NaN 0x7F|sign and Inf on "
                      "overflow, bf16 NaN 0x7FC0, f16 NaN 0x7E00|sign, e8m0 linear RNE ignoring the sign "
                      "with 0 -> 0x00; fp4/fp6 (no torch cast) as torchao _f32_to_fpx_unpacked",
        .fp8 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_ONES},
        .bf16 = {QC_OVERFLOW_NAN, QC_NAN_CANONICAL, QC_NANCODE_QUIET},
        .f16 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_QUIET},
        .ties = QC_TIES_EVEN,
        .nonan = QC_NONAN_TORCHAO,
        .zero_sign = QC_ZERO_KEEP,
        .e8m0 = QC_E8M0_RNE,
        .e8m0_decoder = QC_E8M0_DEC_TORCH,
    },
    {
        .name = "ptx",
        .reproduces = "the GPU's cvt instructions (PTX ISA; CUDA host emulation in cuda_fp8.hpp, cuda_fp6.hpp, "
                      "cuda_fp4.hpp; measured on an H200, spec §13): cvt.rn.satfinite for fp8/fp6/e2m1 with "
                      "NaN -> 0x7F and e2m1/fp6 NaN -> +max, cvt.rp.satfinite for e8m0, cvt.rn for bf16/f16 "
                      "with NaN -> 0x7FFF; fnuz formats (no PTX cvt) saturate with NaN -> 0x80",
        .fp8 = {QC_OVERFLOW_SATFINITE, QC_NAN_CANONICAL, QC_NANCODE_ONES},
        .bf16 = {QC_OVERFLOW_NAN, QC_NAN_CANONICAL, QC_NANCODE_ONES},
        .f16 = {QC_OVERFLOW_NAN, QC_NAN_CANONICAL, QC_NANCODE_ONES},
        .ties = QC_TIES_EVEN,
        .nonan = QC_NONAN_POSMAX,
        .zero_sign = QC_ZERO_KEEP,
        .e8m0 = QC_E8M0_CEIL,
        .e8m0_decoder = QC_E8M0_DEC_TORCH,
    },
};

int qc_cast_profile_count(void) { return (int)(sizeof cast_profiles / sizeof cast_profiles[0]); }

const qc_cast_profile *qc_cast_profile_at(int i)
{
    return i >= 0 && i < qc_cast_profile_count() ? &cast_profiles[i] : NULL;
}

const qc_cast_profile *qc_cast_profile_find(const char *name)
{
    for (int i = 0; i < qc_cast_profile_count(); i++)
        if (strcmp(cast_profiles[i].name, name) == 0)
            return &cast_profiles[i];
    return NULL;
}

qc_cast_policy qc_cast_profile_policy(const qc_cast_profile *p, qc_format f)
{
    qc_cast_policy c = qcref_default_policy();
    const qc_special_rule *r = f == QC_BF16 ? &p->bf16 : f == QC_F16 ? &p->f16 : &p->fp8;
    c.overflow = r->overflow;
    c.nan_sign = r->nan_sign;
    c.nan_code = r->nan_code;
    c.ties = (f == QC_BF16 || f == QC_F16) ? QC_TIES_EVEN : p->ties;
    c.nonan = p->nonan;
    c.zero_sign = p->zero_sign;
    c.e8m0 = p->e8m0;
    c.e8m0_decoder = p->e8m0_decoder;
    return c;
}
