// Delassus matrix J H^-1 J^T on the cluster tree by constraint-space propagation (the PV-OSIM
// family of Sathya, Decré, Swevers 2024 / Sathya, Bruyninckx, Decré, Pipeleers 2024) and its damped
// inverse by cABA-OSIM (Sathya & Carpentier 2024, Alg. 5).
//
// For each cluster k (leaf to root), with n active rows below it and the output body o:
//   M     (n x 6m)  the rows as covectors on the accelerations of k's bodies: the attachments'
//                   C and the children's T placed at the bodies they hang from;
//   L_k = sum_children L_c + (M S) D^-1 (M S)^T       (PV-OSIMr, eq. 13-15)
//   T_k = M Xh - (M S) D^-1 Ubar^T                    (the constraint-space motion propagator,
//                                                     eq. 12: rows on a_o)
// where S, D^-1, Ubar = Xh^T IA S are the cluster quantities of CE-ABA's pass 2. At a cluster
// attached to the world, L_k is the block of the Delassus matrix of its rows.
#include <cmath>

#include "cluster/cluster_aba_step.hpp"
#include "cluster/cluster_kinematics.hpp"
#include "constrained/constraint_detail.hpp"
#include "constrained/delassus_aba.hpp"
#include "constrained/symmetric_inertia.hpp"
#include "core/check.hpp"
#include "core/small_spd.hpp"
#include "tree/aba_step.hpp"
#include "tree/axis_transforms.hpp"
#include "tree/subtree_blocks.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {

