/* cuda_host_check.cpp: the reference under the `ptx` cast profile (and a few explicit policies)
 * against CUDA's own host emulation of the cvt instructions (cuda_fp8.hpp, cuda_fp4.hpp,
 * cuda_fp6.hpp, cuda_bf16.hpp, cuda_fp16.hpp compiled as plain host C++ by g++).
 *
 * Claim checked: profile `ptx` reproduces cvt.rn.satfinite (fp8, fp6, e2m1), cvt.rp/rz.satfinite
 * (e8m0) and cvt.rn (bf16, f16) bit for bit, and the decode tables equal CUDA's to-half/to-bf16
 * conversions. Expected values are always CUDA's; qcref is only ever the value under test.
 * Spec: docs/spec/formats.md §1.3 (fp8), §2.2-§2.3 (e8m0), §3.2 (fp4), §13 (H200 measurements).
 *
 *   cuda_host_check            quick: all 2^16 bf16 patterns, 10^6 seeded random fp32 patterns,
 *                              special values (zeros, Inf, NaN payloads, subnormals, every format's
 *                              max and max + half ulp, every midpoint, and their neighbours)
 *   cuda_host_check --full     all 2^32 fp32 patterns on --threads N (default 2), progress on stderr
 *   cuda_host_check --input 0xBITS ...   every conversion of these inputs, printed
 *   --seed N                   seed of the random part (printed in every run)
 * Exit: 0 all required conversions agree, 1 any mismatch, 2 usage error. Lines marked INFO
 * describe CUDA behaviour no reference rule claims (NOSAT e8m0); they never fail the run. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "formats/formats.h" /* extern "C" under C++ */
#include "profiles.h"

namespace {

uint32_t bits_of(float x)
{
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

float float_of(uint32_t u)
{
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

/* ---- CUDA's side: one small wrapper per host function, the expected value of every check ---- */

uint32_t cuda_e4m3_sat(float x) { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }
uint32_t cuda_e5m2_sat(float x) { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2); }
uint32_t cuda_e4m3_nosat(float x) { return __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3); }
uint32_t cuda_e5m2_nosat(float x) { return __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2); }
uint32_t cuda_e8m0_rp_sat(float x) { return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf); }
uint32_t cuda_e8m0_rz_sat(float x) { return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero); }
uint32_t cuda_e8m0_rp_nosat(float x) { return __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf); }
uint32_t cuda_e8m0_rz_nosat(float x) { return __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero); }
uint32_t cuda_e2m1(float x) { return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest); }
uint32_t cuda_e2m3(float x) { return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest); }
uint32_t cuda_e3m2(float x) { return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest); }

uint32_t cuda_bf16(float x)
{
    __nv_bfloat16_raw r = __float2bfloat16_rn(x);
    return r.x;
}

uint32_t cuda_f16(float x)
{
    __half_raw r = __float2half_rn(x);
    return r.x;
}

float cuda_half_to_float(__half_raw h) { return __half2float(__half(h)); }

/* Whether a code of format f is a NaN code: written from the format definitions (formats.md §1.1, §2.1),
 * not from qcref, so that it can classify a disagreement between the two. */
bool is_nan_code(qc_format f, uint32_t c)
{
    switch (f) {
    case QC_BF16: return (c & 0x7FFFu) > 0x7F80u;
    case QC_F16: return (c & 0x7FFFu) > 0x7C00u;
    case QC_E4M3FN: return (c & 0x7Fu) == 0x7Fu;
    case QC_E5M2: return (c & 0x7Fu) > 0x7Cu;
    case QC_E4M3FNUZ:
    case QC_E5M2FNUZ: return c == 0x80u;
    case QC_E8M0: return c == 0xFFu;
    default: return false; /* e2m1, e2m3, e3m2 have no NaN code */
    }
}

/* ---- one conversion: CUDA's function, the format, the policy qcref gets, whether it counts ---- */

struct Mismatch {
    uint32_t in, expected, got;
};

