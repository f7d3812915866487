/* cmd_layout.c: `qcheck layout apply|inverse|list` (docs/spec/cli.md "Tool commands", "Layout maps").
 * Every map comes from the one table of reference/layouts (layouts.c); this file only parses, sizes
 * and moves bytes. A shape the map cannot take is exit 2 with the map's own message naming the rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "layouts/layouts.h"
#include "qc_checked.h"

#define MAX_KV 16

static void layout_help(void)
{
    printf("usage: qcheck layout apply|inverse --map MAP --rows R --cols C [--batch B] [--elem-bytes N]\n"
           "                    [--param k=v ...] IN OUT\n"
           "       qcheck layout list\n"
           "apply: IN is a row-major [B, R, C] tensor of N-byte elements (4-bit maps: C codes per row, two per\n"
           "byte, even code in the low nibble); OUT gets the padded size the map defines. inverse: IN is such a\n"
           "buffer, OUT the [B, R, C] tensor (padding ignored).\n"
           "  --map MAP           a layout map (qcheck layout list)\n"
           "  --rows R --cols C   the source shape of one batch; --batch B experts/batches [1]\n"
           "  --elem-bytes N      element size; default the map's natural element\n"
           "  --param k=v         a map parameter (repeat, or k=v,k=v); defaults in qcheck layout list\n"
           "Padding bytes are zero, except aiter_shuffle_scale_gu (0x7F, as aiter pads) and the maps whose\n"
           "padding the real implementation leaves UNDEFINED (torch.empty); qcheck writes zero there and\n"
           "never compares it:");
    for (int i = 0; i < qcref_layout_count(); i++)
        if (strstr(qcref_layout_at(i)->padding, "ndefined") || strstr(qcref_layout_at(i)->padding, "NDEFINED"))
            printf(" %s", qcref_layout_at(i)->name);
    printf("\nMaps that transform values (deepgemm_packed_ue8m0, deepgemm_sf_transform, marlin_nvfp4_scale)\n"
           "reject inputs outside their domain under strict=1 (exit 2, naming the element).\n");
}

static int list_layouts(void)
{
    for (int i = 0; i < qcref_layout_count(); i++) {
        const qc_layout_desc *d = qcref_layout_at(i);
        printf("%s", d->name);
        for (int k = 0; k < QC_LAYOUT_MAX_PARAMS && d->params[k].name; k++)
            printf(" [%s=%lld]", d->params[k].name, (long long)d->params[k].def);
        printf("\n  %s\n  shapes:  %s\n  padding: %s\n  source:  %s\n", d->summary, d->shapes, d->padding, d->source);
        for (int k = 0; k < QC_LAYOUT_MAX_PARAMS && d->params[k].name; k++)
            printf("  param %s: %s\n", d->params[k].name, d->params[k].doc);
    }
    return QC_EXIT_OK;
}

/* Strict decimal (reference/qc_checked.h): "-1" is never a huge size, "2x" never 2. */
static int parse_int(const char *cmd, const char *what, const char *s, int64_t lo, int64_t *out)
{
    if (qc_parse_i64(s, lo, INT64_MAX, out)) {
        qc_error(cmd, "%s '%s' is not a decimal integer >= %lld that fits 64 bits", what, s ? s : "", (long long)lo);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

/* Collects every --param (each may hold k=v,k=v). The key buffers live in kbuf. */
static int collect_params(qc_args *a, char (*kbuf)[64], const char **keys, int64_t *vals, int *n)
{
    *n = 0;
    for (int i = 0; i < a->nopt; i++) {
        if (strcmp(a->key[i], "param") != 0)
            continue;
        a->used[i] = 1;
        for (const char *s = a->val[i] ? a->val[i] : ""; *s;) {
            const char *end = strchr(s, ','), *eq = strchr(s, '=');
            if (!end)
                end = s + strlen(s);
            if (!eq || eq > end || eq == s || eq - s >= 64 || *n >= MAX_KV) {
                qc_error(a->cmd, "--param '%.*s' is not k=v", (int)(end - s), s);
                return QC_EXIT_USAGE;
            }
            memcpy(kbuf[*n], s, (size_t)(eq - s));
            kbuf[*n][eq - s] = '\0';
            for (int k = 0; k < *n; k++)
                if (!strcmp(keys[k], kbuf[*n])) { /* as an option given twice: which one was meant? */
                    qc_error(a->cmd, "--param %s given twice", kbuf[*n]);
                    return QC_EXIT_USAGE;
                }
            char vbuf[64];
            snprintf(vbuf, sizeof vbuf, "%.*s", (int)(end - eq - 1), eq + 1);
            if (parse_int(a->cmd, "--param value", vbuf, INT64_MIN, &vals[*n]))
                return QC_EXIT_USAGE;
            keys[*n] = kbuf[*n];
            (*n)++;
            s = *end ? end + 1 : end;
        }
    }
    return QC_EXIT_OK;
}

static int plan_from_args(qc_args *a, qc_layout *L)
{
    const char *map = qc_opt(a, "map");
    if (!map) {
        qc_error(a->cmd, "--map is required (qcheck layout list names them)");
        return QC_EXIT_USAGE;
    }
    const qc_layout_desc *d = qcref_layout_find(map);
    if (!d) {
        qc_error(a->cmd, "unknown map '%s' (qcheck layout list names them)", map);
        return QC_EXIT_USAGE;
    }
    int64_t R, C, B = 1, eb = 0;
    const char *bs = qc_opt(a, "batch"), *es = qc_opt(a, "elem-bytes");
    if (parse_int(a->cmd, "--rows", qc_opt(a, "rows"), 1, &R) || parse_int(a->cmd, "--cols", qc_opt(a, "cols"), 1, &C) ||
        (bs && parse_int(a->cmd, "--batch", bs, 1, &B)) || (es && parse_int(a->cmd, "--elem-bytes", es, 1, &eb)))
        return QC_EXIT_USAGE;
    static char kbuf[MAX_KV][64];
    const char *keys[MAX_KV];
    int64_t vals[MAX_KV];
    int n;
    if (collect_params(a, kbuf, keys, vals, &n) || qc_check_all_used(a))
        return QC_EXIT_USAGE;
    char err[512];
    if (eb > 64 || qcref_layout_plan(L, d, B, R, C, (int)eb, keys, vals, n, err, sizeof err)) {
        qc_error(a->cmd, "%s", eb > 64 ? "--elem-bytes must be <= 64" : err);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

static int run(qc_args *a, int inverse)
{
    qc_layout L;
    if (plan_from_args(a, &L))
        return QC_EXIT_USAGE;
    if (a->npos != 3) {
        qc_error(a->cmd, "expected IN and OUT files after %s, got %d arguments", a->pos[0], a->npos - 1);
        return QC_EXIT_USAGE;
    }
    size_t want = inverse ? qcref_layout_dst_bytes(&L) : qcref_layout_src_bytes(&L);
    size_t out_size = inverse ? qcref_layout_src_bytes(&L) : qcref_layout_dst_bytes(&L);
    uint8_t *in;
    size_t size;
    if (qc_read_file(a->cmd, a->pos[1], want, &in, &size))
        return QC_EXIT_USAGE;
    if (size != want) {
        qc_error(a->cmd, "input '%s' has %zu bytes; %s of %s for batch %lld, rows %lld, cols %lld needs %zu", a->pos[1],
                 size, inverse ? "the destination" : "the source", L.desc->name, (long long)L.B, (long long)L.R,
                 (long long)L.C, want);
        free(in);
        return QC_EXIT_USAGE;
    }
    uint8_t *out = malloc(out_size + 1);
    if (!out) {
        free(in);
        qc_error(a->cmd, "out of memory for %zu bytes", out_size);
        return QC_EXIT_USAGE;
    }
    int64_t bad = 0;
    if (inverse) {
        memset(out, 0, out_size);
        qcref_layout_inverse(&L, in, out);
    } else if (qcref_layout_apply(&L, in, out, &bad)) {
        int64_t per = L.R * L.C;
        qc_error(a->cmd, "%s: element %lld (batch %lld, row %lld, col %lld) = 0x%08x is outside the map's domain "
                 "(strict=1; see qcheck layout list)", L.desc->name, (long long)bad, (long long)(bad / per),
                 (long long)(bad % per / L.C), (long long)(bad % L.C), qcref_layout_load(in, bad, L.in_bits));
        free(in), free(out);
        return QC_EXIT_USAGE;
    }
    int rc = qc_write_file(a->cmd, a->pos[2], out, out_size);
    free(in), free(out);
    return rc;
}

int cmd_layout(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "layout", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help) {
        layout_help();
        return QC_EXIT_OK;
    }
    const char *sub = a.npos ? a.pos[0] : "";
    if (strcmp(sub, "list") == 0)
        return qc_check_all_used(&a) ? QC_EXIT_USAGE : list_layouts();
    if (strcmp(sub, "apply") == 0 || strcmp(sub, "inverse") == 0)
        return run(&a, sub[0] == 'i');
    qc_error(a.cmd, "expected apply, inverse or list, got '%s' (see qcheck layout --help)", sub);
    return QC_EXIT_USAGE;
}
