// SPDX-License-Identifier: MIT
/*
 * hostile_tx: crafted RoCEv2 frames from an AF_PACKET socket at a live libblue QP
 * (issue 4, "Hostile input against a live QP"; tests/netns/test_hostile.sh).
 *
 *   hostile_tx IFNAME --src-mac M --dst-mac M --src-ip A --dst-ip B
 *              --info "main_qpn Q main_psn P rkey K mr ADDR mr_len N canary ADDR
 *                      mtu M victims Q:P,..."    (hostile_peer's INFO line)
 *              [--count N] [--flood N] [--spoof-ip C] [--victim-wait-ms N]
 *              [--part all|main|rest]
 *
 * Every frame must be rejected; none may change the receiver's memory or disturb the
 * transfer on its main QP. Three groups:
 *  - malformed beyond use (truncated headers, lying lengths, bad version or opcode, pad
 *    past the end, unknown QPNs): dropped in XDP, each under its reason;
 *  - well-formed enough for XDP but wrong (bad ICRC, pad on an opcode without payload,
 *    unaligned payload, IP options, bad IP checksum, a spoofed source, a UC opcode at an
 *    RC QP): sent at the main QP, dropped silently by the runtime's parser and address
 *    checks, each under its engine counter; at path MTU 4096 also multi-buffer frames
 *    (lengths that disagree with the frags' total, a cut second fragment, the ICRC and
 *    a short payload across the split), dropped in XDP or by the runtime;
 *  - well-formed requests that break the transport rules (PSNs outside the window,
 *    MIDDLE without FIRST, RETH beyond the MR, a wrong R_Key, an unaligned atomic, a
 *    READ of unregistered memory): IBA answers these with a NAK, and all but the PSN
 *    errors move the responder QP to ERROR, so they go to the receiver's victim QPs, one
 *    kind per victim. The first frame of each kind meets the live victim; the other
 *    --count - 1 ("<kind>_again") meet a QP in ERROR, which XDP drops. With --part
 *    all they follow --victim-wait-ms later; a test that wants to be sure runs
 *    --part main, waits until the victims show ERROR, then runs --part rest.
 *
 * Output: one line per kind, "SENT <kind> <frames> <where counted>", where is
 * xdp.<reason> (bluectl stats), engine.<counter> (hostile_peer's ENGINE lines),
 * hal.<counter> (bluectl stats: the receiver's HAL) or victim<i>.<what> (the victim QP's context: NAK syndrome, state); then "TOTAL n".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>

#include "runtime/codec.h"

#define MAX_VICTIMS	16
#define FRAME_CAP	9216	/* a jumbo frame: path MTU 4096 needs a netdev MTU above 4096 */
#define MB_SPLIT_LO	3300u	/* SEND payloads swept across where veth splits a frame ... */
#define MB_SPLIT_HI	3900u	/* ... into XDP frags (~3.5 KB: a page less headroom, tailroom) */
#define L3		BLUE_ETH_HLEN
#define L4		(L3 + BLUE_IPV4_MIN_HLEN)
#define BTH		(L4 + BLUE_UDP_HLEN)

struct target {
	uint8_t src_mac[6], dst_mac[6];
	uint32_t src_ip, dst_ip, spoof_ip;	/* network order */
	uint32_t main_qpn, main_psn, rkey, mr_len;
	uint32_t mtu;		/* the path MTU the QPs run at, in bytes */
	uint64_t mr, canary;
	uint32_t vqpn[MAX_VICTIMS], vpsn[MAX_VICTIMS];
	unsigned int nvictims;
};

struct tx {
	int fd;
	struct sockaddr_ll to;
	unsigned long total;
	unsigned long errors;
};

struct frame {
	uint8_t b[FRAME_CAP];
	uint32_t len;
};

static uint16_t get16(const uint8_t *b) { return (uint16_t)(b[0] << 8 | b[1]); }
static void put16(uint8_t *b, uint16_t v) { b[0] = (uint8_t)(v >> 8); b[1] = (uint8_t)v; }

static void fix_ipcsum(uint8_t *ip)
{
	uint32_t sum = 0, hl = (ip[0] & 0x0f) * 4u;

	put16(ip + 10, 0);
	for (uint32_t i = 0; i + 1 < hl; i += 2)
		sum += get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, (uint16_t)~sum);
}

