/* runtime.cu: the host side of the cuda backend: the device probe, the per-worker CUDA state and
 * the ABI slots (cuda_ops.h).
 *
 * State: the harness runs this backend in one persistent worker per device (flags
 * QCHECK_BACKEND_PERSISTENT), so the context, one non-blocking stream, a device arena and a
 * pinned host arena of the same size are created on the first call and kept; the arenas grow by
 * doubling. A call stages its inputs (memcpy into the pinned arena, one async H2D copy each),
 * runs its kernels, copies its outputs back and synchronises once. A CUDA error is reported with
 * cudaGetErrorName/cudaGetErrorString as QCHECK_FAILED and the state is torn down (with a device
 * reset), so that the next call starts from a fresh context.
 *
 * The host's libm: two e8m0 rules reproduce glibc's log2f (formats.md §2.2 "log2-ceil"); the
 * table that lets the device do so (numerics.cuh qck_libm) is measured here, in the worker, with
 * this process's log2f and exp2f, the same functions the reference calls. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_ops.h"
#include "launch.h"
#include "libm_table.h"
#include "layout_kernels.h"

/* ---------------------------------------------------------------- the probe */

/* In a child: cudaGetDeviceCount and device 0's compute capability, as one line on fd. */
static void probe_child(int fd)
{
    char line[512];
    int n = 0;
    gpuError_t e = gpuGetDeviceCount(&n);
    if (e != gpuSuccess) {
        snprintf(line, sizeof line, "no CUDA device: cudaGetDeviceCount returned %s (%s)", gpuGetErrorName(e),
                 gpuGetErrorString(e));
    } else if (n == 0) {
        snprintf(line, sizeof line, "no CUDA device: cudaGetDeviceCount found 0 devices");
    } else {
        gpuDeviceProp prop;
        e = gpuGetDeviceProperties(&prop, 0);
        if (e != gpuSuccess)
            snprintf(line, sizeof line, "CUDA device 0: cudaGetDeviceProperties returned %s (%s)", gpuGetErrorName(e),
                     gpuGetErrorString(e));
#if !defined(QCK_HIP)
        else if (prop.major < 9)
            snprintf(line, sizeof line, "CUDA device 0 (%s) is sm_%d%d: this build carries sm_90 code and compute_90 "
                     "PTX (the kernels use cvt.rn.satfinite.e4m3x2.f32, sm_89 and later)", prop.name, prop.major,
                     prop.minor);
#endif
        else
            snprintf(line, sizeof line, "OK");
    }
    ssize_t w = write(fd, line, strlen(line));
    (void)w;
}

extern "C" const char *qck_unavailable(void)
{
    static int probed;
    static char why[600];
    if (probed)
        return why[0] ? why : NULL;
    probed = 1;
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(why, sizeof why, "cannot probe for a CUDA device: pipe: %s", strerror(errno));
        return why;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, sizeof why, "cannot probe for a CUDA device: fork: %s", strerror(errno));
        close(fds[0]), close(fds[1]);
        return why;
    }
    if (pid == 0) { /* the child initialises the driver, answers and leaves without cleanup */
        close(fds[0]);
        probe_child(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    char buf[sizeof why];
    size_t got = 0;
    struct pollfd pf = {fds[0], POLLIN, 0};
    while (got + 1 < sizeof buf) {
        int r = poll(&pf, 1, 60000);
        if (r <= 0) {
            kill(pid, SIGKILL);
            snprintf(buf, sizeof buf, "no CUDA device: the probe (cudaGetDeviceCount in a child) did not answer in 60 s");
            got = strlen(buf);
            break;
        }
        ssize_t k = read(fds[0], buf + got, sizeof buf - 1 - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    buf[got] = '\0';
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!strcmp(buf, "OK"))
        return NULL;
    if (got == 0)
        snprintf(why, sizeof why, "no CUDA device: the probe child died (%s %d) before answering",
                 WIFSIGNALED(status) ? "signal" : "exit status", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    else
        snprintf(why, sizeof why, "%s", buf);
    return why;
}

int qck_plant; /* cuda_ops.h: 0 but inside a planted backend's call */

/* Element ties of a policy as the call's planted bug has them. */
static void plant_ties(qc_cast_policy *p)
{
    if (qck_plant == QCK_PLANT_TIES_AWAY && p->ties == QC_TIES_EVEN)
        p->ties = QC_TIES_AWAY;
}

/* ---------------------------------------------------------------- state */

typedef struct qck_state {
    int ready, device, sms;
    gpuStream_t stream;
    uint8_t *dev, *host; /* the arenas, cap bytes each */
    size_t cap;
    qck_libm *d_libm;
    qck_libm h_libm;
} qck_state;

static qck_state S;

static void teardown(int reset)
{
    if (S.ready) {
        if (S.dev)
            (void)gpuFree(S.dev);
        if (S.host)
            (void)gpuFreeHost(S.host);
        if (S.d_libm)
            (void)gpuFree(S.d_libm);
        if (S.stream)
            (void)gpuStreamDestroy(S.stream);
    }
    if (reset)
        (void)gpuDeviceReset();
    (void)gpuGetLastError(); /* the error is reported; clear it */
    memset(&S, 0, sizeof S);
}

static qcheck_status fail(qcheck_ctx *ctx, const char *what, gpuError_t e)
{
    qcheck_say(ctx, QCHECK_FAILED, "cuda: %s: %s (%s)", what, gpuGetErrorName(e), gpuGetErrorString(e));
    teardown(1);
    return QCHECK_FAILED;
}

#define CK(call, what)                                                                                             \
    do {                                                                                                           \
        gpuError_t e_ = (call);                                                                                    \
        if (e_ != gpuSuccess)                                                                                      \
            return fail(ctx, what, e_);                                                                            \
    } while (0)

static qcheck_status init(qcheck_ctx *ctx)
{
    if (S.ready && S.device == ctx->device)
        return QCHECK_OK;
    if (S.ready)
        teardown(0);
    CK(gpuSetDevice(ctx->device), "cudaSetDevice");
    S.device = ctx->device;
    S.ready = 1;
    CK(gpuStreamCreateWithFlags(&S.stream, gpuStreamNonBlocking), "cudaStreamCreateWithFlags");
    CK(gpuDeviceGetAttribute(&S.sms, gpuDevAttrMultiProcessorCount, ctx->device), "cudaDeviceGetAttribute");
    qck_libm_build(&S.h_libm);
    CK(gpuMalloc((void **)&S.d_libm, sizeof(qck_libm)), "cudaMalloc (libm table)");
    CK(gpuMemcpy(S.d_libm, &S.h_libm, sizeof(qck_libm), gpuMemcpyHostToDevice), "cudaMemcpy (libm table)");
    return QCHECK_OK;
}

/* Bytes of one call's arena, each part aligned to 256. */
typedef struct qck_plan {
    size_t used;
} qck_plan;

static size_t part(qck_plan *P, size_t n)
{
    size_t off = (P->used + 255) & ~(size_t)255;
    P->used = off + n;
    return off;
}

static qcheck_status reserve(qcheck_ctx *ctx, const qck_plan *P)
{
    size_t need = P->used + 256;
    if (need <= S.cap)
        return QCHECK_OK;
    size_t cap = S.cap ? S.cap : (size_t)1 << 20;
    while (cap < need)
        cap *= 2;
    if (S.dev)
        (void)gpuFree(S.dev), S.dev = NULL;
    if (S.host)
        (void)gpuFreeHost(S.host), S.host = NULL;
    S.cap = 0;
    CK(gpuMalloc((void **)&S.dev, cap), "cudaMalloc (arena)");
    CK(gpuMallocHost((void **)&S.host, cap), "cudaMallocHost (pinned arena)");
    S.cap = cap;
    return QCHECK_OK;
}

static qcheck_status put(qcheck_ctx *ctx, size_t off, const void *src, size_t n)
{
    if (!n)
        return QCHECK_OK;
    memcpy(S.host + off, src, n);
    CK(gpuMemcpyAsync(S.dev + off, S.host + off, n, gpuMemcpyHostToDevice, S.stream), "cudaMemcpyAsync (to device)");
    return QCHECK_OK;
}

static qcheck_status get(qcheck_ctx *ctx, size_t off, size_t n)
{
    if (!n)
        return QCHECK_OK;
    CK(gpuMemcpyAsync(S.host + off, S.dev + off, n, gpuMemcpyDeviceToHost, S.stream), "cudaMemcpyAsync (to host)");
    return QCHECK_OK;
}

static qcheck_status finish(qcheck_ctx *ctx)
{
    CK(gpuStreamSynchronize(S.stream), "kernel or copy (cudaStreamSynchronize)");
    return QCHECK_OK;
}

#define TRY(x)                                                                                                     \
    do {                                                                                                           \
        qcheck_status st_ = (x);                                                                                   \
        if (st_ != QCHECK_OK)                                                                                      \
            return st_;                                                                                            \
    } while (0)

#define LAUNCH(call, what) CK(call, what)

static int storage_bytes(qc_format f)
{
    return f == QC_F32 ? 4 : (f == QC_BF16 || f == QC_F16) ? 2 : 1;
}

/* ---------------------------------------------------------------- cast, decode, fp4_pack */

extern "C" qcheck_status qck_cast(const qcheck_cast_args *a, qcheck_ctx *ctx)
{
    int64_t n = qcheck_numel(&a->x);
    size_t out = (size_t)n * (size_t)storage_bytes(a->to);
    if (a->x.nbytes != (size_t)n * 4 || a->y.nbytes != out)
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "cast: x must be f32 [n] and y %d-byte codes [n] (got %zu and %zu bytes)",
                   storage_bytes(a->to), a->x.nbytes, a->y.nbytes);
    TRY(init(ctx));
    if (a->to == QC_E8M0 && qck_e8m0_uses_libm(a->policy.e8m0) && !S.h_libm.ok)
        return qcheck_say(ctx, QCHECK_DECLINED, "cast to e8m0 with rule %s: this host's log2f is not the faithful, "
                   "run-structured function the device table assumes (libm_table.h)", qc_e8m0_rule_name(a->policy.e8m0));
    qck_plan P = {0};
    size_t ox = part(&P, (size_t)n * 4), oy = part(&P, out);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, ox, a->x.data, (size_t)n * 4));
    qc_cast_policy pol = a->policy;
    plant_ties(&pol);
    LAUNCH(qck_launch_cast((const float *)(S.dev + ox), n, S.dev + oy, a->to, &pol, S.d_libm, S.sms, S.stream),
           "cast kernel launch");
    TRY(get(ctx, oy, out));
    TRY(finish(ctx));
    memcpy(a->y.data, S.host + oy, out);
    return QCHECK_OK;
}

