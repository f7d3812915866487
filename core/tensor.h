/* tensor.h: the data the harness moves between generators, backends, comparators, the golden
 * store and the reports. A tensor is a named, dense, row-major buffer with a storage type (what
 * the bytes are in memory and in HDF5) and a logical dtype (what they mean: e4m3fn codes, packed
 * e2m1 pairs, e8m0 scales, fp32 values). */
#ifndef QC_TENSOR_H
#define QC_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#define QC_MAX_DIMS 4
#define QC_MAX_TENSORS 16
#define QC_NAME_LEN 48

typedef enum qc_storage {
    QC_ST_U8,  /* every byte format: fp8, e8m0, fp4 (packed or one code per byte), fp6 */
    QC_ST_U16, /* bf16, f16 bit patterns */
    QC_ST_I32,
    QC_ST_U32,
    QC_ST_F32,
    QC_ST_F64,
    QC_ST_COUNT
} qc_storage;

typedef struct qc_tensor {
    char name[QC_NAME_LEN];
    qc_storage storage;
    char dtype[QC_NAME_LEN];  /* logical: "f32", "e4m3fn", "e2m1x2", "e8m0", "i32", ... */
    char layout[QC_NAME_LEN]; /* "row_major" or the layout map that produced it */
    int ndim;
    int64_t shape[QC_MAX_DIMS];
    void *data; /* owned, nbytes long; NULL when nbytes == 0 */
    int nan_any; /* a golden output's nan_payload = "any": an f32 NaN matches any NaN (golden/README.md) */
    size_t nbytes;
} qc_tensor;

typedef struct qc_tensor_set {
    int n;
    qc_tensor t[QC_MAX_TENSORS];
} qc_tensor_set;

size_t qc_storage_size(qc_storage s);
const char *qc_storage_name(qc_storage s);
int qc_storage_from_name(const char *name); /* -1 when unknown */

int64_t qc_tensor_numel(const qc_tensor *t); /* -1 when the product overflows */

/* The bytes of a tensor of this storage and shape: 0 and *out, or -1 when ndim is outside
 * 0..QC_MAX_DIMS, a dimension is negative, the product overflows or it has more than
 * QC_MAX_ELEMS (2^40, reference/qc_checked.h) elements. Every allocation of a tensor goes
 * through it, so a shape from a file or a command line cannot wrap the byte count. */
int qc_tensor_bytes(qc_storage s, int ndim, const int64_t *shape, size_t *out);

/* Whether BYTES fit in this machine's physical memory. Linux grants a single allocation up to
 * about its memory and swap, then kills the process that touches more: a job whose outputs are far
 * larger than its inputs (a per-token quant of a 4930800626x0 tensor writes 4930800626 scales)
 * checks first, to fail with an error instead (issue 19). */
int qc_fits_in_memory(size_t bytes);
size_t qc_memory_bytes(void); /* this machine's physical memory (SIZE_MAX when it cannot say) */

/* Allocates a zero-filled tensor of the given shape; returns 0, -1 when out of memory, or -2
 * when qc_tensor_bytes rejects the shape (nothing allocated; t holds the name and shape). */
int qc_tensor_alloc(qc_tensor *t, const char *name, qc_storage s, const char *dtype, int ndim,
                    const int64_t *shape);
void qc_tensor_free(qc_tensor *t);

/* Adds (moves) t into the set; returns the stored tensor, or NULL when the set is full. */
qc_tensor *qc_set_add(qc_tensor_set *set, qc_tensor *t);
qc_tensor *qc_set_find(qc_tensor_set *set, const char *name);
void qc_set_free(qc_tensor_set *set);
void qc_set_remove(qc_tensor_set *set, const char *name); /* frees it; nothing when absent */

#endif
