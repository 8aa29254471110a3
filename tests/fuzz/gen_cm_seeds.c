// SPDX-License-Identifier: MIT
/*
 * Writes the seed corpus of the CM parser fuzzer (tests/fuzz/corpus/cm) in the input
 * format of fuzz_cm.h: valid info messages (with and without an MR, the field limits),
 * the edges recv_info() meets (another version, the longest length, a bad checksum, a
 * GID that disagrees with its IPv4, rc_pingpong's string sent to blue's port), verdicts
 * (accept, a refusal with a reason, unprintable bytes, garbled), pingpong messages
 * (valid, uppercase hex, a LID, no GID, a bad colon) and allow lists.
 *
 * Usage: gen_cm_seeds DIR   (run by `make fuzz-seeds`; the files are small and committed)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <zlib.h>

#include <blue/blue.h>
#include "runtime/cm.h"
#include "tests/fuzz/fuzz_cm.h"

static const char *g_dir;
static unsigned int g_written;

static void put(const char *name, enum fz_cm_kind kind, const void *msg, size_t len)
{
	char path[512];
	uint8_t k = (uint8_t)kind;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(&k, 1, 1, f) != 1 || fwrite(msg, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "gen_cm_seeds: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	g_written++;
}

static void sample(struct blue_cm_info *in, uint32_t qpn, uint32_t ip)
{
	memset(in, 0, sizeof(*in));
	in->qpn = qpn;
	in->psn = 0x123456;
	in->ipv4 = htonl(ip);
	in->gid.raw[10] = 0xff;
	in->gid.raw[11] = 0xff;
	memcpy(in->gid.raw + 12, &in->ipv4, 4);
	in->mac[0] = 0x02;
	in->mac[5] = (uint8_t)ip;
	in->mtu = BLUE_MTU_1024;
	in->transport = BLUE_QPT_RC;
	in->caps = BLUE_CM_CAP_SELECTIVE_RETX;
}

static void recrc(struct blue_cm_wire *w)
{
	w->crc = htonl((uint32_t)crc32(0, (const Bytef *)w, offsetof(struct blue_cm_wire, crc)));
}

static void infos(void)
{
	static uint8_t big[BLUE_CM_MAX_LEN];
	struct blue_cm_info in;
	struct blue_cm_wire w;

	sample(&in, 0x000123, 0x0a000002);
	blue__cm_encode(&in, &w);
	put("info-plain", FZ_CM_INFO, &w, sizeof(w));
	blue_cm_info_set_mr(&in, NULL);
	in.has_mr = 1;
	in.mr = (struct blue_cm_mr_desc){ .addr = 0x7fff00001000ull, .length = 1 << 20,
					  .rkey = 0xdeadbeef };
	blue__cm_encode(&in, &w);
	put("info-mr", FZ_CM_INFO, &w, sizeof(w));
	sample(&in, 2, 0x0a000003);
	in.psn = 0;
	in.mtu = BLUE_MTU_256;
	blue__cm_encode(&in, &w);
	put("info-min", FZ_CM_INFO, &w, sizeof(w));
	sample(&in, 0xffffff, 0xc0a80101);
	in.psn = 0xffffff;
	in.mtu = BLUE_MTU_4096;
	in.caps = ~0u;
	blue__cm_encode(&in, &w);
	put("info-max", FZ_CM_INFO, &w, sizeof(w));
	/* a GID that is not IPv4-mapped (link-local), no IPv4 */
	sample(&in, 0x42, 0);
	memset(in.gid.raw, 0, 16);
	in.gid.raw[0] = 0xfe;
	in.gid.raw[1] = 0x80;
	blue__cm_encode(&in, &w);
	put("info-linklocal", FZ_CM_INFO, &w, sizeof(w));
	/* edges */
	sample(&in, 0x000123, 0x0a000002);
	blue__cm_encode(&in, &w);
	w.version = htons(2);
	recrc(&w);
	put("edge-version2", FZ_CM_INFO, &w, sizeof(w));
	blue__cm_encode(&in, &w);
	w.crc ^= htonl(1);
	put("edge-badcrc", FZ_CM_INFO, &w, sizeof(w));
	blue__cm_encode(&in, &w);
	w.ipv4 = htonl(0x0a000009);	/* disagrees with the GID */
	recrc(&w);
	put("edge-gid-ipv4", FZ_CM_INFO, &w, sizeof(w));
	blue__cm_encode(&in, &w);
	w.qpn = htonl(1);
	recrc(&w);
	put("edge-qpn1", FZ_CM_INFO, &w, sizeof(w));
	blue__cm_encode(&in, &w);
	w.flags = htons(0xfffe);	/* unknown flags, no MR */
	w.reserved1 = htonl(7);
	recrc(&w);
	put("edge-flags", FZ_CM_INFO, &w, sizeof(w));
	blue__cm_encode(&in, &w);
	put("edge-header-only", FZ_CM_INFO, &w, BLUE_CM_HDR_LEN);
	memcpy(big, &w, sizeof(w));
	big[6] = BLUE_CM_MAX_LEN >> 8;
	big[7] = BLUE_CM_MAX_LEN & 0xff;
	put("edge-longest", FZ_CM_INFO, big, sizeof(big));
	put("edge-pingpong-on-blue", FZ_CM_INFO,
	    "0000:000123:123456:00000000000000000000ffff0a000002", BLUE_CM_PP_MSG_LEN);
}

