// One plan's per-rank graphs against the step definition (docs/sweeps.md):
// the ops, their shapes, the collectives and their sizes per rank.
#include "sweep/step_trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/comm/collective_spec.h"
#include "core/graph.h"
#include "core/sparse_layout.h"
#include "predictors/kernels/features.h"
#include "predictors/kernels/sparse_rows.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {
namespace {

// Three tables of different dims on two ranks: rank 0 holds a and c (dims
// 8 + 4), rank 1 holds b (16).
const char* kStepFile = R"(world_size: 2
batch_size: 4
sparse_grad: true
dense: {features: 3, bottom_mlp: [6, 5], top_mlp: [7, 1]}
tables:
  - {name: a, rows: 100, dim: 8, pooling: 3}
  - {name: b, rows: 50, dim: 16, pooling: 2}
  - {name: c, rows: 70, dim: 4, pooling: 5}
plans:
  - {name: p, assign: {a: 0, b: 1, c: 0}}
)";

struct Ops {
  std::vector<const core::Node*> all;
  std::map<std::string, std::vector<const core::Node*>> by_name;
  std::vector<const core::Node*> collectives;
};

Ops topLevel(const core::Graph& g) {
  Ops ops;
  for (core::NodeId id : core::selectTopLevelOps(g).ops) {
    const core::Node& n = g.node(id);
    ops.all.push_back(&n);
    ops.by_name[n.name].push_back(&n);
    if (n.category == core::NodeCategory::kCommunication) ops.collectives.push_back(&n);
  }
  return ops;
}

const std::vector<int64_t>& shapeOf(const core::Value& v) { return v.tensor->shape; }

TEST(StepTrace, EmbeddingOpsPerRankFollowThePlan) {
  const SweepSpec s = parseSweepSpec(kStepFile, "s.yaml");
  const std::vector<int> owner = s.plans[0].assign;
  const int64_t bags = 2 * 4;                                       // the global batch
  std::vector<std::vector<int64_t>> weights = {{100, 8}, {70, 4}};  // rank 0, in table order
  const core::Graph g0 = rankGraph(buildRankStep(s, owner, 0), "r0");
  Ops r0 = topLevel(g0);
  ASSERT_EQ(r0.by_name["aten::embedding_bag"].size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const core::Node& n = *r0.by_name["aten::embedding_bag"][k];
    EXPECT_EQ(shapeOf(n.inputs[0]), weights[k]);
    EXPECT_EQ(shapeOf(n.inputs[1])[0], bags * (k == 0 ? 3 : 5));  // indices: bags x pooling
    EXPECT_EQ(shapeOf(n.inputs[2])[0], bags);                     // offsets
    EXPECT_TRUE(n.inputs[5].bool_value);                          // sparse
    EXPECT_EQ(shapeOf(n.outputs[0]), (std::vector<int64_t>{bags, weights[k][1]}));
  }
  ASSERT_EQ(r0.by_name["aten::_embedding_bag_backward"].size(), 2u);
  // Backward runs the last table first.
  EXPECT_EQ(r0.by_name["aten::_embedding_bag_backward"][0]->inputs[6].int_value, 70);
  const core::Graph g1 = rankGraph(buildRankStep(s, owner, 1), "r1");
  Ops r1 = topLevel(g1);
  ASSERT_EQ(r1.by_name["aten::embedding_bag"].size(), 1u);
  EXPECT_EQ(shapeOf(r1.by_name["aten::embedding_bag"][0]->inputs[0]),
            (std::vector<int64_t>{50, 16}));
  // Same dense part on both ranks: 4 linears, the interaction 5 + 28 wide.
  for (Ops* r : {&r0, &r1}) {
    ASSERT_EQ(r->by_name.at("aten::linear").size(), 4u);
    EXPECT_EQ(shapeOf(r->by_name.at("aten::linear")[2]->inputs[0]),
              (std::vector<int64_t>{4, 5 + 8 + 16 + 4}));
    EXPECT_EQ(r->by_name.at("aten::binary_cross_entropy_with_logits").size(), 1u);
  }
  // SGD: 8 dense add_ plus one per table, with the table's sparse gradient.
  int table_updates = 0;
  for (const core::Node* n : r0.by_name["aten::add_"]) {
    if (shapeOf(n->inputs[0]) == weights[0] || shapeOf(n->inputs[0]) == weights[1]) {
      ++table_updates;
    }
  }
  EXPECT_EQ(table_updates, 4);  // AccumulateGrad and SGD per table
}

