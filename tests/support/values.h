// Recorded argument values for tests that build execution-trace nodes by
// hand: scalars, strings, lists and tensors, as the trace reader makes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/value.h"

namespace tracetwin::testing {

inline constexpr int64_t kMiB = int64_t{1} << 20;

core::Value intValue(int64_t x);
core::Value doubleValue(double x);
core::Value boolValue(bool b);
core::Value noneValue();
core::Value stringValue(std::string s);
// `type` as the trace records it: "GenericList[Int,Int]", "GenericList[Tensor]".
core::Value listValue(std::vector<core::Value> elements, std::string type = "GenericList[]");
core::Value intListValue(const std::vector<int64_t>& xs, std::string type = "GenericList[]");
// An int list as newer traces type it ("GenericList[Int]").
core::Value intList(const std::vector<int64_t>& xs);
core::Value tensorList(std::vector<core::Value> tensors, std::string type = "GenericList[Tensor]");

// A tensor with the ids given: tests of aliasing (replay's slots, views)
// choose them. `dtype` is the trace's name ("float", "long int").
core::Value tensorValue(int64_t id, int64_t storage, std::vector<int64_t> shape,
                        const std::string& dtype = "float", int64_t itemsize = 4,
                        const std::string& device = "cpu");
// "Tensor(nullptr (uninitialized))", as traces record an absent Tensor?.
core::Value undefinedTensor(int64_t id);
// A tensor with fresh ids (from 1001 on, one counter per test program), its
// own storage unless `storage` is given; for tests where only shapes matter.
core::Value tensor(std::vector<int64_t> shape, core::DType dtype = core::DType::kFloat32,
                   int64_t storage = 0, std::string device = "cuda:0");
// A CPU float tensor of `mib` MiB on `storage` (tests of cache traffic).
core::Value mibTensor(int64_t mib, int64_t storage);

}  // namespace tracetwin::testing
