/* profiles.c: the cast profiles of docs/spec/cli.md "Names". Each row says which implementation it
 * reproduces and where that behaviour is written down; docs/spec/formats.md holds the evidence
 * (formats.md §1.3 fp8 table, §2.2 e8m0 table, §3.2 fp4 table, §13 measured on an H200). */
#include <string.h>

#include "profiles.h"

/* What torch's casts share wherever they run: e4m3fn/e5m2 without saturation, NaN 0x7F with its
 * sign, RNE, torchao's fp4/fp6 bit arithmetic, e8m0 linear RNE; only bf16/f16 NaNs differ. */
#define TORCH_CAST_COMMON                                                                                       \
    .fp8 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_ONES}, .ties = QC_TIES_EVEN, .nonan = QC_NONAN_TORCHAO,   \
    .zero_sign = QC_ZERO_KEEP, .e8m0 = QC_E8M0_RNE, .e8m0_decoder = QC_E8M0_DEC_TORCH

static const qc_cast_profile cast_profiles[] = {
    {
        .name = "ml_dtypes",
        .of = {"ml_dtypes", "0.7"},
        .reproduces = "ml_dtypes 0.7 astype (float8.h/mxfloat.h ConvertImpl): non-saturating, NaN keeps "
                      "its sign as the quiet NaN (e5m2 0x7E), e8m0 of zero or negative is NaN and an fp32 "
                      "subnormal goes to the nearer of 2^-127 and 2^-126 (ties up); bf16 as "
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
        .name = "ml_dtypes-0.6",
        .of = {"ml_dtypes", "0.5 0.6"},
        .reproduces = "ml_dtypes 0.5.x and 0.6.x (0.5.1, 0.5.4 and 0.6.0 give identical bytes): as ml_dtypes, "
                      "except that e8m0 rounds every fp32 subnormal above 2^-127 up to 2^-126 (docs/spec/formats.md §14)",
        .fp8 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_QUIET},
        .bf16 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_QUIET},
        .f16 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_PAYLOAD},
        .ties = QC_TIES_EVEN,
        .nonan = QC_NONAN_MLDTYPES,
        .zero_sign = QC_ZERO_KEEP,
        .e8m0 = QC_E8M0_MLDTYPES_06,
        .e8m0_decoder = QC_E8M0_DEC_TORCH,
    },
    {
        .name = "torch",
        .of = {"torch", "2.11"},
        .reproduces = "torch 2.11 eager/CUDA casts of one element (c10 Float8_*.h, BFloat16.h, Half.h; measured on an "
                      "H200, formats.md §13; a tensor's bf16/f16 NaNs: torch-cpu, torch-cuda): e4m3fn "
                      "non-saturating with NaN 0x7F|sign, e5m2 NaN 0x7F|sign and Inf on overflow, bf16 NaN 0x7FC0, f16 NaN 0x7E00|sign, e8m0 linear RNE ignoring the sign "
                      "with 0 -> 0x00; fp4/fp6 (no torch cast) as torchao _f32_to_fpx_unpacked",
        .bf16 = {QC_OVERFLOW_NAN, QC_NAN_CANONICAL, QC_NANCODE_QUIET},
        .f16 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_QUIET},
        TORCH_CAST_COMMON,
    },
    {
        .name = "torch-cpu",
        .of = {"torch", "2.11"},
        .reproduces = "torch 2.11 x.to(dtype) of a CPU tensor (vectorized kernels; golden/real/torch-2.11.0, "
                      "formats.md §15): as torch, but every bf16 NaN is 0xFFFF (the AVX-512 conversion) and an f16 "
                      "NaN keeps its sign and top payload bits with the quiet bit set (VCVTPS2PH)",
        .bf16 = {QC_OVERFLOW_NAN, QC_NAN_NEGATIVE, QC_NANCODE_ONES},
        .f16 = {QC_OVERFLOW_NAN, QC_NAN_KEEP, QC_NANCODE_QUIET_PAYLOAD},
        TORCH_CAST_COMMON,
    },
    {
        .name = "torch-cuda",
        .of = {"torch", "2.11"},
        .reproduces = "torch 2.11 x.to(dtype) of a CUDA tensor (H200; golden/real/torch-2.11.0, formats.md §15): "
                      "as torch, but every bf16 and f16 NaN is 0x7FFF",
        .bf16 = {QC_OVERFLOW_NAN, QC_NAN_CANONICAL, QC_NANCODE_ONES},
        .f16 = {QC_OVERFLOW_NAN, QC_NAN_CANONICAL, QC_NANCODE_ONES},
        TORCH_CAST_COMMON,
    },
    {
        .name = "ptx",
        .of = {"PTX cvt on sm_90", "CUDA-13.0 H200"},
        .reproduces = "the GPU's cvt instructions (PTX ISA; CUDA host emulation in cuda_fp8.hpp, cuda_fp6.hpp, "
                      "cuda_fp4.hpp; measured on an H200, formats.md §13): cvt.rn.satfinite for fp8/fp6/e2m1 with "
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

int qc_provenance_covers(const qc_provenance *v, const char *version)
{
    const char *t = v->versions;
    while (t && *t) {
        size_t n = strcspn(t, " ");
        if (*t >= '0' && *t <= '9' && strncmp(t, version, n) == 0 && (version[n] == '\0' || version[n] == '.'))
            return 1;
        t += n + (t[n] == ' ');
    }
    return 0;
}

const qc_cast_profile *qc_cast_profile_for(const char *library, const char *version)
{
    for (int i = 0; i < qc_cast_profile_count(); i++)
        if (cast_profiles[i].of.library && strcmp(cast_profiles[i].of.library, library) == 0 &&
            qc_provenance_covers(&cast_profiles[i].of, version))
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

/* ------------------------------------------------------------------------------------------ */
/* Recipe profiles. Each row reproduces one real implementation's order of operations; the
 * evidence is in docs/spec/formats.md (section cited per row) and docs/notes/recipes.md. Rows marked
 * [derived] follow the spec's reading of the source, not a measurement. */

#define POW2(rule, dec) {.e8m0 = (rule), .e8m0_emax = -1, .e8m0_mbits = 3, .e8m0_decoder = (dec)}
/* torchao 0.18.0 to_mx (golden/real/torchao-0.18.0): FLOOR/CEIL/EVEN divide by the byte shifted
 * into an fp32 and clamped to >= 2^-126 (byte 255 is +Inf: a NaN block's finite elements become
 * +-0); RCEIL's byte is ceil(log2f(amax / max)) clamped to [-127, 127] with NaN 255 and Inf 254
 * (a float log2: just above a power of two it is floor's byte), and multiplies by 2^(127-E) (1 for byte 0, 2^-127 for 254). */
#define MX_TORCHAO(rule, el) .elem = (el), .group = 32, .amax_nan = QC_AMAX_NAN_PROPAGATE, \
    .mx_rule = QC_MX_E8M0_OF_AMAX, .pow2_policy = POW2(rule, QC_E8M0_DEC_TORCH), .mx_op = QC_MX_DIV, \
    .mx_dec = QC_E8M0_DEC_TORCHAO, .clamp = QC_CLAMP_TORCH
#define MX_RCEIL(el) .elem = (el), .group = 32, .amax_nan = QC_AMAX_NAN_PROPAGATE, \
    .mx_rule = QC_MX_E8M0_OF_DESCALE, .scale_op = QC_SCALE_DIV, \
    .pow2_policy = POW2(QC_E8M0_TORCHAO_RCEIL, QC_E8M0_DEC_TORCH), .mx_op = QC_MX_MUL, .mx_dec = QC_E8M0_DEC_TORCHAO_RCP, \
    .clamp = QC_CLAMP_TORCH
#define MX_OCP(el) .elem = (el), .group = 32, .amax_nan = QC_AMAX_NAN_PROPAGATE, \
    .mx_rule = QC_MX_E8M0_OF_AMAX, .pow2_policy = POW2(QC_E8M0_LOG2_FLOOR, QC_E8M0_DEC_TORCH), .mx_op = QC_MX_DIV
#define OCP_MODS (QC_MOD_SATFINITE | QC_MOD_TIES_AWAY | QC_MOD_ZERO_EXACT_POSITIVE)
/* What sgl-kernel's per_token_group_quant_8bit and the sglang JIT kernel that replaced it share:
 * fmaxf amax floored at 1e-10, stored s = amax * fl32(1/448), q = x * (448 / amax), UE8M0 on the bits */
#define SGL_TOKEN_GROUP .elem = QC_E4M3FN, .group = 128, .eps_at = QC_EPS_AMAX, .eps = 1e-10f, \
    .scale_op = QC_SCALE_MUL_RCP, .pow2 = QC_POW2_E8M0, .elem_op = QC_ELEM_MUL_MAX_AMAX
#define TORCHAO_SRC "pytorch/ao:torchao/prototype/mx_formats/mx_tensor.py (to_mx"
#define OCP_SRC "microsoft/microxcaling:mx/mx_ops.py _quantize_mx (OCP MX v1.0 section 6.3): E = floor(log2f(amax)) " \
    "- emax (log2 in float32: just below 2^k it is k), a block with Inf or NaN gets E = NaN (byte 0xFF, every " \
    "element NaN), sign(x) * floor(|x| + 0.5) (ties away; an exact -0 gives +0), saturate_normals; " \
    "golden/real/microxcaling-7bc4195, formats.md §15.2"

/* What each row was read from (docs/spec/README.md lists the snapshots). sglang and sgl-kernel
 * files were read one by one, without a recorded commit. */
#define OF_SGL_KERNEL {"sgl-kernel", "source-read"}
#define OF_SGL_KERNEL_RECORDED {"sglang-kernel 0.4.6", "its wheel's sm90 common_ops run on an H200, golden/real/sglang-kernel-0.4.6"}
#define OF_SGLANG {"sglang", "source-read"}
#define OF_SGLANG_TRITON {"sglang Triton kernels", "source-read; scale rule measured with triton 3.6 on an H200"}
#define OF_SGLANG_RECORDED {"sglang", "0.5.23 (its wheel's code run on an H200, golden/real/sglang-0.5.23)"}
#define OF_DEEPGEMM {"DeepGEMM", "@54e2261"}
#define OF_VLLM {"vLLM", "PR-53346"}
#define OF_TORCHAO {"torchao", "0.18.0 (with torch 2.11)"}
#define OF_OCP {"microxcaling (OCP MX v1.0)", "@7bc4195"}
#define OF_FLASHINFER {"flashinfer", "@fb28d72"}
#define OF_TRITON_KERNELS {"triton_kernels (sglang-kernel 0.4.10 wheel)", "golden/real/sglang-kernel-0.4.10"}
#define OF_AITER {"aiter", "@e404860"}
#define OF_MODELOPT {"nvidia-modelopt", "0.47.0 (its wheel's code run on the H200 host, golden/real/modelopt-0.47.0)"}

static const qc_recipe_profile recipe_profiles[] = {
    /* ---- tensor (formats.md §6.3) ---- */
    {"sgl-kernel", QC_RECIPE_TENSOR,
     "sgl-kernel sgl_per_tensor_quant_fp8 / scaled_fp8_quant, sm90 build (-use_fast_math: `/` is "
     "div.approx.ftz, 1/s is rcp.approx.ftz): amax by fmaxf (NaN ignored), no eps, s = amax/448, "
     "q = fmaxf(fminf(x*(1/s), 448), -448) -> c10 e4m3fn; all-zero -> 1/0 = Inf, 0*Inf = NaN -> 0x7E "
     "(B26); sgl-kernel/csrc/gemm/per_tensor_quant_fp8.cu, CMakeLists.txt common_ops_sm90_build",
     "torch", 0, NULL,
     {.elem = QC_E4M3FN, .div_mode = QC_DIV_FAST, .clamp = QC_CLAMP_FMINF}, OF_SGL_KERNEL},
    {"sgl-kernel-sm100", QC_RECIPE_TENSOR,
     "the same kernel in sgl-kernel's precise-math sm100 build: IEEE amax/448 and 1/s; sglang 0.5.23's JIT "
     "per_tensor_quant_fp8 (no fast math) gives the same bytes (golden/real/sglang-0.5.23)",
     "torch", 0, NULL, {.elem = QC_E4M3FN, .clamp = QC_CLAMP_FMINF}, OF_SGL_KERNEL},
    {"sglang-native", QC_RECIPE_TENSOR,
     "sglang HIP fallback without aiter (fp8_kernel.py _native_dynamic_per_tensor_quant_fp8 / static), "
     "torch on the GPU: amax.clamp(1e-12) (NaN propagates), s = amax / fp8_max (t * fl32(1/c), formats.md §13), "
     "q = clamp(x / s) -> fp8 (torch cast; every NaN the GPU's canonical one); on a bf16 input every "
     "op runs in bf16: s and x / s are rounded to bf16 (formats.md §15)",
     "torch", 0, NULL,
     {.elem = QC_E4M3FN, .amax_nan = QC_AMAX_NAN_PROPAGATE, .eps_at = QC_EPS_AMAX, .eps = 1e-12f,
      .scale_op = QC_SCALE_MUL_RCP, .elem_op = QC_ELEM_DIV, .clamp = QC_CLAMP_TORCH, .nan_canonical = 1,
      .bf16_ops = 1}, OF_SGLANG_RECORDED},
    {"input-to-float8", QC_RECIPE_TENSOR,
     "sglang fp8_utils.py input_to_float8 (non-CUDA path), torch on the GPU: amax = max(|min|, |max|).clamp(1e-12) "
     "in fp32, scale = fp_max / amax as torch does a float over a tensor (amax.reciprocal() * fp_max), q = "
     "clamp(x * scale) -> fp8, returns scale.reciprocal() as the dequant scale; every NaN canonical "
     "(golden/real/sglang-0.5.23)",
     "torch", 0, NULL,
     {.elem = QC_E4M3FN, .amax_nan = QC_AMAX_NAN_PROPAGATE, .eps_at = QC_EPS_AMAX, .eps = 1e-12f,
      .scale_op = QC_SCALE_RCP_OF_MULT, .elem_op = QC_ELEM_MUL_MAX_AMAX, .clamp = QC_CLAMP_TORCH, .nan_canonical = 1},
     OF_SGLANG_RECORDED},

    /* ---- token (formats.md §6.3) ---- */
    {"sgl-kernel", QC_RECIPE_TOKEN,
     "sgl-kernel sgl_per_token_quant_fp8 small-batch kernel, sm90 fast-math build: fmaxf amax, "
     "s = amax/448, q = fmaxf(fminf(x*(1/s), 448), -448) -> __nv_fp8_e4m3 (satfinite); no zero guard, so "
     "an all-zero row gives 0x7E bytes (B26); sgl-kernel/csrc/gemm/per_token_quant_fp8.cu; sglang 0.5.23's JIT "
     "per_token_quant_fp8 gives the same bytes (golden/real/sglang-0.5.23)",
     "ptx", 0, NULL, {.elem = QC_E4M3FN, .div_mode = QC_DIV_FAST, .clamp = QC_CLAMP_FMINF}, OF_SGL_KERNEL},
    {"sgl-kernel-warp", QC_RECIPE_TOKEN,
     "the warp kernel of the same op (num_tokens >= 2*SMs*8): as sgl-kernel, but scale 0 -> "
     "scale_inv 0, so an all-zero row gives 0x00 (formats.md §6.3) [derived]",
     "ptx", 0, NULL, {.elem = QC_E4M3FN, .div_mode = QC_DIV_FAST, .zero_guard = 1, .clamp = QC_CLAMP_FMINF}, OF_SGL_KERNEL},
    {"sgl-kernel-sm100", QC_RECIPE_TOKEN, "the small-batch kernel in the precise-math sm100 build",
     "ptx", 0, NULL, {.elem = QC_E4M3FN, .clamp = QC_CLAMP_FMINF}, OF_SGL_KERNEL},
    {"sglang-native", QC_RECIPE_TOKEN,
     "sglang HIP fallback per-token (fp8_kernel.py _native_dynamic_per_token_quant_fp8): as the "
     "per-tensor fallback, per row",
     "torch", 0, NULL,
     {.elem = QC_E4M3FN, .amax_nan = QC_AMAX_NAN_PROPAGATE, .eps_at = QC_EPS_AMAX, .eps = 1e-12f,
      .scale_op = QC_SCALE_MUL_RCP, .elem_op = QC_ELEM_DIV, .clamp = QC_CLAMP_TORCH, .nan_canonical = 1,
      .bf16_ops = 1}, OF_SGLANG_RECORDED},

    /* ---- token_group (formats.md §6.2, §13, B12) ---- */
    {"triton-row", QC_RECIPE_TOKEN_GROUP,
     "sglang Triton _per_token_group_quant_8bit (fp8_kernel.py): amax = max(tl.max|x|, 1e-10) (NaN "
     "ignored, formats.md §13), s = amax / 448 and 1.0 / s as Triton emits them (div.full.f32 = a * rcp.approx(b), "
     "measured), q = tl.clamp(x * (1/s)) (NaN -> -448, formats.md §13) -> float8e4nv (satfinite); ue8m0: "
     "exp2(ceil(log2(s)))",
     "ptx", 0, NULL,
     {.elem = QC_E4M3FN, .group = 128, .eps_at = QC_EPS_AMAX, .eps = 1e-10f, .div_mode = QC_DIV_FULL,
      .pow2 = QC_POW2_LOG2_CEIL, .clamp = QC_CLAMP_TRITON}, OF_SGLANG_TRITON},
    {"triton-col", QC_RECIPE_TOKEN_GROUP,
     "sglang Triton _per_token_group_quant_8bit_colmajor: as triton-row with q = x / s (division)",
     "ptx", 0, NULL,
     {.elem = QC_E4M3FN, .group = 128, .eps_at = QC_EPS_AMAX, .eps = 1e-10f, .div_mode = QC_DIV_FULL,
      .pow2 = QC_POW2_LOG2_CEIL, .elem_op = QC_ELEM_DIV, .clamp = QC_CLAMP_TRITON}, OF_SGLANG_TRITON},
    {"sgl-kernel", QC_RECIPE_TOKEN_GROUP,
     "sgl-kernel per_token_group_quant_8bit, sm90 fast-math build: fmaxf amax floored at 1e-10, stored "
     "s = amax * (1/448), q = x * (448/amax) -> __nv_cvt_float2_to_fp8x2 satfinite, no clamp; ue8m0: "
     "E = fast_log2_ceil (ceil on the bits), scale (E+127)<<23, q = x * 2^-E; "
     "sgl-kernel/csrc/gemm/per_token_group_quant_8bit.cu (sglang 0.5.23 calls its JIT kernel instead: sglang-jit)",
     "ptx", 0, NULL,
     {SGL_TOKEN_GROUP, .div_mode = QC_DIV_FAST, .pow2_policy = POW2(QC_E8M0_CEIL, QC_E8M0_DEC_SHIFT)}, OF_SGL_KERNEL},
    {"sgl-kernel-v2", QC_RECIPE_TOKEN_GROUP,
     "sgl-kernel per_token_group_quant_8bit_v2 (what sgl_per_token_group_quant_8bit runs for groups 16-128), sm90 "
     "fast-math build: as sgl-kernel, but q is clamped by fminf(fmaxf(q, -448), 448) (NaN -> -448) and the "
     "UE8M0 byte is exponent + (mantissa != 0) unclamped (Inf amax -> 255) with the multiplier (254 - E) << 23, "
     "as sglang-jit (golden/real/sglang-kernel-0.4.6 aot-token_group-v2-*, formats.md §15.2); bf16/f16 input only",
     "ptx", 0, NULL,
     {SGL_TOKEN_GROUP, .div_mode = QC_DIV_FAST, .pow2_policy = POW2(QC_E8M0_RCEIL, QC_E8M0_DEC_SHIFT),
      .pow2_mult = QC_POW2_MULT_INV_BITS, .clamp = QC_CLAMP_TRITON}, OF_SGL_KERNEL_RECORDED},
    {"sgl-kernel-sm100", QC_RECIPE_TOKEN_GROUP, "the same kernel in the precise-math sm100 build",
     "ptx", 0, NULL,
     {SGL_TOKEN_GROUP, .pow2_policy = POW2(QC_E8M0_CEIL, QC_E8M0_DEC_SHIFT)}, OF_SGL_KERNEL},
    {"sglang-jit", QC_RECIPE_TOKEN_GROUP,
     "sglang 0.5.23's CUDA JIT per_token_group_quant (kernels/jit/csrc/gemm/per_token_group_quant.cuh, "
     "--use_fast_math on sm_90), which replaced sgl-kernel's: as sgl-kernel, but an f32/f16 input is "
     "clamped by fminf(q, 448) (NaN -> 448) and a bf16 one is not; ue8m0: E = exponent + (mantissa != 0) "
     "unclamped (an Inf amax gives 255), q = x * fp32((254 - E) << 23) (255: -Inf) (formats.md §15)",
     "ptx", 0, NULL,
     {SGL_TOKEN_GROUP, .div_mode = QC_DIV_FAST, .pow2_policy = POW2(QC_E8M0_RCEIL, QC_E8M0_DEC_SHIFT),
      .pow2_mult = QC_POW2_MULT_INV_BITS, .clamp = QC_CLAMP_FMINF_UPPER, .bf16_input_unclamped = 1}, OF_SGLANG_RECORDED},
    {"deepgemm-ref", QC_RECIPE_TOKEN_GROUP,
     "DeepGEMM deep_gemm/utils/math.py per_token_cast_to_fp8 (torch on the GPU; every NaN the GPU's "
     "canonical one): amax.clamp(1e-4) (NaN propagates), s = amax / 448 (t * fl32(1/448), formats.md §13), q = x * (1/s) -> torch e4m3fn; ue8m0: "
     "ceil_to_ue8m0 (exponent clamped to [1, 254]); K need not be a multiple of 128: the last group is "
     "zero-padded and the padding not returned (formats.md §14)",
     "torch", 0, NULL,
     {.elem = QC_E4M3FN, .group = 128, .partial_group = 1, .amax_nan = QC_AMAX_NAN_PROPAGATE, .eps_at = QC_EPS_AMAX, .eps = 1e-4f,
      .scale_op = QC_SCALE_MUL_RCP, .pow2 = QC_POW2_E8M0,
      .pow2_policy = POW2(QC_E8M0_DEEPGEMM, QC_E8M0_DEC_EXP2), .nan_canonical = 1}, OF_DEEPGEMM},
    {"torch-native", QC_RECIPE_TOKEN_GROUP,
     "sglang's torch reference native_per_token_group_quant_fp8 (test/srt/test_fp8_kernel.py; the same "
     "function in vLLM's tests) on the GPU: amax = |x|.max().clamp(min=1e-10) (NaN propagates), s = amax / 448 "
     "with a Python float (t * fl32(1/448) on CUDA, formats.md §13), q = (x / s) (a tensor divisor: IEEE "
     "division) .clamp(-448, 448) (NaN stays; on the GPU every NaN is the positive canonical one) -> torch "
     "e4m3fn; no ue8m0 form",
     "torch", 0, NULL,
     {.elem = QC_E4M3FN, .group = 128, .amax_nan = QC_AMAX_NAN_PROPAGATE, .eps_at = QC_EPS_AMAX, .eps = 1e-10f,
      .scale_op = QC_SCALE_MUL_RCP, .elem_op = QC_ELEM_DIV, .clamp = QC_CLAMP_TORCH, .nan_canonical = 1},
     OF_SGLANG},
    {"torch-native-cpu", QC_RECIPE_TOKEN_GROUP,
     "the same function on the CPU, where torch divides by the Python float: s = amax / 448 and q = x / s, "
     "both IEEE: the textbook formulation (numpy's)",
     "torch", 0, NULL,
     {.elem = QC_E4M3FN, .group = 128, .amax_nan = QC_AMAX_NAN_PROPAGATE, .eps_at = QC_EPS_AMAX, .eps = 1e-10f,
      .elem_op = QC_ELEM_DIV, .clamp = QC_CLAMP_TORCH}, OF_SGLANG},
    {"vllm-cpp", QC_RECIPE_TOKEN_GROUP,
     "vLLM C++ per_token_group_quant (vllm-project/vllm#53339 / PR #53346): y_s = amax / 448, eps on "
     "the scale: fmaxf(y_s, 1e-10) (all-zero group under ue8m0 -> 2^-33, B12), ue8m0: "
     "exp2f(ceilf(log2f(.))), q = x / y_s clamped by fminf/fmaxf -> satfinite [derived]",
     "ptx", 0, NULL,
     {.elem = QC_E4M3FN, .group = 128, .eps_at = QC_EPS_SCALE, .eps = 1e-10f, .pow2 = QC_POW2_LOG2_CEIL,
      .elem_op = QC_ELEM_DIV, .clamp = QC_CLAMP_FMINF}, OF_VLLM},

    /* ---- block 128x128 (formats.md §6.4, §8.3) ---- */
    {"deepgemm-ref", QC_RECIPE_BLOCK,
     "DeepGEMM per_block_cast_to_fp8 (sglang copy; torch on the GPU, every NaN canonical): zero-pad to "
     "128x128 tiles, amax.clamp(1e-4), "
     "s = amax / 448 (torch on the GPU), q = x * (1/s) -> torch e4m3fn; weight_scale_inv = s is the "
     "dequant multiplier; ue8m0: ceil_to_ue8m0",
     "torch", 0, NULL,
     {.elem = QC_E4M3FN, .block_r = 128, .block_c = 128, .amax_nan = QC_AMAX_NAN_PROPAGATE,
      .eps_at = QC_EPS_AMAX, .eps = 1e-4f, .scale_op = QC_SCALE_MUL_RCP, .pow2 = QC_POW2_E8M0,
      .pow2_policy = POW2(QC_E8M0_DEEPGEMM, QC_E8M0_DEC_EXP2), .nan_canonical = 1}, OF_DEEPGEMM},
    {"sglang-native", QC_RECIPE_BLOCK,
     "sglang's bf16 -> block-fp8 requant of convert_mxfp8_weight_to_block_fp8 (mxfp8_block_convert.py): "
     "amax.clamp(1e-4), s = amax / 448, q = x / s (division) -> torch e4m3fn (formats.md §8.2); every NaN the "
     "canonical one, as recorded on an H200 (its target is AMD's MI300, whose NaN bits are not recorded)",
     "torch", 0, NULL,
     {.elem = QC_E4M3FN, .block_r = 128, .block_c = 128, .amax_nan = QC_AMAX_NAN_PROPAGATE,
      .eps_at = QC_EPS_AMAX, .eps = 1e-4f, .scale_op = QC_SCALE_MUL_RCP, .elem_op = QC_ELEM_DIV, .nan_canonical = 1},
     OF_SGLANG_RECORDED},

    /* ---- mxfp8 (formats.md §5) ---- */
    {"torchao-floor", QC_RECIPE_MXFP8, TORCHAO_SRC ", FLOOR, the default): E = floor(log2 amax) - emax, "
     "x / max(2^(E-127), 2^-126) (byte 255: x / Inf), torch.clamp to the element max, torch cast", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_FLOOR, QC_E4M3FN)}, OF_TORCHAO},
    {"torchao-ceil", QC_RECIPE_MXFP8, TORCHAO_SRC ", CEIL)", "torch", 0, NULL, {MX_TORCHAO(QC_E8M0_TORCHAO_CEIL, QC_E4M3FN)}, OF_TORCHAO},
    {"torchao-even", QC_RECIPE_MXFP8, TORCHAO_SRC ", EVEN: mantissa rounded to mbits first)", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_EVEN, QC_E4M3FN)}, OF_TORCHAO},
    {"torchao-rceil", QC_RECIPE_MXFP8, TORCHAO_SRC ", RCEIL, eager _to_mx_rceil: E = ceil(log2(amax / max)) "
     "clamped, NaN 255, Inf 254; x * 2^(127-E), 1 for E = 0)",
     "torch", 0, NULL, {MX_RCEIL(QC_E4M3FN)}, OF_TORCHAO},
    {"ocp", QC_RECIPE_MXFP8, OCP_SRC, "ml_dtypes", OCP_MODS, NULL, {MX_OCP(QC_E4M3FN)}, OF_OCP},
    {"flashinfer-cutedsl", QC_RECIPE_MXFP8,
     "flashinfer mxfp8_quantize(backend='cute-dsl') (sglang's default): E = float_to_ue8m0_fast(amax * "
     "fl32(1/448)), q = x * ue8m0_to_inv_scale_fast(E) (0 for E = 0 and 254), clamp +-448, "
     "cvt.rn.satfinite; flashinfer/quantization/quantization_cute_dsl_utils.py [derived]",
     "ptx", 0, NULL,
     {.elem = QC_E4M3FN, .group = 32, .amax_nan = QC_AMAX_NAN_PROPAGATE, .mx_rule = QC_MX_CUTEDSL,
      .scale_op = QC_SCALE_MUL_RCP, .mx_op = QC_MX_MUL, .mx_dec = QC_E8M0_DEC_CUTEDSL_INV, .clamp = QC_CLAMP_FMINF}, OF_FLASHINFER},
    {"flashinfer-fast", QC_RECIPE_MXFP8,
     "flashinfer mxfp8_quantize(backend='cuda') = TRT-LLM cvt_warp_fp16_to_mxfp8 (fast math): SF = "
     "cvt.rp.satfinite.ue8m0(vecMax * rcp.approx(448)), q = x * rcp.approx(float(SF)), fminf/fmaxf "
     "clamp, cvt e4m3; byte 0 decodes to 2^-127, rcp.approx.ftz gives Inf -> 0*Inf -> +448 (B13, formats.md §5); "
     "csrc/nv_internal/tensorrt_llm/kernels/quantization_utils.cuh [computes on sm_100+ only: on sm_90 zero codes, no scales; formats.md §15.2]",
     "ptx", 0, NULL,
     {.elem = QC_E4M3FN, .group = 32, .mx_rule = QC_MX_E8M0_OF_DESCALE, .scale_op = QC_SCALE_MUL_RCP,
      .div_mode = QC_DIV_FAST, .pow2_policy = POW2(QC_E8M0_CEIL, QC_E8M0_DEC_TORCH), .mx_op = QC_MX_MUL_RCP,
      .clamp = QC_CLAMP_FMINF}, OF_FLASHINFER},
    {"triton-kernels", QC_RECIPE_MXFP8,
     "sglang mxfp8_group_quantize -> triton_kernels downcast_to_mxfp ROUND_UP: dequant = amax / 448 "
     "(Triton div.full), E = (bits + 0x7FFFFF) & 0x7F800000, q = x * (1/dequant) (0 if dequant 0), "
     "Triton cast (satfinite); _downcast_to_mxfp.py",
     "ptx", 0, NULL,
     {.elem = QC_E4M3FN, .group = 32, .mx_rule = QC_MX_E8M0_OF_DESCALE, .div_mode = QC_DIV_FULL,
      .pow2_policy = POW2(QC_E8M0_TRITON_UP, QC_E8M0_DEC_SHIFT), .mx_op = QC_MX_MUL_RECIP_NZ,
      .mx_dec = QC_E8M0_DEC_SHIFT, .dequant_e8m0 = QC_E8M0_DEC_SHIFT}, OF_TRITON_KERNELS},
    {"sgl-kernel", QC_RECIPE_MXFP8,
     "sglang DeepGEMM MXFP8 activation path: sglang_per_token_group_quant_fp8(x, 32, scale_ue8m0=True) "
     "(sm90 fast math): amax floored at 1e-10, E = fast_log2_ceil(amax * (1/448)), q = x * 2^-E, "
     "satfinite (fp8_utils.py _deepgemm_w8a8_mxfp8_linear_with_fallback of an earlier sglang; 0.5.23 has no such path: "
     "its MXFP8 activations go through triton_kernels, profile triton-kernels, or flashinfer on sm_100)",
     "ptx", 0, NULL,
     {.elem = QC_E4M3FN, .group = 32, .eps_at = QC_EPS_AMAX, .eps = 1e-10f, .mx_rule = QC_MX_E8M0_OF_DESCALE,
      .scale_op = QC_SCALE_MUL_RCP, .div_mode = QC_DIV_FAST, .pow2_policy = POW2(QC_E8M0_CEIL, QC_E8M0_DEC_TORCH),
      .mx_op = QC_MX_DIV, .dequant_e8m0 = QC_E8M0_DEC_SHIFT}, OF_SGL_KERNEL},
    {"aiter", QC_RECIPE_MXFP8,
     "aiter per_1x32 quant, MX_DEFAULT_ROUND_MODE RoundUp (aiter/utility/fp4_utils.py, aiter/ops/quant.py): "
     "scale = ceil_pow2(amax / max) (NaN/Inf -> 0xFF), x / scale, hardware cast; fp8=e4m3fnuz uses max 240",
     "ptx", 0, NULL,
     {.elem = QC_E4M3FN, .group = 32, .amax_nan = QC_AMAX_NAN_PROPAGATE, .mx_rule = QC_MX_E8M0_OF_DESCALE,
      .pow2_policy = POW2(QC_E8M0_RCEIL, QC_E8M0_DEC_TORCH), .mx_op = QC_MX_DIV}, OF_AITER},

    /* ---- mxfp6 (formats.md §5) ---- */
    {"torchao-floor", QC_RECIPE_MXFP6, TORCHAO_SRC ", FLOOR) with torchao's fp6 cast", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_FLOOR, QC_E2M3)}, OF_TORCHAO},
    {"torchao-ceil", QC_RECIPE_MXFP6, TORCHAO_SRC ", CEIL)", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_TORCHAO_CEIL, QC_E2M3)}, OF_TORCHAO},
    {"torchao-even", QC_RECIPE_MXFP6, TORCHAO_SRC ", EVEN)", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_EVEN, QC_E2M3)}, OF_TORCHAO},
    {"torchao-rceil", QC_RECIPE_MXFP6, TORCHAO_SRC ", RCEIL)", "torch", 0, NULL, {MX_RCEIL(QC_E2M3)}, OF_TORCHAO},
    {"torchao-floor-cuda", QC_RECIPE_MXFP6, TORCHAO_SRC ", FLOOR) on a CUDA tensor: the GPU's NaN 0x7FFFFFFF reaches "
     "the bit-level cast, so a NaN element's code differs from the CPU's", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_FLOOR, QC_E2M3), .nan_canonical = 1}, OF_TORCHAO},
    {"torchao-ceil-cuda", QC_RECIPE_MXFP6, TORCHAO_SRC ", CEIL) on a CUDA tensor: the GPU's NaN 0x7FFFFFFF reaches "
     "the bit-level cast, so a NaN element's code differs from the CPU's", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_TORCHAO_CEIL, QC_E2M3), .nan_canonical = 1}, OF_TORCHAO},
    {"torchao-even-cuda", QC_RECIPE_MXFP6, TORCHAO_SRC ", EVEN) on a CUDA tensor: the GPU's NaN 0x7FFFFFFF reaches "
     "the bit-level cast, so a NaN element's code differs from the CPU's", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_EVEN, QC_E2M3), .nan_canonical = 1}, OF_TORCHAO},
    {"torchao-rceil-cuda", QC_RECIPE_MXFP6, TORCHAO_SRC ", RCEIL) on a CUDA tensor: the GPU's NaN 0x7FFFFFFF reaches "
     "the bit-level cast, so a NaN element's code differs from the CPU's", "torch", 0, NULL,
     {MX_RCEIL(QC_E2M3), .nan_canonical = 1}, OF_TORCHAO},
    {"ocp", QC_RECIPE_MXFP6, OCP_SRC, "ml_dtypes", OCP_MODS, NULL,
     {MX_OCP(QC_E2M3)}, OF_OCP},

    /* ---- mxfp4 (formats.md §5, §4.2 3'') ---- */
    {"torchao-floor", QC_RECIPE_MXFP4, TORCHAO_SRC ", FLOOR) with torchao's _f32_to_floatx_unpacked",
     "torch", 0, NULL, {MX_TORCHAO(QC_E8M0_FLOOR, QC_E2M1)}, OF_TORCHAO},
    {"torchao-ceil", QC_RECIPE_MXFP4, TORCHAO_SRC ", CEIL)", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_TORCHAO_CEIL, QC_E2M1)}, OF_TORCHAO},
    {"torchao-even", QC_RECIPE_MXFP4, TORCHAO_SRC ", EVEN)", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_EVEN, QC_E2M1)}, OF_TORCHAO},
    {"torchao-rceil", QC_RECIPE_MXFP4, TORCHAO_SRC ", RCEIL)", "torch", 0, NULL, {MX_RCEIL(QC_E2M1)}, OF_TORCHAO},
    {"torchao-floor-cuda", QC_RECIPE_MXFP4, TORCHAO_SRC ", FLOOR) on a CUDA tensor: the GPU's NaN 0x7FFFFFFF reaches "
     "the bit-level cast, so a NaN element's code differs from the CPU's", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_FLOOR, QC_E2M1), .nan_canonical = 1}, OF_TORCHAO},
    {"torchao-ceil-cuda", QC_RECIPE_MXFP4, TORCHAO_SRC ", CEIL) on a CUDA tensor: the GPU's NaN 0x7FFFFFFF reaches "
     "the bit-level cast, so a NaN element's code differs from the CPU's", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_TORCHAO_CEIL, QC_E2M1), .nan_canonical = 1}, OF_TORCHAO},
    {"torchao-even-cuda", QC_RECIPE_MXFP4, TORCHAO_SRC ", EVEN) on a CUDA tensor: the GPU's NaN 0x7FFFFFFF reaches "
     "the bit-level cast, so a NaN element's code differs from the CPU's", "torch", 0, NULL,
     {MX_TORCHAO(QC_E8M0_EVEN, QC_E2M1), .nan_canonical = 1}, OF_TORCHAO},
    {"torchao-rceil-cuda", QC_RECIPE_MXFP4, TORCHAO_SRC ", RCEIL) on a CUDA tensor: the GPU's NaN 0x7FFFFFFF reaches "
     "the bit-level cast, so a NaN element's code differs from the CPU's", "torch", 0, NULL,
     {MX_RCEIL(QC_E2M1), .nan_canonical = 1}, OF_TORCHAO},
    {"ocp", QC_RECIPE_MXFP4, OCP_SRC, "ml_dtypes", OCP_MODS, NULL,
     {MX_OCP(QC_E2M1)}, OF_OCP},
    {"flashinfer-fast", QC_RECIPE_MXFP4,
     "TRT-LLM cvt_warp_fp16_to_fp4 UE8M0 branch (flashinfer fp4_quantize sf_use_ue8m0, fast math): "
     "vecMax * rcp.approx(6), cvt.rp.satfinite.ue8m0, outputScale = vecMax != 0 ? exp2f_rcp(E) : 0 "
     "(exp2f_rcp(0) = 1), cvt.rn.satfinite.e2m1x2 (formats.md §4.2 3'') [computes on sm_100+ only: on sm_90 zero codes, no scales; formats.md §15.2]",
     "ptx", 0, NULL,
     {.elem = QC_E2M1, .group = 32, .mx_rule = QC_MX_E8M0_OF_DESCALE, .scale_op = QC_SCALE_MUL_RCP,
      .div_mode = QC_DIV_FAST, .pow2_policy = POW2(QC_E8M0_CEIL, QC_E8M0_DEC_TORCH), .mx_op = QC_MX_MUL,
      .mx_dec = QC_E8M0_DEC_TRTLLM_RCP, .mx_zero_guard = 1}, OF_FLASHINFER},
    {"triton-kernels", QC_RECIPE_MXFP4,
     "triton_kernels downcast_to_mxfp ROUND_UP with FP4 output (_downcast_to_mxfp.py), as for mxfp8",
     "ptx", 0, NULL,
     {.elem = QC_E2M1, .group = 32, .mx_rule = QC_MX_E8M0_OF_DESCALE, .div_mode = QC_DIV_FULL,
      .pow2_policy = POW2(QC_E8M0_TRITON_UP, QC_E8M0_DEC_SHIFT), .mx_op = QC_MX_MUL_RECIP_NZ,
      .mx_dec = QC_E8M0_DEC_SHIFT, .dequant_e8m0 = QC_E8M0_DEC_SHIFT}, OF_TRITON_KERNELS},
    {"aiter", QC_RECIPE_MXFP4, "aiter per_1x32 fp4 quant, RoundUp: ceil_pow2(amax / 6), x / scale "
     "(aiter/utility/fp4_utils.py)", "ptx", 0, NULL,
     {.elem = QC_E2M1, .group = 32, .amax_nan = QC_AMAX_NAN_PROPAGATE, .mx_rule = QC_MX_E8M0_OF_DESCALE,
      .pow2_policy = POW2(QC_E8M0_RCEIL, QC_E8M0_DEC_TORCH), .mx_op = QC_MX_DIV}, OF_AITER},
    {"modelopt", QC_RECIPE_MXFP4,
     "modelopt 0.47.0 MXFP4QTensor.quantize (mxfp4_tensor.py; sglang's MXFP4QuantizeUtil follows it) on the GPU: "
     "e = ceil(max(log2(amax / 6), -127)) in float, byte (e + 127).to(uint8) (NaN amax -> 0, Inf -> 255), "
     "x / 2^e, 'count the bounds strictly exceeded' (ties toward zero), +-0 and NaN -> 0x8; dequant exp2(E - 127) "
     "(golden/real/modelopt-0.47.0, formats.md §15.1)",
     "ptx", QC_MOD_TIES_ZERO | QC_MOD_NONAN_SIGNBIT | QC_MOD_ZERO_MODELOPT, NULL,
     {.elem = QC_E2M1, .group = 32, .amax_nan = QC_AMAX_NAN_PROPAGATE, .mx_rule = QC_MX_E8M0_OF_DESCALE,
      .pow2_policy = POW2(QC_E8M0_MODELOPT, QC_E8M0_DEC_EXP2), .mx_op = QC_MX_DIV,
      .dequant_e8m0 = QC_E8M0_DEC_EXP2}, OF_MODELOPT},
    {"modelopt-cpu", QC_RECIPE_MXFP4,
     "the same on the CPU, where the uint8 of an Inf amax's e + 127 is 0 (golden/real/modelopt-0.47.0 mxfp4-cpu)",
     "ptx", QC_MOD_TIES_ZERO | QC_MOD_NONAN_SIGNBIT | QC_MOD_ZERO_MODELOPT, NULL,
     {.elem = QC_E2M1, .group = 32, .amax_nan = QC_AMAX_NAN_PROPAGATE, .mx_rule = QC_MX_E8M0_OF_DESCALE,
      .pow2_policy = POW2(QC_E8M0_MODELOPT_CPU, QC_E8M0_DEC_EXP2), .mx_op = QC_MX_DIV,
      .dequant_e8m0 = QC_E8M0_DEC_EXP2}, OF_MODELOPT},

    /* ---- nvfp4 (formats.md §4) ---- */
    {"flashinfer-fast", QC_RECIPE_NVFP4,
     "flashinfer fp4_quantize / nvfp4_quantize = TRT-LLM cvt_warp_fp16_to_fp4 default path: SFValue = "
     "gs * (vecMax * rcp.approx(6)), e4m3 satfinite, outputScale = vecMax != 0 ? rcp.approx(SFdec * "
     "rcp.approx(gs)) : 0, cvt.rn.satfinite.e2m1x2; gs = 2688 / amax (0 -> FLT_MAX); quantization_utils.cuh [computes on sm_100+ only: on sm_90 zero codes, no scales; formats.md §15.2]",
     "ptx", 0, "ptx", {.elem = QC_E2M1, .group = 16}, OF_FLASHINFER},
    {"sgl-kernel", QC_RECIPE_NVFP4,
     "sgl-kernel / vLLM scaled_fp4_quant copy of cvt_warp_fp16_to_fp4: as flashinfer-fast, but the zero "
     "test is SFValue != 0 on the decoded scale, so e4m3-underflow blocks write zeros (formats.md §4.2)",
     "ptx", 0, "ptx", {.elem = QC_E2M1, .group = 16, .nv_zero = QC_ZERO_SFVALUE}, OF_SGL_KERNEL},
    {"flashinfer-te", QC_RECIPE_NVFP4,
     "TRT-LLM DISABLE_FP4_QUANT_FAST_MATH ('Match TE') / flashinfer ref_fp4_quant_te: SFValue = vecMax * "
     "(gs * (1/6)), outputScale = min(1 / (SFdec * (1/gs)), FLT_MAX) with IEEE division; TE global scale",
     "ptx", 0, "ptx", {.elem = QC_E2M1, .group = 16, .nv_order = QC_NVFP4_TE, .nv_gscale = QC_GSCALE_TE}, OF_FLASHINFER},
    {"torchao", QC_RECIPE_NVFP4,
     "torchao nvfp4_quantize (prototype/mx_formats/nvfp4_tensor.py): per_tensor_scale None by default (no "
     "global scale; gscale_decode=per_tensor_amax_to_scale(amax) = amax / 2688 for the two-level form), "
     "block_scale = amax_b / 6 / per_tensor_scale clamped to [2^-6, 448] -> e4m3 (never subnormal, zero "
     "blocks get 2^-6), q = clamp(x * ((1/per_tensor_scale) / sf), +-6) -> torchao fp4 cast",
     "torch", 0, "torch",
     {.elem = QC_E2M1, .group = 16, .amax_nan = QC_AMAX_NAN_PROPAGATE, .nv_order = QC_NVFP4_TORCHAO,
      .nv_gscale = QC_GSCALE_NONE, .clamp = QC_CLAMP_TORCH, .clamp_max = 6.0f}, OF_TORCHAO},
    {"torchao-cuda", QC_RECIPE_NVFP4,
     "the same on a CUDA tensor: a NaN is the GPU's 0x7FFFFFFF, so a NaN global scale gives code 4 (the CPU: 3); "
     "torchao nvfp4_quantize (prototype/mx_formats/nvfp4_tensor.py): per_tensor_scale None by default (no "
     "global scale; gscale_decode=per_tensor_amax_to_scale(amax) = amax / 2688 for the two-level form), "
     "block_scale = amax_b / 6 / per_tensor_scale clamped to [2^-6, 448] -> e4m3 (never subnormal, zero "
     "blocks get 2^-6), q = clamp(x * ((1/per_tensor_scale) / sf), +-6) -> torchao fp4 cast",
     "torch", 0, "torch",
     {.elem = QC_E2M1, .group = 16, .amax_nan = QC_AMAX_NAN_PROPAGATE, .nv_order = QC_NVFP4_TORCHAO,
      .nv_gscale = QC_GSCALE_NONE, .clamp = QC_CLAMP_TORCH, .clamp_max = 6.0f, .nan_canonical = 1}, OF_TORCHAO},
};

