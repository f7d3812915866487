/* cublaslt_backend.c: the cublaslt backend, NVIDIA cuBLASLt's FP8 matmul on sm_90 under the
 * public ABI (include/qcheck/qcheck.h): the registration table, the availability probe and the
 * gemm slot. docs/notes/cublaslt.md says what it implements, the attributes, layouts and why.
 *
 * gemm implements, e4m3fn x e4m3fn with fp32 accumulation (FAST_ACCUM off), fp32 compute and
 * scale type, out bf16 / f16 / f32, any m, n, k (zero padding to cuBLASLt's alignment, then
 * cropped), bias added after the matmul in fp32 on the host:
 *   fp8_tensor   one fp32 scale per operand (SCALAR_32F),
 *   fp8_rowwise  per-token a scales x per-channel b scales (OUTER_VEC_32F),
 *   fp8_block    1x128 activation groups (VEC128_32F) x 128x128 weight blocks (BLK128x128_32F),
 * under model exact (and grouped for the two kinds without K groups, where it is the same bound).
 * Declines every other kind, model sgl-cpu, model grouped for fp8_block (cuBLASLt's accumulation
 * is not IEEE fp32 inside a block: docs/spec/formats.md §14; QCHECK_CUBLASLT_GROUPED=1 runs it
 * anyway), e4m3fnuz / e5m2 elements, groups or blocks other than 128, scales through a layout map.
 *
 * The harness runs the items of a PERSISTENT backend in one long-lived worker per device, so the
 * library, handle, stream, workspace, device buffers and plans (lt_gemm.h) live for the worker's
 * life; the harness's own process only ever probes, in a child (unavailable()). The device side
 * is behind lt_device.h: lt_gemm.c (cuBLASLt) for this backend; built with QC_LT_MODEL on
 * lt_model.c (a CPU model of the same packed problem) this file is the test-only plugin
 * backend cublaslt-model. */
#define _GNU_SOURCE /* fork, pipe, alarm */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lt_device.h"
#include "qcheck/qcheck.h"

#if defined(QC_LT_MODEL)
#define QC_LT_NAME "cublaslt-model"
#else
#define QC_LT_NAME "cublaslt"
#endif

/* ---- this process's device context (the worker's) ---- */

static int lt_state;          /* 0 not opened, 1 open, 2 failed, 3 the device is not one we drive */
static int lt_device = -1;
static char lt_why[1600];
static char lt_libpath[512];  /* the library the probe found, inherited by the workers */

/* ---- unavailable(): a probe in a child process, answered once ---- */

/* Forks the probe so that the calling process never initialises the driver; the child answers
 * "+PATH" or "-REASON" through a pipe. */
static const char *probe(char *why, size_t n)
{
    int fd[2];
    if (pipe(fd)) {
        snprintf(why, n, "cannot probe the GPU: pipe: %s", strerror(errno));
        return why;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]), close(fd[1]);
        snprintf(why, n, "cannot probe the GPU: fork: %s", strerror(errno));
        return why;
    }
    if (pid == 0) {
        char out[1600];
        close(fd[0]);
        signal(SIGALRM, SIG_DFL);
        alarm(120); /* a wedged driver must not hang the harness */
        int bad = qc_lt_dev_probe(out + 1, sizeof out - 1);
        out[0] = bad ? '-' : '+';
        size_t len = strlen(out), off = 0;
        while (off < len) {
            ssize_t w = write(fd[1], out + off, len - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fd[1]);
    char buf[1600];
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fd[0], buf + got, sizeof buf - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got == sizeof buf - 1)
            break;
    }
    buf[got] = '\0';
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got && buf[0] == '+' && got - 1 < sizeof lt_libpath) {
        memcpy(lt_libpath, buf + 1, got); /* with the NUL */
        return NULL;
    }
    if (got && buf[0] == '-')
        snprintf(why, n, "%s", buf + 1);
    else if (WIFSIGNALED(status))
        snprintf(why, n, "the GPU probe process died of signal %d (%s)", WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? "no answer in 120 s" : strsignal(WTERMSIG(status)));
    else
        snprintf(why, n, "the GPU probe process gave no answer (exit status %d)", WEXITSTATUS(status));
    return why;
}

