/* fuzz_case.c: libFuzzer target for case files (harness/cases.c) and what expanding them runs:
 * the JSON schema, range/pow2 and sweep counting, constraint evaluation (core/params.c) and, for
 * a few small instances, the input generators (harness/generate.c). The input is a case file. */
#include "cases.h"
#include "fuzz_util.h"
#include "generate.h"

static char vectors_dir[300];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = fuzz_scratch();
    /* a vector table the input may name as "vectors": "v.tsv" */
    static const char table[] = "# format\tpolicy\tinput\texpected\tsource\n"
                                "e4m3fn\tptx\t3f800000\t38\tone\n"
                                "e5m2\tml_dtypes,ties=even\t7f800000\t7c\tinf\n";
    if (dir) {
        snprintf(vectors_dir, sizeof vectors_dir, "%s", dir);
        char p[400];
        snprintf(p, sizeof p, "%s/v.tsv", dir);
        fuzz_write(p, table, sizeof table - 1);
    }
    qc_cases_set_max_instances(4096); /* the limit is what is under test, not the machine's memory */
    return 0;
}

/* The inputs of one instance, generated when they are small (the generators are under test; a
 * shape of 2^40 elements is refused by qc_tensor_bytes, which the loader's tests cover). */
static void generate_small(const qc_case *c, const qc_instance *in)
{
    for (int i = 0; i < c->ninputs; i++) {
        int64_t shape[QC_MAX_DIMS] = {0};
        size_t bytes;
        char err[512];
        int ok = 1;
        for (int d = 0; d < c->inputs[i].ndim && ok; d++)
            ok = qc_eval(c->inputs[i].shape[d], &in->params, &shape[d], err, sizeof err) == 0;
        if (!ok || qc_tensor_bytes(c->inputs[i].storage, c->inputs[i].ndim, shape, &bytes) || bytes > (1 << 16))
            continue;
        qc_tensor t;
        if (qc_generate(&c->inputs[i], &in->params, in->seed, &t, err, sizeof err) == 0)
            qc_tensor_free(&t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static qc_case c; /* 600 KB: not on the stack */
    char err[1024];
    if (size > (1 << 16))
        return 0;
    if (qc_case_parse("fuzz.json", vectors_dir, (const char *)data, size, &c, err, sizeof err) == 0)
        for (int t = QC_TIER_QUICK; t <= QC_TIER_BRINGUP; t <<= 1) {
            qc_instance *inst = NULL;
            int n = 0, cap = 0;
            if (qc_case_expand(&c, t, 7, &inst, &n, &cap, err, sizeof err) == 0)
                for (int i = 0; i < n && i < 3; i++)
                    generate_small(&c, &inst[i]);
            free(inst);
        }
    free(c.vectors);
    c.vectors = NULL;
    return 0;
}
