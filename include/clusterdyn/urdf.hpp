// URDF / URDF+ reader: parses the XML into a plain description; building the dynamics model
// from it is model_builder.hpp's job. Every error is a ModelError whose message names the
// source file, the line, the element and the attribute concerned.
#pragma once

#include <string>
#include <vector>

#include "clusterdyn/inertia.hpp"
#include "clusterdyn/joint.hpp"
#include "clusterdyn/status.hpp"

namespace clusterdyn {

struct UrdfInertial {
  bool present = false;
  double mass = 0.0;
  Transform origin;             ///< pose of the inertial frame in the link frame
  Mat3 inertia = Mat3::Zero();  ///< about the centre of mass, inertial-frame axes
};

struct UrdfLink {
  std::string name;
  int line = 0;
  UrdfInertial inertial;
};

struct UrdfMimic {
  bool present = false;
  std::string joint;
  double multiplier = 1.0;
  double offset = 0.0;
  int line = 0;
};

struct UrdfJoint {
  std::string name;
  /// type="revolute|continuous|prismatic|fixed|floating|planar|spherical"; continuous is a
  /// Revolute joint with `continuous` set (its <limit> bounds are ignored).
  JointType type = JointType::Fixed;
  bool continuous = false;
  std::string parent, child;
  Transform origin;  ///< pose of the joint (child link) frame in the parent link frame
  Vec3 axis = Vec3::UnitX();
  bool hasLimit = false;
  double lower = 0.0, upper = 0.0, effort = 0.0, velocity = 0.0;
  bool independent = true;  ///< URDF+ independent="true|false" (default true)
  bool independentGiven = false;
  UrdfMimic mimic;
  /// MJCF joint dynamics (set by the MJCF reader only; URDF <dynamics> is not read): armature,
  /// spring stiffness and rest position (clusterdyn coordinates; 1-dof joints), damping.
  double armature = 0.0, stiffness = 0.0, springPosition = 0.0, damping = 0.0;
  int line = 0;
};

/// URDF+ <coupling>: ratio * (sum of joint velocities on the path C->predecessor) =
/// (sum on the path C->successor), C the nearest common ancestor. Several <predecessor>
/// elements, each with its own ratio, express a differential (see docs/urdfplus.md).
struct UrdfCouplingTerm {
  std::string link;
  double ratio = 1.0;
};
struct UrdfCoupling {
  std::string name;
  std::string type;  ///< optional type attribute (e.g. "rolling"); informational
  std::vector<UrdfCouplingTerm> predecessors;
  std::string successor;
  int line = 0;
};

/// URDF+ <loop>: an implicit cut joint of the given type between a frame on the predecessor
/// link and a frame on the successor link.
struct UrdfLoop {
  std::string name;
  /// type="revolute|continuous|prismatic|planar|spherical|fixed" (continuous = Revolute).
  JointType type = JointType::Fixed;
  std::string predecessor, successor;
  Transform predecessorOrigin, successorOrigin;
  Vec3 axis = Vec3::UnitX();
  /// URDF+ closure="embed|cut" (clusterdyn extension, default embed): a cut loop stays open in
  /// the cluster tree and is returned by cutLoopConstraints() for the proximal solvers.
  bool cut = false;
  int line = 0;
};

/// A spherical joint the cluster builder replaced by three revolute joints (docs/mjcf.md
/// section 3) and its MJCF damping and stiffness, which the hinges carry together
/// (Model::ballHinges, when the builder applies the joint dynamics).
struct UrdfBallHinges {
  std::string ball;                  ///< the replaced joint
  std::string swing1, swing2, spin;  ///< the hinges (joints of UrdfDescription::joints)
  double damping = 0.0, stiffness = 0.0;
  int line = 0;
};

struct UrdfDescription {
  std::string source;  ///< file path or "<string>"
  std::string robotName;
  std::vector<UrdfLink> links;
  std::vector<UrdfJoint> joints;
  std::vector<UrdfCoupling> couplings;
  std::vector<UrdfLoop> loops;
  /// Ball joints replaced by hinges (set by the cluster builder, never by the readers).
  std::vector<UrdfBallHinges> ballHinges;
  /// Gravity given by the file (MJCF <option gravity>; URDF has none). The builders use it
  /// unless ModelOptions::fileGravity is false.
  bool gravityGiven = false;
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
  /// Location "file:line" of an element, for error messages of later stages.
  std::string where(int line) const { return source + ":" + std::to_string(line); }
};

UrdfDescription parseUrdfFile(const std::string& path);
UrdfDescription parseUrdfString(const std::string& xml, const std::string& sourceName = "<string>");

}  // namespace clusterdyn
