/* test_exp_cr.c: qcref_expf (reference/arith/exp_cr.h), qcref_exp2f (exp2_cr.h), qcref_erff (erf_cr.h)
 * and qcref_tanhf (tanh_cr.h) are exp, 2^x, erf and tanh correctly rounded to fp32. Usage:
 * test_exp_cr exp|exp2|erf|tanh [--full].
 *
 * The expected values are MPFR's (mpfr_exp / _exp2 / _erf / _tanh at 24 bits, subnormalised as
 * binary32: correct rounding is MPFR's guarantee) and, for the special values, worked by hand. Quick:
 * the special values and range ends, the inputs whose double result lies within 4 times its error
 * bound of an fp32 rounding boundary (the HARD lists below: exp and exp2, 2^-49 for a bound of 2^-51;
 * they hold every input where the bound leaves the rounding undecided), and every 1021st fp32
 * pattern, on which the accurate paths of exp2, erf and tanh (the functions send them few inputs) are
 * also checked alone. --full: every one of the 2^32 patterns, two ways: (1) the boundary scan must
 * find no undecided input outside the list; (2) the function must equal fl32 of the host libm's
 * double exp / exp2 / erf / tanh, and MPFR decides each input where they differ (so a wrong error
 * bound in the header fails too, unless libm errs the same way there, which needs the true value
 * within the bound of a boundary: an input of (1)). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith/erf_cr.h"
#include "arith/exp2_cr.h"
#include "arith/exp_cr.h"
#include "arith/tanh_cr.h"

#ifdef QC_HAVE_MPFR
#include <mpfr.h>
#endif

#define SKIP 77

static int failures;
#define CHECK(cond, ...)                                                                                                \
    do {                                                                                                                \
        if (!(cond)) {                                                                                                  \
            failures++;                                                                                                 \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                 \
            printf(__VA_ARGS__);                                                                                        \
            printf("\n");                                                                                               \
        }                                                                                                               \
    } while (0)

/* Found by --full (the boundary scan): fp32 patterns whose double result lies within 4 times its
 * error bound of a rounding boundary (exp, exp2: 2^-49; erf: 2^-50 for |x| <= 0.625, 2^-49 up to 1, 2^-45
 * above; tanh: 2^-48). */
static const uint32_t HARD_EXP[] = {0x337fffff, 0x33800000, 0x343fffff, 0x34dffffd, 0x356ffff9, 0x35f7fff1, 0x367bffe1,
                                    0x36fdffc1, 0x377eff81, 0x383a3ef1, 0x38e69cc1, 0x39c6be5b, 0x39e5bb1d, 0x3d1a274e,
                                    0x3fe67199, 0x4001b249, 0x40315b33, 0x41cbf87b, 0x4288942b, 0xb3000000, 0xbae0e25c,
                                    0xbbb70ee8, 0xbbf0edf1, 0xbc2a461a, 0xc13d6631, 0xc16912cd};
static const uint32_t HARD_EXP2[] = {0x33b8aa3b, 0x36879cf7, 0x3a07857c, 0x3b429d37, 0x3c02a9ad, 0x3dc9abe2,
                                     0xb338aa3b, 0xb338aa3c, 0xb466d4cb, 0xb4fdea14, 0xb5160a52, 0xb52d1f9a,
                                     0xb63b8cf0, 0xb8acad70, 0xb8bbd3a2, 0xb8d3d026, 0xbae36f38, 0xbaec2b40,
                                     0xbcaf4d02, 0xbcf3a937, 0xbe1f29de};

static const uint32_t HARD_ERF[] = {0x358e9d2d, 0x36aea466, 0x3940ead6, 0x39c0057d, 0x3fcbe78b, 0x3fde4ac1, 0x3fe46451,
                                    0x3ffafaa7, 0x402cf4ac, 0x40467275, 0x404f73bb, 0x406dc240, 0x407ad445, 0xb58e9d2d,
                                    0xb6aea466, 0xb940ead6, 0xb9c0057d, 0xbfcbe78b, 0xbfde4ac1, 0xbfe46451, 0xbffafaa7,
                                    0xc02cf4ac, 0xc0467275, 0xc04f73bb, 0xc06dc240, 0xc07ad445};
static const uint32_t HARD_TANH[] = {0x3ac37de2, 0x3cd41b91, 0x3d7c3055, 0x3eee0566, 0x3ff8bc7e, 0x4013cd84, 0x40a6ef82,
                                     0x40acb4d0, 0x40c5e8ca, 0xbac37de2, 0xbcd41b91, 0xbd7c3055, 0xbeee0566, 0xbff8bc7e,
                                     0xc013cd84, 0xc0a6ef82, 0xc0acb4d0, 0xc0c5e8ca};

