/* wgmma.cuh: the one FP8 tensor-core instruction qcheck issues on sm_90a, and what it needs (PTX
 * ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): the register fragments of an
 * m64n8k32 8-bit tile and the shared-memory descriptor of its B operand. kernels/cuda/mma_probe.cu
 * checked these layouts on the H200 with exact integer tiles; bringup_mma.cu and gemm_wgmma.cu use
 * them. Include only in sources compiled for sm_90a, or in the CPU emulation (emu.h, QCK_EMU),
 * where the instruction is the model it equals on the H200 (reference/arith/mma_sm90.h, 1.3e9 dot
 * products in `qcheck bringup`): each lane gathers its two A rows from the fragments of its quad
 * (exchanged through memory between two warp-wide waits), reads B through the descriptor (there:
 * a plain pointer) and runs the model's k-step on its four outputs. So the emulation checks
 * everything of a wgmma kernel but the instruction. */
#ifndef QCK_WGMMA_CUH
#define QCK_WGMMA_CUH

#include <cstdint>
#include <cstring>

#if defined(QCK_EMU)
#include "arith/mma_sm90.h"
#include "gpu.h"
#endif

namespace qck_wgmma {

constexpr int TM = 64, TN = 8, TK = 32;

__device__ __forceinline__ uint32_t lds4(const uint8_t *p)
{
#if defined(QCK_EMU)
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
#else
    return *reinterpret_cast<const uint32_t *>(p);
#endif
}

/* A [64][32] codes in shared memory, row-major: warp w's fragment (rows 16w..16w+15, the
 * mma.m16n8k32 layout: lane g = lane / 4, q = lane % 4 holds rows g, g+8 at K 4q.. and 16+4q..). */
__device__ __forceinline__ void load_a(const uint8_t (*as)[TK], int warp, int lane, uint32_t (&a)[4])
{
    int g = lane >> 2, q = lane & 3, r = warp * 16 + g;
    a[0] = lds4(&as[r][4 * q]), a[1] = lds4(&as[r + 8][4 * q]);
    a[2] = lds4(&as[r][16 + 4 * q]), a[3] = lds4(&as[r + 8][16 + 4 * q]);
}

#if defined(QCK_EMU)

__device__ __forceinline__ uint64_t b_desc(const uint8_t (*bcore)[TN][16])
{
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(bcore));
}

/* The model's m64n8k32 on the fragments: lane 4g + q holds rows g and g + 8 of its warp's 16 at
 * K 4q.. and 16 + 4q.., and the outputs (row g, columns 2q, 2q + 1) and (row g + 8, the same). */
template <int FA, int FB> inline void mma(float (&r)[4], const uint32_t (&a)[4], uint64_t desc)
{
    const uint8_t(*bcore)[TN][16] = reinterpret_cast<const uint8_t(*)[TN][16]>(static_cast<uintptr_t>(desc));
    static uint32_t frag[32][32][4]; /* the fragments of every warp of the block (one block runs at a time) */
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
    uint8_t row[2][TK], col[2][TK];
    memcpy(frag[warp][lane], a, sizeof a);
    (void)QCK_SHFL(0u, 0, 32); /* a shuffle waits for every lane of the warp: all fragments are written */
    for (int qq = 0; qq < 4; qq++) {
        const uint32_t *v = frag[warp][4 * g + qq];
        memcpy(&row[0][4 * qq], &v[0], 4), memcpy(&row[1][4 * qq], &v[1], 4);
        memcpy(&row[0][16 + 4 * qq], &v[2], 4), memcpy(&row[1][16 + 4 * qq], &v[3], 4);
    }
    (void)QCK_SHFL(0u, 0, 32); /* and all are read before the next k-step writes them again */
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < TK; k++)
            col[c][k] = bcore[k / 16][2 * q + c][k % 16];
    for (int i = 0; i < 4; i++)
        r[i] = qcref_sm90_mma_step(row[i / 2], FA, col[i % 2], FB, TK, r[i]);
}

inline void fence() {}
inline void proxy_fence() {}
inline void commit_wait(float (&)[4]) {}

#else

/* B [8][32] as two 8x16-byte core matrices (K bytes 0-15, then 16-31), no swizzle: leading
 * byte offset 128 (the K-adjacent core matrix), stride 256 (unused for N = 8). */
__device__ __forceinline__ uint64_t b_desc(const uint8_t (*bcore)[TN][16])
{
    uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(bcore));
    return uint64_t((addr >> 4) & 0x3FFF) | uint64_t(128 >> 4) << 16 | uint64_t(256 >> 4) << 32;
}

/* r += A B^T over one k-step (r: the m64n8 accumulator fragment, rows 16w+g and +8, columns 2q,
 * 2q+1); FA, FB: 0 e4m3, 1 e5m2. The caller fences, commits and waits. */
template <int FA, int FB> __device__ __forceinline__ void mma(float (&r)[4], const uint32_t (&a)[4], uint64_t desc)
{
#define QCK_WGMMA(TA, TB)                                                                                            \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                                          \
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32." TA "." TB " {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1;\n}" \
                 : "+f"(r[0]), "+f"(r[1]), "+f"(r[2]), "+f"(r[3])                                                    \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc))
    if (FA == 0 && FB == 0) QCK_WGMMA("e4m3", "e4m3");
    else if (FA == 0) QCK_WGMMA("e4m3", "e5m2");
    else if (FB == 0) QCK_WGMMA("e5m2", "e4m3");
    else QCK_WGMMA("e5m2", "e5m2");
#undef QCK_WGMMA
}

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void commit_wait(float (&r)[4])
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" : "+f"(r[0]), "+f"(r[1]), "+f"(r[2]), "+f"(r[3])::"memory");
}

#endif

} // namespace qck_wgmma

#endif
