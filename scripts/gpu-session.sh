#!/usr/bin/env bash
# Everything tracetwin checks on a GPU host, in named stages, each logged.
#
#   scripts/gpu-session.sh STAGE...
#   stages: env build test replay capture capture_big carried_captures calibrate pool_prior
#           calibrate_more compare fit dist check amp compile comm sweep hosttime timeline zipf
#           stored_recorded stored_device
#
# Run it in a checkout that carries .gpu-debs/ (scripts/gpu-prefix.sh download)
# and .gpu-data/traces/ (a copy of ../shared/traces: the GPU host has no
# ../shared). Results go to $OUT (default /tmp/tt-gpu-out): summary.txt, one
# line per stage, and results.tgz with every stage's log and JSON, re-packed
# after each stage so a run cut short still returns what it finished. A stage
# that needs the build builds it first when build-gpu/ is missing, so stages
# can be split over several calls (TT_MODELS names a model set carried in for
# `compare` on a fresh machine). TT_CALIB_BUDGET and TT_CALIB_MORE_BUDGET
# set the two calibrations' seconds, TT_CALIB_REPEATS their passes (default
# 1), TT_MORE_CASES a --cases filter for calibrate_more; TT_BUILD_TARGET=tracetwin
# builds the binary alone (no tests), for a call that only measures. See docs/gpu.md.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-/tmp/tt-gpu-out}
work=/tmp/tt-gpu
res=$work/res
build=$root/build-gpu
prefix=/tmp/tt-prefix
traces=$root/.gpu-data/traces
calib_budget=${TT_CALIB_BUDGET:-300}
calib_more_budget=${TT_CALIB_MORE_BUDGET:-$calib_budget}
# One pass per point: an H200 calibration's three passes of 4,292 points
# agreed within 0.6% (median max/min; 2.6% at the 90th percentile), so the
# two repeats a CPU needs against a shared host would cost two thirds of the
# points here.
calib_repeats=${TT_CALIB_REPEATS:-1}
mkdir -p "$OUT" "$res"
jobs=$(nproc)

summary() { echo "$*" | tee -a "$OUT/summary.txt"; }
pack() { tar czf "$OUT/results.tgz" -C "$work" res 2>/dev/null; }

# run_logged NAME CMD...: runs CMD with its output in res/NAME.log; returns its status.
run_logged() {
  local name=$1
  shift
  local t0=$SECONDS rc
  "$@" >"$res/$name.log" 2>&1
  rc=$?
  summary "$(printf '%-34s rc=%-3s %4ss' "$name" "$rc" $((SECONDS - t0)))"
  pack
  return $rc
}

torch_prefix() { python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'; }

# NCCL beside the toolkit, or from the nvidia-nccl wheel (whose library has
# only its versioned name, which find_library does not look for).
nccl_args() {
  python3 - <<'PY'
import glob, os
try:
    import nvidia.nccl as n
    base = list(n.__path__)[0]
except Exception:
    base = None
if base:
    libs = sorted(glob.glob(os.path.join(base, "lib", "libnccl.so*")))
    inc = os.path.join(base, "include")
    if libs and os.path.exists(os.path.join(inc, "nccl.h")):
        print(f"-DTRACETWIN_NCCL_LIBRARY={libs[0]} -DTRACETWIN_NCCL_INCLUDE={inc}")
PY
}

stage_env() {
  {
    nvidia-smi -L
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    python3 -c 'import torch,sys; print("torch", torch.__version__, "cuda", torch.version.cuda,
"cxx11abi", torch.compiled_with_cxx11_abi(), "gpu", torch.cuda.get_device_name(0)); print(torch.utils.cmake_prefix_path)'
    nvcc --version | tail -2
    cmake --version | head -1
    ninja --version
    ls /usr/local/cuda/include/cupti.h /usr/local/cuda/extras/CUPTI/include/cupti.h 2>&1
    ls /usr/local/cuda/lib64/libcupti* /usr/local/cuda/extras/CUPTI/lib64/libcupti* 2>&1 | head
    ls /usr/local/cuda/include/nccl.h 2>&1
    nccl_args
    ldd --version | head -1
    nproc
    free -g | head -2
  } 2>&1
}

stage_build() {
  scripts/gpu-prefix.sh unpack .gpu-debs "$prefix" || return 1
  local libdir=$prefix/usr/lib/x86_64-linux-gnu
  export PKG_CONFIG_PATH=$libdir/pkgconfig:$prefix/usr/share/pkgconfig
  # GoogleTest discovery runs the test binaries at build time, and libxgboost
  # needs libdmlc, which no RUNPATH names.
  export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # shellcheck disable=SC2046  # nccl_args prints separate -D words
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix/usr;$(torch_prefix)" \
    -DCUDAToolkit_ROOT=/usr/local/cuda -DTRACETWIN_CUDA=ON \
    -DTRACETWIN_SHARED_TRACES="$traces" $(nccl_args) || return 1
  cmake --build "$build" -j"$jobs" ${TT_BUILD_TARGET:+--target "$TT_BUILD_TARGET"} -- -k 0
}

ensure_build() {
  [ -x "$build/tracetwin" ] && return 0
  run_logged build stage_build && return 0
  # The reply shows only the end of the output: put the errors there.
  grep -E -A4 "error:|FAILED:|CMake Error" "$res/build.log" | head -200
  return 1
}

with_prefix_libs() {
  LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"
}

stage_test() {
  ensure_build || return 1
  run_logged test_device with_prefix_libs ctest --test-dir "$build" -L replay_device \
    --output-on-failure
  run_logged test_all with_prefix_libs ctest --test-dir "$build" -j"$jobs" --timeout 600
}