/* A special input and its result bits. */
typedef struct special {
    float x;
    uint32_t want;
    const char *why;
} special;

/* exp: the range ends as MPFR rounds them (the largest x with a finite exp and the next one up, the
 * smallest x with a nonzero exp and the next one down). */
static const special SPECIAL_EXP[] = {
    {0.0f, 0x3F800000u, "exp(0) = 1"},
    {-0.0f, 0x3F800000u, "exp(-0) = 1"},
    {INFINITY, QC_F32_INF, "exp(+Inf) = +Inf"},
    {-INFINITY, 0, "exp(-Inf) = +0"},
    {0x1.62e42ep+6f, 0x7F7FFF84u, "exp(0x1.62e42ep+6) = 0x7f7fff84"},
    {0x1.62e430p+6f, QC_F32_INF, "exp(0x1.62e43p+6) overflows to +Inf"},
    {-0x1.9fe368p+6f, 1, "exp(-0x1.9fe368p+6) = 2^-149"},
    {-0x1.9fe36ap+6f, 0, "exp(-0x1.9fe36ap+6) rounds to +0"},
    {1.0f, 0x402DF854u, "exp(1) = e = 0x402df854"},
};

/* exp2, worked by hand: integers give powers of two; 2^-150 (half of 2^-149) ties to the even +0;
 * just above -150 the result rounds up to 2^-149; 2^-140.5 = 2^8.5 2^-149 = 362.04 2^-149;
 * 2^(128 - 2^-17) = 2^128 (1 - 2^-17 ln2) = (2^24 - 88.72) 2^104, rounded to 16777127 2^104. */
static const special SPECIAL_EXP2[] = {
    {0.0f, 0x3F800000u, "2^0 = 1"},
    {-0.0f, 0x3F800000u, "2^-0 = 1"},
    {INFINITY, QC_F32_INF, "2^+Inf = +Inf"},
    {-INFINITY, 0, "2^-Inf = +0"},
    {1.0f, 0x40000000u, "2^1 = 2"},
    {-1.0f, 0x3F000000u, "2^-1 = 0.5"},
    {0.5f, 0x3FB504F3u, "2^0.5 = sqrt 2 = 0x3fb504f3"},
    {127.0f, 0x7F000000u, "2^127"},
    {-126.0f, 0x00800000u, "2^-126, the smallest normal"},
    {-149.0f, 1, "2^-149, the smallest subnormal"},
    {-140.5f, 362, "2^-140.5 = 362.04 2^-149"},
    {-149.5f, 1, "2^-149.5 = 0.71 2^-149 rounds up"},
    {-150.0f, 0, "2^-150 ties to +0"},
    {-0x1.2bfffep+7f, 1, "2^-149.99998 rounds up to 2^-149"},
    {-200.0f, 0, "2^-200 = +0"},
    {128.0f, QC_F32_INF, "2^128 overflows"},
    {0x1.fffffep+6f, 0x7F7FFFA7u, "2^(128 - 2^-17) = 0x7f7fffa7"},
};

/* erf, worked by hand: odd, erf(+-0) = +-0; for a subnormal x, erf(x) = 2x / sqrt(pi) (1 - x^2 / 3)
 * and x^2 is below 2^-250: 2^-149 (2 / sqrt(pi)) = 1.128 2^-149 rounds to 2^-149, 8 2^-149 to 9.03
 * 2^-149 = 9 2^-149, 0x7fffff 2^-149 to 9465529.38 2^-149 = 0x906eb9; erf(3.93) and on is +-1
 * (erfc(3.93) < e^-3.93^2 / (3.93 sqrt(pi)) = 2^-25.08 < 2^-25, A&S 7.1.13); erf(1) = 0.84270079
 * (A&S Table 7.1) is 0x3f57bb3d. */
