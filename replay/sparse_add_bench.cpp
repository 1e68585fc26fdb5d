#include "replay/sparse_add_bench.h"

#include <ATen/Parallel.h>  // set_num_threads
#include <torch/torch.h>

#include <chrono>
#include <map>
#include <utility>

#include "replay/zipf_indices.h"

namespace tracetwin::replay {
namespace {

// The indices of one point: uniform, or Zipf by the replay's own inverse CDF
// (zipf_indices.h) from uniforms of a seeded generator.
torch::Tensor sparseAddBenchIndices(const SparseAddBenchPoint& p, torch::Generator& gen) {
  if (p.zipf <= 0) return torch::randint(p.rows, {p.nnz}, gen, torch::kLong);
  const torch::Tensor u = torch::rand({p.nnz}, gen, torch::kDouble);
  torch::Tensor idx = torch::empty({p.nnz}, torch::kLong);
  zipfRowsFromUniforms(*ZipfCdf::of(p.rows, p.zipf), 0, u.data_ptr<double>(), p.nnz,
                       idx.data_ptr<int64_t>());
  return idx;
}

struct SparseAddBenchInput {
  torch::Tensor indices, values;
};

}  // namespace

std::vector<SparseAddBenchTimes> measureSparseAdd(const std::vector<SparseAddBenchPoint>& points,
                                                  const SparseAddBenchOptions& options) {
  torch::NoGradGuard no_grad;
  if (options.threads > 0) at::set_num_threads(options.threads);
  torch::Generator gen = at::detail::createCPUGenerator(options.seed);
  std::map<std::pair<int64_t, int64_t>, torch::Tensor> tables;
  std::vector<SparseAddBenchInput> inputs;
  std::vector<SparseAddBenchTimes> out(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const SparseAddBenchPoint& p = points[i];
    auto& table = tables[{p.rows, p.dim}];
    if (!table.defined()) table = torch::randn({p.rows, p.dim}, gen);
    SparseAddBenchInput in{sparseAddBenchIndices(p, gen), torch::randn({p.nnz, p.dim}, gen)};
    out[i].unique = std::get<0>(torch::_unique(in.indices)).numel();
    inputs.push_back(std::move(in));
  }
  torch::Tensor flush = torch::empty({options.flush_bytes / 4}, torch::kFloat);
  using Clock = std::chrono::steady_clock;
  for (int round = 0; round < options.rounds; ++round) {
    for (size_t k = 0; k < 2 * points.size(); ++k) {
      const size_t slot = round % 2 ? 2 * points.size() - 1 - k : k;
      const size_t i = slot / 2;
      const bool cold = slot % 2 == 1;
      const SparseAddBenchPoint& p = points[i];
      torch::Tensor& w = tables[{p.rows, p.dim}];
      const SparseAddBenchInput& in = inputs[i];
      // Uncoalesced, as embedding_bag's sparse backward returns it.
      const torch::Tensor grad =
          torch::sparse_coo_tensor(in.indices.unsqueeze(0), in.values, {p.rows, p.dim});
      if (cold) {
        flush.fill_(1.0);  // evicts the table, as a large step's other work does
      } else {
        (void)w.index_select(0, in.indices);  // the lookup just touched these rows
      }
      const Clock::time_point t0 = Clock::now();
      w.add_(grad, -0.01);
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      (cold ? out[i].cold_us : out[i].warm_us).push_back(us);
    }
  }
  return out;
}

}  // namespace tracetwin::replay
