"""PyTorch NVTX range names and NVIDIA PyProf outputs.

- ``torch.autograd.profiler.emit_nvtx()`` names each operator's NVTX range::

      aten::conv2d, seq = 12, sizes = [[64, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []]
      ConvolutionBackward0, stashed seq=12          (older backward ranges)
      autograd::engine::evaluate_function: AddmmBackward0, seq = 30

  :func:`parse_nvtx_name` reads them into operator, sequence number, direction and shapes.
- ``python -m pyprof.parse`` prints one Python dict literal per kernel; :func:`parse_dict_line`
  reads it with :func:`ast.literal_eval` (literals only, never ``eval``).
- ``python -m pyprof.prof`` prints a table (``--csv``, columnated, or space separated) whose
  headers are :data:`PROF_HEADERS`.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache

import pyparsing as pp

# --------------------------------------------------------------------------- emit_nvtx names
integer = pp.Regex(r"-?\d+").set_parse_action(lambda t: int(t[0]))
LBR, RBR = pp.Suppress("["), pp.Suppress("]")
shape = pp.Forward()
shape <<= pp.Group(LBR + pp.Optional(pp.DelimitedList(integer | shape)) + RBR)
#: ``sizes = [[64, 3, 224, 224], [64, 3, 7, 7], []]``
sizes_field = pp.Suppress(pp.Regex(r",\s*sizes\s*=\s*")) + shape("sizes")
#: ``, seq = 12`` (forward and newer backward) or ``, stashed seq=12`` (older backward)
seq_field = pp.Regex(r",\s*(?P<stashed>stashed )?seq\s*=\s*(?P<seq>\d+)")
op_name = pp.Regex(r"[^,]+")("op")
nvtx_name = op_name + pp.Optional(seq_field) + pp.Optional(sizes_field) + pp.StringEnd()

BACKWARD_PREFIX = "autograd::engine::evaluate_function: "


@dataclass(frozen=True)
class NvtxName:
    op: str
    seq: int | None
    direction: str | None     # fwd | bwd | None (no PyTorch markers)
    shapes: tuple | None      # tuple of shapes (tuples of ints)
    shapes_text: str | None


def _tupled(x):
    return tuple(_tupled(v) for v in x) if isinstance(x, (list, pp.ParseResults)) else x


_OP_RE = r"^(?P<op>[^,]+?)\s*"
_SEQ_RE = r",\s*(?P<stashed>stashed )?seq\s*=\s*(?P<seq>\d+)"
#: the same structure as ``nvtx_name`` as one regex: names differ mostly by their seq, so the
#: sizes list (few distinct) is what goes through the grammar, once per distinct list
NVTX_NAME_RE = re.compile(_OP_RE + f"(?:{_SEQ_RE})?" + r"(?:,\s*sizes\s*=\s*(?P<sizes>\[.*\]))?\s*$")
#: the start of ``NVTX_NAME_RE`` up to the sequence number
NVTX_SEQ_RE = re.compile(_OP_RE + _SEQ_RE)


@lru_cache(maxsize=4096)
def parse_sizes(text: str):
    """``[[64, 3], [], [7]]`` -> ((64, 3), (), (7,))."""
    shapes = _tupled(shape.parse_string(text, parse_all=True))
    if len(shapes) == 1 and isinstance(shapes[0], tuple):  # the Group wraps the list
        shapes = shapes[0]
    return shapes


@lru_cache(maxsize=65536)
def parse_nvtx_name(text: str | None) -> NvtxName | None:
    """Operator, seq, direction and shapes of an NVTX range name; the op is the whole text
    (and the rest None) for names that are not emit_nvtx names."""
    if text is None:
        return None
    m = NVTX_NAME_RE.match(text)
    try:
        if m is None:
            nvtx_name.parse_string(text, parse_all=True)  # the grammar decides what the regex missed
            raise pp.ParseException(text)
        shapes = parse_sizes(m.group("sizes")) if m.group("sizes") else None
    except pp.ParseException:
        return NvtxName(text, None, None, None, None)
    op = m.group("op").strip()
    stashed = bool(m.group("stashed"))
    seq = int(m.group("seq")) if m.group("seq") is not None else None
    shapes_text = m.group("sizes")
    if op.startswith(BACKWARD_PREFIX):
        op = op[len(BACKWARD_PREFIX):].strip()
        direction = "bwd"
    elif stashed or "Backward" in op:
        direction = "bwd"
    elif seq is not None or shapes is not None:
        direction = "fwd"
    else:
        direction = None
    return NvtxName(op, seq, direction, shapes, shapes_text)


def nvtx_seq_template(text: str) -> tuple[str, int] | None:
    """(``text`` with its sequence number written ``0``, the number) for a name that has one
    right after the operator (``aten::mm, seq = 7, sizes = ...``), else None.

    :func:`parse_nvtx_name` gives both texts the same operator, direction and shapes:
    ``NVTX_NAME_RE`` can only take the sequence number from that place, as the same whole run
    of digits (the character after the run is not a digit), and a run of digits in its place
    matches or fails the rest of the pattern alike.  So names that differ only in their
    sequence number (nearly all of a profile's) are parsed once."""
    m = NVTX_SEQ_RE.match(text)
    if m is None:
        return None
    start, end = m.span("seq")
    return text[:start] + "0" + text[end:], int(m.group("seq"))


# --------------------------------------------------------------------------- pyprof parse output
#: keys every ``pyprof.parse`` record has (the sniffer looks for the first two)
DICT_KEYS = ("kShortName", "kDuration", "kLongName", "dir", "op", "seqId")
DICT_LINE_RE = re.compile(r"^\s*\{\s*'(?:kShortName|kLongName|kDuration)'\s*:")


def parse_dict_line(line: str) -> dict:
    """One ``pyprof.parse`` record.  Raises ValueError with a reason for anything else."""
    try:
        rec = ast.literal_eval(line.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(f"not a Python dict literal ({type(exc).__name__})") from None
    if not isinstance(rec, dict):
        raise ValueError("not a dict")
    if "kDuration" not in rec or ("kShortName" not in rec and "kLongName" not in rec):
        raise ValueError("no kShortName/kLongName and kDuration")
    return rec


def parse_marker(marker: str) -> dict | None:
    """A ``marker`` entry: a string holding the repr of ``{'mod', 'op', 'args': [...]}``."""
    try:
        val = ast.literal_eval(marker)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return val if isinstance(val, dict) else None


# --------------------------------------------------------------------------- pyprof prof output
#: ``-c`` option -> header printed by pyprof.prof (pyprof/prof/output.py)
PROF_HEADERS = {
    "idx": "Idx", "seq": "SeqId", "altseq": "AltSeqId", "tid": "TId", "layer": "Layer", "trace": "Trace",
    "dir": "Direction", "sub": "Sub", "mod": "Module", "op": "Op", "kernel": "Kernel", "params": "Params",
    "sil": "Sil(ns)", "tc": "TC", "device": "Device", "stream": "Stream", "grid": "Grid", "block": "Block",
    "flops": "FLOPs", "bytes": "Bytes", "callid": "CallId", "input_callids": "InputCallIds",
    "unique_name": "UniqueName", "kernel_lname": "KernelLongName",
}
PROF_COLUMNS = {v: k for k, v in PROF_HEADERS.items()}
PROF_HEADER_RE = re.compile(r"(?:^|[\s,\"])(?:Sil\(ns\)|Kernel)(?:$|[\s,\"])")


def prof_header(cells: list[str]) -> list[str] | None:
    """Canonical columns of a prof header, or None when it is not one (needs Kernel or Sil)."""
    cols = [PROF_COLUMNS.get(c.strip()) for c in cells]
    known = [c for c in cols if c]
    if len(known) < 2 or not ({"kernel", "sil"} & set(known)) or None in cols:
        return None
    return cols  # type: ignore[return-value]


#: ``"N=1,C=1,H=28,W=28,K=32,P=26,Q=26,R=3,S=3,ph=0,pw=0,U=1,V=1,dil=1,1,g=1,type=fp32"``
PARAM_RE = re.compile(r"([A-Za-z_]+)=([^,]*(?:,\d+)*)")


def parse_params(text: str) -> dict[str, str]:
    return {k: v for k, v in PARAM_RE.findall(text or "")}


DIRECTIONS = {"fprop": "fwd", "bprop": "bwd", "fwd": "fwd", "bwd": "bwd"}
