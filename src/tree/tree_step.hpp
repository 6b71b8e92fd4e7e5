// The kinematic step shared by all tree recursions: joint transform and body placement.
#pragma once

#include <cmath>

#include "clusterdyn/data.hpp"

namespace clusterdyn::detail {

/// liMi = X_T * X_J(q_i): pose of body i in its parent's frame (Featherstone eq. 4.x:
/// X_up = X_J X_T).
inline void localPlacementStep(const Model& model, Data& data, int i,
                               const Eigen::Ref<const VecX>& q) {
  const Joint& joint = model.joints[i];
  const Transform& XT = model.jointPlacement[i];
  const double* qi = q.data() + model.idx_q[i];
  Transform& liMi = data.liMi[i];
  if (model.axisRotation[i] >= 0) {
    // X_T.R = 1: liMi.R = R_a(theta), rotation about coordinate axis a.
    constexpr int kNext[3] = {1, 2, 0}, kNextNext[3] = {2, 0, 1};
    const int a = joint.alignedAxis, i = kNext[a], j = kNextNext[a];
    const double th = joint.alignedSign * qi[0], c = std::cos(th), s = std::sin(th);
    Mat3& R = liMi.R;
    R(a, a) = 1.0;
    R(i, a) = R(j, a) = R(a, i) = R(a, j) = 0.0;
    R(i, i) = R(j, j) = c;
    R(j, i) = s;
    R(i, j) = -s;
    liMi.p = XT.p;
  } else if (joint.type == JointType::Revolute && joint.alignedAxis >= 0) {
    // X_T R_a(theta) for a coordinate axis a: two columns of X_T.R rotate, one stays.
    constexpr int kNext[3] = {1, 2, 0}, kNextNext[3] = {2, 0, 1};
    const int a = joint.alignedAxis, i = kNext[a], j = kNextNext[a];
    const double th = joint.alignedSign * qi[0], c = std::cos(th), s = std::sin(th);
    liMi.R.col(a) = XT.R.col(a);
    liMi.R.col(i) = c * XT.R.col(i) + s * XT.R.col(j);
    liMi.R.col(j) = c * XT.R.col(j) - s * XT.R.col(i);
    liMi.p = XT.p;
  } else if (joint.type == JointType::Revolute) {
    liMi.R.noalias() = XT.R * Eigen::AngleAxisd(qi[0], joint.axis).toRotationMatrix();
    liMi.p = XT.p;
  } else if (joint.type == JointType::Prismatic) {
    liMi.R = XT.R;
    liMi.p.noalias() = XT.p + XT.R * (qi[0] * joint.axis);
  } else {
    liMi = XT * joint.transform(qi);
  }
}

/// localPlacementStep, then oMi = oMi[parent] * liMi.
inline void placementStep(const Model& model, Data& data, int i, const Eigen::Ref<const VecX>& q) {
  localPlacementStep(model, data, i, q);
  const Transform& liMi = data.liMi[i];
  const int p = model.parent[i];
  if (p >= 0) {
    data.oMi[i].R.noalias() = data.oMi[p].R * liMi.R;
    data.oMi[i].p.noalias() = data.oMi[p].p + data.oMi[p].R * liMi.p;
  } else {
    data.oMi[i] = liMi;
  }
}

/// Joint motion S_i x for the nv_i values at x (x = velocity or acceleration segment).
inline Motion jointMotion(const Joint& joint, const double* x) {
  Motion m;
  switch (joint.type) {
    case JointType::Revolute:
      m.head<3>() = joint.axis * x[0];
      m.tail<3>().setZero();
      return m;
    case JointType::Prismatic:
      m.head<3>().setZero();
      m.tail<3>() = joint.axis * x[0];
      return m;
    case JointType::Floating:
      return Eigen::Map<const Vec6>(x);
    default:
      m.noalias() = joint.S * Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>>(
                                  x, joint.nv);
      return m;
  }
}

/// Gravity as a spatial acceleration of the world: a_0 = [0; -g] (Featherstone's trick).
inline Motion gravityAcceleration(const Model& model) {
  Motion a0;
  a0.head<3>().setZero();
  a0.tail<3>() = -model.gravity;
  return a0;
}

}  // namespace clusterdyn::detail
