// Configuration-space operations (quaternion-aware).
#include "clusterdyn/configuration.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>

#include "core/check.hpp"

namespace clusterdyn {

namespace {

/// Rotation exp([w]) (Rodrigues).
Mat3 expSO3(const Vec3& w) {
  const double th = w.norm();
  if (th < 1e-12) return Mat3::Identity() + skew(w);
  return Eigen::AngleAxisd(th, w / th).toRotationMatrix();
}

/// V(w) with exp of the twist (w, v) = (exp(w), V(w) v) (SE(3) left Jacobian).
Mat3 leftJacobianSO3(const Vec3& w) {
  const double th = w.norm();
  const Mat3 W = skew(w);
  if (th < 1e-6) return Mat3::Identity() + 0.5 * W + W * W / 6.0;
  return Mat3::Identity() + (1.0 - std::cos(th)) / (th * th) * W +
         (th - std::sin(th)) / (th * th * th) * W * W;
}

/// log(R): the rotation vector w with exp([w]) = R (angle in [0, pi]).
Vec3 logSO3(const Mat3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

/// Rotation of a unit quaternion stored (x, y, z, w) at p.
Mat3 rotationOf(const double* p) {
  return Eigen::Quaterniond(p[3], p[0], p[1], p[2]).normalized().toRotationMatrix();
}

}  // namespace

VecX neutralConfiguration(const Model& model) {
  VecX q = VecX::Zero(model.nq);
  for (int i = 0; i < model.nbodies; ++i) {
    const JointType t = model.joints[i].type;
    if (t == JointType::Floating) q[model.idx_q[i] + 6] = 1.0;
    if (t == JointType::Spherical) q[model.idx_q[i] + 3] = 1.0;
  }
  return q;
}

VecX randomConfiguration(const Model& model, std::mt19937_64& rng, double range) {
  VecX q = neutralConfiguration(model);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto randomQuat = [&](double* out) {
    Eigen::Vector4d g(normal(rng), normal(rng), normal(rng), normal(rng));
    g.normalize();
    if (g(3) < 0) g = -g;
    for (int k = 0; k < 4; ++k) out[k] = g(k);
  };
  for (int i = 0; i < model.nbodies; ++i) {
    const int iq = model.idx_q[i];
    switch (model.joints[i].type) {
      case JointType::Revolute:
      case JointType::Prismatic: {
        const double lo = std::max(-range, model.lowerPositionLimit[iq]);
        const double hi = std::min(range, model.upperPositionLimit[iq]);
        const double t = 0.5 * (unit(rng) + 1.0);
        q[iq] = lo <= hi ? lo + t * (hi - lo)
                         : 0.5 * (model.lowerPositionLimit[iq] + model.upperPositionLimit[iq]);
        break;
      }
      case JointType::Planar:
        for (int k = 0; k < 3; ++k) q[iq + k] = range * unit(rng);
        break;
      case JointType::Spherical:
        randomQuat(q.data() + iq);
        break;
      case JointType::Floating:
        for (int k = 0; k < 3; ++k) q[iq + k] = range * unit(rng);
        randomQuat(q.data() + iq + 3);
        break;
      case JointType::Fixed:
        break;
    }
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
    const int iq = model.idx_q[i], iv = model.idx_v[i];
    switch (model.joints[i].type) {
      case JointType::Revolute:
      case JointType::Prismatic:
        out[iq] += v[iv] * dt;
        break;
      case JointType::Planar: {
        // Constant body twist in the plane: SE(2) exponential.
        const double th = q[iq + 2], w = v[iv + 2] * dt;
        const double vx = v[iv] * dt, vy = v[iv + 1] * dt;
        double a, b;  // displacement in the body axes at the start
        if (std::abs(w) < 1e-9) {
          a = vx - 0.5 * w * vy;
          b = vy + 0.5 * w * vx;
        } else {
          const double s = std::sin(w) / w, c = (1.0 - std::cos(w)) / w;
          a = s * vx - c * vy;
          b = c * vx + s * vy;
        }
        out[iq] += std::cos(th) * a - std::sin(th) * b;
        out[iq + 1] += std::sin(th) * a + std::cos(th) * b;
        out[iq + 2] += w;
        break;
      }
      case JointType::Spherical: {
        const Eigen::Quaterniond q0(q[iq + 3], q[iq], q[iq + 1], q[iq + 2]);
        Eigen::Quaterniond q1(q0.toRotationMatrix() * expSO3(v.segment<3>(iv) * dt));
        q1.normalize();
        if (q1.w() * q0.w() + q1.vec().dot(q0.vec()) < 0) q1.coeffs() *= -1.0;
        out.segment<4>(iq) = q1.coeffs();
        break;
      }
      case JointType::Floating: {
        const Eigen::Quaterniond q0(q[iq + 6], q[iq + 3], q[iq + 4], q[iq + 5]);
        const Mat3 R = q0.normalized().toRotationMatrix();
        const Vec3 w = v.segment<3>(iv) * dt, vl = v.segment<3>(iv + 3) * dt;
        out.segment<3>(iq) += R * (leftJacobianSO3(w) * vl);
        Eigen::Quaterniond q1(R * expSO3(w));
        q1.normalize();
        if (q1.w() * q0.w() + q1.vec().dot(q0.vec()) < 0) q1.coeffs() *= -1.0;
        out.segment<4>(iq + 3) = q1.coeffs();
        break;
      }
      case JointType::Fixed:
        break;
    }
  }
}

void differenceInto(const Model& model, ConstVecRef q0, ConstVecRef q1, Eigen::Ref<VecX> out) {
  for (int i = 0; i < model.nbodies; ++i) {
    const int iq = model.idx_q[i], iv = model.idx_v[i];
    switch (model.joints[i].type) {
      case JointType::Revolute:
      case JointType::Prismatic:
        out[iv] = q1[iq] - q0[iq];
        break;
      case JointType::Planar: {
        // Inverse of integrateInto's SE(2) exponential: the displacement in the start's body
        // axes is [s -c; c s] (vx, vy) with s = sin(w) / w, c = (1 - cos(w)) / w.
        const double th = q0[iq + 2], w = q1[iq + 2] - q0[iq + 2];
        const double dx = q1[iq] - q0[iq], dy = q1[iq + 1] - q0[iq + 1];
        const double a = std::cos(th) * dx + std::sin(th) * dy;
        const double b = -std::sin(th) * dx + std::cos(th) * dy;
        double s, c;
        if (std::abs(w) < 1e-9) {
          s = 1.0;
          c = 0.5 * w;
        } else {
          s = std::sin(w) / w;
          c = (1.0 - std::cos(w)) / w;
        }
        const double det = s * s + c * c;
        out[iv] = (s * a + c * b) / det;
        out[iv + 1] = (-c * a + s * b) / det;
        out[iv + 2] = w;
        break;
      }
      case JointType::Spherical:
        out.segment<3>(iv) =
            logSO3(rotationOf(q0.data() + iq).transpose() * rotationOf(q1.data() + iq));
        break;
      case JointType::Floating: {
        const Mat3 R0 = rotationOf(q0.data() + iq + 3);
        const Vec3 w = logSO3(R0.transpose() * rotationOf(q1.data() + iq + 3));
        const Vec3 dp = R0.transpose() * (q1.segment<3>(iq) - q0.segment<3>(iq));
        out.segment<3>(iv) = w;
        out.segment<3>(iv + 3) = leftJacobianSO3(w).partialPivLu().solve(dp);
        break;
      }
      case JointType::Fixed:
        break;
    }
  }
}

void normalizeConfiguration(const Model& model, Eigen::Ref<VecX> q) {
  for (int i = 0; i < model.nbodies; ++i) {
    const JointType t = model.joints[i].type;
    if (t == JointType::Floating) q.segment<4>(model.idx_q[i] + 3).normalize();
    if (t == JointType::Spherical) q.segment<4>(model.idx_q[i]).normalize();
  }
}

namespace detail {

/// Sizes, finiteness and unit quaternions of a configuration (declared in core/check.hpp).
Status checkConfiguration(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  CDYN_TRY(checkVector(data, q, model.nq, "q"));
  for (const int i : model.quaternionBodies) {
    const JointType t = model.joints[i].type;
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
