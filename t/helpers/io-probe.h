/* io-probe.h - what the two halves of io-probe share: printing a call's result
 * (return value, errno name, stat fields) the same way in every run. */
#ifndef IO_PROBE_H
#define IO_PROBE_H

#include <stdio.h>
#include <sys/stat.h>

/* "EEXIST", or "errno N" for a number without a name */
const char* errno_name(int e);
/* "label: ret=R errno=NAME"; errno only when the call failed */
void report(const char* label, long ret, int failed, int error);
/* report an open's result and close the descriptor */
void report_fd(const char* label, int fd);
/* stat fields that two runs share; full adds those of a file both runs read */
void report_stat(const char* label, int rc, const struct stat* st, int full);
/* report an fopen's result and close the stream */
void report_file(const char* label, FILE* f);

/* io-probe-calls.c: every other wrapped function, in probe.d/ */
void probe_open_variants(const char* fixture);
void probe_stdio_variants(const char* fixture);
void probe_descriptors(void);
void probe_names(void);
void probe_stat_variants(const char* fixture);
void probe_directories(void);
void probe_temporaries(void);
void probe_realpath(const char* fixture);
void probe_statfs(const char* fixture);
void probe_attributes(void);
/* as user nobody: the permission errors of the calls above */
void probe_permissions_more(void);

#endif
