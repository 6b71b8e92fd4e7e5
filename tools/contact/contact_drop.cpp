// The drop example (docs/contact.md, "A drop, in pictures"): the bundled loop robot
// cd_parallel_walker (floating trunk on four parallelogram legs, four implicit loops kept exact)
// falls on the ground on its four sphere feet, its cranks held by a joint spring-damper, and
// comes to rest. Writes one CSV row per step for tools/contact/plot_contact_drop.py: the contact
// forces, the transmission loads (the force and moment each leg's loop joint carries, and the
// crank torques), the energy.
//
//   contact_drop MODELS_DIR OUT.csv [--duration S] [--check]
//
// --check asserts (exit 1 otherwise): every step Ok with the loops closed (residual < 1e-12);
// the total energy (kinetic + gravity + crank springs) never increases by more than 1e-6 of
// its initial value in a step and ends below it; the robot is at rest at the end (kinetic
// energy < 1e-8 J); the feet carry the weight (sum of normal forces = m g within 1e-4); and the
// loop loads come from accelerations that reproduce the step (|dt y_ddot - (y_dot+ - y_dot)| <
// 1e-9: CE-ABA with the contact impulses / dt as external forces).
//
// Position feedback is off (beta = 0: the push-out of penetrating feet does work, see "The
// contact problem" in docs/contact.md); non-penetration is kept to first order per step.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "contact_scenes.hpp"

using namespace clusterdyn;

