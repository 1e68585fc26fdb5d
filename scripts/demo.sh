#!/usr/bin/env bash
# The main job of `make demo`, on a trace bundled in data/.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
trace=${DEMO_TRACE:-data/mlp.et.json.gz}
"$build/tracetwin" inspect "$trace"
