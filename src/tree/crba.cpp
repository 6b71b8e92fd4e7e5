// Composite-rigid-body algorithm (Featherstone 2008, Table 6.2) in body coordinates: the force
// F = I^c_i S_i is carried from body i to each ancestor j by the joint force transforms, and
// H(j, i) = S_j^T F there. S_j is constant in body coordinates, so for a revolute joint about a
// coordinate axis S_j^T F is one coefficient of F and I^c_i S_i is one column of I^c_i: the
// per-pair cost is one force transform, and no body needs its world pose.
#include "clusterdyn/crba.hpp"

#include "core/check.hpp"
#include "tree/axis_transforms.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {
namespace {

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
      for (int r = 0; r < 6; ++r) col[jv + r] = Md[(jv + r) * ld + iv] = F[r];
    } else {
      detail::projectOnSubspace(joint, F, col + jv);
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
      detail::projectOnSubspace(model.joints[j], F.col(c), col + jv);
      for (int r = 0; r < kj; ++r) M(iv + c, jv + r) = col[jv + r];
    }
  }
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
  for (int i = 0; i < n; ++i) {
    detail::localPlacementStep(model, data, i, q);
    data.Ycrb[i] = model.inertias[i];
  }
  // Pass 2 (leaves to root): H(i, i) and H(ancestors, i) from F = I^c_i S_i, then
  // I^c_parent += X^T I^c_i X (Table 6.2).
  MatX& M = data.M;
  for (int i = n - 1; i >= 0; --i) {
    const int iv = model.idx_v[i], k = model.nvs[i];
    const Joint& joint = model.joints[i];
    const SpatialInertia& Ic = data.Ycrb[i];
    if (k == 1) {
      const Force F = detail::inertiaTimesAxis(joint, Ic);
      detail::projectOnSubspace(joint, F, &M(iv, iv));
      fillAncestorEntries(model, data, i, F);
    } else if (k > 1) {
      Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6> F(6, k);
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