extern "C" qcheck_status qck_decode(const qcheck_decode_args *a, qcheck_ctx *ctx)
{
    int64_t n = qcheck_numel(&a->codes);
    size_t in = (size_t)n * (size_t)storage_bytes(a->from);
    if (a->codes.nbytes != in || a->y.nbytes != (size_t)n * 4)
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "decode: codes must be %d-byte [n] and y f32 [n]", storage_bytes(a->from));
    TRY(init(ctx));
    qck_plan P = {0};
    size_t oc = part(&P, in), oy = part(&P, (size_t)n * 4);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, oc, a->codes.data, in));
    LAUNCH(qck_launch_decode(S.dev + oc, n, (float *)(S.dev + oy), a->from, &a->policy, S.sms, S.stream),
           "decode kernel launch");
    TRY(get(ctx, oy, (size_t)n * 4));
    TRY(finish(ctx));
    memcpy(a->y.data, S.host + oy, (size_t)n * 4);
    return QCHECK_OK;
}

extern "C" qcheck_status qck_fp4_pack(const qcheck_fp4_pack_args *a, qcheck_ctx *ctx)
{
    int64_t n = qcheck_numel(&a->codes);
    size_t nb = (size_t)(n + 1) / 2;
    if (a->codes.nbytes != (size_t)n || a->packed.nbytes != nb)
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "fp4_pack: codes u8 [n] -> packed u8 [ceil(n/2)]");
    TRY(init(ctx));
    qck_plan P = {0};
    size_t oc = part(&P, (size_t)n), op = part(&P, nb);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, oc, a->codes.data, (size_t)n));
    LAUNCH(qck_launch_fp4_pack(S.dev + oc, n, a->swap, S.dev + op, S.sms, S.stream), "fp4_pack kernel launch");
    TRY(get(ctx, op, nb));
    TRY(finish(ctx));
    memcpy(a->packed.data, S.host + op, nb);
    return QCHECK_OK;
}

extern "C" qcheck_status qck_fnuz_normalize(const qcheck_fnuz_normalize_args *a, qcheck_ctx *ctx)
{
    int64_t n = qcheck_numel(&a->w), ns = qcheck_numel(&a->scale);
    if (a->w.nbytes != (size_t)n || a->scale.nbytes != (size_t)ns * 4)
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "fnuz_normalize: w u8 [n], scale f32 [s]");
    TRY(init(ctx));
    qck_plan P = {0};
    size_t ow = part(&P, (size_t)n), os = part(&P, (size_t)ns * 4);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, ow, a->w.data, (size_t)n));
    TRY(put(ctx, os, a->scale.data, (size_t)ns * 4));
    LAUNCH(qck_launch_fnuz(S.dev + ow, n, (float *)(S.dev + os), ns, S.sms, S.stream), "fnuz kernel launch");
    TRY(get(ctx, ow, (size_t)n));
    TRY(get(ctx, os, (size_t)ns * 4));
    TRY(finish(ctx));
    memcpy(a->w.data, S.host + ow, (size_t)n);
    memcpy(a->scale.data, S.host + os, (size_t)ns * 4);
    return QCHECK_OK;
}

/* ---------------------------------------------------------------- layout */

/* The block-scale swizzles of docs/spec/layouts.md §1: tile 128 (sf128x4, block_scale_interleave)
 * or 8 (sf8x4); 0 for any other map. */
static int swizzle_tile(const qc_layout *L)
{
    const char *n = L->desc->name;
    if (!strcmp(n, "sf128x4") || !strcmp(n, "block_scale_interleave"))
        return 128;
    return strcmp(n, "sf8x4") ? 0 : 8;
}

/* Map m on the device: x (its source bytes) -> y (its destination bytes), or back (inverse). A
 * value the map's transform rejects (strict=1) refuses the arguments, as the reference does. */
static qcheck_status layout_run(const qck_layout_map *m, const char *name, int inverse, const void *x, void *y,
                                qcheck_ctx *ctx)
{
    size_t in = inverse ? qck_layout_dst_bytes(m) : qck_layout_src_bytes(m);
    size_t out = inverse ? qck_layout_src_bytes(m) : qck_layout_dst_bytes(m);
    unsigned long long none = ~0ull, bad;
    TRY(init(ctx));
    qck_plan P = {0};
    size_t ox = part(&P, in), oy = part(&P, out), ob = part(&P, sizeof bad);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, ox, x, in));
    TRY(put(ctx, ob, &none, sizeof none));
    if (inverse) {
        CK(gpuMemsetAsync(S.dev + oy, 0, out, S.stream), "cudaMemsetAsync (layout inverse)");
        LAUNCH(qck_launch_layout_inverse(m, S.dev + ox, S.dev + oy, S.sms, S.stream), "layout inverse kernel launch");
    } else {
        LAUNCH(qck_launch_layout(m, S.dev + ox, S.dev + oy, (unsigned long long *)(S.dev + ob), S.sms, S.stream),
               "layout kernel launch");
    }
    TRY(get(ctx, oy, out));
    TRY(get(ctx, ob, sizeof bad));
    TRY(finish(ctx));
    memcpy(&bad, S.host + ob, sizeof bad);
    if (bad != none)
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "map %s rejects source element %llu (strict=1: outside the map's "
                          "domain, docs/spec/layouts.md §3.3, §8)", name, bad);
    memcpy(y, S.host + oy, out);
    return QCHECK_OK;
}

/* The map of plan L for layout_kernels.cu, or the reason it has none (declined / failed). */
static qcheck_status layout_map_of(const qc_layout *L, qck_layout_map *m, const char *what, qcheck_ctx *ctx)
{
    char why[256];
    int rc = qck_layout_map_of(L, m, why, sizeof why);
    return rc ? qcheck_say(ctx, rc == 1 ? QCHECK_DECLINED : QCHECK_FAILED, "%s%s", what, why) : QCHECK_OK;
}