TEST(StepTrace, CollectivesAndTheirSizesPerRank) {
  const SweepSpec s = parseSweepSpec(kStepFile, "s.yaml");
  const int64_t B = 4;
  const std::vector<int64_t> dims = {12, 16};  // per rank
  // Dense parameters: 3*6+6, 6*5+5, (5+28)*7+7, 7*1+1.
  const int64_t dense_params = 24 + 35 + 238 + 8;
  for (int r = 0; r < 2; ++r) {
    const core::Graph g = rankGraph(buildRankStep(s, s.plans[0].assign, r), "r");
    Ops ops = topLevel(g);
    ASSERT_EQ(ops.collectives.size(), 3u) << "rank " << r;
    const auto fwd = core::comm::readCollective(*ops.collectives[0]);
    EXPECT_EQ(fwd.kind, core::comm::Collective::kAllToAllSingle);
    EXPECT_EQ(fwd.group_size, 2);
    EXPECT_EQ(fwd.in_split, (std::vector<int64_t>{B * dims[size_t(r)], B * dims[size_t(r)]}));
    EXPECT_EQ(fwd.out_split, (std::vector<int64_t>{B * dims[0], B * dims[1]}));
    EXPECT_EQ(shapeOf(ops.collectives[0]->inputs[0].elements[0])[0], 2 * B * dims[size_t(r)]);
    const auto bwd = core::comm::readCollective(*ops.collectives[1]);
    EXPECT_EQ(bwd.kind, core::comm::Collective::kAllToAllSingle);
    EXPECT_EQ(bwd.in_split, fwd.out_split);  // the gradients go back
    EXPECT_EQ(bwd.out_split, fwd.in_split);
    const auto ar = core::comm::readCollective(*ops.collectives[2]);
    EXPECT_EQ(ar.kind, core::comm::Collective::kAllReduce);
    EXPECT_EQ(shapeOf(ops.collectives[2]->inputs[0].elements[0])[0], dense_params);
  }
}

TEST(StepTrace, DenseGradientsAndARankWithoutTables) {
  SweepSpec s = parseSweepSpec(kStepFile, "s.yaml");
  s.sparse_grad = false;
  const std::vector<int> owner = {0, 0, 0};
  const core::Graph g0 = rankGraph(buildRankStep(s, owner, 0), "r0");  // Ops point into it
  Ops r0 = topLevel(g0);
  const core::Node& bwd = *r0.by_name["aten::_embedding_bag_backward"][0];
  EXPECT_FALSE(bwd.inputs[9].bool_value);
  EXPECT_GT(bwd.outputs[0].tensor->numel, 0);  // a dense [rows, dim] gradient
  const core::Graph g1 = rankGraph(buildRankStep(s, owner, 1), "r1");
  Ops r1 = topLevel(g1);
  EXPECT_TRUE(r1.by_name["aten::embedding_bag"].empty());
  EXPECT_EQ(r1.collectives.size(), 3u);  // it still takes part in every collective
}

}  // namespace
}  // namespace tracetwin::sweep

namespace tracetwin::sweep {
namespace {

// sparse_grad: true. The sweep's writer records each table's gradient as
// PyTorch 1.13 does (no storage); core::inferSparseTensors must find it from
// _embedding_bag_backward(sparse=True) and AccumulateGrad's add_, so the
// predictor costs SGD's add_ of table a (100 x 8) by the 2 x 4 x 3 = 24 rows
// looked up, not the table's 100 (predictors/kernels/sparse_rows.h).
TEST(StepTrace, SparseGradientsAreRecognisedAndCostedByTheRowsLookedUp) {
  const SweepSpec s = parseSweepSpec(kStepFile, "s.yaml");
  const core::Graph g0 = rankGraph(buildRankStep(s, s.plans[0].assign, 0), "r0");
  const core::SparseTensors sparse = core::inferSparseTensors(g0);
  const core::Node* sgd_add = nullptr;  // SGD's add_ into table a's weight
  for (core::NodeId id : core::selectTopLevelOps(g0).ops) {
    const core::Node& n = g0.node(id);
    if (n.name == "aten::add_" && n.inputs[0].tensor->shape == std::vector<int64_t>{100, 8} &&
        n.inputs[0].tensor->defined())
      sgd_add = &n;
  }
  ASSERT_NE(sgd_add, nullptr);
  const core::TensorValue& grad = *sgd_add->inputs[1].tensor;
  ASSERT_TRUE(sparse.count(grad.tensor_id)) << "the .grad SGD reads";
  EXPECT_EQ(sparse.at(grad.tensor_id).nnz, 24);
  core::Node scratch;
  const core::Node& rows = predictors::sparseRowsNode(*sgd_add, sparse, &scratch);
  ASSERT_NE(&rows, sgd_add);
  EXPECT_EQ(rows.inputs[0].tensor->shape, (std::vector<int64_t>{24, 8}));
  EXPECT_EQ(rows.inputs[1].tensor->shape, (std::vector<int64_t>{24, 8}));
  const predictors::OpFeatures dense = predictors::computeFeatures(*sgd_add);
  const predictors::OpFeatures touched = predictors::computeFeatures(rows);
  EXPECT_DOUBLE_EQ(dense.bytes, 2.0 * 100 * 8 * 4);   // the weight read and written
  EXPECT_DOUBLE_EQ(touched.bytes, 3.0 * 24 * 8 * 4);  // rows read, written + the values
}

}  // namespace
}  // namespace tracetwin::sweep

