// H^-1 on the cluster tree, two ways (docs/derivatives.md, "H^-1"):
// * computeClusterMinverse, by a recursion on the cluster tree (eq. C11-C13): the cluster form of
//   the articulated-body inverse of the mass matrix (Carpentier & Mansard 2018, computeMinverse),
//   with the cluster articulated inertias of CE-ABA (Chignoli et al. 2023, Alg. 1: U = IA S,
//   D = S^T U, the output body receives IA - U D^-1 U^T) written in world axes, where the motion
//   subspace of a cluster body is the sum of its joints' world columns weighted by G and no
//   transform is needed between a cluster's bodies and its output body;
// * from H where it is at hand (the CE-ABA derivatives): the factorisation H = L^T L that keeps
//   the branch-induced sparsity of H (Featherstone 2005, LTL: no fill-in), L^-1 with the same
//   pattern, and H^-1 = L^-1 L^-T from the common ancestors of each pair (eq. C14-C16).
#include <algorithm>
#include <cmath>

#include "cluster/cluster_derivatives_detail.hpp"
#include "cluster/cluster_joint_dynamics.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "core/small_spd.hpp"

namespace clusterdyn {

namespace detail {

namespace {

/// Cluster motion subspace of every body of cluster k in world axes (eq. C11):
/// Psi_b = psi_b G_rows(b) + Psi_parent(b) inside the cluster, psi_b = 0X_b S_b; and the body's
/// rigid inertia in world axes as the seed of its articulated inertia. A rotor
/// (OutputFrameRotor: axisymmetric, its axis and inertia constant in its output body's frame)
/// from its output body's placement, without its own.
void worldClusterSubspace(const ClusterModel& cm, const ClusterData& data,
                          ClusterDerivativeData& dd, int k) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  const Data& td = data.treeData;
  const ClusterScratch& s = fullScratch(data);
  const MatX& G = c.implicit() ? scratch(data)[k].G : c.G;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    if (c.constrained() && s.rotorSlot[b] >= 0) {
      const OutputFrameRotor& r = s.rotors[s.rotorSlot[b]];
      const Transform oMo = r.parent >= 0 ? td.oMi[r.parent] : Transform::Identity();
      dd.mIA[b] = r.inertia.transformedBy(oMo).matrix();
      const Motion psi = oMo.actMotion(r.axis);
      Mat6X& Psi = dd.mPsi[b];
      for (int e = 0; e < c.ny; ++e) Psi.col(e) = psi * G(r.row, e);
      continue;
    }
    const Transform& oMb = td.oMi[b];
    const Joint& joint = tree.joints[b];
    dd.mIA[b] = tree.inertias[b].transformedBy(oMb).matrix();
    Mat6X& Psi = dd.mPsi[b];
    if (!c.constrained()) {  // G = 1: the joint's own world columns
      for (int j = 0; j < joint.nv; ++j) Psi.col(j) = oMb.actMotion(joint.S.col(j));
      continue;
    }
    const int p = tree.parent[b];
    if (p >= c.firstBody && p < c.firstBody + c.nbodies)
      Psi = dd.mPsi[p];
    else
      Psi.setZero();
    const int row = tree.idx_v[b] - c.v0;
    for (int j = 0; j < joint.nv; ++j) {
      const Motion psi = oMb.actMotion(joint.S.col(j));
      for (int e = 0; e < c.ny; ++e)
        if (G(row + j, e) != 0.0) Psi.col(e) += psi * G(row + j, e);
    }
  }
}

/// minverseBackward for a cluster with one independent coordinate: the same terms on 6-vectors.
template <bool kArmature>
bool minverseBackwardScalar(const ClusterModel& cm, const ClusterData& data,
                            ClusterDerivativeData& dd, int k, double* ratio) {
  const Cluster& c = cm.clusters[k];
  const int y0 = c.y0, o = c.outputBody, c0 = dd.colStart[k], c1 = dd.colEnd[k];
  const int b0 = c.firstBody, b1 = c.firstBody + c.nbodies;
  const int e0 = dd.mCarrierStart[k], e1 = dd.mCarrierStart[k + 1];
  double D = 0.0;
  Vec6 Ubar = Vec6::Zero();
  for (int b = b0; b < b1; ++b) {
    const Vec6 psi = dd.mPsi[b].col(0);
    const Vec6 U = dd.mIA[b] * psi;
    dd.mU[b].col(0) = U;
    D += psi.dot(U);
    Ubar += U;
  }
  if constexpr (kArmature) D += clusterArmatureScalar(cm.treeModel, c, scratch(data)[k].G);
  if (!(D > 0.0)) {
    *ratio = std::numeric_limits<double>::quiet_NaN();  // a 1 x 1 D has no scale to test
    return false;
  }
  const double Dinv = 1.0 / D;
  dd.mDinv[k](0, 0) = Dinv;
  MatX& Hinv = dd.Hinv;
  for (int col = c0; col < c1; ++col) {
    if (col == y0) {
      Hinv(y0, col) = Dinv;
      continue;
    }
    double t = 0.0;
    for (int e = e0; e < e1; ++e) {  // F_b = 0 on the bodies no cluster hangs from
      const int b = dd.mCarrier[e];
      t += dd.mPsi[b].col(0).dot(dd.mFA[b].col(col));
    }
    Hinv(y0, col) = -Dinv * t;
  }
  for (int col = c1; col < cm.ny; ++col) Hinv(y0, col) = 0.0;
  if (o < 0) return true;
  const Vec6 UbarDinv = Ubar * Dinv;
  dd.mUbarDinv[k].col(0) = UbarDinv;
  Mat6& IAo = dd.mIA[o];
  Mat6X& Fo = dd.mFA[o];
  for (int b = b0; b < b1; ++b) IAo += dd.mIA[b];
  IAo.noalias() -= UbarDinv * Ubar.transpose();
  for (int col = c0; col < c1; ++col) {
    Vec6 f = Ubar * Hinv(y0, col);
    for (int e = e0; e < e1; ++e) f += dd.mFA[dd.mCarrier[e]].col(col);
    Fo.col(col) += f;
  }
  return true;
}

/// Dinv = D^-1 of a cluster's N x N D (MatX) by the fixed-size Cholesky inverse; false unless D
/// is positive definite to working precision (kSingularPivot; *ratio: the failed test).
template <int N>
bool fixedInverse(const MatX& D, MatX& Dinv, double* ratio) {
  const Eigen::Matrix<double, N, N> A = D;
  Eigen::Matrix<double, N, N> Ainv;
  if (!invertPositiveDefinite<N>(A, Ainv, kSingularPivot, ratio)) return false;
  Dinv = Ainv;
  return true;
}

/// Backward step of cluster k (eq. C11, C12): U_b = IA_b Psi_b, D = sum Psi_b^T U_b, its
/// inverse, the rows of H^-1 of the cluster over the columns [colStart, colEnd) before the
/// forward correction, D^-1 (E_k - sum Psi_b^T F_b), and the output body's articulated inertia
/// IA_o += sum IA_b - Ubar D^-1 Ubar^T and force sensitivity F_o += sum F_b + Ubar Hinv_k
/// (Ubar = sum U_b). kArmature: D += G^T A G, the armature of the cluster's joints (as in
/// CE-ABA; H = G^T (M + A) G). False when D is not positive definite to working precision
/// (kSingularPivot; *ratio: the failed test, PivotText).
template <bool kArmature>
bool minverseBackward(const ClusterModel& cm, const ClusterData& data, ClusterDerivativeData& dd,
                      int k, double* ratio) {
  const Cluster& c = cm.clusters[k];
  if (c.ny == 1) return minverseBackwardScalar<kArmature>(cm, data, dd, k, ratio);
  const int d = c.ny, y0 = c.y0, o = c.outputBody;
  const int c0 = dd.colStart[k], c1 = dd.colEnd[k];
  auto D = dd.mD[k].topLeftCorner(d, d);
  auto Ubar = dd.mUbar[k].leftCols(d);
  D.setZero();
  Ubar.setZero();
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    dd.mU[b].noalias() = dd.mIA[b].lazyProduct(dd.mPsi[b]);
    D.noalias() += dd.mPsi[b].transpose().lazyProduct(dd.mU[b]);
    Ubar += dd.mU[b];
  }
  if constexpr (kArmature) addClusterArmature(cm.treeModel, c, scratch(data)[k].G, D);
  MatX& Hinv = dd.Hinv;
  MatX& Dinv = dd.mDinv[k];
  if (d == 1) {
    if (!(D(0, 0) > 0.0)) {
      *ratio = std::numeric_limits<double>::quiet_NaN();
      return false;
    }
    Dinv(0, 0) = 1.0 / D(0, 0);
  } else if (d == 2) {
    if (!fixedInverse<2>(dd.mD[k], Dinv, ratio)) return false;
  } else if (d == 3) {
    if (!fixedInverse<3>(dd.mD[k], Dinv, ratio)) return false;
  } else if (d == 6) {  // a floating base
    if (!fixedInverse<6>(dd.mD[k], Dinv, ratio)) return false;
  } else {
    dd.mLlt[k].compute(dd.mD[k]);
    if (!choleskyAboveFloor(dd.mLlt[k], dd.mD[k], kSingularPivot, ratio)) return false;
    Dinv.setIdentity();
    dd.mLlt[k].solveInPlace(Dinv);
  }
  // Rows of cluster k: D^-1 on its own columns, -D^-1 sum Psi_b^T F_b on its descendants'.
  for (int col = c0; col < c1; ++col) {
    if (col >= y0 && col < y0 + d) {
      Hinv.col(col).segment(y0, d) = Dinv.col(col - y0);
      continue;
    }
    auto t = dd.mTmp.head(d);
    t.setZero();
    for (int e = dd.mCarrierStart[k]; e < dd.mCarrierStart[k + 1]; ++e) {
      const int b = dd.mCarrier[e];
      t.noalias() += dd.mPsi[b].transpose() * dd.mFA[b].col(col);
    }
    auto h = Hinv.col(col).segment(y0, d);
    h.noalias() = Dinv * t;  // (-(Dinv * t) would evaluate the product into a heap temporary)
    h = -h;
  }
  for (int col = c1; col < cm.ny; ++col) Hinv.col(col).segment(y0, d).setZero();
  if (o < 0) return true;
  Mat6& IAo = dd.mIA[o];
  Mat6X& Fo = dd.mFA[o];
  auto UbarDinv = dd.mUbarDinv[k].leftCols(d);
  UbarDinv.noalias() = Ubar.lazyProduct(Dinv);
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) IAo += dd.mIA[b];
  for (int e = dd.mCarrierStart[k]; e < dd.mCarrierStart[k + 1]; ++e)
    Fo.middleCols(c0, c1 - c0) += dd.mFA[dd.mCarrier[e]].middleCols(c0, c1 - c0);
  IAo.noalias() -= UbarDinv.lazyProduct(Ubar.transpose());
  Fo.middleCols(c0, c1 - c0).noalias() += Ubar.lazyProduct(Hinv.block(y0, c0, d, c1 - c0));
  return true;
}

