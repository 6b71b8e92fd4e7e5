// Property tests of the spanning-tree algorithms (forward kinematics, RNEA, ABA, CRBA, frame
// Jacobians, energy) on random trees (fixed and floating base, every joint type, fused links,
// programmatic and loaded from URDF text) and on the shared tree models. Each identity is
// derived from the equations of motion, not from another code path of the library:
//   * tau = M(q) ddq + C(q, v) v + g(q) - sum_i J_i^T f_i                  (RNEA, ABA, CRBA)
//   * d/dt (T + V) = v^T tau,  d/dt T = v^T (tau - g),  d/dt V = v^T g        (power balance)
//   * J(q) = d(frame pose)/d(q (+) h e_k),  frame velocity = J v               (kinematics)
//   * g(q) = dV/d(q (+) h e_k)                                                 (gravity)
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "test_models.hpp"
#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

constexpr double kTol = 1e-9;
constexpr int kStatesPerModel = 5;

struct NamedModel {
  std::string name;
  Model model;
};

/// The models every property is checked on (built once).
const std::vector<NamedModel>& allModels() {
  static const std::vector<NamedModel> models = [] {
    std::vector<NamedModel> out;
    for (const std::string& path : sharedTreeModelFiles())
      out.push_back({path.substr(path.find_last_of('/') + 1), loadTreeModel(path)});
    for (const std::string& path : bundledTreeModelFiles())
      out.push_back({path.substr(path.find_last_of('/') + 1), loadTreeModel(path)});
    std::mt19937_64 rng(20240611);
    struct Kind {
      const char* name;
      RandomModelOptions options;
      int count;
    };
    std::vector<Kind> kinds;
    {
      RandomModelOptions o;  // revolute chain
      o.nbodies = 7;
      o.branchProbability = 0.0;
      o.prismaticWeight = o.sphericalWeight = o.planarWeight = 0.0;
      kinds.push_back({"revolute_chain", o, 3});
    }
    {
      RandomModelOptions o;  // chain of every joint type
      o.nbodies = 8;
      o.branchProbability = 0.0;
      kinds.push_back({"mixed_chain", o, 3});
    }
    {
      RandomModelOptions o;  // branching tree, fused links, fixed base
      o.nbodies = 9;
      o.branchProbability = 0.5;
      o.fixedLinkProbability = 0.3;
      kinds.push_back({"mixed_tree_fused", o, 4});
    }
    {
      RandomModelOptions o;  // floating-base branching tree
      o.nbodies = 10;
      o.floatingBase = true;
      o.branchProbability = 0.5;
      o.fixedLinkProbability = 0.2;
      kinds.push_back({"floating_tree", o, 4});
    }
    {
      RandomModelOptions o;  // floating base + revolute legs (robot-like)
      o.nbodies = 13;
      o.floatingBase = true;
      o.branchProbability = 0.3;
      o.prismaticWeight = o.sphericalWeight = o.planarWeight = 0.0;
      kinds.push_back({"floating_revolute_tree", o, 2});
    }
    {
      RandomModelOptions o;  // multi-dof joints only
      o.nbodies = 5;
      o.revoluteWeight = o.prismaticWeight = 0.0;
      o.branchProbability = 0.3;
      kinds.push_back({"spherical_planar", o, 2});
    }
    {
      RandomModelOptions o;  // single floating body
      o.nbodies = 1;
      o.floatingBase = true;
      kinds.push_back({"free_body", o, 1});
    }
    for (const Kind& k : kinds)
      for (int i = 0; i < 2 * k.count; ++i) {
        Model m = randomTreeModel(rng, k.options);
        // Every other model gets a gravity vector in an arbitrary direction.
        if (i % 2 == 1) m.gravity = randomUnitVector(rng) * 9.81;
        out.push_back({std::string(k.name) + "_" + std::to_string(i), std::move(m)});
      }
    // The same kinds of mechanisms loaded from URDF text (end-to-end through the parser).
    for (const Kind& k : kinds) {
      const std::string urdf = randomUrdfString(rng, k.options);
      out.push_back({std::string("urdf_") + k.name,
                     buildTreeModel(parseUrdfString(urdf, std::string(k.name) + ".urdf"))});
    }
    return out;
  }();
  return models;
}

/// Runs body(model, rng) on every model with a trace naming it.
template <typename F>
void forEachModel(F&& body) {
  std::mt19937_64 rng(7);
  for (const NamedModel& nm : allModels()) {
    SCOPED_TRACE("model " + nm.name + " (nv " + std::to_string(nm.model.nv) + ")");
    body(nm.model, rng);
  }
}

MatX massMatrix(const Model& model, Data& data, const VecX& q) {
  EXPECT_EQ(crba(model, data, q), Status::Ok) << data.errorMessage();
  return data.M;
}

TEST(TreeAlgorithms, ModelCollectionIsDiverse) {
  int floating = 0, fixedBase = 0, fused = 0;
  bool types[5] = {false, false, false, false, false};
  for (const NamedModel& nm : allModels()) {
    const Model& m = nm.model;
    (m.nbodies > 0 && m.joints[0].type == JointType::Floating ? floating : fixedBase)++;
    for (const Frame& f : m.frames)
      if (!f.isBody && f.body >= 0) ++fused;
    for (const Joint& j : m.joints) types[static_cast<int>(j.type)] = true;
  }
  EXPECT_GE(floating, 5);
  EXPECT_GE(fixedBase, 5);
  EXPECT_GE(fused, 5);
  for (int t = 0; t < 5; ++t) EXPECT_TRUE(types[t]) << "no joint of type " << t;
  EXPECT_GE(allModels().size(), 20u);
}

