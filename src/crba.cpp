// Composite-rigid-body algorithm (Featherstone Table 6.2).
#include "clusterdyn/crba.hpp"

#include "check.hpp"
#include "tree_step.hpp"

namespace clusterdyn {

Status crba(const Model& model, Data& data, ConstVecRef q) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  if (data.M.rows() != model.nv)
    return detail::fail(data, Status::InvalidArgument,
                        "crba: the workspace was created without dense matrices (no M)");
  const int n = model.nbodies;
  for (int i = 0; i < n; ++i) {
    detail::placementStep(model, data, i, q);
    data.Ycrb[i] = model.inertias[i];
  }
  for (int i = n - 1; i >= 0; --i) {
    const Joint& joint = model.joints[i];
    const int iv = model.idx_v[i], k = joint.nv;
    const SpatialInertia& Ic = data.Ycrb[i];
    if (k == 1) {  // one column: F = I^c_i S_i as a force vector
      Force f = Ic * Motion(joint.S.col(0));
      data.M(iv, iv) = joint.S.col(0).dot(f);
      for (int j = i; model.parent[j] >= 0;) {
        f = data.liMi[j].actForce(f);
        j = model.parent[j];
        const int jv = model.idx_v[j], kj = model.nvs[j];
        if (kj == 1) {
          data.M(jv, iv) = data.M(iv, jv) = model.joints[j].S.col(0).dot(f);
        } else {
          data.M.block(jv, iv, kj, 1).noalias() = model.joints[j].S.transpose() * f;
          data.M.block(iv, jv, 1, kj) = data.M.block(jv, iv, kj, 1).transpose();
        }
      }
    } else {
      auto F = data.Fcrb.leftCols(k);
      F.noalias() = Ic.matrix() * joint.S;  // F = I^c_i S_i
      data.M.block(iv, iv, k, k).noalias() = joint.S.transpose() * F;
      for (int r = 1; r < k; ++r)  // exact symmetry of multi-dof diagonal blocks
        for (int c = 0; c < r; ++c) {
          const double m = 0.5 * (data.M(iv + r, iv + c) + data.M(iv + c, iv + r));
          data.M(iv + r, iv + c) = data.M(iv + c, iv + r) = m;
        }
      for (int j = i; model.parent[j] >= 0;) {
        for (int c = 0; c < k; ++c) F.col(c) = data.liMi[j].actForce(F.col(c));
        j = model.parent[j];
        const int jv = model.idx_v[j], kj = model.nvs[j];
        data.M.block(jv, iv, kj, k).noalias() = model.joints[j].S.transpose() * F;
        data.M.block(iv, jv, k, kj) = data.M.block(jv, iv, kj, k).transpose();
      }
    }
    const int p = model.parent[i];
    if (p >= 0) data.Ycrb[p] += Ic.transformedBy(data.liMi[i]);  // rigid composite (Table 6.2)
  }
  detail::ok(data);
  return detail::checkOverflow(data, Status::Ok, data.M, "crba: M", {{"q", detail::maxAbs(q), 2}});
}

}  // namespace clusterdyn
