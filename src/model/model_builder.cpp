// Spanning-tree model from a URDF description: regular numbering (depth first, joints in file
// order), fixed joints fused into their parent body, optional floating base.
#include "clusterdyn/model_builder.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "clusterdyn/aba.hpp"
#include "clusterdyn/configuration.hpp"
#include "clusterdyn/data.hpp"
#include "core/log.hpp"
#include "model/joint_types.hpp"
#include "model/model_builder_detail.hpp"

namespace clusterdyn {
namespace {

SpatialInertia linkInertia(const UrdfLink& l) {
  if (!l.inertial.present) return SpatialInertia();
  const Mat3& R = l.inertial.origin.R;
  return SpatialInertia::fromMassComInertia(l.inertial.mass, l.inertial.origin.p,
                                            R * l.inertial.inertia * R.transpose());
}

}  // namespace

Model detail::buildSpanningTree(const UrdfDescription& urdf, const ModelOptions& options) {
  const int nlinks = static_cast<int>(urdf.links.size());
  std::map<std::string, int> linkIndex;
  for (int i = 0; i < nlinks; ++i) linkIndex[urdf.links[i].name] = i;

  // Joint that has each link as child; children joints per link in file order.
  std::vector<int> parentJoint(nlinks, -1);
  std::vector<std::vector<int>> childJoints(nlinks);
  for (int k = 0; k < static_cast<int>(urdf.joints.size()); ++k) {
    const UrdfJoint& j = urdf.joints[k];
    const int c = linkIndex.at(j.child), p = linkIndex.at(j.parent);
    parentJoint[c] = k;
    childJoints[p].push_back(k);
  }
  std::vector<int> roots;
  for (int i = 0; i < nlinks; ++i)
    if (parentJoint[i] < 0) roots.push_back(i);
  if (roots.empty()) {
    // Walk up parent joints from the first link until a link repeats: that joint closes a cycle.
    std::vector<char> seen(nlinks, 0);
    int link = 0;
    while (!seen[link]) {
      seen[link] = 1;
      link = linkIndex.at(urdf.joints[parentJoint[link]].parent);
    }
    const UrdfJoint& j = urdf.joints[parentJoint[link]];
    throw ModelError(urdf.where(j.line) + ": <joint name=\"" + j.name +
                     "\">: the joints form a cycle through link '" + j.child +
                     "' (every link has a parent joint, so there is no root link)");
  }
  if (roots.size() > 1) {
    std::string names;
    for (int r : roots) names += (names.empty() ? "'" : ", '") + urdf.links[r].name + "'";
    throw ModelError(urdf.where(urdf.links[roots[1]].line) + ": <link name=\"" +
                     urdf.links[roots[1]].name + "\">: the URDF has several root links (" + names +
                     "); every link except one must be the child of a joint");
  }
  const int root = roots[0];

  Model model;
  model.name = urdf.robotName;
  model.gravity = options.fileGravity && urdf.gravityGiven ? urdf.gravity : options.gravity;
  model.rootLink = urdf.links[root].name;
  std::vector<double> lower, upper, vel, eff;
  std::vector<double> arm, damp, stiff, spring;  // joint dynamics (MJCF), per v / per q
  bool anyArmature = false, anyPassive = false;
  const double inf = std::numeric_limits<double>::infinity();

  // Which body each link belongs to and its placement in that body's frame.
  std::vector<int> linkBody(nlinks, -2);
  std::vector<Transform> linkPlacement(nlinks);

  auto addBody = [&](const std::string& link, const std::string& jointName, const Joint& joint,
                     int parent, const Transform& placement) {
    model.parent.push_back(parent);
    model.joints.push_back(joint);
    model.jointPlacement.push_back(placement);
    model.inertias.push_back(SpatialInertia());
    model.bodyNames.push_back(link);
    model.jointNames.push_back(jointName);
    return static_cast<int>(model.parent.size()) - 1;
  };
  auto pushLimits = [&](const Joint& joint, const UrdfJoint* uj) {
    const bool limited = uj && uj->hasLimit && !uj->continuous;
    for (int k = 0; k < joint.nq; ++k) {
      const bool scalar = joint.nq == 1;
      lower.push_back(limited && scalar ? uj->lower : -inf);
      upper.push_back(limited && scalar ? uj->upper : inf);
    }
    for (int k = 0; k < joint.nv; ++k) {
      const bool scalar = joint.nv == 1 && uj && uj->hasLimit;
      vel.push_back(scalar && uj->velocity > 0 ? uj->velocity : inf);
      eff.push_back(scalar && uj->effort > 0 ? uj->effort : inf);
      arm.push_back(uj ? uj->armature : 0.0);
      damp.push_back(uj ? uj->damping : 0.0);
      stiff.push_back(uj ? uj->stiffness : 0.0);
    }
    // spring rest position: springPosition for 1-dof joints, the joint's neutral q otherwise
    VecX q0(joint.nq);
    detail::neutralJointConfiguration(joint, q0.data());
    if (joint.nq == 1 && uj) q0[0] = uj->springPosition;
    spring.insert(spring.end(), q0.data(), q0.data() + q0.size());
    if (uj && uj->armature != 0.0) anyArmature = true;
    if (uj && (uj->damping != 0.0 || uj->stiffness != 0.0)) anyPassive = true;
  };

  if (options.floatingBase) {
    for (const auto& j : urdf.joints)
      if (j.type == JointType::Floating)
        throw ModelError(urdf.where(j.line) + ": <joint name=\"" + j.name +
                         "\">: the URDF already has a floating joint; do not also request a "
                         "floating base");
    const Joint fj = Joint::floating();
    linkBody[root] = addBody(urdf.links[root].name, "root_joint", fj, -1, Transform());
    pushLimits(fj, nullptr);
  } else {
    linkBody[root] = -1;  // the root link is the fixed world
  }

  // Depth-first traversal in file order gives regular numbering. An explicit stack of (link,
  // next child joint) instead of recursion: a chain of 10^5 links must not exhaust the
  // thread's stack.
  std::vector<std::pair<int, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    const int link = stack.back().first;
    const size_t next = stack.back().second;
    if (next == childJoints[link].size()) {
      stack.pop_back();
      continue;
    }
    ++stack.back().second;
    const UrdfJoint& j = urdf.joints[childJoints[link][next]];
    const int c = linkIndex.at(j.child);
    if (linkBody[c] != -2)
      throw ModelError(urdf.where(j.line) + ": <joint name=\"" + j.name +
                       "\">: the joints form a cycle through link '" + j.child + "'");
    const Transform placement = linkPlacement[link] * j.origin;
    if (j.type == JointType::Fixed) {
      linkBody[c] = linkBody[link];
      linkPlacement[c] = placement;
    } else {
      const Joint joint = Joint::ofType(j.type, j.axis);
      if (joint.type == JointType::Floating && linkBody[link] != -1)
        throw ModelError(urdf.where(j.line) + ": <joint name=\"" + j.name +
                         "\">: a floating joint must connect the root link to its child");
      linkBody[c] = addBody(j.child, j.name, joint, linkBody[link], placement);
      linkPlacement[c] = Transform();
      pushLimits(joint, &j);
    }
    stack.emplace_back(c, 0);
  }
  for (int i = 0; i < nlinks; ++i)
    if (linkBody[i] == -2)
      throw ModelError(urdf.where(urdf.links[i].line) + ": <link name=\"" + urdf.links[i].name +
                       "\">: link is not connected to the root link '" + urdf.links[root].name +
                       "' (the joints form a cycle or a separate tree)");

