/* SPDX-License-Identifier: MIT */
/*
 * Independent ICRC reference for tests: zlib's crc32() over a fully masked copy of the
 * pseudo-packet, written from annex A17.3.3 without sharing code with runtime/icrc.c.
 */
#ifndef BLUE_TEST_ICRC_REF_H
#define BLUE_TEST_ICRC_REF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* @ip: IPv4 or IPv6 header; @len: up to (not including) the ICRC. */
static inline uint32_t ref_icrc(const uint8_t *ip, size_t len)
{
	uint8_t *m = malloc(len + 8);
	size_t iphl, u;
	uLong crc;

	memset(m, 0xff, 8);
	memcpy(m + 8, ip, len);
	if ((ip[0] >> 4) == 6) {
		iphl = 40;
		m[8 + 0] |= 0x0f;
		m[8 + 1] = m[8 + 2] = m[8 + 3] = 0xff;
		m[8 + 7] = 0xff;
	} else {
		iphl = (size_t)(ip[0] & 0xf) * 4;
		m[8 + 1] = 0xff;
		m[8 + 8] = 0xff;
		m[8 + 10] = m[8 + 11] = 0xff;
	}
	u = 8 + iphl;
	m[u + 6] = m[u + 7] = 0xff;
	m[u + 8 + 4] = 0xff;
	crc = crc32(0L, Z_NULL, 0);
	crc = crc32(crc, m, (uInt)(len + 8));
	free(m);
	return (uint32_t)crc;
}

#endif
