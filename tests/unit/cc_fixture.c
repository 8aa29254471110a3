// SPDX-License-Identifier: MIT
/* See cc_fixture.h. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/cc_fixture.h"
#include "tests/unit/rc_fixture.h"

void cc_alone_init(struct cc_alone *a, uint32_t algo,
		   void (*tweak)(struct blue_cc_params *p))
{
	memset(a, 0, sizeof(*a));
	a->ops = blue__cc_ops(algo);
	cr_assert_not_null(a->ops, "no table registered for algorithm %u", algo);
	blue__cc_defaults(&a->cc.params, algo);
	if (tweak)
		tweak(&a->cc.params);
	a->cc.ops = a->ops;
	a->cc.live = &a->live;
	a->cc.link_mbps = 10000;
	a->ops->init(&a->cc, CC_T0);
}

/* stderr into a temporary file while @fn(@arg) runs. Return: what it wrote; free() it. */
static char *captured(int (*fn)(struct blue_qp *, const struct blue_cc_params *),
		      struct blue_qp *qp, const struct blue_cc_params *p, int *ret)
{
	FILE *f = tmpfile();
	char *text = calloc(1, 4096);
	int saved;
	size_t n;

	cr_assert(f && text);
	unsetenv("BLUE_LOG");
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	cr_assert_geq(saved, 0);
	cr_assert_geq(dup2(fileno(f), STDERR_FILENO), 0);
	*ret = fn(qp, p);
	fflush(stderr);
	cr_assert_geq(dup2(saved, STDERR_FILENO), 0);
	close(saved);
	rewind(f);
	n = fread(text, 1, 4095, f);
	text[n] = 0;
	fclose(f);
	return text;
}

void cc_expect_rejected(const struct blue_cc_params *p, const char *want)
{
	struct blue_cc_params before, after;
	struct rc_fx fx;
	char *log;
	int ret;

	rc_fx_init(&fx, NULL);
	cr_assert_eq(blue_qp_query_cc(fx.a.qp, &before), 0);
	log = captured(blue_qp_set_cc, fx.a.qp, p, &ret);
	fputs(log, stderr);
	cr_assert_eq(ret, EINVAL, "set_cc returned %d, want EINVAL (%s)", ret, want);
	cr_assert_not_null(strstr(log, want), "no '%s' in the log: %s", want, log);
	cr_assert_eq(blue_qp_query_cc(fx.a.qp, &after), 0);
	cr_assert_eq(memcmp(&before, &after, sizeof(before)), 0, "a rejected set changed the QP");
	free(log);
	rc_fx_fini(&fx);
}

void cc_expect_accepted(const struct blue_cc_params *p)
{
	struct blue_cc_params got;
	struct rc_fx fx;
	char *log;
	int ret;

	rc_fx_init(&fx, NULL);
	log = captured(blue_qp_set_cc, fx.a.qp, p, &ret);
	cr_assert_eq(ret, 0, "set_cc returned %d: %s", ret, log);
	cr_assert_eq(log[0], 0, "an accepted set logged: %s", log);
	cr_assert_eq(blue_qp_query_cc(fx.a.qp, &got), 0);
	cr_assert_eq(memcmp(&got, p, sizeof(got)), 0);
	free(log);
	rc_fx_fini(&fx);
}