/* Every other map (layout_kernels.cu), forward. */
static qcheck_status layout_map(const qcheck_layout_args *a, qcheck_ctx *ctx)
{
    qck_layout_map m;
    TRY(layout_map_of(a->plan, &m, "", ctx));
    size_t in = qck_layout_src_bytes(&m), out = qck_layout_dst_bytes(&m);
    if (a->x.nbytes != in || a->y.nbytes != out)
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "layout %s: x %zu bytes (want %zu), y %zu bytes (want %zu)",
                          a->plan->desc->name, a->x.nbytes, in, a->y.nbytes, out);
    return layout_run(&m, a->plan->desc->name, 0, a->x.data, a->y.data, ctx);
}

extern "C" qcheck_status qck_layout(const qcheck_layout_args *a, qcheck_ctx *ctx)
{
    const qc_layout *L = a->plan;
    int tile = swizzle_tile(L), eb = L->in_bits / 8;
    if (a->inverse) /* the harness's layout op asks for the forward map only (op_layout.c) */
        return qcheck_say(ctx, QCHECK_DECLINED, "layout map %s (inverse): cuda implements the forward maps",
                          L->desc->name);
    if (!tile)
        return layout_map(a, ctx);
    if ((L->in_bits != 8 && L->in_bits != 16) || L->out_bits != L->in_bits)
        return qcheck_say(ctx, QCHECK_DECLINED, "layout map %s with %d-bit elements (cuda: the block-scale swizzles "
                   "take 1- or 2-byte elements)", L->desc->name, L->in_bits);
    size_t in = (size_t)(L->B * L->R * L->C) * (size_t)eb, out = (size_t)(L->B * L->Rg * L->Cg) * (size_t)eb;
    if (a->x.nbytes != in || a->y.nbytes != out || L->dst_elems != L->Rg * L->Cg)
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "layout %s: x %zu bytes (want %zu), y %zu bytes (want %zu)", L->desc->name,
                   a->x.nbytes, in, a->y.nbytes, out);
    TRY(init(ctx));
    qck_plan P = {0};
    size_t ox = part(&P, in), oy = part(&P, out);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, ox, a->x.data, in));
    LAUNCH(qck_launch_swizzle(S.dev + ox, S.dev + oy, L->B, L->R, L->C, L->Rg, L->Cg, tile, eb, S.sms, S.stream),
           "swizzle kernel launch");
    TRY(get(ctx, oy, out));
    TRY(finish(ctx));
    memcpy(a->y.data, S.host + oy, out);
    return QCHECK_OK;
}

/* ---------------------------------------------------------------- quant, dequant */

static int uses_libm(const qcheck_quant_spec *j)
{
    const qc_recipe_policy *p = &j->policy;
    if (j->recipe <= QC_RECIPE_BLOCK)
        return p->pow2 == QC_POW2_LOG2_CEIL || (p->pow2 == QC_POW2_E8M0 && qck_e8m0_uses_libm(p->pow2_policy.e8m0));
    return j->recipe != QC_RECIPE_NVFP4 && p->mx_rule != QC_MX_CUTEDSL && qck_e8m0_uses_libm(p->pow2_policy.e8m0);
}

/* What this backend cannot do for the job, or NULL; also fills the kernel arguments. */
static const char *quant_setup(const qcheck_quant_spec *j, qck_quant_args *k, size_t *scale_bytes)
{
    static char why[256];
    const qc_recipe_policy *p = &j->policy;
    int byte_scales = j->recipe >= QC_RECIPE_MXFP8;
    memset(k, 0, sizeof *k);
    k->recipe = j->recipe;
    k->p = *p;
    k->rows = (int64_t)j->rows, k->cols = (int64_t)j->cols;
    k->fp4 = p->elem == QC_E2M1;
    k->tg_layout = j->recipe == QC_RECIPE_TOKEN_GROUP ? j->layout : QC_SL_ROW;
    k->has_static = j->has_static, k->static_scale = j->static_scale;
    k->has_gscale = j->has_gscale, k->gscale_encode = j->gscale_encode;
    if (p->round_bf16)
        return "torch ops in bf16 on a bf16 input (bf16_ops): not implemented here";
    switch (j->recipe) {
    case QC_RECIPE_TENSOR:
        k->tile_r = k->rows, k->tile_c = k->cols, k->tiles_r = 1, k->tiles_c = 1;
        break;
    case QC_RECIPE_TOKEN:
        k->tile_r = 1, k->tile_c = k->cols ? k->cols : 1, k->tiles_r = k->rows, k->tiles_c = 1;
        break;
    case QC_RECIPE_BLOCK:
        if (p->block_r <= 0 || p->block_c <= 0)
            return "block: the tile must be positive";
        k->tile_r = p->block_r, k->tile_c = p->block_c;
        k->tiles_r = (k->rows + p->block_r - 1) / p->block_r, k->tiles_c = (k->cols + p->block_c - 1) / p->block_c;
        break;
    default: /* token_group, mx, nvfp4: 1 x group along K; a token group may end short (DeepGEMM's
              * per_token_cast_to_fp8 zero-pads it, which leaves its amax as it is: the tile kernel) */
        if (p->group <= 0 || (j->recipe != QC_RECIPE_TOKEN_GROUP && k->cols % p->group))
            return "K is not a multiple of the group";
        k->tile_r = 1, k->tile_c = p->group, k->tiles_r = k->rows, k->tiles_c = (k->cols + p->group - 1) / p->group;
        break;
    }
    int64_t m = k->tiles_r, g = k->tiles_c, m4 = (m + 3) / 4 * 4;
    if (byte_scales) {
        k->scale_kind = QCK_SC_U8;
        *scale_bytes = (size_t)(m * g);
    } else {
        k->scale_kind = QCK_SC_F32;
        *scale_bytes = k->tg_layout == QC_SL_COL_TMA        ? (size_t)(4 * g * m4)
                       : k->tg_layout == QC_SL_PACKED_UE8M0 ? (size_t)(4 * ((g + 3) / 4) * m4)
                                                            : (size_t)(4 * m * g);
    }
    if (j->has_sf_layout) {
        const qc_layout *L = &j->sf_layout;
        int tile = swizzle_tile(L);
        if (!byte_scales || !tile || L->in_bits != 8 || L->B != 1) {
            snprintf(why, sizeof why, "layout map %s on the %s scales (cuda: the block-scale swizzles on byte scales)",
                     L->desc->name, byte_scales ? "byte" : "fp32");
            return why;
        }
        if (L->R != m || L->C != g)
            return "layout planned on a scale grid of another shape";
        k->scale_kind = QCK_SC_U8_SF, k->sf_tile = tile, k->sf_cp = L->Cg;
        *scale_bytes = (size_t)(L->Rg * L->Cg);
    }
#if defined(QCK_HIP)
    if (qck_policy_needs_rcp(j->recipe, *p))
        return "this profile uses rcp.approx.ftz.f32 (fast-math division), which the HIP build has no exact "
               "equivalent of";
#endif
    return NULL;
}

enum { QUANT_WORDS = 64 }; /* the bytes of a quantization's reduction words (quant_buffers) */

/* The device buffers of one quantization: the payload, the scales, nvfp4's global scale, the
 * tile-code scratch and QUANT_WORDS bytes of reduction words. */
static void quant_buffers(qck_quant_args *k, uint8_t *q, void *scale, float *gscale, uint8_t *codes, uint8_t *words)
{
    k->q = q, k->scale = scale, k->gscale = gscale, k->codes = codes, k->L = S.d_libm;
    k->amax_bits = (unsigned int *)words, k->nan_index = (unsigned long long *)(words + 8);
    k->dev_scale = (float *)(words + 16), k->bad = (unsigned long long *)(words + 32);
}

/* The dequantization of what quantization k writes. */
static qck_dequant_args dequant_of(const qck_quant_args *k, const uint8_t *q, const void *scale, const float *gscale,
                                   float *y)
{
    qck_dequant_args d;
    memset(&d, 0, sizeof d);
    d.recipe = k->recipe, d.p = k->p, d.rows = k->rows, d.cols = k->cols, d.tile_r = k->tile_r, d.tile_c = k->tile_c;
    d.tiles_r = k->tiles_r, d.tiles_c = k->tiles_c, d.fp4 = k->fp4, d.scale_kind = k->scale_kind;
    d.tg_layout = k->tg_layout, d.sf_tile = k->sf_tile, d.sf_cp = k->sf_cp;
    d.q = q, d.scale = scale, d.gscale = gscale, d.y = y;
    return d;
}

