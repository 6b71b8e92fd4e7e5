// Oracles of the joint, loop and coupling constraint forces (constraint_forces.hpp):
//  * Newton-Euler balance of every body with independently recomputed accelerations;
//  * S^T f of every tree joint = its applied generalized force + the couplings' share;
//  * forward (CE-ABA) forces = inverse (CE-RNEA) forces at the same state and acceleration;
//  * loop / coupling multipliers = those of a dense KKT system in spanning coordinates;
//  * a gear: the rotor torque is J_r q_ddot_r and the two sides differ by the ratio.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "dense_oracles.hpp"
#include "loop_model_generator.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name;
  ClusterModel cm;
};

bool hasChords(const std::string& path) {
  const std::string s = clusterdyn::test::readTextFile(path);
  return s.find("<loop") != std::string::npos || s.find("<coupling") != std::string::npos ||
         s.find("<mimic") != std::string::npos;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<std::string> files;
    for (const std::string& dir :
         {clusterdyn::test::sharedPath("urdfplus"), std::string(CLUSTERDYN_MODELS_DIR)})
      if (fs::exists(dir))
        for (const auto& e : fs::directory_iterator(dir))
          if (e.path().extension() == ".urdf" && hasChords(e.path().string()))
            files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    std::vector<Case> out;
    for (const auto& f : files) out.push_back({fs::path(f).filename().string(), loadModel(f)});
    int seed = 0;
    for (auto kind : testgen::allMechanismKinds())
      for (int rep = 0; rep < 2; ++rep) {
        std::mt19937_64 rng(8800 + seed++);
        testgen::GeneratorOptions o;
        o.floatingBase = rep == 1;
        o.treeLinks = 2;
        o.mechanisms = 2;
        o.kinds = {kind, testgen::MechanismKind::Gear};
        const auto r = testgen::generateLoopModel(rng, o);
        out.push_back({std::string("generated_") + testgen::mechanismName(kind) +
                           (rep ? "_floating" : "_fixed"),
                       buildClusterModel(parseUrdfString(r.urdf, "generated.urdf"))});
      }
    return out;
  }();
  return all;
}

/// A random closed spanning state (data.q, data.v) near the reference configuration: loop
/// clusters within 0.2 of it, one draw (support::randomClosedStateNearReference).
bool randomClosedState(const ClusterModel& cm, ClusterData& data, std::mt19937_64& rng) {
  support::ClosedState s;
  if (support::randomClosedStateNearReference(cm, data, rng, s, 0.2, 1)) return true;
  VecX y, yd;  // a failure is allowed, except at the reference configuration itself
  EXPECT_EQ(support::referenceIndependentState(cm, data, y, yd), Status::Ok);
  return false;
}

/// tauY on the independent joints, zero on the dependent ones.
VecX spanningFromIndependent(const ClusterModel& cm, const VecX& tauY) {
  VecX t = VecX::Zero(cm.treeModel.nv);
  for (const Cluster& c : cm.clusters)
    for (int j = 0; j < c.ny; ++j)
      t[c.v0 + (c.constrained() ? c.independent[j] : j)] = tauY[c.y0 + j];
  return t;
}

