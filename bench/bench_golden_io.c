/* bench_golden_io.c: the HDF5 path of the exec backend against a plain file on the same disk, in
 * one run (the figure: >= 1 GB/s through the HDF5 files on large tensors). For a tensor of MiB
 * mebibytes (default 512): write it as an exec batch file (qc_golden_write, ephemeral:
 * contiguous, no filters, no fsync) and read it back as outputs (qc_golden_read_outputs); then the same
 * bytes with fwrite + fread (no fsync either way). Prints GB/s of each and the ratio, median of 3 rounds, interleaved.
 *   bench_golden_io [MiB] [DIR]      (DIR default: $TMPDIR or /tmp) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "golden.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long mib = argc > 1 ? atol(argv[1]) : 512;
    const char *dir = argc > 2 ? argv[2] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    int64_t n = (int64_t)mib << 18; /* f32 elements */
    char h5[1024], raw[1024], err[512];
    snprintf(h5, sizeof h5, "%s/bench_golden_io.h5", dir);
    snprintf(raw, sizeof raw, "%s/bench_golden_io.bin", dir);
    qc_tensor_set set = {0};
    qc_tensor t;
    if (!qc_golden_available() || qc_tensor_alloc(&t, "y", QC_ST_F32, "f32", 1, &n)) {
        printf("SKIPPED: %s\n", qc_golden_available() ? "out of memory" : "built without HDF5");
        return 77;
    }
    for (int64_t i = 0; i < n; i++)
        ((float *)t.data)[i] = (float)(i % 1000) * 0.001f;
    qc_set_add(&set, &t);
    qc_golden_meta m = {.ephemeral = 1};
    snprintf(m.case_name, sizeof m.case_name, "bench");
    snprintf(m.op, sizeof m.op, "cast");
    snprintf(m.params_json, sizeof m.params_json, "{}");
    double th[3], tr[3], tw[3], bytes = (double)n * 4 * 2; /* written once, read once */
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        qc_tensor_set back = {0};
        int bad = qc_golden_write(h5, &m, NULL, &set, NULL, NULL, 0, err, sizeof err);
        tw[r] = now() - t0;
        if (bad || qc_golden_read_outputs(h5, &back, err, sizeof err)) {
            printf("FAILED: %s\n", err);
            return 1;
        }
        th[r] = now() - t0;
        size_t nb = set.t[0].nbytes;
        int same = back.n == 1 && back.t[0].nbytes == nb && !memcmp(back.t[0].data, set.t[0].data, nb);
        qc_set_free(&back);
        if (!same) {
            printf("FAILED: the file read back differs\n");
            return 1;
        }
        t0 = now();
        FILE *f = fopen(raw, "wb");
        size_t w = f ? fwrite(set.t[0].data, 4, (size_t)n, f) : 0;
        if (f)
            fclose(f);
        f = fopen(raw, "rb");
        void *buf = malloc((size_t)n * 4); /* a fresh buffer, as the HDF5 reader allocates its tensor */
        size_t rd = f && buf ? fread(buf, 4, (size_t)n, f) : 0;
        if (f)
            fclose(f);
        free(buf);
        tr[r] = now() - t0;
        if (w != (size_t)n || rd != (size_t)n) {
            printf("FAILED: plain file I/O\n");
            return 1;
        }
    }
    qsort(th, 3, sizeof th[0], cmp);
    qsort(tr, 3, sizeof tr[0], cmp);
    qsort(tw, 3, sizeof tw[0], cmp);
    printf("tensor %ld MiB, write + read, median of 3 (%s):\n", mib, dir);
    printf("  HDF5 (exec batch file: contiguous, no filters, no fsync): %.2f GB/s\n", bytes / th[1] / 1e9);
    printf("  plain file (fwrite + fread):                              %.2f GB/s\n", bytes / tr[1] / 1e9);
    printf("  ratio HDF5 / plain: %.2f (of the HDF5 time, the write takes %.0f%%)\n", tr[1] / th[1], 100 * tw[1] / th[1]);
    unlink(h5), unlink(raw);
    qc_set_free(&set);
    return 0;
}
