// Builds the kinematic-tree Model from a URDF description.
#pragma once

#include <string>

#include "clusterdyn/model.hpp"
#include "clusterdyn/urdf.hpp"

namespace clusterdyn {

struct ModelOptions {
  /// Attach the URDF root link to the world with a floating joint (nq 7, nv 6). Not needed (and
  /// rejected) when the URDF already has a type="floating" joint.
  bool floatingBase = false;
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
  /// Cut every URDF+ <loop> instead of embedding it (as if each had closure="cut"): the loops
  /// stay open in the cluster tree (ClusterModel::cutLoops) and cutLoopConstraints() returns
  /// them as a ConstraintSet for proxPv. Couplings and mimics are always embedded.
  bool cutLoops = false;
  /// Use the gravity the file gives (MJCF <option gravity>) instead of `gravity` (default true,
  /// as MuJoCo). Files without one (every URDF) always take `gravity`.
  bool fileGravity = true;
  /// Apply the joint dynamics the file gives (MJCF armature, springs, dampers; Model::armature,
  /// docs/mjcf.md §4) in the dynamics algorithms (default true, as MuJoCo). false: the model is
  /// the rigid-body system only (Model::hasJointDynamics() false).
  bool jointDynamics = true;
};

/// Spanning-tree model of the URDF: every URDF joint becomes a tree joint; URDF+ chords
/// (<loop>, <coupling>, <mimic>) are NOT applied here (see cluster_model.hpp for that) and a
/// warning is logged if the description has any. Throws ModelError on inconsistent input.
Model buildTreeModel(const UrdfDescription& urdf, const ModelOptions& options = {});

/// parseUrdfFile + buildTreeModel.
Model loadTreeModel(const std::string& path, const ModelOptions& options = {});

}  // namespace clusterdyn
