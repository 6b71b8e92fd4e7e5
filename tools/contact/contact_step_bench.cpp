// One contactStep (CE-ABA free motion, Delassus matrix, contact solve, impulse pass, integration
// and loop closure) of the mini cheetah with its exact rotor transmissions standing on four point
// feet, held by a joint PD; the clusterdyn side of mujoco_step_bench.py (docs/contact.md).
//
//   contact_step_bench URDFPLUS_DIR [--steps N] [--reps R] [--solver admm|pgs] [--dt S]
//                      [--tolerance T]   (the contact solver's, default 1e-10)
//                      [--active-set-steps K]   (ADMM's active-set solve, default 2; 0: off)
//
// Prints one JSON line: median wall time per step over R blocks of N steps, the mean contact
// solver iterations, the active contacts per step. The timed loop is runSteps (not inlined), for
// callgrind --toggle-collect='*runSteps*' (tools/contact/step_bench.hpp).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "step_bench.hpp"

using namespace clusterdyn;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: contact_step_bench URDFPLUS_DIR [--steps N] [--reps R] "
                 "[--solver admm|pgs] [--dt S] [--tolerance T] [--active-set-steps K]\n");
    return 2;
  }
  int steps = 1000, reps = 7;
  StepSettings st;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (stepbench::commonOption(argv[i], argv[i + 1], steps, reps, st)) continue;
    if (!std::strcmp(argv[i], "--dt"))
      st.dt = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--tolerance"))
      st.contact.tolerance = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--active-set-steps"))
      st.contact.activeSetSteps = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (steps < 1 || reps < 1 || !(st.dt > 0.0) || !(st.contact.tolerance > 0.0) ||
      st.contact.activeSetSteps < 0) {
    std::fprintf(stderr,
                 "--steps, --reps, --dt and --tolerance must be positive, --active-set-steps "
                 ">= 0\n");
    return 2;
  }
  setLogLevel(LogLevel::Off);
  try {
    const ClusterModel cm = scenes::cheetahModel(argv[1]);
    ContactProblem problem(cm);
    scenes::addCheetahFeet(cm, problem, 0.8);
    ClusterData data(cm);
    ContactData cd(cm, problem);
    VecX y = scenes::cheetahStanding(cm, 0.4), ydot = VecX::Zero(cm.ny);
    if (scenes::placeOnGround(cm, data, problem, cd, y, ydot, 0.0) != Status::Ok) {
      std::fprintf(stderr, "placing the cheetah: %s\n", data.errorMessage());
      return 1;
    }
    stepbench::Scene s(cm, data, problem, cd, st, y, ydot, 60.0, 1.5);
    for (const char* leg : {"FR", "FL", "HR", "HL"})
      for (const char* j : {"_abad_j", "_abad_to_hip_j", "_hip_to_knee_j"})
        s.hold(std::string(j) == "_abad_j" ? std::string("torso_to_") + leg + j
                                           : leg + std::string(j));
    const std::vector<double> perStep = stepbench::timeSteps(s, steps, reps);
    std::printf(
        "{\"engine\": \"clusterdyn\", \"model\": \"mini_cheetah.urdf\", \"solver\": \"%s\", "
        "\"dt\": %g, \"tolerance\": %g, \"ny\": %d, \"steps\": %d, \"reps\": %d, \"median_us\": "
        "%.3f, "
        "\"min_us\": %.3f, \"mean_iterations\": %.3f, \"mean_contacts\": %.3f, "
        "\"active_set_share\": %.3f, \"mean_active_set_steps\": %.3f, "
        "\"base_height\": %.4f, \"all_ok\": %s}\n",
        st.solver == StepSettings::Solver::Pgs ? "pgs" : "admm", st.dt, st.contact.tolerance, cm.ny,
        steps, reps, 1e6 * perStep[perStep.size() / 2], 1e6 * perStep.front(),
        double(s.iterations) / s.steps, double(s.contacts) / s.steps, double(s.activeSet) / s.steps,
        double(s.activeSetSteps) / s.steps, s.q[2], s.failed ? "false" : "true");
    return s.failed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "contact_step_bench: %s\n", e.what());
    return 1;
  }
}
