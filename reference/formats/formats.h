/* formats.h: the element formats of low-precision inference and every knob of their conversions.
 *
 * Facts: docs/spec/formats.md §0-§3 (encodings, rounding rules, who does what) and §11 (edge
 * vectors). Every policy a real library disagrees on is an explicit field of qc_cast_policy; a
 * profile (profiles.h) names the bundle one real implementation uses.
 *
 * All codecs are plain functions: no allocation, no global state, no tables, so that they compile
 * as CUDA/HIP device code through QC_HD (reference/formats/device.cu includes the sources). */
#ifndef QCREF_FORMATS_H
#define QCREF_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "../qc_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum qc_format {
    QC_F32,
    QC_BF16,
    QC_F16,
    QC_E4M3FN,
    QC_E4M3FNUZ,
    QC_E5M2,
    QC_E5M2FNUZ,
    QC_E8M0,
    QC_E2M1,
    QC_E2M3,
    QC_E3M2,
    QC_FORMAT_COUNT
} qc_format;

/* Which special values a minifloat reserves (formats.md §1.1, §3.1). */
typedef enum qc_specials {
    QC_SPECIALS_IEEE, /* exponent all ones: Inf (M=0) and NaN (M!=0): e5m2, bf16, f16 */
    QC_SPECIALS_FN,   /* only S.1111.111 is NaN, no Inf: e4m3fn */
    QC_SPECIALS_FNUZ, /* only 0x80 is NaN, no Inf, no -0: e4m3fnuz, e5m2fnuz */
    QC_SPECIALS_NONE  /* every code is finite: e2m1, e2m3, e3m2 */
} qc_specials;

/* A sign-exponent-mantissa format; e8m0 and f32 are not minifloats in this sense. */
typedef struct qc_minifloat {
    int bits, ebits, mbits, bias;
    qc_specials specials;
} qc_minifloat;

/* What a finite value beyond the largest finite code (after rounding) and +-Inf become. Formats
 * without NaN or Inf codes (e2m1, e2m3, e3m2) always saturate. */
typedef enum qc_overflow {
    QC_OVERFLOW_NAN,      /* the NaN code (e4m3fn, fnuz) or Inf where the format has one: torch, ml_dtypes */
    QC_OVERFLOW_SATFINITE /* +-max finite, also for +-Inf: cvt.rn.satfinite */
} qc_overflow;

/* NaN input into a format that has NaN codes (fnuz formats have one NaN, 0x80, and ignore both). */
typedef enum qc_nan_sign {
    QC_NAN_KEEP,     /* the sign of the input NaN is kept (torch, ml_dtypes) */
    QC_NAN_CANONICAL,/* always the positive NaN (PTX cvt) */
    QC_NAN_NEGATIVE  /* always the negative NaN (torch's AVX-512 bf16 conversion: 0xFFFF, golden/real) */
} qc_nan_sign;

typedef enum qc_nan_code {
    QC_NANCODE_ONES,   /* all mantissa bits set: e5m2 0x7F, bf16 0x7FFF, f16 0x7FFF (torch e5m2, PTX) */
    QC_NANCODE_QUIET,  /* only the top mantissa bit: e5m2 0x7E, bf16 0x7FC0, f16 0x7E00 (ml_dtypes, torch bf16/f16) */
    QC_NANCODE_PAYLOAD,/* top payload bits truncated, forced nonzero: numpy float16 (npy_floatbits_to_halfbits) */
    QC_NANCODE_QUIET_PAYLOAD /* top payload bits kept with the quiet bit set: x86 VCVTPS2PH (torch f16 on the CPU) */
} qc_nan_code;

/* Rounding ties (formats.md §3.2); every library rounds to nearest, they differ only here. The rule
 * applies to every minifloat; profiles pin bf16/f16 to even, an explicit policy may override. */
typedef enum qc_ties {
    QC_TIES_EVEN, /* IEEE RNE: PTX, torch, ml_dtypes, torchao, triton_kernels */
    QC_TIES_ZERO, /* "count boundaries strictly exceeded": DeepGEMM and modelopt FP4 references */
    QC_TIES_AWAY  /* floor(|x| + 0.5): microxcaling's default "nearest" */
} qc_ties;

/* NaN input into a format without NaN codes (e2m1, e2m3, e3m2), formats.md §3.2 and §11. */
typedef enum qc_nonan {
    QC_NONAN_POSMAX,   /* +max (0x7 for e2m1): PTX "NaN converts to positive MAXNORM" */
    QC_NONAN_TORCHAO,  /* what torchao's _f32_to_fpx_unpacked bit arithmetic yields (e2m1 +NaN -> 0x3) */
    QC_NONAN_MLDTYPES, /* ml_dtypes' quiet_NaN() is the -0 code: +NaN -> 0x8, -NaN -> 0x0 (e2m1) */
    QC_NONAN_ZERO,     /* code 0: DeepGEMM's reference */
    QC_NONAN_SIGNBIT   /* the sign-bit code (e2m1 0x8) whatever the NaN's sign: modelopt's cast_fp4
                          (golden/real/modelopt-0.47.0, CPU and GPU) */
} qc_nonan;

