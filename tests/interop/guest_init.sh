#!/bin/busybox sh
# shellcheck shell=dash
# /init of the rxe interop guest (built into the initramfs by build_initramfs.sh).
# Kernel command line (all set by guest.sh):
#   blue.ip=A.B.C.D/N      address of eth0
#   blue.peer=A.B.C.D      the host-side peer, given a permanent neighbour entry so that
#   blue.peermac=MAC       rxe can resolve the peer's MAC without ARP (modify_qp to RTR
#                          resolves the destination MAC from the neighbour table)
#   blue.mtu=N             eth0 MTU (optional; rxe's active path MTU follows it)
#   blue.ip6=ADDR/N        an IPv6 address of eth0 (optional), without DAD, so that rxe0's
#   blue.peer6=ADDR        GID table holds its GID at READY; the peer's IPv6 address gets a
#                          permanent neighbour entry with blue.peermac (no ND to wait for)
#   blue.cmd=BASE64        shell command to run once rxe0 is ACTIVE (base64: no spaces)
# Serial console markers, one line each, parsed by guest.sh:
#   BLUE-GUEST READY uptime=S   rxe0 is ACTIVE, the command starts next
#   BLUE-GUEST EXIT rc=N        the command's exit status
#   BLUE-GUEST FAIL why         setup failed; the guest powers off
export PATH=/bin:/usr/bin:/usr/sbin
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu
export HOME=/tmp

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

off() {
	sync
	poweroff -f
	reboot -f	# with qemu -no-reboot this exits too
}
fail() {
	echo "BLUE-GUEST FAIL $*"
	off
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }
stamp() { echo "init: $* at $(uptime_s)s"; }

addr='' peer='' peermac='' mtu='' cmd='' addr6='' peer6=''
# shellcheck disable=SC2013 # words, not lines, on purpose
for arg in $(cat /proc/cmdline); do
	case $arg in
	blue.ip=*) addr=${arg#*=} ;;
	blue.peer=*) peer=${arg#*=} ;;
	blue.peermac=*) peermac=${arg#*=} ;;
	blue.mtu=*) mtu=${arg#*=} ;;
	blue.ip6=*) addr6=${arg#*=} ;;
	blue.peer6=*) peer6=${arg#*=} ;;
	blue.cmd=*) cmd=$(echo "${arg#*=}" | base64 -d) ;;
	esac
done
[ -n "$addr" ] || fail "no blue.ip= on the kernel command line"

stamp "loading modules"
# shellcheck disable=SC2013
for m in $(cat /etc/modules.order); do
	insmod "$m" || fail "insmod $m"
done

# virtio-net probes asynchronously on some kernels: wait (bounded) for eth0
i=0
while [ ! -e /sys/class/net/eth0 ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "no eth0 after 10 s"
	sleep 0.1
done
# busybox sh runs its own applets before PATH (FEATURE_SH_STANDALONE), and its `ip`
# lacks `neigh replace`: call iproute2 by path
ip() { /usr/bin/ip "$@"; }

ip link set lo up
[ -n "$mtu" ] && ip link set eth0 mtu "$mtu"
ip addr add "$addr" dev eth0 || fail "ip addr add $addr"
ip link set eth0 up || fail "eth0 up"
if [ -n "$peer" ] && [ -n "$peermac" ]; then
	ip neigh replace "$peer" lladdr "$peermac" dev eth0 nud permanent \
		|| fail "static neighbour $peer"
fi
# after the IPv4 address: rxe lists a netdev's IPv4 GIDs before its IPv6 ones, so the
# IPv4-mapped GID stays at index 1 and the IPv6 one follows it
if [ -n "$addr6" ]; then
	ip -6 addr add "$addr6" dev eth0 nodad || fail "ip -6 addr add $addr6"
	if [ -n "$peer6" ] && [ -n "$peermac" ]; then
		ip -6 neigh replace "$peer6" lladdr "$peermac" dev eth0 nud permanent \
			|| fail "static neighbour $peer6"
	fi
fi

# eth0 transmits only once linkwatch has seen the carrier and swapped in the real qdisc,
# which lags `link set up`: wait (bounded) for operstate up, so READY means traffic flows
i=0
until [ "$(cat /sys/class/net/eth0/operstate 2>/dev/null)" = up ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "eth0 not operationally up after 10 s"
	sleep 0.1
done

# the address is configured first, so rxe0's GID table gets the IPv4-mapped GID
# right after the MAC-derived default GID at index 0
stamp "eth0 configured"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0"
i=0
until grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "rxe0 port 1 not ACTIVE after 10 s"
	sleep 0.1
done

stamp "rxe0 ACTIVE"
echo "--- rdma link"
rdma link show
stamp "rdma link shown"
echo "--- ibv_devinfo -d rxe0"
ibv_devinfo -d rxe0
stamp "ibv_devinfo done"
echo "--- rxe0 GID table (index type gid)"
# only the first entries: the table has 1024 slots, and reading them all costs seconds
# under TCG
for n in 0 1 2 3 4 5 6 7; do
	v=$(cat "/sys/class/infiniband/rxe0/ports/1/gids/$n" 2>/dev/null)
	case $v in 0000:0000:0000:0000:0000:0000:0000:0000|"") continue ;; esac
	t=$(cat "/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$n" 2>/dev/null)
	echo "gid $n $t $v"
done
echo "--- eth0"
ip -br addr show dev eth0
ip link show dev eth0
echo "BLUE-GUEST READY uptime=$(uptime_s)"

rc=0
if [ -n "$cmd" ]; then
	echo "BLUE-GUEST RUN $cmd"
	cd /tmp || true
	sh -c "$cmd" </dev/null
	rc=$?
fi
echo "BLUE-GUEST EXIT rc=$rc uptime=$(uptime_s)"
off
