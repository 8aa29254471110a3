// SPDX-License-Identifier: MIT
/* 24-bit PSN arithmetic from wire.h (IBA 9.7.1), against a plain 64-bit reference. */
#include <criterion/criterion.h>
#include <stdint.h>

#include <blue/wire.h>

/* Reference: distance modulo 2^24, mapped into [-2^23, 2^23). */
static int64_t ref_diff(uint32_t a, uint32_t b)
{
	int64_t d = ((int64_t)(a & BLUE_PSN_MASK) - (int64_t)(b & BLUE_PSN_MASK)) & 0xffffff;

	return d >= 0x800000 ? d - 0x1000000 : d;
}

Test(wire_psn, add_wraps)
{
	cr_expect_eq(blue_psn_add(0xffffff, 1), 0);
	cr_expect_eq(blue_psn_add(0xfffffe, 5), 3);
	cr_expect_eq(blue_psn_add(0, 0), 0);
	cr_expect_eq(blue_psn_add(0x123456, 0x1000000), 0x123456, "adding 2^24 is a no-op");
	cr_expect_eq(blue_psn_add(10, 0xffffff), 9, "adding 2^24-1 steps back one");
}

Test(wire_psn, diff_edges)
{
	cr_expect_eq(blue_psn_diff(5, 5), 0);
	cr_expect_eq(blue_psn_diff(0, 0xffffff), 1, "0 follows 0xffffff");
	cr_expect_eq(blue_psn_diff(0xffffff, 0), -1);
	cr_expect_eq(blue_psn_diff(3, 0xfffffd), 6);
	cr_expect_eq(blue_psn_diff(0x7fffff, 0), 0x7fffff, "largest forward distance");
	cr_expect_eq(blue_psn_diff(0x800000, 0), -0x800000, "half way is 'behind'");
	cr_expect_eq(blue_psn_diff(0, 0x800000), -0x800000);
	cr_expect_eq(blue_psn_diff(0x800001, 0), -0x7fffff);
	/* bits above 24 (e.g. AckReq left in a word) do not matter */
	cr_expect_eq(blue_psn_diff(0xff000005, 0x00000002), 3);
}

Test(wire_psn, diff_matches_reference)
{
	uint64_t s = 0x0123456789abcdefull;
	int i;

	for (i = 0; i < 200000; i++) {
		uint32_t a, b;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		a = (uint32_t)s & BLUE_PSN_MASK;
		b = (uint32_t)(s >> 32) & BLUE_PSN_MASK;
		if (i & 1)	/* half the pairs close together, across the wrap */
			b = blue_psn_add(a, (uint32_t)(s >> 40) & 0xff);
		cr_assert_eq(blue_psn_diff(a, b), ref_diff(a, b), "diff(0x%06x, 0x%06x)", a, b);
		cr_assert_eq(blue_psn_add(b, (uint32_t)blue_psn_diff(a, b)), a,
			     "b + (a - b) == a for 0x%06x 0x%06x", a, b);
	}
}