int qc_recipe_profile_count(void) { return (int)(sizeof recipe_profiles / sizeof recipe_profiles[0]); }

const qc_recipe_profile *qc_recipe_profile_at(int i)
{
    return i >= 0 && i < qc_recipe_profile_count() ? &recipe_profiles[i] : NULL;
}

const qc_recipe_profile *qc_recipe_profile_find(const char *name, qc_recipe r)
{
    for (int i = 0; i < qc_recipe_profile_count(); i++)
        if (recipe_profiles[i].recipe == r && strcmp(recipe_profiles[i].name, name) == 0)
            return &recipe_profiles[i];
    return NULL;
}

/* The profile a recipe uses without --profile: the first row of the recipe. */
const char *qc_recipe_default_profile(qc_recipe r)
{
    for (int i = 0; i < qc_recipe_profile_count(); i++)
        if (recipe_profiles[i].recipe == r)
            return recipe_profiles[i].name;
    return NULL;
}

static float format_max(qc_format f)
{
    return qcref_minifloat_decode(qcref_minifloat(f), qcref_max_magnitude(qcref_minifloat(f)));
}

/* emax_elem: the exponent of the largest power of two <= max normal (formats.md §2.2). */
static int format_emax(qc_format f) { return (int)((qc_f32_bits(format_max(f)) >> 23) & 0xFF) - 127; }

