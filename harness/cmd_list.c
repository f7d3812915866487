/* cmd_list.c: `qcheck list [formats|profiles|cases|e8m0]`. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "runner.h"

#include "cases.h"
#include "registry.h"
#include "golden_io.h"
#include "result.h"

const char *qc_cases_dir(void);

static int list_cases(void)
{
    qc_case *cases;
    int n;
    char err[1024];
    if (qc_cases_load_dir(qc_cases_dir(), &cases, &n, err, sizeof err)) {
        qc_error("list", "%s", err);
        qc_cases_free(cases, n);
        return QC_EXIT_USAGE;
    }
    static const char *const tiers[] = {"quick", "full", "bringup"};
    int rc = QC_EXIT_OK;
    for (int i = 0; i < n && !rc; i++) {
        printf("%-24s op %-10s tiers", cases[i].name, cases[i].op);
        for (int t = 0; t < 3 && !rc; t++)
            if (cases[i].tiers & (1 << t)) {
                qc_instance *inst = NULL;
                int ni = 0, cap = 0;
                if (qc_case_expand(&cases[i], 1 << t, 0, &inst, &ni, &cap, err, sizeof err)) {
                    printf("\n"); /* a count is printed only when it is the count */
                    qc_error("list", "%s", err);
                    rc = QC_EXIT_USAGE;
                } else {
                    printf(" %s:%d", tiers[t], ni);
                }
                free(inst);
            }
        if (!rc)
            printf("\n    %s\n", cases[i].doc);
    }
    qc_cases_free(cases, n);
    return rc;
}

/* Every instance of every tier (or of --suite's), one line each: tier, id, golden file name. */
static int list_instances(const char *suite, const char *shard)
{
    int shard_index = 0, shard_count = 1;
    if (shard && qc_parse_shard("list", shard, &shard_index, &shard_count))
        return QC_EXIT_USAGE;
    qc_case *cases;
    int n;
    char err[1024], path[2048];
    int want = suite ? qc_tier_from_name(suite) : QC_TIER_QUICK | QC_TIER_FULL | QC_TIER_BRINGUP;
    if (want < 0) {
        qc_error("list", "unknown suite '%s' (known: quick, full, bringup)", suite);
        return QC_EXIT_USAGE;
    }
    if (qc_cases_load_dir(qc_cases_dir(), &cases, &n, err, sizeof err)) {
        qc_error("list", "%s", err);
        qc_cases_free(cases, n);
        return QC_EXIT_USAGE;
    }
    static const char *const tiers[] = {"quick", "full", "bringup"};
    int rc = QC_EXIT_OK;
    for (int i = 0; i < n && !rc; i++)
        for (int t = 0; t < 3 && !rc; t++) {
            qc_instance *inst = NULL;
            int ni = 0, cap = 0;
            if ((want & (1 << t)) && qc_case_expand(&cases[i], 1 << t, 0, &inst, &ni, &cap, err, sizeof err)) {
                qc_error("list", "%s", err);
                rc = QC_EXIT_USAGE;
            }
            for (int k = 0; k < ni; k++) {
                if (qc_shard_of(&inst[k], shard_count) != shard_index)
                    continue;
                qc_golden_path(".", &inst[k], "ref", path, sizeof path);
                printf("%s\t%s\t%s\n", tiers[t], inst[k].id, path + 2);
            }
            free(inst);
        }
    qc_cases_free(cases, n);
    return rc;
}

static void list_ops(void)
{
    for (int i = 0; i < qc_op_count(); i++)
        printf("%-12s %s\n", qc_op_at(i)->name, qc_op_at(i)->doc);
}

#include "layouts/layouts.h"

static void list_layouts(void)
{
    for (int i = 0; i < qcref_layout_count(); i++) {
        const qc_layout_desc *d = qcref_layout_at(i);
        printf("%-28s %s\n", d->name, d->summary);
    }
    printf("(qcheck layout list: parameters, shapes, padding rule and source of each)\n");
}

