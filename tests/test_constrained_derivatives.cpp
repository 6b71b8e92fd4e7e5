// Derivatives of constrained dynamics (constrained_derivatives.hpp) against independent oracles:
//  (1) central finite differences (Richardson) on the closed manifold of the constrained
//      solution (y_ddot, lambda) of the dense KKT oracle (support/dense_oracles.hpp, which
//      solves with Eigen decompositions of H, J, gamma only), on bundled models with random
//      contacts, welds and two-body constraints of every type (Local and LocalWorldAligned,
//      with and without Baumgarte gains, with and without fext) and on generated loop models;
//  (2) embedded vs cut loops: the CE-ABA derivatives of a model with its loops embedded equal
//      the constrained-dynamics derivatives of the same model with its loops cut, mapped to y.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <filesystem>
#include <functional>
#include <random>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/constrained_derivatives.hpp"
#include "dense_oracles.hpp"
#include "loop_model_generator.hpp"
#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

constexpr double kFdTol = 1e-7;
constexpr double kFdStep = 1e-3;       // configuration (tangent of y), then h / 2, h / 4
constexpr double kVelocityStep = 0.1;  // y_dot: the solution is exactly quadratic in y_dot

double relErr(const MatX& a, const MatX& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

/// The oracle's solution [y_ddot; lambda] at the closed state whose independent joints are
/// integrate(q, dy) (dependent joints re-closed on the same branch), velocity y_dot.
struct Oracle {
  const ClusterModel& cm;
  const ConstraintSet& set;
  const VecX& tau;
  const Force* fext;
  ClusterData data{cm};
  ConstraintData cd{cm, set};

  VecX solve(const VecX& q, const VecX& v, const VecX& t) {
    const oracle::ClusterKkt kkt = oracle::denseClusterKkt(cm, data, set, cd, q, v, t, fext);
    EXPECT_TRUE(kkt.ok);
    VecX out(cm.ny + set.rows());
    out << kkt.ydd, kkt.lambda;
    return out;
  }
  VecX at(const VecX& q, const VecX& dy, const VecX& ydot) {
    VecX dq = VecX::Zero(cm.treeModel.nv);
    for (int k = 0; k < cm.ny; ++k) dq[cm.independentVelocity[k]] = dy[k];
    const VecX qs = integrate(cm.treeModel, q, dq, 1.0);
    VecX y(cm.nyq);
    for (int k = 0; k < cm.nyq; ++k) y[k] = qs[cm.independentPosition[k]];
    EXPECT_EQ(setClosureWarmStart(cm, data, q), Status::Ok);
    EXPECT_EQ(independentToSpanning(cm, data, y, ydot), Status::Ok) << data.errorMessage();
    const VecX qc = data.q, vc = data.v;
    return solve(qc, vc, tau);
  }
};

/// d [y_ddot; lambda] / d (y, y_dot, tau) by central differences (Richardson for y).
void finiteDifferences(Oracle& o, const VecX& q, const VecX& ydot, MatX& dy, MatX& dyd,
                       MatX& dtau) {
  const int ny = o.cm.ny, n = ny + o.set.rows();
  dy.resize(n, ny);
  dyd.resize(n, ny);
  dtau.resize(n, ny);
  const VecX zero = VecX::Zero(ny);
  auto central = [&](int k, double h) {
    VecX e = VecX::Zero(ny);
    e[k] = h;
    return VecX((o.at(q, e, ydot) - o.at(q, -e, ydot)) / (2.0 * h));
  };
  for (int k = 0; k < ny; ++k) {
    // Two Richardson steps (error O(h^6)): the constrained solution is strongly nonlinear in y
    // near an ill-conditioned set, where one step left errors of 1e-6 at h = 5e-4.
    const VecX d1 = central(k, kFdStep), d2 = central(k, kFdStep / 2), d4 = central(k, kFdStep / 4);
    dy.col(k) = (16.0 * (4.0 * d4 - d2) / 3.0 - (4.0 * d2 - d1) / 3.0) / 15.0;
    VecX e = VecX::Zero(ny);
    e[k] = kVelocityStep;
    dyd.col(k) = (o.at(q, zero, ydot + e) - o.at(q, zero, ydot - e)) / (2.0 * kVelocityStep);
    o.at(q, zero, ydot);  // leaves the closed state (q, v) in o.data
    const VecX qc = o.data.q, vc = o.data.v;
    VecX tp = o.tau, tm = o.tau;
    tp[k] += 1.0;
    tm[k] -= 1.0;
    dtau.col(k) = (o.solve(qc, vc, tp) - o.solve(qc, vc, tm)) / 2.0;  // exactly linear
  }
}

Transform randomPose(std::mt19937_64& rng, double s) {
  std::uniform_real_distribution<double> u(-s, s);
  return Transform(randomRotation(rng), Vec3(u(rng), u(rng), u(rng)));
}

/// Random constraints of every type (world contacts and two-body loops, Local and
/// LocalWorldAligned, Baumgarte gains on some) with at most maxRows rows.
void addRandomConstraints(ConstraintSet& set, const ClusterModel& cm, std::mt19937_64& rng,
                          int count, int maxRows, bool baumgarte) {
  std::uniform_int_distribution<int> body(0, cm.treeModel.nbodies - 1), type(0, 4), coin(0, 1);
  int rows = 0;
  for (int i = 0; i < 60 && set.size() < count; ++i) {
    RigidConstraint c;
    c.name = "c" + std::to_string(set.size());
    c.type = static_cast<ConstraintType>(type(rng));
    c.body1 = body(rng);
    c.body2 = coin(rng) ? body(rng) : -1;
    if (c.body2 == c.body1) c.body2 = -1;
    c.placement1 = randomPose(rng, 0.2);
    c.placement2 = randomPose(rng, 1.0);
    const bool axesOnly = c.type == ConstraintType::Revolute || c.type == ConstraintType::Planar ||
                          c.type == ConstraintType::Prismatic;
    c.frame = !axesOnly && coin(rng) ? ReferenceFrame::LocalWorldAligned : ReferenceFrame::Local;
    if (baumgarte && coin(rng)) c.kp = 20.0, c.kd = 3.0;
    if (rows + c.rows() > maxRows) continue;
    // Keep the rows independent (at the reference configuration): a random set is otherwise
    // often inconsistent, which the function rejects (tested below).
    ConstraintSet trial(cm);
    for (const RigidConstraint& o : set.constraints()) trial.add(o);
    trial.add(c);
    ClusterData data(cm);
    ConstraintData cd(cm, trial);
    if (constraintJacobian(cm, data, trial, cd, cm.qReference, VecX::Zero(cm.treeModel.nv)) !=
        Status::Ok)
      continue;
    if (clusterMassMatrix(cm, data, cm.qReference) != Status::Ok) continue;
    const MatX D = cd.jacobian * data.H.llt().solve(cd.jacobian.transpose());
    const VecX ev = Eigen::SelfAdjointEigenSolver<MatX>(D).eigenvalues();
    if (!(ev.minCoeff() > 1e-5 * ev.maxCoeff())) continue;  // condition number below 1e5
    rows += c.rows();
    set.add(c);
  }
}

struct Stats {
  double worst = 0.0;
  int checked = 0;
};

/// Analytical against finite differences at `states` random closed states of cm with `set`.
void checkAgainstFd(const std::string& name, const ClusterModel& cm, const ConstraintSet& set,
                    std::mt19937_64& rng, int states, bool withFext, Stats& stats,
                    bool requireFullRank = true) {
  SCOPED_TRACE(name);
  ClusterData data(cm);
  ConstrainedDerivativeData cdd(cm, set);
  const int ny = cm.ny, m = set.rows();
  for (int s = 0; s < states; ++s) {
    support::ClosedState st;
    ASSERT_TRUE(support::randomClosedState(cm, data, rng, st, 0.6)) << data.errorMessage();
    const VecX tau = randomVector(ny, rng, -3, 3);
    std::vector<Force> fext(cm.treeModel.nbodies);
    for (Force& f : fext) f = randomVector(6, rng, -2, 2);
    const Force* fe = withFext ? fext.data() : nullptr;
    const Status status =
        computeConstrainedDynamicsDerivatives(cm, data, set, cdd, st.q, st.v, tau, fe);
    ASSERT_EQ(status, Status::Ok) << data.errorMessage();
    if (requireFullRank && cdd.rank < m) continue;  // rows dependent at this state
    Oracle o{cm, set, tau, fe};
    // The solution itself against the dense oracle.
    const VecX sol = o.solve(st.q, st.v, tau);
    EXPECT_TRUE(isClose(cdd.ydd, sol.head(ny), 1e-8));
    const bool fullRank = cdd.rank == m;
    if (fullRank) EXPECT_TRUE(isClose(cdd.lambda, sol.tail(m), 1e-8));
    MatX fy, fyd, ftau;
    finiteDifferences(o, st.q, st.ydot, fy, fyd, ftau);
    const double e[6] = {relErr(cdd.dydd_dy, fy.topRows(ny)),
                         relErr(cdd.dydd_dydot, fyd.topRows(ny)),
                         relErr(cdd.dydd_dtau, ftau.topRows(ny)),
                         fullRank ? relErr(cdd.dlambda_dy, fy.bottomRows(m)) : 0.0,
                         fullRank ? relErr(cdd.dlambda_dydot, fyd.bottomRows(m)) : 0.0,
                         fullRank ? relErr(cdd.dlambda_dtau, ftau.bottomRows(m)) : 0.0};
    const char* what[6] = {"dydd_dy",    "dydd_dydot",    "dydd_dtau",
                           "dlambda_dy", "dlambda_dydot", "dlambda_dtau"};
    for (int i = 0; i < 6; ++i) {
      EXPECT_LE(e[i], kFdTol) << what[i] << " state " << s << " rank " << cdd.rank << "/" << m;
      stats.worst = std::max(stats.worst, e[i]);
    }
    ++stats.checked;
  }
}

std::vector<std::string> bundledFiles() {
  return {"cd_quadruped.urdf",      "cd_belt_leg.urdf",     "cd_six_bar.urdf",
          "cd_differential.urdf",   "cd_rsu_leg.urdf",      "cd_delta.urdf",
          "cd_mimic_gripper.urdf",  "cd_geared_chain.urdf", "cd_four_bar.urdf",
          "cd_parallel_walker.urdf"};
}

}  // namespace

