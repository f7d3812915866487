/* test_formats.c: the element-format reference (libqcref) against the slow second
 * implementation of tests/slow_formats.c, which is written from docs/spec/formats.md alone.
 *
 *   test_formats [--seed N] [--random N] [--threads N]   quick mode (ctest formats_quick)
 *   test_formats --full [--threads N]                      every fp32 pattern (ctest formats_full)
 *   --format NAME sweeps one format only; --keep-going counts every mismatch (prints 5 per
 *   format / e8m0 rule) instead of stopping at the first; --chunks N limits the full mode to the
 *   first N of its 256 chunks of 2^24 patterns (timing).
 *
 * Both modes first check the slow oracle itself against the vectors the spec states (formats.md §1.1,
 * formats.md §3.1, §3.2, §10, §11), then:
 *   (a) every code of every format decodes (qcref_decode) to the slow decode, bit for bit;
 *   (b) encode(decode(c)) == c for every finite code under every profile and every policy
 *       combination where that must hold;
 *   (c) the policy sweep: all 2^16 bf16 patterns, fp32 special values and every value and
 *       midpoint of the format (with fp32 neighbours) under every policy combination
 *       (overflow x nan_sign x nan_code x ties x nonan x zero_sign = 720; e8m0: every rule x
 *       6 emax x 3 mbits); the fp32 neighbours of every bf16 pattern and >= 2^20 seeded random
 *       fp32 patterns under every combination of the fields the format's definition reads,
 *       the other fields rotated from input to input (with --full: every combination);
 *   (d) full only: all 2^32 fp32 patterns to e4m3fn, e4m3fnuz, e5m2, e5m2fnuz (RNE, both
 *       overflow policies) and to e8m0 under every rule.
 * A mismatch prints format, policy, input, expected and got, a REPRO line, and exits 1.
 * QC_E8M0_LOG2_CEIL is the one rule where a difference is expected: fp32 log2f rounds inputs
 * just above a power of two to the integer (formats.md §10 B11); those are counted, not failed. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/formats.h"
#include "profiles.h"
#include "slow_formats.h"

/* ------------------------------------------------------------------------------------------ */
/* Policies                                                                                   */

#define N_OVERFLOW 2
#define N_NAN_SIGN 2
#define N_NAN_CODE 3
#define N_TIES 3
#define N_NONAN 5
#define N_ZERO_SIGN 4
#define N_MINIFLOAT_POLICIES (N_OVERFLOW * N_NAN_SIGN * N_NAN_CODE * N_TIES * N_NONAN * N_ZERO_SIGN)

static const qc_format minifloats[] = {QC_E4M3FN, QC_E4M3FNUZ, QC_E5M2, QC_E5M2FNUZ, QC_E2M1,
                                       QC_E2M3,   QC_E3M2,     QC_BF16, QC_F16};
#define N_MINIFLOATS ((int)(sizeof minifloats / sizeof minifloats[0]))

static const qc_format fp8s[] = {QC_E4M3FN, QC_E4M3FNUZ, QC_E5M2, QC_E5M2FNUZ};
#define N_FP8 4

/* A policy with every field set explicitly (not through qcref_default_policy: the test must
 * not take its inputs from the code under test more than it has to). */
/* Policies are inputs of the test, not expected values: every field is set by the sweeps below. */
static qc_cast_policy base_policy(void) { return qcref_default_policy(); }

/* The idx-th of the N_MINIFLOAT_POLICIES combinations overflow x nan_sign x nan_code x ties x
 * nonan x zero_sign. */
static qc_cast_policy minifloat_policy(int idx)
{
    qc_cast_policy p = base_policy();
    p.zero_sign = (qc_zero_sign)(idx % N_ZERO_SIGN), idx /= N_ZERO_SIGN;
    p.nonan = (qc_nonan)(idx % N_NONAN), idx /= N_NONAN;
    p.ties = (qc_ties)(idx % N_TIES), idx /= N_TIES;
    p.nan_code = (qc_nan_code)(idx % N_NAN_CODE), idx /= N_NAN_CODE;
    p.nan_sign = (qc_nan_sign)(idx % N_NAN_SIGN), idx /= N_NAN_SIGN;
    p.overflow = (qc_overflow)(idx % N_OVERFLOW);
    return p;
}

/* e8m0 rules with the emax / mbits values of the element formats (formats.md §2.2: emax_elem of
 * e2m1/e2m3 2, e3m2 4, e4m3fnuz 7, e4m3 8, e5m2 15; mbits 1, 2, 3), and 0 for a plain cast. */
static const int e8m0_emaxes[] = {0, 2, 4, 7, 8, 15};
static const int e8m0_mbitses[] = {1, 2, 3};
#define N_EMAX 6
#define N_MBITS 3
#define N_E8M0_QUICK (QC_E8M0_RULE_COUNT * N_EMAX * N_MBITS)

static qc_cast_policy e8m0_policy(qc_e8m0_rule rule, int emax, int mbits)
{
    qc_cast_policy p = base_policy();
    p.e8m0 = rule;
    p.e8m0_emax = emax;
    p.e8m0_mbits = mbits;
    return p;
}

/* The full mode's e8m0 configurations: every rule once; the parametrised ones with the values of
 * e4m3 (FLOOR emax 8) and e2m1 (TORCHAO_CEIL emax 2, EVEN emax 2 mbits 1). The quick sweep runs
 * every rule under every emax/mbits. */
typedef struct e8m0_cfg {
    qc_e8m0_rule rule;
    int emax, mbits;
} e8m0_cfg;
static const e8m0_cfg e8m0_full_cfgs[] = {
    {QC_E8M0_RNE, 0, 3},       {QC_E8M0_MLDTYPES, 0, 3},     {QC_E8M0_CEIL, 0, 3},
    {QC_E8M0_FLOOR_SAT, 0, 3}, {QC_E8M0_RCEIL, 0, 3},        {QC_E8M0_DEEPGEMM, 0, 3},
    {QC_E8M0_FLOOR, 8, 3},     {QC_E8M0_TORCHAO_CEIL, 2, 3}, {QC_E8M0_EVEN, 2, 1},
    {QC_E8M0_TRITON_UP, 0, 3}, {QC_E8M0_TRITON_DOWN, 0, 3},  {QC_E8M0_LOG2_CEIL, 0, 3},
    {QC_E8M0_MLDTYPES_06, 0, 3}, {QC_E8M0_TORCHAO_RCEIL, 0, 3}, {QC_E8M0_MODELOPT, 0, 3},
    {QC_E8M0_MODELOPT_CPU, 0, 3}, {QC_E8M0_LOG2_FLOOR, 8, 3},
};
#define N_E8M0_FULL ((int)(sizeof e8m0_full_cfgs / sizeof e8m0_full_cfgs[0]))

/* ------------------------------------------------------------------------------------------ */
/* Reporting                                                                                  */

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_policy(FILE *o, qc_format f, const qc_cast_policy *p)
{
    if (f == QC_E8M0)
        fprintf(o, "e8m0=%s e8m0_emax=%d e8m0_mbits=%d", qc_e8m0_rule_name(p->e8m0), p->e8m0_emax,
                p->e8m0_mbits);
    else
        fprintf(o, "overflow=%s nan_sign=%s nan_code=%s ties=%s nonan=%s zero_sign=%s",
                qc_overflow_name(p->overflow), qc_nan_sign_name(p->nan_sign), qc_nan_code_name(p->nan_code),
                qc_ties_name(p->ties), qc_nonan_name(p->nonan), qc_zero_sign_name(p->zero_sign));
}

/* --keep-going: count every mismatch and print the first few of each format (and e8m0 rule)
 * instead of stopping at the first; the exit status is 1 all the same. */
static int keep_going;
static long mismatch_count[QC_FORMAT_COUNT][QC_E8M0_RULE_COUNT + 1];
#define MAX_PRINTED 5

/* One encode mismatch: the whole story, then exit 1 (from any thread). */
static void encode_mismatch(const char *what, qc_format f, const qc_cast_policy *p, uint32_t xbits,
                            uint32_t expected, uint32_t got)
{
    pthread_mutex_lock(&report_lock);
    long *count = &mismatch_count[f][f == QC_E8M0 ? (int)p->e8m0 : QC_E8M0_RULE_COUNT];
    if (keep_going && ++*count > MAX_PRINTED) {
        pthread_mutex_unlock(&report_lock);
        return;
    }
    FILE *o = stdout;
    fprintf(o, "MISMATCH [%s] format=%s input=0x%08" PRIX32 " (%a) ", what, slow_format_name(f), xbits,
            (double)slow_f32_from_bits(xbits));
    print_policy(o, f, p);
    fprintf(o, " expected=0x%02" PRIX32 " got=0x%02" PRIX32 " (qcref)\n", expected, got);
    fprintf(o, "REPRO: printf '\\x%02X\\x%02X\\x%02X\\x%02X' > in.bin && qcheck cast --from f32 --to %s",
            (unsigned)(xbits & 0xFF), (unsigned)((xbits >> 8) & 0xFF), (unsigned)((xbits >> 16) & 0xFF),
            (unsigned)(xbits >> 24), slow_format_name(f));
    if (f == QC_E8M0)
        fprintf(o, " --e8m0 %s --e8m0-emax %d --e8m0-mbits %d", qc_e8m0_rule_name(p->e8m0), p->e8m0_emax,
                p->e8m0_mbits);
    else
        fprintf(o, " --overflow %s --nan %s --nan-code %s --ties %s --nonan %s --zero-sign %s",
                qc_overflow_name(p->overflow), qc_nan_sign_name(p->nan_sign), qc_nan_code_name(p->nan_code),
                qc_ties_name(p->ties), qc_nonan_name(p->nonan), qc_zero_sign_name(p->zero_sign));
    fprintf(o, " in.bin out.bin && xxd out.bin\n");
    fflush(o);
    if (!keep_going)
        exit(1);
    pthread_mutex_unlock(&report_lock);
}

