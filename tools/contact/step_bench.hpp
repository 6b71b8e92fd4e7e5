// The timed loop of the contact step benches (contact_step_bench, walker_step_bench): a robot on
// its feet, joints held by a PD to their initial posture, stepped by contactStep in runSteps (not
// inlined: valgrind --tool=callgrind --toggle-collect='*runSteps*'), timed in R blocks of N steps
// after 500 settling steps (docs/contact.md "Cost").
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "contact_scenes.hpp"

namespace clusterdyn::stepbench {

struct Scene {
  Scene(const ClusterModel& model, ClusterData& d, const ContactProblem& p, ContactData& c,
        const StepSettings& settings, const VecX& y0, const VecX& ydot0, double kpGain,
        double kdGain)
      : cm(model),
        data(d),
        problem(p),
        cd(c),
        st(settings),
        q(d.q),
        v(d.v),
        y(y0),
        ydot(ydot0),
        yRef(y0),
        tau(VecX::Zero(model.ny)),
        kp(kpGain),
        kd(kdGain) {}

  /// Holds the named joint by the PD (its independent position and velocity index).
  void hold(const std::string& joint) {
    joints.push_back(scenes::yIndex(cm.independentPositionNames, joint));
    jointV.push_back(scenes::yIndex(cm.independentVelocityNames, joint));
  }

  const ClusterModel& cm;
  ClusterData& data;
  const ContactProblem& problem;
  ContactData& cd;
  StepSettings st;
  VecX q, v, y, ydot, yRef, tau;
  std::vector<int> joints;  ///< independent position index of each held joint
  std::vector<int> jointV;  ///< its velocity index
  double kp, kd;
  long iterations = 0, contacts = 0, steps = 0;
  long activeSet = 0, activeSetSteps = 0;  ///< ADMM: solves taken by the active-set solve
  bool failed = false;
};

/// N steps: tau = PD of the held joints to their initial posture, then contactStep.
__attribute__((noinline)) inline void runSteps(Scene& s, int n) {
  for (int k = 0; k < n; ++k) {
    spanningToIndependent(s.cm, s.data, s.q, s.v, s.y, s.ydot);
    for (size_t j = 0; j < s.joints.size(); ++j)
      s.tau[s.jointV[j]] =
          s.kp * (s.yRef[s.joints[j]] - s.y[s.joints[j]]) - s.kd * s.ydot[s.jointV[j]];
    const Status st = contactStep(s.cm, s.data, s.problem, s.cd, s.q, s.v, s.tau, s.st);
    if (st != Status::Ok) s.failed = true;
    s.iterations += s.cd.result.iterations;
    s.activeSet += s.cd.result.activeSet ? 1 : 0;
    s.activeSetSteps += s.cd.result.activeSetSteps;
    for (const ConeBlock& b : s.cd.blocks) s.contacts += b.type == ConeType::Coulomb ? 1 : 0;
    ++s.steps;
  }
}

/// 500 settling steps, the counters reset, then R blocks of N steps: the wall time per step of
/// each block, sorted (median: [R / 2]).
inline std::vector<double> timeSteps(Scene& s, int steps, int reps) {
  runSteps(s, 500);  // settle on the feet
  s.iterations = s.contacts = s.steps = s.activeSet = s.activeSetSteps = 0;
  std::vector<double> perStep;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    runSteps(s, steps);
    const auto t1 = std::chrono::steady_clock::now();
    perStep.push_back(std::chrono::duration<double>(t1 - t0).count() / steps);
  }
  std::sort(perStep.begin(), perStep.end());
  return perStep;
}

/// The options every step bench reads (--steps N, --reps R, --solver admm|pgs); false: key is
/// not one of them.
inline bool commonOption(const char* key, const char* value, int& steps, int& reps,
                         StepSettings& st) {
  if (!std::strcmp(key, "--steps"))
    steps = std::atoi(value);
  else if (!std::strcmp(key, "--reps"))
    reps = std::atoi(value);
  else if (!std::strcmp(key, "--solver"))
    st.solver =
        std::string(value) == "pgs" ? StepSettings::Solver::Pgs : StepSettings::Solver::Admm;
  else
    return false;
  return true;
}

}  // namespace clusterdyn::stepbench
