// Constraints of a cluster: explicit relations (couplings, mimics) and implicit loop joints.
// Rows are expressed in the loop's predecessor frame P, so only poses relative to the cluster's
// output body are needed. G and g follow from partitioning K into dependent and independent
// columns (Chignoli et al. 2023, eq. 2-4, 6): G = [I; -Kd^-1 Ki], g = [0; Kd^-1 k].
#include "cluster/loop_constraints.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>

#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "core/small_lu.hpp"

namespace clusterdyn::detail {

namespace {

/// Position index of local velocity localV of a 1-dof joint (explicit relations act on those).
inline int qIndex(const Model& tree, const Cluster& c, int localV) {
  return tree.idx_q[tree.velocityOwner[c.v0 + localV]];
}

/// Pose of body b relative to cluster k's output body (identity for the output body itself).
inline Transform poseInOutput(const Cluster& c, const ClusterWorkspace& w, int b) {
  if (b < c.firstBody || b >= c.firstBody + c.nbodies) return Transform();
  return w.outputTb[b - c.firstBody];
}

inline bool inCluster(const Cluster& c, int b) {
  return b >= c.firstBody && b < c.firstBody + c.nbodies;
}

Vec3 logSO3(const Mat3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

}  // namespace

void clusterRelativePoses(const ClusterModel& cm, ClusterData& data, int k) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int p = cm.treeModel.parent[b];
    const Transform& liMi = data.treeData.liMi[b];
    Transform& T = w.outputTb[b - c.firstBody];
    if (inCluster(c, p)) {
      const Transform& Tp = w.outputTb[p - c.firstBody];
      T.R.noalias() = Tp.R * liMi.R;
      T.p.noalias() = Tp.p + Tp.R * liMi.p;
    } else {
      T = liMi;
    }
  }
}

void clusterPlacements(const ClusterModel& cm, ClusterData& data, int k,
                       const Eigen::Ref<const VecX>& q) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const Transform XJ = tree.joints[b].transform(q.data() + tree.idx_q[b]);
    data.treeData.liMi[b] = tree.jointPlacement[b] * XJ;
  }
  clusterRelativePoses(cm, data, k);
}

void constraintResidual(const ClusterModel& cm, ClusterData& data, int k,
                        const Eigen::Ref<const VecX>& q) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  int row = 0;
  for (int r : c.relations) {
    const ExplicitRelation& rel = cm.relations[r];
    double s = -rel.offset;
    for (const auto& [iv, coef] : rel.terms) s += coef * q[qIndex(cm.treeModel, c, iv - c.v0)];
    w.phi[row++] = s;
  }
  for (int l : c.loops) {
    const LoopJoint& lj = cm.loops[l];
    const Transform TP = poseInOutput(c, w, lj.predecessorBody) * lj.predecessorPlacement;
    const Transform TS = poseInOutput(c, w, lj.successorBody) * lj.successorPlacement;
    const Vec3 d = TP.R.transpose() * (TS.p - TP.p);
    if (lj.Trot.cols() == 2) {
      const Mat3 Rrel = TP.R.transpose() * TS.R;
      const Vec3 e = lj.axis.cross(Rrel * lj.axis);  // = omega_perp to first order
      w.phi.segment(row, 2) = lj.Trot.transpose() * e;
    } else if (lj.Trot.cols() == 3) {
      const Mat3 Rrel = TP.R.transpose() * TS.R;
      w.phi.segment(row, 3) = lj.Trot.transpose() * logSO3(Rrel);
    }  // (a spherical loop joint: no rotation rows)
    row += static_cast<int>(lj.Trot.cols());
    const int nl = static_cast<int>(lj.Tlin.cols());
    for (int j = 0; j < nl; ++j) w.phi[row + j] = lj.Tlin.col(j).dot(d);
    row += nl;
  }
}

