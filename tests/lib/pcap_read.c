// SPDX-License-Identifier: MIT
/* Classic pcap reader for tests; see pcap_read.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/lib/pcap_read.h"

#define PCAP_MAGIC_US	0xa1b2c3d4u	/* microsecond timestamps */
#define PCAP_MAGIC_NS	0xa1b23c4du	/* nanosecond timestamps */
#define GHDR_LEN	24
#define RHDR_LEN	16

static uint32_t rd32(const uint8_t *b, int swap)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static int read_all(const char *path, uint8_t **out, size_t *size)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) || st.st_size <= 0) {
		fclose(f);
		return -EPROTO;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*out = buf;
	*size = (size_t)st.st_size;
	return 0;
}

int tpcap_open(const char *path, struct tpcap *pc)
{
	size_t off, cap = 0;
	uint32_t magic;
	int swap, err;

	memset(pc, 0, sizeof(*pc));
	err = read_all(path, &pc->file, &pc->size);
	if (err)
		return err;
	if (pc->size < GHDR_LEN)
		goto bad;
	memcpy(&magic, pc->file, 4);
	if (magic == PCAP_MAGIC_US || magic == PCAP_MAGIC_NS)
		swap = 0;
	else if (__builtin_bswap32(magic) == PCAP_MAGIC_US ||
		 __builtin_bswap32(magic) == PCAP_MAGIC_NS)
		swap = 1;
	else
		goto bad;
	pc->linktype = rd32(pc->file + 20, swap);
	for (off = GHDR_LEN; off < pc->size;) {
		uint32_t incl, orig;

		if (pc->size - off < RHDR_LEN)
			goto bad;
		incl = rd32(pc->file + off + 8, swap);
		orig = rd32(pc->file + off + 12, swap);
		off += RHDR_LEN;
		if (incl > pc->size - off)
			goto bad;
		if (pc->n == cap) {
			struct tpcap_rec *r;

			cap = cap ? cap * 2 : 64;
			r = realloc(pc->recs, cap * sizeof(*r));
			if (!r) {
				tpcap_close(pc);
				return -ENOMEM;
			}
			pc->recs = r;
		}
		pc->recs[pc->n].data = pc->file + off;
		pc->recs[pc->n].len = incl;
		pc->recs[pc->n].orig_len = orig;
		pc->n++;
		off += incl;
	}
	return 0;
bad:
	tpcap_close(pc);
	return -EPROTO;
}

void tpcap_close(struct tpcap *pc)
{
	free(pc->recs);
	free(pc->file);
	memset(pc, 0, sizeof(*pc));
}
