#include "predictors/kernels/attention_gemms.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "predictors/kernels/node_args.h"

namespace tracetwin::predictors {
namespace {

enum class Pass { kForward, kBackward };

bool isFusedAttention(const core::Node& op, Pass* pass) {
  const std::string_view name(op.name);
  // Cheap test first: it runs for every uncalibrated GEMM and every op of
  // the "other" family.
  if (name.find("dot_product") == std::string_view::npos) return false;
  const std::string base = baseOpName(op.name);
  if (base.find("scaled_dot_product") == std::string::npos ||
      base.find("attention") == std::string::npos || base.find("_math") != std::string::npos) {
    return false;
  }
  const std::string_view suffix = "_backward";
  *pass = base.size() > suffix.size() &&
                  base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0
              ? Pass::kBackward
              : Pass::kForward;
  return true;
}

// A tensor of at least [L, E] whose leading dims (the batch) divide `query`'s:
// grouped-query attention shares a key and value head among query heads.
bool usable(const core::TensorValue* t, const core::TensorValue* query) {
  if (t == nullptr || t->shape.size() < 2) return false;
  if (query == nullptr) return true;
  if (t->shape.size() != query->shape.size()) return false;
  const auto batch = static_cast<int64_t>(product(t->shape, 0, t->shape.size() - 2));
  const auto query_batch = static_cast<int64_t>(product(query->shape, 0, query->shape.size() - 2));
  return batch >= 1 && query_batch % batch == 0;
}

core::Node bmm(const core::TensorValue& like, int64_t batch, int64_t m, int64_t k, int64_t n) {
  return standInNode("aten::bmm",
                     {standInTensor(like, {batch, m, k}), standInTensor(like, {batch, k, n})},
                     {standInTensor(like, {batch, m, n})});
}

}  // namespace

std::vector<StandInOp> attentionGemms(const core::Node& op) {
  Pass pass = Pass::kForward;
  if (!isFusedAttention(op, &pass)) return {};
  // The backward ops take grad_out first, then query, key and value.
  const size_t first = pass == Pass::kBackward ? 1 : 0;
  const core::TensorValue* q = tensorArg(op, "query", first);
  const core::TensorValue* k = tensorArg(op, "key", first + 1);
  const core::TensorValue* v = tensorArg(op, "value", first + 2);
  if (!usable(q, nullptr) || !usable(k, q) || !usable(v, q)) return {};
  const size_t rank = q->shape.size();
  const int64_t batch = static_cast<int64_t>(product(q->shape, 0, rank - 2));
  const int64_t lq = q->shape[rank - 2], e = q->shape[rank - 1];
  const int64_t lk = k->shape[rank - 2], ev = v->shape[rank - 1];
  if (batch < 1 || lq < 1 || lk < 1 || e < 1 || ev < 1 || k->shape[rank - 1] != e) return {};
  std::vector<StandInOp> gemms;
  gemms.push_back({bmm(*q, batch, lq, e, lk), 1.0});  // S = Q Kᵀ
  if (pass == Pass::kForward) {
    gemms.push_back({bmm(*q, batch, lq, lk, ev), 1.0});  // O = P V
    return gemms;
  }
  gemms.push_back({bmm(*q, batch, lk, lq, ev), 1.0});  // dV = Pᵀ dO
  gemms.push_back({bmm(*q, batch, lq, ev, lk), 1.0});  // dP = dO Vᵀ
  gemms.push_back({bmm(*q, batch, lq, lk, e), 1.0});   // dQ = dS K
  gemms.push_back({bmm(*q, batch, lk, lq, e), 1.0});   // dK = dSᵀ Q
  return gemms;
}

}  // namespace tracetwin::predictors