const char *qc_cublaslt_unavailable(void)
{
    static int probed;
    static const char *answer;
    static char why[1600];
    if (lt_state == 1)
        return NULL; /* this process already runs cuBLASLt: no fork after the driver is up */
    if (!probed) {
        probed = 1;
        answer = probe(why, sizeof why);
    }
    return answer;
}

/* ---- gemm ---- */

/* What the kernel does not implement, or NULL. */
static const char *declines(const qcheck_gemm_args *a, char *why, size_t n)
{
    static const int want_a[] = {[QC_GEMM_FP8_TENSOR] = QC_RECIPE_TENSOR, [QC_GEMM_FP8_ROWWISE] = QC_RECIPE_TOKEN,
                                 [QC_GEMM_FP8_BLOCK] = QC_RECIPE_TOKEN_GROUP};
    static const int want_b[] = {[QC_GEMM_FP8_TENSOR] = QC_RECIPE_TENSOR, [QC_GEMM_FP8_ROWWISE] = QC_RECIPE_TOKEN,
                                 [QC_GEMM_FP8_BLOCK] = QC_RECIPE_BLOCK};
    const qc_gemm_kind_info *ki = qcref_gemm_kind(a->kind);
    const char *kname = ki ? ki->name : "?";
    if (!qc_lt_kind_supported(a->kind)) {
        snprintf(why, n, "gemm kind %s (cublaslt: fp8_tensor, fp8_rowwise, fp8_block)", kname);
        return why;
    }
    const char *model = a->model ? a->model : "exact";
    if (!strcmp(model, "sgl-cpu")) {
        snprintf(why, n, "model sgl-cpu is sgl-kernel's CPU w8a16 path (bf16 activations), not a cuBLASLt FP8 GEMM");
        return why;
    }
    if (!strcmp(model, "grouped") && a->kind == QC_GEMM_FP8_BLOCK && !getenv("QCHECK_CUBLASLT_GROUPED")) {
        snprintf(why, n, "model grouped bounds IEEE fp32 sums inside every 128-deep K block, which cuBLASLt's FP8 "
                 "tensor-core accumulation is not (docs/spec/formats.md §14); model exact is its bound "
                 "(QCHECK_CUBLASLT_GROUPED=1 runs it anyway)");
        return why;
    }
    int wgmma = !strcmp(model, "sm90-wgmma") || !strcmp(model, "sm90-wgmma-fast");
#if defined(QC_LT_MODEL)
    if (wgmma) {
        snprintf(why, n, "model %s is the tensor core bit for bit; the CPU model of cuBLASLt (lt_model.c) sums in fp32",
                 model);
        return why;
    }
#endif
    if (strcmp(model, "exact") && strcmp(model, "grouped") && !wgmma) {
        snprintf(why, n, "model %s (cublaslt: exact, grouped, sm90-wgmma, sm90-wgmma-fast)", model);
        return why;
    }
    if (a->out != QC_BF16 && a->out != QC_F16 && a->out != QC_F32) {
        snprintf(why, n, "out %s (cublaslt: bf16, f16, f32)", qc_format_name(a->out));
        return why;
    }
    const qcheck_gemm_operand *op[2] = {&a->a, &a->b};
    for (int s = 0; s < 2; s++) {
        const qcheck_quant_spec *j = op[s]->spec;
        char side = s ? 'b' : 'a';
        int want = s ? want_b[a->kind] : want_a[a->kind];
        if (op[s]->form != QCHECK_FORM_QUANTIZED || !j)
            snprintf(why, n, "operand %c is not in the quantized form (cublaslt takes e4m3fn codes and fp32 scales)",
                     side);
        else if ((int)j->recipe != want)
            snprintf(why, n, "operand %c recipe %s (kind %s: %s)", side, qc_recipe_name(j->recipe), kname,
                     qc_recipe_name(want));
        else if (j->policy.elem != QC_E4M3FN)
            snprintf(why, n, "operand %c elements %s (cublaslt: e4m3fn x e4m3fn)", side, qc_format_name(j->policy.elem));
        else if (j->recipe == QC_RECIPE_TOKEN_GROUP && j->policy.group != 128)
            snprintf(why, n, "operand a groups of %d (VEC128_32F: 1x128)", j->policy.group);
        else if (j->recipe == QC_RECIPE_BLOCK && (j->policy.block_r != 128 || j->policy.block_c != 128))
            snprintf(why, n, "operand b blocks of %dx%d (BLK128x128_32F: 128x128)", j->policy.block_r,
                     j->policy.block_c);
        else if (j->recipe == QC_RECIPE_TOKEN_GROUP && j->layout != QC_SL_ROW)
            snprintf(why, n, "operand a scale_layout=%s (cublaslt: row)", qc_scale_layout_name(j->layout));
        else if (j->has_sf_layout)
            snprintf(why, n, "operand %c scales through the layout map %s (cublaslt: the canonical layout)", side,
                     j->sf_layout.desc ? j->sf_layout.desc->name : "?");
        else
            continue;
        return why;
    }
    return NULL;
}

