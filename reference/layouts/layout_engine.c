/* layout_engine.c: apply and invert any layout map over byte buffers. Generic over the index
 * map (layouts.h): no allocation, one pass over the grid forward, one over the destination back. */
#include "layouts.h"

#include <string.h>

/* 4-bit elements: element i in byte i/2, even elements in the low nibble (docs/spec/layouts.md §0 FP4 packing). */
QC_HD uint32_t qcref_layout_load(const uint8_t *buf, int64_t i, int bits)
{
    if (bits == 4)
        return (buf[i / 2] >> (4 * (i % 2))) & 0xFu;
    uint32_t v = 0;
    for (int b = 0; b < bits / 8; b++)
        v |= (uint32_t)buf[i * (bits / 8) + b] << (8 * b);
    return v;
}

QC_HD void qcref_layout_store(uint8_t *buf, int64_t i, int bits, uint32_t v)
{
    if (bits == 4) {
        int sh = 4 * (int)(i % 2);
        buf[i / 2] = (uint8_t)((buf[i / 2] & ~(0xFu << sh)) | ((v & 0xFu) << sh));
        return;
    }
    for (int b = 0; b < bits / 8; b++)
        buf[i * (bits / 8) + b] = (uint8_t)(v >> (8 * b));
}

/* Plain copy of one element of any width (4 bits or whole bytes). */
static void copy_elem(const uint8_t *src, int64_t si, uint8_t *dst, int64_t di, int bits)
{
    if (bits == 4)
        qcref_layout_store(dst, di, 4, qcref_layout_load(src, si, 4));
    else
        memcpy(dst + di * (bits / 8), src + si * (bits / 8), (size_t)(bits / 8));
}

static size_t bytes_of(int64_t elems, int bits) { return (size_t)((elems * bits + 7) / 8); }

size_t qcref_layout_src_bytes(const qc_layout *L) { return bytes_of(L->B * L->R * L->C, L->in_bits); }
size_t qcref_layout_dst_bytes(const qc_layout *L) { return bytes_of(L->B * L->dst_elems, L->out_bits); }

int64_t qcref_layout_row_src(const qc_layout *L, int64_t g)
{
    if (L->desc->row_src)
        return L->desc->row_src(L, g);
    return g < L->R ? g : -1;
}

int qcref_layout_apply(const qc_layout *L, const uint8_t *src, uint8_t *dst, int64_t *bad)
{
    const qc_layout_desc *d = L->desc;
    memset(dst, L->pad == QC_PAD_CONST ? L->pad_byte : 0, qcref_layout_dst_bytes(L));
    for (int64_t b = 0; b < L->B; b++) {
        const uint8_t *sb = src + bytes_of(b * L->R * L->C, L->in_bits);
        uint8_t *db = dst + bytes_of(b * L->dst_elems, L->out_bits);
        for (int64_t g = 0; g < L->Rg; g++) {
            int64_t s = qcref_layout_row_src(L, g);
            if (s < 0)
                continue;
            for (int64_t c = 0; c < L->C && c < L->Cg; c++) {
                int64_t o = d->fwd(L, g, c), si = s * L->C + c;
                uint32_t v;
                if (!d->enc) {
                    copy_elem(sb, si, db, o, L->in_bits);
                } else if (d->enc(L, qcref_layout_load(sb, si, L->in_bits), &v)) {
                    if (bad)
                        *bad = b * L->R * L->C + si;
                    return 1;
                } else {
                    qcref_layout_store(db, o, L->out_bits, v);
                }
            }
        }
        if (d->derive)
            d->derive(L, sb, db);
    }
    return 0;
}

void qcref_layout_inverse(const qc_layout *L, const uint8_t *dst, uint8_t *src)
{
    const qc_layout_desc *d = L->desc;
    for (int64_t b = 0; b < L->B; b++) {
        uint8_t *sb = src + bytes_of(b * L->R * L->C, L->in_bits);
        const uint8_t *db = dst + bytes_of(b * L->dst_elems, L->out_bits);
        for (int64_t o = 0; o < L->dst_elems; o++) {
            int64_t g, c;
            if (d->inv(L, o, &g, &c))
                continue; /* a derived element */
            int64_t s = qcref_layout_row_src(L, g);
            if (s < 0 || c >= L->C)
                continue; /* padding */
            if (!d->dec)
                copy_elem(db, o, sb, s * L->C + c, L->in_bits);
            else
                qcref_layout_store(sb, s * L->C + c, L->in_bits, d->dec(L, qcref_layout_load(db, o, L->out_bits)));
        }
    }
}