TEST(ConstrainedDerivatives, FiniteDifferencesOnBundledModels) {
  std::mt19937_64 rng(2411);
  Stats stats;
  ModelOptions rigid;
  rigid.jointDynamics = false;
  // The delta's embedded loops leave H an eigenvalue of 9e-8 (the rods' spin about their axes,
  // an independent coordinate of almost no inertia): y_ddot moves by 1e-8 relative when the
  // same state is re-closed at 1e-16, too noisy for finite differences of the dense oracle at
  // these states and sets, so the delta is loaded with its loops cut here (its embedded
  // derivatives: EmbeddedEqualsCutLoops below and test_cluster_derivatives.cpp).
  ModelOptions rigidCut = rigid;
  rigidCut.cutLoops = true;
  for (const std::string& f : bundledFiles()) {
    const ClusterModel cm = loadModel(modelsPath(f), f == "cd_delta.urdf" ? rigidCut : rigid);
    for (int variant = 0; variant < 2; ++variant) {
      ConstraintSet set(cm);
      addRandomConstraints(set, cm, rng, 3, std::min(12, cm.ny - 1), variant == 1);
      if (set.rows() == 0) continue;
      checkAgainstFd(f + (variant ? " (Baumgarte, fext)" : ""), cm, set, rng, 2, variant == 1,
                     stats);
    }
  }
  EXPECT_GE(stats.checked, 12);  // the planar mechanisms (no 3-row set of full rank) add none
  std::printf("constrained derivatives vs finite differences: %d states, worst %.2e\n",
              stats.checked, stats.worst);
}

