// Analytical derivatives of CE-RNEA and CE-ABA in the independent coordinates (docs/
// derivatives.md, "Cluster-tree derivatives"): tau_y = G^T RNEA(q, G y_dot, G y_ddot + g, fext)
// differentiated by the chain rule along the closed manifold (dq = G dy), with the spanning-tree
// derivatives of Carpentier & Mansard 2018 and the derivatives of G and g of the loop closure
// (Chignoli et al. 2023, eq. 2-6; cluster_derivatives_loops.cpp). d CE-ABA = -H^-1 d CE-RNEA at
// y_ddot = CE-ABA.
#include <algorithm>
#include <cmath>

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
  if (m.treeModel.hasPassiveForces() && !m.hasImplicitClusters())
    for (MatX* x : {&passiveDq, &passiveDv}) x->setZero(nv, nv);
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
  dofEntryBegin.assign(nv, 0);
  dofEntryEnd.assign(nv, 0);
  dofTerms.resize(nv);
  foldedTerms.resize(ny);
  unitCluster.assign(m.clusters.size(), 0);
  for (size_t k = 0; k < m.clusters.size(); ++k) {
    const Cluster& c = m.clusters[k];
    unitCluster[k] = c.nbodies == 1 && !c.implicit() && c.nv == c.ny &&
                     (c.G.size() == 0 || (c.G.rows() == c.nv && c.G.cols() == c.ny &&
                                          c.G == MatX::Identity(c.nv, c.ny)));
  }
  for (int b = 0; b < static_cast<int>(m.clusters.size()); ++b)
    for (int a = b; a >= 0; a = m.clusters[a].parent) {
      relatedClusters.emplace_back(a, b);
      if (a != b) relatedClusters.emplace_back(b, a);
    }
  relatedRowStart.assign(m.clusters.size() + 1, 0);
  for (int k = 0; k < static_cast<int>(m.clusters.size()); ++k) {
    std::vector<std::pair<int, int>> r;
    for (const auto& [a, b] : relatedClusters)
      if (b == k && m.clusters[a].ny > 0)
        r.emplace_back(m.clusters[a].y0, m.clusters[a].y0 + m.clusters[a].ny);
    std::sort(r.begin(), r.end());
    for (const auto& x : r)
      if (static_cast<int>(relatedRows.size()) > relatedRowStart[k] &&
          relatedRows.back().second >= x.first)
        relatedRows.back().second = std::max(relatedRows.back().second, x.second);
      else
        relatedRows.push_back(x);
    relatedRowStart[k + 1] = static_cast<int>(relatedRows.size());
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
  detail::initBranchFactor(m, *this);
  // H^-1 recursion (cluster_derivatives_minverse.cpp).
  const int nb = m.treeModel.nbodies, nc = static_cast<int>(m.clusters.size());
  mIA.assign(nb, Mat6::Zero());
  mPsi.resize(nb);
  mU.resize(nb);
  mFA.assign(nb, Mat6X::Zero(6, ny));
  for (int b = 0; b < nb; ++b) {
    const int dk = m.clusters[m.bodyCluster[b]].ny;
    mPsi[b].setZero(6, dk);
    mU[b].setZero(6, dk);
  }
  mD.resize(nc);
  mDinv.resize(nc);
  mUbar.resize(nc);
  mUbarDinv.resize(nc);
  mLlt.resize(nc);
  colStart.assign(nc, 0);
  colEnd.assign(nc, ny);
  mTmp.setZero(std::max(d, 1));
  upperTriangle = true;  // depth-first numbering: y0 increasing, each subtree contiguous
  std::vector<int> end(nc), count(nc);
  for (int k = 0; k < nc; ++k) {
    const Cluster& c = m.clusters[k];
    mD[k].setZero(c.ny, c.ny);
    mDinv[k].setZero(c.ny, c.ny);
    mUbar[k].setZero(6, c.ny);
    mUbarDinv[k].setZero(6, c.ny);
    mLlt[k].compute(MatX::Identity(c.ny, c.ny));
    end[k] = c.y0 + c.ny;
    count[k] = c.ny;
    if (k > 0 && c.y0 != m.clusters[k - 1].y0 + m.clusters[k - 1].ny) upperTriangle = false;
    if (c.parent >= k) upperTriangle = false;
  }
  for (int k = nc - 1; k >= 0; --k) {
    const int p = m.clusters[k].parent;
    if (p < 0) continue;
    end[p] = std::max(end[p], end[k]);
    count[p] += count[k];
  }
  for (int k = 0; k < nc; ++k)
    if (end[k] - m.clusters[k].y0 != count[k]) upperTriangle = false;
  if (upperTriangle)
    for (int k = 0; k < nc; ++k) {
      colStart[k] = m.clusters[k].y0;
      colEnd[k] = end[k];
    }
}

