// The reader's choice of the independent coordinates of loops (loop_coordinates.cpp): the MJCF
// reader for every loop (MJCF has no marks), the cluster builder for URDF+ loop clusters that
// leave a multi-dof joint unmarked.
#pragma once

#include <set>
#include <string>

#include "clusterdyn/model_builder.hpp"
#include "clusterdyn/urdf.hpp"

namespace clusterdyn::detail {

/// Marks (independent / independentGiven) the joints the description leaves unmarked in its
/// embedded loops (not cut under `options`) and mimics: K of those constraints on the spanning
/// tree at q = 0; the marked joints keep their marks; the unmarked multi-dof joints K moves
/// dependent as a whole, unless that leaves a direction without a coordinate and making them
/// independent gives a well-conditioned basis; a greedy column basis over the unmarked 1-dof
/// joints completes the dependent set (`preferred`, e.g. actuated joints, last). With
/// onlyForUnmarkedMultiDof, does nothing when no unmarked multi-dof joint is in a loop or the
/// description has couplings (their relations are not in K). Returns
/// whether it marked any joint. `rejected` (optional): "" or, when making multi-dof joints
/// independent gave a basis too ill-conditioned to accept, a message fragment ("; ...") naming
/// them, the singular value ratio found and the threshold. docs/mjcf.md section 3.
bool chooseLoopCoordinates(UrdfDescription& urdf, const std::set<std::string>& preferred,
                           const ModelOptions& options, bool onlyForUnmarkedMultiDof,
                           std::string* rejected = nullptr);

}  // namespace clusterdyn::detail