TEST(ConstrainedDerivatives, FiniteDifferencesWithJointDynamics) {
  // MJCF joint dynamics (armature, springs about springref, dampers; docs/mjcf.md §4) in H, the
  // bias and their derivatives, against the dense KKT oracle (clusterMassMatrix and ceRnea,
  // which model them) on: cd_geared_leg (free pelvis, rotors with armature tied to their joints
  // by embedded gears, springs, dampers) and a tree with free, ball, hinge and slide joints
  // each with armature, spring and damper. (cd_rod_hip is left out: at these states the finite
  // differences of its re-closed solution are noise-limited, with or without joint dynamics:
  // against CE-ABA's own derivatives they miss by 7e-6 at h = 1e-3 and by 8e-4 at h = 1e-5.)
  const std::string tree = writeTempFile("cd_constrained_jd_tree.xml", R"(<mujoco model="jd">
  <worldbody>
    <body name="base" pos="0.1 0 1" euler="10 -20 30">
      <joint name="root" type="free" damping="0.4" armature="0.05"/>
      <geom type="box" size="0.1 0.08 0.05"/>
      <body name="upper" pos="0.1 0.02 0">
        <joint name="shoulder" type="ball" stiffness="2" damping="0.3" armature="0.02"/>
        <geom type="capsule" fromto="0 0 0 0.02 0 -0.3" size="0.04"/>
        <body name="lower" pos="0 0 -0.3">
          <joint name="elbow" axis="0 1 0.2" ref="10" springref="40" stiffness="4"
                 damping="0.2" armature="0.01"/>
          <geom type="capsule" fromto="0 0 0 0 0.02 -0.25" size="0.03"/>
          <body name="tip" pos="0 0 -0.25">
            <joint name="extend" type="slide" axis="0.1 0 1" springref="0.05" stiffness="20"
                   damping="0.5" armature="0.03"/>
            <geom type="sphere" size="0.04"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
)");
  std::mt19937_64 rng(808);
  Stats stats;
  for (const std::string& path : {modelsPath("cd_geared_leg.xml"), tree}) {
    const ClusterModel cm = loadModel(path);
    ASSERT_TRUE(cm.treeModel.hasJointDynamics()) << path;
    for (int variant = 0; variant < 2; ++variant) {
      ConstraintSet set(cm);
      addRandomConstraints(set, cm, rng, 2, std::min(6, cm.ny - 1), variant == 1);
      if (set.rows() == 0) continue;
      checkAgainstFd(path + (variant ? " (Baumgarte, fext)" : ""), cm, set, rng, 2, variant == 1,
                     stats);
    }
  }
  EXPECT_GE(stats.checked, 6);
  std::printf(
      "constrained derivatives with joint dynamics vs finite differences: %d states, "
      "worst %.2e\n",
      stats.checked, stats.worst);
}

