/* tensor.c: allocation and bookkeeping of qc_tensor. */
#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

int qc_tensor_alloc(qc_tensor *t, const char *name, qc_storage s, const char *dtype, int ndim,
                    const int64_t *shape)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->dtype, sizeof t->dtype, "%s", dtype);
    snprintf(t->layout, sizeof t->layout, "row_major");
    t->storage = s;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    t->nbytes = (size_t)qc_tensor_numel(t) * qc_storage_size(s);
    if (t->nbytes == 0)
        return 0;
    t->data = calloc(1, t->nbytes);
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
