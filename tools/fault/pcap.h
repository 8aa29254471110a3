/* SPDX-License-Identifier: MIT */
/*
 * Classic pcap in and out for tools/blue_fault --dry-run: read a capture (either byte
 * order, micro- or nanosecond stamps, Ethernet link type) record by record, and write
 * the frames the engine emits, stamped with the replay's virtual clock. No libpcap.
 * Header-only, one user.
 */
#ifndef BLUE_TOOLS_FAULT_PCAP_H
#define BLUE_TOOLS_FAULT_PCAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define FPCAP_LINKTYPE_ETHERNET	1

struct fpcap_in {
	FILE *f;
	bool swap;
	bool nsec;
};

static inline uint32_t fpcap_u32(const uint8_t *b, bool swap)
{
	uint32_t v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
		     (uint32_t)b[3] << 24;

	return swap ? __builtin_bswap32(v) : v;
}

/* Open @path and check its header. Returns 0, -errno, or -EPROTO (with a message). */
static inline int fpcap_open(struct fpcap_in *in, const char *path)
{
	uint8_t h[24];
	uint32_t magic;

	in->swap = in->nsec = false;
	in->f = fopen(path, "rb");
	if (!in->f)
		return -errno;
	if (fread(h, 1, sizeof(h), in->f) != sizeof(h))
		goto bad;
	magic = fpcap_u32(h, false);
	in->swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	in->nsec = magic == 0xa1b23c4du || magic == 0x4d3cb2a1u;
	if (!in->swap && magic != 0xa1b2c3d4u && magic != 0xa1b23c4du)
		goto bad;
	if (fpcap_u32(h + 20, in->swap) != FPCAP_LINKTYPE_ETHERNET) {
		fprintf(stderr, "blue_fault: %s: link type is not Ethernet\n", path);
		fclose(in->f);
		return -EPROTO;
	}
	return 0;
bad:
	fprintf(stderr, "blue_fault: %s: not a classic pcap file\n", path);
	fclose(in->f);
	return -EPROTO;
}

/*
 * Next record into @buf (@cap bytes). Returns its captured length, 0 at the end of the
 * file, or -EPROTO for a truncated or oversized record. *@ts_ns gets its stamp.
 */
static inline int fpcap_next(struct fpcap_in *in, uint8_t *buf, uint32_t cap, uint64_t *ts_ns)
{
	uint8_t h[16];
	uint32_t incl;
	size_t got = fread(h, 1, sizeof(h), in->f);

	if (got == 0)
		return 0;
	if (got != sizeof(h))
		return -EPROTO;
	incl = fpcap_u32(h + 8, in->swap);
	if (incl > cap || fread(buf, 1, incl, in->f) != incl)
		return -EPROTO;
	*ts_ns = (uint64_t)fpcap_u32(h, in->swap) * 1000000000ull +
		 (uint64_t)fpcap_u32(h + 4, in->swap) * (in->nsec ? 1u : 1000u);
	return (int)incl;
}

static inline void fpcap_close(struct fpcap_in *in)
{
	if (in->f)
		fclose(in->f);
	in->f = NULL;
}

static inline void fpcap_put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

/* Write a little-endian, microsecond pcap header. Returns 0 or -EIO. */
static inline int fpcap_write_header(FILE *f)
{
	uint8_t h[24] = { 0 };

	fpcap_put32(h, 0xa1b2c3d4u);
	h[4] = 2;		/* version 2.4 */
	h[6] = 4;
	fpcap_put32(h + 16, 65535);
	fpcap_put32(h + 20, FPCAP_LINKTYPE_ETHERNET);
	return fwrite(h, 1, sizeof(h), f) == sizeof(h) ? 0 : -EIO;
}

static inline int fpcap_write(FILE *f, uint64_t ts_ns, const uint8_t *data, uint32_t len)
{
	uint8_t h[16];

	fpcap_put32(h, (uint32_t)(ts_ns / 1000000000ull));
	fpcap_put32(h + 4, (uint32_t)(ts_ns % 1000000000ull / 1000u));
	fpcap_put32(h + 8, len);
	fpcap_put32(h + 12, len);
	if (fwrite(h, 1, sizeof(h), f) != sizeof(h) || fwrite(data, 1, len, f) != len)
		return -EIO;
	return 0;
}

#endif /* BLUE_TOOLS_FAULT_PCAP_H */
