// The damper and spring of a ball joint that the cluster builder replaced by three hinges
// (Model::ballHinges, docs/mjcf.md section 3): MuJoCo's ball torque tau_ball = -d w - k r (child
// frame, r = subQuat(q, q_spring)) on the hinges as J^T tau_ball, w = J t_dot. cd_rod_leg (the
// rod's ball, damping 0.01) and variants with a stiffer damper and a spring. Oracles: the force
// against the formula written here (rotation vector from Eigen's AngleAxis), the spring energy's
// gradient, the partials against central differences, the cut model with the ball (proxPv and
// the dense KKT), and the energy balance of a passive motion (springs: conserved; dampers: the
// energy lost equals the dissipated work, integrated alongside).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "ball_as_hinges.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/mjcf.hpp"
#include "energy_drift.hpp"
#include "manifold_fd.hpp"
#include "test_util.hpp"
#include "tree/ball_hinge_passive.hpp"

using namespace clusterdyn;
using test::BallAsHinges;
using test::closedState;
using test::isClose;

namespace {

/// models/cd_rod_leg.xml with the ball's attributes `ball` (instead of damping="0.01") and,
/// unless `hipDamping`, without hip_pitch's damper.
std::string rodLegXml(const std::string& ball, bool hipDamping = true) {
  std::ifstream in(test::modelsPath("cd_rod_leg.xml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string xml = text.str();
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = xml.find(from);
    if (at == std::string::npos) throw std::runtime_error("cd_rod_leg.xml: no " + from);
    xml.replace(at, from.size(), to);
  };
  replace("<joint name=\"rod_ball\" type=\"ball\" damping=\"0.01\"/>",
          "<joint name=\"rod_ball\" type=\"ball\" " + ball + "/>");
  if (!hipDamping) replace(" damping=\"0.1\"", "");
  return xml;
}

ClusterModel rodLeg(const std::string& ball, bool hipDamping = true,
                    const ModelOptions& options = ModelOptions()) {
  return buildClusterModel(parseMjcfString(rodLegXml(ball, hipDamping), "rod_leg.xml").urdf,
                           options);
}

/// MuJoCo's ball passive force on the hinges, written here: J^T (-d J t_dot - k r), r the
/// rotation vector of q_ball (angle in [0, pi], Eigen's AngleAxis).
Vec3 ballHingeForce(const BallAsHinges& h, const VecX& q, const VecX& v, double d, double k) {
  const Mat3 J = h.jacobian(q);
  const Eigen::AngleAxisd aa(h.quaternion(q));
  const Vec3 r = aa.angle() * aa.axis();
  const Vec3 w = J * Vec3(v[h.t1], v[h.t2], v[h.t3]);
  return J.transpose() * (-d * w - k * r);
}

/// Random hinge angles (t2 away from the gimbal lock) and velocities in the spanning tree.
void randomHingeState(const Model& t, const BallAsHinges& h, std::mt19937_64& rng, double scale,
                      VecX& q, VecX& v) {
  q = test::randomVector(t.nq, rng, -scale, scale);
  q[h.p2] = std::uniform_real_distribution<double>(-1.2, 1.2)(rng) * std::min(1.0, scale);
  v = test::randomVector(t.nv, rng, -1.0, 1.0);
}

}  // namespace

TEST(BallHingePassive, TheHingesCarryTheBallsDamperAsAGroup) {
  const ClusterModel m = loadModel(test::modelsPath("cd_rod_leg.xml"));
  const Model& t = m.treeModel;
  ASSERT_EQ(t.ballHinges.size(), 1u);
  const BallHingeGroup& g = t.ballHinges[0];
  EXPECT_EQ(g.ball, "rod_ball");
  EXPECT_EQ(g.damping, 0.01);
  EXPECT_EQ(g.stiffness, 0.0);
  EXPECT_TRUE(t.hasPassiveForces());
  EXPECT_FALSE(t.hasArmature());
  const BallAsHinges h(t, "rod_ball");
  EXPECT_EQ((std::array<int, 3>{h.t1, h.t2, h.t3}), g.v);
  EXPECT_EQ((std::array<int, 3>{h.p1, h.p2, h.p3}), g.q);
  EXPECT_TRUE(isClose(g.axes[0], h.b1, 1e-15));
  EXPECT_TRUE(isClose(g.axes[1], h.b2, 1e-15));
  EXPECT_TRUE(isClose(g.axes[2], h.a, 1e-15));
  for (int i : {h.t1, h.t2, h.t3}) {  // the hinges' own dampers and springs stay 0
    EXPECT_EQ(t.damping[i], 0.0);
    EXPECT_EQ(t.stiffness[i], 0.0);
  }
  EXPECT_EQ(t.damping[t.velocityIndex("hip_pitch")], 0.1);
  // Without joint dynamics: the same hinges, no group. Cut: the ball keeps its damper.
  ModelOptions rigid;
  rigid.jointDynamics = false;
  const ClusterModel r = loadModel(test::modelsPath("cd_rod_leg.xml"), rigid);
  EXPECT_TRUE(r.treeModel.ballHinges.empty());
  EXPECT_EQ(r.treeModel.positionNames, t.positionNames);
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  const ClusterModel cut = loadModel(test::modelsPath("cd_rod_leg.xml"), cutAll);
  EXPECT_TRUE(cut.treeModel.ballHinges.empty());
  EXPECT_EQ(cut.treeModel.damping[cut.treeModel.velocityIndex("rod_ball:wx")], 0.01);
  // A ball with neither damper nor spring gives no group (and no passive forces of its own).
  const ClusterModel none = rodLeg("", false);
  EXPECT_TRUE(none.treeModel.ballHinges.empty());
  EXPECT_FALSE(none.treeModel.hasPassiveForces());
}

TEST(BallHingePassive, ForcesAreJTransposeOfTheBallTorqueAndTheSpringEnergyIsItsPotential) {
  // tau_p = nle(rigid) - nle(joint dynamics) on the spanning tree, against the formula above;
  // the spring energy (potential energy with minus without the joint dynamics) is 1/2 k |r|^2
  // and its gradient (central differences) is minus the spring force.
  const double d = 0.3, k = 0.8;
  ModelOptions rigid;
  rigid.jointDynamics = false;
  const ClusterModel m = rodLeg("damping=\"0.3\" stiffness=\"0.8\"");
  const ClusterModel r = rodLeg("damping=\"0.3\" stiffness=\"0.8\"", true, rigid);
  const Model &t = m.treeModel, &tr = r.treeModel;
  ASSERT_EQ(t.positionNames, tr.positionNames);
  const BallAsHinges h(t, "rod_ball");
  Data dt(t), dr(tr);
  std::mt19937_64 rng(5);
  const int hip = t.velocityIndex("hip_pitch");
  for (int trial = 0; trial < 12; ++trial) {
    VecX q, v;
    randomHingeState(t, h, rng, trial < 4 ? 1e-3 : trial < 8 ? 1.0 : 2.8, q, v);
    ASSERT_EQ(nonLinearEffects(t, dt, q, v), Status::Ok);
    ASSERT_EQ(nonLinearEffects(tr, dr, q, v), Status::Ok);
    const VecX tauP = dr.nle - dt.nle;
    VecX expected = VecX::Zero(t.nv);
    expected[hip] = -0.1 * v[hip];
    const Vec3 f = ballHingeForce(h, q, v, d, k);
    expected[h.t1] = f[0], expected[h.t2] = f[1], expected[h.t3] = f[2];
    EXPECT_TRUE(isClose(tauP, expected, 1e-11)) << "trial " << trial << "\n"
                                                << tauP.transpose() << "\n"
                                                << expected.transpose();
    // The spring's potential.
    auto spring = [&](const VecX& x) {
      return potentialEnergy(t, dt, x) - potentialEnergy(tr, dr, x);
    };
    const Eigen::AngleAxisd aa(h.quaternion(q));
    EXPECT_NEAR(spring(q), 0.5 * k * aa.angle() * aa.angle(), 1e-12);
    const Vec3 fk = ballHingeForce(h, q, VecX::Zero(t.nv), 0.0, k);
    const int idx[3] = {h.p1, h.p2, h.p3};
    for (int j = 0; j < 3; ++j) {
      const double step = 1e-6;
      VecX qp = q, qm = q;
      qp[idx[j]] += step;
      qm[idx[j]] -= step;
      EXPECT_NEAR((spring(qp) - spring(qm)) / (2 * step), -fk[j], 1e-7)
          << "trial " << trial << ", hinge " << j;
    }
  }
}

TEST(BallHingePassive, PartialsMatchFiniteDifferences) {
  // d tau_h / d t (which depends on t_dot: the damper's J^T J t_dot turns with the swings) and
  // d tau_h / d t_dot against central differences of addBallHingePassiveForces, at small angles
  // (the series of J_r^-1), ordinary ones and rotations close to pi; with v = nullptr too.
  const ClusterModel m = rodLeg("damping=\"0.3\" stiffness=\"0.8\"");
  const Model& t = m.treeModel;
  const BallAsHinges h(t, "rod_ball");
  std::mt19937_64 rng(8);
  auto force = [&](const VecX& q, const VecX* v) {
    VecX tau = VecX::Zero(t.nv);
    detail::addBallHingePassiveForces(t, q.data(), v ? v->data() : nullptr, 1.0, tau.data());
    return tau;
  };
  double worst = 0.0;
  for (int trial = 0; trial < 15; ++trial) {
    VecX q, v;
    randomHingeState(t, h, rng, trial < 5 ? 3e-3 : trial < 10 ? 1.0 : 2.9, q, v);
    for (const bool withV : {true, false}) {
      const VecX* vp = withV ? &v : nullptr;
      MatX dq = MatX::Zero(t.nv, t.nv), dv = MatX::Zero(t.nv, t.nv);
      detail::addBallHingePassivePartials(t, q.data(), vp ? vp->data() : nullptr, -2.0, dq,
                                          dv);  // sign -2: scaled
      MatX fdq = MatX::Zero(t.nv, t.nv), fdv = MatX::Zero(t.nv, t.nv);
      const double step = 1e-6;
      const int iq[3] = {h.p1, h.p2, h.p3}, iv[3] = {h.t1, h.t2, h.t3};
      for (int j = 0; j < 3; ++j) {
        VecX qp = q, qm = q;
        qp[iq[j]] += step;
        qm[iq[j]] -= step;
        fdq.col(iv[j]) = -2.0 * (force(qp, vp) - force(qm, vp)) / (2 * step);
        VecX vpl = withV ? v : VecX::Zero(t.nv), vmi = vpl;  // d/dv at v = 0 for nullptr
        vpl[iv[j]] += step;
        vmi[iv[j]] -= step;
        fdv.col(iv[j]) = -2.0 * (force(q, &vpl) - force(q, &vmi)) / (2 * step);
      }
      EXPECT_TRUE(isClose(dq, fdq, 1e-7)) << "trial " << trial << "\n" << dq << "\n" << fdq;
      EXPECT_TRUE(isClose(dv, fdv, 1e-7)) << "trial " << trial << "\n" << dv << "\n" << fdv;
      EXPECT_GT(dq.cwiseAbs().maxCoeff(), 1e-3);  // nonzero
      worst = std::max({worst, (dq - fdq).cwiseAbs().maxCoeff(), (dv - fdv).cwiseAbs().maxCoeff()});
    }
  }
  std::printf("  ball-hinge passive partials vs central differences: max diff %.2e\n", worst);
}

TEST(BallHingePassive, EmbeddedAndCutAgreeWithTheBallsDamperAndSpring) {
  // The cut model keeps the ball with MuJoCo's damper and spring on its angular velocity; both
  // models apply their joint dynamics (hip_pitch's damper too).
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  const std::string path = test::modelsPath("cd_rod_leg.xml");
  test::expectExpandedEqualsCut(loadModel(path), loadModel(path, cutAll), "rod_ball",
                                "cd_rod_leg (ball damping 0.01)");
  const std::string ball = "damping=\"0.3\" stiffness=\"0.8\"";
  test::expectExpandedEqualsCut(rodLeg(ball), rodLeg(ball, true, cutAll), "rod_ball",
                                "cd_rod_leg (ball damping 0.3, stiffness 0.8)");
}

namespace {

/// RK4 on (y, y_dot, W) from a closed state for `steps` steps of h, y_dot' = CE-ABA(0),
/// W' = P = the dampers' power written here (-0.1 v_hip^2 - d |J t_dot|^2 on the closed spanning
/// state): returns max over the steps of |E + W - E0| (E: kinetic + gravity + springs) and, in
/// `rise`, the largest increase of E over one step; -W and the ball damper's share of it.
double energyBalance(const ClusterModel& m, double d, const VecX& y0, const VecX& yd0, double h,
                     int steps, double& rise, double& dissipated, double& ballDissipated) {
  ClusterData data(m);
  Data tree(m.treeModel);
  const BallAsHinges bh(m.treeModel, "rod_ball");
  const int hip = m.treeModel.velocityIndex("hip_pitch");
  const double hipDamping = m.treeModel.damping[hip];
  const VecX zero = VecX::Zero(m.ny);
  auto deriv = [&](const VecX& y, const VecX& yd, VecX& a, double& power, double& ball) {
    EXPECT_EQ(independentToSpanning(m, data, y, yd), Status::Ok) << data.errorMessage();
    const VecX q = data.q, v = data.v;
    EXPECT_EQ(ceAba(m, data, q, v, zero), Status::Ok) << data.errorMessage();
    a = data.ydd;
    const Vec3 w = bh.jacobian(q) * Vec3(v[bh.t1], v[bh.t2], v[bh.t3]);
    ball = -d * w.squaredNorm();
    power = -hipDamping * v[hip] * v[hip] + ball;
  };
  const double e0 = test::spanningEnergy(m, data, tree, y0, yd0);
  VecX y = y0, yd = yd0;
  double W = 0.0, Wb = 0.0, worst = 0.0, ePrev = e0;
  rise = 0.0;
  for (int step = 0; step < steps; ++step) {
    VecX a1, a2, a3, a4;
    double p1, p2, p3, p4, b1, b2, b3, b4;
    deriv(y, yd, a1, p1, b1);
    deriv(y + 0.5 * h * yd, yd + 0.5 * h * a1, a2, p2, b2);
    deriv(y + 0.5 * h * (yd + 0.5 * h * a1), yd + 0.5 * h * a2, a3, p3, b3);
    deriv(y + h * (yd + 0.5 * h * a2), yd + h * a3, a4, p4, b4);
    y += h * (yd + h / 6.0 * (a1 + a2 + a3));
    yd += h / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4);
    W += h / 6.0 * (p1 + 2 * p2 + 2 * p3 + p4);
    Wb += h / 6.0 * (b1 + 2 * b2 + 2 * b3 + b4);
    const double e = test::spanningEnergy(m, data, tree, y, yd);
    worst = std::max(worst, std::abs(e - W - e0));
    rise = std::max(rise, e - ePrev);
    ePrev = e;
  }
  dissipated = -W;
  ballDissipated = -Wb;
  return worst;
}

}  // namespace

