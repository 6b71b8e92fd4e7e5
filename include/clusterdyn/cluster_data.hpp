// Workspace of the cluster-tree algorithms: sized once from a ClusterModel, then every compute
// function runs without heap allocation.
//
// Public: the spanning-tree workspace (treeData) and the algorithms' inputs and results (ydd,
// qdd, tauY, H, C, q, v, ...). Each cluster's constraint matrices G, g, K, k are read through
// ClusterData::explicitMatrix, explicitBias, constraintJacobian, constraintBias. The rest of the
// per-cluster scratch (motion subspaces, articulated terms, LU factors of the closure ...) is an
// implementation detail: the library keeps it behind an opaque handle (its layout is not part of
// the API and may change in any release).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/data.hpp"

namespace clusterdyn {

struct ClusterScratch;  // the per-cluster scratch, complete inside the library only

namespace detail {

struct ClusterScratchAccess;

/// Owner of a ClusterData's per-cluster scratch. ClusterScratch is incomplete here, so the
/// special members are defined inside the library (cluster_data.cpp); a copy is deep (copying
/// a ClusterData gives an independent workspace, e.g. one per thread). A moved-from handle is
/// empty.
class ClusterScratchHandle {
 public:
  ClusterScratchHandle();  ///< allocates an empty ClusterScratch
  ~ClusterScratchHandle();
  ClusterScratchHandle(const ClusterScratchHandle& other);
  ClusterScratchHandle& operator=(const ClusterScratchHandle& other);
  ClusterScratchHandle(ClusterScratchHandle&& other) noexcept;
  ClusterScratchHandle& operator=(ClusterScratchHandle&& other) noexcept;
  ClusterScratch* get() const noexcept { return p_.get(); }

 private:
  std::unique_ptr<ClusterScratch> p_;
};

}  // namespace detail

struct ClusterData {
  /// Allocates every buffer, the private per-cluster scratch included (the compute functions
  /// then do not allocate). denseMatrices = false leaves the ny x ny H and the tree's nv x nv M
  /// empty (the only workspace parts quadratic in the model size) for workspaces that never
  /// compute a mass matrix (the model builder's); clusterMassMatrix, crba and the dense
  /// constrained dynamics then fail with InvalidArgument. A copy is deep (an independent
  /// workspace, e.g. one per thread); a moved-from ClusterData may only be assigned to or
  /// destroyed.
  explicit ClusterData(const ClusterModel& model, bool denseMatrices = true);

  const ClusterModel* model = nullptr;
  Data treeData;  ///< spanning-tree workspace (placements, velocities, forces ...)

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

  /// Heap bytes held by this workspace: every buffer of treeData, of the public members and of
  /// the private per-cluster scratch (vector capacities, dynamic Eigen sizes; sizeof(ClusterData)
  /// not included). For memory reports.
  std::size_t heapBytes() const;

 private:
  friend struct detail::ClusterScratchAccess;
  detail::ClusterScratchHandle scratch_;
};

}  // namespace clusterdyn
