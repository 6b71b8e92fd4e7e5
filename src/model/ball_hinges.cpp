// A spherical joint as three revolute joints with intersecting axes (docs/mjcf.md section 3):
// the reader's replacement of a ball joint inside an embedded loop whose constraints leave one
// direction of it free (a rod's spin about its axis) when neither the ball dependent nor the
// ball independent as a whole gives a regular basis. The universal-joint idiom of
// docs/urdfplus.md (revolute joints with intersecting axes through massless links), written by
// the reader: swing axes b1, b2 first, the spin axis a last (on the child side), b1 x b2 = a, so
// that at the ball's reference orientation the three angles are 0 and the gimbal lock (the b2
// angle at +-90 degrees, where the b1 and a axes align) is as far away as it can be. The ball's
// damping and stiffness go to UrdfDescription::ballHinges: the hinges carry them together
// (Model::ballHinges, src/tree/ball_hinge_passive.hpp).
#include <cmath>

#include "model/loop_coordinates.hpp"

namespace clusterdyn::detail {

BallHingeNames ballHingeNames(const std::string& joint) {
  return {joint + ":swing1", joint + ":swing2", joint + ":spin", joint + ":swing1_link",
          joint + ":swing2_link"};
}

void expandBallIntoHinges(UrdfDescription& urdf, const std::string& joint, const Vec3& spinAxis) {
  int k = -1;
  for (int i = 0; i < static_cast<int>(urdf.joints.size()); ++i)
    if (urdf.joints[i].name == joint) k = i;
  if (k < 0 || urdf.joints[k].type != JointType::Spherical)
    throw ModelError(urdf.source + ": expandBallIntoHinges: '" + joint +
                     "' is not a spherical joint of the description");
  if (!(spinAxis.norm() > 0.5 && spinAxis.allFinite()))
    throw ModelError(urdf.source + ": expandBallIntoHinges: the spin axis of '" + joint +
                     "' is not a unit vector");
  const BallHingeNames n = ballHingeNames(joint);
  for (const UrdfJoint& j : urdf.joints)
    if (j.name == n.swing1 || j.name == n.swing2 || j.name == n.spin)
      throw ModelError(urdf.where(j.line) + ": joint '" + j.name +
                       "': the name the reader gives a hinge of ball joint '" + joint +
                       "' is taken");
  for (const UrdfLink& l : urdf.links)
    if (l.name == n.link1 || l.name == n.link2)
      throw ModelError(urdf.where(l.line) + ": link '" + l.name +
                       "': the name the reader gives a link of ball joint '" + joint +
                       "' is taken");
  // b1: the coordinate axis least aligned with a, made orthogonal to it; b2 = a x b1, so that
  // b1 x b2 = a.
  const Vec3 a = spinAxis.normalized();
  int least = 0;
  for (int i = 1; i < 3; ++i)
    if (std::abs(a[i]) < std::abs(a[least])) least = i;
  const Vec3 helper = Vec3::Unit(least);
  const Vec3 b1 = (helper - helper.dot(a) * a).normalized();
  const Vec3 b2 = a.cross(b1);

  const UrdfJoint ball = urdf.joints[k];
  auto hinge = [&](const std::string& name, const std::string& parent, const std::string& child,
                   const Transform& origin, const Vec3& axis) {
    UrdfJoint h;
    h.name = name;
    h.type = JointType::Revolute;
    h.continuous = true;
    h.parent = parent;
    h.child = child;
    h.origin = origin;
    h.axis = axis;
    h.line = ball.line;
    return h;
  };
  UrdfLink l1, l2;  // massless: no <inertial>
  l1.name = n.link1;
  l2.name = n.link2;
  l1.line = l2.line = ball.line;
  urdf.links.push_back(l1);
  urdf.links.push_back(l2);
  urdf.joints[k] = hinge(n.swing1, ball.parent, n.link1, ball.origin, b1);
  urdf.joints.insert(urdf.joints.begin() + k + 1,
                     {hinge(n.swing2, n.link1, n.link2, Transform(), b2),
                      hinge(n.spin, n.link2, ball.child, Transform(), a)});
  // The ball's damper and spring, carried by the three hinges together (Model::ballHinges).
  UrdfBallHinges group;
  group.ball = joint;
  group.swing1 = n.swing1;
  group.swing2 = n.swing2;
  group.spin = n.spin;
  group.damping = ball.damping;
  group.stiffness = ball.stiffness;
  group.line = ball.line;
  urdf.ballHinges.push_back(group);
}

}  // namespace clusterdyn::detail
