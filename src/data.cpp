#include "clusterdyn/data.hpp"

#include "check.hpp"

namespace clusterdyn {

const char* statusName(Status s) {
  switch (s) {
    case Status::Ok:
      return "ok";
    case Status::InvalidSize:
      return "invalid size";
    case Status::NonFinite:
      return "non-finite input";
    case Status::NotUnitQuaternion:
      return "quaternion is not unit";
    case Status::NotPositiveDefinite:
      return "inertia not positive definite";
    case Status::InvalidIndex:
      return "index out of range";
    case Status::ConstraintFailure:
      return "loop constraint failure";
    case Status::WorkspaceMismatch:
      return "workspace belongs to another model";
    case Status::InvalidArgument:
      return "invalid argument";
    case Status::NotConverged:
      return "iterations did not reach the tolerance";
  }
  return "unknown status";
}

Data::Data(const Model& m, bool denseMatrices) : model(&m) {
  const int n = m.nbodies;
  liMi.resize(n);
  oMi.resize(n);
  v.assign(n, Motion::Zero());
  a.assign(n, Motion::Zero());
  c.assign(n, Motion::Zero());
  f.assign(n, Force::Zero());
  a_gf.assign(n, Motion::Zero());
  IA.assign(n, Mat6::Zero());
  pA.assign(n, Force::Zero());
  U.resize(n);
  Dinv.resize(n);
  u.resize(n);
  for (int i = 0; i < n; ++i) {
    U[i].setZero(6, m.nvs[i]);
    Dinv[i].setZero(m.nvs[i], m.nvs[i]);
    u[i].setZero(m.nvs[i]);
  }
  Ycrb.assign(n, SpatialInertia());
  Fcrb.setZero(6, m.nv);
  tau.setZero(m.nv);
  ddq.setZero(m.nv);
  nle.setZero(m.nv);
  if (denseMatrices) M.setZero(m.nv, m.nv);
  J.setZero(6, m.nv);
  lastError[0] = '\0';
}

namespace detail {

Status checkConfiguration(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  CDYN_TRY(checkVector(data, q, model.nq, "q"));
  for (int i = 0; i < model.nbodies; ++i) {
    const JointType t = model.joints[i].type;
    if (t != JointType::Floating && t != JointType::Spherical) continue;
    const int k = model.idx_q[i] + (t == JointType::Floating ? 3 : 0);
    const double n = q.segment<4>(k).norm();
    if (std::abs(n - 1.0) > kQuaternionNormTolerance)
      return fail(data, Status::NotUnitQuaternion,
                  "quaternion of joint '%s' (q[%d..%d]) has norm %.17g, expected 1",
                  model.jointNames[i].c_str(), k, k + 3, n);
  }
  return Status::Ok;
}

}  // namespace detail
}  // namespace clusterdyn
