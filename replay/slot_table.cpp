#include "replay/slot_table.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

#include "core/errors.h"
#include "replay/value_generators.h"
#include "replay/zipf_indices.h"

namespace tracetwin::replay {
namespace {

at::TensorOptions optionsFor(const core::TensorValue& t, const DeviceMap& devices) {
  return at::TensorOptions().dtype(scalarTypeOf(t.dtype)).device(devices.map(t.device));
}

std::vector<int64_t> stridesFor(const core::TensorValue& t) {
  if (t.strides.size() == t.shape.size()) return t.strides;
  std::vector<int64_t> s(t.shape.size(), 1);  // contiguous when not recorded (< 1.1.1)
  for (size_t d = t.shape.size(); d-- > 1;) s[d - 1] = s[d] * std::max<int64_t>(t.shape[d], 1);
  return s;
}

struct ViewFill {
  std::optional<IntFill> int_fill;
  FloatFill float_fill;
};

// The rules for an upfront view's values: from the op that reads it first,
// else from what the plan knows of the slot (wrapped number, non-negative).
// `index_zipf`: the side file's laws by lookup op (ReplayOptions::index_zipf).
ViewFill viewFillFor(const SlotInfo& info, const std::vector<const core::Node*>& op_nodes,
                     const std::unordered_map<core::NodeId, core::IndexLaw>& index_zipf) {
  ViewFill fill;
  if (info.first_op < 0 || info.first_arg < 0) return fill;
  const core::Node& first = *op_nodes[size_t(info.first_op)];
  fill.int_fill = integerFillFor(first, size_t(info.first_arg), info.first_element);
  if (auto z = index_zipf.find(first.id); z != index_zipf.end() && info.first_element < 0) {
    fill.int_fill = withIndexDistribution(fill.int_fill, first, size_t(info.first_arg), z->second);
  }
  if (info.first_element < 0) fill.float_fill = floatFillFor(first, size_t(info.first_arg));
  if (!fill.float_fill.specific) {
    if (info.transient) fill.float_fill = wrappedNumberFill();
    if (info.non_negative) fill.float_fill = nonNegativeFill();
  }
  return fill;
}

using StorageKey = std::pair<int64_t, std::string>;  // recorded storage id, device

// Whether two views can share memory without one's fill spoiling the
// other's values: the same dtype and the same value rules.
bool sameValues(const SlotInfo& a, const ViewFill& fa, const SlotInfo& b, const ViewFill& fb) {
  if (a.meta.dtype != b.meta.dtype) return false;
  if (fa.float_fill.low != fb.float_fill.low || fa.float_fill.high != fb.float_fill.high)
    return false;
  if (fa.int_fill.has_value() != fb.int_fill.has_value()) return false;
  if (!fa.int_fill) return true;
  const IntFill& x = *fa.int_fill;
  const IntFill& y = *fb.int_fill;
  return x.kind == y.kind && x.low == y.low && x.high == y.high && x.total == y.total &&
         x.last_equals_total == y.last_equals_total && x.exponent == y.exponent &&
         x.zipf_first_row == y.zipf_first_row;
}

// The replay storages of one recorded storage. Traces name a storage by its
// address, which the allocator hands out again: resnet18_small's first batch
// norm saves a 64-float mean that its backward reads, and the SGD step later
// wraps a Python float into a double at the same address. Both are first
// seen as inputs; sharing memory, the double's fill overwrote the mean's
// first two floats (3e27) and the backward turned them into infinities. So a
// view whose uses do not overlap the views before it gets memory of its own
// unless its values are made the same way (same dtype, same rules): views
// whose uses overlap (a weight and the W^T view its backward reads) must
// share, so an in-place update of one shows in the other, and same-kind
// views taking turns at an address keep sharing as in the original (a
// storage each took resnet_1.1.0 from 0.90 to 1.23 times its trace's peak).
std::vector<std::pair<StorageKey, std::vector<int32_t>>> storagesByLifetime(
    const std::map<StorageKey, std::vector<int32_t>>& groups, const std::vector<SlotInfo>& slots,
    const std::vector<ViewFill>& fills) {
  std::vector<std::pair<StorageKey, std::vector<int32_t>>> out;
  for (const auto& [key, members] : groups) {
    std::vector<int32_t> by_first_use = members;
    std::stable_sort(by_first_use.begin(), by_first_use.end(), [&](int32_t a, int32_t b) {
      return slots[size_t(a)].first_op < slots[size_t(b)].first_op;
    });
    const size_t first_run = out.size();
    std::vector<int64_t> run_end;  // per run of this key
    for (int32_t s : by_first_use) {
      const SlotInfo& info = slots[size_t(s)];
      // A run it overlaps first (views in use together must share), else
      // one whose values are made the same way, else a storage of its own.
      size_t run = out.size();
      for (size_t r = first_run; r < out.size() && run == out.size(); ++r) {
        if (info.first_op <= run_end[r - first_run]) run = r;
      }
      for (size_t r = first_run; r < out.size() && run == out.size(); ++r) {
        const int32_t head = out[r].second.front();
        if (sameValues(slots[size_t(head)], fills[size_t(head)], info, fills[size_t(s)])) run = r;
      }
      if (run == out.size()) {
        out.push_back({key, {}});
        run_end.push_back(-1);
      }
      out[run].second.push_back(s);
      int64_t& end = run_end[run - first_run];
      end = std::max(end, std::max(info.last_use, info.first_op));
    }
  }
  return out;
}

void fillOffsets(at::Tensor& view, const IntFill& f) {
  const int64_t n = view.numel();
  if (n == 0) return;
  std::vector<int64_t> offs(static_cast<size_t>(n));
  const int64_t bags = f.last_equals_total ? n - 1 : n;
  for (int64_t i = 0; i < n; ++i) offs[static_cast<size_t>(i)] = bags > 0 ? i * f.total / bags : 0;
  if (f.last_equals_total) offs.back() = f.total;
  view.copy_(at::tensor(offs).reshape(view.sizes()));
}

// Zipf rows over [low, high] from uniforms of LibTorch's seeded generator
// (replay/zipf_indices.h): the same seed gives the same indices.
void fillZipfIndices(at::Tensor& flat, const IntFill& f) {
  const auto cdf = ZipfCdf::of(f.high - f.low + 1, f.exponent, f.zipf_first_row);
  const at::Tensor u = at::empty({flat.numel()}, at::TensorOptions().dtype(at::kDouble))
                           .uniform_(0.0, 1.0);
  at::Tensor rows = at::empty({flat.numel()}, at::TensorOptions().dtype(at::kLong));
  zipfRowsFromUniforms(*cdf, f.low, u.data_ptr<double>(), flat.numel(), rows.data_ptr<int64_t>());
  flat.copy_(rows);
}

// Floats uniform in a range that never produces denormals (which would slow
// CPU kernels by 10-100x); see FloatFill for why the range is symmetric.
void fillValues(at::Tensor& flat, at::Tensor& view, const FloatFill& float_fill,
                const std::optional<IntFill>& fill) {
  if (flat.numel() == 0) return;
  if (at::isFloatingType(flat.scalar_type())) {
    if (float_fill.low == float_fill.high) {
      flat.fill_(float_fill.low);
    } else {
      flat.uniform_(float_fill.low, float_fill.high);
    }
  } else if (flat.scalar_type() == at::kBool) {
    flat.random_(0, 2);
  } else if (fill && fill->kind == IntFill::Kind::kOffsets) {
    fillOffsets(view, *fill);
  } else if (fill && fill->kind == IntFill::Kind::kZipf && fill->high >= fill->low) {
    fillZipfIndices(flat, *fill);
  } else if (fill) {
    // random_'s bound is exclusive: a recorded high of INT64_MAX (a trace's
    // tensor_range) wrapped to INT64_MIN and ended the replay as an internal error.
    const int64_t to =
        fill->high == std::numeric_limits<int64_t>::max() ? fill->high : fill->high + 1;
    flat.random_(fill->low, to);
  } else {
    flat.zero_();  // integers with no rule, complex: 0 is a valid index for every dimension
  }
}

}  // namespace

bool isOutOfMemory(const std::string& message, int64_t* bytes) {
  const bool oom = message.find("can't allocate memory") != std::string::npos ||
                   message.find("out of memory") != std::string::npos ||
                   message.find("Out of Memory") != std::string::npos;
  if (oom && bytes) {
    // The "allocate " followed by a number and its unit: LibTorch's CPU
    // allocator says "can't allocate memory: you tried to allocate
    // 80000000000 bytes" (its first "allocate" read as 0 bytes), CUDA's
    // "Tried to allocate 2.00 GiB" (read as 2).
    *bytes = -1;
    for (size_t p = message.find("allocate "); p != std::string::npos;
         p = message.find("allocate ", p + 1)) {
      const char* at = message.c_str() + p + 9;
      if (!std::isdigit(static_cast<unsigned char>(*at))) continue;
      char* end = nullptr;
      const double amount = std::strtod(at, &end);
      static const std::pair<const char*, double> kUnits[] = {
          {" bytes", 1.0}, {" KiB", 0x1p10}, {" MiB", 0x1p20}, {" GiB", 0x1p30}, {" TiB", 0x1p40}};
      for (const auto& [name, scale] : kUnits) {
        if (std::strncmp(end, name, std::strlen(name)) == 0) {
          *bytes = static_cast<int64_t>(amount * scale);
          break;
        }
      }
      break;
    }
  }
  return oom;
}

SlotTable::SlotTable(const TensorPlan& plan, const DeviceMap& devices)
    : plan_(plan), devices_(devices), tensors_(plan.slots().size()) {}

void SlotTable::materialiseUpfront(const std::vector<const core::Node*>& op_nodes, uint64_t seed) {
  seed_ = seed;
  fills_.clear();
  zipf_applied_.clear();
  sparse_upfront_.clear();
  // One byte storage per recorded (storage_id, device) and run of views
  // (storagesByLifetime), sized to the largest view extent in bytes: views of
  // different itemsize share it.
  std::map<StorageKey, std::vector<int32_t>> groups;
  const auto& slots = plan_.slots();
  transient_values_.assign(slots.size(), {});
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s].upfront && slots[s].sparse)
      sparse_upfront_.push_back(int32_t(s));
    else if (slots[s].upfront && !slots[s].transient)
      groups[{slots[s].meta.storage_id, slots[s].meta.device}].push_back(int32_t(s));
  }
  at::manual_seed(seed_);
  for (size_t s = 0; s < slots.size(); ++s) {
    if (slots[s].transient) transient_values_[s] = transientValue(op_nodes, slots[s]);
  }
  std::vector<ViewFill> view_fills(slots.size());  // by slot; upfront ones only
  for (const auto& [key, members] : groups) {
    for (int32_t s : members) {
      view_fills[size_t(s)] = viewFillFor(slots[size_t(s)], op_nodes, index_zipf_);
      const auto& f = view_fills[size_t(s)].int_fill;
      if (f && f->kind == IntFill::Kind::kZipf)
        zipf_applied_.insert(op_nodes[size_t(slots[size_t(s)].first_op)]->id);
    }
  }
  for (const auto& [key, members] : storagesByLifetime(groups, slots, view_fills)) {
    int64_t nbytes = 0;
    for (int32_t s : members) {
      const auto& m = slots[size_t(s)].meta;
      nbytes = std::max(nbytes, TensorPlan::extentElements(m) * m.itemsize);
    }
    const core::TensorValue& first = slots[size_t(members.front())].meta;
    at::Storage storage;
    try {
      storage = at::empty({nbytes},
                          at::TensorOptions().dtype(at::kByte).device(devices_.map(first.device)))
                    .storage();
    } catch (const c10::Error& e) {
      const std::string message = e.what_without_backtrace();
      const core::NodeId op = op_nodes[size_t(slots[size_t(members.front())].first_op)]->id;
      throw RuntimeFailure(
          fmt::format("{} creating input storage {} of op {}: {} bytes asked: {}",
                      isOutOfMemory(message, nullptr) ? "out of memory" : "failure", key.first, op,
                      nbytes, message));
    }
    // Every view's rule, then the fill order. Floats first, then integers:
    // generator values must not be overwritten. Among floats, default
    // fills go first and specific rules after, the view read first last, so
    // where views overlap the most telling rule wins: a Linear weight shares
    // its storage with the W^T view its backward reads, and log_softmax's
    // output with the `self` nll_loss_backward reads first; filling the
    // generic view last put the weight back to [-1, 1) (logits 14.5 and
    // loss 26 on the bundled CNN, against 0.3 and 2.3).
    auto rank = [&](int32_t s) {
      if (!core::isFloatingPoint(slots[size_t(s)].meta.dtype)) return 2;
      return view_fills[size_t(s)].float_fill.specific ? 1 : 0;
    };
    std::vector<int32_t> ordered = members;
    std::stable_sort(ordered.begin(), ordered.end(), [&](int32_t a, int32_t b) {
      if (rank(a) != rank(b)) return rank(a) < rank(b);
      return rank(a) == 1 && slots[size_t(a)].first_op > slots[size_t(b)].first_op;
    });
    for (int32_t s : ordered) {
      const SlotInfo& info = slots[size_t(s)];
      const auto& m = info.meta;
      auto opts = optionsFor(m, devices_);
      at::Tensor view, flat;
      try {
        view = at::empty({0}, opts).set_(storage, m.offset, m.shape, stridesFor(m));
        const int64_t flat_len = TensorPlan::extentElements(m) - m.offset;
        flat = at::empty({0}, opts).set_(storage, m.offset, {flat_len}, {1});
      } catch (const c10::Error&
                   e) {  // the reader refuses impossible shapes; LibTorch has the last word
        throw RuntimeFailure(fmt::format("tensor {} of op {}: LibTorch refuses its view: {}",
                                         m.tensor_id, op_nodes[size_t(info.first_op)]->id,
                                         e.what_without_backtrace()));
      }
      const std::optional<IntFill>& fill = view_fills[size_t(s)].int_fill;
      const FloatFill& float_fill = view_fills[size_t(s)].float_fill;
      fills_.push_back({flat, view, float_fill, fill});
      tensors_[size_t(s)] = view;
      track(view, +1);
    }
  }
  refillUpfront();
}