TEST(ConstrainedDerivatives, FiniteDifferencesOnQuadrupedFootContacts) {
  const ClusterModel cm = loadModel(modelsPath("cd_quadruped.urdf"));
  std::mt19937_64 rng(7);
  Stats stats;
  for (ConstraintType type : {ConstraintType::Point, ConstraintType::Weld})
    for (ReferenceFrame rf : {ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned}) {
      ConstraintSet set(cm);
      // Four point feet, or one welded foot (a second weld would over-constrain the 3-dof legs).
      for (const char* foot : {"lf_foot", "rf_foot", "lh_foot", "rh_foot"}) {
        set.addContact(foot, type, rf);
        if (type == ConstraintType::Weld) break;
      }
      checkAgainstFd("quadruped feet", cm, set, rng, 2, false, stats);
    }
  // Redundant but consistent at every state: two welds of one foot to the world at different
  // frames (rows related by a constant transform; rank 6 of 12). y_ddot and its derivatives are
  // unique; lambda is not (only y_ddot is compared).
  ConstraintSet redundant(cm);
  for (int k = 0; k < 2; ++k) {
    RigidConstraint c;
    c.name = "weld" + std::to_string(k);
    c.type = ConstraintType::Weld;
    c.body1 = cm.treeModel.frames[cm.treeModel.frameId("lf_foot")].body;
    c.placement1 = randomPose(rng, 0.3);
    c.placement2 = randomPose(rng, 1.0);
    redundant.add(c);
  }
  checkAgainstFd("weld + point on one foot", cm, redundant, rng, 2, true, stats, false);
  std::printf("quadruped feet: worst %.2e\n", stats.worst);
}

