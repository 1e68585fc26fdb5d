#include "tests/support/toy_host.h"

#include <algorithm>
#include <cmath>

#include "core/op_family.h"

namespace tracetwin::testing {
namespace {

double tensorBytes(const core::TensorValue& t) {
  return t.defined() ? static_cast<double>(t.numel * t.itemsize) : 0.0;
}

// 2 M K N for aten::mm of [M, K] and [K, N]; 0 for any other op.
double mmFlops(const core::Node& n) {
  if (n.name != "aten::mm" || n.inputs.size() < 2) return 0;
  const core::Value& a = n.inputs[0];
  const core::Value& b = n.inputs[1];
  if (a.kind != core::ValueKind::kTensor || b.kind != core::ValueKind::kTensor) return 0;
  if (a.tensor->shape.size() != 2 || b.tensor->shape.size() != 2) return 0;
  return 2.0 * static_cast<double>(a.tensor->shape[0] * a.tensor->shape[1] * b.tensor->shape[1]);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

double ToyHost::slowdown() const {
  constexpr double kTwoPi = 6.283185307179586;
  double f = 1 + costs_.drift * (0.5 + 0.5 * std::sin(kTwoPi * now_s_ / costs_.drift_period_s));
  if (std::fmod(now_s_, costs_.slow_every_s) >= costs_.slow_every_s - costs_.slow_for_s)
    f *= costs_.slow_factor;
  return f;
}

bool ToyHost::touch(int64_t storage, double bytes) {
  auto it = cached_.find(storage);
  const bool hit = it != cached_.end();
  if (hit) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return true;
  }
  lru_.emplace_front(storage, bytes);
  cached_[storage] = lru_.begin();
  cached_bytes_ += bytes;
  while (cached_bytes_ > costs_.cache_bytes && !lru_.empty()) {
    cached_bytes_ -= lru_.back().second;
    cached_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return false;
}

std::vector<double> ToyHost::iteration(const std::vector<const core::Node*>& ops,
                                       double* loop_us) {
  std::vector<double> us;
  us.reserve(ops.size());
  *loop_us = 0;
  for (const core::Node* n : ops) {
    double bytes = 0;
    int cold_inputs = 0;
    for (const core::Value& in : n->inputs) {
      core::forEachTensor(in, [&](const core::TensorValue& t) {
        if (!t.defined()) return;
        bytes += tensorBytes(t);
        if (!touch(t.storage_id, tensorBytes(t))) ++cold_inputs;
      });
    }
    int produced = 0;
    for (const core::Value& out : n->outputs) {
      core::forEachTensor(out, [&](const core::TensorValue& t) {
        if (!t.defined()) return;
        bytes += tensorBytes(t);
        bool is_input = false;
        for (const core::Value& in : n->inputs) {
          core::forEachTensor(in, [&](const core::TensorValue& u) {
            is_input |= u.tensor_id == t.tensor_id && u.storage_id == t.storage_id;
          });
        }
        produced += is_input ? 0 : 1;
        touch(t.storage_id, tensorBytes(t));
      });
    }
    double t = costs_.op_us + bytes / costs_.bytes_per_us + mmFlops(*n) / costs_.flops_per_us +
               costs_.cold_tensor_us * cold_inputs;
    const auto last = last_end_us_.find(n->name);
    const double idle = last == last_end_us_.end() ? 0.0 : replay_clock_us_ - last->second;
    t += costs_.code_cold_us * (1 - std::exp(-idle / costs_.code_tau_us));
    us.push_back(t);
    const double loop = costs_.loop_per_op_us + costs_.loop_per_output_us * produced;
    *loop_us += loop;
    replay_clock_us_ += t;
    last_end_us_[n->name] = replay_clock_us_;
    replay_clock_us_ += loop;
  }
  return us;
}

replay::ReplayResult ToyHost::replay(const core::Graph& graph,
                                     const replay::ReplayOptions& options) {
  ++replays_;
  // Every replay allocates its tensors anew and starts with a cold cache.
  lru_.clear();
  cached_.clear();
  cached_bytes_ = 0;
  last_end_us_.clear();
  replay_clock_us_ = 0;
  std::vector<const core::Node*> ops;
  for (core::NodeId id : core::selectTopLevelOps(graph).ops) ops.push_back(graph.findNode(id));

  // The first iteration warms the cache; from the second on they repeat.
  double loop_us = 0;
  iteration(ops, &loop_us);
  const std::vector<double> us = iteration(ops, &loop_us);
  double op_sum_us = 0;
  for (double t : us) op_sum_us += t;
  const double iteration_ms = (op_sum_us + loop_us) / 1e3;

  replay::ReplayResult r;
  r.device = options.device;
  r.threads = std::max(options.threads, 1);
  const int untimed = options.warmup_iters + options.settle_iters * options.measured_iters;
  now_s_ += (costs_.setup_ms + untimed * iteration_ms) * slowdown() / 1e3;
  std::vector<double> factors;
  for (int i = 0; i < options.measured_iters; ++i) {
    factors.push_back(slowdown());
    r.iterations_ms.push_back(iteration_ms * factors.back());
    now_s_ += r.iterations_ms.back() / 1e3;
  }
  const double f = median(factors);
  r.iteration_ms_median = median(r.iterations_ms);
  r.host_loop_ms = r.iteration_ms_median;
  r.outside_ops_ms = loop_us * f / 1e3;
  r.selected_ops = static_cast<int64_t>(ops.size());
  r.replayed_ops = r.selected_ops;
  r.coverage = ops.empty() ? 0.0 : 1.0;
  double start_us = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    replay::OpMeasurement m;
    m.id = ops[i]->id;
    m.name = ops[i]->name;
    m.family = core::opFamily(*ops[i]);
    m.cpu_us = us[i] * f;
    m.start_us = start_us;
    start_us += m.cpu_us;
    r.per_op.push_back(std::move(m));
  }
  return r;
}

}  // namespace tracetwin::testing