namespace {

constexpr double kKp = 20.0, kKd = 0.5;  // crank spring (N m / rad) and damper (N m s / rad)
const char* const kLegs[] = {"lf", "rf", "lh", "rh"};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: contact_drop MODELS_DIR OUT.csv [--duration S] [--check]\n";
    return 2;
  }
  double duration = 3.0;
  bool check = false;
  for (int i = 3; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--check"))
      check = true;
    else if (!std::strcmp(argv[i], "--duration") && i + 1 < argc)
      duration = std::atof(argv[++i]);
    else {
      std::cerr << "unknown option " << argv[i] << '\n';
      return 2;
    }
  }
  if (!(duration > 0.0)) {
    std::cerr << "--duration must be positive\n";
    return 2;
  }
  setLogLevel(LogLevel::Off);
  try {
    const ClusterModel cm = scenes::walkerModel(argv[1], false);
    const Model& tm = cm.treeModel;
    ContactProblem problem(cm);
    scenes::addWalkerFeet(cm, problem, 0.8);
    ClusterData data(cm);
    ContactData cd(cm, problem);
    JointForces jf(cm);
    Data fk(tm);
    // Trunk 5 cm above touch-down, rolled 0.05 rad; cranks at +-0.2 rad (also the springs' rest).
    VecX y = VecX::Zero(cm.nyq), ydot = VecX::Zero(cm.ny);
    y[2] = 0.3;
    y.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(0.05, Vec3::UnitX())).coeffs();
    std::vector<int> crankY, crankV;
    for (int i = 0; i < 4; ++i) {
      const std::string j = std::string(kLegs[i]) + "_crank_joint";
      crankY.push_back(scenes::yIndex(cm.independentPositionNames, j));
      crankV.push_back(scenes::yIndex(cm.independentVelocityNames, j));
      y[crankY[i]] = 0.2 * (i % 2 ? -1.0 : 1.0);
    }
    const VecX yRest = y;
    if (scenes::placeOnGround(cm, data, problem, cd, y, ydot, 0.05) != Status::Ok) {
      std::cerr << "placing the walker: " << data.errorMessage() << '\n';
      return 1;
    }
    VecX q = data.q, v = data.v, tau = VecX::Zero(cm.ny), ydot1(cm.ny), y1(cm.nyq);
    StepSettings st;
    st.beta = 0.0;
    st.contact.maxIterations = 5000;
    double mass = 0.0;
    for (int b = 0; b < tm.nbodies; ++b) mass += tm.inertias[b].mass;
    const double g = 9.81;

    std::ofstream out(argv[2]);
    out << std::setprecision(10);
    out << "t,kinetic,potential,spring,energy,trunk_z,iterations";
    for (const char* l : kLegs) out << ',' << l << "_fn," << l << "_ft";
    for (const char* l : kLegs) out << ',' << l << "_loop_force," << l << "_loop_moment";
    for (const char* l : kLegs) out << ',' << l << "_crank_torque";
    out << '\n';

    auto energy = [&](const VecX& qq, const VecX& vv, const VecX& yy, double* parts) {
      parts[0] = kineticEnergy(tm, fk, qq, vv);
      parts[1] = potentialEnergy(tm, fk, qq);
      parts[2] = 0.0;
      for (int i = 0; i < 4; ++i)
        parts[2] += 0.5 * kKp * std::pow(yy[crankY[i]] - yRest[crankY[i]], 2);
      return parts[0] + parts[1] + parts[2];
    };
    spanningToIndependent(cm, data, q, v, y, ydot);
    double parts[3];
    const double e0 = energy(q, v, y, parts);
    double e = e0, worstIncrease = 0.0, worstClosure = 0.0, worstAccel = 0.0, weightError = 0.0;
    bool allOk = true;
    std::vector<Force> fext(tm.nbodies);
    const int steps = static_cast<int>(std::lround(duration / st.dt));
    for (int k = 0; k < steps; ++k) {
      // Crank spring-damper on the independent crank coordinates.
      tau.setZero();
      for (int i = 0; i < 4; ++i)
        tau[crankV[i]] = -kKp * (y[crankY[i]] - yRest[crankY[i]]) - kKd * ydot[crankV[i]];
      const VecX q0 = q, v0 = v, ydot0 = ydot;
      const Status s = contactStep(cm, data, problem, cd, q, v, tau, st);
      if (s != Status::Ok) {
        std::cerr << "step " << k << ": " << statusName(s) << ": " << data.errorMessage() << '\n';
        allOk = false;
        break;
      }
      worstClosure = std::max(worstClosure, data.lastResidual);
      spanningToIndependent(cm, data, q, v, y1, ydot1);
      // Contact forces (impulse / dt) at the feet, as external forces on the coupler bodies at
      // the step's start: CE-ABA then gives the step's mean accelerations and the loop loads.
      forwardKinematics(tm, fk, q0);
      for (Force& f : fext) f.setZero();
      double fnSum = 0.0;
      std::vector<double> fn(4), ft(4);
      for (int c = 0; c < 4; ++c) {
        const PointContact& pc = problem.contacts()[c];
        const Vec3 lam = cd.lambda.segment<3>(cd.problem->bilateralRows() + 3 * c) / st.dt;
        fn[c] = lam[2];
        ft[c] = lam.head<2>().norm();
        fnSum += lam[2];
        const Vec3 fWorld = cd.frame[c] * lam;
        const Vec3 fBody = fk.oMi[pc.body].R.transpose() * fWorld;
        fext[pc.body].head<3>() += pc.point.cross(fBody);
        fext[pc.body].tail<3>() += fBody;
      }
      if (ceAba(cm, data, q0, v0, tau, fext.data()) != Status::Ok ||
          ceAbaConstraintForces(cm, data, jf, tau) != Status::Ok) {
        std::cerr << "loop loads at step " << k << ": " << data.errorMessage() << '\n';
        allOk = false;
        break;
      }
      worstAccel = std::max(worstAccel, (st.dt * data.ydd - (ydot1 - ydot0)).cwiseAbs().maxCoeff());
      y = y1;
      ydot = ydot1;
      const double e1 = energy(q, v, y, parts);
      worstIncrease = std::max(worstIncrease, e1 - e);
      e = e1;
      out << (k + 1) * st.dt << ',' << parts[0] << ',' << parts[1] << ',' << parts[2] << ',' << e
          << ',' << q[2] << ',' << cd.result.iterations;
      for (int c = 0; c < 4; ++c) out << ',' << fn[c] << ',' << ft[c];
      for (int l = 0; l < 4; ++l)
        out << ',' << jf.loopWrench[l].tail<3>().norm() << ',' << jf.loopWrench[l].head<3>().norm();
      for (int i = 0; i < 4; ++i) out << ',' << tau[crankV[i]];
      out << '\n';
      if (k == steps - 1) weightError = std::abs(fnSum - mass * g);
    }
    const double kinetic = parts[0];
    std::printf(
        "cd_parallel_walker drop, %.2f s: energy %.6f -> %.6f J, worst increase in a step %.3e J, "
        "final kinetic %.3e J, normal forces - m g = %.3e N, closure %.1e, |dt ydd - dydot| "
        "%.1e\n",
        duration, e0, e, worstIncrease, kinetic, weightError, worstClosure, worstAccel);
    if (!check) return allOk ? 0 : 1;
    bool ok = allOk;
    auto expect = [&](bool c, const char* what) {
      if (!c) std::fprintf(stderr, "FAIL: %s\n", what), ok = false;
    };
    expect(worstClosure < 1e-12, "loops closed (residual < 1e-12) at every step");
    expect(worstIncrease <= 1e-6 * e0, "energy never increases by more than 1e-6 E0 in a step");
    expect(e < e0, "energy ends below its initial value");
    expect(kinetic < 1e-8, "at rest at the end (kinetic energy < 1e-8 J)");
    expect(weightError < 1e-4 * mass * g, "the feet carry the weight at rest (1e-4)");
    expect(worstAccel < 1e-9, "CE-ABA with the contact forces reproduces the step");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "contact_drop: " << e.what() << '\n';
    return 1;
  }
}