static long total_mismatches(void)
{
    long total = 0;
    pthread_mutex_lock(&report_lock);
    for (int f = 0; f < QC_FORMAT_COUNT; f++)
        for (int r = 0; r <= QC_E8M0_RULE_COUNT; r++)
            total += mismatch_count[f][r];
    pthread_mutex_unlock(&report_lock);
    return total;
}

/* With --keep-going: the counts, and whether there were any. */
static int mismatch_summary(void)
{
    long total = 0;
    for (int f = 0; f < QC_FORMAT_COUNT; f++)
        for (int r = 0; r <= QC_E8M0_RULE_COUNT; r++)
            if (mismatch_count[f][r]) {
                printf("  %ld mismatches: format=%s%s%s\n", mismatch_count[f][r], slow_format_name((qc_format)f),
                       f == QC_E8M0 ? " e8m0=" : "", f == QC_E8M0 ? qc_e8m0_rule_name(r) : "");
                total += mismatch_count[f][r];
            }
    if (total)
        printf("FAILED: %ld mismatches\n", total);
    return total != 0;
}

static int oracle_failures;

static void oracle_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void oracle_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("ORACLE SELF-CHECK FAILED: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    oracle_failures++;
}

/* ------------------------------------------------------------------------------------------ */
/* 0. The slow oracle against the facts the spec states                                      */

static uint32_t bits_of(float x) { return slow_f32_bits(x); }

typedef struct format_fact {
    qc_format f;
    double max, min_normal, min_subnormal;
    uint32_t max_code;
} format_fact;

/* formats.md §1.1 table, §3.1; bf16/f16 max from their definitions (0x7F7F, 0x7BFF). */
static const format_fact facts[] = {
    {QC_E4M3FN, 448.0, 0x1p-6, 0x1p-9, 0x7E},
    {QC_E4M3FNUZ, 240.0, 0x1p-7, 0x1p-10, 0x7F},
    {QC_E5M2, 57344.0, 0x1p-14, 0x1p-16, 0x7B},
    {QC_E5M2FNUZ, 57344.0, 0x1p-15, 0x1p-17, 0x7F},
    {QC_E2M1, 6.0, 1.0, 0.5, 0x7},
    {QC_E2M3, 7.5, 1.0, 0.125, 0x1F},
    {QC_E3M2, 28.0, 0.25, 0.0625, 0x1F},
    {QC_BF16, 0x1.FEp127, 0x1p-126, 0x1p-133, 0x7F7F},
    {QC_F16, 65504.0, 0x1p-14, 0x1p-24, 0x7BFF},
};

/* One encode vector: format, a policy tweak, fp32 input bits, expected code, where from. */
typedef enum tweak {
    T_NAN,      /* base policy: RNE, overflow NaN/Inf, NaN sign kept, NaN code all ones */
    T_SAT,      /* PTX: satfinite, canonical NaN */
    T_QUIET,    /* NaN code quiet (ml_dtypes) */
    T_TZERO,    /* ties toward zero */
    T_TAWAY,    /* ties away */
    T_TORCHAO,  /* nonan torchao */
    T_MLD,      /* nonan ml_dtypes */
    T_NZERO,    /* nonan zero */
    T_DROP,     /* zero sign drop */
    T_MODELOPT, /* zero sign modelopt */
    T_EXPOS,    /* zero sign exact-positive */
} tweak;

typedef struct vec {
    qc_format f;
    tweak t;
    uint32_t in, out;
    const char *src;
} vec;

