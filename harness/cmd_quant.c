/* cmd_quant.c: `qcheck quant` and `qcheck dequant` (docs/spec/cli.md "Tool commands"): a recipe and a
 * recipe profile over a raw row-major [M, K] tensor. Files: PREFIX.q (one byte per fp8/fp6 code,
 * FP4 two per byte with the even element in the low nibble), PREFIX.scale (fp32 scales for
 * tensor/token/token_group/block in the scale_layout, e8m0 bytes for mx*, e4m3 bytes for nvfp4),
 * PREFIX.gscale (nvfp4: one fp32, the global dequant scale). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "quant_job.h"
#include "tensor.h"

static void quant_help(const char *cmd)
{
    printf("usage: qcheck %s --recipe RECIPE [--profile P] --shape MxK [--param k=v ...] [--layout MAP] %s\n"
           "Recipes and params (defaults in brackets; docs/spec/cli.md):\n"
           "  tensor       fp8 [e4m3fn] (e4m3fnuz, e5m2), fp8_max [finfo max], static_scale (fp32 dequant scale)\n"
           "  token        fp8, fp8_max\n"
           "  token_group  group [128], fp8 (or e2m1), fp8_max, eps [profile's], ue8m0 [0],\n"
           "               scale_layout [row] (row, col, col_tma, packed_ue8m0)\n"
           "  block        block [128x128], fp8, ue8m0 [0]\n"
           "  mxfp8        elem [e4m3fn] (or e5m2), block [32]\n"
           "  mxfp6        elem [e2m3] (or e3m2), block [32]\n"
           "  mxfp4        block [32]\n"
           "  nvfp4        block [16], gscale_encode or gscale_decode (absent: from the tensor amax), sf [e4m3]\n"
           "               (sf=ue8m0: the flashinfer-fast UE8M0 branch, e8m0 per 16 and no PREFIX.gscale)\n"
           "  --in-dtype f32|bf16|f16   quant input element type [f32]\n"
           "  --layout MAP        PREFIX.scale through a layout map (qcheck layout list), e.g. sf128x4 for\n"
           "                      nvfp4/mx scales; dequant takes the same flag and inverts it\n"
           "Profiles per recipe: qcheck list profiles. Exit 2 when the shape breaks the recipe's rule.\n",
           cmd, strcmp(cmd, "quant") == 0 ? "IN OUT_PREFIX" : "IN_PREFIX OUT");
}

static char *path_with(const char *prefix, const char *ext)
{
    size_t n = strlen(prefix) + strlen(ext) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s", prefix, ext);
    return p;
}

static int write_with(const char *cmd, const char *prefix, const char *ext, const void *data, size_t size)
{
    char *p = path_with(prefix, ext);
    int rc = p ? qc_write_file(cmd, p, data, size) : QC_EXIT_USAGE;
    free(p);
    return rc;
}

static int read_with(const char *cmd, const char *prefix, const char *ext, size_t want, uint8_t **data)
{
    char *p = path_with(prefix, ext);
    size_t size;
    int rc = p ? qc_read_file(cmd, p, want, data, &size) : QC_EXIT_USAGE;
    if (!rc && size != want) {
        qc_error(cmd, "'%s' has %zu bytes, the shape and recipe need %zu", p, size, want);
        free(*data);
        rc = QC_EXIT_USAGE;
    }
    free(p);
    return rc;
}

static int write_outputs(const char *cmd, const qc_quant_job *j, qc_quantized *qz, const char *prefix)
{
    size_t qbytes, sbytes;
    uint8_t *scale;
    char err[512];
    if (qc_quant_job_serialize(j, qz, &qbytes, &scale, &sbytes, err, sizeof err)) {
        qc_error(cmd, "%s", err);
        return QC_EXIT_USAGE;
    }
    static const char *const exts[] = {".q", ".scale", ".gscale"};
    int rc = QC_EXIT_OK;
    for (int k = 0; k < 3 && !rc; k++) { /* every output checked before the first is written */
        char *p = path_with(prefix, exts[k]);
        rc = p ? qc_output_clobbers(cmd, p) : QC_EXIT_USAGE;
        free(p);
    }
    if (!rc)
        rc = write_with(cmd, prefix, ".q", qz->q, qbytes);
    if (!rc)
        rc = write_with(cmd, prefix, ".scale", scale, sbytes);
    if (!rc && j->recipe == QC_RECIPE_NVFP4)
        rc = write_with(cmd, prefix, ".gscale", &qz->gscale, 4);
    free(scale);
    return rc;
}

