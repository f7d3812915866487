/* fuzz_outputs.c: libFuzzer target for what `qcheck verify` does with an external runner's
 * outputs file: the lenient HDF5 reader (qc_golden_read_outputs, in a forked child), the dtype
 * check, the adoption of the op's dtypes and shapes (qc_outputs_adopt_dtypes) and the judgement
 * against the expected outputs of one quant_nvfp4 instance (three outputs: q, scale, gscale).
 * The input is an HDF5 file. */
#include "cases.h"
#include "fuzz_hdf5.h"
#include "golden.h"
#include "golden_io.h"
#include "runner.h"

static char path[300];
static qc_case c;
static qc_instance inst;
static qc_tensor_set inputs, expected;
static int ready;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    char err[1024];
    qc_params p = {0};
    const char *dir = fuzz_scratch();
    snprintf(path, sizeof path, "%s/out.h5", dir ? dir : "/tmp");
    if (dir)
        fuzz_warm_hdf5(dir);
    ready = qc_case_load(QC_CASES_DIR "/quant_nvfp4.json", QC_CASES_DIR, &c, err, sizeof err) == 0 &&
            qc_params_parse(&p, "recipe=nvfp4,profile=sgl-kernel,dist=normal,rows=3,cols=64", err, sizeof err) == 0 &&
            qc_instance_from_params(&c, &p, 0, &inst, err, sizeof err) == 0 &&
            qc_instance_expected(&inst, 0, &inputs, &expected, err, sizeof err) == 0;
    if (!ready)
        fprintf(stderr, "fuzz_outputs: cannot make the expected outputs: %s\n", err);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static qc_result r;
    qc_tensor_set got = {0};
    char err[1024];
    if (!ready || fuzz_write(path, data, size))
        return 0;
    if (qc_golden_read_outputs(path, &got, err, sizeof err) == 0 &&
        qc_check_dtypes(path, "/outputs", &got, err, sizeof err) == 0 &&
        qc_outputs_adopt_dtypes(&got, &expected, err, sizeof err) == 0) {
        memset(&r, 0, sizeof r);
        qc_judge(&c, &inst.params, &inputs, &expected, &got, 8, &r);
    }
    qc_set_free(&got);
    return 0;
}
