// Integrate and difference on the independent positions y, joint by joint (the joints'
// exponential maps of joint_types.hpp, on the joints forEachIndependentJoint visits).
#include "clusterdyn/independent_configuration.hpp"

#include <cmath>

#include "cluster/independent_joints.hpp"
#include "core/check.hpp"
#include "model/joint_types.hpp"

namespace clusterdyn {

Status integrateIndependent(const ClusterModel& cm, ConstVecRef y, ConstVecRef ydot, double dt,
                            Eigen::Ref<VecX> out) {
  if (y.size() != cm.nyq || out.size() != cm.nyq || ydot.size() != cm.ny)
    return Status::InvalidSize;
  // Each joint reads its own entries of y before writing them: out may alias y.
  if (out.data() != y.data()) out = y;
  for (const Cluster& c : cm.clusters)
    detail::forEachIndependentJoint(cm, c, [&](int b, int yq, int yv, int) {
      const Joint& joint = cm.treeModel.joints[b];
      detail::visitJointType(joint.type, [&](auto J) {
        decltype(J)::integrate(joint, y.data() + yq, ydot.data() + yv, dt, out.data() + yq);
      });
    });
  return Status::Ok;
}

Status differenceIndependent(const ClusterModel& cm, ConstVecRef y0, ConstVecRef y1,
                             Eigen::Ref<VecX> out) {
  if (y0.size() != cm.nyq || y1.size() != cm.nyq || out.size() != cm.ny) return Status::InvalidSize;
  for (const Cluster& c : cm.clusters)
    detail::forEachIndependentJoint(cm, c, [&](int b, int yq, int yv, int) {
      const Joint& joint = cm.treeModel.joints[b];
      detail::visitJointType(joint.type, [&](auto J) {
        decltype(J)::difference(joint, y0.data() + yq, y1.data() + yq, out.data() + yv);
      });
    });
  return Status::Ok;
}

Status validateIndependentConfiguration(const ClusterModel& cm, Data& data, ConstVecRef y,
                                        const char* what) {
  CDYN_TRY(detail::checkVector(data, y, cm.nyq, what));
  Status s = Status::Ok;
  for (const Cluster& c : cm.clusters)
    detail::forEachIndependentJoint(cm, c, [&](int b, int yq, int, int) {
      const int o = detail::quaternionOffset(cm.treeModel.joints[b].type);
      if (o < 0 || s != Status::Ok) return;
      const double n = y.segment<4>(yq + o).norm();
      if (std::abs(n - 1.0) > detail::kQuaternionNormTolerance)
        s = detail::fail(data, Status::NotUnitQuaternion,
                         "quaternion of joint '%s' (%s[%d..%d]) has norm %.17g, expected 1",
                         cm.treeModel.jointNames[b].c_str(), what, yq + o, yq + o + 3, n);
    });
  return s;
}

}  // namespace clusterdyn
