/* registry.c: the one table of ops and the one table of backends. Adding an op is one line in
 * `ops`; adding a backend is one line in `backends` (its folder defines the qc_backend). */
#include "registry.h"

#include <string.h>

extern const qc_op qc_op_cast, qc_op_decode, qc_op_fp4_pack, qc_op_layout, qc_op_quant, qc_op_dequant,
    qc_op_gemm, qc_op_moe, qc_op_moe_cpu, qc_op_fnuz_normalize;

static const qc_op *const ops[] = {&qc_op_cast,   &qc_op_decode, &qc_op_fp4_pack,
                                   &qc_op_layout, &qc_op_quant,  &qc_op_dequant,
                                   &qc_op_gemm,   &qc_op_moe, &qc_op_moe_cpu, &qc_op_fnuz_normalize};

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
static const qc_backend ref_backend = {"ref", "ref", "the scalar C reference (libqcref)", NULL, NULL, 0};

extern const qc_backend *const qc_mutant_backends[];
extern const int qc_mutant_backend_count;
extern const qc_backend qc_selftest_crash, qc_selftest_hang, qc_selftest_refuse;
extern const qc_backend qc_backend_cpu_avx512, qc_backend_cpu_amx; /* kernels/cpu/cpu_backend.c */

static const qc_backend *backend_table[64];
static int backend_n;

static void build_table(void)
{
    if (backend_n)
        return;
    backend_table[backend_n++] = &ref_backend;
    backend_table[backend_n++] = &qc_backend_cpu_avx512;
    backend_table[backend_n++] = &qc_backend_cpu_amx;
    for (int i = 0; i < qc_mutant_backend_count && backend_n < 60; i++)
        backend_table[backend_n++] = qc_mutant_backends[i];
    backend_table[backend_n++] = &qc_selftest_crash;
    backend_table[backend_n++] = &qc_selftest_hang;
    backend_table[backend_n++] = &qc_selftest_refuse;
}

int qc_backend_count(void)
{
    build_table();
    return backend_n;
}

const qc_backend *qc_backend_at(int i)
{
    build_table();
    return i >= 0 && i < backend_n ? backend_table[i] : NULL;
}

qc_op_fn qc_backend_impl(const qc_backend *b, const char *op)
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
