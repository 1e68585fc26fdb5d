#!/usr/bin/python3
"""Capture a PyTorch training step for tracetwin: execution trace, profiler trace, timing.

Library use (any Python with torch):

    from capture import capture
    capture(step_fn, "mymodel", "out/", warmup=5, measure_steps=20, threads=1)

CLI (bundled workloads live in scripts/workloads/<name>.py):

    /usr/bin/python3 scripts/capture.py --workload mlp --out data/
    /usr/bin/python3 scripts/capture.py --workload mlp --param batch=8 --out /tmp/x
    python3 scripts/capture.py --workload mlp --device cuda --out /tmp/gpu   (PyTorch >= 2.0)
    python3 scripts/capture.py --workload cnn --device cuda --compile --out /tmp/gpu

Writes NAME.et.json.gz (execution trace of exactly one step), NAME.kineto.json.gz (Kineto chrome
trace of another step, when this PyTorch has Kineto; otherwise NAME.profiler.json.gz, the legacy
profiler's events in Kineto's layout) and NAME.meta.json (measured iteration time, provenance).
Only the standard library and torch are used.
"""

import argparse
import datetime
import gzip
import importlib
import json
import os
import platform
import shutil
import socket
import statistics
import sys
import time

import torch

import capture_compile
import capture_dist
import legacy_profiler_export

# At least this many timed steps: a median of fewer is too easily moved by one
# scheduler hiccup on a shared machine.
MIN_MEASURE_STEPS = 10

WORKLOAD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads")


class CaptureError(Exception):
    """Bad arguments or an environment that cannot produce a trace."""


def _et_observer_class():
    """The execution-trace observer of this PyTorch (renamed in 2.0, same methods)."""
    profiler = torch.profiler
    for name in ("ExecutionTraceObserver", "ExecutionGraphObserver"):
        cls = getattr(profiler, name, None)
        if cls is not None:
            return name, cls
    raise CaptureError(
        "torch %s has neither torch.profiler.ExecutionTraceObserver (>= 2.0) nor "
        "ExecutionGraphObserver (1.13); cannot write an execution trace" % torch.__version__)


def _gzip_file(src, dst):
    """gzip src into dst with a fixed header (mtime 0, no file name) and remove src."""
    with open(src, "rb") as fin, open(dst, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as fout:
            shutil.copyfileobj(fin, fout)
    os.remove(src)


def _record_execution_trace(step_fn, path_json, under_profiler=False):
    """Run step_fn once with the ET observer on; the observer writes plain JSON to path_json.

    under_profiler: inside a CPU-only torch.profiler too, for compiled steps: Inductor records
    its kernel launches only while a profiler runs (capture_compile.py).
    """
    observer_name, cls = _et_observer_class()
    observer = cls()
    observer.register_callback(path_json)
    try:
        observer.start()
        if under_profiler:
            # record_shapes: Inductor's launches pass their arguments and kernel_file/
            # kernel_backend to the record function only when the profiler reports input shapes
            # (RecordFunctionFast: profilerEnabled() && report_input_shapes); without them the
            # trace has bare `triton_*` labels (PyTorch 2.11 on an H100: 0 kernels selected).
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                        record_shapes=True):
                step_fn()
        else:
            step_fn()
        observer.stop()
    finally:
        # unregister_callback finalises the file (writes the root node and closes the JSON).
        observer.unregister_callback()
    if not os.path.exists(path_json) or os.path.getsize(path_json) == 0:
        raise CaptureError("the %s wrote nothing to %s" % (observer_name, path_json))
    return observer_name


def _record_profiler_trace(step_fn, out_dir, name, device="cpu"):
    """Run step_fn once under torch.profiler.profile (CPU, record_shapes); write its trace.

    Returns (file name, backend). With Kineto: its own chrome trace, NAME.kineto.json.gz. Without
    (Debian's 1.13): the legacy profiler's events in Kineto's layout (see legacy_profiler_export),
    under another name, NAME.profiler.json.gz, so nothing mistakes it for a real Kineto trace.
    """
    kineto = bool(torch.autograd.kineto_available())
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.startswith("cuda"):
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities, record_shapes=True) as prof:
        step_fn()
        _synchronize(device)
    if kineto:
        backend, plain = "kineto", os.path.join(out_dir, name + ".kineto.json")
        prof.export_chrome_trace(plain)
    else:
        backend, plain = "legacy-autograd-profiler", os.path.join(out_dir, name + ".profiler.json")
        legacy_profiler_export.write_kineto_layout(prof, plain, name)
    if not os.path.exists(plain):
        raise CaptureError("the profiler wrote nothing to %s" % plain)
    _gzip_file(plain, plain + ".gz")
    return os.path.basename(plain) + ".gz", backend