static void verdicts(void)
{
	struct blue_cm_verdict_wire v;

	memset(&v, 0, sizeof(v));
	v.magic = htonl(BLUE_CM_VERDICT_MAGIC);
	v.version = htons(BLUE_CM_VERSION);
	v.length = htons(sizeof(v));
	put("verdict-accept", FZ_CM_VERDICT, &v, sizeof(v));
	v.status = htonl(BLUE_CM_REJ_MISMATCH);
	snprintf(v.reason, sizeof(v.reason), "MTU mismatch: local 1024, peer 4096");
	put("verdict-mtu", FZ_CM_VERDICT, &v, sizeof(v));
	v.status = htonl(BLUE_CM_REJ_REFUSED);
	memset(v.reason, 0x1b, sizeof(v.reason));	/* escapes, no NUL */
	put("verdict-unprintable", FZ_CM_VERDICT, &v, sizeof(v));
	v.status = htonl(BLUE_CM_REJ_ADDR_IN_USE);
	snprintf(v.reason, sizeof(v.reason), "exchange: MAC 02:00:00:00:00:02 for 10.0.0.2 "
		 "refused: the entry has 02:00:00:00:00:01 (in use by 1 QP(s))");
	put("verdict-addr-in-use", FZ_CM_VERDICT, &v, sizeof(v));
	v.status = htonl(99);
	memset(v.reason, 0, sizeof(v.reason));
	put("verdict-unknown-status", FZ_CM_VERDICT, &v, sizeof(v));
	v.length = htons(64);
	put("verdict-garbled", FZ_CM_VERDICT, &v, sizeof(v));
}

static void pingpongs(void)
{
	static const struct { const char *name, *msg; } pp[] = {
		{ "pp-plain", "0000:000123:123456:00000000000000000000ffff0a000002" },
		{ "pp-upper", "0000:ABCDEF:0FFFFF:00000000000000000000FFFF0A000002" },
		{ "pp-linklocal", "0000:000123:123456:fe800000000000000002c3fffe000001" },
		{ "pp-nogid", "0000:000011:000022:00000000000000000000000000000000" },
		{ "pp-lid", "0012:000123:123456:00000000000000000000ffff0a000002" },
		{ "pp-colon", "0000-000123:123456:00000000000000000000ffff0a000002" },
	};

	for (size_t i = 0; i < sizeof(pp) / sizeof(pp[0]); i++)
		put(pp[i].name, FZ_CM_PP, pp[i].msg, BLUE_CM_PP_MSG_LEN);
}

/* claimed and peer, then the list */
static void allow(const char *name, uint32_t claimed, const char *peer, const char *list)
{
	uint8_t b[FZ_CM_ALLOW_HDR + 256];
	struct in6_addr p6;
	struct in_addr p4;
	uint32_t c = htonl(claimed);
	size_t n = strlen(list);

	memset(&p6, 0, sizeof(p6));
	if (inet_pton(AF_INET, peer, &p4) == 1) {
		p6.s6_addr[10] = p6.s6_addr[11] = 0xff;
		memcpy(p6.s6_addr + 12, &p4, 4);
	} else if (inet_pton(AF_INET6, peer, &p6) != 1) {
		fprintf(stderr, "gen_cm_seeds: bad peer %s\n", peer);
		exit(1);
	}
	memcpy(b, &c, 4);
	memcpy(b + 4, &p6, 16);
	memcpy(b + FZ_CM_ALLOW_HDR, list, n);
	put(name, FZ_CM_ALLOW, b, FZ_CM_ALLOW_HDR + n);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_cm_seeds DIR\n");
		return 2;
	}
	g_dir = argv[1];
	infos();
	verdicts();
	pingpongs();
	allow("allow-pair", 0x0a000102, "10.0.0.2", "10.0.1.2=10.0.0.2");
	allow("allow-prefix", 0x0a090304, "fd00::7", " 10.0.1.2=10.0.0.2 , 10.9.0.0/16=fd00::7,");
	allow("allow-malformed", 0x0a000102, "10.0.0.2", "10.0.1.2:10.0.0.2");
	allow("allow-prefix-edge", 0x0a000102, "10.0.0.2", "0.0.0.0/0=10.0.0.2,1.2.3.4/33=1.1.1.1");
	printf("gen_cm_seeds: %u seeds in %s\n", g_written, g_dir);
	return 0;
}
