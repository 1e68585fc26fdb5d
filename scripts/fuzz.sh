#!/usr/bin/env bash
# Fuzzes the trace reader with libFuzzer for a bounded time, then the
# operator-schema and device-spec parsers, the Kineto reader, the Chakra
# reader, the sweep-file loader, model manifests, index-distribution and cluster files
# for half of it each, and says how long each ran clean. Usage: scripts/fuzz.sh [seconds=120] [build-dir=build-fuzz]
# Crashing inputs are written to <build-dir>/crashes/ and fail the script.
set -euo pipefail
seconds="${1:-120}"
build="${2:-build-fuzz}"
root="$(cd "$(dirname "$0")/.." && pwd)"
traces="${TRACETWIN_SHARED_TRACES:-$root/../shared/traces}"
cd "$root"

# UBSan findings stop the run (as in cmake/Sanitizers.cmake): by default they
# only print, and the tail of each target's log below would hide them.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTRACETWIN_BUILD_FUZZ=ON -DTRACETWIN_BUILD_TESTS=OFF -DTRACETWIN_BUILD_BENCH=OFF \
  -DTRACETWIN_WITH_TORCH=OFF -DTRACETWIN_CUDA=OFF \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >/dev/null
cmake --build "$build" -j 2 --target trace_reader_fuzz op_schema_fuzz device_spec_fuzz \
  kineto_reader_fuzz chakra_reader_fuzz sweep_spec_fuzz model_set_fuzz index_distribution_fuzz \
  system_spec_fuzz

# Seeds: the small shared traces (uncompressed and gzip), plus snippets that
# reach the legacy layout, nested lists, inf/nan and comms attributes quickly.
corpus="$build/corpus"
mkdir -p "$corpus" "$build/crashes"
for t in pt2_triton_1.1.1_et.json.gz allgather_1.0.2_et.json.gz; do
  [ -f "$traces/$t" ] || continue
  cp "$traces/$t" "$corpus/$t"
  gzip -dc "$traces/$t" > "$corpus/${t%.gz}"
done
printf '%s' '{"schema": "1.0.1", "nodes": [{"name": "aten::add", "id": 3, "parent": 1, "op_schema": "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "inputs": [[5,6,0,8,4,"cpu"],[7,8,0,8,4],"inf"], "input_shapes": [[2,4],[2,4],[]], "input_types": ["Tensor(float)","Tensor(float)","Double"], "outputs": [], "output_shapes": [], "output_types": []}, {"name": "[pytorch|profiler|execution_graph|process]", "id": 1, "parent": 1, "inputs": [], "input_shapes": [], "input_types": []}]}' > "$corpus/legacy.json"
printf '%s' '{"schema": "1.1.1-chakra.0.0.4", "nodes": [{"id": 3, "name": "record_param_comms", "ctrl_deps": 1, "inputs": {"values": [[[[1,2,0,1,4,"cuda:0"],[3,0,0,0,0,""]]], ["0","pg"], "<None>"], "shapes": [[[[1],[]]],[[],[]],[]], "types": ["GenericList[GenericList[Tensor(float),Tensor(nullptr (uninitialized))]]","Tuple[String,String]","None"], "strides": [[[[1],[]]]]}, "outputs": {"values": [], "shapes": [], "types": []}, "attrs": [{"name": "collective_name", "type": "string", "value": "all_reduce"}, {"name": "in_split_size", "type": "string", "value": "[1, 2]"}]}, {"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1, "attrs": []}]}' > "$corpus/modern.json"