struct Stats {
    uint64_t n = 0, mismatches = 0, nan_inputs = 0, nan_code_diffs = 0;
    std::vector<Mismatch> first; /* the first 10, in input order */
    void merge(const Stats &o)
    {
        n += o.n;
        mismatches += o.mismatches;
        nan_inputs += o.nan_inputs;
        nan_code_diffs += o.nan_code_diffs;
        for (const Mismatch &m : o.first)
            if (first.size() < 10)
                first.push_back(m);
    }
};

struct Conversion;
typedef void (*block_fn)(const Conversion &c, const uint32_t *in, size_t n, Stats &s);

struct Conversion {
    const char *name;  /* what is converted how */
    const char *cuda;  /* the CUDA call, the expected side */
    const char *ref;   /* the qcref policy, the side under test */
    qc_format format;
    qc_cast_policy policy;
    block_fn run;
    bool required; /* false: an INFO line, a fact about CUDA that no reference rule claims */
};

/* The loop is instantiated per CUDA function so that its (inlined) emulation is not an indirect
 * call; qcref is the library's extern "C" qcref_encode, as every user calls it. */
template <uint32_t (*Cuda)(float)>
void run_block(const Conversion &c, const uint32_t *in, size_t n, Stats &s)
{
    for (size_t i = 0; i < n; i++) {
        float x = float_of(in[i]);
        uint32_t expected = Cuda(x);
        uint32_t got = qcref_encode(c.format, x, &c.policy);
        if ((in[i] & 0x7FFFFFFFu) > 0x7F800000u)
            s.nan_inputs++;
        if (expected != got) {
            s.mismatches++;
            if (is_nan_code(c.format, expected) && is_nan_code(c.format, got))
                s.nan_code_diffs++;
            if (s.first.size() < 10)
                s.first.push_back({in[i], expected, got});
        }
    }
    s.n += n;
}

int hex_digits(qc_format f) { return (qcref_format_bits(f) + 3) / 4; }

std::vector<Conversion> make_conversions()
{
    const qc_cast_profile *ptx = qc_cast_profile_find("ptx");
    if (!ptx) {
        std::fprintf(stderr, "cuda_host_check: the cast profile `ptx` is missing from profiles.c\n");
        std::exit(1);
    }
    auto prof = [ptx](qc_format f) { return qc_cast_profile_policy(ptx, f); };
    /* __NV_NOSAT (formats.md §13: ml_dtypes except that every NaN becomes 0x7F): overflow to the NaN code
     * (e4m3fn) or Inf (e5m2), NaN canonical positive with all mantissa bits set (e5m2 0x7F; CUDA's
     * __nv_cvt_double_to_fp8 gives 0x7E | mantissa of the canonical NaN 0x7FFFFFFF = 0x7F). */
    qc_cast_policy nosat = qcref_default_policy();
    nosat.overflow = QC_OVERFLOW_NAN;
    nosat.nan_sign = QC_NAN_CANONICAL;
    nosat.nan_code = QC_NANCODE_ONES;
    auto e8m0 = [](qc_e8m0_rule r) {
        qc_cast_policy p = qcref_default_policy();
        p.e8m0 = r;
        return p;
    };
    return {
        {"fp32->e4m3fn rn.satfinite", "__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)", "profile ptx",
         QC_E4M3FN, prof(QC_E4M3FN), run_block<cuda_e4m3_sat>, true},
        {"fp32->e5m2 rn.satfinite", "__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2)", "profile ptx",
         QC_E5M2, prof(QC_E5M2), run_block<cuda_e5m2_sat>, true},
        {"fp32->e4m3fn rn nosat", "__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3)",
         "overflow=nan nan=canonical nan-code=ones", QC_E4M3FN, nosat, run_block<cuda_e4m3_nosat>, true},
        {"fp32->e5m2 rn nosat", "__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2)",
         "overflow=nan nan=canonical nan-code=ones", QC_E5M2, nosat, run_block<cuda_e5m2_nosat>, true},
        {"fp32->e8m0 rp.satfinite", "__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf)", "profile ptx",
         QC_E8M0, prof(QC_E8M0), run_block<cuda_e8m0_rp_sat>, true},
        {"fp32->e8m0 rp.satfinite", "__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf)", "e8m0=ceil",
         QC_E8M0, e8m0(QC_E8M0_CEIL), run_block<cuda_e8m0_rp_sat>, true},
        {"fp32->e8m0 rz.satfinite", "__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero)", "e8m0=rz",
         QC_E8M0, e8m0(QC_E8M0_FLOOR_SAT), run_block<cuda_e8m0_rz_sat>, true},
        {"fp32->e8m0 rp nosat", "__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf)", "e8m0=rceil",
         QC_E8M0, e8m0(QC_E8M0_RCEIL), run_block<cuda_e8m0_rp_nosat>, false},
        {"fp32->e8m0 rz nosat", "__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero)", "e8m0=triton-down",
         QC_E8M0, e8m0(QC_E8M0_TRITON_DOWN), run_block<cuda_e8m0_rz_nosat>, false},
        {"fp32->e2m1 rn.satfinite", "__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest)", "profile ptx",
         QC_E2M1, prof(QC_E2M1), run_block<cuda_e2m1>, true},
        {"fp32->e2m3 rn.satfinite", "__nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest)", "profile ptx",
         QC_E2M3, prof(QC_E2M3), run_block<cuda_e2m3>, true},
        {"fp32->e3m2 rn.satfinite", "__nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest)", "profile ptx",
         QC_E3M2, prof(QC_E3M2), run_block<cuda_e3m2>, true},
        {"fp32->bf16 rn", "__float2bfloat16_rn(x) (host path)", "profile ptx", QC_BF16, prof(QC_BF16),
         run_block<cuda_bf16>, true},
        {"fp32->f16 rn", "__float2half_rn(x) (host path)", "profile ptx", QC_F16, prof(QC_F16),
         run_block<cuda_f16>, true},
    };
}