TEST(TreeAlgorithms, RneaOfAbaIsTau) {
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    for (int s = 0; s < kStatesPerModel; ++s) {
      const RandomState st = randomState(model, rng);
      ASSERT_EQ(aba(model, data, st.q, st.v, st.tau), Status::Ok) << data.errorMessage();
      const VecX ddq = data.ddq;
      ASSERT_EQ(rnea(model, data, st.q, st.v, ddq), Status::Ok) << data.errorMessage();
      EXPECT_TRUE(isClose(data.tau, st.tau, kTol));
      // And the other way round: ABA(RNEA(a)) = a.
      ASSERT_EQ(rnea(model, data, st.q, st.v, st.a), Status::Ok);
      const VecX tau = data.tau;
      ASSERT_EQ(aba(model, data, st.q, st.v, tau), Status::Ok);
      EXPECT_TRUE(isClose(data.ddq, st.a, kTol));
    }
  });
}

TEST(TreeAlgorithms, CrbaEqualsRneaColumnsAndIsSymmetricPositiveDefinite) {
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    for (int s = 0; s < kStatesPerModel; ++s) {
      const RandomState st = randomState(model, rng);
      ASSERT_EQ(nonLinearEffects(model, data, st.q, st.v), Status::Ok);
      const VecX nle = data.nle;
      // nle = rnea(q, v, 0).
      ASSERT_EQ(rnea(model, data, st.q, st.v, VecX::Zero(model.nv)), Status::Ok);
      EXPECT_TRUE(isClose(data.tau, nle, kTol));
      MatX Mrnea(model.nv, model.nv);
      for (int j = 0; j < model.nv; ++j) {
        const VecX e = VecX::Unit(model.nv, j);
        ASSERT_EQ(rnea(model, data, st.q, st.v, e), Status::Ok);
        Mrnea.col(j) = data.tau - nle;
      }
      const MatX M = massMatrix(model, data, st.q);
      EXPECT_TRUE(isClose(M, Mrnea, kTol));
      // Off-diagonal blocks are mirrored exactly; the diagonal blocks of multi-dof joints are
      // S^T Ic S evaluated in floating point, symmetric to rounding.
      EXPECT_LE(relativeError(M, M.transpose()), 1e-15) << "M is not symmetric";
      Eigen::SelfAdjointEigenSolver<MatX> es(M);
      EXPECT_GT(es.eigenvalues().minCoeff(), 0.0) << "M not positive definite";
    }
  });
}

TEST(TreeAlgorithms, AbaEqualsInverseMassMatrixTimesTauMinusNle) {
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    for (int s = 0; s < kStatesPerModel; ++s) {
      const RandomState st = randomState(model, rng);
      const MatX M = massMatrix(model, data, st.q);
      ASSERT_EQ(nonLinearEffects(model, data, st.q, st.v), Status::Ok);
      const VecX expected = M.llt().solve(st.tau - data.nle);
      ASSERT_EQ(aba(model, data, st.q, st.v, st.tau), Status::Ok);
      EXPECT_TRUE(isClose(data.ddq, expected, kTol));
    }
  });
}

TEST(TreeAlgorithms, GeneralizedGravityIsRneaAtRest) {
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    const RandomState st = randomState(model, rng);
    const VecX zero = VecX::Zero(model.nv);
    ASSERT_EQ(rnea(model, data, st.q, zero, zero), Status::Ok);
    const VecX tau = data.tau;
    ASSERT_EQ(generalizedGravity(model, data, st.q), Status::Ok);
    EXPECT_TRUE(isClose(data.nle, tau, kTol));
    // Zero gravity: g(q) = 0 and nle = C(q, v) v only.
    Model m0 = model;
    m0.gravity.setZero();
    Data d0(m0);
    ASSERT_EQ(generalizedGravity(m0, d0, st.q), Status::Ok);
    EXPECT_LE(d0.nle.cwiseAbs().maxCoeff(), 1e-12);
    ASSERT_EQ(nonLinearEffects(m0, d0, st.q, st.v), Status::Ok);
    ASSERT_EQ(nonLinearEffects(model, data, st.q, st.v), Status::Ok);
    EXPECT_TRUE(isClose(VecX(data.nle - tau), d0.nle, kTol));
  });
}

/// sum_i J_i^T f_i with J_i the Local Jacobian of body i's own frame (forces in body frames).
VecX jacobianTransposeForces(const Model& model, Data& data, const VecX& q,
                             const std::vector<Force>& fext) {
  VecX tau = VecX::Zero(model.nv);
  Mat6X J(6, model.nv);
  EXPECT_EQ(forwardKinematics(model, data, q), Status::Ok);
  for (int i = 0; i < model.nbodies; ++i) {
    const int fid = bodyFrameId(model, i);
    EXPECT_GE(fid, 0) << "body " << i << " has no frame";
    if (fid < 0) continue;
    EXPECT_EQ(frameJacobian(model, data, fid, ReferenceFrame::Local, J), Status::Ok);
    tau += J.transpose() * fext[i];
  }
  return tau;
}

TEST(TreeAlgorithms, ExternalForcesMatchJacobianTranspose) {
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    for (int s = 0; s < kStatesPerModel; ++s) {
      const RandomState st = randomState(model, rng);
      const std::vector<Force> fext = randomForces(model, rng, 2.0);
      const VecX tauExt = jacobianTransposeForces(model, data, st.q, fext);
      // ABA with fext == ABA with tau + J^T f.
      ASSERT_EQ(aba(model, data, st.q, st.v, st.tau, fext.data()), Status::Ok);
      const VecX ddqF = data.ddq;
      ASSERT_EQ(aba(model, data, st.q, st.v, VecX(st.tau + tauExt)), Status::Ok);
      EXPECT_TRUE(isClose(ddqF, data.ddq, kTol));
      // RNEA with fext inverts ABA with fext.
      ASSERT_EQ(rnea(model, data, st.q, st.v, ddqF, fext.data()), Status::Ok);
      EXPECT_TRUE(isClose(data.tau, st.tau, kTol));
      // RNEA with fext == RNEA - J^T f.
      ASSERT_EQ(rnea(model, data, st.q, st.v, st.a), Status::Ok);
      const VecX tauFree = data.tau;
      ASSERT_EQ(rnea(model, data, st.q, st.v, st.a, fext.data()), Status::Ok);
      EXPECT_TRUE(isClose(data.tau, VecX(tauFree - tauExt), kTol));
      // A zero force array behaves like no array.
      const std::vector<Force> zeros(model.nbodies, Force::Zero());
      ASSERT_EQ(rnea(model, data, st.q, st.v, st.a, zeros.data()), Status::Ok);
      EXPECT_TRUE(isClose(data.tau, tauFree, 1e-14));
    }
  });
}

