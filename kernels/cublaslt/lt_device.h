/* lt_device.h: the device side of the cublaslt backend behind four calls, so that one backend
 * file (cublaslt_backend.c) runs on cuBLASLt (lt_gemm.c, the backend `cublaslt`) or on a CPU model
 * of what cuBLASLt documents for the same packed problem (lt_model.c, the test-only plugin
 * `cublaslt-model`, which puts the whole adapter, its declines, sizes, padding, crop and
 * epilogue, through the gate on any machine). No CUDA type appears here. */
#ifndef QC_LT_DEVICE_H
#define QC_LT_DEVICE_H

#include <stddef.h>

#include "lt_pack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Run in a child process by unavailable(): 0 with what was found (the library's path) in out, or
 * 1 with why it cannot run in out. */
int qc_lt_dev_probe(char *out, size_t n);

/* Opens this process's device context (the library found by the probe first, when given): 0;
 * 1 when this device is not one the backend drives (declined, why says so); 2 on an error. */
int qc_lt_dev_open(int device, const char *libpath, char *why, size_t n);
void qc_lt_dev_close(void);

/* One GEMM of the packed problem s: a [m, k] and b [n, k] codes (host, unpadded), the scale
 * buffers in cuBLASLt's layouts (host, s->nsa and s->nsb floats, lt_pack.h), and the result
 * cropped to [m, n] row-major in dfmt (bf16 / f16 codes or f32) into host memory d: 0; 1 when the
 * library offers no algorithm (declined); 2 on an error. */
int qc_lt_dev_gemm(const qc_lt_shape *s, qc_format dfmt, const void *a, const void *b, const float *sa_lt,
                   const float *sb_lt, void *d, char *why, size_t n);

#ifdef __cplusplus
}
#endif

#endif