/* Prints one summary line (and the first mismatches); returns whether it fails the run. */
bool report(const Conversion &c, const Stats &s)
{
    bool bad = s.mismatches != 0;
    std::printf("%-5s %-26s %-52s vs qcref %-42s n=%" PRIu64 " nan_inputs=%" PRIu64 " mismatches=%" PRIu64
                " (nan-code only: %" PRIu64 ")\n",
                !bad ? (c.required ? "ok" : "INFO") : (c.required ? "FAIL" : "INFO!"), c.name, c.cuda, c.ref,
                s.n, s.nan_inputs, s.mismatches, s.nan_code_diffs);
    int w = hex_digits(c.format);
    for (const Mismatch &m : s.first)
        std::printf("      input 0x%08" PRIx32 " (%.9g): expected (CUDA) 0x%0*" PRIx32 ", got (qcref) 0x%0*" PRIx32 "\n",
                    m.in, (double)float_of(m.in), w, m.expected, w, m.got);
    return bad && c.required;
}

/* ---- decode tables: every code through CUDA's to-half / to-bf16 path, widened to fp32 ---- */

struct DecodeTable {
    const char *name, *cuda;
    qc_format format;
    unsigned ncodes;
    float (*cuda_decode)(unsigned code);
};

float dec_e4m3(unsigned c) { return cuda_half_to_float(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)c, __NV_E4M3)); }
float dec_e5m2(unsigned c) { return cuda_half_to_float(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)c, __NV_E5M2)); }
float dec_e8m0(unsigned c)
{
    __nv_bfloat16_raw r = __nv_cvt_e8m0_to_bf16raw((__nv_fp8_storage_t)c);
    return float_of((uint32_t)r.x << 16); /* bf16 -> fp32 is exact: the bits move up 16 places */
}
float dec_e2m1(unsigned c) { return cuda_half_to_float(__nv_cvt_fp4_to_halfraw((__nv_fp4_storage_t)c, __NV_E2M1)); }
float dec_e2m3(unsigned c) { return cuda_half_to_float(__nv_cvt_fp6_to_halfraw((__nv_fp6_storage_t)c, __NV_E2M3)); }
float dec_e3m2(unsigned c) { return cuda_half_to_float(__nv_cvt_fp6_to_halfraw((__nv_fp6_storage_t)c, __NV_E3M2)); }

