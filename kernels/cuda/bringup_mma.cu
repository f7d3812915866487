/* bringup_mma.cu: `qcheck bringup`'s check of Hopper's FP8 tensor core against the reference's
 * model of it (reference/arith/mma_sm90.h, docs/notes/mma_sm90.md).
 *
 * Every warpgroup makes tiles of random codes in shared memory, runs them through
 * wgmma.mma_async.m64n8k32.f32.<fa>.<fb> (A from registers, B from shared memory without swizzle,
 * as kernels/cuda/mma_probe.cu found the layouts), K/32 k-steps back to back in groups of up to
 * four (DeepGEMM's 128-deep block) with the accumulator in registers throughout, then computes the
 * same outputs with qcref_sm90_mma_step on the same codes and counts the outputs whose bits differ.
 * Nothing leaves the device but the counts and the first mismatches.
 *
 * The inputs come from a counter hash of (seed, tile, index), eight input spreads and four
 * accumulator ranges chosen per tile: every code (NaN and Inf included), every finite code,
 * exponent windows of +-1, 2, 4 and 7 binades around 1, subnormals and tiny values, values near the
 * format's maximum; c zero, moderate, tiny (fp32 subnormals), huge. A mismatch's example input is
 * tile << 9 | row << 3 | column; got and expected are fp32 bits. QCHECK_MMA_RULES runs the proof
 * against a deliberately wrong model instead, which must then differ.
 *
 * Built for sm_90a only (wgmma has no other target); qc_cuda_bringup calls it on an sm_90 device. */
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "arith/mma_sm90.h"
#include "qcheck/qcheck.h"
#include "wgmma.cuh"

