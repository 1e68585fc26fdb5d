// Collectives on a cluster's topology (predictors/comm/topology.h), worked
// out by hand from the DGX H100 file: 8 GPUs a node, NVLink 450 GB/s and
// 2 us inside, InfiniBand 50 GB/s and 5 us between nodes.
#include "predictors/comm/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "predictors/kernels/features.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

using tracetwin::testing::sourcePath;

SystemSpec dgxH100(int64_t nodes, const std::string& placement = "consecutive") {
  SystemSpec s = loadSystemSpec(sourcePath("configs/systems/dgx-h100.yaml"));
  s.nodes = nodes;
  s.placement = placement;
  return s;
}

std::vector<int64_t> firstRanks(int64_t p) {
  std::vector<int64_t> v;
  for (int64_t r = 0; r < p; ++r) v.push_back(r);
  return v;
}

constexpr double kNv = 450e9, kIb = 50e9, kNvLat = 2e-6, kIbLat = 5e-6;
constexpr double kGB = 1e9;

TEST(Topology, InsideANodeAllReduceIsARingOnNvlink) {
  const double t = topologySeconds(dgxH100(2), "allreduce", firstRanks(8), kGB);
  EXPECT_NEAR(t, 2 * 7 * kNvLat + 2 * 7.0 / 8 * kGB / kNv, 1e-12);
}

TEST(Topology, AcrossNodesAllReduceIsHierarchical) {
  // 16 ranks on 2 nodes: reduce-scatter over 8 on NVLink, all-reduce of an
  // eighth over 2 on InfiniBand, all-gather over 8 on NVLink.
  const double rs = 7 * kNvLat + 7.0 / 8 * kGB / kNv;
  const double ar = 2 * 1 * kIbLat + 2 * 1.0 / 2 * (kGB / 8) / kIb;
  EXPECT_NEAR(topologySeconds(dgxH100(2), "all_reduce", firstRanks(16), kGB), rs + ar + rs,
              1e-12);
  const GroupPlacement g = placementOf(dgxH100(2), firstRanks(16));
  EXPECT_EQ(g.nodes, 2);
  EXPECT_EQ(g.per_node, 8);
}

TEST(Topology, AllToAllSplitsItsBytesBetweenTheLinks) {
  // 16 ranks, 8 a node: 7/16 of each rank's bytes stay inside, 8/16 leave.
  const double t = topologySeconds(dgxH100(2), "all_to_all_single", firstRanks(16), kGB);
  EXPECT_NEAR(t, 7 * kNvLat + 7.0 / 16 * kGB / kNv + 8 * kIbLat + 8.0 / 16 * kGB / kIb, 1e-12);
}

TEST(Topology, PlacementDecidesWhichLinkAPairCrosses) {
  // Ranks 0 and 8 of a consecutive placement sit on two nodes: InfiniBand.
  EXPECT_NEAR(topologySeconds(dgxH100(2), "all_reduce", {0, 8}, kGB),
              2 * kIbLat + 2 * 0.5 * kGB / kIb, 1e-12);
  // Ranks 0 and 1 share a node ... unless placed round-robin over 2 nodes.
  EXPECT_NEAR(topologySeconds(dgxH100(2), "all_reduce", {0, 1}, kGB),
              2 * kNvLat + 2 * 0.5 * kGB / kNv, 1e-12);
  EXPECT_NEAR(topologySeconds(dgxH100(2, "round_robin"), "all_reduce", {0, 1}, kGB),
              2 * kIbLat + 2 * 0.5 * kGB / kIb, 1e-12);
}

TEST(Topology, TheModelRunsAWorldOnTheFirstRanks) {
  TopologyCommModel m(dgxH100(4));
  OpFeatures f;
  f.collective = "all_gather";
  f.world_size = 32;
  f.message_bytes = kGB;
  const double us = m.predictUs(f, DeviceSpec{});
  // all_gather over 4 nodes of 8: inter all-gather of an eighth, then intra.
  const double inter = 3 * kIbLat + 3.0 / 4 * (kGB / 8) / kIb;
  const double intra = 7 * kNvLat + 7.0 / 8 * kGB / kNv;
  EXPECT_NEAR(us, 1e6 * (inter + intra), 1e-6);
  EXPECT_EQ(m.kind(), "topology:dgx-h100");
  EXPECT_THROW(m.save("", ""), UsageError);
}

TEST(Topology, ASystemFileNamesItsPlacement) {
  auto path = std::filesystem::temp_directory_path() / "tracetwin_rr_system.yaml";
  auto write = [&](const char* placement) {
    std::ofstream(path) << "name: x\ndevice: " << sourcePath("configs/devices/h100.yaml")
                        << "\ndevices_per_node: 4\nnodes: 2\nplacement: " << placement
                        << "\ntopology:\n  intra_node: nvlink\n  inter_node: nvlink\n"
                           "links:\n  - {name: nvlink, bandwidth_gbps: 450, latency_us: 2}\n";
  };
  write("round_robin");
  const SystemSpec s = loadSystemSpec(path.string());
  EXPECT_EQ(s.nodeOf(5), 1);
  EXPECT_EQ(s.nodeOf(6), 0);
  write("scattered");
  EXPECT_THROW(loadSystemSpec(path.string()), InputError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tracetwin::predictors