/* quant and dequant with the scales through a layout map other than the swizzles: the scales in
 * the recipe's canonical layout (the spec without its map, as the reference serialises them:
 * harness/quant_job.c) on one side, the map on the device (layout_kernels.cu) on the other. */
static int scales_via_layout(const qcheck_quant_spec *j) { return j->has_sf_layout && !swizzle_tile(&j->sf_layout); }

/* The scales of spec in its canonical layout: the map m of its sf_layout, the spec without it
 * (plain), and a host buffer for them (*buf, *nbytes); given: the mapped scale bytes the caller has.
 * dequant also needs the map to be a plain scatter back. */
static qcheck_status canonical_scales(const qcheck_quant_spec *spec, size_t given, const char *op, qck_layout_map *m,
                                      qcheck_quant_spec *plain, void **buf, size_t *nbytes, qcheck_ctx *ctx)
{
    const char *name = spec->sf_layout.desc->name;
    char what[48];
    snprintf(what, sizeof what, "%s, on the scales: ", op);
    TRY(layout_map_of(&spec->sf_layout, m, what, ctx));
    if (!strcmp(op, "dequant") && !qck_layout_invertible(m))
        return qcheck_say(ctx, QCHECK_DECLINED, "dequant: layout map %s on the scales (cuda inverts maps that move "
                          "whole-byte elements unchanged, each to one place)", name);
    if (given != qck_layout_dst_bytes(m))
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "%s: scale %zu bytes, layout %s makes %zu", op, given, name,
                          qck_layout_dst_bytes(m));
    *plain = *spec, plain->has_sf_layout = 0;
    *nbytes = qck_layout_src_bytes(m);
    if (!(*buf = malloc(*nbytes + 1)))
        return qcheck_say(ctx, QCHECK_FAILED, "%s: out of memory for %zu bytes of scales", op, *nbytes);
    return QCHECK_OK;
}

static qcheck_status quant_via_layout(const qcheck_quant_args *a, qcheck_ctx *ctx)
{
    qcheck_quant_spec plain;
    qcheck_quant_args b = *a;
    qck_layout_map m;
    TRY(canonical_scales(a->spec, a->scale.nbytes, "quant", &m, &plain, &b.scale.data, &b.scale.nbytes, ctx));
    b.spec = &plain;
    qcheck_status st = qck_quant(&b, ctx);
    if (st == QCHECK_OK)
        st = layout_run(&m, a->spec->sf_layout.desc->name, 0, b.scale.data, a->scale.data, ctx);
    free(b.scale.data);
    return st;
}

static qcheck_status dequant_via_layout(const qcheck_dequant_args *a, qcheck_ctx *ctx)
{
    qcheck_quant_spec plain;
    qcheck_dequant_args b = *a;
    qck_layout_map m;
    void *buf;
    TRY(canonical_scales(a->spec, a->scale.nbytes, "dequant", &m, &plain, &buf, &b.scale.nbytes, ctx));
    b.spec = &plain, b.scale.data = buf;
    qcheck_status st = layout_run(&m, a->spec->sf_layout.desc->name, 1, a->scale.data, buf, ctx);
    if (st == QCHECK_OK)
        st = qck_dequant(&b, ctx);
    free(buf);
    return st;
}

extern "C" qcheck_status qck_quant(const qcheck_quant_args *a, qcheck_ctx *ctx)
{
    if (scales_via_layout(a->spec))
        return quant_via_layout(a, ctx);
    const qcheck_quant_spec *j = a->spec;
    qck_quant_args k;
    size_t sbytes;
    const char *why = quant_setup(j, &k, &sbytes);
    if (why)
        return qcheck_say(ctx, QCHECK_DECLINED, "quant %s profile %s: %s", qc_recipe_name(j->recipe), j->profile->name, why);
    int64_t n = k.rows * k.cols;
    size_t qbytes = k.fp4 ? (size_t)(n + 1) / 2 : (size_t)n, gbytes = j->recipe == QC_RECIPE_NVFP4 ? 4 : 0;
    if (a->x.nbytes != (size_t)n * 4 || a->q.nbytes != qbytes || a->scale.nbytes != sbytes || a->gscale.nbytes != gbytes)
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "quant %s: buffers x %zu, q %zu, scale %zu, gscale %zu bytes; the backend "
                   "expects %zu, %zu, %zu, %zu", qc_recipe_name(j->recipe), a->x.nbytes, a->q.nbytes, a->scale.nbytes,
                   a->gscale.nbytes, (size_t)n * 4, qbytes, sbytes, gbytes);
    TRY(init(ctx));
    if (uses_libm(j) && !S.h_libm.ok)
        return qcheck_say(ctx, QCHECK_DECLINED, "quant %s profile %s: log2f() of this host's libm cannot be tabulated "
                   "(libm_table.h)", qc_recipe_name(j->recipe), j->profile->name);
    qck_plan P = {0};
    size_t ox = part(&P, (size_t)n * 4), oq = part(&P, qbytes), os = part(&P, sbytes), og = part(&P, 4);
    size_t oc = part(&P, qck_quant_scratch_bytes(&k)), ow = part(&P, QUANT_WORDS);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, ox, a->x.data, (size_t)n * 4));
    quant_buffers(&k, S.dev + oq, S.dev + os, (float *)(S.dev + og), S.dev + oc, S.dev + ow);
    plant_ties(&k.p.cast);
    if (sbytes)
        CK(gpuMemsetAsync(k.scale, 0, sbytes, S.stream), "cudaMemsetAsync (scale padding)");
    LAUNCH(qck_launch_quant(&k, S.dev + ox, 0, S.sms, S.stream), "quant kernel launch");
    TRY(get(ctx, oq, qbytes));
    TRY(get(ctx, os, sbytes));
    TRY(get(ctx, og, gbytes));
    TRY(finish(ctx));
    memcpy(a->q.data, S.host + oq, qbytes);
    memcpy(a->scale.data, S.host + os, sbytes);
    if (gbytes)
        memcpy(a->gscale.data, S.host + og, gbytes);
    return QCHECK_OK;
}

extern "C" qcheck_status qck_dequant(const qcheck_dequant_args *a, qcheck_ctx *ctx)
{
    if (scales_via_layout(a->spec))
        return dequant_via_layout(a, ctx);
    const qcheck_quant_spec *j = a->spec;
    qck_quant_args k;
    size_t sbytes;
    const char *why = quant_setup(j, &k, &sbytes);
    if (why)
        return qcheck_say(ctx, QCHECK_DECLINED, "dequant %s profile %s: %s", qc_recipe_name(j->recipe), j->profile->name, why);
    int64_t n = k.rows * k.cols;
    size_t qbytes = k.fp4 ? (size_t)(n + 1) / 2 : (size_t)n, gbytes = j->recipe == QC_RECIPE_NVFP4 ? 4 : 0;
    if (a->q.nbytes != qbytes || a->scale.nbytes != sbytes || a->gscale.nbytes != gbytes || a->y.nbytes != (size_t)n * 4)
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "dequant %s: buffers q %zu, scale %zu, gscale %zu, y %zu bytes; the backend "
                   "expects %zu, %zu, %zu, %zu", qc_recipe_name(j->recipe), a->q.nbytes, a->scale.nbytes,
                   a->gscale.nbytes, a->y.nbytes, qbytes, sbytes, gbytes, (size_t)n * 4);
    TRY(init(ctx));
    qck_plan P = {0};
    size_t oq = part(&P, qbytes), os = part(&P, sbytes), og = part(&P, 4), oy = part(&P, (size_t)n * 4);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, oq, a->q.data, qbytes));
    TRY(put(ctx, os, a->scale.data, sbytes));
    TRY(put(ctx, og, a->gscale.data, gbytes));
    qck_dequant_args d = dequant_of(&k, S.dev + oq, S.dev + os, (const float *)(S.dev + og), (float *)(S.dev + oy));
    LAUNCH(qck_launch_dequant(&d, S.sms, S.stream), "dequant kernel launch");
    TRY(get(ctx, oy, (size_t)n * 4));
    TRY(finish(ctx));
    memcpy(a->y.data, S.host + oy, (size_t)n * 4);
    return QCHECK_OK;
}

