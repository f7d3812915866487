/* slow_formats.h: a second, deliberately slow implementation of every element-format codec,
 * written from the definitions in docs/spec/formats.md (§1.1, §1.2, §2.1-§2.3, §3.1, §3.2)
 * and sharing no code with reference/ (in the manner of Berkeley TestFloat's slowfloat).
 *
 * It uses only the type names of reference/formats/formats.h (qc_format, qc_cast_policy and
 * the policy enums), so that a test can hand the same policy to both implementations.
 *
 * Method: a minifloat's values come from the value formula (-1)^S 2^(E-bias) (1 + M/2^m),
 * evaluated in double with ldexp; encoding searches the sorted list of those values for the
 * nearest one. e8m0 rules are written from their formats.md §2.2 descriptions with frexp. */
#ifndef QC_SLOW_FORMATS_H
#define QC_SLOW_FORMATS_H

#include <stdint.h>

#include "formats/formats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds the value tables; call once before anything else. Returns 0 on success. */
int slow_formats_init(void);

/* 1 for e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e2m1, e2m3, e3m2, bf16, f16. */
int slow_is_minifloat(qc_format f);
int slow_bits(qc_format f);              /* storage width of a minifloat code */
int slow_mbits(qc_format f);             /* mantissa field width */
const char *slow_format_name(qc_format f);

/* Which codes of a minifloat are not numbers (formats.md §1.1, §3.1). */
typedef enum slow_kind {
    SLOW_KIND_NONE, /* e2m1, e2m3, e3m2: every code is a number */
    SLOW_KIND_FN,   /* e4m3fn: S.1111.111 is NaN, no Inf */
    SLOW_KIND_FNUZ, /* e4m3fnuz, e5m2fnuz: 0x80 is the only NaN, no Inf, no -0 */
    SLOW_KIND_IEEE  /* e5m2, bf16, f16: exponent all ones is Inf or NaN */
} slow_kind;
slow_kind slow_format_kind(qc_format f);

/* The value of a code, exact in double: NaN (with the code's sign) and +-Inf where the format
 * has them, -0.0 for the negative zero code. */
double slow_minifloat_decode(qc_format f, uint32_t code);
int slow_minifloat_is_nan_code(qc_format f, uint32_t code);
int slow_minifloat_is_finite_code(qc_format f, uint32_t code);

/* The finite non-negative values of a format in increasing order, with their codes. */
int slow_value_count(qc_format f);
double slow_value_at(qc_format f, int i);
uint32_t slow_code_at(qc_format f, int i);

/* Nearest-value rounding of a finite magnitude a >= 0 (formats.md §1.2, §3.2). code is the magnitude
 * code of the chosen value; overflow is set when the nearest value lies beyond the largest
 * finite one (then code is meaningless). */
typedef struct slow_rounded {
    uint32_t code;
    int overflow;
} slow_rounded;
slow_rounded slow_round_magnitude(qc_format f, double a, qc_ties ties);

/* The rest of an encode: NaN and Inf inputs, overflow, sign and the sign of zero under the
 * policy, given the rounding r of |x| (ignored for NaN and Inf inputs). */
uint32_t slow_minifloat_finish(qc_format f, uint32_t xbits, slow_rounded r, const qc_cast_policy *p);

/* fp32 -> minifloat: slow_minifloat_finish(f, x, slow_round_magnitude(f, |x|, p->ties), p). */
uint32_t slow_minifloat_encode(qc_format f, float x, const qc_cast_policy *p);

/* e8m0 (formats.md §2.2 encode rules selected by p->e8m0, e8m0_emax, e8m0_mbits; §2.3 decoders). */
uint8_t slow_e8m0_encode(float x, const qc_cast_policy *p);
double slow_e8m0_decode(uint8_t code, qc_e8m0_decoder d);

/* For QC_E8M0_LOG2_CEIL: 1 when |x| = 2^k (1 + d) with 0 < d <= 2^-16, the inputs just above a
 * power of two where fp32 log2f may round to the integer k (formats.md §10 B11). */
int slow_just_above_pow2(float x);
/* |x| within 2^-16 (relative) below a power of two: where a float log2 can round up to the integer */
int slow_just_below_pow2(float x);

/* fp32 bit views (memcpy, the defined way in C). */
uint32_t slow_f32_bits(float x);
float slow_f32_from_bits(uint32_t u);

#ifdef __cplusplus
}
#endif

#endif
