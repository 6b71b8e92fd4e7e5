// clusterdyn command-line tool: model information, verification against reference data, quick
// timings. Usage: see usage() below and docs/cli.md.
#include <malloc.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <Eigen/SVD>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_json.hpp"
#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "reference_verify.hpp"

using namespace clusterdyn;

namespace {

constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2;

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

/// A model as the CLI uses it: the cluster model when the URDF(+) builds one (every valid model
/// does; plain trees give one cluster per body), else the spanning tree alone.
struct CliModel {
  std::unique_ptr<ClusterModel> cluster;
  std::string clusterError;  ///< why the cluster model could not be built
  Model tree;  ///< cluster->treeModel (bodies numbered cluster by cluster), or the tree
};

CliModel loadForCli(const std::string& path, bool floatingBase,
                    const std::vector<std::string>& cut = {}, bool cutAll = false) {
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

/// Median over batches of the mean time per call (ns). Calls are timed in batches so that the
/// clock overhead (~20 ns) does not dominate the short calls; fn(k) runs call number k.
double medianNsPerCall(const std::function<void(long)>& fn, long calls) {
  const long batch = std::clamp(calls / 100, 1L, 100L);
  const long nbatches = std::max(1L, calls / batch);
  for (long k = 0; k < std::max(200L, calls / 10); ++k) fn(k);  // warm-up
  std::vector<double> t(nbatches);
  long k = 0;
  for (long b = 0; b < nbatches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < batch; ++i) fn(k++);
    const auto t1 = std::chrono::steady_clock::now();
    t[b] = std::chrono::duration<double, std::nano>(t1 - t0).count() / batch;
  }
  std::nth_element(t.begin(), t.begin() + nbatches / 2, t.end());
  return t[nbatches / 2];
}

int cmdBench(const Args& args) {
  if (args.positional.size() != 1) throw UsageError("bench needs exactly one MODEL.urdf");
  const long calls = parsePositive(args.value("--calls", "20000"), "--calls");
  // Contacts: "3:LINK" (point, 3 rows) or "6:LINK" (weld, 6 rows), LOCAL on the link's frame.
  std::vector<std::pair<ConstraintType, std::string>> contacts;
  for (const std::string& c : args.values("--contact")) {
    if (c.size() < 3 || (c.compare(0, 2, "3:") != 0 && c.compare(0, 2, "6:") != 0))
      throw UsageError("--contact: expected 3:LINK or 6:LINK, got '" + c + "'");
    contacts.emplace_back(c[0] == '3' ? ConstraintType::Point : ConstraintType::Weld, c.substr(2));
  }
  // --only: the algorithms to time (JSON names), default all.
  static const std::vector<std::string> kAlgorithms = {"fk",
                                                       "rnea",
                                                       "aba",
                                                       "crba",
                                                       "rnea_derivatives",
                                                       "aba_derivatives",
                                                       "minverse",
                                                       "ce_aba",
                                                       "ce_rnea",
                                                       "cluster_h",
                                                       "cluster_c",
                                                       "ce_rnea_derivatives",
                                                       "ce_aba_derivatives",
                                                       "cluster_minverse",
                                                       "delassus",
                                                       "damped_inverse",
                                                       "constrained_aba",
                                                       "prox_pv",
                                                       "constrained_dense"};
  std::vector<std::string> only;
  for (const std::string& list : args.values("--only")) {
    std::stringstream ss(list);
    for (std::string a; std::getline(ss, a, ',');) {
      if (a.empty()) continue;
      if (std::find(kAlgorithms.begin(), kAlgorithms.end(), a) == kAlgorithms.end())
        throw UsageError("--only: unknown algorithm '" + a + "'");
      only.push_back(a);
    }
  }
  // Settings of the proximal solves (constrainedABA, proxPV, dense baseline).
  ProximalSettings ps;  // defaults: mu 1e-4, tolerance 1e-10, 50 iterations
  ps.mu = parseDouble(args.value("--mu", "1e-4"), "--mu");
  ps.tolerance = parseDouble(args.value("--tol", "1e-10"), "--tol");
  if (!(ps.mu > 0)) throw UsageError("--mu: must be > 0");
  if (!(ps.tolerance > 0)) throw UsageError("--tol: must be > 0");
  if (args.has("--max-iter")) {
    const std::string n = args.value("--max-iter", "");
    ps.maxIterations = n == "0" ? 0 : static_cast<int>(parsePositive(n, "--max-iter"));
  }
  const CliModel m = loadForCli(args.positional[0], args.has("--floating-base"),
                                args.values("--cut"), args.has("--cut-loops"));
  const bool cutLoops = m.cluster && cutLoopConstraints(*m.cluster).size() > 0;
  if (!contacts.empty() && !m.cluster)
    throw ModelError("--contact needs the cluster model: " + m.clusterError);
  const Model& model = m.tree;
  Data data(model);

  // A pool of random states (fixed seed), cycled through by the timed calls.
  constexpr int kPool = 64;
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<VecX> qs, vs, as, taus;
  for (int k = 0; k < kPool; ++k) {
    qs.push_back(randomConfiguration(model, rng));
    VecX v(model.nv), a(model.nv), tau(model.nv);
    for (int i = 0; i < model.nv; ++i) v[i] = u(rng), a[i] = u(rng), tau[i] = u(rng);
    vs.push_back(v), as.push_back(a), taus.push_back(tau);
  }
  // Check once that every algorithm accepts the states (timed calls do not look at Status).
  const Status checks[] = {forwardKinematics(model, data, qs[0], vs[0]),
                           rnea(model, data, qs[0], vs[0], as[0]),
                           aba(model, data, qs[0], vs[0], taus[0]), crba(model, data, qs[0])};
  for (Status s : checks)
    if (s != Status::Ok) {
      std::cerr << "error: " << statusName(s) << ": " << data.errorMessage() << "\n";
      return kExitFailure;
    }

  volatile double sink = 0.0;
  struct Entry {
    const char* name;
    const char* label;
    double ns;
  };
  std::vector<Entry> results;
  // Times fn unless --only names other algorithms.
  auto timed = [&](const char* name, const char* label, const std::function<void(long)>& fn) {
    if (only.empty() || std::find(only.begin(), only.end(), name) != only.end())
      results.push_back({name, label, medianNsPerCall(fn, calls)});
  };
  timed("fk", "forward kinematics (q, v)", [&](long k) {
    forwardKinematics(model, data, qs[k % kPool], vs[k % kPool]);
    sink = sink + data.v.back()[0];
  });
  timed("rnea", "rnea", [&](long k) {
    rnea(model, data, qs[k % kPool], vs[k % kPool], as[k % kPool]);
    sink = sink + data.tau[0];
  });
  timed("aba", "aba", [&](long k) {
    aba(model, data, qs[k % kPool], vs[k % kPool], taus[k % kPool]);
    sink = sink + data.ddq[0];
  });
  timed("crba", "crba", [&](long k) {
    crba(model, data, qs[k % kPool]);
    sink = sink + data.M(0, 0);
  });
  // Tree derivatives (derivatives.hpp); the workspace only when one of them is timed.
  const bool anyDerivative =
      only.empty() || std::any_of(only.begin(), only.end(), [](const std::string& a) {
        return a == "rnea_derivatives" || a == "aba_derivatives" || a == "minverse";
      });
  if (anyDerivative) {
    DerivativeData dd(model);
    const Status ds[] = {computeRNEADerivatives(model, data, dd, qs[0], vs[0], as[0]),
                         computeABADerivatives(model, data, dd, qs[0], vs[0], taus[0]),
                         computeMinverse(model, data, dd, qs[0])};
    for (Status s : ds)
      if (s != Status::Ok) {
        std::cerr << "error: " << statusName(s) << ": " << data.errorMessage() << "\n";
        return kExitFailure;
      }
    timed("rnea_derivatives", "rnea derivatives", [&](long k) {
      computeRNEADerivatives(model, data, dd, qs[k % kPool], vs[k % kPool], as[k % kPool]);
      sink = sink + dd.dtau_dq(0, 0);
    });
    timed("aba_derivatives", "aba derivatives", [&](long k) {
      computeABADerivatives(model, data, dd, qs[k % kPool], vs[k % kPool], taus[k % kPool]);
      sink = sink + dd.ddq_dq(0, 0);
    });
    timed("minverse", "M^-1", [&](long k) {
      computeMinverse(model, data, dd, qs[k % kPool]);
      sink = sink + dd.Minv(0, 0);
    });
  }

  // Cluster algorithms at random closed states: y, y_dot -> (q, v) by independentToSpanning;
  // tau_y and y_ddot uniform in [-1, 1].
  std::string clusterNote = m.clusterError;
  std::unique_ptr<ClusterData> cdata;
  int constraintRows = -1;  ///< rows m of the contacts once timed
  double cabaIterations = -1.0;
  std::vector<double> referenceDiagonal;
  if (m.cluster) {
    const ClusterModel& cm = *m.cluster;
    cdata = std::make_unique<ClusterData>(cm);
    ClusterData& cd = *cdata;
    std::vector<support::ClosedState> states(kPool);
    std::vector<VecX> tauYs, ydds;
    for (int k = 0; k < kPool && clusterNote.empty(); ++k) {
      if (!support::randomClosedState(cm, cd, rng, states[k]))
        clusterNote = std::string("no closed state found: ") + cd.errorMessage();
      VecX tauY(cm.ny), ydd(cm.ny);
      for (int i = 0; i < cm.ny; ++i) tauY[i] = u(rng), ydd[i] = u(rng);
      tauYs.push_back(tauY), ydds.push_back(ydd);
    }
    if (clusterNote.empty()) {
      const Status cchecks[] = {ceAba(cm, cd, states[0].q, states[0].v, tauYs[0]),
                                ceRnea(cm, cd, states[0].q, states[0].v, ydds[0]),
                                clusterMassMatrix(cm, cd, states[0].q),
                                clusterBias(cm, cd, states[0].q, states[0].v)};
      for (Status s : cchecks)
        if (s != Status::Ok) {
          std::cerr << "error: " << statusName(s) << ": " << cd.errorMessage() << "\n";
          return kExitFailure;
        }
      const auto& st = states;
      timed("ce_aba", "ce-aba", [&](long k) {
        ceAba(cm, cd, st[k % kPool].q, st[k % kPool].v, tauYs[k % kPool]);
        sink = sink + cd.ydd[0];
      });
      timed("ce_rnea", "ce-rnea", [&](long k) {
        ceRnea(cm, cd, st[k % kPool].q, st[k % kPool].v, ydds[k % kPool]);
        sink = sink + cd.tauY[0];
      });
      timed("cluster_h", "cluster mass matrix H", [&](long k) {
        clusterMassMatrix(cm, cd, st[k % kPool].q);
        sink = sink + cd.H(0, 0);
      });
      timed("cluster_c", "cluster bias C", [&](long k) {
        clusterBias(cm, cd, st[k % kPool].q, st[k % kPool].v);
        sink = sink + cd.C[0];
      });
      // Cluster-tree derivatives (cluster_derivatives.hpp); the workspace only when timed. A
      // model they reject (joint dynamics) is reported and not timed.
      const bool anyClusterDerivative =
          only.empty() || std::any_of(only.begin(), only.end(), [](const std::string& a) {
            return a == "ce_rnea_derivatives" || a == "ce_aba_derivatives" ||
                   a == "cluster_minverse";
          });
      if (anyClusterDerivative) {
        ClusterDerivativeData cdd(cm);
        const Status ds[] = {computeCeRneaDerivatives(cm, cd, cdd, st[0].q, st[0].v, ydds[0]),
                             computeCeAbaDerivatives(cm, cd, cdd, st[0].q, st[0].v, tauYs[0]),
                             computeClusterMinverse(cm, cd, cdd, st[0].q)};
        const Status* bad =
            std::find_if(std::begin(ds), std::end(ds), [](Status s) { return s != Status::Ok; });
        if (bad != std::end(ds)) {
          std::cerr << "clusterdyn: warning: cluster derivatives not timed: " << statusName(*bad)
                    << ": " << cd.errorMessage() << "\n";
        } else {
          timed("ce_rnea_derivatives", "ce-rnea derivatives", [&](long k) {
            computeCeRneaDerivatives(cm, cd, cdd, st[k % kPool].q, st[k % kPool].v,
                                     ydds[k % kPool]);
            sink = sink + cdd.dtau_dy(0, 0);
          });
          timed("ce_aba_derivatives", "ce-aba derivatives", [&](long k) {
            computeCeAbaDerivatives(cm, cd, cdd, st[k % kPool].q, st[k % kPool].v,
                                    tauYs[k % kPool]);
            sink = sink + cdd.dydd_dy(0, 0);
          });
          timed("cluster_minverse", "cluster H^-1", [&](long k) {
            computeClusterMinverse(cm, cd, cdd, st[k % kPool].q);
            sink = sink + cdd.Hinv(0, 0);
          });
        }
      }
      if (!contacts.empty() || cutLoops) {
        ConstraintSet set = cutLoopConstraints(cm);  // the cut loops, then the contacts
        // ModelError (unknown link ...) goes to main: exit 1
        for (const auto& c : contacts) set.addContact(c.second, c.first);
        ConstraintData con(cm, set);
        const bool world = set.allWorldAttached();  // constrainedAba: body-world rows only
        const Status cons[] = {
            delassusMatrix(cm, cd, set, con, st[0].q),
            dampedDelassusInverse(cm, cd, set, con, st[0].q, 1e-6),
            world ? constrainedAba(cm, cd, set, con, st[0].q, st[0].v, tauYs[0], ps) : Status::Ok,
            proxPv(cm, cd, set, con, st[0].q, st[0].v, tauYs[0], ps),
            constrainedDynamicsDense(cm, cd, set, con, st[0].q, st[0].v, tauYs[0], ps)};
        for (Status s : cons)
          if (s != Status::Ok && s != Status::NotConverged) {
            std::cerr << "error: " << statusName(s) << ": " << cd.errorMessage() << "\n";
            return kExitFailure;
          }
        constraintRows = set.rows();
        // Mean constrainedABA iterations over the state pool (convergence is the check).
        double iterations = 0.0;
        for (int k = 0; k < kPool && world; ++k) {
          const Status s = constrainedAba(cm, cd, set, con, st[k].q, st[k].v, tauYs[k], ps);
          if (s != Status::Ok && s != Status::NotConverged) {
            std::cerr << "error: " << statusName(s) << ": " << cd.errorMessage() << "\n";
            return kExitFailure;
          }
          iterations += con.result.iterations;
        }
        cabaIterations = world ? iterations / kPool : -1.0;
        // Sorted diagonal of the Delassus matrix at the reference configuration (for a tree
        // the neutral one): independent of the row order, compared with Pinocchio's by
        // tools/bench/side_by_side.py.
        if (delassusMatrix(cm, cd, set, con, cm.qReference) != Status::Ok) {
          std::cerr << "error: " << cd.errorMessage() << "\n";
          return kExitFailure;
        }
        for (int i = 0; i < constraintRows; ++i) referenceDiagonal.push_back(con.delassus(i, i));
        std::sort(referenceDiagonal.begin(), referenceDiagonal.end());
        timed("delassus", "delassus matrix", [&](long k) {
          delassusMatrix(cm, cd, set, con, st[k % kPool].q);
          sink = sink + con.delassus(0, 0);
        });
        timed("damped_inverse", "damped inverse (rho 1e-6)", [&](long k) {
          dampedDelassusInverse(cm, cd, set, con, st[k % kPool].q, 1e-6);
          sink = sink + con.dampedInverse(0, 0);
        });
        if (world)
          timed("constrained_aba", "constrainedABA", [&](long k) {
            constrainedAba(cm, cd, set, con, st[k % kPool].q, st[k % kPool].v, tauYs[k % kPool],
                           ps);
            sink = sink + con.lambda[0];
          });
        timed("prox_pv", "proxPV", [&](long k) {
          proxPv(cm, cd, set, con, st[k % kPool].q, st[k % kPool].v, tauYs[k % kPool], ps);
          sink = sink + con.lambda[0];
        });
        timed("constrained_dense", "dense baseline", [&](long k) {
          constrainedDynamicsDense(cm, cd, set, con, st[k % kPool].q, st[k % kPool].v,
                                   tauYs[k % kPool], ps);
          sink = sink + con.lambda[0];
        });
      }
    }
  }
  if ((!contacts.empty() || cutLoops) && constraintRows < 0) {
    std::cerr << "error: the constraint algorithms could not be timed: " << clusterNote << "\n";
    return kExitFailure;
  }
  if (!clusterNote.empty())
    std::cerr << "clusterdyn: warning: cluster algorithms not timed: " << clusterNote << "\n";

  if (args.has("--json")) {
    nlohmann::ordered_json j;
    j["model"] = args.positional[0];
    j["name"] = model.name;
    j["nq"] = model.nq;
    j["nv"] = model.nv;
    if (m.cluster) {
      j["nclusters"] = m.cluster->clusters.size();
      j["max_cluster_bodies"] = m.cluster->maxClusterBodies;
      j["ny"] = m.cluster->ny;
      j["nloops"] = m.cluster->loops.size();
      j["nrelations"] = m.cluster->relations.size();
    }
    if (!clusterNote.empty()) j["cluster_note"] = clusterNote;
    if (!contacts.empty() || cutLoops) {
      j["contacts"] = args.values("--contact");
      j["cut_loops"] = cutLoopConstraints(*m.cluster).size();
      j["constraint_rows"] = constraintRows;
      j["prox"] = {
          {"mu", ps.mu}, {"tolerance", ps.tolerance}, {"max_iterations", ps.maxIterations}};
      j["constrained_aba_iterations"] = cabaIterations;
      j["delassus_reference_diagonal"] = referenceDiagonal;
    }
    j["calls"] = calls;
    j["state_pool"] = kPool;
    j["unit"] = "ns";
    for (const auto& e : results) j["median_ns"][e.name] = e.ns;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "model '" << model.name << "' (nq = " << model.nq << ", nv = " << model.nv;
    if (m.cluster)
      std::cout << "; " << m.cluster->clusters.size() << " clusters, ny = " << m.cluster->ny;
    if (!contacts.empty())
      std::cout << "; " << contacts.size() << " contacts, m = " << constraintRows << " rows";
    std::cout << "), " << calls << " calls per algorithm, " << kPool
              << " random states (closed for the cluster algorithms), median ns per call:\n";
    char line[128];
    for (const auto& e : results) {
      std::snprintf(line, sizeof line, "  %-26s %10.1f ns\n", e.label, e.ns);
      std::cout << line;
    }
  }
  return kExitOk;
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