static void list_backends(void)
{
    for (int i = 0; i < qc_backend_count(); i++) {
        const qc_backend *b = qc_backend_at(i);
        const char *why = qc_backend_unavailable(b);
        printf("%-28s group %-8s %s%s%s%s\n", b->name, b->group, b->doc, why ? "  [unavailable: " : "", why ? why : "",
               why ? "]" : "");
    }
}

static void list_formats(void)
{
    printf("%-10s %4s  %s\n", "format", "bits", "layout");
    for (int i = 0; i < QC_FORMAT_COUNT; i++) {
        qc_format f = (qc_format)i;
        if (qcref_is_minifloat(f)) {
            qc_minifloat m = qcref_minifloat(f);
            static const char *const specials[] = {"Inf and NaN codes", "NaN only (S.1111.111)",
                                                   "NaN = 0x80, no -0", "no Inf, no NaN"};
            printf("%-10s %4d  1 sign, %d exponent (bias %d), %d mantissa; %s\n", qc_format_name(f), m.bits,
                   m.ebits, m.bias, m.mbits, specials[m.specials]);
        } else {
            printf("%-10s %4d  %s\n", qc_format_name(f), qcref_format_bits(f),
                   f == QC_E8M0 ? "8 exponent bits, bias 127, 0xFF = NaN, no zero, no sign"
                                : "IEEE binary32");
        }
    }
}

#ifndef QC_REAL_DIR
#define QC_REAL_DIR "golden/real"
#endif

/* What backs a recipe profile: the recorded real-library files of golden/real/ (its README) that
 * name it, and the sources they came from (their `backend` attribute: library-version@device). */
typedef struct evidence {
    char recipe[24], profile[48], sources[256], formats[160]; /* formats: the cast targets recorded */
    int files;
    int64_t tensors;
} evidence;

#define QC_MAX_EVIDENCE 128

static void add_evidence(evidence *ev, int *n, const char *path)
{
    qc_golden_meta m;
    qc_tensor_set in = {0}, out = {0};
    qc_params p = {0};
    char err[512];
    if (qc_golden_read(path, &m, &in, &out, err, sizeof err) || qc_params_from_json(m.params_json, &p, err, sizeof err)) {
        fprintf(stderr, "qcheck list: %s: %s (not counted)\n", path, err);
        goto done;
    }
    const char *recipe = strcmp(m.op, "cast") ? qc_param_or(&p, "recipe", "?") : "cast";
    int i = 0;
    while (i < *n && (strcmp(ev[i].recipe, recipe) || strcmp(ev[i].profile, m.profile)))
        i++;
    if (i == *n && *n < QC_MAX_EVIDENCE) {
        memset(&ev[i], 0, sizeof ev[i]);
        snprintf(ev[i].recipe, sizeof ev[i].recipe, "%s", recipe);
        snprintf(ev[i].profile, sizeof ev[i].profile, "%s", m.profile);
        (*n)++;
    }
    if (i < *n) {
        ev[i].files++, ev[i].tensors += in.n + out.n;
        if (!strstr(ev[i].sources, m.backend))
            snprintf(ev[i].sources + strlen(ev[i].sources), sizeof ev[i].sources - strlen(ev[i].sources), "%s%s",
                     ev[i].sources[0] ? ", " : "", m.backend);
        const char *to = qc_param_or(&p, "to", NULL);
        char key[32];
        snprintf(key, sizeof key, " %s,", to ? to : "");
        if (to && !strstr(ev[i].formats, key))
            snprintf(ev[i].formats + strlen(ev[i].formats), sizeof ev[i].formats - strlen(ev[i].formats), "%s", key);
    }
done:
    qc_set_free(&in);
    qc_set_free(&out);
}

