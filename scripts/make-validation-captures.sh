#!/usr/bin/env bash
# Captures the held-out workloads of the end-to-end prediction tables (docs/prediction.md,
# data/models/host/README.md): models, widths, batches and image sizes that neither the
# calibration grids nor data/ contain. Same capture settings as scripts/make-data.sh. The
# captures the bundled figures were measured on are in data/validation/ (its README).
# Usage: scripts/make-validation-captures.sh OUT_DIR
# Then:  scripts/e2e-compare.py --out DIR --rounds 5 --quiet-ms 5.2 --trace-dir OUT_DIR \
#            host=data/models/host
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
out=$1
python=/usr/bin/python3   # Debian's python3-torch; the python3 first on PATH may have no torch
"$python" -c 'import torch' 2>/dev/null || {
  echo "make-validation-captures: $python cannot import torch; install python3-torch" >&2
  exit 1
}
mkdir -p "$out"
# name workload param=value ...
captures=(
  "cnn_b8 cnn batch=8"
  "lstm lstm"
  "mobilenet_v3 mobilenet_v3"
  "squeezenet squeezenet"
  "resnet18_b4 resnet18_small batch=4 image=64"
  "cnn_c32 cnn channels=32 image=48 batch=8"
  "embbag_wide embbag rows=100000 tables=4 dim=32 batch=256"
  "lstm_h256 lstm hidden=256 seq=16 batch=16"
  "mlp_wide mlp batch=64 hidden=1024 in_features=512 layers=4"
  "mobilenet_i96 mobilenet_v3 batch=2 image=96"
  "resnet18_i96 resnet18_small batch=1 image=96"
  "transformer_d128 transformer d_model=128 heads=8 ffn=512 seq=64 batch=8 vocab=1000"
  # Session 19: models of kinds no earlier capture had (a GRU with RMSprop, dilated Conv1d,
  # a pre-norm vision transformer with GELU and AdamW, transposed convolutions).
  "gru gru"
  "tcn tcn"
  "vit_tiny vit_tiny"
  "conv_ae conv_ae"
  "conv_ae_c32 conv_ae channels=32 image=48 batch=8"
)
for spec in "${captures[@]}"; do
  read -r name workload params <<<"$spec"
  args=()
  for p in $params; do args+=(--param "$p"); done
  rm -f "$out/$name".{et.json.gz,kineto.json.gz,profiler.json.gz,meta.json}
  "$python" scripts/capture.py --workload "$workload" --name "$name" "${args[@]}" --out "$out" \
    --threads 1 --seed 0 --warmup 5 --steps 30
done