TEST(ConstrainedDerivatives, FiniteDifferencesOnGeneratedLoopModels) {
  std::mt19937_64 rng(93);
  Stats stats;
  for (int i = 0; i < 4; ++i) {
    testgen::GeneratorOptions o;
    o.floatingBase = i % 2;
    o.treeLinks = 3;
    o.mechanisms = 2;
    o.robotName = "gen" + std::to_string(i);
    const auto r = testgen::generateLoopModel(rng, o);
    const ClusterModel cm = buildClusterModel(parseUrdfString(r.urdf, o.robotName + ".urdf"));
    ConstraintSet set(cm);
    addRandomConstraints(set, cm, rng, 3, std::min(10, cm.ny - 1), i >= 2);
    if (set.rows() == 0) continue;
    checkAgainstFd(o.robotName, cm, set, rng, 2, i == 3, stats);
  }
  EXPECT_GE(stats.checked, 6);
  std::printf("generated loop models: worst %.2e\n", stats.worst);
}

namespace {

std::vector<std::string> loopFiles() {
  std::vector<std::string> out = {modelsPath("cd_four_bar.urdf"), modelsPath("cd_six_bar.urdf"),
                                  // ball joints in the loops (cut: spherical and revolute rows)
                                  modelsPath("cd_rsu_ankle.urdf"), modelsPath("cd_rsu_leg.urdf"),
                                  modelsPath("cd_delta.urdf"), modelsPath("cd_stewart.urdf")};
  for (const char* rel : {"urdfplus/four_bar.urdf",
                          "urdfplus/benchmarks/parallel_chains/Implicit/depth5/loop_size5.urdf",
                          "urdfplus/benchmarks/variable_four_bar_urdf/four_bar_branch_2_3.urdf"})
    if (std::filesystem::exists(sharedPath(rel))) out.push_back(sharedPath(rel));
  return out;
}

/// Index in `to` of every name of `from` (-1 when absent).
std::vector<int> indexByName(const std::vector<std::string>& from,
                             const std::vector<std::string>& to) {
  std::vector<int> out(from.size(), -1);
  for (size_t i = 0; i < from.size(); ++i)
    for (size_t j = 0; j < to.size(); ++j)
      if (from[i] == to[j]) out[i] = static_cast<int>(j);
  return out;
}

}  // namespace

