// SPDX-License-Identifier: MIT
/*
 * Compatibility with rdma-core's ibv_rc_pingpong exchange (libibverbs/examples/
 * rc_pingpong.c and pingpong.c, rdma-core 44), so blue programs talk to stock tools:
 *
 *  - the message is sprintf("%04x:%06x:%06x:%s", lid, qpn, psn, wire_gid) sent with
 *    its NUL: sizeof "0000:000000:000000:" + 32 hex digits + 1 = 52 bytes, every time;
 *  - the wire GID is the 16 GID bytes in memory order as 32 lowercase hex digits
 *    (pingpong.c prints each 32-bit word with %08x after htonl());
 *  - the client connects, writes its 52 bytes, reads the server's 52, writes "done"
 *    with its NUL (5 bytes) and closes;
 *  - the server accepts, reads 52 bytes in ONE read() (so ours go in one send), moves
 *    its QP to RTR/RTS before it answers (so the client's first SEND finds it ready),
 *    writes its 52 bytes and reads up to 52 expecting exactly 5 ("done\0") — rdma-core
 *    44's ibv_rc_pingpong compares that read with sizeof "done".
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cm.h"

static const char pp_done[] = "done";	/* sent with its NUL: 5 bytes */

void blue_cm_gid_to_str(const union blue_gid *gid, char str[BLUE_CM_GID_STR_LEN])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++) {
		str[2 * i] = hex[gid->raw[i] >> 4];
		str[2 * i + 1] = hex[gid->raw[i] & 0xf];
	}
	str[32] = 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int blue_cm_str_to_gid(const char *str, union blue_gid *gid)
{
	int hi, lo;

	if (!str || !gid)
		return EINVAL;
	for (int i = 0; i < 16; i++) {
		hi = hexval((unsigned char)str[2 * i]);
		lo = hi < 0 ? -1 : hexval((unsigned char)str[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return EINVAL;
		gid->raw[i] = (uint8_t)(hi << 4 | lo);
	}
	return str[32] ? EINVAL : 0;
}

int blue_cm_pp_format(const struct blue_cm_info *info, char msg[BLUE_CM_PP_MSG_LEN])
{
	char gid[BLUE_CM_GID_STR_LEN];

	if (!info || !msg)
		return EINVAL;
	if (info->qpn > 0xffffff || info->psn > 0xffffff)
		return -blue__cm_fail(EINVAL, "pingpong: QPN 0x%x or PSN 0x%x does not fit "
				      "24 bits", info->qpn, info->psn);
	blue_cm_gid_to_str(&info->gid, gid);
	memset(msg, 0, BLUE_CM_PP_MSG_LEN);
	/* RoCE has no LIDs: an Ethernet port's LID is 0, and rxe sends 0000 too */
	snprintf(msg, BLUE_CM_PP_MSG_LEN, "%04x:%06x:%06x:%s", 0u, info->qpn, info->psn, gid);
	return 0;
}

/* @n hex digits at @s into *@v; Return: the offset of the first bad byte, or -1. */
static int hexfield(const char *s, int off, int n, uint32_t *v)
{
	int d;

	*v = 0;
	for (int i = off; i < off + n; i++) {
		d = hexval((unsigned char)s[i]);
		if (d < 0)
			return i;
		*v = *v << 4 | (uint32_t)d;
	}
	return -1;
}

int blue_cm_pp_parse(const char *msg, size_t len, struct blue_cm_info *info)
{
	/* field offsets in "LLLL:QQQQQQ:PPPPPP:GGGG...(32)\0" */
	static const int colon[3] = { 4, 11, 18 };
	uint32_t lid, v;
	int bad = -1;

	if (!msg || !info)
		return EINVAL;
	memset(info, 0, sizeof(*info));
	if (len != BLUE_CM_PP_MSG_LEN)
		return -blue__cm_fail(EBADMSG, "pingpong message is %zu bytes; ibv_rc_pingpong "
				      "sends %d", len, BLUE_CM_PP_MSG_LEN);
	for (int i = 0; i < 3 && bad < 0; i++)
		if (msg[colon[i]] != ':')
			bad = colon[i];
	if (bad < 0)
		bad = hexfield(msg, 0, 4, &lid);
	if (bad < 0)
		bad = hexfield(msg, 5, 6, &info->qpn);
	if (bad < 0)
		bad = hexfield(msg, 12, 6, &info->psn);
	for (int i = 19; i < 51 && bad < 0; i++)
		if (hexval((unsigned char)msg[i]) < 0)
			bad = i;
	if (bad < 0 && msg[51] != 0)
		bad = 51;
	if (bad >= 0)
		return -blue__cm_fail(EBADMSG, "pingpong message is malformed at byte %d "
				      "(0x%02x); expected \"LLLL:QQQQQQ:PPPPPP:\" and 32 hex "
				      "digits of GID", bad, (unsigned char)msg[bad]);
	if (lid)
		return -blue__cm_fail(EBADMSG, "pingpong peer has LID 0x%04x: it is on an "
				      "InfiniBand fabric, which RoCEv2 cannot reach", lid);
	blue_cm_str_to_gid(msg + 19, &info->gid);
	/* the IPv4 address, when the GID is IPv4-mapped (::ffff:a.b.c.d) */
	v = 0;
	for (int i = 0; i < 10; i++)
		v |= info->gid.raw[i];
	if (!v && info->gid.raw[10] == 0xff && info->gid.raw[11] == 0xff)
		memcpy(&info->ipv4, info->gid.raw + 12, 4);
	info->transport = BLUE_QPT_RC;
	return 0;
}

/* blue__cm_check_peer() for the pingpong exchange: a positive errno, nothing kept. */
static int refuse_spoof(int fd, struct blue_cm_info *remote)
{
	int err = blue__cm_check_peer(fd, remote);

	if (err)
		memset(remote, 0, sizeof(*remote));
	return -err;
}

int blue_cm_pp_client(int fd, const struct blue_cm_info *local, struct blue_cm_info *remote,
		      int timeout_ms)
{
	char msg[BLUE_CM_PP_MSG_LEN];
	uint64_t deadline;
	size_t got;
	int err;

	blue__cm_clear_error();
	if (fd < 0 || !local || !remote || timeout_ms < 0)
		return -blue__cm_fail(EINVAL, "pingpong client: bad arguments");
	err = blue_cm_pp_format(local, msg);
	if (err)
		return err;
	deadline = blue__cm_deadline(timeout_ms);
	err = blue__cm_send(fd, msg, sizeof(msg), deadline);
	if (err)
		return -blue__cm_io_fail(err, "sending our pingpong message", 0, sizeof(msg),
					 timeout_ms);
	err = blue__cm_recv(fd, msg, sizeof(msg), deadline, &got);
	if (err)
		return -blue__cm_io_fail(err, "the server's pingpong message", got, sizeof(msg),
					 timeout_ms);
	/* a message we cannot use gets no "done": the server then fails as well */
	err = blue_cm_pp_parse(msg, sizeof(msg), remote);
	if (!err)
		err = refuse_spoof(fd, remote);
	if (err)
		return err;
	err = blue__cm_send(fd, pp_done, sizeof(pp_done), deadline);
	if (err)
		return -blue__cm_io_fail(err, "sending \"done\"", 0, sizeof(pp_done),
					 timeout_ms);
	return 0;
}

int blue_cm_pp_server(int fd, const struct blue_cm_info *local, struct blue_cm_info *remote,
		      int (*on_remote)(const struct blue_cm_info *remote, void *arg), void *arg,
		      int timeout_ms)
{
	char msg[BLUE_CM_PP_MSG_LEN], done[sizeof(pp_done)];
	uint64_t deadline;
	size_t got;
	int err;

	blue__cm_clear_error();
	if (fd < 0 || !local || !remote || timeout_ms < 0)
		return -blue__cm_fail(EINVAL, "pingpong server: bad arguments");
	deadline = blue__cm_deadline(timeout_ms);
	err = blue__cm_recv(fd, msg, sizeof(msg), deadline, &got);
	if (err)
		return -blue__cm_io_fail(err, "the client's pingpong message", got, sizeof(msg),
					 timeout_ms);
	err = blue_cm_pp_parse(msg, sizeof(msg), remote);
	if (!err)
		err = refuse_spoof(fd, remote);
	if (err)
		return err;	/* closing unanswered is all rc_pingpong's exchange can say */
	if (on_remote) {
		err = on_remote(remote, arg);
		if (err)
			return -blue__cm_fail(err, "pingpong server: connecting to the client's "
					      "QP 0x%06x failed: %s", remote->qpn,
					      strerror(err));
	}
	err = blue_cm_pp_format(local, msg);
	if (err)
		return err;
	err = blue__cm_send(fd, msg, sizeof(msg), deadline);
	if (err)
		return -blue__cm_io_fail(err, "sending our pingpong message", 0, sizeof(msg),
					 timeout_ms);
	err = blue__cm_recv(fd, done, sizeof(done), deadline, &got);
	if (err)
		return -blue__cm_io_fail(err, "the client's \"done\"", got, sizeof(done),
					 timeout_ms);
	if (memcmp(done, pp_done, sizeof(pp_done)))
		return -blue__cm_fail(EBADMSG, "pingpong client sent %02x %02x %02x %02x %02x "
				      "instead of \"done\" and its NUL",
				      (unsigned char)done[0], (unsigned char)done[1],
				      (unsigned char)done[2], (unsigned char)done[3],
				      (unsigned char)done[4]);
	return 0;
}