namespace {

using qck_wgmma::TK;
using qck_wgmma::TM;
using qck_wgmma::TN;
constexpr int GROUP = 4;

struct Tally {
    unsigned long long mismatches;
    unsigned int n;
    unsigned int in[4], got[4], want[4];
};

__device__ __forceinline__ uint32_t mix(uint64_t x)
{
    x ^= x >> 31, x *= 0x7FB5D329728EA185ull, x ^= x >> 27, x *= 0x81DADEF4BC2DD44Dull, x ^= x >> 33;
    return (uint32_t)x;
}

/* One code of format e5m2 (else e4m3fn) under spread mode m, from 32 random bits h. */
__device__ uint8_t gen_code(uint32_t h, int e5m2, int m)
{
    int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7, top = e5m2 ? 30 : 15; /* largest finite field */
    uint32_t sign = (h >> 31) << 7, man = h & ((1u << mbits) - 1);
    int field;
    switch (m) {
    case 0: return (uint8_t)h; /* anything, NaN and Inf included */
    case 1: field = (int)((h >> 8) % (uint32_t)(top + 1)); break;
    case 2: case 3: case 4: case 5: {
        static const int spread[] = {1, 2, 4, 7};
        int s = spread[m - 2];
        field = bias - s + (int)((h >> 8) % (uint32_t)(2 * s + 1));
        break;
    }
    case 6: field = (int)((h >> 8) % 3u); break; /* zero, subnormals, the smallest normals */
    default: field = top - (int)((h >> 8) % 3u); break;
    }
    field = field < 0 ? 0 : field > top ? top : field;
    if (!e5m2 && field == 15 && man == 7) man = 6; /* 0x7F is e4m3fn's NaN */
    return (uint8_t)(sign | (uint32_t)field << mbits | man);
}

__device__ float gen_c(uint32_t h, uint32_t h2, int cm)
{
    int lo[] = {0, -12, -149, 40}, span[] = {0, 40, 30, 87};
    if (cm == 0) return 0.0f;
    int e = lo[cm] + (int)(h2 % (uint32_t)(span[cm] + 1));
    uint32_t bits = (h & 0x807FFFFFu) | (uint32_t)(e < -126 ? 0 : e + 127) << 23;
    if (e < -126) bits = (h & 0x80000000u) | ((h & 0x7FFFFFu) >> (-126 - e)); /* fp32 subnormal */
    return __uint_as_float(bits);
}

/* steps k-steps per tile, issued in groups of NST (1, 2 or 4) between waits. */
template <int FA, int FB, int NST>
__global__ void __launch_bounds__(128) proof_kernel(qc_mma_rules rules, uint64_t seed, int groups, uint32_t ntiles,
                                                    Tally *tally)
{
    __shared__ __align__(128) uint8_t bcore[NST][2][TN][16]; /* what wgmma reads (two core matrices) */
    __shared__ __align__(16) uint8_t as[NST][TM][TK];
    __shared__ __align__(16) uint8_t bs[NST][TN][TK]; /* the same B, row-contiguous, for the model */
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
    unsigned long long bad = 0;
    for (uint32_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        uint64_t key = seed ^ (uint64_t)tile << 20;
        uint32_t th = mix(key ^ 0x9E3779B97F4A7C15ull);
        int mode = (int)(th & 7), cmode = (int)(th >> 3 & 3);
        int row[4] = {warp * 16 + g, warp * 16 + g, warp * 16 + g + 8, warp * 16 + g + 8};
        int col[4] = {2 * q, 2 * q + 1, 2 * q, 2 * q + 1};
        float hw[4], model[4];
        for (int i = 0; i < 4; i++) {
            uint64_t ck = key ^ (0xC0000ull + (uint64_t)(row[i] * TN + col[i]));
            hw[i] = model[i] = gen_c(mix(ck), mix(ck * 3 + 1), cmode);
        }
        for (int grp = 0; grp < groups; grp++) {
            uint64_t gk = key ^ (uint64_t)grp << 40;
            for (int i = threadIdx.x; i < NST * TM * TK; i += 128)
                (&as[0][0][0])[i] = gen_code(mix(gk ^ (uint64_t)i), FA, mode);
            for (int i = threadIdx.x; i < NST * TN * TK; i += 128) {
                int st = i / (TN * TK), n = i / TK % TN, k = i % TK;
                uint8_t c = gen_code(mix(gk ^ (0x100000ull + (uint64_t)i)), FB, mode);
                bs[st][n][k] = c, bcore[st][k / 16][n][k % 16] = c;
            }
            qck_wgmma::proxy_fence();
            __syncthreads();
            uint32_t a[NST][4];
            for (int st = 0; st < NST; st++) qck_wgmma::load_a(as[st], warp, lane, a[st]);
            qck_wgmma::fence();
#pragma unroll
            for (int st = 0; st < NST; st++) qck_wgmma::mma<FA, FB>(hw, a[st], qck_wgmma::b_desc(bcore[st]));
            qck_wgmma::commit_wait(hw); /* all NST back to back, one wait: the accumulator never leaves the registers */
            for (int st = 0; st < NST; st++)
                for (int i = 0; i < 4; i++)
                    model[i] = qcref_mma_step_with(rules, &as[st][row[i]][0], FA, &bs[st][col[i]][0], FB, TK, model[i]);
            __syncthreads();
        }
        for (int i = 0; i < 4; i++) {
            uint32_t got = __float_as_uint(hw[i]), want = __float_as_uint(model[i]);
            if (got == want) continue;
            bad++;
            unsigned int k = atomicAdd(&tally->n, 1u);
            if (k < 4) tally->in[k] = tile << 9 | (uint32_t)(row[i] * TN + col[i]), tally->got[k] = got, tally->want[k] = want;
        }
    }
    if (bad) atomicAdd(&tally->mismatches, bad);
}

typedef void (*proof_fn)(qc_mma_rules, uint64_t, int, uint32_t, Tally *);

/* QCHECK_MMA_RULES=FRAC,SUM_BITS,NORMALISE replaces the H200's rules (13,14,0), to see the proof
 * fail under a wrong model (docs/notes/mma_sm90.md). Returns 1 when set and valid. */
int rules_from_env(qc_mma_rules *r)
{
    const char *s = getenv("QCHECK_MMA_RULES");
    int f, b, n;
    if (!s || sscanf(s, "%d,%d,%d", &f, &b, &n) != 3 || f < 1 || f > 23 || b < 1 || b > 24 || (n != 0 && n != 1))
        return 0;
    r->frac = f, r->sum_bits = b, r->normalise = n;
    return 1;
}

template <int NST> proof_fn pick(int fa, int fb)
{
    static const proof_fn f[4] = {proof_kernel<0, 0, NST>, proof_kernel<0, 1, NST>, proof_kernel<1, 0, NST>,
                                  proof_kernel<1, 1, NST>};
    return f[fa * 2 + fb];
}

struct Run {
    int k;          /* depth of the dot products */
    uint32_t tiles; /* per format pair */
};

/* >= 10^9 dot products in all: 2^19 tiles of 512 at K = 32 per format pair, and chains to K = 8192. */
const Run runs[] = {{32, 1u << 19}, {64, 1u << 16}, {128, 1u << 15}, {512, 1u << 13}, {2048, 1u << 11}, {8192, 1u << 9}};

} // namespace