static const special SPECIAL_ERF[] = {
    {0.0f, 0, "erf(+0) = +0"},
    {-0.0f, QC_F32_SIGN, "erf(-0) = -0"},
    {INFINITY, 0x3F800000u, "erf(+Inf) = 1"},
    {-INFINITY, 0xBF800000u, "erf(-Inf) = -1"},
    {0x1p-149f, 1, "erf(2^-149) = 1.128 2^-149 rounds to 2^-149"},
    {-0x1p-149f, QC_F32_SIGN | 1, "erf(-2^-149) = -2^-149"},
    {0x1p-146f, 9, "erf(8 2^-149) = 9.03 2^-149"},
    {0x1.fffffcp-127f, 0x906EB9u, "erf(0x7fffff 2^-149) = 9465529.38 2^-149"},
    {3.93f, 0x3F800000u, "erf(3.93) rounds to 1"},
    {-1e30f, 0xBF800000u, "erf(-1e30) = -1"},
    {1.0f, 0x3F57BB3Du, "erf(1) = 0.84270079 = 0x3f57bb3d"},
};

/* tanh, worked by hand: odd, tanh(+-0) = +-0; for a subnormal or tiny x, tanh(x) = x (1 - x^2 / 3)
 * rounds to x (x^2 / 3 is below half an ulp of x for |x| < 2^-12); tanh(9.0625) and on is +-1
 * (1 - tanh < 2 e^-18.125 = 2^-25.15); tanh(ln 3 / 2) = (3 - 1) / (3 + 1) = 1/2: at x = 0x3f0c9f54,
 * the fp32 nearest ln 3 / 2 = 0.549306144, tanh is 0.5 + (1 - 0.25) (x - ln 3 / 2) = 0.5 + 0.75 (-1.37e-9)
 * just below 1/2, within a quarter ulp (2^-26 = 1.49e-8) of it: 0x3f000000. */
static const special SPECIAL_TANH[] = {
    {0.0f, 0, "tanh(+0) = +0"},
    {-0.0f, QC_F32_SIGN, "tanh(-0) = -0"},
    {INFINITY, 0x3F800000u, "tanh(+Inf) = 1"},
    {-INFINITY, 0xBF800000u, "tanh(-Inf) = -1"},
    {0x1p-149f, 1, "tanh(2^-149) = 2^-149"},
    {-0x1.fffffcp-127f, QC_F32_SIGN | 0x7FFFFFu, "tanh of the largest negative subnormal is itself"},
    {0x1.fffffep-13f, 0x397FFFFFu, "tanh(0x1.fffffep-13) rounds to itself"},
    {9.0625f, 0x3F800000u, "tanh(9.0625) rounds to 1"},
    {-1e30f, 0xBF800000u, "tanh(-1e30) = -1"},
    {0x1.193ea8p-1f, 0x3F000000u, "tanh(fl32(ln 3 / 2)) = 0.5"},
};

#define COUNT(a) (sizeof a / sizeof a[0])

/* One function under test. */
typedef struct fn {
    const char *name;
    float (*ours)(float);
    double (*core)(float);
    float below, above; /* the core answers for below <= x <= above */
    float (*accurate)(float); /* the accurate path, if any: checked on its own for below <= x <= above */
    double (*bound)(double);  /* the core's relative error bound at |x| (none: 2^-51) */
    int odd;                  /* the core is odd: the boundary scan looks at |x| */
    double (*libm)(double);
#ifdef QC_HAVE_MPFR
    int (*mpfr)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
#define MPFR_FN(g) .mpfr = g,
#else
#define MPFR_FN(g)
#endif
    const uint32_t *hard;
    size_t nhard;
    const special *specials;
    size_t nspecials;
} fn;

static const fn FNS[] = {
    {.name = "exp", .ours = qcref_expf, .core = qcref_exp_f64_core, .below = -104.0f, .above = 89.0f, .libm = exp,
     MPFR_FN(mpfr_exp) .hard = HARD_EXP, .nhard = COUNT(HARD_EXP), .specials = SPECIAL_EXP,
     .nspecials = COUNT(SPECIAL_EXP)},
    {.name = "exp2", .ours = qcref_exp2f, .core = qcref_exp2_f64_core, .below = -0x1.2bfffep+7f,
     .above = 0x1.fffffep+6f, .accurate = qcref_exp2f_accurate, .libm = exp2, MPFR_FN(mpfr_exp2) .hard = HARD_EXP2,
     .nhard = COUNT(HARD_EXP2), .specials = SPECIAL_EXP2, .nspecials = COUNT(SPECIAL_EXP2)},
    {.name = "erf", .ours = qcref_erff, .core = qcref_erf_f64_core, .below = -0x1.f70a3cp+1f, .above = 0x1.f70a3cp+1f,
     .accurate = qcref_erff_accurate, .bound = qcref_erf_f64_bound, .odd = 1, .libm = erf, MPFR_FN(mpfr_erf)
     .hard = HARD_ERF, .nhard = COUNT(HARD_ERF), .specials = SPECIAL_ERF, .nspecials = COUNT(SPECIAL_ERF)},
    {.name = "tanh", .ours = qcref_tanhf, .core = qcref_tanh_f64_core, .below = -0x1.21fffep+3f,
     .above = 0x1.21fffep+3f, .accurate = qcref_tanhf_accurate, .bound = qcref_tanh_f64_bound, .odd = 1,
     .libm = tanh, MPFR_FN(mpfr_tanh) .hard = HARD_TANH, .nhard = COUNT(HARD_TANH), .specials = SPECIAL_TANH,
     .nspecials = COUNT(SPECIAL_TANH)},
};

