// SPDX-License-Identifier: MIT
/*
 * `bluectl qp show`'s congestion-control fields, formatted for a person: the algorithm
 * by name, rates in Mbit/s, alpha as a fraction, RTTs in microseconds, the window in
 * packets (tools/bluectl/qpfields.c); --json keeps the raw numbers and adds the name.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tools/bluectl/bluectl.h"

/* `qp show`'s text for field @name of @q */
static const char *show(const struct blue_qp_ctx *q, const char *name, char *buf, size_t len)
{
	unsigned int i;

	for (i = 0; i < qp_nfields; i++)
		if (!strcmp(qp_fields[i].name, name)) {
			qf_format(&qp_fields[i], q, buf, len);
			return buf;
		}
	cr_assert_fail("no field %s", name);
	return NULL;
}

#define SHOWS(q, name, want)							\
	do {									\
		char b_[64];							\
		cr_assert_str_eq(show(q, name, b_, sizeof(b_)), want, "%s", name);	\
	} while (0)

Test(bluectl_qpfields, cc_fields_read_as_units)
{
	struct blue_qp_ctx q;

	memset(&q, 0, sizeof(q));
	q.cc_algo = 1;
	q.ecn = 1;
	q.rate_mbps = 2500;
	q.target_rate_mbps = 5000;
	q.alpha = 512;
	q.srtt_ns = 12345;
	q.rtt_ns = 900;
	q.cwnd = 16;
	SHOWS(&q, "cc_algo", "dcqcn (1)");
	SHOWS(&q, "rate_mbps", "2500 Mbit/s");
	SHOWS(&q, "target_rate_mbps", "5000 Mbit/s");
	SHOWS(&q, "alpha", "0.500 (512/1024)");
	SHOWS(&q, "srtt_ns", "12.3 us");
	SHOWS(&q, "rtt_ns", "0.9 us");
	SHOWS(&q, "cwnd", "16 packets");
	SHOWS(&q, "ecn", "on (1)");
	q.cc_algo = 2;
	q.rate_mbps = 0;
	q.ecn = 0;
	SHOWS(&q, "cc_algo", "window (2)");
	SHOWS(&q, "rate_mbps", "0 (unpaced)");
	SHOWS(&q, "ecn", "off (0)");
	q.cc_algo = 0;
	q.cwnd = 0;
	SHOWS(&q, "cc_algo", "none (0)");
	SHOWS(&q, "cwnd", "0 (no window)");
	q.cc_algo = 9;
	SHOWS(&q, "cc_algo", "? (9)");
}

Test(bluectl_qpfields, json_names_the_algorithm)
{
	struct blue_qp_ctx q;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jw w;

	memset(&q, 0, sizeof(q));
	q.cc_algo = 2;
	q.alpha = 256;
	jw_init(&w, f);
	jw_obj(&w, NULL);
	qf_json(&w, &q);
	jw_obj_end(&w);
	jw_end(&w);
	fclose(f);
	cr_assert(strstr(buf, "\"cc_algo\": 2"), "%s", buf);
	cr_assert(strstr(buf, "\"alpha\": 256"), "%s", buf);
	cr_assert(strstr(buf, "\"cc_algo_name\": \"window\""), "%s", buf);
	free(buf);
}
