// SPDX-License-Identifier: MIT
/*
 * Whom the CM believes. blue_cm_connect_qp() installs the MAC a peer sends as the static
 * neighbour for the IPv4 address its GID claims, so a peer that could claim any address
 * could redirect this host's RoCE traffic for that address to itself. So the claimed
 * address must be the one the peer's TCP connection comes from, which the kernel's TCP
 * handshake vouches for.
 *
 * A multi-homed peer whose CM connection leaves from another address than its RoCE one
 * is listed in the environment variable BLUE_CM_ALLOW:
 *
 *   BLUE_CM_ALLOW="CLAIMED[/PREFIX]=TCP_PEER[,...]"
 *   e.g. BLUE_CM_ALLOW="10.0.1.2=10.0.0.2,10.9.0.0/16=fd00::7"
 *
 * CLAIMED is the IPv4 address the GID claims (a prefix covers a subnet of them), TCP_PEER
 * the IPv4 or IPv6 address the connection comes from. A malformed list refuses every
 * peer it would be consulted for, naming the entry, rather than guessing.
 *
 * A Unix-domain socket (a socketpair a program made for itself) has no peer address to
 * compare: the check applies to IP sockets, which blue_cm_listen/connect make.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "runtime/cm.h"
#include "runtime/device.h"

#define ALLOW_ENV	"BLUE_CM_ALLOW"
#define ALLOW_TOKEN_MAX	96	/* "a.b.c.d/nn=" and the longest IPv6 text fit */

/* A global IPv6 GID: the QP's address vector talks IPv6, and that is the claim. */
static bool gid_global6(const union blue_gid *g)
{
	static const uint8_t zero[16];
	uint32_t ip;

	return memcmp(g->raw, zero, 16) && !blue__gid_ipv4(g, &ip) &&
	       !(g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80);
}

uint32_t blue__cm_claimed_ip(const struct blue_cm_info *in)
{
	uint32_t ip;

	/* the GID is what the QP's address vector uses; the IPv4 field agrees with it */
	if (blue__gid_ipv4(&in->gid, &ip))
		return ip;
	return gid_global6(&in->gid) ? 0 : in->ipv4;
}

bool blue__cm_claimed_gid(const struct blue_cm_info *in, union blue_gid *out)
{
	uint32_t ip = blue__cm_claimed_ip(in);

	if (ip) {
		blue__gid_from_ipv4(out, ip);
		return true;
	}
	if (!gid_global6(&in->gid))
		return false;
	*out = in->gid;
	return true;
}

/* @ip (network order) as an IPv4-mapped IPv6 address, the form peers are compared in. */
static void mapped(uint32_t ip, struct in6_addr *out)
{
	memset(out, 0, sizeof(*out));
	out->s6_addr[10] = 0xff;
	out->s6_addr[11] = 0xff;
	memcpy(out->s6_addr + 12, &ip, 4);
}

/* "a.b.c.d[/n]" into @net and @mask (network order); false if it is not one. */
static bool parse_claimed(char *s, uint32_t *net, uint32_t *mask)
{
	char *slash = strchr(s, '/'), *end;
	struct in_addr a;
	long bits = 32;

	if (slash) {
		*slash = 0;
		if (!isdigit((unsigned char)slash[1]))	/* strtol would take " 8" or "+8" */
			return false;
		bits = strtol(slash + 1, &end, 10);
		if (*end || bits > 32)
			return false;
	}
	if (inet_pton(AF_INET, s, &a) != 1)
		return false;
	*mask = bits ? htonl(~0u << (32 - bits)) : 0;
	*net = a.s_addr & *mask;
	return true;
}

/* An IPv4 or IPv6 address into the compared form; false if it is neither. */
static bool parse_peer(const char *s, struct in6_addr *out)
{
	struct in_addr a4;

	if (inet_pton(AF_INET, s, &a4) == 1) {
		mapped(a4.s_addr, out);
		return true;
	}
	return inet_pton(AF_INET6, s, out) == 1;
}

/* Copy @s[0..@n) without surrounding blanks into @buf; false if it does not fit. */
static bool token(const char *s, size_t n, char *buf, size_t len)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n >= len)
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	return true;
}

