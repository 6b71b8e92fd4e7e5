// Steps of the cluster builder (cluster_builder.cpp) that live in files of their own.
#pragma once

#include <string>

#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/status.hpp"

namespace clusterdyn::detail {

/// Throws ModelError "location: element: what" (a builder message naming file:line and element).
[[noreturn]] inline void fail(const std::string& location, const std::string& element,
                              const std::string& what) {
  throw ModelError(location + ": " + element + ": " + what);
}

/// cm.qReference: the neutral configuration with every constrained cluster closed, each one's
/// independent set checked against its freedom (rank-revealing QR of K) and its selected rows
/// set; G = I for the unconstrained clusters, the constant G of explicit clusters
/// (cluster_reference.cpp).
void closeReferenceConfiguration(ClusterModel& cm);

}  // namespace clusterdyn::detail
