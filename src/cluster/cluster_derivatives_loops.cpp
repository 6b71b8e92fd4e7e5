// Derivatives of a loop cluster's explicit constraint (G(q), g(q, v) of the loop closure,
// Chignoli et al. 2023, eq. 2-6) along the closed manifold, from the loop rows written as world
// wrenches (docs/derivatives.md, eq. C1-C8). The world-frame twists and accelerations, joint
// columns psi and placements are those of the spanning-tree derivative pass (Carpentier &
// Mansard 2018), so the rows' derivatives are spatial cross products like D4-D6.
#include "cluster/cluster_derivatives_detail.hpp"
#include "core/small_lu.hpp"

namespace clusterdyn::detail {

namespace {

/// Solves Kd^T x = b in place with the factors P Kd Q = L U of luFactor (L unit lower).
template <typename Vec>
void luSolveTransposedInPlace(const MatX& LU, const std::vector<int>& piv, Vec&& b) {
  const Eigen::Index n = LU.rows();
  applyColumnOrderTransposed(piv, n, b);  // factors of Kd Q (small_lu.hpp): Q^T b
  for (Eigen::Index i = 0; i < n; ++i) {  // U^T z = b
    for (Eigen::Index j = 0; j < i; ++j) b[i] -= LU(j, i) * b[j];
    b[i] /= LU(i, i);
  }
  for (Eigen::Index i = n - 1; i >= 0; --i)  // L^T w = z
    for (Eigen::Index j = i + 1; j < n; ++j) b[i] -= LU(j, i) * b[j];
  for (Eigen::Index k = n - 1; k >= 0; --k)  // x = P^T w
    if (piv[k] != k) std::swap(b[k], b[piv[k]]);
}

inline bool inCluster(const Cluster& c, int b) {
  return b >= c.firstBody && b < c.firstBody + c.nbodies;
}

/// The loop rows of cluster k as world wrenches: row = ow^T (eq. C1), ow = 0X_P^* [Trot; Tlin]
/// column, P the loop's predecessor frame; relation rows (constant) get rowLoop = -1.
void worldRows(const ClusterModel& cm, const ClusterData& data, ClusterDerivativeData& dd, int k) {
  const Cluster& c = cm.clusters[k];
  int row = 0;
  for (size_t r = 0; r < c.relations.size(); ++r) dd.rowLoop[row++] = -1;
  for (int l : c.loops) {
    const LoopJoint& lj = cm.loops[l];
    const int p = lj.predecessorBody;
    const Transform oMP =
        p >= 0 ? data.treeData.oMi[p] * lj.predecessorPlacement : lj.predecessorPlacement;
    for (Eigen::Index j = 0; j < lj.Trot.cols(); ++j) {
      Force f = Force::Zero();
      f.head<3>() = lj.Trot.col(j);
      dd.ow[row] = oMP.actForce(f);
      dd.rowLoop[row++] = l;
    }
    for (Eigen::Index j = 0; j < lj.Tlin.cols(); ++j) {
      Force f = Force::Zero();
      f.tail<3>() = lj.Tlin.col(j);
      dd.ow[row] = oMP.actForce(f);
      dd.rowLoop[row++] = l;
    }
  }
}

/// Marks the cluster bodies on the path from body b up to the cluster's output body.
void markPath(const ClusterModel& cm, const Cluster& c, int b, std::vector<char>& on) {
  for (int i = 0; i < c.nbodies; ++i) on[i] = 0;
  for (; inCluster(c, b); b = cm.treeModel.parent[b]) on[b - c.firstBody] = 1;
}

/// Twist of body b in world coordinates (zero for the world, -1) and its acceleration (a0).
struct WorldMotion {
  Motion v, a;
};
inline WorldMotion motionOf(const DerivativeData& t, int b, const Motion& a0) {
  if (b < 0) return {Motion::Zero(), a0};
  return {t.ov[b], t.oa[b]};
}

}  // namespace

void loopRowDerivatives(const ClusterModel& cm, const ClusterData& data, ClusterDerivativeData& dd,
                        int k, const Motion& a0) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  const DerivativeData& t = dd.tree;
  worldRows(cm, data, dd, k);
  const int nd = static_cast<int>(c.dependent.size());
  int markedLoop = -1;
  WorldMotion S{Motion::Zero(), Motion::Zero()}, P = S;
  Motion nuDelta = Motion::Zero();  // Delta = oa_S - oa_P - ov_P x ov_S (eq. C2)
  for (int i = 0; i < nd; ++i) {
    const int r = c.selectedRows[i];
    const int l = dd.rowLoop[r];
    if (l < 0) {  // a coupling / mimic row: constant, Psi and Phi have no q or v derivative
      dd.Psiq.row(i).head(c.nv).setZero();
      dd.Phiq.row(i).head(c.nv).setZero();
      dd.Phiv.row(i).head(c.nv).setZero();
      continue;
    }
    const LoopJoint& lj = cm.loops[l];
    if (l != markedLoop) {
      markPath(cm, c, lj.successorBody, dd.onS);
      markPath(cm, c, lj.predecessorBody, dd.onP);
      S = motionOf(t, lj.successorBody, a0);
      P = motionOf(t, lj.predecessorBody, a0);
      nuDelta = S.a - P.a - crossMotion(P.v, S.v);
      markedLoop = l;
    }
    const Force& ow = dd.ow[r];
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
      const int lv0 = tree.idx_v[b] - c.v0, nvb = tree.nvs[b];
      const bool sS = dd.onS[b - c.firstBody], sP = dd.onP[b - c.firstBody];
      if (!sS && !sP) {
        for (int m = 0; m < nvb; ++m) dd.Psiq(i, lv0 + m) = dd.Phiq(i, lv0 + m) = 0.0;
        for (int m = 0; m < nvb; ++m) dd.Phiv(i, lv0 + m) = 0.0;
        continue;
      }
      const WorldMotion L = motionOf(t, tree.parent[b], a0);
      const Motion& ovj = t.ov[b];
      // Every tangent column of the joint (a multi-dof joint's columns move the child frame by
      // its own right exponential, so each acts on the subtree as the world twist psi; the
      // terms below hold column by column: docs/derivatives.md, eq. C2, C3).
      for (int m = 0; m < nvb; ++m) {
        const int lv = lv0 + m;
        const Motion psi = t.psi[b].col(m);
        const Motion u = crossMotion(psi, L.v);  // eq. D4
        // eq. C2: d Psi / dq_j = (s_S - s_P) ow . psi x (ov_S - ov_lambda)
        dd.Psiq(i, lv) = (double(sS) - double(sP)) * ow.dot(crossMotion(psi, S.v - L.v));
        // eq. C3: d Delta / dq_j from d ov_b = psi x (ov_b - ov_lambda), d oa_b = psi x (oa_b -
        // oa_lambda) - u x (ov_b - ov_lambda) on the subtree of j; d ow = psi x* ow when j
        // moves P.
        Motion dovS = Motion::Zero(), dovP = Motion::Zero(), dDelta = Motion::Zero();
        Motion dDeltaV = Motion::Zero();
        if (sS) {
          dovS = crossMotion(psi, S.v - L.v);
          dDelta += crossMotion(psi, S.a - L.a) - crossMotion(u, S.v - L.v);
          dDeltaV += crossMotion(psi, S.v - L.v - ovj) - crossMotion(P.v, psi);
        }
        if (sP) {
          dovP = crossMotion(psi, P.v - L.v);
          dDelta -= crossMotion(psi, P.a - L.a) - crossMotion(u, P.v - L.v);
          dDeltaV -= crossMotion(psi, P.v - L.v - ovj) + crossMotion(psi, S.v);
        }
        dDelta -= crossMotion(dovP, S.v) + crossMotion(P.v, dovS);
        double phiq = ow.dot(dDelta);
        if (sP) phiq -= ow.dot(crossMotion(psi, nuDelta));
        dd.Phiq(i, lv) = phiq;
        // eq. C3, d oa_b / d v_j = psi x (ov_b - ov_lambda - ov_j)
        dd.Phiv(i, lv) = ow.dot(dDeltaV);
      }
    }
  }
}