/// Checks Newton-Euler on every body and S^T f = tau + coupling forces on every joint, with
/// accelerations recomputed from qdd (root acceleration -gravity, so gravity is included).
void checkBalance(const ClusterModel& cm, const ClusterData& data, const JointForces& F,
                  const VecX& tauSpanning, const std::vector<Force>* fext,
                  const std::string& what) {
  const Model& tree = cm.treeModel;
  const Data& td = data.treeData;
  std::vector<Motion> a(tree.nbodies);
  Motion a0 = Motion::Zero();
  a0.tail<3>() = -tree.gravity;
  double scale = 1.0;
  for (int b = 0; b < tree.nbodies; ++b) {
    const int p = tree.parent[b];
    const Joint& J = tree.joints[b];
    const VecX qd = data.v.segment(tree.idx_v[b], J.nv);
    const VecX qdd = data.qdd.segment(tree.idx_v[b], J.nv);
    a[b] = td.liMi[b].actInvMotion(p >= 0 ? a[p] : a0) + J.S * qdd +
           crossMotion(td.v[b], Motion(J.S * qd));
    scale = std::max(scale, F.joint[b].cwiseAbs().maxCoeff());
  }
  std::vector<Force> net(tree.nbodies);
  for (int b = 0; b < tree.nbodies; ++b) {
    net[b] = F.joint[b];
    if (fext) net[b] += (*fext)[b];
    for (int c : tree.children[b]) net[b] -= td.liMi[c].actForce(F.joint[c]);
  }
  for (size_t l = 0; l < cm.loops.size(); ++l) {
    const LoopJoint& lj = cm.loops[l];
    const Transform oMP = (lj.predecessorBody >= 0 ? td.oMi[lj.predecessorBody] : Transform()) *
                          lj.predecessorPlacement;
    if (lj.successorBody >= 0)
      net[lj.successorBody] +=
          td.oMi[lj.successorBody].inverse().operator*(oMP).actForce(F.loopWrench[l]);
    if (lj.predecessorBody >= 0)
      net[lj.predecessorBody] -= lj.predecessorPlacement.actForce(F.loopWrench[l]);
    // The wrench is spanned by the constrained directions.
    Force w;
    const int s = F.loopRowStart[l], nr = static_cast<int>(lj.Trot.cols());
    w.head<3>() = lj.Trot * F.loopRowForce.segment(s, nr);
    w.tail<3>() = lj.Tlin * F.loopRowForce.segment(s + nr, lj.Tlin.cols());
    EXPECT_TRUE(clusterdyn::test::isClose(w, F.loopWrench[l], 1e-12)) << what;
  }
  for (int b = 0; b < tree.nbodies; ++b) {
    const SpatialInertia& I = tree.inertias[b];
    const Force expected = I * a[b] + crossForce(td.v[b], I * td.v[b]);
    EXPECT_LE((net[b] - expected).cwiseAbs().maxCoeff(), 1e-9 * scale)
        << what << ": Newton-Euler of body " << tree.bodyNames[b] << "\n net " << net[b].transpose()
        << "\n I a + v x* I v " << expected.transpose();
  }
  VecX gen = tauSpanning;
  for (size_t r = 0; r < cm.relations.size(); ++r)
    for (size_t t = 0; t < cm.relations[r].terms.size(); ++t)
      gen[cm.relations[r].terms[t].first] += F.relationJointForce[F.relationTermStart[r] + t];
  for (int b = 0; b < tree.nbodies; ++b) {
    const VecX sf = tree.joints[b].S.transpose() * F.joint[b];
    EXPECT_LE((sf - gen.segment(tree.idx_v[b], tree.joints[b].nv)).cwiseAbs().maxCoeff(),
              1e-9 * scale)
        << what << ": S^T f of joint " << tree.jointNames[b];
  }
}

TEST(ConstraintForces, NewtonEulerBalanceAfterCeAba) {
  std::mt19937_64 rng(11);
  int checked = 0;
  for (const Case& c : cases()) {
    ClusterData data(c.cm);
    JointForces F(c.cm);
    for (int s = 0; s < 3; ++s) {
      if (!randomClosedState(c.cm, data, rng)) continue;
      const VecX q = data.q, v = data.v;
      const VecX tauY = clusterdyn::test::randomVector(c.cm.ny, rng);
      const auto fext = clusterdyn::test::randomForces(c.cm.treeModel, rng);
      ASSERT_EQ(ceAba(c.cm, data, q, v, tauY, fext.data()), Status::Ok) << data.errorMessage();
      ASSERT_EQ(ceAbaConstraintForces(c.cm, data, F, tauY), Status::Ok) << data.errorMessage();
      checkBalance(c.cm, data, F, spanningFromIndependent(c.cm, tauY), &fext, c.name);
      // Spanning generalized forces (actuators on dependent joints too).
      const VecX tauS = clusterdyn::test::randomVector(c.cm.treeModel.nv, rng);
      ASSERT_EQ(ceAbaSpanningForces(c.cm, data, q, v, tauS), Status::Ok);
      ASSERT_EQ(ceAbaConstraintForces(c.cm, data, F, tauS, GeneralizedForceLayout::Spanning),
                Status::Ok);
      checkBalance(c.cm, data, F, tauS, nullptr, c.name + " (spanning forces)");
      ++checked;
    }
  }
  EXPECT_GE(checked, static_cast<int>(cases().size()));
  int loops = 0, relations = 0;
  for (const Case& c : cases())
    loops += static_cast<int>(c.cm.loops.size()),
        relations += static_cast<int>(c.cm.relations.size());
  EXPECT_GE(cases().size(), 30u);
  EXPECT_GE(loops, 20);
  EXPECT_GE(relations, 20);
  std::printf("%zu models, %d loops, %d couplings, %d states\n", cases().size(), loops, relations,
              checked);
}

