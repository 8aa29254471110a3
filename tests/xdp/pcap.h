/* SPDX-License-Identifier: MIT */
/* A minimal reader of classic pcap files (not pcapng), enough for the golden vectors. */
#ifndef BLUE_TEST_XDP_PCAP_H
#define BLUE_TEST_XDP_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PCAP_LINKTYPE_ETHERNET	1

struct pcap_reader {
	FILE		*f;
	int		swapped;	/* file written on a host of the other byte order */
	uint32_t	snaplen;
	uint32_t	linktype;
};

/* Returns 0, or -errno (-EPROTO for a file that is not classic pcap). */
int pcap_open(struct pcap_reader *r, const char *path);

/*
 * Read the next record into @buf. Returns its captured length, 0 at end of file, or
 * -errno (-EMSGSIZE if it does not fit @cap, -EPROTO for a damaged record). *@orig_len
 * is the length on the wire, to spot captures cut by the snap length.
 */
long pcap_next(struct pcap_reader *r, uint8_t *buf, size_t cap, uint32_t *orig_len);

void pcap_close(struct pcap_reader *r);

#endif /* BLUE_TEST_XDP_PCAP_H */