tt() { with_prefix_libs "$build/tracetwin" "$@"; }

stage_replay() {
  ensure_build || return 1
  local t
  for t in resnet_1.1.0 resnet_1.0.3; do
    run_logged "replay_${t}_cuda" tt replay "$traces/${t}_et.json.gz" --device cuda:0 \
      --warmup 5 --iters 20 --json-out "$res/replay_${t}_cuda.json" \
      --chrome-trace "$res/replay_${t}_cuda.chrome.json"
    run_logged "replay_${t}_cuda_nocupti" tt replay "$traces/${t}_et.json.gz" --device cuda:0 \
      --warmup 5 --iters 20 --no-cupti --json-out "$res/replay_${t}_cuda_nocupti.json"
  done
  run_logged replay_resnet_1.1.0_cpu tt replay "$traces/resnet_1.1.0_et.json.gz" --device cpu \
    --warmup 1 --iters 3 --threads 16 --json-out "$res/replay_resnet_1.1.0_cpu.json"
  run_logged replay_dlrm_rank0_cuda tt replay "$traces/dlrm_8rank/rank0.et.json.gz" \
    --device cuda:0 --warmup 3 --iters 10 --json-out "$res/replay_dlrm_rank0_cuda.json"
  # The same on the streams its kernels ran on (compute 7, batch copies 22
  # and 24), and on one stream, for the difference.
  for s in recorded one; do
    run_logged "replay_dlrm_rank0_cuda_streams_$s" tt replay "$traces/dlrm_8rank/rank0.et.json.gz" \
      --kineto "$traces/dlrm_8rank/rank0.kineto.json.gz" --streams "$s" --device cuda:0 \
      --warmup 3 --iters 10 --json-out "$res/replay_dlrm_rank0_cuda_streams_$s.json"
  done
}

# Workloads captured here on the GPU with this host's PyTorch, then replayed
# on the same GPU: replay/original of a trace whose original time is known.
gpu_workloads=(mlp cnn transformer resnet18_small embbag lstm mobilenet_v3)

stage_capture() {
  ensure_build || return 1
  mkdir -p "$res/cap"
  local w
  for w in "${gpu_workloads[@]}"; do
    run_logged "capture_$w" python3 scripts/capture.py --workload "$w" --device cuda \
      --out "$res/cap" --steps 30 || continue
    run_logged "replay_cap_$w" tt replay "$res/cap/$w.et.json.gz" --device cuda:0 \
      --warmup 5 --iters 30 --no-cupti --json-out "$res/cap/$w.replay.json"
  done
}

# The same models at sizes that keep an H100 busy: the default sizes were
# chosen for a slow CPU, and on a GPU they are bound by the original's Python
# and autograd overhead per op, which a replay does not have.
big_workloads=(
  "mlp_big mlp batch=4096 in_features=1024 hidden=4096"
  "cnn_big cnn batch=512 image=64 channels=64"
  "transformer_big transformer batch=64 seq=256 d_model=512 heads=8 ffn=2048 vocab=8192"
  "resnet18_big resnet18_small batch=128 image=96"
  "embbag_big embbag batch=8192"
)

stage_capture_big() {
  ensure_build || return 1
  mkdir -p "$res/cap"
  local spec name workload params p
  for spec in "${big_workloads[@]}"; do
    read -r name workload params <<<"$spec"
    local args=()
    for p in $params; do args+=(--param "$p"); done
    run_logged "capture_$name" python3 scripts/capture.py --workload "$workload" --name "$name" \
      "${args[@]}" --device cuda --out "$res/cap" --steps 20 || continue
    run_logged "replay_cap_$name" tt replay "$res/cap/$name.et.json.gz" --device cuda:0 \
      --warmup 3 --iters 20 --no-cupti --json-out "$res/cap/$name.replay.json"
  done
}

# Mixed precision (issue 41): bf16-autocast and fp16-autocast-with-GradScaler steps of a
# transformer and a CNN, at sizes that keep the GPU busy (at the default sizes the original is
# bound by eager PyTorch's per-op host cost, which a replay does not have), each replayed on the
# same GPU. One summary line per step: replay/original, coverage, ops not as recorded, memory.
# About 60-80 s of GPU time after the build (four captures of 5 + 20 steps, four replays).
amp_workloads=(
  "transformer transformer batch=32 seq=256 d_model=512 heads=8 ffn=2048 vocab=8192"
  "cnn cnn batch=256 image=64 channels=64"
)

stage_amp() {
  ensure_build || return 1
  mkdir -p "$res/amp"
  local spec name workload params p mode
  for spec in "${amp_workloads[@]}"; do
    read -r name workload params <<<"$spec"
    local args=()
    for p in $params; do args+=(--param "$p"); done
    for mode in bf16 fp16; do
      local n="${name}_${mode}"
      run_logged "amp_capture_$n" python3 scripts/capture.py --workload "$workload" --name "$n" \
        "${args[@]}" --amp "$mode" --device cuda --out "$res/amp" --warmup 5 --steps 20 || continue
      run_logged "amp_replay_$n" tt replay "$res/amp/$n.et.json.gz" --device cuda:0 \
        --warmup 5 --iters 20 --no-cupti --json-out "$res/amp/$n.replay.json"
      # The transformer steps are host-bound: the original's host time (issue 40) beside the plain replay.
      [ -f "$res/amp/$n.kineto.json.gz" ] && run_logged "amp_recorded_$n" tt replay \
        "$res/amp/$n.et.json.gz" --device cuda:0 --warmup 5 --iters 20 --no-cupti \
        --kineto "$res/amp/$n.kineto.json.gz" --host-time recorded \
        --json-out "$res/amp/$n.recorded.json"
      summary "$(python3 - "$res/amp/$n.replay.json" "$res/amp/$n.meta.json" "$n" \
        "$res/amp/$n.recorded.json" <<'PY'
import json, sys
try:
    r, m = (json.load(open(p)) for p in sys.argv[1:3])
except (OSError, ValueError) as e:
    print("amp %-18s no result: %s" % (sys.argv[3], e))
    sys.exit(0)
mem = r["peak_memory_bytes"] / r["trace_peak_bytes"] if r.get("trace_peak_bytes") else 0
line = ("amp %-18s replay/original %.3f (%.3f / %.3f ms)  coverage %.4f  failed %d  "
        "not as recorded %d  memory %.2f" % (
            sys.argv[3], r["iteration_ms_median"] / m["iteration_ms"], r["iteration_ms_median"],
            m["iteration_ms"], r["coverage"], len(r["failed"]), len(r.get("mismatched", [])), mem))
try:
    rec = json.load(open(sys.argv[4]))
    line += "  recorded host time %.3f" % (rec["iteration_ms_median"] / m["iteration_ms"])
except (OSError, ValueError, KeyError):
    line += "  recorded host time: none"
print(line)
PY
)"
    done
  done
}