TEST(ConstraintForces, ForwardEqualsInverse) {
  std::mt19937_64 rng(12);
  for (const Case& c : cases()) {
    ClusterData data(c.cm);
    JointForces Ff(c.cm), Fi(c.cm);
    if (!randomClosedState(c.cm, data, rng)) continue;
    const VecX q = data.q, v = data.v;
    const VecX tauY = clusterdyn::test::randomVector(c.cm.ny, rng);
    const auto fext = clusterdyn::test::randomForces(c.cm.treeModel, rng);
    ASSERT_EQ(ceAba(c.cm, data, q, v, tauY, fext.data()), Status::Ok);
    ASSERT_EQ(ceAbaConstraintForces(c.cm, data, Ff, tauY), Status::Ok);
    const VecX ydd = data.ydd;
    ASSERT_EQ(ceRnea(c.cm, data, q, v, ydd, fext.data()), Status::Ok);
    ASSERT_TRUE(clusterdyn::test::isClose(data.tauY, tauY, 1e-9)) << c.name;
    ASSERT_EQ(ceRneaConstraintForces(c.cm, data, Fi), Status::Ok) << data.errorMessage();
    checkBalance(c.cm, data, Fi, spanningFromIndependent(c.cm, data.tauY), &fext,
                 c.name + " (CE-RNEA)");
    double scale = 1.0;
    for (const Force& f : Ff.joint) scale = std::max(scale, f.cwiseAbs().maxCoeff());
    for (int b = 0; b < c.cm.treeModel.nbodies; ++b)
      EXPECT_LE((Ff.joint[b] - Fi.joint[b]).cwiseAbs().maxCoeff(), 1e-9 * scale)
          << c.name << " joint " << c.cm.treeModel.jointNames[b];
    for (size_t l = 0; l < c.cm.loops.size(); ++l)
      EXPECT_LE((Ff.loopWrench[l] - Fi.loopWrench[l]).cwiseAbs().maxCoeff(), 1e-9 * scale)
          << c.name << " loop " << c.cm.loops[l].name;
    EXPECT_TRUE(
        clusterdyn::test::isClose(Ff.relationJointForce, Fi.relationJointForce, 1e-9, scale))
        << c.name;
  }
}

