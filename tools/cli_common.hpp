// Shared pieces of the clusterdyn command-line tool (clusterdyn_cli.cpp, cli_bench.cpp): exit
// statuses, the option parser, number parsing, model loading. Usage: docs/cli.md.
#pragma once

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "clusterdyn/clusterdyn.hpp"

namespace clusterdyn::cli {

constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Minimal option parser: positional arguments plus --flags and --key value pairs.
struct Args {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> options;  // value "" for flags

  Args(int argc, char** argv, int first, const std::vector<std::string>& flags,
       const std::vector<std::string>& valued) {
    for (int i = first; i < argc; ++i) {
      const std::string a = argv[i];
      if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
        options.emplace_back(a, "");
      } else if (std::find(valued.begin(), valued.end(), a) != valued.end()) {
        if (i + 1 >= argc) throw UsageError(a + " needs a value");
        options.emplace_back(a, argv[++i]);
      } else if (a.size() > 1 && a[0] == '-') {
        throw UsageError("unknown option " + a);
      } else {
        positional.push_back(a);
      }
    }
  }
  bool has(const std::string& name) const {
    for (const auto& o : options)
      if (o.first == name) return true;
    return false;
  }
  /// Every value of a repeatable option, in order.
  std::vector<std::string> values(const std::string& name) const {
    std::vector<std::string> out;
    for (const auto& o : options)
      if (o.first == name) out.push_back(o.second);
    return out;
  }
  std::string value(const std::string& name, const std::string& fallback) const {
    std::string v = fallback;
    for (const auto& o : options)
      if (o.first == name) v = o.second;
    return v;
  }
};

/// s as a finite number; UsageError naming `what` otherwise.
double parseDouble(const std::string& s, const std::string& what);
/// s as an integer > 0; UsageError naming `what` otherwise.
long parsePositive(const std::string& s, const std::string& what);

/// A model as the CLI uses it: the cluster model when the URDF(+) builds one (every valid model
/// does; plain trees give one cluster per body), else the spanning tree alone.
struct CliModel {
  std::unique_ptr<ClusterModel> cluster;
  std::string clusterError;  ///< why the cluster model could not be built
  Model tree;  ///< cluster->treeModel (bodies numbered cluster by cluster), or the tree
};

/// Loads path (URDF+ or MJCF) for the CLI; cut: loops to cut by name (bench --cut, UsageError
/// for an unknown name), cutAll: every loop (--cut-loops).
CliModel loadForCli(const std::string& path, bool floatingBase,
                    const std::vector<std::string>& cut = {}, bool cutAll = false);

/// The body of the floating-base joint, or -1.
int floatingBody(const Model& model);

/// `clusterdyn bench` (cli_bench.cpp).
int cmdBench(const Args& args);

}  // namespace clusterdyn::cli
