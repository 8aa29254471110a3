// SPDX-License-Identifier: MIT
/*
 * blue-manager's tenants (runtime/tenant.c): the config file's lines and what each bad
 * one is refused with (the file, line and item named), uid/gid/cgroup mapping with the
 * first match winning and the default, a reload that keeps what tenants hold, quotas
 * refused with EDQUOT, and the token bucket's rate over simulated time.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "runtime/tenant.h"

static const char *const conf =
	"# two tenants and a default\n"
	"tenant rt    class=realtime qps=2 mrs=3 mr_bytes=8K cqs=1\n"
	"tenant batch class=normal weight=3 rate=100M   # a comment\n"
	"tenant web   class=priority\n"
	"\n"
	"map uid=1000 rt\n"
	"map gid=2000 batch\n"
	"map cgroup=/system.slice/web.service web\n"
	"default batch\n";

Test(tenant, parses_the_file)
{
	struct blue_tenant_table tt;
	struct blue_tenant *t;

	blue__tenants_init(&tt);
	cr_assert_eq(blue__tenants_parse(&tt, conf, "t.conf"), 0);
	t = blue__tenant_find(&tt, "rt");
	cr_assert_not_null(t);
	cr_assert_eq(t->lim.klass, BLUE_CLASS_REALTIME);
	cr_assert_eq(t->lim.qps, 2);
	cr_assert_eq(t->lim.mrs, 3);
	cr_assert_eq(t->lim.mr_bytes, 8192);
	cr_assert_eq(t->lim.cqs, 1);
	t = blue__tenant_find(&tt, "batch");
	cr_assert_eq(t->lim.weight, 3);
	cr_assert_eq(t->lim.rate_bps, 100000000ull, "rates are decimal");
	cr_assert_eq(t->lim.qps, 0, "no key: no limit");
	cr_assert_eq(blue__tenant_find(&tt, "web")->lim.klass, BLUE_CLASS_PRIORITY);
	cr_assert_not(blue__tenant_find(&tt, "default")->in_config,
		      "the implicit default serves what it has and takes no one new");
}

Test(tenant, maps_first_match_then_default)
{
	struct blue_tenant_table tt;

	blue__tenants_init(&tt);
	cr_assert_eq(blue__tenants_parse(&tt, conf, "t.conf"), 0);
	cr_assert_str_eq(blue__tenant_of(&tt, 1000, 2000, "")->name, "rt", "uid line first");
	cr_assert_str_eq(blue__tenant_of(&tt, 1, 2000, "")->name, "batch");
	cr_assert_str_eq(blue__tenant_of(&tt, 1, 1, "/system.slice/web.service")->name, "web");
	cr_assert_str_eq(blue__tenant_of(&tt, 1, 1, "/system.slice/web.service/sub")->name, "web",
			 "a cgroup below the mapped one");
	cr_assert_str_eq(blue__tenant_of(&tt, 1, 1, "/system.slice/web.service2")->name, "batch",
			 "not a prefix match of the name");
	cr_assert_str_eq(blue__tenant_of(&tt, 5, 5, "/user.slice")->name, "batch", "the default");
	cr_assert_eq(blue__tenants_parse(&tt, "tenant a\nmap uid=7 a\n", "u.conf"), 0);
	cr_assert_null(blue__tenant_of(&tt, 5, 5, ""), "no default: refused");
	cr_assert_str_eq(blue__tenant_of(&tt, 7, 5, "")->name, "a");
}

Test(tenant, bad_lines_refused_and_nothing_changes)
{
	static const char *const bad[] = {
		"tenant\n",
		"tenant x class=fast\n",
		"tenant x qps=lots\n",
		"tenant x speed=1\n",
		"tenant x weight=0\n",
		"tenant x\ntenant x\n",
		"map uid=1 nobody\n",
		"tenant x\nmap pid=1 x\n",
		"tenant x\nmap cgroup=relative x\n",
		"default nobody\n",
		"frobnicate\n",
	};
	struct blue_tenant_table tt;

	blue__tenants_init(&tt);
	cr_assert_eq(blue__tenants_parse(&tt, conf, "t.conf"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(blue__tenants_parse(&tt, bad[i], "bad.conf"), -EINVAL, "%s", bad[i]);
		cr_assert_eq(tt.n, 4, "a refused file changed the table (%s)", bad[i]);
		cr_assert_str_eq(blue__tenant_of(&tt, 1000, 0, "")->name, "rt");
	}
}

Test(tenant, reload_keeps_holdings_and_applies_new_limits)
{
	struct blue_tenant_table tt;
	struct blue_tenant *rt;

	blue__tenants_init(&tt);
	cr_assert_eq(blue__tenants_parse(&tt, conf, "t.conf"), 0);
	rt = blue__tenant_find(&tt, "rt");
	cr_assert_eq(blue__tenant_charge(rt, BLUE_QUOTA_QP, 0), 0);
	rt->use.tx_bytes = 12345;
	cr_assert_eq(blue__tenants_parse(&tt, "tenant rt qps=5\ntenant new\ndefault new\n",
					 "t2.conf"), 0);
	cr_assert_eq(blue__tenant_find(&tt, "rt"), rt, "the same tenant, where QPs point");
	cr_assert_eq(rt->use.qps, 1);
	cr_assert_eq(rt->use.tx_bytes, 12345);
	cr_assert_eq(rt->lim.qps, 5);
	cr_assert_eq(rt->lim.klass, BLUE_CLASS_NORMAL, "keys not given go back to the default");
	cr_assert_not(blue__tenant_find(&tt, "batch")->in_config);
	cr_assert_str_eq(blue__tenant_of(&tt, 1000, 0, "")->name, "new", "the old maps are gone");
}

Test(tenant, quotas_say_edquot)
{
	struct blue_tenant_table tt;
	struct blue_tenant *rt;

	blue__tenants_init(&tt);
	cr_assert_eq(blue__tenants_parse(&tt, conf, "t.conf"), 0);
	rt = blue__tenant_find(&tt, "rt");
	cr_assert_eq(blue__tenant_charge(rt, BLUE_QUOTA_QP, 0), 0);
	cr_assert_eq(blue__tenant_charge(rt, BLUE_QUOTA_QP, 0), 0);
	cr_assert_eq(blue__tenant_charge(rt, BLUE_QUOTA_QP, 0), EDQUOT);
	cr_assert_eq(blue__tenant_charge(rt, BLUE_QUOTA_CQ, 0), 0);
	cr_assert_eq(blue__tenant_charge(rt, BLUE_QUOTA_CQ, 0), EDQUOT);
	cr_assert_eq(blue__tenant_charge(rt, BLUE_QUOTA_MR, 4096), 0);
	cr_assert_eq(blue__tenant_charge(rt, BLUE_QUOTA_MR, 8192), EDQUOT, "past mr_bytes");
	cr_assert_eq(blue__tenant_charge(rt, BLUE_QUOTA_MR, 4096), 0);
	cr_assert_eq(rt->use.mr_bytes, 8192);
	cr_assert_eq(rt->use.over_quota, 3);
	blue__tenant_uncharge(rt, BLUE_QUOTA_QP, 0);
	cr_assert_eq(blue__tenant_charge(rt, BLUE_QUOTA_QP, 0), 0, "room again once one goes");
	cr_assert_eq(blue__tenant_set(rt, "qps=10 class=priority"), 0);
	cr_assert_eq(rt->lim.qps, 10);
	cr_assert_eq(rt->lim.klass, BLUE_CLASS_PRIORITY);
	cr_assert_eq(blue__tenant_set(rt, "qps=x"), -EINVAL);
	cr_assert_eq(rt->lim.qps, 10, "a refused change changes nothing");
}

Test(tenant, token_bucket_keeps_the_rate)
{
	struct blue_tenant_table tt;
	struct blue_tenant *b;
	uint64_t now = 1000000000ull, sent = 0;

	blue__tenants_init(&tt);
	cr_assert_eq(blue__tenants_parse(&tt, conf, "t.conf"), 0);
	b = blue__tenant_find(&tt, "batch");	/* 100 Mbit/s: 12.5 MB/s */
	/* one simulated second of a sender that always wants a 1500-byte frame, every us */
	for (uint64_t t = 0; t < 1000000; t++, now += 1000)
		if (!blue__tenant_send_wait(b, 1500, now))
			sent += 1500;
	cr_assert(sent >= 12400000 && sent <= 12600000, "%llu bytes in 1 s at 100 Mbit/s",
		  (unsigned long long)sent);
	cr_assert_gt(b->use.throttled, 0);
	/* no rate: always */
	cr_assert_eq(blue__tenant_send_wait(blue__tenant_find(&tt, "rt"), 1 << 20, now), 0);
	/* an empty bucket says how long until a frame fits: 1500 B at 12.5 MB/s = 120 us */
	b->tokens = 0;
	b->refill_ns = now;
	cr_assert_eq(blue__tenant_send_wait(b, 1500, now), 120001);
}
