// SPDX-License-Identifier: MIT
/*
 * udp_flood: offer UDP load at a set rate, for the bottleneck switch's tests
 * (tests/netns/test_switch.sh). Cheaper per byte than iperf3 on a shared machine: one
 * unconnected socket (the receiver needs no listener: its port-unreachable answers are
 * rate-limited by the kernel and an unconnected socket ignores them), sendmmsg batches,
 * and pacing against CLOCK_MONOTONIC.
 *
 *   udp_flood --dst A.B.C.D [--port P] [--rate BITS] [--size PAYLOAD] [--tos T]
 *             [--seconds S]
 * --rate counts frame bytes on the wire (payload + UDP, IPv4 and Ethernet headers, what
 * tbf and the switch meter), default 0 = as fast as it can; --tos sets the whole TOS byte
 * (2 = ECT(0), 1 = ECT(1), 0 = Not-ECT). Prints one line when done:
 *   SENT pkts N frame_bytes N seconds S
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HDRS	(14 + 20 + 8)	/* Ethernet, IPv4, UDP */
#define BATCH	8
#define MAX_PAYLOAD	65000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts = { .tv_sec = (time_t)t, .tv_nsec = (long)((t - (time_t)t) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void usage(void)
{
	fprintf(stderr, "usage: udp_flood --dst A.B.C.D [--port P] [--rate BITS] "
		"[--size PAYLOAD] [--tos T] [--seconds S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dst", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "size", required_argument, NULL, 's' },
		{ "tos", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 'S' },
		{ 0 },
	};
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(9) };
	double rate = 0, seconds = 1, t0, t, due;
	long size = 1472, tos = 0;
	unsigned long long pkts = 0;
	static char payload[MAX_PAYLOAD];
	struct mmsghdr msg[BATCH];
	struct iovec iov = { payload, 0 };
	int fd, o, have_dst = 0;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'd':
			if (inet_pton(AF_INET, optarg, &dst.sin_addr) != 1) {
				fprintf(stderr, "udp_flood: --dst %s: not an IPv4 address\n", optarg);
				return 2;
			}
			have_dst = 1;
			break;
		case 'p': dst.sin_port = htons((unsigned short)atoi(optarg)); break;
		case 'r': rate = atof(optarg); break;
		case 's': size = atol(optarg); break;
		case 't': tos = strtol(optarg, NULL, 0); break;
		case 'S': seconds = atof(optarg); break;
		default: usage();
		}
	}
	if (!have_dst || size < 1 || size > MAX_PAYLOAD || rate < 0 || seconds <= 0 ||
	    tos < 0 || tos > 255)
		usage();
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_TOS, &(int){ (int)tos }, sizeof(int))) {
		perror("udp_flood: socket/IP_TOS");
		return 1;
	}
	iov.iov_len = (size_t)size;
	memset(msg, 0, sizeof(msg));
	for (int i = 0; i < BATCH; i++) {
		msg[i].msg_hdr.msg_name = &dst;
		msg[i].msg_hdr.msg_namelen = sizeof(dst);
		msg[i].msg_hdr.msg_iov = &iov;
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = now_s();
	due = t0;
	while ((t = now_s()) < t0 + seconds) {
		int n = sendmmsg(fd, msg, BATCH, 0);

		if (n < 0) {
			/* a full local queue (ENOBUFS) or an ICMP error: offer on */
			if (errno == ENOBUFS || errno == ECONNREFUSED || errno == EAGAIN)
				continue;
			perror("udp_flood: sendmmsg");
			return 1;
		}
		pkts += (unsigned long long)n;
		if (rate > 0) {
			due += n * (size + HDRS) * 8.0 / rate;
			/*
			 * behind by more than 2 ms (descheduled): do not catch up with a burst,
			 * which would build a queue at the switch below the rate
			 */
			if (due < t - 0.002)
				due = t - 0.002;
			if (due > t)
				sleep_until(due);
		}
	}
	printf("SENT pkts %llu frame_bytes %llu seconds %.3f\n", pkts,
	       pkts * (unsigned long long)(size + HDRS), now_s() - t0);
	return 0;
}