namespace {

/// constraintJacobian of a cluster with a sparse K_d (kdOrder): every joint axis is moved into
/// the output body's coordinates once, m = outputTb_b s (the paths of all the loops share the
/// bodies carrying the platform), and each loop row is a dot product with it: the row
/// Trot^T (P X_o m) = (R_P Trot)^T omega, Tlin^T (P X_o m) = (R_P Tlin)^T (v - p_P x omega).
void sharedAxesJacobian(const ClusterModel& cm, ClusterData& data, int k) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  const Model& tree = cm.treeModel;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const Transform& T = w.outputTb[b - c.firstBody];
    const Joint& joint = tree.joints[b];
    for (int a = 0; a < joint.nv; ++a)
      w.axesOut.col(tree.idx_v[b] - c.v0 + a) = T.actMotion(joint.S.col(a));
  }
  int row = static_cast<int>(c.relations.size());
  for (int l : c.loops) {
    const LoopJoint& lj = cm.loops[l];
    const Transform TP = poseInOutput(c, w, lj.predecessorBody) * lj.predecessorPlacement;
    const int nr = static_cast<int>(lj.Trot.cols()), nl = static_cast<int>(lj.Tlin.cols());
    Mat3 Arot, Alin;
    for (int r = 0; r < nr; ++r) Arot.col(r).noalias() = TP.R * lj.Trot.col(r);
    for (int r = 0; r < nl; ++r) Alin.col(r).noalias() = TP.R * lj.Tlin.col(r);
    w.K.middleRows(row, nr + nl).setZero();
    auto addPath = [&](int body, double sign) {
      for (int b = body; inCluster(c, b); b = tree.parent[b]) {
        const int lv = tree.idx_v[b] - c.v0;
        for (int a = 0; a < tree.joints[b].nv; ++a) {
          const auto m = w.axesOut.col(lv + a);
          const Vec3 omega = m.head<3>();
          const Vec3 vP = m.tail<3>() - TP.p.cross(omega);
          double* Kcol = &w.K.coeffRef(row, lv + a);
          for (int r = 0; r < nr; ++r) Kcol[r] += sign * Arot.col(r).dot(omega);
          for (int r = 0; r < nl; ++r) Kcol[nr + r] += sign * Alin.col(r).dot(vP);
        }
      }
    };
    addPath(lj.successorBody, 1.0);
    addPath(lj.predecessorBody, -1.0);
    row += nr + nl;
  }
}

}  // namespace

void constraintJacobian(const ClusterModel& cm, ClusterData& data, int k) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  const Model& tree = cm.treeModel;
  const int nrel = static_cast<int>(c.relations.size());
  if (nrel > 0) w.K.topRows(nrel) = c.Kexplicit;
  if (!w.kdOrder.empty()) return sharedAxesJacobian(cm, data, k);
  int row = nrel;
  for (int l : c.loops) {
    const LoopJoint& lj = cm.loops[l];
    const Transform TPinv =
        (poseInOutput(c, w, lj.predecessorBody) * lj.predecessorPlacement).inverse();
    const int nr = static_cast<int>(lj.Trot.cols()), nl = static_cast<int>(lj.Tlin.cols());
    w.K.middleRows(row, nr + nl).setZero();
    auto addPath = [&](int body, double sign) {
      for (int b = body; inCluster(c, b); b = tree.parent[b]) {
        const Transform X = TPinv * w.outputTb[b - c.firstBody];
        const Joint& joint = tree.joints[b];
        for (int a = 0; a < joint.nv; ++a) {  // every motion axis (multi-dof joints too)
          const Motion s = X.actMotion(joint.S.col(a));
          double* Kcol = &w.K.coeffRef(row, tree.idx_v[b] - c.v0 + a);
          for (int r = 0; r < nr; ++r) Kcol[r] += sign * lj.Trot.col(r).dot(s.head<3>());
          for (int r = 0; r < nl; ++r) Kcol[nr + r] += sign * lj.Tlin.col(r).dot(s.tail<3>());
        }
      }
    };
    addPath(lj.successorBody, 1.0);
    addPath(lj.predecessorBody, -1.0);
    row += nr + nl;
  }
}

void constraintBias(const ClusterModel& cm, ClusterData& data, int k) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int nrel = static_cast<int>(c.relations.size());
  if (nrel > 0) w.k.head(nrel).setZero();
  int row = nrel;
  for (int l : c.loops) {
    const LoopJoint& lj = cm.loops[l];
    const int p = lj.predecessorBody, s = lj.successorBody;
    const Transform TP = poseInOutput(c, w, p) * lj.predecessorPlacement;
    const Transform PTS = TP.inverse() * poseInOutput(c, w, s);  // pose of body s in frame P
    // True velocities (inertial, in the bodies' coordinates) and cluster-local biases.
    const Motion vp = p >= 0 ? data.treeData.v[p] : Motion::Zero();
    const Motion vs = s >= 0 ? data.treeData.v[s] : Motion::Zero();
    const Motion lp = inCluster(c, p) ? data.localBias[p] : Motion::Zero();
    const Motion ls = inCluster(c, s) ? data.localBias[s] : Motion::Zero();
    const Motion vP = lj.predecessorPlacement.actInvMotion(vp);
    const Motion nu = PTS.actMotion(vs) - vP;  // relative velocity, P coordinates
    const Motion bias =
        PTS.actMotion(ls) - lj.predecessorPlacement.actInvMotion(lp) - crossMotion(vP, nu);
    const int nr = static_cast<int>(lj.Trot.cols()), nl = static_cast<int>(lj.Tlin.cols());
    w.k.segment(row, nr) = -(lj.Trot.transpose() * bias.head<3>());
    w.k.segment(row + nr, nl) = -(lj.Tlin.transpose() * bias.tail<3>());
    row += nr + nl;
  }
}