/* Every DIR/<folder>/<file>.h5 ($QCHECK_REAL or the source tree's golden/real). */
static int gather_evidence(evidence *ev, const char **dir)
{
    const char *env = getenv("QCHECK_REAL");
    *dir = env && *env ? env : QC_REAL_DIR;
    int n = 0;
    DIR *top = opendir(*dir);
    struct dirent *d, *f;
    while (top && (d = readdir(top))) {
        char sub[1024], path[2048];
        if (d->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof sub, "%s/%s", *dir, d->d_name);
        DIR *s = opendir(sub);
        while (s && (f = readdir(s))) {
            size_t len = strlen(f->d_name);
            if (len > 3 && !strcmp(f->d_name + len - 3, ".h5")) {
                snprintf(path, sizeof path, "%s/%s", sub, f->d_name);
                add_evidence(ev, &n, path);
            }
        }
        if (s)
            closedir(s);
    }
    if (top)
        closedir(top);
    return n;
}

/* kind: a recipe's name, or "cast" for a cast profile. */
static void print_evidence(const char *name, const char *kind, const evidence *ev, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(ev[i].profile, name) && !strcmp(ev[i].recipe, kind)) {
            printf("  backed by: %d files recorded from %s (%lld tensors%s%.*s; CTest conformance re-runs them)\n",
                   ev[i].files, ev[i].sources, (long long)ev[i].tensors, ev[i].formats[0] ? "; to" : "",
                   ev[i].formats[0] ? (int)strlen(ev[i].formats) - 1 : 0, ev[i].formats);
            return;
        }
    printf("  backed by: from source reading only (no recorded file names it)\n");
}

static void list_profiles(const evidence *ev, int nev)
{
    for (int i = 0; i < qc_cast_profile_count(); i++) {
        const qc_cast_profile *p = qc_cast_profile_at(i);
        printf("%s (cast)\n  library: %s %s\n  reproduces: %s\n", p->name, p->of.library, p->of.versions,
               p->reproduces);
        printf("  fp8: overflow %s, NaN %s/%s; bf16: overflow %s, NaN %s/%s; f16: overflow %s, NaN %s/%s\n",
               qc_overflow_name(p->fp8.overflow), qc_nan_sign_name(p->fp8.nan_sign),
               qc_nan_code_name(p->fp8.nan_code), qc_overflow_name(p->bf16.overflow),
               qc_nan_sign_name(p->bf16.nan_sign), qc_nan_code_name(p->bf16.nan_code),
               qc_overflow_name(p->f16.overflow), qc_nan_sign_name(p->f16.nan_sign),
               qc_nan_code_name(p->f16.nan_code));
        printf("  fp4/fp6: ties %s, NaN %s, zero sign %s; e8m0: encode %s, decode %s\n", qc_ties_name(p->ties),
               qc_nonan_name(p->nonan), qc_zero_sign_name(p->zero_sign), qc_e8m0_rule_name(p->e8m0),
               qc_e8m0_decoder_name(p->e8m0_decoder));
        print_evidence(p->name, "cast", ev, nev);
    }
}

/* Recipe profiles: one line per name with the recipes it defines, then each row's source. */
static void list_recipe_profiles(const evidence *ev, int nev)
{
    printf("\nrecipe profiles (qcheck quant --recipe R --profile P; a recipe accepts the names listed for it):\n");
    for (int r = 0; r < QC_RECIPE_COUNT; r++) {
        printf("  %-12s", qc_recipe_name(r));
        for (int i = 0; i < qc_recipe_profile_count(); i++)
            if (qc_recipe_profile_at(i)->recipe == (qc_recipe)r)
                printf(" %s", qc_recipe_profile_at(i)->name);
        printf("   (default %s)\n", qc_recipe_default_profile((qc_recipe)r));
    }
    for (int i = 0; i < qc_recipe_profile_count(); i++) {
        const qc_recipe_profile *p = qc_recipe_profile_at(i);
        printf("%s (recipe %s)\n  library: %s %s\n  reproduces: %s\n", p->name, qc_recipe_name(p->recipe),
               p->of.library, p->of.versions, p->reproduces);
        print_evidence(p->name, qc_recipe_name(p->recipe), ev, nev);
    }
}

