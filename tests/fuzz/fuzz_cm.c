// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the CM's message parsers: everything a TCP peer sends before a
 * QP is connected (input format in fuzz_cm.h). The parsers are pure (no socket), so
 * each input runs the exact code recv_info(), recv_verdict() and the pingpong exchange
 * run on what they read.
 *
 * What must hold (a failure aborts, which libFuzzer reports):
 *  - no crash or sanitizer report, whatever the bytes;
 *  - a refusal is one of the documented errnos, with a message in blue_cm_last_error();
 *  - an accepted info message is exactly 80 bytes, its fields are in range (24-bit QPN
 *    above 1 and PSN, an IB MTU, a GID that agrees with the IPv4 field), it re-encodes
 *    to the input's bytes (all but the reserved bytes, unknown flag bits, the MR
 *    fields of a message without the MR flag, and so the CRC), and that re-encoding
 *    parses back to the same fields;
 *  - an accepted verdict is 128 bytes with blue's verdict magic and status 0; a refusal
 *    relays the peer's reason printable only (it reaches a terminal);
 *  - an accepted pingpong message is 52 bytes with LID 0, and formats back to the same
 *    bytes (hex digits lowercased, as rc_pingpong writes them);
 *  - the allow-list matcher answers 1, 0 or -EINVAL.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <blue/blue.h>
#include "runtime/cm.h"
#include "runtime/device.h"
#include "tests/fuzz/fuzz_cm.h"

#define FZ_CHECK(cond, ...) do {						\
		if (!(cond)) {							\
			fprintf(stderr, "fuzz_cm: invariant failed: %s: ", #cond);	\
			fprintf(stderr, __VA_ARGS__);				\
			fprintf(stderr, "\n");					\
			abort();						\
		}								\
	} while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("BLUE_LOG", "0", 1);	/* every refusal is logged otherwise */
	return 0;
}

/* A refusal: the errno is one the caller documents, and it says why. */
static void check_refusal(int rc, const char *what)
{
	const char *e = blue_cm_last_error();

	FZ_CHECK(e[0], "%s: rc %d with no message", what, rc);
	FZ_CHECK(strlen(e) < 256, "%s: message overran its buffer", what);
}

/* The bytes of the wire message that carry a field @in holds. */
static void meaningful(struct blue_cm_wire *w)
{
	w->flags &= htons(BLUE_CM_F_MR);
	memset(w->reserved0, 0, sizeof(w->reserved0));
	w->reserved1 = 0;
	w->crc = 0;
	if (!(ntohs(w->flags) & BLUE_CM_F_MR)) {
		w->rkey = 0;
		w->mr_addr = 0;
		w->mr_len = 0;
	}
}

static void info_in_range(const struct blue_cm_info *in)
{
	uint32_t gip;

	FZ_CHECK(in->qpn >= 2 && in->qpn <= 0xffffff, "QPN 0x%x", in->qpn);
	FZ_CHECK(in->psn <= 0xffffff, "PSN 0x%x", in->psn);
	FZ_CHECK(blue_mtu_bytes(in->mtu) > 0, "MTU %d", (int)in->mtu);
	FZ_CHECK(!in->ipv4 || !blue__gid_ipv4(&in->gid, &gip) || gip == in->ipv4,
		 "GID and IPv4 disagree");
	FZ_CHECK(in->has_mr == 0 || in->has_mr == 1, "has_mr %d", in->has_mr);
	FZ_CHECK(in->has_mr || (!in->mr.addr && !in->mr.length && !in->mr.rkey),
		 "MR fields without the MR flag");
}

static void fuzz_info(const uint8_t *p, size_t n)
{
	struct blue_cm_wire in, out;
	struct blue_cm_info info, again;
	uint16_t len;
	int rc;

	rc = blue__cm_parse(p, n, &info);
	if (n >= BLUE_CM_HDR_LEN && blue__cm_check_hdr(p, &len) == 0)
		FZ_CHECK(len >= BLUE_CM_HDR_LEN && len <= BLUE_CM_MAX_LEN, "header length %u",
			 len);
	if (rc) {
		FZ_CHECK(rc == -EBADMSG || rc == -EPROTONOSUPPORT, "rc %d", rc);
		check_refusal(rc, "info");
		return;
	}
	FZ_CHECK(n == sizeof(in), "accepted %zu bytes", n);
	info_in_range(&info);
	memcpy(&in, p, sizeof(in));
	blue__cm_encode(&info, &out);
	meaningful(&in);
	meaningful(&out);
	FZ_CHECK(!memcmp(&in, &out, sizeof(in)), "re-encoding differs from the input");
	blue__cm_encode(&info, &out);
	rc = blue__cm_parse(&out, sizeof(out), &again);
	FZ_CHECK(rc == 0, "our own encoding refused: %s", blue_cm_last_error());
	FZ_CHECK(!memcmp(&info, &again, sizeof(info)), "decode(encode(x)) != x");
}