double gatherDependentBlock(const ClusterModel& cm, ClusterData& data, int k) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int nd = static_cast<int>(c.dependent.size());
  double scale = 0.0;
  if (!w.kdOrder.empty()) {  // the sparse order (setDependentOrder)
    const int* sel = c.selectedRows.data();
    for (int j = 0; j < nd; ++j) {  // column by column (both column major)
      const double* Kc =
          w.K.data() + static_cast<Eigen::Index>(c.dependent[w.kdOrder[j]]) * w.K.rows();
      double* Kdj = w.Kd.data() + static_cast<Eigen::Index>(j) * nd;
      for (int i = 0; i < nd; ++i) {
        Kdj[i] = Kc[sel[i]];
        scale = std::max(scale, std::abs(Kdj[i]));
      }
    }
    return scale;
  }
  for (int i = 0; i < nd; ++i)
    for (int j = 0; j < nd; ++j) {
      w.Kd(i, j) = w.K(c.selectedRows[i], c.dependent[j]);
      scale = std::max(scale, std::abs(w.Kd(i, j)));
    }
  return scale;
}

bool factorDependentBlock(ClusterWorkspace& w, double scale, double* pivotRatio) {
  const Eigen::Index nd = w.Kd.rows();
  const bool factored = w.kdOrder.empty()
                            ? luFactor(w.Kd, w.piv)
                            : sparseLuFactor(w.Kd, w.piv, w.kdPattern, kLuPivotTolerance, scale);
  if (!factored) {
    if (pivotRatio) *pivotRatio = 0.0;
    return false;
  }
  double ratio = 1.0;
  for (Eigen::Index i = 0; i < nd; ++i) ratio = std::min(ratio, std::abs(w.Kd(i, i)) / scale);
  if (pivotRatio) *pivotRatio = ratio;
  return nd == 0 || (std::isfinite(ratio) && ratio >= kClosureSettings.singularTolerance);
}

double dependentBlockSingularValue(const ClusterModel& cm, const ClusterData& data, int k) {
  const Cluster& c = cm.clusters[k];
  const ClusterWorkspace& w = detail::scratch(data)[k];
  const int nd = static_cast<int>(c.dependent.size());
  constexpr int kMax = 12;  // stack storage: no heap allocation on this (failure) path
  if (nd == 0 || nd > kMax) return std::numeric_limits<double>::quiet_NaN();
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMax, kMax> Kd(nd, nd);
  for (int i = 0; i < nd; ++i)
    for (int j = 0; j < nd; ++j) Kd(i, j) = w.K(c.selectedRows[i], c.dependent[j]);
  if (!Kd.allFinite()) return std::numeric_limits<double>::quiet_NaN();
  const Eigen::JacobiSVD<decltype(Kd)> svd(Kd);
  return svd.singularValues()[nd - 1];
}

Status singularDependentBlock(const ClusterModel& cm, ClusterData& data, int k, const char* where) {
  const Cluster& c = cm.clusters[k];
  const ClusterWorkspace& w = detail::scratch(data)[k];
  double scale = 0.0;
  for (int r : c.selectedRows)
    for (int j : c.dependent) scale = std::max(scale, std::abs(w.K(r, j)));
  const double sigma = dependentBlockSingularValue(cm, data, k);
  return fail(data.treeData, Status::ConstraintFailure,
              "cluster '%s': singular configuration %s (branch or dead point): the dependent "
              "block Kd has lost rank, smallest singular value %.3g (largest entry %.3g, "
              "limit %.0e relative)",
              c.name.c_str(), where, sigma, scale, kClosureSettings.singularTolerance);
}