/* A valid frame of @op to @qpn at @psn, from the client's addresses. */
static void build(const struct target *t, struct frame *f, uint8_t op, uint32_t qpn,
		  uint32_t psn, uint32_t paylen)
{
	static uint8_t payload[FRAME_CAP];
	struct blue_pkt p;
	int n;

	memset(payload, 0x5a, sizeof(payload));
	blue_pkt_init(&p, op);
	memcpy(p.dst_mac, t->dst_mac, 6);
	memcpy(p.src_mac, t->src_mac, 6);
	p.saddr = t->src_ip;
	p.daddr = t->dst_ip;
	p.sport = blue_udp_sport(0xbad000, qpn);
	p.dqpn = qpn & BLUE_QPN_MASK;
	p.psn = psn & BLUE_PSN_MASK;
	p.ackreq = 1;
	p.payload = payload;
	p.payload_len = paylen;
	p.reth.rkey = p.atmeth.rkey = t->rkey;
	p.reth.va = p.atmeth.va = t->mr;
	p.reth.len = paylen;
	p.atmeth.swap_add = 1;
	n = blue_pkt_build(&p, f->b, sizeof(f->b));
	if (n < 0) {
		fprintf(stderr, "hostile_tx: cannot build opcode 0x%02x: %s\n", op, strerror(-n));
		exit(1);
	}
	f->len = (uint32_t)n;
}

/* The IPv4 and UDP lengths and checksum after the frame grew or shrank to f->len. */
static void fix_lengths(struct frame *f)
{
	uint32_t hl = (f->b[L3] & 0x0f) * 4u;

	put16(f->b + L3 + 2, (uint16_t)(f->len - L3));
	put16(f->b + L3 + hl + 4, (uint16_t)(f->len - L3 - hl));
	fix_ipcsum(f->b + L3);
}

/* Insert @n bytes at @off, lengths and ICRC fixed (the ICRC covers them). */
static void insert(struct frame *f, uint32_t off, uint32_t n, uint8_t fill_byte)
{
	memmove(f->b + off + n, f->b + off, f->len - off);
	memset(f->b + off, fill_byte, n);
	f->len += n;
	fix_lengths(f);
	blue_pkt_fix_icrc(f->b, f->len);
}

static void pace(unsigned int us)
{
	struct timespec ts = { 0, (long)us * 1000 };

	nanosleep(&ts, NULL);
}

static void send_frame(struct tx *tx, const struct frame *f)
{
	if (sendto(tx->fd, f->b, f->len, 0, (const struct sockaddr *)&tx->to,
		   sizeof(tx->to)) != (ssize_t)f->len) {
		if (!tx->errors++)
			fprintf(stderr, "hostile_tx: sendto (%u bytes): %s\n", f->len,
				strerror(errno));
		return;
	}
	tx->total++;
	/* a few tens of microseconds apart: the receiver's AF_XDP ring, shared with the
	 * transfer, must never overflow, or a frame could be lost before it is counted */
	pace(40);
}

static void report(const char *kind, unsigned int n, const char *where)
{
	printf("SENT %-26s %5u %s\n", kind, n, where);
	fflush(stdout);
}

/* ---- group 1: malformed, dropped in XDP ------------------------------------------------ */

