// SPDX-License-Identifier: MIT
/*
 * Oracle input generator for the codec (driven by tests/oracle/test_codec_oracle.sh).
 *
 *   gen_packets OUT.pcap OUT.json   one frame per opcode in wire.h, built by
 *                                   blue_pkt_build(), with varied fields and payload
 *                                   sizes (pad 0..3, VLAN on some, IPv6 on every
 *                                   third), and a JSON list
 *                                   with every field of each frame, so that scapy can
 *                                   build the same frames and tshark can be checked.
 *   gen_packets --icrc IN.pcap      for each frame: "<wire-icrc> <blue_icrc>" in hex,
 *                                   for comparison with an independent zlib check.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"

/* Payload sizes cycled over the opcodes that carry data: every pad 0..3, and MTU-ish. */
static const uint32_t plens[] = { 1, 2, 3, 4, 5, 6, 7, 0, 13, 64, 250, 1021, 1024, 4093 };

static void write_pcap_hdr(FILE *f)
{
	/* classic pcap, microseconds, snaplen 65535, LINKTYPE_ETHERNET */
	const uint32_t h[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };

	fwrite(h, sizeof(h), 1, f);
}

static void write_pcap_rec(FILE *f, const uint8_t *frame, uint32_t len, uint32_t i)
{
	const uint32_t r[4] = { 1700000000u + i, 0, len, len };

	fwrite(r, sizeof(r), 1, f);
	fwrite(frame, len, 1, f);
}

static void mac(FILE *j, const char *k, const uint8_t *m)
{
	fprintf(j, "\"%s\": \"%02x:%02x:%02x:%02x:%02x:%02x\", ", k, m[0], m[1], m[2], m[3],
		m[4], m[5]);
}

static void ip4(FILE *j, const char *k, uint32_t a_be)
{
	const uint8_t *b = (const uint8_t *)&a_be;

	fprintf(j, "\"%s\": \"%u.%u.%u.%u\", ", k, b[0], b[1], b[2], b[3]);
}

static void ip6(FILE *j, const char *k, const uint8_t *a)
{
	char str[INET6_ADDRSTRLEN];

	/* the compressed form, as tshark prints it */
	inet_ntop(AF_INET6, a, str, sizeof(str));
	fprintf(j, "\"%s\": \"%s\", ", k, str);
}

static void write_json(FILE *j, const struct blue_pkt *p, uint32_t pad, int first)
{
	uint32_t i;

	fprintf(j, "%s  {", first ? "" : ",\n");
	mac(j, "dst_mac", p->dst_mac);
	mac(j, "src_mac", p->src_mac);
	fprintf(j, "\"has_vlan\": %u, \"vlan_tci\": %u, ", p->has_vlan, p->vlan_tci);
	ip4(j, "saddr", p->saddr);
	ip4(j, "daddr", p->daddr);
	fprintf(j, "\"ipv6\": %u, \"flow_label\": %u, ", p->ipv6, p->flow_label);
	ip6(j, "saddr6", p->saddr6);
	ip6(j, "daddr6", p->daddr6);
	fprintf(j, "\"tos\": %u, \"ttl\": %u, \"ip_id\": %u, \"ip_df\": %u, \"sport\": %u, ",
		p->tos, p->ttl, p->ip_id, p->ip_df, p->sport);
	fprintf(j, "\"opcode\": %u, \"se\": %u, \"mig\": %u, \"pad\": %u, \"tver\": %u, "
		"\"pkey\": %u, \"fecn\": %u, \"becn\": %u, \"dqpn\": %u, \"ackreq\": %u, "
		"\"psn\": %u, ", p->opcode, p->se, p->mig, pad, p->tver, p->pkey, p->fecn,
		p->becn, p->dqpn, p->ackreq, p->psn);
	fprintf(j, "\"reth\": [%llu, %u, %u], ", (unsigned long long)p->reth.va, p->reth.rkey,
		p->reth.len);
	fprintf(j, "\"aeth\": [%u, %u], ", p->aeth.syndrome, p->aeth.msn);
	fprintf(j, "\"atmeth\": [%llu, %u, %llu, %llu], ", (unsigned long long)p->atmeth.va,
		p->atmeth.rkey, (unsigned long long)p->atmeth.swap_add,
		(unsigned long long)p->atmeth.compare);
	fprintf(j, "\"atmack\": %llu, \"imm\": %u, \"ieth\": %u, \"deth\": [%u, %u], ",
		(unsigned long long)p->atmack.orig, p->imm, p->ieth_rkey, p->deth.qkey,
		p->deth.sqpn);
	fprintf(j, "\"feth\": %u, ", p->feth);
	fprintf(j, "\"payload\": \"");
	for (i = 0; i < p->payload_len; i++)
		fprintf(j, "%02x", p->payload[i]);
	fprintf(j, "\"}");
}

