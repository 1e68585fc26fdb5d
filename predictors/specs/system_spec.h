// A cluster: devices per node, node count, topology and link types, loaded
// from configs/systems/*.yaml with the same strict rules as device specs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "predictors/specs/device_spec.h"

namespace tracetwin::predictors {

struct SystemSpec {
  std::string name;
  std::string device_path;  // resolved path of the device file
  DeviceSpec device;
  int64_t devices_per_node = 1;
  int64_t nodes = 1;
  std::string intra_node_link;  // names one of `links`
  std::string inter_node_link;
  std::vector<LinkSpec> links;
  // Which node rank r runs on: "consecutive" (r / devices_per_node, what
  // torchrun and Slurm do by default) or "round_robin" (r % nodes).
  std::string placement = "consecutive";

  int64_t worldSize() const { return devices_per_node * nodes; }
  // The link collectives over `world_size` ranks cross: intra-node when they
  // fit in one node, else inter-node.
  const LinkSpec& linkFor(int64_t world_size) const;
  const LinkSpec& link(const std::string& name) const;
  // The node of `rank`; ranks beyond nodes x devices_per_node go on to
  // further nodes of the same kind.
  int64_t nodeOf(int64_t rank) const;
};

// Throws InputError "FILE:LINE:COL: ..." for unknown/missing/mistyped keys and
// for topology links that `links` does not define; device file errors name
// the device file.
SystemSpec loadSystemSpec(const std::string& path);

// Throws UsageError unless `device` (given as `device_given`, e.g.
// "--device-spec FILE") is the device `system` (given as `system_given`)
// names: a target device beside a system file was one of the two ignored.
void requireSystemsDevice(const SystemSpec& system, const DeviceSpec& device,
                          const std::string& system_given, const std::string& device_given);

}  // namespace tracetwin::predictors
