/* stages.h: the investigation of a failing instance whose op keeps stage tensors
 * ("stage.<stage>.<tensor>", e.g. the fused MoE's route, a1, gemm1, act, a2, gemm2, combine): a
 * per-stage table of where the backend first parts from the reference, and the --keep-failing
 * layout that puts stage tensors under /stages/<stage>/<tensor> (docs/DESIGN.md "Golden store"). */
#ifndef QC_STAGES_H
#define QC_STAGES_H

#include <stddef.h>

#include "params.h"
#include "tensor.h"

struct qc_plots;
/* Appends the table to detail (nothing when expected has no stage tensors). For every stage
 * tensor in the reference's order: elements that differ, max |error| (and max |error| / bound for
 * an output with "<name>.bound"), the worst element with its token, expert (from
 * stage.route.ids) and scale block, and for the first stage that differs the periodicity of its
 * error along the last dimension (K of the next GEMM): the largest block of 8..128 columns inside
 * which the error profile is constant, which points at scale indexing. plots (or NULL) gets the
 * same table and that stage's error profile along K, for the HTML report. */
void qc_stage_report(const qc_params *p, const qc_tensor_set *expected, const qc_tensor_set *got, char *detail,
                     size_t len, struct qc_plots *plots);

/* Splits a set into its plain outputs and its stages: stage "<stage>" gets the tensors
 * stage.<stage>.* renamed to their last part; prefix (or NULL) is prepended to the stage names.
 * The tensors are shallow copies that share data with the source (do not free them). Returns the
 * number of stages written to stages/names (at most max). */
int qc_stage_split(const qc_tensor_set *src, const char *prefix, qc_tensor_set *plain, qc_tensor_set *stages,
                   char (*names)[QC_NAME_LEN], int max);

#endif
