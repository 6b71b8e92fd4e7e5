// Inter-body, loop and coupling constraint forces after forward or inverse dynamics
// (docs/design/constraint-forces.md).
//
// Conventions:
//  * joint[b]: spatial force [moment; force] transmitted across the spanning-tree joint of body
//    b, applied TO body b by its parent (world for a root body), in body b's coordinates about
//    its origin. S_b^T joint[b] is the joint's generalized force: the actuator torque plus, for
//    joints named by a <coupling>/<mimic>, the coupling's generalized force on that joint.
//  * loopWrench[l]: wrench of the cut joint of <loop> l applied TO its successor body BY its
//    predecessor body, in the loop frame P (predecessorPlacement on the predecessor body), about
//    P's origin; the predecessor receives the opposite wrench. loopRowForce holds its
//    components along the constrained directions (columns of Trot, then of Tlin): the
//    constraint multipliers. Rows the cluster does not select (redundant, e.g. the out-of-plane
//    rows of a planar loop) carry zero: those components are statically indeterminate.
//  * relationMultiplier[r]: multiplier lambda of <coupling>/<mimic> r, whose velocity row is
//    sum_j coeff_j v_j = 0; relationJointForce[relationTermStart[r] + t] = coeff_t lambda is the
//    generalized force (torque or force) the coupling exerts on its t-th joint (the gear
//    "torque on each side"): M q_ddot + c = tau + K^T lambda in spanning coordinates.
//  * Generalized forces of CE-ABA given per independent coordinate (tauY) act on the
//    independent joints; spanning forces (ceAbaSpanningForces) act where given.
//  * A later contact / cut-loop wrench list (constrained dynamics) will be added as further
//    members; the ones here keep their meaning.
#pragma once

#include <string>
#include <vector>

#include "clusterdyn/cluster_data.hpp"
#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// How the generalized forces passed to ceAbaConstraintForces were given to CE-ABA.
enum class GeneralizedForceLayout {
  Independent,  ///< tauY (size ny) of ceAba / ceAbaIndependent: on the independent joints
  Spanning,     ///< tau (size nv) of ceAbaSpanningForces: on every spanning-tree joint
};

/// Preallocated results and scratch of the constraint-force computations (one per thread).
struct JointForces {
  explicit JointForces(const ClusterModel& model);

  const ClusterModel* model = nullptr;
  std::vector<Force> joint;            ///< per body, body coordinates (see above)
  std::vector<Force> jointWorld;       ///< per body, world coordinates about the world origin
  std::vector<Force> loopWrench;       ///< per loop, loop frame P, on the successor
  VecX loopRowForce;                   ///< per loop row; loop l has rows [loopRowStart[l], [l+1])
  std::vector<int> loopRowStart;       ///< size nloops + 1
  VecX relationMultiplier;             ///< per coupling / mimic
  VecX relationJointForce;             ///< per coupling term
  std::vector<int> relationTermStart;  ///< size nrelations + 1

  // Scratch (per cluster: the dependent block of the selected constraint rows, transposed).
  std::vector<MatX> A;
  std::vector<std::vector<int>> piv;
  VecX rhs;                       ///< max dependent count
  std::vector<Force> correction;  ///< per body
  std::vector<char> leaf;         ///< per body: 1 when no body hangs below it
};

/// After aba(): f[b] = IA_b a_b + pA_b (Jain, inter-body forces, eq. 18), the force transmitted by
/// every tree joint onto its child body (body coordinates). f must have model.nbodies entries.
Status abaJointForces(const Model& model, Data& data, std::vector<Force>& f);

/// After a successful ceAba / ceAbaIndependent (layout Independent, tau = tauY) or
/// ceAbaSpanningForces (layout Spanning, tau = the spanning forces) with the same data and
/// without another call in between: fills forces.joint, loopWrench, loopRowForce,
/// relationMultiplier and relationJointForce.
Status ceAbaConstraintForces(const ClusterModel& model, ClusterData& data, JointForces& forces,
                             ConstVecRef tau,
                             GeneralizedForceLayout layout = GeneralizedForceLayout::Independent);

/// After a successful ceRnea with the same data: the same quantities, from the spanning RNEA
/// forces (data.treeData.f) and data.tauY acting on the independent joints.
Status ceRneaConstraintForces(const ClusterModel& model, ClusterData& data, JointForces& forces);

/// forces.jointWorld from forces.joint and the body poses data.treeData.oMi of the same call.
Status jointForcesInWorld(const ClusterModel& model, ClusterData& data, JointForces& forces);

}  // namespace clusterdyn
