// Composite-rigid-body algorithm (Featherstone 2008, Table 6.2) in world coordinates: with every
// motion subspace S_i and composite inertia I^c_i expressed in the world frame, the entry
// H(j, i) = S_j^T I^c_i S_i of an ancestor j of i needs no transform along the path (the
// body-coordinate form transforms the force I^c_i S_i once per ancestor). The same
// world-frame formulation is used by Pinocchio (Carpentier et al. 2019).
#include "clusterdyn/crba.hpp"

#include "core/check.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {

Status crba(const Model& model, Data& data, ConstVecRef q) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  if (data.M.rows() != model.nv)
    return detail::fail(data, Status::InvalidArgument,
                        "crba: the workspace was created without dense matrices (no M)");
  const int n = model.nbodies;
  Mat6X& oS = data.Fcrb;  // world-frame motion subspaces, column block idx_v[i] of body i
  // Pass 1: poses, world-frame body inertias and motion subspaces.
  for (int i = 0; i < n; ++i) {
    detail::placementStep(model, data, i, q);
    const Transform& oMi = data.oMi[i];
    data.Ycrb[i] = model.inertias[i].transformedBy(oMi);
    const Joint& joint = model.joints[i];
    for (int c = 0; c < joint.nv; ++c)
      oS.col(model.idx_v[i] + c) = oMi.actMotion(Motion(joint.S.col(c)));
  }
  // Pass 2 (leaves to root): F = I^c_i S_i, H(j, i) = S_j^T F for j = i and its ancestors,
  // then I^c_parent += I^c_i (rigid composites; no transform in world coordinates).
  MatX& M = data.M;
  for (int i = n - 1; i >= 0; --i) {
    const int iv = model.idx_v[i], k = model.nvs[i];
    const SpatialInertia& Ic = data.Ycrb[i];
    if (k == 1) {
      const Force f = Ic * Motion(oS.col(iv));
      M(iv, iv) = oS.col(iv).dot(f);
      for (int j = model.parent[i]; j >= 0; j = model.parent[j]) {
        const int jv = model.idx_v[j], kj = model.nvs[j];
        if (kj == 1) {
          M(jv, iv) = M(iv, jv) = oS.col(jv).dot(f);
        } else if (kj == 6) {  // floating base: fixed-size product
          const Vec6 h = oS.middleCols<6>(jv).transpose() * f;
          M.block<6, 1>(jv, iv) = h;
          M.block<1, 6>(iv, jv) = h.transpose();
        } else {
          M.block(jv, iv, kj, 1).noalias() = oS.middleCols(jv, kj).transpose() * f;
          M.block(iv, jv, 1, kj) = M.block(jv, iv, kj, 1).transpose();
        }
      }
    } else if (k > 1) {
      Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6> F(6, k);
      for (int c = 0; c < k; ++c) F.col(c) = Ic * Motion(oS.col(iv + c));
      M.block(iv, iv, k, k).noalias() = oS.middleCols(iv, k).transpose() * F;
      for (int r = 1; r < k; ++r)  // exact symmetry of multi-dof diagonal blocks
        for (int c = 0; c < r; ++c) {
          const double m = 0.5 * (M(iv + r, iv + c) + M(iv + c, iv + r));
          M(iv + r, iv + c) = M(iv + c, iv + r) = m;
        }
      for (int j = model.parent[i]; j >= 0; j = model.parent[j]) {
        const int jv = model.idx_v[j], kj = model.nvs[j];
        M.block(jv, iv, kj, k).noalias() = oS.middleCols(jv, kj).transpose() * F;
        M.block(iv, jv, k, kj) = M.block(jv, iv, kj, k).transpose();
      }
    }
    const int p = model.parent[i];
    if (p >= 0) data.Ycrb[p] += Ic;
  }
  detail::ok(data);
  return detail::checkOverflow(data, Status::Ok, data.M, "crba: M", {{"q", detail::maxAbs(q), 2}});
}

}  // namespace clusterdyn
