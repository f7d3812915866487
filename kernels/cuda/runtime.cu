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
    if (qck_ocp_rule(a->to == QC_E8M0 ? a->policy.e8m0 : QC_E8M0_RNE, a->policy.zero_sign))
        return qcheck_say(ctx, QCHECK_DECLINED, "cast with e8m0 rule log2-floor or zero sign exact-positive: not implemented here");
    if (a->to == QC_E8M0 && (a->policy.e8m0 == QC_E8M0_LOG2_CEIL || a->policy.e8m0 == QC_E8M0_TORCHAO_RCEIL ||
                             a->policy.e8m0 == QC_E8M0_MODELOPT || a->policy.e8m0 == QC_E8M0_MODELOPT_CPU) &&
        !S.h_libm.ok)
        return qcheck_say(ctx, QCHECK_DECLINED, "cast to e8m0 with rule log2-ceil: this host's log2f is not the faithful, "
                   "run-structured function the device table assumes (libm_table.h)");
    qck_plan P = {0};
    size_t ox = part(&P, (size_t)n * 4), oy = part(&P, out);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, ox, a->x.data, (size_t)n * 4));
    LAUNCH(qck_launch_cast((const float *)(S.dev + ox), n, S.dev + oy, a->to, &a->policy, S.d_libm, S.sms, S.stream),
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

extern "C" qcheck_status qck_layout(const qcheck_layout_args *a, qcheck_ctx *ctx)
{
    const qc_layout *L = a->plan;
    int tile = swizzle_tile(L), eb = L->in_bits / 8;
    if (!tile || a->inverse || (L->in_bits != 8 && L->in_bits != 16) || L->out_bits != L->in_bits)
        return qcheck_say(ctx, QCHECK_DECLINED, "layout map %s%s with %d-bit elements (cuda: the block-scale swizzles "
                   "sf128x4, sf8x4 and block_scale_interleave of 1- or 2-byte elements, forward)", L->desc->name,
                   a->inverse ? " (inverse)" : "", L->in_bits);
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

static int uses_log2_ceil(const qcheck_quant_spec *j)
{
    const qc_recipe_policy *p = &j->policy;
    if (j->recipe <= QC_RECIPE_BLOCK)
        return p->pow2 == QC_POW2_LOG2_CEIL || (p->pow2 == QC_POW2_E8M0 && p->pow2_policy.e8m0 == QC_E8M0_LOG2_CEIL);
    return j->recipe != QC_RECIPE_NVFP4 && p->mx_rule != QC_MX_CUTEDSL &&
           (p->pow2_policy.e8m0 == QC_E8M0_LOG2_CEIL || p->pow2_policy.e8m0 == QC_E8M0_TORCHAO_RCEIL ||
            p->pow2_policy.e8m0 == QC_E8M0_MODELOPT || p->pow2_policy.e8m0 == QC_E8M0_MODELOPT_CPU);
}

/* What this backend cannot do for the job, or NULL; also fills the kernel arguments. */
static const char *quant_setup(const qcheck_quant_spec *j, qck_quant_args *k, size_t *scale_bytes)
{
    static char why[256];
    const qc_recipe_policy *p = &j->policy;
    int byte_scales = j->recipe >= QC_RECIPE_MXFP8;
    memset(k, 0, sizeof *k);
    if (j->recipe == QC_RECIPE_TOKEN_GROUP && p->group > 0 && j->cols % (size_t)p->group)
        return "a token group shorter than the group size (K % group != 0)";
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
    default: /* token_group, mx, nvfp4: 1 x group along K */
        if (p->group <= 0 || k->cols % p->group)
            return "K is not a multiple of the group";
        k->tile_r = 1, k->tile_c = p->group, k->tiles_r = k->rows, k->tiles_c = k->cols / p->group;
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

extern "C" qcheck_status qck_quant(const qcheck_quant_args *a, qcheck_ctx *ctx)
{
    const qcheck_quant_spec *j = a->spec;
    qck_quant_args k;
    size_t sbytes;
    const char *why = quant_setup(j, &k, &sbytes);
    if (!why && qck_ocp_rule(j->policy.pow2_policy.e8m0, j->policy.cast.zero_sign)) /* quant only: dequant has no such rule */
        why = "microxcaling's floor(log2f()) shared exponent and exact-zero sign (profile ocp): not implemented here";
    if (why)
        return qcheck_say(ctx, QCHECK_DECLINED, "quant %s profile %s: %s", qc_recipe_name(j->recipe), j->profile->name, why);
    int64_t n = k.rows * k.cols;
    size_t qbytes = k.fp4 ? (size_t)(n + 1) / 2 : (size_t)n, gbytes = j->recipe == QC_RECIPE_NVFP4 ? 4 : 0;
    if (a->x.nbytes != (size_t)n * 4 || a->q.nbytes != qbytes || a->scale.nbytes != sbytes || a->gscale.nbytes != gbytes)
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "quant %s: buffers x %zu, q %zu, scale %zu, gscale %zu bytes; the backend "
                   "expects %zu, %zu, %zu, %zu", qc_recipe_name(j->recipe), a->x.nbytes, a->q.nbytes, a->scale.nbytes,
                   a->gscale.nbytes, (size_t)n * 4, qbytes, sbytes, gbytes);
    TRY(init(ctx));
    if (uses_log2_ceil(j) && !S.h_libm.ok)
        return qcheck_say(ctx, QCHECK_DECLINED, "quant %s profile %s: ceil(log2f()) of this host's libm cannot be tabulated "
                   "(libm_table.h)", qc_recipe_name(j->recipe), j->profile->name);
    qck_plan P = {0};
    size_t ox = part(&P, (size_t)n * 4), oq = part(&P, qbytes), os = part(&P, sbytes), og = part(&P, 4);
    size_t oc = part(&P, qck_quant_scratch_bytes(&k)), ow = part(&P, 64);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, ox, a->x.data, (size_t)n * 4));
    k.q = S.dev + oq, k.scale = S.dev + os, k.gscale = (float *)(S.dev + og), k.codes = S.dev + oc, k.L = S.d_libm;
    k.amax_bits = (unsigned int *)(S.dev + ow), k.nan_index = (unsigned long long *)(S.dev + ow + 8);
    k.dev_scale = (float *)(S.dev + ow + 16), k.bad = (unsigned long long *)(S.dev + ow + 32);
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
    qck_dequant_args d;
    memset(&d, 0, sizeof d);
    d.recipe = k.recipe, d.p = k.p, d.rows = k.rows, d.cols = k.cols, d.tile_r = k.tile_r, d.tile_c = k.tile_c;
    d.tiles_r = k.tiles_r, d.tiles_c = k.tiles_c, d.fp4 = k.fp4, d.scale_kind = k.scale_kind, d.tg_layout = k.tg_layout;
    d.sf_tile = k.sf_tile, d.sf_cp = k.sf_cp;
    qck_plan P = {0};
    size_t oq = part(&P, qbytes), os = part(&P, sbytes), og = part(&P, 4), oy = part(&P, (size_t)n * 4);
    TRY(reserve(ctx, &P));
    TRY(put(ctx, oq, a->q.data, qbytes));
    TRY(put(ctx, os, a->scale.data, sbytes));
    TRY(put(ctx, og, a->gscale.data, gbytes));
    d.q = S.dev + oq, d.scale = S.dev + os, d.gscale = (const float *)(S.dev + og), d.y = (float *)(S.dev + oy);
    LAUNCH(qck_launch_dequant(&d, S.sms, S.stream), "dequant kernel launch");
    TRY(get(ctx, oy, (size_t)n * 4));
    TRY(finish(ctx));
    memcpy(a->y.data, S.host + oy, (size_t)n * 4);
    return QCHECK_OK;
}
