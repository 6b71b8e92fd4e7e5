// Internal steps of computeConstrainedDynamicsDerivatives (docs/derivatives.md,
// "Constrained-dynamics derivatives", eq. K1-K9).
#pragma once

#include "clusterdyn/constrained_derivatives.hpp"

namespace clusterdyn::detail {

/// After computeCeRneaDerivatives at (q, v, y_ddot) (cdd.cluster: the world twists,
/// accelerations and joint columns of the spanning tree; data.treeData.oMi the world poses):
/// the spanning derivatives Rq, Rv, Ra (m x nv) of the row residual J y_ddot + gamma - k
/// (eq. K4), their chain rule to y (cdd.dR_dy, cdd.dR_dydot, eq. K5), and the correction of
/// cdd.dF_dy for the constraint forces that do not stay fixed in their body frame (eq. K6),
/// with multipliers cdd.lambda.
void constrainedRowDerivatives(const ClusterModel& cm, const ClusterData& data,
                               const ConstraintSet& set, ConstrainedDerivativeData& cdd);

/// Eigen-decomposition of the symmetric matrix A by cyclic Jacobi rotations (Golub & Van Loan
/// 2013, §8.5.2), in place and without allocation: A becomes diagonal (the eigenvalues) and
/// A_in = V diag(A) V^T.
void jacobiEigen(Eigen::Ref<MatX> A, Eigen::Ref<MatX> V);

}  // namespace clusterdyn::detail