/* ---------------------------------------------------------------- gemm */

/* Kind int8_rowwise on any device (gemm_int8.cu): bit-exact, so model exact is its only model. */
static qcheck_status gemm_int8(const qcheck_gemm_args *a, qcheck_ctx *ctx)
{
    if (a->a.form != QCHECK_FORM_INT8_ROW || a->b.form != QCHECK_FORM_INT8_ROW)
        return qcheck_say(ctx, QCHECK_DECLINED, "gemm int8_rowwise: operands not in the s8-rows form");
    if (a->out != QC_F32 && a->out != QC_BF16 && a->out != QC_F16)
        return qcheck_say(ctx, QCHECK_DECLINED, "gemm int8_rowwise: out %s (cuda: f32, bf16, f16)", qc_format_name(a->out));
    int64_t m = a->m, n = a->n, k = a->k;
    size_t cb = (size_t)(m * n) * (a->out == QC_F32 ? 4 : 2);
    if (a->a.codes.nbytes != (size_t)(m * k) || a->b.codes.nbytes != (size_t)(n * k) || a->a.scale.nbytes != (size_t)m * 4 ||
        a->b.scale.nbytes != (size_t)n * 4 || a->c.nbytes != cb || (a->bias.data && a->bias.nbytes != (size_t)n * 4))
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "gemm int8_rowwise: tensor sizes do not match m=%lld n=%lld k=%lld",
                          (long long)m, (long long)n, (long long)k);
    if (m == 0 || n == 0)
        return QCHECK_OK;
    TRY(init(ctx));
    qck_plan P = {0};
    size_t oa = part(&P, (size_t)(m * k)), ob = part(&P, (size_t)(n * k)), osa = part(&P, (size_t)m * 4);
    size_t osb = part(&P, (size_t)n * 4), obias = part(&P, (size_t)n * 4), oc = part(&P, cb);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, oa, a->a.codes.data, (size_t)(m * k)));
    TRY(put(ctx, ob, a->b.codes.data, (size_t)(n * k)));
    TRY(put(ctx, osa, a->a.scale.data, (size_t)m * 4));
    TRY(put(ctx, osb, a->b.scale.data, (size_t)n * 4));
    if (a->bias.data)
        TRY(put(ctx, obias, a->bias.data, (size_t)n * 4));
    qck_int8_problem p = {(const int8_t *)(S.dev + oa), (const int8_t *)(S.dev + ob), (const float *)(S.dev + osa),
                          (const float *)(S.dev + osb), a->bias.data ? (const float *)(S.dev + obias) : NULL,
                          S.dev + oc, m, n, k, a->out, qcref_default_policy()};
    LAUNCH(qck_launch_gemm_int8(&p, S.sms, S.stream), "int8 gemm kernel launch");
    TRY(get(ctx, oc, cb));
    TRY(finish(ctx));
    memcpy(a->c.data, S.host + oc, cb);
    return QCHECK_OK;
}

/* The gemm slot: int8_rowwise here; the bound models (exact, grouped, sgl-cpu) on CUDA cores
 * (gemm_simt.cu, any device); models sm90-wgmma[-fast] on wgmma (gemm_wgmma.cu, sm_90). */
extern "C" qcheck_status qck_gemm(const qcheck_gemm_args *a, qcheck_ctx *ctx)
{
    const char *model = a->model ? a->model : "exact";
    if (a->kind == QC_GEMM_INT8_ROWWISE)
        return gemm_int8(a, ctx);
    if (strcmp(model, "sm90-wgmma") && strcmp(model, "sm90-wgmma-fast"))
        return qck_gemm_simt(a, ctx);
#if defined(QCK_HIP)
    return qcheck_say(ctx, QCHECK_DECLINED, "gemm model %s: the tensor-core model runs on wgmma (sm_90), which the "
                      "HIP build has no equivalent of", model);
#else
    return qc_cuda_gemm(a, ctx);
#endif
}

/* ---------------------------------------------------------------- moe */
/* The HIP build has no wgmma (gemm_wgmma.cu): there moe_declines refuses the tensor-core models and
 * these two are never reached; model exact runs on CUDA cores (gemm_simt.cu) in both builds. */
static const char *wgmma_spec_declines(const qcheck_quant_spec *j, char *why, size_t n)
{
#if defined(QCK_HIP)
    (void)j;
    snprintf(why, n, "the HIP build has no wgmma");
    return why;
#else
    return qck_wgmma_spec_declines(j, why, n);
#endif
}

static gpuError_t launch_wgmma(const qck_gemm_problem *g, int a_e5m2, int b_e5m2)
{
#if defined(QCK_HIP)
    (void)g, (void)a_e5m2, (void)b_e5m2;
    return gpuErrorInvalidValue;
#else
    return qck_launch_gemm_wgmma(g, a_e5m2, b_e5m2, S.stream);
#endif
}

/* The MoE's expert GEMMs by model: exact on CUDA cores (gemm_simt.cu, the exact sum rounded once,
 * as the op's reference rounds h), sm90-wgmma[-fast] on wgmma (gemm_wgmma.cu); or -1. */
static int moe_model(const qcheck_moe_args *a)
{
    const char *model = a->model ? a->model : "exact";
    return !strcmp(model, "exact") ? 0 : !strcmp(model, "sm90-wgmma") || !strcmp(model, "sm90-wgmma-fast") ? 1 : -1;
}

/* What this backend cannot do for the MoE, or NULL. */
static const char *moe_declines(const qcheck_moe_args *a, char *why, size_t n)
{
    int tensor = a->act_recipe == QC_RECIPE_TENSOR && a->weight_recipe == QC_RECIPE_TENSOR;
    int block = a->act_recipe == QC_RECIPE_TOKEN_GROUP && a->weight_recipe == QC_RECIPE_BLOCK, wgmma = moe_model(a);
    if (wgmma < 0)
        snprintf(why, n, "moe model %s (cuda: exact on CUDA cores, sm90-wgmma[-fast] on wgmma)", a->model);
#if defined(QCK_HIP)
    else if (wgmma)
        snprintf(why, n, "moe model %s: the tensor-core models run on wgmma (sm_90), which the HIP build has no "
                 "equivalent of (model exact runs on CUDA cores)", a->model);
#endif
    else if (wgmma && !tensor && !block)
        snprintf(why, n, "moe recipe %s under model %s (wgmma: fp8_tensor and fp8_block)", a->recipe, a->model);
    else if ((a->act_recipe >= 0 && (!a->a1_spec || !a->a2_spec)) ||
             (a->weight_recipe >= 0 && (!a->w13_spec || !a->w2_spec)))
        snprintf(why, n, "moe: the harness gave no quantization specs (ABI version 3 gives them)");
    else {
        const qcheck_quant_spec *sp[4] = {a->a1_spec, a->a2_spec, a->w13_spec, a->w2_spec};
        int64_t rows = a->tokens * (a->top_k + a->shared), dim[4][2] = {{a->tokens, a->hidden}, {rows, a->inter},
                                                                         {a->r1, a->hidden}, {a->hidden, a->inter}};
        for (int i = 0; i < 4; i++) {
            qck_quant_args k;
            qck_simt_operand o;
            size_t sb;
            char what[384];
            const char *q = sp[i] ? quant_setup(sp[i], &k, &sb) : NULL; /* NULL spec: bf16 codes */
            if (q)
                snprintf(why, n, "moe: quant %s: %s", qc_recipe_name(sp[i]->recipe), q);
            else if (wgmma ? wgmma_spec_declines(sp[i], what, sizeof what) != NULL
                           : qck_simt_moe_operand(sp[i], dim[i][0], dim[i][1], &o, what, sizeof what) != NULL)
                snprintf(why, n, "moe: %s", what);
            else if (sp[i] && uses_libm(sp[i]))
                snprintf(why, n, "moe: %s scales by an e8m0 rule of log2f (not supported by the cuda moe)",
                         qc_recipe_name(sp[i]->recipe));
            else
                continue;
            return why;
        }
        return NULL;
    }
    return why;
}

/* The expert-sorted rows of the grouped GEMMs (the harness's routing, as the device wrote it): the
 * experts that got rows, each a run of 64-row tiles, its rows in order, then padding (-1). */
