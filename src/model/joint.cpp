// Joint construction and transform; each type's code is in model/joint_types.hpp.
#include "clusterdyn/joint.hpp"

#include "model/joint_types.hpp"

namespace clusterdyn {

const char* jointTypeName(JointType t) {
  return detail::visitJointType(t, [](auto J) { return decltype(J)::name; });
}

bool jointTypeFromName(const std::string& name, JointType& type) {
  for (int k = 0; k < detail::kJointTypeCount; ++k)
    if (name == jointTypeName(static_cast<JointType>(k))) {
      type = static_cast<JointType>(k);
      return true;
    }
  return false;
}

Joint Joint::ofType(JointType type, const Vec3& axis) {
  return detail::visitJointType(type, [&](auto J) {
    using T = decltype(J);
    Joint j;
    j.type = T::type;
    j.nq = T::nq;
    j.nv = T::nv;
    j.S.setZero(6, T::nv);
    T::init(j, axis);
    return j;
  });
}

Joint Joint::revolute(const Vec3& axis) { return ofType(JointType::Revolute, axis); }
Joint Joint::prismatic(const Vec3& axis) { return ofType(JointType::Prismatic, axis); }
Joint Joint::spherical() { return ofType(JointType::Spherical); }
Joint Joint::planar(const Vec3& normal) { return ofType(JointType::Planar, normal); }
Joint Joint::floating() { return ofType(JointType::Floating); }
Joint Joint::fixed() { return ofType(JointType::Fixed); }

Transform Joint::transform(const double* q) const {
  return detail::visitJointType(type, [&](auto J) { return decltype(J)::transform(*this, q); });
}

}  // namespace clusterdyn
