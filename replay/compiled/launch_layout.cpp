#include "replay/compiled/launch_layout.h"

#include <fmt/core.h>

#include <cctype>
#include <cstring>
#include <map>
#include <unordered_map>

namespace tracetwin::replay::compiled {
namespace {

struct RecordedArg {
  const core::Value* value;
  int32_t tensor = -1;  // flat tensor index when the value is a tensor
};

// The node's inputs, each with its index among the flattened tensors (the
// order planSpecialTensors hands tensors to a special op).
std::vector<RecordedArg> recordedArgs(const core::Node& node) {
  std::vector<RecordedArg> out;
  int32_t flat = 0;
  for (const core::Value& v : node.inputs) {
    RecordedArg a{&v};
    if (v.isTensor()) a.tensor = flat;
    core::forEachTensor(v, [&](const core::TensorValue&) { ++flat; });
    out.push_back(a);
  }
  return out;
}

// Pointee types Triton writes ("*fp32") and the tensor dtypes they take.
core::DType pointeeDtype(const std::string& type) {
  static const std::unordered_map<std::string, core::DType> kTable = {
      {"fp32", core::DType::kFloat32}, {"f32", core::DType::kFloat32},
      {"fp16", core::DType::kFloat16}, {"bf16", core::DType::kBFloat16},
      {"fp64", core::DType::kFloat64}, {"i64", core::DType::kInt64},
      {"i32", core::DType::kInt32},    {"i16", core::DType::kInt16},
      {"i8", core::DType::kInt8},      {"u8", core::DType::kUInt8},
      {"i1", core::DType::kBool},
  };
  auto it = kTable.find(type.substr(1));
  return it == kTable.end() ? core::DType::kUnknown : it->second;
}

bool isIntType(const std::string& t) {
  static const char* kInts[] = {"i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64"};
  for (const char* k : kInts)
    if (t == k) return true;
  return false;
}

uint16_t halfBits(float f) {
  // Round to nearest even via the float's bits; scalars passed to Inductor
  // kernels are rare and small, subnormal halves flush to zero here.
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff)
    return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) return static_cast<uint16_t>(sign);
  uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(h);
}

uint16_t bfloat16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

uint64_t scalarBits(const std::string& type, const core::Value& v, const std::string& where) {
  const bool is_int = v.kind == core::ValueKind::kInt;
  const bool is_bool = v.kind == core::ValueKind::kBool;
  const bool is_double = v.kind == core::ValueKind::kDouble;
  if (isIntType(type)) {
    if (is_int) return static_cast<uint64_t>(v.int_value);
    if (is_bool) return v.bool_value ? 1u : 0u;
  } else if (is_int || is_double) {
    const double d = is_int ? static_cast<double>(v.int_value) : v.double_value;
    const float f = static_cast<float>(d);
    uint64_t bits = 0;
    if (type == "fp32" || type == "f32") {
      uint32_t b;
      std::memcpy(&b, &f, 4);
      bits = b;
    } else if (type == "fp64") {
      std::memcpy(&bits, &d, 8);
    } else if (type == "fp16") {
      bits = halfBits(f);
    } else if (type == "bf16") {
      bits = bfloat16Bits(f);
    } else {
      throw LayoutError(fmt::format("{}: parameter type {} is not supported", where, type));
    }
    return bits;
  }
  throw LayoutError(fmt::format("{}: a {} parameter, but the trace recorded a {}", where, type,
                                core::valueKindName(v.kind)));
}

// Which kernel arguments CachingAutotuner.run took: all but the config's
// block sizes; older Inductor passed no constexpr at all.
std::vector<const KernelArg*> runArgs(const CompiledKernelSpec& spec, size_t recorded,
                                      const std::string& where) {
  std::vector<const KernelArg*> all_but_config, non_constexpr;
  for (const KernelArg& a : spec.args) {
    if (spec.block_sizes.count(a.name) == 0) all_but_config.push_back(&a);
    if (a.type != "constexpr") non_constexpr.push_back(&a);
  }
  for (const auto* candidate : {&all_but_config, &non_constexpr}) {
    const size_t n = candidate->size();
    if (recorded == n || recorded == n + 1 || recorded == n + 2) return *candidate;
  }
  throw LayoutError(fmt::format("{}: the trace recorded {} values for {} arguments", where,
                                recorded, all_but_config.size()));
}

uint32_t ceilDiv(int64_t n, int64_t block) {
  return static_cast<uint32_t>((n + block - 1) / block);
}