typedef struct moe_layout {
    int64_t used, padded;  /* experts with rows; rows of the padded layout (a multiple of 64) */
    int *slot_expert;      /* [used]: the expert of each weight slot */
    int *a_row1, *a_row2, *c_row, *tile; /* [padded]: a1's row (the token), a2's row, the output row; [padded / 64] */
} moe_layout;

static void moe_layout_free(moe_layout *L)
{
    free(L->slot_expert), free(L->a_row1), free(L->a_row2), free(L->c_row), free(L->tile);
}

/* 0, or 1 out of memory; -1 when an id is no expert of ne. */
static int moe_layout_of(const int *ids, int64_t rows, int64_t kk, int64_t ne, moe_layout *L)
{
    int64_t *count = (int64_t *)calloc((size_t)ne + 1, sizeof *count);
    memset(L, 0, sizeof *L);
    if (!count)
        return 1;
    for (int64_t r = 0; r < rows; r++) {
        if (ids[r] < 0 || ids[r] >= ne)
            return free(count), -1;
        count[ids[r]]++;
    }
    for (int64_t e = 0; e < ne; e++)
        if (count[e])
            L->used++, L->padded += (count[e] + 63) / 64 * 64;
    L->slot_expert = (int *)malloc(((size_t)L->used + 1) * sizeof(int));
    L->a_row1 = (int *)malloc(((size_t)L->padded + 1) * sizeof(int));
    L->a_row2 = (int *)malloc(((size_t)L->padded + 1) * sizeof(int));
    L->c_row = (int *)malloc(((size_t)L->padded + 1) * sizeof(int));
    L->tile = (int *)malloc(((size_t)L->padded / 64 + 1) * sizeof(int));
    if (!L->slot_expert || !L->a_row1 || !L->a_row2 || !L->c_row || !L->tile)
        return free(count), 1;
    int64_t at = 0, slot = 0;
    for (int64_t e = 0; e < ne; e++) {
        if (!count[e])
            continue;
        int64_t end = at + (count[e] + 63) / 64 * 64;
        for (int64_t t = at / 64; t < end / 64; t++)
            L->tile[t] = (int)slot;
        for (int64_t r = 0; r < rows; r++)
            if (ids[r] == e)
                L->a_row1[at] = (int)(r / kk), L->a_row2[at] = (int)r, L->c_row[at++] = (int)r;
        for (; at < end; at++)
            L->a_row1[at] = L->a_row2[at] = L->c_row[at] = -1;
        L->slot_expert[slot++] = (int)e;
    }
    free(count);
    return 0;
}

/* The used experts' quantized weights, on the device for the call: codes and scales of w13
 * (t = 0) and w2 (t = 1) per slot, quantized by the backend's own kernels from the harness's f32
 * (bf16 weights, spec NULL: cast to bf16 codes). Slot s's codes start at s code_bytes, its scales at
 * s nscales floats (16-byte aligned, byte scales too), NVFP4's global scale at gscale[t][s]. */
typedef struct moe_weights {
    uint8_t *codes[2], *scratch[2], *words;
    float *scales[2], *gscale[2], *staging, *host;
    int64_t elems[2], code_bytes[2], nscales[2];
} moe_weights;

static void moe_weights_free(moe_weights *W)
{
    for (int t = 0; t < 2; t++) {
        if (W->codes[t]) (void)gpuFree(W->codes[t]);
        if (W->scales[t]) (void)gpuFree(W->scales[t]);
        if (W->gscale[t]) (void)gpuFree(W->gscale[t]);
        if (W->scratch[t]) (void)gpuFree(W->scratch[t]);
    }
    if (W->words) (void)gpuFree(W->words);
    if (W->staging) (void)gpuFree(W->staging);
    free(W->host);
    memset(W, 0, sizeof *W);
}

/* Slot s's weight tensor t from the staging f32 into its codes and scales, on the stream. */
static qcheck_status moe_weight_codes(const qcheck_moe_args *a, moe_weights *W, qck_quant_args *k, int t, int64_t s,
                                      qcheck_ctx *ctx)
{
    const qcheck_quant_spec *sp = t ? a->w2_spec : a->w13_spec;
    uint8_t *codes = W->codes[t] + s * W->code_bytes[t];
    if (!sp) {
        qc_cast_policy bf = qcref_default_policy();
        LAUNCH(qck_launch_cast(W->staging, W->elems[t], codes, QC_BF16, &bf, S.d_libm, S.sms, S.stream),
               "cast kernel launch (bf16 expert weights)");
        return QCHECK_OK;
    }
    quant_buffers(k, codes, W->scales[t] + s * W->nscales[t], (float *)(W->words + 48), W->scratch[t], W->words);
    CK(gpuMemsetAsync(k->scale, 0, (size_t)W->nscales[t] * 4, S.stream), "cudaMemsetAsync (scales)");
    LAUNCH(qck_launch_quant(k, W->staging, 0, S.sms, S.stream), "quant kernel launch (expert weights)");
    CK(gpuMemcpyAsync(W->gscale[t] + s, W->words + 48, 4, gpuMemcpyDeviceToDevice, S.stream),
       "cudaMemcpyAsync (global scale)");
    return QCHECK_OK;
}

static qcheck_status moe_quantize_weights(const qcheck_moe_args *a, const moe_layout *L, moe_weights *W,
                                          qcheck_ctx *ctx)
{
    const qcheck_quant_spec *sp[2] = {a->w13_spec, a->w2_spec};
    int64_t dims[2][2] = {{a->r1, a->hidden}, {a->hidden, a->inter}};
    qck_quant_args k[2];
    size_t sbytes[2] = {0, 0};
    for (int t = 0; t < 2; t++) {
        if (sp[t])
            quant_setup(sp[t], &k[t], &sbytes[t]); /* moe_declines ran it: no reason */
        W->elems[t] = dims[t][0] * dims[t][1], W->code_bytes[t] = sp[t] ? W->elems[t] : 2 * W->elems[t];
        W->nscales[t] = (int64_t)(sbytes[t] + 15) / 16 * 4;
        CK(gpuMalloc((void **)&W->codes[t], (size_t)(L->used * W->code_bytes[t]) + 1), "cudaMalloc (expert weights)");
        CK(gpuMalloc((void **)&W->scales[t], (size_t)(L->used * W->nscales[t]) * 4 + 4), "cudaMalloc (expert scales)");
        CK(gpuMalloc((void **)&W->gscale[t], (size_t)L->used * 4 + 4), "cudaMalloc (expert global scales)");
        CK(gpuMalloc((void **)&W->scratch[t], (sp[t] ? qck_quant_scratch_bytes(&k[t]) : 0) + 1),
           "cudaMalloc (quant scratch)");
    }
    int64_t most = W->elems[0] > W->elems[1] ? W->elems[0] : W->elems[1];
    CK(gpuMalloc((void **)&W->words, QUANT_WORDS), "cudaMalloc (quant words)");
    CK(gpuMalloc((void **)&W->staging, (size_t)most * 4 + 4), "cudaMalloc (weight staging)");
    if (!(W->host = (float *)malloc((size_t)most * 4 + 4)))
        return qcheck_say(ctx, QCHECK_FAILED, "cuda moe: out of host memory for one expert's weights");
    for (int64_t s = 0; s < L->used; s++)
        for (int t = 0; t < 2; t++) {
            if (a->weights(a->weights_self, L->slot_expert[s], t, W->host))
                return qcheck_say(ctx, QCHECK_FAILED, "cuda moe: the harness gave no %s of expert %d (out of memory)",
                                  t ? "w2" : "w13", L->slot_expert[s]);
            CK(gpuMemcpyAsync(W->staging, W->host, (size_t)W->elems[t] * 4, gpuMemcpyHostToDevice, S.stream),
               "cudaMemcpyAsync (expert weights)");
            TRY(moe_weight_codes(a, W, &k[t], t, s, ctx));
            TRY(finish(ctx)); /* the staging buffers are the next tensor's */
        }
    return QCHECK_OK;
}

/* The per-slot rows of a per-expert tensor (b13 [ne, n] -> [used, n]) at off in the arena. */
static qcheck_status put_by_slot(qcheck_ctx *ctx, size_t off, const float *src, const moe_layout *L, int64_t n)
{
    for (int64_t s = 0; s < L->used; s++)
        TRY(put(ctx, off + (size_t)(s * n) * 4, src + (int64_t)L->slot_expert[s] * n, (size_t)n * 4));
    return QCHECK_OK;
}

