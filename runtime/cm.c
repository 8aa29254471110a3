// SPDX-License-Identifier: MIT
/*
 * blue's own CM exchange: encode, decode and check the info message (layout in cm.h),
 * and the symmetric exchange with verdicts.
 *
 * Why verdicts: each side checks the peer's message against its own, and most mismatches
 * are seen by both sides alike (each then names the field with its own value as
 * "local"). But some failures are seen by one side only: a message garbled or cut short
 * in one direction, a side that gave up waiting. The verdict tells the other side, so it
 * fails too, with the same errno and the first side's reason, instead of proceeding to
 * connect a QP whose peer never will.
 */
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <zlib.h>

#include "runtime/cm.h"
#include "runtime/device.h"
#include "runtime/log.h"

static uint32_t wire_crc(const struct blue_cm_wire *w)
{
	/* zlib's CRC-32: the same polynomial the ICRC uses, but only as a checksum here */
	return (uint32_t)crc32(0, (const Bytef *)w, offsetof(struct blue_cm_wire, crc));
}

void blue__cm_encode(const struct blue_cm_info *in, struct blue_cm_wire *w)
{
	memset(w, 0, sizeof(*w));
	w->magic = htonl(BLUE_CM_MAGIC);
	w->version = htons(BLUE_CM_VERSION);
	w->length = htons(sizeof(*w));
	w->transport = (uint8_t)in->transport;
	w->mtu = (uint8_t)in->mtu;
	w->flags = htons(in->has_mr ? BLUE_CM_F_MR : 0);
	w->qpn = htonl(in->qpn);
	w->psn = htonl(in->psn);
	w->ipv4 = in->ipv4;
	memcpy(w->gid, in->gid.raw, sizeof(w->gid));
	memcpy(w->mac, in->mac, sizeof(w->mac));
	w->caps = htonl(in->caps);
	if (in->has_mr) {
		w->rkey = htonl(in->mr.rkey);
		w->mr_addr = htobe64(in->mr.addr);
		w->mr_len = htobe64(in->mr.length);
	}
	w->crc = htonl(wire_crc(w));
}


/* Field checks shared by our own info (EINVAL) and the peer's (EBADMSG). */
static int info_check(const struct blue_cm_info *in, int err, const char *who)
{
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	uint32_t gip;

	if (in->qpn < 2 || in->qpn > 0xffffff)
		return blue__cm_fail(err, "%s QPN 0x%x is not a 24-bit QPN above 1", who,
				     in->qpn);
	if (in->psn > 0xffffff)
		return blue__cm_fail(err, "%s PSN 0x%x does not fit 24 bits", who, in->psn);
	if (blue_mtu_bytes(in->mtu) < 0)
		return blue__cm_fail(err, "%s path MTU field %d is not an IB MTU "
				     "(1=256 .. 5=4096)", who, (int)in->mtu);
	if (in->ipv4 && blue__gid_ipv4(&in->gid, &gip) && gip != in->ipv4) {
		inet_ntop(AF_INET, &gip, a, sizeof(a));
		inet_ntop(AF_INET, &in->ipv4, b, sizeof(b));
		return blue__cm_fail(err, "%s GID ::ffff:%s does not match its IPv4 address %s",
				     who, a, b);
	}
	return 0;
}

