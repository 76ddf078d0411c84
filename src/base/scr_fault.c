/* scr_fault.c - SCR_FAULT_KILL: kill this process the N-th time it reaches a named
 * point, so tests can crash a job inside encoding, flushing, rebuilding, routing;
 * SCR_FAULT_CORRUPT: flip a byte of chosen files there instead (silent corruption). */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scr_log.h"
#include "scr_fault.h"

int scr_fault_armed = 1;

static pthread_once_t fault_once = PTHREAD_ONCE_INIT;
static struct scr_fault_spec fault_specs[SCR_FAULT_MAX];
static long fault_hits[SCR_FAULT_MAX];
static int fault_count = 0;
static int fault_rank = -1; /* -1: not told (scr_fault_set_rank) */
static struct scr_fault_spec corrupt_specs[SCR_FAULT_MAX];
static long corrupt_hits[SCR_FAULT_MAX];
static int corrupt_count = 0;
#define FAULT_ROOTS 4
static char fault_roots[FAULT_ROOTS][4096];
static int fault_root_count = 0;

/* a decimal number of at most 9 digits at *p, which moves past it; -1 if none */
static long fault_number(const char** p)
{
  long n = 0;
  int digits = 0;
  while (**p >= '0' && **p <= '9' && digits < 10) {
    n = n * 10 + (**p - '0');
    (*p)++;
    digits++;
  }
  return digits == 0 || digits > 9 ? -1 : n;
}

static int fault_parse(const char* text, struct scr_fault_spec* specs, int max, int with_pattern)
{
  int n = 0;
  const char* p = text;
  if (!p || !*p) return 0;
  for (;;) {
    size_t len = 0;
    while ((p[len] >= 'a' && p[len] <= 'z') || (p[len] >= 'A' && p[len] <= 'Z') ||
           (p[len] >= '0' && p[len] <= '9') || p[len] == '_' || p[len] == '-')
      len++;
    if (len == 0 || len >= SCR_FAULT_NAME || p[len] != ':' || n >= max) return -1;
    struct scr_fault_spec* s = &specs[n++];
    memcpy(s->where, p, len);
    s->where[len] = '\0';
    p += len + 1;
    s->count = fault_number(&p);
    if (s->count < 1) return -1;
    s->rank = -1;
    if (*p == '@') {
      p++;
      long rank = fault_number(&p);
      if (rank < 0) return -1;
      s->rank = (int) rank;
    }
    s->pattern[0] = '\0';
    if (with_pattern) {
      size_t plen = 0;
      if (*p++ != ':') return -1;
      while (p[plen] && p[plen] != ',') plen++;
      if (plen == 0 || plen >= SCR_FAULT_PATTERN) return -1;
      memcpy(s->pattern, p, plen);
      s->pattern[plen] = '\0';
      p += plen;
    }
    if (*p == '\0') return n;
    if (*p++ != ',') return -1;
  }
}

int scr_fault_parse(const char* text, struct scr_fault_spec* specs, int max)
{
  return fault_parse(text, specs, max, 0);
}

int scr_fault_parse_corrupt(const char* text, struct scr_fault_spec* specs, int max)
{
  return fault_parse(text, specs, max, 1);
}

void scr_fault_set_roots(const char* const* roots, int count)
{
  int n = 0;
  for (int i = 0; i < count && n < FAULT_ROOTS; i++)
    if (roots[i] && strlen(roots[i]) < sizeof(fault_roots[n])) strcpy(fault_roots[n++], roots[i]);
  fault_root_count = n;
}

void scr_fault_set_rank(int rank)
{
  __atomic_store_n(&fault_rank, rank, __ATOMIC_RELAXED);
}

/* this process's rank for an entry's @RANK: the MPI layer's word, else the launcher's */
static int fault_my_rank(void)
{
  int rank = __atomic_load_n(&fault_rank, __ATOMIC_RELAXED);
  if (rank >= 0) return rank;
  const char* pmi = getenv("PMI_RANK");
  char* end = NULL;
  long r = pmi && *pmi ? strtol(pmi, &end, 10) : -1;
  return end && *end == '\0' && r >= 0 ? (int) r : -1;
}

