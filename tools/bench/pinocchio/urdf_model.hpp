// URDF -> pinocchio::Model, header-only (tinyxml2 for the XML), for the Pinocchio bench. It
// replaces pinocchio::urdf::buildModel, whose tree walk lives in the pip package's compiled
// libpinocchio_parsers (built for generic x86-64): there Eigen's heap blocks come from plain
// malloc (16-byte default alignment), while a -march=native program (AVX-512: Eigen's default
// alignment 64, even with EIGEN_MAX_ALIGN_BYTES=16) frees them with its handmade aligned free,
// which reads the original pointer in front of the block: the model's dynamic vectors filled by
// the library crashed the native bench in free() (docs/benchmarks.md). Here every Pinocchio
// object is made and freed in the calling program.
//
// Semantics of Pinocchio 4.1's URDF parser (src/parsers/urdf/model.hxx of its headers, on top
// of urdfdom): the root link (the one that is no joint's child) is a BODY frame of the universe
// (no root joint); links are visited depth first, the children of a link in the order of their
// joints' names (urdfdom keeps the joints in a std::map); per joint type
//   revolute -> JointModelRX / RY / RZ when the axis is +x / +y / +z (isApprox), else
//               JointModelRevoluteUnaligned(axis normalised), limits lower / upper;
//   continuous -> JointModelRUBX / RUBY / RUBZ / RevoluteUnboundedUnaligned (q = cos, sin);
//   prismatic -> JointModelPX / PY / PZ / PrismaticUnaligned, limits lower / upper;
//   floating -> JointModelFreeFlyer; spherical -> JointModelSpherical;
//   planar -> JointModelPlanar (motion in the joint's x-y plane: only the axis +z is accepted);
//   fixed -> no joint: a FIXED_JOINT frame and the link's BODY frame on the parent's joint, its
//            inertia appended to that joint.
// The joint placement is the parent link's frame placement times the URDF origin; a link's
// inertia is Inertia(m, origin.xyz, R I R^T) with R from the inertial origin's rpy (through the
// quaternion, as urdfdom). Mimic tags are ignored (pinocchio::urdf::buildModel's default). Any
// other joint type, a missing attribute or a second root is an error (std::runtime_error naming
// the element).
#pragma once
#include <tinyxml2.h>

#include <cmath>
#include <limits>
#include <map>
#include <pinocchio/multibody.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace urdf_model {

inline std::runtime_error urdfError(const std::string& what) {
  return std::runtime_error("URDF: " + what);
}

/// Three numbers of attribute `name` of `e`, `fallback` when the attribute is absent.
inline Eigen::Vector3d vec3(const tinyxml2::XMLElement* e, const char* name,
                            const Eigen::Vector3d& fallback) {
  const char* s = e ? e->Attribute(name) : nullptr;
  if (!s) return fallback;
  std::istringstream in(s);
  Eigen::Vector3d v;
  if (!(in >> v[0] >> v[1] >> v[2]))
    throw urdfError(std::string("<") + e->Name() + " " + name + "=\"" + s + "\">: not 3 numbers");
  return v;
}

inline double number(const tinyxml2::XMLElement* e, const char* name, double fallback) {
  if (!e || !e->Attribute(name)) return fallback;
  double x = 0;
  if (e->QueryDoubleAttribute(name, &x) != tinyxml2::XML_SUCCESS || !std::isfinite(x))
    throw urdfError(std::string("<") + e->Name() + " " + name + ">: not a number");
  return x;
}

/// urdfdom's Rotation::setFromRPY (quaternion, normalised), as a rotation matrix.
inline Eigen::Matrix3d rpyMatrix(const Eigen::Vector3d& rpy) {
  const double phi = rpy[0] / 2, the = rpy[1] / 2, psi = rpy[2] / 2;
  Eigen::Quaterniond q(
      std::cos(phi) * std::cos(the) * std::cos(psi) + std::sin(phi) * std::sin(the) * std::sin(psi),
      std::sin(phi) * std::cos(the) * std::cos(psi) - std::cos(phi) * std::sin(the) * std::sin(psi),
      std::cos(phi) * std::sin(the) * std::cos(psi) + std::sin(phi) * std::cos(the) * std::sin(psi),
      std::cos(phi) * std::cos(the) * std::sin(psi) -
          std::sin(phi) * std::sin(the) * std::cos(psi));
  q.normalize();
  return q.matrix();
}

/// The <origin> child of e as an SE3 (identity when absent).
inline pinocchio::SE3 origin(const tinyxml2::XMLElement* e) {
  const tinyxml2::XMLElement* o = e->FirstChildElement("origin");
  return pinocchio::SE3(rpyMatrix(vec3(o, "rpy", Eigen::Vector3d::Zero())),
                        vec3(o, "xyz", Eigen::Vector3d::Zero()));
}

