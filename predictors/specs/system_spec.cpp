#include "predictors/specs/system_spec.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/errors.h"
#include "predictors/specs/link_specs.h"
#include "predictors/specs/yaml_strict.h"

namespace tracetwin::predictors {
namespace {

std::vector<LinkSpec> readSystemLinks(const yaml::MapReader& top) {
  YAML::Node list = top.get("links");
  if (!list.IsSequence() || list.size() == 0) top.fail(list, "'links' must be a non-empty list");
  return readLinkList(top, list);
}

}  // namespace

const LinkSpec& SystemSpec::link(const std::string& want) const {
  for (const LinkSpec& l : links) {
    if (l.name == want) return l;
  }
  throw InputError(fmt::format("system '{}': no link named '{}'", name, want));
}

const LinkSpec& SystemSpec::linkFor(int64_t world_size) const {
  return link(world_size <= devices_per_node ? intra_node_link : inter_node_link);
}

int64_t SystemSpec::nodeOf(int64_t rank) const {
  if (placement == "round_robin") return rank % nodes;
  return rank / devices_per_node;
}

SystemSpec loadSystemSpec(const std::string& path) {
  YAML::Node root = yaml::parseFile(path);
  yaml::MapReader top(root, path, "system");
  top.checkKeys({"name", "device", "devices_per_node", "nodes", "topology", "links"},
                {"description", "placement"});
  SystemSpec s;
  s.name = top.str("name");
  // At most 2^24 devices in all, the largest process group a trace may
  // record (core/comm_inputs.cpp): 2^62 devices per node on 4 nodes
  // overflowed the world size.
  constexpr int64_t kMaxDevices = int64_t{1} << 24;
  s.devices_per_node = top.intFrom("devices_per_node", 1, kMaxDevices);
  s.nodes = top.intFrom("nodes", 1, kMaxDevices);
  if (s.devices_per_node * s.nodes > kMaxDevices) {
    top.fail(top.get("nodes"),
             fmt::format("{} nodes of {} devices: expected a cluster of at most 2^24 devices",
                         s.nodes, s.devices_per_node));
  }
  if (top.has("placement")) {
    s.placement = top.str("placement");
    if (s.placement != "consecutive" && s.placement != "round_robin") {
      top.fail(top.get("placement"), fmt::format("placement '{}': expected consecutive or "
                                                 "round_robin",
                                                 s.placement));
    }
  }
  s.links = readSystemLinks(top);
  yaml::MapReader topo(top.get("topology"), path, "topology");
  topo.checkKeys({"intra_node", "inter_node"}, {});
  s.intra_node_link = topo.str("intra_node");
  s.inter_node_link = topo.str("inter_node");
  for (const char* key : {"intra_node", "inter_node"}) {
    std::string want = topo.str(key);
    bool found = false;
    for (const LinkSpec& l : s.links) found = found || l.name == want;
    if (!found)
      topo.fail(topo.get(key),
                fmt::format("topology.{} names link '{}' that 'links' does not define", key, want));
  }
  std::filesystem::path dev = top.str("device");
  if (dev.is_relative()) dev = std::filesystem::path(path).parent_path() / dev;
  s.device_path = dev.lexically_normal().string();
  s.device = loadDeviceSpec(s.device_path);
  return s;
}

void requireSystemsDevice(const SystemSpec& system, const DeviceSpec& device,
                          const std::string& system_given, const std::string& device_given) {
  if (system.device.name == device.name) return;
  throw UsageError(fmt::format(
      "{} ({}) is not the device of {} ({}): the system names its devices; give one of the two, "
      "or edit the system's",
      device_given, device.name, system_given, system.device.name));
}

}  // namespace tracetwin::predictors
