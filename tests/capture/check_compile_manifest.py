"""capture_compile's manifest read back by tracetwin: the contract between the two.

A fake Inductor cache (one binary, Triton's metadata beside it) and fake CachingAutotuners - one of
PyTorch >= 2.6's shape, one of 2.1-2.4's (signature and constants by position) - go through
capture_compile.finish; a trace with their Triton nodes is then replayed on the CPU with
--inductor-cache. A kernel the manifest binds gets as far as the device (which a CPU replay does not
have); one it lacks is "not in the Inductor cache". No torch needed.
Usage: check_compile_manifest.py TRACETWIN_BINARY SOURCE_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys
import types

tracetwin, src, work = sys.argv[1:4]
sys.path.insert(0, os.path.join(src, "scripts"))
import capture_compile  # noqa: E402

NEW, OLD = "triton_poi_fused_add_0", "triton_poi_fused_relu_1"
cache = os.path.join(work, "step.inductor")
binary = os.path.join(cache, "triton", "0", "HASHA")
os.makedirs(binary)
for name in (NEW, OLD):
    open(os.path.join(binary, name + ".cubin"), "wb").write(b"\x7fELF not a cubin")
    json.dump({"name": name, "num_warps": 1, "shared": 0, "global_scratch_size": 0,
               "target": {"backend": "cuda", "arch": 90, "warp_size": 32}},
              open(os.path.join(binary, name + ".json"), "w"))


def autotuner(name, kernel_file, signature, arg_names, constants, xblock):
    launcher = types.SimpleNamespace(
        config=types.SimpleNamespace(kwargs={"XBLOCK": xblock}, num_warps=1), cache_hash="HASHA")
    return types.SimpleNamespace(
        inductor_meta={"kernel_name": name, "grid_type": "Grid1D"}, launchers=[launcher],
        triton_meta={"signature": signature, "constants": constants},
        fn=types.SimpleNamespace(arg_names=arg_names, __name__=name),
        filename=os.path.join(cache, kernel_file[1:3], kernel_file))


kernels = [
    autotuner(NEW, "cnewkernel.py", {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32",
                                     "XBLOCK": "constexpr"},
              ["in_ptr0", "out_ptr0", "xnumel", "XBLOCK"], {}, 8),
    autotuner(OLD, "coldkernel.py", {0: "*fp32", 1: "*fp32", 2: "i32"},
              ["in_ptr0", "out_ptr0", "xnumel", "XBLOCK"], {(2,): 1}, 4),
    types.SimpleNamespace(inductor_meta={"kernel_name": "triton_poi_never_run_2"}, launchers=[],
                          fn=None),
]
capture_compile._autotuners = lambda: kernels
meta = capture_compile.finish(cache, types.SimpleNamespace(__version__="2.11.0"))
assert meta["kernels"] == 2 and meta["kernels_left_out"] == 1, meta
manifest = json.load(open(os.path.join(cache, capture_compile.MANIFEST)))
old = [k for k in manifest["kernels"] if k["name"] == OLD][0]
assert old["args"][2] == ["xnumel", "i32"] and old["args"][3] == ["XBLOCK", "constexpr"], old
assert old["constants"] == ["xnumel"] and old["binary_dir"] == "triton/0/HASHA", old


def node(id_, name, kernel_file):
    attrs = [{"name": "rf_id", "type": "uint64", "value": id_},
             {"name": "kernel_backend", "type": "string", "value": "triton"},
             {"name": "kernel_file", "type": "string", "value": kernel_file}]
    values = [[100 + id_, 100 + id_, 0, 16, 4, "cuda:0"], [200 + id_, 200 + id_, 0, 16, 4, "cuda:0"],
              16, 140382148398488]
    return {"id": id_, "name": name, "ctrl_deps": 2,
            "inputs": {"values": values, "shapes": [[16], [16], [], []],
                       "types": ["Tensor(float)", "Tensor(float)", "Int", "Int"]},
            "outputs": {"values": [], "shapes": [], "types": []}, "attrs": attrs}


def label(id_, parent, name):
    return {"id": id_, "name": name, "ctrl_deps": parent, "attrs": [],
            "inputs": {"values": [], "shapes": [], "types": []},
            "outputs": {"values": [], "shapes": [], "types": []}}


et = {"schema": "1.1.1-chakra.0.0.4", "pid": 1, "time": "", "start_ts": 0, "finish_ts": 1,
      "nodes": [node(10, NEW, "cnewkernel.py"), node(11, OLD, "coldkernel.py"),
                node(12, "triton_poi_fused_mul_3", "cmissing.py"),
                label(2, 1, "[pytorch|profiler|execution_trace|thread]"),
                label(1, 1, "[pytorch|profiler|execution_trace|process]")]}
json.dump(et, open(os.path.join(work, "step.et.json"), "w"))
out = os.path.join(work, "replay.json")
run = subprocess.run([tracetwin, "replay", os.path.join(work, "step.et.json"), "--device", "cpu",
                      "--warmup", "0", "--iters", "1", "--inductor-cache", cache,
                      "--json-out", out], capture_output=True, text=True)
assert run.returncode == 0, run.stdout + run.stderr
reasons = {s["name"]: s["reason"] for s in json.load(open(out))["skipped"]}
for name in (NEW, OLD):  # found, bound, and only the CPU host stops them
    assert "run on a CUDA device" in reasons[name], (name, reasons[name])
assert "not in the Inductor cache" in reasons["triton_poi_fused_mul_3"], reasons
print("check_compile_manifest: ok (%d kernels in the manifest, 1 left out)" % meta["kernels"])
