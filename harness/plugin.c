/* plugin.c: `--backend plugin:PATH.so[:NAME]`, an ABI backend from a shared library. The library
 * exports QCHECK_PLUGIN_ENTRY (include/qcheck/qcheck.h); its backend's ABI version and struct
 * sizes must equal this qcheck's, else exit 2 naming both. The runner then treats it like any
 * backend: every item in its own child process, with a timeout. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

const qc_backend *qc_plugin_load(const char *spec, char *err, size_t errlen)
{
    const char *path = spec + strlen("plugin:"), *colon = strrchr(path, ':');
    char file[4096];
    const char *want = colon && strstr(colon, ".so") == NULL ? colon + 1 : NULL;
    size_t len = want ? (size_t)(colon - path) : strlen(path);
    if (!len || len >= sizeof file) {
        snprintf(err, errlen, "--backend %s: expected plugin:PATH.so[:NAME]", spec);
        return NULL;
    }
    snprintf(file, sizeof file, "%.*s", (int)len, path);
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "--backend %s: cannot load %s: %s", spec, file, dlerror());
        return NULL;
    }
    qcheck_plugin_fn entry = (qcheck_plugin_fn)dlsym(h, QCHECK_PLUGIN_ENTRY);
    if (!entry) {
        snprintf(err, errlen, "--backend %s: %s exports no %s (include/qcheck/qcheck.h)", spec, file, QCHECK_PLUGIN_ENTRY);
        return NULL;
    }
    int n = 0;
    const qcheck_backend *const *all = entry(&n);
    const qcheck_backend *b = NULL;
    char names[512] = "";
    for (int i = 0; all && i < n; i++) {
        if (!b && (!want || (all[i]->name && !strcmp(all[i]->name, want))))
            b = all[i];
        size_t at = strlen(names);
        snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "", all[i]->name ? all[i]->name : "?");
    }
    if (!b) {
        snprintf(err, errlen, "--backend %s: %s has no backend %s (it has: %s)", spec, file, want ? want : "at all",
                 names[0] ? names : "none");
        return NULL;
    }
    if (qc_abi_check(b, spec, err, errlen))
        return NULL;
    const char *group = b->flags & QCHECK_BACKEND_PLANTED ? "mutants" : "plugin"; /* a planted bug counts as a mutant */
    qc_backend be = {.name = strdup(spec), .group = group, .doc = b->doc ? b->doc : "", .abi = b};
    return be.name ? qc_backend_add(&be, err, errlen) : NULL;
}
