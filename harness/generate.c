/* generate.c: deterministic input generation. Every value comes from one splitmix64 stream
 * seeded per instance, so the same seed gives byte-identical inputs in any process, any --jobs.
 * Edge values (NaN, +-Inf, +-0, subnormals, the format's max and just above it, rounding
 * midpoints) are written at seeded distinct positions after the bulk fill. */
#include "generate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"
#include "registry.h"

const char *const qc_fill_names[] = {"normal", "uniform", "loguniform", "outliers", "integers", "bits",
                                     "onehot", "zeros",   "iota",       "codes",    "tiny",  NULL};
const char *const qc_edge_names[] = {"nan", "inf",  "zero",      "subnormal", "max",  "above_max",
                                     "midpoints", "tiny", "huge", "lowest", NULL};

uint64_t qc_rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t qc_rng_next(uint64_t *s) { return qc_rng_mix(*s += QC_RNG_GAMMA); }

uint64_t qc_hash(const char *s, uint64_t seed)
{
    uint64_t h = 0xCBF29CE484222325ull ^ seed; /* FNV-1a, then one splitmix round to spread it */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return qc_rng_next(&h);
}

static double uniform01(uint64_t *s) { return (double)(qc_rng_next(s) >> 11) * 0x1.0p-53; }

static double normal(uint64_t *s)
{
    double u = uniform01(s), v = uniform01(s);
    return sqrt(-2.0 * log(u > 0 ? u : 0x1.0p-53)) * cos(6.283185307179586 * v);
}

static int eval_dim(const char *expr, const qc_params *p, int64_t *out, char *err, size_t errlen)
{
    if (qc_eval(expr, p, out, err, errlen))
        return 2;
    if (*out < 0) {
        snprintf(err, errlen, "shape expression '%s' is negative (%lld)", expr, (long long)*out);
        return 2;
    }
    return 0;
}

/* The input's scale: its "scale" (a number, or a sweep parameter that holds one), 1 without one.
 * 0, or 2 when it is not a finite number (a NaN scale makes every input NaN: nothing is tested). */
static int scale_of(const qc_input_spec *spec, const qc_params *p, double *out, char *err, size_t errlen)
{
    *out = 1.0;
    if (!spec->scale[0])
        return 0;
    const char *v = qc_param(p, spec->scale), *text = v ? v : spec->scale;
    char *end;
    *out = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(*out)) {
        snprintf(err, errlen, "input '%s': scale '%s' is not a finite number", spec->name, text);
        return 2;
    }
    return 0;
}

/* Finite magnitudes of the edge format, ascending; the midpoints and the max come from them. */
int qc_format_grid(qc_format f, double *vals, int cap)
{
    qc_cast_policy pol = qcref_default_policy();
    int n = 0;
    uint32_t codes = f == QC_E8M0 ? 255 : (1u << (qcref_format_bits(f) - 1));
    if (qcref_format_bits(f) > 8)
        codes = 0; /* bf16/f16: no table; use max only */
    for (uint32_t c = 0; c < codes && n < cap; c++) {
        float v = qcref_decode(f, c, &pol);
        if (isfinite(v))
            vals[n++] = v;
    }
    return n;
}

double qc_format_overflow(qc_format f)
{
    double grid[256];
    int ng = qc_format_grid(f, grid, 256);
    return ng >= 2 ? grid[ng - 1] + (grid[ng - 1] - grid[ng - 2]) / 2 : INFINITY;
}