TEST(BallHingePassive, PassiveMotionConservesTheSpringsAndDissipatesTheDampersWork) {
  // Springs only (the ball's spring, no damper anywhere): E = T + V_gravity + V_spring is
  // conserved to the integrator's error, falling as h^4. With the dampers (the ball's and
  // hip_pitch's): E + W = E0, W the dampers' work, and E decays monotonically.
  struct Case {
    const char* ball;
    bool hipDamping;
    double d;
  };
  // (The rod's spin has 2e-6 kg m^2 of inertia: d and k small enough for explicit RK4 at these
  // steps, d h / I <= 0.1, h sqrt(k / I) <= 0.1.)
  for (const Case& c : {Case{"stiffness=\"0.02\"", false, 0.0},
                        Case{"damping=\"0.0002\" stiffness=\"0.02\"", true, 0.0002}}) {
    const ClusterModel m = rodLeg(c.ball, c.hipDamping);
    ClusterData d(m);
    std::mt19937_64 rng(31);
    support::ClosedState st;
    ASSERT_TRUE(closedState(m, d, rng, 0.3, st)) << d.errorMessage();
    // A lively start: the rod spinning at 20 rad/s.
    VecX yd0 = st.ydot;
    yd0[2] = 20.0;
    ASSERT_EQ(m.independentVelocityNames[2], "rod_ball:spin");
    Data tree(m.treeModel);
    const double e0 = test::spanningEnergy(m, d, tree, st.y, yd0);
    double rise[2], lost[2], lostBall[2];
    const double drift[2] = {
        energyBalance(m, c.d, st.y, yd0, 1e-3, 200, rise[0], lost[0], lostBall[0]),
        energyBalance(m, c.d, st.y, yd0, 5e-4, 400, rise[1], lost[1], lostBall[1])};
    if (HasFatalFailure()) return;
    const double scale = 1.0 + std::abs(e0);
    EXPECT_LE(drift[0], 1e-6 * scale) << c.ball;
    EXPECT_LE(drift[1], 1e-7 * scale) << c.ball;
    EXPECT_TRUE(drift[1] <= drift[0] / 10.0 || drift[0] <= 1e-10 * scale)
        << c.ball << ": " << drift[0] << " (h = 1e-3), " << drift[1] << " (h = 5e-4)";
    if (c.d > 0.0) {
      EXPECT_LE(rise[1], 1e-10 * scale) << "the energy rose with dampers only";
      // The ball's damper dissipates far more than the balance's error: without its force on
      // the hinges (or with a wrong one) the balance would fail.
      EXPECT_GT(lostBall[1], 1e3 * drift[1]) << "too little dissipated to test the damper";
    } else {
      EXPECT_EQ(lost[1], 0.0);
    }
    std::printf(
        "  rod_leg (ball %s): energy %.6g, dissipated %.4g (the ball's damper %.3g), balance "
        "drift %.3g (h = 1e-3), %.3g (h = 5e-4)\n",
        c.ball, e0, lost[1], lostBall[1], drift[0], drift[1]);
  }
}

