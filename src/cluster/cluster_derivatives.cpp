// Analytical derivatives of CE-RNEA and CE-ABA in the independent coordinates (docs/
// derivatives.md, "Cluster-tree derivatives"): tau_y = G^T RNEA(q, G y_dot, G y_ddot + g, fext)
// differentiated by the chain rule along the closed manifold (dq = G dy), with the spanning-tree
// derivatives of Carpentier & Mansard 2018 and the derivatives of G and g of the loop closure
// (Chignoli et al. 2023, eq. 2-6; cluster_derivatives_loops.cpp). d CE-ABA = -H^-1 d CE-RNEA at
// y_ddot = CE-ABA.
#include <algorithm>

#include "cluster/cluster_derivatives_detail.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "tree/derivatives_steps.hpp"

namespace clusterdyn {

ClusterDerivativeData::ClusterDerivativeData(const ClusterModel& m) : model(&m), tree(m.treeModel) {
  const int ny = m.ny, nv = m.treeModel.nv;
  for (MatX* x : {&dtau_dy, &dtau_dydot, &H, &dydd_dy, &dydd_dydot, &Hinv}) x->setZero(ny, ny);
  tauY.setZero(ny);
  ydd.setZero(ny);
  a.setZero(nv);
  for (MatX* x : {&dv_dy, &da_dy, &da_dyd}) x->setZero(nv, ny);
  size_t entries = 0;
  int rows = 0, n = 0, d = 0;
  for (const Cluster& c : m.clusters) {
    entries += static_cast<size_t>(c.nv) * c.ny;
    rows = std::max(rows, c.constraintRows);
    n = std::max(n, c.nv);
    d = std::max(d, c.ny);
  }
  Gentries.reserve(entries);
  entryStart.assign(m.clusters.size() + 1, 0);
  for (int b = 0; b < static_cast<int>(m.clusters.size()); ++b)
    for (int a = b; a >= 0; a = m.clusters[a].parent) {
      relatedClusters.emplace_back(a, b);
      if (a != b) relatedClusters.emplace_back(b, a);
    }
  ow.assign(rows, Force::Zero());
  rowLoop.assign(rows, -1);
  Psiq.setZero(rows, n);
  Phiq.setZero(rows, n);
  Phiv.setZero(rows, n);
  smallG.setZero(rows, d);
  lambda.setZero(rows);
  rho.setZero(n);
  ovx.assign(m.maxClusterBodies, Motion::Zero());
  onS.assign(m.maxClusterBodies, 0);
  onP.assign(m.maxClusterBodies, 0);
  llt.compute(MatX::Identity(ny, ny));  // sized, and its info set (a moved LLT(n) copies an
                                        // uninitialised ComputationInfo: UBSan)
}

namespace {

using detail::Bias;
using detail::StateCheck;

/// out = G^T A G (G block diagonal, from its entry list; A nv x nv with non-zero blocks between
/// related clusters only, as M and the RNEA derivatives): one pass over the pairs of entries of
/// related clusters, no intermediate nv x ny product.
void congruenceG(const ClusterDerivativeData& dd, const MatX& A, MatX& out) {
  out.setZero();
  const ClusterDerivativeData::GEntry* const E = dd.Gentries.data();
  for (const auto& [a, b] : dd.relatedClusters)
    for (int j = dd.entryStart[b]; j < dd.entryStart[b + 1]; ++j) {
      const ClusterDerivativeData::GEntry& c = E[j];
      const double* const col = A.data() + static_cast<Eigen::Index>(c.v) * A.rows();
      double* const o = out.data() + static_cast<Eigen::Index>(c.y) * out.rows();
      for (int i = dd.entryStart[a]; i < dd.entryStart[a + 1]; ++i)
        o[E[i].y] += E[i].value * c.value * col[E[i].v];
    }
}

/// out += G^T A B over the dependent rows of the loop clusters (B: nv x ny, non-zero there only,
/// in the cluster's own columns).
void addDependentTerm(const ClusterModel& cm, const ClusterDerivativeData& dd, const MatX& A,
                      const MatX& B, MatX& out) {
  for (const Cluster& c : cm.clusters) {
    if (!c.implicit()) continue;
    for (int dep : c.dependent) {
      const int k = c.v0 + dep;
      for (int j = 0; j < c.ny; ++j) {
        const double b = B(k, c.y0 + j);
        for (const ClusterDerivativeData::GEntry& r : dd.Gentries)
          out(r.y, c.y0 + j) += r.value * A(r.v, k) * b;
      }
    }
  }
}

/// The derivative passes at a closed (q, v) (checked with StateCheck::Check): G, g, the
/// spanning-tree derivatives at a = G ydd + g, the loop terms and the chain rule (eq. C9).
Status derivativePasses(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd,
                        ConstVecRef q, ConstVecRef v, const VecX& ydd, const Force* fext,
                        StateCheck check) {
  CDYN_TRY(detail::clusterVelocityPass(cm, data, q, v.data(), Bias::Compute, check));
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  dd.Gentries.clear();
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    const ClusterWorkspace& w = ws[k];
    dd.entryStart[k] = static_cast<int>(dd.Gentries.size());
    for (int i = 0; i < c.nv; ++i) {
      double ai = c.implicit() ? w.g[i] : 0.0;  // eq. 3: a = G y_ddot + g
      for (int j = 0; j < c.ny; ++j) {
        const double gij = w.G(i, j);
        if (gij == 0.0) continue;
        dd.Gentries.push_back({c.v0 + i, c.y0 + j, gij});
        ai += gij * ydd[c.y0 + j];
      }
      dd.a[c.v0 + i] = ai;
    }
  }
  dd.entryStart[cm.clusters.size()] = static_cast<int>(dd.Gentries.size());
  const Model& tree = cm.treeModel;
  // The cluster velocity pass left every body's placements (liMi, oMi) at q: reused.
  detail::rneaDerivativePasses(tree, data.treeData, dd.tree, q, v.data(), dd.a.data(), fext, false);
  const DerivativeData& t = dd.tree;
  const bool loops = cm.hasImplicitClusters();
  if (loops) {
    const Motion a0 = detail::gravityAcceleration(tree);
    dd.dv_dy.setZero();
    dd.da_dy.setZero();
    dd.da_dyd.setZero();
    for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
      if (!cm.clusters[k].implicit()) continue;
      detail::loopRowDerivatives(cm, data, dd, k, a0);
      detail::loopVelocityTerms(cm, data, dd, k);
    }
  }
  // eq. C9: d tau_y / dy = G^T (dtau/dq G + dtau/dv dv/dy + M da/dy) + (dG/dy)^T tau.
  congruenceG(dd, t.dtau_dq, dd.dtau_dy);
  if (loops) {
    addDependentTerm(cm, dd, t.dtau_dv, dd.dv_dy, dd.dtau_dy);
    addDependentTerm(cm, dd, t.dtau_da, dd.da_dy, dd.dtau_dy);
    for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k)
      if (cm.clusters[k].implicit()) detail::loopGdotTerm(cm, data, dd, k);
  }
  // eq. C9: d tau_y / d y_dot = G^T (dtau/dv G + M da/dy_dot).
  congruenceG(dd, t.dtau_dv, dd.dtau_dydot);
  if (loops) addDependentTerm(cm, dd, t.dtau_da, dd.da_dyd, dd.dtau_dydot);
  // H = G^T M G (Chignoli et al. 2023, eq. 24).
  congruenceG(dd, t.dtau_da, dd.H);
  dd.tauY.setZero();
  for (const ClusterDerivativeData::GEntry& e : dd.Gentries) dd.tauY[e.y] += e.value * t.tau[e.v];
  return Status::Ok;
}