/* The sign of a result that rounds to zero, for every minifloat (fnuz formats have no -0 and
 * always drop it; the profiles set it only for fp4/fp6, where libraries disagree). */
typedef enum qc_zero_sign {
    QC_ZERO_KEEP,    /* -0 and negative underflow give the -0 code */
    QC_ZERO_DROP,    /* sign bit only on nonzero codes: DeepGEMM FP4 reference */
    QC_ZERO_MODELOPT, /* exact +-0 get the sign bit (modelopt MXFP4: (2 - sign(x)) // 2), others keep it */
    QC_ZERO_EXACT_POSITIVE /* exact +-0 give +0, a negative underflow keeps the sign: microxcaling's
                              sign(x) * floor(|x| + 0.5) (torch.sign(-0.0) is +0; golden/real/microxcaling-7bc4195) */
} qc_zero_sign;

/* fp32 -> e8m0 rules in the wild (formats.md §2.2); names are the CLI's --e8m0 values. */
typedef enum qc_e8m0_rule {
    QC_E8M0_RNE,          /* torch .to(float8_e8m0fnu): linear RNE, sign ignored, 0 -> 0x00 */
    QC_E8M0_MLDTYPES,     /* ml_dtypes >= 0.7 cast: nearest power of two (ties up), zero and negatives -> NaN */
    QC_E8M0_CEIL,         /* cvt.rp.satfinite.ue8m0x2.f32 (CUDA __nv_cvt_float_to_e8m0 RoundPosInf) */
    QC_E8M0_FLOOR_SAT,    /* cvt.rz.satfinite.ue8m0x2.f32 (CUDA __nv_cvt_float_to_e8m0 RoundZero) */
    QC_E8M0_RCEIL,        /* torchao _f32_to_e8m0_rceil: ceil, no saturation */
    QC_E8M0_DEEPGEMM,     /* DeepGEMM ceil_to_ue8m0: ceil on bits, exponent clamped to [1, 254] */
    QC_E8M0_FLOOR,        /* OCP MX / torchao FLOOR: floor(log2 x) - emax, clamped */
    QC_E8M0_TORCHAO_CEIL, /* torchao CEIL: as FLOOR with the exponent bumped when the mantissa is nonzero */
    QC_E8M0_EVEN,         /* torchao EVEN: round the mantissa to mbits first, then FLOOR */
    QC_E8M0_TRITON_UP,    /* triton_kernels ROUND_UP: (bits + 0x7FFFFF) & 0x7F800000 */
    QC_E8M0_TRITON_DOWN,  /* triton_kernels ROUND_DOWN: bits & 0x7F800000 */
    QC_E8M0_LOG2_CEIL,    /* exp2(ceil(log2(x))) in float (sglang/vLLM Triton, modelopt): libm log2f */
    QC_E8M0_MLDTYPES_06,  /* ml_dtypes 0.5-0.6 cast: as 0.7, but an fp32 subnormal above 2^-127 rounds up */
    QC_E8M0_TORCHAO_RCEIL,/* torchao 0.18 _to_mx_rceil (eager): ceil(log2f(x)) clamped to [-127, 127], NaN 255, Inf 254 */
    QC_E8M0_MODELOPT,     /* modelopt MXFP4: u8(ceil(max(log2f(x), -127)) + 127) on the GPU: NaN -> 0, Inf -> 255 */
    QC_E8M0_MODELOPT_CPU, /* the same on the CPU, where the float -> uint8 of +Inf gives 0 (golden/real/modelopt-0.47.0) */
    QC_E8M0_LOG2_FLOOR,   /* microxcaling _shared_exponents: floor(log2f(x)) - emax (0 read as 2^-126), below -127
                             -> 0, NaN, Inf and above 127 -> 0xFF (its NaN shared exponent) */
    QC_E8M0_RULE_COUNT
} qc_e8m0_rule;

