/* scr_preload_peers_exchange.c - the ranks tell each other the names of their cached
 * files at completion, and their deletions and renames at meeting points (MPI). */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "scr_error.h"
#include "scr_log.h"
#include "scr_filemap.h"
#include "scr_globals.h"
#include "scr_mpi.h"
#include "scr_preload_engine_impl.h"

/* The list these exchanges fill, and what a rank records between them, is
 * scr_preload_peers.c's: see there why every rank keeps it. */

/* per rank: bytes and offsets of an exchange, made once at start-up (when
 * every rank agreed it could), so that an exchange costs no agreement on it */
static int* exchange_lengths = NULL;
static int exchange_ready = 0;

/* collective on every rank: each one's byte string, all of them in the
 * result, with exchange_lengths[r] bytes from rank r at offset
 * exchange_lengths[ranks + r] (NULL on every rank when one failed) */
static char* peer_allgather(const char* mine, int bytes)
{
  if (!exchange_ready) return NULL;
  int* lengths = exchange_lengths;
  int* offsets = lengths + scr.ranks;
  MPI_Allgather(&bytes, 1, MPI_INT, lengths, 1, MPI_INT, scr.comm_world);
  size_t total = 0;
  for (int r = 0; r < scr.ranks; r++) {
    offsets[r] = (int) total;
    total += (size_t) lengths[r];
  }
  char* all = malloc(total ? total : 1);
  if (!scr_mpi_all_true(all != NULL, scr.comm_world)) {
    free(all);
    return NULL;
  }
  MPI_Allgatherv(mine, bytes, MPI_CHAR, all, lengths, offsets, MPI_CHAR, scr.comm_world);
  return all;
}

void scr_peers_init(void)
{
  scr_peers_clear();
  exchange_lengths = malloc(2 * (size_t) scr.ranks * sizeof(int));
  exchange_ready = scr_mpi_all_true(exchange_lengths != NULL, scr.comm_world);
  if (!exchange_ready && scr.rank == 0)
    scr_warn("preload: out of memory: each rank lists only its own checkpoint files");
}

/* Slots for the exchange of a completion in one collective: every rank's
 * names padded to the largest, with their length in front. Kept between
 * completions, and sized by the exchange before (a quarter more than its
 * largest), so that a job whose ranks write alike never needs the
 * MPI_Allgather of lengths and the agreement that every rank could hold
 * the result, two of the three collectives an exchange took. */
#define SLOT_HEADER 4
static char* slot_buf = NULL;
static size_t slot_room = 0; /* bytes per rank slot_buf holds, header included */

size_t scr_peers_slot_room(void)
{
  return exchange_ready && slot_room > SLOT_HEADER ? slot_room - SLOT_HEADER : 0;
}

/* room for slots of `largest` bytes and a quarter more, for the next time */
static void peer_slots_grow(int largest)
{
  size_t want = (size_t) largest + (size_t) largest / 4 + SLOT_HEADER + 64;
  if (want <= slot_room) return;
  char* grown = malloc(want * (size_t) scr.ranks);
  if (!grown) return; /* the exchanges keep taking three collectives */
  free(slot_buf);
  slot_buf = grown;
  slot_room = want;
}

void scr_peers_gather_slots(int id, const char* mine, int bytes, int largest)
{
  size_t slot = (size_t) largest + SLOT_HEADER;
  char* send = malloc(slot);
  char* own = send ? send : slot_buf + (size_t) scr.rank * slot; /* MPI_IN_PLACE when out of memory */
  uint32_t length = (uint32_t) bytes;
  memcpy(own, &length, SLOT_HEADER);
  if (bytes > 0) memcpy(own + SLOT_HEADER, mine, (size_t) bytes);
  memset(own + SLOT_HEADER + bytes, 0, slot - SLOT_HEADER - (size_t) bytes);
  /* waited for politely, as the completion's agreements are (scr_mpi_all_true) */
  MPI_Request request;
  MPI_Iallgather(send ? send : MPI_IN_PLACE, (int) slot, MPI_BYTE, slot_buf, (int) slot, MPI_BYTE, scr.comm_world,
                 &request);
  scr_mpi_wait_all(1, &request);
  free(send);
  for (int r = 0; r < scr.ranks; r++) {
    if (r == scr.rank) continue;
    const char* at = slot_buf + (size_t) r * slot;
    memcpy(&length, at, SLOT_HEADER);
    if (length <= (uint32_t) largest) scr_peers_add_packed(at + SLOT_HEADER, length, id, r);
  }
  scr_peers_publish(0);
}