/// Forward step of cluster k (eq. C13) over the columns [colStart, ny): Hinv_k -= D^-1 Ubar^T
/// A_o, then A_b = A_o + Psi_b Hinv_k for its bodies (A = d a / d tau_y; overwrites F).
void minverseForward(const ClusterModel& cm, ClusterDerivativeData& dd, int k) {
  const Cluster& c = cm.clusters[k];
  const int d = c.ny, y0 = c.y0, o = c.outputBody, c0 = dd.colStart[k], n = cm.ny - c0;
  // A_b only on the bodies clusters hang from (the others' are never read).
  const int e0 = dd.mCarrierStart[k], e1 = dd.mCarrierStart[k + 1];
  if (d == 1) {  // the same on 6-vectors
    if (o < 0) {
      for (int col = c0; col < cm.ny; ++col)
        for (int e = e0; e < e1; ++e)
          dd.mFA[dd.mCarrier[e]].col(col) = dd.mPsi[dd.mCarrier[e]].col(0) * dd.Hinv(y0, col);
      return;
    }
    const Vec6 UbarDinv = dd.mUbarDinv[k].col(0);
    const Mat6X& Ao = dd.mFA[o];
    for (int col = c0; col < cm.ny; ++col) {
      const Vec6 ao = Ao.col(col);
      const double h = dd.Hinv(y0, col) -= UbarDinv.dot(ao);
      for (int e = e0; e < e1; ++e)
        dd.mFA[dd.mCarrier[e]].col(col) = ao + dd.mPsi[dd.mCarrier[e]].col(0) * h;
    }
    return;
  }
  auto rows = dd.Hinv.block(y0, c0, d, n);
  if (o >= 0) {
    const auto Ao = dd.mFA[o].middleCols(c0, n);
    rows.noalias() -= dd.mUbarDinv[k].leftCols(d).transpose().lazyProduct(Ao);
    for (int e = e0; e < e1; ++e) {
      const int b = dd.mCarrier[e];
      auto Ab = dd.mFA[b].middleCols(c0, n);
      Ab = Ao;
      Ab.noalias() += dd.mPsi[b].lazyProduct(rows);
    }
    return;
  }
  for (int e = e0; e < e1; ++e)
    dd.mFA[dd.mCarrier[e]].middleCols(c0, n).noalias() = dd.mPsi[dd.mCarrier[e]].lazyProduct(rows);
}

}  // namespace

