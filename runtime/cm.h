/* SPDX-License-Identifier: MIT */
/*
 * The connection manager's internals: the wire layout of blue's own exchange, and the
 * deadline-bounded socket I/O and error reporting that every CM file shares. The public
 * half is the "connection manager" section of include/blue/blue.h.
 *
 * Wire format (version 1), everything in network byte order:
 *
 *   info message, 80 bytes, sent first by both sides:
 *     0  magic "BLCM"   4  version   6  length (80)
 *     8  transport      9  path MTU (enum blue_mtu)   10 flags (BLUE_CM_F_*)
 *    12  QPN           16  PSN        20  IPv4        24  GID (16 bytes)
 *    40  MAC (6)       46  reserved   48  capabilities
 *    52  MR rkey       56  MR address 64  MR length   72  reserved
 *    76  CRC-32 (zlib's) of bytes 0..75
 *
 *   verdict message, 128 bytes, sent by both sides once they have checked the peer's:
 *     0  magic "BLCV"   4  version   6  length (128)
 *     8  status (enum blue_cm_status: 0 accepted)     12 reserved
 *    16  reason: NUL-padded text, from the sender's point of view
 *
 * The first 8 bytes (magic, version, length) and the whole verdict keep their layout in
 * every version, so two versions can still read each other's message in full, and both
 * sides can report "protocol version mismatch" rather than a garbled read.
 */
#ifndef BLUE_RUNTIME_CM_H
#define BLUE_RUNTIME_CM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include <blue/blue.h>

#define BLUE_HIDDEN_CM __attribute__((visibility("hidden")))

#define BLUE_CM_MAGIC		0x424c434du	/* "BLCM" */
#define BLUE_CM_VERDICT_MAGIC	0x424c4356u	/* "BLCV" */
#define BLUE_CM_HDR_LEN		8
#define BLUE_CM_MAX_LEN		4096	/* a longer "message" is not one of ours */
#define BLUE_CM_REASON_LEN	112

/* flags */
#define BLUE_CM_F_MR		0x0001	/* the MR fields are meaningful */

struct blue_cm_wire {
	__be32	magic;
	__be16	version;
	__be16	length;
	__u8	transport;
	__u8	mtu;
	__be16	flags;
	__be32	qpn;
	__be32	psn;
	__be32	ipv4;		/* already network order in blue_cm_info: copied as is */
	__u8	gid[16];
	__u8	mac[6];
	__u8	reserved0[2];
	__be32	caps;
	__be32	rkey;
	__be64	mr_addr;
	__be64	mr_len;
	__be32	reserved1;
	__be32	crc;
};

_Static_assert(sizeof(struct blue_cm_wire) == 80, "blue_cm_wire layout changed");
_Static_assert(offsetof(struct blue_cm_wire, gid) == 24, "blue_cm_wire layout changed");
_Static_assert(offsetof(struct blue_cm_wire, mr_addr) == 56, "blue_cm_wire layout changed");
_Static_assert(offsetof(struct blue_cm_wire, crc) == 76, "blue_cm_wire layout changed");

/* Why a side refused the exchange; the peer maps the code to the same errno. */
enum blue_cm_status {
	BLUE_CM_ACCEPT = 0,
	BLUE_CM_REJ_BAD_MSG = 1,	/* EBADMSG: not ours, truncated, bad checksum/field */
	BLUE_CM_REJ_VERSION = 2,	/* EPROTONOSUPPORT */
	BLUE_CM_REJ_MISMATCH = 3,	/* EPROTO: MTU, transport type */
	BLUE_CM_REJ_TIMEOUT = 4,	/* ETIMEDOUT */
	BLUE_CM_REJ_OTHER = 5,		/* EIO */
	BLUE_CM_REJ_REFUSED = 6,	/* EACCES: the peer claims an address not its own */
	BLUE_CM_REJ_ADDR_IN_USE = 7,	/* EADDRINUSE: its address is in use with another MAC */
	BLUE_CM_REJ_NO_ROOM = 8,	/* ENOSPC: the neighbour table is full */
};

struct blue_cm_verdict_wire {
	__be32	magic;
	__be16	version;
	__be16	length;
	__be32	status;
	__be32	reserved;
	char	reason[BLUE_CM_REASON_LEN];
};

_Static_assert(sizeof(struct blue_cm_verdict_wire) == 128, "blue_cm_verdict_wire layout changed");

/* ---- codec (cm.c) ---- */

/* Encode @info as a version-1 info message with its CRC. */
void blue__cm_encode(const struct blue_cm_info *info, struct blue_cm_wire *w) BLUE_HIDDEN_CM;

/*
 * Decode and check a version-1 message of @len bytes (the header already checked for
 * magic and version). Return: 0, or -EBADMSG with the reason in the CM error.
 */
int blue__cm_decode(const void *buf, size_t len, struct blue_cm_info *info) BLUE_HIDDEN_CM;

/*
 * blue__cm_check_hdr() - the first BLUE_CM_HDR_LEN bytes of a peer's message: blue's
 * magic (or a clear word when it is rc_pingpong's string) and a length in range.
 * Return: 0 with the message length in *@len, or -EBADMSG.
 */
int blue__cm_check_hdr(const uint8_t hdr[BLUE_CM_HDR_LEN], uint16_t *len) BLUE_HIDDEN_CM;

