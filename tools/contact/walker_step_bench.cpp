// One contactStep of the bundled loop robot cd_parallel_walker (floating trunk, four
// parallelogram legs, loops embedded: implicit clusters) standing on its four sphere feet, the
// cranks held by a joint PD; the walker's row of docs/contact.md "Cost".
//
//   walker_step_bench MODELS_DIR [--steps N] [--reps R] [--solver admm|pgs]
//
// Prints one JSON line: median wall time per step over R blocks of N steps (after 500 settling
// steps), the mean contact solver iterations. The timed loop is runSteps (not inlined), for
// valgrind --tool=callgrind --toggle-collect='*runSteps*' (instructions / (N R + 500)).
#include <cstdio>
#include <string>
#include <vector>

#include "step_bench.hpp"

using namespace clusterdyn;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr, "usage: walker_step_bench MODELS_DIR [--steps N] [--reps R] [--solver admm|pgs]\n");
    return 2;
  }
  int steps = 1000, reps = 7;
  StepSettings st;
  for (int i = 2; i + 1 < argc; i += 2)
    if (!stepbench::commonOption(argv[i], argv[i + 1], steps, reps, st)) {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
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
    VecX y = scenes::uprightAt(cm, 0.3), ydot = VecX::Zero(cm.ny);
    if (scenes::placeOnGround(cm, data, problem, cd, y, ydot, -1e-4) != Status::Ok) {
      std::fprintf(stderr, "placing the walker: %s\n", data.errorMessage());
      return 1;
    }
    stepbench::Scene s(cm, data, problem, cd, st, y, ydot, 20.0, 0.5);
    for (const char* leg : {"lf", "rf", "lh", "rh"}) s.hold(std::string(leg) + "_crank_joint");
    const std::vector<double> perStep = stepbench::timeSteps(s, steps, reps);
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