static void xdp_kinds(struct tx *tx, const struct target *t, unsigned int count)
{
	struct frame f;
	unsigned int i;

	for (i = 0; i < count; i++) {	/* an 802.1Q tag announced, none there */
		memcpy(f.b, t->dst_mac, 6);
		memcpy(f.b + 6, t->src_mac, 6);
		put16(f.b + 12, 0x8100);
		f.len = BLUE_ETH_HLEN;
		send_frame(tx, &f);
	}
	report("trunc_eth", count, "xdp.drop_trunc_eth");

	for (i = 0; i < count; i++) {	/* 10 bytes of an IPv4 header */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		f.len = L3 + 10;
		send_frame(tx, &f);
	}
	report("trunc_ip", count, "xdp.drop_trunc_ip");

	for (i = 0; i < count; i++) {	/* IPv4 total length beyond the frame */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		put16(f.b + L3 + 2, (uint16_t)(get16(f.b + L3 + 2) + 200 + i));
		fix_ipcsum(f.b + L3);
		send_frame(tx, &f);
	}
	report("ip_len_lie", count, "xdp.drop_bad_ip_hdr");

	for (i = 0; i < count; i++) {	/* IHL 4: shorter than an IPv4 header */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		f.b[L3] = 0x44;
		send_frame(tx, &f);
	}
	report("ip_ihl_short", count, "xdp.drop_bad_ip_hdr");

	for (i = 0; i < count; i++) {	/* a first fragment (MF) */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		put16(f.b + L3 + 6, 0x2000);
		fix_ipcsum(f.b + L3);
		send_frame(tx, &f);
	}
	report("ip_fragment", count, "xdp.drop_ip_fragment");

	for (i = 0; i < count; i++) {	/* IPv4 says 4 bytes of UDP follow */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		f.len = L4 + 4;
		fix_lengths(&f);
		send_frame(tx, &f);
	}
	report("trunc_udp", count, "xdp.drop_trunc_udp");

	for (i = 0; i < count; i++) {	/* UDP length beyond the IP payload */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		put16(f.b + L4 + 4, (uint16_t)(get16(f.b + L4 + 4) + 100));
		send_frame(tx, &f);
	}
	report("udp_len_lie", count, "xdp.drop_bad_udp_len");

	for (i = 0; i < count; i++) {	/* 6 bytes of a 12-byte BTH */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		f.len = BTH + 6;
		fix_lengths(&f);
		send_frame(tx, &f);
	}
	report("trunc_bth", count, "xdp.drop_trunc_bth");

	for (i = 0; i < count; i++) {	/* transport header version 1 */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		f.b[BTH + 1] |= 1;
		blue_pkt_fix_icrc(f.b, f.len);
		send_frame(tx, &f);
	}
	report("bad_tver", count, "xdp.drop_bad_version");

	for (i = 0; i < count; i++) {	/* an RC opcode IBA reserves */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		f.b[BTH] = 0x1f;
		blue_pkt_fix_icrc(f.b, f.len);
		send_frame(tx, &f);
	}
	report("bad_opcode", count, "xdp.drop_bad_opcode");

	for (i = 0; i < count; i++) {	/* P_Key of another partition (the QP's is 0xffff) */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		put16(f.b + BTH + 2, 0x9234);
		blue_pkt_fix_icrc(f.b, f.len);
		send_frame(tx, &f);
	}
	report("bad_pkey", count, "xdp.drop_bad_pkey");

	for (i = 0; i < count; i++) {	/* pad count 3 on an empty SEND: past the end */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 0);
		f.b[BTH + 1] |= 3 << BLUE_BTH_PAD_SHIFT;
		blue_pkt_fix_icrc(f.b, f.len);
		send_frame(tx, &f);
	}
	report("pad_overrun", count, "xdp.drop_bad_length");

	for (i = 0; i < count; i++) {	/* WRITE ONLY whose RETH is not there */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 0);
		f.b[BTH] = BLUE_OP_RC_WRITE_ONLY;
		blue_pkt_fix_icrc(f.b, f.len);
		send_frame(tx, &f);
	}
	report("ext_trunc", count, "xdp.drop_bad_length");
}

static void flood_unknown(struct tx *tx, const struct target *t, unsigned int n)
{
	uint32_t x = 0x2545f491u, q;
	struct frame f;
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		do {	/* xorshift: any QPN but the receiver's own */
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			q = x & BLUE_QPN_MASK;
			for (k = 0; k < t->nvictims && t->vqpn[k] != q; k++)
				;
		} while (q == t->main_qpn || k < t->nvictims);
		build(t, &f, BLUE_OP_RC_SEND_ONLY, q, x >> 8, 64);
		send_frame(tx, &f);
	}
	report("flood_unknown_qpn", n, "xdp.drop_unknown_qpn");
}

/* ---- group 2: at the main QP, dropped by the runtime ------------------------------------ */