namespace {

using detail::Bias;
using detail::StateCheck;

/// dtau_dy = G^T dtau_dq G, dtau_dydot = G^T dtau_dv G and H = G^T M G at once (G block
/// diagonal, from its entry list; the three nv x nv matrices have non-zero blocks between
/// related clusters only): one pass over the pairs of entries of related clusters, no
/// intermediate nv x ny product; H from its upper triangle, mirrored.
void congruenceG(ClusterDerivativeData& dd) {
  const DerivativeData& t = dd.tree;
  const Eigen::Index nv = t.dtau_dq.rows(), ny = dd.H.rows();
  dd.dtau_dy.setZero();
  dd.dtau_dydot.setZero();
  dd.H.setZero();
  const ClusterDerivativeData::GEntry* const E = dd.Gentries.data();
  for (const auto& [a, b] : dd.relatedClusters) {
    for (int j = dd.entryStart[b]; j < dd.entryStart[b + 1]; ++j) {
      const ClusterDerivativeData::GEntry& c = E[j];
      const Eigen::Index cv = static_cast<Eigen::Index>(c.v) * nv;
      const double* const q = t.dtau_dq.data() + cv;
      const double* const v = t.dtau_dv.data() + cv;
      const double* const m = t.dtau_da.data() + cv;
      const Eigen::Index cy = static_cast<Eigen::Index>(c.y) * ny;
      double* const oq = dd.dtau_dy.data() + cy;
      double* const ov = dd.dtau_dydot.data() + cy;
      double* const om = dd.H.data() + cy;
      for (int i = dd.entryStart[a]; i < dd.entryStart[a + 1]; ++i) {
        const double g = E[i].value * c.value;
        const int r = E[i].y, k = E[i].v;
        oq[r] += g * q[k];
        ov[r] += g * v[k];
        if (r <= c.y) om[r] += g * m[k];  // H: on and above the diagonal
      }
    }
  }
  for (Eigen::Index col = 0; col < ny; ++col)
    for (Eigen::Index row = col + 1; row < ny; ++row) dd.H(row, col) = dd.H(col, row);
}

/// Rows [r, r + R) of Y1.col(c) = -H^-1 X1.col(c) and Y2.col(c) = -H^-1 X2.col(c), summed over
/// the rows i of the ranges [range, rangeEnd) only (X1, X2 zero elsewhere in column c):
/// fixed-size accumulators, each column of H^-1 loaded once for both products.
template <int R>
void hinvProductRows(ClusterDerivativeData& dd, const std::pair<int, int>* range,
                     const std::pair<int, int>* rangeEnd, int c, int r) {
  using Chunk = Eigen::Matrix<double, R, 1>;
  const Eigen::Index ny = dd.Hinv.rows();
  const double* const h = dd.Hinv.data() + r;
  const double* const x1 = dd.dtau_dy.data() + c * ny;
  const double* const x2 = dd.dtau_dydot.data() + c * ny;
  Chunk a1 = Chunk::Zero(), a2 = Chunk::Zero();
  for (; range != rangeEnd; ++range)
    for (int i = range->first; i < range->second; ++i) {
      const Eigen::Map<const Chunk> hi(h + i * ny);
      a1.noalias() += hi * x1[i];
      a2.noalias() += hi * x2[i];
    }
  Eigen::Map<Chunk>(dd.dydd_dy.data() + c * ny + r) = -a1;
  Eigen::Map<Chunk>(dd.dydd_dydot.data() + c * ny + r) = -a2;
}

/// eq. C10: dydd_dy = -H^-1 d tau_y / dy and dydd_dydot = -H^-1 d tau_y / d y_dot, column by
/// column over the rows of d tau_y that can be non-zero (relatedRows: the blocks between
/// unrelated clusters are zero, on a floating-base robot about a third of the entries), in
/// chunks of 8 rows of H^-1 (no heap use at any ny).
void hinvProducts(const ClusterModel& cm, ClusterDerivativeData& dd) {
  const int ny = cm.ny;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& ck = cm.clusters[k];
    const std::pair<int, int>* const b = dd.relatedRows.data() + dd.relatedRowStart[k];
    const std::pair<int, int>* const e = dd.relatedRows.data() + dd.relatedRowStart[k + 1];
    for (int c = ck.y0; c < ck.y0 + ck.ny; ++c) {
      int r = 0;
      for (; r + 8 <= ny; r += 8) hinvProductRows<8>(dd, b, e, c, r);
      if (r + 4 <= ny) {
        hinvProductRows<4>(dd, b, e, c, r);
        r += 4;
      }
      if (r + 2 <= ny) {
        hinvProductRows<2>(dd, b, e, c, r);
        r += 2;
      }
      if (r < ny) hinvProductRows<1>(dd, b, e, c, r);
    }
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

/// A model without loop joints (G constant): ConstraintFailure unless (q, v) satisfies every
/// explicit relation, checked in one loop over ClusterScratch::relationChecks as ceRnea does (a
/// relation above the tolerance gets its cluster's full check and message). The rotors' entries
/// of treeData are left as they are (the derivative passes do not read them), as
/// clusterPositionPass does.
Status checkConstantGState(const ClusterModel& cm, ClusterData& data, ConstVecRef q,
                           const double* v) {
  ClusterScratch& s = detail::fullScratch(data);
  detail::discardDeferredRotors(s);
  const ClusterWorkspace::RelationTerm* term = s.relationCheckTerms.data();
  for (const ClusterScratch::RelationCheck& rel : s.relationChecks) {
    double pos = -rel.offset, vel = 0.0;
    for (const auto* end = s.relationCheckTerms.data() + rel.end; term != end; ++term) {
      pos += term->coeff * q[term->q];
      vel += term->coeff * v[term->v];
    }
    if (std::abs(pos) <= kClosureSettings.stateTolerance &&
        std::abs(vel) <= kClosureSettings.stateTolerance)
      continue;
    CDYN_TRY(detail::checkClusterState(cm, data, rel.cluster, q, v));
  }
  return Status::Ok;
}

/// The derivative passes at a closed (q, v) (checked with StateCheck::Check; StateCheck::Skip:
/// right after ceAba at (q, v), whose kinematics are reused): G, g, the
/// spanning-tree derivatives at a = G ydd + g, the loop terms and the chain rule (eq. C9).
Status derivativePasses(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd,
                        ConstVecRef q, ConstVecRef v, const VecX& ydd, const Force* fext,
                        StateCheck check) {
  // After ceAba (check == Skip) the kinematics are those of its pass 1 (placements, v, G, g and
  // the factors of Kd of every cluster): reused. The rotors' entries of treeData are not read
  // (ceAba leaves them pending only without fext, when spanningDerivativePasses sees the rotors
  // from their output bodies).
  // With G constant (no loop joints) the velocity pass is not needed: the relation check, and
  // the placements computed by the derivative passes (the velocities there, G from the model).
  const bool constantG = !cm.hasImplicitClusters();
  if (check == StateCheck::Check && constantG)
    CDYN_TRY(checkConstantGState(cm, data, q, v.data()));
  else if (check == StateCheck::Check)
    CDYN_TRY(detail::clusterVelocityPass(cm, data, q, v.data(), Bias::Compute, check,
                                         detail::OutputPoses::ImplicitOnly));  // world poses only
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  dd.Gentries.clear();
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    const ClusterWorkspace& w = ws[k];
    dd.entryStart[k] = static_cast<int>(dd.Gentries.size());
    for (int i = 0; i < c.nv; ++i) {
      dd.dofEntryBegin[c.v0 + i] = static_cast<int>(dd.Gentries.size());
      double ai = c.implicit() ? w.g[i] : 0.0;  // eq. 3: a = G y_ddot + g
      for (int j = 0; j < c.ny; ++j) {
        const double gij = w.G(i, j);
        if (gij == 0.0) continue;
        dd.Gentries.push_back({c.v0 + i, c.y0 + j, gij});
        ai += gij * ydd[c.y0 + j];
      }
      dd.a[c.v0 + i] = ai;
      dd.dofEntryEnd[c.v0 + i] = static_cast<int>(dd.Gentries.size());
    }
  }
  dd.entryStart[cm.clusters.size()] = static_cast<int>(dd.Gentries.size());
  // Placements (liMi, oMi) at q: left by the cluster velocity pass or ceAba, else computed here.
  const bool placements = check == StateCheck::Check && constantG;
  if (constantG) {
    // eq. F1-F3: the backward pass writes d tau_y / dy = G^T dtau/dq G, d tau_y / d y_dot =
    // G^T dtau/dv G and H = G^T M G directly, cluster row by cluster row.
    detail::foldedDerivativePasses(cm, data, dd, q, v.data(), dd.a.data(), fext, placements);
    if (cm.treeModel.hasJointDynamics()) detail::foldJointDynamics(cm, q, v.data(), dd);  // eq. J2
  } else {
    detail::spanningDerivativePasses(cm, data, dd, q, v.data(), dd.a.data(), fext, placements);
    if (cm.treeModel.hasJointDynamics())  // eq. J1
      detail::addJointDynamicsDerivatives(cm.treeModel, q.data(), v.data(), dd.a.data(), dd.tree);
    const DerivativeData& t = dd.tree;
    const Motion a0 = detail::gravityAcceleration(cm.treeModel);
    dd.dv_dy.setZero();
    dd.da_dy.setZero();
    dd.da_dyd.setZero();
    for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
      if (!cm.clusters[k].implicit()) continue;
      detail::loopRowDerivatives(cm, data, dd, k, a0);
      detail::loopVelocityTerms(cm, data, dd, k);
    }
    // eq. C9: d tau_y / dy = G^T (dtau/dq G + dtau/dv dv/dy + M da/dy) + (dG/dy)^T tau;
    // d tau_y / d y_dot = G^T (dtau/dv G + M da/dy_dot); H = G^T M G (Chignoli et al. 2023,
    // eq. 24).
    congruenceG(dd);
    addDependentTerm(cm, dd, t.dtau_dv, dd.dv_dy, dd.dtau_dy);
    addDependentTerm(cm, dd, t.dtau_da, dd.da_dy, dd.dtau_dy);
    for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k)
      if (cm.clusters[k].implicit()) detail::loopGdotTerm(cm, data, dd, k);
    addDependentTerm(cm, dd, t.dtau_da, dd.da_dyd, dd.dtau_dydot);
  }
  const DerivativeData& t = dd.tree;
  dd.tauY.setZero();
  for (const ClusterDerivativeData::GEntry& e : dd.Gentries) dd.tauY[e.y] += e.value * t.tau[e.v];
  return Status::Ok;
}

