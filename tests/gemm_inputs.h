/* gemm_inputs.h: the generated inputs of the gemm op for the C tests (test_gemm, test_cpu_amx):
 * a [m, k], b [n, k], bias [n], shapes from the params p, tensor i filled with fill[i] at scale[i]
 * from seed + i (harness/generate.c). 0, or 1 with err saying which tensor could not be made. */
#ifndef QC_TESTS_GEMM_INPUTS_H
#define QC_TESTS_GEMM_INPUTS_H

#include <stdio.h>
#include <string.h>

#include "generate.h"
#include "tensor.h"

static int gemm_inputs(const qc_params *p, uint64_t seed, const char *const fill[3], const double scale[3],
                       qc_tensor_set *in, char *err, size_t errlen)
{
    static const char *names[] = {"a", "b", "bias"};
    static const char *shapes[][2] = {{"m", "k"}, {"n", "k"}, {"n", ""}};
    for (int i = 0; i < 3; i++) {
        qc_input_spec s = {0};
        snprintf(s.name, sizeof s.name, "%s", names[i]);
        s.ndim = i == 2 ? 1 : 2;
        snprintf(s.shape[0], sizeof s.shape[0], "%s", shapes[i][0]);
        snprintf(s.shape[1], sizeof s.shape[1], "%s", shapes[i][1]);
        s.storage = QC_ST_F32;
        snprintf(s.fill, sizeof s.fill, "%s", fill[i]);
        snprintf(s.scale, sizeof s.scale, "%g", scale[i]);
        qc_tensor t;
        int used = snprintf(err, errlen, "generate %s: ", names[i]); /* qc_generate writes the why after it */
        if (qc_generate(&s, p, seed + (uint64_t)i, &t, err + used, errlen - (size_t)used))
            return 1;
        qc_set_add(in, &t);
    }
    return 0;
}

#endif
