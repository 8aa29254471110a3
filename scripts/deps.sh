#!/usr/bin/env bash
# Installs the Debian packages blue needs to build and test. Idempotent: it only
# calls apt-get when something is missing, and runs `apt-get update` first.
set -euo pipefail
pkgs=(
  make gcc clang llvm pkg-config
  libbpf-dev libxdp-dev xdp-tools bpftool libelf-dev zlib1g-dev libisal-dev
  libcriterion-dev systemtap-sdt-dev gcc-multilib libclang-rt-14-dev valgrind
  iproute2 iputils-ping netcat-openbsd ethtool
  python3 python3-scapy tshark tcpdump iperf3 sockperf
  qemu-system-x86 linux-image-amd64 busybox-static rdma-core ibverbs-utils
  ibverbs-providers libibverbs-dev perftest cpio xz-utils kmod
  bpftrace gnuplot-nox
  librdmacm-dev rdmacm-utils qperf
  python3-pyverbs
  ucx-utils libfabric-bin
  openmpi-bin libopenmpi-dev
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#pkgs[@]} packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing packages: ${missing[*]}; run 'make deps' as root" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
