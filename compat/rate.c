// SPDX-License-Identifier: MIT
/*
 * enum ibv_rate <-> Mb/s (IBVERBS_1.1). The enum's later members are the FDR/EDR/HDR
 * link rates, whose data rate is not a multiple of 2.5 Gb/s (64b/66b encoding: FDR's
 * 14.0625 Gb/s), so one table holds each rate's Mb/s as rdma-core reports it.
 */
#include "compat/compat.h"

static const struct { enum ibv_rate rate; int mbps; } bv_rates[] = {
	{ IBV_RATE_2_5_GBPS, 2500 },	{ IBV_RATE_5_GBPS, 5000 },
	{ IBV_RATE_10_GBPS, 10000 },	{ IBV_RATE_20_GBPS, 20000 },
	{ IBV_RATE_30_GBPS, 30000 },	{ IBV_RATE_40_GBPS, 40000 },
	{ IBV_RATE_60_GBPS, 60000 },	{ IBV_RATE_80_GBPS, 80000 },
	{ IBV_RATE_120_GBPS, 120000 },	{ IBV_RATE_14_GBPS, 14062 },
	{ IBV_RATE_56_GBPS, 56250 },	{ IBV_RATE_112_GBPS, 112500 },
	{ IBV_RATE_168_GBPS, 168750 },	{ IBV_RATE_25_GBPS, 25781 },
	{ IBV_RATE_100_GBPS, 103125 },	{ IBV_RATE_200_GBPS, 206250 },
	{ IBV_RATE_300_GBPS, 309375 },	{ IBV_RATE_28_GBPS, 28125 },
	{ IBV_RATE_50_GBPS, 53125 },	{ IBV_RATE_400_GBPS, 425000 },
	{ IBV_RATE_600_GBPS, 637500 },
};

#define BV_NRATES (sizeof(bv_rates) / sizeof(bv_rates[0]))

/* Return: the rate's Mb/s, or 0 for IBV_RATE_MAX and values outside the enum */
BV_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < BV_NRATES; i++)
		if (bv_rates[i].rate == rate)
			return bv_rates[i].mbps;
	return 0;
}

/* Return: the rate of exactly @mbps Mb/s, or IBV_RATE_MAX for none */
BV_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < BV_NRATES; i++)
		if (bv_rates[i].mbps == mbps)
			return bv_rates[i].rate;
	return IBV_RATE_MAX;
}
