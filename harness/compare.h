/* compare.h: the comparison rules (docs/DESIGN.md "Comparison rules"): bit-exact against the claimed
 * profile, every mismatch classified, the first few reported with coordinates, hex and decoded
 * values, and degenerate expected outputs flagged MISTRUSTED instead of passed. */
#ifndef QC_COMPARE_H
#define QC_COMPARE_H

#include <stddef.h>

#include "cases.h"
#include "result.h"
#include "tensor.h"

typedef enum qc_mismatch_class {
    QC_MM_TIE_FLIP,   /* adjacent codes and the input sits exactly on their midpoint */
    QC_MM_ONE_ULP,    /* adjacent codes (or fp32 values one ulp apart: a one-ulp scale) */
    QC_MM_NAN_POLICY, /* NaN on one side or both (different NaN codes) */
    QC_MM_ZERO_SIGN,  /* +0 against -0 */
    QC_MM_WRONG_BLOCK,/* the value belongs one block over in the same row */
    QC_MM_PADDING,    /* an element of the padded region, whose value the layout's rule fixes */
    QC_MM_SCALE_COUPLED, /* an element of a block whose scale differs within its budget */
    QC_MM_OUT_OF_BOUND,  /* rule bound: |got - expected| above the element's derived bound */
    QC_MM_OTHER,
    QC_MM_COUNT
} qc_mismatch_class;

const char *qc_mismatch_class_name(qc_mismatch_class c);

typedef struct qc_compare_out {
    int64_t n, mismatches;
    int64_t per_class[QC_MM_COUNT];
    int64_t skipped; /* padding whose value the real implementation leaves undefined */
    int64_t allowed; /* differences within the case's documented budget (counted, shown, not failed) */
    int degenerate; /* the expected tensor holds a single value */
    int has_bound;    /* rule bound: tightness is meaningful */
    double tightness; /* rule bound: the worst |got - expected| / bound (0: equal everywhere; > 1 fails) */
} qc_compare_out;

/* Element roles in an optional mask tensor "<output>.mask" (u8, one per element) that the
 * reference adds for padded layouts. */
enum { QC_MASK_UNDEFINED = 0, QC_MASK_DATA = 1, QC_MASK_PADDING = 2 };

/* What the reference adds beside an output, and the coupling between outputs. */
typedef struct qc_compare_extra {
    const qc_tensor *mask;      /* "<output>.mask": element roles (padded layouts) */
    const qc_tensor *bound;     /* "<output>.bound": per-element bound (rule bound) */
    const uint8_t *coupled_bad; /* budget + coupled_to: 1 per scale whose difference used the budget */
    int64_t coupled_n;
    uint8_t *budget_map;        /* out (optional, numel bytes): 1 where a difference used the budget */
} qc_compare_extra;

/* Compares got against expected; appends the report to detail (at most `show` mismatches).
 * x may be NULL. Returns 1 when the output fails, 0 when it passes, -1 on a shape mismatch. */
int qc_compare(const qc_compare_spec *spec, const qc_params *p, const qc_tensor_set *inputs,
               const qc_tensor *expected, const qc_tensor *got, const qc_compare_extra *x, int show,
               qc_compare_out *out, char *detail, size_t detail_len);

#endif
