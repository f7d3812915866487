/* profiles.h: named bundles of policies, each reproducing one real implementation bit for bit.
 * The table lives in profiles.c with the source each row reproduces (STYLE.md: "keep profile
 * definitions in one table with their sources"). */
#ifndef QCREF_PROFILES_H
#define QCREF_PROFILES_H

#include "formats/formats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Overflow and NaN rules of one family of formats that has NaN codes. */
typedef struct qc_special_rule {
    qc_overflow overflow;
    qc_nan_sign nan_sign;
    qc_nan_code nan_code;
} qc_special_rule;

typedef struct qc_cast_profile {
    const char *name;
    const char *reproduces; /* the implementation and where its behaviour is documented */
    qc_special_rule fp8;    /* e4m3fn, e4m3fnuz, e5m2, e5m2fnuz */
    qc_special_rule bf16;
    qc_special_rule f16;
    qc_ties ties;           /* fp8, fp6, fp4 (bf16/f16 always round to nearest even) */
    qc_nonan nonan;         /* e2m1, e2m3, e3m2 */
    qc_zero_sign zero_sign; /* e2m1, e2m3, e3m2 */
    qc_e8m0_rule e8m0;
    qc_e8m0_decoder e8m0_decoder;
} qc_cast_profile;

int qc_cast_profile_count(void);
const qc_cast_profile *qc_cast_profile_at(int i);
const qc_cast_profile *qc_cast_profile_find(const char *name); /* NULL when unknown */

/* The policy a profile applies to one format. */
qc_cast_policy qc_cast_profile_policy(const qc_cast_profile *p, qc_format f);

#ifdef __cplusplus
}
#endif

#endif
