// The damper and spring of a ball joint replaced by three hinges (Model::ballHinges, docs/mjcf.md
// section 3), carried exactly: with the ball's rotation R(t) = exp(b1 t1) exp(b2 t2) exp(a t3)
// and its angular velocity in the child frame w = J(t) t_dot, J = [R3^T R2^T b1, R3^T b2, a],
// MuJoCo's ball torque tau_ball = -d w - k r, r = subQuat(R(t), q_spring) (child frame), does
// the work of the generalized forces tau_h = J^T tau_ball on (t1, t2, t3). Its potential energy
// is 1/2 k |r|^2 (d/dt = k r . w, since J_r^-1(r)^T r = r). Nothing here allocates.
#pragma once

#include <Eigen/Core>

#include "clusterdyn/model.hpp"

namespace clusterdyn::detail {

/// out[v of the hinges] += sign * J^T tau_ball for every group of model.ballHinges (v ==
/// nullptr: v = 0, the spring only). q, v, out: the model's coordinates (nq, nv, nv).
void addBallHingePassiveForces(const Model& model, const double* q, const double* v, double sign,
                               double* out);

/// Sum over model.ballHinges of 1/2 k |subQuat(R(t), q_spring)|^2 (J).
double ballHingeSpringEnergy(const Model& model, const double* q);

/// dtau_dq += sign * d tau_h / dt and dtau_dv += sign * d tau_h / d t_dot (nv x nv; the hinges'
/// tangent is their angle) for every group: with w_b = -d J t_dot - k r,
///   d tau_h / d t_dot = -d J^T J,
///   d tau_h / d t_j = (dJ/dt_j)^T w_b + J^T (-d (dJ/dt_j) t_dot - k J_r^-1(r) J e_j),
/// dJ/dt1 = 0, dJ/dt2 = [-R3^T (b2 x R2^T b1), 0, 0], dJ/dt3 = [-a x u1, -a x u2, 0] (u_i the
/// columns of J) and J_r^-1 the inverse right Jacobian of SO(3). The q-partial depends on v
/// (the damper's J^T J t_dot turns with the swings): v == nullptr means v = 0.
void addBallHingePassivePartials(const Model& model, const double* q, const double* v, double sign,
                                 Eigen::Ref<MatX> dtau_dq, Eigen::Ref<MatX> dtau_dv);

}  // namespace clusterdyn::detail
