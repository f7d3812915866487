/* rcp_probe.cu: records the GPU's `rcp.approx.ftz.f32` and proves qcheck's emulation of it.
 *
 *   rcp_probe table OUT.bin   hardware delta vs the correctly rounded 1/x for every mantissa of
 *                             [1, 2): 2^23 two-bit codes (0, 1, 2 = -1, 0, +1 ulp), four per byte,
 *                             mantissa m at byte m/4, bits 2*(m%4) (the layout of rcp_table.h)
 *   rcp_probe prove [T.bin]   compares the hardware with qcref_rcp_approx_ftz_with() on all 2^32
 *                             inputs, bit for bit; the table is T.bin or, without it, the table
 *                             compiled into libqcref (rcp_table.c)
 *   rcp_probe facts [T.bin]   the division instructions next to it (fast-math `/`, div.full) on
 *                             the constant divisors of the recipes and on random pairs, and
 *                             mul.rn.ftz near the underflow threshold, against arith.h
 * Exit: 0 proven / written, 1 a mismatch, 2 bad usage, 77 no CUDA device (CTest SKIPPED).
 * Build: nvcc -O2 -arch=sm_90 -I reference reference/arith/rcp_probe.cu [rcp_table.c] (see
 * tests/recipes.cmake and docs/notes/rcp_approx.md). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith/arith.h"

#ifndef QC_RCP_NO_EMBEDDED
extern "C" const uint8_t *qcref_rcp_table(void);
#endif

#define CHECK(call)                                                                         \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "rcp_probe: %s: %s\n", #call, cudaGetErrorString(e_));          \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

__device__ __forceinline__ float hw_rcp(float x)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ float hw_div_approx_ftz(float a, float b)
{
    float r;
    asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

__device__ __forceinline__ float hw_div_full(float a, float b)
{
    float r;
    asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

__device__ __forceinline__ float hw_mul_ftz(float a, float b)
{
    float r;
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

/* counts[0..2]: deltas -1, 0, +1; counts[3]: outside +-1; counts[4]: __frcp_rn != integer RN. */
__global__ void table_kernel(uint8_t *codes, unsigned long long *counts)
{
    uint32_t m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= QC_RCP_MANTISSAS)
        return;
    float x = __uint_as_float(0x3F800000u | m);
    uint32_t cr = qcref_rcp_rn_mantissa(m);
    int d = (int)(__float_as_uint(hw_rcp(x)) - cr);
    if (__float_as_uint(__frcp_rn(x)) != cr)
        atomicAdd(&counts[4], 1ull);
    if (d < -1 || d > 1) {
        atomicAdd(&counts[3], 1ull);
        d = 0;
    }
    atomicAdd(&counts[d + 1], 1ull);
    codes[m] = (uint8_t)(d + 1);
}

#define MAX_SHOWN 16
struct mismatches {
    unsigned long long n;
    uint32_t x[MAX_SHOWN], hw[MAX_SHOWN], em[MAX_SHOWN];
};

__global__ void prove_kernel(const uint8_t *table, uint64_t start, uint64_t count, mismatches *out)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < count; i += stride) {
        uint32_t bits = (uint32_t)(start + i);
        float x = __uint_as_float(bits);
        uint32_t hw = __float_as_uint(hw_rcp(x));
        uint32_t em = __float_as_uint(qcref_rcp_approx_ftz_with(x, table));
        if (hw != em) {
            unsigned long long k = atomicAdd(&out->n, 1ull);
            if (k < MAX_SHOWN) {
                out->x[k] = bits;
                out->hw[k] = hw;
                out->em[k] = em;
            }
        }
    }
}

/* For one divisor b over all 2^32 dividends: [0] div.approx.ftz != mul.ftz(a, rcp(b)),
 * [1] div.full != a*rcp(b) (mul.rn), [2] div.full != div.rn, [3] div.approx.ftz != div.rn. */
__global__ void div_kernel(float b, unsigned long long *c)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    unsigned long long n0 = 0, n1 = 0, n2 = 0, n3 = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < (1ull << 32); i += stride) {
        float a = __uint_as_float((uint32_t)i);
        if (a != a)
            continue; /* NaN payloads are not compared */
        uint32_t fa = __float_as_uint(hw_div_approx_ftz(a, b));
        uint32_t ff = __float_as_uint(hw_div_full(a, b));
        uint32_t rn = __float_as_uint(__fdiv_rn(a, b));
        uint32_t mr = __float_as_uint(__fmul_rn(a, hw_rcp(b)));
        n0 += fa != __float_as_uint(hw_mul_ftz(a, hw_rcp(b)));
        n1 += ff != mr;
        n2 += ff != rn;
        n3 += fa != rn;
    }
    atomicAdd(&c[0], n0), atomicAdd(&c[1], n1), atomicAdd(&c[2], n2), atomicAdd(&c[3], n3);
}