/* e8m0 -> fp32 decoders (formats.md §2.3); they disagree on bytes 0x00 and 0xFF. */
typedef enum qc_e8m0_decoder {
    QC_E8M0_DEC_TORCH,      /* torch, CUDA, ml_dtypes: 0 -> 2^-127, 255 -> NaN */
    QC_E8M0_DEC_SHIFT,      /* E << 23 viewed as fp32: 0 -> +0, 255 -> +Inf (DeepGEMM, sglang) */
    QC_E8M0_DEC_EXP2,       /* exp2(E - 127): 0 -> 2^-127, 255 -> +Inf (modelopt) */
    QC_E8M0_DEC_TRTLLM_RCP, /* TRT-LLM exp2f_rcp, the reciprocal 2^(127-E): 0 -> 1.0 */
    QC_E8M0_DEC_CUTEDSL_INV,/* flashinfer cute-dsl ue8m0_to_inv_scale_fast: max(254-E, 0) << 23, 0 -> 0 */
    QC_E8M0_DEC_TORCHAO,    /* torchao to_mx FLOOR/CEIL/EVEN: E << 23 clamped to >= 2^-126: 0 -> 2^-126, 255 -> +Inf */
    QC_E8M0_DEC_TORCHAO_RCP,/* torchao _to_mx_rceil multiplier 2^(127-E): 0 -> 1.0, 254 -> 2^-127, 255 -> NaN */
    QC_E8M0_DECODER_COUNT
} qc_e8m0_decoder;

typedef struct qc_cast_policy {
    qc_overflow overflow;
    qc_nan_sign nan_sign;
    qc_nan_code nan_code;
    qc_ties ties;
    qc_nonan nonan;
    qc_zero_sign zero_sign;
    qc_e8m0_rule e8m0;
    int e8m0_emax;  /* FLOOR, TORCHAO_CEIL, EVEN: emax of the element format (0 for a plain cast) */
    int e8m0_mbits; /* EVEN: mantissa bits of the element format */
    qc_e8m0_decoder e8m0_decoder;
} qc_cast_policy;

/* The IEEE-style default every library agrees on where it matters least: RNE, NaN on overflow,
 * sign kept; what each real library does differently lives in profiles.c. */
QC_HD qc_cast_policy qcref_default_policy(void);

/* Format descriptors. qcref_minifloat() is valid for every format but f32 and e8m0. */
QC_HD int qcref_is_minifloat(qc_format f);
QC_HD qc_minifloat qcref_minifloat(qc_format f);
QC_HD int qcref_format_bits(qc_format f);  /* 32, 16, 8, 6 or 4 */
QC_HD uint32_t qcref_max_magnitude(qc_minifloat m); /* the code of the largest finite value */

/* Minifloats (fp8, fp6, fp4, bf16, f16): one rounding rule for all of them (minifloat.c). */
QC_HD uint32_t qcref_minifloat_encode(qc_minifloat m, float x, const qc_cast_policy *p);
QC_HD float qcref_minifloat_decode(qc_minifloat m, uint32_t code);

/* e8m0 (e8m0.c). */
QC_HD uint8_t qcref_e8m0_encode(float x, const qc_cast_policy *p);
QC_HD float qcref_e8m0_decode(uint8_t code, qc_e8m0_decoder d);

/* Any format by name: encode from fp32, decode to fp32 (the code sits in the low bits). */
QC_HD uint32_t qcref_encode(qc_format f, float x, const qc_cast_policy *p);
QC_HD float qcref_decode(qc_format f, uint32_t code, const qc_cast_policy *p);

/* FP4 packing (fp4.c, formats.md §3.3): element 2i in the low nibble, 2i+1 in the high nibble; with
 * swap set the other way round (checkpoints written with the opposite order, sglang PR #23625).
 * n codes -> (n + 1) / 2 bytes; an odd tail leaves the other nibble of the last byte zero (the
 * high one, or with swap the low one). */
void qcref_fp4_pack(const uint8_t *codes, size_t n, int swap, uint8_t *packed);
void qcref_fp4_unpack(const uint8_t *packed, size_t n, int swap, uint8_t *codes);

/* Names (names.c): the stable CLI names of docs/spec/cli.md. Lookups return -1 when unknown. */
const char *qc_format_name(int f);
int qc_format_from_name(const char *name);
const char *qc_e8m0_rule_name(int r);
int qc_e8m0_rule_from_name(const char *name);
const char *qc_e8m0_decoder_name(int d);
int qc_e8m0_decoder_from_name(const char *name);
const char *qc_overflow_name(int v);
const char *qc_nan_sign_name(int v);
const char *qc_nan_code_name(int v);
const char *qc_ties_name(int v);
const char *qc_nonan_name(int v);
const char *qc_zero_sign_name(int v);
int qc_overflow_from_name(const char *s);
int qc_nan_sign_from_name(const char *s);
int qc_nan_code_from_name(const char *s);
int qc_ties_from_name(const char *s);
int qc_nonan_from_name(const char *s);
int qc_zero_sign_from_name(const char *s);

#ifdef __cplusplus
}
#endif

#endif
