// Composite-rigid-body algorithm: joint-space inertia matrix (Featherstone Table 6.2).
#pragma once

#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// Joint-space inertia matrix M(q), written to data.M (nv x nv, both triangles filled).
/// Also updates data.liMi (joint transforms) and data.Ycrb (composite inertias, body
/// coordinates); data.oMi is not updated (call forwardKinematics for world poses).
Status crba(const Model& model, Data& data, ConstVecRef q);

}  // namespace clusterdyn