static void fuzz_verdict(const uint8_t *p, size_t n)
{
	const struct blue_cm_verdict_wire *v = (const void *)p;
	const char *e;
	uint32_t magic, status;
	int rc = blue__cm_verdict_parse(p, n);

	if (!rc) {
		FZ_CHECK(n == sizeof(*v), "accepted %zu bytes", n);
		memcpy(&magic, &v->magic, 4);
		memcpy(&status, &v->status, 4);
		FZ_CHECK(ntohl(magic) == BLUE_CM_VERDICT_MAGIC && !status, "accepted a refusal");
		return;
	}
	FZ_CHECK(rc == -EBADMSG || rc == -EPROTONOSUPPORT || rc == -EPROTO ||
		 rc == -ETIMEDOUT || rc == -EACCES || rc == -EADDRINUSE || rc == -ENOSPC ||
		 rc == -EIO, "rc %d", rc);
	check_refusal(rc, "verdict");
	for (e = blue_cm_last_error(); *e; e++)
		FZ_CHECK(isprint((unsigned char)*e), "unprintable byte 0x%02x relayed",
			 (unsigned char)*e);
}

static void fuzz_pp(const uint8_t *p, size_t n)
{
	char msg[BLUE_CM_PP_MSG_LEN];
	struct blue_cm_info info;
	uint32_t gip;
	int rc = blue_cm_pp_parse((const char *)p, n, &info);

	if (rc) {
		FZ_CHECK(rc == EBADMSG, "rc %d", rc);
		check_refusal(rc, "pingpong");
		return;
	}
	FZ_CHECK(n == BLUE_CM_PP_MSG_LEN, "accepted %zu bytes", n);
	FZ_CHECK(info.qpn <= 0xffffff && info.psn <= 0xffffff, "QPN/PSN beyond 24 bits");
	FZ_CHECK(info.transport == BLUE_QPT_RC, "transport %d", (int)info.transport);
	FZ_CHECK(blue__gid_ipv4(&info.gid, &gip) ? info.ipv4 == gip : !info.ipv4,
		 "IPv4 0x%08x without an IPv4-mapped GID", info.ipv4);
	FZ_CHECK(blue_cm_pp_format(&info, msg) == 0, "format: %s", blue_cm_last_error());
	for (size_t i = 0; i < sizeof(msg); i++)
		FZ_CHECK(msg[i] == tolower(p[i]), "byte %zu: formatted 0x%02x, input 0x%02x",
			 i, (unsigned char)msg[i], p[i]);
}

static void fuzz_allow(const uint8_t *p, size_t n)
{
	char list[1024];
	struct in6_addr peer;
	uint32_t claimed;
	size_t len;
	int rc;

	if (n < FZ_CM_ALLOW_HDR)
		return;
	memcpy(&claimed, p, 4);
	memcpy(&peer, p + 4, 16);
	len = n - FZ_CM_ALLOW_HDR;
	if (len >= sizeof(list))
		len = sizeof(list) - 1;
	memcpy(list, p + FZ_CM_ALLOW_HDR, len);
	list[len] = 0;
	rc = blue__cm_allow_match(list, claimed, &peer);
	FZ_CHECK(rc == 1 || rc == 0 || rc == -EINVAL, "rc %d", rc);
	if (rc < 0)
		check_refusal(rc, "allow list");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p;
	uint8_t *copy;
	size_t n;

	if (size < 1)
		return 0;
	n = size - 1;
	/* an exact-size heap copy, so ASan sees any read past the message */
	copy = malloc(n ? n : 1);
	FZ_CHECK(copy, "malloc");
	memcpy(copy, data + 1, n);
	p = copy;
	blue__cm_clear_error();
	switch (data[0] % FZ_CM__MAX) {
	case FZ_CM_INFO:	fuzz_info(p, n); break;
	case FZ_CM_VERDICT:	fuzz_verdict(p, n); break;
	case FZ_CM_PP:		fuzz_pp(p, n); break;
	case FZ_CM_ALLOW:	fuzz_allow(p, n); break;
	}
	free(copy);
	return 0;
}