__device__ __forceinline__ uint32_t mix32(uint64_t i)
{
    uint64_t z = i * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)(z ^ (z >> 31));
}

/* 2^32 pseudo-random (a, b) pairs with both normal and |b| < 2^126 (c[0..1]) and 2^32 products
 * near the underflow threshold (c[2]): [0] div.full != mul.rn(a, emulated rcp(b)),
 * [1] div.approx.ftz != qcref_fl32_mul_ftz(a, emulated rcp(b)), [2] mul.rn.ftz != qcref_fl32_mul_ftz,
 * [3] pairs counted for [0]/[1]. */
__global__ void pairs_kernel(const uint8_t *table, unsigned long long *c)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    unsigned long long n0 = 0, n1 = 0, n2 = 0, n3 = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < (1ull << 32); i += stride) {
        uint32_t ab = mix32(2 * i), bb = mix32(2 * i + 1);
        float a = __uint_as_float(ab), b = __uint_as_float(bb);
        uint32_t ea = (ab >> 23) & 0xFF, eb = (bb >> 23) & 0xFF;
        if (ea != 0 && ea != 255 && eb != 0 && eb < 253) {
            float r = qcref_rcp_approx_ftz_with(b, table);
            n0 += __float_as_uint(hw_div_full(a, b)) != __float_as_uint(qcref_fl32_mul(a, r));
            n1 += __float_as_uint(hw_div_approx_ftz(a, b)) != __float_as_uint(qcref_fl32_mul_ftz(a, r));
            n3++;
        }
        /* products around 2^-126: a in [1, 2), b = bits of 2^-126 / a moved by a few ulps */
        float a1 = __uint_as_float(0x3F800000u | (ab & 0x7FFFFFu));
        float b1 = __uint_as_float(__float_as_uint(__fdiv_rn(__uint_as_float(0x00800000u), a1)) + (bb & 15u) - 8u);
        b1 = (bb >> 31) ? -b1 : b1;
        n2 += __float_as_uint(hw_mul_ftz(a1, b1)) != __float_as_uint(qcref_fl32_mul_ftz(a1, b1));
    }
    atomicAdd(&c[0], n0), atomicAdd(&c[1], n1), atomicAdd(&c[2], n2), atomicAdd(&c[3], n3);
}

static int have_device(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("SKIPPED: no CUDA device\n");
        return 0;
    }
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s (sm_%d%d)\n", p.name, p.major, p.minor);
    return 1;
}

static int cmd_table(const char *path)
{
    uint8_t *d_codes;
    unsigned long long *d_counts, counts[5] = {0};
    CHECK(cudaMalloc(&d_codes, QC_RCP_MANTISSAS));
    CHECK(cudaMalloc(&d_counts, sizeof counts));
    CHECK(cudaMemset(d_counts, 0, sizeof counts));
    table_kernel<<<QC_RCP_MANTISSAS / 256, 256>>>(d_codes, d_counts);
    CHECK(cudaDeviceSynchronize());
    uint8_t *codes = (uint8_t *)malloc(QC_RCP_MANTISSAS), *packed = (uint8_t *)calloc(QC_RCP_TABLE_BYTES, 1);
    CHECK(cudaMemcpy(codes, d_codes, QC_RCP_MANTISSAS, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost));
    for (uint32_t m = 0; m < QC_RCP_MANTISSAS; m++)
        packed[m >> 2] |= (uint8_t)(codes[m] << (2 * (m & 3u)));
    printf("table: mantissas of [1,2): delta -1: %llu, 0: %llu, +1: %llu, outside +-1: %llu; "
           "__frcp_rn != integer RNE: %llu\n",
           counts[0], counts[1], counts[2], counts[3], counts[4]);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(packed, 1, QC_RCP_TABLE_BYTES, f) != QC_RCP_TABLE_BYTES || fclose(f)) {
        fprintf(stderr, "rcp_probe: cannot write %s\n", path);
        return 2;
    }
    printf("table: wrote %s (%u bytes)\n", path, QC_RCP_TABLE_BYTES);
    return counts[3] || counts[4] ? 1 : 0;
}

