// Configuration-space operations (quaternion-aware).
#include "clusterdyn/configuration.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "model/joint_types.hpp"

namespace clusterdyn {

VecX neutralConfiguration(const Model& model) {
  VecX q = VecX::Zero(model.nq);
  for (int i = 0; i < model.nbodies; ++i)
    detail::neutralJointConfiguration(model.joints[i], q.data() + model.idx_q[i]);
  return q;
}

VecX randomConfiguration(const Model& model, std::mt19937_64& rng, double range) {
  VecX q = neutralConfiguration(model);
  struct Draw {
    std::mt19937_64& rng;
    std::uniform_real_distribution<double> uniform{-1.0, 1.0};
    std::normal_distribution<double> normal{0.0, 1.0};
    double unit() { return uniform(rng); }
    void quaternion(double* out) {
      Eigen::Vector4d g(normal(rng), normal(rng), normal(rng), normal(rng));
      g.normalize();
      if (g(3) < 0) g = -g;
      for (int k = 0; k < 4; ++k) out[k] = g(k);
    }
  } draw{rng};
  for (int i = 0; i < model.nbodies; ++i) {
    const int iq = model.idx_q[i];
    detail::visitJointType(model.joints[i].type, [&](auto J) {
      decltype(J)::random(model.lowerPositionLimit.data() + iq,
                          model.upperPositionLimit.data() + iq, range, draw, q.data() + iq);
    });
  }
  return q;
}

VecX integrate(const Model& model, ConstVecRef q, ConstVecRef v, double dt) {
  VecX out = q;
  integrateInto(model, q, v, dt, out);
  return out;
}

void integrateInto(const Model& model, ConstVecRef q, ConstVecRef v, double dt,
                   Eigen::Ref<VecX> out) {
  // Each joint reads its own entries of q before writing them: out may alias q.
  if (out.data() != q.data()) out = q;
  for (int i = 0; i < model.nbodies; ++i) {
    const Joint& joint = model.joints[i];
    const int iq = model.idx_q[i], iv = model.idx_v[i];
    detail::visitJointType(joint.type, [&](auto J) {
      decltype(J)::integrate(joint, q.data() + iq, v.data() + iv, dt, out.data() + iq);
    });
  }
}

void differenceInto(const Model& model, ConstVecRef q0, ConstVecRef q1, Eigen::Ref<VecX> out) {
  for (int i = 0; i < model.nbodies; ++i) {
    const Joint& joint = model.joints[i];
    const int iq = model.idx_q[i], iv = model.idx_v[i];
    detail::visitJointType(joint.type, [&](auto J) {
      decltype(J)::difference(joint, q0.data() + iq, q1.data() + iq, out.data() + iv);
    });
  }
}

void normalizeConfiguration(const Model& model, Eigen::Ref<VecX> q) {
  for (int i = 0; i < model.nbodies; ++i) {
    const int o = detail::quaternionOffset(model.joints[i].type);
    if (o >= 0) q.segment<4>(model.idx_q[i] + o).normalize();
  }
}

namespace detail {

/// Sizes, finiteness and unit quaternions of a configuration (declared in core/check.hpp).
Status checkConfiguration(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  CDYN_TRY(checkVector(data, q, model.nq, "q"));
  for (const int i : model.quaternionBodies) {
    const int k = model.idx_q[i] + quaternionOffset(model.joints[i].type);
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
