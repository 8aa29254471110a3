// SPDX-License-Identifier: MIT
/*
 * Privilege checks. Attaching XDP takes CAP_NET_ADMIN (the XDP link on the netdev) plus
 * CAP_BPF (loading a networking program and creating its maps); kernels before 5.8 had
 * no CAP_BPF and wanted CAP_SYS_ADMIN, which still implies it. Checking the effective set
 * before touching anything turns an unprivileged run into one clear message instead of
 * an EPERM from whichever syscall happened to come first.
 */
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "loader/internal.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

int blue_ld__err_perm(const char *what, const char *caps)
{
	ld_err("permission denied: %s needs %s (run as root)", what, caps);
	return -EPERM;
}

static bool cap_effective(const struct __user_cap_data_struct *d, unsigned int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

int blue_ld__caps_check(const char *what)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	/* if the kernel will not say, let the syscalls themselves decide */
	if (syscall(SYS_capget, &hdr, data))
		return 0;
	if (cap_effective(data, CAP_NET_ADMIN) &&
	    (cap_effective(data, CAP_BPF) || cap_effective(data, CAP_SYS_ADMIN)))
		return 0;
	return blue_ld__err_perm(what, BLUE_CAPS_XDP);
}