// One grid dimension: numel `dim`numel over `DIM`BLOCK. A block size that is
// no argument of the kernel is 1 (one program per row).
int64_t gridDim(const CompiledKernelSpec& spec, const std::map<std::string, int64_t>& numels,
                const char* dim, const std::string& where) {
  const std::string numel_name = std::string(dim) + "numel";
  auto n = numels.find(numel_name);
  if (n == numels.end()) {
    throw LayoutError(
        fmt::format("{}: the grid needs {}, which the kernel does not take", where, numel_name));
  }
  std::string block_name = dim;
  for (char& c : block_name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  block_name += "BLOCK";
  int64_t block = 1;
  if (auto b = spec.block_sizes.find(block_name); b != spec.block_sizes.end()) {
    block = b->second;
  } else {
    for (const KernelArg& a : spec.args) {
      if (a.name == block_name) {
        throw LayoutError(fmt::format("{}: the launch config sets no {}", where, block_name));
      }
    }
  }
  if (block <= 0) throw LayoutError(fmt::format("{}: {} = {}", where, block_name, block));
  return n->second <= 0 ? 0 : ceilDiv(n->second, block);
}

constexpr int64_t kMaxGridY = 65535;  // CUDA's limit on gridDim.y and .z

std::array<int64_t, 3> computeGrid(const CompiledKernelSpec& spec,
                                   const std::map<std::string, int64_t>& numels,
                                   const std::string& where) {
  std::string type = spec.grid_type;
  if (type.empty()) {  // older Inductor: one grid dimension per non-reduction numel
    type = numels.count("znumel") ? "Grid3D" : numels.count("ynumel") ? "Grid2D" : "Grid1D";
  }
  std::array<int64_t, 3> g{1, 1, 1};
  if (type == "Grid1D" || type == "Grid2D" || type == "Grid3D") {
    g[0] = gridDim(spec, numels, "x", where);
    if (type != "Grid1D") g[1] = gridDim(spec, numels, "y", where);
    if (type == "Grid3D") g[2] = gridDim(spec, numels, "z", where);
  } else if (type == "Grid2DWithYZOverflow") {
    // y blocks beyond CUDA's limit spill into z (Inductor's own split).
    g[0] = gridDim(spec, numels, "x", where);
    const int64_t y = gridDim(spec, numels, "y", where);
    const int64_t z = (y + kMaxGridY - 1) / kMaxGridY;
    g[1] = z > 0 ? (y + z - 1) / z : 0;
    g[2] = z;
  } else {
    throw LayoutError(fmt::format("{}: grid type {} is not supported", where, type));
  }
  if (g[0] > 0x7fffffff || g[1] > kMaxGridY || g[2] > kMaxGridY) {
    throw LayoutError(
        fmt::format("{}: grid ({}, {}, {}) beyond CUDA's limits", where, g[0], g[1], g[2]));
  }
  return g;
}

}  // namespace

LaunchPlan planLaunch(const CompiledKernelSpec& spec, const core::Node& node) {
  const std::string where = fmt::format("node {} ({})", node.id, spec.name);
  std::vector<RecordedArg> recorded = recordedArgs(node);
  const std::vector<const KernelArg*> args = runArgs(spec, recorded.size(), where);
  // After the arguments the observer appends the stream (an Int) and, in
  // some releases, the grid as a String before it.
  if (recorded.size() > args.size()) {
    if (recorded.back().value->kind != core::ValueKind::kInt) {
      throw LayoutError(fmt::format("{}: the value after the arguments is a {}, not the stream",
                                    where, core::valueKindName(recorded.back().value->kind)));
    }
    recorded.pop_back();
  }
  if (recorded.size() > args.size()) {
    if (recorded.back().value->kind != core::ValueKind::kString) {
      throw LayoutError(
          fmt::format("{}: {} values for {} arguments", where, recorded.size() + 1, args.size()));
    }
    recorded.pop_back();
  }

  LaunchPlan plan;
  std::map<std::string, int64_t> numels;
  for (size_t i = 0; i < args.size(); ++i) {
    const KernelArg& a = *args[i];
    const core::Value& v = *recorded[i].value;
    const std::string arg_where = fmt::format("{} argument {} ({})", where, i, a.name);
    if (v.kind == core::ValueKind::kInt && a.name.size() > 5 &&
        a.name.compare(a.name.size() - 5, 5, "numel") == 0) {
      numels[a.name] = v.int_value;
    }
    if (a.type == "constexpr" || spec.constants.count(a.name)) continue;  // compiled in
    LaunchParam p;
    p.name = a.name;
    if (!a.type.empty() && a.type[0] == '*') {
      if (v.kind == core::ValueKind::kNone) {
        p.kind = LaunchParam::Kind::kNull;
      } else if (!v.isTensor()) {
        throw LayoutError(fmt::format("{}: a {} pointer, but the trace recorded a {}", arg_where,
                                      a.type, core::valueKindName(v.kind)));
      } else {
        const core::DType want = pointeeDtype(a.type);
        if (want != core::DType::kUnknown && v.tensor->defined() && v.tensor->dtype != want) {
          throw LayoutError(fmt::format("{}: a {} pointer, but the tensor is {}", arg_where, a.type,
                                        core::dtypeName(v.tensor->dtype)));
        }
        p.kind = LaunchParam::Kind::kTensor;
        p.tensor = recorded[i].tensor;
      }
    } else {
      p.kind = LaunchParam::Kind::kScalar;
      p.bits = scalarBits(a.type, v, arg_where);
    }
    plan.params.push_back(std::move(p));
  }
  if (spec.binary.global_scratch_param)
    plan.params.push_back({LaunchParam::Kind::kNull, -1, 0, "global_scratch"});
  if (spec.binary.profile_scratch_param)
    plan.params.push_back({LaunchParam::Kind::kNull, -1, 0, "profile_scratch"});

  const std::array<int64_t, 3> grid = computeGrid(spec, numels, where);
  for (size_t d = 0; d < 3; ++d) {
    plan.grid[d] = static_cast<uint32_t>(grid[d]);
    plan.empty = plan.empty || grid[d] == 0;
  }
  plan.block_x = static_cast<uint32_t>(spec.binary.num_warps * spec.binary.warp_size);
  plan.shared_bytes = static_cast<uint32_t>(spec.binary.shared_bytes);
  if (plan.block_x == 0 || plan.block_x > 1024) {
    throw LayoutError(fmt::format("{}: {} threads per block", where, plan.block_x));
  }
  return plan;
}

}  // namespace tracetwin::replay::compiled
