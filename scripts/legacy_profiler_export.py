"""Write the events of a torch.profiler run made WITHOUT Kineto in Kineto's trace layout.

Debian's PyTorch 1.13 is built without Kineto (torch.autograd.kineto_available() is False).
torch.profiler.profile then falls back to the legacy autograd profiler, whose export_chrome_trace
writes a bare JSON list ({"name","ph","ts","dur","tid","pid":"CPU functions","args":{}}): no
category, no shapes, no sequence numbers -- nothing a Kineto reader can use. The events themselves
(prof.events()) do carry input shapes, sequence numbers, forward thread ids and the record scope,
so this module writes them as a Kineto-style object: {"schemaVersion", "traceEvents": [...]}
with `cat` "cpu_op" (or "user_annotation" for record_function labels such as
Optimizer.step#SGD.step), `args` "Input Dims", "Ev Idx" and, for autograd ops, "Sequence number"
and "Fwd thread id" -- the key names Kineto uses.

What it cannot have: "External id" and "Record function id" (the legacy profiler has no such
ids), GPU events, and sub-microsecond times (legacy timestamps are whole microseconds, relative to
the profiler start, not epoch-based). The top-level key "tracetwinSource" says where it came from.
"""
import json
import os

import torch

# RecordScope.USER_SCOPE: record_function() labels, which Kineto files under user_annotation.
_USER_SCOPE = int(torch._C._profiler.RecordScope.USER_SCOPE)


def _event(index, e, pid):
    args = {"Input Dims": e.input_shapes or [], "Ev Idx": index}
    # As Kineto does: a sequence number when the op has one, a forward thread only on backward ops.
    if e.sequence_nr is not None and e.sequence_nr >= 0:
        args["Sequence number"] = e.sequence_nr
    if e.fwd_thread:
        args["Fwd thread id"] = e.fwd_thread
    return {
        "ph": "X",
        "cat": "user_annotation" if e.scope == _USER_SCOPE else "cpu_op",
        "name": e.name,
        "pid": pid,
        "tid": e.thread,
        "ts": e.time_range.start,
        "dur": e.time_range.elapsed_us(),
        "args": args,
    }


def write_kineto_layout(prof, path, trace_name):
    """Write prof.events() (a finished torch.profiler.profile) to `path` as plain JSON."""
    pid = os.getpid()
    events = sorted(prof.events(), key=lambda e: (e.time_range.start, e.id))
    trace = {
        "schemaVersion": 1,
        "traceName": trace_name,
        "displayTimeUnit": "ms",
        "tracetwinSource": "torch %s legacy autograd profiler events (no Kineto), written by "
                           "scripts/capture.py; ts/dur whole microseconds from profiler start"
                           % torch.__version__,
        "traceEvents": [_event(i, e, pid) for i, e in enumerate(events)],
    }
    with open(path, "w") as f:
        json.dump(trace, f)
