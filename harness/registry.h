/* registry.h: ops x backends in one table (docs/DESIGN.md "backend", docs/STYLE.md BLIS: a backend is one
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

#include "qcheck/qcheck.h"

struct qc_output_view;

typedef struct qc_op_call {
    const qc_params *params;
    const qc_tensor_set *in;
    qc_tensor_set *out; /* the op allocates and adds its outputs */
    char *err;
    size_t errlen;
    int device;         /* --device N, handed to ABI backends in qcheck_ctx */
} qc_op_call;

/* What an op implementation returns. */
enum {
    QC_OP_OK = 0,
    QC_OP_REFUSED = 1,  /* an implementation knowingly refuses valid input (err says why): ERROR */
    QC_OP_BAD = 2,      /* the params or inputs do not fit the op (err names the rule) */
    QC_OP_DECLINED = 3, /* the backend does not implement these arguments (err says what): SKIPPED */
    QC_OP_FAILED = 4    /* the kernel or its device failed (err says how): ERROR */
};

typedef int (*qc_op_fn)(qc_op_call *c);

/* Runs one call through an ABI backend's slot: parses the params into the op's typed arguments,
 * allocates the outputs, calls the slot and adds the outputs to c->out. */
typedef int (*qc_op_abi_fn)(qc_op_call *c, const qcheck_backend *b);

typedef struct qc_op {
    const char *name;
    const char *doc;      /* inputs -> outputs and the params it reads */
    qc_op_fn reference;   /* the `ref` backend: libqcref */
    size_t slot;          /* offsetof(qcheck_backend, <op>): the ABI slot */
    qc_op_abi_fn abi;     /* the adapter of that slot */
    /* NULL, or what the instance's inputs imply that its kernel consumes (gemm: the quantized
     * operands), added to c->out, which is the inputs set: an exported instance is the whole
     * contract of a kernel */
    qc_op_fn derived_inputs;
    /* NULL, or what the stored elements of an output are in the op's terms (compare.h): 0 and *v
     * set, or nonzero when the output keeps its stored form */
    int (*view)(const qc_params *p, const char *output, struct qc_output_view *v);
} qc_op;

/* A gate self-test's implementation of one op: harness hooks, on purpose (harness/gate/). */
typedef struct qc_impl {
    const char *op;
    qc_op_fn fn;
} qc_impl;

/* Every backend, as the runner sees it: an ABI backend (in-tree, plugin), an exec backend (an
 * outside process, harness/exec.c), or a gate self-test that uses harness hooks (ref itself,
 * the mutants and the selftest backends of harness/gate/). */
typedef struct qc_backend {
    const char *name;  /* "ref", "cpu-avx512", "plugin:cpu-avx512", "mutant:e2m1-ties-away" */
    const char *group; /* --backend accepts the group name for all its members ("mutants", "cpu") */
    const char *doc;   /* what it is; for a mutant: the bug class and where it was seen */
    const char *(*unavailable)(void); /* hooks backends: NULL when it can run here, else the reason */
    const qcheck_backend *abi;        /* ABI backends */
    const char *exec_cmd;             /* exec backends: the command line (harness/exec.c) */
    const qc_impl *impls;             /* hooks backends */
    int nimpls;
} qc_backend;

int qc_op_count(void);
const qc_op *qc_op_at(int i);
const qc_op *qc_op_find(const char *name);

int qc_backend_count(void);
const qc_backend *qc_backend_at(int i);
const qc_backend *qc_backend_find(const char *name); /* NULL when unknown (and not loadable) */
/* Adds a backend made at run time (plugin:, exec:); returns it, or NULL with err. */
const qc_backend *qc_backend_add(const qc_backend *b, char *err, size_t errlen);
const char *qc_backend_unavailable(const qc_backend *b); /* NULL when it can run here */
int qc_backend_implements(const qc_backend *b, const char *op);
/* Runs op on c with backend b (the QC_OP_* status). */
int qc_backend_call(const qc_backend *b, const char *op, qc_op_call *c);

/* The built-in ABI backends, from the qc_add_backend() lines of kernels/CMakeLists.txt (a
 * generated table: the harness names none of them). */
extern const qcheck_backend *const qc_builtin_backends[];
extern const char *const qc_builtin_groups[];
extern const int qc_builtin_backend_count;

/* plugin.c: loads plugin:PATH.so[:NAME] and adds it; exec.c: adds exec:COMMAND. NULL with err
 * (naming the file, the versions or the struct) when it cannot. */
const qc_backend *qc_plugin_load(const char *spec, char *err, size_t errlen);
const qc_backend *qc_exec_backend(const char *spec, char *err, size_t errlen);

/* The ABI checks of a backend from elsewhere: 0, or 2 with err naming both versions or the first
 * struct whose size differs. */
int qc_abi_check(const qcheck_backend *b, const char *where, char *err, size_t errlen);

/* Shared by op implementations: the cast policy of params (profile + policy keys as the CLI's
 * flags) for format f; 0 or 2 with err. */
#include "formats/formats.h"
int qc_params_policy(const qc_params *p, qc_format f, qc_cast_policy *out, char *err, size_t errlen);
/* policy_args.c: the same, with the CLI's exit status (0 or 2). */
int qc_policy_from_params(const qc_params *p, qc_format f, qc_cast_policy *out, char *err, size_t errlen);
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

/* ---- what the ABI adapters of the ops share (ops/op_util.c) ---- */

/* A view of a harness tensor (NULL: an empty view). */
qcheck_tensor qc_view(const qc_tensor *t);
/* An output of c added to c->out and filled with the poison byte 0xA5, so that an element the
 * backend never writes mismatches; *view (may be NULL) is its view. 0, or 2 with c->err. */
int qc_op_output(qc_op_call *c, const char *name, qc_storage st, const char *dtype, int ndim, const int64_t *shape,
                 qcheck_tensor *view);
/* A slot's status as QC_OP_*, with c->err saying "not implemented by B: why" or why it failed.
 * Use: qcheck_ctx x = qc_abi_ctx(c); return qc_abi_result(c, b, b->cast(&args, &x), &x); */
int qc_abi_result(qc_op_call *c, const qcheck_backend *b, qcheck_status st, const qcheck_ctx *ctx);
/* A context whose message buffer is c->err. */
qcheck_ctx qc_abi_ctx(qc_op_call *c);

/* ops/op_layout.c: the plan of the layout op's params (map, rows, cols, batch, elem_bytes, the
 * map's own); 0, or 2 with c->err. */
int qc_layout_from_params(qc_op_call *c, qc_layout *L);

/* Storage of one code of format f: u8 for <= 8 bits, u16 for bf16/f16, f32 for f32. */
qc_storage qc_format_storage(qc_format f);

#endif
