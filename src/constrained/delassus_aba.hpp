// The Delassus matrix and the impulse response of a constraint set on the articulated-body
// quantities of the CE-ABA that ran just before at the same configuration (a time step: the free
// motion first, then the constraint-space problem), instead of the position pass and pass 2 of
// delassusMatrix. One owner per quantity: the poses, the cluster motion subspaces and the pass-2
// terms (D^-1, U, Ubar, articulated inertias) are CE-ABA's; these functions only read them.
// Internal (the contact step, contact_problem.cpp and step.cpp).
#pragma once

#include "cluster/cluster_workspace.hpp"
#include "clusterdyn/constraints.hpp"

namespace clusterdyn::detail {

/// True for a body that ceAba (without external forces) treats in its output body's frame: a
/// rotor (OutputFrameRotor::aba) of a cluster with one to three independent coordinates. ceAba
/// leaves it without a pose of its own (its liMi, oMi, outputTb and rows of U are not written).
inline bool isOutputFrameRotor(const ClusterScratch& s, int b) {
  const int r = s.rotorSlot[b];
  return r >= 0 && s.rotors[r].aba;
}

/// True when the rows of cd can be served from ceAba's quantities: no row attaches to a rotor in
/// its output body's frame (isOutputFrameRotor). Otherwise use delassusMatrix.
bool afterAbaServes(const ClusterModel& cm, const ClusterData& data, const ConstraintData& cd);

/// After ceAba(q, v, tau) without external forces, and afterAbaServes: the attachments' rows C
/// (constraintRowsAt, on ceAba's world poses) and cd.delassus = J H^-1 J^T by the constraint-space
/// propagation (delassus.cpp) on ceAba's pass-2 quantities, which are those of delassusMatrix at
/// q (articulated inertias do not depend on v or tau) up to rounding. Also completes the poses
/// relative to the output bodies (outputTb) of ceAba's flat clusters and the motion subspaces S
/// ceAba deferred (completeMotionSubspaces) for the propagation, the row Jacobian
/// (contact_problem.cpp) and the impulse response. NonFinite when the matrix overflowed.
Status delassusAfterAba(const ClusterModel& cm, ClusterData& data, ConstraintData& cd);

/// The propagation of delassusPropagation on ceAba's quantities (delassus.cpp): rotors in their
/// output body's frame are not visited.
void delassusPropagationAfterAba(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                                 Eigen::Ref<MatX> out);

/// dydd = H^-1 J^T lambda (ny) after delassusAfterAba, lambda on the rows of cd: the body forces
/// -C^T lambda through the reduced backward sweep over the supporting clusters, then the reduced
/// forward sweep over all clusters from a zero root acceleration (Sathya & Carpentier 2024, Alg.
/// 2 lines 2-6), on ceAba's D^-1, U, Ubar and poses: no velocity or bias term is read. Writes the
/// body accelerations of the response to data.treeData.a_gf (rotors in their output body's frame
/// excepted) and cd.dp, cd.du.
void impulseResponseAfterAba(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                             const Eigen::Ref<const VecX>& lambda, Eigen::Ref<VecX> dydd);

}  // namespace clusterdyn::detail