def _summarize_et(path_json):
    """Schema, node count and thread ids of a freshly written ET.

    Some PyTorch versions' observers write invalid JSON (missing commas, unterminated strings).
    The file is still kept -- tracetwin reports such damage with its byte offset -- but the meta
    and a warning say so, since the capture is then of little use.
    """
    try:
        with open(path_json) as f:
            et = json.load(f)
    except ValueError as e:
        print("capture.py: warning: %s is not valid JSON (%s)" % (path_json, e), file=sys.stderr)
        return {"schema": None, "nodes": None, "thread_ids": None, "json_error": str(e)}
    nodes = et.get("nodes", [])
    tids = set()
    for n in nodes:
        if "tid" in n:  # legacy layout (1.0.x)
            tids.add(n["tid"])
        # chakra layouts (PyTorch 2.x) keep it among the attrs
        tids.update(a.get("value") for a in n.get("attrs", []) if a.get("name") == "tid")
    return {"schema": et.get("schema"), "nodes": len(nodes), "thread_ids": sorted(tids)}


def _synchronize(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def time_steps(step_fn, steps, device="cpu", before_step=None):
    """Per-step wall times in milliseconds, no observer or profiler active.

    On a GPU each step is bracketed by device synchronisations, so a step's time includes its
    kernels and not only their launches (what the replay's CUDA events measure too).
    `before_step` runs untimed before each step (a multi-rank capture's barrier).
    """
    samples = []
    for _ in range(steps):
        if before_step is not None:
            before_step()
        _synchronize(device)
        t0 = time.perf_counter()
        step_fn()
        _synchronize(device)
        samples.append((time.perf_counter() - t0) * 1e3)
    return samples


def _cpuinfo_fields():
    """The first processor's "key: value" lines of /proc/cpuinfo ({} when unreadable)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # end of the first processor's block
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def _read_first_line(path):
    try:
        with open(path) as f:
            return f.readline().strip()
    except OSError:
        return ""


def _cache_sizes(cpu_dir="/sys/devices/system/cpu/cpu0"):
    """Data and unified caches as [{"level": "L1", "bytes": N}, ...], smallest first; the same
    sysfs files as tracetwin's host probe (calibration/host_probe.cpp) reads."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    caches = []
    for index in range(16):
        d = os.path.join(cpu_dir, "cache", "index%d" % index)
        level = _read_first_line(os.path.join(d, "level"))
        if not level:
            break
        if _read_first_line(os.path.join(d, "type")) == "Instruction":
            continue
        size = _read_first_line(os.path.join(d, "size"))
        digits = size.rstrip("KMG")
        if not digits.isdigit():
            continue
        caches.append({"level": "L" + level, "bytes": int(digits) * units.get(size[len(digits):], 1)})
    return sorted(caches, key=lambda c: c["bytes"])


def _clock_mhz(cpuinfo):
    """cpufreq's maximum when the kernel has it, else /proc/cpuinfo's figure (as the probe)."""
    khz = _read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    if khz.isdigit():
        return int(khz) / 1000.0
    try:
        return float(cpuinfo.get("cpu MHz", ""))
    except ValueError:
        return None


def _int_or_none(text):
    return int(text) if text.isdigit() else None


def _host_info():
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    cpuinfo = _cpuinfo_fields()
    # Family, model, clock and caches tell two CPUs of one name apart ("AMD EPYC" on a VM):
    # `tracetwin replay` warns when the original ran on another one.
    return {
        "hostname": socket.gethostname(),
        "machine": platform.machine(),
        "cpu_model": cpuinfo.get("model name") or platform.processor() or "unknown",
        "cpu_family": _int_or_none(cpuinfo.get("cpu family", "")),
        "cpu_model_number": _int_or_none(cpuinfo.get("model", "")),
        "clock_mhz": _clock_mhz(cpuinfo),
        "caches": _cache_sizes(),
        "logical_cpus": os.cpu_count(),
        # Timings on a busy shared host are noisy; the load average tells a reader by how much.
        "loadavg_1_5_15": list(load) if load else None,
        "os": platform.platform(),
        "python": platform.python_version(),
        "python_executable": sys.executable,
    }


def _set_threads(threads):
    if threads < 1:
        raise CaptureError("threads must be >= 1, got %d" % threads)
    torch.set_num_threads(threads)


def _device_info(device):
    if not device.startswith("cuda"):
        return {}
    props = torch.cuda.get_device_properties(torch.device(device))
    return {"gpu": {"name": props.name, "multiprocessors": props.multi_processor_count,
                    "memory_bytes": props.total_memory, "cuda": torch.version.cuda}}


def check_device(device):
    """'cpu', 'cuda' or 'cuda:N' that this PyTorch can put a whole workload on."""
    if device == "cpu":
        return device
    if not (device == "cuda" or device.startswith("cuda:")):
        raise CaptureError("--device expects cpu, cuda or cuda:N, got %r" % device)
    if not hasattr(torch, "set_default_device"):
        raise CaptureError("--device %s needs PyTorch >= 2.0 (torch.set_default_device); this is "
                           "torch %s" % (device, torch.__version__))
    if not torch.cuda.is_available():
        raise CaptureError("--device %s: this PyTorch sees no CUDA GPU (torch %s, built for CUDA "
                           "%s)" % (device, torch.__version__, torch.version.cuda))
    return "cuda:0" if device == "cuda" else device


# glibc's mmap and trim thresholds, pinned as tracetwin's measuring commands pin them
# (cli/host_malloc.h): with glibc's sliding defaults the same step pays for page faults in one
# process and not the next. The values are glibc's own ceilings for the mmap threshold and a trim
# threshold no step reaches. MALLOC_*_ environment variables, when set, pin the same settings.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
PINNED_MMAP_THRESHOLD, PINNED_TRIM_THRESHOLD = 32 << 20, 1 << 30
HOST_MALLOC = "default"


def pin_host_malloc():
    """Pins glibc's thresholds in this process; returns "pinned", or "default" off glibc."""
    global HOST_MALLOC
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        if (libc.mallopt(M_MMAP_THRESHOLD, PINNED_MMAP_THRESHOLD) == 1
                and libc.mallopt(M_TRIM_THRESHOLD, PINNED_TRIM_THRESHOLD) == 1):
            HOST_MALLOC = "pinned"
    except (OSError, AttributeError):
        pass
    return HOST_MALLOC


def capture(step_fn, name, out_dir, warmup=5, measure_steps=20, threads=1,
            params=None, extra_meta=None, profiler_trace=True, device="cpu", distributed=False,
            et_under_profiler=False):
    """Capture one training step of step_fn into out_dir.

    step_fn: a callable doing one full step (forward, loss, backward, optimizer.step).
    Order: set threads; `warmup` untimed steps; `measure_steps` timed steps (no observer);
    one step under the ET observer; one step under the profiler (if `profiler_trace`).
    Returns the meta dictionary that was written to NAME.meta.json.
    extra_meta: dict, or callable returning a dict, merged into the meta (e.g. per-op times).
    distributed: this process is one rank of a process group (capture_dist): the timed steps
    start after a barrier, and the job's step (the slowest rank's) joins the meta.
    et_under_profiler: observe the ET step inside a CPU profiler (compiled steps).
    """
    if measure_steps < MIN_MEASURE_STEPS:
        raise CaptureError("measure_steps must be >= %d, got %d"
                           % (MIN_MEASURE_STEPS, measure_steps))
    if warmup < 0:
        raise CaptureError("warmup must be >= 0, got %d" % warmup)
    if not name or os.sep in name:
        raise CaptureError("name must be a non-empty file stem, got %r" % name)
    os.makedirs(out_dir, exist_ok=True)
    _set_threads(threads)

    for _ in range(warmup):
        step_fn()
    samples = time_steps(step_fn, measure_steps, device,
                         before_step=capture_dist.barrier if distributed else None)
    job = capture_dist.job_timing(samples) if distributed else {}

    et_plain = os.path.join(out_dir, name + ".et.json")
    _synchronize(device)
    observer_name = _record_execution_trace(step_fn, et_plain, et_under_profiler)
    et_summary = _summarize_et(et_plain)
    _gzip_file(et_plain, et_plain + ".gz")

    profiler_file, profiler_backend = (None, None)
    if profiler_trace:
        profiler_file, profiler_backend = _record_profiler_trace(step_fn, out_dir, name, device)

    meta = {
        "workload": name,
        "params": dict(params or {}),
        "iteration_ms": statistics.median(samples),
        "iteration_ms_min": min(samples),
        "iteration_ms_max": max(samples),
        # Quartiles show how noisy the host was; a wide spread means re-capture on a quiet one.
        "iteration_ms_p25": statistics.quantiles(samples, n=4)[0],
        "iteration_ms_p75": statistics.quantiles(samples, n=4)[2],
        "samples_ms": samples,
        "timing": {
            "method": "time.perf_counter around each step, median; no observer or profiler active",
            "warmup_steps": warmup,
            "measure_steps": measure_steps,
        },
        "threads": torch.get_num_threads(),
        "host_malloc": HOST_MALLOC,
        "interop_threads": torch.get_num_interop_threads(),
        "device": device,
        "torch_version": torch.__version__,
        "et": dict(et_summary, file=name + ".et.json.gz",
                   observer="torch.profiler." + observer_name),
        "profiler_trace": {"file": profiler_file, "backend": profiler_backend},
        "host": _host_info(),
        "captured_at_utc":
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    meta.update(_device_info(device))
    meta.update(job)
    if extra_meta is not None:
        meta.update(extra_meta() if callable(extra_meta) else extra_meta)
    with open(os.path.join(out_dir, name + ".meta.json"), "w") as f:
        json.dump(meta, f, indent=2, sort_keys=True)
        f.write("\n")
    return meta


# ---------------------------------------------------------------------------------------------
# CLI: bundled workloads


def list_workloads():
    return sorted(f[:-3] for f in os.listdir(WORKLOAD_DIR)
                  if f.endswith(".py") and not f.startswith("_"))


def load_workload(name):
    """Import scripts/workloads/<name>.py. It defines DEFAULTS (dict) and build(params) -> step_fn,
    and may define extra_meta(step_fn, params) -> dict."""
    known = list_workloads()
    if name not in known:
        raise CaptureError("unknown workload %r; known: %s" % (name, ", ".join(known)))
    if WORKLOAD_DIR not in sys.path:
        sys.path.insert(0, WORKLOAD_DIR)
    return importlib.import_module(name)


def configure_amp(mode, device):
    """Set the mixed-precision mode workloads build their steps in (scripts/workloads/_amp.py);
    returns the mode (None: fp32)."""
    if WORKLOAD_DIR not in sys.path:
        sys.path.insert(0, WORKLOAD_DIR)
    import _amp
    try:
        _amp.configure(mode, device)
    except _amp.AmpError as e:
        raise CaptureError(str(e))
    return mode


def check_amp_used(name):
    import _amp
    if _amp.mode() is not None and not _amp.used():
        raise CaptureError("workload %s does not build its step with _common.training_step, so "
                           "--amp %s would not apply to it" % (name, _amp.mode()))


def amp_meta(mode, workload, extra):
    """The meta's "amp" entry (and the workload's module, which scripts/fidelity.py --trace-dir
    re-runs) beside the workload's own extra figures."""
    def merged():
        meta = (extra() if extra is not None else {})
        meta["amp"] = {"mode": mode, "autocast": "forward and loss",
                       "grad_scaler": mode == "fp16"}
        meta["workload_module"] = workload
        return meta
    return merged


def _parse_param(text, defaults):
    if "=" not in text:
        raise CaptureError("--param expects KEY=VALUE, got %r" % text)
    key, value = text.split("=", 1)
    if key not in defaults:
        raise CaptureError("unknown parameter %r; this workload has: %s"
                           % (key, ", ".join(sorted(defaults))))
    kind = type(defaults[key])
    try:
        if kind is bool:
            return key, value.lower() in ("1", "true", "yes", "on")
        return key, kind(value)
    except ValueError:
        raise CaptureError("parameter %s=%r is not a %s" % (key, value, kind.__name__))


def run_workload(name, out_dir, overrides, seed, threads, warmup, steps, as_name=None,
                 device="cpu", amp=None, compile=False):
    device = check_device(device)
    if compile:
        why = capture_compile.check_available(torch, device)
        if why:
            raise CaptureError(why)
    module = load_workload(name)
    amp_mode = configure_amp(amp, device)
    params = dict(module.DEFAULTS)
    for text in overrides:
        key, value = _parse_param(text, module.DEFAULTS)
        params[key] = value
    params["seed"] = seed
    distributed = capture_dist.is_rank()
    if getattr(module, "DISTRIBUTED", False) and not distributed:
        raise CaptureError("workload %r runs on several ranks: give --nproc N" % name)
    if distributed:
        params["rank"], params["world_size"] = capture_dist.init_rank()
        as_name = "%s.rank%d" % (as_name or name, params["rank"])
    cache = None
    if compile:  # a cache per rank: NAME[.rankR].inductor
        cache = capture_compile.prepare_cache(out_dir, as_name or name)
        capture_compile.compile_models(torch)
    # Threads first: some workloads measure per-op times while building.
    _set_threads(threads)
    torch.manual_seed(seed)
    if device != "cpu":
        # Parameters, inputs and targets the workload makes all land on the GPU.
        torch.set_default_device(device)
    step_fn = module.build(params)
    check_amp_used(name)
    if cache and not capture_compile.compiled_models():
        raise CaptureError("--compile: workload %r builds no model through training_step "
                           "(scripts/workloads/_common.py); nothing to compile" % name)
    extra = None
    if hasattr(module, "extra_meta") or cache:
        def extra():
            meta = module.extra_meta(step_fn, params) if hasattr(module, "extra_meta") else {}
            if cache:  # the kernels have all run by now: the cache's manifest
                meta["compile"] = capture_compile.finish(cache, torch)
            return meta
    if amp_mode is not None:
        extra = amp_meta(amp_mode, name, extra)
    meta = capture(step_fn, as_name or name, out_dir, warmup=warmup, measure_steps=steps,
                   threads=threads, params=params, extra_meta=extra, device=device,
                   distributed=distributed, et_under_profiler=bool(cache))
    if distributed:
        capture_dist.finish()
    return meta


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", action="append",
                        help="bundled workload (repeatable); one of: %s"
                        % ", ".join(list_workloads()))
    parser.add_argument("--all", action="store_true", help="capture every bundled workload")
    parser.add_argument("--list", action="store_true", help="print the bundled workloads and exit")
    parser.add_argument("--list-data", action="store_true",
                        help="print the workloads whose traces are bundled in data/ and exit")
    parser.add_argument("--out", help="output directory (required unless --list)")
    parser.add_argument("--name", help="file stem (default: workload name; one workload only)")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="override a workload parameter (one workload only)")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed warm-up steps (default 5)")
    parser.add_argument("--steps", type=int, default=20,
                        help="timed steps, >= %d (default 20)" % MIN_MEASURE_STEPS)
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed (default 0)")
    parser.add_argument("--device", default="cpu",
                        help="cpu (default), cuda or cuda:N: where the workload runs (a GPU "
                        "needs PyTorch >= 2.0)")
    parser.add_argument("--nproc", type=int, default=1,
                        help="ranks on this host, one process each over Gloo: each writes "
                        "NAME.rank<R>.* (docs/distributed.md)")
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile the workload's model (PyTorch >= 2.0); keeps "
                        "Inductor's cache as NAME.inductor for `tracetwin replay --inductor-cache`")
    parser.add_argument("--malloc", choices=["pinned", "default"], default="pinned",
                        help="host allocator of the captured run: pinned (default; glibc's mmap "
                        "and trim thresholds fixed, as `tracetwin replay` runs) or default")
    parser.add_argument("--amp", choices=["bf16", "fp16"],
                        help="mixed precision: forward and loss under torch.autocast in bfloat16 "
                        "or float16 (fp16 with a GradScaler; CUDA only)")
    args = parser.parse_args(argv)
    if args.malloc == "pinned":
        pin_host_malloc()

    if args.list:
        print("\n".join(list_workloads()))
        return 0
    if args.list_data:
        # Workloads with IN_DATA = False are captured on the spot (scripts/fidelity.py) only.
        print("\n".join(w for w in list_workloads() if getattr(load_workload(w), "IN_DATA", True)))
        return 0
    names = list_workloads() if args.all else (args.workload or [])
    if args.nproc > 1 and not capture_dist.is_rank():
        try:
            capture_dist.launch(args.nproc, list(sys.argv[1:] if argv is None else argv))
        except capture_dist.LaunchError as e:
            print("capture.py: error: %s" % e, file=sys.stderr)
            return 2
        return 0
    try:
        if not args.out:
            raise CaptureError("give --out DIR")
        if not names:
            raise CaptureError("give --workload NAME or --all")
        if (args.name or args.param) and len(names) != 1:
            raise CaptureError("--name and --param apply to exactly one --workload")
        for name in names:
            meta = run_workload(name, args.out, args.param, args.seed, args.threads,
                                args.warmup, args.steps, args.name, args.device, args.amp,
                                args.compile)
            print("%-16s %8.3f ms/iter (median of %d)  ET %s, %d nodes, threads %s  %s"
                  % (meta["workload"], meta["iteration_ms"], len(meta["samples_ms"]),
                     meta["et"]["schema"], meta["et"]["nodes"], meta["et"]["thread_ids"],
                     meta["profiler_trace"]["file"] or "no profiler trace"))
    except CaptureError as e:
        print("capture.py: error: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
