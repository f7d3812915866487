/* plugin.c: `--backend plugin:PATH.so[:NAME]`, an ABI backend from a shared library. The library
 * exports QCHECK_PLUGIN_ENTRY (include/qcheck/qcheck.h); its backend's ABI version and struct
 * sizes must equal this qcheck's, else exit 2 naming both. The runner then treats it like any
 * backend: every item in its own child process, with a timeout. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "registry.h"
#include "runner.h"

/* The most backends one plugin may offer. */
#define QC_PLUGIN_MAX_BACKENDS 256

/* What is wrong with the table a plugin's entry returned (NULL when nothing): a count out of range,
 * a NULL entry, a name that --backend could not name (none, empty, or with a comma or a
 * blank). A table of 1 << 30 backends, or of NULL ones, had crashed qcheck. */
static const char *table_problem(const qcheck_backend *const *all, int n, char *buf, size_t len)
{
    if (!all || n < 1 || n > QC_PLUGIN_MAX_BACKENDS)
        return snprintf(buf, len, "its entry returned %d backends%s (1 to %d)", n, all ? "" : " and no table",
                        QC_PLUGIN_MAX_BACKENDS), buf;
    for (int i = 0; i < n; i++) {
        if (!all[i])
            return snprintf(buf, len, "its backend %d of %d is NULL", i + 1, n), buf;
        const char *name = all[i]->name;
        if (!name || !*name || strpbrk(name, ", \t\n"))
            return snprintf(buf, len, "its backend %d of %d has no usable name ('%.60s': non-empty, no comma "
                            "or blank)", i + 1, n, name ? name : "(null)"), buf;
    }
    return NULL;
}

/* Loads the library and checks its table in a child first: a library that ends the process while
 * loading or in its entry (exit(0) from a constructor: qcheck had exited 0 in silence) or crashes
 * there is an error naming the plugin, not the end of qcheck. */
static int probe(const char *spec, const char *file, char *err, size_t errlen)
{
    int fds[2];
    if (pipe(fds) != 0)
        return snprintf(err, errlen, "--backend %s: cannot make a pipe", spec), 2;
    pid_t pid = qc_fork();
    if (pid == 0) {
        close(fds[0]);
        char why[512];
        void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
        qcheck_plugin_fn entry = h ? (qcheck_plugin_fn)dlsym(h, QCHECK_PLUGIN_ENTRY) : NULL;
        int n = 0;
        const qcheck_backend *const *all = entry ? entry(&n) : NULL;
        /* no library or no entry: "ok" here, and the parent's own load names what is missing */
        const char *problem = entry ? table_problem(all, n, why, sizeof why) : NULL, *say = problem ? problem : "ok";
        ssize_t w = write(fds[1], say, strlen(say));
        _exit(w < 0 ? 3 : 0);
    }
    close(fds[1]);
    char got[512] = "";
    size_t have = 0;
    ssize_t k;
    while (pid > 0 && have < sizeof got - 1 && (k = read(fds[0], got + have, sizeof got - 1 - have)) > 0)
        have += (size_t)k;
    close(fds[0]);
    int st = 0;
    if (pid > 0)
        waitpid(pid, &st, 0);
    if (pid > 0 && !strcmp(got, "ok"))
        return 0;
    if (pid < 0)
        snprintf(err, errlen, "--backend %s: cannot fork to load %s", spec, file);
    else if (have)
        snprintf(err, errlen, "--backend %s: %s: %s", spec, file, got);
    else if (WIFSIGNALED(st))
        snprintf(err, errlen, "--backend %s: loading %s crashed: signal %d (%s)", spec, file, WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
    else
        snprintf(err, errlen, "--backend %s: %s ended the process while loading or in its entry (exit status %d)",
                 spec, file, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 2;
}

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
    if (probe(spec, file, err, errlen))
        return NULL;
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
    if (table_problem(all, n, names, sizeof names)) {
        snprintf(err, errlen, "--backend %s: %s: %s", spec, file, names);
        return NULL;
    }
    for (int i = 0; all && i < n; i++) {
        if (!b && (!want || !strcmp(all[i]->name, want)))
            b = all[i];
        size_t at = strlen(names);
        snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "", all[i]->name);
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