/* The tensors' sizes against the shape: NULL, or what is wrong. */
static const char *bad_sizes(const qcheck_gemm_args *a, const qc_lt_shape *s, char *why, size_t n)
{
    size_t es = a->out == QC_F32 ? 4 : 2;
    if (a->a.codes.nbytes != (size_t)(a->m * a->k) || a->b.codes.nbytes != (size_t)(a->n * a->k))
        snprintf(why, n, "codes of %zu and %zu bytes for m=%lld n=%lld k=%lld", a->a.codes.nbytes, a->b.codes.nbytes,
                 (long long)a->m, (long long)a->n, (long long)a->k);
    else if (a->a.scale.nbytes != qc_lt_canon_scale_bytes(s, 'a') || a->b.scale.nbytes != qc_lt_canon_scale_bytes(s, 'b'))
        snprintf(why, n, "scales of %zu and %zu bytes (want %zu and %zu)", a->a.scale.nbytes, a->b.scale.nbytes,
                 qc_lt_canon_scale_bytes(s, 'a'), qc_lt_canon_scale_bytes(s, 'b'));
    else if (a->c.nbytes != (size_t)(a->m * a->n) * es)
        snprintf(why, n, "c of %zu bytes for [%lld, %lld] %s", a->c.nbytes, (long long)a->m, (long long)a->n,
                 qc_format_name(a->out));
    else if (a->bias.data && a->bias.nbytes != (size_t)a->n * 4)
        snprintf(why, n, "bias of %zu bytes for n=%lld", a->bias.nbytes, (long long)a->n);
    else
        return NULL;
    return why;
}

/* This worker's context on ctx->device, opened on first use. */
static qcheck_status lt_ready(qcheck_ctx *ctx)
{
    if (lt_state && lt_device != ctx->device) { /* another device: start over there */
        qc_lt_dev_close();
        lt_state = 0;
    }
    if (!lt_state) {
        int rc = qc_lt_dev_open(ctx->device, lt_libpath, lt_why, sizeof lt_why);
        lt_device = ctx->device;
        lt_state = rc == 0 ? 1 : rc == 1 ? 3 : 2;
    }
    if (lt_state == 1)
        return QCHECK_OK;
    return qcheck_say(ctx, lt_state == 3 ? QCHECK_DECLINED : QCHECK_FAILED, QC_LT_NAME ": %s", lt_why);
}

/* A host buffer of at least `bytes`, kept between calls. */
static void *host_buffer(int which, size_t bytes)
{
    static void *buf[3];
    static size_t have[3];
    if (bytes > have[which]) {
        free(buf[which]);
        buf[which] = malloc(bytes);
        have[which] = buf[which] ? bytes : 0;
    }
    return buf[which];
}

