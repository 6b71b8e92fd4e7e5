// The per-cluster steps of the constraint-embedding articulated-body algorithm (Chignoli et al.
// 2023, Alg. 1), shared by CE-ABA, the Delassus propagation and the proximal constrained
// dynamics. Each step handles one cluster k and dispatches once on its shape: a single body on
// an unconstrained joint (the tree step of aba_step.hpp), or a constrained cluster with one, two,
// three or more independent coordinates.
#pragma once

#include "cluster/cluster_workspace.hpp"
#include "cluster/step_modes.hpp"
#include "clusterdyn/cluster_data.hpp"

namespace clusterdyn::detail {

/// The generalized forces tau of clusterArticulatedStep: independent (ny, the layout of
/// ClusterModel::independentVelocityNames) or on the spanning-tree joints (nv, mapped by G^T).
enum class ForceCoordinates : bool { Independent = false, Spanning = true };

/// Pass 1 after clusterVelocityPass: IA_b = I_b, pA_b = v_b x* I_b v_b - fext_b for every body
/// and the motion subspace S and bias c of every constrained cluster (eq. 15, 19), every rotor
/// a body of the tree (RotorFrame::Body).
void clusterInertiaAndBias(const ClusterModel& cm, ClusterData& data, const Force* fext);

/// Rotor r's (ClusterScratch::rotors) pass-1 terms in its output body's frame, from the output
/// body's velocity vo and the rotor's joint rate qd: c_r = v_r x s qd = v_o x s qd and
/// pA_r = v_r x* I v_r with v_r = v_o + s qd (Featherstone Table 7.1 with constant s and I).
inline void outputFrameRotorBias(ClusterScratch& s, int r, const Motion& vo, double qd) {
  const OutputFrameRotor& rotor = s.rotors[r];
  const Motion vr = vo + rotor.axis * qd;
  s.rotorC[r] = crossMotion(vo, rotor.axis) * qd;
  s.rotorP[r] = crossForce(vr, rotor.inertia * vr);
}

/// clusterInertiaAndBias for the bodies of cluster k only (its velocity step done, in the same
/// mode frame: with RotorFrame::Output, not the rotors kept in their output body's frame).
void clusterInertiaAndBiasStep(const ClusterModel& cm, ClusterData& data, int k, const Force* fext,
                               RotorFrame frame);

/// Pass 1 in RotorFrame::Output of cluster k's rotors kept in their output body's frame
/// (OutputFrameRotor::aba): outputFrameRotorBias (v: spanning velocities).
void clusterRotorBias(const ClusterModel& cm, ClusterData& data, int k, const double* v);

/// Pass 1 in RotorFrame::Output of a flat scalar cluster k (ClusterWorkspace::flatScalar), in
/// place of clusterVelocityStep and the cluster's share of clusterInertiaAndBiasStep and
/// clusterRotorBias: each link's liMi, oMi, v, c, IA, pA as a tree body, each rotor's c and p
/// in its output body's frame (cluster_aba_flat.cpp). The cluster's S, c and outputTb in the
/// workspace are not written (S is constant).
Status flatClusterKinematics(const ClusterModel& cm, ClusterData& data, int k,
                             const Eigen::Ref<const VecX>& q, const double* v, StateCheck check);

/// Pass 2 of a flat scalar cluster (after flatClusterKinematics): the values of
/// clusterArticulatedStep, plus U^T c in the workspace's Utc for pass 3.
Status articulatedFlat(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                       ForceCoordinates forces);

/// Pass 3 of a flat scalar cluster (after articulatedFlat): the values of
/// clusterAccelerationStep (the rotors' a_gf: completeRotorBodies).
void accelerationsFlat(const ClusterModel& cm, ClusterData& data, int k, const Motion& ao);

/// Pass 2 for cluster k: U, D^-1, u (eq. 53) and the articulated inertia and bias it adds to
/// its output body (eq. 59-60). tau: independent forces (ny) or, with
/// ForceCoordinates::Spanning, spanning forces (nv) mapped by G^T. Also stores Ubar = Xh^T U
/// (scratch(data)[k].Ubar, cluster_workspace.hpp) for the constraint-space propagation. frame:
/// the mode of pass 1 (RotorFrame::Output: flat scalar clusters take articulatedFlat).
Status clusterArticulatedStep(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                              ForceCoordinates forces, RotorFrame frame);

/// Pass 3 for cluster k: y_ddot (eq. 53), body accelerations a_gf (eq. 61) and spanning
/// accelerations qdd = G y_ddot + g, from the output body's acceleration ao. frame: the mode of
/// passes 1 and 2 (RotorFrame::Output: the rotors' a_gf are left for completeRotorBodies). A
/// cluster in composite form does not read S: its a_gf come from a forward sweep over its
/// joints with qdd (and the velocity products treeData.c of its velocity step).
void clusterAccelerationStep(const ClusterModel& cm, ClusterData& data, int k, const Motion& ao,
                             RotorFrame frame);

/// Reduced backward step (Sathya & Carpentier 2024, Alg. 2 line 3): body force changes dp
/// (pA convention: minus the applied force) of cluster k's bodies give du_k = -S^T dp (written
/// to du + y0) and the change Xh^T (dp + U D^-1 du) added to dp of the output body.
void clusterForceBackwardStep(const ClusterModel& cm, ClusterData& data, int k, Force* dp,
                              double* du);

/// Reduced forward step (Alg. 2 lines 5-6): acceleration changes from the output body's change
/// dao: dydd_k = D^-1 (du_k - U^T Xh dao) and da_b = Xh dao + S dydd_k.
void clusterForceForwardStep(const ClusterModel& cm, ClusterData& data, int k, const Motion& dao,
                             const double* du, double* dydd, Motion* da);

}  // namespace clusterdyn::detail
