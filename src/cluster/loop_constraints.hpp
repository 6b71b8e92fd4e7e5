// The constraints of one cluster (loop_constraints.cpp): its poses relative to the output body,
// the rows K, k and residual phi of its explicit relations and loop joints, and the explicit
// form G, g from the dependent block of K (Chignoli et al. 2023, eq. 2-4, 6).
#pragma once

#include "cluster/cluster_workspace.hpp"
#include "cluster/step_modes.hpp"
#include "clusterdyn/cluster_data.hpp"

namespace clusterdyn::detail {

/// liMi of the cluster's bodies from q and their poses relative to the output body
/// (ClusterWorkspace::outputTb).
void clusterPlacements(const ClusterModel& cm, ClusterData& data, int k,
                       const Eigen::Ref<const VecX>& q);
/// Same from the liMi already in data.treeData (after a tree forward pass).
void clusterRelativePoses(const ClusterModel& cm, ClusterData& data, int k);
/// All constraint rows of cluster k: explicit relations then loop rows.
/// Residual phi (r) at q (needs clusterPlacements).
void constraintResidual(const ClusterModel& cm, ClusterData& data, int k,
                        const Eigen::Ref<const VecX>& q);
/// Jacobian K (r x n) (needs poses).
void constraintJacobian(const ClusterModel& cm, ClusterData& data, int k);
/// Bias k (r) with K v_dot = k (needs poses, data.treeData.v and data.localBias).
void constraintBias(const ClusterModel& cm, ClusterData& data, int k);
/// G (and g with Bias::Compute) from the selected rows of K (and k). Fails (ConstraintFailure)
/// if the dependent block is singular (ClosureSettings::singularTolerance).
Status explicitForm(const ClusterModel& cm, ClusterData& data, int k, Bias bias);
/// Copies the dependent block of K (selected rows, dependent columns) into w.Kd; returns
/// max |Kd_ij|.
double gatherDependentBlock(const ClusterModel& cm, ClusterData& data, int k);
/// LU-factors w.Kd in place; false when a pivot is below singularTolerance * scale.
/// pivotRatio (optional) receives min |pivot| / scale.
bool factorDependentBlock(ClusterWorkspace& w, double scale, double* pivotRatio);
/// Column order of K_d for the implicit clusters with a multi-dof joint (ClusterWorkspace::
/// kdOrder): dependent columns sorted by the number of loops they enter (stable), so that each
/// loop's private columns are eliminated before the shared ones; factored by sparseLuFactor.
/// Leaves the natural order (dense LU) for 1-dof clusters. Sizes w.piv. Load time only.
void setDependentOrder(const ClusterModel& cm, int k, ClusterWorkspace& w);
/// ConstraintFailure naming cluster k and the smallest singular value of its Kd (from K).
Status singularDependentBlock(const ClusterModel& cm, ClusterData& data, int k, const char* where);

}  // namespace clusterdyn::detail
