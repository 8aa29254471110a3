#!/usr/bin/env bash
# build_initramfs.sh OUTDIR — a small initramfs that boots Debian's kernel into a Linux
# Soft-RoCE (rdma_rxe) peer for interop tests. Writes:
#   OUTDIR/vmlinuz          symlink to /boot/vmlinuz-<ver> (the Debian kernel, not the host's)
#   OUTDIR/initramfs.cpio.gz
#   OUTDIR/kver             the kernel version the modules belong to
#   OUTDIR/ud_probe         tests/interop/ud_probe.c, built (in the image as /usr/bin/ud_probe)
#   OUTDIR/mw_probe         tests/interop/mw_probe.c, likewise (/usr/bin/mw_probe)
#   OUTDIR/inputs.sha256    fingerprint of every input; the image is rebuilt only when it changes
# Exit 0 = built or up to date, 2 = a needed input is missing (message says which package).
#
# The guest has no udev, no modprobe tree and no ld.so.cache: modules are loaded by /init
# in a fixed order computed here from modules.dep, and libraries sit at the paths ldd
# reports, with LD_LIBRARY_PATH set by /init.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build_initramfs.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)

die2() { echo "build_initramfs: $*" >&2; exit 2; }

# --- the kernel: the newest /lib/modules/<ver> with rdma_rxe and a matching vmlinuz.
# The host runs its own kernel (no InfiniBand); only the Debian one has rxe.
kver=
mapfile -t kdirs < <(printf '%s\n' /lib/modules/*/ | sort -V)
for d in "${kdirs[@]}"; do
	v=$(basename "$d")
	compgen -G "$d/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko*" >/dev/null || continue
	[ -r "/boot/vmlinuz-$v" ] || continue
	kver=$v
done
[ -n "$kver" ] || die2 "no /boot/vmlinuz-<ver> with an rdma_rxe module; install linux-image-amd64 (scripts/deps.sh)"
moddir=/lib/modules/$kver
[ -r "$moddir/modules.dep" ] || die2 "$moddir/modules.dep missing"

# --- modules: the roots and, depth first, their dependencies (deps load first).
# crc32_generic: rxe computes the ICRC with the "crc32" shash, which is modular in
# Debian's config and would need a modprobe the guest does not have.
roots=(virtio_pci virtio_net crc32_generic ib_uverbs rdma_rxe rdma_ucm)
declare -A dep_of=() path_of=() seen=()
while IFS= read -r line; do
	mod=${line%%:*}
	name=${mod##*/}; name=${name%%.ko*}; name=${name//-/_}
	path_of[$name]=$mod
	dep_of[$name]=${line#*:}
done <"$moddir/modules.dep"
order=()
visit() {
	local name=$1 d dn
	[ -n "${seen[$name]:-}" ] && return 0
	seen[$name]=1
	for d in ${dep_of[$name]}; do
		dn=${d##*/}; dn=${dn%%.ko*}; dn=${dn//-/_}
		visit "$dn"
	done
	order+=("$name")
}
for r in "${roots[@]}"; do
	# a root built into the kernel has no entry, which is fine: nothing to load
	if [ -z "${path_of[$r]:-}" ]; then
		grep -qw "$r" "$moddir/modules.builtin" 2>/dev/null && continue
		die2 "module $r not found for $kver"
	fi
	visit "$r"
done

# --- userspace: busybox plus the rdma-core, iproute2 and perftest tools.
busybox=/bin/busybox
# the guest has a libc, but a static busybox keeps /init independent of it
if [ ! -x "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
	die2 "$busybox is missing or not static; install busybox-static"
fi
bins=()
for b in ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong ibv_devinfo ibv_devices rdma ip; do
	p=$(command -v "$b" 2>/dev/null) || die2 "$b not found; install ibverbs-utils and iproute2"
	bins+=("$(readlink -f "$p")")
done
# perftest, and rdmacm-utils for the rdma_cm interop tests (the guest's librdmacm is
# rdma-core's own, over the kernel's rdma_ucm: the kernel CM is the peer; mckey's joins
# are the kernel cma's)
for b in ib_send_bw ib_send_lat ib_write_bw ib_write_lat ib_read_bw ib_read_lat \
	 ib_atomic_bw ib_atomic_lat rping ucmatose udaddy rdma_server rdma_client mckey; do
	p=$(command -v "$b" 2>/dev/null) && bins+=("$(readlink -f "$p")")	# optional
done
# ud_probe (tests/interop/ud_probe.c): what a UD receiver sees (wc and GRH), built here
# against the host's libibverbs so the image carries what it links; the host runs the same
# binary on blue's compat library (OUTDIR/ud_probe)
command -v gcc >/dev/null && [ -r /usr/include/infiniband/verbs.h ] ||
	die2 "cannot build ud_probe: install gcc and libibverbs-dev"
# mw_probe (tests/interop/mw_probe.c): a type 2 memory window written through and
# invalidated, the same way
for p in ud_probe mw_probe; do
	gcc -O2 -Wall -Wextra -Werror -o "$out/$p.new" "$here/$p.c" -libverbs ||
		die2 "$p.c does not build (see above)"
	mv "$out/$p.new" "$out/$p"
done
probes=("$out/ud_probe" "$out/mw_probe")
drv_conf=/etc/libibverbs.d/rxe.driver
[ -r "$drv_conf" ] || die2 "$drv_conf missing; install ibverbs-providers"
provider=$(compgen -G '/usr/lib/*/libibverbs/librxe-rdmav*.so' | head -1) || true
[ -n "$provider" ] || die2 "librxe-rdmav*.so missing; install ibverbs-providers"

# every shared object the binaries and the provider need, as ldd names them
libs=()
for f in "${bins[@]}" "${probes[@]}" "$provider"; do
	while read -r l; do libs+=("$l"); done < <(ldd "$f" | sed -nE 's@.*=> (/[^ ]+) .*@\1@p; s@^\s*(/[^ ]+) \(.*@\1@p')
done
# glibc dlopens libgcc_s.so.1 for pthread_exit and cancellation (rping's threads end
# with pthread_exit: "libgcc_s.so.1 must be installed for pthread_exit" and an abort
# without it); ldd cannot see a dlopen
gcc_s=$(compgen -G '/usr/lib/*/libgcc_s.so.1' | head -1) || true
[ -n "$gcc_s" ] || die2 "libgcc_s.so.1 missing; install libgcc-s1"
libs+=("$gcc_s")
mapfile -t libs < <(printf '%s\n' "${libs[@]}" | sort -u)

# --- the fingerprint: content of this script, the init, and every copied file.
inputs=("$0" "$here/guest_init.sh" "$here/ud_probe.c" "$here/mw_probe.c" "$busybox" "${bins[@]}" "$drv_conf" "$provider" "${libs[@]}")
for m in "${order[@]}"; do inputs+=("$moddir/${path_of[$m]}"); done
fp=$( { echo "$kver ${order[*]}"; sha256sum "${inputs[@]}"; } | sha256sum | cut -d' ' -f1)
if [ -s "$out/initramfs.cpio.gz" ] && [ "$(cat "$out/inputs.sha256" 2>/dev/null)" = "$fp" ]; then
	echo "build_initramfs: $out/initramfs.cpio.gz up to date (kernel $kver)"
	exit 0
fi

stage=$(mktemp -d "$out/stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
cd "$stage"
# merged /usr like the host, so that every ldd path resolves inside the image
mkdir -p usr/bin usr/sbin "usr/lib/modules/$kver" usr/lib64 bin etc proc sys dev tmp run
ln -s usr/lib lib
ln -s usr/lib64 lib64
ln -s usr/sbin sbin

cp "$busybox" bin/busybox
for a in $(bin/busybox --list); do
	[ -e "bin/$a" ] || ln -s busybox "bin/$a"
done
for f in "${bins[@]}" "${libs[@]}" "$provider" "$drv_conf"; do
	mkdir -p ".$(dirname "$f")"
	cp -L "$f" ".$f"
done
for f in "${probes[@]}"; do cp "$f" "usr/bin/$(basename "$f")"; done
# the real binaries win over the busybox applets of the same name (ip)
for f in "${bins[@]}"; do ln -sf "$f" "bin/$(basename "$f")"; done

# modules: decompressed here because busybox insmod may not read .ko.xz / .ko.zst
: >etc/modules.order
for m in "${order[@]}"; do
	src=$moddir/${path_of[$m]}
	dst=usr/lib/modules/$kver/$m.ko
	case $src in
	*.ko.xz) xz -dc "$src" >"$dst" ;;
	*.ko.zst) zstd -qdc "$src" >"$dst" ;;
	*.ko.gz) gzip -dc "$src" >"$dst" ;;
	*) cp "$src" "$dst" ;;
	esac
	echo "/lib/modules/$kver/$m.ko" >>etc/modules.order
done
echo "$kver" >etc/kver

install -m 0755 "$here/guest_init.sh" init
find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0 \
	| gzip -1 >"$out/initramfs.cpio.gz.new"
mv "$out/initramfs.cpio.gz.new" "$out/initramfs.cpio.gz"
ln -sfn "/boot/vmlinuz-$kver" "$out/vmlinuz"
echo "$kver" >"$out/kver"
echo "$fp" >"$out/inputs.sha256"
echo "build_initramfs: built $out/initramfs.cpio.gz ($(du -h "$out/initramfs.cpio.gz" | cut -f1), kernel $kver, modules: ${order[*]})"
