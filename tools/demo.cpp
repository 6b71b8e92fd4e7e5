// clusterdyn demo: loads a robot with its cluster tree (constraint embedding), prints the tree,
// runs CE-ABA (forward dynamics) and CE-RNEA (inverse dynamics) at a random closed state and
// prints the results and per-call timings.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>

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
  tools::ClosedState s;
  if (!tools::randomClosedState(model, data, rng, s)) {
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
            << model.ny << " independent coordinates, " << model.tree.nv << " spanning)\n";
  std::cout << "forward dynamics  y_ddot = ceAba(q, v, tau_y)   = " << ydd.transpose().format(fmt)
            << "\n";
  std::cout << "spanning accelerations q_ddot = G y_ddot + g    = " << qdd.transpose().format(fmt)
            << "\n";
  std::cout << "inverse dynamics  ceRnea(q, v, y_ddot) - tau_y = max |"
            << (data.tauY - tau).cwiseAbs().maxCoeff() << "|\n\n";

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
