/* files.c: whole files in and out (files.h). */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tempfile.h"

int qc_write_all(int fd, const void *data, size_t n)
{
    for (const char *p = data; n;) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            errno = k == 0 ? ENOSPC : errno;
            return -1;
        }
        p += k, n -= (size_t)k;
    }
    return 0;
}

/* *step = what, returns the errno of the failure (EIO when a call failed without one). */
static int failed(const char **step, const char *what, int err)
{
    if (step)
        *step = what;
    return err ? err : EIO;
}

int qc_publish(const char *final, const char *temp_prefix, const void *data, size_t size, int durable,
               const char **step)
{
    struct stat st;
    const int in_place = lstat(final, &st) == 0 && !S_ISREG(st.st_mode);
    char tmp[4200];
    int fd = in_place ? open(final, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)
                      : qc_temp_create(temp_prefix ? temp_prefix : final, tmp, sizeof tmp);
    if (fd < 0)
        return failed(step, in_place ? "open it" : "create a temporary file beside it", errno);
    int err = qc_write_all(fd, data, size) != 0 || (durable && !in_place && fsync(fd) != 0) ? errno : 0;
    if (close(fd) != 0 && !err)
        err = errno ? errno : EIO;
    if (!err && !in_place && rename(tmp, final) != 0)
        err = errno;
    if (!err)
        return 0;
    if (!in_place)
        unlink(tmp);
    return failed(step, in_place ? "write it" : "write it (nothing written)", err);
}

char *qc_read_regular(const char *path, size_t max, size_t *size)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    int e = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : (uint64_t)st.st_size > max ? EFBIG : 0;
    char *buf = e ? NULL : malloc((size_t)st.st_size + 1);
    size_t n = 0;
    while (buf && n < (size_t)st.st_size) { /* a file that grows meanwhile is read as far as it was */
        ssize_t k = read(fd, buf + n, (size_t)st.st_size - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    e = e ? e : !buf ? ENOMEM : 0;
    close(fd);
    if (e) {
        errno = e;
        return NULL;
    }
    buf[n] = '\0';
    *size = n;
    return buf;
}
