// Kinematics on the cluster tree (cluster_kinematics.cpp): the velocity and position passes
// with each cluster's explicit constraint G, g, the state check, the cluster motion subspace and
// bias, G^T for generalized forces, and the rotors' deferred entries of treeData.
#pragma once

#include "cluster/cluster_workspace.hpp"
#include "cluster/step_modes.hpp"
#include "clusterdyn/cluster_data.hpp"

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
/// the rows of c of the rotors kept in their output body's frame, and (with Bias::Compute) of a
/// cluster in composite form (ClusterWorkspace::composite) c only: its S is left for
/// completeMotionSubspaces (ClusterWorkspace::sDeferred).
void clusterMotionSubspace(const ClusterModel& cm, ClusterData& data, int k, Bias bias,
                           RotorFrame frame);

/// The motion subspaces S that ceAba deferred (ClusterWorkspace::sDeferred), written from the
/// kinematics it left in data (G, liMi): a reader of S after ceAba calls it once first. Does
/// nothing when no S is deferred.
void completeMotionSubspaces(const ClusterModel& cm, ClusterData& data);

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
