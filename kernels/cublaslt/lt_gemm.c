/* lt_gemm.c: cuBLASLt through dlopen, and the FP8 matmul of the cublaslt backend (lt_gemm.h). */
#define _GNU_SOURCE /* dladdr, popen */
#include "lt_gemm.h"
#include "lt_device.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int say(char *why, size_t n, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int say(char *why, size_t n, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (why && n)
        vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return rc;
}

/* Appends ", name" to the list of places tried (cut where it is full). */
static void tried_add(char *tried, size_t n, const char *name, const char *how)
{
    size_t len = strlen(tried);
    if (len + 8 < n)
        snprintf(tried + len, n - len, "%s%s%s%s", len ? "; " : "", name, how ? ": " : "", how ? how : "");
}

/* dlsym of every entry point; the name of the first one missing, or NULL. */
static const char *resolve(qc_lt_lib *l)
{
#define QC_SYM(field, name)                                                                                    \
    do {                                                                                                       \
        void *p = dlsym(l->dl, name);                                                                          \
        if (!p)                                                                                                \
            return name;                                                                                       \
        memcpy(&l->field, &p, sizeof p); /* object pointer -> function pointer, as POSIX dlsym allows */       \
    } while (0)
    QC_SYM(GetVersion, "cublasLtGetVersion");
    QC_SYM(GetStatusString, "cublasLtGetStatusString");
    QC_SYM(Create, "cublasLtCreate");
    QC_SYM(Destroy, "cublasLtDestroy");
    QC_SYM(MatmulDescCreate, "cublasLtMatmulDescCreate");
    QC_SYM(MatmulDescDestroy, "cublasLtMatmulDescDestroy");
    QC_SYM(MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
    QC_SYM(MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
    QC_SYM(MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
    QC_SYM(MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
    QC_SYM(MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
    QC_SYM(MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
    QC_SYM(MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
    QC_SYM(Matmul, "cublasLtMatmul");
#undef QC_SYM
    return NULL;
}

/* One candidate: 1 when it loaded, has every entry point and is recent enough. */
static int try_open(qc_lt_lib *l, const char *name, char *tried, size_t n)
{
    char how[160];
    memset(l, 0, sizeof *l);
    l->dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!l->dl) {
        const char *e = dlerror();
        /* the loader's "cannot open shared object file" is the usual answer: keep the list short */
        tried_add(tried, n, name, e && strstr(e, "No such file") ? "not found" : e);
        return 0;
    }
    const char *missing = resolve(l);
    if (missing) {
        snprintf(how, sizeof how, "lacks %s", missing);
    } else {
        l->version = l->GetVersion();
        Dl_info info;
        void *sym;
        memcpy(&sym, &l->Create, sizeof sym);
        snprintf(l->path, sizeof l->path, "%s", dladdr(sym, &info) && info.dli_fname ? info.dli_fname : name);
        if (l->version >= QC_LT_MIN_VERSION)
            return 1;
        snprintf(how, sizeof how, "version %zu, older than 12.9 (no outer-vector or 128-block FP8 scaling)",
                 l->version);
    }
    tried_add(tried, n, name, how);
    dlclose(l->dl);
    memset(l, 0, sizeof *l);
    return 0;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A file, or in a folder libcublasLt.so.13 then libcublasLt.so. */
static int try_entry(qc_lt_lib *l, const char *entry, char *tried, size_t n)
{
    char p[600];
    if (!is_dir(entry))
        return try_open(l, entry, tried, n);
    snprintf(p, sizeof p, "%s/libcublasLt.so.13", entry);
    if (try_open(l, p, tried, n))
        return 1;
    snprintf(p, sizeof p, "%s/libcublasLt.so", entry);
    return try_open(l, p, tried, n);
}

/* The wheels' folders under python3's site-packages (nvidia-cublas for CUDA 13 installs
 * nvidia/cu13/lib, the CUDA 12 wheels nvidia/cublas/lib). */
static int try_python(qc_lt_lib *l, char *tried, size_t n)
{
    FILE *f = popen("python3 -c \"import site; print('\\n'.join(site.getsitepackages() + "
                    "[site.getusersitepackages()]))\" 2>/dev/null",
                    "r");
    char line[512], p[700];
    int ok = 0, any = 0;
    if (!f) {
        tried_add(tried, n, "python3's site-packages", "python3 did not start");
        return 0;
    }
    while (!ok && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        any = 1;
        static const char *const sub[] = {"nvidia/cu13/lib/libcublasLt.so.13", "nvidia/cublas/lib/libcublasLt.so.13",
                                          "nvidia/cublas/lib/libcublasLt.so.12"};
        for (int i = 0; !ok && i < 3; i++) {
            snprintf(p, sizeof p, "%s/%s", line, sub[i]);
            struct stat st;
            if (stat(p, &st) == 0)
                ok = try_open(l, p, tried, n);
        }
    }
    while (fgets(line, sizeof line, f)) /* drain, so that pclose does not kill it */
        ;
    pclose(f);
    if (!ok)
        tried_add(tried, n, any ? "python3's site-packages nvidia/{cu13,cublas}/lib" : "python3's site-packages",
                  any ? "no libcublasLt there" : "python3 not found");
    return ok;
}

int qc_lt_load(qc_lt_lib *l, const char *first, char *why, size_t n)
{
    char tried[1400] = "", list[1024];
    if (first && first[0] && try_open(l, first, tried, sizeof tried))
        return 0;
    const char *env = getenv("QCHECK_CUBLASLT");
    if (env && *env) {
        snprintf(list, sizeof list, "%s", env);
        char *save = NULL;
        for (char *e = strtok_r(list, ":", &save); e; e = strtok_r(NULL, ":", &save))
            if (try_entry(l, e, tried, sizeof tried))
                return 0;
    }
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so", "/usr/local/cuda/lib64/libcublasLt.so.13",
                                        "/usr/local/cuda/lib64/libcublasLt.so"};
    for (int i = 0; i < 4; i++)
        if (try_open(l, names[i], tried, sizeof tried))
            return 0;
    if (try_python(l, tried, sizeof tried) || try_open(l, "libcublasLt.so.12", tried, sizeof tried))
        return 0;
    return say(why, n, 2, "cannot load cuBLASLt >= 12.9 (set QCHECK_CUBLASLT to the library or its folder, or "
               "LD_LIBRARY_PATH); tried %s", tried);
}

const char *qc_lt_status(const qc_lt_ctx *c, cublasStatus_t st)
{
    static char buf[96];
    snprintf(buf, sizeof buf, "%s (%d)", c->lib.GetStatusString ? c->lib.GetStatusString(st) : "cuBLAS status",
             (int)st);
    return buf;
}

#define CUDA_TRY(call)                                                                                         \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess)                                                                                 \
            return say(why, n, 2, "%s: %s (%s)", #call, cudaGetErrorName(e_), cudaGetErrorString(e_));        \
    } while (0)

int qc_lt_open(qc_lt_ctx *c, int device, const char *libpath, char *why, size_t n)
{
    memset(c, 0, sizeof *c);
    c->device = device;
    int count = 0;
    CUDA_TRY(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
        return say(why, n, 2, "--device %d: this machine has %d CUDA device(s)", device, count);
    if (qc_lt_load(&c->lib, libpath, why, n))
        return 2;
    CUDA_TRY(cudaSetDevice(device));
    CUDA_TRY(cudaDeviceGetAttribute(&c->major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_TRY(cudaDeviceGetAttribute(&c->minor, cudaDevAttrComputeCapabilityMinor, device));
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess)
        snprintf(c->device_name, sizeof c->device_name, "%s", prop.name);
    if (c->major != 9)
        return say(why, n, 1, "device %d (%s) is sm_%d%d: the cublaslt backend drives cuBLASLt's sm_90 FP8 paths "
                   "(outer-vector and 128-block scaling are Hopper's)", device, c->device_name, c->major, c->minor);
    CUDA_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    CUDA_TRY(cudaMalloc(&c->ws, QC_LT_WORKSPACE));
    cublasStatus_t st = c->lib.Create(&c->handle);
    if (st != CUBLAS_STATUS_SUCCESS)
        return say(why, n, 2, "cublasLtCreate: %s", qc_lt_status(c, st));
    return 0;
}

static void plan_free(qc_lt_ctx *c, qc_lt_plan *p)
{
    if (p->ld)
        c->lib.MatrixLayoutDestroy(p->ld);
    if (p->lb)
        c->lib.MatrixLayoutDestroy(p->lb);
    if (p->la)
        c->lib.MatrixLayoutDestroy(p->la);
    if (p->op)
        c->lib.MatmulDescDestroy(p->op);
    memset(p, 0, sizeof *p);
}

void qc_lt_close(qc_lt_ctx *c)
{
    for (int i = 0; i < QC_LT_PLANS; i++)
        if (c->plans[i].used)
            plan_free(c, &c->plans[i]);
    for (int i = 0; i < 5; i++)
        if (c->buf[i])
            cudaFree(c->buf[i]);
    if (c->ws)
        cudaFree(c->ws);
    if (c->handle)
        c->lib.Destroy(c->handle);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    memset(c->buf, 0, sizeof c->buf);
    c->ws = NULL, c->handle = NULL, c->stream = NULL;
}

void *qc_lt_buffer(qc_lt_ctx *c, int which, size_t bytes, char *why, size_t n)
{
    if (bytes <= c->buf_bytes[which] && c->buf[which])
        return c->buf[which];
    if (c->buf[which])
        cudaFree(c->buf[which]);
    c->buf[which] = NULL, c->buf_bytes[which] = 0;
    size_t want = bytes < 4096 ? 4096 : bytes + bytes / 4; /* some room, so that growing shapes reallocate rarely */
    cudaError_t e = cudaMalloc(&c->buf[which], want);
    if (e != cudaSuccess) {
        c->buf[which] = NULL;
        say(why, n, 2, "cudaMalloc(%zu bytes): %s", want, cudaGetErrorString(e));
        return NULL;
    }
    c->buf_bytes[which] = want;
    return c->buf[which];
}

static cudaDataType_t cuda_type(qc_format f)
{
    return f == QC_BF16 ? CUDA_R_16BF : f == QC_F16 ? CUDA_R_16F : CUDA_R_32F;
}

/* The scale modes of a kind on cuBLASLt's A (the weights) and B (the activations). */
static void scale_modes(qc_gemm_kind kind, int32_t *ma, int32_t *mb)
{
    switch (kind) {
    case QC_GEMM_FP8_ROWWISE:
        *ma = *mb = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
        break;
    case QC_GEMM_FP8_BLOCK:
        *ma = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
        *mb = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
        break;
    default:
        *ma = *mb = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
        break;
    }
}

static const char *kind_name(qc_gemm_kind k)
{
    return k == QC_GEMM_FP8_TENSOR ? "fp8_tensor" : k == QC_GEMM_FP8_ROWWISE ? "fp8_rowwise" : "fp8_block";
}

static int set_scales(qc_lt_ctx *c, qc_lt_plan *p, const float *dsa, const float *dsb, char *why, size_t n)
{
    cublasStatus_t st = c->lib.MatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &dsa, sizeof dsa);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = c->lib.MatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &dsb, sizeof dsb);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : say(why, n, 2, "scale pointers: %s", qc_lt_status(c, st));
}

/* Descriptors of a padded problem (lt_pack.h "The problem"). */
static int plan_make(qc_lt_ctx *c, qc_lt_plan *p, const qc_lt_shape *s, cudaDataType_t dt, const float *dsa,
                     const float *dsb, char *why, size_t n)
{
    const qc_lt_lib *L = &c->lib;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    /* off unless the model is sm90-wgmma-fast: fast accumulation keeps the whole K in the tensor
     * core (docs/notes/mma_sm90.md), beyond even the fp32 bound of model exact (formats.md §14) */
    int8_t fast = (int8_t)(s->fast != 0);
    int32_t ma, mb;
    scale_modes(s->kind, &ma, &mb);
    p->kind = s->kind, p->dtype = dt, p->Mp = s->Mp, p->Np = s->Np, p->Kp = s->Kp, p->fast = s->fast;
    cublasStatus_t st = L->MatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const char *what = "cublasLtMatmulDescCreate";
#define LT_SET(attr, v)                                                                                        \
    if (st == CUBLAS_STATUS_SUCCESS) {                                                                         \
        st = L->MatmulDescSetAttribute(p->op, attr, &(v), sizeof(v));                                         \
        what = #attr;                                                                                          \
    }
    LT_SET(CUBLASLT_MATMUL_DESC_TRANSA, ta);
    LT_SET(CUBLASLT_MATMUL_DESC_TRANSB, tb);
    LT_SET(CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast);
    LT_SET(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, ma);
    LT_SET(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mb);
#undef LT_SET
    if (st == CUBLAS_STATUS_SUCCESS)
        what = "cublasLtMatrixLayoutCreate", st = L->MatrixLayoutCreate(&p->la, CUDA_R_8F_E4M3, (uint64_t)s->Kp,
                                                                        (uint64_t)s->Np, s->Kp);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = L->MatrixLayoutCreate(&p->lb, CUDA_R_8F_E4M3, (uint64_t)s->Kp, (uint64_t)s->Mp, s->Kp);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = L->MatrixLayoutCreate(&p->ld, dt, (uint64_t)s->Np, (uint64_t)s->Mp, s->Np);
    if (st != CUBLAS_STATUS_SUCCESS)
        return say(why, n, 2, "%s: %s", what, qc_lt_status(c, st));
    if (set_scales(c, p, dsa, dsb, why, n))
        return 2;
    cublasLtMatmulPreference_t pref = NULL;
    size_t ws = QC_LT_WORKSPACE;
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    memset(&res, 0, sizeof res);
    st = L->MatmulPreferenceCreate(&pref);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = L->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = L->MatmulAlgoGetHeuristic(c->handle, p->op, p->la, p->lb, p->ld, p->ld, pref, 1, &res, &got);
    if (pref)
        L->MatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || got < 1)
        return say(why, n, 1, "cuBLASLt %zu offers no algorithm for %s e4m3 x e4m3 -> %s, M=%lld N=%lld K=%lld TN "
                   "(cublasLtMatmulAlgoGetHeuristic: %s, %d found)", c->lib.version, kind_name(s->kind),
                   dt == CUDA_R_16BF ? "bf16" : dt == CUDA_R_16F ? "f16" : "f32", (long long)s->Np, (long long)s->Mp,
                   (long long)s->Kp, qc_lt_status(c, st), got);
    p->algo = res.algo, p->ws_bytes = res.workspaceSize, p->waves = res.wavesCount;
    return 0;
}

int qc_lt_plan_get(qc_lt_ctx *c, const qc_lt_shape *s, qc_format out, const float *dsa, const float *dsb,
                   qc_lt_plan **plan, char *why, size_t n)
{
    cudaDataType_t dt = cuda_type(out);
    for (int i = 0; i < QC_LT_PLANS; i++) {
        qc_lt_plan *p = &c->plans[i];
        if (p->used && p->kind == s->kind && p->dtype == dt && p->Mp == s->Mp && p->Np == s->Np && p->Kp == s->Kp &&
            p->fast == s->fast) {
            *plan = p;
            return 0;
        }
    }
    qc_lt_plan *p = &c->plans[c->next_plan];
    c->next_plan = (c->next_plan + 1) % QC_LT_PLANS;
    if (p->used)
        plan_free(c, p);
    int rc = plan_make(c, p, s, dt, dsa, dsb, why, n);
    if (rc) {
        plan_free(c, p);
        return rc;
    }
    p->used = 1;
    *plan = p;
    return 0;
}

int qc_lt_matmul(qc_lt_ctx *c, qc_lt_plan *p, const void *dA, const void *dB, const float *dsa, const float *dsb,
                 void *dD, char *why, size_t n)
{
    const float alpha = 1.0f, beta = 0.0f; /* beta 0: C (= D) is not read */
    if (set_scales(c, p, dsa, dsb, why, n))
        return 2;
    cublasStatus_t st = c->lib.Matmul(c->handle, p->op, &alpha, dA, p->la, dB, p->lb, &beta, dD, p->ld, dD, p->ld,
                                      &p->algo, c->ws, QC_LT_WORKSPACE, c->stream);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : say(why, n, 2, "cublasLtMatmul: %s", qc_lt_status(c, st));
}

/* ---- lt_device.h on cuBLASLt: one context for the process (the backend's worker) ---- */

static qc_lt_ctx dev;
static int dev_open;

int qc_lt_dev_probe(char *out, size_t n)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(out, n, "no usable NVIDIA GPU: cudaGetDeviceCount: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
        return 1;
    }
    int sm90 = -1, major = 0;
    for (int d = 0; d < count && sm90 < 0; d++)
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) == cudaSuccess && major == 9)
            sm90 = d;
    if (sm90 < 0) {
        struct cudaDeviceProp p;
        memset(&p, 0, sizeof p);
        if (count)
            cudaGetDeviceProperties(&p, 0);
        snprintf(out, n, "no sm_90 GPU among the %d device(s) (device 0: %s sm_%d%d): cuBLASLt's outer-vector and "
                 "128-block FP8 scaling are Hopper's", count, count ? p.name : "none", p.major, p.minor);
        return 1;
    }
    qc_lt_ctx c;
    memset(&c, 0, sizeof c);
    if (qc_lt_load(&c.lib, NULL, out, n))
        return 1;
    cudaSetDevice(sm90);
    cublasStatus_t st = c.lib.Create(&c.handle);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(out, n, "cublasLtCreate on device %d: %s (cuBLASLt %zu at %s)", sm90, qc_lt_status(&c, st),
                 c.lib.version, c.lib.path);
        return 1;
    }
    c.lib.Destroy(c.handle);
    snprintf(out, n, "%s", c.lib.path);
    return 0;
}

int qc_lt_dev_open(int device, const char *libpath, char *why, size_t n)
{
    if (dev_open)
        qc_lt_dev_close();
    int rc = qc_lt_open(&dev, device, libpath, why, n);
    if (rc)
        qc_lt_close(&dev);
    dev_open = !rc;
    return rc;
}

void qc_lt_dev_close(void)
{
    if (dev_open)
        qc_lt_close(&dev);
    dev_open = 0;
}

/* rows x k codes to a rows_p x kp zero-padded device buffer. */
static cudaError_t upload_codes(void *dst, const void *src, int64_t rows, int64_t k, int64_t rows_p, int64_t kp)
{
    cudaError_t e = cudaSuccess;
    if (rows != rows_p || k != kp)
        e = cudaMemsetAsync(dst, 0, (size_t)(rows_p * kp), dev.stream);
    if (e == cudaSuccess && rows)
        e = cudaMemcpy2DAsync(dst, (size_t)kp, src, (size_t)k, (size_t)k, (size_t)rows, cudaMemcpyHostToDevice,
                              dev.stream);
    return e;
}

int qc_lt_dev_gemm(const qc_lt_shape *s, qc_format dfmt, const void *a, const void *b, const float *sa_lt,
                   const float *sb_lt, void *d, char *why, size_t n)
{
    if (!dev_open)
        return say(why, n, 2, "the device context is not open");
    size_t des = dfmt == QC_F32 ? 4 : 2;
    void *dA = qc_lt_buffer(&dev, QC_LT_BUF_A, (size_t)(s->Np * s->Kp), why, n);
    void *dB = dA ? qc_lt_buffer(&dev, QC_LT_BUF_B, (size_t)(s->Mp * s->Kp), why, n) : NULL;
    void *dD = dB ? qc_lt_buffer(&dev, QC_LT_BUF_D, (size_t)(s->Mp * s->Np) * des, why, n) : NULL;
    float *dsa = dD ? qc_lt_buffer(&dev, QC_LT_BUF_SA, (size_t)s->nsa * 4, why, n) : NULL;
    float *dsb = dsa ? qc_lt_buffer(&dev, QC_LT_BUF_SB, (size_t)s->nsb * 4, why, n) : NULL;
    if (!dsb)
        return 2;
    qc_lt_plan *plan;
    int rc = qc_lt_plan_get(&dev, s, dfmt, dsa, dsb, &plan, why, n);
    if (rc)
        return rc;
    CUDA_TRY(upload_codes(dA, b, s->n, s->k, s->Np, s->Kp));
    CUDA_TRY(upload_codes(dB, a, s->m, s->k, s->Mp, s->Kp));
    CUDA_TRY(cudaMemcpyAsync(dsa, sa_lt, (size_t)s->nsa * 4, cudaMemcpyHostToDevice, dev.stream));
    CUDA_TRY(cudaMemcpyAsync(dsb, sb_lt, (size_t)s->nsb * 4, cudaMemcpyHostToDevice, dev.stream));
    if (qc_lt_matmul(&dev, plan, dA, dB, dsa, dsb, dD, why, n))
        return 2;
    /* D is [Mp, Np] row-major: the first m rows and n columns */
    CUDA_TRY(cudaMemcpy2DAsync(d, (size_t)s->n * des, dD, (size_t)s->Np * des, (size_t)s->n * des, (size_t)s->m,
                               cudaMemcpyDeviceToHost, dev.stream));
    CUDA_TRY(cudaStreamSynchronize(dev.stream));
    return 0;
}
