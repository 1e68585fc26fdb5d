// SGD's sparse add_ (kernels/sparse_add_model.h): the analytic terms with
// fake coefficients, the file's errors, which adds it costs and with how many
// distinct rows, and the predictor using it on data/embbag_sparse.
#include "predictors/kernels/sparse_add_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "core/sparse_layout.h"
#include "core/trace_reader.h"
#include "predictors/kernels/feature_shapes.h"
#include "predictors/kernels/sparse_rows.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

namespace fs = std::filesystem;

nlohmann::json modelJson(std::vector<double> c, double values_cache = 1 << 20,
                         double table_cache = 4 << 20) {
  return {{"kind", "sparse_add_coalesce"}, {"terms", SparseAddModel::terms()},
          {"coefficients_us", c}, {"values_cache_bytes", values_cache},
          {"table_cache_bytes", table_cache}};
}

// A warm and a cold fit: the cold one `factor` times the warm one.
nlohmann::json warmColdJson(std::vector<double> c, double factor) {
  nlohmann::json j = modelJson(c);
  for (double& v : c) v *= factor;
  j["cold_coefficients_us"] = c;
  j["cold_values_cache_bytes"] = j["values_cache_bytes"];
  j["cold_table_cache_bytes"] = j["table_cache_bytes"];
  return j;
}

TEST(SparseAddModel, SumsItsTermsWithTheFittedCoefficients) {
  // One coefficient at a time: each term alone.
  auto only = [](size_t k, double v) {
    std::vector<double> c(SparseAddModel::terms().size(), 0.0);
    c[k] = v;
    return SparseAddModel::fromJson(modelJson(c), "t.json");
  };
  // 4,096 lookups of 4,000 distinct rows of a [200000, 32] table: values 512 KiB (in the
  // 1 MiB cache), table 24.4 MiB (outside the 4 MiB one: miss 1 - 4/24.4).
  const SparseAddShape s{4096, 32, 200000, 4000};
  const double table_miss = 1.0 - double(4 << 20) / (200000.0 * 32 * 4);
  EXPECT_DOUBLE_EQ(only(0, 5).predictUs(s, 0), 5);
  EXPECT_DOUBLE_EQ(only(1, 1e-3).predictUs(s, 0), 1e-3 * 4096 * 12);
  EXPECT_DOUBLE_EQ(only(2, 1e-4).predictUs(s, 0), 1e-4 * 4096 * 32);
  EXPECT_DOUBLE_EQ(only(3, 1e-4).predictUs(s, 0), 0) << "values fit the cache";
  EXPECT_DOUBLE_EQ(only(4, 1e-2).predictUs(s, 0), 40);
  EXPECT_NEAR(only(5, 1e-2).predictUs(s, 0), 40 * table_miss, 1e-9);
  EXPECT_DOUBLE_EQ(only(6, 1e-3).predictUs(s, 0), 128);
  EXPECT_NEAR(only(7, 1e-3).predictUs(s, 0), 128 * table_miss, 1e-9);
  // Fewer distinct rows (a Zipf table's gradient) cost less.
  const auto all = SparseAddModel::fromJson(modelJson({1, 1e-3, 1e-4, 1e-4, 1e-2, 1e-2, 1e-3, 0}),
                                            "t.json");
  EXPECT_LT(all.predictUs({4096, 32, 200000, 1000}, 0), all.predictUs(s, 0));
  // Warm and evicted fits, weighed by the share of the table evicted.
  const auto both = SparseAddModel::fromJson(warmColdJson({10, 0, 0, 0, 0, 0, 0, 0}, 3), "t.json");
  EXPECT_DOUBLE_EQ(both.predictUs(s, 0), 10);
  EXPECT_DOUBLE_EQ(both.predictUs(s, 1), 30);
  EXPECT_DOUBLE_EQ(both.predictUs(s, 0.25), 15);
  EXPECT_DOUBLE_EQ(both.predictUs(s, 7), 30) << "clamped";
  EXPECT_TRUE(SparseAddModel{}.empty());
  EXPECT_EQ(SparseAddModel{}.predictUs(s, 0), 0);
}