namespace detail {

namespace {
/// Entry (r, s) of a symmetric matrix of which only the lower triangle is kept (the blocks L of
/// the propagation: their strictly upper part is not maintained).
inline double& lower(MatX& L, int r, int s) { return r >= s ? L(r, s) : L(s, r); }
inline double lower(const MatX& L, int r, int s) { return r >= s ? L(r, s) : L(s, r); }

#if defined(__GNUC__)
#define CDYN_UNROLL _Pragma("GCC unroll 16")
#else
#define CDYN_UNROLL
#endif

/// The step of a cluster of one body on a 1-dof joint (eq. 13-15 with a rank-one D^-1): its n
/// rows M (n x 6, rows contiguous), ms = M S, L += ms D^-1 ms^T (lower triangle, column by
/// column) and, below a parent (X non-null), T = X^*(M - ms D^-1 U^T) row by row. N = n fixed at
/// compile time (loops unrolled: the point and frame contacts of a leg) or 0 (n at run time);
/// the same operations in the same order either way.
template <int N>
void oneDofRowsStep(const Vec6& sv, const Vec6& U, double Dinv, int axis, const Transform* X,
                    const double* M, double* ms, double* L, double* T, int nRun) {
  const int n = N > 0 ? N : nRun;
  CDYN_UNROLL
  for (int r = 0; r < n; ++r) ms[r] = Eigen::Map<const Vec6>(M + 6 * r).dot(sv);
  CDYN_UNROLL
  for (int s = 0; s < n; ++s) {  // lower triangle, column s
    const double a = Dinv * ms[s];
    CDYN_UNROLL
    for (int r = s; r < n; ++r) L[r + n * s] += a * ms[r];
  }
  if (!X) return;
  CDYN_UNROLL
  for (int r = 0; r < n; ++r) {
    const Vec6 row = Eigen::Map<const Vec6>(M + 6 * r) - (Dinv * ms[r]) * U;
    Eigen::Map<Vec6>(T + 6 * r) = detail::forceInParentFrame(axis, *X, row);
  }
}

/// The propagation on pass 2's quantities. AfterAba: on those of ceAba (delassus_aba.hpp), whose
/// rotors in their output body's frame (OutputFrameRotor::aba) have no pose of their own: their
/// blocks of M are zero (no rows attach to them), so they are not visited.
template <bool AfterAba>
void propagate(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
               Eigen::Ref<MatX> out) {
  const Data& td = data.treeData;
  const ClusterScratch& scr = detail::fullScratch(data);
  const std::vector<ClusterWorkspace>& ws = scr.clusters;
  MatX& full = cd.full;
  full.setZero();
  for (auto it = cd.supportOrder.rbegin(); it != cd.supportOrder.rend(); ++it) {
    const int k = *it;
    const Cluster& c = cm.clusters[k];
    ConstraintData::ClusterRows& R = cd.clusterRows[k];
    const int n = static_cast<int>(R.rows.size());
    const int o = c.outputBody;
    const bool oneDof = !c.constrained() && cm.treeModel.joints[c.firstBody].nv == 1;
    // The rows as covectors on k's bodies (M) and the Delassus block below k (L, its lower
    // triangle: the strictly upper part is not kept up to date): in a chain
    // (one child carrying all rows) the child's T and L as they are, else assembled from the
    // attachments, the virtual rows and the children's propagators.
    const bool chain = oneDof && R.attachments.empty() && R.virtuals.empty() &&
                       R.children.size() == 1 &&
                       static_cast<int>(cd.clusterRows[R.children[0]].rows.size()) == n;
    // On ceAba's quantities, a chain of one-coordinate clusters (a leg of rotor-link pairs): M
    // is the child's T at the body it hangs from (chainBody), read in place; L moved.
    int chainBody = -1;
    if constexpr (AfterAba)
      if (!oneDof && c.constrained() && c.ny == 1 && R.attachments.empty() && R.virtuals.empty() &&
          R.children.size() == 1 &&
          static_cast<int>(cd.clusterRows[R.children[0]].rows.size()) == n)
        chainBody = cm.clusters[R.children[0]].outputBody;
    if (chain) {  // the child's T and L are not read again (it is not a compression): moved
      ConstraintData::ClusterRows& Rc = cd.clusterRows[R.children[0]];
      R.M.swap(Rc.T);  // equal sizes (n x 6): the buffers are exchanged, nothing is allocated
      R.L.swap(Rc.L);
    } else if (chainBody >= 0) {
      R.L.swap(cd.clusterRows[R.children[0]].L);
    } else {
      R.M.setZero();
      for (size_t i = 0; i < R.attachments.size(); ++i) {
        const ConstraintData::Attachment& a = cd.attachments[R.attachments[i]];
        R.M.block(R.attachPos[i], 6 * (a.body - c.firstBody), a.rows, 6) += a.C.topRows(a.rows);
      }
      for (size_t i = 0; i < R.virtuals.size(); ++i) {  // a_o of a compressed child: C = I
        const int col = 6 * (cd.compressions[R.virtuals[i]].body - c.firstBody);
        R.M.block<6, 6>(R.virtualPos[i], col).diagonal().array() += 1.0;
      }
      R.L.setZero();
      for (size_t i = 0; i < R.children.size(); ++i) {
        const ConstraintData::ClusterRows& Rc = cd.clusterRows[R.children[i]];
        const std::vector<int>& pos = R.childPos[i];
        const int col = 6 * (cm.clusters[R.children[i]].outputBody - c.firstBody);
        const int nc = static_cast<int>(pos.size());
        for (int r = 0; r < nc; ++r) {
          R.M.block<1, 6>(pos[r], col) += Rc.T.row(r);
          for (int s = 0; s <= r; ++s) lower(R.L, pos[r], pos[s]) += Rc.L(r, s);
        }
      }
    }
    if (oneDof) {
      // One body on a 1-dof joint: rank-one update, rows moved to the parent (the common case).
      const int b = c.firstBody;
      const Vec6 sv = cm.treeModel.joints[b].S.col(0);
      const Vec6 U = td.U[b].col(0);
      const double Dinv = td.Dinv[b](0, 0);
      const int axis = cm.treeModel.axisRotation[b];
      const Transform* X = o >= 0 ? &td.liMi[b] : nullptr;
      const double* Mp = R.M.data();
      double *ms = R.MS.data(), *L = R.L.data(), *T = R.T.data();  // ms: n x 1
      switch (n) {
        case 3:
          oneDofRowsStep<3>(sv, U, Dinv, axis, X, Mp, ms, L, T, n);
          break;
        case 6:
          oneDofRowsStep<6>(sv, U, Dinv, axis, X, Mp, ms, L, T, n);
          break;
        default:
          oneDofRowsStep<0>(sv, U, Dinv, axis, X, Mp, ms, L, T, n);
      }
    } else if (!c.constrained() && cm.treeModel.joints[c.firstBody].type == JointType::Floating) {
      // Floating base: S = I, D^-1 = IA^-1 (6 x 6), row by row with fixed-size products.
      const int b = c.firstBody;
      const Mat6 Dinv = td.Dinv[b];
      for (int r = 0; r < n; ++r)
        Eigen::Map<Vec6>(R.MSD.data() + 6 * r).noalias() =
            Dinv * Eigen::Map<const Vec6>(R.M.data() + 6 * r);
      double* L = R.L.data();
      for (int r = 0; r < n; ++r) {
        const Eigen::Map<const Vec6> a(R.MSD.data() + 6 * r);
        for (int s = 0; s <= r; ++s)
          L[r + n * s] += a.dot(Eigen::Map<const Vec6>(R.M.data() + 6 * s));
      }
      if (o >= 0) {
        const Mat6 U = td.U[b];
        for (int r = 0; r < n; ++r) {
          const Vec6 row = Eigen::Map<const Vec6>(R.M.data() + 6 * r) -
                           U * Eigen::Map<const Vec6>(R.MSD.data() + 6 * r);
          Eigen::Map<Vec6>(R.T.data() + 6 * r) = td.liMi[b].actForce(row);
        }
      }
    } else if (!c.constrained()) {
      const int b = c.firstBody;
      const Joint& joint = cm.treeModel.joints[b];
      const int nv = joint.nv;
      auto MS = R.MS.leftCols(nv);
      auto MSD = R.MSD.leftCols(nv);
      MS.noalias() = R.M.lazyProduct(joint.S);
      MSD.noalias() = MS.lazyProduct(td.Dinv[b]);
      R.L.noalias() += MSD.lazyProduct(MS.transpose());  // (M S) D^-1 (M S)^T
      if (o >= 0) {
        R.M.noalias() -= MSD.lazyProduct(td.U[b].leftCols(nv).transpose());
        for (int r = 0; r < n; ++r)
          Eigen::Map<Vec6>(R.T.data() + 6 * r) =
              td.liMi[b].actForce(Eigen::Map<const Vec6>(R.M.data() + 6 * r));
      }
    } else if (AfterAba && c.ny == 1) {
      // One independent coordinate (a rotor-link pair, a belt): M S, L and T row by row in
      // fixed-size products over the bodies that carry rows (in a chain: the child's T at
      // chainBody, l0 = its local index; else M over all of k's bodies).
      const ClusterWorkspace& w = ws[k];
      const double Dinv = w.Dinv(0, 0);
      const Vec6 Ubar = w.Ubar.col(0);
      const bool inChain = chainBody >= 0;
      const int l0 = inChain ? chainBody - c.firstBody : 0;
      const int lEnd = inChain ? l0 + 1 : c.nbodies;
      const double* M0 = inChain ? cd.clusterRows[R.children[0]].T.data() : R.M.data();
      const int stride = inChain ? 6 : 6 * c.nbodies;  // of M0's rows
      const int base = inChain ? l0 : 0;               // M0's first local body
      const auto block = [&](int r, int l) {           // row r of M at local body l
        return Eigen::Map<const Vec6>(M0 + r * stride + 6 * (l - base));
      };
      double *ms = R.MS.data(), *L = R.L.data();
      for (int r = 0; r < n; ++r) {
        double a = 0.0;
        for (int l = l0; l < lEnd; ++l)
          if (!isOutputFrameRotor(scr, c.firstBody + l))
            a += block(r, l).dot(w.S.block<6, 1>(6 * l, 0));
        ms[r] = a;
      }
      for (int s = 0; s < n; ++s) {  // lower triangle, column s
        const double a = Dinv * ms[s];
        for (int r = s; r < n; ++r) L[r + n * s] += a * ms[r];
      }
      if (o >= 0)
        for (int r = 0; r < n; ++r) {
          Vec6 t = -(Dinv * ms[r]) * Ubar;
          for (int l = l0; l < lEnd; ++l)
            if (!isOutputFrameRotor(scr, c.firstBody + l)) t += w.outputTb[l].actForce(block(r, l));
          Eigen::Map<Vec6>(R.T.data() + 6 * r) = t;
        }
    } else {
      const ClusterWorkspace& w = ws[k];
      R.MS.noalias() = R.M.lazyProduct(w.S);
      R.MSD.noalias() = R.MS.lazyProduct(w.Dinv);
      R.L.noalias() += R.MSD.lazyProduct(R.MS.transpose());
      if (o >= 0) {
        R.T.noalias() = -R.MSD.lazyProduct(w.Ubar.transpose());
        for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
          if constexpr (AfterAba)
            if (isOutputFrameRotor(scr, b)) continue;
          const Transform& X = w.outputTb[b - c.firstBody];
          const int i = 6 * (b - c.firstBody);
          for (int r = 0; r < n; ++r)
            R.T.row(r) += X.actForce(R.M.block<1, 6>(r, i).transpose()).transpose();
        }
      }
    }
    if (o < 0) {  // both triangles of the block, from L's lower one (column s, r >= s)
      const double* L = R.L.data();
      for (int s = 0; s < n; ++s) {
        const int gs = R.rows[s];
        full(gs, gs) += L[s + n * s];
        for (int r = s + 1; r < n; ++r) {
          const int gr = R.rows[r];
          full(gr, gs) += L[r + n * s];
          full(gs, gr) += L[r + n * s];
        }
      }
    }
  }
  // Expand the compressed rows, highest compression first (PV-OSIMr, Sathya, Decré, Swevers 2024,
  // eq. 13):
  //   Lambda^-1[R, j] = T Lambda^-1[v, j],  Lambda^-1[R, R] = L + T Lambda^-1[v, v] T^T.
  const int total = cd.totalRows;
  for (auto it = cd.compressions.rbegin(); it != cd.compressions.rend(); ++it) {
    const ConstraintData::ClusterRows& R = cd.clusterRows[it->cluster];
    const int n = static_cast<int>(R.rows.size()), v0 = it->v0;
    for (int r = 0; r < n; ++r) {
      const int gr = R.rows[r];
      for (int j = 0; j < total; ++j) full(gr, j) = R.T.row(r).dot(full.block<6, 1>(v0, j));
    }
    for (int r = 0; r < n; ++r) {
      const int gr = R.rows[r];
      for (int j = 0; j < total; ++j) full(j, gr) = full(gr, j);
    }
    for (int r = 0; r < n; ++r)
      for (int s = 0; s < n; ++s) {
        const int gr = R.rows[r], gs = R.rows[s];
        full(gr, gs) = lower(R.L, r, s) + (R.T.row(r) * full.block<6, 6>(v0, v0)).dot(R.T.row(s));
      }
  }
  const int m = static_cast<int>(out.rows());
  out = full.topLeftCorner(m, m);
}

}  // namespace