/* the exchange of one dataset's names */
static void peer_gather_one(int id)
{
  int bytes = 0;
  char* mine = scr_peers_pack(id, &bytes);
  char* all = peer_allgather(mine, bytes);
  free(mine);
  if (!all) {
    if (scr.rank == 0 && exchange_ready)
      scr_warn("preload: out of memory exchanging the names of dataset %d: each rank lists only its own files", id);
    return;
  }
  const int* lengths = exchange_lengths;
  const int* offsets = lengths + scr.ranks;
  int largest = 0;
  for (int r = 0; r < scr.ranks; r++) {
    if (lengths[r] > largest) largest = lengths[r];
    if (r != scr.rank) scr_peers_add_packed(all + offsets[r], (size_t) lengths[r], id, r);
  }
  free(all);
  peer_slots_grow(largest);
}

void scr_peers_gather_cached(void)
{
  scr_peers_compact();
  for (int below = -1;;) {
    int local = scr_filemap_previous_dataset(scr.filemap, below), id = -1;
    MPI_Allreduce(&local, &id, 1, MPI_INT, MPI_MAX, scr.comm_world);
    if (id < 0) break;
    peer_gather_one(id);
    below = id;
  }
  scr_peers_publish(0);
}

void scr_peers_gather(int id)
{
  peer_gather_one(id);
  scr_peers_publish(0);
}

void scr_peers_clear(void)
{
  scr_peers_forget();
  free(slot_buf);
  slot_buf = NULL;
  slot_room = 0;
  free(exchange_lengths);
  exchange_lengths = NULL;
  exchange_ready = 0;
  scr_peers_remove_placeholders();
}

void scr_peers_sync(void)
{
  size_t bytes = 0;
  char* mine = scr_peers_take_pending(&bytes);
  char* all = peer_allgather(mine, (int) bytes);
  free(mine);
  if (!all) {
    if (scr.rank == 0) scr_warn("preload: out of memory exchanging deletions: other ranks may still show them");
    return;
  }
  const int* lengths = exchange_lengths;
  const int* offsets = lengths + scr.ranks;
  for (int r = 0; r < scr.ranks; r++) {
    const char* p = all + offsets[r];
    const char* end = p + lengths[r];
    while (p < end) {
      char op = *p;
      p += 2;
      int id = atoi(p);
      p += strlen(p) + 1;
      int owner = atoi(p);
      p += strlen(p) + 1;
      const char* from = p;
      p += strlen(p) + 1;
      const char* to = NULL;
      if (op == 'R' || op == 'L') {
        to = p;
        p += strlen(p) + 1;
      }
      if (r == scr.rank) continue;
      if (owner == scr.rank && op == 'D') {
        /* another rank deleted this rank's file: so does this rank */
        scr_engine_delete_own(id, from);
        continue;
      }
      if (op == 'D') scr_peers_drop(from, owner);
      else if (op == 'L') scr_peers_link(from, to, owner);
      else scr_peers_move(from, to, owner);
    }
  }
  free(all);
  scr_peers_compact();
}

void scr_peers_publish(int wait)
{
  if (scr.node_rank == 0) scr_peers_write_published();
  if (wait) MPI_Barrier(scr.comm_node);
}