#ifdef QC_HAVE_MPFR
/* f(x) correctly rounded to binary32 by MPFR (the exponent range is global: callers are serialised
 * by mpfr_lock). */
static pthread_mutex_t mpfr_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t mpfr_bits(const fn *f, float x)
{
    pthread_mutex_lock(&mpfr_lock);
    mpfr_t y;
    mpfr_set_emin(-148), mpfr_set_emax(128); /* binary32: 0.1b x 2^e, e in [-148, 128] */
    mpfr_init2(y, 24);
    mpfr_set_flt(y, x, MPFR_RNDN); /* exact: 24 bits hold any float */
    int inex = f->mpfr(y, y, MPFR_RNDN);
    mpfr_subnormalize(y, inex, MPFR_RNDN);
    float r = mpfr_get_flt(y, MPFR_RNDN); /* exact */
    mpfr_clear(y);
    mpfr_set_emin(mpfr_get_emin_min()), mpfr_set_emax(mpfr_get_emax_max());
    pthread_mutex_unlock(&mpfr_lock);
    return qc_f32_bits(r);
}
#endif

/* 1 when x's double result lies within 4 times its error bound (exp, exp2: 2^-49) of a boundary of
 * fp32 round-to-nearest. */
static int undecided(const fn *fc, float x)
{
    if (!(x >= fc->below && x <= fc->above))
        return 0; /* answered without the double core (NaN included) */
    if (fc->odd && x < 0)
        x = -x; /* the boundaries of -d are those of d, negated */
    double d = fc->core(x);
    float f = (float)d;
    uint32_t b = qc_f32_bits(f);
    double lo, hi;
    if (b == QC_F32_INF)
        lo = 0x1.fffffep127 + 0x1p103, hi = INFINITY; /* the overflow threshold: FLT_MAX + half an ulp */
    else {
        lo = b == 0 ? -INFINITY : ((double)f + (double)qc_f32_from_bits(b - 1)) / 2;
        hi = b == 0x7F7FFFFFu ? 0x1.fffffep127 + 0x1p103 : ((double)f + (double)qc_f32_from_bits(b + 1)) / 2;
    }
    double w = d * 4 * (fc->bound ? fc->bound((double)x) : 0x1p-51);
    return !(d - lo > w && hi - d > w);
}

static int listed(const fn *f, uint32_t u)
{
    for (size_t i = 0; i < f->nhard; i++)
        if (f->hard[i] == u)
            return 1;
    return 0;
}

/* The table's values, and NaN in gives that NaN quieted out. */
static void specials(const fn *f)
{
    for (size_t i = 0; i < f->nspecials; i++) {
        uint32_t got = qc_f32_bits(f->ours(f->specials[i].x));
        CHECK(got == f->specials[i].want, "%s: got 0x%08x, want 0x%08x", f->specials[i].why, got, f->specials[i].want);
    }
    uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFA5A5A5u};
    for (int i = 0; i < 4; i++)
        CHECK(qc_f32_bits(f->ours(qc_f32_from_bits(nans[i]))) == (nans[i] | 0x00400000u),
              "%s(NaN %08x) is that NaN quieted", f->name, nans[i]);
}

#ifdef QC_HAVE_MPFR
static void against_mpfr(const fn *f, uint32_t u, long *bad)
{
    float x = qc_f32_from_bits(u);
    if (x != x)
        return; /* specials() checks the NaN rule; MPFR has no NaN payloads */
    uint32_t got = qc_f32_bits(f->ours(x)), want = mpfr_bits(f, x);
    if (got != want && (*bad)++ < 8)
        CHECK(0, "%s(%a) [0x%08x]: got 0x%08x, MPFR 0x%08x", f->name, (double)x, u, got, want);
    else if (got != want)
        failures++;
    if (!f->accurate || !(x >= f->below && x <= f->above))
        return; /* the accurate path alone, on every input it can take (the function sends it few) */
    if ((got = qc_f32_bits(f->accurate(x))) != want && (*bad)++ < 8)
        CHECK(0, "%s accurate path (%a) [0x%08x]: got 0x%08x, MPFR 0x%08x", f->name, (double)x, u, got, want);
    else if (got != want)
        failures++;
}
#endif

