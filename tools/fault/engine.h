/* SPDX-License-Identifier: MIT */
/*
 * The fault engine of tools/blue_fault: what happens to each frame, decided without any
 * I/O, so the live forwarder (AF_XDP) and the offline replay (--dry-run over a pcap)
 * share every decision.
 *
 * Only RoCEv2 frames (Ethernet [802.1Q] / IPv4 / UDP dport 4791 / BTH) are touched;
 * everything else (ARP, the connection manager's TCP) is forwarded at once, untouched.
 *
 * Replay: each decision about a RoCEv2 frame is a hash of (seed, direction, fault kind,
 * the frame's index among the RoCEv2 frames of its direction) -- a counter-based PRNG
 * rather than one stream -- so turning one fault on or off never shifts the others'
 * choices, and a given input sequence gets the same faults on every run with the same
 * seed, whatever the timing. (Live traffic itself depends on timing and on the faults,
 * through retransmissions and ACK coalescing, so only a fixed traffic pattern or a pcap
 * replays exactly.)
 *
 * Per frame, in this order:
 *   1. targeted drop: opcode set and/or PSN ranges, optionally only the first N
 *      matches (so the retransmission gets through), optionally at a rate;
 *   2. random loss;
 *   3. single-bit corruption (BTH and extended headers except BTH byte 4, which the
 *      ICRC masks, or payload+pad+ICRC; either way the receiver's ICRC check fails);
 *   4. ECN CE marking (IP ECN = 11, IP checksum fixed; the ICRC masks the TOS byte);
 *   5. duplication (the copy follows the original back to back);
 *   6. reordering: the frame is held back until K in [1, window] later RoCEv2 frames of
 *      its direction have gone by, or a timeout passes if traffic stops;
 *   7. delay: held for a fixed time (all frames, or a fraction of them, which then
 *      also overtake each other).
 *
 * Header-only: the Makefile links each tools/ source file into its own binary, and this has a
 * single user. Threading: one thread.
 */
#ifndef BLUE_TOOLS_FAULT_ENGINE_H
#define BLUE_TOOLS_FAULT_ENGINE_H

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <blue/wire.h>

enum fault_dir { FAULT_A2B, FAULT_B2A, FAULT_NDIR };

static const char *const fault_dir_name[FAULT_NDIR] = { "a2b", "b2a" };

/* Counters, per direction. The names are the keys of the stats file. */
enum fault_ctr {
	FC_RX,		/* frames in */
	FC_NON_ROCE,	/* forwarded at once, untouched: not RoCEv2 */
	FC_ROCE,	/* RoCEv2 frames in */
	FC_TX,		/* frames out (a duplicated frame counts twice) */
	FC_DROP_MATCH,	/* targeted drops */
	FC_DROP_RANDOM,	/* random loss */
	FC_CORRUPT,
	FC_ECN,		/* CE marks set (a frame already CE is not counted) */
	FC_DUP,
	FC_REORDER,	/* frames held back */
	FC_DELAY,
	FC_OVERFLOW,	/* lost for want of a buffer: hold pool or TX ring full */
	FC_MAX,
};

static const char *const fault_ctr_name[FC_MAX] = {
	"rx", "non_roce", "roce", "tx", "drop_match", "drop_random", "corrupt", "ecn",
	"dup", "reorder", "delay", "overflow",
};

enum fault_where { FAULT_WHERE_ANY, FAULT_WHERE_HEADER, FAULT_WHERE_PAYLOAD };

#define FAULT_MAX_PSN_RANGES	64
#define FAULT_MAX_FRAME		4096	/* a UMEM frame; more than any veth MTU with XDP */
#define FAULT_MAX_HELD		256	/* frames held for reordering, per direction */

struct fault_psn_range {
	uint32_t lo, hi;	/* inclusive, 24-bit; lo > hi wraps */
};

struct fault_cfg {
	uint64_t seed;
	unsigned int dir_mask;		/* 1u << enum fault_dir: where faults apply */
	double loss;
	bool drop_op[256];		/* targeted drop: these opcodes ... */
	bool have_drop_op;
	struct fault_psn_range drop_psn[FAULT_MAX_PSN_RANGES];	/* ... and these PSNs */
	unsigned int n_drop_psn;
	uint64_t drop_first;		/* drop only the first N matches; 0 = all */
	double drop_rate;		/* chance a match is dropped */
	double dup;
	double reorder;
	uint32_t reorder_window;	/* >= 1 */
	uint64_t reorder_timeout_ns;
	double corrupt;
	enum fault_where corrupt_where;
	double ecn;
	uint64_t delay_ns;
	double delay_rate;
};