/* Deterministic, distinctive field values for frame @i. */
static void make_pkt(struct blue_pkt *p, uint8_t op, uint32_t i, uint8_t *data, uint32_t *k)
{
	static const uint8_t syn[] = { 0x1f, 0x00, 0x3f, 0x20, 0x60, 0x62 };
	__u32 fl = blue_opcode_flags(op);
	uint32_t n;

	blue_pkt_init(p, op);
	memcpy(p->dst_mac, "\x02\xb1\x00\x00\x00\x01", 6);
	memcpy(p->src_mac, "\x02\xb1\x00\x00\x00\x02", 6);
	p->src_mac[5] = (uint8_t)(2 + i);
	p->has_vlan = i % 5 == 4;
	p->vlan_tci = p->has_vlan ? (uint16_t)((i % 8) << 13 | (100 + i)) : 0;
	p->saddr = htobe32(0x0ac90101u);
	p->daddr = htobe32(0x0ac90102u + (i & 3));
	p->tos = (uint8_t)((i * 4) | (i & 3));	/* DSCP and ECN both vary */
	p->ttl = (uint8_t)(64 - i);
	p->ip_id = (uint16_t)(0x1000 + i * 7);
	p->ip_df = i % 7 != 3;
	if (i % 3 == 2) {	/* every third frame over IPv6 (RFC 8200), a flow label on some */
		uint8_t s6[16] = { 0xfd, 0, 0xb1, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
		uint8_t d6[16] = { 0xfd, 0, 0xb1, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };

		d6[15] = (uint8_t)(2 + (i & 3));
		blue_pkt_set_ips(p, s6, d6);
		p->saddr = p->daddr = 0;
		p->ip_id = 0;
		p->ip_df = 0;
		p->flow_label = i % 2 ? 0x12345u + i : 0;
	}
	p->dqpn = (0x000100u + i * 0x010203u) & BLUE_QPN_MASK;
	p->sport = blue_udp_sport(0x11 + i, p->dqpn);
	p->psn = (0xfffff0u + i * 3) & BLUE_PSN_MASK;	/* crosses the wrap */
	if (!(fl & BLUE_OPF_CNP)) {
		p->se = i & 1;
		p->mig = (i >> 1) & 1;
		p->fecn = i % 3 == 0;
		p->becn = i % 4 == 0;
		p->ackreq = (i >> 2) & 1;
		p->pkey = i % 6 == 5 ? 0x8001 : 0xffff;
	}
	p->reth.va = 0x00007f0012340000ull + (uint64_t)i * 0x1000;
	p->reth.rkey = 0x1000 + i;
	p->reth.len = 4096 * (i + 1);
	p->aeth.syndrome = syn[i % sizeof(syn)];
	p->aeth.msn = (0xfffffe + i) & BLUE_PSN_MASK;
	p->atmeth.va = 0x0000556114a96000ull + i * 8;
	p->atmeth.rkey = 0x283 + i;
	p->atmeth.swap_add = 0x0102030405060708ull * (i + 1);
	p->atmeth.compare = 0xfedcba9876543210ull ^ i;
	p->atmack.orig = 10871832084401530881ull + i;
	p->imm = 0xdead0000u | i;
	p->ieth_rkey = 0xbeef0000u | i;
	/* a FLUSH's FETH: placement type PERSISTENT|GLOBAL, selectivity MR (IBA 1.5) */
	p->feth = 0x3u | 1u << BLUE_FETH_SEL_SHIFT;
	p->deth.qkey = 0x11111111u * ((i % 15) + 1);
	p->deth.sqpn = (0x000001u + i * 0x10101u) & BLUE_QPN_MASK;

	if (fl & BLUE_OPF_PAYLOAD) {
		p->payload_len = plens[*k % (sizeof(plens) / sizeof(plens[0]))];
		(*k)++;
		for (n = 0; n < p->payload_len; n++)
			data[n] = (uint8_t)(n * 31 + i);
		p->payload = data;
	}
}

static int generate(const char *pcap_path, const char *json_path)
{
	static uint8_t data[8192], frame[9000];
	FILE *pf = fopen(pcap_path, "wb"), *jf = fopen(json_path, "w");
	uint32_t i = 0, k = 0, op;
	struct blue_pkt p;
	int n;

	if (!pf || !jf) {
		fprintf(stderr, "gen_packets: cannot write %s / %s: %s\n", pcap_path, json_path,
			strerror(errno));
		return 1;
	}
	write_pcap_hdr(pf);
	fprintf(jf, "[\n");
	for (op = 0; op < 256; op++) {
		if (!blue_opcode_flags((uint8_t)op))
			continue;
		make_pkt(&p, (uint8_t)op, i, data, &k);
		n = blue_pkt_build(&p, frame, sizeof(frame));
		if (n < 0) {
			fprintf(stderr, "gen_packets: build opcode 0x%02x failed: %s\n", op,
				strerror(-n));
			return 1;
		}
		write_pcap_rec(pf, frame, (uint32_t)n, i);
		write_json(jf, &p, (4 - (p.payload_len & 3)) & 3, i == 0);
		i++;
	}
	fprintf(jf, "\n]\n");
	if (fclose(pf) | fclose(jf)) {
		fprintf(stderr, "gen_packets: write failed: %s\n", strerror(errno));
		return 1;
	}
	fprintf(stderr, "gen_packets: %u frames\n", i);
	return 0;
}

/* Print the wire ICRC and blue_icrc() for every frame of a classic pcap. */
static int icrc_dump(const char *path)
{
	static uint8_t rec[65536 + 16];
	FILE *f = fopen(path, "rb");
	uint32_t gh[6], rh[4], wire;
	struct blue_pkt p;
	int err;

	if (!f || fread(gh, sizeof(gh), 1, f) != 1 || gh[0] != 0xa1b2c3d4 || gh[5] != 1) {
		fprintf(stderr, "gen_packets: %s: not a little-endian Ethernet pcap\n", path);
		return 1;
	}
	while (fread(rh, sizeof(rh), 1, f) == 1) {
		if (rh[2] > sizeof(rec) || fread(rec, rh[2], 1, f) != 1) {
			fprintf(stderr, "gen_packets: %s: truncated record\n", path);
			return 1;
		}
		err = blue_pkt_parse(rec, rh[2], &p);
		if (err && p.parse_err != BLUE_PARSE_BAD_ICRC) {
			fprintf(stderr, "gen_packets: %s: parse: %s\n", path,
				blue_parse_err_name(p.parse_err));
			return 1;
		}
		memcpy(&wire, rec + p.frame_len - 4, 4);
		printf("%08x %08x\n", le32toh(wire),
		       blue_icrc(rec + p.l3_off, (size_t)p.frame_len - p.l3_off - 4));
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--icrc"))
		return icrc_dump(argv[2]);
	if (argc == 3)
		return generate(argv[1], argv[2]);
	fprintf(stderr, "usage: %s OUT.pcap OUT.json | --icrc IN.pcap\n", argv[0]);
	return 2;
}
