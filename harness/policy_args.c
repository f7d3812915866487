/* policy_args.c: --profile and the explicit policy flags of `qcheck cast` / `qcheck decode`.
 * A profile sets every policy at once; an explicit flag overrides that one policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

/* One enum-valued option: parses it when present into *field. */
static int enum_opt(qc_args *a, const char *key, const char *what, int (*from)(const char *), name_fn names,
                    int count, int *field)
{
    const char *v = qc_opt(a, key);
    if (!v)
        return QC_EXIT_OK;
    int r = from(v);
    if (qc_name_or_die(a->cmd, what, v, r, known_names(names, count)))
        return QC_EXIT_USAGE;
    *field = r;
    return QC_EXIT_OK;
}

static int int_opt(qc_args *a, const char *key, int lo, int hi, int *field)
{
    const char *v = qc_opt(a, key);
    if (!v)
        return QC_EXIT_OK;
    char *end;
    long r = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || r < lo || r > hi) {
        qc_error(a->cmd, "--%s must be an integer in [%d, %d], got '%s'", key, lo, hi, v);
        return QC_EXIT_USAGE;
    }
    *field = (int)r;
    return QC_EXIT_OK;
}

int qc_policy_from_args(qc_args *a, qc_format f, qc_cast_policy *out)
{
    const char *pname = qc_opt(a, "profile");
    qc_e8m0_decoder decoder_alias = QC_E8M0_DECODER_COUNT;
    const qc_cast_profile *prof = qc_cast_profile_find(pname ? pname : DEFAULT_PROFILE);
    if (!prof && pname && qc_e8m0_decoder_from_name(pname) >= 0) {
        /* decode --profile may name an e8m0 decoder directly (spec/cli.md: "where decoders differ") */
        decoder_alias = (qc_e8m0_decoder)qc_e8m0_decoder_from_name(pname);
        prof = qc_cast_profile_find(DEFAULT_PROFILE);
    }
    if (!prof) {
        char known[512];
        snprintf(known, sizeof known, "%s; for e8m0 decoding also %s",
                 known_names(profile_name_at, qc_cast_profile_count()),
                 known_names(NAME_FN(qc_e8m0_decoder_name), QC_E8M0_DECODER_COUNT));
        return qc_name_or_die(a->cmd, "profile", pname, -1, known);
    }
    qc_cast_policy p = qc_cast_profile_policy(prof, f);
    if (decoder_alias != QC_E8M0_DECODER_COUNT)
        p.e8m0_decoder = decoder_alias;

    int ov = p.overflow, ns = p.nan_sign, nc = p.nan_code, ti = p.ties, nn = p.nonan, zs = p.zero_sign;
    int e8 = p.e8m0, dec = p.e8m0_decoder;
    if (enum_opt(a, "overflow", "overflow policy", qc_overflow_from_name, NAME_FN(qc_overflow_name), 2, &ov) ||
        enum_opt(a, "nan", "NaN policy", qc_nan_sign_from_name, NAME_FN(qc_nan_sign_name), 2, &ns) ||
        enum_opt(a, "nan-code", "NaN code", qc_nan_code_from_name, NAME_FN(qc_nan_code_name), 3, &nc) ||
        enum_opt(a, "ties", "tie rule", qc_ties_from_name, NAME_FN(qc_ties_name), 3, &ti) ||
        enum_opt(a, "nonan", "NaN rule for formats without NaN", qc_nonan_from_name, NAME_FN(qc_nonan_name), 4,
                 &nn) ||
        enum_opt(a, "zero-sign", "zero-sign rule", qc_zero_sign_from_name, NAME_FN(qc_zero_sign_name), 3, &zs) ||
        enum_opt(a, "e8m0", "e8m0 rounding", qc_e8m0_rule_from_name, NAME_FN(qc_e8m0_rule_name),
                 QC_E8M0_RULE_COUNT, &e8) ||
        enum_opt(a, "e8m0-decode", "e8m0 decoder", qc_e8m0_decoder_from_name, NAME_FN(qc_e8m0_decoder_name),
                 QC_E8M0_DECODER_COUNT, &dec) ||
        int_opt(a, "e8m0-emax", -127, 127, &p.e8m0_emax) || int_opt(a, "e8m0-mbits", 0, 21, &p.e8m0_mbits))
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

int qc_format_or_die(const char *cmd, const char *value, qc_format *out)
{
    int f = qc_format_from_name(value);
    if (qc_name_or_die(cmd, "format", value, f, known_names(NAME_FN(qc_format_name), QC_FORMAT_COUNT)))
        return QC_EXIT_USAGE;
    *out = (qc_format)f;
    return QC_EXIT_OK;
}
