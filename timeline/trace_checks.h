// The trace-event format's rules, checked on a written timeline: what the
// tests hold every --timeline file to (docs/timeline.md, "Checks").
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::timeline {

struct CheckOptions {
  // When set, every slice's args.et_node must be one of these (ids resolvable).
  const std::set<core::NodeId>* nodes = nullptr;
};

// Problems found, one sentence each (empty: the trace keeps every rule):
//  - the document is {"traceEvents": [...]}; every event has a known "ph"
//    ("X", "M", "s", "f"), an integer pid and tid;
//  - "X": a string name, ts >= 0 and dur >= 0 (numbers, microseconds);
//  - "M": process_name / thread_name with args.name, sort indexes with
//    args.sort_index; every pid and (pid, tid) with slices is named;
//  - per track, slices appear in start order and nest: each slice lies
//    inside the one enclosing it (its parent) or after it;
//  - flows: each id has one "s" and one "f" ("bp": "e"), each lies within
//    a slice on its track, and the innermost slices they bind to belong to
//    one node (an op and its kernel);
//  - args.et_node, where given, is a known node (CheckOptions::nodes).
std::vector<std::string> checkTraceEvents(const nlohmann::json& doc,
                                          const CheckOptions& options = {});

}  // namespace tracetwin::timeline
