/* fuzz_golden.c: libFuzzer target for the HDF5 golden reader (golden/golden.c) as `golden
 * verify` and `verify` use it: the whole file, its stage names and its first stage, each read in a
 * forked child (a crash inside libhdf5 must come back as an error naming the file), then the
 * dtype check of the harness. The input is an HDF5 file. */
#include "fuzz_hdf5.h"
#include "golden.h"
#include "golden_io.h"

static char path[300];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = fuzz_scratch();
    snprintf(path, sizeof path, "%s/in.h5", dir ? dir : "/tmp");
    if (dir)
        fuzz_warm_hdf5(dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    qc_golden_meta m;
    qc_tensor_set in = {0}, out = {0}, st = {0};
    char err[1024], names[QC_GOLDEN_MAX_STAGES][QC_NAME_LEN];
    int n = 0;
    if (fuzz_write(path, data, size))
        return 0;
    if (qc_golden_read(path, &m, &in, &out, err, sizeof err) == 0) {
        qc_check_dtypes(path, "/inputs", &in, err, sizeof err);
        qc_check_dtypes(path, "/outputs", &out, err, sizeof err);
        if (qc_golden_stage_names(path, names, QC_GOLDEN_MAX_STAGES, &n, err, sizeof err) == 0 && n > 0 &&
            qc_golden_read_stage(path, names[0], &st, err, sizeof err) == 0)
            qc_set_free(&st);
    }
    qc_set_free(&in);
    qc_set_free(&out);
    return 0;
}
