// SPDX-License-Identifier: MIT
/*
 * Classic pcap: a 24-byte file header (magic, version, zone, sigfigs, snaplen,
 * linktype) and then records of a 16-byte header (seconds, sub-seconds, captured
 * length, wire length) plus the captured bytes. The magic tells the byte order and
 * whether sub-seconds are micro- or nanoseconds; we need neither timestamp.
 */
#include "pcap.h"

#include <errno.h>
#include <string.h>

#define PCAP_MAGIC_US	0xa1b2c3d4u
#define PCAP_MAGIC_NS	0xa1b23c4du

static uint32_t rd32(const struct pcap_reader *r, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return r->swapped ? __builtin_bswap32(v) : v;
}

int pcap_open(struct pcap_reader *r, const char *path)
{
	uint8_t h[24];
	uint32_t magic;

	memset(r, 0, sizeof(*r));
	r->f = fopen(path, "rb");
	if (!r->f)
		return -errno;
	if (fread(h, 1, sizeof(h), r->f) != sizeof(h))
		goto bad;
	memcpy(&magic, h, 4);
	if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS)
		r->swapped = 0;
	else if (__builtin_bswap32(magic) == PCAP_MAGIC_US ||
		 __builtin_bswap32(magic) == PCAP_MAGIC_NS)
		r->swapped = 1;
	else
		goto bad;
	r->snaplen = rd32(r, h + 16);
	r->linktype = rd32(r, h + 20) & 0x0fffffff;	/* top bits: FCS info */
	return 0;
bad:
	fclose(r->f);
	r->f = NULL;
	return -EPROTO;
}

long pcap_next(struct pcap_reader *r, uint8_t *buf, size_t cap, uint32_t *orig_len)
{
	uint8_t h[16];
	size_t n = fread(h, 1, sizeof(h), r->f);
	uint32_t incl;

	if (n == 0 && feof(r->f))
		return 0;
	if (n != sizeof(h))
		return -EPROTO;
	incl = rd32(r, h + 8);
	*orig_len = rd32(r, h + 12);
	if (incl > cap)
		return -EMSGSIZE;
	if (fread(buf, 1, incl, r->f) != incl)
		return -EPROTO;
	return incl;
}

void pcap_close(struct pcap_reader *r)
{
	if (r->f)
		fclose(r->f);
	r->f = NULL;
}