int blue__cm_decode(const void *buf, size_t len, struct blue_cm_info *out)
{
	struct blue_cm_wire copy, *w = &copy;
	uint32_t crc;

	memset(out, 0, sizeof(*out));
	if (len != sizeof(*w))
		return blue__cm_fail(EBADMSG, "peer message is %zu bytes; version %u has %zu",
				     len, BLUE_CM_VERSION, sizeof(*w));
	memcpy(w, buf, sizeof(*w));	/* @buf need not be aligned */
	crc = wire_crc(w);
	if (crc != ntohl(w->crc))
		return blue__cm_fail(EBADMSG, "peer message failed its checksum (CRC-32 "
				     "0x%08x, carried 0x%08x): garbled on the way", crc,
				     ntohl(w->crc));
	out->transport = (enum blue_qp_type)w->transport;
	out->mtu = (enum blue_mtu)w->mtu;
	out->qpn = ntohl(w->qpn);
	out->psn = ntohl(w->psn);
	out->ipv4 = w->ipv4;
	memcpy(out->gid.raw, w->gid, sizeof(w->gid));
	memcpy(out->mac, w->mac, sizeof(w->mac));
	out->caps = ntohl(w->caps);
	/* unknown flag bits are ignored: a later version may add optional fields */
	if (ntohs(w->flags) & BLUE_CM_F_MR) {
		out->has_mr = 1;
		out->mr.rkey = ntohl(w->rkey);
		out->mr.addr = be64toh(w->mr_addr);
		out->mr.length = be64toh(w->mr_len);
	}
	return info_check(out, EBADMSG, "peer");
}

static void transport_name(unsigned int t, char *buf, size_t len)
{
	const char *s = blue__cm_transport_str(t);

	if (strcmp(s, "unknown"))
		snprintf(buf, len, "%s", s);
	else
		snprintf(buf, len, "unknown (%u)", t);
}

int blue__cm_check(const struct blue_cm_info *local, const struct blue_cm_info *remote)
{
	char a[24], b[24];

	/* the order is the same on both sides, so both name the same field */
	if (local->transport != remote->transport) {
		transport_name(local->transport, a, sizeof(a));
		transport_name(remote->transport, b, sizeof(b));
		return blue__cm_fail(EPROTO, "transport type mismatch: local %s, peer %s", a, b);
	}
	if (local->mtu != remote->mtu)
		return blue__cm_fail(EPROTO, "MTU mismatch: local %d, peer %d",
				     blue_mtu_bytes(local->mtu), blue_mtu_bytes(remote->mtu));
	return 0;
}

/* ---- the exchange --------------------------------------------------------------- */

static enum blue_cm_status status_of(int err)
{
	switch (err) {
	case 0:			return BLUE_CM_ACCEPT;
	case -EBADMSG:		return BLUE_CM_REJ_BAD_MSG;
	case -EPROTONOSUPPORT:	return BLUE_CM_REJ_VERSION;
	case -EPROTO:		return BLUE_CM_REJ_MISMATCH;
	case -ETIMEDOUT:	return BLUE_CM_REJ_TIMEOUT;
	case -EACCES:		return BLUE_CM_REJ_REFUSED;
	case -EADDRINUSE:	return BLUE_CM_REJ_ADDR_IN_USE;
	case -ENOSPC:		return BLUE_CM_REJ_NO_ROOM;
	}
	return BLUE_CM_REJ_OTHER;
}

static int errno_of(uint32_t status)
{
	switch (status) {
	case BLUE_CM_REJ_BAD_MSG:	return EBADMSG;
	case BLUE_CM_REJ_VERSION:	return EPROTONOSUPPORT;
	case BLUE_CM_REJ_MISMATCH:	return EPROTO;
	case BLUE_CM_REJ_TIMEOUT:	return ETIMEDOUT;
	case BLUE_CM_REJ_REFUSED:	return EACCES;
	case BLUE_CM_REJ_ADDR_IN_USE:	return EADDRINUSE;
	case BLUE_CM_REJ_NO_ROOM:	return ENOSPC;
	}
	return EIO;
}

/* Does @hdr start like rc_pingpong's "LLLL:" (four hex digits and a colon)? */
static bool looks_like_pingpong(const uint8_t *hdr)
{
	for (int i = 0; i < 4; i++)
		if (!isxdigit(hdr[i]))
			return false;
	return hdr[4] == ':';
}

