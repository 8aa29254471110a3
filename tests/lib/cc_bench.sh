# shellcheck shell=bash
# Helpers the congestion-control bench (tests/bench/cc.sh) and its short test
# (tests/netns/test_cc.sh) share, on top of the switch (tests/lib/switch.sh). Source after
# netns.sh and switch.sh, with on_exit defined (runner.sh or tests/bench/lib.sh).
# Needs $BLUECTL and $B.

# rxq_steer SWNS PORT QUEUE: the packets that enter the switch namespace SWNS on PORT
# leave toward the receiver so that they arrive on its RX queue QUEUE (bpf/switch_rxq.bpf.c
# says why and how). The program is loaded and pinned once per shell under
# /sys/fs/bpf/blue-rxq-<pid> (removed on exit); each port gets a clsact ingress filter
# and a map entry.
rxq_steer() {
	local ns=$1 port=$2 q=$3 pin=/sys/fs/bpf/blue-rxq-$BASHPID ifx
	if [ ! -e "$pin/prog" ]; then
		mkdir -p "$pin"
		on_exit "rm -rf $pin"
		bpftool prog load "$B/bpf/switch_rxq.bpf.o" "$pin/prog" type classifier \
			pinmaps "$pin" || { echo "rxq_steer: cannot load switch_rxq" >&2; return 1; }
	fi
	ifx=$(ip -n "$ns" -j link show "$port" | sed -nE 's/.*"ifindex":([0-9]+).*/\1/p')
	[ -n "$ifx" ] || { echo "rxq_steer: no port $port in $ns" >&2; return 1; }
	ns_exec "$ns" tc qdisc replace dev "$port" clsact || return
	ns_exec "$ns" tc filter add dev "$port" ingress bpf object-pinned "$pin/prog" da || return
	# shellcheck disable=SC2046 # four byte words each, split on purpose
	bpftool map update pinned "$pin/sw_rxq" key $(u32_le "$ifx") value $(u32_le "$q")
}

# u32_le N: N as four little-endian bytes, the way bpftool takes a key or value
u32_le() {
	printf '%d %d %d %d' $(($1 & 255)) $((($1 >> 8) & 255)) $((($1 >> 16) & 255)) \
		$((($1 >> 24) & 255))
}

# qp_sampler NS IF FILE VAR: in the background, `bluectl qp list IF --json` in NS every
# 0.2 s, one snapshot per line appended to FILE (the QP contexts go with their QPs; the
# programs linger after the run so that the last snapshots hold the final counters). The
# PID goes to VAR; it is killed on exit, or earlier with qp_sampler_stop VAR.
qp_sampler() {
	local ns=$1 ifname=$2 file=$3
	: >"$file"
	ns_bg "$ns" "$4" bash -c 'while :; do "$0" qp list "$1" --json 2>/dev/null |
		tr -d "\n"; echo; sleep 0.2; done >>"$2"' "$BLUECTL" "$ifname" "$file"
}

qp_sampler_stop() {
	local pid=${!1}
	# under set -e too: the status of a killed job is no failure here
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# qp_max FILE FIELD [QPN]: the largest value FIELD took in any snapshot of FILE (a
# qp_sampler file), over every QP, or QP QPN (decimal); nothing when no QP was seen.
qp_max() {
	python3 - "$@" <<'EOF'
import json, sys
path, field = sys.argv[1], sys.argv[2]
want = int(sys.argv[3]) if len(sys.argv) > 3 else None
best = None
for line in open(path):
    try:
        snap = json.loads(line)
    except ValueError:
        continue
    for q in snap.get("qps", []):
        if want is not None and q["qpn"] != want:
            continue
        v = q.get(field)
        if v is not None and (best is None or v > best):
            best = v
if best is not None:
    print(best)
EOF
}

# qp_min_nonzero FILE FIELD: the smallest non-zero value FIELD took (the lowest rate a
# paced QP ran at, say); nothing when it was never non-zero.
qp_min_nonzero() {
	python3 - "$@" <<'EOF'
import json, sys
path, field = sys.argv[1], sys.argv[2]
best = None
for line in open(path):
    try:
        snap = json.loads(line)
    except ValueError:
        continue
    for q in snap.get("qps", []):
        v = q.get(field)
        if v and (best is None or v < best):
            best = v
if best is not None:
    print(best)
EOF
}
