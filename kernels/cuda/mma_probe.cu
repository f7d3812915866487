/* mma_probe.cu: runs FP8 tiles through Hopper's two FP8 tensor-core instructions and writes what
 * they return, so that reference/arith's model of the accumulation can be fitted and then checked
 * against the hardware (docs/notes/mma_sm90.md).
 *
 *   mma_probe TILES OUT
 *
 * TILES holds n tiles (tools/mma/tiles.py writes them): per tile the element formats of A and B,
 * A [64][32] codes (row-major, K contiguous), B [8][32] codes (one row per output column, K
 * contiguous: the "col" operand), C [64][8] fp32. For each tile OUT receives D = A B^T + C from
 *   1. mma.sync.aligned.m16n8k32.row.col.f32.<fa>.<fb>.f32, once per 16-row slice (sm_89+), and
 *   2. wgmma.mma_async.sync.aligned.m64n8k32.f32.<fa>.<fb>, A in registers, B in shared memory
 *      without swizzle (sm_90a),
 * as two [64][8] fp32 arrays. Before the tiles, both instructions are checked on integer tiles
 * whose every sum is exact in fp32 (the fragment layouts and the shared-memory descriptor are
 * right only if all of them match the exact products); the program exits nonzero otherwise. */
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int TM = 64, TN = 8, TK = 32;

struct Tile {
    uint8_t fa, fb, pad[2];
    uint8_t a[TM * TK];
    uint8_t b[TN * TK];
    float c[TM * TN];
};

#define CK(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            std::fprintf(stderr, "mma_probe: %s: %s\n", #x, cudaGetErrorString(e_));       \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

__device__ uint32_t load4(const uint8_t *p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

/* The fragment of an m16n8k32 8-bit operand held by lane (g = lane / 4, q = lane % 4), PTX ISA
 * "Matrix Fragments for mma.m16n8k32": A a0..a3 = rows g, g+8, g, g+8 at K 4q.., 4q.., 16+4q..,
 * 16+4q..; B b0, b1 = column g at K 4q.. and 16+4q..; D d0..d3 = (g, 2q), (g, 2q+1), (g+8, 2q),
 * (g+8, 2q+1). wgmma's register A and its m64n8 D repeat these per warp (rows 16w..16w+15). */
struct Frag {
    uint32_t a[4], b[2];
};

__device__ Frag load_frag(const Tile &t, int row0, int lane) {
    int g = lane >> 2, q = lane & 3;
    Frag f;
    f.a[0] = load4(&t.a[(row0 + g) * TK + 4 * q]);
    f.a[1] = load4(&t.a[(row0 + g + 8) * TK + 4 * q]);
    f.a[2] = load4(&t.a[(row0 + g) * TK + 16 + 4 * q]);
    f.a[3] = load4(&t.a[(row0 + g + 8) * TK + 16 + 4 * q]);
    f.b[0] = load4(&t.b[g * TK + 4 * q]);
    f.b[1] = load4(&t.b[g * TK + 16 + 4 * q]);
    return f;
}

__device__ void store_d(float *d, int row0, int lane, const float (&r)[4]) {
    int g = lane >> 2, q = lane & 3;
    d[(row0 + g) * TN + 2 * q] = r[0];
    d[(row0 + g) * TN + 2 * q + 1] = r[1];
    d[(row0 + g + 8) * TN + 2 * q] = r[2];
    d[(row0 + g + 8) * TN + 2 * q + 1] = r[3];
}

__device__ void load_c(const Tile &t, int row0, int lane, float (&r)[4]) {
    int g = lane >> 2, q = lane & 3;
    r[0] = t.c[(row0 + g) * TN + 2 * q];
    r[1] = t.c[(row0 + g) * TN + 2 * q + 1];
    r[2] = t.c[(row0 + g + 8) * TN + 2 * q];
    r[3] = t.c[(row0 + g + 8) * TN + 2 * q + 1];
}

#define MMA_SYNC(FA, FB)                                                                           \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." FA "." FB ".f32 {%0,%1,%2,%3}, "         \
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                                          \
                 : "+f"(r[0]), "+f"(r[1]), "+f"(r[2]), "+f"(r[3])                                  \
                 : "r"(f.a[0]), "r"(f.a[1]), "r"(f.a[2]), "r"(f.a[3]), "r"(f.b[0]), "r"(f.b[1]))

/* One warp per (tile, 16-row slice). */
__global__ void probe_mma_sync(const Tile *tiles, int n, float *out) {
    int w = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
    if (w >= n * 4) return;
    const Tile &t = tiles[w / 4];
    int row0 = (w % 4) * 16;
    Frag f = load_frag(t, row0, lane);
    float r[4];
    load_c(t, row0, lane, r);
    switch (t.fa * 2 + t.fb) {
    case 0: MMA_SYNC("e4m3", "e4m3"); break;
    case 1: MMA_SYNC("e4m3", "e5m2"); break;
    case 2: MMA_SYNC("e5m2", "e4m3"); break;
    default: MMA_SYNC("e5m2", "e5m2"); break;
    }
    store_d(out + size_t(w / 4) * TM * TN, row0, lane, r);
}

