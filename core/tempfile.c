/* tempfile.c: naming, creating and sweeping the temporaries of atomic writers (tempfile.h). */
#include "tempfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qc_checked.h"

int qc_temp_create(const char *final, char *tmp, size_t cap)
{
    for (int k = 0; k < 100; k++) {
        int len = snprintf(tmp, cap, "%s.tmp.%ld.%d", final, (long)getpid(), k);
        if (len < 0 || (size_t)len >= cap) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

static int ends_with(const char *s, size_t n, const char *tail)
{
    size_t t = strlen(tail);
    return n >= t && !memcmp(s + n - t, tail, t);
}

/* 1 when no process can still write under pid: none has it (ESRCH; EPERM is a live process of
 * another user), or it is a zombie. A writer killed in a container whose init never reaps stays a
 * zombie for good, and kill(pid, 0) succeeds on a zombie (proc(5): state Z in /proc/PID/stat). */
static int writer_gone(pid_t pid)
{
    if (kill(pid, 0) != 0)
        return errno == ESRCH;
    char path[40], stat[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = 0;
    const char *paren = strrchr(stat, ')'); /* the command name may hold spaces and parentheses */
    return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

int qc_temp_is_stale(const char *name, const char *const *suffixes)
{
    /* NAME = PREFIX ".tmp." PID "." K, PID and K decimal */
    const char *k = strrchr(name, '.');
    if (!k || k == name || qc_parse_u64(k + 1, 1000000, &(uint64_t){0}))
        return 0;
    const char *p = k - 1;
    while (p > name && *p != '.')
        p--;
    char pid_text[24];
    uint64_t pid;
    if (p == name || k - p - 1 <= 0 || k - p - 1 >= (int)sizeof pid_text)
        return 0;
    snprintf(pid_text, sizeof pid_text, "%.*s", (int)(k - p - 1), p + 1);
    if (qc_parse_u64(pid_text, 0x7FFFFFFF, &pid) || pid == 0 || (pid_t)pid == getpid())
        return 0;
    size_t prefix = (size_t)(p - name);
    if (prefix < 4 || memcmp(name + prefix - 4, ".tmp", 4))
        return 0;
    prefix -= 4;
    int ours = 0;
    for (const char *const *s = suffixes; *s; s++)
        ours |= ends_with(name, prefix, *s);
    return ours && writer_gone((pid_t)pid);
}

int qc_temp_sweep(const char *dir, const char *const *suffixes)
{
    DIR *d = opendir(dir);
    int removed = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (!qc_temp_is_stale(e->d_name, suffixes) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
            !S_ISREG(st.st_mode))
            continue;
        removed += unlinkat(dirfd(d), e->d_name, 0) == 0;
    }
    closedir(d);
    return removed;
}
