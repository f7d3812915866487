/* cases.h: case files (cases/NAME.json) and their expansion into instances, like benchdnn's
 * problem lists: a parameter sweep (lists and ranges, cartesian product, constraints), input
 * generators, comparison rules with a written justification, and tiers. */
#ifndef QC_CASES_H
#define QC_CASES_H

#include <stdint.h>

#include "generate.h"
#include "params.h"

#define QC_MAX_VALUES 64
#define QC_MAX_INPUTS 8
#define QC_MAX_COMPARES 8
#define QC_MAX_CONSTRAINTS 8
#define QC_MAX_VECTORS 4096
/* An instance id, "case[k=v,...]", is complete up to this length; a longer one keeps its start
 * and ends in "~" and 16 hex digits of the whole id's hash, so ids stay unique. */
#define QC_ID_LEN 512

enum { QC_TIER_QUICK = 1, QC_TIER_FULL = 2, QC_TIER_BRINGUP = 4 };

typedef struct qc_sweep {
    int n;
    char key[QC_MAX_PARAMS][32];
    int nvals[QC_MAX_PARAMS];
    char vals[QC_MAX_PARAMS][QC_MAX_VALUES][QC_PARAM_LEN];
} qc_sweep;

typedef struct qc_compare_spec {
    char output[QC_NAME_LEN];
    char rule[16];            /* bitexact | budget | bound (docs/cases.md "compare") */
    char why[256];            /* the written justification of the rule */
    char block[64];           /* expression: block length along the last dim, for coordinates */
    char midpoint_input[QC_NAME_LEN]; /* input whose value decides "tie flip" (cast: x) */
    int degenerate_ok;        /* a constant expected output is what this case means to test */
    /* budget: differences of one class allowed up to a documented fraction of the elements */
    int budget_class;         /* qc_mismatch_class, -1 when none */
    double budget;            /* the fraction of elements allowed in budget_class */
    char coupled_to[QC_NAME_LEN]; /* budget on an element output: its blocks' scale output; elements of
                                     a block whose scale used the budget are "scale_coupled", allowed */
} qc_compare_spec;

/* An expected-value table: independent oracle vectors (cases/cast_edges.tsv). */
typedef struct qc_vector {
    char format[16], policy[96], source[128];
    uint32_t input, expected;
} qc_vector;

typedef struct qc_case {
    char path[256];
    char name[64];
    char op[64];
    char doc[2048]; /* the whole "doc" text: a longer one is an error, never cut */
    int tiers;
    qc_sweep params;
    qc_sweep tier_params[3]; /* overrides per tier: quick, full, bringup */
    int nconstraints;
    char constraints[QC_MAX_CONSTRAINTS][160];
    int ninputs;
    qc_input_spec inputs[QC_MAX_INPUTS];
    int ncompares;
    qc_compare_spec compares[QC_MAX_COMPARES];
    /* vectors cases: inputs and expected outputs come from a table, grouped by (format, policy) */
    int nvectors;
    qc_vector *vectors;
} qc_case;

typedef struct qc_instance {
    const qc_case *c;
    qc_params params;
    char id[QC_ID_LEN];
    uint64_t seed;
    int vec_first, vec_count; /* vectors cases: the group's rows */
} qc_instance;

/* Loads every NAME.json of dir (sorted by name). Returns 0, or 2 with a message naming the
 * file, key and bad value, or the folder when it holds no case file (nothing would be checked). */
int qc_cases_load_dir(const char *dir, qc_case **cases, int *ncases, char *err, size_t errlen);
int qc_case_load(const char *path, const char *dir, qc_case *c, char *err, size_t errlen);
/* The same from len bytes of JSON text (path names it in messages; dir holds its vectors). */
int qc_case_parse(const char *path, const char *dir, const char *text, size_t len, qc_case *c, char *err,
                  size_t errlen);
void qc_cases_free(qc_case *cases, int n);

/* --case NAME[,NAME..]: whether name is one of the list (exactly), and 0 when every name of the list
 * is a loaded case, else 2 with err naming the first that is not. */
int qc_case_in_list(const char *name, const char *list);
int qc_case_list_known(const qc_case *cases, int n, const char *list, char *err, size_t errlen);

/* The most combinations one case's sweep may make for one tier, counted before any instance is
 * built (the product of its value counts, before constraints; docs/cases.md "params"). The
 * --max-instances N option of the commands that expand cases sets it, up to the hard limit. */
#define QC_MAX_INSTANCES_DEFAULT 65536
#define QC_MAX_INSTANCES_LIMIT (1 << 24)
void qc_cases_set_max_instances(uint64_t n);
uint64_t qc_cases_max_instances(void);

/* Expands one case for a tier into instances (appended to *inst). 0, or 2 with err (a sweep over
 * the limit above, a constraint that fails to evaluate, out of memory). */
int qc_case_expand(const qc_case *c, int tier, uint64_t seed, qc_instance **inst, int *n, int *cap, char *err,
                   size_t errlen);

int qc_tier_from_name(const char *name); /* bit, or -1 */

/* 0 when every key of p is a parameter of c, else 2 with err naming the key and listing c's. */
int qc_case_check_keys(const qc_case *c, const qc_params *p, char *err, size_t errlen);
/* The instance of c with params p whatever the sweep holds (constraints checked); 0 or 2. */
int qc_instance_from_params(const qc_case *c, const qc_params *p, uint64_t seed, qc_instance *x, char *err,
                            size_t errlen);

/* The id of the instance of c with params p (QC_ID_LEN). */
void qc_instance_name(const qc_case *c, const qc_params *p, char id[QC_ID_LEN]);

#endif
