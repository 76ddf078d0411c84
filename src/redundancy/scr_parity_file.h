/* scr_parity_file.h - the parity file of XOR and RS, without MPI: k chunks of parity,
 * then a header describing the scheme, the set and every member's files, then a trailer. */
#ifndef SCR_PARITY_FILE_H
#define SCR_PARITY_FILE_H

#include <stdint.h>
#include "scr_kvtree.h"
#include "scr_stream.h"

/* Layout: k*CHUNK parity bytes, the packed header, 16 bytes of trailer
 * (header length, magic) by which a reader finds the header from the end.
 * Header: TYPE, CHUNK, DSETDESC/..., REDDESC/... (scr_reddesc_record),
 * SET/MEMBER/<index>/{RANK, FILES, FILE/<i>/{PATH, ORIG, RELPATH, SIZE, CRC, LINK}} */

/* the header and trailer, malloc'd, *length bytes */
unsigned char* scr_parity_pack_header(const scr_kvtree* header, size_t* length);
/* written at stream offset at (k*CHUNK) */
int scr_parity_write_header(struct scr_stream* parity, uint64_t at, const scr_kvtree* header);
/* SCR_ERR_NOENT for a missing file, SCR_ERR_CORRUPT (said) for one without a header */
int scr_parity_read_header(const char* path, scr_kvtree* header);
/* bytes the header of a parity file of that header takes with its trailer */
uint64_t scr_parity_header_size(const scr_kvtree* header);

#endif