const DecodeTable decode_tables[] = {
    {"e4m3fn->fp32", "__nv_cvt_fp8_to_halfraw(c, __NV_E4M3) -> __half2float", QC_E4M3FN, 256, dec_e4m3},
    {"e5m2->fp32", "__nv_cvt_fp8_to_halfraw(c, __NV_E5M2) -> __half2float", QC_E5M2, 256, dec_e5m2},
    {"e8m0->fp32", "__nv_cvt_e8m0_to_bf16raw(c) << 16", QC_E8M0, 256, dec_e8m0},
    {"e2m1->fp32", "__nv_cvt_fp4_to_halfraw(c, __NV_E2M1) -> __half2float", QC_E2M1, 16, dec_e2m1},
    {"e2m3->fp32", "__nv_cvt_fp6_to_halfraw(c, __NV_E2M3) -> __half2float", QC_E2M3, 64, dec_e2m3},
    {"e3m2->fp32", "__nv_cvt_fp6_to_halfraw(c, __NV_E3M2) -> __half2float", QC_E3M2, 64, dec_e3m2},
};

bool f32_is_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }

/* NaN and NaN agree whatever their payloads (a decoder's NaN is not a bit pattern anyone relies
 * on), but a differing sign is counted and printed; every other result must match bit for bit. */
bool check_decode_tables(const qc_cast_profile *ptx)
{
    bool failed = false;
    for (const DecodeTable &t : decode_tables) {
        qc_cast_policy p = qc_cast_profile_policy(ptx, t.format);
        unsigned mismatches = 0, nan_sign = 0, nans = 0;
        std::vector<std::string> lines;
        for (unsigned c = 0; c < t.ncodes; c++) {
            uint32_t e = bits_of(t.cuda_decode(c));
            uint32_t g = bits_of(qcref_decode(t.format, c, &p));
            char buf[160];
            if (f32_is_nan(e) && f32_is_nan(g)) {
                nans++;
                if ((e ^ g) >> 31) {
                    nan_sign++;
                    std::snprintf(buf, sizeof buf, "      code 0x%02x: NaN sign differs: CUDA 0x%08" PRIx32 ", qcref 0x%08" PRIx32, c, e, g);
                    lines.push_back(buf);
                }
            } else if (e != g) {
                mismatches++;
                std::snprintf(buf, sizeof buf, "      code 0x%02x: expected (CUDA) 0x%08" PRIx32 " (%.9g), got (qcref) 0x%08" PRIx32 " (%.9g)",
                              c, e, (double)float_of(e), g, (double)float_of(g));
                if (mismatches <= 10)
                    lines.push_back(buf);
            }
        }
        std::printf("%-5s %-26s %-52s vs qcref %-42s n=%u nan_codes=%u mismatches=%u nan_sign_differs=%u\n",
                    mismatches ? "FAIL" : "ok", t.name, t.cuda, "profile ptx (decoder)", t.ncodes, nans, mismatches,
                    nan_sign);
        for (const std::string &l : lines)
            std::printf("%s\n", l.c_str());
        failed |= mismatches != 0;
    }
    return failed;
}

/* ---- inputs ---- */

