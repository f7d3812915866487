/* golden_writer.c: writes one golden whose every value follows a formula, for
 * tests/test_golden_h5py.py to recompute independently with numpy and compare through h5py.
 * usage: golden_writer OUT.h5; exit 0 written, 2 error, 77 built without HDF5.
 *        golden_writer --read-outputs FILE.h5   prints what qc_golden_read_outputs reads.
 * The formulas (element i of the row-major data, all arithmetic modulo the storage width):
 *   /inputs/codes  u8  e4m3fn [3,5,7]    (37 i + 11) mod 2^8
 *   /inputs/bits   u16 bf16   [4,6]      (40503 i + 7) mod 2^16
 *   /inputs/idx    i32 i32    [10]       7919 i - 40000
 *   /inputs/hash   u32 u32    [2,2,2,2]  2654435761 i mod 2^32
 *   /inputs/x      f32 f32    [8,9]      i/4 - 5          (exact in binary32)
 *   /inputs/acc    f64 f64    [5]        i/8 - 1000
 *   /inputs/none   u8  e8m0   [0,4]      (no elements)
 *   /outputs/q     u8  e2m1x2 [16,8]     13 i mod 2^8,  layout sf128x4
 *   /outputs/s     u8  e8m0   [16]       127 + i mod 3
 *   /stages/experts/routed i32 [4,2]     i mod 3 */
#include <stdio.h>
#include <string.h>

#include "golden.h"

static qc_tensor *add(qc_tensor_set *set, const char *name, qc_storage st, const char *dtype,
                      int ndim, const int64_t *shape)
{
    qc_tensor t;
    if (qc_tensor_alloc(&t, name, st, dtype, ndim, shape) != 0)
        return NULL;
    return qc_set_add(set, &t);
}

static void fill(qc_tensor *t)
{
    int64_t n = qc_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)i;
        const char *nm = t->name;
        if (!strcmp(nm, "codes")) ((uint8_t *)t->data)[i] = (uint8_t)(37 * u + 11);
        if (!strcmp(nm, "bits")) ((uint16_t *)t->data)[i] = (uint16_t)(40503 * u + 7);
        if (!strcmp(nm, "idx")) ((int32_t *)t->data)[i] = (int32_t)(7919 * i - 40000);
        if (!strcmp(nm, "hash")) ((uint32_t *)t->data)[i] = (uint32_t)(2654435761u * u);
        if (!strcmp(nm, "x")) ((float *)t->data)[i] = (float)i / 4.0f - 5.0f;
        if (!strcmp(nm, "acc")) ((double *)t->data)[i] = (double)i / 8.0 - 1000.0;
        if (!strcmp(nm, "q")) ((uint8_t *)t->data)[i] = (uint8_t)(13 * u);
        if (!strcmp(nm, "s")) ((uint8_t *)t->data)[i] = (uint8_t)(127 + u % 3);
        if (!strcmp(nm, "routed")) ((int32_t *)t->data)[i] = (int32_t)(i % 3);
    }
}

/* FNV-1a 64 of the data bytes (Fowler/Noll/Vo, as published at isthe.com/chongo/tech/comp/fnv). */
static uint64_t fnv1a(const void *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
    return h;
}

/* --read-outputs FILE: qc_golden_read_outputs on a file h5py wrote; one line per tensor. */
static int read_outputs(const char *path)
{
    qc_tensor_set out = {0};
    char err[1024];
    if (qc_golden_read_outputs(path, &out, err, sizeof err)) {
        printf("ERROR %s\n", err);
        return 2;
    }
    for (int i = 0; i < out.n; i++) {
        const qc_tensor *t = &out.t[i];
        printf("%s %s %s %s [", t->name, qc_storage_name(t->storage), t->dtype, t->layout);
        for (int d = 0; d < t->ndim; d++)
            printf(d ? ",%lld" : "%lld", (long long)t->shape[d]);
        printf("] %016llx\n", (unsigned long long)fnv1a(t->data, t->nbytes));
    }
    qc_set_free(&out);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--read-outputs"))
        return qc_golden_available() ? read_outputs(argv[2]) : 77;
    if (argc != 2) {
        fprintf(stderr, "usage: golden_writer OUT.h5\n");
        return 2;
    }
    if (!qc_golden_available()) {
        printf("SKIPPED: qcheck was built without HDF5\n");
        return 77;
    }
    qc_golden_meta m = {.format_version = QC_GOLDEN_FORMAT_VERSION,
                        .seed = 18446744073709551557ull}; /* the largest 64-bit prime */
    snprintf(m.qcheck_version, sizeof m.qcheck_version, "0.1.0");
    snprintf(m.case_name, sizeof m.case_name, "cast_fp8");
    snprintf(m.op, sizeof m.op, "cast");
    snprintf(m.params_json, sizeof m.params_json,
             "{\"to\":\"e4m3fn\",\"profile\":\"ptx\",\"n\":105,\"note\":\"\\u00e9 <&>\"}");
    snprintf(m.profile, sizeof m.profile, "ptx");
    snprintf(m.backend, sizeof m.backend, "ref");
    snprintf(m.git_revision, sizeof m.git_revision, "0123456789abcdef");
    snprintf(m.created, sizeof m.created, "2025-06-01T12:00:00Z");

    qc_tensor_set in = {0}, out = {0}, st = {0};
    int ok = add(&in, "codes", QC_ST_U8, "e4m3fn", 3, (int64_t[]){3, 5, 7}) &&
             add(&in, "bits", QC_ST_U16, "bf16", 2, (int64_t[]){4, 6}) &&
             add(&in, "idx", QC_ST_I32, "i32", 1, (int64_t[]){10}) &&
             add(&in, "hash", QC_ST_U32, "u32", 4, (int64_t[]){2, 2, 2, 2}) &&
             add(&in, "x", QC_ST_F32, "f32", 2, (int64_t[]){8, 9}) &&
             add(&in, "acc", QC_ST_F64, "f64", 1, (int64_t[]){5}) &&
             add(&in, "none", QC_ST_U8, "e8m0", 2, (int64_t[]){0, 4}) &&
             add(&out, "q", QC_ST_U8, "e2m1x2", 2, (int64_t[]){16, 8}) &&
             add(&out, "s", QC_ST_U8, "e8m0", 1, (int64_t[]){16}) &&
             add(&st, "routed", QC_ST_I32, "i32", 2, (int64_t[]){4, 2});
    if (!ok) {
        fprintf(stderr, "golden_writer: out of memory\n");
        return 2;
    }
    qc_tensor_set *sets[3] = {&in, &out, &st};
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < sets[s]->n; i++)
            fill(&sets[s]->t[i]);
    snprintf(out.t[0].layout, sizeof out.t[0].layout, "sf128x4");

    char err[1024];
    const qc_tensor_set *stages[1] = {&st};
    const char *names[1] = {"experts"};
    int rc = qc_golden_write(argv[1], &m, &in, &out, stages, names, 1, err, sizeof err);
    if (rc)
        fprintf(stderr, "golden_writer: %s\n", err);
    qc_set_free(&in), qc_set_free(&out), qc_set_free(&st);
    return rc;
}
