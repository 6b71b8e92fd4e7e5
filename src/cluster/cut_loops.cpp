// Cut loops: URDF+ <loop>s left open in the cluster tree, and their rigid constraints.
#include "cluster/cut_loops.hpp"

#include <map>

#include "clusterdyn/constraints.hpp"

namespace clusterdyn {

namespace detail {

std::set<std::string> cutLoopPathJoints(const UrdfDescription& urdf, const ModelOptions& options) {
  std::map<std::string, const UrdfJoint*> jointOfChild;
  for (const UrdfJoint& j : urdf.joints) jointOfChild[j.child] = &j;
  // Joints from a link up to the root, nearest first.
  auto up = [&](std::string link) {
    std::vector<std::string> out;
    for (int guard = 0; guard < 100000 && jointOfChild.count(link); ++guard) {
      out.push_back(jointOfChild[link]->name);
      link = jointOfChild[link]->parent;
    }
    return out;
  };
  // Joints on the path between two links (below their common ancestor).
  auto path = [&](const std::string& a, const std::string& b) {
    std::vector<std::string> pa = up(a), pb = up(b);
    while (!pa.empty() && !pb.empty() && pa.back() == pb.back()) pa.pop_back(), pb.pop_back();
    std::set<std::string> s(pa.begin(), pa.end());
    s.insert(pb.begin(), pb.end());
    return s;
  };
  std::set<std::string> cut, embedded;
  for (const UrdfLoop& l : urdf.loops) {
    const std::set<std::string> p = path(l.predecessor, l.successor);
    (isCutLoop(l, options) ? cut : embedded).insert(p.begin(), p.end());
  }
  for (const UrdfCoupling& c : urdf.couplings)
    for (const UrdfCouplingTerm& t : c.predecessors) {
      const std::set<std::string> p = path(t.link, c.successor);
      embedded.insert(p.begin(), p.end());
    }
  std::set<std::string> out;
  for (const std::string& j : cut)
    if (!embedded.count(j)) out.insert(j);
  return out;
}

}  // namespace detail

ConstraintSet cutLoopConstraints(const ClusterModel& model) {
  ConstraintSet set(model);
  for (const LoopJoint& l : model.cutLoops) {
    RigidConstraint c;
    c.name = l.name;
    const JointType t = l.type;
    c.type = t == JointType::Revolute    ? ConstraintType::Revolute
             : t == JointType::Prismatic ? ConstraintType::Prismatic
             : t == JointType::Planar    ? ConstraintType::Planar
             : t == JointType::Spherical ? ConstraintType::Point
                                         : ConstraintType::Weld;
    // Frames A and B: the loop frames P and S turned so that their z axis is the joint axis.
    const Vec3 z = l.axis.norm() > 0 ? Vec3(l.axis.normalized()) : Vec3::UnitZ();
    const Mat3 R = Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), z).toRotationMatrix();
    const Transform turn(R, Vec3::Zero());
    Transform P = l.predecessorPlacement * turn, S = l.successorPlacement * turn;
    int b1 = l.predecessorBody, b2 = l.successorBody;
    if (b1 < 0) std::swap(b1, b2), std::swap(P, S);  // frame A on a moving body
    c.body1 = b1;
    c.placement1 = P;
    c.body2 = b2;
    c.placement2 = S;
    set.add(c);
  }
  return set;
}

}  // namespace clusterdyn