/// The link's inertia about its frame origin (zero without <inertial>).
inline pinocchio::Inertia linkInertia(const tinyxml2::XMLElement* link) {
  const tinyxml2::XMLElement* in = link->FirstChildElement("inertial");
  if (!in) return pinocchio::Inertia::Zero();
  const pinocchio::SE3 o = origin(in);
  const tinyxml2::XMLElement* m = in->FirstChildElement("mass");
  const tinyxml2::XMLElement* i = in->FirstChildElement("inertia");
  if (!m || !i)
    throw urdfError("link '" + std::string(link->Attribute("name")) +
                    "': <inertial> needs <mass> and <inertia>");
  Eigen::Matrix3d I;
  const double ixx = number(i, "ixx", 0), ixy = number(i, "ixy", 0), ixz = number(i, "ixz", 0),
               iyy = number(i, "iyy", 0), iyz = number(i, "iyz", 0), izz = number(i, "izz", 0);
  I << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
  return pinocchio::Inertia(number(m, "value", 0), o.translation(),
                            o.rotation() * I * o.rotation().transpose());
}

struct Joint {
  const tinyxml2::XMLElement* xml;
  std::string name, type, parent, child;
};

/// Adds the joint of type J (X / Y / Z / unaligned chosen from the axis) to model.
template <class JX, class JY, class JZ, class JU>
pinocchio::JointIndex addAxisJoint(pinocchio::Model& model, const pinocchio::Frame& parent,
                                   const pinocchio::SE3& placement, const Joint& j, bool limited) {
  Eigen::Vector3d axis = vec3(j.xml->FirstChildElement("axis"), "xyz", Eigen::Vector3d::UnitX());
  if (!(axis.norm() > 0)) throw urdfError("joint '" + j.name + "': zero axis");
  const pinocchio::SE3 M = parent.placement * placement;
  const double inf = std::numeric_limits<double>::infinity();
  const tinyxml2::XMLElement* lim = j.xml->FirstChildElement("limit");
  Eigen::VectorXd effort(1), velocity(1), lower(1), upper(1);
  effort << number(lim, "effort", inf);
  velocity << number(lim, "velocity", inf);
  lower << (limited ? number(lim, "lower", -inf) : -inf);
  upper << (limited ? number(lim, "upper", inf) : inf);
  auto add = [&](const auto& jm, int n) {
    if (n == 1)
      return model.addJoint(parent.parentJoint, jm, M, j.name, effort, velocity, lower, upper);
    return model.addJoint(parent.parentJoint, jm, M, j.name);  // 2 coordinates (cos, sin)
  };
  const int n = limited ? 1 : 2;
  if (axis.isApprox(Eigen::Vector3d::UnitX())) return add(JX(), n);
  if (axis.isApprox(Eigen::Vector3d::UnitY())) return add(JY(), n);
  if (axis.isApprox(Eigen::Vector3d::UnitZ())) return add(JZ(), n);
  return add(JU(axis.normalized()), n);
}