  // Inertias (fused links combined) and frames.
  for (int i = 0; i < nlinks; ++i) {
    const UrdfLink& l = urdf.links[i];
    const int b = linkBody[i];
    if (b >= 0) {
      // A link without <inertial> adds nothing (transforming its zero inertia by a huge but
      // finite fixed-joint offset would give 0 * Inf = NaN).
      if (l.inertial.present) {
        const SpatialInertia fused = linkInertia(l).transformedBy(linkPlacement[i]);
        if (!(std::isfinite(fused.mass) && fused.h.allFinite() && fused.Io.allFinite()))
          throw ModelError(urdf.where(l.line) + ": <link name=\"" + l.name +
                           "\">: its inertia, moved to the frame of body '" + model.bodyNames[b] +
                           "' through fixed joints, is not finite (origin offsets too large)");
        model.inertias[b] = model.inertias[b] + fused;
      }
    } else if (l.inertial.present && l.inertial.mass > 0.0) {
      log::debug("{}: link '{}' is fixed to the world; its inertia has no effect", urdf.source,
                 l.name);
    }
    Frame f;
    f.name = l.name;
    f.body = b;
    f.placement = linkPlacement[i];
    f.isBody = b >= 0 && model.bodyNames[b] == l.name;
    model.frames.push_back(f);
  }