static float load_input(const uint8_t *p, qc_format f)
{
    if (f == QC_F32) {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    qc_cast_policy c = qcref_default_policy();
    return qcref_decode(f, (uint32_t)p[0] | (uint32_t)p[1] << 8, &c);
}

/* The command line as the params of a quantization (the CLI builds params; the harness's one
 * parser reads them): --recipe, --profile, --in-dtype, --layout, --shape MxK (rows, cols) and
 * every --param k=v. */
static int params_from_command_line(qc_args *a, qc_params *p)
{
    static const char *const direct[] = {"recipe", "profile", "in-dtype", "layout"};
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++)
        if (qc_opt(a, direct[i]) && qc_params_set(p, direct[i], qc_opt(a, direct[i])))
            goto full;
    const char *shape = qc_opt(a, "shape");
    if (!qc_opt(a, "recipe") || !shape) {
        qc_error(a->cmd, "--recipe and --shape are required");
        return QC_EXIT_USAGE;
    }
    char m[QC_PARAM_LEN], k[QC_PARAM_LEN];
    const char *x = strpbrk(shape, "xX");
    if (!x || x == shape || !x[1] || (size_t)(x - shape) >= sizeof m || strlen(x + 1) >= sizeof k) {
        qc_error(a->cmd, "--shape '%s' is not MxK (two non-negative integers, e.g. 4x256)", shape);
        return QC_EXIT_USAGE;
    }
    snprintf(m, sizeof m, "%.*s", (int)(x - shape), shape);
    snprintf(k, sizeof k, "%s", x + 1);
    if (qc_params_set(p, "rows", m) || qc_params_set(p, "cols", k))
        goto full;
    for (int i = 0; i < a->nopt; i++) {
        if (strcmp(a->key[i], "param"))
            continue;
        a->used[i] = 1;
        const char *kv = a->val[i] ? a->val[i] : "", *eq = strchr(kv, '=');
        char key[32];
        if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof key) {
            qc_error(a->cmd, "--param '%s' is not k=v", kv);
            return QC_EXIT_USAGE;
        }
        snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
        if (!strcmp(key, "rows") || !strcmp(key, "cols") || !strcmp(key, "recipe") || !strcmp(key, "profile")) {
            qc_error(a->cmd, "--param %s: give it as --shape / --recipe / --profile", key);
            return QC_EXIT_USAGE;
        }
        if (qc_param(p, key)) { /* as an option given twice: which one was meant? */
            qc_error(a->cmd, "--param %s given twice (or with its own option)", key);
            return QC_EXIT_USAGE;
        }
        if (qc_params_set(p, key, eq + 1))
            goto full;
    }
    return QC_EXIT_OK;
full:
    qc_error(a->cmd, "too many options (at most %d params, values below %d characters)", QC_MAX_PARAMS, QC_PARAM_LEN);
    return QC_EXIT_USAGE;
}

