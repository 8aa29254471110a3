# shellcheck shell=bash
# `make install PREFIX=...` as a packager or a user of the library would use it: the
# files land where pkg-config says, the shared library has its soname and exports only
# the versioned API, and a program built against the installed copy links and runs.

install_to() {	# DIR
	make --no-print-directory -s B="$B" SAN="${SAN:-0}" install PREFIX="$1" >/dev/null
}

test_install_layout_and_soname() {
	local d
	d=$(mktemp -d)
	on_exit "rm -rf $d"
	install_to "$d"
	local f
	for f in include/blue/blue.h include/blue/wire.h include/blue/qp_ctx.h \
		include/blue/stats.h include/blue/pins.h lib/libblue.a lib/libblue.so.0 \
		lib/libblue.so lib/pkgconfig/blue.pc bin/bluectl bin/blue-manager \
		lib/systemd/system/blue-manager@.service; do
		[ -e "$d/$f" ] || fail "make install did not create $f"
	done
	# the unit runs the installed daemon, restarts it, and reloads it with SIGHUP
	grep -q "^ExecStart=.*$d/bin/blue-manager -d %i" "$d/lib/systemd/system/blue-manager@.service" ||
		fail "the unit does not start the installed blue-manager"
	grep -q "^Restart=on-failure" "$d/lib/systemd/system/blue-manager@.service" ||
		fail "the unit does not restart blue-manager"
	"$d/bin/blue-manager" --help | grep -q -- "--tenants FILE" || fail "installed blue-manager --help"
	if command -v systemd-analyze >/dev/null; then
		systemd-analyze verify "$d/lib/systemd/system/blue-manager@.service" 2>&1 |
			grep -v "not executable\|No such file\|Failed to\|Unit .* not found" | grep . &&
			fail "systemd-analyze finds fault with the unit"
	fi
	[[ $(readelf -d "$d/lib/libblue.so.0") == *"Library soname: [libblue.so.0]"* ]] ||
		fail "libblue.so.0 has no soname libblue.so.0"
	# Exported symbols all carry the version node; internals stay hidden.
	local bad syms
	syms=$(nm -D --defined-only "$d/lib/libblue.so.0")
	bad=$(awk '$2 == "T" && $3 !~ /@@BLUE_0\.1$/' <<<"$syms")
	[ -z "$bad" ] || fail "unversioned exports: $bad"
	if grep -qE ' (blue_umem_|blue_fpool_|blue_flow_|blue__)' <<<"$syms"; then
		fail "internal symbols are exported"
	fi
	"$d/bin/bluectl" --help >/dev/null || fail "installed bluectl --help failed"
}

test_install_pkgconfig_builds_a_program() {
	local d
	d=$(mktemp -d)
	on_exit "rm -rf $d"
	install_to "$d"
	cat >"$d/use.c" <<'C'
#include <stdio.h>
#include <blue/blue.h>
#include <blue/stats.h>
#include <blue/wire.h>
int main(void)
{
	/* header-only tables, and the library's own words for a completion status */
	printf("%s %u %s\n", blue_stat_name(BLUE_STAT_REDIRECT),
	       blue_opcode_hdr_len(blue_opcode_flags(BLUE_OP_RC_WRITE_ONLY)),
	       blue_wc_status_str(BLUE_WC_RETRY_EXC_ERR));
	/* no such netdev: a clean NULL with errno, not a crash */
	return blue_open_device("bluenoif0") == NULL ? 0 : 1;
}
C
	local flags san=
	# a sanitized libblue needs its runtime loaded first, so the program is sanitized too
	[ "${SAN:-0}" = 1 ] && san="-fsanitize=address,undefined"
	flags=$(PKG_CONFIG_PATH=$d/lib/pkgconfig pkg-config --cflags --libs blue) ||
		fail "pkg-config does not know blue"
	# shellcheck disable=SC2086
	cc $san -Wall -Werror -o "$d/use" "$d/use.c" $flags || fail "cannot build against the install"
	local out
	out=$(LD_LIBRARY_PATH=$d/lib "$d/use")
	echo "program printed: $out"
	[[ $out == "redirect 28 transport retry counter exceeded" ]] || fail "unexpected output from the installed library: $out"
	local libs
	libs=$(LD_LIBRARY_PATH=$d/lib ldd "$d/use")
	[[ $libs == *"$d/lib/libblue.so.0"* ]] || fail "program did not link the installed libblue.so: $libs"
}
