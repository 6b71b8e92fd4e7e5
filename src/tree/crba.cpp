// Composite-rigid-body algorithm (Featherstone 2008, Table 6.2) in body coordinates: the force
// F = I^c_i S_i is carried from body i to each ancestor j by the joint force transforms, and
// H(j, i) = S_j^T F there. S_j is constant in body coordinates, so for a revolute joint about a
// coordinate axis S_j^T F is one coefficient of F and I^c_i S_i is one column of I^c_i: the
// per-pair cost is one force transform, and no body needs its world pose.
#include "clusterdyn/crba.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "tree/axis_transforms.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {
namespace {

/// out[0 .. nv_j) = S_j^T f (body coordinates of body j).
inline void projectOnSubspace(const Joint& joint, const Force& f, double* out) {
  if (joint.type == JointType::Revolute && joint.alignedAxis >= 0) {
    out[0] = joint.alignedSign * f[joint.alignedAxis];
  } else if (joint.type == JointType::Revolute) {
    out[0] = joint.axis.dot(f.head<3>());
  } else if (joint.type == JointType::Prismatic) {
    out[0] = joint.axis.dot(f.tail<3>());
  } else if (joint.type == JointType::Floating) {  // S = 1 (6 x 6)
    Vec6::Map(out) = f;
  } else {
    Eigen::Map<VecX>(out, joint.nv).noalias() = joint.S.transpose() * f;
  }
}

/// I S for a 1-dof joint (Featherstone eq. 2.63 with a single motion axis).
inline Force inertiaTimesAxis(const Joint& joint, const SpatialInertia& I) {
  if (joint.type == JointType::Revolute && joint.alignedAxis >= 0) {
    // S = s [e_a; 0]: I S = s [Io e_a; e_a x h].
    const int a = joint.alignedAxis;
    const double s = joint.alignedSign;
    Force f;
    f.head<3>() = s * I.Io.col(a);
    const Vec3& h = I.h;
    f[3] = a == 0 ? 0.0 : (a == 1 ? s * h.z() : -s * h.y());
    f[4] = a == 1 ? 0.0 : (a == 0 ? -s * h.z() : s * h.x());
    f[5] = a == 2 ? 0.0 : (a == 0 ? s * h.y() : -s * h.x());
    return f;
  }
  return I * Motion(joint.S.col(0));
}

/// H(j, i) = S_j^T F for every ancestor j of a 1-dof body i, with F = I^c_i S_i carried from
/// frame to frame; entries go to column i (contiguous) and, mirrored, to row i.
void fillAncestorEntries(const Model& model, Data& data, int i, Force F) {
  // Raw pointers: Eigen's packet stores may alias anything, which would reload every
  // std::vector's data pointer after each store.
  const int* const parent = model.parent.data();
  const int* const idxV = model.idx_v.data();
  const int* const axisRotation = model.axisRotation.data();
  const Joint* const joints = model.joints.data();
  const Transform* const liMi = data.liMi.data();
  const int iv = idxV[i];
  const Eigen::Index ld = data.M.outerStride();
  double* const Md = data.M.data();
  double* const col = Md + iv * ld;  // column iv
  for (int j = i, p = parent[i]; p >= 0; j = p, p = parent[p]) {
    F = detail::forceInParentFrame(axisRotation[j], liMi[j], F);
    const Joint& joint = joints[p];
    const int jv = idxV[p];
    if (joint.type == JointType::Revolute && joint.alignedAxis >= 0) {
      const double x = joint.alignedSign * F[joint.alignedAxis];
      col[jv] = x;
      Md[jv * ld + iv] = x;                          // M(iv, jv)
    } else if (joint.type == JointType::Floating) {  // S = 1
      Vec6::Map(col + jv) = F;
      double* row = Md + jv * ld + iv;  // M(iv, jv)
      row[0] = F[0], row[ld] = F[1], row[2 * ld] = F[2];
      row[3 * ld] = F[3], row[4 * ld] = F[4], row[5 * ld] = F[5];
    } else {
      projectOnSubspace(joint, F, col + jv);
      for (int r = 0; r < joint.nv; ++r) Md[(jv + r) * ld + iv] = col[jv + r];
    }
  }
}

/// The same for a body with k > 1 dofs (F is 6 x k).
template <typename ForceCols>
void fillAncestorBlocks(const Model& model, Data& data, int i, ForceCols& F) {
  MatX& M = data.M;
  const int iv = model.idx_v[i], k = model.nvs[i];
  for (int j = i; model.parent[j] >= 0;) {
    for (int c = 0; c < k; ++c) F.col(c) = detail::forceInParentFrame(model, data, j, F.col(c));
    j = model.parent[j];
    const int jv = model.idx_v[j], kj = model.nvs[j];
    for (int c = 0; c < k; ++c) {
      double* col = &M(0, iv + c);
      projectOnSubspace(model.joints[j], F.col(c), col + jv);
      for (int r = 0; r < kj; ++r) M(iv + c, jv + r) = col[jv + r];
    }
  }
}

/// liMi = R_a(theta) for an axisRotation body: the values of detail::localPlacementStep,
/// written with compile-time indices.
template <int A>
inline void setAxisTransform(Transform& X, const Vec3& p, double c, double s) {
  using P = detail::AxisPlane<A>;
  Mat3& R = X.R;
  R(P::a, P::a) = 1.0;
  R(P::i, P::a) = R(P::j, P::a) = R(P::a, P::i) = R(P::a, P::j) = 0.0;
  R(P::i, P::i) = R(P::j, P::j) = c;
  R(P::j, P::i) = s;
  R(P::i, P::j) = -s;
  X.p = p;
}

/// detail::localPlacementStep for a body with model.axisRotation[i] >= 0, inline.
inline void axisJointTransform(const Model& model, Data& data, int i, const double* q) {
  const Joint& joint = model.joints[i];
  const double th = joint.alignedSign * q[model.idx_q[i]], c = std::cos(th), s = std::sin(th);
  Transform& X = data.liMi[i];
  const Vec3& p = model.jointPlacement[i].p;
  switch (model.axisRotation[i]) {
    case 0:
      return setAxisTransform<0>(X, p, c, s);
    case 1:
      return setAxisTransform<1>(X, p, c, s);
    default:
      return setAxisTransform<2>(X, p, c, s);
  }
}

/// M(iv.., iv..) = I (6 x 6, Featherstone eq. 2.63) for a floating root, from the upper
/// triangle of Io so that the block is exactly symmetric.
inline void writeRootInertia(const SpatialInertia& I, MatX& M, int iv) {
  auto B = M.block<6, 6>(iv, iv);
  const Mat3& Io = I.Io;
  const Vec3& h = I.h;
  B(0, 0) = Io(0, 0), B(1, 1) = Io(1, 1), B(2, 2) = Io(2, 2);
  B(0, 1) = B(1, 0) = Io(0, 1);
  B(0, 2) = B(2, 0) = Io(0, 2);
  B(1, 2) = B(2, 1) = Io(1, 2);
  B.topRightCorner<3, 3>() = skew(h);  // h x
  B.bottomLeftCorner<3, 3>() = B.topRightCorner<3, 3>().transpose();
  B.bottomRightCorner<3, 3>() = I.mass * Mat3::Identity();
}

/// True when the upper triangle of M (the lower one is its mirror) is finite.
bool upperTriangleFinite(const MatX& M) {
  double z = 0.0;
  for (Eigen::Index c = 0; c < M.cols(); ++c) z += detail::nonFiniteProbe(M.col(c).head(c + 1));
  return z == 0.0;
}

}  // namespace