TEST(TreeAlgorithms, ExternalForceOnSingleBodyIsLocalized) {
  // A force on body i only produces generalized forces on the joints supporting i.
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    const RandomState st = randomState(model, rng);
    const VecX zero = VecX::Zero(model.nv);
    ASSERT_EQ(rnea(model, data, st.q, zero, zero), Status::Ok);
    const VecX g = data.tau;
    const int body = std::uniform_int_distribution<int>(0, model.nbodies - 1)(rng);
    std::vector<Force> fext(model.nbodies, Force::Zero());
    fext[body] = randomVector(6, rng);
    ASSERT_EQ(rnea(model, data, st.q, zero, zero, fext.data()), Status::Ok);
    std::vector<bool> supports(model.nbodies, false);
    for (int j = body; j >= 0; j = model.parent[j]) supports[j] = true;
    for (int k = 0; k < model.nv; ++k)
      if (!supports[model.velocityOwner[k]]) {
        EXPECT_EQ(data.tau[k], g[k]) << "coordinate " << k << " does not support body " << body;
      }
  });
}

/// Total, kinetic and potential energy at q (+) (t v + t^2/2 ddq), v + t ddq.
struct Energies {
  double T, V;
};
Energies energiesAt(const Model& model, Data& data, const VecX& q, const VecX& v, const VecX& ddq,
                    double t) {
  const VecX qt = integrate(model, q, VecX(t * v + 0.5 * t * t * ddq), 1.0);
  const VecX vt = v + t * ddq;
  return {kineticEnergy(model, data, qt, vt), potentialEnergy(model, data, qt)};
}

TEST(TreeAlgorithms, EnergyRateEqualsActuatorPower) {
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    for (int s = 0; s < kStatesPerModel; ++s) {
      const RandomState st = randomState(model, rng);
      ASSERT_EQ(aba(model, data, st.q, st.v, st.tau), Status::Ok);
      const VecX ddq = data.ddq;
      ASSERT_EQ(generalizedGravity(model, data, st.q), Status::Ok);
      const VecX g = data.nle;
      // Central differences with step h and h/2 combined by Richardson extrapolation (the
      // central difference is even in h, so the h^2 terms cancel).
      auto rates = [&](double h) {
        const Energies ep = energiesAt(model, data, st.q, st.v, ddq, h);
        const Energies em = energiesAt(model, data, st.q, st.v, ddq, -h);
        return std::make_pair((ep.T - em.T) / (2 * h), (ep.V - em.V) / (2 * h));
      };
      const double h = 1e-4;
      const auto r1 = rates(h), r2 = rates(h / 2);
      const double dT = (4 * r2.first - r1.first) / 3, dV = (4 * r2.second - r1.second) / 3;
      const Energies e0 = energiesAt(model, data, st.q, st.v, ddq, 0.0);
      // Finite differences lose about |E| eps / h; compare relative to the energy scale.
      const double scale = 1.0 + std::abs(e0.T) + std::abs(e0.V);
      EXPECT_TRUE(isCloseScalar(dT + dV, st.v.dot(st.tau), 1e-8, scale)) << "d(T+V)/dt";
      EXPECT_TRUE(isCloseScalar(dT, st.v.dot(st.tau - g), 1e-8, scale)) << "dT/dt";
      EXPECT_TRUE(isCloseScalar(dV, st.v.dot(g), 1e-8, scale)) << "dV/dt";
      // Kinetic energy is 1/2 v^T M v.
      const MatX M = massMatrix(model, data, st.q);
      EXPECT_TRUE(
          isCloseScalar(kineticEnergy(model, data, st.q, st.v), 0.5 * st.v.dot(M * st.v), 1e-12));
      EXPECT_EQ(data.kineticEnergy, kineticEnergy(model, data, st.q, st.v));
    }
  });
}

TEST(TreeAlgorithms, PotentialEnergyMatchesCenterOfMass) {
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    const VecX q = randomConfiguration(model, rng);
    const double V = potentialEnergy(model, data, q);
    const Vec3 com = centerOfMass(model, data);
    EXPECT_TRUE(isCloseScalar(V, -model.totalMass() * model.gravity.dot(com), 1e-12));
    EXPECT_EQ(data.potentialEnergy, V);
  });
}

TEST(TreeAlgorithms, GeneralizedGravityIsGradientOfPotentialEnergy) {
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    const double h = 1e-5;
    const VecX q = randomConfiguration(model, rng);
    ASSERT_EQ(generalizedGravity(model, data, q), Status::Ok);
    const VecX g = data.nle;
    VecX fd(model.nv);
    for (int k = 0; k < model.nv; ++k) {
      const VecX e = VecX::Unit(model.nv, k);
      fd[k] = (potentialEnergy(model, data, integrate(model, q, e, h)) -
               potentialEnergy(model, data, integrate(model, q, e, -h))) /
              (2 * h);
    }
    EXPECT_TRUE(isClose(g, fd, 1e-8, 1.0 + std::abs(potentialEnergy(model, data, q))));
  });
}