Status checkArguments(const ClusterModel& cm, ClusterData& data, const ClusterDerivativeData& dd,
                      ConstVecRef q, ConstVecRef v, ConstVecRef x, const char* xName,
                      const Force* fext) {
  CDYN_TRY(detail::checkClusterArgs(cm, data, q, &v));
  if (dd.model != &cm)
    return detail::fail(data.treeData, Status::WorkspaceMismatch,
                        "the derivative workspace was created for another model");
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

namespace {

/// NotPositiveDefinite for H singular at independent velocity y (branchSparseInverse's ratio).
/// Out of line: inlined, its formatting cost the hot products after it ~1k instructions a call.
__attribute__((noinline)) Status singularH(const ClusterModel& model, Data& td, int y,
                                           double ratio) {
  int k = 0;  // the cluster of independent velocity y
  while (y >= model.clusters[k].y0 + model.clusters[k].ny) ++k;
  return detail::fail(td, Status::NotPositiveDefinite,
                      "computeCeAbaDerivatives: the independent mass matrix H is singular at the "
                      "velocity %d of cluster '%s' (%s)",
                      y - model.clusters[k].y0, model.clusters[k].name.c_str(),
                      detail::PivotText(ratio, detail::kSingularPivot).c_str());
}

}  // namespace

Status computeCeAbaDerivatives(const ClusterModel& model, ClusterData& data,
                               ClusterDerivativeData& dd, ConstVecRef q, ConstVecRef v,
                               ConstVecRef tauY, const Force* fext) {
  CDYN_TRY(checkArguments(model, data, dd, q, v, tauY, "tauY", fext));
  CDYN_TRY(ceAba(model, data, q, v, tauY, fext));  // checks the state; y_ddot
  dd.ydd = data.ydd;
  CDYN_TRY(derivativePasses(model, data, dd, q, v, dd.ydd, fext, StateCheck::Skip));
  // eq. C10: d y_ddot = -H^-1 d tau_y at y_ddot; d y_ddot / d tau_y = H^-1 (eq. C14-C16).
  double ratio;
  if (const int y = detail::branchSparseInverse(dd, &ratio); y >= 0)
    return singularH(model, data.treeData, y, ratio);
  hinvProducts(model, dd);  // eq. C10
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