static void engine_kinds(struct tx *tx, const struct target *t, unsigned int count)
{
	struct frame f;
	unsigned int i;

	for (i = 0; i < count; i++) {	/* one ICRC bit flipped */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		f.b[f.len - 1] ^= 0x80;
		send_frame(tx, &f);
	}
	report("bad_icrc", count, "engine.rx_bad_icrc");

	for (i = 0; i < count; i++) {	/* READ request with pad 2 and 4 bytes of "data" */
		build(t, &f, BLUE_OP_RC_READ_REQUEST, t->main_qpn, t->main_psn, 0);
		f.b[BTH + 1] |= 2 << BLUE_BTH_PAD_SHIFT;
		insert(&f, f.len - BLUE_ICRC_LEN, 4, 0);
		send_frame(tx, &f);
	}
	report("pad_no_payload", count, "engine.parse_bad_pad");

	for (i = 0; i < count; i++) {	/* 5 bytes of payload, pad 0: not whole words */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 4);
		insert(&f, f.len - BLUE_ICRC_LEN, 1, 0x5a);
		send_frame(tx, &f);
	}
	report("payload_unaligned", count, "engine.parse_bad_payload_len");

	for (i = 0; i < count; i++) {	/* UDP length 4 short of the IP payload */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		put16(f.b + L4 + 4, (uint16_t)(get16(f.b + L4 + 4) - 4));
		send_frame(tx, &f);
	}
	report("udp_len_short", count, "engine.parse_bad_udp_len");

	for (i = 0; i < count; i++) {	/* IHL 6: one word of IP options */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		f.b[L3] = 0x46;
		insert(&f, L4, 4, 0x01);	/* NOP options */
		send_frame(tx, &f);
	}
	report("ip_options", count, "engine.parse_bad_ihl");

	for (i = 0; i < count; i++) {
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		f.b[L3 + 10] ^= 0x12;
		send_frame(tx, &f);
	}
	report("ip_bad_csum", count, "engine.parse_bad_ip_csum");

	for (i = 0; i < count; i++) {	/* all valid, from an address that is not the peer */
		struct target spoof = *t;

		spoof.src_ip = t->spoof_ip;
		build(&spoof, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		send_frame(tx, &f);
	}
	report("spoofed_src", count, "engine.rx_bad_src");

	for (i = 0; i < count; i++) {	/* a UC SEND at an RC QP */
		build(t, &f, BLUE_OP_UC_SEND_ONLY, t->main_qpn, t->main_psn, 16);
		send_frame(tx, &f);
	}
	report("uc_opcode_at_rc", count, "engine.rx_wrong_transport");
}

/* ---- group 2b: multi-buffer frames (path MTU 4096), at the main QP --------------------- */

/*
 * Frames that only exist when a packet is larger than one XDP buffer: veth hands XDP a
 * frame of more than ~3.5 KB as a head buffer plus frags, and AF_XDP delivers it as
 * several descriptors that the HAL gathers. The lengths the headers claim must be
 * checked against the whole frame, and the pad and ICRC found wherever the split falls.
 */
