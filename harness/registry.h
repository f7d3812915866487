/* registry.h: ops x backends in one table (DESIGN.md "backend", STYLE.md BLIS: a backend is one
 * folder that registers its implementations; the harness never changes to add one).
 *
 * An op is a named computation over named tensors: the case file's generators make its inputs,
 * the reference computes the expected outputs, and every selected backend computes its own. */
#ifndef QC_REGISTRY_H
#define QC_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "params.h"
#include "tensor.h"

typedef struct qc_op_call {
    const qc_params *params;
    const qc_tensor_set *in;
    qc_tensor_set *out; /* the op allocates and adds its outputs */
    char *err;
    size_t errlen;
} qc_op_call;

/* 0 on success; 2 when the params or inputs do not fit the op (err names the rule); 1 when an
 * implementation knowingly refuses (err says why): the runner reports ERROR. */
typedef int (*qc_op_fn)(qc_op_call *c);

typedef struct qc_op {
    const char *name;
    const char *doc;      /* inputs -> outputs and the params it reads */
    qc_op_fn reference;   /* the `ref` backend: libqcref */
} qc_op;

typedef struct qc_impl {
    const char *op;
    qc_op_fn fn;
} qc_impl;

typedef struct qc_backend {
    const char *name;  /* "ref", "cpu-avx512", "mutant:e2m1-ties-away" */
    const char *group; /* --backend accepts the group name for all its members ("mutants") */
    const char *doc;   /* what it is; for a mutant: the bug class and where it was seen */
    const char *(*unavailable)(void); /* NULL when it can run here, else the reason (SKIPPED) */
    const qc_impl *impls;
    int nimpls;
} qc_backend;

int qc_op_count(void);
const qc_op *qc_op_at(int i);
const qc_op *qc_op_find(const char *name);

int qc_backend_count(void);
const qc_backend *qc_backend_at(int i);
qc_op_fn qc_backend_impl(const qc_backend *b, const char *op); /* NULL when b does not implement op */

/* Shared by op implementations: the cast policy of params (profile + policy keys as the CLI's
 * flags) for format f; 0 or 2 with err. */
#include "formats/formats.h"
int qc_params_policy(const qc_params *p, qc_format f, qc_cast_policy *out, char *err, size_t errlen);
int qc_params_get_format(const qc_params *p, const char *key, qc_format *out, char *err, size_t errlen);

/* Numeric params of an op: the integer value of key in [lo, hi], or the float value (dflt when the
 * key is absent; a default outside [lo, hi] makes the key required). 0, or 2 with c->err naming
 * the key and its value. */
int qc_op_param_int(qc_op_call *c, const char *key, int64_t dflt, int64_t lo, int64_t hi, int64_t *out);
int qc_op_param_float(qc_op_call *c, const char *key, float dflt, float *out);

/* Input name, f32 with numel elements, or NULL with c->err naming what is wrong. The optional
 * form: *out = its data, NULL when the input is absent; 0, or 2 when present but wrong. */
const qc_tensor *qc_op_input_f32(qc_op_call *c, const char *name, int64_t numel);
int qc_op_optional_f32(qc_op_call *c, const char *name, int64_t numel, const float **out);

/* A [rows, cols] output tensor added to c->out, copied from data (NULL: zeros). 0, or 2 with
 * c->err (out of memory, too many outputs). */
int qc_op_add_tensor(qc_op_call *c, const char *name, qc_storage st, const char *dtype, int64_t rows, int64_t cols,
                     const void *data);

/* Storage of one code of format f: u8 for <= 8 bits, u16 for bf16/f16, f32 for f32. */
qc_storage qc_format_storage(qc_format f);

#endif
