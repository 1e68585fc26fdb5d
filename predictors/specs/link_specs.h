// The `links` list of a device or a system YAML file (device_spec.cpp,
// system_spec.cpp): each entry {name, bandwidth_gbps, latency_us}.
#pragma once

#include <vector>

#include "predictors/specs/device_spec.h"
#include "predictors/specs/yaml_strict.h"

namespace tracetwin::predictors {

// The entries of `list`, a sequence under `top`; a bad entry is an
// InputError naming it ("links[2]").
std::vector<LinkSpec> readLinkList(const yaml::MapReader& top, const YAML::Node& list);

}  // namespace tracetwin::predictors