/* ---- the full tier: all 2^32 patterns in two threads ---- */

#define NSHOW 64
typedef struct scan {
    const fn *f;
    uint32_t part, parts;
    long unlisted, libm_differs, wrong;
    uint32_t unlisted_at[NSHOW], first_wrong;
} scan;

static void *scan_run(void *arg)
{
    scan *s = arg;
    const fn *f = s->f;
    for (uint64_t v = s->part; v < 0x100000000ull; v += s->parts) {
        uint32_t u = (uint32_t)v;
        float x = qc_f32_from_bits(u);
        if (undecided(f, x) && !listed(f, u) && s->unlisted++ < NSHOW)
            s->unlisted_at[s->unlisted - 1] = u;
        if (x != x)
            continue;
        float ours = f->ours(x), libm = (float)f->libm((double)x);
        if (qc_f32_bits(ours) == qc_f32_bits(libm))
            continue;
        s->libm_differs++;
#ifdef QC_HAVE_MPFR
        if (qc_f32_bits(ours) != mpfr_bits(f, x) && s->wrong++ == 0)
            s->first_wrong = u;
#endif
    }
    return NULL;
}

static void full(const fn *f)
{
    scan s[2] = {{.f = f, .part = 0, .parts = 2}, {.f = f, .part = 1, .parts = 2}};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, scan_run, &s[1]) == 0;
    scan_run(&s[0]);
    if (threaded)
        pthread_join(th, NULL);
    else
        scan_run(&s[1]);
    long unlisted = s[0].unlisted + s[1].unlisted, differs = s[0].libm_differs + s[1].libm_differs;
    long wrong = s[0].wrong + s[1].wrong;
    CHECK(unlisted == 0, "%s: %ld undecided inputs not in the HARD list: check them with MPFR and list them", f->name,
          unlisted);
    for (int t = 0; t < 2; t++)
        for (long i = 0; i < s[t].unlisted && i < NSHOW; i++)
            printf("  undecided 0x%08x\n", s[t].unlisted_at[i]);
    CHECK(wrong == 0, "%s: %ld inputs where it is not MPFR's (first 0x%08x)", f->name, wrong,
          s[0].wrong ? s[0].first_wrong : s[1].first_wrong);
    printf("full: 2^32 inputs, %ld where fl32(libm %s) differs (each decided by MPFR), %ld wrong, %ld undecided "
           "outside the list\n", differs, f->name, wrong, unlisted);
}

static const fn *pick(const char *name)
{
    for (size_t i = 0; name && i < COUNT(FNS); i++)
        if (strcmp(FNS[i].name, name) == 0)
            return &FNS[i];
    return NULL;
}

int main(int argc, char **argv)
{
    const fn *f = pick(argc > 1 ? argv[1] : NULL);
    int want_full = argc > 2 && strcmp(argv[2], "--full") == 0;
    if (!f || (argc > 2 && !want_full) || argc > 3) {
        fprintf(stderr, "usage: test_exp_cr exp|exp2|erf|tanh [--full]\n");
        return 2;
    }
    specials(f);
#ifndef QC_HAVE_MPFR
    (void)full; /* its MPFR decisions are the point of it */
    printf("SKIPPED: built without MPFR (libmpfr-dev): no independent %s to check against\n", f->name);
    return failures ? 1 : SKIP;
#else
    long bad = 0;
    for (size_t i = 0; i < f->nhard; i++) {
        CHECK(undecided(f, qc_f32_from_bits(f->hard[i])), "HARD 0x%08x is decided: the list is stale", f->hard[i]);
        against_mpfr(f, f->hard[i], &bad);
    }
    long n = 0;
    for (uint64_t v = 0; v < 0x100000000ull; v += 1021, n++)
        against_mpfr(f, (uint32_t)v, &bad);
    printf("quick %s: %zu undecided inputs and %ld sampled patterns (NaNs skipped) against MPFR, %ld differ\n", f->name,
           f->nhard, n, bad);
    if (want_full)
        full(f);
    printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
#endif
}
