/* hostile_plugin.c: a plugin whose entry misbehaves as HOSTILE_PLUGIN says (tests/test_plugin.py):
 * a count of 1 << 30 for a table of one, NULL backends, a backend without a name or with a comma in
 * it, an exit(0) or a crash in the entry. qcheck must refuse each, exit 2 naming the plugin. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "qcheck/qcheck.h"

static qcheck_status no_cast(const qcheck_cast_args *a, qcheck_ctx *c)
{
    (void)a, (void)c;
    return QCHECK_DECLINED;
}

static const qcheck_backend named = {QCHECK_BACKEND_HEADER, .name = "hostile", .doc = "hostile", .cast = no_cast};
static const qcheck_backend unnamed = {QCHECK_BACKEND_HEADER, .name = NULL, .doc = "hostile", .cast = no_cast};
static const qcheck_backend comma = {QCHECK_BACKEND_HEADER, .name = "a,b", .doc = "hostile", .cast = no_cast};

const qcheck_backend *const *qcheck_plugin_backends_v1(int *n)
{
    static const qcheck_backend *one[1], *nulls[2];
    const char *mode = getenv("HOSTILE_PLUGIN");
    mode = mode ? mode : "";
    *n = 1;
    one[0] = &named;
    if (!strcmp(mode, "huge"))
        *n = 1 << 30;
    else if (!strcmp(mode, "null"))
        return *n = 2, nulls;
    else if (!strcmp(mode, "unnamed"))
        one[0] = &unnamed;
    else if (!strcmp(mode, "comma"))
        one[0] = &comma;
    else if (!strcmp(mode, "exit"))
        exit(0);
    else if (!strcmp(mode, "crash"))
        raise(SIGSEGV);
    return one;
}
