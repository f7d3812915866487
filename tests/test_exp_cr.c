/* test_exp_cr.c: qcref_expf (reference/arith/exp_cr.h) is exp correctly rounded to fp32.
 *
 * The expected values are MPFR's (mpfr_exp at 24 bits, subnormalised as binary32: correct
 * rounding is MPFR's guarantee). Quick: the special values and range ends, the inputs whose double
 * result lies within 2^-49 of an fp32 rounding boundary (HARD below: the only ones where an error
 * bound of 2^-51 leaves the rounding undecided), and every 1021st fp32 pattern. --full: every one
 * of the 2^32 patterns, two ways: (1) the boundary scan must find no undecided input outside HARD;
 * (2) qcref_expf must equal fl32(exp(double)) of the host's libm, and MPFR decides each input where
 * they differ (so a wrong error bound in exp_cr.h fails too, unless libm errs the same way there,
 * which needs the true value within 2^-51 of a boundary: an input of (1)). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static const uint32_t HARD[] = {0x337fffff, 0x33800000, 0x343fffff, 0x34dffffd, 0x356ffff9, 0x35f7fff1, 0x367bffe1,
                                0x36fdffc1, 0x377eff81, 0x383a3ef1, 0x38e69cc1, 0x39c6be5b, 0x39e5bb1d, 0x3d1a274e,
                                0x3fe67199, 0x4001b249, 0x40315b33, 0x41cbf87b, 0x4288942b, 0xb3000000, 0xbae0e25c,
                                0xbbb70ee8, 0xbbf0edf1, 0xbc2a461a, 0xc13d6631, 0xc16912cd};
#define NHARD (sizeof HARD / sizeof HARD[0])

#ifdef QC_HAVE_MPFR
/* exp(x) correctly rounded to binary32 by MPFR (not thread-safe across the exponent range calls:
 * the callers hold mpfr_lock). */
static pthread_mutex_t mpfr_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t mpfr_expf_bits(float x)
{
    pthread_mutex_lock(&mpfr_lock);
    mpfr_t y;
    mpfr_set_emin(-148), mpfr_set_emax(128); /* binary32: 0.1b x 2^e, e in [-148, 128] */
    mpfr_init2(y, 24);
    mpfr_set_flt(y, x, MPFR_RNDN); /* exact: 24 bits hold any float */
    int inex = mpfr_exp(y, y, MPFR_RNDN);
    mpfr_subnormalize(y, inex, MPFR_RNDN);
    float f = mpfr_get_flt(y, MPFR_RNDN); /* exact */
    mpfr_clear(y);
    mpfr_set_emin(mpfr_get_emin_min()), mpfr_set_emax(mpfr_get_emax_max());
    pthread_mutex_unlock(&mpfr_lock);
    return qc_f32_bits(f);
}
#endif

/* 1 when x's double result lies within 2^-49 of a boundary of fp32 round-to-nearest. */
static int undecided(float x)
{
    if (x != x || x > 89.0f || x < -104.0f)
        return 0; /* answered without the double core */
    double d = qcref_exp_f64_core(x);
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

static int listed(uint32_t u)
{
    for (size_t i = 0; i < NHARD; i++)
        if (HARD[i] == u)
            return 1;
    return 0;
}

static void specials(void)
{
    CHECK(qc_f32_bits(qcref_expf(0.0f)) == 0x3F800000u && qc_f32_bits(qcref_expf(-0.0f)) == 0x3F800000u, "exp(+-0) = 1");
    CHECK(qc_f32_bits(qcref_expf(INFINITY)) == QC_F32_INF, "exp(+Inf) = +Inf");
    CHECK(qc_f32_bits(qcref_expf(-INFINITY)) == 0, "exp(-Inf) = +0");
    uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFA5A5A5u};
    for (int i = 0; i < 4; i++)
        CHECK(qc_f32_bits(qcref_expf(qc_f32_from_bits(nans[i]))) == (nans[i] | 0x00400000u),
              "exp(NaN %08x) is that NaN quieted", nans[i]);
    /* the range ends, as MPFR rounds them: the largest x with a finite exp and the next one up, the
     * smallest x with a nonzero exp and the next one down */
    CHECK(qc_f32_bits(qcref_expf(0x1.62e42ep+6f)) == 0x7F7FFF84u, "exp(0x1.62e42ep+6) = 0x7f7fff84");
    CHECK(qc_f32_bits(qcref_expf(0x1.62e430p+6f)) == QC_F32_INF, "exp(0x1.62e43p+6) overflows to +Inf");
    CHECK(qc_f32_bits(qcref_expf(-0x1.9fe368p+6f)) == 1, "exp(-0x1.9fe368p+6) = 2^-149");
    CHECK(qc_f32_bits(qcref_expf(-0x1.9fe36ap+6f)) == 0, "exp(-0x1.9fe36ap+6) rounds to +0");
    CHECK(qc_f32_bits(qcref_expf(1.0f)) == 0x402DF854u, "exp(1) = e = 0x402df854");
}

