// Internal building blocks shared by the cluster builder and the cluster algorithms.
#pragma once

#include "cluster/cluster_workspace.hpp"
#include "clusterdyn/cluster_data.hpp"

namespace clusterdyn::detail {

// Named switches of the per-cluster building blocks (call sites read `Bias::Compute`, not
// `true`). Each is a compile-time-cheap bool underneath: the same code as the flags they replace.

/// Whether a step also computes the velocity-product terms: the explicit-form bias g
/// (Chignoli et al. 2023, eq. 14) and the constraint bias k, and the cluster bias c (eq. 19).
/// Kinematics-only users (CRBA, v = G y_dot, the Delassus rows, the builder) skip them.
enum class Bias : bool { Skip = false, Compute = true };

/// Whether the cluster velocity pass rejects spanning states (q, v) that violate the
/// constraints (checkClusterState, ConstraintFailure).
enum class StateCheck : bool { Skip = false, Check = true };

/// Poses relative to the output body (ClusterWorkspace::outputTb) in the cluster velocity pass:
/// of every constrained cluster, or of the implicit ones only (which always need them).
enum class OutputPoses : bool { ImplicitOnly = false, All = true };

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
/// ConstraintFailure naming cluster k and the smallest singular value of its Kd (from K).
Status singularDependentBlock(const ClusterModel& cm, ClusterData& data, int k, const char* where);
/// Solves the dependent positions of cluster k in q (in place), keeping its independent ones.
/// warmStart (nullable): the cluster's positions before its independent ones were set. When it
/// is closed and regular, predictor-corrector continuation of its branch only; otherwise
/// damped Newton on the selected rows from q, continuation from warmStart, then the same from
/// the model's qReference (loop_closure.cpp, ClosureSettings).
/// The closure's warm-start policy: after a ConstraintFailure, or when data.q is no longer
/// finite, data.q is reset to the model's qReference so that the next solve starts from a
/// closed configuration. Returns s; does nothing when s is Ok.
Status keepWarmStartUsable(const ClusterModel& cm, ClusterData& data, Status s);

Status solveClusterPositions(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q,
                             const double* warmStart);
/// Builder version: least squares on all rows (allocates; load time only).
Status closeClusterPositions(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q);

}  // namespace clusterdyn::detail

namespace clusterdyn::detail {

/// Tree kinematics cluster by cluster (liMi, oMi, v, c = v x S qd) and each cluster's G (and g
/// with Bias::Compute) at (q, v). With StateCheck::Check, rejects spanning states that violate
/// the constraints (ConstraintFailure). v may be nullptr (zero velocity). OutputPoses::All: also
/// the poses relative to the output body (outputTb) of explicit clusters (implicit ones always).
Status clusterVelocityPass(const ClusterModel& cm, ClusterData& data,
                           const Eigen::Ref<const VecX>& q, const double* v, Bias bias,
                           StateCheck check, OutputPoses poses = OutputPoses::All);

/// The position level of clusterVelocityPass for the mass matrix (like crba: no velocities, no
/// world poses): liMi of every body but the rotors of coupling clusters (constantS == 2, whose
/// terms in H are workspace constants; oMi, v and c are left as they were), the poses relative
/// to the output bodies (outputTb) of the loop clusters and (OutputPoses::All) of the clusters
/// with joints inside them, and G of the loop clusters; with StateCheck::Check, rejects a q
/// that violates the constraints.
Status clusterPositionPass(const ClusterModel& cm, ClusterData& data,
                           const Eigen::Ref<const VecX>& q, StateCheck check, OutputPoses poses);

/// ConstraintFailure unless (q, v) satisfies cluster k's constraints (to
/// ClosureSettings::stateTolerance); v may be nullptr. Implicit clusters need their poses and K
/// (clusterVelocityStep) first.
Status checkClusterState(const ClusterModel& cm, ClusterData& data, int k,
                         const Eigen::Ref<const VecX>& q, const double* v);

/// clusterVelocityPass for cluster k only (its parent cluster's bodies must be done). With
/// RotorFrame::Output, the rotors the steps keep in their output body's frame are skipped.
Status clusterVelocityStep(const ClusterModel& cm, ClusterData& data, int k,
                           const Eigen::Ref<const VecX>& q, const double* v, Bias bias,
                           StateCheck check, OutputPoses poses, RotorFrame frame);

/// Cluster motion subspace S (6m x d, eq. 15) into scratch(data)[k].S and, with Bias::Compute,
/// the cluster bias c (6m, eq. 19) (after clusterVelocityPass); with RotorFrame::Output, not
/// the rows of c of the rotors kept in their output body's frame.
void clusterMotionSubspace(const ClusterModel& cm, ClusterData& data, int k, Bias bias,
                           RotorFrame frame);

// The rotors' deferred entries of treeData (ClusterScratch::deferredRotors): these three
// functions are its only writers. An algorithm in RotorFrame::Output records its state once at
// its end (deferRotorBodies); a reader of the rotors' entries calls completeRotorBodies once
// before reading; a step that writes those entries, or the entries of the output bodies they are
// completed from, calls discardDeferredRotors.

/// Records that the rotors' entries of treeData were left for the state (q, v) (v: nullptr for
/// zero velocity) of an algorithm in RotorFrame::Output.
void deferRotorBodies(ClusterScratch& s, const Eigen::Ref<const VecX>& q, const double* v);
/// Forgets a deferral: the rotors' entries are written (or left stale, as documented) by the
/// caller.
inline void discardDeferredRotors(ClusterScratch& s) { s.deferredRotors.pending = false; }
/// After deferRotorBodies: the rotors' liMi, oMi, v, a_gf, c, f, IA and pA in treeData, at that
/// call's state. Does nothing otherwise. Every reader of the rotors' entries of treeData after a
/// cluster algorithm calls it first.
void completeRotorBodies(const ClusterModel& cm, ClusterData& data);

/// tau_y = G^T tau for every cluster (Chignoli et al. 2023, eq. 23 and 65), tau = S^T f of the
/// spanning tree in data.treeData.tau.
void independentForces(const ClusterModel& cm, ClusterData& data, VecX& out);

/// Argument checks common to the cluster algorithms.
Status checkClusterArgs(const ClusterModel& cm, ClusterData& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>* v);

}  // namespace clusterdyn::detail