namespace tracetwin::sweep {
namespace {

// One plan of each kind (docs/sweeps.md, "Sharding"): a row-wise over ranks
// 0 and 1 (rows 0..50 and 50..100), b column-wise (dims 0..8 and 8..16), c
// data-parallel. B = 4 samples a rank, 8 bags in the global batch.
std::string shardFile() {
  std::string text = kStepFile;
  const std::string plan = "{name: p, assign: {a: 0, b: 1, c: 0}}";
  return text.replace(text.find(plan), plan.size(),
                      "{name: p, assign: {a: row_wise, b: {column_wise: [0, 1]}, "
                      "c: data_parallel}}");
}

TEST(StepTrace, RowColumnWiseAndDataParallelShardsPerRank) {
  const SweepSpec s = parseSweepSpec(shardFile(), "s.yaml");
  const std::vector<Placement>& place = s.plans[0].place;
  const std::vector<Shard> shards = planShards(s, place);
  ASSERT_EQ(shards.size(), 6u);  // a: 2, b: 2, c: one per rank
  EXPECT_EQ(shards[1].row_begin, 50);
  EXPECT_EQ(shards[1].rows, 50);
  EXPECT_EQ(shards[0].lookups + shards[1].lookups, 8 * 3);  // uniform: 12 each
  EXPECT_EQ(shards[0].lookups, 12);
  EXPECT_EQ(shards[3].col_begin, 8);
  EXPECT_EQ(shards[3].dim, 8);
  EXPECT_EQ(shards[5].bags, 4);  // data-parallel: its own samples
  const int64_t B = 4, bags = 8;
  // Dense parameters 305 (as above) and c's whole gradient in the bucket.
  const int64_t bucket = 305 + 70 * 4;
  for (int r = 0; r < 2; ++r) {
    const core::Graph g = rankGraph(buildRankStep(s, place, r), "r");
    Ops ops = topLevel(g);
    // Lookups: a's rows, b's columns (the global batch), then c (its own batch).
    const auto& lookups = ops.by_name["aten::embedding_bag"];
    ASSERT_EQ(lookups.size(), 3u) << "rank " << r;
    EXPECT_EQ(shapeOf(lookups[0]->inputs[0]), (std::vector<int64_t>{50, 8}));
    EXPECT_EQ(shapeOf(lookups[0]->inputs[1])[0], 12);  // the indices in its rows
    EXPECT_EQ(shapeOf(lookups[0]->inputs[2])[0], bags);
    EXPECT_EQ(shapeOf(lookups[0]->outputs[0]), (std::vector<int64_t>{bags, 8}));  // partial sums
    EXPECT_EQ(shapeOf(lookups[1]->inputs[0]), (std::vector<int64_t>{50, 8}));
    EXPECT_EQ(shapeOf(lookups[1]->inputs[1])[0], bags * 2);  // every index
    EXPECT_TRUE(lookups[1]->inputs[5].bool_value);
    EXPECT_EQ(shapeOf(lookups[2]->inputs[0]), (std::vector<int64_t>{70, 4}));
    EXPECT_EQ(shapeOf(lookups[2]->inputs[1])[0], B * 5);
    EXPECT_EQ(shapeOf(lookups[2]->inputs[2])[0], B);
    EXPECT_FALSE(lookups[2]->inputs[5].bool_value);  // a dense gradient
    // One all_to_all carries a's partial sums and b's slices: 16 columns a rank.
    ASSERT_EQ(ops.collectives.size(), 3u);
    const auto fwd = core::comm::readCollective(*ops.collectives[0]);
    EXPECT_EQ(fwd.in_split, (std::vector<int64_t>{B * 16, B * 16}));
    EXPECT_EQ(fwd.out_split, (std::vector<int64_t>{B * 16, B * 16}));
    const auto bwd = core::comm::readCollective(*ops.collectives[1]);
    EXPECT_EQ(bwd.in_split, fwd.out_split);
    // Each received block split into its shards' columns; a's partials summed.
    ASSERT_EQ(ops.by_name["aten::split_with_sizes"].size(), 3u);  // received, 2 blocks
    const core::Value& widths = ops.by_name["aten::split_with_sizes"][1]->inputs[1];
    ASSERT_EQ(widths.elements.size(), 2u);
    EXPECT_EQ(widths.elements[1].int_value, 8);
    EXPECT_EQ(ops.by_name["aten::split_with_sizes"][1]->inputs[2].int_value, 1);  // dim 1
    ASSERT_EQ(ops.by_name["aten::add"].size(), 1u);
    EXPECT_EQ(shapeOf(ops.by_name["aten::add"][0]->inputs[0]), (std::vector<int64_t>{B, 8}));
    // The interaction: bottom 5 + b's two slices + a's sum + c = 5 + 28.
    EXPECT_EQ(shapeOf(ops.by_name.at("aten::linear")[2]->inputs[0]),
              (std::vector<int64_t>{B, 5 + 8 + 16 + 4}));
    // Backward: c first (dense, 70 rows), then b's and a's shards, last first.
    const auto& backs = ops.by_name["aten::_embedding_bag_backward"];
    ASSERT_EQ(backs.size(), 3u);
    EXPECT_EQ(backs[0]->inputs[6].int_value, 70);
    EXPECT_FALSE(backs[0]->inputs[9].bool_value);
    EXPECT_EQ(backs[1]->inputs[6].int_value, 50);  // b's slice
    EXPECT_EQ(shapeOf(backs[1]->inputs[0]), (std::vector<int64_t>{bags, 8}));
    EXPECT_TRUE(backs[2]->inputs[9].bool_value);   // a's rows, sparse
    // c's gradient is all-reduced with the dense part.
    const auto ar = core::comm::readCollective(*ops.collectives[2]);
    EXPECT_EQ(ar.kind, core::comm::Collective::kAllReduce);
    EXPECT_EQ(shapeOf(ops.collectives[2]->inputs[0].elements[0])[0], bucket);
  }
}

TEST(StepTrace, RowWiseShardsOfAZipfTableSplitItsLookupsByTheLaw) {
  SweepSpec s = parseSweepSpec(shardFile(), "s.yaml");
  s.tables[0].zipf = 1.1;
  const std::vector<Shard> shards = planShards(s, s.plans[0].place);
  // Rows 0..50 hold most of the mass: sum_{i<=50} i^-1.1 / sum_{i<=100} i^-1.1.
  double head = 0, all = 0;
  for (int i = 1; i <= 100; ++i) {
    all += std::pow(i, -1.1);
    if (i <= 50) head += std::pow(i, -1.1);
  }
  EXPECT_EQ(shards[0].lookups, std::llround(24 * head / all));
  EXPECT_EQ(shards[0].lookups + shards[1].lookups, 24);
  EXPECT_GT(shards[0].lookups, 3 * shards[1].lookups);
}

TEST(StepTrace, AZipfTableOfAHundredBillionRowsSplitsWithoutVisitingThem) {
  // The split once summed every row's weight: 10^11 pows held a sweep for
  // minutes. Rows 0..5*10^10 at s = 1: ln(5e10)+gamma over ln(1e11)+gamma.
  SweepSpec s = parseSweepSpec(shardFile(), "s.yaml");
  s.tables[0].rows = 100000000000;
  s.tables[0].zipf = 1.0;
  const std::vector<Shard> shards = planShards(s, s.plans[0].place);
  const double gamma = 0.5772156649015329;
  const double share = (std::log(5e10) + gamma) / (std::log(1e11) + gamma);
  EXPECT_EQ(shards[0].lookups, std::llround(24 * share));
  EXPECT_EQ(shards[0].lookups + shards[1].lookups, 24);
}

}  // namespace
}  // namespace tracetwin::sweep
