// The modes of the per-cluster steps, passed as arguments (call sites read
// `RotorFrame::Output`, not `true`). Each is a bool underneath: the same code as the flags they
// replace.
#pragma once

namespace clusterdyn::detail {

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
///    (cluster_aba_flat.cpp).
enum class RotorFrame : bool { Body = false, Output = true };

}  // namespace clusterdyn::detail