Status checkArguments(const ClusterModel& cm, ClusterData& data, const ClusterDerivativeData& dd,
                      ConstVecRef q, ConstVecRef v, ConstVecRef x, const char* xName,
                      const Force* fext) {
  CDYN_TRY(detail::checkClusterArgs(cm, data, q, &v));
  if (cm.treeModel.hasJointDynamics())
    return detail::fail(data.treeData, Status::InvalidArgument,
                        "the derivatives do not take the joint dynamics (armature, springs, "
                        "dampers) of model '%s' into account; build it with "
                        "ModelOptions::jointDynamics = false",
                        cm.treeModel.name.c_str());
  if (dd.model != &cm)
    return detail::fail(data.treeData, Status::WorkspaceMismatch,
                        "the derivative workspace was created for another model");
  for (const Cluster& c : cm.clusters)  // the loop terms take one motion axis per joint
    for (int b = c.firstBody; c.implicit() && b < c.firstBody + c.nbodies; ++b)
      if (cm.treeModel.nvs[b] != 1)
        return detail::fail(data.treeData, Status::InvalidArgument,
                            "the derivatives do not support multi-dof joints inside loops yet: "
                            "joint '%s' of loop cluster '%s' (load the model with its loops "
                            "cut, ModelOptions::cutLoops)",
                            cm.treeModel.jointNames[b].c_str(), c.name.c_str());
  CDYN_TRY(detail::checkVector(data.treeData, x, cm.ny, xName));
  return detail::checkForces(cm.treeModel, data.treeData, fext);
}

}  // namespace

