/* registry.c: the one table of ops and the table of backends. Adding an op is one line in
 * `ops`; the built-in ABI backends come from the build (kernels/CMakeLists.txt qc_add_backend,
 * a generated table), the gate's self-tests from harness/gate/, plugin: and exec: backends are
 * added at run time. */
#include "registry.h"

#include <stdio.h>
#include <string.h>

extern const qc_op qc_op_cast, qc_op_decode, qc_op_fp4_pack, qc_op_layout, qc_op_quant, qc_op_dequant,
    qc_op_gemm, qc_op_moe, qc_op_moe_cpu, qc_op_fnuz_normalize, qc_op_requantize_with_max_scale,
    qc_op_convert_to_channelwise, qc_op_cast_e2m1fn_to_e4m3fn, qc_op_convert_mxfp8_weight_to_block_fp8,
    qc_op_requant_weight_ue8m0;

static const qc_op *const ops[] = {&qc_op_cast,   &qc_op_decode, &qc_op_fp4_pack,
                                   &qc_op_layout, &qc_op_quant,  &qc_op_dequant,
                                   &qc_op_gemm,   &qc_op_moe,    &qc_op_moe_cpu, &qc_op_fnuz_normalize,
                                   &qc_op_requantize_with_max_scale, &qc_op_convert_to_channelwise,
                                   &qc_op_cast_e2m1fn_to_e4m3fn, &qc_op_convert_mxfp8_weight_to_block_fp8,
                                   &qc_op_requant_weight_ue8m0};

int qc_op_count(void) { return (int)(sizeof ops / sizeof ops[0]); }
const qc_op *qc_op_at(int i) { return i >= 0 && i < qc_op_count() ? ops[i] : NULL; }

const qc_op *qc_op_find(const char *name)
{
    for (int i = 0; i < qc_op_count(); i++)
        if (strcmp(ops[i]->name, name) == 0)
            return ops[i];
    return NULL;
}

/* `ref` runs the reference itself: every op, always available. */
static const qc_backend ref_backend = {.name = "ref", .group = "ref", .doc = "the scalar C reference (libqcref)"};

/* harness/gate/: the gate's self-tests, which use harness hooks on purpose */
extern const qc_backend *const qc_mutant_backends[], *const qc_selftest_backends[];
extern const int qc_mutant_backend_count, qc_selftest_backend_count;

#define QC_MAX_BACKENDS 128
static qc_backend builtin[QC_MAX_BACKENDS];
static const qc_backend *table[QC_MAX_BACKENDS];
static qc_backend added[16];
static int n_table, n_added;

static void build_table(void)
{
    if (n_table)
        return;
    table[n_table++] = &ref_backend;
    for (int i = 0; i < qc_builtin_backend_count && n_table < QC_MAX_BACKENDS / 2; i++) {
        const qcheck_backend *b = qc_builtin_backends[i];
        const char *group = b->flags & QCHECK_BACKEND_PLANTED ? "mutants" : qc_builtin_groups[i];
        builtin[i] = (qc_backend){.name = b->name, .group = group, .doc = b->doc, .abi = b};
        table[n_table++] = &builtin[i];
    }
    for (int i = 0; i < qc_mutant_backend_count && n_table < QC_MAX_BACKENDS - 20; i++)
        table[n_table++] = qc_mutant_backends[i];
    for (int i = 0; i < qc_selftest_backend_count && n_table < QC_MAX_BACKENDS - 16; i++)
        table[n_table++] = qc_selftest_backends[i];
}

int qc_backend_count(void)
{
    build_table();
    return n_table;
}

const qc_backend *qc_backend_at(int i)
{
    build_table();
    return i >= 0 && i < n_table ? table[i] : NULL;
}

const qc_backend *qc_backend_find(const char *name)
{
    for (int i = 0; i < qc_backend_count(); i++)
        if (strcmp(table[i]->name, name) == 0)
            return table[i];
    return NULL;
}

const qc_backend *qc_backend_add(const qc_backend *b, char *err, size_t errlen)
{
    build_table();
    if (qc_backend_find(b->name))
        return qc_backend_find(b->name);
    if (n_added >= (int)(sizeof added / sizeof added[0]) || n_table >= QC_MAX_BACKENDS) {
        snprintf(err, errlen, "too many backends (at most %d added at run time)", (int)(sizeof added / sizeof added[0]));
        return NULL;
    }
    added[n_added] = *b;
    table[n_table++] = &added[n_added];
    return &added[n_added++];
}

const char *qc_backend_unavailable(const qc_backend *b)
{
    if (b->abi)
        return b->abi->unavailable ? b->abi->unavailable() : NULL;
    return b->unavailable ? b->unavailable() : NULL;
}

static qc_op_fn hook_of(const qc_backend *b, const char *op)
{
    if (b == &ref_backend) {
        const qc_op *o = qc_op_find(op);
        return o ? o->reference : NULL;
    }
    for (int i = 0; i < b->nimpls; i++)
        if (strcmp(b->impls[i].op, op) == 0)
            return b->impls[i].fn;
    return NULL;
}

int qc_backend_implements(const qc_backend *b, const char *op)
{
    const qc_op *o = qc_op_find(op);
    if (!o)
        return 0;
    if (b->exec_cmd)
        return 1; /* an outside process is asked for everything; it may decline items */
    if (b->abi)
        return *(const void *const *)((const char *)b->abi + o->slot) != NULL;
    return hook_of(b, op) != NULL;
}

int qc_backend_call(const qc_backend *b, const char *op, qc_op_call *c)
{
    if (!qc_backend_implements(b, op)) {
        snprintf(c->err, c->errlen, "not implemented by %s: op %s", b->name, op);
        return QC_OP_DECLINED;
    }
    if (b->abi)
        return qc_op_find(op)->abi(c, b->abi);
    return hook_of(b, op)(c);
}

int qc_abi_check(const qcheck_backend *b, const char *where, char *err, size_t errlen)
{
    static const char *const what[QCHECK_NSIZES] = {
        "qcheck_tensor", "qcheck_ctx", "qc_cast_policy", "qc_recipe_policy", "qc_layout", "qcheck_quant_spec",
        "qcheck_cast_args", "qcheck_decode_args", "qcheck_fp4_pack_args", "qcheck_quant_args",
        "qcheck_dequant_args", "qcheck_layout_args", "qcheck_gemm_args", "qcheck_moe_args",
        "qcheck_moe_cpu_args", "qcheck_finding", "qcheck_bringup_args", "qcheck_backend", "qcheck_requantize_args",
        "qcheck_channelwise_args", "qcheck_e2m1_to_e4m3_args", "qcheck_mxfp8_to_block_args",
        "qcheck_requant_ue8m0_args"};
    static const uint32_t mine[QCHECK_NSIZES] = QCHECK_SIZES;
    if (b->abi_version != QCHECK_ABI_VERSION) {
        snprintf(err, errlen, "%s: backend %s is built for qcheck ABI version %u, this qcheck speaks version %u",
                 where, b->name ? b->name : "?", b->abi_version, QCHECK_ABI_VERSION);
        return 2;
    }
    for (int i = 0; i < QCHECK_NSIZES; i++)
        if (b->sizes[i] != mine[i]) {
            snprintf(err, errlen, "%s: backend %s has sizeof(%s) = %u, this qcheck %u (ABI version %u on both: "
                     "rebuild it against this qcheck's include/qcheck and reference headers)",
                     where, b->name ? b->name : "?", what[i], b->sizes[i], mine[i], QCHECK_ABI_VERSION);
            return 2;
        }
    return 0;
}
