/* fuzz_util.h: what the libFuzzer targets of tests/fuzz share: a private scratch folder and whole
 * files written into it. Each target defines LLVMFuzzerTestOneInput (and may define
 * LLVMFuzzerInitialize); replay.c runs the same function over corpus files without libFuzzer. */
#ifndef QC_FUZZ_UTIL_H
#define QC_FUZZ_UTIL_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A scratch folder of this process under $TMPDIR (/dev/shm when it exists: no disk writes per
 * execution), created once; NULL when it cannot be made. */
static inline const char *fuzz_scratch(void)
{
    static char dir[256];
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        if (!t || !*t)
            t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/qc_fuzz.XXXXXX", t);
        if (!mkdtemp(dir))
            dir[0] = '\0';
    }
    return dir[0] ? dir : NULL;
}

static inline int fuzz_write(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = size ? fwrite(data, 1, size, f) : 0;
    return (fclose(f) != 0 || n != size) ? -1 : 0;
}

/* Removes every file of the scratch folder (what a command under test created there). */
static inline void fuzz_clean(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' || (e->d_name[1] && (e->d_name[1] != '.' || e->d_name[2]))) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
}

#endif
