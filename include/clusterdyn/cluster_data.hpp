// Workspace of the cluster-tree algorithms: sized once from a ClusterModel, then every compute
// function runs without heap allocation.
#pragma once

#include <Eigen/Cholesky>
#include <vector>

#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/data.hpp"

namespace clusterdyn {

/// Per-cluster scratch (m bodies, n spanning dofs, d independent dofs, r constraint rows).
struct ClusterWorkspace {
  MatX G;                ///< n x d explicit constraint  v = G y_dot  (Chignoli et al. 2023, eq. 6)
  VecX g;                ///< n      v_dot = G y_ddot + g            (eq. 3)
  MatX K;                ///< r x n  all constraint rows: K v = 0, K v_dot = k
  VecX k;                ///< r
  VecX phi;              ///< r      position residual
  MatX Kd, Ki;           ///< selected rows (n - d of them): dependent / independent columns
  VecX kd;               ///< selected rows of k / phi
  std::vector<int> piv;  ///< LU pivots of Kd (factored in place)
  MatX Gd;               ///< (n - d) x d
  VecX dq;               ///< Newton step on the dependent coordinates (n - d)
  MatX S;                ///< 6m x d cluster motion subspace JXJ diag(S_i) G   (eq. 15)
  VecX c;                ///< 6m     cluster velocity product + constraint bias (eq. 19)
  MatX U;                ///< 6m x d  IA S (CE-ABA); clusterMassMatrix: IC S (composite inertias)
  MatX D;                ///< d x d   S^T U
  Eigen::LLT<MatX> llt;
  MatX Dinv;       ///< d x d
  VecX u;          ///< d
  Mat6X Ubar;      ///< 6 x d   Xh^T U: U seen from the output body (either meaning of U)
  Mat6X UbarDinv;  ///< 6 x d
  VecX tmpd;       ///< d
  VecX qWarm;      ///< nq: the warm start of the cluster's position solve (loop closure scratch)
  std::vector<Transform> outputTb;  ///< pose of each body relative to the output body
};

struct ClusterData {
  /// denseMatrices = false leaves the ny x ny H and the tree's nv x nv M empty (the only
  /// workspace parts quadratic in the model size) for workspaces that never compute a mass
  /// matrix (the model builder's); clusterMassMatrix, crba and the dense constrained dynamics
  /// then fail with InvalidArgument.
  explicit ClusterData(const ClusterModel& model, bool denseMatrices = true);

  const ClusterModel* model = nullptr;
  Data treeData;  ///< spanning-tree workspace (placements, velocities, forces ...)
  std::vector<ClusterWorkspace> clusters;

  VecX ydd;                       ///< independent accelerations (ny), CE-ABA output
  VecX qdd;                       ///< spanning accelerations (nv) = G ydd + g
  VecX tauY;                      ///< independent generalized forces (ny), CE-RNEA output
  MatX H;                         ///< independent mass matrix (ny x ny)
  VecX C;                         ///< independent bias (ny): H ydd + C = tau
  VecX q;                         ///< spanning configuration scratch / position-solve output (nq)
  VecX v;                         ///< spanning velocity scratch / output (nv)
  MatX Hblock;                    ///< scratch for H = G^T M G blocks (max nv_k x max ny_k)
  std::vector<Motion> localBias;  ///< per body: acceleration with q_ddot = 0, cluster-local
  /// Per body: 1 while treeData.IA still holds the body's own rigid inertia before pass 2 (0 once
  /// an algorithm augmented it, e.g. with constraint terms): pass 2 may then transform the
  /// rigid inertia of a leaf body instead of the 6x6 matrix.
  std::vector<char> rigidInertia;
  int lastIterations = 0;     ///< Newton iterations of the last position solve
  double lastResidual = 0.0;  ///< residual norm after the last position solve

  const char* errorMessage() const { return treeData.errorMessage(); }
};

}  // namespace clusterdyn