uint64_t splitmix64(uint64_t &state)
{
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void push_with_neighbours(std::vector<uint32_t> &v, uint32_t u)
{
    for (uint32_t s : {0u, 0x80000000u}) {
        uint32_t a = (u & 0x7FFFFFFFu) | s;
        v.push_back(a);
        if ((a & 0x7FFFFFFFu) != 0x7FFFFFFFu)
            v.push_back(a + 1); /* one fp32 ulp further from zero */
        if ((a & 0x7FFFFFFFu) != 0)
            v.push_back(a - 1); /* one ulp closer to zero */
    }
}

/* The value of every positive code of a format with an expected-side decoder, in code order. */
std::vector<double> positive_values(float (*dec)(unsigned), unsigned first, unsigned last)
{
    std::vector<double> vals;
    for (unsigned c = first; c <= last; c++)
        vals.push_back((double)dec(c));
    return vals;
}

/* Every code value, every midpoint between neighbours (exact in fp32: one more bit than the
 * format has), max + half an ulp, each with its fp32 neighbours and both signs. The grids are
 * CUDA's decodes, so nothing here depends on qcref. */
void push_grid(std::vector<uint32_t> &v, const std::vector<double> &vals)
{
    for (size_t i = 0; i < vals.size(); i++) {
        push_with_neighbours(v, bits_of((float)vals[i]));
        if (i + 1 < vals.size())
            push_with_neighbours(v, bits_of((float)((vals[i] + vals[i + 1]) / 2)));
    }
    size_t n = vals.size();
    double beyond = vals[n - 1] + (vals[n - 1] - vals[n - 2]) / 2; /* max + half ulp: the overflow tie */
    push_with_neighbours(v, bits_of((float)beyond));
    push_with_neighbours(v, bits_of((float)(vals[n - 1] * 2)));
}

float dec_f16(unsigned c)
{
    __half_raw h;
    h.x = (unsigned short)c;
    return cuda_half_to_float(h);
}

std::vector<uint32_t> quick_inputs(uint64_t seed)
{
    std::vector<uint32_t> v;
    for (uint32_t b = 0; b < 0x10000u; b++)
        v.push_back(b << 16); /* every bf16 pattern as fp32 */
    uint64_t st = seed;
    for (int i = 0; i < 1000000; i++)
        v.push_back((uint32_t)splitmix64(st));

    /* zeros, infinities, NaN payloads (quiet, signalling, all ones, lowest), subnormals, fp32 edges */
    const uint32_t specials[] = {0x00000000u, 0x7F800000u, 0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu, 0x7FA00000u,
                                 0x7FBFFFFFu, 0x7FC00001u, 0x7FE00000u, 0x7F80FFFFu, 0x7F810000u, 0x7FFF0000u,
                                 0x00000001u, 0x00000002u, 0x00000003u, 0x007FFFFFu, 0x00400000u, 0x00400001u,
                                 0x003FFFFFu, 0x00200000u, 0x00100000u, 0x00010000u, 0x00008000u, 0x00800000u,
                                 0x7F7FFFFFu, 0x7F000000u, 0x3F800000u};
    for (uint32_t s : specials)
        push_with_neighbours(v, s);
    /* e8m0: every power of two, 1.5 * 2^k (the linear tie) and their neighbours */
    for (uint32_t e = 0; e < 255; e++) {
        push_with_neighbours(v, e << 23);
        push_with_neighbours(v, (e << 23) | 0x400000u);
    }
    push_grid(v, positive_values(dec_e4m3, 0x00, 0x7E));
    push_grid(v, positive_values(dec_e5m2, 0x00, 0x7B));
    push_grid(v, positive_values(dec_e2m1, 0x0, 0x7));
    push_grid(v, positive_values(dec_e2m3, 0x00, 0x1F));
    push_grid(v, positive_values(dec_e3m2, 0x00, 0x1F));
    push_grid(v, positive_values(dec_f16, 0x0000, 0x7BFF));
    /* bf16: every midpoint is pattern | 0x8000; the top one (0x7F7F8000) is the overflow tie */
    for (uint32_t b = 0; b < 0x7F80u; b++)
        push_with_neighbours(v, (b << 16) | 0x8000u);
    return v;
}

/* ---- drivers ---- */

bool run_inputs(const std::vector<Conversion> &convs, const std::vector<uint32_t> &in)
{
    bool failed = false;
    for (const Conversion &c : convs) {
        Stats s;
        c.run(c, in.data(), in.size(), s);
        failed |= report(c, s);
    }
    return failed;
}

bool run_full(const std::vector<Conversion> &convs, unsigned nthreads)
{
    const uint64_t total = 1ull << 32;
    const uint32_t block = 1u << 16;
    std::vector<std::vector<Stats>> stats(nthreads, std::vector<Stats>(convs.size()));
    std::atomic<uint64_t> done{0};
    auto t0 = std::chrono::steady_clock::now();
    auto worker = [&](unsigned t) {
        /* thread t owns one contiguous slice, so concatenating the slices keeps input order */
        uint64_t lo = total / nthreads * t, hi = t + 1 == nthreads ? total : total / nthreads * (t + 1);
        std::vector<uint32_t> buf(block);
        for (uint64_t b = lo; b < hi; b += block) {
            uint32_t n = (uint32_t)std::min<uint64_t>(block, hi - b);
            for (uint32_t i = 0; i < n; i++)
                buf[i] = (uint32_t)(b + i);
            for (size_t k = 0; k < convs.size(); k++)
                convs[k].run(convs[k], buf.data(), n, stats[t][k]);
            uint64_t d = done.fetch_add(n) + n;
            if (t == 0 && ((b - lo) / block) % 2048 == 0) {
                double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                std::fprintf(stderr, "cuda_host_check --full: %5.1f%% of 2^32 inputs, %.0f s\n",
                             100.0 * (double)d / (double)total, el);
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < nthreads; t++)
        pool.emplace_back(worker, t);
    for (std::thread &th : pool)
        th.join();
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bool failed = false;
    for (size_t k = 0; k < convs.size(); k++) {
        Stats s;
        for (unsigned t = 0; t < nthreads; t++)
            s.merge(stats[t][k]);
        failed |= report(convs[k], s);
    }
    std::printf("full mode: %zu conversions x 2^32 inputs on %u threads in %.1f s\n", convs.size(), nthreads, el);
    return failed;
}

void run_single(const std::vector<Conversion> &convs, uint32_t in)
{
    std::printf("input 0x%08" PRIx32 " (%.9g)\n", in, (double)float_of(in));
    for (const Conversion &c : convs) {
        float x = float_of(in);
        Stats s;
        c.run(c, &in, 1, s);
        int w = hex_digits(c.format);
        uint32_t got = qcref_encode(c.format, x, &c.policy);
        std::printf("  %-26s qcref %-42s 0x%0*" PRIx32 "%s\n", c.name, c.ref, w, got,
                    s.mismatches ? "  <- differs from CUDA" : "  (= CUDA)");
        if (s.mismatches)
            std::printf("  %-26s CUDA  %-42s 0x%0*" PRIx32 "\n", "", c.cuda, w, s.first[0].expected);
    }
}

int usage()
{
    std::fprintf(stderr, "usage: cuda_host_check [--full [--threads N]] [--seed N] [--input 0xBITS ...]\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    bool full = false;
    unsigned nthreads = 2;
    uint64_t seed = 0x51C0FFEEull;
    std::vector<uint32_t> singles;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        char *end = nullptr;
        if (a == "--full") {
            full = true;
        } else if (a == "--threads" && i + 1 < argc) {
            nthreads = (unsigned)std::strtoul(argv[++i], &end, 0);
            if (*end || nthreads == 0 || nthreads > 256)
                return usage();
        } else if (a == "--seed" && i + 1 < argc) {
            seed = std::strtoull(argv[++i], &end, 0);
            if (*end)
                return usage();
        } else if (a == "--input" && i + 1 < argc) {
            unsigned long v = std::strtoul(argv[++i], &end, 16);
            if (*end || v > 0xFFFFFFFFul)
                return usage();
            singles.push_back((uint32_t)v);
        } else {
            return usage();
        }
    }

    std::vector<Conversion> convs = make_conversions();
    if (!singles.empty()) {
        for (uint32_t u : singles)
            run_single(convs, u);
        return 0;
    }

    bool failed = check_decode_tables(qc_cast_profile_find("ptx"));
    if (full) {
        failed |= run_full(convs, nthreads);
    } else {
        std::vector<uint32_t> in = quick_inputs(seed);
        std::printf("quick mode: %zu inputs (2^16 bf16 patterns, 10^6 random with seed 0x%" PRIx64
                    ", special values and grids)\n",
                    in.size(), seed);
        failed |= run_inputs(convs, in);
    }
    std::printf("%s\n", failed ? "cuda_host_check: FAILED (REPRO: cuda_host_check --input 0xBITS for any input above)"
                               : "cuda_host_check: all required conversions agree with CUDA");
    return failed ? 1 : 0;
}
