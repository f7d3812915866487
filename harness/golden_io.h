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
/* 0 when outputs written elsewhere (verify --outputs, the exec backend) are the op's outputs, each
 * stored as expected stores it (stage tensors may be absent: a vendor kernel does not expose them),
 * and nothing else: no bound or mask of its own (the judge's come from the reference), no extra
 * dataset. Else 2, err naming the dataset. */
int qc_outputs_fit(qc_tensor_set *got, qc_tensor_set *expected, char *err, size_t errlen);
/* Whether a tensor name is a judge's aid: <output>.bound or <output>.mask (runner.c qc_judge). */
int qc_judge_aid(const char *name);
/* qc_golden_read with the reference's stage tensors joined to the outputs: /stages/<s>/<t> as
 * stage.<s>.<t> (stages.h), which the judge compares where the case names them. A --keep-failing
 * file's backend stages (backend, backend.<s>) are the backend's, not the golden's: left out. */
int qc_golden_read_joined(const char *path, qc_golden_meta *m, qc_tensor_set *inputs, qc_tensor_set *outputs,
                          char *err, size_t errlen);
/* Whether a golden's stored outputs are the reference's, recomputed on its stored inputs (now): the
 * same outputs (now's stage.* tensors aside when the golden has none), each of the same dtype,
 * layout, shape and bits. The judge takes an output's bound and mask from the golden, so a golden
 * with one edited would pass what it should fail. aids_only: only the stored <output>.bound and
 * <output>.mask (a recording of a real library is the expected output itself, and a backend is
 * judged against it, golden verify --backend). 0; 1 with err naming the first difference; 2 when
 * the outputs are not the op's (one missing or one too many: a corrupt file). An f32 output whose
 * golden says nan_payload "any" matches any NaN with a NaN. */
int qc_outputs_identical(const qc_tensor_set *stored, const qc_tensor_set *now, int aids_only, char *err,
                         size_t errlen);

#endif