int blue__cm_check_hdr(const uint8_t hdr[BLUE_CM_HDR_LEN], uint16_t *len)
{
	uint32_t magic;
	uint16_t n;

	memcpy(&magic, hdr, 4);
	memcpy(&n, hdr + 6, 2);
	magic = ntohl(magic);
	n = ntohs(n);
	if (magic != BLUE_CM_MAGIC && looks_like_pingpong(hdr))
		return blue__cm_fail(EBADMSG, "peer speaks ibv_rc_pingpong's exchange, not "
				     "blue's (its message starts \"%.5s\"): use the pingpong "
				     "mode on this side", (const char *)hdr);
	if (magic != BLUE_CM_MAGIC)
		return blue__cm_fail(EBADMSG, "peer message is not a blue CM message: magic "
				     "0x%08x, expected 0x%08x (\"BLCM\")", magic, BLUE_CM_MAGIC);
	if (n < BLUE_CM_HDR_LEN || n > BLUE_CM_MAX_LEN)
		return blue__cm_fail(EBADMSG, "peer message length %u is out of range (%d..%d)",
				     n, BLUE_CM_HDR_LEN, BLUE_CM_MAX_LEN);
	*len = n;
	return 0;
}

int blue__cm_parse(const void *buf, size_t len, struct blue_cm_info *out)
{
	uint16_t want, version;
	int err;

	memset(out, 0, sizeof(*out));
	if (len < BLUE_CM_HDR_LEN)
		return blue__cm_fail(EBADMSG, "peer message is %zu bytes, shorter than the "
				     "%d-byte header", len, BLUE_CM_HDR_LEN);
	err = blue__cm_check_hdr(buf, &want);
	if (err)
		return err;
	if (want != len)
		return blue__cm_fail(EBADMSG, "peer message is %zu bytes but its header says %u",
				     len, want);
	memcpy(&version, (const uint8_t *)buf + 4, 2);
	version = ntohs(version);
	if (version != BLUE_CM_VERSION)
		return blue__cm_fail(EPROTONOSUPPORT, "protocol version mismatch: local %u, "
				     "peer %u", BLUE_CM_VERSION, version);
	return blue__cm_decode(buf, len, out);
}

/* Read the peer's info message: header first, then as many bytes as it says. */
static int recv_info(int fd, struct blue_cm_info *remote, uint64_t deadline, int timeout_ms)
{
	uint8_t buf[BLUE_CM_MAX_LEN];
	uint16_t len;
	size_t got;
	int err;

	err = blue__cm_recv(fd, buf, BLUE_CM_HDR_LEN, deadline, &got);
	if (err)
		return blue__cm_io_fail(err, "the peer's CM message", got,
					sizeof(struct blue_cm_wire), timeout_ms);
	err = blue__cm_check_hdr(buf, &len);
	if (err)
		return err;
	/* the whole message, even of another version: both sides then read in step */
	err = blue__cm_recv(fd, buf + BLUE_CM_HDR_LEN, len - BLUE_CM_HDR_LEN, deadline, &got);
	if (err)
		return blue__cm_io_fail(err, "the peer's CM message", got + BLUE_CM_HDR_LEN, len,
					timeout_ms);
	return blue__cm_parse(buf, len, remote);
}

static int send_verdict(int fd, int err, uint64_t deadline)
{
	struct blue_cm_verdict_wire v;

	memset(&v, 0, sizeof(v));
	v.magic = htonl(BLUE_CM_VERDICT_MAGIC);
	v.version = htons(BLUE_CM_VERSION);
	v.length = htons(sizeof(v));
	v.status = htonl(status_of(err));
	if (err)
		snprintf(v.reason, sizeof(v.reason), "%s", blue_cm_last_error());
	return blue__cm_send(fd, &v, sizeof(v), deadline);
}

