/* cuda_mutants.c: the cuda backend with one bug planted in its kernels (cuda_ops.h qck_plant_kind),
 * for the gate: the bug classes of the gate's mutants (harness/gate/README.md), which there are the
 * reference with one rule wrong, here in the CUDA code the real backend runs. Each is a backend
 * flagged QCHECK_BACKEND_PLANTED, so `qcheck run --backend mutants` counts it with the mutants (it
 * must FAIL somewhere; on a machine without a GPU it is NOT RUN); each claims only the ops its bug
 * is in, and declines an item its bug cannot change (a gemm's f32 output for a rounding of bf16,
 * a relu2 MoE for the gate/up order, fewer than three slots per token for the combine's order). The CPU
 * emulation builds them too (emu_mutants.c, names cuda-emu-mutant-*), so the planted kernels
 * are checked without a GPU. */
#include "cuda_ops.h"

#ifndef QCK_MUTANT_PREFIX
#define QCK_MUTANT_PREFIX "cuda-mutant:"
#define QCK_MUTANT_DOC_PREFIX ""
#endif

/* A slot of the real backend with the plant set for the call. */
#define PLANTED(fn, args, slot, plant)                                                                            \
    static qcheck_status fn(const args *a, qcheck_ctx *ctx)                                                       \
    {                                                                                                             \
        qck_plant = plant;                                                                                        \
        qcheck_status st = slot(a, ctx);                                                                          \
        qck_plant = QCK_PLANT_NONE;                                                                               \
        return st;                                                                                                \
    }

PLANTED(ties_cast, qcheck_cast_args, qck_cast, QCK_PLANT_TIES_AWAY)
PLANTED(ties_quant, qcheck_quant_args, qck_quant, QCK_PLANT_TIES_AWAY)
PLANTED(ulp_gemm, qcheck_gemm_args, qck_gemm, QCK_PLANT_SCALE_ULP)
PLANTED(ulp_moe, qcheck_moe_args, qck_moe, QCK_PLANT_SCALE_ULP)
PLANTED(rz_gemm_planted, qcheck_gemm_args, qck_gemm, QCK_PLANT_OUT_TOWARD_ZERO)
PLANTED(swap_moe_planted, qcheck_moe_args, qck_moe, QCK_PLANT_GATE_UP_SWAPPED)
PLANTED(reversed_moe_planted, qcheck_moe_args, qck_moe, QCK_PLANT_COMBINE_REVERSED)
PLANTED(libm_moe_planted, qcheck_moe_args, qck_moe, QCK_PLANT_ACT_LIBM)

static qcheck_status rz_gemm(const qcheck_gemm_args *a, qcheck_ctx *ctx)
{
    if (a->out == QC_F32)
        return qcheck_say(ctx, QCHECK_DECLINED, "the bug is in the rounding to bf16/f16; this output is f32");
    return rz_gemm_planted(a, ctx);
}

static qcheck_status swap_moe(const qcheck_moe_args *a, qcheck_ctx *ctx)
{
    if (!qcref_act_gated(a->act.act))
        return qcheck_say(ctx, QCHECK_DECLINED, "the activation is not gated: W13 has no halves to swap");
    return swap_moe_planted(a, ctx);
}

static qcheck_status reversed_moe(const qcheck_moe_args *a, qcheck_ctx *ctx)
{
    if (a->top_k + a->shared < 3) /* fp32 addition commutes: 0 + a + b is b + a either way round */
        return qcheck_say(ctx, QCHECK_DECLINED, "%lld slot(s) per token: a sum of two terms has no order",
                          (long long)(a->top_k + a->shared));
    return reversed_moe_planted(a, ctx);
}

static qcheck_status libm_moe(const qcheck_moe_args *a, qcheck_ctx *ctx)
{
    if (a->act.act != QC_ACT_GELU && a->act.act != QC_ACT_GELU_TANH)
        return qcheck_say(ctx, QCHECK_DECLINED, "the bug is in erf / tanh; activation %s uses neither",
                          qc_act_name(a->act.act));
    return libm_moe_planted(a, ctx);
}

#define PLANTED_BACKEND(sym, suffix, what, ...)                                                                     \
    const qcheck_backend sym = {QCHECK_BACKEND_HEADER,                                                            \
                                .name = QCK_MUTANT_PREFIX suffix,                                                 \
                                .flags = QCHECK_BACKEND_PERSISTENT | QCHECK_BACKEND_PLANTED,                      \
                                .doc = QCK_MUTANT_DOC_PREFIX what,                                                \
                                .unavailable = qck_unavailable,                                                   \
                                __VA_ARGS__};

PLANTED_BACKEND(qc_mutant_cuda_ties_away, "ties-away",
                "cuda kernels whose element casts round ties away from zero where the profile says even "
                "(formats.md §3.2; the hardware cvt paths give way to the software ones)",
                .cast = ties_cast, .quant = ties_quant)
PLANTED_BACKEND(qc_mutant_cuda_scale_ulp, "weight-scale-ulp",
                "cuda GEMMs (wgmma: gemm and moe; CUDA cores: gemm) reading every weight scale one ulp too large "
                "(caught bit-exactly by model sm90-wgmma, and by the bound models where every sum is exact)",
                .gemm = ulp_gemm, .moe = ulp_moe)
PLANTED_BACKEND(qc_mutant_cuda_out_toward_zero, "gemm-out-toward-zero",
                "cuda GEMMs (wgmma and CUDA cores) rounding their bf16/f16 outputs toward zero",
                .gemm = rz_gemm)
PLANTED_BACKEND(qc_mutant_cuda_gate_up, "moe-gate-up-swapped",
                "cuda MoE reading W13's halves in the other order (layouts.md T-ORD1)", .moe = swap_moe)
PLANTED_BACKEND(qc_mutant_cuda_combine_reversed, "moe-combine-reversed",
                "cuda MoE summing the slots of a token in reverse order (an fp32 sum's order is part of the model)",
                .moe = reversed_moe)
PLANTED_BACKEND(qc_mutant_cuda_act_libm, "moe-act-libm",
                "cuda MoE computing gelu / gelu_tanh with the platform's erff / tanhf (CUDA's; the host libm's in the "
                "emulation) instead of the correctly rounded ones the reference defines",
                .moe = libm_moe)