static const vec spec_vectors[] = {
    /* formats.md §11 E4M3FN, NAN_ON_OVERFLOW | SATFINITE */
    {QC_E4M3FN, T_NAN, 0x00000000, 0x00, "formats.md §11"}, {QC_E4M3FN, T_SAT, 0x00000000, 0x00, "formats.md §11"},
    {QC_E4M3FN, T_NAN, 0x80000000, 0x80, "formats.md §11"}, {QC_E4M3FN, T_SAT, 0x80000000, 0x80, "formats.md §11"},
    {QC_E4M3FN, T_NAN, 0x3A800000, 0x00, "formats.md §11 2^-10 tie"},
    {QC_E4M3FN, T_NAN, 0x3A800001, 0x01, "formats.md §11"},
    {QC_E4M3FN, T_NAN, 0x3B000000, 0x01, "formats.md §11"}, {QC_E4M3FN, T_NAN, 0x3C600000, 0x07, "formats.md §11"},
    {QC_E4M3FN, T_NAN, 0x3C800000, 0x08, "formats.md §11"}, {QC_E4M3FN, T_NAN, 0x3F800000, 0x38, "formats.md §11"},
    {QC_E4M3FN, T_NAN, 0x43E00000, 0x7E, "formats.md §11 448"},
    {QC_E4M3FN, T_NAN, 0x43E80000, 0x7E, "formats.md §11 464"},
    {QC_E4M3FN, T_SAT, 0x43E80000, 0x7E, "formats.md §11 464"},
    {QC_E4M3FN, T_NAN, 0x43E80001, 0x7F, "formats.md §11"},
    {QC_E4M3FN, T_SAT, 0x43E80001, 0x7E, "formats.md §11"},
    {QC_E4M3FN, T_NAN, 0x43F00000, 0x7F, "formats.md §11 480"},
    {QC_E4M3FN, T_SAT, 0x43F00000, 0x7E, "formats.md §11 480"},
    {QC_E4M3FN, T_NAN, 0x7F800000, 0x7F, "formats.md §11 +Inf"},
    {QC_E4M3FN, T_SAT, 0x7F800000, 0x7E, "formats.md §11 +Inf"},
    {QC_E4M3FN, T_NAN, 0xFF800000, 0xFF, "formats.md §11 -Inf"},
    {QC_E4M3FN, T_SAT, 0xFF800000, 0xFE, "formats.md §11 -Inf"},
    {QC_E4M3FN, T_NAN, 0x7FC00000, 0x7F, "formats.md §11 +NaN"},
    {QC_E4M3FN, T_SAT, 0x7FC00000, 0x7F, "formats.md §11 +NaN"},
    {QC_E4M3FN, T_NAN, 0xFFC00000, 0xFF, "formats.md §11 -NaN torch"},
    {QC_E4M3FN, T_SAT, 0xFFC00000, 0x7F, "formats.md §11 -NaN PTX"},
    {QC_E4M3FN, T_NAN, 0xC47A0000, 0xFF, "formats.md §10 B1 -1000"},
    {QC_E4M3FN, T_SAT, 0xC47A0000, 0xFE, "formats.md §10 B1 -1000"},
    {QC_E4M3FN, T_NAN, 0x43E88000, 0x7F, "formats.md §10 B1 465"},
    /* formats.md §11 E4M3FNUZ, §10 B4-B6 */
    {QC_E4M3FNUZ, T_NAN, 0x80000000, 0x00, "formats.md §11 -0"},
    {QC_E4M3FNUZ, T_NAN, 0xBA000000, 0x00, "formats.md §11 -2^-11"},
    {QC_E4M3FNUZ, T_NAN, 0xB3D6BF95, 0x00, "formats.md §10 B4 -1e-7"},
    {QC_E4M3FNUZ, T_NAN, 0x3A800000, 0x01, "formats.md §11"},
    {QC_E4M3FNUZ, T_NAN, 0x43700000, 0x7F, "formats.md §11 240"},
    {QC_E4M3FNUZ, T_NAN, 0x4377FD71, 0x7F, "formats.md §11 247.99"},
    {QC_E4M3FNUZ, T_NAN, 0x43780000, 0x80, "formats.md §11 248"},
    {QC_E4M3FNUZ, T_NAN, 0x437A0000, 0x80, "formats.md §10 B6 250"},
    {QC_E4M3FNUZ, T_NAN, 0x437FE666, 0x80, "formats.md §10 B6 255.9"},
    {QC_E4M3FNUZ, T_NAN, 0x43800000, 0x80, "formats.md §11 256"},
    {QC_E4M3FNUZ, T_NAN, 0x7FC00000, 0x80, "formats.md §11 NaN"},
    {QC_E4M3FNUZ, T_NAN, 0x7F800000, 0x80, "formats.md §10 B5 +Inf"},
    {QC_E4M3FNUZ, T_NAN, 0xFF800000, 0x80, "formats.md §10 B5 -Inf"},
    /* formats.md §11 E5M2 */
    {QC_E5M2, T_NAN, 0x47600000, 0x7B, "formats.md §11 57344"},
    {QC_E5M2, T_NAN, 0x476FFFFF, 0x7B, "formats.md §11 61439.99"},
    {QC_E5M2, T_NAN, 0x47700000, 0x7C, "formats.md §11 61440"},
    {QC_E5M2, T_SAT, 0x47700000, 0x7B, "formats.md §11 61440 sat"},
    {QC_E5M2, T_NAN, 0x37800000, 0x01, "formats.md §11 2^-16"},
    {QC_E5M2, T_NAN, 0x7FC00000, 0x7F, "formats.md §11 NaN torch"},
    {QC_E5M2, T_QUIET, 0x7FC00000, 0x7E, "formats.md §11 NaN ml_dtypes"},
    {QC_E5M2, T_SAT, 0x7FC00000, 0x7F, "formats.md §11 NaN PTX"},
    {QC_E5M2, T_NAN, 0xFFC00000, 0xFF, "formats.md §1.3 -NaN torch"},
    {QC_E5M2, T_SAT, 0xFF800000, 0xFB, "formats.md §13 satfinite"},
    /* formats.md §11 / §3.2 E2M1 */
    {QC_E2M1, T_NAN, 0x3E800000, 0x0, "formats.md §11 0.25"},
    {QC_E2M1, T_NAN, 0xBE800000, 0x8, "formats.md §11 -0.25"},
    {QC_E2M1, T_NAN, 0x3E800001, 0x1, "formats.md §11 0.2500001"},
    {QC_E2M1, T_NAN, 0x3F400000, 0x2, "formats.md §11 0.75"},
    {QC_E2M1, T_NAN, 0x3FA00000, 0x2, "formats.md §11 1.25"},
    {QC_E2M1, T_NAN, 0x3FE00000, 0x4, "formats.md §11 1.75"},
    {QC_E2M1, T_NAN, 0x40200000, 0x4, "formats.md §11 2.5"}, {QC_E2M1, T_NAN, 0x40600000, 0x6, "formats.md §11 3.5"},
    {QC_E2M1, T_NAN, 0x40A00000, 0x6, "formats.md §11 5.0"},
    {QC_E2M1, T_NAN, 0x40A00001, 0x7, "formats.md §11 5.0000005"},
    {QC_E2M1, T_NAN, 0x40E00000, 0x7, "formats.md §11 7"}, {QC_E2M1, T_NAN, 0x7F800000, 0x7, "formats.md §11 Inf"},
    {QC_E2M1, T_NAN, 0x7FC00000, 0x7, "formats.md §11 NaN PTX"},
    {QC_E2M1, T_TORCHAO, 0x7FC00000, 0x3, "formats.md §11 NaN torchao"},
    {QC_E2M1, T_TORCHAO, 0xFFC00000, 0xB, "formats.md §3.2 -NaN torchao"},
    {QC_E2M1, T_MLD, 0x7FC00000, 0x8, "formats.md §11 NaN ml_dtypes"},
    {QC_E2M1, T_MLD, 0xFFC00000, 0x0, "formats.md §3.2 -NaN ml_dtypes"},
    {QC_E2M1, T_NZERO, 0x7FC00000, 0x0, "formats.md §11 NaN DeepGEMM"},
    {QC_E2M1, T_NAN, 0xBDCCCCCD, 0x8, "formats.md §11 -0.1 PTX"},
    {QC_E2M1, T_DROP, 0xBDCCCCCD, 0x0, "formats.md §11 -0.1 DeepGEMM"},
    {QC_E2M1, T_MODELOPT, 0x00000000, 0x8, "formats.md §11 +0 modelopt"},
    {QC_E2M1, T_MODELOPT, 0x3DCCCCCD, 0x0, "formats.md §3.2 +0.1 modelopt"},
    {QC_E2M1, T_EXPOS, 0x80000000, 0x0, "formats.md §15.2 -0 microxcaling"},
    {QC_E2M1, T_EXPOS, 0xBDCCCCCD, 0x8, "formats.md §15.2 -0.1 microxcaling keeps the sign"},
    {QC_E4M3FN, T_EXPOS, 0x80000000, 0x00, "formats.md §15.2 -0 microxcaling"},
    {QC_E2M1, T_TZERO, 0x3F400000, 0x1, "formats.md §3.2 0.75 toward zero"},
    {QC_E2M1, T_TZERO, 0x3FE00000, 0x3, "formats.md §3.2 1.75"},
    {QC_E2M1, T_TZERO, 0x40600000, 0x5, "formats.md §3.2 3.5"},
    {QC_E2M1, T_TZERO, 0x40A00000, 0x6, "formats.md §3.2 5.0"},
    {QC_E2M1, T_TAWAY, 0x3E800000, 0x1, "formats.md §3.2 0.25 away"},
    {QC_E2M1, T_TAWAY, 0x3FA00000, 0x3, "formats.md §3.2 1.25 away"},
    {QC_E2M1, T_TAWAY, 0x40A00000, 0x7, "formats.md §3.2 5.0 away"},
};
#define N_SPEC_VECTORS ((int)(sizeof spec_vectors / sizeof spec_vectors[0]))

static qc_cast_policy tweak_policy(tweak t)
{
    qc_cast_policy p = base_policy();
    switch (t) {
    case T_SAT: p.overflow = QC_OVERFLOW_SATFINITE; p.nan_sign = QC_NAN_CANONICAL; break;
    case T_QUIET: p.nan_code = QC_NANCODE_QUIET; break;
    case T_TZERO: p.ties = QC_TIES_ZERO; break;
    case T_TAWAY: p.ties = QC_TIES_AWAY; break;
    case T_TORCHAO: p.nonan = QC_NONAN_TORCHAO; break;
    case T_MLD: p.nonan = QC_NONAN_MLDTYPES; break;
    case T_NZERO: p.nonan = QC_NONAN_ZERO; break;
    case T_DROP: p.zero_sign = QC_ZERO_DROP; break;
    case T_MODELOPT: p.zero_sign = QC_ZERO_MODELOPT; break;
    case T_EXPOS: p.zero_sign = QC_ZERO_EXACT_POSITIVE; break;
    default: break;
    }
    return p;
}

/* e8m0 vectors: rule (emax, mbits), input, expected byte, where from. */
typedef struct e8vec {
    qc_e8m0_rule rule;
    int emax, mbits;
    uint32_t in;
    uint8_t out;
    const char *src;
} e8vec;

