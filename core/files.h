/* files.h: whole files in and out, the one way each is done: every byte of a buffer to a descriptor,
 * a file published atomically (core/tempfile.h names its temporary), and a regular file read
 * without ever blocking on a FIFO or a device that a hostile folder puts in its place. */
#ifndef QC_FILES_H
#define QC_FILES_H

#include <stddef.h>

/* Writes all n bytes of data to fd (a file or a pipe), retrying short writes and EINTR.
 * 0, or -1 with errno set (ENOSPC when write returns 0). */
int qc_write_all(int fd, const void *data, size_t n);

/* Writes size bytes of data as final, the one way every writer publishes a file: into a temporary
 * qc_temp_create(temp_prefix, or final when NULL), fsync'ed when durable, renamed onto final. On
 * any failure (a full disk included) the temporary is removed and final is as it was.
 * A final that exists and is not a plain file is opened and written through in place instead: a
 * rename would replace a symbolic link with a file (the link's target left stale) and cannot
 * replace a FIFO or a device (/dev/stdout); such a write is not atomic.
 * Returns 0, or an errno value; *step (may be NULL) names the step that failed. */
int qc_publish(const char *final, const char *temp_prefix, const void *data, size_t size, int durable,
               const char **step);

/* At most max bytes of the regular file path, NUL-terminated, in a new buffer (*size bytes), or
 * NULL with errno set: EINVAL when path is not a regular file (a FIFO is opened O_NONBLOCK, so
 * nothing waits for a writer), EFBIG when it holds more than max bytes. */
char *qc_read_regular(const char *path, size_t max, size_t *size);

#endif
