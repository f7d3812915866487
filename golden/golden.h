/* golden.h: the HDF5 golden store (docs/DESIGN.md "Golden store (HDF5)"). One file per case instance:
 *
 *   /                 attributes qcheck_version, format_version, case, op, params (JSON text),
 *                     seed (uint64), profile, backend, git_revision, created
 *   /inputs/NAME      one dataset per tensor
 *   /outputs/NAME
 *   /stages/STAGE/NAME
 *
 * Every dataset carries the attributes qc_dtype (logical dtype, e.g. "e4m3fn"), shape (int64[ndim],
 * the shape of the data) and layout ("row_major" or the layout map). The HDF5 type is the storage
 * type (uint8 for every byte format, so h5py + torch view the bytes directly). Non-empty datasets
 * are chunked with shuffle + deflate + fletcher32; empty and scalar ones are contiguous (HDF5
 * cannot chunk them). Files are deterministic: the same content gives the same bytes.
 *
 * Every function returns 0 on success, or QC_GOLDEN_EBADINPUT (2, the CLI's "bad input" exit
 * status) with err naming the file, dataset or attribute that is wrong. */
#ifndef QC_GOLDEN_H
#define QC_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

#define QC_GOLDEN_FORMAT_VERSION 1
#define QC_GOLDEN_EBADINPUT 2
#define QC_GOLDEN_MAX_STAGES 32

typedef struct qc_golden_meta {
    char qcheck_version[32];
    int format_version; /* written as QC_GOLDEN_FORMAT_VERSION whatever this says */
    char case_name[64];
    char op[64];
    char params_json[2048];
    uint64_t seed;
    char profile[48];
    char backend[48];
    char git_revision[64];
    char created[32]; /* ISO 8601 UTC, supplied by the caller (the store adds no clock) */
    int ephemeral; /* write only: a file that lives a moment on one machine (the exec backend's
                      batches): contiguous datasets, no filters (no deflate, no fletcher32) and no
                      fsync before the rename, which cost more than the I/O (bench/bench_golden_io.c) */
} qc_golden_meta;

/* 1 when built with HDF5; otherwise every function below fails with "built without HDF5". */
int qc_golden_available(void);

/* Writes PATH atomically: the file is built in memory, written to a temporary PATH.tmp.PID.K in
 * PATH's directory (core/tempfile.h) and renamed over PATH only when complete; on any error (a
 * full disk included) the temporary file is removed and an existing PATH is untouched. The first
 * write into a directory removes the temporaries that killed writers left there.
 * inputs/outputs may be NULL (empty groups); stages[i] is stored as /stages/stage_names[i]. */
int qc_golden_write(const char *path, const qc_golden_meta *m, const qc_tensor_set *inputs,
                    const qc_tensor_set *outputs, const qc_tensor_set *const *stages,
                    const char *const *stage_names, int nstages, char *err, size_t errlen);

/* Every reader below treats the file as untrusted: it runs in a forked child process (libhdf5
 * 1.10.8 crashes on some corrupt files), a dataset larger than the file can hold (1032 x its size,
 * deflate's limit) is refused before anything is allocated, and a child that crashes or hangs is
 * QC_GOLDEN_EBADINPUT naming the file. QCHECK_GOLDEN_INPROCESS=1 reads in the calling process.
 *
 * Reads the metadata, /inputs and /outputs (in the order they were written). The sets are
 * overwritten (they must not own tensors on entry); on error they are left empty. m, inputs or
 * outputs may be NULL to skip them (the whole file is still checked as far as it is read). */
int qc_golden_read(const char *path, qc_golden_meta *m, qc_tensor_set *inputs,
                   qc_tensor_set *outputs, char *err, size_t errlen);

/* Reads /outputs of a file written by another tool (an external runner's h5py output for
 * `qcheck verify --outputs`): no root attributes are required (a format_version present must be
 * supported), and a dataset without qc_dtype / layout / shape gets its storage name, "row_major"
 * and its dataspace. Attributes that are present are checked as in qc_golden_read. */
int qc_golden_read_outputs(const char *path, qc_tensor_set *out, char *err, size_t errlen);

/* The names of the stages under /stages, in the order they were written (0 when none). */
int qc_golden_stage_names(const char *path, char names[][QC_NAME_LEN], int max, int *n, char *err,
                          size_t errlen);

/* Reads /stages/STAGE into out (same rules as qc_golden_read). */
int qc_golden_read_stage(const char *path, const char *stage, qc_tensor_set *out, char *err,
                         size_t errlen);

#endif