void delassusPropagation(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                         Eigen::Ref<MatX> out) {
  propagate<false>(cm, data, cd, out);
}

void delassusPropagationAfterAba(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                                 Eigen::Ref<MatX> out) {
  propagate<true>(cm, data, cd, out);
}

}  // namespace detail

namespace {

/// rho times the largest diagonal entry of cABA-OSIM's result below which the damped inverse is
/// factorized instead (measured relative error of cABA-OSIM above it: <= 1e-11).
constexpr double kDampedCancellation = 1e-2;

/// Up to this many contact rows the damped inverse is factorized first (cABA-OSIM only when the
/// result shows a nearly singular set): the m^3 / 2 flops of the Cholesky factorization and
/// inverse cost less than cABA-OSIM's articulated sweep and propagation.
constexpr int kDirectRows = 32;

/// X = A^-1 for a symmetric positive definite A (m x m, column-major at L with leading dimension
/// lda, lower triangle read, overwritten; X likewise with ldo): Cholesky A = L L^T in place,
/// X = L^-1 into X's lower triangle, A^-1 = X^T X (lower triangle into A, then both triangles
/// of X), scalar loops (m^3 / 2 flops; Eigen's blocked
/// LLT and triangular solve against the identity cost several times more instructions at m ~
/// 12). False when a pivot is not positive (or NaN), as Eigen::LLT. M > 0: m = M known at
/// compile time (the loops are then unrolled and vectorized without run-time trip counts);
/// M = 0: m = mRun.
template <int M>
bool inverseOfSpd(double* L, Eigen::Index lda, double* X, Eigen::Index ldo, int mRun) {
  const int m = M > 0 ? M : mRun;
  CDYN_UNROLL
  for (int j = 0; j < m; ++j) {  // left-looking Cholesky, column j
    double* lj = L + j * lda;
    CDYN_UNROLL
    for (int k = 0; k < j; ++k) {
      const double* lk = L + k * lda;
      const double f = lk[j];
      CDYN_UNROLL
      for (int i = j; i < m; ++i) lj[i] -= f * lk[i];
    }
    if (!(lj[j] > 0.0)) return false;
    const double d = std::sqrt(lj[j]);
    lj[j] = d;
    const double inv = 1.0 / d;
    CDYN_UNROLL
    for (int i = j + 1; i < m; ++i) lj[i] *= inv;
  }
  CDYN_UNROLL
  for (int j = 0; j < m; ++j) {  // column j of X = L^-1: L x = e_j
    double* x = X + j * ldo;
    CDYN_UNROLL
    for (int i = j; i < m; ++i) x[i] = i == j ? 1.0 : 0.0;
    CDYN_UNROLL
    for (int k = j; k < m; ++k) {
      const double* lk = L + k * lda;
      const double xk = x[k] / lk[k];
      x[k] = xk;
      CDYN_UNROLL
      for (int i = k + 1; i < m; ++i) x[i] -= lk[i] * xk;
    }
  }
  CDYN_UNROLL
  for (int j = 0; j < m; ++j) {  // A^-1(i, j) = sum_{k >= i} X(k, i) X(k, j), i >= j
    CDYN_UNROLL
    for (int i = j; i < m; ++i) {
      const double* xi = X + i * ldo;
      const double* xj = X + j * ldo;
      double r = 0.0;
      CDYN_UNROLL
      for (int k = i; k < m; ++k) r += xi[k] * xj[k];
      L[i + j * lda] = r;
    }
  }
  CDYN_UNROLL
  for (int j = 0; j < m; ++j) {
    CDYN_UNROLL
    for (int i = j; i < m; ++i) X[i + j * ldo] = X[j + i * ldo] = L[i + j * lda];
  }
  return true;
}

/// out = A^-1 for the 12 x 12 symmetric positive definite A = D + rho I (D's lower triangle
/// read) in 6 x 6 blocks (any 12 rows: two frame or four point contacts), A = [P E^T; E Q]: with
/// W = E P^-1 and the Schur complement S = Q - W E^T (positive definite with A),
///   A^-1 = [P^-1 + W^T S^-1 W, (.)^T; -S^-1 W, S^-1],
/// two 6 x 6 inverses and four fixed-size 6 x 6 products, which Eigen vectorizes (the flops of
/// the 12 x 12 Cholesky inverse, in fewer instructions). False when A is not positive definite
/// (P or S is not: a pivot of the Cholesky factor of A is not positive).
bool inverseOfSpd12(const MatX& D, double rho, MatX& out) {
  Mat6 P = D.topLeftCorner<6, 6>(), Pinv;
  P.diagonal().array() += rho;
  if (!inverseOfSpd<6>(P.data(), 6, Pinv.data(), 6, 6)) return false;
  const Mat6 E = D.bottomLeftCorner<6, 6>();
  Mat6 W, S, Sinv, V;
  W.noalias() = E.lazyProduct(Pinv);
  S = D.bottomRightCorner<6, 6>();
  S.diagonal().array() += rho;
  S.noalias() -= W.lazyProduct(E.transpose());
  if (!inverseOfSpd<6>(S.data(), 6, Sinv.data(), 6, 6)) return false;
  V.noalias() = -Sinv.lazyProduct(W);  // the lower-left block
  out.bottomLeftCorner<6, 6>() = V;
  out.topRightCorner<6, 6>() = V.transpose();
  out.bottomRightCorner<6, 6>() = Sinv;
  Pinv.noalias() -= W.transpose().lazyProduct(V);
  out.topLeftCorner<6, 6>() = Pinv;
  return true;
}

/// out = (D + rho I)^-1 for a symmetric m x m D (lower triangle read) with D + rho I positive
/// definite, through A (m x m scratch): inverseOfSpd with the size fixed at compile time (loops
/// fully unrolled) for the row counts of small point (3) and frame (6) contact sets, in 6 x 6
/// blocks at 12 rows (A unused); at run time otherwise.
bool dampedInverseOf(const MatX& D, double rho, Eigen::Ref<MatX> A, MatX& out) {
  const int m = static_cast<int>(D.rows());
  if (m == 12) return inverseOfSpd12(D, rho, out);
  A = D;
  A.diagonal().array() += rho;
  const Eigen::Index lda = A.outerStride(), ldo = out.outerStride();
  switch (m) {
    case 3:
      return inverseOfSpd<3>(A.data(), lda, out.data(), ldo, m);
    case 6:
      return inverseOfSpd<6>(A.data(), lda, out.data(), ldo, m);
    case 9:
      return inverseOfSpd<9>(A.data(), lda, out.data(), ldo, m);
    default:
      return inverseOfSpd<0>(A.data(), lda, out.data(), ldo, m);
  }
}

/// The position level of the kinematics at zero velocity (what the Delassus matrix needs):
/// liMi (axis-specialised joint transforms on single-body clusters), v = c = 0, the constrained
/// clusters' steps as in the velocity pass (their G, poses and state check; g = 0), and the world
/// poses oMi only when a constraint reads them (world-aligned rows, or two bodies).
Status positionPass(const ClusterModel& cm, ClusterData& data, const ConstraintSet& set,
                    ConstVecRef q) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (c.constrained()) {
      CDYN_TRY(detail::clusterVelocityStep(cm, data, k, q, nullptr, detail::Bias::Skip,
                                           detail::StateCheck::Check, detail::OutputPoses::All,
                                           detail::RotorFrame::Body));
      // At zero velocity the loops' bias g (v_dot = G y_ddot + g, eq. 3) is zero; Bias::Skip
      // leaves the g of the previous algorithm (the step's CE-ABA), which pass 1 folds into c.
      if (c.implicit()) detail::scratch(data)[k].g.setZero();
      continue;
    }
    const int b = c.firstBody;
    if (tree.axisRotation[b] >= 0)
      detail::axisJointTransform(tree, td, b, q.data());
    else
      detail::localPlacementStep(tree, td, b, q);
    td.v[b].setZero();
    td.c[b].setZero();
  }
  bool worldPoses = false;
  for (const RigidConstraint& rc : set.constraints())
    worldPoses = worldPoses || rc.body2 >= 0 || rc.frame == ReferenceFrame::LocalWorldAligned;
  if (worldPoses)
    for (int b = 0; b < tree.nbodies; ++b) {
      const int p = tree.parent[b];
      td.oMi[b] = p >= 0 ? td.oMi[p] * td.liMi[b] : td.liMi[b];
    }
  return Status::Ok;
}