static void mb_kinds(struct tx *tx, const struct target *t, unsigned int count)
{
	struct frame f;
	unsigned int i, n;
	uint32_t pl;

	for (i = 0; i < count; i++) {	/* IPv4 total length beyond the frags' total */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, t->mtu);
		put16(f.b + L3 + 2, (uint16_t)(get16(f.b + L3 + 2) + 4 + 4 * i));
		fix_ipcsum(f.b + L3);
		send_frame(tx, &f);
	}
	report("mb_ip_len_lie", count, "xdp.drop_bad_ip_hdr");

	for (i = 0; i < count; i++) {	/* the second fragment cut short, headers as sent */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, t->mtu);
		f.len -= 64 + 8 * i;
		send_frame(tx, &f);
	}
	report("mb_trunc_frag", count, "xdp.drop_bad_ip_hdr");

	for (i = 0; i < count; i++) {	/* UDP length beyond the IP payload */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, t->mtu);
		put16(f.b + L4 + 4, (uint16_t)(get16(f.b + L4 + 4) + 4 + 4 * i));
		send_frame(tx, &f);
	}
	report("mb_udp_len_lie", count, "xdp.drop_bad_udp_len");

	for (i = 0; i < count; i++) {	/* UDP length short of the IP payload: the frags' */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, t->mtu);
		put16(f.b + L4 + 4, (uint16_t)(get16(f.b + L4 + 4) - 4));
		send_frame(tx, &f);
	}
	report("mb_udp_len_short", count, "engine.parse_bad_udp_len");

	/* the ICRC in every position around the split: one bit of it flipped */
	for (n = 0, pl = MB_SPLIT_LO; pl <= MB_SPLIT_HI; pl += 4, n++) {
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, pl);
		f.b[f.len - 1 - n % BLUE_ICRC_LEN] ^= 0x10;
		send_frame(tx, &f);
	}
	report("mb_icrc_split", n, "engine.rx_bad_icrc");

	/* pad 0 and a payload one byte short of whole words, ICRC correct, around the split */
	for (n = 0, pl = MB_SPLIT_LO; pl <= MB_SPLIT_HI; pl += 4, n++) {
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, pl);
		insert(&f, f.len - BLUE_ICRC_LEN, 3, 0x5a);
		send_frame(tx, &f);
	}
	report("mb_pad_split", n, "engine.parse_bad_payload_len");

	for (i = 0; i < count; i++) {	/* valid headers, 8 KiB of payload: beyond max_pkt */
		build(t, &f, BLUE_OP_RC_SEND_ONLY, t->main_qpn, t->main_psn, 2 * t->mtu);
		send_frame(tx, &f);
	}
	report("mb_oversize", count, "hal.rx_dropped");
}

/* ---- group 3: transport-rule breakers, at victim QPs --------------------------------------- */

#define PL_MTU	UINT32_MAX	/* a payload (and RETH length) of one path MTU */

enum va_base {
	VA_MR,		/* va_off from the MR's start */
	VA_END,		/* va_off from where the payload would end at the MR's end */
	VA_CANARY,	/* the canary page before the MR */
};

struct vkind {
	const char *name;
	uint8_t op;
	uint32_t paylen;	/* or PL_MTU */
	uint32_t pl_plus;	/* bytes beyond that */
	enum va_base base;
	int64_t va_off;
	uint32_t rkey_xor;
	uint32_t reth_len;	/* or PL_MTU */
	const char *where;
};

static const struct vkind vkinds[] = {
	{ "middle_without_first", BLUE_OP_RC_SEND_MIDDLE, PL_MTU, 0, VA_MR, 0, 0, 0,
	  "victim1.nak_0x61" },
	{ "reth_beyond_mr", BLUE_OP_RC_WRITE_ONLY, 64, 0, VA_END, 48, 0, 64, "victim2.nak_0x62" },
	{ "wrong_rkey", BLUE_OP_RC_WRITE_ONLY, 64, 0, VA_MR, 0, 0x700, 64, "victim3.nak_0x62" },
	{ "misaligned_atomic", BLUE_OP_RC_FETCH_ADD, 0, 0, VA_MR, 4, 0, 0, "victim4.nak_0x61" },
	{ "read_unregistered", BLUE_OP_RC_READ_REQUEST, 0, 0, VA_CANARY, 0, 0, 4096,
	  "victim5.nak_0x62" },
	/* a full-MTU WRITE whose last 4 bytes would land past the MR (at MTU 4096 a
	 * multi-buffer frame): not one byte of it may reach the MR or the canary after it */
	{ "payload_at_mr_end", BLUE_OP_RC_WRITE_ONLY, PL_MTU, 0, VA_END, 4, 0, PL_MTU,
	  "victim6.nak_0x62" },
	/* a SEND ONLY one word longer than the path MTU, which the link still carries */
	{ "payload_over_mtu", BLUE_OP_RC_SEND_ONLY, PL_MTU, 4, VA_MR, 0, 0, 0,
	  "victim7.nak_0x61" },
};