static int edge_values(const qc_input_spec *spec, const qc_params *p, float *out, int cap)
{
    int n = 0;
    double table[256];
    int nt = 0;
    qc_format f = QC_F32;
    const char *fname = spec->edges_format[0] ? qc_param(p, spec->edges_format) : NULL;
    if (fname && qc_format_from_name(fname) >= 0) {
        f = (qc_format)qc_format_from_name(fname);
        nt = qc_format_grid(f, table, 256);
    }
    double maxv = nt ? table[nt - 1] : (f == QC_BF16 ? 3.3895313892515355e38 : f == QC_F16 ? 65504.0 : 0);
#define PUT(v) do { if (n < cap) out[n++] = (float)(v); } while (0)
    for (int e = 0; e < spec->nedges; e++) {
        const char *name = spec->edges[e];
        if (!strcmp(name, "nan")) {
            PUT(NAN);
            PUT(-NAN);
        } else if (!strcmp(name, "inf")) {
            PUT(INFINITY);
            PUT(-INFINITY);
        } else if (!strcmp(name, "zero")) {
            PUT(0.0);
            PUT(-0.0);
        } else if (!strcmp(name, "subnormal")) {
            PUT(0x1.0p-149);
            PUT(-0x1.0p-140);
            PUT(0x1.fffffcp-127);
        } else if (!strcmp(name, "max") && maxv > 0) {
            PUT(maxv);
            PUT(-maxv);
        } else if (!strcmp(name, "above_max") && maxv > 0 && nt >= 2) {
            double half = (table[nt - 1] - table[nt - 2]) / 2; /* the RNE overflow threshold */
            PUT(nextafterf((float)maxv, INFINITY));
            PUT(maxv + half);
            PUT(-(maxv + half));
            PUT(nextafterf((float)(maxv + half), INFINITY));
        } else if (!strcmp(name, "midpoints")) {
            for (int i = 0; i + 1 < nt; i++) {
                double mid = (table[i] + table[i + 1]) / 2;
                PUT(mid);
                PUT(-mid);
                PUT(nextafterf((float)mid, INFINITY));
            }
        } else if (!strcmp(name, "tiny")) {
            PUT(nt ? table[1] / 4 : 1e-30);
            PUT(nt ? -table[1] / 2 : -1e-30);
        } else if (!strcmp(name, "huge")) {
            PUT(3.4028234663852886e38);
            PUT(-3.4028234663852886e38);
        } else if (!strcmp(name, "lowest")) { /* finfo(float32).min: vLLM's "not loaded" scale sentinel */
            PUT(-3.4028234663852886e38);
        }
    }
#undef PUT
    return n;
}

/* "fill" names a generator, or a sweep parameter whose value names one. */
static const char *fill_of(const qc_input_spec *spec, const qc_params *p)
{
    return qc_param_or(p, spec->fill, spec->fill);
}

static void fill_f32(const qc_input_spec *spec, const qc_params *p, double s, uint64_t *rng, float *x, int64_t n)
{
    const char *fill = fill_of(spec, p);
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (!strcmp(fill, "uniform"))
            v = (2 * uniform01(rng) - 1) * s;
        else if (!strcmp(fill, "loguniform")) /* positive, magnitudes spread over 2^-scale .. 2^scale */
            v = exp2((2 * uniform01(rng) - 1) * s);
        else if (!strcmp(fill, "outliers"))
            v = normal(rng) * s * ((qc_rng_next(rng) & 63) == 0 ? 1000.0 : 1.0);
        else if (!strcmp(fill, "tiny")) /* below every profile's eps (1e-12 .. 1e-4): the eps sets the scale */
            v = normal(rng) * s * 0x1p-50;
        else if (!strcmp(fill, "integers"))
            v = floor(uniform01(rng) * (2 * s + 1)) - s;
        else if (!strcmp(fill, "zeros") || !strcmp(fill, "onehot"))
            v = 0;
        else if (!strcmp(fill, "bits")) {
            uint32_t b = (uint32_t)qc_rng_next(rng);
            memcpy(&x[i], &b, 4);
            continue;
        } else
            v = normal(rng) * s;
        x[i] = (float)v;
    }
}

/* Codes lo + (random or iota) mod span, span = hi - lo + 1 (0: all 2^32). */
static void fill_codes(const qc_input_spec *spec, uint32_t lo, uint64_t span, uint64_t *rng, qc_tensor *t, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = !strcmp(spec->fill, "iota") ? (uint64_t)i : qc_rng_next(rng);
        uint32_t v = lo + (uint32_t)(span ? r % span : r);
        if (t->storage == QC_ST_U8)
            ((uint8_t *)t->data)[i] = (uint8_t)v;
        else if (t->storage == QC_ST_U16)
            ((uint16_t *)t->data)[i] = (uint16_t)v;
        else
            ((uint32_t *)t->data)[i] = v;
    }
}

