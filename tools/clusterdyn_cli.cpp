// clusterdyn command-line tool: model information, verification against reference data, quick
// timings. Usage: see usage() below and docs/cli.md.
#include <malloc.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "cli_json.hpp"
#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "reference_verify.hpp"

using namespace clusterdyn;
using namespace clusterdyn::cli;

namespace {

const char* kUsage =
    "usage: clusterdyn <command> [arguments]\n"
    "\n"
    "commands:\n"
    "  info MODEL.urdf [--floating-base] [--json]\n"
    "      bodies, joints (type, parent, q/v index, limits), frames, dof counts, total mass, and\n"
    "      the cluster tree (clusters, bodies, output body, spanning/independent dofs, loops,\n"
    "      couplings)\n"
    "  dot MODEL.urdf [-o|--output FILE] [--floating-base]\n"
    "      Graphviz picture of the cluster tree (chords dashed) to stdout or FILE\n"
    "  verify REFERENCE.json... [--models DIR] [--tol 1e-9]\n"
    "      recompute every sample of reference files (shared/reference/README.md format:\n"
    "      Pinocchio tree files and grbda cluster-tree files) and print per quantity the max\n"
    "      relative error |a - b| / max(1, |b|); exit 0 only if every computed quantity is\n"
    "      within the tolerance. --models: folder the file's model.urdf is relative to\n"
    "      (default: parent of the folder holding the JSON file)\n"
    "  bench MODEL.urdf [--calls N] [--json] [--floating-base] [--contact 3:LINK|6:LINK]...\n"
    "        [--only ALGO[,ALGO...]] [--mu 1e-4] [--tol 1e-10] [--max-iter 50]\n"
    "        [--cut LOOP]... [--cut-loops]\n"
    "      median ns per call of forward kinematics (q, v), RNEA, ABA, CRBA at random states and\n"
    "      of CE-ABA, CE-RNEA, cluster mass matrix H and bias C at random closed states; with\n"
    "      contacts (3D point or 6D weld, LOCAL, on the link's frame) also of the Delassus\n"
    "      matrix, its damped inverse (rho 1e-6), constrainedABA, proxPV and the dense baseline\n"
    "      (proximal settings --mu, --tol, --max-iter); --only: just these (JSON names).\n"
    "      --cut LOOP / --cut-loops: cut that loop / every loop instead of embedding it; the\n"
    "      cut loops join the constraint set of the constrained algorithms (as contacts do)\n"
    "  forces MODEL.urdf [--json] [--seed N] [--floating-base]\n"
    "      CE-ABA at a random closed state (efforts uniform in [-1, 1]) and the resulting\n"
    "      force of every tree joint (child body frame), wrench of every loop joint (loop\n"
    "      frame) and generalized force of every coupling / mimic on each of its joints\n"
    "  help\n"
    "\n"
    "exit status: 0 success, 1 failure (bad model, verification failed), 2 usage error\n";

std::string limitText(double x) {
  if (!std::isfinite(x)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

/// Bytes of one C++ workspace (ClusterData) of cm: the object and the heap storage of every
/// member (vector capacities, Eigen matrix sizes), from a workspace constructed without its two
/// dense matrices; the tree mass matrix M (nv x nv) and the cluster mass matrix H (ny x ny) are
/// added by size, so that info on a 10 000-link model does not touch the 1.6 GB they would take.
/// (A cdyn_workspace holds the same plus a few vectors, rounded to 64-byte blocks:
/// cdyn_workspace_size.)
struct WorkspaceBytes {
  std::size_t total = 0, dense = 0;
};
WorkspaceBytes workspaceBytes(const ClusterModel& cm) {
  const ClusterData d(cm, false);
  // Made without M and H (empty, 0 heap bytes): those two are added by size below.
  const std::size_t b = sizeof(ClusterData) + d.heapBytes();
  WorkspaceBytes w;
  w.dense = sizeof(double) * (static_cast<std::size_t>(cm.treeModel.nv) * cm.treeModel.nv +
                              static_cast<std::size_t>(cm.ny) * cm.ny);
  w.total = b + w.dense;
  return w;
}

/// Conditioning of an implicit loop cluster's dependent-coordinate Jacobian Kd (the rows
/// selected at load time, the dependent columns) at the reference configuration.
struct LoopConditioning {
  std::string cluster;
  int rows = 0;
  double sigmaMin = 0.0, sigmaMax = 0.0;
};
std::vector<LoopConditioning> loopConditioning(const ClusterModel& cm) {
  std::vector<LoopConditioning> out;
  if (!cm.hasImplicitClusters()) return out;
  ClusterData data(cm, false);
  const VecX v = VecX::Zero(cm.treeModel.nv);
  if (clusterConstraintMatrices(cm, data, cm.qReference, v) != Status::Ok)
    throw std::runtime_error(std::string("loop conditioning: ") + data.errorMessage());
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (!c.implicit()) continue;
    const int nd = static_cast<int>(c.dependent.size());
    const MatX& K = data.constraintJacobian(k);
    MatX Kd(nd, nd);
    for (int i = 0; i < nd; ++i)
      for (int j = 0; j < nd; ++j) Kd(i, j) = K(c.selectedRows[i], c.dependent[j]);
    LoopConditioning l;
    l.cluster = c.name;
    l.rows = nd;
    if (nd > 0) {
      const Eigen::JacobiSVD<MatX> svd(Kd);
      l.sigmaMax = svd.singularValues()[0];
      l.sigmaMin = svd.singularValues()[nd - 1];
    }
    out.push_back(l);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

int cmdInfo(const Args& args) {
  if (args.positional.size() != 1) throw UsageError("info needs exactly one MODEL.urdf");
  const CliModel m = loadForCli(args.positional[0], args.has("--floating-base"));
  const Model& model = m.tree;
  if (args.has("--json")) {
    auto j = cli::modelInfoJson(model);
    if (m.cluster) {
      j["cluster_tree"] = cli::clusterTreeJson(*m.cluster);
      j["clusters"] = cli::clustersJson(*m.cluster);
      const WorkspaceBytes w = workspaceBytes(*m.cluster);
      j["workspace_bytes"] = w.total;
      j["workspace_dense_matrix_bytes"] = w.dense;
      auto loops = decltype(j)::array();
      for (const LoopConditioning& l : loopConditioning(*m.cluster))
        loops.push_back({{"cluster", l.cluster},
                         {"dependent_coordinates", l.rows},
                         {"smallest_singular_value", l.sigmaMin},
                         {"condition_number", l.sigmaMin > 0 ? l.sigmaMax / l.sigmaMin : -1.0}});
      j["loop_conditioning"] = loops;
    } else {
      j["cluster_tree_error"] = m.clusterError;
    }
    std::cout << j.dump(2) << "\n";
    if (!m.cluster) std::cerr << "error: cluster tree: " << m.clusterError << "\n";
    return m.cluster ? kExitOk : kExitFailure;
  }
  std::cout << describeModel(model);
  std::cout << "  joints (q/v: first index; limits: lower upper velocity effort, '-' = none):\n";
  char line[512];
  for (int i = 0; i < model.nbodies; ++i) {
    const int iq = model.idx_q[i], iv = model.idx_v[i];
    const bool scalar = model.nqs[i] == 1 && model.nvs[i] == 1;
    const std::string parent = model.parent[i] >= 0 ? model.bodyNames[model.parent[i]] : "world";
    std::snprintf(line, sizeof line, "    %-30s %-9s %-24s -> %-24s q %-3d v %-3d",
                  model.jointNames[i].c_str(), jointTypeName(model.joints[i].type), parent.c_str(),
                  model.bodyNames[i].c_str(), iq, iv);
    std::cout << line;
    if (scalar)
      std::cout << "  [" << limitText(model.lowerPositionLimit[iq]) << ", "
                << limitText(model.upperPositionLimit[iq]) << "] "
                << limitText(model.velocityLimit[iv]) << " " << limitText(model.effortLimit[iv]);
    std::cout << "\n";
  }
  std::cout << "  frames (" << model.frames.size() << "):\n";
  for (const Frame& f : model.frames)
    std::cout << "    " << f.name << " -> body "
              << (f.body >= 0 ? model.bodyNames[f.body] : std::string("world"))
              << (f.isBody ? "" : " (fused)") << "\n";
  const int fb = floatingBody(model);
  std::cout << "  dof: nq = " << model.nq << ", nv = " << model.nv << ", floating base: "
            << (fb >= 0 ? "yes (joint '" + model.jointNames[fb] + "')" : std::string("no")) << "\n";
  std::snprintf(line, sizeof line, "  total mass: %.9g kg\n", model.totalMass());
  std::cout << line;
  if (!m.cluster) {
    std::cout << std::flush;
    std::cerr << "error: cluster tree: " << m.clusterError << "\n";
    return kExitFailure;
  }
  const ClusterModel& cm = *m.cluster;
  std::cout << "\n" << describeClusterTree(cm);
  auto list = [](const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  std::cout << "  independent positions y (" << cm.nyq << "): " << list(cm.independentPositionNames)
            << "\n  independent velocities y_dot (" << cm.ny
            << "): " << list(cm.independentVelocityNames) << "\n";
  for (const ExplicitRelation& r : cm.relations) {
    std::cout << "  relation " << r.name << " (cluster " << r.cluster << "): ";
    for (size_t k = 0; k < r.terms.size(); ++k) {
      const double c = r.terms[k].second;
      std::snprintf(line, sizeof line, "%s%.6g %s",
                    k == 0 ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + "), std::fabs(c),
                    model.velocityNames[r.terms[k].first].c_str());
      std::cout << line;
    }
    std::snprintf(line, sizeof line, " = %.6g\n", r.offset);
    std::cout << line;
  }
  const WorkspaceBytes w = workspaceBytes(cm);
  std::snprintf(line, sizeof line,
                "  workspace: %zu bytes per C++ ClusterData, %zu of them the dense M (nv x nv) "
                "and H (ny x ny) (a cdyn_workspace is slightly larger: cdyn_workspace_size)\n",
                w.total, w.dense);
  std::cout << line;
  for (const LoopConditioning& l : loopConditioning(cm)) {
    std::snprintf(line, sizeof line,
                  "  loop conditioning of cluster '%s' at the reference configuration: dependent "
                  "Jacobian Kd %d x %d, smallest singular value %.6g, condition number %.6g\n",
                  l.cluster.c_str(), l.rows, l.rows, l.sigmaMin,
                  l.sigmaMin > 0 ? l.sigmaMax / l.sigmaMin : INFINITY);
    std::cout << line;
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------

int cmdDot(const Args& args) {
  if (args.positional.size() != 1) throw UsageError("dot needs exactly one MODEL.urdf");
  ModelOptions options;
  options.floatingBase = args.has("--floating-base");
  const std::string dot = clusterTreeDot(loadModel(args.positional[0], options));
  const std::string path = args.value("-o", args.value("--output", ""));
  if (path.empty()) {
    std::cout << dot;
    return kExitOk;
  }
  std::ofstream out(path);
  out << dot;
  out.close();
  if (!out) {
    std::cerr << "error: cannot write " << path << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------

int cmdVerify(const Args& args) {
  if (args.positional.empty()) throw UsageError("verify needs at least one REFERENCE.json");
  verify::VerifyOptions options;
  options.modelsDir = args.value("--models", "");
  options.tolerance = parseDouble(args.value("--tol", "1e-9"), "--tol");
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& path : args.positional) {
    const verify::FileReport r = verify::verifyReferenceFile(path, options);
    std::cout << verify::formatReport(r) << std::flush;
    passed += r.count(verify::Outcome::Passed);
    failed += r.count(verify::Outcome::Failed);
    skipped += r.count(verify::Outcome::Skipped);
  }
  std::cout << "verify: " << passed << " passed, " << failed << " failed, " << skipped
            << " skipped\n";
  return failed == 0 ? kExitOk : kExitFailure;
}

// ---------------------------------------------------------------------------------------------

/// `clusterdyn forces`: constraint forces (docs/design/constraint-forces.md) after CE-ABA.
int cmdForces(const Args& args) {
  if (args.positional.size() != 1) throw UsageError("forces needs exactly one MODEL.urdf");
  ModelOptions options;
  options.floatingBase = args.has("--floating-base");
  const ClusterModel cm = loadModel(args.positional[0], options);
  ClusterData data(cm);
  JointForces forces(cm);
  std::mt19937_64 rng(
      static_cast<unsigned long>(parsePositive(args.value("--seed", "1"), "--seed")));
  support::ClosedState state;
  if (!support::randomClosedState(cm, data, rng, state)) {
    std::cerr << "error: no closed state found: " << data.errorMessage() << "\n";
    return kExitFailure;
  }
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  VecX tau(cm.ny);
  for (int i = 0; i < cm.ny; ++i) tau[i] = uni(rng);
  if (ceAba(cm, data, state.q, state.v, tau) != Status::Ok ||
      ceAbaConstraintForces(cm, data, forces, tau) != Status::Ok) {
    std::cerr << "error: " << data.errorMessage() << "\n";
    return kExitFailure;
  }
  const Model& tree = cm.treeModel;
  auto vec = [](const Force& f) { return std::vector<double>(f.data(), f.data() + 6); };
  nlohmann::ordered_json out;
  out["model"] = tree.name;
  out["convention"] =
      "wrenches [nx, ny, nz, fx, fy, fz]; joints: applied to the child body, child body frame; "
      "loops: applied to the successor, loop frame P";
  out["q"] = std::vector<double>(state.q.data(), state.q.data() + state.q.size());
  out["v"] = std::vector<double>(state.v.data(), state.v.data() + state.v.size());
  out["tau"] = std::vector<double>(tau.data(), tau.data() + tau.size());
  out["joints"] = nlohmann::ordered_json::array();
  for (int b = 0; b < tree.nbodies; ++b) {
    const VecX gen = tree.joints[b].S.transpose() * forces.joint[b];
    out["joints"].push_back(
        {{"joint", tree.jointNames[b]},
         {"body", tree.bodyNames[b]},
         {"wrench", vec(forces.joint[b])},
         {"generalized", std::vector<double>(gen.data(), gen.data() + gen.size())}});
  }
  out["loops"] = nlohmann::ordered_json::array();
  for (size_t l = 0; l < cm.loops.size(); ++l) {
    const LoopJoint& lj = cm.loops[l];
    const auto rows = forces.loopRowForce.segment(forces.loopRowStart[l], lj.rows());
    out["loops"].push_back(
        {{"loop", lj.name},
         {"predecessor", lj.predecessorBody >= 0 ? tree.bodyNames[lj.predecessorBody] : "world"},
         {"successor", lj.successorBody >= 0 ? tree.bodyNames[lj.successorBody] : "world"},
         {"wrench", vec(forces.loopWrench[l])},
         {"rows", std::vector<double>(rows.data(), rows.data() + rows.size())}});
  }
  out["couplings"] = nlohmann::ordered_json::array();
  for (size_t r = 0; r < cm.relations.size(); ++r) {
    nlohmann::ordered_json terms = nlohmann::ordered_json::array();
    for (size_t t = 0; t < cm.relations[r].terms.size(); ++t) {
      const auto& [iv, coeff] = cm.relations[r].terms[t];
      terms.push_back({{"coordinate", tree.velocityNames[iv]},
                       {"coefficient", coeff},
                       {"force", forces.relationJointForce[forces.relationTermStart[r] + t]}});
    }
    out["couplings"].push_back({{"coupling", cm.relations[r].name},
                                {"multiplier", forces.relationMultiplier[r]},
                                {"terms", terms}});
  }
  if (args.has("--json")) {
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  auto row = [](const Force& f) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%10.4g %10.4g %10.4g | %10.4g %10.4g %10.4g", f[0], f[1], f[2],
                  f[3], f[4], f[5]);
    return std::string(buf);
  };
  std::printf("%s: CE-ABA at a random closed state (seed %s), efforts uniform in [-1, 1]\n",
              tree.name.c_str(), args.value("--seed", "1").c_str());
  std::printf("\njoint forces on the child body, child body frame [N m | N]:\n");
  for (int b = 0; b < tree.nbodies; ++b)
    std::printf("  %-28s %s\n", tree.jointNames[b].c_str(), row(forces.joint[b]).c_str());
  if (!cm.loops.empty()) {
    std::printf("\nloop wrenches on the successor, loop frame [N m | N]:\n");
    for (size_t l = 0; l < cm.loops.size(); ++l)
      std::printf("  %-28s %s\n", cm.loops[l].name.c_str(), row(forces.loopWrench[l]).c_str());
  }
  if (!cm.relations.empty()) {
    std::printf("\ncoupling forces on each joint [N m or N]:\n");
    for (size_t r = 0; r < cm.relations.size(); ++r) {
      std::printf("  %-28s", cm.relations[r].name.c_str());
      for (size_t t = 0; t < cm.relations[r].terms.size(); ++t)
        std::printf("  %s: %.6g", tree.velocityNames[cm.relations[r].terms[t].first].c_str(),
                    forces.relationJointForce[forces.relationTermStart[r] + t]);
      std::printf("\n");
    }
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // Model-loading warnings go to stderr so that --json output stays parseable.
  auto logger = spdlog::stderr_color_mt("clusterdyn");
  logger->set_pattern("clusterdyn: %l: %v");
  spdlog::set_default_logger(logger);

  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      std::cout << kUsage;
      return kExitOk;
    }
    if (cmd == "info") return cmdInfo(Args(argc, argv, 2, {"--floating-base", "--json"}, {}));
    if (cmd == "dot") return cmdDot(Args(argc, argv, 2, {"--floating-base"}, {"-o", "--output"}));
    if (cmd == "verify") return cmdVerify(Args(argc, argv, 2, {}, {"--models", "--tol"}));
    if (cmd == "forces")
      return cmdForces(Args(argc, argv, 2, {"--floating-base", "--json"}, {"--seed"}));
    if (cmd == "bench")
      return cmdBench(
          Args(argc, argv, 2, {"--floating-base", "--json", "--cut-loops"},
               {"--calls", "--contact", "--only", "--mu", "--tol", "--max-iter", "--cut"}));
    throw UsageError("unknown command '" + cmd + "'");
  } catch (const UsageError& e) {
    std::cerr << "clusterdyn: " << e.what() << "\n\n" << kUsage;
    return kExitUsage;
  } catch (const ModelError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailure;
  }
}