TEST(TreeAlgorithms, JacobianTimesVelocityIsFrameVelocity) {
  const ReferenceFrame rfs[] = {ReferenceFrame::Local, ReferenceFrame::World,
                                ReferenceFrame::LocalWorldAligned};
  int fusedChecked = 0;
  forEachModel([&](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    Mat6X J(6, model.nv), J2(6, model.nv);
    const RandomState st = randomState(model, rng);
    ASSERT_EQ(forwardKinematics(model, data, st.q, st.v), Status::Ok);
    for (int fid = 0; fid < static_cast<int>(model.frames.size()); ++fid) {
      const Frame& f = model.frames[fid];
      SCOPED_TRACE("frame " + f.name);
      if (!f.isBody && f.body >= 0) ++fusedChecked;
      for (ReferenceFrame rf : rfs) {
        ASSERT_EQ(frameJacobian(model, data, fid, rf, J), Status::Ok) << data.errorMessage();
        const Motion vf = frameVelocity(model, data, fid, rf);
        EXPECT_TRUE(isClose(J * st.v, vf, kTol)) << "rf " << static_cast<int>(rf);
        // computeFrameJacobian = forwardKinematics + frameJacobian.
        ASSERT_EQ(computeFrameJacobian(model, data, st.q, fid, rf, J2), Status::Ok);
        EXPECT_EQ(relativeError(J, J2), 0.0);
      }
      // The three expressions of one velocity are consistent with the frame placement.
      const Transform oMf = framePlacement(model, data, fid);
      const Motion vl = frameVelocity(model, data, fid, ReferenceFrame::Local);
      const Motion vw = frameVelocity(model, data, fid, ReferenceFrame::World);
      const Motion va = frameVelocity(model, data, fid, ReferenceFrame::LocalWorldAligned);
      EXPECT_TRUE(isClose(Vec3(oMf.R * vl.head<3>()), Vec3(va.head<3>()), kTol));
      EXPECT_TRUE(isClose(Vec3(oMf.R * vl.tail<3>()), Vec3(va.tail<3>()), kTol));
      EXPECT_TRUE(isClose(Vec3(va.head<3>()), Vec3(vw.head<3>()), kTol));
      // World linear part: velocity of the point at the world origin, v_O = v_f - w x p_f.
      EXPECT_TRUE(
          isClose(Vec3(vw.tail<3>()), Vec3(va.tail<3>() - va.head<3>().cross(oMf.p)), kTol));
    }
  });
  EXPECT_GT(fusedChecked, 5);
}

TEST(TreeAlgorithms, JacobianColumnsMatchFiniteDifferencesOfFramePlacement) {
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    Mat6X Jl(6, model.nv), Jw(6, model.nv), Ja(6, model.nv);
    const double h = 1e-5, tol = 1e-8;
    const VecX q = randomConfiguration(model, rng);
    // Frames to check: all bodies' frames and every fused frame.
    for (int fid = 0; fid < static_cast<int>(model.frames.size()); ++fid) {
      SCOPED_TRACE("frame " + model.frames[fid].name);
      ASSERT_EQ(forwardKinematics(model, data, q), Status::Ok);
      ASSERT_EQ(frameJacobian(model, data, fid, ReferenceFrame::Local, Jl), Status::Ok);
      ASSERT_EQ(frameJacobian(model, data, fid, ReferenceFrame::World, Jw), Status::Ok);
      ASSERT_EQ(frameJacobian(model, data, fid, ReferenceFrame::LocalWorldAligned, Ja), Status::Ok);
      const Transform X0 = framePlacement(model, data, fid);
      Mat6X Fl(6, model.nv), Fw(6, model.nv), Fa(6, model.nv);
      for (int k = 0; k < model.nv; ++k) {
        const VecX e = VecX::Unit(model.nv, k);
        ASSERT_EQ(forwardKinematics(model, data, integrate(model, q, e, h)), Status::Ok);
        const Transform Xp = framePlacement(model, data, fid);
        ASSERT_EQ(forwardKinematics(model, data, integrate(model, q, e, -h)), Status::Ok);
        const Transform Xm = framePlacement(model, data, fid);
        const Vec3 wLocal =
            (rotationLog(X0.R.transpose() * Xp.R) - rotationLog(X0.R.transpose() * Xm.R)) / (2 * h);
        const Vec3 pdot = (Xp.p - Xm.p) / (2 * h);
        const Vec3 wWorld = X0.R * wLocal;
        Fl.col(k) << wLocal, X0.R.transpose() * pdot;
        Fa.col(k) << wWorld, pdot;
        Fw.col(k) << wWorld, pdot - wWorld.cross(X0.p);
      }
      EXPECT_TRUE(isClose(Jl, Fl, tol)) << "Local";
      EXPECT_TRUE(isClose(Ja, Fa, tol)) << "LocalWorldAligned";
      EXPECT_TRUE(isClose(Jw, Fw, tol)) << "World";
    }
  });
}

TEST(TreeAlgorithms, FrameAccelerationsMatchFiniteDifferencesOfVelocity) {
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    const double h = 1e-5, tol = 1e-7;
    const RandomState st = randomState(model, rng);
    const int nf = static_cast<int>(model.frames.size());
    auto stateAt = [&](double t) {
      const VecX qt = integrate(model, st.q, VecX(t * st.v + 0.5 * t * t * st.a), 1.0);
      const VecX vt = st.v + t * st.a;
      EXPECT_EQ(forwardKinematics(model, data, qt, vt), Status::Ok);
    };
    std::vector<Motion> vlP(nf), vlM(nf), vwP(nf), vwM(nf), vaP(nf), vaM(nf);
    stateAt(h);
    for (int f = 0; f < nf; ++f) {
      vlP[f] = frameVelocity(model, data, f, ReferenceFrame::Local);
      vwP[f] = frameVelocity(model, data, f, ReferenceFrame::World);
      vaP[f] = frameVelocity(model, data, f, ReferenceFrame::LocalWorldAligned);
    }
    stateAt(-h);
    for (int f = 0; f < nf; ++f) {
      vlM[f] = frameVelocity(model, data, f, ReferenceFrame::Local);
      vwM[f] = frameVelocity(model, data, f, ReferenceFrame::World);
      vaM[f] = frameVelocity(model, data, f, ReferenceFrame::LocalWorldAligned);
    }
    ASSERT_EQ(forwardKinematics(model, data, st.q, st.v, st.a), Status::Ok);
    for (int f = 0; f < nf; ++f) {
      SCOPED_TRACE("frame " + model.frames[f].name);
      const Mat3 R = framePlacement(model, data, f).R;
      // Classical acceleration = d/dt of the frame origin's world velocity.
      const Vec3 pdd = (vaP[f].tail<3>() - vaM[f].tail<3>()) / (2 * h);
      EXPECT_TRUE(isClose(
          frameClassicalAcceleration(model, data, f, ReferenceFrame::LocalWorldAligned), pdd, tol));
      EXPECT_TRUE(
          isClose(frameClassicalAcceleration(model, data, f, ReferenceFrame::World), pdd, tol));
      EXPECT_TRUE(isClose(frameClassicalAcceleration(model, data, f, ReferenceFrame::Local),
                          Vec3(R.transpose() * pdd), tol));
      // Spatial acceleration = d/dt of the spatial velocity in Local and in World coordinates.
      EXPECT_TRUE(isClose(frameAcceleration(model, data, f, ReferenceFrame::Local),
                          Motion((vlP[f] - vlM[f]) / (2 * h)), tol));
      EXPECT_TRUE(isClose(frameAcceleration(model, data, f, ReferenceFrame::World),
                          Motion((vwP[f] - vwM[f]) / (2 * h)), tol));
      // Angular part of the LocalWorldAligned acceleration is the world angular acceleration.
      EXPECT_TRUE(isClose(
          Vec3(frameAcceleration(model, data, f, ReferenceFrame::LocalWorldAligned).head<3>()),
          Vec3((vaP[f].head<3>() - vaM[f].head<3>()) / (2 * h)), tol));
    }
  });
}

