// Collective attributes from record_param_comms' positional inputs, for
// traces older than schema 1.1.0 (which records them as attrs). The inputs
// follow torch.distributed's record_param_comms signature:
//   1.0.1:  seq, pg_id, rank, "coll", in_splits, out_splits           (no tensors)
//   1.0.2:  [tensors], seq, pg_id, rank, "coll", in_splits, out_splits, world_size
//   1.0.3+: [tensors], seq, (pg_name, pg_desc), rank, "coll", in_splits, out_splits,
//           global_rank_start, global_rank_stride, world_size
#include <fmt/core.h>

#include <array>
#include <limits>
#include <unordered_map>

#include "core/errors.h"
#include "core/node_attributes.h"

namespace tracetwin::core::detail {
namespace {

// c10::ScalarType names, the spelling of the 1.1.0 "dtype" attribute.
const char* scalarTypeName(DType d) {
  static constexpr std::array<const char*, 13> kNames{
      "",      "Float", "Double", "Half", "BFloat16",     "Char",         "Byte",
      "Short", "Int",   "Long",   "Bool", "ComplexFloat", "ComplexDouble"};
  return kNames[static_cast<size_t>(d)];
}

// Saturates at 2^63-1, which checkCommCounts then refuses.
int64_t sumNumel(const std::vector<Value>& values, DType* first_dtype) {
  int64_t total = 0;
  for (const Value& v : values) {
    forEachTensor(v, [&](const TensorValue& t) {
      if (__builtin_add_overflow(total, t.numel, &total))
        total = std::numeric_limits<int64_t>::max();
      if (first_dtype != nullptr && *first_dtype == DType::kUnknown) *first_dtype = t.dtype;
    });
  }
  return total;
}

std::vector<int64_t> intsOf(const Value& list) {
  std::vector<int64_t> out;
  for (const Value& e : list.elements) {
    if (e.kind == ValueKind::kInt) out.push_back(e.int_value);
  }
  return out;
}

}  // namespace

void fillCommFromInputs(Node& node) {
  if (!node.comm) node.comm.emplace();
  CommAttributes& c = *node.comm;
  const std::vector<Value>& in = node.inputs;
  DType dtype = DType::kUnknown;
  const int64_t in_numel = sumNumel(in, &dtype);
  if (c.in_msg_nelems == 0) c.in_msg_nelems = in_numel;
  if (c.out_msg_nelems == 0) c.out_msg_nelems = sumNumel(node.outputs, nullptr);
  if (c.dtype.empty()) c.dtype = scalarTypeName(dtype);
  size_t name_at = in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].kind == ValueKind::kString) {
      name_at = i;
      break;
    }
  }
  if (name_at == in.size()) return;  // not the layout above: leave it unset
  if (c.collective_name.empty()) c.collective_name = in[name_at].string_value;
  // (pg_name, pg_desc) two places before the collective name (1.0.3+).
  if (name_at >= 2 && in[name_at - 2].kind == ValueKind::kTuple &&
      in[name_at - 2].elements.size() == 2 && c.pg_name.empty()) {
    c.pg_name = in[name_at - 2].elements[0].string_value;
    c.pg_desc = in[name_at - 2].elements[1].string_value;
  }
  size_t next = name_at + 1;
  if (next + 1 < in.size() && in[next].isList() && in[next + 1].isList()) {
    if (c.in_split_size.empty()) c.in_split_size = intsOf(in[next]);
    if (c.out_split_size.empty()) c.out_split_size = intsOf(in[next + 1]);
    next += 2;
  }
  const size_t trailing = in.size() - next;
  for (size_t i = next; i < in.size(); ++i) {
    if (in[i].kind != ValueKind::kInt) return;
  }
  if (trailing == 3) {
    if (c.global_rank_start < 0) c.global_rank_start = in[next].int_value;
    if (c.global_rank_stride < 0) c.global_rank_stride = in[next + 1].int_value;
    if (c.pg_size < 0) c.pg_size = in[next + 2].int_value;
  } else if (trailing == 1 && c.pg_size < 0) {
    c.pg_size = in[next].int_value;
  }
}

void checkCommCounts(const Node& node, const std::string& source) {
  if (!node.comm) return;
  const CommAttributes& c = *node.comm;
  // An unknown dtype counts as the widest element (complex double).
  const int64_t recorded = commItemsize(c.dtype);
  const int64_t itemsize = recorded > 0 ? recorded : 16;
  const auto check = [&](int64_t count, const char* what) {
    int64_t bytes = 0;
    if (count < 0 || __builtin_mul_overflow(count, itemsize, &bytes)) {
      throw InputError(fmt::format(
          "{}: node {}: {} {}: expected a count of elements whose {}-byte {} values fit in 64 "
          "bits",
          source, node.id, what, count, itemsize, c.dtype.empty() ? "(unknown dtype)" : c.dtype));
    }
  };
  check(c.in_msg_nelems, "in_msg_nelems");
  check(c.out_msg_nelems, "out_msg_nelems");
  const auto checkSplits = [&](const std::vector<int64_t>& splits, const char* what) {
    int64_t total = 0;
    for (const int64_t s : splits) {
      check(s, what);
      if (__builtin_add_overflow(total, s, &total)) total = std::numeric_limits<int64_t>::max();
    }
    check(total, fmt::format("{}'s sum", what).c_str());
  };
  checkSplits(c.in_split_size, "in_split_size");
  checkSplits(c.out_split_size, "out_split_size");
  // A group of more ranks than any job has: a pg_size of 1e15 was predicted
  // at 6e13 ms, and the Chakra export listed its ranks without end.
  constexpr int64_t kMaxGroupRanks = int64_t{1} << 24;
  if (c.pg_size < -1 || c.pg_size > kMaxGroupRanks) {
    throw InputError(fmt::format("{}: node {}: pg_size {}: expected a group of 1 to 2^24 ranks",
                                 source, node.id, c.pg_size));
  }
  // Its ranks, start + k * stride, are rank numbers (int).
  if (c.pg_size > 0 && c.global_rank_start >= 0 && c.global_rank_stride > 0) {
    int64_t last = 0;
    if (__builtin_mul_overflow(c.global_rank_stride, c.pg_size - 1, &last) ||
        __builtin_add_overflow(last, c.global_rank_start, &last) ||
        last > std::numeric_limits<int32_t>::max()) {
      throw InputError(fmt::format(
          "{}: node {}: global_rank_start {} + global_rank_stride {} x (pg_size {} - 1) is not a "
          "rank number (at most 2^31-1)",
          source, node.id, c.global_rank_start, c.global_rank_stride, c.pg_size));
    }
  }
}

}  // namespace tracetwin::core::detail

namespace tracetwin::core {

int64_t commItemsize(const std::string& dtype) {
  static const std::unordered_map<std::string, int64_t> kBytes = {
      {"Float", 4},         {"Double", 8},     {"Half", 2},         {"BFloat16", 2},
      {"Char", 1},          {"Byte", 1},       {"Short", 2},        {"Int", 4},
      {"Long", 8},          {"Bool", 1},       {"ComplexFloat", 8}, {"ComplexDouble", 16},
      {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}};
  const auto it = kBytes.find(dtype);
  return it != kBytes.end() ? it->second : dtypeItemsize(dtypeFromTraceName(dtype));
}

}  // namespace tracetwin::core