Status computeCeRneaDerivatives(const ClusterModel& model, ClusterData& data,
                                ClusterDerivativeData& dd, ConstVecRef q, ConstVecRef v,
                                ConstVecRef ydd, const Force* fext) {
  CDYN_TRY(checkArguments(model, data, dd, q, v, ydd, "ydd", fext));
  dd.ydd = ydd;
  CDYN_TRY(derivativePasses(model, data, dd, q, v, dd.ydd, fext, StateCheck::Check));
  detail::ok(data.treeData);
  const std::initializer_list<detail::InputMagnitude> inputs = {
      {"q", detail::maxAbs(q), 1},
      {"v", detail::maxAbs(v), 2},
      {"ydd", detail::maxAbs(ydd), 1},
      {"fext", detail::maxAbsForces(model.treeModel, fext), 1}};
  CDYN_TRY(detail::checkOverflow(data.treeData, Status::Ok, dd.dtau_dy,
                                 "computeCeRneaDerivatives: dtau_dy", inputs));
  return detail::checkOverflow(data.treeData, Status::Ok, dd.dtau_dydot,
                               "computeCeRneaDerivatives: dtau_dydot", inputs);
}

Status computeCeAbaDerivatives(const ClusterModel& model, ClusterData& data,
                               ClusterDerivativeData& dd, ConstVecRef q, ConstVecRef v,
                               ConstVecRef tauY, const Force* fext) {
  CDYN_TRY(checkArguments(model, data, dd, q, v, tauY, "tauY", fext));
  CDYN_TRY(ceAba(model, data, q, v, tauY, fext));  // checks the state; y_ddot
  detail::completeRotorBodies(model, data);
  dd.ydd = data.ydd;
  CDYN_TRY(derivativePasses(model, data, dd, q, v, dd.ydd, fext, StateCheck::Skip));
  // eq. C10: d y_ddot = -H^-1 d tau_y at y_ddot; d y_ddot / d tau_y = H^-1 (Cholesky of H).
  dd.llt.compute(dd.H);
  if (dd.llt.info() != Eigen::Success)
    return detail::fail(data.treeData, Status::NotPositiveDefinite,
                        "computeCeAbaDerivatives: the independent mass matrix H is not positive "
                        "definite");
  dd.Hinv.setIdentity();
  dd.llt.solveInPlace(dd.Hinv);
  // Eigen's blocked product keeps its panels on the stack below ny = 64 (derivatives.hpp's
  // computeABADerivatives); above, the coefficient-wise product, which never allocates.
  if (model.ny <= 64) {
    dd.dydd_dy.noalias() = -dd.Hinv * dd.dtau_dy;
    dd.dydd_dydot.noalias() = -dd.Hinv * dd.dtau_dydot;
  } else {
    dd.dydd_dy.noalias() = -dd.Hinv.lazyProduct(dd.dtau_dy);
    dd.dydd_dydot.noalias() = -dd.Hinv.lazyProduct(dd.dtau_dydot);
  }
  detail::ok(data.treeData);
  const std::initializer_list<detail::InputMagnitude> inputs = {
      {"q", detail::maxAbs(q), 1},
      {"v", detail::maxAbs(v), 2},
      {"tauY", detail::maxAbs(tauY), 1},
      {"fext", detail::maxAbsForces(model.treeModel, fext), 1}};
  CDYN_TRY(detail::checkOverflow(data.treeData, Status::Ok, dd.dydd_dy,
                                 "computeCeAbaDerivatives: dydd_dy", inputs));
  CDYN_TRY(detail::checkOverflow(data.treeData, Status::Ok, dd.dydd_dydot,
                                 "computeCeAbaDerivatives: dydd_dydot", inputs));
  return detail::checkOverflow(data.treeData, Status::Ok, dd.Hinv, "computeCeAbaDerivatives: Hinv",
                               inputs);
}

}  // namespace clusterdyn