int blue__cm_verdict_parse(const void *buf, size_t len)
{
	struct blue_cm_verdict_wire v;
	char reason[BLUE_CM_REASON_LEN];
	uint32_t status;
	size_t i;

	if (len != sizeof(v))
		return blue__cm_fail(EBADMSG, "peer verdict is %zu bytes; it has %zu", len,
				     sizeof(v));
	memcpy(&v, buf, sizeof(v));	/* @buf need not be aligned */
	if (ntohl(v.magic) != BLUE_CM_VERDICT_MAGIC || ntohs(v.length) != sizeof(v))
		return blue__cm_fail(EBADMSG, "peer verdict is garbled: magic 0x%08x, length %u",
				     ntohl(v.magic), ntohs(v.length));
	status = ntohl(v.status);
	if (status == BLUE_CM_ACCEPT)
		return 0;
	/* the peer's words, kept printable: they end up on our terminal */
	for (i = 0; i < sizeof(reason) - 1 && v.reason[i]; i++)
		reason[i] = isprint((unsigned char)v.reason[i]) ? v.reason[i] : '?';
	reason[i] = 0;
	/* quoted: "local" and "peer" in it are from the peer's point of view */
	return blue__cm_fail(errno_of(status), "the peer rejected the exchange, saying: \"%s\"",
			     reason[0] ? reason : "(no reason given)");
}

static int recv_verdict(int fd, uint64_t deadline, int timeout_ms)
{
	struct blue_cm_verdict_wire v;
	size_t got;
	int err;

	err = blue__cm_recv(fd, &v, sizeof(v), deadline, &got);
	if (err)
		return blue__cm_io_fail(err, "the peer's verdict", got, sizeof(v), timeout_ms);
	return blue__cm_verdict_parse(&v, sizeof(v));
}

/* Both exchanges; with @ctx, the neighbour entry connect_qp will want is checked too. */
static int exchange(const struct blue_context *ctx, int fd, const struct blue_cm_info *local,
		    struct blue_cm_info *remote, int timeout_ms)
{
	struct blue_cm_info tmp;
	struct blue_cm_wire w;
	uint64_t deadline;
	int err, serr;

	blue__cm_clear_error();
	if (fd < 0 || !local || timeout_ms < 0)
		return -blue__cm_fail(EINVAL, "exchange: bad fd %d, no local info, or a "
				      "negative timeout (%d ms)", fd, timeout_ms);
	if (!remote)
		remote = &tmp;
	memset(remote, 0, sizeof(*remote));
	err = info_check(local, EINVAL, "local");
	if (err)
		return -err;
	deadline = blue__cm_deadline(timeout_ms);

	blue__cm_encode(local, &w);
	err = blue__cm_send(fd, &w, sizeof(w), deadline);
	if (err)
		return -blue__cm_io_fail(err, "sending our CM message", 0, sizeof(w), timeout_ms);

	err = recv_info(fd, remote, deadline, timeout_ms);
	if (!err)
		err = blue__cm_check(local, remote);
	if (!err)
		err = blue__cm_check_peer(fd, remote);
	if (!err && ctx)
		err = blue__cm_neigh_check(ctx, remote);
	if (err == -EACCES || err == -EINVAL || err == -EADDRINUSE || err == -ENOSPC)
		memset(remote, 0, sizeof(*remote));	/* a refused peer's claims are not kept */
	/*
	 * Tell the peer either way. After a failure this is best effort (the peer may be
	 * gone), and our own reason stands: we do not wait for the peer's verdict.
	 */
	serr = send_verdict(fd, err, deadline);
	if (err)
		return -err;
	if (serr)
		return -blue__cm_io_fail(serr, "sending our verdict", 0,
					 sizeof(struct blue_cm_verdict_wire), timeout_ms);
	return -recv_verdict(fd, deadline, timeout_ms);
}

int blue_cm_exchange(int fd, const struct blue_cm_info *local, struct blue_cm_info *remote,
		     int timeout_ms)
{
	return exchange(NULL, fd, local, remote, timeout_ms);
}

int blue_cm_exchange_qp(struct blue_context *ctx, int fd, const struct blue_cm_info *local,
			struct blue_cm_info *remote, int timeout_ms)
{
	if (!ctx) {
		blue__cm_clear_error();
		return -blue__cm_fail(EINVAL, "exchange_qp: no context");
	}
	return exchange(ctx, fd, local, remote, timeout_ms);
}
