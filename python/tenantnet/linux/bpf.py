"""DSCP tagging by source address as an eBPF program on a device's clsact egress hook:
how a hypervisor marks each tenant's packets for switches that classify by DSCP
(QShare's tenant queues; this kernel has no ``skbedit`` action). The program is
assembled here (no compiler needed), loaded with the ``bpf(2)`` system call and
attached over netlink (pyroute2).

For an IPv4 packet whose source address is in the table it rewrites the DSCP (the top
six bits of the TOS byte; the ECN bits are kept) and patches the header checksum
(``bpf_l3_csum_replace``); every packet passes (``TC_ACT_OK``).
"""

from __future__ import annotations

import ctypes
import ipaddress
import os
import struct
from collections.abc import Sequence
from typing import Any

from ..errors import ScenarioError

SYS_BPF = 321
"""``bpf(2)`` on x86-64."""
BPF_PROG_LOAD = 5
BPF_PROG_TYPE_SCHED_CLS = 3
CLSACT_EGRESS = 0xFFFFFFF3
ETH_HLEN = 14
HELPER = {"skb_store_bytes": 9, "l3_csum_replace": 10, "skb_load_bytes": 26}
MAX_TAGS = 256


def _insn(code: int, dst: int = 0, src: int = 0, off: int = 0, imm: int = 0) -> bytes:
    return struct.pack("<BBhi", code, (src << 4) | dst, off, imm)


def _mov(dst: int, imm: int) -> bytes:
    return _insn(0xB7, dst, imm=imm)


def _movx(dst: int, src: int) -> bytes:
    return _insn(0xBF, dst, src)


def _call(helper: str) -> bytes:
    return _insn(0x85, imm=HELPER[helper])


def _load(offset: int, fp_off: int, size: int) -> list[bytes]:
    """r0 = bpf_skb_load_bytes(skb, offset, fp + fp_off, size) (skb kept in r6)."""
    return [_movx(1, 6), _mov(2, offset), _movx(3, 10), _insn(0x07, 3, imm=fp_off),
            _mov(4, size), _call("skb_load_bytes")]


def program(tags: Sequence[tuple[str, int]]) -> bytes:
    """The program's instructions for `tags`, (IPv4 source address, DSCP) pairs."""
    if not 0 < len(tags) <= MAX_TAGS:
        raise ScenarioError(f"DSCP tagging takes 1 to {MAX_TAGS} addresses, got {len(tags)}")
    head = [_movx(6, 1),
            *_load(12, -8, 2), _insn(0x55, 0, off=0, imm=0),  # jne r0, 0 -> out (patched)
            _insn(0x69, 7, 10, -8),                             # r7 = ethertype
            _insn(0x55, 7, off=0, imm=0x0008),                  # jne r7, IPv4 -> out
            *_load(ETH_HLEN + 12, -8, 4), _insn(0x55, 0, off=0, imm=0),
            _insn(0x61, 7, 10, -8)]                             # r7 = source address
    # each address: jeq32 r7, addr -> its move; the moves then jump to `set`
    n = len(tags)
    jumps = []
    for i, (addr, _) in enumerate(tags):
        imm = int.from_bytes(ipaddress.IPv4Address(addr).packed, "little")
        imm = imm - (1 << 32) if imm >= 1 << 31 else imm
        # after this jump: the remaining jumps, the `ja out`, then the moves before i's
        jumps.append(_insn(0x16, 7, off=(n - 1 - i) + 1 + 2 * i, imm=imm))
    moves = []
    for i, (_, dscp) in enumerate(tags):
        if not 0 <= dscp <= 63:
            raise ScenarioError(f"DSCP {dscp}: expected 0 to 63")
        moves += [_mov(8, dscp << 10), _insn(0x05, off=2 * (n - 1 - i))]  # ja set
    tail = [*_load(ETH_HLEN, -16, 2), _insn(0x55, 0, off=0, imm=0),
            _insn(0x69, 7, 10, -16),                    # r7 = version/IHL and TOS
            _movx(9, 7), _insn(0x57, 9, imm=0x03FF),   # keep version/IHL and ECN
            _insn(0x4F, 9, 8),                          # r9 |= DSCP << 2 << 8
            _insn(0x1D, 9, 7, off=0),                  # jeq r9, r7 -> out (patched)
            _movx(1, 6), _mov(2, ETH_HLEN + 10), _movx(3, 7), _movx(4, 9), _mov(5, 2),
            _call("l3_csum_replace"),
            _insn(0x6B, 10, 9, -16),                    # the new word on the stack
            _movx(1, 6), _mov(2, ETH_HLEN), _movx(3, 10), _insn(0x07, 3, imm=-16),
            _mov(4, 2), _mov(5, 0), _call("skb_store_bytes")]
    out = [_mov(0, 0), _insn(0x95)]
    insns = [*head, *jumps, _insn(0x05, off=len(moves) + len(tail)), *moves, *tail, *out]
    # point every "-> out" jump (offset 0 placeholder, to the end) at `out`
    exit_at = len(insns) - 2
    fixed = []
    for k, raw in enumerate(insns):
        code, regs, off, imm = struct.unpack("<BBhi", raw)
        if code in (0x55, 0x1D) and off == 0:
            raw = struct.pack("<BBhi", code, regs, exit_at - k - 1, imm)
        fixed.append(raw)
    return b"".join(fixed)


def load(tags: Sequence[tuple[str, int]]) -> int:
    """Loads the program for `tags` into the kernel; its file descriptor."""
    code = program(tags)
    insns = ctypes.create_string_buffer(code, len(code))
    license_ = ctypes.create_string_buffer(b"GPL")
    log = ctypes.create_string_buffer(65536)
    attr = struct.pack("<IIQQIIQII16s", BPF_PROG_TYPE_SCHED_CLS, len(code) // 8,
                       ctypes.addressof(insns), ctypes.addressof(license_), 1, len(log),
                       ctypes.addressof(log), 0, 0, b"tn_dscp")
    buf = ctypes.create_string_buffer(attr + b"\0" * (144 - len(attr)), 144)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(SYS_BPF, BPF_PROG_LOAD, buf, ctypes.c_uint(144))
    if fd < 0:
        err = ctypes.get_errno()
        why = log.value.decode(errors="replace").strip().splitlines()[-3:]
        raise ScenarioError(f"the kernel refused the DSCP tagging program: "
                            f"{os.strerror(err)}{': ' + ' / '.join(why) if why else ''}")
    return int(fd)


def attach(ipr: Any, index: int, tags: Sequence[tuple[str, int]]) -> None:
    """Tags the egress of device `index` (pyroute2 `ipr`, in the device's namespace)."""
    fd = load(tags)
    try:
        ipr.tc("add", "clsact", index)
        ipr.tc("add-filter", "bpf", index, ":1", fd=fd, name="tn_dscp",
               parent=CLSACT_EGRESS, classid=1, direct_action=True)
    finally:
        os.close(fd)
