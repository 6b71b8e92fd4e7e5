// libFuzzer target: URDF(+) text -> parseUrdfString -> buildClusterModel. The only acceptable
// outcomes are a model or a ModelError (any other exception, crash or sanitizer report is a
// defect). A model that loads must be usable: a workspace, the closure at the reference
// configuration and CE-ABA there return a Status (never throw, never crash).
#include <cstddef>
#include <cstdint>
#include <string>

#include "clusterdyn/clusterdyn.hpp"

namespace cd = clusterdyn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  static const bool quiet = (cd::setLogLevel(cd::LogLevel::Off), true);
  (void)quiet;
  const std::string xml(reinterpret_cast<const char*>(bytes), size);
  cd::ClusterModel model;
  try {
    model = cd::buildClusterModel(cd::parseUrdfString(xml, "fuzz.urdf"));
  } catch (const cd::ModelError&) {
    return 0;  // bad input, reported
  }
  if (model.treeModel.nbodies > 200) return 0;  // keep executions fast
  cd::ClusterData data(model);
  cd::VecX y(model.nyq), ydot = cd::VecX::Zero(model.ny), tau = cd::VecX::Zero(model.ny);
  for (int i = 0; i < model.nyq; ++i) y[i] = model.qReference[model.independentPosition[i]];
  const cd::Status s = cd::ceAbaIndependent(model, data, y, ydot, tau);
  if (s == cd::Status::Ok && !data.ydd.allFinite()) __builtin_trap();  // Ok means finite
  return 0;
}