int blue__cm_allow_match(const char *list, uint32_t claimed, const struct in6_addr *peer)
{
	char tok[ALLOW_TOKEN_MAX], shown[ALLOW_TOKEN_MAX], *eq;
	struct in6_addr p;
	uint32_t net, mask;
	const char *s, *comma;
	size_t n;
	int found = 0;

	/* every entry is checked, so a typo is reported even after a matching one */
	for (s = list; s && *s; s = comma ? comma + 1 : NULL) {
		comma = strchr(s, ',');
		n = comma ? (size_t)(comma - s) : strlen(s);
		if (!token(s, n, tok, sizeof(tok)))
			return blue__cm_fail(EINVAL, "%s: entry \"%.*s\" is too long", ALLOW_ENV,
					     (int)(n > 40 ? 40 : n), s);
		if (!tok[0])
			continue;	/* "a=b,,c=d" or a trailing comma */
		memcpy(shown, tok, sizeof(shown));	/* parsing cuts @tok up */
		eq = strchr(tok, '=');
		if (eq)
			*eq = 0;
		if (!eq || !parse_claimed(tok, &net, &mask) || !parse_peer(eq + 1, &p))
			return blue__cm_fail(EINVAL, "%s: entry \"%s\" is not "
					     "CLAIMED_IPV4[/PREFIX]=TCP_PEER_IP", ALLOW_ENV, shown);
		if ((claimed & mask) == net && !memcmp(&p, peer, sizeof(p)))
			found = 1;
	}
	return found;
}

/* The address the TCP connection on @fd comes from; 1, 0 for a non-IP socket, -errno. */
static int tcp_peer(int fd, struct in6_addr *out)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		return blue__cm_fail(errno, "cannot read the CM connection's peer address: %s",
				     strerror(errno));
	switch (ss.ss_family) {
	case AF_INET:
		mapped(((struct sockaddr_in *)&ss)->sin_addr.s_addr, out);
		return 1;
	case AF_INET6:
		*out = ((struct sockaddr_in6 *)&ss)->sin6_addr;
		return 1;
	}
	return 0;
}

/* The compared form back as text: a.b.c.d for IPv4-mapped, else IPv6. */
static void peer_str(const struct in6_addr *a, char *buf, size_t len)
{
	if (IN6_IS_ADDR_V4MAPPED(a))
		inet_ntop(AF_INET, a->s6_addr + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

/* An IPv6 claim: the GID must be the TCP peer's own address (no allow list). */
static int check_peer6(int fd, const struct blue_cm_info *remote)
{
	char c[INET6_ADDRSTRLEN], p[INET6_ADDRSTRLEN];
	struct in6_addr peer;
	union blue_gid g;
	int n;

	if (!blue__cm_claimed_gid(remote, &g))
		return 0;	/* nothing claimed: no neighbour entry will be made from it */
	n = tcp_peer(fd, &peer);
	if (n <= 0)
		return n;
	if (!memcmp(peer.s6_addr, g.raw, 16))
		return 0;
	inet_ntop(AF_INET6, g.raw, c, sizeof(c));
	peer_str(&peer, p, sizeof(p));
	return blue__cm_fail(EACCES, "peer claims %s but connects from %s: refused", c, p);
}

int blue__cm_check_peer(int fd, const struct blue_cm_info *remote)
{
	char c[INET_ADDRSTRLEN], p[INET6_ADDRSTRLEN];
	struct in6_addr peer, want;
	uint32_t claimed = blue__cm_claimed_ip(remote);
	int n;

	if (!claimed)
		return check_peer6(fd, remote);
	n = tcp_peer(fd, &peer);
	if (n <= 0)
		return n;
	mapped(claimed, &want);
	if (!memcmp(&peer, &want, sizeof(peer)))
		return 0;
	n = blue__cm_allow_match(getenv(ALLOW_ENV), claimed, &peer);
	if (n < 0)
		return n;
	if (n)
		return 0;
	inet_ntop(AF_INET, &claimed, c, sizeof(c));
	peer_str(&peer, p, sizeof(p));
	/* short: it travels in the verdict's 112-byte reason */
	return blue__cm_fail(EACCES, "peer claims %s but connects from %s: refused (allow: "
			     ALLOW_ENV "=%s=%s)", c, p, c, p);
}
