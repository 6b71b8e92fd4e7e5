// `clusterdyn bench`: median time per call of the algorithms on random (closed) states, with
// optional contacts and cut loops (docs/cli.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "closed_states.hpp"

namespace clusterdyn::cli {
namespace {

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

/// Runs the checks in order up to the first whose status is not accepted (Ok, or also
/// NotConverged when notConverged is true) and returns "STATUS: message" of that one, the
/// message read before any later call (a successful call clears the workspace's message), or
/// "" when every check passes.
std::string firstFailure(std::initializer_list<std::function<Status()>> checks,
                         const std::function<std::string()>& message, bool notConverged = false) {
  for (const auto& check : checks) {
    const Status s = check();
    if (s != Status::Ok && !(notConverged && s == Status::NotConverged))
      return std::string(statusName(s)) + ": " + message();
  }
  return "";
}

}  // namespace

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
  const auto treeMessage = [&] { return std::string(data.errorMessage()); };
  const std::string treeFailure =
      firstFailure({[&] { return forwardKinematics(model, data, qs[0], vs[0]); },
                    [&] { return rnea(model, data, qs[0], vs[0], as[0]); },
                    [&] { return aba(model, data, qs[0], vs[0], taus[0]); },
                    [&] { return crba(model, data, qs[0]); }},
                   treeMessage);
  if (!treeFailure.empty()) {
    std::cerr << "error: " << treeFailure << "\n";
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
    const std::string failure =
        firstFailure({[&] { return computeRNEADerivatives(model, data, dd, qs[0], vs[0], as[0]); },
                      [&] { return computeABADerivatives(model, data, dd, qs[0], vs[0], taus[0]); },
                      [&] { return computeMinverse(model, data, dd, qs[0]); }},
                     treeMessage);
    if (!failure.empty()) {
      std::cerr << "error: " << failure << "\n";
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
      const auto clusterMessage = [&] { return std::string(cd.errorMessage()); };
      const std::string failure =
          firstFailure({[&] { return ceAba(cm, cd, states[0].q, states[0].v, tauYs[0]); },
                        [&] { return ceRnea(cm, cd, states[0].q, states[0].v, ydds[0]); },
                        [&] { return clusterMassMatrix(cm, cd, states[0].q); },
                        [&] { return clusterBias(cm, cd, states[0].q, states[0].v); }},
                       clusterMessage);
      if (!failure.empty()) {
        std::cerr << "error: " << failure << "\n";
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
        const std::string failure = firstFailure(
            {[&] { return computeCeRneaDerivatives(cm, cd, cdd, st[0].q, st[0].v, ydds[0]); },
             [&] { return computeCeAbaDerivatives(cm, cd, cdd, st[0].q, st[0].v, tauYs[0]); },
             [&] { return computeClusterMinverse(cm, cd, cdd, st[0].q); }},
            clusterMessage);
        if (!failure.empty()) {
          std::cerr << "clusterdyn: warning: cluster derivatives not timed: " << failure << "\n";
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
        const auto& q0 = st[0].q;
        const auto& v0 = st[0].v;
        const std::string failure = firstFailure(
            {[&] { return delassusMatrix(cm, cd, set, con, q0); },
             [&] { return dampedDelassusInverse(cm, cd, set, con, q0, 1e-6); },
             [&] {
               return world ? constrainedAba(cm, cd, set, con, q0, v0, tauYs[0], ps) : Status::Ok;
             },
             [&] { return proxPv(cm, cd, set, con, q0, v0, tauYs[0], ps); },
             [&] { return constrainedDynamicsDense(cm, cd, set, con, q0, v0, tauYs[0], ps); }},
            clusterMessage, true);
        if (!failure.empty()) {
          std::cerr << "error: " << failure << "\n";
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

}  // namespace clusterdyn::cli