/* The command line of quant and dequant: -1 to go on with the job, else the exit status. */
static int job_from_command_line(qc_args *a, qc_quant_job *j, const char *cmd, int argc, char **argv)
{
    if (qc_parse_args(a, cmd, argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a->help) {
        quant_help(cmd);
        return QC_EXIT_OK;
    }
    qc_params p;
    char err[1024];
    if (params_from_command_line(a, &p) || qc_check_all_used(a))
        return QC_EXIT_USAGE;
    if (qc_quant_job_from_params(&p, 1, j, err, sizeof err)) {
        qc_error(a->cmd, "%s", err);
        return QC_EXIT_USAGE;
    }
    if (a->npos != 2) {
        qc_error(a->cmd, "expected two file arguments, got %d", a->npos);
        return QC_EXIT_USAGE;
    }
    /* quant IN PREFIX, dequant PREFIX OUT: a PREFIX of "" or "dir/" names hidden .q / .scale files */
    const char *prefix = a->pos[strcmp(cmd, "quant") ? 0 : 1], *slash = strrchr(prefix, '/');
    if (!*(slash ? slash + 1 : prefix)) {
        qc_error(a->cmd, "the prefix '%s' names no file (PREFIX.q, PREFIX.scale)", prefix);
        return QC_EXIT_USAGE;
    }
    return -1;
}

/* The input is read and its size checked before anything of the shape's size is allocated, so a
 * huge --shape costs nothing: the file must hold the shape (issue 19). */
int cmd_quant(int argc, char **argv)
{
    qc_args a;
    qc_quant_job j;
    int rc = job_from_command_line(&a, &j, "quant", argc, argv);
    if (rc >= 0)
        return rc;
    uint8_t *in;
    size_t size, n = j.rows * j.cols, w = j.in_dtype == QC_F32 ? 4 : 2; /* n <= 2^40: quant_job.c */
    if (qc_read_file(a.cmd, a.pos[0], n * w, &in, &size))
        return QC_EXIT_USAGE;
    if (size != n * w) {
        qc_error(a.cmd, "input '%s' has %zu bytes, shape %zux%zu of %s needs %zu", a.pos[0], size, j.rows, j.cols,
                 qc_format_name(j.in_dtype), n * w);
        free(in);
        return QC_EXIT_USAGE;
    }
    size_t ns = qcref_recipe_nscales(j.recipe, &j.policy, j.rows, j.cols), scale_bytes = qc_quant_job_scale_bytes(&j, ns);
    size_t need = 4 * n + qc_quant_job_q_bytes(&j) + 4 * ns + scale_bytes; /* each below 2^43: no wrap */
    if (!qc_fits_in_memory(need)) {
        qc_error(a.cmd, "shape %zux%zu with recipe %s needs %zu bytes of memory (%zu scales), more than this machine has",
                 j.rows, j.cols, qc_recipe_name(j.recipe), need, ns);
        free(in);
        return QC_EXIT_USAGE;
    }
    float *x = malloc(4 * n + 4);
    qc_quantized qz;
    rc = QC_EXIT_USAGE;
    if (x && qc_quant_job_alloc(&j, &qz) == 0) {
        for (size_t i = 0; i < n; i++)
            x[i] = load_input(in + i * w, j.in_dtype);
        qcref_quant(j.recipe, &j.policy, x, j.rows, j.cols, j.has_static ? &j.static_scale : NULL,
                    j.has_gscale ? &j.gscale_encode : NULL, &qz);
        rc = write_outputs(a.cmd, &j, &qz, a.pos[1]);
        qc_quant_job_free(&qz);
    } else {
        qc_error(a.cmd, "out of memory for shape %zux%zu", j.rows, j.cols);
        if (x)
            qc_quant_job_free(&qz);
    }
    free(in), free(x);
    return rc;
}

/* The three input files, each checked against the size the shape and recipe give. */
typedef struct dequant_files {
    uint8_t *q, *s, *g;
} dequant_files;

static int read_inputs(const char *cmd, const qc_quant_job *j, const char *prefix, dequant_files *f)
{
    size_t ns = qcref_recipe_nscales(j->recipe, &j->policy, j->rows, j->cols);
    memset(f, 0, sizeof *f);
    if (read_with(cmd, prefix, ".q", qc_quant_job_q_bytes(j), &f->q))
        return QC_EXIT_USAGE;
    if (read_with(cmd, prefix, ".scale", qc_quant_job_scale_bytes(j, ns), &f->s)) {
        free(f->q);
        return QC_EXIT_USAGE;
    }
    if (j->recipe == QC_RECIPE_NVFP4 && read_with(cmd, prefix, ".gscale", 4, &f->g)) {
        free(f->q), free(f->s);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

int cmd_dequant(int argc, char **argv)
{
    qc_args a;
    qc_quant_job j;
    int rc = job_from_command_line(&a, &j, "dequant", argc, argv);
    if (rc >= 0)
        return rc;
    size_t n = j.rows * j.cols;
    dequant_files f;
    if (read_inputs(a.cmd, &j, a.pos[0], &f))
        return QC_EXIT_USAGE;
    qc_quantized qz;
    float *y = malloc(4 * n + 4);
    rc = QC_EXIT_USAGE;
    if (y && qc_quant_job_alloc(&j, &qz) == 0) {
        qc_quant_job_deserialize(&j, f.q, f.s, f.g, &qz);
        qcref_dequant(j.recipe, &j.policy, &qz, y);
        rc = qc_write_file(a.cmd, a.pos[1], y, 4 * n);
        qc_quant_job_free(&qz);
    } else {
        qc_error(a.cmd, "out of memory for shape %zux%zu", j.rows, j.cols);
        if (y)
            qc_quant_job_free(&qz);
    }
    free(y), free(f.q), free(f.s), free(f.g);
    return rc;
}
