// Joint dynamics (MJCF armature, springs, dampers: Model::armature, damping, stiffness) in the
// cluster algorithms. Armature is a joint-space diagonal term A of the spanning tree's inertia,
// which the cluster's independent coordinates see as G_k^T A_k G_k (Chignoli et al. 2023,
// eq. 23 applied to H + A); the passive forces tau_p(q, v) act on the spanning joints.
#pragma once

#include "cluster/cluster_aba_step.hpp"
#include "clusterdyn/cluster_data.hpp"
#include "clusterdyn/cluster_model.hpp"
#include "tree/joint_dynamics.hpp"

namespace clusterdyn::detail {

/// D += G^T diag(armature of cluster c) G, G the cluster's nv_c x ny_c matrix. No-op without
/// armature.
template <class MatG, class MatD>
inline void addClusterArmature(const Model& tree, const Cluster& c, const MatG& G, MatD& D) {
  if (!tree.hasArmature()) return;
  const double* const a = tree.armature.data() + c.v0;
  for (int i = 0; i < c.nv; ++i) {
    if (a[i] == 0.0) continue;
    for (int r = 0; r < c.ny; ++r)
      for (int s = 0; s < c.ny; ++s) D(r, s) += a[i] * G(i, r) * G(i, s);
  }
}

/// Scalar clusters (ny = 1): G^T diag(a) G.
template <class MatG>
inline double clusterArmatureScalar(const Model& tree, const Cluster& c, const MatG& G) {
  if (!tree.hasArmature()) return 0.0;
  const double* const a = tree.armature.data() + c.v0;
  double D = 0.0;
  for (int i = 0; i < c.nv; ++i) D += a[i] * G(i, 0) * G(i, 0);
  return D;
}

/// The generalized forces of CE-ABA's pass 2 with the joint dynamics' force terms: the passive
/// forces tau_p(q, v) and, in clusters with an implicit loop, the armature's share of the
/// bias acceleration, -A g (q_ddot = G y_ddot + g, so A q_ddot = A G y_ddot + A g: the first
/// part is in D, addClusterArmature). As spanning forces tau_s = tau + tau_p - A g (Spanning)
/// or E tau_y + tau_p - A g (Independent; E puts tau_y on the independent coordinates, whose
/// rows of G are the identity, so G^T E tau_y = tau_y), in data.treeData.tauApplied; `forces`
/// becomes Spanning. Call after pass 1 (g). Returns tau unchanged when there is nothing to add.
/// No allocation.
inline const double* withJointDynamicsForces(const ClusterModel& cm, ClusterData& data,
                                             const double* q, const double* v, const double* tau,
                                             ForceCoordinates& forces) {
  const Model& tree = cm.treeModel;
  const bool armatureBias = tree.hasArmature() && cm.hasImplicitClusters();
  if (!tree.hasPassiveForces() && !armatureBias) return tau;
  VecX& ts = data.treeData.tauApplied;
  if (forces == ForceCoordinates::Spanning) {
    ts = Eigen::Map<const VecX>(tau, tree.nv);
  } else {
    ts.setZero();
    for (int j = 0; j < cm.ny; ++j) ts[cm.independentVelocity[j]] = tau[j];
  }
  addModelPassiveForces(tree, q, v, 1.0, ts.data());
  if (armatureBias) {
    const std::vector<ClusterWorkspace>& ws = scratch(data);
    for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
      const Cluster& c = cm.clusters[k];
      if (!c.implicit()) continue;
      for (int i = 0; i < c.nv; ++i) ts[c.v0 + i] -= tree.armature[c.v0 + i] * ws[k].g[i];
    }
  }
  forces = ForceCoordinates::Spanning;
  return ts.data();
}

}  // namespace clusterdyn::detail
