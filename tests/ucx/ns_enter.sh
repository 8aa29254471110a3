#!/bin/sh
# ns_enter.sh NS NAME CMD...: run CMD in network namespace NS as a "host" of its own, the
# way UCX and Open MPI expect a host to look:
#  - /sys shows NS's own netdevs. sysfs shows the namespace that mounted it, so after a
#    plain `nsenter --net` UCX's tcp transport lists the host's /sys/class/net, finds only
#    `lo` there that also exists in NS, and says "network device ... is not available".
#    sysfs is mounted afresh in a private mount namespace, as `ip netns exec` does, but
#    /sys/fs/bpf (blue's pins, which `ip netns exec` hides: ARCHITECTURE.md, facts) is
#    carried over: bound aside first and moved back on top of the new /sys.
#  - its own host name NAME (a UTS namespace), so that Open MPI does not take two
#    namespaces for one node.
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
	keep=$(mktemp -d /tmp/blue-ns-bpf.XXXXXX)
	mount --rbind /sys/fs/bpf "$keep"
	mount -t sysfs sysfs /sys
	mount --move "$keep" /sys/fs/bpf
	rmdir "$keep"
	shift
	exec "$@"' sh "$name" "$@"