// Embedded vs cut. The cut model's coordinates are the spanning tree's (ny = nv, no loop
// cluster left); its constrained dynamics q_ddot(q, v, tau) is defined off the loop manifold
// too, and on it equals G y_ddot + g of the embedded model. Moving along the manifold by dy
// (y_dot, tau held) moves the spanning state by dq = G dy, dv = (dv/dy) dy; so
//   d y_ddot / dy = S (dq_ddot/dq G + dq_ddot/dv dv/dy),  d y_ddot / dy_dot = S dq_ddot/dv G,
//   d y_ddot / d tau_y = S dq_ddot/dtau S^T,
// S selecting the independent joints (tau_y acts on the independent joints: G^T S^T = I). G and
// dv/dy come from the embedded model (its cluster derivatives, themselves checked against
// finite differences in test_cluster_derivatives.cpp). The cut sets of planar loops are
// rank-deficient (5 revolute rows, 2 independent): this also exercises the pseudo-inverse.
TEST(ConstrainedDerivatives, EmbeddedEqualsCutLoops) {
  std::mt19937_64 rng(12);
  for (const std::string& path : loopFiles()) {
    SCOPED_TRACE(path);
    const ClusterModel emb = loadModel(path);
    ModelOptions cutAll;
    cutAll.cutLoops = true;
    const ClusterModel cut = loadModel(path, cutAll);
    ASSERT_EQ(cut.ny, cut.treeModel.nv);
    const ConstraintSet set = cutLoopConstraints(cut);
    ClusterData de(emb), dc(cut);
    ClusterDerivativeData dd(emb);
    ConstrainedDerivativeData cdd(cut, set);
    const std::vector<int> toCut =
        indexByName(emb.treeModel.velocityNames, cut.treeModel.velocityNames);
    std::vector<int> qToCut = indexByName(emb.treeModel.positionNames, cut.treeModel.positionNames);
    for (int i : toCut) ASSERT_GE(i, 0);
    const int nv = emb.treeModel.nv, ny = emb.ny;
    for (int trial = 0; trial < 3; ++trial) {
      support::ClosedState st;
      ASSERT_TRUE(support::randomClosedState(emb, de, rng, st, 0.3, 4)) << de.errorMessage();
      const VecX tauY = randomVector(ny, rng, -2, 2);
      ASSERT_EQ(computeCeAbaDerivatives(emb, de, dd, st.q, st.v, tauY), Status::Ok)
          << de.errorMessage();
      MatX G;
      VecX g;
      oracle::globalExplicitForm(emb, de, G, g);
      VecX qc(cut.treeModel.nq), vc(nv), tc = VecX::Zero(nv);
      for (size_t i = 0; i < qToCut.size(); ++i) qc[qToCut[i]] = st.q[i];
      for (int i = 0; i < nv; ++i) vc[toCut[i]] = st.v[i];
      for (int k = 0; k < ny; ++k) tc[toCut[emb.independentVelocity[k]]] = tauY[k];
      ASSERT_EQ(computeConstrainedDynamicsDerivatives(cut, dc, set, cdd, qc, vc, tc), Status::Ok)
          << dc.errorMessage();
      EXPECT_LT(cdd.rank, set.rows() + 1);
      MatX Gc = MatX::Zero(nv, ny), dvdy = MatX::Zero(nv, ny), S = MatX::Zero(ny, nv);
      for (int i = 0; i < nv; ++i) {
        Gc.row(toCut[i]) = G.row(i);
        dvdy.row(toCut[i]) = dd.dv_dy.row(i);
      }
      for (int k = 0; k < ny; ++k) S(k, toCut[emb.independentVelocity[k]]) = 1.0;
      EXPECT_TRUE(isClose(VecX(S * cdd.ydd), de.ydd, 1e-8)) << "trial " << trial;
      const MatX dy = S * (cdd.dydd_dy * Gc + cdd.dydd_dydot * dvdy);
      const MatX dyd = S * cdd.dydd_dydot * Gc;
      const MatX dtau = S * cdd.dydd_dtau * S.transpose();
      // Where H has an eigenvalue below 1e-6 (the delta: its rods' spin, 9e-8), the embedded
      // derivative itself moves by 2e-8 relative when the same state is re-closed at 1e-16:
      // there 1e-7, and the backward error H (dy_cut - dy_embedded) at 1e-9 on every model.
      const double smallest = Eigen::SelfAdjointEigenSolver<MatX>(dd.H).eigenvalues().minCoeff();
      EXPECT_LE(relErr(dy, dd.dydd_dy), smallest < 1e-6 ? 1e-7 : 1e-8) << "trial " << trial;
      EXPECT_LE(relErr(MatX(dd.H * dy), MatX(dd.H * dd.dydd_dy)), 1e-9) << "trial " << trial;
      EXPECT_LE(relErr(dyd, dd.dydd_dydot), 1e-8) << "trial " << trial;
      EXPECT_LE(relErr(dtau, dd.Hinv), 1e-8) << "trial " << trial;
      std::printf("%s: rank %d of %d rows, errors %.1e %.1e %.1e (H-weighted %.1e)\n",
                  std::filesystem::path(path).filename().c_str(), cdd.rank, set.rows(),
                  relErr(dy, dd.dydd_dy), relErr(dyd, dd.dydd_dydot), relErr(dtau, dd.Hinv),
                  relErr(MatX(dd.H * dy), MatX(dd.H * dd.dydd_dy)));
    }
  }
}

