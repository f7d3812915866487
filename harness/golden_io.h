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

#endif