TEST(TreeAlgorithms, AbaBodyAccelerationsMatchForwardKinematics) {
  // aba leaves data.a = body accelerations (gravity excluded) for the computed ddq.
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model), data2(model);
    const RandomState st = randomState(model, rng);
    ASSERT_EQ(aba(model, data, st.q, st.v, st.tau), Status::Ok);
    ASSERT_EQ(forwardKinematics(model, data2, st.q, st.v, data.ddq), Status::Ok);
    for (int i = 0; i < model.nbodies; ++i) {
      EXPECT_TRUE(isClose(data.a[i], data2.a[i], kTol)) << "body " << i;
      EXPECT_TRUE(isClose(data.v[i], data2.v[i], kTol)) << "body " << i;
      EXPECT_TRUE(isClose(data.oMi[i].R, data2.oMi[i].R, 1e-14)) << "body " << i;
      EXPECT_TRUE(isClose(data.oMi[i].p, data2.oMi[i].p, 1e-14)) << "body " << i;
    }
  });
}

TEST(TreeAlgorithms, ForwardKinematicsComposesJointTransforms) {
  // oMi = oM(parent) * jointPlacement * X_J(q), written out from the joint definitions.
  forEachModel([](const Model& model, std::mt19937_64& rng) {
    Data data(model);
    const VecX q = randomConfiguration(model, rng);
    ASSERT_EQ(forwardKinematics(model, data, q), Status::Ok);
    for (int i = 0; i < model.nbodies; ++i) {
      const Joint& j = model.joints[i];
      const double* qi = q.data() + model.idx_q[i];
      Transform XJ;
      switch (j.type) {
        case JointType::Revolute:
          XJ.R = Eigen::AngleAxisd(qi[0], j.axis).toRotationMatrix();
          break;
        case JointType::Prismatic:
          XJ.p = qi[0] * j.axis;
          break;
        case JointType::Spherical:
          XJ.R = Eigen::Quaterniond(qi[3], qi[0], qi[1], qi[2]).toRotationMatrix();
          break;
        case JointType::Planar:
          XJ.R = Eigen::AngleAxisd(qi[2], j.axis).toRotationMatrix();
          XJ.p = qi[0] * j.t1 + qi[1] * j.t2;
          break;
        case JointType::Floating:
          XJ.R = Eigen::Quaterniond(qi[6], qi[3], qi[4], qi[5]).toRotationMatrix();
          XJ.p = Vec3(qi[0], qi[1], qi[2]);
          break;
        case JointType::Fixed:
          break;
      }
      const Transform parent = model.parent[i] >= 0 ? data.oMi[model.parent[i]] : Transform();
      const Transform expected = parent * model.jointPlacement[i] * XJ;
      EXPECT_TRUE(isClose(data.oMi[i].R, expected.R, 1e-12)) << "body " << i;
      EXPECT_TRUE(isClose(data.oMi[i].p, expected.p, 1e-12)) << "body " << i;
      if (j.type == JointType::Planar) {
        EXPECT_NEAR(j.t1.cross(j.t2).dot(j.axis), 1.0, 1e-12);
        EXPECT_NEAR(j.t1.dot(j.axis), 0.0, 1e-12);
      }
    }
  });
}

// Both joints about z, link2's centre of mass on joint 2's axis at 0.1 m from joint 1:
// M = [[Izz1 + Izz2 + m2 l^2, Izz2], [Izz2, Izz2]] for every q, and g(q) = 0 (axes vertical).
void checkDoublePendulumByHand(const Model& model) {
  Data data(model);
  std::mt19937_64 rng(3);
  MatX expected(2, 2);
  expected << 0.01 + 0.2 + 1.0 * 0.1 * 0.1, 0.2, 0.2, 0.2;
  for (int s = 0; s < 5; ++s) {
    const VecX q = randomConfiguration(model, rng, 3.0);
    EXPECT_TRUE(isClose(massMatrix(model, data, q), expected, 1e-14));
    ASSERT_EQ(generalizedGravity(model, data, q), Status::Ok);
    EXPECT_LE(data.nle.cwiseAbs().maxCoeff(), 1e-14);
  }
}

// The bundled double pendulum (support/test_models.hpp) with the same inertias as the shared one.
TEST(TreeAlgorithms, DoublePendulumMassMatrixByHand) {
  checkDoublePendulumByHand(buildTreeModel(parseUrdfString(support::kVerticalDoublePendulumUrdf)));
}

TEST(TreeAlgorithms, SharedDoublePendulumMassMatrixByHand) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(sharedPath("urdfplus/double_pendulum.urdf"));
  checkDoublePendulumByHand(loadTreeModel(sharedPath("urdfplus/double_pendulum.urdf")));
}

