/* names.c: the stable names of formats and policies (docs/spec/cli.md "Names"); host only: the CLI
 * and the harness parse and print them, the codecs never see a string. */
#include <string.h>

#include "formats.h"

static const char *const format_names[QC_FORMAT_COUNT] = {
    [QC_F32] = "f32",          [QC_BF16] = "bf16",   [QC_F16] = "f16",
    [QC_E4M3FN] = "e4m3fn",    [QC_E4M3FNUZ] = "e4m3fnuz",
    [QC_E5M2] = "e5m2",        [QC_E5M2FNUZ] = "e5m2fnuz",
    [QC_E8M0] = "e8m0",        [QC_E2M1] = "e2m1",   [QC_E2M3] = "e2m3", [QC_E3M2] = "e3m2",
};

static const char *const e8m0_rule_names[QC_E8M0_RULE_COUNT] = {
    [QC_E8M0_RNE] = "rne",                [QC_E8M0_MLDTYPES] = "ml_dtypes",
    [QC_E8M0_CEIL] = "ceil",              [QC_E8M0_FLOOR_SAT] = "rz",
    [QC_E8M0_RCEIL] = "rceil",            [QC_E8M0_DEEPGEMM] = "deepgemm",
    [QC_E8M0_FLOOR] = "floor",            [QC_E8M0_TORCHAO_CEIL] = "torchao-ceil",
    [QC_E8M0_EVEN] = "even",              [QC_E8M0_TRITON_UP] = "triton-up",
    [QC_E8M0_TRITON_DOWN] = "triton-down", [QC_E8M0_LOG2_CEIL] = "log2-ceil",
    [QC_E8M0_MLDTYPES_06] = "ml_dtypes-0.6", [QC_E8M0_TORCHAO_RCEIL] = "torchao-rceil",
    [QC_E8M0_MODELOPT] = "modelopt",      [QC_E8M0_MODELOPT_CPU] = "modelopt-cpu",
    [QC_E8M0_LOG2_FLOOR] = "log2-floor",
};

static const char *const e8m0_decoder_names[QC_E8M0_DECODER_COUNT] = {
    [QC_E8M0_DEC_TORCH] = "torch",          [QC_E8M0_DEC_SHIFT] = "shift",
    [QC_E8M0_DEC_EXP2] = "exp2",            [QC_E8M0_DEC_TRTLLM_RCP] = "trtllm-rcp",
    [QC_E8M0_DEC_CUTEDSL_INV] = "cutedsl-inv", [QC_E8M0_DEC_TORCHAO] = "torchao",
    [QC_E8M0_DEC_TORCHAO_RCP] = "torchao-rcp",
};

static int lookup(const char *const *names, int count, const char *name)
{
    for (int i = 0; i < count; i++)
        if (names[i] && strcmp(names[i], name) == 0)
            return i;
    return -1;
}

const char *qc_format_name(int f) { return (unsigned)f < QC_FORMAT_COUNT ? format_names[f] : "?"; }
int qc_format_from_name(const char *name) { return lookup(format_names, QC_FORMAT_COUNT, name); }

const char *qc_e8m0_rule_name(int r)
{
    return (unsigned)r < QC_E8M0_RULE_COUNT ? e8m0_rule_names[r] : "?";
}
int qc_e8m0_rule_from_name(const char *name) { return lookup(e8m0_rule_names, QC_E8M0_RULE_COUNT, name); }

const char *qc_e8m0_decoder_name(int d)
{
    return (unsigned)d < QC_E8M0_DECODER_COUNT ? e8m0_decoder_names[d] : "?";
}
int qc_e8m0_decoder_from_name(const char *name)
{
    if (strcmp(name, "cuda") == 0 || strcmp(name, "ml_dtypes") == 0)
        return QC_E8M0_DEC_TORCH; /* the same decoder under the names users know it by */
    return lookup(e8m0_decoder_names, QC_E8M0_DECODER_COUNT, name);
}

/* Policy values as the CLI spells them (--overflow, --nan, --nan-code, --ties, --nonan, --zero-sign). */
static const char *const overflow_names[] = {[QC_OVERFLOW_NAN] = "nan", [QC_OVERFLOW_SATFINITE] = "satfinite"};
static const char *const nan_sign_names[] = {[QC_NAN_KEEP] = "keep", [QC_NAN_CANONICAL] = "canonical",
                                             [QC_NAN_NEGATIVE] = "negative"};
static const char *const nan_code_names[] = {[QC_NANCODE_ONES] = "ones", [QC_NANCODE_QUIET] = "quiet",
                                             [QC_NANCODE_PAYLOAD] = "payload",
                                             [QC_NANCODE_QUIET_PAYLOAD] = "quiet-payload"};
static const char *const ties_names[] = {[QC_TIES_EVEN] = "even", [QC_TIES_ZERO] = "zero", [QC_TIES_AWAY] = "away"};
static const char *const nonan_names[] = {[QC_NONAN_POSMAX] = "posmax", [QC_NONAN_TORCHAO] = "torchao",
                                          [QC_NONAN_MLDTYPES] = "ml_dtypes", [QC_NONAN_ZERO] = "zero",
                                          [QC_NONAN_SIGNBIT] = "signbit"};
static const char *const zero_sign_names[] = {[QC_ZERO_KEEP] = "keep", [QC_ZERO_DROP] = "drop",
                                              [QC_ZERO_MODELOPT] = "modelopt", [QC_ZERO_EXACT_POSITIVE] = "exact-positive"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define NAME_OF(table, v) ((unsigned)(v) < (unsigned)COUNT(table) ? table[v] : "?")

const char *qc_overflow_name(int v) { return NAME_OF(overflow_names, v); }
const char *qc_nan_sign_name(int v) { return NAME_OF(nan_sign_names, v); }
const char *qc_nan_code_name(int v) { return NAME_OF(nan_code_names, v); }
const char *qc_ties_name(int v) { return NAME_OF(ties_names, v); }
const char *qc_nonan_name(int v) { return NAME_OF(nonan_names, v); }
const char *qc_zero_sign_name(int v) { return NAME_OF(zero_sign_names, v); }

int qc_overflow_from_name(const char *s) { return lookup(overflow_names, COUNT(overflow_names), s); }
int qc_nan_sign_from_name(const char *s) { return lookup(nan_sign_names, COUNT(nan_sign_names), s); }
int qc_nan_code_from_name(const char *s) { return lookup(nan_code_names, COUNT(nan_code_names), s); }
int qc_ties_from_name(const char *s) { return lookup(ties_names, COUNT(ties_names), s); }
int qc_nonan_from_name(const char *s) { return lookup(nonan_names, COUNT(nonan_names), s); }
int qc_zero_sign_from_name(const char *s) { return lookup(zero_sign_names, COUNT(zero_sign_names), s); }