static qc_cast_policy modded(qc_cast_policy c, unsigned mods)
{
    if (mods & QC_MOD_SATFINITE)
        c.overflow = QC_OVERFLOW_SATFINITE;
    if (mods & QC_MOD_TIES_AWAY)
        c.ties = QC_TIES_AWAY;
    if (mods & QC_MOD_TIES_ZERO)
        c.ties = QC_TIES_ZERO;
    if (mods & QC_MOD_NONAN_ZERO)
        c.nonan = QC_NONAN_ZERO;
    if (mods & QC_MOD_ZERO_MODELOPT)
        c.zero_sign = QC_ZERO_MODELOPT;
    if (mods & QC_MOD_NONAN_SIGNBIT)
        c.nonan = QC_NONAN_SIGNBIT;
    if (mods & QC_MOD_ZERO_EXACT_POSITIVE)
        c.zero_sign = QC_ZERO_EXACT_POSITIVE;
    return c;
}

qc_recipe_policy qc_recipe_profile_policy(const qc_recipe_profile *p, int elem, int ue8m0)
{
    qc_recipe_policy r = p->policy;
    if (elem >= 0)
        r.elem = (qc_format)elem;
    r.cast = modded(qc_cast_profile_policy(qc_cast_profile_find(p->cast), r.elem), p->cast_mods);
    if (p->sf_cast)
        r.sf_cast = qc_cast_profile_policy(qc_cast_profile_find(p->sf_cast), QC_E4M3FN);
    if (r.elem_max == 0.0f)
        r.elem_max = format_max(r.elem);
    if (r.clamp_max == 0.0f)
        r.clamp_max = r.elem_max;
    if (r.pow2_policy.e8m0_emax < 0) /* FLOOR, CEIL, EVEN of torchao/OCP subtract the element's emax */
        r.pow2_policy.e8m0_emax = r.mx_rule == QC_MX_E8M0_OF_AMAX ? format_emax(r.elem) : 0;
    r.pow2_policy.e8m0_mbits = qcref_is_minifloat(r.elem) ? qcref_minifloat(r.elem).mbits : 3;
    if (!ue8m0 && (p->recipe == QC_RECIPE_TOKEN_GROUP || p->recipe == QC_RECIPE_BLOCK))
        r.pow2 = QC_POW2_NONE;
    return r;
}
