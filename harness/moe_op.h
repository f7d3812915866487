/* moe_op.h: the fused-MoE op (ops/op_moe.c) with a hook that changes one rule of its parsed
 * configuration (NULL: the reference). Mutants use it to be the reference with one rule wrong. */
#ifndef QC_MOE_OP_H
#define QC_MOE_OP_H

#include <stdint.h>

#include "ops/moe.h"

typedef struct qc_moe_cfg {
    int recipe;                 /* index into op_moe.c's recipe table */
    int64_t t, h, i, e, shared; /* tokens, hidden, intermediate, routed experts, fused shared experts */
    qc_route_cfg route;
    qc_act_cfg act;
    int weight_on_input;        /* apply_router_weight_on_input: w multiplies the GEMM1 output (after b13) */
    int bias;                   /* b13 and b2 */
    float rsf_out;              /* the routed scaling applied once after the sum (1 when in the weights) */
} qc_moe_cfg;

typedef void (*qc_moe_tweak)(qc_moe_cfg *cfg);
struct qc_op_call;
int qc_moe_op(struct qc_op_call *c, qc_moe_tweak tweak);

#endif