TEST(BallHingePassive, ABallsArmatureOrLimitStillKeepsItFromBecomingHinges) {
  // Armature on the hinges would be J^T A J (configuration dependent): the ball is not
  // replaced while the joint dynamics are loaded, and the error says why; without them it is.
  for (const char* attributes : {"armature=\"0.001\"", "damping=\"0.2\" armature=\"0.001\""}) {
    try {
      rodLeg(attributes);
      ADD_FAILURE() << "a ball with armature became three hinges";
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find("did not replace joint 'rod_ball' by three revolute "
                                           "joints (its spin free): three hinges cannot carry "
                                           "its armature exactly"),
                std::string::npos)
          << e.what();
    }
    ModelOptions rigid;
    rigid.jointDynamics = false;
    EXPECT_EQ(rodLeg(attributes, true, rigid).ny, 3);
  }
  // A ball with a limit (URDF+ <limit>; the MJCF reader ignores ball cone limits): a cone on
  // its rotation, which hinges do not express: not replaced.
  UrdfDescription limited = parseMjcfString(rodLegXml("damping=\"0.2\""), "rod_leg.xml").urdf;
  for (UrdfJoint& j : limited.joints)
    if (j.name == "rod_ball") j.hasLimit = true;
  try {
    buildClusterModel(limited);
    ADD_FAILURE() << "a limited ball became three hinges";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("did not replace joint 'rod_ball' by three revolute "
                                         "joints (its spin free): it has a limit"),
              std::string::npos)
        << e.what();
  }
}

TEST(BallHingePassive, FinalizeChecksTheGroup) {
  // A group names revolute joints in a chain with coincident frames; finalize() says otherwise.
  ClusterModel m = loadModel(test::modelsPath("cd_rod_leg.xml"));
  Model t = m.treeModel;
  t.finalize();
  EXPECT_EQ(t.ballHinges[0].v, m.treeModel.ballHinges[0].v);
  Model swapped = m.treeModel;
  std::swap(swapped.ballHinges[0].joints[0], swapped.ballHinges[0].joints[1]);
  EXPECT_THROW(swapped.finalize(), ModelError);
  Model missing = m.treeModel;
  missing.ballHinges[0].joints[2] = "knee_motor_typo";
  EXPECT_THROW(missing.finalize(), ModelError);
  Model negative = m.treeModel;
  negative.ballHinges[0].damping = -1.0;
  EXPECT_THROW(negative.finalize(), ModelError);
  Model bare = m.treeModel;  // a group without the per-coordinate passive vectors
  bare.damping.resize(0);
  bare.stiffness.resize(0);
  bare.springPosition.resize(0);
  EXPECT_THROW(bare.finalize(), ModelError);
}
