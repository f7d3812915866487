/* mutants_layout.c: broken 128x4 block-scale swizzles, the layout bug classes of docs/spec/layouts.md §10
 * (shapes that are not multiples of the tile are where they live). Each writes the sf128x4
 * destination its own wrong way and leaves every other map to the reference. */
#include <stdio.h>
#include <string.h>

#include "layouts/layouts.h"
#include "../registry.h"


typedef int64_t (*offset_fn)(int64_t b, int64_t r, int64_t col, int64_t R, int64_t C);

static int64_t pad(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* Batch stride from the unpadded row count: expert b > 0 lands inside expert b - 1's padding. */
static int64_t unpadded_rows(int64_t b, int64_t r, int64_t col, int64_t R, int64_t C)
{
    return b * R * pad(C, 4) + qcref_sf128x4_offset(r, col, pad(C, 4));
}

/* Scale columns not padded to 4: the atom index uses the raw column count. */
static int64_t unpadded_stride(int64_t b, int64_t r, int64_t col, int64_t R, int64_t C)
{
    return b * pad(R, 128) * pad(C, 4) + (r / 128) * (C / 4) * 512 + (col / 4) * 512 + (r % 32) * 16 +
           ((r % 128) / 32) * 4 + col % 4;
}

/* 512-byte atoms in column-major order: (col tile, row tile) instead of (row tile, col tile). */
static int64_t column_major_atoms(int64_t b, int64_t r, int64_t col, int64_t R, int64_t C)
{
    int64_t Rp = pad(R, 128), Cp = pad(C, 4);
    return b * Rp * Cp + ((col / 4) * (Rp / 128) + r / 128) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + col % 4;
}

/* Where each wrong offset parts from the right one (shapes that are not multiples of the tile): a
 * mutant declines the shapes where it writes every byte where the reference does. */
static const char *rows_inert(const qc_layout *L)
{
    return L->B > 1 && L->R % 128 ? NULL : "one expert, or rows a multiple of 128: the expert stride is the padded one";
}
static const char *stride_inert(const qc_layout *L)
{
    return L->C % 4 && L->R > 128 ? NULL : "scale columns a multiple of 4, or one row tile: the stride is the padded one";
}
static const char *colmajor_inert(const qc_layout *L)
{
    return pad(L->R, 128) > 128 && pad(L->C, 4) > 4 ? NULL : "one row tile or one column tile: both atom orders agree";
}

static int swizzle_with(qc_op_call *c, offset_fn off, const char *(*inert)(const qc_layout *))
{
    const char *map = qc_param_or(c->params, "map", "(none)");
    if (strcmp(map, "sf128x4")) {
        snprintf(c->err, c->errlen, "the bug is in the sf128x4 map; this instance maps %s", map);
        return QC_OP_DECLINED;
    }
    qc_layout L;
    const char *why = qc_layout_from_params(c, &L) ? NULL : L.in_bits != 8 ? "sub-byte elements" : inert(&L);
    if (why) {
        snprintf(c->err, c->errlen, "%s", why);
        return QC_OP_DECLINED;
    }
    int rc = qc_op_find("layout")->reference(c);
    if (rc)
        return rc;
    qc_tensor *y = qc_set_find(c->out, "y");
    const qc_tensor *x = qc_set_find((qc_tensor_set *)c->in, "x");
    uint8_t *dst = y->data;
    const uint8_t *src = x->data;
    memset(dst, 0, y->nbytes);
    for (int64_t b = 0; b < L.B; b++)
        for (int64_t r = 0; r < L.R; r++)
            for (int64_t col = 0; col < L.C; col++) {
                int64_t o = off(b, r, col, L.R, L.C);
                if (o >= 0 && (size_t)o < y->nbytes)
                    dst[o] = src[(b * L.R + r) * L.C + col];
            }
    return 0;
}

static int m_unpadded_rows(qc_op_call *c) { return swizzle_with(c, unpadded_rows, rows_inert); }
static int m_unpadded_stride(qc_op_call *c) { return swizzle_with(c, unpadded_stride, stride_inert); }
static int m_column_major(qc_op_call *c) { return swizzle_with(c, column_major_atoms, colmajor_inert); }

static const qc_impl impl_rows[] = {{"layout", m_unpadded_rows}};
static const qc_impl impl_stride[] = {{"layout", m_unpadded_stride}};
static const qc_impl impl_colmajor[] = {{"layout", m_column_major}};

const qc_backend qc_mutant_sf_unpadded_rows = {
    "mutant:sf128x4-unpadded-rows", "mutants",
    "128x4 swizzle with the expert stride of unpadded rows (layouts.md §10: M not a multiple of 128)", NULL,
    .impls = impl_rows, .nimpls = 1};
const qc_backend qc_mutant_sf_unpadded_stride = {
    "mutant:sf128x4-unpadded-stride", "mutants",
    "128x4 swizzle read with the unpadded scale-column stride (layouts.md §10: K/16 not a multiple of 4)", NULL,
    .impls = impl_stride, .nimpls = 1};
const qc_backend qc_mutant_sf_column_major = {
    "mutant:sf128x4-column-major-atoms", "mutants",
    "128x4 atoms laid out column-major instead of row-tile major (layouts.md §1)", NULL, .impls = impl_colmajor, .nimpls = 1};
