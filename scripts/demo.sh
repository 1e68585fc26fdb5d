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

# The bundled models fit the host only if they were measured on a CPU like
# this one: same clock, logical CPUs and cache sizes (`tracetwin host`). The
# CPU's name alone is not enough: the development VM kept "AMD EPYC" across
# two CPU generations.
models_fit_host() {
  [[ -f "$models/manifest.json" && -f "$models/device.yaml" ]] || return 1
  local report
  report=$("$tracetwin" host --models "$models") && grep -qx 'fits: yes' <<<"$report"
}

if ! models_fit_host; then
  echo "demo: $models is missing or was calibrated on another CPU; calibrating this host for ${budget} s"
  models="$build/models-host"
  "$tracetwin" calibrate --out "$models" --budget-s "$budget"
fi

"$tracetwin" compare "$trace" --models "$models" --json-out "$build/demo-compare.json"
