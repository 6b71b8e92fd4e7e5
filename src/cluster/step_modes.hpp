// The modes of the per-cluster building blocks, passed as arguments (call sites read
// `Bias::Compute` or `RotorFrame::Output`, not `true`). Each is a bool underneath: the same code
// as the flags they replace.
#pragma once

namespace clusterdyn::detail {

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

/// Where the per-cluster steps keep the rotors (ClusterScratch::rotors: axisymmetric leaves on
/// the output body of a coupling cluster) of the clusters with one to three independent
/// coordinates (OutputFrameRotor::aba).
///  - Body: every rotor is a body of the tree with its own entries of treeData (liMi, v, c, IA,
///    pA, a_gf). The mode of every caller but CE-ABA without external forces.
///  - Output (ceAba without external forces): those rotors stay in their output body's frame,
///    where their axis and inertia are constants (Chignoli et al. 2023, eq. 53 and 59-61 with
///    X_T S and X_T^T I X_T fixed): their pass-1 terms are ClusterScratch::rotorC / rotorP
///    (clusterRotorBias), their entries of treeData are left for completeRotorBodies, and the
///    flat scalar clusters (ClusterWorkspace::flatScalar) take their fused steps
///    (cluster_aba_flat.cpp). The clusters in composite form (ClusterWorkspace::composite),
///    whose passes 2 and 3 do not read S, get no S either (ClusterWorkspace::sDeferred, written
///    by completeMotionSubspaces for a later reader).
enum class RotorFrame : bool { Body = false, Output = true };

}  // namespace clusterdyn::detail
