// Status-returning energy functions (computeKineticEnergy, computePotentialEnergy) and their
// value forms (kineticEnergy, potentialEnergy: NaN on invalid input).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "clusterdyn/clusterdyn.hpp"
#include "test_util.hpp"

namespace clusterdyn {
namespace {

using test::RandomModelOptions;
using test::randomState;
using test::RandomState;
using test::randomTreeModel;

class EnergyStatus : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(31);
    RandomModelOptions o;
    o.nbodies = 5;
    o.floatingBase = true;
    model_ = randomTreeModel(rng, o);
    st_ = randomState(model_, rng);
  }
  Model model_;
  RandomState st_;
};

TEST_F(EnergyStatus, StatusFormMatchesValueForm) {
  Data data(model_);
  ASSERT_EQ(computeKineticEnergy(model_, data, st_.q, st_.v), Status::Ok);
  const double T = data.kineticEnergy;
  ASSERT_EQ(computePotentialEnergy(model_, data, st_.q), Status::Ok);
  const double V = data.potentialEnergy;
  EXPECT_GT(T, 0.0);
  Data other(model_);
  EXPECT_EQ(kineticEnergy(model_, other, st_.q, st_.v), T);
  EXPECT_EQ(potentialEnergy(model_, other, st_.q), V);
}

TEST_F(EnergyStatus, InvalidInputGivesStatusAndKeepsResult) {
  Data data(model_);
  ASSERT_EQ(computeKineticEnergy(model_, data, st_.q, st_.v), Status::Ok);
  const double T = data.kineticEnergy;
  const VecX vBad = VecX::Zero(model_.nv - 1);
  EXPECT_EQ(computeKineticEnergy(model_, data, st_.q, vBad), Status::InvalidSize);
  EXPECT_NE(std::string(data.errorMessage()).find('v'), std::string::npos);
  EXPECT_EQ(data.kineticEnergy, T);
  VecX qNan = st_.q;
  qNan[0] = std::nan("");
  EXPECT_EQ(computePotentialEnergy(model_, data, qNan), Status::NonFinite);
  EXPECT_TRUE(std::isnan(potentialEnergy(model_, data, qNan)));
}

}  // namespace
}  // namespace clusterdyn
