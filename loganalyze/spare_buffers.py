"""Read buffers used again once nothing refers to them any more.

A large file read in 16 MiB chunks, each into a new buffer, costs the kernel a page fault
and a zeroed page for every 4 KiB it reads, and a zero fill of the whole buffer before the
read (a 1 GiB oneDNN log: 75,000 of the ingest's 235,000 faults; with this, 0.93x the
ingest's wall time; docs/benchmarks.md, sixteenth session).  :class:`SpareBuffers` hands out a buffer it
handed out before, instead, as soon as nothing but itself refers to it.

Whoever reads a buffer's bytes holds a reference to it: the line batches made from it,
numpy arrays over it (``np.frombuffer`` keeps it as their base), Arrow buffers over it
(``pa.py_buffer`` holds a Python buffer view, and a view holds its object), memoryviews,
the hash thread's queue.  So a buffer whose reference count is back to what the pool's own
list gives it can no longer be read by anyone, and the next chunk can be read into it.
"""
from __future__ import annotations

import sys


def _free_count() -> int:
    """The reference count :meth:`SpareBuffers.take` sees for a buffer only its list holds
    (measured, not assumed: interpreters count the call's own reference differently)."""
    held = [bytearray()]
    return sys.getrefcount(held[0])


_FREE = _free_count()


class SpareBuffers:
    """Buffers for one reader, reused when free; at most ``keep`` are kept track of."""

    def __init__(self, keep: int = 8) -> None:
        self._held: list[bytearray] = []
        self._keep = keep
        #: buffers reused, and made (for tests and measurements)
        self.reused = self.made = 0

    def take(self, size: int) -> bytearray:
        """A buffer of ``size`` bytes: one handed out before that nothing refers to any more
        (its bytes are left over from its last use: the caller overwrites them), else a
        new one."""
        held = self._held
        for i in range(len(held)):
            if sys.getrefcount(held[i]) == _FREE:
                buf = held[i]
                self.reused += 1
                if len(buf) < size:
                    buf.extend(bytes(size - len(buf)))
                elif len(buf) > size:
                    del buf[size:]
                return buf
        buf = bytearray(size)
        self.made += 1
        if len(held) < self._keep:
            held.append(buf)
        return buf
