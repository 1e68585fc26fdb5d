# Sourced by the script tests: sets $python to the first python3 that imports torch, or exits 77
# (ctest's skip code) saying so. Debian's python3-torch is /usr/bin/python3, and the python3 first
# on PATH may have no torch; elsewhere (a GPU host with a pip PyTorch) it is the other way round.
# Usage: source torch_python.sh TEST_NAME
python=""
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import torch' >/dev/null 2>&1; then python=$candidate; break; fi
done
[ -n "$python" ] || { echo "${1:-test}: no python3 with torch here: skipped"; exit 77; }
