/* scr_stream.h - a rank's files of one dataset seen as one logical byte stream,
 * zero-padded past its end; read (with CRC32 per file) for encoding, written when rebuilding. */
#ifndef SCR_STREAM_H
#define SCR_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct scr_stream_segment {
  uint64_t offset;     /* within the file */
  uint64_t length;
  uint32_t crc;
};

struct scr_stream_file {
  char* path;
  uint64_t size;
  uint64_t start;      /* offset of the file in the stream */
  int fd;
  struct scr_stream_segment* segments;
  int segment_count, segment_capacity;
};

struct scr_stream {
  struct scr_stream_file* files;
  int file_count;
  uint64_t length;
  int writing;
};

/* files in stream order with their sizes; writing creates/truncates them (parents made) */
int scr_stream_open(struct scr_stream* stream, int count, char* const* paths,
                    const uint64_t* sizes, int writing);

/* read len bytes at a stream offset (zeros past the end); records CRC segments */
int scr_stream_read(struct scr_stream* stream, uint64_t offset, void* buf, size_t len);

/* write len bytes at a stream offset (bytes past the end are dropped); records CRC segments */
int scr_stream_write(struct scr_stream* stream, uint64_t offset, const void* buf, size_t len);

/* CRC32 of file i from the segments seen; SCR_ERR_INVALID unless they cover it exactly once */
int scr_stream_file_crc(struct scr_stream* stream, int i, uint32_t* crc);
/* the same for its first length bytes, which the pieces read or written
 * must cover exactly (the parity before a parity file's header) */
int scr_stream_file_crc_upto(struct scr_stream* stream, int i, uint64_t length, uint32_t* crc);

/* close files (fsync them first when writing); SCR_ERR_IO if that fails */
int scr_stream_close(struct scr_stream* stream);

#endif
