// clusterdyn demo: loads a bundled robot, prints its tree, runs forward and inverse dynamics at a
// random state and prints the results and per-call timings.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>

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
  Model model;
  try {
    model = loadTreeModel(path);
  } catch (const ModelError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  std::cout << describeModel(model) << "\n";
  Data data(model);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const VecX q = randomConfiguration(model, rng);
  VecX v(model.nv), tau(model.nv);
  for (int i = 0; i < model.nv; ++i) v[i] = u(rng), tau[i] = u(rng);

  if (aba(model, data, q, v, tau) != Status::Ok) {
    std::cerr << "aba failed: " << data.errorMessage() << "\n";
    return 1;
  }
  const VecX ddq = data.ddq;
  rnea(model, data, q, v, ddq);
  Eigen::IOFormat fmt(6, 0, ", ", "\n", "", "", "[", "]");
  std::cout << "state: random q, v, tau in [-1, 1]\n";
  std::cout << "forward dynamics  ddq = aba(q, v, tau)  = " << ddq.transpose().format(fmt) << "\n";
  std::cout << "inverse dynamics  rnea(q, v, ddq) - tau = max |"
            << (data.tau - tau).cwiseAbs().maxCoeff() << "|\n\n";
  std::printf("timings (median of 2000 calls):\n");
  std::printf("  forward kinematics %8.0f ns\n",
              medianNs([&] { forwardKinematics(model, data, q, v); }));
  std::printf("  rnea               %8.0f ns\n", medianNs([&] { rnea(model, data, q, v, ddq); }));
  std::printf("  aba                %8.0f ns\n", medianNs([&] { aba(model, data, q, v, tau); }));
  std::printf("  crba               %8.0f ns\n", medianNs([&] { crba(model, data, q); }));
  return 0;
}
