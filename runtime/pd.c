// SPDX-License-Identifier: MIT
/* Protection domains: a PD only groups MRs, QPs and AHs, so here it is counters. */
#include <errno.h>
#include <stdlib.h>

#include "runtime/verbs_ops.h"
#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/mr.h"

struct blue_pd *blue__lib_alloc_pd(struct blue_context *ctx)
{
	struct blue_pd *pd;

	if (!ctx) {
		errno = EINVAL;
		return NULL;
	}
	if (ctx->npd >= BLUE_MAX_PD) {
		blue__logf("alloc_pd: the device's %d PDs are in use", BLUE_MAX_PD);
		errno = ENOMEM;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ctx = ctx;
	ctx->npd++;
	return pd;
}

int blue__lib_dealloc_pd(struct blue_pd *pd)
{
	if (!pd)
		return EINVAL;
	if (pd->nmr || pd->nqp || pd->nsrq || pd->nah || pd->nmw) {
		blue__logf("dealloc_pd: %u MRs, %u QPs, %u SRQs, %u AHs and %u windows still use "
			   "the PD; destroy them first", pd->nmr, pd->nqp, pd->nsrq, pd->nah,
			   pd->nmw);
		return EBUSY;
	}
	pd->ctx->npd--;
	free(pd);
	return 0;
}