Status explicitForm(const ClusterModel& cm, ClusterData& data, int k, Bias bias) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int nd = static_cast<int>(c.dependent.size());
  const double scale = gatherDependentBlock(cm, data, k);
  const int* sel = c.selectedRows.data();
  const bool idle = !w.idleColumn.empty();
  for (int j = 0; j < c.ny; ++j) {  // column by column (both column major)
    double* Kij = w.Ki.data() + static_cast<Eigen::Index>(j) * nd;
    if (idle && w.idleColumn[j]) {  // an idle column: zero but for round-off (idleColumn)
      for (int i = 0; i < nd; ++i) Kij[i] = 0.0;
      continue;
    }
    const double* Kc = w.K.data() + static_cast<Eigen::Index>(c.independent[j]) * w.K.rows();
    for (int i = 0; i < nd; ++i) Kij[i] = Kc[sel[i]];
  }
  if (bias == Bias::Compute)
    for (int i = 0; i < nd; ++i) w.kd[i] = w.k[sel[i]];
  if (!factorDependentBlock(w, scale, nullptr))
    return singularDependentBlock(cm, data, k, "at the given state");
  if (!w.kdOrder.empty()) {  // sparse K_d: solve over the factors' nonzeros, scatter by kdOrder
    w.Gd = w.Ki;             // G's and g's right-hand sides in one solve
    sparseLuSolveFactors(w.Kd, w.piv, w.kdPattern, w.Gd,
                         bias == Bias::Compute ? w.kd.data() : nullptr);
    for (int j = 0; j < c.ny; ++j) {
      w.G.row(c.independent[j]).setZero();
      w.G(c.independent[j], j) = 1.0;
    }
    for (int i = 0; i < nd; ++i) w.G.row(c.dependent[w.kdOrder[i]]) = -w.Gd.row(i);
    if (bias == Bias::Compute) {
      for (int j = 0; j < c.ny; ++j) w.g[c.independent[j]] = 0.0;
      for (int i = 0; i < nd; ++i) w.g[c.dependent[w.kdOrder[i]]] = w.kd[i];
    }
    return Status::Ok;
  }
  w.Gd = w.Ki;
  luSolveFactors(w.Kd, w.piv, w.Gd);  // natural column order
  for (int j = 0; j < c.ny; ++j) {
    w.G.row(c.independent[j]).setZero();
    w.G(c.independent[j], j) = 1.0;
  }
  for (int i = 0; i < nd; ++i) w.G.row(c.dependent[i]) = -w.Gd.row(i);
  if (bias == Bias::Compute) {
    luSolveFactors(w.Kd, w.piv, w.kd);
    for (int j = 0; j < c.ny; ++j) w.g[c.independent[j]] = 0.0;
    for (int i = 0; i < nd; ++i) w.g[c.dependent[i]] = w.kd[i];
  }
  return Status::Ok;
}

void setDependentOrder(const ClusterModel& cm, int k, ClusterWorkspace& w) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  const int nd = static_cast<int>(c.dependent.size());
  w.kdOrder.clear();
  w.kdPattern = SparseLuPattern();
  w.axesOut.resize(6, 0);
  w.piv.assign(nd, 0);
  bool multiDof = false;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
    multiDof = multiDof || tree.joints[b].nv > 1;
  if (!c.implicit() || !multiDof || nd < 2) return;  // 1-dof loops: dense LU, natural order
  // The number of constraints each dependent column enters: the loops whose predecessor or
  // successor path within the cluster holds its joint (the only nonzeros of K's loop rows,
  // constraintJacobian), and the explicit relations naming it.
  std::vector<int> count(nd, 0);
  for (int j = 0; j < nd; ++j) {
    const int iv = c.v0 + c.dependent[j];
    const int body = tree.velocityOwner[iv];
    for (int l : c.loops) {
      const LoopJoint& lj = cm.loops[l];
      bool on = false;
      for (int b : {lj.successorBody, lj.predecessorBody})
        for (; inCluster(c, b) && !on; b = tree.parent[b]) on = b == body;
      count[j] += on;
    }
    for (int r : c.relations)
      for (const auto& term : cm.relations[r].terms) count[j] += term.first == iv;
  }
  std::vector<int> order(nd);
  for (int j = 0; j < nd; ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return count[a] < count[b]; });
  bool identity = true;
  for (int j = 0; j < nd; ++j) identity = identity && order[j] == j;
  if (identity && count[0] == count[nd - 1]) return;  // nothing sparse to exploit
  w.kdOrder = order;
  w.axesOut.setZero(6, c.nv);
  setColumnOrder(order, w.piv);
  sparseLuReserve(w.kdPattern, nd);
}

}  // namespace clusterdyn::detail
