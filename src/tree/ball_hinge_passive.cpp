// The damper and spring of a ball joint replaced by three hinges (ball_hinge_passive.hpp).
#include "tree/ball_hinge_passive.hpp"

#include <cmath>

#include "tree/joint_dynamics.hpp"
#include "tree/joint_dynamics_derivatives.hpp"

namespace clusterdyn::detail {

namespace {

/// The kinematics of one group at (t, t_dot): the hinge rotations, J and the ball's rotation.
struct BallHingeState {
  Mat3 R2T, R3T;          // exp(b2 t2)^T, exp(a t3)^T
  Mat3 J;                 // w = J t_dot (child frame)
  Vec3 td;                // t_dot (0 when v == nullptr)
  Eigen::Quaterniond qR;  // exp(b1 t1) exp(b2 t2) exp(a t3)
};

BallHingeState stateOf(const BallHingeGroup& g, const double* q, const double* v) {
  const Vec3 &b1 = g.axes[0], &b2 = g.axes[1], &a = g.axes[2];
  const Eigen::AngleAxisd e1(q[g.q[0]], b1), e2(q[g.q[1]], b2), e3(q[g.q[2]], a);
  BallHingeState s;
  s.R2T = e2.toRotationMatrix().transpose();
  s.R3T = e3.toRotationMatrix().transpose();
  s.J.col(0) = s.R3T * (s.R2T * b1);
  s.J.col(1) = s.R3T * b2;
  s.J.col(2) = a;
  s.td = v ? Vec3(v[g.v[0]], v[g.v[1]], v[g.v[2]]) : Vec3::Zero();
  s.qR = Eigen::Quaterniond(e1) * Eigen::Quaterniond(e2) * Eigen::Quaterniond(e3);
  return s;
}

}  // namespace

void addBallHingePassiveForces(const Model& model, const double* q, const double* v, double sign,
                               double* out) {
  for (const BallHingeGroup& g : model.ballHinges) {
    const BallHingeState s = stateOf(g, q, v);
    Vec3 tau = -g.damping * (s.J * s.td);  // the ball's torque, child frame
    if (g.stiffness != 0.0) tau -= g.stiffness * quaternionDifference(s.qR, g.spring);
    const Vec3 f = s.J.transpose() * tau;
    for (int k = 0; k < 3; ++k) out[g.v[k]] += sign * f[k];
  }
}

double ballHingeSpringEnergy(const Model& model, const double* q) {
  double V = 0.0;
  for (const BallHingeGroup& g : model.ballHinges)
    if (g.stiffness != 0.0)
      V += 0.5 * g.stiffness *
           quaternionDifference(stateOf(g, q, nullptr).qR, g.spring).squaredNorm();
  return V;
}

void addBallHingePassivePartials(const Model& model, const double* q, const double* v, double sign,
                                 Eigen::Ref<MatX> dtau_dq, Eigen::Ref<MatX> dtau_dv) {
  for (const BallHingeGroup& g : model.ballHinges) {
    const BallHingeState s = stateOf(g, q, v);
    const Vec3 &b1 = g.axes[0], &b2 = g.axes[1], &a = g.axes[2];
    const double d = g.damping, k = g.stiffness;
    const Vec3 r = k != 0.0 ? quaternionDifference(s.qR, g.spring) : Vec3::Zero();
    const Vec3 w = -d * (s.J * s.td) - k * r;  // the ball's torque
    // dr/dt = J_r^-1(r) J (the rotation's change in the child frame is J e_j per unit t_j).
    const Mat3 dr = k != 0.0 ? Mat3(inverseRightJacobianSO3(r) * s.J) : Mat3::Zero();
    Mat3 dJ[3];  // dJ / dt_j
    dJ[0].setZero();
    dJ[1].setZero();
    dJ[1].col(0) = -(s.R3T * b2.cross(s.R2T * b1));
    dJ[2].col(0) = -a.cross(s.J.col(0));
    dJ[2].col(1) = -a.cross(s.J.col(1));
    dJ[2].col(2).setZero();
    Mat3 dq;
    for (int j = 0; j < 3; ++j)
      dq.col(j) = dJ[j].transpose() * w + s.J.transpose() * (-d * (dJ[j] * s.td) - k * dr.col(j));
    const Mat3 dv = -d * (s.J.transpose() * s.J);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        dtau_dq(g.v[i], g.v[j]) += sign * dq(i, j);
        dtau_dv(g.v[i], g.v[j]) += sign * dv(i, j);
      }
  }
}

}  // namespace clusterdyn::detail