static int load_table(const char *path, uint8_t *host)
{
    if (!path) {
#ifndef QC_RCP_NO_EMBEDDED
        memcpy(host, qcref_rcp_table(), QC_RCP_TABLE_BYTES);
        printf("prove: table compiled into libqcref (rcp_table.c)\n");
        return 0;
#else
        fprintf(stderr, "rcp_probe: built without the embedded table; give a table file\n");
        return 2;
#endif
    }
    FILE *f = fopen(path, "rb");
    if (!f || fread(host, 1, QC_RCP_TABLE_BYTES, f) != QC_RCP_TABLE_BYTES) {
        fprintf(stderr, "rcp_probe: cannot read %u bytes from %s\n", QC_RCP_TABLE_BYTES, path);
        return 2;
    }
    fclose(f);
    printf("prove: table file %s\n", path);
    return 0;
}

static int cmd_prove(const char *path)
{
    uint8_t *host = (uint8_t *)malloc(QC_RCP_TABLE_BYTES), *d_table;
    if (load_table(path, host))
        return 2;
    mismatches *d_mm, mm;
    CHECK(cudaMalloc(&d_table, QC_RCP_TABLE_BYTES));
    CHECK(cudaMemcpy(d_table, host, QC_RCP_TABLE_BYTES, cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&d_mm, sizeof mm));
    CHECK(cudaMemset(d_mm, 0, sizeof mm));
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    CHECK(cudaEventRecord(t0));
    for (uint64_t start = 0; start < (1ull << 32); start += 1ull << 30)
        prove_kernel<<<132 * 16, 256>>>(d_table, start, 1ull << 30, d_mm);
    CHECK(cudaEventRecord(t1));
    CHECK(cudaDeviceSynchronize());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    CHECK(cudaMemcpy(&mm, d_mm, sizeof mm, cudaMemcpyDeviceToHost));
    printf("prove: all 4294967296 fp32 inputs, rcp.approx.ftz.f32 vs qcref_rcp_approx_ftz_with: "
           "%llu mismatches (%.0f ms)\n", mm.n, ms);
    for (unsigned long long k = 0; k < mm.n && k < MAX_SHOWN; k++)
        printf("  x=0x%08X hw=0x%08X emulated=0x%08X\n", mm.x[k], mm.hw[k], mm.em[k]);
    return mm.n ? 1 : 0;
}

static int cmd_facts(const char *path)
{
    static const float divisors[] = {448.0f, 240.0f, 224.0f, 6.0f, 2688.0f};
    unsigned long long *d_c, c[4];
    CHECK(cudaMalloc(&d_c, sizeof c));
    for (size_t i = 0; i < sizeof divisors / sizeof divisors[0]; i++) {
        CHECK(cudaMemset(d_c, 0, sizeof c));
        div_kernel<<<132 * 16, 256>>>(divisors[i], d_c);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(c, d_c, sizeof c, cudaMemcpyDeviceToHost));
        printf("facts: divisor %g over all non-NaN dividends: div.approx.ftz != mul.ftz(a,rcp(b)): %llu; "
               "div.full != mul.rn(a,rcp(b)): %llu; div.full != div.rn: %llu; div.approx.ftz != div.rn: %llu\n",
               divisors[i], c[0], c[1], c[2], c[3]);
    }
    uint8_t *host = (uint8_t *)malloc(QC_RCP_TABLE_BYTES), *d_table;
    if (load_table(path, host))
        return 2;
    CHECK(cudaMalloc(&d_table, QC_RCP_TABLE_BYTES));
    CHECK(cudaMemcpy(d_table, host, QC_RCP_TABLE_BYTES, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_c, 0, sizeof c));
    pairs_kernel<<<132 * 16, 256>>>(d_table, d_c);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(c, d_c, sizeof c, cudaMemcpyDeviceToHost));
    printf("facts: %llu random normal pairs (|b| < 2^126): div.full != mul.rn(a, emulated rcp(b)): %llu; "
           "div.approx.ftz != mul.ftz(a, emulated rcp(b)): %llu\n", c[3], c[0], c[1]);
    printf("facts: 4294967296 products near 2^-126: mul.rn.ftz != qcref_fl32_mul_ftz: %llu\n", c[2]);
    return c[0] || c[1] || c[2] ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "table") && strcmp(argv[1], "prove") && strcmp(argv[1], "facts")) ||
        (strcmp(argv[1], "table") == 0 && argc != 3)) {
        fprintf(stderr, "usage: rcp_probe table OUT.bin | prove [TABLE.bin] | facts [TABLE.bin]\n");
        return 2;
    }
    if (!have_device())
        return 77;
    if (strcmp(argv[1], "table") == 0)
        return cmd_table(argv[2]);
    if (strcmp(argv[1], "prove") == 0)
        return cmd_prove(argc > 2 ? argv[2] : NULL);
    return cmd_facts(argc > 2 ? argv[2] : NULL);
}
