/* generate.h: input generators of case files (seeded, with edge values injected). */
#ifndef QC_GENERATE_H
#define QC_GENERATE_H

#include <stdint.h>

#include "formats/formats.h"
#include "params.h"
#include "tensor.h"

#define QC_MAX_EDGES 24

/* One input of a case file, e.g.
 *   "x": {"shape": ["m", "k"], "fill": "normal", "scale": 64, "edges": ["nan", "max"], "edges_format": "to"} */
typedef struct qc_input_spec {
    char name[QC_NAME_LEN];
    int ndim;
    char shape[QC_MAX_DIMS][64]; /* integer expressions over the params */
    qc_storage storage;
    char dtype[QC_NAME_LEN];
    char fill[16];      /* normal uniform loguniform outliers integers bits onehot zeros iota codes */
    char scale[64];     /* a number or a parameter name: std of normal, half-range of uniform/integers */
    char edges[QC_MAX_EDGES][16];
    int nedges;
    char edges_format[32]; /* the param naming the format whose max/midpoints the edges use */
    char zero_blocks[64];  /* expression: block length along the last dim; every 4th block is zeroed */
    char at[64];           /* onehot: flat index expression */
    char bits[16];         /* codes: code width expression (default 8) */
    char min[32], max[32]; /* codes: an inclusive range of codes (expressions) in place of bits */
    char edges_at[8];      /* "end": the edges fill the last elements, not seeded positions */
    char finite[32];       /* codes: expression; nonzero redraws the codes of dtype that decode to NaN/Inf */
    char gain[32], gain_block[32]; /* tile (r, c) of gain_block^2 times 2^(+-gain), checkerboard */
    char boundaries[16];   /* "quant": boundary elements after each scale block's scale (boundary.c) */
} qc_input_spec;

/* The names generators and edge injection accept (for validation and --help). */
extern const char *const qc_fill_names[];
extern const char *const qc_edge_names[];

/* The finite non-negative values of an 8-bit-or-narrower format, ascending (0 for wider formats). */
int qc_format_grid(qc_format f, double *vals, int cap);
/* Where round to nearest leaves f's largest finite code (the midpoint above it): saturating
 * changes a value from here on. INFINITY for a format without a grid (bf16, f16). */
double qc_format_overflow(qc_format f);

/* boundary.c: rewrites x (the input of the quant job of p) so that each scale block carries the
 * boundaries of its recipe and profile. 0, or 2 with err. */
int qc_boundary_inject(const qc_params *p, uint64_t *rng, float *x, int64_t n, char *err, size_t errlen);

/* The boundary classes a quant input reaches under the quant job of p (bit QC_COV_* of *classes):
 * an element exactly on a midpoint after its scale, a finite element at or beyond the round-to-
 * nearest overflow threshold after it (where saturating changes the code), a NaN
 * or Inf element, an all-zero block, a subnormal fp32 scale, a zero scale of a nonzero block, an
 * Inf/NaN scale of a finite block, a block shorter than the recipe's, a block whose amax is
 * below the profile's eps (the eps floor sets its scale), an element that x / s and x * fl32(1/s)
 * (whichever the profile does not do) give another code (fp32 scales). 0, or 2 with err. */
enum { QC_COV_TIES, QC_COV_SATURATION, QC_COV_NAN_INF, QC_COV_ZERO_BLOCK, QC_COV_SUBNORMAL_SCALE,
       QC_COV_SCALE_UNDERFLOW, QC_COV_SCALE_OVERFLOW, QC_COV_PARTIAL_BLOCK, QC_COV_EPS_FLOOR,
       QC_COV_ELEM_OP_SPLIT, QC_COV_COUNT };
extern const char *const qc_coverage_names[QC_COV_COUNT];
int qc_quant_coverage(const qc_params *p, const float *x, int64_t n, unsigned *classes, char *err, size_t errlen);
/* The same for an input of job j (x: rows * cols elements), for mutants that decline an input
 * that never reaches their bug's class. */
struct qcheck_quant_spec;
int qc_quant_job_coverage(const struct qcheck_quant_spec *j, const float *x, unsigned *classes);
/* The classes the quick tier must reach for the recipe x profile of p (`qcheck coverage`): ties
 * everywhere; zero blocks and NaN/Inf where a block has a scale of its own (boundary.c); partial
 * blocks where the recipe takes them; the eps floor where the profile has an eps. The others are
 * reported, not required. */
unsigned qc_quant_coverage_required(const qc_params *p);

int qc_generate(const qc_input_spec *spec, const qc_params *p, uint64_t seed, qc_tensor *out, char *err,
                size_t errlen);

/* splitmix64 (Steele, Lea, Flood, OOPSLA 2014): the one seeded stream every generator draws from
 * (qc_rng_next), and its finalizer alone for counter-based streams (qc_rng_mix(seed + c * gamma)
 * is element c of the stream seeded with seed, gamma = QC_RNG_GAMMA). */
#define QC_RNG_GAMMA 0x9E3779B97F4A7C15ull
uint64_t qc_rng_mix(uint64_t z);
uint64_t qc_rng_next(uint64_t *state);
uint64_t qc_hash(const char *s, uint64_t seed);

#endif