Status clusterMinversePasses(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd) {
  const int nc = static_cast<int>(cm.clusters.size());
  for (int k = 0; k < nc; ++k) worldClusterSubspace(cm, data, dd, k);
  for (const int b : dd.mCarrier) dd.mFA[b].setZero();
  const bool armature = cm.treeModel.hasArmature();
  for (int k = nc - 1; k >= 0; --k)
    if (double ratio; !(armature ? minverseBackward<true>(cm, data, dd, k, &ratio)
                                 : minverseBackward<false>(cm, data, dd, k, &ratio)))
      return fail(data.treeData, Status::NotPositiveDefinite,
                  "the articulated inertia of cluster '%s' is singular along its independent "
                  "coordinates (%s)",
                  cm.clusters[k].name.c_str(), PivotText(ratio, kSingularPivot).c_str());
  for (int k = 0; k < nc; ++k) minverseForward(cm, dd, k);
  if (dd.upperTriangle)  // the forward pass filled the columns right of each cluster's
    for (int col = 0; col < cm.ny; ++col)  // own: mirror them
      for (int row = col + 1; row < cm.ny; ++row) dd.Hinv(row, col) = dd.Hinv(col, row);
  return Status::Ok;
}

void initBranchFactor(const ClusterModel& cm, ClusterDerivativeData& dd) {
  // The recursion's carriers: per cluster, its bodies that are the output body of a cluster.
  const int nc = static_cast<int>(cm.clusters.size());
  std::vector<char> carries(cm.treeModel.nbodies, 0);
  for (const Cluster& c : cm.clusters)
    if (c.outputBody >= 0) carries[c.outputBody] = 1;
  dd.mCarrier.clear();
  dd.mCarrierStart.assign(nc + 1, 0);
  for (int k = 0; k < nc; ++k) {
    const Cluster& c = cm.clusters[k];
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
      if (carries[b]) dd.mCarrier.push_back(b);
    dd.mCarrierStart[k + 1] = static_cast<int>(dd.mCarrier.size());
  }
  // lambda(i): the previous velocity of i's cluster, else the last one of the nearest ancestor
  // cluster with independent velocities (-1: none). H(i, j) != 0 only if j is on i's path or i
  // on j's (the clusters related; congruenceG), so L keeps the pattern of the paths.
  const int ny = cm.ny;
  std::vector<int> lambda(ny, -1), depth(ny, 0);
  for (const Cluster& c : cm.clusters) {
    int anchor = -1;
    for (int a = c.parent; a >= 0 && anchor < 0; a = cm.clusters[a].parent)
      if (cm.clusters[a].ny > 0) anchor = cm.clusters[a].y0 + cm.clusters[a].ny - 1;
    for (int j = 0; j < c.ny; ++j) lambda[c.y0 + j] = j > 0 ? c.y0 + j - 1 : anchor;
  }
  dd.hStart.assign(ny + 1, 0);
  for (int i = 0; i < ny; ++i) {
    for (int a = lambda[i]; a >= 0; a = lambda[a]) ++depth[i];
    dd.hStart[i + 1] = dd.hStart[i] + depth[i] + 1;
  }
  dd.hPath.assign(dd.hStart[ny], 0);
  for (int i = 0; i < ny; ++i) {
    int t = dd.hStart[i + 1];
    for (int a = i; a >= 0; a = lambda[a]) dd.hPath[--t] = a;  // root first, i last
  }
  dd.hOrder.resize(ny);  // by depth: ancestors before descendants
  for (int i = 0; i < ny; ++i) dd.hOrder[i] = i;
  std::stable_sort(dd.hOrder.begin(), dd.hOrder.end(),
                   [&](int a, int b) { return depth[a] < depth[b]; });
  dd.hCommon.assign(static_cast<size_t>(ny) * ny, 0);
  for (int i = 0; i < ny; ++i)
    for (int j = 0; j < ny; ++j) {
      const int n = std::min(depth[i], depth[j]) + 1;
      int s = 0;
      while (s < n && dd.hPath[dd.hStart[i] + s] == dd.hPath[dd.hStart[j] + s]) ++s;
      dd.hCommon[static_cast<size_t>(i) * ny + j] = s;
    }
  dd.hL.setZero(dd.hStart[ny]);
  dd.hW.setZero(dd.hStart[ny]);
}