/// Kinematics and pass 1 at zero velocity and force: the rigid inertias (pA = 0) and the
/// constrained clusters' motion subspaces; the constraint rows.
Status articulatedInertias(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                           ConstVecRef q) {
  CDYN_TRY(positionPass(cm, data, *cd.set, q));
  Data& td = data.treeData;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (c.constrained()) {
      detail::clusterInertiaAndBiasStep(cm, data, k, nullptr, detail::RotorFrame::Body);
      continue;
    }
    const int b = c.firstBody;
    td.IA[b] = cm.treeModel.inertias[b].matrix();
    td.pA[b].setZero();
    data.rigidInertia[b] = 1;
  }
  detail::constraintRowsAt(cm, data, cd, detail::RowTargets::Skip);
  return Status::Ok;
}

/// Pass 2 of a single-body cluster at zero force (Featherstone Table 7.1, the inertia terms
/// only): U = IA S, D^-1, and IA_p += X^T (IA - U D^-1 U^T) X for a 1-dof joint (u and pA, zero
/// here, are not formed); other joints take the full step with tau = 0.
Status articulatedInertiaStep(const Model& model, Data& data, int b, int p) {
  const Joint& joint = model.joints[b];
  if (joint.type == JointType::Floating && p < 0) {
    // A floating root: S = I, so U = IA and D = IA + armature (the products with S of
    // articulatedBodyStep give these values exactly), D^-1 by the 6 x 6 Cholesky.
    const Mat6& IA = data.IA[b];
    data.U[b] = IA;
    Mat6 D = IA, Dinv;
    if (model.hasArmature())
      D.diagonal() += Eigen::Map<const Vec6>(&model.armature[model.idx_v[b]]);
    double ratio;  // the workspace's floor (pass2): 0 for augmented inertias
    if (!detail::invertPositiveDefinite<6>(D, Dinv, data.pivotFloor, &ratio))
      return detail::singularJoint(model, data, b, ratio);
    data.Dinv[b] = Dinv;
    data.u[b].setZero(6);
    return Status::Ok;
  }
  if (joint.nv != 1) {
    static constexpr double kZero[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    return detail::articulatedBodyStep(model, data, b, p, kZero);
  }
  const Mat6& IA = data.IA[b];
  auto U = data.U[b].col(0);
  if (joint.type == JointType::Revolute && joint.alignedAxis >= 0)
    U = joint.alignedSign * IA.col(joint.alignedAxis);  // IA s e_a
  else
    U.noalias() = IA * joint.S.col(0);
  const double D = joint.S.col(0).dot(U);
  if (!(D > 0.0))
    return detail::fail(data, Status::NotPositiveDefinite,
                        "articulated inertia of body '%s' is singular along its joint '%s'",
                        model.bodyNames[b].c_str(), model.jointNames[b].c_str());
  const double Dinv = 1.0 / D;
  data.Dinv[b](0, 0) = Dinv;
  data.u[b](0) = 0.0;
  if (p < 0) return Status::Ok;
  Mat6 Ia = IA;
  Ia.noalias() -= (U * Dinv) * U.transpose();
  detail::addSymmetricInertia(data.liMi[b], Ia, data.IA[p]);
  return Status::Ok;
}

/// Which inertias pass 2 factors: the plain articulated inertias of the mass matrix (the
/// dynamics' pivot floor, kSingularPivot: a singular H is NotPositiveDefinite), or inertias
/// augmented by mu C^T C (cABA-OSIM: pivots > 0 only, core/small_spd.hpp).
enum class Inertias : bool { Plain, Augmented };

/// Pass 2 at zero force (after articulatedInertias, or inertias augmented from them): U, D^-1
/// of every cluster and the articulated inertias (Chignoli et al. 2023, eq. 53, 59-60).
Status pass2(const ClusterModel& cm, ClusterData& data, const double* tau, Inertias inertias) {
  double& floorOfData = data.treeData.pivotFloor;
  const detail::PivotFloorScope floor(floorOfData, inertias == Inertias::Plain ? floorOfData : 0.0);
  for (int k = static_cast<int>(cm.clusters.size()) - 1; k >= 0; --k) {
    const Cluster& c = cm.clusters[k];
    if (c.constrained())
      CDYN_TRY(detail::clusterArticulatedStep(
          cm, data, k, tau, detail::ForceCoordinates::Independent, detail::RotorFrame::Body));
    else
      CDYN_TRY(articulatedInertiaStep(cm.treeModel, data.treeData, c.firstBody, c.outputBody));
  }
  return Status::Ok;
}

}  // namespace

