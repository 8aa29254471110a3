#!/bin/sh
# ns_enter.sh NS NAME CMD...: run CMD in network namespace NS as a "host" of its own, the
# way UCX and Open MPI expect a host to look. Nothing outside its private mount namespace
# changes.
#  - /sys shows NS's own netdevs. sysfs shows the namespace that mounted it, so after a
#    plain `nsenter --net` UCX's tcp transport lists the host's /sys/class/net, finds only
#    `lo` there that also exists in NS, and says "network device ... is not available".
#    sysfs is mounted afresh, as `ip netns exec` does, but /sys/fs/bpf (blue's pins, which
#    `ip netns exec` hides: ARCHITECTURE.md, facts) is carried over: bound aside first and
#    moved back on top of the new /sys.
#  - its own host name NAME (a UTS namespace), so that Open MPI does not take two
#    namespaces for one node.
#  - /dev/infiniband/DEV for each DEV in BLUE_NS_UVERBS: UCX 1.13 lists an IB device only
#    if "/dev/infiniband/" + ibv_device.dev_name is a character device it may read and
#    write (uct_ib_device_is_accessible, src/uct/ib/base/ib_md.c); it never opens it. blue
#    has no kernel device, so the node is /dev/null's (1:3) in an overlay on /dev, with
#    /dev's submounts (shm, pts, ...) bound back on top.
# Needs root (nsenter, unshare, mount).
set -eu
[ $# -ge 3 ] || { echo "usage: ns_enter.sh NS NAME CMD..." >&2; exit 2; }
ns=$1
name=$2
shift 2
[ -e /run/netns/"$ns" ] || { echo "ns_enter.sh: no network namespace $ns" >&2; exit 2; }
# shellcheck disable=SC2016 # the inner script expands its own arguments
exec nsenter --net=/run/netns/"$ns" unshare --uts --mount --propagation private -- sh -c '
	set -e
	hostname "$1"
	shift
	keep=$(mktemp -d /tmp/blue-ns.XXXXXX)
	# the scratch directory goes even when a step fails (set -e)
	trap '\''umount -l "$keep" 2>/dev/null; rmdir "$keep"'\'' EXIT
	mount -t tmpfs blue-ns "$keep"
	mkdir "$keep/bpf" "$keep/dev" "$keep/upper" "$keep/work"
	mount --rbind /sys/fs/bpf "$keep/bpf"
	mount -t sysfs sysfs /sys
	mount --move "$keep/bpf" /sys/fs/bpf
	# a host entered from a host (mpirun launching a daemon) has its nodes already
	need=
	for d in ${BLUE_NS_UVERBS:-}; do
		[ -c "/dev/infiniband/$d" ] || need=1
	done
	if [ -n "$need" ]; then
		mount --rbind /dev "$keep/dev"
		mount -t overlay blue-ns-dev \
			-o "lowerdir=$keep/dev,upperdir=$keep/upper,workdir=$keep/work" /dev
		for m in $(findmnt -rn -o TARGET -R "$keep/dev" | sed "s|^$keep/dev/||;t;d"); do
			case $m in */*) continue ;; esac	# nested ones come with their parent
			mount --rbind "$keep/dev/$m" "/dev/$m"
		done
		mkdir -p /dev/infiniband
		for d in $BLUE_NS_UVERBS; do
			[ -c "/dev/infiniband/$d" ] || mknod -m 666 "/dev/infiniband/$d" c 1 3
		done
	fi
	umount -l "$keep"
	rmdir "$keep"
	trap - EXIT
	exec "$@"' sh "$name" "$@"
