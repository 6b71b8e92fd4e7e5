// Analytical derivatives of the tree dynamics: RNEA (d tau / d(q, v, a)), ABA
// (d ddq / d(q, v, tau)) and the recursive inverse of the joint-space inertia matrix, after
// Carpentier & Mansard 2018 ("Analytical derivatives of rigid body dynamics algorithms", RSS):
// world-frame recursion over (joint, ancestor) pairs, d ABA = -M^-1 d RNEA at ddq = ABA(q, v,
// tau), M^-1 from the articulated-body factorisation. Derivation and conventions: docs/
// derivatives.md.
//
// Conventions:
//  * Configuration derivatives are in the tangent space (size nv): column k of d f / d q is
//    d/de f(integrate(q, e e_k, 1)) at e = 0, i.e. the perturbation q (+) delta is the joint's
//    right (body-frame, "local") exponential: X_J(q (+) delta_i) = X_J(q) exp(S_i delta_i) for
//    every joint type (revolute, prismatic, spherical, planar, floating), so delta has the
//    frame and the units of the joint velocity v.
//  * Velocities and accelerations are the generalized v, a of rnea() / aba(); fext as in rnea():
//    forces applied TO each body, body coordinates, held constant in the body frame when q moves.
//  * Matrices are dense nv x nv with both triangles filled.
//  * Joint dynamics (MJCF armature A, springs and dampers tau_p(q, v); docs/mjcf.md §4) are part
//    of the dynamics differentiated, as in rnea() / aba(): tau = rnea + A a - tau_p, M + A in
//    place of M (dtau_da, Minv), ddq = (M + A)^-1 (tau + tau_p - nle) (docs/derivatives.md,
//    "Joint dynamics").
#pragma once

#include <vector>

#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// Workspace and outputs of the derivative functions, sized once from the model (no heap use in
/// the compute calls). Errors are reported through Data::lastError like every compute function.
struct DerivativeData {
  explicit DerivativeData(const Model& model);

  const Model* model = nullptr;  ///< the model this workspace was made for

  // Outputs.
  MatX dtau_dq;   ///< d tau / d q (nv x nv, tangent columns)
  MatX dtau_dv;   ///< d tau / d v
  MatX dtau_da;   ///< d tau / d a = M(q)
  MatX ddq_dq;    ///< d ddq / d q
  MatX ddq_dv;    ///< d ddq / d v
  MatX Minv;      ///< M(q)^-1 = d ddq / d tau
  VecX tau, ddq;  ///< the RNEA torques / ABA accelerations the derivatives were taken at

  // Per body, world coordinates (Carpentier & Mansard 2018's notation).
  std::vector<Mat6Xs> psi;  ///< psi_i = 0X_i S_i: the joint's Jacobian columns
  std::vector<Mat6Xs> ups;  ///< u_i = psi_i x ov_parent (columns; docs/derivatives.md eq. D4)
  std::vector<Mat6Xs> wps;  ///< w_i = psi_i x oa_parent - u_i x ov_parent (eq. D5)
  std::vector<Mat6Xs> zps;  ///< z_i = -psi_i x (ov_parent + ov_i) (eq. D6)
  std::vector<Motion> ov;   ///< spatial velocity
  std::vector<Motion> oa;   ///< spatial acceleration, gravity offset included
  std::vector<Mat6> oIc;    ///< composite inertia of the subtree
  std::vector<Mat6> oBc;    ///< composite Coriolis matrix of the subtree (eq. D3)
  std::vector<Force> oF;    ///< force transmitted by the joint (subtree sum of f_i)

  // M^-1 recursion (world coordinates).
  std::vector<Mat6Xs> oU;       ///< 0X_i^* U_i: the articulated-body U_i = IA_i S_i in world axes
  std::vector<int> subtreeEnd;  ///< one past the largest velocity index in the subtree of i
  /// The velocity columns of the strict descendants of body i as ascending runs [begin, end):
  /// subtreeRuns[2 r], subtreeRuns[2 r + 1] for r in [subtreeRunStart[i], subtreeRunStart[i + 1]).
  /// One run (or none) per body when the bodies are numbered depth first; more when subtrees
  /// interleave (a ClusterModel's spanning tree numbers its bodies cluster by cluster).
  std::vector<int> subtreeRuns;
  std::vector<int> subtreeRunStart;  ///< nbodies + 1 offsets into subtreeRuns (in runs)
  /// subtreeEnd_i when the strict descendants of i own exactly [idx_v_i + nv_i, subtreeEnd_i)
  /// (depth-first numbering below i: one loop, the fast path), else -1 (read subtreeRuns).
  std::vector<int> contiguousSubtreeEnd;
  Mat6X F;  ///< 6 x nv, backward: d pA_i / d tau over the columns of i's subtree (sibling
            ///< subtrees own disjoint column sets, so one matrix holds them all)
  std::vector<Mat6X> FA;  ///< 6 x nv per body, forward: d a_i / d tau (columns past i's own
                          ///< ones, bodies with children only)
};

/// d tau / d q, d tau / d v and d tau / d a = M of tau = rnea(q, v, a, fext), written to
/// dd.dtau_dq, dd.dtau_dv, dd.dtau_da (and tau itself to dd.tau). Uses data's kinematic arrays
/// as scratch (data.liMi, data.oMi).
Status computeRNEADerivatives(const Model& model, Data& data, DerivativeData& dd, ConstVecRef q,
                              ConstVecRef v, ConstVecRef a, const Force* fext = nullptr);

/// M(q)^-1 by the articulated-body recursion (not by inverting M), written to dd.Minv (both
/// triangles). Fails with NotPositiveDefinite (naming the body) like aba() (the same
/// working-precision test). Uses data.oMi, data.IA (world axes here), data.Dinv as scratch.
Status computeMinverse(const Model& model, Data& data, DerivativeData& dd, ConstVecRef q);

/// ddq = aba(q, v, tau, fext) (to dd.ddq and data.ddq) and its derivatives
/// dd.ddq_dq = -M^-1 d rnea / dq, dd.ddq_dv = -M^-1 d rnea / dv (both at a = ddq), and
/// dd.Minv = d ddq / d tau. Also leaves dd.dtau_dq, dd.dtau_dv, dd.dtau_da at (q, v, ddq, fext).
/// One pass of kinematics, one backward pass of the world-axes articulated-body recursion with
/// the M^-1 backward terms, one forward pass of accelerations, M^-1 and the RNEA-derivative
/// kinematic terms, then the RNEA-derivative backward pass (docs/derivatives.md). Uses data.oMi,
/// data.IA, data.pA, data.c (world axes here), data.u, data.Dinv as scratch.
Status computeABADerivatives(const Model& model, Data& data, DerivativeData& dd, ConstVecRef q,
                             ConstVecRef v, ConstVecRef tau, const Force* fext = nullptr);

}  // namespace clusterdyn
