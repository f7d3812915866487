/* replay.c: runs a fuzz target's LLVMFuzzerTestOneInput over files and folders of files (a seed
 * corpus, the crash reproducers kept in tests/fuzz/corpus), without libFuzzer: the quick tests and
 * ci/sanitize.sh replay every corpus with any compiler. Exit 0 when every input ran (a crash or a
 * sanitizer report ends the process as it would end the fuzzer). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        uint8_t *g = realloc(buf, cap *= 2);
        if (!g)
            free(buf);
        buf = g;
    }
    fclose(f);
    if (!buf)
        return -1;
    uint8_t *exact = malloc(n ? n : 1); /* exactly n bytes, so that ASan sees a read past the input */
    if (exact && n)
        memcpy(exact, buf, n);
    free(buf);
    if (!exact)
        return -1;
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    char *names[4096];
    int n = 0, bad = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 4096)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int i = 0; i < n; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        bad |= run_file(p) != 0;
        *count += 1;
        free(names[i]);
    }
    return bad;
}

int main(int argc, char **argv)
{
    int count = 0, bad = 0;
    for (int i = 1; i < argc; i++) { /* absolute: a target may change its working folder */
        char *abs = realpath(argv[i], NULL);
        if (abs)
            argv[i] = abs; /* kept until exit */
    }
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: cannot open %s\n", argv[i]);
            bad = 1;
        } else if (S_ISDIR(st.st_mode)) {
            bad |= run_dir(argv[i], &count);
        } else {
            bad |= run_file(argv[i]) != 0;
            count++;
        }
    }
    printf("replay: %d inputs ran%s\n", count, bad ? ", some could not be read" : "");
    return bad || count == 0;
}