void loopVelocityTerms(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd,
                       int k) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = scratch(data)[k];
  const int nd = static_cast<int>(c.dependent.size()), n = c.nv, d = c.ny;
  auto T = dd.smallG.topLeftCorner(nd, d);
  // eq. C4: K dv/dy = -dPsi/dq G with zero independent rows: dv_d/dy = -Kd^-1 (Psiq G).
  T.noalias() = dd.Psiq.topLeftCorner(nd, n) * w.G;
  luSolveInPlace(w.Kd, w.piv, T);
  for (int i = 0; i < nd; ++i) dd.dv_dy.row(c.v0 + c.dependent[i]).segment(c.y0, d) = -T.row(i);
  // eq. C5: da_d/dy = -Kd^-1 (Phiq G + Phiv dv/dy).
  T.noalias() = dd.Phiq.topLeftCorner(nd, n) * w.G;
  for (int j = 0; j < nd; ++j)
    T.noalias() +=
        dd.Phiv.col(c.dependent[j]).head(nd) * dd.dv_dy.row(c.v0 + c.dependent[j]).segment(c.y0, d);
  luSolveInPlace(w.Kd, w.piv, T);
  for (int i = 0; i < nd; ++i) dd.da_dy.row(c.v0 + c.dependent[i]).segment(c.y0, d) = -T.row(i);
  // eq. C6: da_d/dydot = -Kd^-1 Phiv G.
  T.noalias() = dd.Phiv.topLeftCorner(nd, n) * w.G;
  luSolveInPlace(w.Kd, w.piv, T);
  for (int i = 0; i < nd; ++i) dd.da_dyd.row(c.v0 + c.dependent[i]).segment(c.y0, d) = -T.row(i);
}

