// Workspace values another algorithm left behind. Every entry point that reads a workspace field
// it does not write itself (the loops' bias g after a velocity step with Bias::Skip, the motion
// subspace S that ceAba defers in the composite form: ClusterWorkspace::sDeferred, the rotor
// bodies completeRotorBodies fills in) must give, after any other algorithm ran at another
// state, the results of a fresh workspace, bit for bit. And the regression this file began
// with: the contact step's impulse response with a contact on a rotor (the fallback to
// delassusMatrix's passes, src/contact/step.cpp) read the loop bias g of the step's own CE-ABA.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "constrained/delassus_aba.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

double relativeDifference(const MatX& a, const MatX& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

/// The crank-rocker four-bar (its loop's bias g = -K_d^-1 Kdot v is non-zero in motion, unlike
/// a parallelogram's) with a geared arm on the crank: an arm link and its rotor, a {link, rotor}
/// cluster whose rotor CE-ABA keeps in its output body's (the crank's) frame.
ClusterModel fourBarWithRotorArm() {
  std::ifstream in(test::modelsPath("cd_four_bar.urdf"));
  std::stringstream text;
  text << in.rdbuf();
  std::string xml = text.str();
  const std::string arm = R"(
  <link name="arm">
    <inertial><origin xyz="0.06 0 0"/><mass value="0.3"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="4e-4" iyz="0" izz="4e-4"/></inertial>
  </link>
  <joint name="arm_joint" type="continuous">
    <parent link="crank"/><child link="arm"/><origin xyz="0.1 0 0"/><axis xyz="0 1 0"/>
  </joint>
  <link name="arm_rotor">
    <inertial><origin xyz="0 0 0"/><mass value="0.07"/>
      <inertia ixx="3e-5" ixy="0" ixz="0" iyy="5e-5" iyz="0" izz="3e-5"/></inertial>
  </link>
  <joint name="arm_rotor_joint" type="continuous" independent="false">
    <parent link="crank"/><child link="arm_rotor"/><origin xyz="0.05 0 0"/><axis xyz="0 1 0"/>
  </joint>
  <coupling name="arm_gear">
    <predecessor link="arm"/><successor link="arm_rotor"/><ratio value="8"/>
  </coupling>
)";
  xml.insert(xml.rfind("</robot>"), arm);
  return buildClusterModel(parseUrdfString(xml, "four_bar_arm.urdf"));
}

/// The world point of `local` on body b at the configuration data was last closed at.
Vec3 worldPoint(const ClusterData& data, int b, const Vec3& local) {
  const Transform& X = data.treeData.oMi[b];
  return X.R * local + X.p;
}

}  // namespace

// A contact on a rotor (delassusMatrix's own passes instead of CE-ABA's, step.cpp's fallback)
// in a model whose loop has a non-zero bias g: the impulse response is that of the rows alone
// (pass 3 at zero velocity), without the g the step's CE-ABA of the free motion left (its
// U^T c, eq. 53). Oracle: y_dot+ - y_dot_free = H^-1 Jc^T lambda with H from clusterMassMatrix,
// on a fresh workspace and on one last used at another state. Before the fix: relative error
// 0.25 on both.
TEST(StaleWorkspace, RotorContactFallbackCarriesNoLoopBiasOfTheFreeMotion) {
  const ClusterModel cm = fourBarWithRotorArm();
  ASSERT_EQ(cm.ny, 2);
  ASSERT_TRUE(cm.hasImplicitClusters());
  const int rotor = cm.treeModel.bodyId("arm_rotor");
  for (const bool used : {false, true}) {
    SCOPED_TRACE(used ? "workspace used at another state" : "fresh workspace");
    ClusterData data(cm), other(cm);
    const VecX y = (VecX(2) << 0.4, -0.3).finished();
    const VecX ydot = (VecX(2) << 2.5, -1.5).finished();
    ASSERT_EQ(independentToSpanning(cm, data, y, ydot), Status::Ok) << data.errorMessage();
    VecX q = data.q, v = data.v;
    ContactProblem p(cm);
    p.addGroundFoot("rotor", rotor, Vec3(0.02, 0.0, 0.0), 0.0, 0.8);
    // The ground plane 1 mm above the contact point (penetrating).
    p.setGround(Vec3::UnitZ(), worldPoint(data, rotor, Vec3(0.02, 0.0, 0.0)).z() + 1e-3);
    ContactData cd(cm, p);
    StepSettings st;
    st.activationDistance = 1e9;
    st.contact.tolerance = 1e-12;
    st.contact.maxIterations = 20000;
    const VecX tau = (VecX(2) << 0.3, -0.2).finished();
    if (used) {  // a step at another state
      const VecX y2 = (VecX(2) << -0.9, 1.1).finished(), yd2 = (VecX(2) << -3.0, 4.0).finished();
      ASSERT_EQ(independentToSpanning(cm, data, y2, yd2), Status::Ok) << data.errorMessage();
      VecX q2 = data.q, v2 = data.v;
      const Status s2 = contactStep(cm, data, p, cd, q2, v2, tau, st);
      ASSERT_TRUE(s2 == Status::Ok || s2 == Status::NotConverged) << data.errorMessage();
    }
    const VecX q0 = q, v0 = v;
    const Status s = contactStep(cm, data, p, cd, q, v, tau, st);
    ASSERT_TRUE(s == Status::Ok || s == Status::NotConverged) << data.errorMessage();
    ASSERT_EQ(clusterMassMatrix(cm, other, q0), Status::Ok) << other.errorMessage();
    const Eigen::LLT<MatX> H(other.H);
    // The problem's Delassus matrix (delassusMatrix's passes) against the dense J H^-1 J^T.
    ConstraintData ref(cm, p.rows());
    ASSERT_EQ(constraintJacobian(cm, other, p.rows(), ref, q0, v0), Status::Ok);
    EXPECT_LT(
        relativeDifference(cd.rows.delassus, ref.jacobian * H.solve(ref.jacobian.transpose())),
        1e-12);
    const VecX expected = H.solve(cd.Jc.transpose() * cd.lambda);
    ASSERT_GT(expected.cwiseAbs().maxCoeff(), 1e-6);  // the contact pushes
    EXPECT_LT(relativeDifference(cd.ydot - cd.ydotFree, expected), 1e-10)
        << "ydot - ydotFree = " << (cd.ydot - cd.ydotFree).transpose()
        << "\nH^-1 Jc^T lambda = " << expected.transpose();
  }
}

