#!/usr/bin/env python3
"""Rewrite a model set's XGBoost trees from JSON to UBJSON, in place.

Model sets written before 2026-11-27 keep their trees as `*.xgb.json`; XGBoost
parses them with its JSON reader at 80 ms per MB-sized file, which every
`tracetwin predict` paid (0.9 s for the host set). The same trees in XGBoost's
binary UBJSON (`*.xgb.ubj`, what calibration writes now) load 7-13x faster and
predict the same numbers (floats are stored as bits, not decimals).

For each DIR, every manifest.json under it (a precision's subset too): each
tree file it names is loaded with libxgboost (the C API through ctypes, the
library `tracetwin` itself loads), saved beside it as .xgb.ubj, the manifest's
references are rewritten, and the JSON file is removed. Sets that `tracetwin`
reads either way; this only makes them load faster.

  scripts/xgb-to-ubj.py data/models/host data/models/h200
"""
import argparse
import ctypes
import ctypes.util
import os
import re
import sys


def load_library():
    name = ctypes.util.find_library("xgboost") or "libxgboost.so"
    try:
        lib = ctypes.CDLL(name)
    except OSError as e:
        raise SystemExit(f"xgb-to-ubj.py: cannot load XGBoost ({name}): {e} (install libxgboost0)")
    lib.XGBGetLastError.restype = ctypes.c_char_p
    return lib


def convert_file(lib, src, dst):
    handle = ctypes.c_void_p()
    if lib.XGBoosterCreate(None, ctypes.c_uint64(0), ctypes.byref(handle)) != 0:
        raise SystemExit("xgb-to-ubj.py: XGBoosterCreate failed: %s" % lib.XGBGetLastError().decode())
    try:
        for call, path in (("XGBoosterLoadModel", src), ("XGBoosterSaveModel", dst)):
            if getattr(lib, call)(handle, path.encode()) != 0:
                raise SystemExit("xgb-to-ubj.py: %s: %s failed: %s"
                                 % (path, call, lib.XGBGetLastError().decode()))
    finally:
        lib.XGBoosterFree(handle)


def convert_set(lib, directory):
    """Converts the set in `directory`; returns the number of files converted."""
    manifest = os.path.join(directory, "manifest.json")
    with open(manifest) as f:
        text = f.read()
    names = sorted(set(re.findall(r'"([^"/\\]+)\.xgb\.json"', text)))
    for stem in names:
        src = os.path.join(directory, stem + ".xgb.json")
        if not os.path.exists(src):
            raise SystemExit(f"xgb-to-ubj.py: {manifest} names {stem}.xgb.json, which is missing")
        convert_file(lib, src, os.path.join(directory, stem + ".xgb.ubj"))
        text = text.replace(f'"{stem}.xgb.json"', f'"{stem}.xgb.ubj"')
    tmp = manifest + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, manifest)
    for stem in names:  # only once the manifest names the new files
        os.remove(os.path.join(directory, stem + ".xgb.json"))
    return len(names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="a model set (manifest.json inside)")
    args = ap.parse_args()
    lib = load_library()
    for top in args.dirs:
        sets = [root for root, _, files in os.walk(top) if "manifest.json" in files]
        if not sets:
            raise SystemExit(f"xgb-to-ubj.py: {top}: no manifest.json in it or below")
        for directory in sorted(sets):
            print(f"{directory}: {convert_set(lib, directory)} tree file(s) now .xgb.ubj")


if __name__ == "__main__":
    sys.exit(main())