static void build_vkind(const struct target *t, struct frame *f, const struct vkind *k,
			unsigned int v)
{
	static struct frame tmp;
	uint32_t paylen = (k->paylen == PL_MTU ? t->mtu : k->paylen) + k->pl_plus;
	struct blue_pkt p;
	uint64_t va;

	/* build, parse back, adjust the extended header, rebuild (p.payload points into
	 * tmp, so the rebuild goes to another buffer) */
	build(t, &tmp, k->op, t->vqpn[v], t->vpsn[v], paylen);
	f->len = tmp.len;
	if (blue_pkt_parse(tmp.b, tmp.len, &p)) {
		fprintf(stderr, "hostile_tx: %s: own frame does not parse\n", k->name);
		exit(1);
	}
	switch (k->base) {
	case VA_CANARY:	va = t->canary; break;
	case VA_END:	va = t->mr + t->mr_len - paylen + (uint64_t)k->va_off; break;
	default:	va = t->mr + (uint64_t)k->va_off; break;
	}
	p.reth.va = p.atmeth.va = va;
	p.reth.rkey = p.atmeth.rkey = t->rkey ^ k->rkey_xor;
	p.reth.len = k->reth_len == PL_MTU ? t->mtu : k->reth_len;
	if (blue_pkt_build(&p, f->b, sizeof(f->b)) != (int)f->len) {
		fprintf(stderr, "hostile_tx: %s: rebuild failed\n", k->name);
		exit(1);
	}
}

/*
 * Victim 0 gets PSNs outside its window, each other victim the first frame of its kind
 * (@first), or the remaining @count - 1, which must meet a QP already in ERROR (@rest).
 */
static void victim_kinds(struct tx *tx, const struct target *t, unsigned int count,
			 bool first, bool rest)
{
	struct frame f;
	unsigned int i, k, nk = sizeof(vkinds) / sizeof(vkinds[0]);
	char name[64];

	if (t->nvictims < nk + 1) {
		fprintf(stderr, "hostile_tx: %u victims given, %u needed\n", t->nvictims, nk + 1);
		exit(1);
	}
	if (first) {
		/* victim 0: a gap is NAK'd once, duplicates are re-ACKed, the QP lives on */
		for (i = 0; i < count; i++) {
			build(t, &f, BLUE_OP_RC_SEND_ONLY, t->vqpn[0], t->vpsn[0] + 0x1000 + i,
			      16);
			send_frame(tx, &f);
		}
		report("psn_ahead", count, "victim0.nak_0x60+engine.rx_seq_err");
		for (i = 0; i < count; i++) {
			build(t, &f, BLUE_OP_RC_SEND_ONLY, t->vqpn[0], t->vpsn[0] - 1 - i, 16);
			send_frame(tx, &f);
		}
		report("psn_behind", count, "victim0.reack+engine.rx_dup");
		for (k = 0; k < nk; k++) {
			build_vkind(t, &f, &vkinds[k], k + 1);
			send_frame(tx, &f);
			report(vkinds[k].name, 1, vkinds[k].where);
		}
	}
	if (rest) {
		for (k = 0; k < nk && count > 1; k++) {
			build_vkind(t, &f, &vkinds[k], k + 1);
			for (i = 1; i < count; i++)
				send_frame(tx, &f);
			snprintf(name, sizeof(name), "%s_again", vkinds[k].name);
			report(name, count - 1, "xdp.drop_qp_state");
		}
	}
}

/* ---- main ------------------------------------------------------------------------------ */

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int m[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	return 0;
}