// The value a transient slot gets in every iteration: one draw of the same
// generators an upfront tensor would use, kept as a scalar.
SlotTable::TransientValue SlotTable::transientValue(const std::vector<const core::Node*>& op_nodes,
                                                    const SlotInfo& info) const {
  TransientValue v;
  v.options = optionsFor(info.meta, devices_);
  v.on_cpu = v.options.device().is_cpu();
  at::Tensor scratch = at::empty({}, v.options.device(at::kCPU));
  at::Tensor flat = scratch.view({1});
  const ViewFill fill = viewFillFor(info, op_nodes, index_zipf_);
  fillValues(flat, scratch, fill.float_fill, fill.int_fill);
  v.value = scratch.item();
  return v;
}

void SlotTable::refillUpfront() {
  at::manual_seed(seed_);
  for (UpfrontFill& f : fills_) fillValues(f.flat, f.view, f.float_fill, f.int_fill);
  // Sparse ones are made anew: an in-place add into a sparse gradient
  // (AccumulateGrad's add_) grows its nnz every iteration.
  for (int32_t s : sparse_upfront_) {
    at::Tensor& t = tensors_[size_t(s)];
    if (t.defined()) track(t, -1);
    t = sparseUpfront(plan_.slots()[size_t(s)]);
    track(t, +1);
  }
}

