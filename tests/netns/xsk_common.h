/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the AF_XDP test programs (xsk_send, xsk_recv, tests/bench/hal_rate):
 * argument parsing, the payload pattern both ends agree on, and a clock.
 * Header-only because the Makefile links each tests/netns/ program into its own binary.
 */
#ifndef BLUE_TEST_XSK_COMMON_H
#define BLUE_TEST_XSK_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include <blue/wire.h>

/* The source QPN the senders claim (DETH-less RC: only used for the UDP entropy). */
#define XT_SRC_QPN	0x000abc

static inline uint64_t xt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Payload byte @i of the frame (@qpn, @psn): both QPN and PSN shape every byte, so a
 * frame delivered to the wrong socket or with the wrong PSN shows in its bytes too. */
static inline uint8_t xt_pattern(uint32_t qpn, uint32_t psn, uint32_t i)
{
	return (uint8_t)((qpn * 131u) ^ (psn * 29u) ^ (i * 7u) ^ (i >> 8));
}

static inline void xt_pattern_fill(uint8_t *buf, uint32_t len, uint32_t qpn, uint32_t psn)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		buf[i] = xt_pattern(qpn, psn, i);
}

/* Returns the first differing offset, or -1 when all @len bytes match. */
static inline long xt_pattern_check(const uint8_t *buf, uint32_t len, uint32_t qpn,
				    uint32_t psn)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != xt_pattern(qpn, psn, i))
			return (long)i;
	return -1;
}

static inline int xt_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6], i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static inline int xt_parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > 0xffffffffu)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* "0x11,0x12,300" -> qpns; returns the count or -EINVAL (bad number, > 24 bits, > max). */
static inline int xt_parse_qpns(const char *s, uint32_t *qpns, int max)
{
	char buf[1024], *tok, *save = NULL;
	int n = 0;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max || xt_parse_u32(tok, &qpns[n]) || qpns[n] > BLUE_QPN_MASK)
			return -EINVAL;
		n++;
	}
	return n ? n : -EINVAL;
}

static inline int xt_parse_ip(const char *s, uint32_t *be)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*be = a.s_addr;
	return 0;
}

#endif /* BLUE_TEST_XSK_COMMON_H */
