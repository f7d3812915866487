/* test_golden.c: the HDF5 golden store (golden/golden.h) against what it promises.
 *
 * Expected values never come from the store itself: tensors are random bytes made here, the
 * corruptions are made with the plain HDF5 API (chunk addresses from H5Dget_chunk_info, attributes
 * rewritten with H5Awrite/H5Adelete), and "untouched" means byte-identical to a copy taken before.
 * Exit 0 all passed, 1 a check failed (the seed is printed), 77 built without HDF5. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden.h"

#if QC_HAVE_HDF5
#include <hdf5.h>
#endif

static uint64_t seed = 0x9E3779B97F4A7C15ull;

#include "check.h"

/* splitmix64 (Steele, Lea, Flood 2014): a replayable stream of random bytes. */
static uint64_t next_u64(void)
{
    uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void add_random(qc_tensor_set *set, const char *name, qc_storage st, const char *dtype,
                       int ndim, const int64_t *shape)
{
    qc_tensor t;
    if (qc_tensor_alloc(&t, name, st, dtype, ndim, shape) != 0) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    unsigned char *p = t.data;
    for (size_t i = 0; i < t.nbytes; i++)
        p[i] = (unsigned char)next_u64();
    snprintf(t.layout, sizeof t.layout, "%s", ndim == 4 ? "sf128x4" : "row_major");
    qc_set_add(set, &t);
}

static void fill_meta(qc_golden_meta *m, size_t params_len)
{
    memset(m, 0, sizeof *m);
    snprintf(m->qcheck_version, sizeof m->qcheck_version, "0.1.0");
    m->format_version = QC_GOLDEN_FORMAT_VERSION;
    snprintf(m->case_name, sizeof m->case_name, "nvfp4_moe");
    snprintf(m->op, sizeof m->op, "moe.nvfp4");
    /* A long params object: {"k":"xxxx..."} of params_len bytes, with JSON punctuation. */
    size_t k = (size_t)snprintf(m->params_json, sizeof m->params_json, "{\"note\":\"a<b&c \\\"q\\\" ");
    for (; k + 3 < params_len && k + 3 < sizeof m->params_json; k++)
        m->params_json[k] = (char)('a' + k % 26);
    memcpy(m->params_json + k, "\"}", 3);
    m->seed = 0xFEDCBA9876543210ull; /* above 2^53: must survive exactly */
    snprintf(m->profile, sizeof m->profile, "flashinfer-te");
    snprintf(m->backend, sizeof m->backend, "ref");
    snprintf(m->git_revision, sizeof m->git_revision, "596e623deadbeef");
    snprintf(m->created, sizeof m->created, "2025-01-02T03:04:05Z");
}

typedef struct golden {
    qc_golden_meta m;
    qc_tensor_set in, out, st[2];
} golden;

/* Every storage, a 4-d tensor, a 0-element one, a scalar, one of several chunks (> 1 MiB), and
 * names written out of alphabetical order (the read must keep the written order). */
static void make_golden(golden *g)
{
    memset(g, 0, sizeof *g);
    fill_meta(&g->m, 2000);
    add_random(&g->in, "zeta_u8", QC_ST_U8, "e4m3fn", 2, (int64_t[]){7, 33});
    add_random(&g->in, "alpha_u16", QC_ST_U16, "bf16", 1, (int64_t[]){1001});
    add_random(&g->in, "i32", QC_ST_I32, "i32", 3, (int64_t[]){2, 3, 5});
    add_random(&g->in, "u32", QC_ST_U32, "u32", 1, (int64_t[]){17});
    add_random(&g->in, "f32_4d", QC_ST_F32, "f32", 4, (int64_t[]){2, 3, 4, 5});
    add_random(&g->in, "f64", QC_ST_F64, "f64", 2, (int64_t[]){3, 3});
    add_random(&g->in, "empty", QC_ST_F32, "f32", 2, (int64_t[]){0, 8});
    add_random(&g->in, "scalar", QC_ST_F32, "f32", 0, NULL);
    add_random(&g->out, "y", QC_ST_U8, "e2m1x2", 2, (int64_t[]){1024, 1500}); /* 1.5 MB */
    add_random(&g->out, "scale", QC_ST_U8, "e8m0", 2, (int64_t[]){64, 4});
    add_random(&g->st[0], "routed", QC_ST_I32, "i32", 2, (int64_t[]){16, 2});
    add_random(&g->st[0], "gate_up", QC_ST_F32, "f32", 2, (int64_t[]){16, 64});
    add_random(&g->st[1], "act", QC_ST_U16, "f16", 1, (int64_t[]){0});
}

static void free_golden(golden *g)
{
    qc_set_free(&g->in), qc_set_free(&g->out), qc_set_free(&g->st[0]), qc_set_free(&g->st[1]);
}

static int write_golden(const char *path, const golden *g, char *err, size_t errlen)
{
    const qc_tensor_set *stages[2] = {&g->st[0], &g->st[1]};
    const char *names[2] = {"experts", "activation"};
    return qc_golden_write(path, &g->m, &g->in, &g->out, stages, names, 2, err, errlen);
}

static int tensor_eq(const qc_tensor *a, const qc_tensor *b)
{
    if (strcmp(a->name, b->name) || a->storage != b->storage || strcmp(a->dtype, b->dtype) ||
        strcmp(a->layout, b->layout) || a->ndim != b->ndim || a->nbytes != b->nbytes)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

static void check_set(const char *what, const qc_tensor_set *want, const qc_tensor_set *got)
{
    CHECK(want->n == got->n, "%s: %d tensors written, %d read", what, want->n, got->n);
    for (int i = 0; i < want->n && i < got->n; i++)
        CHECK(tensor_eq(&want->t[i], &got->t[i]), "%s[%d] (%s) differs after the round trip",
              what, i, want->t[i].name);
}

static void check_meta(const qc_golden_meta *a, const qc_golden_meta *b)
{
#define SAME(f) CHECK(strcmp(a->f, b->f) == 0, #f ": wrote '%s', read '%s'", a->f, b->f)
    SAME(qcheck_version); SAME(case_name); SAME(op); SAME(params_json); SAME(profile);
    SAME(backend); SAME(git_revision); SAME(created);
#undef SAME
    CHECK(a->seed == b->seed, "seed: wrote %llx, read %llx", (unsigned long long)a->seed,
          (unsigned long long)b->seed);
    CHECK(b->format_version == QC_GOLDEN_FORMAT_VERSION, "format_version %d", b->format_version);
}

/* ---- files -------------------------------------------------------------------------------- */

static char tmpdir[256];

static const char *tpath(const char *name)
{
    static char bufs[4][512];
    static int k;
    char *p = bufs[k++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *p = NULL;
    *len = 0;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    p = malloc(n > 0 ? (size_t)n : 1);
    if (p && fread(p, 1, (size_t)n, f) == (size_t)n)
        *len = (size_t)n;
    fclose(f);
    return p;
}

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
}

static int same_bytes(const char *a, const char *b)
{
    size_t la, lb;
    unsigned char *pa = slurp(a, &la), *pb = slurp(b, &lb);
    int same = pa && pb && la == lb && memcmp(pa, pb, la) == 0;
    free(pa), free(pb);
    return same;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

/* A read that must fail with rc 2 and an error mentioning every one of the words. */
static void expect_read_error(const char *path, const char *what, const char *w1, const char *w2)
{
    char err[1024] = "";
    qc_golden_meta m;
    qc_tensor_set in = {0}, out = {0};
    int rc = qc_golden_read(path, &m, &in, &out, err, sizeof err);
    if (getenv("QC_TEST_VERBOSE"))
        printf("%-34s -> %s\n", what, err);
    CHECK(rc == QC_GOLDEN_EBADINPUT, "%s: read returned %d (err '%s')", what, rc, err);
    CHECK(strstr(err, path) != NULL, "%s: error does not name the file: '%s'", what, err);
    CHECK(!w1 || strstr(err, w1), "%s: error lacks '%s': '%s'", what, w1, err);
    CHECK(!w2 || strstr(err, w2), "%s: error lacks '%s': '%s'", what, w2, err);
    CHECK(in.n == 0 && out.n == 0, "%s: sets not left empty (%d, %d)", what, in.n, out.n);
    qc_set_free(&in), qc_set_free(&out);
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_round_trip(void)
{
    golden g, r = {0};
    char err[1024] = "";
    make_golden(&g);
    const char *p = tpath("round.h5");
    CHECK(write_golden(p, &g, err, sizeof err) == 0, "write: %s", err);
    CHECK(qc_golden_read(p, &r.m, &r.in, &r.out, err, sizeof err) == 0, "read: %s", err);
    check_meta(&g.m, &r.m);
    check_set("inputs", &g.in, &r.in);
    check_set("outputs", &g.out, &r.out);

    char names[4][QC_NAME_LEN];
    int n = -1;
    CHECK(qc_golden_stage_names(p, names, 4, &n, err, sizeof err) == 0, "stage names: %s", err);
    CHECK(n == 2 && !strcmp(names[0], "experts") && !strcmp(names[1], "activation"),
          "stage names: %d, '%s' '%s'", n, n > 0 ? names[0] : "", n > 1 ? names[1] : "");
    for (int i = 0; i < 2; i++) {
        CHECK(qc_golden_read_stage(p, i ? "activation" : "experts", &r.st[i], err, sizeof err) == 0,
              "read stage %d: %s", i, err);
        check_set(i ? "stage activation" : "stage experts", &g.st[i], &r.st[i]);
    }
    qc_tensor_set outs = {0};
    CHECK(qc_golden_read_outputs(p, &outs, err, sizeof err) == 0, "read_outputs: %s", err);
    check_set("read_outputs", &g.out, &outs);
    qc_set_free(&outs);
    qc_tensor_set none = {0};
    CHECK(qc_golden_read_stage(p, "nope", &none, err, sizeof err) == QC_GOLDEN_EBADINPUT &&
              strstr(err, "/stages/nope"), "missing stage: '%s'", err);
    free_golden(&g), free_golden(&r);
}

/* Same content, same bytes: no timestamps, no uninitialized heap space in the file. */
static void test_deterministic(void)
{
    golden g, h;
    char err[1024] = "";
    uint64_t s0 = seed;
    make_golden(&g);
    seed = s0;
    make_golden(&h); /* equal content in separately allocated buffers */
    CHECK(write_golden(tpath("det1.h5"), &g, err, sizeof err) == 0, "write 1: %s", err);
    sleep(1); /* a timestamp (seconds) in the file would now differ */
    CHECK(write_golden(tpath("det2.h5"), &h, err, sizeof err) == 0, "write 2: %s", err);
    CHECK(same_bytes(tpath("det1.h5"), tpath("det2.h5")), "same content gave different files");
    h.m.seed ^= 1; /* and the comparison can fail */
    CHECK(write_golden(tpath("det3.h5"), &h, err, sizeof err) == 0, "write 3: %s", err);
    CHECK(!same_bytes(tpath("det1.h5"), tpath("det3.h5")), "a different seed gave the same file");
    free_golden(&g), free_golden(&h);
}

#if QC_HAVE_HDF5
/* Runs fn on the file opened read-write with the plain HDF5 API (the test's own corruptor). */
static void with_file(const char *path, void (*fn)(hid_t f, void *arg), void *arg)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) {
        fprintf(stderr, "cannot open %s for the test\n", path);
        exit(1);
    }
    fn(f, arg);
    H5Fclose(f);
}

static void chunk_of_y(hid_t f, void *arg)
{
    haddr_t *addr_size = arg;
    hid_t ds = H5Dopen2(f, "/outputs/y", H5P_DEFAULT), sp = H5Dget_space(ds);
    hsize_t off[2];
    unsigned mask;
    hsize_t size = 0;
    if (H5Dget_chunk_info(ds, sp, 0, off, &mask, &addr_size[0], &size) < 0)
        addr_size[0] = HADDR_UNDEF;
    addr_size[1] = size;
    H5Sclose(sp), H5Dclose(ds);
}

static void test_corrupt_chunk(void)
{
    golden g;
    char err[1024] = "";
    make_golden(&g);
    const char *p = tpath("corrupt.h5");
    CHECK(write_golden(p, &g, err, sizeof err) == 0, "write: %s", err);
    haddr_t as[2] = {HADDR_UNDEF, 0};
    with_file(p, chunk_of_y, as);
    CHECK(as[0] != HADDR_UNDEF && as[1] > 16, "no chunk 0 in /outputs/y");
    size_t len;
    unsigned char *bytes = slurp(p, &len);
    CHECK(bytes && as[0] + as[1] <= len, "chunk outside the file");
    if (bytes && as[0] != HADDR_UNDEF && as[0] + as[1] <= len) {
        bytes[as[0] + as[1] / 2] ^= 0x10;
        spit(p, bytes, len);
        expect_read_error(p, "flipped byte in a chunk", "/outputs/y", "Fletcher32");
    }
    free(bytes);
    free_golden(&g);
}

static void test_truncated(void)
{
    golden g;
    char err[1024] = "";
    make_golden(&g);
    const char *p = tpath("full.h5"), *q = tpath("truncated.h5");
    CHECK(write_golden(p, &g, err, sizeof err) == 0, "write: %s", err);
    size_t len;
    unsigned char *bytes = slurp(p, &len);
    size_t cuts[] = {0, 7, 100, 2048, len / 2, len - 1};
    for (size_t i = 0; bytes && i < sizeof cuts / sizeof cuts[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "truncated to %zu of %zu bytes", cuts[i], len);
        spit(q, bytes, cuts[i]);
        expect_read_error(q, what, cuts[i] >= 100 ? "truncated" : "not an HDF5 file", NULL);
    }
    free(bytes);
    free_golden(&g);
}

static void rewrite_shape(hid_t f, void *arg)
{
    (void)arg;
    hid_t ds = H5Dopen2(f, "/inputs/i32", H5P_DEFAULT), a = H5Aopen(ds, "shape", H5P_DEFAULT);
    int64_t wrong[3] = {2, 3, 6}; /* the data is 2x3x5 */
    H5Awrite(a, H5T_NATIVE_INT64, wrong);
    H5Aclose(a), H5Dclose(ds);
}

static void delete_dtype(hid_t f, void *arg)
{
    (void)arg;
    hid_t ds = H5Dopen2(f, "/outputs/scale", H5P_DEFAULT);
    H5Adelete(ds, "qc_dtype");
    H5Dclose(ds);
}

static void delete_seed(hid_t f, void *arg) { (void)arg, H5Adelete(f, "seed"); }

static void future_version(hid_t f, void *arg)
{
    (void)arg;
    hid_t a = H5Aopen(f, "format_version", H5P_DEFAULT);
    int v = 99;
    H5Awrite(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
}

static void add_int8_dataset(hid_t f, void *arg)
{
    (void)arg;
    hsize_t n = 4;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ds = H5Dcreate2(f, "/inputs/int8", H5T_STD_I8LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT);
    H5Dclose(ds), H5Sclose(sp);
}

/* Each edit on a fresh, valid golden; the read must name what the edit broke. */
static void test_edited(void)
{
    static const struct {
        void (*edit)(hid_t, void *);
        const char *what, *w1, *w2;
    } edits[] = {
        {rewrite_shape, "shape attribute disagrees", "/inputs/i32", "shape"},
        {delete_dtype, "qc_dtype deleted", "/outputs/scale", "qc_dtype"},
        {delete_seed, "root seed deleted", "seed", "missing"},
        {future_version, "format_version 99", "format_version 99", "not supported"},
        {add_int8_dataset, "int8 dataset", "/inputs/int8", "storage"},
    };
    golden g;
    char err[1024] = "";
    make_golden(&g);
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        const char *p = tpath("edited.h5");
        CHECK(write_golden(p, &g, err, sizeof err) == 0, "write: %s", err);
        with_file(p, edits[i].edit, NULL);
        expect_read_error(p, edits[i].what, edits[i].w1, edits[i].w2);
        if (edits[i].edit == rewrite_shape || edits[i].edit == future_version) {
            qc_tensor_set outs = {0};
            CHECK(qc_golden_read_outputs(p, &outs, err, sizeof err) == 0 ||
                      edits[i].edit == future_version, "read_outputs: %s", err);
            qc_set_free(&outs); /* /inputs/i32 is not read here; a future version is refused */
            CHECK(edits[i].edit != future_version || strstr(err, "format_version 99"),
                  "read_outputs accepted format_version 99: '%s'", err);
        }
    }
    free_golden(&g);
}
#endif

static void test_not_hdf5(void)
{
    const char *p = tpath("text.h5");
    spit(p, "this is not an HDF5 file, just text\n", 36);
    expect_read_error(p, "text file", "not an HDF5 file", NULL);
    expect_read_error(tpath("absent.h5"), "missing file", "No such file", NULL);
}

/* A failed write leaves an existing golden byte-identical and no temporary file behind. */
static void expect_write_error(const char *p, const golden *g, const char *what, const char *word)
{
    char err[1024] = "";
    int before = count_entries(tmpdir);
    int rc = write_golden(p, g, err, sizeof err);
    if (getenv("QC_TEST_VERBOSE"))
        printf("%-34s -> %s\n", what, err);
    CHECK(rc == QC_GOLDEN_EBADINPUT, "%s: write returned %d", what, rc);
    CHECK(strstr(err, word) != NULL, "%s: error lacks '%s': '%s'", what, word, err);
    CHECK(count_entries(tmpdir) == before, "%s: %d entries before, %d after (temp file left?)",
          what, before, count_entries(tmpdir));
}

static void test_atomic(void)
{
    golden g;
    char err[1024] = "";
    make_golden(&g);
    const char *p = tpath("keep.h5"), *copy = tpath("keep.copy");
    CHECK(write_golden(p, &g, err, sizeof err) == 0, "write: %s", err);
    size_t len;
    unsigned char *orig = slurp(p, &len);
    spit(copy, orig, len);
    free(orig);

    /* Midway failures: the inputs are in the temporary file when the outputs turn out bad. */
    g.out.t[1].nbytes--;
    expect_write_error(p, &g, "nbytes off by one", "/outputs/scale");
    g.out.t[1].nbytes++;
    snprintf(g.out.t[1].name, sizeof g.out.t[1].name, "y"); /* duplicate: HDF5 itself refuses */
    expect_write_error(p, &g, "duplicate dataset", "/outputs/y");
    snprintf(g.out.t[1].name, sizeof g.out.t[1].name, "scale");
    snprintf(g.st[1].t[0].dtype, sizeof g.st[1].t[0].dtype, "f32"); /* f32 stored as u16 */
    expect_write_error(p, &g, "dtype/storage mismatch", "/stages/activation/act");
    snprintf(g.st[1].t[0].dtype, sizeof g.st[1].t[0].dtype, "f16");
    CHECK(same_bytes(p, copy), "a failed write changed the existing golden");

    expect_write_error(tpath("no/such/dir/x.h5"), &g, "missing directory", "No such file");
    mkdir(tpath("adir"), 0777);
    expect_write_error(tpath("adir"), &g, "target is a directory", "Is a directory");
    CHECK(count_entries(tpath("adir")) == 0, "temporary file left in adir");
    rmdir(tpath("adir"));
    free_golden(&g);
}

static void test_writer_rejects(void)
{
    golden g;
    make_golden(&g);
    const char *p = tpath("rejected.h5");
    g.in.t[0].ndim = 5;
    expect_write_error(p, &g, "ndim 5", "ndim 5");
    g.in.t[0].ndim = 2;
    snprintf(g.in.t[0].name, sizeof g.in.t[0].name, "a/b");
    expect_write_error(p, &g, "name with /", "a/b");
    snprintf(g.in.t[0].name, sizeof g.in.t[0].name, "zeta_u8");
    memset(g.m.op, 'x', sizeof g.m.op);
    expect_write_error(p, &g, "unterminated op", "op");
    CHECK(access(p, F_OK) != 0, "a rejected write created the file");
    free_golden(&g);
}

static void remove_all(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            remove(tpath(e->d_name));
    if (d)
        closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    if (!qc_golden_available()) {
        printf("SKIPPED: qcheck was built without HDF5 (install libhdf5-dev)\n");
        return 77;
    }
    if (argc > 1)
        seed = strtoull(argv[1], NULL, 0);
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/qc_golden_XXXXXX", base);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    uint64_t seed0 = seed;
    test_round_trip();
    test_deterministic();
#if QC_HAVE_HDF5
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    test_corrupt_chunk();
    test_truncated();
    test_edited();
#endif
    test_not_hdf5();
    test_atomic();
    test_writer_rejects();
    if (failures) {
        fprintf(stderr, "test_golden: %d checks failed (seed 0x%llx, files kept in %s)\n",
                failures, (unsigned long long)seed0, tmpdir);
        return 1;
    }
    remove_all(tmpdir);
    printf("test_golden: all checks passed (seed 0x%llx)\n", (unsigned long long)seed0);
    return 0;
}