// ---------------------------------------------------------------------------------------------
// Status codes.

class StatusCodes : public ::testing::Test {
 protected:
  static Model floatingModel() {
    std::mt19937_64 rng(11);
    RandomModelOptions o;
    o.nbodies = 6;
    o.floatingBase = true;
    o.sphericalWeight = 2.0;
    return randomTreeModel(rng, o);
  }
  void SetUp() override {
    model_ = floatingModel();
    std::mt19937_64 rng(12);
    st_ = randomState(model_, rng);
    fext_ = randomForces(model_, rng);
  }
  /// A failed call: the status, a non-empty message containing every fragment.
  static ::testing::AssertionResult failed(Status got, Status expected, const Data& data,
                                           std::initializer_list<const char*> fragments) {
    if (got != expected)
      return ::testing::AssertionFailure()
             << "status " << statusName(got) << ", expected " << statusName(expected)
             << " (message '" << data.errorMessage() << "')";
    const std::string msg = data.errorMessage();
    if (msg.empty()) return ::testing::AssertionFailure() << "empty error message";
    for (const char* f : fragments)
      if (msg.find(f) == std::string::npos)
        return ::testing::AssertionFailure() << "message '" << msg << "' lacks '" << f << "'";
    return ::testing::AssertionSuccess() << msg;
  }
  /// After failures the workspace still computes the same results as a fresh one.
  void expectWorkspaceStillWorks(Data& data) {
    Data fresh(model_);
    ASSERT_EQ(aba(model_, data, st_.q, st_.v, st_.tau, fext_.data()), Status::Ok);
    EXPECT_STREQ(data.errorMessage(), "");
    ASSERT_EQ(aba(model_, fresh, st_.q, st_.v, st_.tau, fext_.data()), Status::Ok);
    EXPECT_EQ(relativeError(data.ddq, fresh.ddq), 0.0);
    ASSERT_EQ(rnea(model_, data, st_.q, st_.v, st_.a), Status::Ok);
    ASSERT_EQ(rnea(model_, fresh, st_.q, st_.v, st_.a), Status::Ok);
    EXPECT_EQ(relativeError(data.tau, fresh.tau), 0.0);
    ASSERT_EQ(crba(model_, data, st_.q), Status::Ok);
    ASSERT_EQ(crba(model_, fresh, st_.q), Status::Ok);
    EXPECT_EQ(relativeError(data.M, fresh.M), 0.0);
  }
  Model model_;
  RandomState st_;
  std::vector<Force> fext_;
};

TEST_F(StatusCodes, WrongSizes) {
  Data data(model_);
  const int nq = model_.nq, nv = model_.nv;
  const VecX qBad = VecX::Zero(nq - 1), qLong = VecX::Zero(nq + 1);
  const VecX vBad = VecX::Zero(nv + 1);
  const VecX& q = st_.q;
  const VecX& v = st_.v;
  const VecX& a = st_.a;
  const VecX& tau = st_.tau;
  EXPECT_TRUE(failed(forwardKinematics(model_, data, qBad), Status::InvalidSize, data, {"q"}));
  EXPECT_TRUE(failed(forwardKinematics(model_, data, qLong), Status::InvalidSize, data,
                     {"q", std::to_string(nq + 1).c_str(), std::to_string(nq).c_str()}));
  EXPECT_TRUE(failed(forwardKinematics(model_, data, q, vBad), Status::InvalidSize, data, {"v"}));
  EXPECT_TRUE(
      failed(forwardKinematics(model_, data, q, v, vBad), Status::InvalidSize, data, {"a"}));
  EXPECT_TRUE(
      failed(forwardKinematics(model_, data, qBad, v, a), Status::InvalidSize, data, {"q"}));
  EXPECT_TRUE(failed(rnea(model_, data, qBad, v, a), Status::InvalidSize, data, {"q"}));
  EXPECT_TRUE(failed(rnea(model_, data, q, vBad, a), Status::InvalidSize, data, {"v"}));
  EXPECT_TRUE(failed(rnea(model_, data, q, v, vBad), Status::InvalidSize, data, {"a"}));
  EXPECT_TRUE(failed(nonLinearEffects(model_, data, q, vBad), Status::InvalidSize, data, {"v"}));
  EXPECT_TRUE(failed(nonLinearEffects(model_, data, qBad, v), Status::InvalidSize, data, {"q"}));
  EXPECT_TRUE(failed(generalizedGravity(model_, data, qBad), Status::InvalidSize, data, {"q"}));
  EXPECT_TRUE(failed(aba(model_, data, qBad, v, tau), Status::InvalidSize, data, {"q"}));
  EXPECT_TRUE(failed(aba(model_, data, q, vBad, tau), Status::InvalidSize, data, {"v"}));
  EXPECT_TRUE(failed(aba(model_, data, q, v, vBad), Status::InvalidSize, data, {"tau"}));
  EXPECT_TRUE(failed(crba(model_, data, qBad), Status::InvalidSize, data, {"q"}));
  Mat6X Jbad(6, nv - 1), J(6, nv);
  ASSERT_EQ(forwardKinematics(model_, data, q), Status::Ok);
  EXPECT_TRUE(failed(frameJacobian(model_, data, 1, ReferenceFrame::Local, Jbad),
                     Status::InvalidSize, data, {"J"}));
  EXPECT_TRUE(failed(computeFrameJacobian(model_, data, qBad, 1, ReferenceFrame::Local, J),
                     Status::InvalidSize, data, {"q"}));
  EXPECT_TRUE(std::isnan(kineticEnergy(model_, data, q, vBad)));
  EXPECT_NE(std::string(data.errorMessage()), "");
  EXPECT_TRUE(std::isnan(potentialEnergy(model_, data, qBad)));
  EXPECT_NE(std::string(data.errorMessage()), "");
  expectWorkspaceStillWorks(data);
}