// The cut sets themselves against finite differences, in every spanning direction (also off
// the loop manifold, where the rows are violated but the solution is defined): rank-deficient
// (planar loops cut into 5-row revolute constraints), so y_ddot only.
TEST(ConstrainedDerivatives, FiniteDifferencesOnCutLoopSets) {
  std::mt19937_64 rng(31);
  Stats stats;
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  for (const std::string& path : loopFiles()) {
    const ClusterModel cut = loadModel(path, cutAll);
    const ConstraintSet set = cutLoopConstraints(cut);
    checkAgainstFd(std::filesystem::path(path).filename().string() + " (cut)", cut, set, rng, 2,
                   false, stats, false);
  }
  EXPECT_GE(stats.checked, 4);
  std::printf("cut loop sets: %d states, worst %.2e\n", stats.checked, stats.worst);
}

TEST(ConstrainedDerivatives, SolutionMatchesProxPvAndWrenches) {
  const ClusterModel cm = loadModel(modelsPath("cd_belt_leg.urdf"));
  std::mt19937_64 rng(5);
  ConstraintSet set(cm);
  addRandomConstraints(set, cm, rng, 2, 8, false);
  ClusterData data(cm);
  ConstraintData cd(cm, set);
  ConstrainedDerivativeData cdd(cm, set);
  support::ClosedState st;
  ASSERT_TRUE(support::randomClosedState(cm, data, rng, st, 0.6));
  const VecX tau = randomVector(cm.ny, rng);
  ASSERT_EQ(computeConstrainedDynamicsDerivatives(cm, data, set, cdd, st.q, st.v, tau), Status::Ok)
      << data.errorMessage();
  EXPECT_EQ(cdd.rank, set.rows());
  EXPECT_LE(cdd.rowResidual, 1e-9);
  EXPECT_LE(cdd.dynamicsResidual, 1e-9);
  // The acceleration derivative of the rows (eq. K4) mapped by G is the constraint Jacobian.
  MatX G;
  VecX g;
  oracle::globalExplicitForm(cm, data, G, g);
  EXPECT_TRUE(isClose(MatX(cdd.Ra * G), cdd.constraints.jacobian, 1e-12));
  ProximalSettings s;
  s.tolerance = 1e-12;
  s.maxIterations = 200;
  ASSERT_EQ(proxPv(cm, data, set, cd, st.q, st.v, tau, s), Status::Ok) << data.errorMessage();
  EXPECT_TRUE(isClose(cdd.ydd, data.ydd, 1e-8));
  EXPECT_TRUE(isClose(cdd.lambda, cd.lambda, 1e-7));
  // The constraint workspace inside cdd holds the multipliers for constraintWrench.
  for (int j = 0; j < set.size(); ++j)
    EXPECT_TRUE(
        isClose(constraintWrench(set, cdd.constraints, j), constraintWrench(set, cd, j), 1e-7));
}

