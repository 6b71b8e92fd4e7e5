// The start of a contact-step test: a robot's contact problem on the ground (its feet from
// contact_scenes.hpp) and a closed spanning state (q, v) built from independent coordinates.
#pragma once

#include <gtest/gtest.h>

#include "clusterdyn/clusterdyn.hpp"
#include "contact_scenes.hpp"

namespace clusterdyn::test {

/// Closes the independent state (y, y_dot) into data (independentToSpanning) and copies its
/// spanning state to q, v; fails with data's message.
inline ::testing::AssertionResult closedSpanningState(const ClusterModel& cm, ClusterData& data,
                                                      const VecX& y, const VecX& ydot, VecX& q,
                                                      VecX& v) {
  if (independentToSpanning(cm, data, y, ydot) != Status::Ok)
    return ::testing::AssertionFailure() << "independentToSpanning: " << data.errorMessage();
  q = data.q;
  v = data.v;
  return ::testing::AssertionSuccess();
}

}  // namespace clusterdyn::test