/* Copies n bytes of the arena's host side at off into stage name and marks it filled. */
static void fill_stage(const qcheck_moe_args *a, const char *name, size_t off, size_t n)
{
    qcheck_stage *st = qcheck_stage_find(a->stages, a->nstages, name);
    if (st && st->t.nbytes == n) {
        if (n)
            memcpy(st->t.data, S.host + off, n);
        st->filled = 1;
    }
}

/* Model exact's expert GEMM t (0: GEMM1 of a1's rows by token with W13 and b13; 1: GEMM2 of a2's rows
 * with W2 and b2) on CUDA cores, one launch per expert slot over its run of 64-row tiles: every
 * output the exact dot + bias rounded once to fp32 (gemm_simt.cu exact_dot). x, sx, gx: the
 * activation's codes, scales and NVFP4 global scale (device); a_row, c_row: the layout's row maps
 * (device); bias NULL without biases. */
static qcheck_status moe_gemm_exact(const qcheck_moe_args *a, const moe_layout *L, const moe_weights *W, int t,
                                    const uint8_t *x, const void *sx, const float *gx, const int *a_row,
                                    const int *c_row, const float *bias, float *c, qcheck_ctx *ctx)
{
    int64_t n = t ? a->hidden : a->r1, k = t ? a->inter : a->hidden;
    int64_t xrows = t ? a->tokens * (a->top_k + a->shared) : a->tokens, tiles = L->padded / 64;
    const qcheck_quant_spec *xs = t ? a->a2_spec : a->a1_spec, *ws = t ? a->w2_spec : a->w13_spec;
    qck_simt_problem p = {};
    char why[384];
    if (qck_simt_moe_operand(xs, xrows, k, &p.a, why, sizeof why) || qck_simt_moe_operand(ws, n, k, &p.b, why, sizeof why))
        return qcheck_say(ctx, QCHECK_FAILED, "cuda moe: %s", why); /* moe_declines has taken these */
    int nv = ws && ws->recipe == QC_RECIPE_NVFP4;
    p.a.codes = x, p.a.scale = sx, p.c = c, p.n = n, p.k = k, p.kblock = k > 0 ? k : 1, p.exact = 1;
    p.out = QC_F32, p.outp = qcref_default_policy(), p.plant = qck_plant;
    p.ga = xs && xs->recipe == QC_RECIPE_NVFP4 ? gx : NULL;
    for (int64_t first = 0, end; first < tiles; first = end) {
        int slot = L->tile[first];
        for (end = first; end < tiles && L->tile[end] == slot; end++)
            ;
        p.m = (end - first) * 64, p.a_row = a_row + first * 64, p.c_row = c_row + first * 64;
        p.b.codes = W->codes[t] + slot * W->code_bytes[t], p.b.scale = W->scales[t] + slot * W->nscales[t];
        p.gb = nv ? W->gscale[t] + slot : NULL, p.bias = bias ? bias + slot * n : NULL;
        LAUNCH(qck_launch_gemm_simt(&p, S.sms, S.stream), "exact expert GEMM launch");
    }
    return QCHECK_OK;
}

/* An activation [rows, cols] at x (f32, device) into codes q (and scales, global scale, per k) or, spec
 * NULL, into bf16 codes; its dequantized f32 into y: a1 and a2. */
static qcheck_status moe_activation(const qcheck_quant_spec *spec, qck_quant_args *k, size_t sbytes, const float *x,
                                    int64_t n, uint8_t *q, uint8_t *scale, uint8_t *scratch, uint8_t *words, float *y,
                                    const char *what, qcheck_ctx *ctx)
{
    qc_cast_policy bf = qcref_default_policy();
    if (!spec) {
        LAUNCH(qck_launch_cast(x, n, q, QC_BF16, &bf, S.d_libm, S.sms, S.stream), what);
        LAUNCH(qck_launch_decode(q, n, y, QC_BF16, &bf, S.sms, S.stream), what);
        return QCHECK_OK;
    }
    quant_buffers(k, q, scale, (float *)(words + 48), scratch, words);
    CK(gpuMemsetAsync(scale, 0, sbytes, S.stream), "cudaMemsetAsync (activation scales)");
    LAUNCH(qck_launch_quant(k, x, 0, S.sms, S.stream), what);
    qck_dequant_args d = dequant_of(k, q, scale, (const float *)(words + 48), y);
    LAUNCH(qck_launch_dequant(&d, S.sms, S.stream), what);
    return QCHECK_OK;
}

/* The arena offsets of one MoE call. */
typedef struct moe_plan {
    size_t x, logits, rbias, b13, b2, ids, w, q1, s1, c1, k1, a1x, h, act, abf, q2, s2, c2, k2, a2x, y, comb, out;
    size_t a_row1, a_row2, c_row, tile;
} moe_plan;

