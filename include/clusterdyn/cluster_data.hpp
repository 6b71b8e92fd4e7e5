// Workspace of the cluster-tree algorithms: sized once from a ClusterModel, then every compute
// function runs without heap allocation.
#pragma once

#include <Eigen/Cholesky>
#include <cstddef>
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

  // The constraint matrices of cluster k (0 <= k < model->clusters.size(), not checked) as the
  // last cluster algorithm left them: clusterConstraintMatrices computes all four at (q, v),
  // the other algorithms as a by-product (those without velocity terms, e.g. clusterMassMatrix,
  // leave g and k of loop clusters as they were). Indices are local to the cluster: the rows of
  // G and g and the columns of K are its spanning velocities Cluster::v0 .. v0 + nv - 1, the
  // columns of G its independent velocities Cluster::y0 .. y0 + ny - 1 (cluster_model.hpp).
  // Units: those of the coordinates: G and K map velocities (rad/s, m/s), g and k are
  // accelerations (rad/s^2, m/s^2). Column-major Eigen objects owned by this workspace,
  // overwritten by the next computation with it.

  /// G (nv x ny): v_k = G y_dot_k (Chignoli et al. 2023, eq. 6). The identity for a cluster
  /// without constraint; constant (Cluster::G) for couplings and mimics.
  const MatX& explicitMatrix(int k) const;
  /// g (nv): v_dot_k = G y_ddot_k + g (eq. 3). Zero for clusters without loop joint.
  const VecX& explicitBias(int k) const;
  /// K (Cluster::constraintRows x nv): every constraint row of the cluster, the explicit
  /// relations (Cluster::relations) first, then the rows of each loop joint (Cluster::loops):
  /// K v_k = 0. Constant (Cluster::Kexplicit) for clusters without loop joint.
  const MatX& constraintJacobian(int k) const;
  /// k (Cluster::constraintRows): K v_dot_k = k (k = -K_dot v_k, velocity-product terms). Zero
  /// for clusters without loop joint.
  const VecX& constraintBias(int k) const;

  /// Heap bytes held by the per-cluster scratch (for memory reports; the other members are not
  /// included).
  std::size_t scratchBytes() const;
};

}  // namespace clusterdyn