Status crba(const Model& model, Data& data, ConstVecRef q) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  if (data.M.rows() != model.nv)
    return detail::fail(data, Status::InvalidArgument,
                        "crba: the workspace was created without dense matrices (no M)");
  const int n = model.nbodies;
  // Pass 1: joint transforms; composite inertias start as the body inertias.
  const int* const axisRotation = model.axisRotation.data();
  for (int i = 0; i < n; ++i) {
    if (axisRotation[i] >= 0)
      axisJointTransform(model, data, i, q.data());
    else
      detail::localPlacementStep(model, data, i, q);
  }
  std::copy(model.inertias.begin(), model.inertias.end(), data.Ycrb.begin());
  // Pass 2 (leaves to root): H(i, i) and H(ancestors, i) from F = I^c_i S_i, then
  // I^c_parent += X^T I^c_i X (Table 6.2).
  MatX& M = data.M;
  for (int i = n - 1; i >= 0; --i) {
    const int iv = model.idx_v[i], k = model.nvs[i];
    const Joint& joint = model.joints[i];
    const SpatialInertia& Ic = data.Ycrb[i];
    if (k == 1) {
      const Force F = inertiaTimesAxis(joint, Ic);
      projectOnSubspace(joint, F, &M(iv, iv));
      fillAncestorEntries(model, data, i, F);
    } else if (k > 1) {
      Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6> F(6, k);
      if (joint.type == JointType::Floating && model.parent[i] < 0) {
        writeRootInertia(Ic, M, iv);  // S = 1 and no ancestors: H(i, i) = I^c_i
        continue;
      }
      if (joint.type == JointType::Floating) {
        F = Ic.matrix();  // S = 1
        M.block<6, 6>(iv, iv) = F;
      } else {
        for (int c = 0; c < k; ++c) F.col(c) = Ic * Motion(joint.S.col(c));
        M.block(iv, iv, k, k).noalias() = joint.S.transpose() * F;
      }
      for (int r = 1; r < k; ++r)  // exact symmetry of multi-dof diagonal blocks
        for (int c = 0; c < r; ++c) {
          const double m = 0.5 * (M(iv + r, iv + c) + M(iv + c, iv + r));
          M(iv + r, iv + c) = M(iv + c, iv + r) = m;
        }
      fillAncestorBlocks(model, data, i, F);
    }
    const int p = model.parent[i];
    if (p < 0) continue;
    data.Ycrb[p] += detail::inertiaInParentFrame(model, data, i, Ic);
  }
  detail::ok(data);
  if (upperTriangleFinite(M)) return Status::Ok;
  return detail::nonFiniteOutput(data, "crba: M", {{"q", detail::maxAbs(q), 2}});
}

}  // namespace clusterdyn
