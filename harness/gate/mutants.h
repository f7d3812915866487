/* mutants.h: rules broken on purpose that more than one mutant uses (kernels/mutants/). */
#ifndef QC_MUTANTS_H
#define QC_MUTANTS_H

#include "../quant_job.h"

/* The scale of K block g read from block g + 1 (the last block keeps its own) in every row of
 * blocks of a block, token-group, MX or NVFP4 quantization; nothing for one scale along K
 * (docs/spec/layouts.md §10 T-CK1, T-DG5). */
void qc_mutant_scale_block_shift(const qc_quant_job *jb, qc_quantized *qb);

/* Every positive finite fp32 scale one ulp larger (a scale a kernel computes with one rounding
 * more, or reads back through a bf16 round trip and re-widens): 2^-23 relative, hidden under any
 * fp32 error bound, seen by a bit-exact model. */
void qc_mutant_scale_ulp_up(const qc_quant_job *jb, qc_quantized *qb);

#endif
