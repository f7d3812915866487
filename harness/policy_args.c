/* policy_args.c: --profile and the explicit policy flags of `qcheck cast` / `qcheck decode`.
 * A profile sets every policy at once; an explicit flag overrides that one policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "params.h"

#define DEFAULT_PROFILE "ml_dtypes"

typedef const char *(*name_fn)(int);

/* "a, b, c" of every name a table has, for error messages. */
static const char *known_names(name_fn fn, int count)
{
    static char buf[512];
    buf[0] = '\0';
    for (int i = 0; i < count; i++) {
        const char *n = fn(i);
        if (strcmp(n, "?") == 0)
            continue;
        if (buf[0])
            strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
        strncat(buf, n, sizeof buf - strlen(buf) - 1);
    }
    return buf;
}

static const char *profile_name_at(int i) { return qc_cast_profile_at(i)->name; }
#define NAME_FN(f) (f)

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), QC_EXIT_USAGE)

/* One enum-valued key: parses it when present into *field. */
static int enum_key(const qc_params *p, const char *key, const char *what, int (*from)(const char *), name_fn names,
                    int count, int *field, char *err, size_t errlen)
{
    const char *v = qc_param(p, key);
    if (!v)
        return QC_EXIT_OK;
    int r = from(v);
    if (r < 0)
        return FAIL("unknown %s '%s' for %s (known: %s)", what, v, key, known_names(names, count));
    *field = r;
    return QC_EXIT_OK;
}

static int int_key(const qc_params *p, const char *key, int lo, int hi, int *field, char *err, size_t errlen)
{
    const char *v = qc_param(p, key);
    if (!v)
        return QC_EXIT_OK;
    char *end;
    long r = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || r < lo || r > hi)
        return FAIL("%s must be an integer in [%d, %d], got '%s'", key, lo, hi, v);
    *field = (int)r;
    return QC_EXIT_OK;
}

static const char *const policy_keys[] = {"profile", "overflow", "nan", "nan-code", "ties", "nonan",
                                          "zero-sign", "e8m0", "e8m0-emax", "e8m0-mbits", "e8m0-decode"};

int qc_policy_from_params(const qc_params *pa, qc_format f, qc_cast_policy *out, char *err, size_t errlen)
{
    const char *pname = qc_param(pa, "profile");
    qc_e8m0_decoder decoder_alias = QC_E8M0_DECODER_COUNT;
    const qc_cast_profile *prof = qc_cast_profile_find(pname ? pname : DEFAULT_PROFILE);
    if (!prof && pname && qc_e8m0_decoder_from_name(pname) >= 0) {
        /* decode --profile may name an e8m0 decoder directly (docs/spec/cli.md "decode": a cast profile or an e8m0 decoder name) */
        decoder_alias = (qc_e8m0_decoder)qc_e8m0_decoder_from_name(pname);
        prof = qc_cast_profile_find(DEFAULT_PROFILE);
    }
    if (!prof)
        return FAIL("unknown profile '%s' (known: %s; for e8m0 decoding also %s)", pname,
                    known_names(profile_name_at, qc_cast_profile_count()),
                    known_names(NAME_FN(qc_e8m0_decoder_name), QC_E8M0_DECODER_COUNT));
    qc_cast_policy p = qc_cast_profile_policy(prof, f);
    if (decoder_alias != QC_E8M0_DECODER_COUNT)
        p.e8m0_decoder = decoder_alias;

    int ov = p.overflow, ns = p.nan_sign, nc = p.nan_code, ti = p.ties, nn = p.nonan, zs = p.zero_sign;
    int e8 = p.e8m0, dec = p.e8m0_decoder;
    if (enum_key(pa, "overflow", "overflow policy", qc_overflow_from_name, NAME_FN(qc_overflow_name), 2, &ov, err,
                 errlen) ||
        enum_key(pa, "nan", "NaN policy", qc_nan_sign_from_name, NAME_FN(qc_nan_sign_name), 2, &ns, err, errlen) ||
        enum_key(pa, "nan-code", "NaN code", qc_nan_code_from_name, NAME_FN(qc_nan_code_name), 3, &nc, err, errlen) ||
        enum_key(pa, "ties", "tie rule", qc_ties_from_name, NAME_FN(qc_ties_name), 3, &ti, err, errlen) ||
        enum_key(pa, "nonan", "NaN rule for formats without NaN", qc_nonan_from_name, NAME_FN(qc_nonan_name), 4, &nn,
                 err, errlen) ||
        enum_key(pa, "zero-sign", "zero-sign rule", qc_zero_sign_from_name, NAME_FN(qc_zero_sign_name), 3, &zs, err,
                 errlen) ||
        enum_key(pa, "e8m0", "e8m0 rounding", qc_e8m0_rule_from_name, NAME_FN(qc_e8m0_rule_name), QC_E8M0_RULE_COUNT,
                 &e8, err, errlen) ||
        enum_key(pa, "e8m0-decode", "e8m0 decoder", qc_e8m0_decoder_from_name, NAME_FN(qc_e8m0_decoder_name),
                 QC_E8M0_DECODER_COUNT, &dec, err, errlen) ||
        int_key(pa, "e8m0-emax", -127, 127, &p.e8m0_emax, err, errlen) ||
        int_key(pa, "e8m0-mbits", 0, 21, &p.e8m0_mbits, err, errlen))
        return QC_EXIT_USAGE;
    p.overflow = (qc_overflow)ov;
    p.nan_sign = (qc_nan_sign)ns;
    p.nan_code = (qc_nan_code)nc;
    p.ties = (qc_ties)ti;
    p.nonan = (qc_nonan)nn;
    p.zero_sign = (qc_zero_sign)zs;
    p.e8m0 = (qc_e8m0_rule)e8;
    p.e8m0_decoder = (qc_e8m0_decoder)dec;
    *out = p;
    return QC_EXIT_OK;
}

/* The CLI's policy flags are the policy keys: the flags become params, one parser reads them. */
int qc_policy_from_args(qc_args *a, qc_format f, qc_cast_policy *out)
{
    qc_params p = {0};
    char err[1024];
    for (size_t k = 0; k < sizeof policy_keys / sizeof policy_keys[0]; k++)
        if (qc_opt(a, policy_keys[k]) && qc_params_set(&p, policy_keys[k], qc_opt(a, policy_keys[k]))) {
            qc_error(a->cmd, "--%s: value too long", policy_keys[k]);
            return QC_EXIT_USAGE;
        }
    if (qc_policy_from_params(&p, f, out, err, sizeof err)) {
        qc_error(a->cmd, "%s", err);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

int qc_format_or_die(const char *cmd, const char *value, qc_format *out)
{
    int f = qc_format_from_name(value);
    if (qc_name_or_die(cmd, "format", value, f, known_names(NAME_FN(qc_format_name), QC_FORMAT_COUNT)))
        return QC_EXIT_USAGE;
    *out = (qc_format)f;
    return QC_EXIT_OK;
}
