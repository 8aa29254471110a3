// SPDX-License-Identifier: MIT
/* bluectl attach and detach: the loader does the work, bluectl reports it. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>

#include "tools/bluectl/bluectl.h"

int cmd_attach(const char *ifname, const struct opts *o)
{
	const char *mode = o->mode == BLUE_XDP_NATIVE ? "native" : "generic";
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct blue_pins p;
	char dir[256];

	if (blue_loader_attach(ifname, o->mode, 0))
		return 1;
	/* read it back through the pins, as every other user will */
	if (blue_pins_open(ifname, &p))
		return 1;
	bpf_obj_get_info_by_fd(p.prog_fd, &info, &len);
	blue_pin_path(dir, sizeof(dir), ifname, NULL);
	blue_pins_close(&p);
	if (o->json) {
		struct jw w;

		jw_init(&w, stdout);
		jw_obj(&w, NULL);
		jw_str(&w, "ifname", ifname);
		jw_bool(&w, "attached", true);
		jw_str(&w, "mode", mode);
		jw_u64(&w, "prog_id", info.id);
		jw_str(&w, "pin_dir", dir);
		jw_obj_end(&w);
		jw_end(&w);
		return 0;
	}
	printf("%s: blue attached in %s mode (prog id %u), pinned at %s\n", ifname, mode, info.id,
	       dir);
	return 0;
}

int cmd_pin_dir(const char *ifname, const struct opts *o)
{
	char dir[256];
	int ret = ifname ? blue_pin_path(dir, sizeof(dir), ifname, NULL) :
		  blue_pin_dir(dir, sizeof(dir), NULL);

	if (ret) {
		fprintf(stderr, "bluectl: pin-dir%s%s: %s\n", ifname ? " " : "",
			ifname ? ifname : "", ret == -EINVAL ? "not a valid interface name" :
			strerror(-ret));
		return 1;
	}
	if (o->json) {
		struct jw w;

		jw_init(&w, stdout);
		jw_obj(&w, NULL);
		if (ifname)
			jw_str(&w, "ifname", ifname);
		jw_str(&w, "pin_dir", dir);
		jw_obj_end(&w);
		jw_end(&w);
		return 0;
	}
	printf("%s\n", dir);
	return 0;
}

int cmd_detach(const char *ifname, const struct opts *o)
{
	if (blue_loader_detach(ifname))
		return 1;
	if (o->json) {
		struct jw w;

		jw_init(&w, stdout);
		jw_obj(&w, NULL);
		jw_str(&w, "ifname", ifname);
		jw_bool(&w, "detached", true);
		jw_obj_end(&w);
		jw_end(&w);
		return 0;
	}
	printf("%s: blue detached\n", ifname);
	return 0;
}