/* Redraws (from the range lo + span) every u8 code of f that decodes to NaN or Inf. */
static void redraw_nonfinite(qc_format f, uint32_t lo, uint64_t span, uint64_t *rng, qc_tensor *t, int64_t n)
{
    qc_cast_policy dec = qcref_default_policy();
    uint8_t *b = t->data;
    for (int64_t i = 0; i < n; i++)
        for (int tries = 0; tries < 64 && !isfinite(qcref_decode(f, b[i], &dec)); tries++)
            b[i] = (uint8_t)(lo + (span ? qc_rng_next(rng) % span : qc_rng_next(rng)));
}

/* Writes the edge values at distinct seeded positions (all of them when they fit), or in the
 * last elements (at_end). */
static void inject_edges(const float *edges, int ne, int at_end, uint64_t *rng, float *x, int64_t n)
{
    if (n == 0 || ne == 0)
        return;
    if (at_end) {
        for (int e = 0; e < ne && e < n; e++)
            x[n - 1 - e] = edges[ne - 1 - e];
        return;
    }
    int64_t stride = n > ne ? n / ne : 1;
    for (int e = 0; e < ne && e < n; e++) {
        int64_t jitter = stride > 1 ? (int64_t)(qc_rng_next(rng) % (uint64_t)stride) : 0;
        x[(int64_t)e * stride + jitter] = edges[e];
    }
}

/* Tile (r / block, c / block) of the rows x cols matrix times 2^gain where (r / block + c / block)
 * is even, 2^-gain where odd: neighbouring scale blocks (along K and along N) differ by 2^(2 gain),
 * so a kernel that reads a neighbour's scale is off by that factor. Exact: powers of two. */
static void gain_tiles(float *x, int64_t n, int64_t cols, int64_t block, int gain)
{
    if (block <= 0 || cols <= 0)
        return;
    for (int64_t i = 0; i < n; i++)
        x[i] = ldexpf(x[i], ((i / cols / block + (i % cols) / block) % 2) ? -gain : gain);
}

static void zero_blocks(float *x, int64_t n, int64_t cols, int64_t block)
{
    if (block <= 0 || cols <= 0)
        return;
    for (int64_t i = 0; i < n; i++)
        if (((i % cols) / block) % 4 == 1) /* every 4th block of each row, starting at block 1 */
            x[i] = 0.0f;
}

