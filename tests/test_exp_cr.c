/* test_exp_cr.c: qcref_expf (reference/arith/exp_cr.h) and qcref_exp2f (exp2_cr.h) are exp and 2^x
 * correctly rounded to fp32. Usage: test_exp_cr exp|exp2 [--full].
 *
 * The expected values are MPFR's (mpfr_exp / mpfr_exp2 at 24 bits, subnormalised as binary32:
 * correct rounding is MPFR's guarantee) and, for the special values, worked by hand. Quick: the
 * special values and range ends, the inputs whose double result lies within 2^-49 of an fp32
 * rounding boundary (the HARD lists below: the only ones where an error bound of 2^-51 leaves the
 * rounding undecided), and every 1021st fp32 pattern, on which exp2's accurate path (the function
 * sends it few inputs) is also checked alone. --full: every one of the 2^32 patterns, two ways:
 * (1) the boundary scan must find no undecided input outside the list; (2) the function must equal
 * fl32 of the host libm's double exp / exp2, and MPFR decides each input where they differ (so a
 * wrong error bound in the header fails too, unless libm errs the same way there, which needs
 * the true value within 2^-51 of a boundary: an input of (1)). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith/exp2_cr.h"
#include "arith/exp_cr.h"

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

/* Found by --full (the boundary scan): fp32 patterns whose double result lies within 2^-49 of a
 * rounding boundary. */
static const uint32_t HARD_EXP[] = {0x337fffff, 0x33800000, 0x343fffff, 0x34dffffd, 0x356ffff9, 0x35f7fff1, 0x367bffe1,
                                    0x36fdffc1, 0x377eff81, 0x383a3ef1, 0x38e69cc1, 0x39c6be5b, 0x39e5bb1d, 0x3d1a274e,
                                    0x3fe67199, 0x4001b249, 0x40315b33, 0x41cbf87b, 0x4288942b, 0xb3000000, 0xbae0e25c,
                                    0xbbb70ee8, 0xbbf0edf1, 0xbc2a461a, 0xc13d6631, 0xc16912cd};
static const uint32_t HARD_EXP2[] = {0x33b8aa3b, 0x36879cf7, 0x3a07857c, 0x3b429d37, 0x3c02a9ad, 0x3dc9abe2,
                                     0xb338aa3b, 0xb338aa3c, 0xb466d4cb, 0xb4fdea14, 0xb5160a52, 0xb52d1f9a,
                                     0xb63b8cf0, 0xb8acad70, 0xb8bbd3a2, 0xb8d3d026, 0xbae36f38, 0xbaec2b40,
                                     0xbcaf4d02, 0xbcf3a937, 0xbe1f29de};

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

#define COUNT(a) (sizeof a / sizeof a[0])

/* One function under test. */
typedef struct fn {
    const char *name;
    float (*ours)(float);
    double (*core)(float);
    float below, above; /* the core answers for below <= x <= above */
    float (*accurate)(float); /* the accurate path, if any: checked on its own for below <= x <= above */
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

/* 1 when x's double result lies within 2^-49 of a boundary of fp32 round-to-nearest. */
static int undecided(const fn *fc, float x)
{
    if (!(x >= fc->below && x <= fc->above))
        return 0; /* answered without the double core (NaN included) */
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
    double w = d * 0x1p-49;
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
        fprintf(stderr, "usage: test_exp_cr exp|exp2 [--full]\n");
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
