// Frame Jacobians from the body placements of the last forward kinematics.
#include "clusterdyn/jacobian.hpp"

#include "core/check.hpp"

namespace clusterdyn {

Status frameJacobian(const Model& model, Data& data, int frameId, ReferenceFrame rf,
                     Eigen::Ref<Mat6X> J) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  if (frameId < 0 || frameId >= static_cast<int>(model.frames.size()))
    return detail::fail(data, Status::InvalidIndex, "frame index %d out of range [0, %d)", frameId,
                        static_cast<int>(model.frames.size()));
  if (J.cols() != model.nv)
    return detail::fail(data, Status::InvalidSize, "J has %ld columns, expected %d",
                        static_cast<long>(J.cols()), model.nv);
  J.setZero();
  const Frame& f = model.frames[frameId];
  if (f.body < 0) return detail::ok(data);
  const Transform oMf = data.oMi[f.body] * f.placement;
  for (int j = f.body; j >= 0; j = model.parent[j]) {
    const int jv = model.idx_v[j];
    for (int c = 0; c < model.nvs[j]; ++c) {
      const Motion sWorld = data.oMi[j].actMotion(model.joints[j].S.col(c));  // world, origin
      Motion col = sWorld;
      switch (rf) {
        case ReferenceFrame::World:
          col = sWorld;
          break;
        case ReferenceFrame::Local:
          col = oMf.actInvMotion(sWorld);
          break;
        case ReferenceFrame::LocalWorldAligned:
          col.head<3>() = sWorld.head<3>();
          col.tail<3>() = sWorld.tail<3>() + sWorld.head<3>().cross(oMf.p);
          break;
      }
      J.col(jv + c) = col;
    }
  }
  if (!J.allFinite())
    return detail::fail(data, Status::NonFinite,
                        "frameJacobian: J overflowed (not finite): the body placements of the last "
                        "forward kinematics are out of range (input q too large)");
  return detail::ok(data);
}

Status computeFrameJacobian(const Model& model, Data& data, ConstVecRef q, int frameId,
                            ReferenceFrame rf, Eigen::Ref<Mat6X> J) {
  CDYN_TRY(forwardKinematics(model, data, q));
  return frameJacobian(model, data, frameId, rf, J);
}

}  // namespace clusterdyn
