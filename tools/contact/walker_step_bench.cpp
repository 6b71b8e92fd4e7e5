// One contactStep of the bundled loop robot cd_parallel_walker (floating trunk, four
// parallelogram legs, loops embedded: implicit clusters) standing on its four sphere feet, the
// cranks held by a joint PD; the walker's row of docs/contact.md "Cost".
//
//   walker_step_bench MODELS_DIR [--steps N] [--reps R] [--solver admm|pgs]
//
// Prints one JSON line: median wall time per step over R blocks of N steps (after 500 settling
// steps), the mean contact solver iterations. The timed loop is runSteps (not inlined), for
// valgrind --tool=callgrind --toggle-collect='*runSteps*' (instructions / (N R + 500)).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "contact_scenes.hpp"

using namespace clusterdyn;

namespace {

struct Scene {
  const ClusterModel& cm;
  ClusterData& data;
  const ContactProblem& problem;
  ContactData& cd;
  StepSettings st;
  VecX q, v, y, ydot, yRef, tau;
  std::vector<int> cranks, cranksV;  ///< independent position / velocity index of each crank
  double kp = 20.0, kd = 0.5;
  long iterations = 0, steps = 0;
  bool failed = false;
};

/// N steps: tau = PD of the cranks to their posture, then contactStep.
__attribute__((noinline)) void runSteps(Scene& s, int n) {
  for (int k = 0; k < n; ++k) {
    spanningToIndependent(s.cm, s.data, s.q, s.v, s.y, s.ydot);
    for (size_t j = 0; j < s.cranks.size(); ++j)
      s.tau[s.cranksV[j]] =
          s.kp * (s.yRef[s.cranks[j]] - s.y[s.cranks[j]]) - s.kd * s.ydot[s.cranksV[j]];
    const Status st = contactStep(s.cm, s.data, s.problem, s.cd, s.q, s.v, s.tau, s.st);
    if (st != Status::Ok) s.failed = true;
    s.iterations += s.cd.result.iterations;
    ++s.steps;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr, "usage: walker_step_bench MODELS_DIR [--steps N] [--reps R] [--solver admm|pgs]\n");
    return 2;
  }
  int steps = 1000, reps = 7;
  StepSettings st;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--steps"))
      steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--solver"))
      st.solver = std::string(argv[i + 1]) == "pgs" ? StepSettings::Solver::Pgs
                                                    : StepSettings::Solver::Admm;
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (steps < 1 || reps < 1) {
    std::fprintf(stderr, "--steps and --reps must be positive\n");
    return 2;
  }
  setLogLevel(LogLevel::Off);
  try {
    const ClusterModel cm = scenes::walkerModel(argv[1], false);
    ContactProblem problem(cm);
    scenes::addWalkerFeet(cm, problem, 0.8);
    ClusterData data(cm);
    ContactData cd(cm, problem);
    VecX y = VecX::Zero(cm.nyq), ydot = VecX::Zero(cm.ny);
    y[2] = 0.3;
    y[6] = 1.0;
    if (scenes::placeOnGround(cm, data, problem, cd, y, ydot, -1e-4) != Status::Ok) {
      std::fprintf(stderr, "placing the walker: %s\n", data.errorMessage());
      return 1;
    }
    Scene s{cm, data, problem, cd, st, data.q, data.v, y, ydot, y, VecX::Zero(cm.ny), {}, {}};
    for (const char* leg : {"lf", "rf", "lh", "rh"}) {
      const std::string j = std::string(leg) + "_crank_joint";
      s.cranks.push_back(scenes::yIndex(cm.independentPositionNames, j));
      s.cranksV.push_back(scenes::yIndex(cm.independentVelocityNames, j));
    }
    runSteps(s, 500);  // settle on the feet
    s.iterations = s.steps = 0;
    std::vector<double> perStep;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      runSteps(s, steps);
      const auto t1 = std::chrono::steady_clock::now();
      perStep.push_back(std::chrono::duration<double>(t1 - t0).count() / steps);
    }
    std::sort(perStep.begin(), perStep.end());
    std::printf(
        "{\"engine\": \"clusterdyn\", \"model\": \"cd_parallel_walker.urdf\", \"solver\": \"%s\", "
        "\"ny\": %d, \"rows\": %d, \"steps\": %d, \"reps\": %d, \"median_us\": %.3f, "
        "\"mean_iterations\": %.3f, \"trunk_height\": %.4f, \"all_ok\": %s}\n",
        st.solver == StepSettings::Solver::Pgs ? "pgs" : "admm", cm.ny,
        static_cast<int>(cd.g.size()), steps, reps, 1e6 * perStep[perStep.size() / 2],
        double(s.iterations) / s.steps, s.q[2], s.failed ? "false" : "true");
    return s.failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "walker_step_bench: %s\n", e.what());
    return 1;
  }
}
