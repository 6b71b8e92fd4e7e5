// Independent-coordinate mass matrix H = G^T M G on the cluster tree (composite inertias),
// without forming the spanning M.
//
// Per cluster k (bodies b, motion subspace S_b = rows of S_k = JXJ diag(S_i) G_k, eq. 15):
//   I~_b  = I_b + sum over child clusters attached to b of their composite inertia (rigid)
//   H_kk  = sum_b S_b^T I~_b S_b
//   F_k   = sum_b oX_b^* I~_b S_b          (momentum of k's subtree per unit y_dot_k, at the
//                                          output body o of k)
//   H_lk  = S_o^T F_k, then F_k moves to l's output body, for each ancestor cluster l
//   I~_o += sum_b oX_b^* I~_b bX_o        (composite of k's subtree, rigid on o)
// For unconstrained clusters (one body, G = 1) this is the composite-rigid-body algorithm
// (Featherstone Table 6.2).
#include "cluster/cluster_detail.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "tree/axis_transforms.hpp"

namespace clusterdyn {

namespace {

/// F <- T^* F column by column (force transform of a 6 x d block).
template <typename Block>
void transportForces(const Transform& T, Block&& F) {
  for (Eigen::Index j = 0; j < F.cols(); ++j) F.col(j) = T.actForce(F.col(j));
}

/// F <- oX_b^* F for body b of cluster c, o its output body: the pose of b in o is liMi[b] when b
/// hangs from o (the axis-specialised joint transform, axis_transforms.hpp), else outputTb.
template <typename Block>
void transportToOutput(const Model& tree, const Data& td, const Cluster& c,
                       const ClusterWorkspace& w, int b, Block&& F) {
  if (tree.parent[b] == c.outputBody)
    for (Eigen::Index j = 0; j < F.cols(); ++j)
      F.col(j) = detail::forceInParentFrame(tree, td, b, F.col(j));
  else
    transportForces(w.outputTb[b - c.firstBody], F);
}

}  // namespace

Status clusterMassMatrix(const ClusterModel& model, ClusterData& data, ConstVecRef q) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, nullptr));
  if (data.H.rows() != model.ny)
    return detail::fail(data.treeData, Status::InvalidArgument,
                        "clusterMassMatrix: the workspace was created without dense matrices "
                        "(no H)");
  CDYN_TRY(detail::clusterPositionPass(model, data, q, detail::StateCheck::Check));
  const Model& tree = model.treeModel;
  Data& td = data.treeData;
  std::vector<SpatialInertia>& Ic = td.Ycrb;  // I~_b: rigid composites
  for (int b = 0; b < tree.nbodies; ++b) Ic[b] = tree.inertias[b];
  const int ncl = static_cast<int>(model.clusters.size());
  for (int k = 0; k < ncl; ++k)
    if (model.clusters[k].constrained())
      detail::clusterMotionSubspace(model, data, k, detail::Bias::Skip);
  data.H.setZero();
  std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (int k = ncl - 1; k >= 0; --k) {
    const Cluster& c = model.clusters[k];
    ClusterWorkspace& w = ws[k];
    const int o = c.outputBody;
    auto Hkk = data.H.block(c.y0, c.y0, c.ny, c.ny);
    auto F = w.Ubar.leftCols(c.ny);  // F_k, 6 x d
    if (!c.constrained()) {
      const int b = c.firstBody;
      const Mat6Xs& S = tree.joints[b].S;
      if (S.cols() == 1) {
        F.col(0) = Ic[b] * Motion(S.col(0));
        Hkk(0, 0) = S.col(0).dot(F.col(0));
      } else {
        F.noalias() = Ic[b].matrix() * S;
        Hkk.noalias() = S.transpose() * F;
      }
      if (o >= 0) {
        for (int j = 0; j < c.ny; ++j) F.col(j) = detail::forceInParentFrame(tree, td, b, F.col(j));
        Ic[o] += detail::inertiaInParentFrame(tree, td, b, Ic[b]);
      }
    } else {
      Hkk.setZero();
      if (o >= 0) F.setZero();
      SpatialInertia Io;
      for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
        const int i = 6 * (b - c.firstBody);
        auto Sb = w.S.middleRows<6>(i);
        auto Fb = w.U.middleRows<6>(i);
        for (int j = 0; j < c.ny; ++j) Fb.col(j) = Ic[b] * Motion(Sb.col(j));
        Hkk.noalias() += Sb.transpose() * Fb;
        if (o < 0) continue;
        if (tree.parent[b] == o) {  // pose in o: the joint transform liMi[b]
          for (int j = 0; j < c.ny; ++j)
            F.col(j) += detail::forceInParentFrame(tree, td, b, Fb.col(j));
          if (model.axisymmetricLeaf[b])  // a rotor: same at every angle
            Io += model.axisymmetricInertiaInParent[b];
          else
            Io += detail::inertiaInParentFrame(tree, td, b, Ic[b]);
        } else {
          const Transform& T = w.outputTb[b - c.firstBody];
          for (int j = 0; j < c.ny; ++j) F.col(j) += T.actForce(Fb.col(j));
          Io += Ic[b].transformedBy(T);
        }
      }
      if (o >= 0) Ic[o] += Io;
    }
    // Off-diagonal blocks with every ancestor cluster (the other blocks vanish).
    for (int body = o; body >= 0;) {
      const int l = model.bodyCluster[body];
      const Cluster& cl = model.clusters[l];
      auto Hlk = data.H.block(cl.y0, c.y0, cl.ny, c.ny);
      if (!cl.constrained()) {
        Hlk.noalias() = tree.joints[body].S.transpose() * F;
        if (cl.outputBody >= 0)
          for (int j = 0; j < c.ny; ++j)
            F.col(j) = detail::forceInParentFrame(tree, td, body, F.col(j));
      } else {
        const ClusterWorkspace& wl = ws[l];
        Hlk.noalias() = wl.S.middleRows<6>(6 * (body - cl.firstBody)).transpose() * F;
        if (cl.outputBody >= 0) transportToOutput(tree, td, cl, wl, body, F);
      }
      data.H.block(c.y0, cl.y0, c.ny, cl.ny) = Hlk.transpose();
      body = cl.outputBody;
    }
  }
  detail::ok(td);
  return detail::checkOverflow(td, Status::Ok, data.H, "clusterMassMatrix: H",
                               {{"q", detail::maxAbs(q), 2}});
}

}  // namespace clusterdyn