namespace {

/// A model, two closed states a and b, a bilateral point constraint, a contact problem with a
/// ground foot (penetrating by 1 mm at b) and, when the model has a rotor, a second problem with
/// a contact on that rotor (step.cpp's fallback).
struct Scene {
  std::string name;
  ClusterModel cm;
  support::ClosedState a, b;
  ConstraintSet set;
  ContactProblem problem;
  std::unique_ptr<ContactProblem> rotorProblem;
  VecX tau, ydd;
  Scene(std::string n, ClusterModel model, const std::string& body, const Vec3& point,
        const std::string& rotor, unsigned seed)
      : name(std::move(n)), cm(std::move(model)), set(cm), problem(cm) {
    ClusterData data(cm);
    std::mt19937_64 rng(seed);
    ok = support::randomClosedStateNearReference(cm, data, rng, a, 0.05, 40) &&
         support::randomClosedStateNearReference(cm, data, rng, b, 0.05, 40);
    // data holds state b (its poses from independentToSpanning's closure).
    const int fb = cm.treeModel.bodyId(body);
    set.addContact(body, ConstraintType::Point);
    problem.addGroundFoot("foot", fb, point, 0.0, 0.8);
    problem.setGround(Vec3::UnitZ(), worldPoint(data, fb, point).z() + 1e-3);
    if (!rotor.empty()) {
      const int rb = cm.treeModel.bodyId(rotor);
      rotorProblem = std::make_unique<ContactProblem>(cm);
      rotorProblem->addGroundFoot("foot", fb, point, 0.0, 0.8);
      rotorProblem->addGroundFoot("rotor", rb, Vec3(0.01, 0.0, 0.0), 0.0, 0.8);
      rotorProblem->setGround(Vec3::UnitZ(), worldPoint(data, fb, point).z() + 1e-3);
    }
    tau = support::uniformVector(cm.ny, rng, -2.0, 2.0);
    ydd = support::uniformVector(cm.ny, rng, -2.0, 2.0);
  }
  bool ok = false;
};

/// An entry point at a state: its status and its outputs.
struct Run {
  Status status;
  std::vector<MatX> out;
};
using Entry = std::function<Run(ClusterData&, const support::ClosedState&)>;

std::vector<std::pair<std::string, Entry>> entryPoints(const Scene& s) {
  const ClusterModel& cm = s.cm;
  std::vector<std::pair<std::string, Entry>> e;
  const std::vector<Force> zero(cm.treeModel.nbodies, Force::Zero());
  e.emplace_back("ceAba", [&](ClusterData& d, const support::ClosedState& x) {
    const Status st = ceAba(cm, d, x.q, x.v, s.tau);
    return Run{st, {d.ydd, d.qdd}};
  });
  e.emplace_back("ceAba(fext)", [&, zero](ClusterData& d, const support::ClosedState& x) {
    const Status st = ceAba(cm, d, x.q, x.v, s.tau, zero.data());
    return Run{st, {d.ydd, d.qdd}};
  });
  e.emplace_back("ceRnea", [&](ClusterData& d, const support::ClosedState& x) {
    const Status st = ceRnea(cm, d, x.q, x.v, s.ydd);
    return Run{st, {d.tauY, d.qdd}};
  });
  e.emplace_back("clusterMassMatrix", [&](ClusterData& d, const support::ClosedState& x) {
    const Status st = clusterMassMatrix(cm, d, x.q);
    return Run{st, {d.H}};
  });
  e.emplace_back("clusterBias", [&](ClusterData& d, const support::ClosedState& x) {
    const Status st = clusterBias(cm, d, x.q, x.v);
    return Run{st, {d.C}};
  });
  e.emplace_back("constraintJacobian", [&](ClusterData& d, const support::ClosedState& x) {
    ConstraintData c(cm, s.set);
    const Status st = constraintJacobian(cm, d, s.set, c, x.q, x.v);
    return Run{st, {c.jacobian}};
  });
  e.emplace_back("delassusMatrix", [&](ClusterData& d, const support::ClosedState& x) {
    ConstraintData c(cm, s.set);
    const Status st = delassusMatrix(cm, d, s.set, c, x.q);
    return Run{st, {c.delassus}};
  });
  e.emplace_back("dampedDelassusInverse", [&](ClusterData& d, const support::ClosedState& x) {
    ConstraintData c(cm, s.set);
    const Status st = dampedDelassusInverse(cm, d, s.set, c, x.q, 1e-3);
    return Run{st, {c.dampedInverse}};
  });
  e.emplace_back("constrainedAba", [&](ClusterData& d, const support::ClosedState& x) {
    ConstraintData c(cm, s.set);
    const Status st = constrainedAba(cm, d, s.set, c, x.q, x.v, s.tau);
    return Run{st, {d.ydd, d.qdd, c.lambda}};
  });
  e.emplace_back("proxPv", [&](ClusterData& d, const support::ClosedState& x) {
    ConstraintData c(cm, s.set);
    const Status st = proxPv(cm, d, s.set, c, x.q, x.v, s.tau);
    return Run{st, {d.ydd, d.qdd, c.lambda}};
  });
  e.emplace_back("constrainedDynamicsDense", [&](ClusterData& d, const support::ClosedState& x) {
    ConstraintData c(cm, s.set);
    const Status st = constrainedDynamicsDense(cm, d, s.set, c, x.q, x.v, s.tau);
    return Run{st, {d.ydd, d.qdd, c.lambda}};
  });
  e.emplace_back("computeCeAbaDerivatives", [&](ClusterData& d, const support::ClosedState& x) {
    ClusterDerivativeData dd(cm);
    const Status st = computeCeAbaDerivatives(cm, d, dd, x.q, x.v, s.tau);
    return Run{st, {dd.ydd, dd.dydd_dy, dd.dydd_dydot}};
  });
  e.emplace_back("computeCeRneaDerivatives", [&](ClusterData& d, const support::ClosedState& x) {
    ClusterDerivativeData dd(cm);
    const Status st = computeCeRneaDerivatives(cm, d, dd, x.q, x.v, s.ydd);
    return Run{st, {dd.tauY, dd.dtau_dy, dd.dtau_dydot}};
  });
  e.emplace_back("computeClusterMinverse", [&](ClusterData& d, const support::ClosedState& x) {
    ClusterDerivativeData dd(cm);
    const Status st = computeClusterMinverse(cm, d, dd, x.q);
    return Run{st, {dd.Hinv}};
  });
  const auto contact = [&](const ContactProblem& p, bool step) {
    return [&cm, &p, &s, step](ClusterData& d, const support::ClosedState& x) {
      ContactData c(cm, p);
      StepSettings st;
      st.activationDistance = 1e9;
      VecX q = x.q, v = x.v;
      if (!step) {
        const Status r = assembleContactProblem(cm, d, p, c, q, v, s.tau, st);
        return Run{r, {c.G, c.g, c.Jc}};
      }
      const Status r = contactStep(cm, d, p, c, q, v, s.tau, st);
      return Run{r, {q, v, c.ydot, c.lambda, d.ydd}};
    };
  };
  if (s.rotorProblem) {  // the rotor problem takes step.cpp's fallback (the test is not vacuous)
    ClusterData d(cm);
    ContactData c(cm, *s.rotorProblem);
    StepSettings st;
    EXPECT_EQ(assembleContactProblem(cm, d, *s.rotorProblem, c, s.b.q, s.b.v, s.tau, st),
              Status::Ok);
    EXPECT_FALSE(detail::afterAbaServes(cm, d, c.rows));
    EXPECT_TRUE(detail::afterAbaServes(cm, d, ConstraintData(cm, s.problem.rows())));
  }
  e.emplace_back("assembleContactProblem", contact(s.problem, false));
  e.emplace_back("contactStep", contact(s.problem, true));
  if (s.rotorProblem) {
    e.emplace_back("assembleContactProblem(rotor)", contact(*s.rotorProblem, false));
    e.emplace_back("contactStep(rotor)", contact(*s.rotorProblem, true));
  }
  return e;
}

void checkEveryPair(const Scene& s) {
  SCOPED_TRACE(s.name);
  ASSERT_TRUE(s.ok) << "no closed states";
  const auto entries = entryPoints(s);
  int compared = 0;
  for (const auto& [name, entry] : entries) {
    ClusterData fresh(s.cm);
    const Run ref = entry(fresh, s.b);
    ASSERT_TRUE(ref.status == Status::Ok || ref.status == Status::NotConverged)
        << name << ": " << fresh.errorMessage();
    for (const auto& [before, previous] : entries) {
      ClusterData used(s.cm);
      const Status pre = previous(used, s.a).status;  // what it leaves, at another state
      ASSERT_TRUE(pre == Status::Ok || pre == Status::NotConverged)
          << before << ": " << used.errorMessage();
      const Run r = entry(used, s.b);
      EXPECT_EQ(r.status, ref.status) << name << " after " << before;
      ASSERT_EQ(r.out.size(), ref.out.size());
      for (size_t i = 0; i < r.out.size(); ++i) {
        const bool same = r.out[i].rows() == ref.out[i].rows() &&
                          r.out[i].cols() == ref.out[i].cols() && r.out[i] == ref.out[i];
        EXPECT_TRUE(same) << name << " after " << before << ": output " << i
                          << " differs from a fresh workspace's by "
                          << (same || r.out[i].size() != ref.out[i].size()
                                  ? 0.0
                                  : (r.out[i] - ref.out[i]).cwiseAbs().maxCoeff());
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 0);
}

}  // namespace

TEST(StaleWorkspace, EveryEntryPointAfterEveryOtherAtAnotherStateEqualsAFreshWorkspace) {
  checkEveryPair(Scene("four-bar with a geared arm", fourBarWithRotorArm(), "rocker",
                       Vec3(0.22, 0.0, 0.0), "arm_rotor", 11));
  checkEveryPair(Scene("stewart (composite form, S deferred)",
                       loadModel(test::modelsPath("cd_stewart.urdf")), "platform", Vec3(0.05, 0, 0),
                       "", 12));
  checkEveryPair(Scene("delta (idle columns)", loadModel(test::modelsPath("cd_delta.urdf")),
                       "platform", Vec3(0.02, 0, 0), "", 13));
  ModelOptions floating;
  floating.floatingBase = true;
  checkEveryPair(Scene("parallel walker",
                       loadModel(test::modelsPath("cd_parallel_walker.urdf"), floating),
                       "lf_coupler", Vec3(0.03, 0.0, -0.05), "", 14));
  checkEveryPair(Scene("rod leg (ball damper on three hinges in a loop)",
                       loadModel(test::modelsPath("cd_rod_leg.xml")), "shank", Vec3(0, 0, -0.2), "",
                       17));
  checkEveryPair(Scene("geared leg (rotors, armature, springs, dampers)",
                       loadModel(test::modelsPath("cd_geared_leg.xml")), "shank", Vec3(0, 0, -0.2),
                       "knee_rotor", 18));
  checkEveryPair(Scene("quadruped (rotors)", loadModel(test::modelsPath("cd_quadruped.urdf")),
                       "lf_shank", Vec3(0.0, 0.0, -0.2), "lf_knee_rotor", 15));
}

TEST(StaleWorkspace, MiniCheetahEveryEntryPointAfterEveryOtherEqualsAFreshWorkspace) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(test::sharedPath("urdfplus/mini_cheetah.urdf"));
  checkEveryPair(Scene("mini cheetah", loadModel(test::sharedPath("urdfplus/mini_cheetah.urdf")),
                       "FR_knee_link", Vec3(0.0, 0.0, -0.19), "HL_knee_rotor", 16));
}