static qcheck_status lt_gemm(const qcheck_gemm_args *a, qcheck_ctx *ctx)
{
    char why[1600];
    if (declines(a, why, sizeof why))
        return qcheck_say(ctx, QCHECK_DECLINED, "%s", why);
    if (a->m == 0 || a->n == 0) /* nothing to compute (and no scales to check) */
        return a->c.nbytes ? qcheck_say(ctx, QCHECK_BAD_INPUT, QC_LT_NAME ": c of %zu bytes for an empty product",
                                 a->c.nbytes)
                           : QCHECK_OK;
    qc_lt_shape s;
    qc_lt_shape_of(a->kind, a->m, a->n, a->k, &s);
    s.fast = a->model && !strcmp(a->model, "sm90-wgmma-fast");
    if (bad_sizes(a, &s, why, sizeof why))
        return qcheck_say(ctx, QCHECK_BAD_INPUT, QC_LT_NAME ": %s", why);
    const float *bias = a->bias.data;
    if (a->k == 0) { /* an empty sum: c = bias (or 0), no matmul */
        float *zero = calloc((size_t)(a->m * a->n), sizeof *zero);
        if (!zero)
            return qcheck_say(ctx, QCHECK_FAILED, QC_LT_NAME ": out of memory");
        qc_lt_epilogue(a->out, zero, a->m, a->n, a->n, bias, a->c.data);
        free(zero);
        return QCHECK_OK;
    }
    qcheck_status st = lt_ready(ctx);
    if (st)
        return st;
    /* with a bias cuBLASLt writes fp32 and the host adds the bias (cuBLASLt's BIAS epilogue takes a
     * bf16 bias in fp8 matmuls); without, cuBLASLt rounds to the output format itself */
    qc_format dfmt = bias ? QC_F32 : a->out;
    float *hsa = host_buffer(0, (size_t)s.nsa * 4), *hsb = host_buffer(1, (size_t)s.nsb * 4);
    void *d = bias && a->out != QC_F32 ? host_buffer(2, (size_t)(a->m * a->n) * 4) : a->c.data;
    if (!hsa || !hsb || !d)
        return qcheck_say(ctx, QCHECK_FAILED, QC_LT_NAME ": out of host memory");
    qc_lt_pack_weight_scales(&s, a->b.scale.data, hsa);
    qc_lt_pack_act_scales(&s, a->a.scale.data, hsb);
    int rc = qc_lt_dev_gemm(&s, dfmt, a->a.codes.data, a->b.codes.data, hsa, hsb, d, why, sizeof why);
    if (rc)
        return qcheck_say(ctx, rc == 1 ? QCHECK_DECLINED : QCHECK_FAILED, QC_LT_NAME ": %s", why);
    if (bias)
        qc_lt_epilogue(a->out, d, a->m, a->n, a->n, bias, a->c.data);
    return QCHECK_OK;
}

#if defined(QC_LT_MODEL)
const char *qc_cublaslt_model_unavailable(void) { return NULL; }
const qcheck_backend qc_backend_cublaslt_model = {
    QCHECK_BACKEND_HEADER,
    .name = QC_LT_NAME,
    .flags = QCHECK_BACKEND_PERSISTENT,
    .doc = "test only: the cublaslt adapter (kernels/cublaslt/cublaslt_backend.c) on a CPU model of what cuBLASLt "
           "documents for its packed problem (lt_model.c), to put the adapter through the gate without a GPU",
    .unavailable = qc_cublaslt_model_unavailable,
    .gemm = lt_gemm};
#else
const qcheck_backend qc_backend_cublaslt = {
    QCHECK_BACKEND_HEADER,
    .name = QC_LT_NAME,
    .flags = QCHECK_BACKEND_PERSISTENT,
    .doc = "NVIDIA cuBLASLt FP8 matmul on sm_90 (kernels/cublaslt/, libcublasLt loaded at run time): gemm "
           "fp8_tensor (SCALAR_32F), fp8_rowwise (OUTER_VEC_32F), fp8_block (VEC128_32F x BLK128x128_32F), e4m3fn, "
           "fp32 accumulation without fast accumulation, out bf16/f16/f32, bias added in fp32 after; declines other "
           "kinds, model sgl-cpu, model grouped for fp8_block, e4m3fnuz/e5m2, non-128 groups or blocks",
    .unavailable = qc_cublaslt_unavailable,
    .gemm = lt_gemm};
#endif