static int parse_info(char *info, struct target *t)
{
	char *save = NULL, *k, *v, *item, *save2 = NULL;
	unsigned int seen = 0;

	for (k = strtok_r(info, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
		v = strtok_r(NULL, " ", &save);
		if (!v)
			return -1;
		seen++;
		if (!strcmp(k, "main_qpn"))
			t->main_qpn = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(k, "main_psn"))
			t->main_psn = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(k, "rkey"))
			t->rkey = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(k, "mr"))
			t->mr = strtoull(v, NULL, 0);
		else if (!strcmp(k, "mr_len"))
			t->mr_len = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(k, "canary"))
			t->canary = strtoull(v, NULL, 0);
		else if (!strcmp(k, "mtu"))
			t->mtu = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(k, "victims")) {
			for (item = strtok_r(v, ",", &save2); item && t->nvictims < MAX_VICTIMS;
			     item = strtok_r(NULL, ",", &save2)) {
				char *colon = strchr(item, ':');

				if (!colon)
					return -1;
				t->vqpn[t->nvictims] = (uint32_t)strtoul(item, NULL, 0);
				t->vpsn[t->nvictims++] = (uint32_t)strtoul(colon + 1, NULL, 0);
			}
		} else
			seen--;
	}
	if (seen != 8 || !t->main_qpn || !t->mr || !t->mr_len)
		return -1;
	if (t->mtu < 256 || t->mtu > 4096 || (t->mtu & (t->mtu - 1))) {
		fprintf(stderr, "hostile_tx: INFO mtu %u is not an IB MTU (256 to 4096)\n",
			t->mtu);
		return -1;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: hostile_tx IFNAME --src-mac M --dst-mac M --src-ip A "
		"--dst-ip B --info \"INFO\" [--count N] [--flood N] [--spoof-ip C] "
		"[--victim-wait-ms N] [--part all|main|rest]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct target t = { 0 };
	struct tx tx = { .fd = -1 };
	unsigned int count = 32, flood = 1000, wait_ms = 300;
	const char *ifname, *part = "all";
	char *info = NULL;
	bool macs = false;
	int i;

	if (argc < 2)
		return usage();
	ifname = argv[1];
	inet_pton(AF_INET, "10.201.254.99", &t.spoof_ip);
	for (i = 2; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		int bad = 0;

		if (!strcmp(k, "--src-mac"))
			bad = parse_mac(v, t.src_mac);
		else if (!strcmp(k, "--dst-mac"))
			macs = !(bad = parse_mac(v, t.dst_mac));
		else if (!strcmp(k, "--src-ip"))
			bad = inet_pton(AF_INET, v, &t.src_ip) != 1;
		else if (!strcmp(k, "--dst-ip"))
			bad = inet_pton(AF_INET, v, &t.dst_ip) != 1;
		else if (!strcmp(k, "--spoof-ip"))
			bad = inet_pton(AF_INET, v, &t.spoof_ip) != 1;
		else if (!strcmp(k, "--info"))
			info = strdup(v);
		else if (!strcmp(k, "--count"))
			count = (unsigned int)atoi(v);
		else if (!strcmp(k, "--flood"))
			flood = (unsigned int)atoi(v);
		else if (!strcmp(k, "--victim-wait-ms"))
			wait_ms = (unsigned int)atoi(v);
		else if (!strcmp(k, "--part"))
			part = v;
		else
			bad = 1;
		if (bad)
			return usage();
	}
	if (i != argc || !info || !macs || !t.src_ip || !t.dst_ip || !count ||
	    (strcmp(part, "all") && strcmp(part, "main") && strcmp(part, "rest")))
		return usage();
	if (parse_info(info, &t)) {
		fprintf(stderr, "hostile_tx: cannot read the INFO line\n");
		return 2;
	}
	free(info);

	tx.fd = socket(AF_PACKET, SOCK_RAW, 0);	/* protocol 0: send only */
	if (tx.fd < 0) {
		fprintf(stderr, "hostile_tx: AF_PACKET socket: %s\n", strerror(errno));
		return 1;
	}
	tx.to.sll_family = AF_PACKET;
	tx.to.sll_ifindex = (int)if_nametoindex(ifname);
	tx.to.sll_halen = ETH_ALEN;
	memcpy(tx.to.sll_addr, t.dst_mac, 6);
	if (!tx.to.sll_ifindex) {
		fprintf(stderr, "hostile_tx: no interface %s\n", ifname);
		return 1;
	}

	if (strcmp(part, "rest")) {
		xdp_kinds(&tx, &t, count);
		flood_unknown(&tx, &t, flood);
		engine_kinds(&tx, &t, count);
		if (t.mtu > 2048)	/* frames larger than one XDP buffer */
			mb_kinds(&tx, &t, count);
		victim_kinds(&tx, &t, count, true, false);
	}
	if (!strcmp(part, "all"))
		pace(wait_ms * 1000);	/* the victims' ERROR comes with their first frame */
	if (strcmp(part, "main"))
		victim_kinds(&tx, &t, count, false, true);
	printf("TOTAL %lu\n", tx.total);
	close(tx.fd);
	if (tx.errors) {
		fprintf(stderr, "hostile_tx: %lu frames could not be sent\n", tx.errors);
		return 1;
	}
	return 0;
}
