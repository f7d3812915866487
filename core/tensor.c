/* tensor.c: allocation and bookkeeping of qc_tensor. */
#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qc_checked.h"

static const struct { const char *name; size_t size; } storages[QC_ST_COUNT] = {
    [QC_ST_U8] = {"u8", 1},   [QC_ST_U16] = {"u16", 2}, [QC_ST_I32] = {"i32", 4},
    [QC_ST_U32] = {"u32", 4}, [QC_ST_F32] = {"f32", 4}, [QC_ST_F64] = {"f64", 8},
};

size_t qc_storage_size(qc_storage s) { return (unsigned)s < QC_ST_COUNT ? storages[s].size : 0; }
const char *qc_storage_name(qc_storage s) { return (unsigned)s < QC_ST_COUNT ? storages[s].name : "?"; }

int qc_storage_from_name(const char *name)
{
    for (int i = 0; i < QC_ST_COUNT; i++)
        if (strcmp(storages[i].name, name) == 0)
            return i;
    return -1;
}

int64_t qc_tensor_numel(const qc_tensor *t)
{
    int overflow = 0;
    int64_t n = 1;
    for (int i = 0; i < t->ndim && i < QC_MAX_DIMS; i++)
        n = qc_ck_mul(n, t->shape[i], &overflow);
    return overflow ? -1 : n; /* -1: a shape no tensor of qc_tensor_alloc has */
}

int qc_tensor_bytes(qc_storage s, int ndim, const int64_t *shape, size_t *out)
{
    int overflow = 0;
    int64_t n = 1;
    if (ndim < 0 || ndim > QC_MAX_DIMS || qc_storage_size(s) == 0)
        return -1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return -1;
        n = qc_ck_mul(n, shape[i], &overflow);
    }
    if (overflow || n > QC_MAX_ELEMS)
        return -1;
    *out = (size_t)n * qc_storage_size(s); /* <= 2^43: no wrap */
    return 0;
}

size_t qc_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0 || (size_t)pages > SIZE_MAX / (size_t)page)
        return SIZE_MAX;
    return (size_t)pages * (size_t)page;
}

int qc_fits_in_memory(size_t bytes) { return bytes < qc_memory_bytes(); }

int qc_tensor_alloc(qc_tensor *t, const char *name, qc_storage s, const char *dtype, int ndim,
                    const int64_t *shape)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->dtype, sizeof t->dtype, "%s", dtype);
    snprintf(t->layout, sizeof t->layout, "row_major");
    t->storage = s;
    t->ndim = ndim < 0 ? 0 : ndim > QC_MAX_DIMS ? QC_MAX_DIMS : ndim;
    for (int i = 0; i < t->ndim; i++)
        t->shape[i] = shape[i];
    size_t bytes;
    if (qc_tensor_bytes(s, ndim, shape, &bytes))
        return -2;
    t->nbytes = bytes;
    if (t->nbytes == 0)
        return 0;
    t->data = calloc(1, t->nbytes);
    if (!t->data)
        t->nbytes = 0;
    return t->data ? 0 : -1;
}

void qc_tensor_free(qc_tensor *t)
{
    free(t->data);
    t->data = NULL;
    t->nbytes = 0;
}

qc_tensor *qc_set_add(qc_tensor_set *set, qc_tensor *t)
{
    if (set->n >= QC_MAX_TENSORS)
        return NULL;
    set->t[set->n] = *t;
    t->data = NULL; /* ownership moved */
    t->nbytes = 0;
    return &set->t[set->n++];
}

qc_tensor *qc_set_find(qc_tensor_set *set, const char *name)
{
    for (int i = 0; i < set->n; i++)
        if (strcmp(set->t[i].name, name) == 0)
            return &set->t[i];
    return NULL;
}

void qc_set_free(qc_tensor_set *set)
{
    for (int i = 0; i < set->n; i++)
        qc_tensor_free(&set->t[i]);
    set->n = 0;
}

void qc_set_remove(qc_tensor_set *set, const char *name)
{
    for (int i = 0; i < set->n; i++)
        if (strcmp(set->t[i].name, name) == 0) {
            qc_tensor_free(&set->t[i]);
            memmove(&set->t[i], &set->t[i + 1], sizeof set->t[0] * (size_t)(set->n - i - 1));
            set->n--;
            return;
        }
}