#ifdef QC_HAVE_MPFR
static void against_mpfr(uint32_t u, long *bad)
{
    float x = qc_f32_from_bits(u);
    if (x != x)
        return; /* specials() checks the NaN rule; MPFR has no NaN payloads */
    uint32_t got = qc_f32_bits(qcref_expf(x)), want = mpfr_expf_bits(x);
    if (got != want && (*bad)++ < 8)
        CHECK(0, "exp(%a) [0x%08x]: got 0x%08x, MPFR 0x%08x", (double)x, u, got, want);
    else if (got != want)
        failures++;
}
#endif

/* ---- the full tier: all 2^32 patterns in two threads ---- */

typedef struct scan {
    uint32_t part, parts;
    long unlisted, libm_differs, wrong;
    uint32_t first_unlisted, first_wrong;
} scan;

static void *scan_run(void *arg)
{
    scan *s = arg;
    for (uint64_t v = s->part; v < 0x100000000ull; v += s->parts) {
        uint32_t u = (uint32_t)v;
        float x = qc_f32_from_bits(u);
        if (undecided(x) && !listed(u) && s->unlisted++ == 0)
            s->first_unlisted = u;
        if (x != x)
            continue;
        float ours = qcref_expf(x), libm = (float)exp((double)x);
        if (qc_f32_bits(ours) == qc_f32_bits(libm))
            continue;
        s->libm_differs++;
#ifdef QC_HAVE_MPFR
        if (qc_f32_bits(ours) != mpfr_expf_bits(x) && s->wrong++ == 0)
            s->first_wrong = u;
#endif
    }
    return NULL;
}

static void full(void)
{
    scan s[2] = {{0, 2, 0, 0, 0, 0, 0}, {1, 2, 0, 0, 0, 0, 0}};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, scan_run, &s[1]) == 0;
    scan_run(&s[0]);
    if (threaded)
        pthread_join(th, NULL);
    else
        scan_run(&s[1]);
    long unlisted = s[0].unlisted + s[1].unlisted, differs = s[0].libm_differs + s[1].libm_differs;
    long wrong = s[0].wrong + s[1].wrong;
    CHECK(unlisted == 0, "%ld undecided inputs not in HARD (first 0x%08x): check them with MPFR and list them",
          unlisted, s[0].unlisted ? s[0].first_unlisted : s[1].first_unlisted);
    CHECK(wrong == 0, "%ld inputs where qcref_expf is not MPFR's (first 0x%08x)", wrong,
          s[0].wrong ? s[0].first_wrong : s[1].first_wrong);
    printf("full: 2^32 inputs, %ld where fl32(libm exp) differs (each decided by MPFR), %ld wrong, %ld undecided "
           "outside the list\n", differs, wrong, unlisted);
}

int main(int argc, char **argv)
{
    int want_full = argc > 1 && strcmp(argv[1], "--full") == 0;
    specials();
#ifndef QC_HAVE_MPFR
    printf("SKIPPED: built without MPFR (libmpfr-dev): no independent exp to check against\n");
    return failures ? 1 : SKIP;
#else
    long bad = 0;
    for (size_t i = 0; i < NHARD; i++) {
        CHECK(undecided(qc_f32_from_bits(HARD[i])), "HARD 0x%08x is decided: the list is stale", HARD[i]);
        against_mpfr(HARD[i], &bad);
    }
    long n = 0;
    for (uint64_t v = 0; v < 0x100000000ull; v += 1021, n++)
        against_mpfr((uint32_t)v, &bad);
    printf("quick: %zu undecided inputs and %ld sampled patterns (NaNs skipped) against MPFR, %ld differ\n", NHARD, n, bad);
    if (want_full)
        full();
    printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
#endif
}