void loopGdotTerm(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd, int k) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  const DerivativeData& t = dd.tree;
  ClusterWorkspace& w = scratch(data)[k];
  const int nd = static_cast<int>(c.dependent.size()), d = c.ny;
  worldRows(cm, data, dd, k);  // (dd.ow holds the rows of the last loop cluster)
  // eq. C8: (dG/dy_e)^T tau = -(Kd^-T tau_d)^T dPsi/dq(q, G_c) G_e, with lambda = Kd^-T tau_d.
  auto lambda = dd.lambda.head(nd);
  for (int i = 0; i < nd; ++i) lambda[i] = t.tau[c.v0 + c.dependent[i]];
  luSolveTransposedInPlace(w.Kd, w.piv, lambda);
  for (int col = 0; col < d; ++col) {
    // eq. C7: world twists of the cluster's bodies at the spanning velocity G_col, relative to
    // the output body (the rows are invariant under a common twist of the whole cluster).
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
      const int p = tree.parent[b], lv0 = tree.idx_v[b] - c.v0;
      Motion x = t.psi[b].col(0) * w.G(lv0, col);
      for (int m = 1; m < tree.nvs[b]; ++m) x += t.psi[b].col(m) * w.G(lv0 + m, col);
      if (inCluster(c, p)) x += dd.ovx[p - c.firstBody];
      dd.ovx[b - c.firstBody] = x;
    }
    auto rho = dd.rho.head(c.nv);
    rho.setZero();
    int markedLoop = -1;
    Motion xS = Motion::Zero();
    for (int i = 0; i < nd; ++i) {
      const int r = c.selectedRows[i];
      const int l = dd.rowLoop[r];
      if (l < 0 || lambda[i] == 0.0) continue;
      const LoopJoint& lj = cm.loops[l];
      if (l != markedLoop) {
        markPath(cm, c, lj.successorBody, dd.onS);
        markPath(cm, c, lj.predecessorBody, dd.onP);
        xS = inCluster(c, lj.successorBody) ? dd.ovx[lj.successorBody - c.firstBody]
                                            : Motion::Zero();
        markedLoop = l;
      }
      for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
        const double s = double(dd.onS[b - c.firstBody]) - double(dd.onP[b - c.firstBody]);
        if (s == 0.0) continue;
        const int p = tree.parent[b], lv0 = tree.idx_v[b] - c.v0;
        const Motion xL = inCluster(c, p) ? dd.ovx[p - c.firstBody] : Motion::Zero();
        for (int m = 0; m < tree.nvs[b]; ++m)  // every tangent column of the joint
          rho[lv0 + m] +=
              lambda[i] * s * dd.ow[r].dot(crossMotion(t.psi[b].col(m), xS - xL));  // eq. C2
      }
    }
    dd.dtau_dy.row(c.y0 + col).segment(c.y0, d).noalias() -= rho.transpose() * w.G;
  }
}

}  // namespace clusterdyn::detail