/* Cast profiles, then recipe profiles, each with what backs it. */
static void list_all_profiles(void)
{
    static evidence ev[QC_MAX_EVIDENCE];
    const char *dir;
    int nev = gather_evidence(ev, &dir);
    printf("(\"backed by\": the recorded real-library outputs under %s that the profile reproduces; README there)\n",
           dir);
    list_profiles(ev, nev);
    list_recipe_profiles(ev, nev);
}

/* --for LIB==VERSION: the cast profile that names that release (what the oracle tests select). */
static int profile_for(const char *spec)
{
    const char *sep = strstr(spec, "==");
    char lib[64];
    if (!sep || sep == spec || !sep[2] || (size_t)(sep - spec) >= sizeof lib) {
        qc_error("list", "--for %s: expected LIBRARY==VERSION (e.g. ml_dtypes==0.7.0)", spec);
        return QC_EXIT_USAGE;
    }
    snprintf(lib, sizeof lib, "%.*s", (int)(sep - spec), spec);
    const qc_cast_profile *p = qc_cast_profile_for(lib, sep + 2);
    if (p) {
        printf("%s\n", p->name);
        return QC_EXIT_OK;
    }
    char known[512] = "";
    for (int i = 0; i < qc_cast_profile_count(); i++)
        if (!strcmp(qc_cast_profile_at(i)->of.library, lib))
            qc_appendf(known, sizeof known, "%s %s (%s)", known[0] ? "," : "", qc_cast_profile_at(i)->name,
                       qc_cast_profile_at(i)->of.versions);
    qc_error("list", "no profile reproduces %s %s%s%s", lib, sep + 2, known[0] ? "; profiles of it:" : " (no profile names that library)",
             known);
    return QC_EXIT_USAGE;
}

static void list_e8m0(void)
{
    printf("e8m0 encode rules (--e8m0):");
    for (int i = 0; i < QC_E8M0_RULE_COUNT; i++)
        printf(" %s", qc_e8m0_rule_name(i));
    printf("\ne8m0 decoders (--e8m0-decode):");
    for (int i = 0; i < QC_E8M0_DECODER_COUNT; i++)
        printf(" %s", qc_e8m0_decoder_name(i));
    printf("\n");
}

int cmd_list(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "list", argc, argv, NULL))
        return QC_EXIT_USAGE;
    const char *for_lib = qc_opt(&a, "for"), *suite = qc_opt(&a, "suite"), *shard = qc_opt(&a, "shard");
    if (qc_check_all_used(&a) || qc_positionals_at_most(&a, 1))
        return QC_EXIT_USAGE;
    if (a.help) {
        printf("usage: qcheck list [cases|ops|backends|profiles|layouts|formats|e8m0]   (no argument: all)\n"
               "       qcheck list profiles --for LIBRARY==VERSION   the cast profile that reproduces that release\n"
               "       qcheck list instances [--suite TIER] [--shard I/N|auto]   every instance (of one shard of\n"
               "                                       qcheck run --shard): tier, id, golden file\n"
               "                                                     (exit 2 when none does)\n");
        return QC_EXIT_OK;
    }
    if (for_lib)
        return profile_for(for_lib);
    const char *what = a.npos ? a.pos[0] : "all";
    if (!strcmp(what, "instances"))
        return list_instances(suite, shard);
    int all = strcmp(what, "all") == 0;
    if (all || strcmp(what, "formats") == 0)
        list_formats();
    if (all || strcmp(what, "profiles") == 0)
        list_all_profiles();
    if (all || strcmp(what, "e8m0") == 0)
        list_e8m0();
    if (all || strcmp(what, "ops") == 0)
        list_ops();
    if (all || strcmp(what, "layouts") == 0)
        list_layouts();
    if (all || strcmp(what, "backends") == 0)
        list_backends();
    if (all || strcmp(what, "cases") == 0)
        return list_cases();
    if (!all && strcmp(what, "formats") && strcmp(what, "profiles") && strcmp(what, "e8m0") && strcmp(what, "ops") &&
        strcmp(what, "backends") && strcmp(what, "layouts")) {
        qc_error(a.cmd, "unknown list '%s' (known: cases, ops, backends, profiles, layouts, formats, e8m0)", what);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}