static qcheck_status moe_run(const qcheck_moe_args *a, qcheck_ctx *ctx, moe_layout *L, moe_weights *W)
{
    int64_t t = a->tokens, hd = a->hidden, it = a->inter, e = a->experts, ne = e + a->shared;
    int64_t kk = a->top_k + a->shared, rows = t * kk, r1 = a->r1;
    int block = a->weight_recipe == QC_RECIPE_BLOCK;
    qck_quant_args q1 = {}, q2 = {};
    size_t s1 = 0, s2 = 0;
    if (a->a1_spec) /* else bf16 activations: codes of two bytes, no scales */
        quant_setup(a->a1_spec, &q1, &s1), quant_setup(a->a2_spec, &q2, &s2);
    int64_t maxpad = rows + (ne < rows ? ne : rows) * 63 + 64;
    qck_plan P = {0};
    moe_plan o;
    o.x = part(&P, (size_t)(t * hd) * 4), o.logits = part(&P, (size_t)(t * e) * 4), o.rbias = part(&P, (size_t)e * 4);
    o.b13 = part(&P, (size_t)(ne * r1) * 4), o.b2 = part(&P, (size_t)(ne * hd) * 4);
    o.ids = part(&P, (size_t)rows * 4), o.w = part(&P, (size_t)rows * 4);
    o.q1 = part(&P, (size_t)(t * hd) * 2), o.s1 = part(&P, s1), o.c1 = part(&P, qck_quant_scratch_bytes(&q1));
    o.k1 = part(&P, QUANT_WORDS), o.a1x = part(&P, (size_t)(t * hd) * 4);
    o.h = part(&P, (size_t)(rows * r1) * 4), o.act = part(&P, (size_t)(rows * it) * 4);
    o.abf = part(&P, (size_t)(rows * it) * 4), o.q2 = part(&P, (size_t)(rows * it) * 2), o.s2 = part(&P, s2);
    o.c2 = part(&P, qck_quant_scratch_bytes(&q2)), o.k2 = part(&P, QUANT_WORDS);
    o.a2x = part(&P, (size_t)(rows * it) * 4), o.y = part(&P, (size_t)(rows * hd) * 4);
    o.comb = part(&P, (size_t)(t * hd) * 4), o.out = part(&P, (size_t)(t * hd) * 2);
    o.a_row1 = part(&P, (size_t)maxpad * 4), o.a_row2 = part(&P, (size_t)maxpad * 4);
    o.c_row = part(&P, (size_t)maxpad * 4), o.tile = part(&P, (size_t)(maxpad / 64 + 1) * 4);
    TRY(reserve(ctx, &P));
    uint8_t *D = S.dev;
    TRY(put(ctx, o.x, a->x.data, (size_t)(t * hd) * 4));
    TRY(put(ctx, o.logits, a->logits.data, (size_t)(t * e) * 4));
    qc_route_cfg rc = a->route;
    rc.bias = NULL;
    if (a->route_bias.data) {
        TRY(put(ctx, o.rbias, a->route_bias.data, (size_t)e * 4));
        rc.bias = (const float *)(D + o.rbias);
    }
    /* routing and a1 on the device; the ids come back to lay out the grouped GEMMs */
    LAUNCH(qck_launch_moe_route((const float *)(D + o.logits), &rc, t, (int *)(D + o.ids), (float *)(D + o.w), S.sms,
                                S.stream), "routing kernel launch");
    TRY(moe_activation(a->a1_spec, &q1, s1, (const float *)(D + o.x), t * hd, D + o.q1, D + o.s1, D + o.c1, D + o.k1,
                       (float *)(D + o.a1x), "quant and dequant kernel launches (a1)", ctx));
    TRY(get(ctx, o.ids, (size_t)rows * 4));
    TRY(get(ctx, o.w, (size_t)rows * 4));
    TRY(finish(ctx));
    int bad = moe_layout_of((const int *)(S.host + o.ids), rows, kk, ne, L);
    if (bad)
        return qcheck_say(ctx, QCHECK_FAILED, bad < 0 ? "cuda moe: the routing kernel wrote an expert id outside [0, %lld)"
                                                      : "cuda moe: out of host memory (%lld experts)", (long long)ne);
    TRY(put(ctx, o.a_row1, L->a_row1, (size_t)L->padded * 4));
    TRY(put(ctx, o.a_row2, L->a_row2, (size_t)L->padded * 4));
    TRY(put(ctx, o.c_row, L->c_row, (size_t)L->padded * 4));
    TRY(put(ctx, o.tile, L->tile, (size_t)(L->padded / 64) * 4));
    if (a->bias) {
        TRY(put_by_slot(ctx, o.b13, (const float *)a->b13.data, L, r1));
        TRY(put_by_slot(ctx, o.b2, (const float *)a->b2.data, L, hd));
    }
    TRY(moe_quantize_weights(a, L, W, ctx));
    /* GEMM1, its epilogue and the activation, a2, GEMM2, the combine */
    qck_gemm_problem g = {};
    int exact = moe_model(a) == 0;
    const float *b13 = a->bias ? (const float *)(D + o.b13) : NULL, *b2 = a->bias ? (const float *)(D + o.b2) : NULL;
    g.kind = block ? QC_GEMM_FP8_BLOCK : QC_GEMM_FP8_TENSOR;
    g.promote = !exact && !strcmp(a->model, "sm90-wgmma-fast") ? 0 : 4;
    g.out = QC_F32, g.outp = qcref_default_policy(), g.m = L->padded, g.c_row = (const int *)(D + o.c_row);
    g.plant = qck_plant;
    g.tile_expert = (const int *)(D + o.tile);
    g.a = D + o.q1, g.sa = (const float *)(D + o.s1), g.a_row = (const int *)(D + o.a_row1), g.n = r1, g.k = hd;
    g.b = W->codes[0], g.sb = W->scales[0], g.b_stride = W->elems[0], g.sb_stride = W->nscales[0];
    g.bias = b13, g.c = D + o.h;
    int e5[4] = {0, 0, 0, 0}; /* wgmma: the FP8 recipes, every spec given */
    for (int i = 0; !exact && i < 4; i++)
        e5[i] = (i == 0 ? a->a1_spec : i == 1 ? a->w13_spec : i == 2 ? a->a2_spec : a->w2_spec)->policy.elem == QC_E5M2;
    if (exact)
        TRY(moe_gemm_exact(a, L, W, 0, D + o.q1, D + o.s1, (const float *)(D + o.k1 + 48), g.a_row, g.c_row, b13,
                           (float *)(D + o.h), ctx));
    else
        LAUNCH(launch_wgmma(&g, e5[0], e5[1]), "GEMM1 kernel launch");
    qc_cast_policy bf = qcref_default_policy();
    qc_act_cfg act = a->act;
    if (qck_plant == QCK_PLANT_GATE_UP_SWAPPED)
        act.order = act.order == QC_W13_GATE_UP ? QC_W13_UP_GATE : QC_W13_GATE_UP;
    LAUNCH(qck_launch_moe_act((float *)(D + o.h), (const float *)(D + o.w), &act, a->weight_on_input, rows, it, &bf,
                              qck_plant == QCK_PLANT_ACT_LIBM, (float *)(D + o.act), (float *)(D + o.abf), S.sms,
                              S.stream),
           "activation kernel launch");
    TRY(moe_activation(a->a2_spec, &q2, s2, (const float *)(D + o.abf), rows * it, D + o.q2, D + o.s2, D + o.c2,
                       D + o.k2, (float *)(D + o.a2x), "quant and dequant kernel launches (a2)", ctx));
    g.a = D + o.q2, g.sa = (const float *)(D + o.s2), g.a_row = (const int *)(D + o.a_row2), g.n = hd, g.k = it;
    g.b = W->codes[1], g.sb = W->scales[1], g.b_stride = W->elems[1], g.sb_stride = W->nscales[1];
    g.bias = b2, g.c = D + o.y;
    if (exact)
        TRY(moe_gemm_exact(a, L, W, 1, D + o.q2, D + o.s2, (const float *)(D + o.k2 + 48), g.a_row, g.c_row, b2,
                           (float *)(D + o.y), ctx));
    else
        LAUNCH(launch_wgmma(&g, e5[2], e5[3]), "GEMM2 kernel launch");
    LAUNCH(qck_launch_moe_combine((const float *)(D + o.y), (const float *)(D + o.w), a->weight_on_input, a->rsf_out, t,
                                  kk, hd, qck_plant == QCK_PLANT_COMBINE_REVERSED, &bf, (float *)(D + o.comb),
                                  (uint16_t *)(D + o.out), S.sms, S.stream),
           "combine kernel launch");
    size_t back[][2] = {{o.a1x, (size_t)(t * hd) * 4}, {o.h, (size_t)(rows * r1) * 4}, {o.act, (size_t)(rows * it) * 4},
                        {o.a2x, (size_t)(rows * it) * 4}, {o.y, (size_t)(rows * hd) * 4}, {o.comb, (size_t)(t * hd) * 4},
                        {o.out, (size_t)(t * hd) * 2}};
    for (size_t i = 0; i < sizeof back / sizeof back[0]; i++)
        TRY(get(ctx, back[i][0], back[i][1]));
    TRY(finish(ctx));
    memcpy(a->out.data, S.host + o.out, (size_t)(t * hd) * 2);
    const char *names[] = {"route.ids", "route.weights", "a1.x", "gemm1.h", "act.a", "a2.x", "gemm2.y", "combine.out"};
    size_t at[] = {o.ids, o.w, o.a1x, o.h, o.act, o.a2x, o.y, o.comb};
    size_t bytes[] = {(size_t)rows * 4, (size_t)rows * 4, back[0][1], back[1][1], back[2][1], back[3][1], back[4][1],
                      back[5][1]};
    for (int i = 0; i < 8; i++)
        fill_stage(a, names[i], at[i], bytes[i]);
    return QCHECK_OK;
}

extern "C" qcheck_status qck_moe(const qcheck_moe_args *a, qcheck_ctx *ctx)
{
    char why[512];
    if (moe_declines(a, why, sizeof why))
        return qcheck_say(ctx, QCHECK_DECLINED, "%s", why);
    int64_t t = a->tokens, hd = a->hidden, e = a->experts, ne = e + a->shared;
    if (a->x.nbytes != (size_t)(t * hd) * 4 || a->logits.nbytes != (size_t)(t * e) * 4 ||
        a->out.nbytes != (size_t)(t * hd) * 2 || (a->route_bias.data && a->route_bias.nbytes != (size_t)e * 4) ||
        (a->bias && (a->b13.nbytes != (size_t)(ne * a->r1) * 4 || a->b2.nbytes != (size_t)(ne * hd) * 4)))
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "cuda moe: tensor sizes do not match tokens=%lld hidden=%lld "
                          "experts=%lld", (long long)t, (long long)hd, (long long)e);
    TRY(init(ctx));
#if !defined(QCK_HIP)
    if (moe_model(a) == 1 && qck_wgmma_unsupported(ctx->device, why, sizeof why))
        return qcheck_say(ctx, QCHECK_DECLINED, "cuda moe: %s", why);
#endif
    if (t == 0) { /* no rows: every stage is empty, and computed */
        for (int i = 0; i < a->nstages; i++)
            a->stages[i].filled = 1;
        return QCHECK_OK;
    }
    moe_layout L;
    moe_weights W;
    memset(&L, 0, sizeof L), memset(&W, 0, sizeof W);
    qcheck_status st = moe_run(a, ctx, &L, &W);
    moe_layout_free(&L), moe_weights_free(&W);
    return st;
}
