#!/usr/bin/python3
"""Checks of the capture round trip (see roundtrip.sh). Exits 1 with one line per failure.

Usage: check_roundtrip.py ET_JSON_GZ META_JSON INSPECT_JSON
The expected top-level op count is computed here, independently of tracetwin, with the selection
rules of DESIGN.md (operator = non-empty op_schema and not c10d::, or record_param_comms; walk from
the root, keep operators without descending into them, descend through labels). A captured step
has no ProfilerStep# or DataLoader labels, so the two rules about those do not apply here.
"""
import collections
import gzip
import json
import sys


def normalized(node):
    """One node with parent, op_schema and tid as plain keys. Legacy layouts (1.0.x) have them
    so; chakra layouts (1.1.1-chakra.*, written by PyTorch 2.x) name the parent ctrl_deps and keep
    the rest in an attrs list of {name, type, value}."""
    out = {a["name"]: a.get("value") for a in node.get("attrs", [])}
    out.update({k: v for k, v in node.items() if k != "attrs"})
    if "parent" not in out:
        out["parent"] = out.get("ctrl_deps", out["id"])
    return out


def top_level_ops(nodes):
    nodes = [normalized(n) for n in nodes]
    children = collections.defaultdict(list)
    for n in nodes:
        if n["id"] != n["parent"]:
            children[n["parent"]].append(n)
    roots = [n for n in nodes if n["id"] == n["parent"]]

    def is_op(n):
        return n["name"] == "record_param_comms" or (
            bool(n.get("op_schema")) and not n["name"].startswith("c10d::"))

    count, stack = 0, list(roots)
    while stack:
        for c in children[stack.pop()["id"]]:
            if is_op(c):
                count += 1
            else:
                stack.append(c)
    return count


def main(et_path, meta_path, inspect_path):
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    with gzip.open(et_path, "rt") as f:
        et = json.load(f)
    with open(meta_path) as f:
        meta = json.load(f)
    with open(inspect_path) as f:
        try:
            inspected = json.load(f)
        except ValueError as e:
            print("roundtrip: %s is not JSON: %s" % (inspect_path, e))
            return 1

    names = {n["name"] for n in et["nodes"]}
    # The captured step must hold forward, backward and optimizer work.
    check("aten::linear" in names, "ET has no aten::linear (forward)")
    check(any(n.endswith("Backward0") for n in names), "ET has no *Backward0 node (backward)")
    check(any(n.startswith("Optimizer.step#") for n in names), "ET has no Optimizer.step# label")

    expected_ops = top_level_ops(et["nodes"])
    check(expected_ops > 0, "ET selection gives no top-level ops")
    # PyTorch 1.13's ExecutionGraphObserver writes 1.0.1; 2.x writes a chakra schema.
    if str(meta.get("torch_version", "")).startswith("1."):
        check(inspected.get("schema") == "1.0.1",
              "inspect schema is %r, expected '1.0.1'" % inspected.get("schema"))
    check(inspected.get("schema") == et["schema"],
          "inspect schema %r != ET schema %r" % (inspected.get("schema"), et["schema"]))
    got_ops = inspected.get("top_level_ops")
    check(isinstance(got_ops, int) and got_ops > 0,
          "inspect top_level_ops is %r, expected > 0" % got_ops)
    check(got_ops == expected_ops,
          "inspect top_level_ops %r != %d counted from the ET by the DESIGN.md rules"
          % (got_ops, expected_ops))
    got_nodes = inspected.get("nodes")
    check(got_nodes == len(et["nodes"]),
          "inspect nodes %r != %d nodes in the ET" % (got_nodes, len(et["nodes"])))

    samples = meta.get("samples_ms", [])
    check(meta.get("iteration_ms", 0) > 0,
          "meta iteration_ms is %r, expected > 0" % meta.get("iteration_ms"))
    check(len(samples) >= 10, "meta has %d samples, expected >= 10" % len(samples))
    check(all(s > 0 for s in samples), "meta has a non-positive sample")
    check(meta.get("threads") == 1, "meta threads is %r, expected 1" % meta.get("threads"))
    # The host record `tracetwin replay` checks the original against (cli/original_host.h).
    host = meta.get("host", {})
    check(isinstance(host.get("cpu_model"), str) and host["cpu_model"],
          "meta host.cpu_model is %r, expected a name" % host.get("cpu_model"))
    caches = host.get("caches")
    check(isinstance(caches, list) and
          all(isinstance(c.get("level"), str) and isinstance(c.get("bytes"), int) and
              c["bytes"] > 0 for c in caches),
          "meta host.caches is %r, expected [{level, bytes > 0}, ...]" % (caches,))
    for key in ("cpu_family", "cpu_model_number"):
        check(host.get(key) is None or isinstance(host[key], int),
              "meta host.%s is %r, expected an integer or null" % (key, host.get(key)))

    for f in failures:
        print("roundtrip: " + f)
    if not failures:
        print("roundtrip: ok: schema %s, %d nodes, %d top-level ops, iteration %.3f ms "
              "(median of %d)" % (et["schema"], len(et["nodes"]), expected_ops, meta["iteration_ms"], len(samples)))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__.splitlines()[2])
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
