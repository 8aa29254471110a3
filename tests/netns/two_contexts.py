#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""One process opens a blue device twice (as rdma-core's tests, UCX and Open MPI do)
and connects an RC QP of the first context to one of the second: they share the
device's engine, and the traffic loops back inside it (as rxe_loopback does).

Moves data both ways and checks every byte: SEND (a -> b, b -> a), RDMA WRITE (a -> b),
RDMA READ (b reads a), fetch-and-add and compare-and-swap (a on b). Then checks the
verbs rule that objects of two contexts do not mix (a QP on a's PD with b's CQ: EINVAL).

Usage: two_contexts.py DEVICE [GID_INDEX]   (run with libblue's libibverbs.so.1 on
LD_LIBRARY_PATH). Exit 0: all checked; 1: a check failed (the message says which).
"""
import errno
import os
import struct
import sys
import time

from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SendWR, SGE
import pyverbs.enums as e

SIZE = 64 * 1024          # 64 packets at path MTU 1024: a multi-packet message
WAIT_S = 10               # the bound on any completion
ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)


def fail(msg):
    print(f"two_contexts: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


class Side:
    """One verbs context of the device with its PD, CQ, MR and one RC QP in INIT."""

    def __init__(self, name, dev):
        self.name = name
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 64)
        self.mr = MR(self.pd, SIZE, ACCESS)
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq, cap=cap)
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = ACCESS
        self.qp = QP(self.pd, init, attr)   # to INIT

    def connect(self, peer, gid_index):
        """RTR and RTS against @peer's QP; the destination GID is the device's own."""
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = ACCESS
        attr.path_mtu = e.IBV_MTU_1024
        attr.dest_qp_num = peer.qp.qp_num
        attr.rq_psn = 0x100
        attr.sq_psn = 0x100
        attr.max_dest_rd_atomic = 4
        attr.max_rd_atomic = 4
        attr.min_rnr_timer = 12
        attr.timeout = 14
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        gid = self.ctx.query_gid(1, gid_index)
        gr = GlobalRoute(dgid=gid, sgid_index=gid_index)
        attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        self.qp.to_rts(attr)

    def wait(self, what):
        """One completion, successful, within WAIT_S."""
        end = time.monotonic() + WAIT_S
        while time.monotonic() < end:
            n, wcs = self.cq.poll(1)
            if n:
                wc = wcs[0]
                if wc.status != e.IBV_WC_SUCCESS:
                    fail(f"{self.name}: {what}: completion status {wc.status}")
                return wc
        fail(f"{self.name}: {what}: no completion within {WAIT_S} s")
        return None

    def close(self):
        for o in (self.qp, self.mr, self.cq, self.pd, self.ctx):
            o.close()


def pattern(seed, n):
    return bytes((seed + i * 7) & 0xff for i in range(n))


def send(src, dst, seed, n):
    data = pattern(seed, n)
    src.mr.write(data, n)
    dst.mr.write(bytes(n), n)
    dst.qp.post_recv(RecvWR(sg=[SGE(dst.mr.buf, n, dst.mr.lkey)], num_sge=1))
    src.qp.post_send(SendWR(opcode=e.IBV_WR_SEND, num_sge=1,
                            sg=[SGE(src.mr.buf, n, src.mr.lkey)]))
    src.wait(f"SEND to {dst.name}")
    wc = dst.wait(f"receive from {src.name}")
    if wc.byte_len != n:
        fail(f"{dst.name}: received {wc.byte_len} bytes, not {n}")
    if dst.mr.read(n, 0) != data:
        fail(f"SEND {src.name} -> {dst.name}: the bytes differ")


def rdma(op, local, remote, seed, n):
    """@local WRITEs its buffer into @remote's, or READs @remote's into its own."""
    data = pattern(seed, n)
    if op == e.IBV_WR_RDMA_WRITE:
        local.mr.write(data, n)
        remote.mr.write(bytes(n), n)
    else:
        remote.mr.write(data, n)
        local.mr.write(bytes(n), n)
    wr = SendWR(opcode=op, num_sge=1, sg=[SGE(local.mr.buf, n, local.mr.lkey)])
    wr.set_wr_rdma(remote.mr.rkey, remote.mr.buf)
    local.qp.post_send(wr)
    local.wait("RDMA WRITE" if op == e.IBV_WR_RDMA_WRITE else "RDMA READ")
    got = (remote if op == e.IBV_WR_RDMA_WRITE else local).mr.read(n, 0)
    if got != data:
        fail(f"RDMA {'WRITE' if op == e.IBV_WR_RDMA_WRITE else 'READ'}: the bytes differ")


def atomic(op, local, remote, compare_add, swap):
    """One atomic of @local on @remote's first word; the original value it returned."""
    wr = SendWR(opcode=op, num_sge=1, sg=[SGE(local.mr.buf, 8, local.mr.lkey)])
    wr.set_wr_atomic(remote.mr.rkey, remote.mr.buf, compare_add, swap)
    local.qp.post_send(wr)
    local.wait("atomic")
    return struct.unpack("<Q", local.mr.read(8, 0))[0]


def word(side):
    return struct.unpack("<Q", side.mr.read(8, 0))[0]


def mixing_refused(a, b):
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=a.cq, rcq=b.cq, cap=cap)
    try:
        QP(a.pd, init).close()
    except PyverbsRDMAError as ex:
        if ex.error_code != errno.EINVAL:
            fail(f"a QP with another context's CQ: errno {ex.error_code}, not EINVAL")
        return
    fail("a QP on context a's PD took context b's CQ")


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    dev = sys.argv[1]
    gid_index = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    a = Side("a", dev)
    b = Side("b", dev)      # the device opened a second time in this process
    a.connect(b, gid_index)
    b.connect(a, gid_index)
    send(a, b, 1, SIZE)
    send(b, a, 2, 100)
    rdma(e.IBV_WR_RDMA_WRITE, a, b, 3, SIZE)
    rdma(e.IBV_WR_RDMA_READ, b, a, 4, SIZE)
    b.mr.write(struct.pack("<Q", 1000), 8)
    if atomic(e.IBV_WR_ATOMIC_FETCH_AND_ADD, a, b, 5, 0) != 1000 or word(b) != 1005:
        fail("fetch-and-add: wrong original or result")
    if atomic(e.IBV_WR_ATOMIC_CMP_AND_SWP, a, b, 1005, 0x77) != 1005 or word(b) != 0x77:
        fail("compare-and-swap: wrong original or result")
    mixing_refused(a, b)
    b.close()
    a.close()
    print(f"two_contexts: pid {os.getpid()}: SEND both ways, WRITE, READ, atomics "
          f"between two contexts of {dev}: ok")


if __name__ == "__main__":
    main()
