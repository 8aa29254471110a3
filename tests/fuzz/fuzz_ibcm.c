// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the IB CM MAD decoder (runtime/cm_mad.c): what arrives on QP1 is
 * any 256 bytes a peer chose. Each input is one MAD (shorter inputs too: the decoder must
 * refuse them as short).
 *
 * What must hold (a failure aborts):
 *  - no crash, no read past the input, nothing ASan/UBSan object to;
 *  - a refusal is one of enum blue_ibcm_err's reasons and has a name;
 *  - what decodes re-encodes (every field in range), decodes again to the same message,
 *    and encodes again to the same 256 bytes: the codec loses or invents nothing;
 *  - the IP CM header at the start of a REQ's or SIDR_REQ's private data decodes or is
 *    refused by name, and what decodes round-trips through its encoder.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cm_mad.h"

#define CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "fuzz_ibcm: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			abort();					\
		}							\
	} while (0)

static void ip_hdr_round_trip(struct blue_ibcm_msg *m)
{
	struct blue_ibcm_ip_hdr h, h2;
	uint8_t again[BLUE_IBCM_IP_HDR_LEN];
	enum blue_ibcm_err err;
	size_t cap;
	uint8_t *priv = blue__ibcm_private_data(m, &cap);

	CHECK(priv && cap >= BLUE_IBCM_IP_HDR_LEN);
	memset(&h, 0, sizeof(h));
	err = blue__ibcm_ip_hdr_decode(priv, cap, &h);
	CHECK(strlen(blue__ibcm_err_str(err)) > 0);
	if (err != BLUE_IBCM_OK)
		return;
	CHECK(h.ip_version == 4 || h.ip_version == 6);
	CHECK(blue__ibcm_ip_hdr_encode(&h, again, sizeof(again)) == BLUE_IBCM_IP_HDR_LEN);
	memset(&h2, 0, sizeof(h2));
	CHECK(blue__ibcm_ip_hdr_decode(again, sizeof(again), &h2) == BLUE_IBCM_OK);
	CHECK(h2.ip_version == h.ip_version && h2.src_port == h.src_port);
	if (h.ip_version == 4)
		CHECK(h2.src.v4.s_addr == h.src.v4.s_addr && h2.dst.v4.s_addr == h.dst.v4.s_addr);
	else
		CHECK(!memcmp(&h2.src.v6, &h.src.v6, 16) && !memcmp(&h2.dst.v6, &h.dst.v6, 16));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct blue_ibcm_msg m, m2;
	static uint8_t mad[BLUE_IBCM_MAD_SIZE], mad2[BLUE_IBCM_MAD_SIZE];
	const char *field = NULL;
	enum blue_ibcm_err err;
	uint8_t *buf;

	/* a copy of exactly @size bytes: ASan sees any read past what the peer sent */
	buf = malloc(size ? size : 1);
	CHECK(buf);
	memcpy(buf, data, size);
	err = blue__ibcm_decode(buf, size, &m);
	free(buf);
	CHECK(strlen(blue__ibcm_err_str(err)) > 0);
	if (size < BLUE_IBCM_MAD_SIZE)
		CHECK(err != BLUE_IBCM_OK);
	if (err != BLUE_IBCM_OK)
		return 0;
	CHECK(strcmp(blue__ibcm_attr_str(m.hdr.attr_id), "unknown") != 0);
	CHECK(blue__ibcm_encode(&m, mad, &field) == 0);
	CHECK(blue__ibcm_decode(mad, sizeof(mad), &m2) == BLUE_IBCM_OK);
	CHECK(memcmp(&m, &m2, sizeof(m)) == 0);
	CHECK(blue__ibcm_encode(&m2, mad2, &field) == 0);
	CHECK(memcmp(mad, mad2, sizeof(mad)) == 0);
	if (m.hdr.attr_id == BLUE_IBCM_ATTR_REQ || m.hdr.attr_id == BLUE_IBCM_ATTR_SIDR_REQ)
		ip_hdr_round_trip(&m);
	return 0;
}