# Seeds of the two smaller targets: the shipped device specs, and schemas
# with alias annotations, optional lists, defaults, varargs and tuples.
mkdir -p "$build/corpus-specs" "$build/corpus-schemas"
cp configs/devices/*.yaml data/models/host/device.yaml "$build/corpus-specs/"
i=0
for schema in \
  'aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor' \
  'aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)' \
  'aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor' \
  'aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]' \
  'aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)' \
  'prim::Constant(...) -> ...'; do
  i=$((i + 1)); printf '%s' "$schema" > "$build/corpus-schemas/seed$i"
done

# Seeds of the Kineto reader: the CPU profiles beside the bundled traces and
# the H100 Kineto traces (whose ET the target links against), uncompressed.
mkdir -p "$build/corpus-kineto"
for t in data/cnn.profiler.json.gz data/mlp.profiler.json.gz data/embbag.profiler.json.gz \
  data/h100/*.kineto.json.gz; do
  gzip -dc "$t" > "$build/corpus-kineto/$(basename "${t%.gz}")"
done

# Seeds of the Chakra reader: the shared converter trace's first 256 KiB (it
# ends inside a node: the fuzzer mutates from there), and small ETs written by
# export when a tracetwin build is there (build/tracetwin).
mkdir -p "$build/corpus-chakra"
if [ -f "$traces/chakra_protobuf.0.et.gz" ]; then
  gzip -dc "$traces/chakra_protobuf.0.et.gz" | head -c 262144 > "$build/corpus-chakra/converter.et" || true
fi
if [ -x build/tracetwin ]; then
  build/tracetwin export --chakra "$build/corpus-chakra/pt2.et" "$traces/pt2_triton_1.1.1_et.json.gz" >/dev/null
  build/tracetwin export --chakra "$build/corpus-chakra/allgather.et" "$traces/allgather_1.0.2_et.json.gz" >/dev/null
fi

# Seeds of the sweep-file loader: the shipped sweep files (every strategy,
# row- and column-wise splits, Zipf tables), named by their folder.
mkdir -p "$build/corpus-sweeps"
for f in $(find configs/sweeps -name '*.yaml'); do
  cp "$f" "$build/corpus-sweeps/$(echo "${f#configs/sweeps/}" | tr / _)"
done

# Seeds of the model-manifest target: the bundled host manifest (the target's
# copy of the set holds its files) and its bfloat16 set's. Seeds of the
# index-distribution target: rules for embbag_sparse's lookup (node 58, a
# 200,000 x 32 table): by node, by shape, a row-wise shard's tail, uniform.
mkdir -p "$build/corpus-manifests" "$build/corpus-index"
cp data/models/host/manifest.json "$build/corpus-manifests/host.json"
cp data/models/host/bfloat16/manifest.json "$build/corpus-manifests/bfloat16.json"
printf 'tables:\n  - {node: 58, zipf: 1.05, name: t0}\n' > "$build/corpus-index/node.yaml"
printf 'tables:\n  - {rows: 200000, dim: 32, zipf: 1.2}\n  - {rows: 5000}\n' \
  > "$build/corpus-index/shape.yaml"
printf 'tables:\n  - {node: 58, zipf: 1.1, first_row: 1000000}\n' > "$build/corpus-index/shard.yaml"
printf 'tables:\n  - {rows: 200000}\n' > "$build/corpus-index/uniform.yaml"

# Seeds of the cluster-file target: the shipped systems (their devices are
# the target's copy of configs/devices).
mkdir -p "$build/corpus-systems"
cp configs/systems/*.yaml "$build/corpus-systems/"

# fuzz TARGET CORPUS SECONDS: -rss_limit_mb keeps each within a few times its
# input (inputs are capped at 1 MiB here); -timeout catches hangs.
fuzz() {
  local target=$1 corpus=$2 secs=$3 start status elapsed
  start=$(date +%s)
  set +e
  "$build/fuzz/$target" "$corpus" -max_total_time="$secs" -max_len=1048576 \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/crashes/" -print_final_stats=1 \
    2>&1 | tail -n 25
  status=${PIPESTATUS[0]}
  set -e
  elapsed=$(( $(date +%s) - start ))
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $target FAILED after ${elapsed} s; reproducer(s) in $build/crashes/" >&2
    exit 1
  fi
  echo "fuzz: $target ran clean for ${elapsed} s"
}
fuzz trace_reader_fuzz "$corpus" "$seconds"
fuzz op_schema_fuzz "$build/corpus-schemas" $(( (seconds + 1) / 2 ))
fuzz device_spec_fuzz "$build/corpus-specs" $(( (seconds + 1) / 2 ))
fuzz kineto_reader_fuzz "$build/corpus-kineto" $(( (seconds + 1) / 2 ))
fuzz chakra_reader_fuzz "$build/corpus-chakra" $(( (seconds + 1) / 2 ))
fuzz sweep_spec_fuzz "$build/corpus-sweeps" $(( (seconds + 1) / 2 ))
fuzz model_set_fuzz "$build/corpus-manifests" $(( (seconds + 1) / 2 ))
fuzz index_distribution_fuzz "$build/corpus-index" $(( (seconds + 1) / 2 ))
fuzz system_spec_fuzz "$build/corpus-systems" $(( (seconds + 1) / 2 ))