/*
 * blue__cm_parse() - a whole peer message of @len bytes, no I/O: the header, its length
 * against @len, the version, then blue__cm_decode(). What recv_info() runs on what it
 * read, and what the fuzzer feeds. Return: 0, -EBADMSG or -EPROTONOSUPPORT.
 */
int blue__cm_parse(const void *buf, size_t len, struct blue_cm_info *info) BLUE_HIDDEN_CM;

/*
 * blue__cm_verdict_parse() - a peer's verdict of @len bytes, no I/O.
 * Return: 0 when it accepted; otherwise -errno with the peer's reason (made printable)
 * in the CM error.
 */
int blue__cm_verdict_parse(const void *buf, size_t len) BLUE_HIDDEN_CM;

/*
 * Check the peer's @remote against our @local: the fields that must agree.
 * Return: 0, or -EPROTO with "FIELD mismatch: local X, peer Y" in the CM error.
 */
int blue__cm_check(const struct blue_cm_info *local, const struct blue_cm_info *remote)
	BLUE_HIDDEN_CM;

/* ---- whom the CM believes (cm_peer.c) ---- */

/* The IPv4 address (network order) @in claims: its IPv4-mapped GID's, else its IPv4
 * field; 0 for none. The neighbour entry blue_cm_connect_qp() makes is for it. */
uint32_t blue__cm_claimed_ip(const struct blue_cm_info *in) BLUE_HIDDEN_CM;

/* The address @in claims as a GID: the IPv4 one (blue__cm_claimed_ip) IPv4-mapped, else
 * its GID when that is a global IPv6 address (not link-local: no TCP peer has it on
 * another link). false for none. The neighbour entry connect_qp makes is for it. */
bool blue__cm_claimed_gid(const struct blue_cm_info *in, union blue_gid *out) BLUE_HIDDEN_CM;

/*
 * blue__cm_check_peer() - may the peer on @fd claim what @remote claims? Yes when the
 * claimed IPv4 is the TCP peer's address, or BLUE_CM_ALLOW lists the pair; a claimed
 * IPv6 GID must be the TCP peer's IPv6 address (BLUE_CM_ALLOW takes IPv4 claims only);
 * a non-IP socket and a peer claiming nothing pass (nothing is installed for them).
 * Return: 0, -EACCES naming both addresses, -EINVAL for a malformed BLUE_CM_ALLOW
 * (naming the entry), or -errno from getpeername().
 */
int blue__cm_check_peer(int fd, const struct blue_cm_info *remote) BLUE_HIDDEN_CM;

/*
 * blue__cm_allow_match() - does the allow list @list ("CLAIMED[/PREFIX]=PEER,...", NULL
 * for none) hold @claimed (network order) with @peer (IPv4 as IPv4-mapped)?
 * Return: 1, 0, or -EINVAL naming the first malformed entry.
 */
struct in6_addr;
int blue__cm_allow_match(const char *list, uint32_t claimed, const struct in6_addr *peer)
	BLUE_HIDDEN_CM;

/*
 * blue__cm_neigh_check() - could blue_cm_connect_qp() on @ctx hold the neighbour entry
 * @remote asks for (cm_qp.c)? Return: 0, or -EADDRINUSE / -ENOSPC with the CM error set.
 */
struct blue_context;
int blue__cm_neigh_check(const struct blue_context *ctx, const struct blue_cm_info *remote)
	BLUE_HIDDEN_CM;

/* ---- sockets and errors (cm_sock.c) ---- */

/* CLOCK_MONOTONIC deadline @timeout_ms from now, and the ms left until one (>= 0). */
uint64_t blue__cm_deadline(int timeout_ms) BLUE_HIDDEN_CM;
int blue__cm_left_ms(uint64_t deadline) BLUE_HIDDEN_CM;

/*
 * blue__cm_send() - send all @len bytes before @deadline, in one send() when the socket
 * takes it (a small message always does: rc_pingpong's peer reads it with one read()).
 * Return: 0, -ETIMEDOUT, or -errno (EPIPE/ECONNRESET: the peer went away).
 */
int blue__cm_send(int fd, const void *buf, size_t len, uint64_t deadline) BLUE_HIDDEN_CM;

/*
 * blue__cm_recv() - read exactly @len bytes before @deadline.
 * @got: set to the bytes read, also on failure (for the error message).
 * Return: 0, -ETIMEDOUT, -ECONNRESET when the peer closed first, or -errno.
 */
int blue__cm_recv(int fd, void *buf, size_t len, uint64_t deadline, size_t *got)
	BLUE_HIDDEN_CM;

/*
 * blue__cm_fail() - record "@fmt ..." as this thread's CM error (blue_cm_last_error()),
 * log it, and return -@err.
 */
int blue__cm_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)))
	BLUE_HIDDEN_CM;

/* The same without logging: for messages that are relayed, not first-hand. */
void blue__cm_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)))
	BLUE_HIDDEN_CM;

/* Clear this thread's CM error (at the start of each public call). */
void blue__cm_clear_error(void) BLUE_HIDDEN_CM;

/* "Connection timed out while waiting for ...": a recv/send error in words. */
int blue__cm_io_fail(int err, const char *what, size_t got, size_t want, int timeout_ms)
	BLUE_HIDDEN_CM;

/* Names for messages. */
const char *blue__cm_transport_str(unsigned int t) BLUE_HIDDEN_CM;

#endif /* BLUE_RUNTIME_CM_H */