static inline void fault_cfg_default(struct fault_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->dir_mask = (1u << FAULT_A2B) | (1u << FAULT_B2A);
	c->drop_rate = 1.0;
	c->reorder_window = 8;
	c->reorder_timeout_ns = 1000000;	/* 1 ms: far below the 67 ms ACK timeout */
	c->delay_rate = 1.0;
}

/* A frame the engine holds (reordering or delay): a copy, off the I/O layer's rings. */
struct fault_pkt {
	struct fault_pkt *next;
	uint64_t idx;		/* RoCEv2 index in its direction: the PRNG counter */
	uint64_t due_ns;	/* delay: when to send; reorder: the timeout */
	uint64_t release_after;	/* reorder: when this many frames have passed */
	uint32_t len;
	uint8_t copies;
	uint8_t data[FAULT_MAX_FRAME];
};

struct fault_queue {
	struct fault_pkt *head, *tail;
	uint32_t n;
};

/*
 * Send one frame out of @d's egress. Returns 0, or -ENOBUFS when the TX side has no
 * room (the frame is then lost and counted as overflow).
 */
typedef int (*fault_emit_fn)(void *arg, enum fault_dir d, const uint8_t *data, uint32_t len);

struct fault_dir_state {
	uint64_t ctr[FC_MAX];
	uint64_t op[256];		/* RoCEv2 frames in, by BTH opcode */
	uint64_t passed;		/* RoCEv2 frames past the reorder stage */
	struct fault_queue held;	/* reordering, in hold order */
	struct fault_queue delayed;	/* delay line, in due order */
};

struct fault_engine {
	struct fault_cfg cfg;
	struct fault_dir_state dir[FAULT_NDIR];
	uint64_t matches_dropped;	/* for drop_first, over both directions */
	struct fault_pkt *pool;		/* all held buffers */
	struct fault_pkt *free_list;
	fault_emit_fn emit;
	void *emit_arg;
	FILE *log;			/* one line per fault, or NULL */
};

/* Decision streams: one per fault kind, so they are independent of each other. */
enum fault_stream {
	FS_MATCH = 1, FS_LOSS, FS_CORRUPT, FS_CORRUPT_BIT, FS_ECN, FS_DUP, FS_REORDER,
	FS_REORDER_K, FS_DELAY,
};

/* splitmix64's finaliser: a bijective 64-bit mix with full avalanche. */
static inline uint64_t fault_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static inline uint64_t fault_rand(const struct fault_engine *e, enum fault_dir d,
				  enum fault_stream s, uint64_t idx)
{
	uint64_t k = fault_mix(e->cfg.seed + 0x9e3779b97f4a7c15ull * ((uint64_t)s << 8 | d));

	return fault_mix(k ^ fault_mix(idx + 0x632be59bd9b4e019ull));
}

/* True with probability @p, from 53 bits of @r. */
static inline bool fault_chance(double p, uint64_t r)
{
	if (p <= 0.0)
		return false;
	if (p >= 1.0)
		return true;
	return (double)(r >> 11) * 0x1p-53 < p;
}

/* --- RoCEv2 classification ----------------------------------------------------- */

struct fault_roce {
	uint32_t l3;		/* IPv4 header */
	uint32_t ihl;		/* bytes */
	uint32_t bth;		/* BTH offset */
	uint32_t hdr_len;	/* BTH + extended headers the opcode carries */
	uint32_t end;		/* end of the IP packet: the ICRC's last byte + 1 */
	uint8_t opcode;
	uint32_t psn;
};

/* Is this a RoCEv2 frame whose BTH and ICRC are inside the IP packet? */
static inline bool fault_classify(const uint8_t *f, uint32_t len, struct fault_roce *r)
{
	uint32_t l3 = BLUE_ETH_HLEN, tot, l4, flags;

	if (len < BLUE_ETH_HLEN)
		return false;
	if (f[12] == 0x81 && f[13] == 0x00) {
		l3 += BLUE_VLAN_HLEN;
		if (len < l3)
			return false;
	}
	if (f[l3 - 2] != 0x08 || f[l3 - 1] != 0x00 || len < l3 + BLUE_IPV4_MIN_HLEN)
		return false;
	if ((f[l3] >> 4) != 4 || (f[l3] & 0xf) < 5 || f[l3 + 9] != 17)
		return false;
	r->ihl = (f[l3] & 0xfu) * 4;
	tot = (uint32_t)f[l3 + 2] << 8 | f[l3 + 3];
	l4 = l3 + r->ihl;
	/* the IP total length bounds the packet: Ethernet padding is not covered */
	if (tot > len - l3 || tot < r->ihl + BLUE_UDP_HLEN + sizeof(struct blue_bth) +
				    BLUE_ICRC_LEN)
		return false;
	if (((uint32_t)f[l4 + 2] << 8 | f[l4 + 3]) != BLUE_ROCEV2_UDP_PORT)
		return false;
	r->l3 = l3;
	r->bth = l4 + BLUE_UDP_HLEN;
	r->end = l3 + tot;
	r->opcode = f[r->bth];
	r->psn = ((uint32_t)f[r->bth + 9] << 16 | (uint32_t)f[r->bth + 10] << 8 |
		  f[r->bth + 11]) & BLUE_PSN_MASK;
	flags = blue_opcode_flags(r->opcode);
	r->hdr_len = flags ? blue_opcode_hdr_len(flags) : sizeof(struct blue_bth);
	if (r->bth + r->hdr_len > r->end - BLUE_ICRC_LEN)
		r->hdr_len = r->end - BLUE_ICRC_LEN - r->bth;
	return true;
}

