/* profiles.h: named bundles of policies, each reproducing one real implementation bit for bit.
 * The table lives in profiles.c with the source each row reproduces (docs/STYLE.md: profile
 * definitions stay in one table with their sources). */
#ifndef QCREF_PROFILES_H
#define QCREF_PROFILES_H

#include "formats/formats.h"
#include "recipes/recipes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Overflow and NaN rules of one family of formats that has NaN codes. */
typedef struct qc_special_rule {
    qc_overflow overflow;
    qc_nan_sign nan_sign;
    qc_nan_code nan_code;
} qc_special_rule;

/* What a profile claims to reproduce: the library, and the versions it names. versions is a
 * space-separated list; a token that starts with a digit is a release series ("0.7" covers 0.7.0,
 * 0.7.1, ...), "@abc1234" a source commit that was read, anything else a note. */
typedef struct qc_provenance {
    const char *library;
    const char *versions;
} qc_provenance;

/* 1 when version (e.g. "0.7.0") belongs to a release series of v->versions. */
int qc_provenance_covers(const qc_provenance *v, const char *version);

typedef struct qc_cast_profile {
    const char *name;
    qc_provenance of;
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
/* The cast profile of library at version (e.g. "ml_dtypes", "0.7.0"); NULL when none names it. */
const qc_cast_profile *qc_cast_profile_for(const char *library, const char *version);

/* The policy a profile applies to one format. */
qc_cast_policy qc_cast_profile_policy(const qc_cast_profile *p, qc_format f);

/* Recipe profiles (docs/spec/cli.md "Recipe profiles"): one row per (name, recipe), so one name
 * (sgl-kernel, torchao-floor, ...) can define several recipes; a recipe accepts the names that
 * have a row for it. The row's element cast is a cast profile of the table above plus changes. */
enum {
    QC_MOD_SATFINITE = 1,    /* the cast saturates (torchao clamps, OCP saturate_normals) */
    QC_MOD_TIES_AWAY = 2,    /* microxcaling round "nearest" */
    QC_MOD_TIES_ZERO = 4,    /* modelopt / DeepGEMM FP4 tables */
    QC_MOD_NONAN_ZERO = 8,   /* NaN -> code 0 */
    QC_MOD_ZERO_MODELOPT = 16, /* modelopt: +0 gets the sign bit */
    QC_MOD_NONAN_SIGNBIT = 32, /* modelopt: NaN -> the sign-bit code */
    QC_MOD_ZERO_EXACT_POSITIVE = 64 /* microxcaling: an exact -0 gives +0 */
};

typedef struct qc_recipe_profile {
    const char *name;
    qc_recipe recipe;
    const char *reproduces;
    const char *cast;    /* cast profile of the element cast */
    unsigned cast_mods;  /* QC_MOD_* */
    const char *sf_cast; /* nvfp4: cast profile of the e4m3 block scale */
    /* elem_max 0: the element format's largest finite value; clamp_max 0: elem_max;
     * pow2_policy.e8m0_emax -1: the element's emax; pow2: the rule of ue8m0=1 (tiled recipes) */
    qc_recipe_policy policy;
    qc_provenance of;
} qc_recipe_profile;

int qc_recipe_profile_count(void);
const qc_recipe_profile *qc_recipe_profile_at(int i);
const qc_recipe_profile *qc_recipe_profile_find(const char *name, qc_recipe r); /* NULL when none */
const char *qc_recipe_default_profile(qc_recipe r);

/* The full policy of a row for element format elem (-1: the row's) and the ue8m0 switch. */
qc_recipe_policy qc_recipe_profile_policy(const qc_recipe_profile *p, int elem, int ue8m0);

#ifdef __cplusplus
}
#endif

#endif
