// Human-readable description of a model (bodies, joints, frames, dof counts).
#pragma once

#include <string>

#include "clusterdyn/model.hpp"

namespace clusterdyn {

/// Multi-line text: one line per body (index, link, joint type/name, parent, nq/nv, mass) and
/// the frames fused into bodies.
std::string describeModel(const Model& model);

}  // namespace clusterdyn