/* --- packet surgery ------------------------------------------------------------ */

static inline void fault_ip_csum_fix(uint8_t *ip, uint32_t ihl)
{
	uint32_t s = 0, i;

	ip[10] = ip[11] = 0;
	for (i = 0; i < ihl; i += 2)
		s += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	s = ~s & 0xffff;
	ip[10] = (uint8_t)(s >> 8);
	ip[11] = (uint8_t)s;
}

/*
 * Flip one bit chosen by @r, in bytes the ICRC covers (IBA annex A17.3.3), so the
 * receiver must see a bad ICRC: the header region is the BTH and extended headers
 * without BTH byte 4 (FECN/BECN/reserved, masked); the payload region runs from the
 * end of the headers through the ICRC itself, so an ACK has one too. Returns the
 * byte offset in the frame; *bit gets the bit.
 */
static inline uint32_t fault_flip_bit(uint8_t *f, const struct fault_roce *r,
				      enum fault_where where, uint64_t rnd, unsigned int *bit)
{
	uint32_t hdr_bytes = r->hdr_len - 1;	/* without BTH byte 4 */
	uint32_t pay_bytes = r->end - (r->bth + r->hdr_len);
	uint64_t nbits, b;
	uint32_t off;

	if (where == FAULT_WHERE_HEADER)
		pay_bytes = 0;
	else if (where == FAULT_WHERE_PAYLOAD)
		hdr_bytes = 0;
	nbits = 8ull * (hdr_bytes + pay_bytes);
	b = rnd % nbits;	/* nbits > 0: classify guarantees BTH and ICRC */
	off = (uint32_t)(b / 8);
	if (off < hdr_bytes)
		off = r->bth + (off < 4 ? off : off + 1);
	else
		off = r->bth + r->hdr_len + (off - hdr_bytes);
	*bit = (unsigned int)(b % 8);
	f[off] ^= (uint8_t)(1u << *bit);
	return off;
}

/* --- queues and the hold pool -------------------------------------------------- */

static inline void fq_push(struct fault_queue *q, struct fault_pkt *p)
{
	p->next = NULL;
	if (q->tail)
		q->tail->next = p;
	else
		q->head = p;
	q->tail = p;
	q->n++;
}

static inline struct fault_pkt *fq_pop(struct fault_queue *q)
{
	struct fault_pkt *p = q->head;

	if (p) {
		q->head = p->next;
		if (!q->head)
			q->tail = NULL;
		q->n--;
	}
	return p;
}

/* Unlink @p, whose predecessor is @prev (NULL: the head). */
static inline void fq_unlink(struct fault_queue *q, struct fault_pkt *prev, struct fault_pkt *p)
{
	if (prev)
		prev->next = p->next;
	else
		q->head = p->next;
	if (q->tail == p)
		q->tail = prev;
	q->n--;
}

static inline struct fault_pkt *fault_pkt_get(struct fault_engine *e, const uint8_t *data,
					      uint32_t len, uint64_t idx, uint8_t copies)
{
	struct fault_pkt *p = e->free_list;

	if (!p || len > FAULT_MAX_FRAME)
		return NULL;
	e->free_list = p->next;
	memcpy(p->data, data, len);
	p->len = len;
	p->idx = idx;
	p->copies = copies;
	return p;
}

static inline void fault_pkt_put(struct fault_engine *e, struct fault_pkt *p)
{
	p->next = e->free_list;
	e->free_list = p;
}

/* --- the engine ---------------------------------------------------------------- */

