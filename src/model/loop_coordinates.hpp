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
/// With onlyForUnmarkedMultiDof (the cluster builder's call, loop cut-ness known), when neither
/// choice gives a well-conditioned basis and an unmarked spherical joint's columns of K leave one
/// direction free (a rod's spin), the joint is replaced by three revolute joints
/// (expandBallIntoHinges, the spin hinge preferred independent) and the coordinates are chosen
/// again; kept only if that gives a well-conditioned basis (logged as a warning); the ball's
/// damping and stiffness go to urdf.ballHinges (carried by the hinges together). A ball with a
/// limit, or with armature while options.jointDynamics, is not replaced (three hinges cannot
/// carry them exactly): `rejected` says so.
bool chooseLoopCoordinates(UrdfDescription& urdf, const std::set<std::string>& preferred,
                           const ModelOptions& options, bool onlyForUnmarkedMultiDof,
                           std::string* rejected = nullptr);

/// Names the reader gives the parts of a spherical joint J replaced by three hinges: joints
/// "J:swing1", "J:swing2", "J:spin" and the massless links "J:swing1_link", "J:swing2_link".
struct BallHingeNames {
  std::string swing1, swing2, spin, link1, link2;
};
BallHingeNames ballHingeNames(const std::string& joint);

/// Replaces the spherical joint `joint` of `urdf` by three continuous revolute joints with
/// intersecting axes at its origin, through two massless links (ballHingeNames): swing1 about
/// b1 (with the ball's origin), swing2 about b2, spin about a = spinAxis normalized (the ball's
/// frame, on the child side), b1 the coordinate axis least aligned with a made orthogonal to
/// it, b2 = a x b1 (b1 x b2 = a). All angles 0 is the ball's identity: q_ball = exp(b1 t1)
/// exp(b2 t2) exp(a t3); the gimbal lock is at t2 = +-pi/2. Throws ModelError when `joint` is
/// not spherical or a new name is taken. The ball's damping and stiffness are appended to
/// urdf.ballHinges (the hinges' own stay 0); its armature and marks are not carried.
void expandBallIntoHinges(UrdfDescription& urdf, const std::string& joint, const Vec3& spinAxis);

}  // namespace clusterdyn::detail
