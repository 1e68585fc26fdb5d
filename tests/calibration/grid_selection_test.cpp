// The order a calibration sweep visits a family's grid points in.
#include "calibration/grid_selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/errors.h"

namespace tracetwin::calibration {
namespace {

std::vector<MicrobenchCase> syntheticGrid(size_t n, const std::set<size_t>& anchors) {
  std::vector<MicrobenchCase> cases(n);
  for (size_t i = 0; i < n; ++i) {
    cases[i].family = "test";
    cases[i].label = "point " + std::to_string(i);
    cases[i].est_us = 1.0 + static_cast<double>(i);  // costlier by index
    cases[i].anchor = anchors.count(i) > 0;
  }
  return cases;
}

std::vector<std::string> labels(const std::vector<MicrobenchCase>& cases) {
  std::vector<std::string> out;
  for (const MicrobenchCase& c : cases) out.push_back(c.label);
  return out;
}

TEST(SweepOrder, AnchorsComeFirstThenTheCostQuantiles) {
  std::vector<MicrobenchCase> cases = syntheticGrid(64, {63, 40});
  orderForSweep(cases, 1234);
  ASSERT_EQ(cases.size(), 64u);
  // The anchors, in grid order, whatever their cost.
  EXPECT_EQ(cases[0].label, "point 40");
  EXPECT_EQ(cases[1].label, "point 63");
  // Then 12 points at cost quantiles 0, 1/16, ..., 11/16: of 64 points
  // costing 1..64 us, every fourth from the cheapest (point 40 was one, and
  // went first as an anchor).
  std::vector<std::string> expected;
  for (size_t q = 0; q < 12; ++q) {
    if (q * 4 != 40) expected.push_back("point " + std::to_string(q * 4));
  }
  const std::vector<std::string> got = labels(cases);
  EXPECT_EQ(std::vector<std::string>(got.begin() + 2, got.begin() + 2 + 11), expected);
  // Every point once.
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), 64u);
}

TEST(SweepOrder, WithoutAnchorsTheOrderIsTheAnchorFreeOne) {
  // Anchors only move themselves: the rest keep the order the same seed
  // gives a grid without them, so calibrations stay reproducible.
  std::vector<MicrobenchCase> plain = syntheticGrid(64, {});
  std::vector<MicrobenchCase> anchored = syntheticGrid(64, {5});
  orderForSweep(plain, 99);
  orderForSweep(anchored, 99);
  std::vector<std::string> rest;
  for (const std::string& l : labels(plain)) {
    if (l != "point 5") rest.push_back(l);
  }
  const std::vector<std::string> got = labels(anchored);
  EXPECT_EQ(got.front(), "point 5");
  EXPECT_EQ(std::vector<std::string>(got.begin() + 1, got.end()), rest);
  // A different seed draws a different order.
  std::vector<MicrobenchCase> other = syntheticGrid(64, {});
  orderForSweep(other, 100);
  EXPECT_NE(labels(other), labels(plain));
}

TEST(SweepOrder, TheConvGridAnchorsItsLargestNativePathWeights) {
  std::vector<std::string> anchors;
  for (const MicrobenchCase& c : microbenchFamily("conv").cases(GridOptions{})) {
    if (c.anchor) anchors.push_back(c.label);
  }
  // Batch 1, 512 -> 512 channels, 3x3, on 1, 2 and 4 px maps at both strides.
  ASSERT_EQ(anchors.size(), 6u);
  for (const std::string& l : anchors) {
    EXPECT_EQ(l.rfind("conv2d n=1 c=512 k=512 hw=", 0), 0u) << l;
    EXPECT_NE(l.find(" r=3 "), std::string::npos) << l;
  }
}

TEST(GridDtypes, NamedDtypesReplaceTheDevicesDefault) {
  EXPECT_EQ(gridFor("cpu").dtypes, std::vector<core::DType>{core::DType::kFloat32});
  EXPECT_EQ(gridFor("cuda").dtypes.size(), 3u);
  const std::vector<core::DType> bf16 = parseGridDtypes({"bfloat16", "bfloat16"});
  EXPECT_EQ(bf16, std::vector<core::DType>{core::DType::kBFloat16});
  EXPECT_EQ(gridFor("cpu", bf16).dtypes, bf16);
  EXPECT_FALSE(gridFor("cpu", bf16).accelerator);
  EXPECT_THROW(parseGridDtypes({"int64"}), UsageError);
  EXPECT_THROW(parseGridDtypes({"bf16"}), UsageError);
}

// Every label of a bfloat16 grid names it, so `--cases` and the dataset
// tell the precisions apart; the casts autocast inserts are points of the
// copy family in both directions, and only where a half dtype is swept.
TEST(GridDtypes, AHalfGridMeasuresTheCastsBothWays) {
  auto casts = [](const std::vector<core::DType>& dtypes) {
    std::vector<std::string> out;
    for (const MicrobenchCase& c :
         gridCases(microbenchFamily("copy"), gridFor("cpu", dtypes), "^to ")) {
      out.push_back(c.label);
    }
    return out;
  };
  EXPECT_TRUE(casts({core::DType::kFloat32}).empty());
  const std::vector<std::string> bf16 = casts({core::DType::kBFloat16});
  EXPECT_NE(std::find(bf16.begin(), bf16.end(), "to float32->bfloat16 numel=4096"), bf16.end());
  EXPECT_NE(std::find(bf16.begin(), bf16.end(), "to bfloat16->float32 numel=4096"), bf16.end());
  for (const char* family : {"gemm", "norm", "elementwise"}) {
    for (const MicrobenchCase& c :
         gridCases(microbenchFamily(family), gridFor("cpu", {core::DType::kBFloat16}), "")) {
      EXPECT_NE(c.label.find("bfloat16"), std::string::npos) << c.label;
    }
  }
}

// LibTorch 1.13's CPU layer norm keeps a bfloat16 input's statistics in
// bfloat16, and its backward refuses float32 ones; CUDA's are float32.
TEST(GridDtypes, LayerNormStatisticsFollowTheDevice) {
  auto statsDtype = [](const std::string& device) {
    const std::vector<MicrobenchCase> cases = gridCases(
        microbenchFamily("norm"), gridFor(device, {core::DType::kBFloat16}), "^layer_norm ");
    EXPECT_FALSE(cases.empty());
    const core::Graph g = cases.front().build();
    for (const core::Node& n : g.nodes()) {
      if (n.name == "aten::native_layer_norm_backward") return n.inputs.at(3).tensor->dtype;
    }
    return core::DType::kUnknown;
  };
  EXPECT_EQ(statsDtype("cpu"), core::DType::kBFloat16);
  EXPECT_EQ(statsDtype("cuda"), core::DType::kFloat32);
}

}  // namespace
}  // namespace tracetwin::calibration
