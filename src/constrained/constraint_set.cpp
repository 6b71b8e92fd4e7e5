// ConstraintSet: validated description of rigid constraints on a cluster model.
#include <cmath>

#include "clusterdyn/constraints.hpp"
#include "constrained/constraint_types.hpp"

namespace clusterdyn {

namespace {

bool finite(const Transform& T) { return T.R.allFinite() && T.p.allFinite(); }

bool isRotation(const Mat3& R) {
  return (R.transpose() * R - Mat3::Identity()).cwiseAbs().maxCoeff() < 1e-9 &&
         std::abs(R.determinant() - 1.0) < 1e-9;
}

}  // namespace

int constraintRows(ConstraintType type) { return detail::constraintTypeInfo(type).rows; }

ConstraintSet::ConstraintSet(const ClusterModel& model) : model_(&model) {}

int ConstraintSet::add(const RigidConstraint& c) {
  const Model& tree = model_->treeModel;
  const std::string who = "constraint '" + c.name + "'";
  if (c.name.empty()) throw ModelError("constraint: the name is empty");
  const int t = static_cast<int>(c.type);
  if (t < 0 || t >= detail::kFirstCone)
    throw ModelError(who + ": type " + std::to_string(t) + " is not a ConstraintType");
  const detail::ConstraintTypeInfo& info = detail::constraintTypeInfo(c.type);
  for (const RigidConstraint& o : constraints_)
    if (o.name == c.name) throw ModelError(who + ": a constraint with this name exists already");
  if (c.body1 < 0 || c.body1 >= tree.nbodies)
    throw ModelError(who + ": body1 = " + std::to_string(c.body1) + " is not a body index (0.." +
                     std::to_string(tree.nbodies - 1) + ")");
  if (c.body2 < -1 || c.body2 >= tree.nbodies)
    throw ModelError(who + ": body2 = " + std::to_string(c.body2) +
                     " is neither -1 (world) nor a body index");
  if (c.body1 == c.body2) throw ModelError(who + ": body1 and body2 are the same body");
  if (!finite(c.placement1) || !finite(c.placement2) || !isRotation(c.placement1.R) ||
      !isRotation(c.placement2.R))
    throw ModelError(who + ": a placement is not finite or not a rotation");
  if (!std::isfinite(c.kp) || !std::isfinite(c.kd) || c.kp < 0.0 || c.kd < 0.0)
    throw ModelError(who + ": Baumgarte gains must be finite and >= 0");
  if (c.frame != ReferenceFrame::Local && c.frame != ReferenceFrame::LocalWorldAligned)
    throw ModelError(who + ": the reference frame must be Local or LocalWorldAligned");
  if (c.frame == ReferenceFrame::LocalWorldAligned &&
      (c.type == ConstraintType::Revolute || c.type == ConstraintType::Planar ||
       c.type == ConstraintType::Prismatic))
    throw ModelError(who + ": a " + std::string(info.name) +
                     " constraint is defined by its frame's axes: use ReferenceFrame::Local");
  // A cone needs a friction coefficient, which RigidConstraint does not carry (docs/design/
  // extending.md): such rows are the contact layer's cone blocks.
  if (info.set == detail::MultiplierSet::Coulomb)
    throw ModelError(who + ": a " + std::string(info.name) + " constraint is a contact cone block");
  constraints_.push_back(c);
  offsets_.push_back(rows_);
  static const char* const comp[6] = {"ang_x", "ang_y", "ang_z", "lin_x", "lin_y", "lin_z"};
  for (int r = 0; r < c.rows(); ++r) rowNames_.push_back(c.name + ":" + comp[info.components[r]]);
  rows_ += c.rows();
  return size() - 1;
}

int ConstraintSet::addContact(const std::string& frameName, ConstraintType type, ReferenceFrame rf,
                              const std::string& name) {
  const Model& tree = model_->treeModel;
  if (type != ConstraintType::Point && type != ConstraintType::Weld)
    throw ModelError("contact at '" + frameName + "': a contact is a point or a weld constraint");
  const int f = tree.frameId(frameName);
  if (f < 0) throw ModelError("contact: the model has no link or frame named '" + frameName + "'");
  const Frame& fr = tree.frames[f];
  if (fr.body < 0)
    throw ModelError("contact at '" + frameName + "': the frame is fixed to the world");
  RigidConstraint c;
  c.name = name.empty() ? frameName + (type == ConstraintType::Point ? "_contact3d" : "_contact6d")
                        : name;
  c.type = type;
  c.body1 = fr.body;
  c.placement1 = fr.placement;
  c.body2 = -1;
  c.frame = rf;
  // World pose of the frame at the reference configuration: the composed joint placements.
  Transform oMb;
  {
    Data d(tree);
    const VecX& q = model_->qReference;
    if (forwardKinematics(tree, d, q) == Status::Ok) oMb = d.oMi[fr.body];
  }
  c.placement2 = oMb * fr.placement;
  return add(c);
}

bool ConstraintSet::allWorldAttached() const {
  for (const RigidConstraint& c : constraints_)
    if (c.body2 >= 0) return false;
  return true;
}

}  // namespace clusterdyn
