// The passive-motion energy oracle of the loop tests: RK4 on the independent state with CE-ABA
// and no torque; the spanning tree's mechanical energy changes by the integrator's error only.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

#include "clusterdyn/clusterdyn.hpp"

namespace clusterdyn::test {

/// Mechanical energy (kinetic + gravity) of the spanning state closed from (y, y_dot).
inline double spanningEnergy(const ClusterModel& cm, ClusterData& data, Data& tree, const VecX& y,
                             const VecX& ydot) {
  EXPECT_EQ(independentToSpanning(cm, data, y, ydot), Status::Ok) << data.errorMessage();
  return kineticEnergy(cm.treeModel, tree, data.q, data.v) +
         potentialEnergy(cm.treeModel, tree, data.q);
}

/// |E(end) - E(start)| after `steps` classical RK4 steps of h from (y0, yd0), y_dot' = CE-ABA
/// with zero torque. y is advanced as a vector: models whose independent coordinates are all
/// scalar (nyq == ny). Failed calls are GoogleTest failures (check HasFatalFailure()).
inline double passiveEnergyDrift(const ClusterModel& cm, ClusterData& data, const VecX& y0,
                                 const VecX& yd0, double h, int steps) {
  EXPECT_EQ(cm.nyq, cm.ny) << "passiveEnergyDrift adds y as a vector";
  Data tree(cm.treeModel);
  const VecX zero = VecX::Zero(cm.ny);
  auto accel = [&](const VecX& y, const VecX& yd, VecX& out) {
    ASSERT_EQ(independentToSpanning(cm, data, y, yd), Status::Ok) << data.errorMessage();
    const VecX q = data.q, v = data.v;
    ASSERT_EQ(ceAba(cm, data, q, v, zero), Status::Ok) << data.errorMessage();
    out = data.ydd;
  };
  const double e0 = spanningEnergy(cm, data, tree, y0, yd0);
  VecX y = y0, yd = yd0;
  for (int step = 0; step < steps; ++step) {
    VecX a1, a2, a3, a4;
    accel(y, yd, a1);
    accel(y + 0.5 * h * yd, yd + 0.5 * h * a1, a2);
    accel(y + 0.5 * h * (yd + 0.5 * h * a1), yd + 0.5 * h * a2, a3);
    accel(y + h * (yd + 0.5 * h * a2), yd + h * a3, a4);
    if (::testing::Test::HasFatalFailure()) return NAN;
    y += h * (yd + h / 6.0 * (a1 + a2 + a3));
    yd += h / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4);
  }
  return std::abs(spanningEnergy(cm, data, tree, y, yd) - e0);
}

}  // namespace clusterdyn::test
