// Dense oracles of constrained dynamics (KKT systems, Delassus matrices): the one copy used by
// the tests (tests/, capi/tests/) and by the reference verifier (tools/reference_verify.cpp),
// built as the static library clusterdyn_oracles. They are independent of the recursive
// algorithms they check: they take dense matrices (the mass matrix from crba or the cluster H
// from clusterMassMatrix, constraint Jacobians) and solve with Eigen decompositions only.
//
// Sign convention of every KKT system here:
//   M a = f + J^T lambda,   J a = b
// (for dynamics f = tau - nonlinear effects, b = the desired row accelerations minus the drift).
#pragma once

#include "clusterdyn/clusterdyn.hpp"

namespace clusterdyn::oracle {

/// Solution of a dense KKT system (delassus is filled by the Schur-complement solve only).
struct KktSolution {
  MatX delassus;
  VecX acceleration, lambda;
  bool ok = false;
};

/// Dense Delassus matrix D = J M^-1 J^T by the Cholesky factorization of M. Returns false (D
/// untouched) if M is not positive definite.
bool delassus(const MatX& M, const MatX& J, MatX& D);

/// (D + rho I)^-1 by dense LU.
MatX dampedInverse(const MatX& D, double rho);

/// The whole KKT matrix [M -J^T; J 0] [a; lambda] = [f; b] solved by full-pivoting LU. ok is
/// false if the KKT matrix is singular (J without full row rank or M singular).
KktSolution solveKktLu(const MatX& M, const MatX& J, const VecX& f, const VecX& b);

/// The KKT system by its Schur complement: a_free = M^-1 f (Cholesky), D = J M^-1 J^T,
/// lambda = D^+ (b - J a_free) with a pseudo-inverse (complete orthogonal decomposition),
/// a = a_free + M^-1 J^T lambda. Redundant but consistent rows give the unique a and the
/// minimum-norm lambda. ok is false if M is not positive definite.
KktSolution solveKktSchur(const MatX& M, const MatX& J, const VecX& f, const VecX& b);

/// The block-diagonal explicit constraint of the whole model at the state of the last cluster
/// computation with data: v = G y_dot, v_dot = G y_ddot + g (nv x ny and nv; identity blocks for
/// unconstrained clusters).
void globalExplicitForm(const ClusterModel& cm, const ClusterData& data, MatX& G, VecX& g);

/// CE-ABA's y_ddot from the dense spanning tree: G^T M G y_ddot = G^T (tau - c - M g), with G
/// and g from clusterConstraintMatrices at (q, v) and M, c from crba and nonLinearEffects.
/// ok = false when a computation fails.
VecX denseClusterYdd(const ClusterModel& cm, ClusterData& data, const VecX& q, const VecX& v,
                     const VecX& tau, bool* ok = nullptr);

/// Constrained dynamics of a constraint set on a cluster tree, in independent coordinates:
///   H y_ddot + C = tau + J^T lambda,   J y_ddot + gamma = desired,
/// with H from clusterMassMatrix, C from ceRnea at y_ddot = 0, J and gamma from
/// constraintJacobian, solved by solveKktSchur.
struct ClusterKkt {
  MatX H, delassus;
  VecX C, ydd, lambda;
  bool ok = false;
};
ClusterKkt denseClusterKkt(const ClusterModel& cm, ClusterData& data, const ConstraintSet& set,
                           ConstraintData& cd, const VecX& q, const VecX& v, const VecX& tau,
                           const Force* fext = nullptr);

}  // namespace clusterdyn::oracle
