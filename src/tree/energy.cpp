#include "clusterdyn/energy.hpp"

#include <limits>

#include "core/check.hpp"
#include "tree/joint_dynamics.hpp"

namespace clusterdyn {

namespace detail {
/// Potential energy of the joint springs, 1/2 k |q (-) q_spring|^2 per joint (MuJoCo's
/// mj_energyPos; its gradient is -tau_p at v = 0 for 1-dof joints and free translations), and
/// of the springs of ball joints replaced by hinges (Model::ballHinges).
double springEnergy(const Model& model, const double* q) {
  auto quat = [](const double* x) { return Eigen::Quaterniond(x[3], x[0], x[1], x[2]); };
  const double* const ks = model.stiffness.data();
  const double* const qs = model.springPosition.data();
  double V = 0.0;
  for (int b = 0; b < model.nbodies; ++b) {
    const int iq = model.idx_q[b], iv = model.idx_v[b];
    const JointType type = model.joints[b].type;
    if (model.nvs[b] == 1 && model.nqs[b] == 1) {
      V += 0.5 * ks[iv] * (q[iq] - qs[iq]) * (q[iq] - qs[iq]);
    } else if (type == JointType::Spherical || type == JointType::Floating) {
      const int qo = type == JointType::Floating ? iq + 3 : iq;
      const Vec3 r = quaternionDifference(quat(q + qo), quat(qs + qo));
      for (int k = 0; k < 3; ++k) V += 0.5 * ks[iv + k] * r[k] * r[k];
      if (type == JointType::Floating)
        for (int k = 0; k < 3; ++k)
          V += 0.5 * ks[iv + 3 + k] * (q[iq + k] - qs[iq + k]) * (q[iq + k] - qs[iq + k]);
    }
  }
  return V + ballHingeSpringEnergy(model, q);  // balls replaced by hinges
}
}  // namespace detail

Status computeKineticEnergy(const Model& model, Data& data, ConstVecRef q, ConstVecRef v) {
  const Status s = forwardKinematics(model, data, q, v);
  if (s != Status::Ok) return s;
  double T = 0.0;
  for (int i = 0; i < model.nbodies; ++i) T += 0.5 * data.v[i].dot(model.inertias[i] * data.v[i]);
  if (model.hasArmature()) T += 0.5 * v.dot(model.armature.cwiseProduct(v));  // rotor inertia
  if (!std::isfinite(T))
    return detail::nonFiniteOutput(data, "kinetic energy",
                                   {{"q", detail::maxAbs(q), 1}, {"v", detail::maxAbs(v), 2}});
  data.kineticEnergy = T;
  return Status::Ok;
}

double kineticEnergy(const Model& model, Data& data, ConstVecRef q, ConstVecRef v) {
  if (computeKineticEnergy(model, data, q, v) != Status::Ok)
    return std::numeric_limits<double>::quiet_NaN();
  return data.kineticEnergy;
}

Vec3 centerOfMass(const Model& model, const Data& data) {
  Vec3 h = Vec3::Zero();
  double m = 0.0;
  for (int i = 0; i < model.nbodies; ++i) {
    const SpatialInertia& I = model.inertias[i];
    h += I.mass * data.oMi[i].p + data.oMi[i].R * I.h;
    m += I.mass;
  }
  return m > 0.0 ? Vec3(h / m) : Vec3::Zero();
}

Status computePotentialEnergy(const Model& model, Data& data, ConstVecRef q) {
  const Status s = forwardKinematics(model, data, q);
  if (s != Status::Ok) return s;
  double V = 0.0;
  for (int i = 0; i < model.nbodies; ++i) {
    const SpatialInertia& I = model.inertias[i];
    const Vec3 mc = I.mass * data.oMi[i].p + data.oMi[i].R * I.h;  // m * com in world
    V -= model.gravity.dot(mc);
  }
  if (model.hasPassiveForces()) V += detail::springEnergy(model, q.data());
  if (!std::isfinite(V))
    return detail::nonFiniteOutput(data, "potential energy", {{"q", detail::maxAbs(q), 1}});
  data.potentialEnergy = V;
  return Status::Ok;
}

double potentialEnergy(const Model& model, Data& data, ConstVecRef q) {
  if (computePotentialEnergy(model, data, q) != Status::Ok)
    return std::numeric_limits<double>::quiet_NaN();
  return data.potentialEnergy;
}

}  // namespace clusterdyn
