/* layout_ref.h: a second formulation of every layout map, written the way the sources write them
 * (pad with torch.zeros, view, permute, contiguous; row gathers through index lists built by the
 * sources' loops), on top of a generic N-d permute. Slow and simple on purpose (the slowfloat idea). */
#ifndef QC_LAYOUT_REF_H
#define QC_LAYOUT_REF_H

#include <stdint.h>

#include "layouts/layouts.h"

/* Writes the destination bytes of map L for src into dst (qcref_layout_dst_bytes(L) bytes).
 * Returns 0, or -1 if the map has no second formulation. */
int ref_layout_apply(const qc_layout *L, const uint8_t *src, uint8_t *dst);

/* out = in.view(shape).permute(perm).contiguous(), elements of esz bytes. */
void nd_permute(const uint8_t *in, uint8_t *out, int ndim, const int64_t *shape, const int *perm, int64_t esz);

#endif
