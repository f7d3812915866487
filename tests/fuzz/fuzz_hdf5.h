/* fuzz_hdf5.h: what the two HDF5 targets share. Every read forks a child (golden/golden.c), and a
 * child of a parent that has never read a file redoes libhdf5's lazy work: symbol bindings, free
 * lists, the error stack. Reading one file the target wrote itself, in process, before fuzzing
 * makes each execution several times cheaper; the reads under test are unchanged (each still
 * forks, from a parent whose libhdf5 has read a trusted file once, as a `golden verify` of many
 * files is after its first). ci/fuzz.sh also sets LD_BIND_NOW=1. */
#ifndef QC_FUZZ_HDF5_H
#define QC_FUZZ_HDF5_H

#include <pthread.h>

#include "fuzz_util.h"
#include "golden.h"

/* The forked reader inherits libFuzzer's death callback: a reader that dies under AddressSanitizer
 * (for one, out of the memory golden.c lets it have: "Failed to mmap") would write a crash-*
 * artifact and the fuzzer's statistics, as if the target had crashed. The target is the parent,
 * which turns the reader's death into an error; so children drop the callback. Weak: the replay
 * build of the quick tests has no sanitizer. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static inline void fuzz_reader_quiet(void)
{
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(NULL);
}

static inline void fuzz_warm_hdf5(const char *dir)
{
    pthread_atfork(NULL, NULL, fuzz_reader_quiet);
    char p[400], err[512];
    qc_golden_meta m = {.qcheck_version = "fuzz", .format_version = QC_GOLDEN_FORMAT_VERSION, .case_name = "warm",
                        .op = "cast", .params_json = "{}", .profile = "ptx", .backend = "ref",
                        .git_revision = "none", .created = "1970-01-01T00:00:00Z"};
    qc_tensor_set in = {0}, out = {0}, a = {0}, b = {0};
    int64_t n = 64;
    snprintf(p, sizeof p, "%s/warm.h5", dir);
    if (qc_tensor_alloc(&in.t[0], "x", QC_ST_F32, "f32", 1, &n) || qc_tensor_alloc(&out.t[0], "y", QC_ST_U8, "e4m3fn", 1, &n))
        return;
    in.n = out.n = 1;
    if (qc_golden_write(p, &m, &in, &out, NULL, NULL, 0, err, sizeof err) == 0) {
        setenv("QCHECK_GOLDEN_INPROCESS", "1", 1);
        qc_golden_read(p, &m, &a, &b, err, sizeof err);
        unsetenv("QCHECK_GOLDEN_INPROCESS");
    }
    qc_set_free(&in), qc_set_free(&out), qc_set_free(&a), qc_set_free(&b);
    unlink(p);
}

#endif
