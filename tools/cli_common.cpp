// Shared pieces of the clusterdyn command-line tool: number parsing and model loading.
#include "cli_common.hpp"

#include <cmath>

namespace clusterdyn::cli {

double parseDouble(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    const double x = std::stod(s, &used);
    if (used == s.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  throw UsageError(what + ": not a number: '" + s + "'");
}

long parsePositive(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    const long x = std::stol(s, &used);
    if (used == s.size() && x > 0) return x;
  } catch (const std::exception&) {
  }
  throw UsageError(what + ": not a positive integer: '" + s + "'");
}

CliModel loadForCli(const std::string& path, bool floatingBase, const std::vector<std::string>& cut,
                    bool cutAll) {
  ModelOptions options;
  options.floatingBase = floatingBase;
  options.cutLoops = cutAll;
  UrdfDescription urdf = parseModelFile(path);
  for (const std::string& name : cut) {  // bench --cut LOOP
    auto l = std::find_if(urdf.loops.begin(), urdf.loops.end(),
                          [&](const UrdfLoop& x) { return x.name == name; });
    if (l == urdf.loops.end()) throw UsageError("--cut: the model has no loop '" + name + "'");
    l->cut = true;
  }
  CliModel m;
  try {
    m.cluster = std::make_unique<ClusterModel>(buildClusterModel(urdf, options));
    m.tree = m.cluster->treeModel;
  } catch (const ModelError& e) {
    m.clusterError = e.what();
    // The spanning tree alone (throws again if the tree itself is invalid). Its warnings were
    // already logged by the cluster builder.
    const LogLevel level = logLevel();
    setLogLevel(LogLevel::Error);
    try {
      m.tree = buildTreeModel(urdf, options);
    } catch (...) {
      setLogLevel(level);
      throw;
    }
    setLogLevel(level);
  }
  return m;
}

int floatingBody(const Model& model) {
  for (int i = 0; i < model.nbodies; ++i)
    if (model.joints[i].type == JointType::Floating) return i;
  return -1;
}

}  // namespace clusterdyn::cli
