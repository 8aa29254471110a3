# shellcheck shell=bash
# Open MPI 4.1 (Debian's openmpi-bin, unmodified) with one rank in each of two namespaces,
# running tests/ucx/mpi_check.c (built here with mpicc): a ping-pong whose bytes are checked
# at sizes from 1 B to 4 MiB (past 64 KiB, UCX's pml takes the rendezvous) and an allreduce
# whose sum is checked; mpi_check's exit status says whether every check held.
# The launch (tests/lib/ucx.sh mpi_run): mpirun runs in namespace A, and its daemon for the
# rank in B is started there by a launch agent (tests/ucx/ns_agent.sh).
# Run: B=build bash tests/lib/runner.sh tests/ucx/test_mpi.sh
#
# Test functions:
#   test_mpi_launch   the launch alone: pml ob1 over btl tcp on the veth (no blue in the data
#                     path), so that a failure of the blue runs below is not the launch's;
#                     and mpi_check itself fails when one byte comes back wrong
#   test_mpi_ucx      on blue: pml ucx and osc ucx over UCX_TLS=rc_v (tests/lib/ucx.sh
#                     ucx_rc_v_env), mpi_check with its one-sided part (MPI_Put/MPI_Get in a
#                     window, which osc ucx serves with a second UCP context in each rank);
#                     both contexts' UCP endpoints must say they run on rc_verbs over blue
#
# Open MPI's options, and why:
#  - --mca pml ucx: Debian's /etc/openmpi/openmpi-mca-params.conf disables it (pml = ^ucx),
#    and on a device that is not mlx* (pml_ucx_devices) it would rank below ob1 anyway
#  - --mca osc ucx: the same file disables osc ucx (osc = ^ucx,pt2pt)
#  - --mca btl ^uct,openib,ofi: the file's own btl exclusions, kept (pml ucx needs no btl)
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh
# shellcheck source=tests/lib/ucx.sh
source tests/lib/ucx.sh

MPI_IP_A=10.201.96.1
MPI_IP_B=10.201.96.2

# mpi_check_ok LOG: mpi_check's rank 0 reported every size and the allreduce as ok, on two
# ranks in two hosts (namespaces)
mpi_check_ok() {
	local log=$1 n
	grep -q '^rank 0 of 2 on ucxa$' "$log" || fail "no rank 0 on ucxa (namespace A)"
	grep -q '^rank 1 of 2 on ucxb$' "$log" || fail "no rank 1 on ucxb (namespace B)"
	n=$(grep -cE '^pingpong [0-9]+ x 10: ok \(0 bad bytes\)$' "$log")
	[ "$n" -eq 10 ] || fail "$n of 10 ping-pong sizes passed"
	grep -qE '^allreduce [0-9]+ x int64: ok \(0 bad elements\)$' "$log" || fail "allreduce not ok"
	grep -q '^mpi_check: PASS$' "$log" || fail "mpi_check did not say PASS"
}

test_mpi_launch() {
	local bin log
	ucx_setup mpi "$MPI_IP_A" "$MPI_IP_B"
	bin=$PWD/$B/tests/ucx/mpi_check
	mkdir -p "${bin%/*}"
	mpi_build "$bin"
	log=$(mktemp)
	on_exit "rm -f $log"
	mpi_run "$log" --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$UCX_IF" \
		"$bin" || fail "mpirun exited $?"
	mpi_check_ok "$log"
	# the check can fail: one flipped byte in rank 1's last 4 MiB answer
	mpi_run "$log" --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$UCX_IF" \
		-x MPI_CHECK_CORRUPT=1 "$bin" && fail "mpirun exited 0 with a corrupted byte"
	grep -q '^pingpong 4194304 x 10: FAIL (1 bad bytes)$' "$log" ||
		fail "mpi_check did not report the one corrupted byte"
	grep -q '^mpi_check: FAIL$' "$log" || fail "mpi_check did not say FAIL"
}

test_mpi_ucx() {
	local bin log fwd=() v
	ucx_setup mpi "$MPI_IP_A" "$MPI_IP_B"
	bin=$PWD/$B/tests/ucx/mpi_check
	mkdir -p "${bin%/*}"
	mpi_build "$bin"
	log=$(mktemp)
	on_exit "rm -f $log"
	ucx_rc_v_env
	# mpirun hands the ranks what -x names: UCX_ENV's variables, set in its environment
	for v in $UCX_ENV; do
		export "${v?}"
		fwd+=(-x "${v%%=*}")
	done
	# (UCX 1.13's async thread asserted "ucp_worker.c:773 ... EVENT_ASYNC_CB" in 1 run in
	# 3-5 while blue's channel fd was readable for every frame: compat/cq.c, runtime/cq.h)
	mpi_run "$log" --mca pml ucx --mca osc ucx --mca btl ^uct,openib,ofi "${fwd[@]}" \
		"$bin" rma || fail "mpirun exited $?"
	mpi_check_ok "$log"
	grep -q '^rma put+get 524288 B: ok (0 bad bytes)$' "$log" || fail "the one-sided part did not pass"
	# per rank: pml ucx's endpoint (tag lanes) and osc ucx's (rma lanes), both rc_verbs
	for v in ucxa ucxb; do
		grep -qE "\\[$v:[0-9]+ *:0\\] .*ep_cfg\\[[0-9]+\\]: tag\\(rc_verbs/$UCX_IF:1" "$log" ||
			fail "rank on $v: pml ucx's tag lanes are not on rc_verbs/$UCX_IF:1"
		grep -qE "\\[$v:[0-9]+ *:0\\] .*ep_cfg\\[[0-9]+\\]: rma\\(rc_verbs/$UCX_IF:1" "$log" ||
			fail "rank on $v: osc ucx's rma lanes are not on rc_verbs/$UCX_IF:1"
	done
	! grep -qE 'UCX +(ERROR|WARN)' "$log" || fail "UCX printed errors or warnings"
}