int branchSparseInverse(ClusterDerivativeData& dd, double* ratio) {
  const int n = static_cast<int>(dd.hOrder.size());
  const int* const path = dd.hPath.data();
  double* const L = dd.hL.data();
  double* const W = dd.hW.data();
  // Row i of L (and of W = L^-1) over i's path a_0 (root), ..., a_d = i, from hStart[i]; row a_t
  // is the first t + 1 entries of the same path.
  double maxDiagonal = 0.0, minPivot = std::numeric_limits<double>::infinity();
  int weakest = -1;  // the coordinate of the smallest pivot
  for (int i = 0; i < n; ++i) {
    const double* const h = &dd.H(0, i);
    for (int t = dd.hStart[i]; t < dd.hStart[i + 1]; ++t) L[t] = h[path[t]];
    maxDiagonal = std::max(maxDiagonal, h[i]);
  }
  // eq. C14, H = L^T L, leaves to root: L_kk = sqrt(H_kk), L_k,a = H_k,a / L_kk, and
  // H_i,a -= L_k,i L_k,a for i on k's path and a on i's (Featherstone 2005, LTL).
  for (int r = n - 1; r >= 0; --r) {
    const int k = dd.hOrder[r], s = dd.hStart[k], d = dd.hStart[k + 1] - s - 1;
    double* const x = L + s;
    if (!(x[d] > 0.0)) {  // also NaN
      *ratio = std::isnan(x[d]) ? x[d] : x[d] / maxDiagonal;
      return k;
    }
    if (x[d] < minPivot) {
      minPivot = x[d];
      weakest = k;
    }
    x[d] = std::sqrt(x[d]);
    const double inv = 1.0 / x[d];
    for (int t = 0; t < d; ++t) x[t] *= inv;
    for (int t = 0; t < d; ++t) {
      double* const y = L + dd.hStart[path[s + t]];
      const double xt = x[t];
      for (int m = 0; m <= t; ++m) y[m] -= xt * x[m];
    }
  }
  if (!pivotsAboveFloor(minPivot, maxDiagonal, kSingularPivot)) {  // singular to working precision
    *ratio = minPivot / maxDiagonal;
    return weakest;
  }
  // eq. C15, W = L^-1 (the pattern of L), root to leaves: W_i,a_q = -(sum_{q <= t < d}
  // L_i,a_t W_a_t,a_q) / L_ii, W_ii = 1 / L_ii.
  for (int r = 0; r < n; ++r) {
    const int i = dd.hOrder[r], s = dd.hStart[i], d = dd.hStart[i + 1] - s - 1;
    const double* const x = L + s;
    double* const w = W + s;
    for (int q = 0; q < d; ++q) w[q] = 0.0;
    for (int t = 0; t < d; ++t) {
      const double* const wt = W + dd.hStart[path[s + t]];
      const double xt = x[t];
      for (int q = 0; q <= t; ++q) w[q] += xt * wt[q];
    }
    const double inv = 1.0 / x[d];
    for (int q = 0; q < d; ++q) w[q] *= -inv;
    w[d] = inv;
  }
  // eq. C16, H^-1 = W W^T: (i, j) sums over the common ancestors (and selves) of i and j, the
  // first hCommon(i, j) entries of both rows.
  for (int j = 0; j < n; ++j) {
    const double* const wj = W + dd.hStart[j];
    const int* const common = &dd.hCommon[static_cast<size_t>(j) * n];
    for (int i = j; i < n; ++i) {
      const double* const wi = W + dd.hStart[i];
      double x = 0.0;
      for (int q = 0; q < common[i]; ++q) x += wi[q] * wj[q];
      dd.Hinv(i, j) = x;
      dd.Hinv(j, i) = x;
    }
  }
  return -1;
}

}  // namespace detail