static void fault_load(void)
{
  const char* text = getenv("SCR_FAULT_KILL");
  fault_count = text ? scr_fault_parse(text, fault_specs, SCR_FAULT_MAX) : 0;
  if (fault_count < 0) {
    /* a test that meant to kill and does not must not pass silently */
    scr_err("SCR_FAULT_KILL=%s: not a comma-separated list of WHERE:N or WHERE:N@RANK (at most %d): ignored",
            text, SCR_FAULT_MAX);
    fault_count = 0;
  }
  const char* corrupt = getenv("SCR_FAULT_CORRUPT");
  corrupt_count = corrupt ? scr_fault_parse_corrupt(corrupt, corrupt_specs, SCR_FAULT_MAX) : 0;
  if (corrupt_count < 0) {
    scr_err("SCR_FAULT_CORRUPT=%s: not a comma-separated list of WHERE:N:PATTERN or WHERE:N@RANK:PATTERN "
            "(at most %d): ignored", corrupt, SCR_FAULT_MAX);
    corrupt_count = 0;
  }
  __atomic_store_n(&scr_fault_armed, fault_count > 0 || corrupt_count > 0, __ATOMIC_RELAXED);
}

/* the entry whose files nftw visits now, and the point's name (nftw takes
 * no argument; points are reached on the program's thread one at a time) */
static const struct scr_fault_spec* corrupt_now;
static const char* corrupt_where;
static long corrupt_time;

/* flip the middle byte of one regular file that the pattern names: its size
 * and time of change stay those of a file, as a bad disk block would leave */
static int fault_corrupt_file(const char* path, const struct stat* st, int type, struct FTW* ftw)
{
  (void) ftw;
  if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size == 0) return 0;
  if (fnmatch(corrupt_now->pattern, path, 0) != 0) return 0;
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  unsigned char byte = 0;
  off_t at = st->st_size / 2;
  int done = fd >= 0 && pread(fd, &byte, 1, at) == 1;
  byte ^= 0x01;
  done = done && pwrite(fd, &byte, 1, at) == 1;
  if (fd >= 0) close(fd);
  char line[4096 + 160];
  int len = snprintf(line, sizeof(line), "SCR FAULT: rank %d: %s %s at point %s (time %ld), SCR_FAULT_CORRUPT\n",
                     fault_my_rank(), done ? "corrupted" : "cannot corrupt", path, corrupt_where, corrupt_time);
  if (len > 0 && write(STDERR_FILENO, line, (size_t) len < sizeof(line) ? (size_t) len : sizeof(line) - 1) < 0)
    errno = 0;
  return 0;
}

static void fault_corrupt(const char* where)
{
  for (int i = 0; i < corrupt_count; i++) {
    if (strcmp(corrupt_specs[i].where, where) != 0) continue;
    long hit = __atomic_add_fetch(&corrupt_hits[i], 1, __ATOMIC_RELAXED);
    if (hit != corrupt_specs[i].count) continue;
    if (corrupt_specs[i].rank >= 0 && corrupt_specs[i].rank != fault_my_rank()) continue;
    corrupt_now = &corrupt_specs[i];
    corrupt_where = where;
    corrupt_time = hit;
    int saved = errno;
    for (int r = 0; r < fault_root_count; r++) nftw(fault_roots[r], fault_corrupt_file, 16, FTW_PHYS);
    errno = saved;
  }
}

void scr_fault_reached(const char* where)
{
  pthread_once(&fault_once, fault_load);
  fault_corrupt(where);
  for (int i = 0; i < fault_count; i++) {
    if (strcmp(fault_specs[i].where, where) != 0) continue;
    long hit = __atomic_add_fetch(&fault_hits[i], 1, __ATOMIC_RELAXED);
    if (hit != fault_specs[i].count) continue;
    int rank = fault_my_rank();
    if (fault_specs[i].rank >= 0 && fault_specs[i].rank != rank) continue;
    /* said with write(2): the death must be told from other failures in the
     * job's output, and stdio may hold a lock of the thread we interrupt */
    char line[160];
    int len = snprintf(line, sizeof(line), "SCR FAULT: rank %d: killed at point %s (time %ld), SCR_FAULT_KILL\n",
                       rank, where, hit);
    if (len > 0 && write(STDERR_FILENO, line, (size_t) len < sizeof(line) ? (size_t) len : sizeof(line) - 1) < 0)
      errno = 0;
    raise(SIGKILL);
  }
}