static int generate(const qc_input_spec *spec, const qc_params *p, uint64_t seed, qc_tensor *out, char *err,
                    size_t errlen)
{
    int64_t shape[QC_MAX_DIMS] = {0};
    size_t bytes;
    int known = 0; /* a swept fill's value is checked here: --params dist=bogus had drawn normal values */
    for (const char *const *f = qc_fill_names; *f; f++)
        known |= !strcmp(fill_of(spec, p), *f);
    if (!known) {
        snprintf(err, errlen, "input '%s': fill '%s' names no generator (known: normal uniform loguniform outliers "
                 "integers bits onehot zeros iota codes tiny)", spec->name, fill_of(spec, p));
        return 2;
    }
    for (int d = 0; d < spec->ndim; d++)
        if (eval_dim(spec->shape[d], p, &shape[d], err, errlen))
            return 2;
    if (qc_tensor_bytes(spec->storage, spec->ndim, shape, &bytes)) { /* before anything is allocated */
        char dims[128] = "";
        for (int d = 0, at = 0; d < spec->ndim && at < (int)sizeof dims; d++)
            at += snprintf(dims + at, sizeof dims - (size_t)at, "%s%lld", d ? ", " : "", (long long)shape[d]);
        snprintf(err, errlen, "input '%s': shape [%s] has more than 2^40 elements", spec->name, dims);
        return 2;
    }
    if (qc_tensor_alloc(out, spec->name, spec->storage, spec->dtype, spec->ndim, shape)) {
        snprintf(err, errlen, "out of memory for input '%s' (%zu bytes)", spec->name, bytes);
        return 2;
    }
    uint64_t rng = qc_hash(spec->name, seed);
    int64_t n = qc_tensor_numel(out);
    if (spec->storage != QC_ST_F32) {
        int64_t width = 8, lo = 0, hi;
        if (spec->bits[0] && qc_eval(spec->bits, p, &width, err, errlen))
            return 2;
        if (width < 1 || width > 32) {
            snprintf(err, errlen, "input '%s': bits '%s' = %lld is outside 1..32", spec->name, spec->bits,
                     (long long)width);
            return 2;
        }
        hi = (int64_t)((1ull << width) - 1);
        if (spec->min[0] && (qc_eval(spec->min, p, &lo, err, errlen) || qc_eval(spec->max, p, &hi, err, errlen)))
            return 2;
        if (lo < 0 || hi < lo || hi >= (int64_t)(1ull << width)) {
            snprintf(err, errlen, "input '%s': codes %lld..%lld are not a range of %lld-bit codes", spec->name,
                     (long long)lo, (long long)hi, (long long)width);
            return 2;
        }
        uint64_t span = (uint64_t)(hi - lo + 1) & 0xFFFFFFFFull;
        fill_codes(spec, (uint32_t)lo, span, &rng, out, n);
        int64_t finite = 0;
        if (spec->finite[0] && qc_eval(spec->finite, p, &finite, err, errlen))
            return 2;
        if (finite) {
            int f = qc_format_from_name(spec->dtype);
            if (f < 0 || spec->storage != QC_ST_U8 || qcref_format_bits((qc_format)f) > 8) {
                snprintf(err, errlen, "input '%s': \"finite\" needs u8 codes of a format of 8 bits or fewer, not %s",
                         spec->name, spec->dtype);
                return 2;
            }
            redraw_nonfinite((qc_format)f, (uint32_t)lo, span, &rng, out, n);
        }
        return 0;
    }
    float *x = out->data;
    double scale;
    if (scale_of(spec, p, &scale, err, errlen))
        return 2;
    fill_f32(spec, p, scale, &rng, x, n);
    if (spec->zero_blocks[0]) {
        int64_t block;
        if (qc_eval(spec->zero_blocks, p, &block, err, errlen))
            return 2;
        zero_blocks(x, n, spec->ndim ? shape[spec->ndim - 1] : n, block);
    }
    if (spec->gain[0]) {
        int64_t gain, block;
        if (qc_eval(spec->gain, p, &gain, err, errlen) || qc_eval(spec->gain_block, p, &block, err, errlen))
            return 2;
        if (gain < 0 || gain > 64 || block < 1) {
            snprintf(err, errlen, "input '%s': gain %lld (0..64) over tiles of %lld (>= 1)", spec->name,
                     (long long)gain, (long long)block);
            return 2;
        }
        gain_tiles(x, n, spec->ndim ? shape[spec->ndim - 1] : n, block, (int)gain);
    }
    if (!strcmp(fill_of(spec, p), "onehot") && n > 0) {
        int64_t at = 0;
        if (spec->at[0] && qc_eval(spec->at, p, &at, err, errlen))
            return 2;
        x[((at % n) + n) % n] = (float)scale;
    }
    float edges[1024];
    int ne = edge_values(spec, p, edges, 1024);
    inject_edges(edges, ne, !strcmp(spec->edges_at, "end"), &rng, x, n);
    if (spec->boundaries[0])
        return qc_boundary_inject(p, &rng, x, n, err, errlen);
    return 0;
}

int qc_generate(const qc_input_spec *spec, const qc_params *p, uint64_t seed, qc_tensor *out, char *err,
                size_t errlen)
{
    memset(out, 0, sizeof *out);
    int rc = generate(spec, p, seed, out, err, errlen);
    if (rc)
        qc_tensor_free(out); /* an expression that failed after the allocation */
    return rc;
}
