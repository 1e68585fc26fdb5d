"""torch.compile captures for scripts/capture.py --compile.

A compiled step's fused kernels reach the execution trace only while torch.profiler runs: Inductor
wraps each Triton launch in a record function (kernel name, kernel_file, kernel_backend "triton")
under `autograd_profiler._is_profiler_enabled`, which an ExecutionTraceObserver alone never sets.
capture.py therefore observes the step inside a CPU-only profiler when compiling. This module does
the rest:

- check_available: torch.compile exists (PyTorch >= 2.0; Debian's 1.13 has none), and Triton for a
  GPU; on a CPU, Inductor's kernels are C++ the trace does not record as ops (said, not refused);
- prepare_cache: a fresh Inductor cache beside the capture (NAME.inductor), kept for
  `tracetwin replay --inductor-cache` to launch the very kernels that ran;
- compile_models: the bundled workloads' model wrapped in torch.compile (scripts/workloads/_common);
- finish: the cache's manifest, tracetwin_kernels.json: for every kernel launched, the source file
  the trace names, its arguments and types, the launch config it ran with (block sizes, warps),
  its grid kind and the directory of its binary. Without it a replay can find only kernels whose
  config Inductor autotuned (.best_config).
Only the standard library and torch are used.
"""

import json
import os
import shutil
import sys

MANIFEST = "tracetwin_kernels.json"
MANIFEST_FORMAT = "tracetwin-inductor-kernels/1"
WORKLOAD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads")


def check_available(torch, device):
    """None when this PyTorch can compile the step on `device`, else why not."""
    if not hasattr(torch, "compile"):
        return ("--compile needs torch.compile (PyTorch >= 2.0); this is torch %s, which has none "
                "(Debian's python3-torch is 1.13: capture compiled steps with a pip PyTorch)"
                % torch.__version__)
    if device.startswith("cuda"):
        try:
            import triton  # noqa: F401  (Inductor's GPU kernels are Triton's)
        except ImportError as e:
            return "--compile on %s needs Triton for Inductor's kernels: %s" % (device, e)
    else:
        print("capture.py: note: on the CPU Inductor's kernels are C++ functions that the "
              "execution trace does not record as ops; only GPU captures select them",
              file=sys.stderr)
    return None


def prepare_cache(out_dir, name):
    """A fresh Inductor (and Triton) cache for this capture; returns its directory."""
    cache = os.path.abspath(os.path.join(out_dir, name + ".inductor"))
    # Fresh: a warm cache would hold other runs' binaries beside this one's.
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    # Inductor's own default under its cache dir, set before any kernel is compiled.
    os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton", "0")
    return cache


_compiled_models = []


def compile_models(torch):
    """Makes training_step (scripts/workloads/_common.py) call torch.compile(model)."""
    if WORKLOAD_DIR not in sys.path:
        sys.path.insert(0, WORKLOAD_DIR)
    import _common

    def wrap(model):
        _compiled_models.append(type(model).__name__)
        return torch.compile(model)
    _common.MODEL_WRAPPER = wrap


def compiled_models():
    """Class names of the models compile_models wrapped so far."""
    return list(_compiled_models)


def _autotuners():
    """Every CachingAutotuner of the kernel modules Inductor loaded, once each."""
    from torch._inductor.codecache import PyCodeCache
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except ImportError:  # PyTorch < 2.3
        from torch._inductor.triton_heuristics import CachingAutotuner
    modules = getattr(PyCodeCache, "modules", None)
    if modules is None:
        modules = list(getattr(PyCodeCache, "cache", {}).values())
    seen = set()
    for module in list(modules):
        for value in list(vars(module).values()):
            if isinstance(value, CachingAutotuner) and id(value) not in seen:
                seen.add(id(value))
                yield value


def _arg_names(kernel, signature):
    names = getattr(getattr(kernel, "fn", None), "arg_names", None)
    if names:
        return list(names)
    return [k for k in signature if isinstance(k, str)]


def _by_name(mapping, names):
    """{name or position: value} -> {name: value} (older Inductor keys by position)."""
    out = {}
    for key, value in mapping.items():
        if isinstance(key, int) and key < len(names):
            key = names[key]
        if isinstance(key, tuple) and key and isinstance(key[0], int) and key[0] < len(names):
            key = names[key[0]]  # Triton 3.3 keys constants by (position,)
        out[str(key)] = value
    return out


def _binary_dir(cache, name, cache_hash):
    """The Triton cache directory (relative to `cache`) with NAME.cubin and NAME.json."""
    for root, dirs, files in os.walk(cache):
        if name + ".cubin" in files and name + ".json" in files:
            if cache_hash is None or os.path.basename(root) == cache_hash:
                return os.path.relpath(root, cache)
    return None


def _entry(kernel, cache):
    name = kernel.inductor_meta.get("kernel_name") or getattr(kernel.fn, "__name__", None)
    if len(kernel.launchers) != 1:
        return None, {"name": name, "reason": "%d launchers: never run, or not autotuned to one"
                      % len(kernel.launchers)}
    launcher = kernel.launchers[0]
    signature = dict(kernel.triton_meta.get("signature", {}))
    names = _arg_names(kernel, signature)
    types = _by_name(signature, names)
    binary = _binary_dir(cache, name, getattr(launcher, "cache_hash", None))
    if binary is None:
        return None, {"name": name, "reason": "no %s.cubin with its .json under %s" % (name, cache)}
    config = launcher.config
    return {
        "name": name,
        "kernel_file": os.path.basename(kernel.filename or ""),
        "binary_dir": binary,
        "args": [[n, str(types.get(n, "constexpr"))] for n in names],
        "constants": sorted(_by_name(dict(kernel.triton_meta.get("constants", {})), names)),
        "config": {k: v for k, v in config.kwargs.items() if isinstance(v, int)},
        "num_warps": config.num_warps,
        "grid_type": kernel.inductor_meta.get("grid_type", ""),
    }, None


def finish(cache, torch):
    """Writes the cache's manifest; returns what the capture's meta file says of it."""
    kernels, skipped = [], []
    try:
        for k in _autotuners():
            entry, why = _entry(k, cache)
            if entry:
                kernels.append(entry)
            else:
                skipped.append(why)
    except Exception as e:  # Inductor's internals move between releases: say so, keep the capture
        skipped.append({"name": None, "reason": "could not list Inductor's kernels: %r" % e})
    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    manifest = {"format": MANIFEST_FORMAT, "torch": torch.__version__, "triton": triton_version,
                "kernels": kernels, "skipped": skipped}
    with open(os.path.join(cache, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    if skipped:
        print("capture.py: warning: %d compiled kernels left out of %s (first: %s)"
              % (len(skipped), MANIFEST, skipped[0]), file=sys.stderr)
    return {"inductor_cache": os.path.basename(cache), "manifest": MANIFEST,
            "models": compiled_models(), "kernels": len(kernels),
            "kernels_left_out": len(skipped), "et_under_profiler": True}
