#include "clusterdyn/joint.hpp"

#include <cmath>

namespace clusterdyn {

const char* jointTypeName(JointType t) {
  switch (t) {
    case JointType::Revolute:
      return "revolute";
    case JointType::Prismatic:
      return "prismatic";
    case JointType::Spherical:
      return "spherical";
    case JointType::Planar:
      return "planar";
    case JointType::Floating:
      return "floating";
    case JointType::Fixed:
      return "fixed";
  }
  return "unknown";
}

Joint Joint::revolute(const Vec3& axis) {
  Joint j;
  j.type = JointType::Revolute;
  j.axis = axis.normalized();
  j.nq = j.nv = 1;
  j.S.setZero(6, 1);
  j.S.col(0).head<3>() = j.axis;
  for (int a = 0; a < 3; ++a)
    if (std::abs(j.axis[a]) == 1.0 && j.axis.squaredNorm() == 1.0) {
      j.alignedAxis = a;
      j.alignedSign = j.axis[a];
    }
  return j;
}

Joint Joint::prismatic(const Vec3& axis) {
  Joint j;
  j.type = JointType::Prismatic;
  j.axis = axis.normalized();
  j.nq = j.nv = 1;
  j.S.setZero(6, 1);
  j.S.col(0).tail<3>() = j.axis;
  return j;
}

Joint Joint::spherical() {
  Joint j;
  j.type = JointType::Spherical;
  j.nq = 4;
  j.nv = 3;
  j.S.setZero(6, 3);
  j.S.topRows<3>().setIdentity();
  return j;
}

Joint Joint::planar(const Vec3& normal) {
  Joint j;
  j.type = JointType::Planar;
  j.axis = normal.normalized();
  // Any orthonormal in-plane basis with t1 x t2 = n.
  const Vec3 helper = std::abs(j.axis.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  j.t1 = (helper - helper.dot(j.axis) * j.axis).normalized();
  j.t2 = j.axis.cross(j.t1);
  j.nq = 3;
  j.nv = 3;
  j.S.setZero(6, 3);
  j.S.col(0).tail<3>() = j.t1;
  j.S.col(1).tail<3>() = j.t2;
  j.S.col(2).head<3>() = j.axis;
  return j;
}

Joint Joint::floating() {
  Joint j;
  j.type = JointType::Floating;
  j.nq = 7;
  j.nv = 6;
  j.S.setIdentity(6, 6);
  return j;
}

Joint Joint::fixed() {
  Joint j;
  j.type = JointType::Fixed;
  j.nq = j.nv = 0;
  j.S.resize(6, 0);
  return j;
}

Transform Joint::transform(const double* q) const {
  switch (type) {
    case JointType::Revolute:
      return Transform(Eigen::AngleAxisd(q[0], axis).toRotationMatrix(), Vec3::Zero());
    case JointType::Prismatic:
      return Transform(Mat3::Identity(), q[0] * axis);
    case JointType::Spherical: {
      const Eigen::Quaterniond quat(q[3], q[0], q[1], q[2]);
      return Transform(quat.normalized().toRotationMatrix(), Vec3::Zero());
    }
    case JointType::Planar:
      return Transform(Eigen::AngleAxisd(q[2], axis).toRotationMatrix(), q[0] * t1 + q[1] * t2);
    case JointType::Floating: {
      const Eigen::Quaterniond quat(q[6], q[3], q[4], q[5]);
      return Transform(quat.normalized().toRotationMatrix(), Vec3(q[0], q[1], q[2]));
    }
    case JointType::Fixed:
      break;
  }
  return Transform();
}

}  // namespace clusterdyn
