// Constraint-embedding RNEA (seed 000 §V): spanning accelerations v_dot = G y_ddot + g per
// cluster, Newton-Euler on the tree, then tau_k = S_k^T f_k = G_k^T (S^T f)_k (eq. 62-64).
#include "check.hpp"
#include "cluster_detail.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/crba.hpp"
#include "tree_step.hpp"

namespace clusterdyn {

namespace {

Status ceRneaCore(const ClusterModel& cm, ClusterData& data, ConstVecRef q, const double* v,
                  const double* ydd, const Force* fext, VecX& out, bool checkState) {
  const Model& tree = cm.tree;
  Data& td = data.tree;
  CDYN_TRY(detail::clusterVelocityPass(cm, data, q, v, true, checkState));
  const Motion a0 = detail::gravityAcceleration(tree);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    auto qdd = data.qdd.segment(c.v0, c.nv);
    if (c.constrained()) {
      const ClusterWorkspace& w = data.clusters[k];
      qdd = w.g;
      if (ydd) qdd.noalias() += w.G * Eigen::Map<const VecX>(ydd + c.y0, c.ny);
    } else {
      if (ydd)
        qdd = Eigen::Map<const VecX>(ydd + c.y0, c.ny);
      else
        qdd.setZero();
    }
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
      const int p = tree.parent[b];
      Motion& a = td.a_gf[b];
      a = td.liMi[b].actInvMotion(p >= 0 ? td.a_gf[p] : a0) + td.c[b];
      a += detail::jointMotion(tree.joints[b], data.qdd.data() + tree.idx_v[b]);
      const SpatialInertia& I = tree.inertias[b];
      td.f[b] = I * a + crossForce(td.v[b], I * td.v[b]);
      if (fext) td.f[b] -= fext[b];
    }
  }
  for (int b = tree.nbodies - 1; b >= 0; --b) {
    const Joint& joint = tree.joints[b];
    td.tau.segment(tree.idx_v[b], joint.nv).noalias() = joint.S.transpose() * td.f[b];
    const int p = tree.parent[b];
    if (p >= 0) td.f[p] += td.liMi[b].actForce(td.f[b]);
  }
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (c.constrained())
      out.segment(c.y0, c.ny).noalias() =
          data.clusters[k].G.transpose() * td.tau.segment(c.v0, c.nv);
    else
      out.segment(c.y0, c.ny) = td.tau.segment(c.v0, c.nv);
  }
  return detail::ok(td);
}

}  // namespace

Status ceRnea(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v,
              ConstVecRef ydd, const Force* fext) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::checkVector(data.tree, ydd, model.ny, "ydd"));
  CDYN_TRY(detail::checkForces(model.tree, data.tree, fext));
  return ceRneaCore(model, data, q, v.data(), ydd.data(), fext, data.tauY, true);
}

Status clusterBias(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  return ceRneaCore(model, data, q, v.data(), nullptr, nullptr, data.C, true);
}

Status clusterMassMatrix(const ClusterModel& model, ClusterData& data, ConstVecRef q) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, nullptr));
  CDYN_TRY(detail::clusterVelocityPass(model, data, q, nullptr, false, true));
  CDYN_TRY(crba(model.tree, data.tree, q));
  const MatX& M = data.tree.M;
  data.H.setZero();
  // H_kl = G_k^T M_kl G_l for l = k and every ancestor cluster l of k (other blocks vanish);
  // G = identity for clusters without constraints.
  for (int k = 0; k < static_cast<int>(model.clusters.size()); ++k) {
    const Cluster& ck = model.clusters[k];
    const MatX& Gk = data.clusters[k].G;
    for (int l = k; l >= 0; l = model.clusters[l].parent) {
      const Cluster& cl = model.clusters[l];
      const MatX& Gl = data.clusters[l].G;
      auto Hkl = data.H.block(ck.y0, cl.y0, ck.ny, cl.ny);
      const auto Mkl = M.block(ck.v0, cl.v0, ck.nv, cl.nv);
      if (!ck.constrained() && !cl.constrained()) {
        Hkl = Mkl;
      } else if (!ck.constrained()) {
        Hkl.noalias() = Mkl * Gl;
      } else if (!cl.constrained()) {
        Hkl.noalias() = Gk.transpose() * Mkl;
      } else {
        auto tmp = data.Hblock.topLeftCorner(ck.nv, cl.ny);
        tmp.noalias() = Mkl * Gl;
        Hkl.noalias() = Gk.transpose() * tmp;
      }
      if (l != k) data.H.block(cl.y0, ck.y0, cl.ny, ck.ny) = Hkl.transpose();
    }
  }
  return detail::ok(data.tree);
}

}  // namespace clusterdyn