static inline int fault_engine_init(struct fault_engine *e, const struct fault_cfg *cfg,
				    uint32_t pool_size, fault_emit_fn emit, void *arg)
{
	uint32_t i;

	memset(e, 0, sizeof(*e));
	e->cfg = *cfg;
	if (!e->cfg.reorder_window)
		e->cfg.reorder_window = 1;
	e->pool = calloc(pool_size, sizeof(*e->pool));
	if (!e->pool)
		return -ENOMEM;
	for (i = pool_size; i-- > 0;)
		fault_pkt_put(e, &e->pool[i]);
	e->emit = emit;
	e->emit_arg = arg;
	return 0;
}

static inline void fault_engine_fini(struct fault_engine *e)
{
	free(e->pool);
	e->pool = NULL;
	e->free_list = NULL;
}

static inline void fault_emit(struct fault_engine *e, enum fault_dir d, const uint8_t *data,
			      uint32_t len, unsigned int copies)
{
	while (copies--) {
		if (e->emit(e->emit_arg, d, data, len))
			e->dir[d].ctr[FC_OVERFLOW]++;
		else
			e->dir[d].ctr[FC_TX]++;
	}
}

static inline void fault_log(struct fault_engine *e, enum fault_dir d, uint64_t idx,
			     const struct fault_roce *r, const char *what, const char *detail)
{
	if (e->log)
		fprintf(e->log, "%s %" PRIu64 " op 0x%02x psn %u %s%s%s\n", fault_dir_name[d], idx,
			r->opcode, r->psn, what, *detail ? " " : "", detail);
}

/*
 * The delay stage: a frame that left the reorder stage goes out now or into the delay
 * line. @p is the held copy, or NULL when @data still sits in the caller's buffer.
 */
static inline void fault_stage_delay(struct fault_engine *e, enum fault_dir d,
				     struct fault_pkt *p, const uint8_t *data, uint32_t len,
				     uint64_t idx, uint8_t copies, uint64_t now)
{
	struct fault_dir_state *st = &e->dir[d];

	if (e->cfg.delay_ns && fault_chance(e->cfg.delay_rate,
					    fault_rand(e, d, FS_DELAY, idx))) {
		if (!p)
			p = fault_pkt_get(e, data, len, idx, copies);
		if (!p) {
			st->ctr[FC_OVERFLOW] += copies;
			return;
		}
		p->due_ns = now + e->cfg.delay_ns;
		fq_push(&st->delayed, p);
		st->ctr[FC_DELAY]++;
		return;
	}
	if (p) {
		fault_emit(e, d, p->data, p->len, p->copies);
		fault_pkt_put(e, p);
	} else {
		fault_emit(e, d, data, len, copies);
	}
}

/*
 * Held frames whose K later frames have passed (or whose timeout is up, when @now is
 * past it) go on, oldest hold first.
 */
static inline void fault_release_held(struct fault_engine *e, enum fault_dir d, uint64_t now)
{
	struct fault_dir_state *st = &e->dir[d];
	struct fault_pkt *prev = NULL, *p = st->held.head, *next;

	while (p) {
		next = p->next;
		if (p->release_after <= st->passed || p->due_ns <= now) {
			fq_unlink(&st->held, prev, p);
			fault_stage_delay(e, d, p, NULL, 0, p->idx, p->copies, now);
		} else {
			prev = p;
		}
		p = next;
	}
}

/**
 * fault_input() - one frame arrived for direction @d at time @now (ns).
 * @data is writable and only borrowed: corruption and ECN are applied in place, and
 * anything held is copied.
 */
