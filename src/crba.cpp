// Composite-rigid-body algorithm (Featherstone Table 6.2).
#include "clusterdyn/crba.hpp"

#include "check.hpp"
#include "tree_step.hpp"

namespace clusterdyn {

Status crba(const Model& model, Data& data, ConstVecRef q) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  const int n = model.nbodies;
  for (int i = 0; i < n; ++i) {
    detail::placementStep(model, data, i, q);
    data.Ycrb[i] = model.inertias[i].matrix();
  }
  for (int i = n - 1; i >= 0; --i) {
    const Joint& joint = model.joints[i];
    const int iv = model.idx_v[i], k = joint.nv;
    auto F = data.Fcrb.leftCols(k);
    F.noalias() = data.Ycrb[i] * joint.S;  // F = I^c_i S_i
    data.M.block(iv, iv, k, k).noalias() = joint.S.transpose() * F;
    for (int r = 1; r < k; ++r)  // exact symmetry of multi-dof diagonal blocks
      for (int c = 0; c < r; ++c) {
        const double m = 0.5 * (data.M(iv + r, iv + c) + data.M(iv + c, iv + r));
        data.M(iv + r, iv + c) = data.M(iv + c, iv + r) = m;
      }
    int j = i;
    while (model.parent[j] >= 0) {
      for (int c = 0; c < k; ++c) F.col(c) = data.liMi[j].actForce(F.col(c));
      j = model.parent[j];
      const int jv = model.idx_v[j], kj = model.nvs[j];
      data.M.block(jv, iv, kj, k).noalias() = model.joints[j].S.transpose() * F;
      data.M.block(iv, jv, k, kj) = data.M.block(jv, iv, kj, k).transpose();
    }
    const int p = model.parent[i];
    if (p >= 0) data.Ycrb[p] += actInertia(data.liMi[i], data.Ycrb[i]);
  }
  return detail::ok(data);
}

}  // namespace clusterdyn