TEST(ConstraintForces, MultipliersEqualDenseKkt) {
  std::mt19937_64 rng(13);
  for (const Case& c : cases()) {
    const ClusterModel& cm = c.cm;
    ClusterData data(cm);
    JointForces F(cm);
    if (!randomClosedState(cm, data, rng)) continue;
    const VecX q = data.q, v = data.v;
    const VecX tauS = clusterdyn::test::randomVector(cm.treeModel.nv, rng);
    ASSERT_EQ(ceAbaSpanningForces(cm, data, q, v, tauS), Status::Ok);
    ASSERT_EQ(ceAbaConstraintForces(cm, data, F, tauS, GeneralizedForceLayout::Spanning),
              Status::Ok);
    // Dense KKT: M qdd - K^T lambda = tau - c, K qdd = k (selected rows of every cluster).
    Data td(cm.treeModel);
    ASSERT_EQ(crba(cm.treeModel, td, q), Status::Ok);
    ASSERT_EQ(nonLinearEffects(cm.treeModel, td, q, v), Status::Ok);
    const int n = cm.treeModel.nv;
    int m = 0;
    for (const Cluster& cl : cm.clusters) m += static_cast<int>(cl.selectedRows.size());
    MatX Kall = MatX::Zero(m, n);
    VecX kall = VecX::Zero(m), lambdaOurs = VecX::Zero(m);
    int row = 0;
    for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
      const Cluster& cl = cm.clusters[k];
      if (!cl.constrained()) continue;
      // Our multipliers in the cluster's row order: relations, then loop rows.
      VecX lam(cl.constraintRows);
      int r = 0;
      for (int rel : cl.relations) lam[r++] = F.relationMultiplier[rel];
      for (int l : cl.loops)
        for (int j = 0; j < cm.loops[l].rows(); ++j)
          lam[r++] = F.loopRowForce[F.loopRowStart[l] + j];
      for (int sel : cl.selectedRows) {
        Kall.block(row, cl.v0, 1, cl.nv) = data.constraintJacobian(k).row(sel);
        kall[row] = data.constraintBias(k)[sel];
        lambdaOurs[row] = lam[sel];
        ++row;
      }
    }
    const oracle::KktSolution kkt = oracle::solveKktLu(td.M, Kall, tauS - td.nle, kall);
    ASSERT_TRUE(kkt.ok) << c.name << ": singular KKT matrix";
    EXPECT_TRUE(clusterdyn::test::isClose(data.qdd, kkt.acceleration, 1e-8)) << c.name;
    const double scale =
        1.0 + (m > 0 ? kkt.lambda.cwiseAbs().maxCoeff() : 0.0);  // m = 0: cut loops
    EXPECT_TRUE(clusterdyn::test::isClose(lambdaOurs, kkt.lambda, 1e-8, scale))
        << c.name << "\n ours " << lambdaOurs.transpose() << "\n KKT " << kkt.lambda.transpose();
  }
}

TEST(ConstraintForces, GearTorquesFollowTheRatio) {
  const ClusterModel cm = loadModel(std::string(CLUSTERDYN_MODELS_DIR) + "/cd_geared_chain.urdf");
  ClusterData data(cm);
  JointForces F(cm);
  std::mt19937_64 rng(14);
  const int gear = [&] {
    for (size_t r = 0; r < cm.relations.size(); ++r)
      if (cm.relations[r].name == "base_yaw_gear") return static_cast<int>(r);
    return -1;
  }();
  ASSERT_GE(gear, 0);
  const int rotor = cm.treeModel.jointId("base_yaw_rotor_joint"),
            yaw = cm.treeModel.jointId("base_yaw");
  ASSERT_GE(rotor, 0);
  ASSERT_GE(yaw, 0);
  const double Jr = cm.treeModel.inertias[rotor].Io(2, 2);  // rotor about its (z) axis
  for (int s = 0; s < 5; ++s) {
    ASSERT_TRUE(randomClosedState(cm, data, rng));
    const VecX q = data.q, v = data.v;
    const VecX tauY = clusterdyn::test::randomVector(cm.ny, rng, -5, 5);
    ASSERT_EQ(ceAba(cm, data, q, v, tauY), Status::Ok);
    ASSERT_EQ(ceAbaConstraintForces(cm, data, F, tauY), Status::Ok);
    double onRotor = 0, onYaw = 0;
    const ExplicitRelation& rel = cm.relations[gear];
    for (size_t t = 0; t < rel.terms.size(); ++t) {
      const double f = F.relationJointForce[F.relationTermStart[gear] + t];
      if (rel.terms[t].first == cm.treeModel.idx_v[rotor]) onRotor = f;
      if (rel.terms[t].first == cm.treeModel.idx_v[yaw]) onYaw = f;
    }
    const double qddRotor = data.qdd[cm.treeModel.idx_v[rotor]];
    EXPECT_NEAR(qddRotor, 12.0 * data.qdd[cm.treeModel.idx_v[yaw]],
                1e-9 * (1 + std::abs(qddRotor)));
    // The rotor (on the fixed mount, axis z through its centre) is driven by the gear alone.
    EXPECT_NEAR(onRotor, Jr * qddRotor, 1e-9 * (1 + std::abs(onRotor)));
    EXPECT_GT(std::abs(onRotor), 1e-6);
    // Power balance of an ideal gear: tau_yaw = -12 tau_rotor.
    EXPECT_NEAR(onYaw, -12.0 * onRotor, 1e-9 * (1 + std::abs(onYaw)));
    // The rotor's joint carries the gear torque about its axis to the mount.
    EXPECT_NEAR(F.joint[rotor][2], onRotor, 1e-9 * (1 + std::abs(onRotor)));
  }
}

