/* golden_io.h: instances <-> the HDF5 golden store (golden/golden.h). */
#ifndef QC_GOLDEN_IO_H
#define QC_GOLDEN_IO_H

#include "cases.h"
#include "golden.h"
#include "result.h"

void qc_params_to_json(const qc_params *p, char *out, size_t len);
int qc_params_from_json(const char *json, qc_params *p, char *err, size_t errlen);
void qc_instance_meta(const qc_instance *in, const char *backend, qc_golden_meta *m);
/* DIR/<case>/<params>.h5 (ref) or DIR/<case>/<params>__<backend>.h5 */
void qc_golden_path(const char *dir, const qc_instance *in, const char *backend, char *out, size_t len);
int qc_mkdirs(const char *path);
/* 0 when every tensor of s has a dtype qcheck knows (a format, a storage name, e2m1x2 or s8), else 2
 * with err naming the file, the group, the dataset and the dtype: a golden whose qc_dtype says
 * "e9m9" is a corrupt file, not a comparison of raw bytes. */
int qc_check_dtypes(const char *path, const char *group, const qc_tensor_set *s, char *err, size_t errlen);
/* Outputs written by another tool without qc_dtype (golden.h reads them as their storage name)
 * take the dtype of the expected tensor of the same name and storage (a bf16 output written as
 * plain uint16 is bf16), and its shape when they hold as many elements (docs/exec.md). */
/* A qc_dtype that names another dtype than the op's is an error (2, err names the output). */
int qc_outputs_adopt_dtypes(qc_tensor_set *got, qc_tensor_set *expected, char *err, size_t errlen);

#endif
