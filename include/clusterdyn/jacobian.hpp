// Frame Jacobians: J v = spatial velocity of a frame.
#pragma once

#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// Jacobian (6 x nv, rows [angular; linear]) of frame frameId at the placements computed by the
/// last forwardKinematics(q); J must be 6 x nv. Columns of joints not supporting the frame are 0.
Status frameJacobian(const Model& model, Data& data, int frameId, ReferenceFrame rf,
                     Eigen::Ref<Mat6X> J);

/// forwardKinematics(q) followed by frameJacobian().
Status computeFrameJacobian(const Model& model, Data& data, ConstVecRef q, int frameId,
                            ReferenceFrame rf, Eigen::Ref<Mat6X> J);

}  // namespace clusterdyn