  model.lowerPositionLimit = Eigen::Map<VecX>(lower.data(), lower.size());
  model.upperPositionLimit = Eigen::Map<VecX>(upper.data(), upper.size());
  model.velocityLimit = Eigen::Map<VecX>(vel.data(), vel.size());
  model.effortLimit = Eigen::Map<VecX>(eff.data(), eff.size());
  // A ball joint the cluster builder replaced by three hinges: its damper and spring act on the
  // hinges together (Model::ballHinges; indices and axes set by finalize()).
  for (const UrdfBallHinges& h : urdf.ballHinges) {
    if (!options.jointDynamics || (h.damping == 0.0 && h.stiffness == 0.0)) continue;
    BallHingeGroup g;
    g.ball = h.ball;
    g.joints = {h.swing1, h.swing2, h.spin};
    g.damping = h.damping;
    g.stiffness = h.stiffness;  // about the ball's rest rotation (MJCF: qpos0, the identity)
    model.ballHinges.push_back(g);
    anyPassive = true;
  }
  if (options.jointDynamics && anyArmature)
    model.armature = Eigen::Map<VecX>(arm.data(), arm.size());
  if (options.jointDynamics && anyPassive) {
    model.damping = Eigen::Map<VecX>(damp.data(), damp.size());
    model.stiffness = Eigen::Map<VecX>(stiff.data(), stiff.size());
    model.springPosition = Eigen::Map<VecX>(spring.data(), spring.size());
  }
  model.finalize();
  return model;
}

int detail::masslessFloatingRoot(const Model& model) {
  for (int b = 0; b < model.nbodies; ++b) {
    const SpatialInertia& I = model.inertias[b];
    if (model.parent[b] < 0 && model.joints[b].type == JointType::Floating && I.mass == 0.0 &&
        I.h.isZero(0.0) && I.Io.isZero(0.0))
      return b;
  }
  return -1;
}

void detail::warnSingularFloatingRoot(const UrdfDescription& urdf, const Model& model, int b,
                                      const char* why) {
  int line = 0;
  for (const UrdfLink& l : urdf.links)
    if (l.name == model.bodyNames[b]) line = l.line;
  log::warn(
      "{}: link '{}' is a floating base without mass or inertia (nor have the links welded "
      "to it), and the joints below it can undo a motion of the base: the mass matrix is "
      "singular ({}), the dynamics return NotPositiveDefinite; give the link an <inertial> "
      "or load the model with a fixed base (docs/robustness.md)",
      urdf.where(line), model.bodyNames[b], why);
}

Model buildTreeModel(const UrdfDescription& urdf, const ModelOptions& options) {
  Model model = detail::buildSpanningTree(urdf, options);
  if (const int b = detail::masslessFloatingRoot(model); b >= 0) {  // singular at the neutral q?
    Data data(model, false);
    const VecX zero = VecX::Zero(model.nv);
    if (aba(model, data, neutralConfiguration(model), zero, zero) == Status::NotPositiveDefinite)
      detail::warnSingularFloatingRoot(urdf, model, b, data.errorMessage());
  }
  if (!urdf.loops.empty() || !urdf.couplings.empty())
    log::warn("{}: {} <loop> and {} <coupling> elements are ignored by the spanning-tree model",
              urdf.source, urdf.loops.size(), urdf.couplings.size());
  for (const auto& j : urdf.joints)
    if (j.mimic.present)
      log::warn("{}:{}: <mimic> of joint '{}' is ignored by the spanning-tree model", urdf.source,
                j.mimic.line, j.name);
  return model;
}

}  // namespace clusterdyn