static const e8vec e8m0_vectors[] = {
    /* formats.md §11: torch-RNE | ml_dtypes | ceil | floor | DeepGEMM */
    {QC_E8M0_RNE, 0, 3, 0x00000000, 0x00, "formats.md §11 0"},
    {QC_E8M0_MLDTYPES, 0, 3, 0x00000000, 0xFF, "formats.md §11 0"},
    {QC_E8M0_CEIL, 0, 3, 0x00000000, 0x00, "formats.md §11 0"},
    {QC_E8M0_FLOOR, 0, 3, 0x00000000, 0x00, "formats.md §11 0"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0x00000000, 0x01, "formats.md §11 0"},
    {QC_E8M0_RNE, 0, 3, 0x3F800000, 0x7F, "formats.md §11 1.0"},
    {QC_E8M0_MLDTYPES, 0, 3, 0x3F800000, 0x7F, "formats.md §11 1.0"},
    {QC_E8M0_CEIL, 0, 3, 0x3F800000, 0x7F, "formats.md §11 1.0"},
    {QC_E8M0_FLOOR, 0, 3, 0x3F800000, 0x7F, "formats.md §11 1.0"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0x3F800000, 0x7F, "formats.md §11 1.0"},
    {QC_E8M0_RNE, 0, 3, 0x3FA00000, 0x7F, "formats.md §11 1.25"},
    {QC_E8M0_MLDTYPES, 0, 3, 0x3FA00000, 0x7F, "formats.md §11 1.25"},
    {QC_E8M0_CEIL, 0, 3, 0x3FA00000, 0x80, "formats.md §11 1.25"},
    {QC_E8M0_FLOOR, 0, 3, 0x3FA00000, 0x7F, "formats.md §11 1.25"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0x3FA00000, 0x80, "formats.md §11 1.25"},
    {QC_E8M0_RNE, 0, 3, 0x3FC00000, 0x80, "formats.md §11 1.5"},
    {QC_E8M0_MLDTYPES, 0, 3, 0x3FC00000, 0x80, "formats.md §11 1.5"},
    {QC_E8M0_CEIL, 0, 3, 0x3FC00000, 0x80, "formats.md §11 1.5"},
    {QC_E8M0_FLOOR, 0, 3, 0x3FC00000, 0x7F, "formats.md §11 1.5"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0x3FC00000, 0x80, "formats.md §11 1.5"},
    {QC_E8M0_RNE, 0, 3, 0x3FFFFFFF, 0x80, "formats.md §11 1.9999999"},
    {QC_E8M0_FLOOR, 0, 3, 0x3FFFFFFF, 0x7F, "formats.md §11"},
    {QC_E8M0_CEIL, 0, 3, 0x3FFFFFFF, 0x80, "formats.md §11"},
    {QC_E8M0_RNE, 0, 3, 0xC0000000, 0x80, "formats.md §11 -2"},
    {QC_E8M0_MLDTYPES, 0, 3, 0xC0000000, 0xFF, "formats.md §11 -2"},
    {QC_E8M0_CEIL, 0, 3, 0xC0000000, 0x80, "formats.md §11 -2"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0xC0000000, 0x80, "formats.md §11 -2"},
    {QC_E8M0_RNE, 0, 3, 0x00400000, 0x00, "formats.md §11 2^-127"},
    {QC_E8M0_CEIL, 0, 3, 0x00400000, 0x00, "formats.md §11 2^-127"},
    {QC_E8M0_FLOOR, 0, 3, 0x00400000, 0x00, "formats.md §11 2^-127"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0x00400000, 0x01, "formats.md §11 2^-127"},
    {QC_E8M0_RNE, 0, 3, 0x00400001, 0x01, "formats.md §11"}, {QC_E8M0_CEIL, 0, 3, 0x00400001, 0x01, "formats.md §11"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0x00400001, 0x01, "formats.md §11"},
    {QC_E8M0_RCEIL, 0, 3, 0x00400001, 0x01, "formats.md §2.2 rceil"},
    {QC_E8M0_RCEIL, 0, 3, 0x00400000, 0x00, "formats.md §2.2 rceil"},
    /* fp32 subnormals: ml_dtypes 0.7.0 rounds by value, 0.5.1-0.6.0 up (recorded with each release) */
    {QC_E8M0_MLDTYPES, 0, 3, 0x00400001, 0x00, "ml_dtypes 0.7.0"},
    {QC_E8M0_MLDTYPES, 0, 3, 0x005FFFFF, 0x00, "ml_dtypes 0.7.0"},
    {QC_E8M0_MLDTYPES, 0, 3, 0x00600000, 0x01, "ml_dtypes 0.7.0"},
    {QC_E8M0_MLDTYPES, 0, 3, 0x00000001, 0x00, "ml_dtypes 0.7.0"},
    {QC_E8M0_MLDTYPES_06, 0, 3, 0x00400001, 0x01, "ml_dtypes 0.6.0"},
    {QC_E8M0_MLDTYPES_06, 0, 3, 0x005FFFFF, 0x01, "ml_dtypes 0.6.0"},
    {QC_E8M0_MLDTYPES_06, 0, 3, 0x00400000, 0x00, "ml_dtypes 0.6.0"},
    {QC_E8M0_MLDTYPES_06, 0, 3, 0x00000000, 0xFF, "ml_dtypes 0.6.0"},
    {QC_E8M0_RNE, 0, 3, 0x7F400000, 0xFF, "formats.md §11 1.5*2^127"},
    {QC_E8M0_MLDTYPES, 0, 3, 0x7F400000, 0xFF, "formats.md §11"},
    {QC_E8M0_CEIL, 0, 3, 0x7F400000, 0xFE, "formats.md §11"},
    {QC_E8M0_RCEIL, 0, 3, 0x7F400000, 0xFF, "formats.md §11"},
    {QC_E8M0_FLOOR, 0, 3, 0x7F400000, 0xFE, "formats.md §11"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0x7F400000, 0xFE, "formats.md §11"},
    {QC_E8M0_RNE, 0, 3, 0x7F800000, 0xFF, "formats.md §11 +Inf"},
    {QC_E8M0_MLDTYPES, 0, 3, 0x7F800000, 0xFF, "formats.md §11"},
    {QC_E8M0_CEIL, 0, 3, 0x7F800000, 0xFE, "formats.md §11"},
    {QC_E8M0_FLOOR, 0, 3, 0x7F800000, 0xFF, "formats.md §11"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0x7F800000, 0xFE, "formats.md §11"},
    {QC_E8M0_RNE, 0, 3, 0x7FC00000, 0xFF, "formats.md §11 NaN"},
    {QC_E8M0_MLDTYPES, 0, 3, 0x7FC00000, 0xFF, "formats.md §11 NaN"},
    {QC_E8M0_CEIL, 0, 3, 0x7FC00000, 0xFF, "formats.md §11 NaN"},
    {QC_E8M0_FLOOR, 0, 3, 0x7FC00000, 0xFF, "formats.md §11 NaN"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0x7FC00000, 0xFE, "formats.md §11 NaN"},
    {QC_E8M0_TRITON_UP, 0, 3, 0x7FC00000, 0x00, "formats.md §11"},
    {QC_E8M0_RCEIL, 0, 3, 0x7FC00000, 0xFF, "formats.md §2.2"},
    {QC_E8M0_EVEN, 2, 1, 0x7FC00000, 0xFF, "formats.md §2.2"},
    /* formats.md §10 B7: round-up 1.125 -> 2, 1.25 -> 2, 5 -> 8 */
    {QC_E8M0_TRITON_UP, 0, 3, 0x3F900000, 0x80, "formats.md §10 B7"},
    {QC_E8M0_TRITON_UP, 0, 3, 0x3FA00000, 0x80, "formats.md §10 B7"},
    {QC_E8M0_TRITON_UP, 0, 3, 0x40A00000, 0x82, "formats.md §10 B7"},
    {QC_E8M0_TRITON_DOWN, 0, 3, 0x40A00000, 0x81, "formats.md §2.2"},
    /* formats.md §10 B8 */
    {QC_E8M0_RNE, 0, 3, 0x3E400000, 0x7D, "formats.md §10 B8 1.5*2^-3"},
    {QC_E8M0_FLOOR, 0, 3, 0x3E400000, 0x7C, "formats.md §10 B8"},
    {QC_E8M0_CEIL, 0, 3, 0x3E400000, 0x7D, "formats.md §10 B8"},
    {QC_E8M0_RNE, 0, 3, 0x3E200000, 0x7C, "formats.md §10 B8 1.25*2^-3"},
    {QC_E8M0_CEIL, 0, 3, 0x3E200000, 0x7D, "formats.md §10 B8"},
    {QC_E8M0_FLOOR, 0, 3, 0x3E000000, 0x7C, "formats.md §10 B8 2^-3"},
    {QC_E8M0_RNE, 0, 3, 0x3E000000, 0x7C, "formats.md §10 B8"},
    {QC_E8M0_CEIL, 0, 3, 0x3E000000, 0x7C, "formats.md §10 B8"},
    /* formats.md §10 B11, with the exact log2 the oracle uses: 2^4 (1 + 2^-23) -> 2^5 */
    {QC_E8M0_LOG2_CEIL, 0, 3, 0x41800001, 0x84, "formats.md §10 B11 exact"},
    {QC_E8M0_DEEPGEMM, 0, 3, 0x41800001, 0x84, "formats.md §10 B11 bits"},
    /* formats.md §2.2 EVEN thresholds [derived]: FP4 1.75 2^e, e4m3 1.9375 2^e; FLOOR/EVEN subtract emax */
    {QC_E8M0_EVEN, 0, 1, 0x3FE00000, 0x80, "formats.md §2.2 EVEN fp4"},
    {QC_E8M0_EVEN, 0, 1, 0x3FDFFFFF, 0x7F, "formats.md §2.2"},
    {QC_E8M0_EVEN, 0, 3, 0x3FF80000, 0x80, "formats.md §2.2 EVEN e4m3"},
    {QC_E8M0_EVEN, 0, 3, 0x3FF7FFFF, 0x7F, "formats.md §2.2"},
    {QC_E8M0_FLOOR, 8, 3, 0x43E00000, 0x7F, "formats.md §5 448 -> 2^0"},
    {QC_E8M0_FLOOR, 2, 3, 0x00000000, 0x00, "formats.md §2.2 0"},
    {QC_E8M0_TORCHAO_CEIL, 2, 3, 0x40C00000, 0x80, "formats.md §2.2 6 -> ceil 3 - emax 2"},
};
#define N_E8M0_VECTORS ((int)(sizeof e8m0_vectors / sizeof e8m0_vectors[0]))

typedef struct dvec {
    qc_e8m0_decoder d;
    uint8_t code;
    uint32_t out; /* fp32 bits; 0x7FC00000 stands for "a NaN" */
} dvec;

