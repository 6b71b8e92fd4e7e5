// clusterdyn demo: loads a robot with its cluster tree (constraint embedding), prints the tree,
// runs CE-ABA (forward dynamics) and CE-RNEA (inverse dynamics) at a random closed state and
// prints the results and per-call timings; then drives the joints along a short motion and
// prints the largest gear and belt loads (constraint_forces.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"

using namespace clusterdyn;

template <typename F>
double medianNs(F&& f, int calls = 2000) {
  std::vector<double> t(calls);
  for (int k = 0; k < calls; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t[k] = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  }
  std::nth_element(t.begin(), t.begin() + calls / 2, t.end());
  return t[calls / 2];
}

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "models/cd_quadruped.urdf";
  ClusterModel model;
  try {
    model = loadModel(path);  // spanning tree + clusters from the URDF+ loops and couplings
  } catch (const ModelError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  std::cout << describeClusterTree(model) << "\n";

  // Random closed state: independent positions/velocities y, y_dot -> spanning (q, v).
  ClusterData data(model);
  std::mt19937_64 rng(42);
  support::ClosedState s;
  if (!support::randomClosedState(model, data, rng, s)) {
    std::cerr << "no closed state found: " << data.errorMessage() << "\n";
    return 1;
  }
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VecX tau(model.ny);
  for (int i = 0; i < model.ny; ++i) tau[i] = u(rng);

  if (ceAba(model, data, s.q, s.v, tau) != Status::Ok) {
    std::cerr << "ceAba failed: " << data.errorMessage() << "\n";
    return 1;
  }
  const VecX ydd = data.ydd, qdd = data.qdd;
  if (ceRnea(model, data, s.q, s.v, ydd) != Status::Ok) {
    std::cerr << "ceRnea failed: " << data.errorMessage() << "\n";
    return 1;
  }
  const Eigen::IOFormat fmt(6, 0, ", ", "\n", "", "", "[", "]");
  std::cout << "state: random closed (q, v) from y, y_dot in [-1, 1]; tau_y in [-1, 1] ("
            << model.ny << " independent coordinates, " << model.treeModel.nv << " spanning)\n";
  std::cout << "forward dynamics  y_ddot = ceAba(q, v, tau_y)   = " << ydd.transpose().format(fmt)
            << "\n";
  std::cout << "spanning accelerations q_ddot = G y_ddot + g    = " << qdd.transpose().format(fmt)
            << "\n";
  std::cout << "inverse dynamics  ceRnea(q, v, y_ddot) - tau_y = max |"
            << (data.tauY - tau).cwiseAbs().maxCoeff() << "|\n\n";

  // Short motion: 0.3 s of sinusoidal efforts on every actuated independent joint (no contact:
  // a floating base falls freely), explicit Euler with projection onto the constraints. After
  // every CE-ABA call the coupling forces give the torque on each side of every gear and belt.
  {
    JointForces forces(model);
    const int nrel = static_cast<int>(model.relations.size());
    std::vector<double> peak(nrel, 0.0), peakTime(nrel, 0.0);
    std::vector<int> peakTerm(nrel, 0);
    VecX q = s.q, v = s.v, tauMotion(model.ny);
    const double dt = 1e-3;
    bool ok = true;
    for (int step = 0; step < 300 && ok; ++step) {
      const double t = step * dt;
      for (int j = 0; j < model.ny; ++j) {
        const int body = model.treeModel.velocityOwner[model.independentVelocity[j]];
        const bool base = model.treeModel.joints[body].type == JointType::Floating;
        tauMotion[j] = base ? 0.0 : 2.0 * std::sin(2.0 * M_PI * 3.0 * t + 0.7 * j);
      }
      ok = ceAba(model, data, q, v, tauMotion) == Status::Ok &&
           ceAbaConstraintForces(model, data, forces, tauMotion) == Status::Ok;
      if (!ok) break;
      for (int r = 0; r < nrel; ++r)
        for (int k = forces.relationTermStart[r]; k < forces.relationTermStart[r + 1]; ++k)
          if (std::abs(forces.relationJointForce[k]) > peak[r]) {
            peak[r] = std::abs(forces.relationJointForce[k]);
            peakTime[r] = t;
            peakTerm[r] = k - forces.relationTermStart[r];
          }
      v += dt * data.qdd;
      q = integrate(model.treeModel, q, v, dt);
      ok = projectToConstraints(model, data, q, v) == Status::Ok;
      q = data.q;
      v = data.v;
    }
    if (!ok) {
      std::cerr << "motion failed: " << data.errorMessage() << "\n";
      return 1;
    }
    std::vector<int> order(nrel);
    for (int r = 0; r < nrel; ++r) order[r] = r;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return peak[a] > peak[b]; });
    std::printf("gear and belt loads over 0.3 s of sinusoidal efforts (2 N m, 3 Hz):\n");
    if (nrel == 0) std::printf("  (the model has no coupling)\n");
    for (const char* kind : {"gear", "belt"}) {
      int shown = 0;
      for (int r : order) {
        const ExplicitRelation& rel = model.relations[r];
        const bool belt = rel.terms.size() > 2;  // one rotor driving several joints
        if (belt != (std::string(kind) == "belt") || shown == 4) continue;
        const auto& term = rel.terms[peakTerm[r]];
        std::printf("  %-4s %-22s peak %8.4f %s on %-24s at t = %.3f s\n", kind, rel.name.c_str(),
                    peak[r],
                    model.treeModel.joints[model.treeModel.velocityOwner[term.first]].type ==
                            JointType::Prismatic
                        ? "N  "
                        : "N m",
                    model.treeModel.velocityNames[term.first].c_str(), peakTime[r]);
        ++shown;
      }
    }
    std::printf("\n");
  }

  std::printf("timings (median of 2000 calls):\n");
  std::printf("  ce-aba                 %8.0f ns\n",
              medianNs([&] { ceAba(model, data, s.q, s.v, tau); }));
  std::printf("  ce-rnea                %8.0f ns\n",
              medianNs([&] { ceRnea(model, data, s.q, s.v, ydd); }));
  std::printf("  cluster mass matrix H  %8.0f ns\n",
              medianNs([&] { clusterMassMatrix(model, data, s.q); }));
  std::printf("  loop closure y -> q, v %8.0f ns\n", medianNs([&] {
                data.q = s.q;  // warm start at the solution, as in a simulation step
                independentToSpanning(model, data, s.y, s.ydot);
              }));
  return 0;
}
