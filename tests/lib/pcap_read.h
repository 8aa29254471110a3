/* SPDX-License-Identifier: MIT */
/*
 * A tiny reader for classic pcap files (no libpcap): enough for the golden captures in
 * tests/vectors and the files our oracles write. Test-only.
 */
#ifndef BLUE_TESTS_LIB_PCAP_READ_H
#define BLUE_TESTS_LIB_PCAP_READ_H

#include <stddef.h>
#include <stdint.h>

struct tpcap_rec {
	const uint8_t	*data;
	uint32_t	len;		/* captured length */
	uint32_t	orig_len;	/* length on the wire */
};

struct tpcap {
	uint8_t			*file;	/* whole file, owned */
	size_t			size;
	uint32_t		linktype;
	struct tpcap_rec	*recs;
	size_t			n;
};

/* Read @path. Return 0, or -errno (-EPROTO for a malformed file). */
int tpcap_open(const char *path, struct tpcap *pc);
void tpcap_close(struct tpcap *pc);

#endif
