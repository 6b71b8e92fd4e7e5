// Forward kinematics on the spanning tree.
#pragma once

#include "clusterdyn/data.hpp"

namespace clusterdyn {

using ConstVecRef = const Eigen::Ref<const VecX>&;

/// Body placements data.liMi, data.oMi from q (size nq).
Status forwardKinematics(const Model& model, Data& data, ConstVecRef q);
/// ... and body spatial velocities data.v (body coordinates) from v (size nv).
Status forwardKinematics(const Model& model, Data& data, ConstVecRef q, ConstVecRef v);
/// ... and body spatial accelerations data.a (body coordinates, gravity NOT included) from
/// the generalized accelerations a (size nv).
Status forwardKinematics(const Model& model, Data& data, ConstVecRef q, ConstVecRef v,
                         ConstVecRef a);

/// In which coordinates a frame quantity is expressed.
enum class ReferenceFrame {
  Local,              ///< frame axes, about the frame origin
  World,              ///< world axes, about the world origin (spatial / Plücker world form)
  LocalWorldAligned,  ///< world axes, about the frame origin
};

/// Pose of frame frameId in the world (after forwardKinematics).
Transform framePlacement(const Model& model, const Data& data, int frameId);
/// Spatial velocity of a frame (after forwardKinematics with v).
Motion frameVelocity(const Model& model, const Data& data, int frameId, ReferenceFrame rf);
/// Spatial acceleration of a frame (after forwardKinematics with v and a).
Motion frameAcceleration(const Model& model, const Data& data, int frameId, ReferenceFrame rf);
/// Classical linear acceleration of the frame origin (d/dt of its linear velocity),
/// in the axes selected by rf (Local or LocalWorldAligned; World is treated as LocalWorldAligned).
Vec3 frameClassicalAcceleration(const Model& model, const Data& data, int frameId,
                                ReferenceFrame rf);

}  // namespace clusterdyn