Status delassusMatrix(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
                      ConstraintData& cd, ConstVecRef q) {
  CDYN_TRY(detail::checkConstraintArgs(model, data, set, cd));
  CDYN_TRY(detail::checkClusterArgs(model, data, q, nullptr));
  CDYN_TRY(articulatedInertias(model, data, cd, q));
  cd.du.setZero();
  CDYN_TRY(pass2(model, data, cd.du.data(), Inertias::Plain));
  detail::delassusPropagation(model, data, cd, cd.delassus);
  if (!detail::allFiniteFast(cd.delassus)) {
    const detail::InputMagnitude qIn{"q", detail::maxAbs(q), 2};
    if (detail::overflowingInput({qIn}))
      return detail::overflowFailure(data.treeData, "delassusMatrix: D", qIn);
    return detail::fail(data.treeData, Status::NonFinite,
                        "delassusMatrix: D overflowed (not finite): the constraint placements of "
                        "the set are out of range for this model");
  }
  return detail::ok(data.treeData);
}

Status dampedDelassusInverse(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
                             ConstraintData& cd, ConstVecRef q, double rho) {
  CDYN_TRY(detail::checkConstraintArgs(model, data, set, cd));
  CDYN_TRY(detail::checkClusterArgs(model, data, q, nullptr));
  if (!(rho > 0.0) || !std::isfinite(rho))
    return detail::fail(data.treeData, Status::InvalidArgument,
                        "the damping rho = %g must be positive and finite", rho);
  CDYN_TRY(articulatedInertias(model, data, cd, q));
  cd.du.setZero();
  const int m = set.rows();
  const bool contacts = set.allWorldAttached();
  // The factorization of the damped Delassus matrix (Lambda^-1 by the propagation of the plain
  // inertias): false when it is not positive definite. Pass 2's failure (a singular H, below
  // the dynamics' pivot floor) is returned by the caller: H^-1 and Lambda^-1 do not exist, and
  // cABA-OSIM's factors round as badly (tests/test_robustness.cpp).
  const auto plainPass2 = [&]() { return pass2(model, data, cd.du.data(), Inertias::Plain); };
  const auto factorized = [&]() -> bool {
    detail::delassusPropagation(model, data, cd, cd.delassus);
    return dampedInverseOf(cd.delassus, rho, cd.work.topLeftCorner(m, m), cd.dampedInverse);
  };
  const auto notPositiveDefinite = [&]() {
    return detail::fail(data.treeData, Status::NotPositiveDefinite,
                        "the damped Delassus matrix is not positive definite");
  };
  // cABA-OSIM's result is kept when rho * max_i R_ii >= kDampedCancellation: below, the
  // difference of two terms of size mu = 1/rho loses about log10(mu / |result|) digits and the
  // 1/rho-augmented inertias round likewise, while the factorization is as accurate as the
  // damped matrix's conditioning allows (sigma_min of the Delassus matrix above about 100 rho).
  // Above (a singular or nearly singular set), cABA-OSIM is the more accurate.
  const auto cancels = [&]() {
    const double diag = m ? cd.dampedInverse.diagonal().maxCoeff() : 1.0 / rho;
    return detail::allFiniteFast(cd.dampedInverse) && rho * diag < kDampedCancellation;
  };
  // The factorization is kept as well when cABA-OSIM would be the less accurate: its error is
  // about eps / (rho max_i R_ii) (the cancellation of mu = 1/rho against R), the
  // factorization's about eps kappa, and kappa >= (max_i D_ii + rho) max_i R_ii (diagonals of
  // symmetric positive definite matrices lie between their extreme eigenvalues). E.g. the
  // floating belt leg's foot at rho = 1e-2: kappa 1.8, rho R_ii ~ 0.02, cABA-OSIM 8.5e-14 off.
  const auto wellConditioned = [&]() {
    if (!m || !detail::allFiniteFast(cd.dampedInverse)) return false;
    const double diag = cd.dampedInverse.diagonal().maxCoeff();
    const double kappaLow = (cd.delassus.diagonal().maxCoeff() + rho) * diag;
    return kappaLow * rho * diag < 1.0;
  };
  bool done = false;
  if (!contacts) {  // loops between two bodies couple their inertias: factorize
    CDYN_TRY(plainPass2());
    if (!factorized()) return notPositiveDefinite();
    done = true;
  } else if (m <= kDirectRows) {  // the factorization first, kept unless cABA-OSIM is needed
    CDYN_TRY(plainPass2());
    done = factorized() && (cancels() || wellConditioned());
    if (!done) CDYN_TRY(articulatedInertias(model, data, cd, q));  // the plain inertias
  }
  if (!done) {
    // cABA-OSIM: (L + rho I)^-1 = mu I - mu^2 J (H + mu J^T J)^-1 J^T, mu = 1/rho (Alg. 5,
    // eq. 40); H + mu J^T J is the mass matrix of the bodies with inertias I + mu C^T C.
    const double mu = 1.0 / rho;
    for (const ConstraintData::Attachment& a : cd.attachments) {
      data.treeData.IA[a.body].noalias() +=
          mu * a.C.topRows(a.rows).transpose() * a.C.topRows(a.rows);
      data.rigidInertia[a.body] = 0;
    }
    CDYN_TRY(pass2(model, data, cd.du.data(), Inertias::Augmented));
    detail::delassusPropagation(model, data, cd, cd.dampedInverse);
    cd.dampedInverse *= -mu * mu;
    cd.dampedInverse.diagonal().array() += mu;
    // (A result that overflowed, 1/rho^2 terms, is reported below, not factorized: its true
    // entries are near 1/rho.)
    if (m > kDirectRows && cancels()) {
      CDYN_TRY(articulatedInertias(model, data, cd, q));  // the plain inertias
      CDYN_TRY(plainPass2());
      if (!factorized()) return notPositiveDefinite();
    }
  }
  if (!detail::allFiniteFast(cd.dampedInverse))
    return detail::fail(data.treeData, Status::NonFinite,
                        "dampedDelassusInverse: the result overflowed (not finite): input rho is "
                        "out of range (rho = %.3g; the inverse holds 1/rho^2 terms, which exceed "
                        "double precision)",
                        rho);
  return detail::ok(data.treeData);
}

}  // namespace clusterdyn
