#!/usr/bin/env bash
# The main job of `make demo`: replay a trace bundled in data/ and predict it
# with the calibrated host models bundled in data/models/host, side by side
# per op family (`tracetwin compare`). When the bundled models are missing or
# were calibrated on another CPU, calibrate this host on the spot first, with
# a short budget (DEMO_BUDGET_S, default 60 s), into $build/models-host.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
trace=${DEMO_TRACE:-data/mlp.et.json.gz}
models=${DEMO_MODELS:-data/models/host}
budget=${DEMO_BUDGET_S:-60}
tracetwin="$build/tracetwin"

cpu_model() { sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -1; }

# The bundled models fit the host only if device.yaml names this CPU model
# (calibrate records it in the device's sources).
models_fit_host() {
  [[ -f "$models/manifest.json" && -f "$models/device.yaml" ]] || return 1
  local cpu
  cpu=$(cpu_model)
  [[ -z "$cpu" ]] || grep -qF -- "$cpu" "$models/device.yaml"
}

if ! models_fit_host; then
  echo "demo: $models is missing or was calibrated on another CPU; calibrating this host for ${budget} s"
  models="$build/models-host"
  "$tracetwin" calibrate --out "$models" --budget-s "$budget"
fi

"$tracetwin" compare "$trace" --models "$models" --json-out "$build/demo-compare.json"
