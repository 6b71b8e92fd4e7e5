// Integrate and difference on the independent positions y, joint by joint (the joints'
// exponential maps of joint_types.hpp, on the joints forEachIndependentJoint visits).
#include "clusterdyn/independent_configuration.hpp"

#include "cluster/independent_joints.hpp"
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

}  // namespace clusterdyn