/* formats.md §2.3. */
static const dvec e8m0_decode_vectors[] = {
    {QC_E8M0_DEC_TORCH, 0x00, 0x00400000}, {QC_E8M0_DEC_TORCH, 0xFF, 0x7FC00000},
    {QC_E8M0_DEC_TORCH, 0x7F, 0x3F800000},
    {QC_E8M0_DEC_SHIFT, 0x00, 0x00000000}, {QC_E8M0_DEC_SHIFT, 0xFF, 0x7F800000},
    {QC_E8M0_DEC_SHIFT, 0x80, 0x40000000},
    {QC_E8M0_DEC_EXP2, 0x00, 0x00400000},  {QC_E8M0_DEC_EXP2, 0xFF, 0x7F800000},
    {QC_E8M0_DEC_TRTLLM_RCP, 0x00, 0x3F800000}, {QC_E8M0_DEC_TRTLLM_RCP, 0x7E, 0x40000000},
    {QC_E8M0_DEC_TRTLLM_RCP, 0xFE, 0x00400000},
    {QC_E8M0_DEC_CUTEDSL_INV, 0x00, 0x00000000}, {QC_E8M0_DEC_CUTEDSL_INV, 0xFE, 0x00000000},
    {QC_E8M0_DEC_CUTEDSL_INV, 0xFD, 0x00800000}, {QC_E8M0_DEC_CUTEDSL_INV, 0x7F, 0x3F800000},
    /* torchao to_mx (golden/real/torchao-0.18.0): clamp(E << 23, min=2^-126); 2^(127-E) of RCEIL */
    {QC_E8M0_DEC_TORCHAO, 0x00, 0x00800000}, {QC_E8M0_DEC_TORCHAO, 0xFF, 0x7F800000},
    {QC_E8M0_DEC_TORCHAO, 0x80, 0x40000000}, {QC_E8M0_DEC_TORCHAO_RCP, 0x00, 0x3F800000},
    {QC_E8M0_DEC_TORCHAO_RCP, 0x7E, 0x40000000}, {QC_E8M0_DEC_TORCHAO_RCP, 0xFE, 0x00400000},
    {QC_E8M0_DEC_TORCHAO_RCP, 0xFF, 0x7FC00000},
};
#define N_E8M0_DECODE_VECTORS ((int)(sizeof e8m0_decode_vectors / sizeof e8m0_decode_vectors[0]))

static uint32_t double_as_f32_bits(double v)
{
    return slow_f32_bits((float)v);
}