/// Reads the URDF file at path into a fresh pinocchio::Model (see the file comment).
inline pinocchio::Model buildModel(const std::string& path) {
  tinyxml2::XMLDocument doc;
  if (doc.LoadFile(path.c_str()) != tinyxml2::XML_SUCCESS)
    throw urdfError("cannot read '" + path + "': " + doc.ErrorStr());
  const tinyxml2::XMLElement* robot = doc.FirstChildElement("robot");
  if (!robot) throw urdfError("no <robot> in '" + path + "'");
  std::map<std::string, const tinyxml2::XMLElement*> links;
  for (auto* l = robot->FirstChildElement("link"); l; l = l->NextSiblingElement("link")) {
    const char* name = l->Attribute("name");
    if (!name) throw urdfError("<link> without a name");
    if (!links.emplace(name, l).second)
      throw urdfError("two links named '" + std::string(name) + "'");
  }
  std::map<std::string, Joint> joints;  // by name: urdfdom's order of the children
  std::map<std::string, std::string> parentOf;
  for (auto* e = robot->FirstChildElement("joint"); e; e = e->NextSiblingElement("joint")) {
    Joint j;
    j.xml = e;
    const char* name = e->Attribute("name");
    const char* type = e->Attribute("type");
    const auto* p = e->FirstChildElement("parent");
    const auto* c = e->FirstChildElement("child");
    if (!name || !type || !p || !c || !p->Attribute("link") || !c->Attribute("link"))
      throw urdfError("<joint> needs name, type, <parent link> and <child link>");
    j.name = name, j.type = type, j.parent = p->Attribute("link"), j.child = c->Attribute("link");
    if (!links.count(j.parent) || !links.count(j.child))
      throw urdfError("joint '" + j.name + "' names an unknown link");
    if (!parentOf.emplace(j.child, j.name).second)
      throw urdfError("link '" + j.child + "' is the child of two joints");
    if (!joints.emplace(j.name, j).second) throw urdfError("two joints named '" + j.name + "'");
  }
  std::string root;
  for (const auto& [name, l] : links)
    if (!parentOf.count(name)) {
      if (!root.empty()) throw urdfError("two root links: '" + root + "' and '" + name + "'");
      root = name;
    }
  if (root.empty()) throw urdfError("no root link (a loop of joints)");
  std::map<std::string, std::vector<const Joint*>> children;
  for (const auto& [name, j] : joints) children[j.parent].push_back(&j);

  pinocchio::Model model;
  if (const char* n = robot->Attribute("name")) model.name = n;
  model.addFrame(pinocchio::Frame(root, 0, 0, pinocchio::SE3::Identity(), pinocchio::BODY,
                                  linkInertia(links.at(root))));
  // Depth first from the root, children in joint-name order.
  std::vector<const Joint*> stack;
  auto push = [&](const std::string& link) {
    const auto& cs = children[link];
    for (auto it = cs.rbegin(); it != cs.rend(); ++it) stack.push_back(*it);
  };
  push(root);
  while (!stack.empty()) {
    const Joint& j = *stack.back();
    stack.pop_back();
    const pinocchio::FrameIndex parentFrame = model.getFrameId(j.parent, pinocchio::BODY);
    const pinocchio::Frame parent = model.frames[parentFrame];
    const pinocchio::SE3 placement = origin(j.xml);
    const pinocchio::Inertia Y = linkInertia(links.at(j.child));
    if (j.type == "fixed") {
      const pinocchio::SE3 M = parent.placement * placement;
      const pinocchio::FrameIndex f = model.addFrame(
          pinocchio::Frame(j.name, parent.parentJoint, parentFrame, M, pinocchio::FIXED_JOINT, Y));
      model.addBodyFrame(j.child, parent.parentJoint, M, static_cast<int>(f));
      push(j.child);
      continue;
    }
    pinocchio::JointIndex id = 0;
    const pinocchio::SE3 M = parent.placement * placement;
    if (j.type == "revolute") {
      id = addAxisJoint<pinocchio::JointModelRX, pinocchio::JointModelRY, pinocchio::JointModelRZ,
                        pinocchio::JointModelRevoluteUnaligned>(model, parent, placement, j, true);
    } else if (j.type == "continuous") {
      id = addAxisJoint<pinocchio::JointModelRUBX, pinocchio::JointModelRUBY,
                        pinocchio::JointModelRUBZ, pinocchio::JointModelRevoluteUnboundedUnaligned>(
          model, parent, placement, j, false);
    } else if (j.type == "prismatic") {
      id = addAxisJoint<pinocchio::JointModelPX, pinocchio::JointModelPY, pinocchio::JointModelPZ,
                        pinocchio::JointModelPrismaticUnaligned>(model, parent, placement, j, true);
    } else if (j.type == "floating") {
      id = model.addJoint(parent.parentJoint, pinocchio::JointModelFreeFlyer(), M, j.name);
    } else if (j.type == "spherical") {
      id = model.addJoint(parent.parentJoint, pinocchio::JointModelSpherical(), M, j.name);
    } else if (j.type == "planar") {
      const Eigen::Vector3d axis =
          vec3(j.xml->FirstChildElement("axis"), "xyz", Eigen::Vector3d::UnitZ());
      if (!axis.isApprox(Eigen::Vector3d::UnitZ()))
        throw urdfError("planar joint '" + j.name + "': only the axis 0 0 1 (Pinocchio's plane)");
      id = model.addJoint(parent.parentJoint, pinocchio::JointModelPlanar(), M, j.name);
    } else {
      throw urdfError("joint '" + j.name + "': type '" + j.type + "' is not supported here");
    }
    const pinocchio::FrameIndex jf = model.addJointFrame(id, static_cast<int>(parentFrame));
    if (!Y.isZero(0.0)) model.appendBodyToJoint(id, Y, pinocchio::SE3::Identity());
    model.addBodyFrame(j.child, id, pinocchio::SE3::Identity(), static_cast<int>(jf));
    push(j.child);
  }
  return model;
}

}  // namespace urdf_model