# The captures a previous call brought back (.gpu-data/cap), for `compare`
# without the minute capture_big takes.
stage_carried_captures() {
  local carried=("$root"/.gpu-data/cap/*.et.json.gz)
  mkdir -p "$res/cap"
  cp "${carried[@]}" "$res/cap/" && summary "carried_captures: ${#carried[@]} traces"
}

stage_calibrate() {
  ensure_build || return 1
  run_logged calibrate_cuda tt calibrate --device cuda --budget-s "$calib_budget" \
    --repeats "$calib_repeats" --out "$res/models-cuda"
}

# Kernel rows earlier sessions measured on the same kind of GPU
# (.gpu-data/prior/dataset.jsonl, its GPU's name in .gpu-data/prior/gpu.txt),
# added to this calibration's for the refit calibrate_more ends with. Their
# host times came from another lent host and are dropped: host costs stay
# this host's.
stage_pool_prior() {
  local prior=$root/.gpu-data/prior models=$res/models-cuda gpu
  [ -f "$prior/dataset.jsonl" ] || { summary "pool_prior: no $prior/dataset.jsonl"; return 1; }
  [ -d "$models" ] || { summary "pool_prior: no $models (run the calibrate stage first)"; return 1; }
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  if [ "$gpu" != "$(cat "$prior/gpu.txt" 2>/dev/null)" ]; then
    summary "pool_prior: rows measured on '$(cat "$prior/gpu.txt" 2>/dev/null)', this is '$gpu'"
    return 1
  fi
  python3 - "$prior/dataset.jsonl" >>"$models/dataset.jsonl" <<'PY' || return 1
import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    row.pop("host_us", None)  # another host's; the kernel counts are the GPU's
    print(json.dumps(row, separators=(",", ":")))
PY
  summary "pool_prior: $(wc -l <"$prior/dataset.jsonl") rows from $gpu"
}

# More conv, norm and gemm points (another seed; TT_MORE_FAMILIES names other
# families, TT_MORE_CASES narrows them to the labels it matches), refitted
# with the first calibration's: one run measures a percent or two of those
# grids on a GPU.
stage_calibrate_more() {
  ensure_build || return 1
  local models=$res/models-cuda
  [ -d "$models" ] || { summary "calibrate_more: no $models (run the calibrate stage first)"; return 1; }
  run_logged calibrate_cuda_more tt calibrate --device cuda --families "${TT_MORE_FAMILIES:-conv,norm,gemm}" \
    --seed "${TT_MORE_SEED:-4321}" --budget-s "$calib_more_budget" --repeats "$calib_repeats" \
    ${TT_MORE_CASES:+--cases "$TT_MORE_CASES"} --out "$res/models-cuda-more" || return 1
  cat "$res/models-cuda-more/dataset.jsonl" >>"$models/dataset.jsonl"
  run_logged calibrate_cuda_refit tt calibrate --device cuda --refit --out "$models"
}

stage_compare() {
  ensure_build || return 1
  # TT_MODELS: a model set carried in (a calibration a previous call brought
  # back): a lent machine goes back 30 s after a call, with what it measured.
  local models=${TT_MODELS:-$res/models-cuda}
  [ -d "$models" ] || { summary "compare: no $models (run the calibrate stage first)"; return 1; }
  run_logged compare_resnet_1.1.0_cuda tt compare "$traces/resnet_1.1.0_et.json.gz" \
    --models "$models" --device cuda:0 --warmup 5 --iters 20 \
    --json-out "$res/compare_resnet_1.1.0_cuda.json"
  local w
  for w in "${gpu_workloads[@]}" mlp_big cnn_big transformer_big resnet18_big embbag_big; do
    [ -f "$res/cap/$w.et.json.gz" ] || continue
    run_logged "compare_cap_$w" tt compare "$res/cap/$w.et.json.gz" --models "$models" \
      --device cuda:0 --warmup 5 --iters 20 --json-out "$res/cap/$w.compare.json"
  done
  for spec in h100 h200 a100; do
    [ -f "configs/devices/$spec.yaml" ] || continue
    run_logged "predict_resnet_1.1.0_from_host_as_$spec" tt predict \
      "$traces/resnet_1.1.0_et.json.gz" --models data/models/host \
      --device-spec "configs/devices/$spec.yaml" --json-out "$res/predict_resnet_as_$spec.json"
  done
}

# The captures' own Kineto traces as measurements (no GPU needed for this part): the CPU-side
# model alone (`predict --kernel-times`), and models fitted from the recorded kernels
# (`tracetwin fit`), each capture predicted by the models of the others (leave one out).
# docs/prediction.md has the first figures, from data/h100.
stage_fit() {
  ensure_build || return 1
  local gpu spec w o
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  spec=configs/devices/h100.yaml
  [[ "$gpu" == *H200* ]] && spec=configs/devices/h200.yaml
  local names=()
  for w in "${gpu_workloads[@]}" mlp_big cnn_big transformer_big resnet18_big embbag_big; do
    [ -f "$res/cap/$w.et.json.gz" ] && [ -f "$res/cap/$w.kineto.json.gz" ] && names+=("$w")
  done
  [ ${#names[@]} -gt 1 ] || { summary "fit: fewer than two captures with a Kineto trace"; return 1; }
  local all=()
  for w in "${names[@]}"; do
    all+=("$res/cap/$w.et.json.gz" "$res/cap/$w.kineto.json.gz")
    run_logged "predict_kernel_times_$w" tt predict "$res/cap/$w.et.json.gz" \
      --models data/models/host --device-spec "$spec" \
      --kernel-times "$res/cap/$w.kineto.json.gz" --json-out "$res/cap/$w.kernel_times.json"
  done
  run_logged fit_all tt fit --device-spec "$spec" --out "$res/models-fit" "${all[@]}"
  for w in "${names[@]}"; do
    local others=()
    for o in "${names[@]}"; do
      [ "$o" = "$w" ] || others+=("$res/cap/$o.et.json.gz" "$res/cap/$o.kineto.json.gz")
    done
    run_logged "fit_without_$w" tt fit --device-spec "$spec" --out "$res/models-fit-$w" \
      "${others[@]}" &&
      run_logged "predict_loo_$w" tt predict "$res/cap/$w.et.json.gz" \
        --models "$res/models-fit-$w" --json-out "$res/cap/$w.loo.json"
  done
}

# Distributed replay on CUDA (docs/distributed.md): NCCL through the --nproc launcher and
# torchrun on this host's one GPU (a world of one: a path without {rank} replays the same trace
# on every rank), the DLRM rank's all_to_alls re-split for that world, and the distributed tests
# (Gloo across processes, the fault cases) with this host's cores.
stage_dist() {
  ensure_build || return 1
  local d=$root/data/distributed
  run_logged dist_ddp_mlp_nccl tt replay "$d/ddp_mlp.rank0.et.json.gz" --nproc 1 --device cuda \
    --warmup 3 --iters 20 --no-cupti --json-out "$res/dist_ddp_mlp_nccl.json"
  run_logged dist_dlrm_rank0_nccl tt replay "$traces/dlrm_8rank/rank0.et.json.gz" --nproc 1 \
    --device cuda --warmup 3 --iters 10 --json-out "$res/dist_dlrm_rank0_nccl.json"
  run_logged dist_torchrun_nccl with_prefix_libs torchrun --no_python --nproc_per_node 1 \
    --standalone "$build/tracetwin" replay "$d/dlrm_tw.rank0.et.json.gz" --device cuda \
    --warmup 3 --iters 20 --no-cupti --json-out "$res/dist_torchrun_nccl.json"
  run_logged dist_tests with_prefix_libs ctest --test-dir "$build" -L dist --output-on-failure
  python3 - "$res" <<'PY' | tee -a "$OUT/summary.txt"
import json, os, sys
for name in ("dist_ddp_mlp_nccl", "dist_dlrm_rank0_nccl", "dist_torchrun_nccl"):
    path = os.path.join(sys.argv[1], name + ".json")
    if not os.path.exists(path):
        print("%-28s no report" % name)
        continue
    r = json.load(open(path))
    k = r["ranks"][0]
    print("%-28s %s %s step %.3f ms  coverage %.4f  colls %d  comm %.3f ms  skipped %d failed %d"
          % (name, r["backend"], r["device"], r["iteration_ms_median"], k["coverage"],
             k["comm_ops"], k["comm_ms"], k["skipped"], k["failed"]))
PY
}

# GPU accuracy check (issue 39): a fixed set of training steps captured here, fp32 and bf16
# autocast where it applies, each replayed (replay/original) and predicted from the bundled H200
# models scaled to this GPU's spec (predicted/original: cross-GPU on an H100, same kind on an
# H200). One table in the summary; TT_CHECK_STEPS sets the timed steps (default 10).
check_workloads=(
  "cnn cnn batch=256 image=64 channels=64"
  "encoder transformer batch=32 seq=256 d_model=512 heads=8 ffn=2048 vocab=8192"
  "decoder decoder_lm batch=16 seq=256 d_model=512 heads=8 layers=4 vocab=8192"
  "dlrm embbag batch=8192"
)

stage_check() {
  ensure_build || return 1
  mkdir -p "$res/check"
  local gpu spec steps=${TT_CHECK_STEPS:-10}
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  spec=configs/devices/h100.yaml
  [[ "$gpu" == *H200* ]] && spec=configs/devices/h200.yaml
  local entry name workload params p amp tag
  for entry in "${check_workloads[@]}"; do
    read -r name workload params <<<"$entry"
    local args=()
    for p in $params; do args+=(--param "$p"); done
    for amp in fp32 bf16; do
      [ "$name" = dlrm ] && [ "$amp" = bf16 ] && continue  # embedding bags stay fp32 under autocast
      tag=${name}_$amp
      local extra=()
      [ "$amp" = bf16 ] && extra=(--amp bf16)
      run_logged "check_capture_$tag" python3 scripts/capture.py --workload "$workload" \
        --name "$tag" "${args[@]}" "${extra[@]}" --device cuda --out "$res/check" \
        --warmup 3 --steps "$steps" || continue
      run_logged "check_replay_$tag" tt replay "$res/check/$tag.et.json.gz" --device cuda:0 \
        --warmup 3 --iters 20 --no-cupti --json-out "$res/check/$tag.replay.json"
      [ -f "$res/check/$tag.kineto.json.gz" ] && run_logged "check_recorded_$tag" tt replay \
        "$res/check/$tag.et.json.gz" --device cuda:0 --warmup 5 --iters 20 --no-cupti \
        --kineto "$res/check/$tag.kineto.json.gz" --host-time recorded \
        --json-out "$res/check/$tag.recorded.json"
      run_logged "check_predict_$tag" tt predict "$res/check/$tag.et.json.gz" \
        --models data/models/h200 --device-spec "$spec" --json-out "$res/check/$tag.predict.json"
    done
  done
  python3 - "$res/check" "$gpu" <<'PY' | tee -a "$OUT/summary.txt"
import glob, json, os, sys
d, gpu = sys.argv[1], sys.argv[2]
print("check on %s: original, replay/original (plain, with recorded host time), predicted/original "
      "(bundled H200 models)" % gpu)
for meta in sorted(glob.glob(os.path.join(d, "*.meta.json"))):
    tag = os.path.basename(meta)[:-len(".meta.json")]
    orig = json.load(open(meta))["iteration_ms"]
    row = "%-14s original %8.3f ms" % (tag, orig)
    for kind, key in (("replay", "iteration_ms_median"), ("recorded", "iteration_ms_median"),
                      ("predict", "iteration_ms")):
        path = os.path.join(d, "%s.%s.json" % (tag, kind))
        if os.path.exists(path):
            r = json.load(open(path))
            row += "  %s/original %.3f" % (kind, r[key] / orig)
            if kind == "replay":
                row += " (coverage %.4f)" % r["coverage"]
        else:
            row += "  %s: none" % kind
    print(row)
PY
}

# Recorded host time (issue 40): the default-size workloads, bound by eager PyTorch's per-op host
# cost on a GPU (the plain replay at 0.21-0.66 of the original in docs/gpu.md), captured here with
# their Kineto traces and replayed three ways: plain, with the original's host time around each op
# (--host-time recorded), and with it halved (--host-scale 0.5: a host twice as fast); beside the
# prediction at both host speeds (recorded kernel times, the capture's own T1-T5 from `link
# --overheads-out`, so the CPU side and the critical path alone are the model's). One summary line
# per workload. About 90-110 s of GPU time after the build (six captures of 3 + 20 steps, 18
# replays of 5 + 20 iterations).
hosttime_workloads=(mlp cnn transformer lstm mobilenet_v3 embbag)

stage_hosttime() {
  ensure_build || return 1
  local d=$res/hosttime gpu spec w
  mkdir -p "$d"
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  spec=configs/devices/h100.yaml
  [[ "$gpu" == *H200* ]] && spec=configs/devices/h200.yaml
  for w in "${hosttime_workloads[@]}"; do
    run_logged "hosttime_capture_$w" python3 scripts/capture.py --workload "$w" --device cuda \
      --out "$d" --warmup 3 --steps 20 || continue
    local et=$d/$w.et.json.gz k=$d/$w.kineto.json.gz
    [ -f "$k" ] || { summary "hosttime $w: no Kineto trace (torch without Kineto?)"; continue; }
    run_logged "hosttime_replay_$w" tt replay "$et" --device cuda:0 --warmup 5 --iters 20 \
      --no-cupti --kineto "$k" --json-out "$d/$w.replayed.json"
    run_logged "hosttime_recorded_$w" tt replay "$et" --device cuda:0 --warmup 5 --iters 20 \
      --no-cupti --kineto "$k" --host-time recorded --json-out "$d/$w.recorded.json"
    run_logged "hosttime_half_$w" tt replay "$et" --device cuda:0 --warmup 5 --iters 20 \
      --no-cupti --kineto "$k" --host-time recorded --host-scale 0.5 --json-out "$d/$w.half.json"
    # The prediction needs no GPU: the CPU-side model against the same original. The overheads
    # are the unprofiled step's (link takes the profiler's cost off with the meta file's step
    # time), charged by their mean: the medians of the corrected samples under-predict (issue 39).
    run_logged "hosttime_link_$w" tt link "$et" "$k" --overheads-out "$d/$w.overheads.json"
    local scale
    for scale in 1 0.5; do
      run_logged "hosttime_predict_${w}_$scale" tt predict "$et" --models data/models/h200 \
        --device-spec "$spec" --kernel-times "$k" --overheads "$d/$w.overheads.json" \
        --overhead-stat mean --host-scale "$scale" --json-out "$d/$w.predict$scale.json"
    done
  done
  python3 - "$d" "$gpu" "${hosttime_workloads[@]}" <<'PY' | tee -a "$OUT/summary.txt"
import json, os, sys
d, gpu = sys.argv[1], sys.argv[2]
def load(name):
    try:
        return json.load(open(os.path.join(d, name)))
    except (OSError, ValueError):
        return None
print("hosttime on %s: replay/original plain, with recorded host time, at host scale 0.5; "
      "predicted/original at host scale 1 and 0.5 (recorded kernels, the capture's T1-T5)" % gpu)
for w in sys.argv[3:]:
    meta = load(w + ".meta.json")
    if not meta:
        print("%-13s no capture" % w)
        continue
    orig = meta["iteration_ms"]
    row = "%-13s original %7.3f ms" % (w, orig)
    for tag, name, key in (("plain", "replayed", "iteration_ms_median"),
                           ("recorded", "recorded", "iteration_ms_median"),
                           ("x0.5", "half", "iteration_ms_median"),
                           ("pred", "predict1", "iteration_ms"),
                           ("pred x0.5", "predict0.5", "iteration_ms")):
        r = load("%s.%s.json" % (w, name))
        row += "  %s %s" % (tag, "%.3f" % (r[key] / orig) if r else "-")
    rec, half = load(w + ".recorded.json"), load(w + ".half.json")
    p1, p5 = load(w + ".predict1.json"), load(w + ".predict0.5.json")
    if rec and half and p1 and p5:
        row += "  speed-up of a 2x host: replay %.2f, predicted %.2f" % (
            rec["iteration_ms_median"] / half["iteration_ms_median"],
            p1["iteration_ms"] / p5["iteration_ms"])
    if rec:
        h = rec["host_time"]
        row += "  (+%.2f ms waits, %.2f taken back, behind %.2f ms, %d calls over)" % (
            h.get("wait_ms", 0), h.get("repaid_ms", 0), h.get("behind_ms", 0),
            h.get("ops_over", 0))
    print(row)
PY
}

# Communication models on NCCL (docs/prediction.md "Communication models"): the comm sweep
# through the distributed replay, one GPU per rank, on groups of 2 .. the host's GPU count (NCCL
# refuses two ranks on one GPU, so a 1-GPU host skips it and says so); and the 8 DLRM ranks'
# joint prediction (no GPU needed: a check that the build here agrees with the docs' table).
stage_comm() {
  ensure_build || return 1
  local gpus
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  if [ "$gpus" -ge 2 ]; then
    run_logged comm_nccl tt calibrate --families comm --device cuda --out "$res/models-comm-nccl" \
      --comm-ranks "$(seq -s, 2 "$gpus")"
  else
    summary "comm: $gpus GPU(s) here; NCCL needs a GPU per rank and a group of 2 or more: skipped"
  fi
  run_logged comm_dlrm_joint tt predict "$traces/dlrm_8rank/rank{rank}.et.json.gz" \
    --models "$root/data/models/host" --device-spec "$root/configs/devices/h100.yaml" \
    --kernel-times "$traces/dlrm_8rank/rank{rank}.kineto.json.gz" --rank-starts recorded \
    --json-out "$res/comm_dlrm_joint.json"
}

# --timeline on CUDA (docs/timeline.md): the replay's kernels on their streams
# with a flow from each op, beside the original's (DLRM rank 0 and its Kineto
# trace) and the prediction; export --chakra with durations from a CUDA replay.
stage_timeline() {
  ensure_build || return 1
  local dlrm=$traces/dlrm_8rank/rank0
  run_logged timeline_replay_resnet_cuda tt replay "$traces/resnet_1.1.0_et.json.gz" \
    --device cuda:0 --warmup 3 --iters 5 --timeline "$res/timeline_resnet_cuda.json.gz"
  run_logged timeline_compare_dlrm_cuda tt compare "$dlrm.et.json.gz" --models "$root/data/models/h200" \
    --device cuda:0 --warmup 3 --iters 5 --kineto "$dlrm.kineto.json.gz" \
    --timeline "$res/timeline_dlrm_cuda.json.gz"
  run_logged timeline_export_dlrm_replay tt export --chakra "$res/dlrm_rank0_replay.et" \
    "$dlrm.et.json.gz" --from replay --device cuda:0 --iters 3
  python3 - "$res" <<'PY' | tee -a "$OUT/summary.txt"
import collections, gzip, json, os, sys
for name in ("timeline_resnet_cuda", "timeline_dlrm_cuda"):
    path = os.path.join(sys.argv[1], name + ".json.gz")
    if not os.path.exists(path):
        print("%-24s no file" % name)
        continue
    ev = json.load(gzip.open(path))["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    count = collections.Counter((procs[e["pid"]], e["cat"]) for e in ev if e["ph"] == "X")
    flows = collections.Counter(procs[e["pid"]] for e in ev if e["ph"] == "s")
    streams = collections.Counter(procs[p] for (p, t), n in tracks.items() if n.startswith("stream"))
    print("%-24s %s; streams %s; flows %s" % (name, dict(count), dict(streams), dict(flows)))
PY
}

# torch.compile steps (issue 42; docs/replay.md "Compiled steps"): a CNN and a transformer
# captured with --compile (Kineto trace and Inductor cache kept), each replayed from the cache
# (mode 1: the compiled kernels launched from C++; what cannot launch stands in by its Kineto time)
# and with Kineto stand-ins alone (mode 2), --no-cupti, then predicted with the bundled H200
# models. Sizes keep compilation short (about a minute for both on an H100 host) and the GPU
# busy. TT_COMPILE_WORKLOADS overrides the list.
compile_workloads=(
  "resnet18_cmp resnet18_small batch=64 image=64"
  "transformer_cmp transformer batch=32 seq=128 d_model=256 heads=4 ffn=1024 vocab=4096"
)

compile_summary() {
  python3 - "$@" <<'PY'
import json, sys
for path in sys.argv[1:]:
    try:
        r = json.load(open(path))
    except (OSError, ValueError) as e:
        print("%s: %s" % (path, e)); continue
    if "iteration_ms_median" not in r:  # a prediction: against the capture's own step time
        try:
            original = json.load(open(path.replace(".predict.json", ".meta.json")))["iteration_ms"]
        except (OSError, ValueError, KeyError):
            original = 0
        print("%-44s predicted %7.3f ms  original %7.3f ms  predicted/original %5.3f"
              % (path.rsplit("/", 1)[-1], r.get("iteration_ms", 0), original,
                 r.get("iteration_ms", 0) / original if original else 0))
        continue
    c = r.get("compiled", {})
    print("%-44s replay %7.3f ms  original %7.3f ms  replay/original %5.3f  coverage %5.1f%%  "
          "kernels %d (fwd %d, bwd %d): launched %d, stood in recorded %d, predicted %d, none %d"
          % (path.rsplit("/", 1)[-1], r.get("iteration_ms_median", 0),
             r.get("original_iteration_ms", 0), r.get("ratio", 0), 100 * r.get("coverage", 0),
             c.get("kernels", 0), c.get("forward_kernels", 0), c.get("backward_kernels", 0),
             c.get("launched_from_cache", 0), c.get("stood_in_recorded", 0),
             c.get("stood_in_predicted", 0), c.get("not_stood_in", 0)))
PY
}

stage_compile() {
  ensure_build || return 1
  # Captures and caches outside res/ (the caches hold every compiled binary); what a later
  # look needs is copied into res/cmp.
  local out=$work/cmp spec name workload params p jsons=()
  mkdir -p "$out" "$res/cmp"
  local specs=("${compile_workloads[@]}") spec_args=() gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  [[ "$gpu" == *H100* ]] && spec_args=(--device-spec configs/devices/h100.yaml)
  [ -n "${TT_COMPILE_WORKLOADS:-}" ] && IFS=';' read -r -a specs <<<"$TT_COMPILE_WORKLOADS"
  for spec in "${specs[@]}"; do
    read -r name workload params <<<"$spec"
    local args=()
    for p in $params; do args+=(--param "$p"); done
    run_logged "capture_$name" python3 scripts/capture.py --workload "$workload" --name "$name" \
      "${args[@]}" --device cuda --compile --out "$out" --warmup 3 --steps 10 || continue
    cp "$out/$name".{et.json.gz,kineto.json.gz,meta.json} "$out/$name.inductor/tracetwin_kernels.json" \
      "$res/cmp/" 2>/dev/null
    run_logged "inspect_$name" tt inspect "$out/$name.et.json.gz"
    run_logged "replay_${name}_cache" tt replay "$out/$name.et.json.gz" --device cuda:0 \
      --inductor-cache "$out/$name.inductor" --kineto "$out/$name.kineto.json.gz" \
      --warmup 5 --iters 20 --no-cupti --json-out "$res/cmp/$name.replay_cache.json"
    run_logged "replay_${name}_kineto" tt replay "$out/$name.et.json.gz" --device cuda:0 \
      --kineto "$out/$name.kineto.json.gz" --warmup 5 --iters 20 --no-cupti \
      --json-out "$res/cmp/$name.replay_kineto.json"
    # Compiled steps are host-bound at these sizes (Dynamo's guards, the wrapper, Triton's
    # launcher): both modes again with the original's recorded host time (issue 40).
    run_logged "replay_${name}_cache_recorded" tt replay "$out/$name.et.json.gz" --device cuda:0 \
      --inductor-cache "$out/$name.inductor" --kineto "$out/$name.kineto.json.gz" \
      --host-time recorded --warmup 5 --iters 20 --no-cupti \
      --json-out "$res/cmp/$name.replay_cache_recorded.json"
    run_logged "replay_${name}_kineto_recorded" tt replay "$out/$name.et.json.gz" --device cuda:0 \
      --kineto "$out/$name.kineto.json.gz" --host-time recorded --warmup 5 --iters 20 --no-cupti \
      --json-out "$res/cmp/$name.replay_kineto_recorded.json"
    # Fused kernels on the bundled H200 models' borrowed curves (scaled to an H100 on one).
    run_logged "predict_$name" tt predict "$out/$name.et.json.gz" --models data/models/h200 \
      "${spec_args[@]}" --json-out "$res/cmp/$name.predict.json"
    jsons+=("$res/cmp/$name.replay_cache.json" "$res/cmp/$name.replay_kineto.json"
      "$res/cmp/$name.replay_cache_recorded.json" "$res/cmp/$name.replay_kineto_recorded.json"
      "$res/cmp/$name.predict.json")
  done
  [ ${#jsons[@]} -gt 0 ] && compile_summary "${jsons[@]}" | tee -a "$OUT/summary.txt"
}

# Sharding sweeps (issue 36; docs/sweeps.md): configs/sweeps/example.yaml predicted for this GPU
# with the bundled H200 models (an H100 spec scales them on an H100), and with 2+ GPUs every plan
# of a 2-rank GPU sweep measured through the NCCL distributed replay (--measure --all): pick-best
# and Kendall tau on GPUs, where each rank has its own memory (no co-location effects).
stage_sweep() {
  ensure_build || return 1
  local gpus spec_file=configs/devices/h200.yaml gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
  [[ "$gpu" == *H100* ]] && spec_file=configs/devices/h100.yaml
  sed "s|^device: cpu.*|device: $spec_file|" configs/sweeps/example.yaml >"$res/sweep_gpu.yaml"
  run_logged sweep_predict tt sweep "$res/sweep_gpu.yaml" --models data/models/h200 \
    --json-out "$res/sweep_predict.json"
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  if [ "$gpus" -ge 2 ]; then
    # The replay maps the traces' cpu tensors to each rank's GPU.
    run_logged sweep_measure tt sweep "$res/sweep_gpu.yaml" --models data/models/h200 \
      --measure --all --rounds 3 --measure-device cuda --json-out "$res/sweep_measure.json"
  else
    summary "sweep: $gpus GPU(s) here; --measure needs a GPU per rank: skipped"
  fi
}

# Zipf indices on a GPU (issue 36): data/embbag_sparse replayed on cuda with its lookup's indices
# uniform and Zipf 1.2 (--index-distribution; the indices are drawn on the host and copied), the
# embedding_bag's kernel time and the report's zipf_lookups (1) per run. About 20 s after the build.
stage_zipf() {
  ensure_build || return 1
  printf 'tables:\n  - {node: 58, zipf: 1.2}\n' >"$res/zipf_embbag.yaml"
  run_logged zipf_uniform tt replay data/embbag_sparse.et.json.gz --device cuda \
    --json-out "$res/zipf_uniform.json" || return 1
  run_logged zipf_zipf tt replay data/embbag_sparse.et.json.gz --device cuda \
    --index-distribution "$res/zipf_embbag.yaml" --json-out "$res/zipf_zipf.json" || return 1
  summary "zipf: $(python3 - "$res" <<'PY'
import json, sys
out = []
for run in ("uniform", "zipf"):
    d = json.load(open("%s/zipf_%s.json" % (sys.argv[1], run)))
    ops = [o for o in d["per_op"] if o["name"] == "aten::embedding_bag"]
    us = ops[0].get("device_us", ops[0].get("cpu_us", 0)) if ops else 0
    out.append("%s embedding_bag %.1f us (zipf_lookups %s)" % (run, us, d.get("zipf_lookups", 0)))
print("; ".join(out))
PY
)"
}

# The stored captures of data/h100/s31 (or TT_STORED_DIRS) replayed with their original's recorded
# host time (issue 40), each against its unprofiled step: what a change to the recorded host time
# does on the GPU without capturing again. Compiled steps replay their Triton kernels as Kineto
# stand-ins (mode 2; their Inductor caches stayed on that session's machine). About 3 s a capture.
stage_stored_recorded() {
  ensure_build || return 1
  local d=$res/stored f stem name
  mkdir -p "$d"
  for f in ${TT_STORED_DIRS:-data/h100/s31/check data/h100/s31/amp data/h100/s31/cmp data/h100/s31/hosttime}; do
    for stem in "$f"/*.meta.json; do
      stem=${stem%.meta.json}
      name=$(basename "$(dirname "$stem")")_$(basename "$stem")
      run_logged "stored_$name" tt replay "$stem.et.json.gz" --device cuda:0 --warmup 5 --iters 20 \
        --no-cupti --kineto "$stem.kineto.json.gz" --host-time recorded --json-out "$d/$name.json"
      summary "$(python3 - "$d/$name.json" "$stem.meta.json" "$name" <<'PY'
import json, sys
try:
    r, m = (json.load(open(p)) for p in sys.argv[1:3])
except (OSError, ValueError) as e:
    print("stored %-28s no result: %s" % (sys.argv[3], e)); sys.exit(0)
h = r.get("host_time", {})
print("stored %-28s recorded host time: replay/original %.3f (%.3f / %.3f ms)  coverage %.4f  "
      "waits %.2f ms, repaid %.2f" % (sys.argv[3], r["iteration_ms_median"] / m["iteration_ms"],
      r["iteration_ms_median"], m["iteration_ms"], r["coverage"], h.get("wait_ms", 0),
      h.get("repaid_ms", 0)))
PY
)"
    done
  done
}

# The replay's own kernels against the original's (issue 40, docs/gpu.md "Steps with synchronising
# calls"): the stored captures whose steps make synchronising calls and are device-bound, replayed
# plainly with CUPTI on beside their Kineto traces; the fidelity report's device time per family and
# in all, replay against original. Where the replay's kernels run longer than the recorded ones, no
# host span gives the original's step. About 4 s a capture.
stage_stored_device() {
  ensure_build || return 1
  local d=$res/stored_device stem name
  mkdir -p "$d"
  for stem in ${TT_DEVICE_STEMS:-data/h100/s31/check/encoder_fp32 data/h100/s31/check/encoder_bf16 \
    data/h100/s31/check/decoder_fp32 data/h100/s31/check/decoder_bf16 data/h100/s31/amp/transformer_bf16 \
    data/h100/s31/amp/transformer_fp16 data/h100/s31/amp/cnn_fp16 data/h100/s31/check/cnn_fp32}; do
    name=$(basename "$(dirname "$stem")")_$(basename "$stem")
    run_logged "device_$name" tt replay "$stem.et.json.gz" --device cuda:0 --warmup 5 --iters 20 \
      --kineto "$stem.kineto.json.gz" --json-out "$d/$name.json"
    summary "$(python3 - "$d/$name.json" "$name" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print("device %-24s no result: %s" % (sys.argv[2], e)); sys.exit(0)
fam = r.get("fidelity", {}).get("families", [])
orig = sum(f.get("original_device_ms", 0) for f in fam)
rep = sum(f.get("replay_device_ms", 0) for f in fam)
worst = sorted(fam, key=lambda f: -(f.get("replay_device_ms", 0) - f.get("original_device_ms", 0)))[:3]
print("device %-24s kernels replay/original %.3f (%.3f / %.3f ms); most over: %s" % (
    sys.argv[2], rep / orig if orig else 0, rep, orig,
    ", ".join("%s %+.3f ms" % (f["family"], f.get("replay_device_ms", 0) - f.get("original_device_ms", 0))
              for f in worst)))
PY
)"
  done
}

[ $# -gt 0 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
for stage in "$@"; do
  case "$stage" in
    env) run_logged env stage_env ;;
    build) ensure_build ;;
    test | replay | capture | capture_big | carried_captures | calibrate | pool_prior | calibrate_more | \
      compare | fit | dist | check | amp | compile | comm | sweep | hosttime | timeline | zipf | \
      stored_recorded | stored_device) "stage_$stage" ;;
    *) summary "unknown stage '$stage'"; exit 2 ;;
  esac
done
pack
cat "$OUT/summary.txt"
