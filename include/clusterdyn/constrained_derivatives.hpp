// Analytical derivatives of constrained dynamics on the cluster tree (contacts, welds, cut
// loops; constraints.hpp): d y_ddot and d lambda with respect to y, y_dot and tau_y, the
// counterpart of Pinocchio's computeConstraintDynamicsDerivatives (Carpentier & Mansard 2018,
// §IV-C) for independent coordinates. Derivation: docs/derivatives.md, "Constrained-dynamics
// derivatives" (equations K1-K9).
//
// The solution (y_ddot, lambda) of
//     H y_ddot + C = tau + J^T lambda (+ external forces),   J y_ddot + gamma = k
// (constraints.hpp: k the Baumgarte target, J^T lambda the generalized force ON the robot) is
// computed here by a dense Schur-complement solve, and differentiated through
//     [H  -J^T] [d y_ddot]      [d_x (ID(y, y_dot, y_ddot) - J^T lambda - tau)]
//     [J    0 ] [d lambda] = -  [d_x (J y_ddot + gamma - k)                  ]
// with y_ddot and lambda held in the right-hand side (eq. K8).
//
// Conventions: those of cluster_derivatives.hpp. The state is a closed spanning state (q, v =
// G y_dot); column e of d f / d y is the derivative along the independent velocity e (the
// floating base's body-frame twist, dependent joints following, dq = G dy), y_dot and tau_y
// held; fext (forces TO the bodies, body coordinates) is held fixed in the body frames. On a
// model without clusters (G = I) y is the tree's tangent space.
//
// Rank-deficient constraint sets (redundant rows: a planar loop cut into a 5-row revolute
// constraint, a weld plus points on one foot): the Delassus matrix J H^-1 J^T is replaced by its
// pseudo-inverse (eigen-decomposition; eigenvalues at or below rankTolerance times the largest
// dropped). y_ddot and its derivatives are then still unique and exact; lambda is the
// minimum-norm multiplier and d lambda the minimum-norm solution of the differentiated system
// (the multipliers themselves are not unique: only J^T lambda and J^T d lambda + d(J^T) lambda
// are). Inconsistent sets (no y_ddot meets the rows): ConstraintFailure.
#pragma once

#include <vector>

#include "clusterdyn/cluster_derivatives.hpp"
#include "clusterdyn/constraints.hpp"

namespace clusterdyn {

struct ConstrainedDerivativeSettings {
  /// Eigenvalues of the Delassus matrix at or below rankTolerance * (largest eigenvalue) are
  /// treated as zero (redundant rows). In (0, 1).
  double rankTolerance = 1e-10;
  /// Status::Ok requires the row residual |J y_ddot + gamma - k|_inf <= tolerance * max(1,
  /// |k - gamma|_inf, |J H^-1 (tau - C)|_inf) and the dynamics residual |H y_ddot + C - tau -
  /// J^T lambda - (fext)|_inf <= tolerance * max(1, |tau|_inf, |lambda|_inf, |fext|_inf).
  double tolerance = 1e-9;
};

/// Workspace and outputs, sized once for a (model, constraint set) pair (allocates); the compute
/// call then does not allocate. One per thread.
struct ConstrainedDerivativeData {
  ConstrainedDerivativeData(const ClusterModel& model, const ConstraintSet& set);

  const ClusterModel* model = nullptr;
  const ConstraintSet* set = nullptr;

  // Outputs (ny = model.ny, m = set.rows()).
  VecX ydd;            ///< ny: the constrained accelerations
  VecX lambda;         ///< m: the multipliers (minimum norm when the set is rank-deficient)
  MatX dydd_dy;        ///< ny x ny: d y_ddot / d y (tangent columns)
  MatX dydd_dydot;     ///< ny x ny: d y_ddot / d y_dot
  MatX dydd_dtau;      ///< ny x ny: d y_ddot / d tau_y = H^-1 - H^-1 J^T Lambda J H^-1
  MatX dlambda_dy;     ///< m x ny
  MatX dlambda_dydot;  ///< m x ny
  MatX dlambda_dtau;   ///< m x ny: -Lambda J H^-1
  int rank = 0;        ///< rank of the Delassus matrix (m when the rows are independent)
  /// Largest over smallest kept eigenvalue of the Delassus matrix (1 when rank is 0).
  double conditionNumber = 1.0;
  double rowResidual = 0.0;       ///< |J y_ddot + gamma - k|_inf
  double dynamicsResidual = 0.0;  ///< |H y_ddot + C - tau - J^T lambda - (fext)|_inf

  // Intermediate results (read-only for users).
  /// CE-RNEA derivatives at (q, v, y_ddot) with fext + C^T lambda (the constraint forces held
  /// in the body frames; eq. K6 corrects for the part that is not).
  ClusterDerivativeData cluster;
  ConstraintData constraints;  ///< J (jacobian), gamma, desired (k), phi at (q, v)
  MatX dF_dy;     ///< ny x ny: d (ID - J^T lambda - tau) / d y at (y_ddot, lambda) (eq. K7)
  MatX dR_dy;     ///< m x ny: d (J y_ddot + gamma - k) / d y at y_ddot (eq. K5)
  MatX dR_dydot;  ///< m x ny: d (J y_ddot + gamma - k) / d y_dot (eq. K5)
  MatX Hinv;      ///< ny x ny: H^-1
  MatX pinv;      ///< m x m: (J H^-1 J^T)^+ (the inverse when rank == m)
  VecX C;         ///< ny: ceRnea at y_ddot = 0 (with fext)

  // Scratch.
  MatX Rq, Rv, Ra;                  ///< m x nv: spanning derivatives of the row residual (eq. K4)
  MatX JHinv;                       ///< m x ny: J H^-1
  MatX eig, eigVectors;             ///< m x m: Jacobi eigen-decomposition of the Delassus matrix
  MatX work;                        ///< m x ny
  MatX side, sideY, force, forceY;  ///< 6 x nv, 6 x ny, 6 x nv, 6 x ny (eq. K6)
  VecX rowScratch, yScratch;        ///< m, ny
  std::vector<Force> fext;          ///< per body: fext + C^T lambda
  Eigen::LLT<MatX> lltH;            ///< ny x ny
};

/// The constrained dynamics (y_ddot, lambda) at the closed state (q, v) with independent
/// forces tauY (ny) and external forces fext (nullptr or one per body), and their derivatives
/// with respect to y, y_dot and tau_y (outputs in cdd, see ConstrainedDerivativeData).
/// Any constraint set (contacts, welds, loops between two bodies, Baumgarte gains); the model's
/// MJCF joint dynamics (armature in H, springs and dampers in the bias, docs/mjcf.md §4) are
/// part of the dynamics and of its derivatives. Statuses:
/// InvalidSize / NonFinite naming the argument, NotUnitQuaternion, WorkspaceMismatch (a
/// workspace or the set made for another model / set), InvalidArgument (settings),
/// ConstraintFailure (state not closed, singular loop configuration, or
/// constraint rows that no y_ddot meets: the row residual in the message), NotPositiveDefinite
/// (H), NonFinite (an output overflowed, naming the input). Uses data as scratch.
Status computeConstrainedDynamicsDerivatives(const ClusterModel& model, ClusterData& data,
                                             const ConstraintSet& set,
                                             ConstrainedDerivativeData& cdd, ConstVecRef q,
                                             ConstVecRef v, ConstVecRef tauY,
                                             const Force* fext = nullptr,
                                             const ConstrainedDerivativeSettings& settings = {});

}  // namespace clusterdyn