static void oracle_self_check(void)
{
    /* formats.md §1.1 / §3.1 table facts. */
    for (int i = 0; i < (int)(sizeof facts / sizeof facts[0]); i++) {
        const format_fact *F = &facts[i];
        qc_format f = F->f;
        int n = slow_value_count(f);
        if (slow_value_at(f, n - 1) != F->max || slow_code_at(f, n - 1) != F->max_code)
            oracle_fail("%s max %a (0x%X), spec %a (0x%X)", slow_format_name(f), slow_value_at(f, n - 1),
                        slow_code_at(f, n - 1), F->max, F->max_code);
        if (slow_value_at(f, 0) != 0 || slow_value_at(f, 1) != F->min_subnormal)
            oracle_fail("%s min subnormal %a, spec %a", slow_format_name(f), slow_value_at(f, 1), F->min_subnormal);
        uint32_t first_normal = 1u << slow_mbits(f); /* E = 1, M = 0 */
        if (slow_minifloat_decode(f, first_normal) != F->min_normal ||
            !(slow_minifloat_decode(f, first_normal - 1) < F->min_normal))
            oracle_fail("%s min normal %a, spec %a", slow_format_name(f), slow_minifloat_decode(f, first_normal),
                        F->min_normal);
        /* every value of every format is an fp32 (so decode to fp32 is exact) */
        for (int k = 0; k < n; k++)
            if ((double)(float)slow_value_at(f, k) != slow_value_at(f, k))
                oracle_fail("%s value %a is not an fp32", slow_format_name(f), slow_value_at(f, k));
    }
    /* formats.md §3.1: e2m1 codes 0-7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6, 8-15 the negatives, 8 = -0. */
    static const double e2m1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    for (uint32_t c = 0; c < 16; c++) {
        double v = slow_minifloat_decode(QC_E2M1, c), want = c < 8 ? e2m1[c] : -e2m1[c - 8];
        if (v != want || (c == 8 && !signbit(v)))
            oracle_fail("e2m1 code %u = %a, spec %a", c, v, want);
    }
    /* formats.md §1.1: E4M3FN max subnormal 7 2^-9; value_fn(b) = 2 value_fnuz(b) except 0x7F, 0xFF, 0x80. */
    if (slow_minifloat_decode(QC_E4M3FN, 0x07) != 0.013671875)
        oracle_fail("e4m3fn 0x07 = %a, spec 0.013671875", slow_minifloat_decode(QC_E4M3FN, 0x07));
    for (uint32_t b = 0; b < 256; b++) {
        if (b == 0x7F || b == 0xFF || b == 0x80)
            continue;
        double fn = slow_minifloat_decode(QC_E4M3FN, b), fnuz = slow_minifloat_decode(QC_E4M3FNUZ, b);
        if (fn != 2 * fnuz)
            oracle_fail("e4m3fn(0x%02X) = %a != 2 e4m3fnuz(0x%02X) = 2 %a", b, fn, b, fnuz);
    }
    if (!slow_minifloat_is_nan_code(QC_E4M3FNUZ, 0x80) || !slow_minifloat_is_nan_code(QC_E5M2FNUZ, 0x80) ||
        !slow_minifloat_is_nan_code(QC_E4M3FN, 0x7F) || !slow_minifloat_is_nan_code(QC_E4M3FN, 0xFF) ||
        slow_minifloat_is_nan_code(QC_E4M3FN, 0x80) || slow_minifloat_decode(QC_E4M3FNUZ, 0x7F) != 240.0 ||
        !isinf(slow_minifloat_decode(QC_E5M2, 0xFC)) || !slow_minifloat_is_nan_code(QC_E5M2, 0x7D))
        oracle_fail("formats.md §1.1 NaN/Inf codes");

    for (int i = 0; i < N_SPEC_VECTORS; i++) {
        const vec *v = &spec_vectors[i];
        qc_cast_policy p = tweak_policy(v->t);
        uint32_t got = slow_minifloat_encode(v->f, slow_f32_from_bits(v->in), &p);
        if (got != v->out)
            oracle_fail("%s %s: 0x%08X -> 0x%02X, spec says 0x%02X", slow_format_name(v->f), v->src, v->in, got,
                        v->out);
    }
    for (int i = 0; i < N_E8M0_VECTORS; i++) {
        const e8vec *v = &e8m0_vectors[i];
        qc_cast_policy p = e8m0_policy(v->rule, v->emax, v->mbits);
        uint8_t got = slow_e8m0_encode(slow_f32_from_bits(v->in), &p);
        if (got != v->out)
            oracle_fail("e8m0 %s emax %d mbits %d %s: 0x%08X -> 0x%02X, spec says 0x%02X",
                        qc_e8m0_rule_name(v->rule), v->emax, v->mbits, v->src, v->in, got, v->out);
    }
    for (int i = 0; i < N_E8M0_DECODE_VECTORS; i++) {
        const dvec *v = &e8m0_decode_vectors[i];
        double d = slow_e8m0_decode(v->code, v->d);
        int ok = v->out == 0x7FC00000u ? isnan(d) : double_as_f32_bits(d) == v->out;
        if (!ok)
            oracle_fail("e8m0 decode %s 0x%02X = %a, spec 0x%08X", qc_e8m0_decoder_name(v->d), v->code, d, v->out);
    }
    /* The oracle's own round trip, and its binary search against a linear scan (fp8 formats,
     * every bf16 pattern as input). */
    for (int i = 0; i < N_MINIFLOATS; i++) {
        qc_format f = minifloats[i];
        qc_cast_policy p = base_policy();
        for (uint32_t c = 0; c < (1u << slow_bits(f)); c++) {
            if (!slow_minifloat_is_finite_code(f, c))
                continue;
            uint32_t back = slow_minifloat_encode(f, (float)slow_minifloat_decode(f, c), &p);
            if (back != c)
                oracle_fail("%s: slow encode(decode(0x%X)) = 0x%X", slow_format_name(f), c, back);
        }
    }
    for (int i = 0; i < N_FP8; i++) {
        qc_format f = fp8s[i];
        int n = slow_value_count(f);
        for (uint32_t p16 = 0x3380; p16 < 0x4780; p16++) { /* bf16 values in [2^-24, 2^16) */
            double a = (double)slow_f32_from_bits(p16 << 16);
            slow_rounded r = slow_round_magnitude(f, a, QC_TIES_EVEN);
            /* linear scan: the nearest value, ties to the even code, beyond the last value by
             * the same continuation rule */
            int best = 0;
            for (int k = 1; k < n; k++)
                if (fabs(slow_value_at(f, k) - a) < fabs(slow_value_at(f, best) - a) ||
                    (fabs(slow_value_at(f, k) - a) == fabs(slow_value_at(f, best) - a) &&
                     (slow_code_at(f, k) & 1u) == 0))
                    best = k;
            /* The differences are exact in double: a has 8 significant bits and a >= 2^-24, so
             * its last bit is >= 2^-31; the fp8 values are multiples of 2^-17 below 2^16; every
             * operand is a multiple of 2^-31 below 2^17 (48 bits). The scan cannot see overflow,
             * so it is compared only for a <= max. */
            if (a <= slow_value_at(f, n - 1) && (r.overflow || r.code != slow_code_at(f, best)))
                oracle_fail("%s: binary search vs linear scan at %a: 0x%X vs 0x%X", slow_format_name(f), a, r.code,
                            slow_code_at(f, best));
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* (a) decode, (b) round trip                                                                 */

static long check_decode(void)
{
    long n = 0;
    qc_cast_policy p = base_policy();
    for (int i = 0; i < N_MINIFLOATS; i++) {
        qc_format f = minifloats[i];
        int fnuz = slow_minifloat_is_nan_code(f, 1u << (slow_bits(f) - 1)); /* only fnuz: 0x80 is NaN */
        for (uint32_t c = 0; c < (1u << slow_bits(f)); c++, n++) {
            double want = slow_minifloat_decode(f, c);
            float got = qcref_decode(f, c, &p);
            int ok;
            if (isnan(want))
                /* both NaN; where the format's NaN carries a sign (e4m3fn, IEEE-style), the sign
                 * is kept (formats.md §1.1 torch fp8e4m3fn_to_fp32_value, §12 item 1: "keeping
                 * the sign, like torch"); the fnuz NaN 0x80 has no sign to keep */
                ok = isnan(got) && (fnuz || !!signbit(got) == !!signbit(want));
            else
                ok = slow_f32_bits(got) == double_as_f32_bits(want);
            if (!ok) {
                printf("MISMATCH [decode] format=%s code=0x%02X expected=%a (0x%08X) got=%a (0x%08X)\n",
                       slow_format_name(f), c, want, double_as_f32_bits(want), (double)got, slow_f32_bits(got));
                printf("REPRO: qcheck decode --format %s out.bin\n", slow_format_name(f));
                exit(1);
            }
        }
    }
    for (int d = 0; d < QC_E8M0_DECODER_COUNT; d++) {
        p.e8m0_decoder = (qc_e8m0_decoder)d;
        for (uint32_t c = 0; c < 256; c++, n++) {
            double want = slow_e8m0_decode((uint8_t)c, (qc_e8m0_decoder)d);
            float got = qcref_decode(QC_E8M0, c, &p);
            int ok = isnan(want) ? isnan(got) : slow_f32_bits(got) == double_as_f32_bits(want);
            if (!ok) {
                printf("MISMATCH [decode] format=e8m0 decoder=%s code=0x%02X expected=%a got=%a (0x%08X)\n",
                       qc_e8m0_decoder_name(d), c, want, (double)got, slow_f32_bits(got));
                printf("REPRO: qcheck decode --format e8m0 --profile %s out.bin\n", qc_e8m0_decoder_name(d));
                exit(1);
            }
        }
    }
    return n;
}

/* encode(decode(c)) == c for finite c. It must not hold for a zero code whose sign the zero
 * rule changes (drop: -0 -> +0; modelopt: +0 -> -0), so those are left to (c). */
static long roundtrip_one(qc_format f, const qc_cast_policy *p, const char *what)
{
    long n = 0;
    uint32_t signbit = 1u << (slow_bits(f) - 1);
    for (uint32_t c = 0; c < (1u << slow_bits(f)); c++) {
        if (!slow_minifloat_is_finite_code(f, c))
            continue;
        if ((c & ~signbit) == 0 && p->zero_sign != QC_ZERO_KEEP)
            continue;
        float x = qcref_decode(f, c, p);
        uint32_t got = qcref_encode(f, x, p);
        n++;
        if (got != c)
            encode_mismatch(what, f, p, slow_f32_bits(x), c, got);
    }
    return n;
}

static long check_roundtrip(void)
{
    long n = 0;
    for (int i = 0; i < N_MINIFLOATS; i++) {
        qc_format f = minifloats[i];
        for (int k = 0; k < N_MINIFLOAT_POLICIES; k++) {
            qc_cast_policy p = minifloat_policy(k);
            n += roundtrip_one(f, &p, "roundtrip");
        }
        for (int k = 0; k < qc_cast_profile_count(); k++) {
            qc_cast_policy p = qc_cast_profile_policy(qc_cast_profile_at(k), f);
            n += roundtrip_one(f, &p, qc_cast_profile_at(k)->name);
        }
    }
    /* e8m0 under the torch decoder (2^(E-127)): every rule whose definition maps a power of two
     * to itself, for the bytes where it does: DeepGEMM and torchao CEIL never give byte 0, and
     * triton ROUND_UP's bit formula sends 2^-127 (an fp32 subnormal, bits 0x00400000) to 1. */
    for (int r = 0; r < QC_E8M0_RULE_COUNT; r++) {
        qc_cast_policy p = e8m0_policy((qc_e8m0_rule)r, 0, 3);
        uint32_t first = (r == QC_E8M0_DEEPGEMM || r == QC_E8M0_TORCHAO_CEIL || r == QC_E8M0_TRITON_UP) ? 1 : 0;
        for (uint32_t c = first; c < 255; c++, n++) {
            float x = qcref_decode(QC_E8M0, c, &p);
            uint32_t got = qcref_encode(QC_E8M0, x, &p);
            if (got != c)
                encode_mismatch("roundtrip", QC_E8M0, &p, slow_f32_bits(x), c, got);
        }
    }
    for (int k = 0; k < qc_cast_profile_count(); k++) {
        qc_cast_policy p = qc_cast_profile_policy(qc_cast_profile_at(k), QC_E8M0);
        for (uint32_t c = 1; c < 255; c++, n++) {
            float x = qcref_decode(QC_E8M0, c, &p);
            uint32_t got = qcref_encode(QC_E8M0, x, &p);
            if (got != c)
                encode_mismatch(qc_cast_profile_at(k)->name, QC_E8M0, &p, slow_f32_bits(x), c, got);
        }
    }
    return n;
}

/* ------------------------------------------------------------------------------------------ */
/* Inputs                                                                                     */

typedef struct input_set {
    uint32_t *bits;
    size_t n, cap;
} input_set;

static void push(input_set *s, uint32_t b)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1u << 16;
        s->bits = realloc(s->bits, s->cap * sizeof *s->bits);
        if (!s->bits) {
            fprintf(stderr, "test_formats: out of memory\n");
            exit(2);
        }
    }
    s->bits[s->n++] = b;
}

static void push_float_and_neighbours(input_set *s, double v)
{
    float x = (float)v;
    if ((double)x != v || isinf(x))
        return; /* not an fp32 */
    float up = nextafterf(x, INFINITY), down = nextafterf(x, -INFINITY);
    push(s, bits_of(x));
    push(s, bits_of(-x));
    push(s, bits_of(up));
    push(s, bits_of(-up));
    push(s, bits_of(down));
    push(s, bits_of(-down));
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The inputs every format sees under every policy combination: all 2^16 bf16 patterns (as the
 * high half of an fp32) and fp32 special values. */
static input_set structured_inputs(void)
{
    input_set s = {NULL, 0, 0};
    for (uint32_t p = 0; p < 0x10000; p++)
        push(&s, p << 16);
    static const uint32_t specials[] = {
        0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
        0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7F800001, 0xFF800001, 0x7FC00000, 0xFFC00000,
        0x7FFFFFFF, 0xFFFFFFFF, 0x7FA00000, 0x7FE00000, 0x7F802000, 0x7F801FFF, 0x7F804000, 0x7F810000,
        0x7FBFFFFF, 0xFFBFFFFF, 0x7F8FFFFF, 0x00400000, 0x00400001, 0x003FFFFF, 0x00200000, 0x00600000,
    };
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        push(&s, specials[i]);
    return s;
}

/* The fp32 neighbours of every bf16 pattern (just above / below each power of two, each 1.5 2^k,
 * each e8m0 threshold), and random patterns: half uniform over all 2^32 bit patterns, half with
 * the exponent drawn from the range where the narrow formats have values (2^-30 .. 2^20). */
static input_set random_inputs(uint64_t seed, size_t nrandom)
{
    input_set s = {NULL, 0, 0};
    for (uint32_t p = 0; p < 0x10000; p++) {
        push(&s, (p << 16) + 1);
        push(&s, (p << 16) - 1);
    }
    uint64_t st = seed;
    for (size_t i = 0; i < nrandom; i++) {
        uint64_t r = splitmix64(&st);
        if (i % 2 == 0) {
            push(&s, (uint32_t)r);
        } else {
            uint32_t e = (uint32_t)(127 - 30 + (r >> 32) % 51);
            push(&s, ((uint32_t)r & 0x807FFFFFu) | (e << 23));
        }
    }
    return s;
}

/* Each value of f, each midpoint between neighbours (and towards the continuation beyond max),
 * each with its fp32 neighbours and both signs. */
static input_set format_inputs(qc_format f)
{
    input_set s = {NULL, 0, 0};
    int n = slow_value_count(f);
    for (int k = 0; k < n; k++) {
        double v = slow_value_at(f, k);
        push_float_and_neighbours(&s, v);
        double next = k + 1 < n ? slow_value_at(f, k + 1) : 2 * v - slow_value_at(f, k - 1);
        push_float_and_neighbours(&s, (v + next) / 2);
        if (k + 1 == n)
            push_float_and_neighbours(&s, next);
    }
    return s;
}

static input_set concat(const input_set *a, const input_set *b)
{
    input_set s = {NULL, 0, 0};
    for (size_t i = 0; i < a->n; i++)
        push(&s, a->bits[i]);
    for (size_t i = 0; i < b->n; i++)
        push(&s, b->bits[i]);
    return s;
}

/* ------------------------------------------------------------------------------------------ */
/* (c) quick sweep                                                                            */

static int nthreads = 2;
static const char *only_format; /* --format NAME: sweep only this one (debugging) */

/* Which policy fields the definition of a format reads (formats.h, formats.md §1.3, §3.2): formats
 * without NaN/Inf codes always saturate and take NaN from the nonan rule; the fnuz formats have
 * one unsigned NaN (0x80) and no -0; only IEEE-style formats have several NaN codes. The
 * other fields must have no effect, which the structured inputs check under every combination
 * and the random inputs check by rotating them from one input to the next. */
typedef struct relevance {
    int overflow, nan_sign, nan_code, nonan, zero_sign;
} relevance;

static relevance relevant_fields(qc_format f)
{
    slow_kind k = slow_format_kind(f);
    relevance r;
    r.overflow = k != SLOW_KIND_NONE;
    r.nan_sign = k == SLOW_KIND_FN || k == SLOW_KIND_IEEE;
    r.nan_code = k == SLOW_KIND_IEEE;
    r.nonan = k == SLOW_KIND_NONE;
    r.zero_sign = k != SLOW_KIND_FNUZ;
    return r;
}

/* The combination whose irrelevant fields are all at their first value stands for the rest. */
static int canonical_combination(qc_format f, const qc_cast_policy *p)
{
    relevance r = relevant_fields(f);
    return (r.overflow || p->overflow == 0) && (r.nan_sign || p->nan_sign == 0) &&
           (r.nan_code || p->nan_code == 0) && (r.nonan || p->nonan == 0) && (r.zero_sign || p->zero_sign == 0);
}

static void rotate_irrelevant(qc_format f, qc_cast_policy *p, size_t i)
{
    relevance r = relevant_fields(f);
    if (!r.overflow)
        p->overflow = (qc_overflow)(i % N_OVERFLOW);
    if (!r.nan_sign)
        p->nan_sign = (qc_nan_sign)((i / 2) % N_NAN_SIGN);
    if (!r.nan_code)
        p->nan_code = (qc_nan_code)(i % N_NAN_CODE);
    if (!r.nonan)
        p->nonan = (qc_nonan)(i % N_NONAN);
    if (!r.zero_sign)
        p->zero_sign = (qc_zero_sign)(i % N_ZERO_SIGN);
}

typedef struct mf_job {
    qc_format f;
    const uint32_t *bits;
    size_t n;
    slow_rounded *rounded[N_TIES]; /* slow rounding of |x| under each tie rule */
    const int *combos;             /* policy combinations to run */
    int ncombos;
    int rotate; /* rotate the irrelevant fields per input */
    int tid;
    long compared;
} mf_job;

static void *round_worker(void *arg)
{
    mf_job *j = arg;
    for (size_t i = (size_t)j->tid; i < j->n; i += (size_t)nthreads) {
        float x = slow_f32_from_bits(j->bits[i]);
        for (int t = 0; t < N_TIES; t++) {
            slow_rounded r = {0, 0};
            if (isfinite(x))
                r = slow_round_magnitude(j->f, fabs((double)x), (qc_ties)t);
            j->rounded[t][i] = r;
        }
    }
    return NULL;
}

static void *minifloat_worker(void *arg)
{
    mf_job *j = arg;
    for (int c = j->tid; c < j->ncombos; c += nthreads) {
        qc_cast_policy p = minifloat_policy(j->combos[c]);
        const slow_rounded *r = j->rounded[p.ties];
        for (size_t i = 0; i < j->n; i++) {
            qc_cast_policy q = p;
            if (j->rotate)
                rotate_irrelevant(j->f, &q, i + (size_t)c);
            uint32_t b = j->bits[i];
            uint32_t want = slow_minifloat_finish(j->f, b, r[i], &q);
            uint32_t got = qcref_encode(j->f, slow_f32_from_bits(b), &q);
            if (want != got)
                encode_mismatch("quick", j->f, &q, b, want, got);
        }
        j->compared += (long)j->n;
    }
    return NULL;
}

static void run_threads(void *(*fn)(void *), void *jobs, size_t job_size)
{
    pthread_t th[64];
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, fn, (char *)jobs + (size_t)t * job_size);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
}

/* Encodes every input of s to f under the given combinations; returns the encodes compared. */
static long sweep_set(qc_format f, const input_set *s, const int *combos, int ncombos, int rotate)
{
    slow_rounded *rounded[N_TIES];
    for (int t = 0; t < N_TIES; t++) {
        rounded[t] = malloc(s->n * sizeof(slow_rounded));
        if (!rounded[t]) {
            fprintf(stderr, "test_formats: out of memory\n");
            exit(2);
        }
    }
    mf_job jobs[64];
    for (int t = 0; t < nthreads; t++) {
        mf_job j = {f, s->bits, s->n, {rounded[0], rounded[1], rounded[2]}, combos, ncombos, rotate, t, 0};
        jobs[t] = j;
    }
    run_threads(round_worker, jobs, sizeof jobs[0]);
    run_threads(minifloat_worker, jobs, sizeof jobs[0]);
    long compared = 0;
    for (int t = 0; t < nthreads; t++)
        compared += jobs[t].compared;
    for (int t = 0; t < N_TIES; t++)
        free(rounded[t]);
    return compared;
}

typedef struct e8_job {
    const uint32_t *bits;
    size_t n;
    int rotate; /* rotate the parameters a rule does not read per input */
    int tid;
    long compared, b11;
} e8_job;

/* Compares one e8m0 encode; returns 1 for a counted B11 difference. */
static int check_e8m0_one(const qc_cast_policy *p, uint32_t b, const char *what)
{
    float x = slow_f32_from_bits(b);
    uint8_t want = slow_e8m0_encode(x, p);
    uint8_t got = (uint8_t)qcref_encode(QC_E8M0, x, p);
    if (want == got)
        return 0;
    /* B11: fp32 log2f rounds log2 of an input just above 2^k to k, so ceil gives k, one byte
     * below the exact ceil. Counted, not failed (formats.md §10 B11, §2.2 sglang/vLLM row). */
    if ((p->e8m0 == QC_E8M0_LOG2_CEIL || p->e8m0 == QC_E8M0_TORCHAO_RCEIL || p->e8m0 == QC_E8M0_MODELOPT ||
         p->e8m0 == QC_E8M0_MODELOPT_CPU) && slow_just_above_pow2(x) &&
        got + 1 == want)
        return 1;
    /* the same rounding of log2f just below 2^k gives floor k, one byte above the exact floor */
    if (p->e8m0 == QC_E8M0_LOG2_FLOOR && slow_just_below_pow2(x) && got == want + 1)
        return 1;
    encode_mismatch(what, QC_E8M0, p, b, want, got);
    return 0;
}

/* emax is read by FLOOR, TORCHAO_CEIL and EVEN, mbits by EVEN only (formats.md §2.2). */
static int e8m0_reads_emax(int rule)
{
    return rule == QC_E8M0_FLOOR || rule == QC_E8M0_TORCHAO_CEIL || rule == QC_E8M0_EVEN || rule == QC_E8M0_LOG2_FLOOR;
}
static int e8m0_reads_mbits(int rule) { return rule == QC_E8M0_EVEN; }

static void *e8m0_quick_worker(void *arg)
{
    e8_job *j = arg;
    int task = 0;
    for (int k = 0; k < N_E8M0_QUICK; k++) {
        int rule = k / (N_EMAX * N_MBITS), rest = k % (N_EMAX * N_MBITS);
        int ei = rest / N_MBITS, mi = rest % N_MBITS;
        if (j->rotate && ((!e8m0_reads_emax(rule) && ei) || (!e8m0_reads_mbits(rule) && mi)))
            continue; /* stands in the rotation of the canonical configuration */
        if (task++ % nthreads != j->tid)
            continue;
        qc_cast_policy p = e8m0_policy((qc_e8m0_rule)rule, e8m0_emaxes[ei], e8m0_mbitses[mi]);
        long b11 = 0;
        for (size_t i = 0; i < j->n; i++) {
            qc_cast_policy q = p;
            if (j->rotate && !e8m0_reads_emax(rule))
                q.e8m0_emax = e8m0_emaxes[(i + (size_t)k) % N_EMAX];
            if (j->rotate && !e8m0_reads_mbits(rule))
                q.e8m0_mbits = e8m0_mbitses[(i + (size_t)k) % N_MBITS];
            b11 += check_e8m0_one(&q, j->bits[i], "quick");
        }
        j->compared += (long)j->n;
        if (ei == 0 && mi == 0) /* the B11 count does not depend on emax/mbits: once per rule */
            j->b11 += b11;
    }
    return NULL;
}

static long sweep_e8m0(const input_set *s, int rotate, long *b11)
{
    e8_job jobs[64];
    for (int k = 0; k < nthreads; k++) {
        e8_job j = {s->bits, s->n, rotate, k, 0, 0};
        jobs[k] = j;
    }
    run_threads(e8m0_quick_worker, jobs, sizeof jobs[0]);
    long c = 0;
    for (int k = 0; k < nthreads; k++)
        c += jobs[k].compared, *b11 += jobs[k].b11;
    return c;
}

/* all_policies: also the random inputs under every combination (the full mode does this). */
static long policy_sweep(uint64_t seed, size_t nrandom, int all_policies)
{
    printf("policy sweep: seed=0x%016" PRIX64 " random=%zu threads=%d%s (rerun with --seed 0x%" PRIX64 ")\n", seed,
           nrandom, nthreads, all_policies ? ", every combination on every input" : "", seed);
    input_set structured = structured_inputs();
    input_set random = random_inputs(seed, nrandom);
    printf("  %zu structured inputs (2^16 bf16 patterns, specials) + each format's values and midpoints with "
           "their neighbours: every policy combination\n",
           structured.n);
    printf("  %zu random-class inputs (bf16 neighbours, seeded random): %s\n", random.n,
           all_policies ? "every policy combination"
                        : "every combination of the fields the format reads, the others rotated per input");
    double t0 = now_s();
    long total = 0;
    int all[N_MINIFLOAT_POLICIES];
    for (int k = 0; k < N_MINIFLOAT_POLICIES; k++)
        all[k] = k;
    for (int i = 0; i < N_MINIFLOATS; i++) {
        qc_format f = minifloats[i];
        if (only_format && strcmp(only_format, slow_format_name(f)) != 0)
            continue;
        double t = now_s();
        input_set extra = format_inputs(f);
        input_set a = concat(&structured, &extra);
        long c = sweep_set(f, &a, all, N_MINIFLOAT_POLICIES, 0);
        int canon[N_MINIFLOAT_POLICIES], ncanon = 0;
        for (int k = 0; k < N_MINIFLOAT_POLICIES; k++) {
            qc_cast_policy p = minifloat_policy(k);
            if (all_policies || canonical_combination(f, &p))
                canon[ncanon++] = k;
        }
        c += sweep_set(f, &random, canon, ncanon, !all_policies);
        total += c;
        printf("  (c) %-9s %zu inputs x %d combinations + %zu x %d, %ld encodes, %ld mismatches so far (%.1f s)\n",
               slow_format_name(f), a.n, N_MINIFLOAT_POLICIES, random.n, ncanon, c, total_mismatches(), now_s() - t);
        free(extra.bits);
        free(a.bits);
    }
    if (!only_format || strcmp(only_format, "e8m0") == 0) {
        double t = now_s();
        long b11 = 0;
        long c = sweep_e8m0(&structured, 0, &b11);
        c += sweep_e8m0(&random, !all_policies, &b11);
        total += c;
        printf("  (c) e8m0      %d rules x %d emax x %d mbits, %ld encodes, %ld mismatches so far; log2 rules: %ld "
               "inputs next to a power of two where fp32 log2f rounds to the integer (B11, counted, not failed) (%.1f s)\n",
               QC_E8M0_RULE_COUNT, N_EMAX, N_MBITS, c, total_mismatches(), b11, now_s() - t);
    }
    printf("policy sweep: %ld encodes compared, %.1f s\n", total, now_s() - t0);
    free(structured.bits);
    free(random.bits);
    return total;
}

/* ------------------------------------------------------------------------------------------ */
/* (d) full mode: every fp32 pattern                                                          */

#define CHUNK_BITS 24
#define N_CHUNKS (1u << (32 - CHUNK_BITS))

static atomic_uint next_chunk;
static atomic_uint chunks_done;
static unsigned n_chunks = N_CHUNKS; /* --chunks N: only the first N (timing, debugging) */

typedef struct full_job {
    long compared, b11;
} full_job;

static void *full_worker(void *arg)
{
    full_job *j = arg;
    qc_cast_policy mf[2];
    mf[0] = base_policy();
    mf[1] = base_policy();
    mf[1].overflow = QC_OVERFLOW_SATFINITE;
    qc_cast_policy e8[N_E8M0_FULL];
    for (int k = 0; k < N_E8M0_FULL; k++)
        e8[k] = e8m0_policy(e8m0_full_cfgs[k].rule, e8m0_full_cfgs[k].emax, e8m0_full_cfgs[k].mbits);

    for (;;) {
        unsigned chunk = atomic_fetch_add(&next_chunk, 1u);
        if (chunk >= n_chunks)
            break;
        uint32_t lo = chunk << CHUNK_BITS;
        for (uint32_t i = 0; i < (1u << CHUNK_BITS); i++) {
            uint32_t b = lo + i;
            float x = slow_f32_from_bits(b);
            int finite = isfinite(x);
            double a = fabs((double)x);
            for (int k = 0; k < N_FP8; k++) {
                slow_rounded r = {0, 0};
                if (finite)
                    r = slow_round_magnitude(fp8s[k], a, QC_TIES_EVEN);
                for (int o = 0; o < 2; o++) {
                    uint32_t want = slow_minifloat_finish(fp8s[k], b, r, &mf[o]);
                    uint32_t got = qcref_encode(fp8s[k], x, &mf[o]);
                    if (want != got)
                        encode_mismatch("full", fp8s[k], &mf[o], b, want, got);
                }
            }
            for (int k = 0; k < N_E8M0_FULL; k++)
                j->b11 += check_e8m0_one(&e8[k], b, "full");
        }
        j->compared += (long)(1u << CHUNK_BITS) * (2 * N_FP8 + N_E8M0_FULL);
        atomic_fetch_add(&chunks_done, 1u);
    }
    return NULL;
}

static void full_mode(void)
{
    printf("full mode: all 2^32 fp32 patterns -> e4m3fn, e4m3fnuz, e5m2, e5m2fnuz (RNE, overflow nan and "
           "satfinite) and e8m0 (%d rule configurations), %d threads\n",
           N_E8M0_FULL, nthreads);
    fflush(stdout);
    double t0 = now_s();
    full_job jobs[64];
    pthread_t th[64];
    memset(jobs, 0, sizeof jobs);
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, full_worker, &jobs[t]);
    double last = t0;
    unsigned done = 0;
    while (done < n_chunks) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
        done = atomic_load(&chunks_done);
        if (now_s() - last >= 15.0 || done == n_chunks) {
            double el = now_s() - t0;
            fprintf(stderr, "  full: %u/%u chunks of 2^%d (%.0f%%), %.0f s elapsed, ~%.0f s left\n", done, n_chunks,
                    CHUNK_BITS, 100.0 * done / n_chunks, el, done ? el * (n_chunks - done) / done : 0.0);
            last = now_s();
        }
    }
    long compared = 0, b11 = 0;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        compared += jobs[t].compared;
        b11 += jobs[t].b11;
    }
    printf("full mode: %ld encodes compared, %ld mismatches; log2 rules: %ld inputs next to a power of two where "
           "fp32 log2f rounds to the integer (B11, counted, not failed); %.1f s\n",
           compared, total_mismatches(), b11, now_s() - t0);
}

