/* lt_gemm.h: cuBLASLt loaded at run time (dlopen: the ~500 MB library is the host's own, never
 * linked or carried) and the one FP8 matmul the cublaslt backend and bench_cublaslt issue: e4m3 x
 * e4m3, CUBLAS_COMPUTE_32F, fp32 scale type, FAST_ACCUM off, TN, with the scale modes of the kind
 * (lt_pack.h says the layouts). The CUDA runtime is linked statically (CUDA::cudart_static), so
 * only the driver, libcuda.so.1, has to be on the machine. */
#ifndef QC_LT_GEMM_H
#define QC_LT_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "lt_pack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cuBLASLt entry points used, resolved with dlsym. */
typedef struct qc_lt_lib {
    void *dl;
    char path[512];  /* the file loaded (dladdr) */
    size_t version;  /* cublasLtGetVersion(): major * 10000 + minor * 100 + patch */
    size_t (*GetVersion)(void);
    const char *(*GetStatusString)(cublasStatus_t);
    cublasStatus_t (*Create)(cublasLtHandle_t *);
    cublasStatus_t (*Destroy)(cublasLtHandle_t);
    cublasStatus_t (*MatmulDescCreate)(cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t);
    cublasStatus_t (*MatmulDescDestroy)(cublasLtMatmulDesc_t);
    cublasStatus_t (*MatmulDescSetAttribute)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *, size_t);
    cublasStatus_t (*MatrixLayoutCreate)(cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t, int64_t);
    cublasStatus_t (*MatrixLayoutDestroy)(cublasLtMatrixLayout_t);
    cublasStatus_t (*MatmulPreferenceCreate)(cublasLtMatmulPreference_t *);
    cublasStatus_t (*MatmulPreferenceDestroy)(cublasLtMatmulPreference_t);
    cublasStatus_t (*MatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t,
                                                   const void *, size_t);
    cublasStatus_t (*MatmulAlgoGetHeuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                             cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                             cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t *, int *);
    cublasStatus_t (*Matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *, cublasLtMatrixLayout_t,
                             const void *, cublasLtMatrixLayout_t, const void *, const void *, cublasLtMatrixLayout_t,
                             void *, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);
} qc_lt_lib;

/* The oldest cuBLASLt with OUTER_VEC_32F, VEC128_32F and BLK128x128_32F on sm_90 (12.9). */
#define QC_LT_MIN_VERSION 120900u

/* Loads libcublasLt: `first` when given (a path found before, by the probe), then each entry of
 * $QCHECK_CUBLASLT (':'-separated files or folders), libcublasLt.so.13 and libcublasLt.so by the
 * loader's own search (LD_LIBRARY_PATH, the ld.so cache), /usr/local/cuda/lib64, the nvidia/cu13/lib
 * and nvidia/cublas/lib folders of python3's site-packages (the wheels torch uses), and last
 * libcublasLt.so.12. 0 on success; else why (every place tried) and nonzero. */
int qc_lt_load(qc_lt_lib *lib, const char *first, char *why, size_t n);

/* One cached problem: descriptors and the heuristic's first algorithm. */
typedef struct qc_lt_plan {
    int used;
    qc_gemm_kind kind;
    cudaDataType_t dtype;
    int64_t Mp, Np, Kp;
    int fast; /* FAST_ACCUM */
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
    size_t ws_bytes; /* what the algorithm needs */
    float waves;
} qc_lt_plan;

#define QC_LT_PLANS 32
#define QC_LT_WORKSPACE (32u << 20) /* what PyTorch gives cuBLASLt on sm_90 */

/* What a process keeps across calls: the library, the device, the handle, one stream, the
 * workspace, grow-only device buffers and the plans. */
typedef struct qc_lt_ctx {
    qc_lt_lib lib;
    int device, major, minor;
    char device_name[256];
    cublasLtHandle_t handle;
    cudaStream_t stream;
    void *ws;
    void *buf[5];      /* QC_LT_BUF_* */
    size_t buf_bytes[5];
    qc_lt_plan plans[QC_LT_PLANS];
    int next_plan;
} qc_lt_ctx;

enum { QC_LT_BUF_A, QC_LT_BUF_B, QC_LT_BUF_D, QC_LT_BUF_SA, QC_LT_BUF_SB };

/* Opens the context on a device: 0; 1 when the device is not sm_90 (why says so); 2 on an error. */
int qc_lt_open(qc_lt_ctx *c, int device, const char *libpath, char *why, size_t n);
void qc_lt_close(qc_lt_ctx *c);

/* A device buffer of at least `bytes` (grown, never shrunk; contents not kept): NULL on error. */
void *qc_lt_buffer(qc_lt_ctx *c, int which, size_t bytes, char *why, size_t n);

/* The plan of a padded problem with D (and C) of type out (bf16, f16, f32), the scale pointers it
 * will run with (their alignment steers the heuristic): 0; 1 when cuBLASLt offers no algorithm
 * (why names the problem and the status); 2 on an error. */
int qc_lt_plan_get(qc_lt_ctx *c, const qc_lt_shape *s, qc_format out, const float *dsa, const float *dsb,
                   qc_lt_plan **plan, char *why, size_t n);

/* D = (A scale x B scale)-scaled dot of dA (cuBLASLt's A: the weights) and dB (its B: the
 * activations), enqueued on c->stream: 0, or 2 with why. */
int qc_lt_matmul(qc_lt_ctx *c, qc_lt_plan *p, const void *dA, const void *dB, const float *dsa, const float *dsb,
                 void *dD, char *why, size_t n);

/* "CUBLAS_STATUS_NOT_SUPPORTED (15)" */
const char *qc_lt_status(const qc_lt_ctx *c, cublasStatus_t st);

#ifdef __cplusplus
}
#endif

#endif