/* The sm_90 shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format"): start address,
 * leading- and stride-dimension byte offsets, all >> 4; swizzle mode 0 (none). B is 8 rows x 32
 * bytes, stored as two 8x16-byte core matrices (K bytes 0-15, then 16-31), each row-contiguous. */
__device__ uint64_t smem_desc(const void *p, uint32_t lbo, uint32_t sbo) {
    uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
    return uint64_t((addr >> 4) & 0x3FFF) | uint64_t((lbo >> 4) & 0x3FFF) << 16 |
           uint64_t((sbo >> 4) & 0x3FFF) << 32;
}

#define WGMMA(FA, FB)                                                                              \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                         \
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32." FA "." FB                            \
                 " {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, p, 1, 1;\n}"                                 \
                 : "+f"(r[0]), "+f"(r[1]), "+f"(r[2]), "+f"(r[3])                                  \
                 : "r"(f.a[0]), "r"(f.a[1]), "r"(f.a[2]), "r"(f.a[3]), "l"(desc))

/* One warpgroup (128 threads) per tile. variant picks which of the two core-matrix offsets is the
 * leading one: the integer check finds out which the hardware takes (on the H200, variant 0:
 * LBO = 128, the K-adjacent core matrix; the other faults, its offset leaving the array). */
__global__ void probe_wgmma(const Tile *tiles, int n, float *out, int variant) {
    __shared__ __align__(128) uint8_t bs[2][TN][16];
    int tile = blockIdx.x, lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    if (tile >= n) return;
    const Tile &t = tiles[tile];
    for (int i = threadIdx.x; i < TN * TK; i += blockDim.x) {
        int row = i / TK, k = i % TK;
        bs[k / 16][row][k % 16] = t.b[i];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    Frag f = load_frag(t, warp * 16, lane);
    float r[4];
    load_c(t, warp * 16, lane, r);
    uint64_t desc = variant == 0 ? smem_desc(bs, 128, 256) : smem_desc(bs, 256, 128);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    switch (t.fa * 2 + t.fb) {
    case 0: WGMMA("e4m3", "e4m3"); break;
    case 1: WGMMA("e4m3", "e5m2"); break;
    case 2: WGMMA("e5m2", "e4m3"); break;
    default: WGMMA("e5m2", "e5m2"); break;
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" : "+f"(r[0]), "+f"(r[1]), "+f"(r[2]), "+f"(r[3])::"memory");
    store_d(out + size_t(tile) * TM * TN, warp * 16, lane, r);
}

/* e4m3fn / e5m2 codes of small integers, for the exact check. */
uint8_t code_of_int(int v, int fmt) {
    static const uint8_t e4m3[] = {0x00, 0x38, 0x40, 0x44, 0x48}; /* 0, 1, 2, 3, 4 */
    static const uint8_t e5m2[] = {0x00, 0x3C, 0x40, 0x42, 0x44};
    uint8_t c = fmt ? e5m2[v < 0 ? -v : v] : e4m3[v < 0 ? -v : v];
    return v < 0 ? uint8_t(c | 0x80) : c;
}

struct Runner {
    Tile *dt = nullptr;
    float *dout = nullptr;
    int cap = 0;

    void run(const std::vector<Tile> &tiles, std::vector<float> &sync_out, std::vector<float> &wg_out,
             int variant) {
        int n = int(tiles.size());
        if (n > cap) {
            cudaFree(dt);
            cudaFree(dout);
            CK(cudaMalloc(&dt, sizeof(Tile) * n));
            CK(cudaMalloc(&dout, sizeof(float) * TM * TN * n));
            cap = n;
        }
        CK(cudaMemcpy(dt, tiles.data(), sizeof(Tile) * n, cudaMemcpyHostToDevice));
        sync_out.assign(size_t(n) * TM * TN, 0.f);
        wg_out.assign(size_t(n) * TM * TN, 0.f);
        probe_mma_sync<<<(n * 4 + 3) / 4, 128>>>(dt, n, dout);
        CK(cudaGetLastError());
        CK(cudaMemcpy(sync_out.data(), dout, sizeof(float) * TM * TN * n, cudaMemcpyDeviceToHost));
        probe_wgmma<<<n, 128>>>(dt, n, dout, variant);
        CK(cudaGetLastError());
        CK(cudaMemcpy(wg_out.data(), dout, sizeof(float) * TM * TN * n, cudaMemcpyDeviceToHost));
    }
};

/* Integer tiles: |a|, |b| <= 4 and |c| <= 1024, so every sum is an integer below 2^11: exact in
 * any accumulator the hardware may use, whatever the order. */
int check_layouts(Runner &rn) {
    std::vector<Tile> tiles(16);
    uint32_t s = 12345;
    auto rnd = [&]() { s ^= s << 13, s ^= s >> 17, s ^= s << 5; return s; };
    for (size_t i = 0; i < tiles.size(); ++i) {
        Tile &t = tiles[i];
        std::memset(&t, 0, sizeof t);
        t.fa = uint8_t(i & 1), t.fb = uint8_t((i >> 1) & 1);
        for (auto &x : t.a) x = code_of_int(int(rnd() % 9) - 4, t.fa);
        for (auto &x : t.b) x = code_of_int(int(rnd() % 9) - 4, t.fb);
        for (auto &x : t.c) x = float(int(rnd() % 2049) - 1024);
    }
    auto ival = [](uint8_t c, int fmt) {
        for (int v = -4; v <= 4; ++v)
            if (code_of_int(v, fmt) == c) return v;
        return 0;
    };
    int good_variant = -1;
    for (int variant = 0; variant < 2; ++variant) {
        std::vector<float> so, wo;
        rn.run(tiles, so, wo, variant);
        long bad_sync = 0, bad_wg = 0;
        for (size_t ti = 0; ti < tiles.size(); ++ti)
            for (int m = 0; m < TM; ++m)
                for (int n = 0; n < TN; ++n) {
                    const Tile &t = tiles[ti];
                    double want = t.c[m * TN + n];
                    for (int k = 0; k < TK; ++k)
                        want += ival(t.a[m * TK + k], t.fa) * ival(t.b[n * TK + k], t.fb);
                    size_t o = ti * TM * TN + m * TN + n;
                    bad_sync += so[o] != float(want);
                    bad_wg += wo[o] != float(want);
                }
        std::printf("layout check, descriptor variant %d: mma.sync %ld of %zu wrong, wgmma %ld wrong\n",
                    variant, bad_sync, tiles.size() * TM * TN, bad_wg);
        if (bad_sync) return -1;
        if (!bad_wg) {
            good_variant = variant;
            break;
        }
    }
    return good_variant;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: mma_probe TILES OUT\n");
        return 2;
    }
    FILE *in = std::fopen(argv[1], "rb");
    if (!in) {
        std::perror(argv[1]);
        return 1;
    }
    char magic[4];
    uint32_t n = 0;
    if (std::fread(magic, 1, 4, in) != 4 || std::memcmp(magic, "QCMT", 4) || std::fread(&n, 4, 1, in) != 1 ||
        n == 0 || n > (1u << 22)) {
        std::fprintf(stderr, "mma_probe: %s: not a tile file (magic QCMT, 0 < n <= 2^22)\n", argv[1]);
        return 1;
    }
    std::vector<Tile> tiles(n);
    if (std::fread(tiles.data(), sizeof(Tile), n, in) != n) {
        std::fprintf(stderr, "mma_probe: %s: truncated (%u tiles announced)\n", argv[1], n);
        return 1;
    }
    std::fclose(in);
    for (uint32_t i = 0; i < n; ++i)
        if (tiles[i].fa > 1 || tiles[i].fb > 1) {
            std::fprintf(stderr, "mma_probe: tile %u: format codes %d, %d (0 e4m3, 1 e5m2)\n", i, tiles[i].fa,
                         tiles[i].fb);
            return 1;
        }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int drv = 0;
    CK(cudaDriverGetVersion(&drv));
    std::printf("device %s sm_%d%d, driver %d, runtime %d\n", prop.name, prop.major, prop.minor, drv, CUDART_VERSION);
    Runner rn;
    int variant = check_layouts(rn);
    if (variant < 0) {
        std::fprintf(stderr, "mma_probe: the integer check failed: fragment or descriptor layout is wrong\n");
        return 1;
    }
    std::vector<float> so, wo;
    rn.run(tiles, so, wo, variant);
    FILE *out = std::fopen(argv[2], "wb");
    if (!out) {
        std::perror(argv[2]);
        return 1;
    }
    std::fwrite("QCMD", 1, 4, out);
    std::fwrite(&n, 4, 1, out);
    for (uint32_t i = 0; i < n; ++i) {
        std::fwrite(&so[size_t(i) * TM * TN], sizeof(float), TM * TN, out);
        std::fwrite(&wo[size_t(i) * TM * TN], sizeof(float), TM * TN, out);
    }
    std::fclose(out);
    long differ = 0;
    for (size_t i = 0; i < so.size(); ++i) differ += std::memcmp(&so[i], &wo[i], 4) != 0;
    std::printf("%u tiles, %zu dot products; mma.sync and wgmma differ on %ld\n", n, so.size(), differ);
    return 0;
}