/* ------------------------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr, "usage: test_formats [--full] [--seed N] [--random N] [--threads N] [--format NAME] [--keep-going] [--chunks N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int full = 0;
    uint64_t seed = 0x51F0A7C0DE5EEDull;
    size_t nrandom = 1u << 20; /* >= 10^6 */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0)
            full = 1;
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--random") == 0 && i + 1 < argc)
            nrandom = (size_t)strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--chunks") == 0 && i + 1 < argc)
            n_chunks = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--keep-going") == 0)
            keep_going = 1;
        else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
            only_format = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else
            usage();
    }
    if (nthreads < 1 || nthreads > 64 || n_chunks < 1 || n_chunks > N_CHUNKS)
        usage();
    setvbuf(stdout, NULL, _IOLBF, 0);

    if (slow_formats_init() != 0) {
        printf("slow oracle: table construction failed\n");
        return 1;
    }
    double t = now_s();
    oracle_self_check();
    if (oracle_failures) {
        printf("the slow oracle disagrees with the spec in %d places: fix tests/slow_formats.c first\n",
               oracle_failures);
        return 1;
    }
    printf("slow oracle: %d spec vectors, %d e8m0 vectors, %d e8m0 decode vectors, tables and binary search "
           "self-checked (%.1f s)\n",
           N_SPEC_VECTORS, N_E8M0_VECTORS, N_E8M0_DECODE_VECTORS, now_s() - t);
    long nd = check_decode();
    printf("(a) decode: %ld codes x decoders, 0 mismatches\n", nd);
    long nr = check_roundtrip();
    printf("(b) encode(decode(c)) == c: %ld checks over %d policy combinations and %d profiles, %ld mismatches\n",
           nr, N_MINIFLOAT_POLICIES, qc_cast_profile_count(), total_mismatches());
    if (full)
        full_mode();
    policy_sweep(seed, nrandom, full);
    if (mismatch_summary())
        return 1;
    printf("PASS: 0 mismatches (%.1f s)\n", now_s() - t);
    return 0;
}