TEST_F(StatusCodes, NonFiniteInputs) {
  Data data(model_);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // A 1-dof coordinate (not a quaternion) of q, so the finiteness check is what fires.
  int k1 = -1;
  for (int i = 0; i < model_.nbodies && k1 < 0; ++i)
    if (model_.joints[i].nq == 1) k1 = model_.idx_q[i];
  ASSERT_GE(k1, 0);
  for (double bad : {nan, inf, -inf}) {
    SCOPED_TRACE(bad);
    VecX q = st_.q, v = st_.v, a = st_.a, tau = st_.tau;
    q[k1] = bad;
    EXPECT_TRUE(failed(forwardKinematics(model_, data, q), Status::NonFinite, data, {"q"}));
    EXPECT_TRUE(failed(rnea(model_, data, q, v, a), Status::NonFinite, data, {"q"}));
    EXPECT_TRUE(failed(aba(model_, data, q, v, tau), Status::NonFinite, data, {"q"}));
    EXPECT_TRUE(failed(crba(model_, data, q), Status::NonFinite, data, {"q"}));
    EXPECT_TRUE(failed(generalizedGravity(model_, data, q), Status::NonFinite, data, {"q"}));
    // NaN in a quaternion is reported too (either as non-finite or non-unit).
    VecX qq = st_.q;
    qq[3] = bad;
    const Status s = aba(model_, data, qq, v, tau);
    EXPECT_TRUE(s == Status::NonFinite || s == Status::NotUnitQuaternion) << statusName(s);
    EXPECT_NE(std::string(data.errorMessage()), "");
    v[model_.nv - 1] = bad;
    EXPECT_TRUE(failed(forwardKinematics(model_, data, st_.q, v), Status::NonFinite, data,
                       {"v", std::to_string(model_.nv - 1).c_str()}));
    EXPECT_TRUE(failed(rnea(model_, data, st_.q, v, st_.a), Status::NonFinite, data, {"v"}));
    EXPECT_TRUE(failed(nonLinearEffects(model_, data, st_.q, v), Status::NonFinite, data, {"v"}));
    EXPECT_TRUE(failed(aba(model_, data, st_.q, v, st_.tau), Status::NonFinite, data, {"v"}));
    a[0] = bad;
    EXPECT_TRUE(failed(rnea(model_, data, st_.q, st_.v, a), Status::NonFinite, data, {"a"}));
    EXPECT_TRUE(
        failed(forwardKinematics(model_, data, st_.q, st_.v, a), Status::NonFinite, data, {"a"}));
    tau[2] = bad;
    EXPECT_TRUE(
        failed(aba(model_, data, st_.q, st_.v, tau), Status::NonFinite, data, {"tau", "2"}));
    std::vector<Force> f = fext_;
    f[model_.nbodies - 1][4] = bad;
    const char* body = model_.bodyNames[model_.nbodies - 1].c_str();
    EXPECT_TRUE(failed(aba(model_, data, st_.q, st_.v, st_.tau, f.data()), Status::NonFinite, data,
                       {"fext", body}));
    EXPECT_TRUE(failed(rnea(model_, data, st_.q, st_.v, st_.a, f.data()), Status::NonFinite, data,
                       {"fext", body}));
    EXPECT_TRUE(std::isnan(kineticEnergy(model_, data, st_.q, v)));
    EXPECT_TRUE(std::isnan(potentialEnergy(model_, data, q)));
  }
  expectWorkspaceStillWorks(data);
}

TEST_F(StatusCodes, NonUnitQuaternion) {
  Data data(model_);
  for (int i = 0; i < model_.nbodies; ++i) {
    const JointType t = model_.joints[i].type;
    if (t != JointType::Floating && t != JointType::Spherical) continue;
    SCOPED_TRACE(model_.jointNames[i]);
    const int k = model_.idx_q[i] + (t == JointType::Floating ? 3 : 0);
    for (double scale : {1.01, 0.5, 0.0, 1.0 + 1e-4}) {
      VecX q = st_.q;
      q.segment<4>(k) *= scale;
      const char* joint = model_.jointNames[i].c_str();
      EXPECT_TRUE(
          failed(forwardKinematics(model_, data, q), Status::NotUnitQuaternion, data, {joint}));
      EXPECT_TRUE(
          failed(aba(model_, data, q, st_.v, st_.tau), Status::NotUnitQuaternion, data, {joint}));
      EXPECT_TRUE(
          failed(rnea(model_, data, q, st_.v, st_.a), Status::NotUnitQuaternion, data, {joint}));
      EXPECT_TRUE(failed(crba(model_, data, q), Status::NotUnitQuaternion, data, {joint}));
    }
    // Within the documented tolerance (|1 - |q|| <= 1e-6) the call succeeds.
    VecX q = st_.q;
    q.segment<4>(k) *= 1.0 + 1e-9;
    EXPECT_EQ(aba(model_, data, q, st_.v, st_.tau), Status::Ok) << data.errorMessage();
    EXPECT_STREQ(data.errorMessage(), "");
  }
  expectWorkspaceStillWorks(data);
}

TEST_F(StatusCodes, WorkspaceOfAnotherModel) {
  Data data(model_);
  const Model other = model_;  // identical content, different object
  Mat6X J(6, model_.nv);
  EXPECT_TRUE(failed(forwardKinematics(other, data, st_.q), Status::WorkspaceMismatch, data, {}));
  EXPECT_TRUE(
      failed(forwardKinematics(other, data, st_.q, st_.v), Status::WorkspaceMismatch, data, {}));
  EXPECT_TRUE(failed(forwardKinematics(other, data, st_.q, st_.v, st_.a), Status::WorkspaceMismatch,
                     data, {}));
  EXPECT_TRUE(failed(rnea(other, data, st_.q, st_.v, st_.a), Status::WorkspaceMismatch, data, {}));
  EXPECT_TRUE(
      failed(nonLinearEffects(other, data, st_.q, st_.v), Status::WorkspaceMismatch, data, {}));
  EXPECT_TRUE(failed(generalizedGravity(other, data, st_.q), Status::WorkspaceMismatch, data, {}));
  EXPECT_TRUE(failed(aba(other, data, st_.q, st_.v, st_.tau), Status::WorkspaceMismatch, data, {}));
  EXPECT_TRUE(failed(crba(other, data, st_.q), Status::WorkspaceMismatch, data, {}));
  EXPECT_TRUE(failed(frameJacobian(other, data, 0, ReferenceFrame::World, J),
                     Status::WorkspaceMismatch, data, {}));
  EXPECT_TRUE(failed(computeFrameJacobian(other, data, st_.q, 0, ReferenceFrame::World, J),
                     Status::WorkspaceMismatch, data, {}));
  // Size errors are not reported before the workspace mismatch.
  EXPECT_TRUE(
      failed(aba(other, data, VecX::Zero(3), st_.v, st_.tau), Status::WorkspaceMismatch, data, {}));
  expectWorkspaceStillWorks(data);
}

