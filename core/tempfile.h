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

#endif
