#include "sweep/index_side_file.h"

#include <fmt/core.h>

#include <unordered_map>

namespace tracetwin::sweep {

std::string indexDistributionYaml(const SweepSpec& spec, const std::vector<Placement>& place,
                                  const RankStep& step) {
  const std::vector<Shard> shards = planShards(spec, place);
  std::unordered_map<int64_t, std::string> names;
  for (const auto& n : step.trace.at("nodes")) {
    names.emplace(n.at("id").get<int64_t>(), n.at("name").get<std::string>());
  }
  std::string out = fmt::format(
      "# Index distributions of {}'s embedding lookups on this rank, by node id\n"
      "# (tracetwin replay --index-distribution; docs/calibration.md).\ntables:\n",
      spec.source);
  size_t entries = 0;
  for (const OpTag& tag : step.tags) {
    if (tag.table < 0 || names[tag.id] != "aten::embedding_bag") continue;
    const TableSpec& t = spec.tables[size_t(tag.table)];
    const Shard* shard =
        tag.shard >= 0 && size_t(tag.shard) < shards.size() ? &shards[size_t(tag.shard)] : nullptr;
    const bool tail = shard != nullptr && shard->row_begin > 0;
    out += fmt::format("  - {{node: {}, name: {}", tag.id, nlohmann::json(t.name).dump());
    if (t.zipf) out += fmt::format(", zipf: {}", *t.zipf);
    // A later row-wise shard draws from the law's tail (core/index_law.h).
    if (t.zipf && tail) out += fmt::format(", first_row: {}", shard->row_begin);
    out += "}";
    if (t.zipf && tail) {
      out += fmt::format("  # rows {}..{} of the Zipf table", shard->row_begin,
                         shard->row_begin + shard->rows - 1);
    }
    out += "\n";
    ++entries;
  }
  if (entries == 0) out += "  []\n";
  return out;
}

std::string indexSideFileName(int rank) {
  return rank < 0 ? "rank{rank}.index.yaml" : fmt::format("rank{}.index.yaml", rank);
}

}  // namespace tracetwin::sweep