extern "C" qcheck_status qc_cuda_bringup_mma(qcheck_bringup_args *a, qcheck_ctx *ctx, int sms)
{
    static const char *name[2] = {"e4m3", "e5m2"};
    Tally *t = nullptr;
    cudaError_t e = cudaMalloc(&t, sizeof *t);
    if (e != cudaSuccess) {
        snprintf(ctx->msg, ctx->msglen, "device memory for the mma proof: %s", cudaGetErrorString(e));
        return QCHECK_FAILED;
    }
    qc_mma_rules rules = qc_sm90_rules();
    int mutated = rules_from_env(&rules);
    if (!mutated && getenv("QCHECK_MMA_RULES")) {
        snprintf(ctx->msg, ctx->msglen, "QCHECK_MMA_RULES=%s: want FRAC,SUM_BITS,NORMALISE (1-23, 1-24, 0|1)",
                 getenv("QCHECK_MMA_RULES"));
        cudaFree(t);
        return QCHECK_FAILED;
    }
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0), cudaEventCreate(&t1);
    qcheck_status st = QCHECK_OK;
    for (const Run &r : runs)
        for (int p = 0; p < 4 && a->n < a->max && st == QCHECK_OK; p++) {
            int fa = p >> 1, fb = p & 1, steps = r.k / TK;
            int nst = steps >= GROUP ? GROUP : steps, groups = steps / nst;
            proof_fn fn = nst == 4 ? pick<4>(fa, fb) : nst == 2 ? pick<2>(fa, fb) : pick<1>(fa, fb);
            Tally h;
            memset(&h, 0, sizeof h);
            cudaMemcpy(t, &h, sizeof h, cudaMemcpyHostToDevice);
            uint64_t seed = 0x51C0FFEEull * (uint64_t)(r.k + p + 1);
            fn<<<1, 128>>>(rules, seed, groups, 0, t); /* loads the module outside the timed launch */
            cudaEventRecord(t0);
            fn<<<sms * 8, 128>>>(rules, seed, groups, r.tiles, t);
            cudaEventRecord(t1);
            if ((e = cudaEventSynchronize(t1)) != cudaSuccess || (e = cudaGetLastError()) != cudaSuccess ||
                (e = cudaMemcpy(&h, t, sizeof h, cudaMemcpyDeviceToHost)) != cudaSuccess) {
                snprintf(ctx->msg, ctx->msglen, "wgmma proof, K = %d: %s", r.k, cudaGetErrorString(e));
                st = QCHECK_FAILED;
                break;
            }
            float ms = 0;
            cudaEventElapsedTime(&ms, t0, t1);
            qcheck_finding *f = &a->findings[a->n++];
            memset(f, 0, sizeof *f);
            snprintf(f->what, sizeof f->what, "wgmma m64n8k32 f32.%s.%s, K = %d", name[fa], name[fb], r.k);
            if (mutated)
                snprintf(f->against, sizeof f->against,
                         "the model under QCHECK_MMA_RULES frac %d, sum_bits %d, normalise %d (not the H200's), seed 0x%llx",
                         rules.frac, rules.sum_bits, rules.normalise, (unsigned long long)seed);
            else
                snprintf(f->against, sizeof f->against,
                         "qcref_sm90_mma_step x %d (reference/arith/mma_sm90.h), random dot products, seed 0x%llx",
                         steps, (unsigned long long)seed);
            f->inputs = (uint64_t)r.tiles * TM * TN, f->mismatches = h.mismatches, f->device_ms = ms;
            f->nexamples = h.n < 4 ? (int)h.n : 4;
            for (int k = 0; k < f->nexamples; k++)
                f->example_input[k] = h.in[k], f->example_got[k] = h.got[k], f->example_expected[k] = h.want[k];
        }
    cudaEventDestroy(t0), cudaEventDestroy(t1);
    cudaFree(t);
    return st;
}
