/* compare.h: the comparison rules (docs/DESIGN.md "Comparison rules"): bit-exact against the claimed
 * profile, every mismatch classified, the first few reported with coordinates, hex and decoded
 * values, and degenerate expected outputs flagged MISTRUSTED instead of passed. */
#ifndef QC_COMPARE_H
#define QC_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "cases.h"
#include "layouts/layouts.h"
#include "result.h"
#include "tensor.h"

typedef enum qc_mismatch_class {
    QC_MM_TIE_FLIP,   /* adjacent codes of one format and the input sits exactly on their midpoint */
    QC_MM_ONE_ULP,    /* adjacent finite codes of one format (fp32 one ulp apart: a one-ulp scale) */
    QC_MM_SATURATION, /* the largest finite value against NaN or Inf: a missing or extra clamp */
    QC_MM_NAN_POLICY, /* NaN against a value that is not the format's max, or two NaN codes */
    QC_MM_ZERO_SIGN,  /* +0 against -0 */
    QC_MM_NIBBLE_SWAP,/* the two 4-bit elements of a byte in the other order */
    QC_MM_WRONG_BLOCK,/* the value belongs one block over in the same row */
    QC_MM_MISPLACED,  /* the value is right but belongs at another position (the report says where) */
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
    int64_t nan_matched; /* NaNs of other payloads taken as equal: the golden says nan_payload = "any" */
    int degenerate; /* the expected tensor holds a single value */
    int has_bound;    /* rule bound: tightness is meaningful */
    double tightness; /* rule bound: the worst |got - expected| / bound (0: equal everywhere; > 1 fails) */
    qc_mismatch_map map; /* where the mismatches sit */
    qc_ratio_hist ratio; /* rule bound: how close the errors come to their bounds */
} qc_compare_out;

/* Element roles in an optional mask tensor "<output>.mask" (u8, one per element) that the
 * reference adds for padded layouts. */
enum { QC_MASK_UNDEFINED = 0, QC_MASK_DATA = 1, QC_MASK_PADDING = 2 };

/* What an output's stored elements are in the op's own terms (qc_op.view): the value each holds
 * when the storage says less (u8 bytes of fp32 scales, two e2m1 codes per byte) and where it sits
 * in the logical grid, through the layout when the output is laid out. Only the report and the
 * classes read it; every stored byte is still compared. */
typedef struct qc_output_view {
    char dtype[16];       /* the format of each element; "" keeps the tensor's dtype */
    int elem_bits;        /* 4, 8, 16, 32 or 64; 0 keeps the storage's */
    int64_t rows, cols;   /* the logical grid (per batch), row-major; 0: the tensor's own shape */
    int64_t block;        /* elements per block along cols, for "block k" (0: none) */
    const char *axes[3];  /* the names of the coordinates, e.g. {"row", "col"} or {"batch", "row", "col"} */
    int layout_kind;      /* how stored element i finds its place: QC_VIEW_* */
    qc_layout layout;     /* QC_VIEW_LAYOUT: the planned map */
    int scale_layout;     /* QC_VIEW_SCALE_LAYOUT: a qc_scale_layout of token_group */
} qc_output_view;

enum { QC_VIEW_ROW_MAJOR = 0, QC_VIEW_LAYOUT = 1, QC_VIEW_SCALE_LAYOUT = 2 };

/* What the reference adds beside an output, and the coupling between outputs. */
typedef struct qc_compare_extra {
    const qc_tensor *mask;      /* "<output>.mask": element roles (padded layouts) */
    const qc_tensor *bound;     /* "<output>.bound": per-element bound (rule bound) */
    const uint8_t *coupled_bad; /* budget + coupled_to: 1 per scale whose difference used the budget */
    int64_t coupled_n;
    uint8_t *budget_map;        /* out (optional, one byte per element): 1 where a difference used the budget */
    const qc_output_view *view; /* NULL: the tensor as stored */
} qc_compare_extra;

/* Elements the comparator sees in t under view v (NULL: one per stored element). */
int64_t qc_compare_elements(const qc_tensor *t, const qc_output_view *v);

/* Compares got against expected; appends the report to detail (at most `show` mismatches).
 * x may be NULL. Returns 1 when the output fails, 0 when it passes, -1 on a shape mismatch. */
int qc_compare(const qc_compare_spec *spec, const qc_params *p, const qc_tensor_set *inputs,
               const qc_tensor *expected, const qc_tensor *got, const qc_compare_extra *x, int show,
               qc_compare_out *out, char *detail, size_t detail_len);

#endif