Status computeClusterMinverse(const ClusterModel& model, ClusterData& data,
                              ClusterDerivativeData& dd, ConstVecRef q) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, nullptr));
  if (dd.model != &model)
    return detail::fail(data.treeData, Status::WorkspaceMismatch,
                        "the derivative workspace was created for another model");
  // Joint placements of every body but the rotors, G of the loop clusters, the check that q is
  // closed; then the world placements (the rotors are seen from their output bodies).
  CDYN_TRY(detail::clusterPositionPass(model, data, q, detail::StateCheck::Check,
                                       detail::OutputPoses::ImplicitOnly));
  Data& td = data.treeData;
  for (const int b : detail::fullScratch(data).placementBodies) {
    const int p = model.treeModel.parent[b];
    if (p >= 0) {
      td.oMi[b].R.noalias() = td.oMi[p].R * td.liMi[b].R;
      td.oMi[b].p.noalias() = td.oMi[p].p + td.oMi[p].R * td.liMi[b].p;
    } else {
      td.oMi[b] = td.liMi[b];
    }
  }
  CDYN_TRY(detail::clusterMinversePasses(model, data, dd));
  detail::ok(data.treeData);
  return detail::checkOverflow(data.treeData, Status::Ok, dd.Hinv, "computeClusterMinverse: Hinv",
                               {{"q", detail::maxAbs(q), 1}});
}

}  // namespace clusterdyn