void SlotTable::redrawIntegers(uint64_t draw) {
  at::manual_seed(seed_ + draw);
  for (UpfrontFill& f : fills_) {
    if (f.flat.numel() == 0 || at::isFloatingType(f.flat.scalar_type()) ||
        f.flat.scalar_type() == at::kBool || at::isComplexType(f.flat.scalar_type()))
      continue;
    fillValues(f.flat, f.view, f.float_fill, f.int_fill);
  }
}

// An upfront sparse COO tensor of the recorded shape: `nnz` rows (the most
// the trace shows of it, e.g. a gradient's looked-up rows) drawn uniformly
// over the sparse dimensions, uniform [-1, 1) values, uncoalesced like
// embedding_bag's sparse backward leaves it.
at::Tensor SlotTable::sparseUpfront(const SlotInfo& info) const {
  const auto& m = info.meta;
  const int64_t sparse_dim =
      std::clamp<int64_t>(info.sparse_layout.sparse_dim, 1, int64_t(m.shape.size()));
  const int64_t nnz = std::max<int64_t>(info.sparse_layout.nnz, 0);
  const auto opts = optionsFor(m, devices_);
  at::Tensor indices = at::empty({sparse_dim, nnz}, opts.dtype(at::kLong));
  for (int64_t d = 0; d < sparse_dim; ++d)
    indices[d].random_(0, std::max<int64_t>(m.shape[size_t(d)], 1));
  std::vector<int64_t> value_shape{nnz};
  value_shape.insert(value_shape.end(), m.shape.begin() + sparse_dim, m.shape.end());
  at::Tensor values = at::empty(value_shape, opts).uniform_(-1.0, 1.0);
  return at::_sparse_coo_tensor_unsafe(indices, values, m.shape);
}

void SlotTable::releaseProduced() {
  const auto& slots = plan_.slots();
  for (size_t s = 0; s < slots.size(); ++s) {
    if (!slots[s].upfront) release(int32_t(s));
  }
}

at::Tensor SlotTable::standIn(int32_t slot) {
  const auto& m = plan_.slots()[size_t(slot)].meta;
  ++stand_ins_;
  return at::zeros(m.shape, optionsFor(m, devices_));
}

void SlotTable::track(const at::Tensor& t, int delta) {
  if (!t.defined() || !t.has_storage()) return;
  const void* key = t.storage().unsafeGetStorageImpl();
  int& refs = storage_refs_[key];
  const auto bytes = static_cast<int64_t>(t.storage().nbytes());
  if (delta > 0 && refs++ == 0) live_bytes_ += bytes;
  if (delta < 0 && refs > 0 && --refs == 0) {
    live_bytes_ -= bytes;
    storage_refs_.erase(key);
  }
  peak_bytes_ = std::max(peak_bytes_, live_bytes_);
}

}  // namespace tracetwin::replay