TEST(ConstrainedDerivatives, EmptySetGivesCeAbaDerivatives) {
  for (const char* f : {"cd_quadruped.urdf", "cd_parallel_walker.urdf"}) {
    const ClusterModel cm = loadModel(modelsPath(f));
    const ConstraintSet none(cm);
    ClusterData data(cm);
    ConstrainedDerivativeData cdd(cm, none);
    ClusterDerivativeData dd(cm);
    std::mt19937_64 rng(3);
    support::ClosedState st;
    ASSERT_TRUE(support::randomClosedState(cm, data, rng, st, 0.5));
    const VecX tau = randomVector(cm.ny, rng);
    ASSERT_EQ(computeConstrainedDynamicsDerivatives(cm, data, none, cdd, st.q, st.v, tau),
              Status::Ok)
        << data.errorMessage();
    ASSERT_EQ(computeCeAbaDerivatives(cm, data, dd, st.q, st.v, tau), Status::Ok);
    EXPECT_EQ(cdd.rank, 0);
    EXPECT_TRUE(isClose(cdd.ydd, dd.ydd, 1e-10)) << f;
    // H of the RSU leg is ill-conditioned: the two y_ddot (Cholesky vs CE-ABA) differ at 1e-10.
    EXPECT_LE(relErr(cdd.dydd_dy, dd.dydd_dy), 1e-8) << f;
    EXPECT_LE(relErr(cdd.dydd_dydot, dd.dydd_dydot), 1e-10) << f;
    EXPECT_LE(relErr(cdd.dydd_dtau, dd.Hinv), 1e-10) << f;
  }
}

TEST(ConstrainedDerivatives, RejectsBadArgumentsAndInconsistentRows) {
  const ClusterModel cm = loadModel(modelsPath("cd_quadruped.urdf"));
  ClusterData data(cm);
  ConstraintSet set(cm), other(cm);
  RigidConstraint c;
  c.name = "a";
  c.type = ConstraintType::Weld;
  c.body1 = 0;  // the trunk welded to the world
  set.add(c);
  other.add(c);
  ConstrainedDerivativeData cdd(cm, set);
  const VecX q = cm.qReference, v = VecX::Zero(cm.treeModel.nv), tau = VecX::Zero(cm.ny);
  EXPECT_EQ(computeConstrainedDynamicsDerivatives(cm, data, set, cdd, q, v, tau), Status::Ok)
      << data.errorMessage();
  EXPECT_EQ(computeConstrainedDynamicsDerivatives(cm, data, other, cdd, q, v, tau),
            Status::WorkspaceMismatch);
  EXPECT_EQ(computeConstrainedDynamicsDerivatives(cm, data, set, cdd, q, v, VecX::Zero(3)),
            Status::InvalidSize);
  EXPECT_NE(std::string(data.errorMessage()).find("tauY"), std::string::npos);
  VecX qn = q;
  qn[2] = std::nan("");
  EXPECT_EQ(computeConstrainedDynamicsDerivatives(cm, data, set, cdd, qn, v, tau),
            Status::NonFinite);
  ConstrainedDerivativeSettings bad;
  bad.rankTolerance = 0.0;
  EXPECT_EQ(computeConstrainedDynamicsDerivatives(cm, data, set, cdd, q, v, tau, nullptr, bad),
            Status::InvalidArgument);
  EXPECT_NE(std::string(data.errorMessage()).find("rankTolerance"), std::string::npos);
  // A weld with a Baumgarte target plus the same weld without: no acceleration meets both.
  ConstraintSet clash(cm);
  clash.add(c);
  c.name = "b";
  c.placement2.p = Vec3(0.0, 0.0, 0.3);  // phi != 0
  c.kp = 10.0;
  clash.add(c);
  ConstrainedDerivativeData cddClash(cm, clash);
  EXPECT_EQ(computeConstrainedDynamicsDerivatives(cm, data, clash, cddClash, q, v, tau),
            Status::ConstraintFailure);
  EXPECT_NE(std::string(data.errorMessage()).find("inconsistent"), std::string::npos)
      << data.errorMessage();
  // The workspace is usable after the failures.
  EXPECT_EQ(computeConstrainedDynamicsDerivatives(cm, data, set, cdd, q, v, tau), Status::Ok);
}

}  // namespace clusterdyn::test