TEST(ConstraintForces, TreeAbaForcesEqualRnea) {
  std::mt19937_64 rng(15);
  for (int trial = 0; trial < 5; ++trial) {
    clusterdyn::test::RandomModelOptions o;
    o.nbodies = 7;
    o.floatingBase = trial % 2;
    const Model model = clusterdyn::test::randomTreeModel(rng, o);
    Data d1(model), d2(model);
    const auto st = clusterdyn::test::randomState(model, rng);
    const auto fext = clusterdyn::test::randomForces(model, rng);
    ASSERT_EQ(aba(model, d1, st.q, st.v, st.tau, fext.data()), Status::Ok);
    std::vector<Force> f(model.nbodies);
    ASSERT_EQ(abaJointForces(model, d1, f), Status::Ok);
    ASSERT_EQ(rnea(model, d2, st.q, st.v, d1.ddq, fext.data()), Status::Ok);
    for (int b = 0; b < model.nbodies; ++b)
      EXPECT_TRUE(clusterdyn::test::isClose(f[b], d2.f[b], 1e-9)) << "body " << b;
    std::vector<Force> wrong(model.nbodies + 1);
    EXPECT_EQ(abaJointForces(model, d1, wrong), Status::InvalidSize);
    EXPECT_NE(std::string(d1.errorMessage()).find("expected"), std::string::npos);
  }
}

TEST(ConstraintForces, RejectsBadArguments) {
  const Case& c = cases().front();
  const ClusterModel other = loadModel(std::string(CLUSTERDYN_MODELS_DIR) + "/cd_four_bar.urdf");
  ClusterData data(c.cm);
  JointForces F(c.cm), Fother(other);
  std::mt19937_64 rng(16);
  ASSERT_TRUE(randomClosedState(c.cm, data, rng));
  const VecX q = data.q, v = data.v, tauY = VecX::Zero(c.cm.ny);
  ASSERT_EQ(ceAba(c.cm, data, q, v, tauY), Status::Ok);
  EXPECT_EQ(ceAbaConstraintForces(c.cm, data, F, VecX::Zero(c.cm.ny + 1)), Status::InvalidSize);
  VecX bad = tauY;
  if (bad.size()) {
    bad[0] = std::nan("");
    EXPECT_EQ(ceAbaConstraintForces(c.cm, data, F, bad), Status::NonFinite);
  }
  EXPECT_EQ(ceAbaConstraintForces(c.cm, data, Fother, tauY), Status::WorkspaceMismatch);
  EXPECT_NE(std::string(data.errorMessage()).find("JointForces"), std::string::npos);
  EXPECT_EQ(ceRneaConstraintForces(other, data, F), Status::WorkspaceMismatch);
  EXPECT_EQ(ceAbaConstraintForces(c.cm, data, F, tauY), Status::Ok);
  EXPECT_EQ(jointForcesInWorld(c.cm, data, F), Status::Ok);
  for (int b = 0; b < c.cm.treeModel.nbodies; ++b)
    EXPECT_TRUE(clusterdyn::test::isClose(
        F.jointWorld[b], data.treeData.oMi[b].toActInvMotionMatrix().transpose() * F.joint[b],
        1e-12));
}

}  // namespace
