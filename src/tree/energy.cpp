#include "clusterdyn/energy.hpp"

#include <limits>

#include "core/check.hpp"

namespace clusterdyn {

Status computeKineticEnergy(const Model& model, Data& data, ConstVecRef q, ConstVecRef v) {
  const Status s = forwardKinematics(model, data, q, v);
  if (s != Status::Ok) return s;
  double T = 0.0;
  for (int i = 0; i < model.nbodies; ++i) T += 0.5 * data.v[i].dot(model.inertias[i] * data.v[i]);
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