static inline void fault_input(struct fault_engine *e, enum fault_dir d, uint8_t *data,
			       uint32_t len, uint64_t now)
{
	const struct fault_cfg *c = &e->cfg;
	struct fault_dir_state *st = &e->dir[d];
	struct fault_roce r;
	struct fault_pkt *p;
	uint8_t copies = 1;
	uint64_t idx;
	char detail[64];

	st->ctr[FC_RX]++;
	if (!fault_classify(data, len, &r)) {
		st->ctr[FC_NON_ROCE]++;
		fault_emit(e, d, data, len, 1);
		return;
	}
	idx = st->ctr[FC_ROCE]++;
	st->op[r.opcode]++;
	if (!(c->dir_mask & (1u << d))) {
		fault_emit(e, d, data, len, 1);
		return;
	}

	if (c->have_drop_op || c->n_drop_psn) {
		bool match = !c->have_drop_op || c->drop_op[r.opcode];
		unsigned int i;

		if (match && c->n_drop_psn) {
			match = false;
			for (i = 0; i < c->n_drop_psn && !match; i++) {
				const struct fault_psn_range *pr = &c->drop_psn[i];

				match = pr->lo <= pr->hi ? r.psn >= pr->lo && r.psn <= pr->hi
							 : r.psn >= pr->lo || r.psn <= pr->hi;
			}
		}
		if (match && (!c->drop_first || e->matches_dropped < c->drop_first) &&
		    fault_chance(c->drop_rate, fault_rand(e, d, FS_MATCH, idx))) {
			e->matches_dropped++;
			st->ctr[FC_DROP_MATCH]++;
			fault_log(e, d, idx, &r, "drop_match", "");
			return;
		}
	}
	if (fault_chance(c->loss, fault_rand(e, d, FS_LOSS, idx))) {
		st->ctr[FC_DROP_RANDOM]++;
		fault_log(e, d, idx, &r, "drop_random", "");
		return;
	}
	if (fault_chance(c->corrupt, fault_rand(e, d, FS_CORRUPT, idx))) {
		unsigned int bit;
		uint32_t off = fault_flip_bit(data, &r, c->corrupt_where,
					      fault_rand(e, d, FS_CORRUPT_BIT, idx), &bit);

		st->ctr[FC_CORRUPT]++;
		snprintf(detail, sizeof(detail), "byte %u bit %u", off, bit);
		fault_log(e, d, idx, &r, "corrupt", detail);
	}
	if (fault_chance(c->ecn, fault_rand(e, d, FS_ECN, idx)) && (data[r.l3 + 1] & 3) != 3) {
		/* CE = 11 (RFC 3168); the ICRC masks TOS, the IP checksum does not */
		data[r.l3 + 1] |= 3;
		fault_ip_csum_fix(data + r.l3, r.ihl);
		st->ctr[FC_ECN]++;
		fault_log(e, d, idx, &r, "ecn", "");
	}
	if (fault_chance(c->dup, fault_rand(e, d, FS_DUP, idx))) {
		copies = 2;
		st->ctr[FC_DUP]++;
		fault_log(e, d, idx, &r, "dup", "");
	}
	if (fault_chance(c->reorder, fault_rand(e, d, FS_REORDER, idx)) &&
	    st->held.n < FAULT_MAX_HELD) {
		uint64_t k = 1 + fault_rand(e, d, FS_REORDER_K, idx) % c->reorder_window;

		p = fault_pkt_get(e, data, len, idx, copies);
		if (!p) {
			st->ctr[FC_OVERFLOW] += copies;
			return;
		}
		p->release_after = st->passed + k;
		p->due_ns = now + c->reorder_timeout_ns;
		fq_push(&st->held, p);
		st->ctr[FC_REORDER]++;
		snprintf(detail, sizeof(detail), "after %" PRIu64, k);
		fault_log(e, d, idx, &r, "reorder", detail);
		return;
	}
	fault_stage_delay(e, d, NULL, data, len, idx, copies, now);
	st->passed++;
	if (st->held.n)
		fault_release_held(e, d, now);
}

/**
 * fault_tick() - send what is due at @now: held frames whose timeout passed, then the
 * delay line. Returns the next time something falls due, or UINT64_MAX.
 */
static inline uint64_t fault_tick(struct fault_engine *e, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	unsigned int d;

	for (d = 0; d < FAULT_NDIR; d++) {
		struct fault_dir_state *st = &e->dir[d];
		struct fault_pkt *p;

		if (st->held.n)
			fault_release_held(e, (enum fault_dir)d, now);
		while (st->delayed.head && st->delayed.head->due_ns <= now) {
			p = fq_pop(&st->delayed);
			fault_emit(e, (enum fault_dir)d, p->data, p->len, p->copies);
			fault_pkt_put(e, p);
		}
		for (p = st->held.head; p; p = p->next)
			if (p->due_ns < next)
				next = p->due_ns;
		if (st->delayed.head && st->delayed.head->due_ns < next)
			next = st->delayed.head->due_ns;
	}
	return next;
}

/* Send everything still held, as if its time had come (end of input, or exit). */
static inline void fault_flush(struct fault_engine *e)
{
	unsigned int d;
	struct fault_pkt *p;

	for (d = 0; d < FAULT_NDIR; d++) {
		struct fault_dir_state *st = &e->dir[d];

		while ((p = fq_pop(&st->held)))
			fault_stage_delay(e, (enum fault_dir)d, p, NULL, 0, p->idx, p->copies, 0);
		while ((p = fq_pop(&st->delayed))) {
			fault_emit(e, (enum fault_dir)d, p->data, p->len, p->copies);
			fault_pkt_put(e, p);
		}
	}
}

#endif /* BLUE_TOOLS_FAULT_ENGINE_H */
