// MuJoCo MJCF reader: parses an MJCF file into the same UrdfDescription the URDF+ reader
// produces (bodies -> links, joints -> tree joints, <equality> connect/weld -> <loop>, joint ->
// <mimic>), so buildTreeModel / buildClusterModel / cutLoopConstraints apply unchanged. The
// passive joint parameters MJCF carries (stiffness, springref, damping, armature) come back
// beside it. Supported elements and the mapping: docs/mjcf.md. Every error is a ModelError
// "file:line: <element name=...>: message".
#pragma once

#include <string>
#include <vector>

#include "clusterdyn/kinematics.hpp"
#include "clusterdyn/model.hpp"
#include "clusterdyn/status.hpp"
#include "clusterdyn/urdf.hpp"

namespace clusterdyn {

/// Passive parameters of one MJCF joint (SI units, angles in radians; springPosition is in
/// clusterdyn coordinates, i.e. MuJoCo's springref - ref for hinge and slide joints).
struct MjcfJointDynamics {
  std::string joint;  ///< tree joint name (as in UrdfDescription::joints)
  double stiffness = 0.0;
  double springPosition = 0.0;  ///< hinge/slide only; ball/free springs rest at q = neutral
  double damping = 0.0;
  double armature = 0.0;
  int line = 0;
};

struct MjcfDescription {
  UrdfDescription urdf;
  std::vector<MjcfJointDynamics> jointDynamics;  ///< one per MJCF joint with nonzero entries
  bool gravityGiven = false;                     ///< <option gravity> present
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);          ///< <option gravity> (world, m/s^2)
  /// What the reader ignored or approximated, one entry per kind of element / attribute:
  /// "file:line: <tag>: message" (" (N occurrences)" when repeated). The same lines are logged
  /// as warnings on the "clusterdyn" logger while parsing (logging.hpp).
  std::vector<std::string> warnings;
};

/// <include file> and <asset><mesh file> names are resolved as MuJoCo does: relative to the
/// directory of `path` (an included file's name: else relative to the including file's
/// directory); meshes through <compiler meshdir / assetdir / strippath>.
MjcfDescription parseMjcfFile(const std::string& path);
/// The same from text. A string opens files only when given the directory its relative file
/// names start from (baseDirectory, as the directory of `path` above; absolute names are read
/// as they are): without one (""), an <include file> or <mesh file> is a ModelError naming the
/// element, so text from an untrusted source (a fuzzer, a network) never reads local files.
MjcfDescription parseMjcfString(const std::string& xml, const std::string& sourceName = "<string>",
                                const std::string& baseDirectory = "");

/// True for a file named *.mjcf (any case) or whose root element is <mujoco> (so a URDF named
/// *.xml stays URDF); an unreadable or malformed *.xml counts as MJCF (its reader reports it).
bool isMjcfFile(const std::string& path);

/// The description of a URDF(+) or MJCF file / text: MJCF when isMjcfFile(path) (text: when
/// the root element is <mujoco>), else URDF. The MJCF joint dynamics (armature, springs,
/// dampers) and <option gravity> travel in the UrdfJoint / UrdfDescription fields, which the
/// builders apply (ModelOptions::jointDynamics, fileGravity). loadModel and the C load functions
/// read files through these. parseModelString opens files only with a baseDirectory (MJCF
/// <include> / <mesh file>: ModelError without one, see parseMjcfString; URDF text ignores it).
/// warnings (optional): receives MjcfDescription::warnings of an MJCF model (cleared first;
/// URDF files give none here: the URDF reader's warnings go to the log only).
UrdfDescription parseModelFile(const std::string& path,
                               std::vector<std::string>* warnings = nullptr);
UrdfDescription parseModelString(const std::string& xml, const std::string& sourceName = "<string>",
                                 std::vector<std::string>* warnings = nullptr,
                                 const std::string& baseDirectory = "");

/// Passive joint parameters of a model built from an MJCF description, per coordinate of
/// `model` (any Model built from that description: the tree of buildTreeModel or a
/// ClusterModel's treeModel, whose numbering differs). Joints are matched by name. A ball joint
/// the cluster builder replaced by three hinges (Model::ballHinges) keeps zeros here: its
/// coupled damper and spring are the model's, which passiveForces adds; a model built without
/// its joint dynamics has no Model::ballHinges, and such a ball is then a ModelError naming it.
struct PassiveJointModel {
  VecX stiffness;       ///< nv: spring stiffness per velocity coordinate (N m/rad, N/m)
  VecX springPosition;  ///< nq: spring rest configuration (a configuration of `model`)
  VecX damping;         ///< nv: viscous damping (N m s/rad, N s/m)
  VecX armature;        ///< nv: rotor inertia MuJoCo adds to the mass-matrix diagonal
};
PassiveJointModel passiveJointModel(const Model& model, const MjcfDescription& mjcf);

/// MuJoCo's joint spring-damper forces (qfrc_passive without tendons, fluid or gravity
/// compensation): tau = -K (q (-) q_spring) - D v, per joint in `model`'s velocity
/// coordinates; for a ball or free joint the rotational spring is -k log(q_spring^-1 q) in the
/// child frame (MuJoCo's mju_subQuat) and the free joint's translational spring acts on the
/// world position; plus J^T tau_ball of the balls replaced by hinges (Model::ballHinges). Not
/// included: the velocity product a (w x v) of a free joint's armature (Model::finalize), which
/// is part of MuJoCo's M qacc, not of qfrc_passive (the algorithms apply it with the model's
/// own armature). tau must have size nv. InvalidSize / NonFinite otherwise. No allocation.
Status passiveForces(const Model& model, const PassiveJointModel& passive, ConstVecRef q,
                     ConstVecRef v, Eigen::Ref<VecX> tau);

}  // namespace clusterdyn