TEST_F(StatusCodes, InvalidFrameIndex) {
  Data data(model_);
  Mat6X J(6, model_.nv);
  ASSERT_EQ(forwardKinematics(model_, data, st_.q), Status::Ok);
  const int nf = static_cast<int>(model_.frames.size());
  EXPECT_TRUE(failed(frameJacobian(model_, data, nf, ReferenceFrame::Local, J),
                     Status::InvalidIndex, data, {std::to_string(nf).c_str()}));
  EXPECT_TRUE(failed(frameJacobian(model_, data, -1, ReferenceFrame::Local, J),
                     Status::InvalidIndex, data, {"-1"}));
  EXPECT_TRUE(failed(computeFrameJacobian(model_, data, st_.q, nf + 3, ReferenceFrame::World, J),
                     Status::InvalidIndex, data, {}));
  expectWorkspaceStillWorks(data);
}

TEST(StatusCodesSingular, MasslessLeafBodyIsNotPositiveDefinite) {
  // A leaf body with zero inertia: its joint's articulated inertia is singular.
  Model model;
  model.parent = {-1, 0};
  model.joints = {Joint::revolute(Vec3::UnitZ()), Joint::revolute(Vec3::UnitX())};
  model.jointPlacement = {Transform(), Transform(Mat3::Identity(), Vec3(0.3, 0, 0))};
  model.inertias = {
      SpatialInertia::fromMassComInertia(1.0, Vec3(0.1, 0, 0), Mat3::Identity() * 0.01),
      SpatialInertia()};
  model.bodyNames = {"upper", "ghost_link"};
  model.jointNames = {"j1", "ghost_joint"};
  model.finalize();
  Data data(model);
  const VecX q = VecX::Zero(2), v = VecX::Ones(2), tau = VecX::Ones(2);
  const Status s = aba(model, data, q, v, tau);
  EXPECT_EQ(s, Status::NotPositiveDefinite);
  EXPECT_NE(std::string(data.errorMessage()).find("ghost_link"), std::string::npos)
      << data.errorMessage();
  // Same for a massless spherical leaf (multi-dof branch of aba).
  model.joints[1] = Joint::spherical();
  model.finalize();
  Data data2(model);
  EXPECT_EQ(
      aba(model, data2, neutralConfiguration(model), VecX::Zero(model.nv), VecX::Zero(model.nv)),
      Status::NotPositiveDefinite);
  EXPECT_NE(std::string(data2.errorMessage()).find("ghost_link"), std::string::npos)
      << data2.errorMessage();
  // RNEA does not need invertibility.
  EXPECT_EQ(
      rnea(model, data2, neutralConfiguration(model), VecX::Zero(model.nv), VecX::Zero(model.nv)),
      Status::Ok);
}

TEST(StatusCodesNames, EveryStatusHasADistinctName) {
  std::set<std::string> names;
  for (int s = 0; s <= 8; ++s) {
    const char* n = statusName(static_cast<Status>(s));
    ASSERT_NE(n, nullptr);
    EXPECT_GT(std::strlen(n), 0u);
    names.insert(n);
  }
  EXPECT_EQ(names.size(), 9u);
}

}  // namespace
}  // namespace clusterdyn::test

// The kinematic step specialises revolute joints about a coordinate axis (either sign); it must
// agree with the generic joint transform X_T * X_J(q) for every such axis and a skew one.
TEST(TreeKinematics, AlignedRevoluteAxesMatchTheGenericTransform) {
  using namespace clusterdyn;
  std::string text = "<robot name=\"axes\"><link name=\"l0\"/>";
  const char* axes[] = {"1 0 0", "0 1 0", "0 0 1", "-1 0 0", "0 -1 0", "0 0 -1", "0.3 -0.5 0.8"};
  for (int i = 0; i < 7; ++i) {
    const std::string l = "l" + std::to_string(i + 1);
    text += "<link name=\"" + l +
            "\"><inertial><mass value=\"1\"/><inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" "
            "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>"
            "<joint name=\"j" +
            std::to_string(i + 1) + "\" type=\"revolute\"><parent link=\"l" + std::to_string(i) +
            "\"/><child link=\"" + l +
            "\"/><origin xyz=\"0.1 0.2 0.3\" rpy=\"0.4 -0.2 0.7\"/><axis xyz=\"" + axes[i] +
            "\"/><limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/></joint>";
  }
  text += "</robot>";
  const Model model = buildTreeModel(parseUrdfString(text, "axes.urdf"));
  Data data(model);
  const VecX q = VecX::LinSpaced(model.nq, -1.3, 2.1);
  ASSERT_EQ(forwardKinematics(model, data, q), Status::Ok);
  for (int b = 0; b < model.nbodies; ++b) {
    const Transform expected =
        model.jointPlacement[b] * model.joints[b].transform(q.data() + model.idx_q[b]);
    EXPECT_LE((data.liMi[b].R - expected.R).norm(), 1e-14) << model.jointNames[b];
    EXPECT_LE((data.liMi[b].p - expected.p).norm(), 1e-14) << model.jointNames[b];
    EXPECT_EQ(model.joints[b].alignedAxis >= 0, b < 6) << model.jointNames[b];
  }
}
