/* tempfile.h: the temporaries of the atomic writers (goldens in golden/, reports in harness/).
 * A writer makes "FINAL.tmp.PID.K" beside FINAL with O_EXCL, writes it, and renames it onto FINAL;
 * a writer killed (kill -9, a crash, a full disk before the cleanup) leaves its temporary behind.
 * The next writer in that folder removes the ones whose writer is gone:
 *
 *   a regular file named PREFIX.tmp.PID.K, PREFIX ending in one of the writer's suffixes (".h5";
 *   ".summary.json", ...), whose PID is not a live process on this machine (kill(PID, 0) fails
 *   with ESRCH, or the process is a zombie that can write nothing more) and is not this process.
 *
 * A live writer's temporary is never touched, and nothing else in the folder is. A folder shared
 * by writers on several machines at once is outside the rule (their PIDs mean nothing here). */
#ifndef QC_TEMPFILE_H
#define QC_TEMPFILE_H

#include <stddef.h>

/* Creates FINAL.tmp.PID.K for the first free K (O_CREAT | O_EXCL, mode 0666 & ~umask); returns
 * the open descriptor and the name in tmp, or -1 with errno set (ENAMETOOLONG when it does not
 * fit in cap, EEXIST when 100 names are taken). */
int qc_temp_create(const char *final, char *tmp, size_t cap);

/* Removes the stale temporaries of dir (the rule above), whose PREFIX ends in one of suffixes
 * (NULL-terminated). Returns how many were removed; an unreadable dir removes none. */
int qc_temp_sweep(const char *dir, const char *const *suffixes);

/* 1 when name is such a temporary and its writer is gone (the test qc_temp_sweep applies). */
int qc_temp_is_stale(const char *name, const char *const *suffixes);

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

#endif
