"""The end of the event array (grammars/trace_container.scan_tail): looked for first in the
last bytes of the window, with the answer of the whole window."""
from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from grammars import trace_container as tc

FIRST = tc.FIRST_TAIL_BYTES


def _trace(events: int, pad: int, last_pad: int, trailing: int, container: str, cut: int) -> bytes:
    body = [{"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1,
             "args": {"pad": "x" * pad, "inner": [{"ph": "X", "name": "not an event"}]}} for i in range(events)]
    body[-1]["args"]["pad"] = "y" * last_pad  # a last event longer than the first try
    if container == "array":
        text = json.dumps(body)
    else:
        text = json.dumps({"schemaVersion": 1, "traceEvents": body, "traceName": "t",
                           "deviceProperties": [{"name": "z" * trailing}]})
    data = text.encode()
    return data[:len(data) - min(cut, len(data) // 2)]


@settings(max_examples=60, deadline=None)
@given(events=st.integers(1, 400), pad=st.integers(0, 2000), last_pad=st.sampled_from([0, 10, FIRST, 3 * FIRST]),
       trailing=st.sampled_from([0, 100, FIRST - 50, 2 * FIRST]), container=st.sampled_from(["array", "object"]),
       cut=st.sampled_from([0, 0, 1, 7, 300, FIRST + 5]))
@example(events=300, pad=2000, last_pad=0, trailing=0, container="object", cut=0)
@example(events=300, pad=2000, last_pad=3 * FIRST, trailing=0, container="object", cut=0)
@example(events=300, pad=2000, last_pad=0, trailing=2 * FIRST, container="object", cut=0)
@example(events=300, pad=2000, last_pad=0, trailing=0, container="array", cut=300)
def test_the_first_try_gives_the_whole_windows_answer(events, pad, last_pad, trailing, container, cut):
    data = _trace(events, pad, last_pad, trailing, container, cut)
    events_at = data.index(b"[", data.index(b"traceEvents") if container == "object" else 0)
    window = 4 << 20
    tail_at = max(events_at, len(data) - window)
    tail = data[tail_at:]
    whole = tc._scan_tail(tail, tail_at, container, events_at)
    assert tc.scan_tail(tail, tail_at, container, events_at) == whole
    if cut == 0:
        assert whole.status == "complete" and data[whole.events_end:whole.events_end + 1] == b"]"
        assert whole.keys == ([] if container == "array" else ["traceName", "deviceProperties"])


def test_the_first_try_is_taken_on_a_long_window():
    data = _trace(400, 2000, 0, 0, "object", 0)
    assert len(data) > 2 * FIRST
    events_at = data.index(b"[")
    calls = []
    real = tc._scan_tail

    def spying(tail, tail_at, container, at, **kw):
        calls.append(len(tail))
        return real(tail, tail_at, container, at, **kw)

    tc._scan_tail = spying
    try:
        found = tc.scan_tail(data[events_at:], events_at, "object", events_at)
    finally:
        tc._scan_tail = real
    assert found.status == "complete" and calls == [FIRST]
