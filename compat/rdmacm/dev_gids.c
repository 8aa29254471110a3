// SPDX-License-Identifier: MIT
/*
 * A device's GID table as rdma_cm reads it (cma.h): the first 16 entries, which one is
 * the IPv4 GID (::ffff:a.b.c.d) and which the CM agent speaks from (gid_cm). Alone in
 * its file so that tests/compat/cm_agent_probe, which builds its own cma_dev around the
 * agent, reads the table as the library does.
 */
#include <string.h>

#include "compat/rdmacm/cma.h"

void cma_dev_read_gids(struct cma_dev *d, int len)
{
	static const uint8_t v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t zero[16];
	int v6 = -1;

	d->gid_v4 = -1;
	d->ngid = len < 16 ? len : 16;
	for (int i = 0; i < d->ngid; i++) {
		const uint8_t *g = d->gid[i].raw;

		if (ibv_query_gid(d->verbs, d->port_num, i, &d->gid[i]))
			memset(&d->gid[i], 0, sizeof(d->gid[i]));
		if (d->gid_v4 < 0 && !memcmp(g, v4pfx, 12))
			d->gid_v4 = i;
		else if (v6 < 0 && memcmp(g, zero, 16) && memcmp(g, v4pfx, 12) &&
			 !(g[0] == 0xfe && (g[1] & 0xc0) == 0x80))
			v6 = i;
	}
	d->gid_cm = d->gid_v4 >= 0 ? d->gid_v4 : v6;
}