TEST(SparseAddModel, BadFilesAreInputErrors) {
  EXPECT_THROW(SparseAddModel::fromJson({{"kind", "roofline"}}, "t.json"), InputError);
  auto j = modelJson({1, 2, 3});
  EXPECT_THROW(SparseAddModel::fromJson(j, "t.json"), InputError) << "3 coefficients for 8 terms";
  j = modelJson(std::vector<double>(8, 0.0));
  j["terms"] = {"1"};
  EXPECT_THROW(SparseAddModel::fromJson(j, "t.json"), InputError) << "another build's terms";
  j = modelJson(std::vector<double>(8, 0.0));
  j.erase("table_cache_bytes");
  EXPECT_THROW(SparseAddModel::fromJson(j, "t.json"), InputError);
  // Values no non-negative fit writes (a bad-input hunt's -1000 predicted -0.7 ms).
  const auto error = [](const nlohmann::json& bad) {
    try {
      SparseAddModel::fromJson(bad, "t.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::vector<double> negative(8, 0.0);
  negative[0] = -1000;
  EXPECT_NE(error(modelJson(negative)).find("coefficients_us[0]"), std::string::npos);
  std::vector<double> cold(8, 0.0);
  cold[3] = -1;
  EXPECT_NE(error(warmColdJson(cold, 1)).find("coefficients_us[3]"), std::string::npos);
  EXPECT_NE(error(modelJson(std::vector<double>(8, 0.0), 1 << 20, -5)).find("table_cache_bytes"),
            std::string::npos);
  EXPECT_NE(error(modelJson(std::vector<double>(8, 0.0), 0)).find("values_cache_bytes"),
            std::string::npos);
  const fs::path dir = fs::temp_directory_path() / "tracetwin-sparse-add-test";
  fs::create_directories(dir);
  std::ofstream(dir / SparseAddModel::kFileName) << "{not json";
  EXPECT_THROW(SparseAddModel::loadFrom(dir.string()), InputError);
  fs::remove(dir / SparseAddModel::kFileName);
  EXPECT_TRUE(SparseAddModel::loadFrom(dir.string()).empty()) << "absent: empty";
  // saveTo and loadFrom round trip.
  const auto m = SparseAddModel::fromJson(modelJson({1, 2, 3, 4, 5, 6, 7, 8}), "t.json");
  m.saveTo(dir.string());
  EXPECT_EQ(SparseAddModel::loadFrom(dir.string()).warm.coefficients_us, m.warm.coefficients_us);
  const auto wc = SparseAddModel::fromJson(warmColdJson({1, 2, 3, 4, 5, 6, 7, 8}, 2), "t.json");
  wc.saveTo(dir.string());
  EXPECT_EQ(SparseAddModel::loadFrom(dir.string()).cold.coefficients_us, wc.cold.coefficients_us);
  fs::remove_all(dir);
}

TEST(SparseAddModel, UniformDrawsHitTheExpectedDistinctRows) {
  EXPECT_NEAR(expectedUniqueRows(7680, 200000), 200000 * (1 - std::exp(-7680.0 / 200000)), 1e-6);
  EXPECT_NEAR(expectedUniqueRows(1e6, 100), 100, 1e-9);
  EXPECT_EQ(expectedUniqueRows(0, 100), 0);
}

// data/embbag_sparse: EmbeddingBag(200000, 32, sparse) + SGD. Op 339 is the
// SGD add_ of the sparse gradient into the table; op 270 accumulates one
// sparse gradient into another (no coalesce: not this model's).
TEST(SparseAddModel, CostsSgdsSparseAddOnTheCapturedStep) {
  const core::Graph g = core::readTrace(testing::dataPath("embbag_sparse.et.json.gz"));
  const core::SparseTensors sparse = core::inferSparseTensors(g);
  const auto sgd = sparseAddShape(g.node(339), sparse, nullptr);
  ASSERT_TRUE(sgd);
  EXPECT_EQ(sgd->rows, 200000);
  EXPECT_EQ(sgd->dim, 32);
  EXPECT_EQ(sgd->nnz, 7680);
  EXPECT_NEAR(sgd->unique, expectedUniqueRows(7680, 200000), 1e-6);
  EXPECT_FALSE(sparseAddShape(g.node(270), sparse, nullptr)) << "sparse self";
  // With the lookups' Zipf histogram, the distinct rows it implies.
  const auto zipf = zipfReuseHistogram(7680, 200000, 1.2);
  EXPECT_NEAR(sparseAddShape(g.node(339), sparse, &zipf)->unique, uniqueFraction(zipf) * 7680,
              1e-6);
  EXPECT_LT(uniqueFraction(zipf) * 7680, 0.5 * sgd->unique);

  // The predictor takes the model for op 339: 100 us from the warm fit's
  // intercept alone (the evicted fit's would be 500).
  const fs::path dir = fs::temp_directory_path() / "tracetwin-sparse-add-models";
  fs::remove_all(dir);
  fs::copy(testing::dataPath("models/host"), dir, fs::copy_options::recursive);
  std::vector<double> c(SparseAddModel::terms().size(), 0.0);
  c[0] = 100;
  std::ofstream(dir / SparseAddModel::kFileName) << warmColdJson(c, 5).dump();
  const ModelSet with = ModelSet::load(dir.string());
  ASSERT_FALSE(with.sparse_add.empty());
  const Prediction p = predictGraph(g, with, {});
  bool seen = false;
  for (const OpPrediction& op : p.per_op) {
    if (op.id == 339) {
      seen = true;
      EXPECT_EQ(op.model, "sparse_add");
      // A step of one table: nothing evicts it before the update (warm).
      EXPECT_DOUBLE_EQ(op.predicted_us, 100.0);
    }
    if (op.id == 270) {
      EXPECT_NE(op.model, "sparse_add");
    }
  }
  EXPECT_TRUE(seen);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tracetwin::predictors
