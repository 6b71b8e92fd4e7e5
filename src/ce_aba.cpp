// Constraint-embedding articulated-body algorithm (seed 000 Alg. 1).
//
// Single-body clusters without constraints run the ordinary ABA step (Featherstone Table 7.1).
// A multi-body cluster k with m bodies and d independent coordinates uses
//   S_k  = JXJ diag(S_i) G_k                                (6m x d, eq. 15)
//   c_k  = JXJ [diag(S_i) g_k + stack(v_i x S_i qd_i)]      (6m,     eq. 19)
//   U = IA S,  D = S^T U,  u = tau - S^T pA                 (eq. 55-57)
//   IA_out += Xh^T (IA - U D^-1 U^T) Xh,                    (eq. 58)
//   pA_out += Xh^T (pA + Ia c + U D^-1 u)                   (eq. 59)
//   y_ddot = D^-1 (u - U^T (Xh a_out + c)),  a = Xh a_out + c + S y_ddot   (eq. 60-61)
// where Xh (6m x 6) is the one non-zero block column of kX_lambda (stacked b_X_output), and
// IA of a cluster stays block diagonal (children only touch the output body's 6x6 block).
#include "aba_step.hpp"
#include "check.hpp"
#include "cluster_detail.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "tree_step.hpp"

namespace clusterdyn {

namespace {

/// X^T IA_b X added to IAo: when nothing hangs below b, IA_b is still the body's own inertia and
/// the cheap rigid-body transform does (a constant for a rotor on the output body); the full
/// 6x6 transform otherwise.
inline void addTransformedInertia(const ClusterModel& cm, const Data& td, int b, int o,
                                  const Transform& T, Mat6& IAo) {
  const Model& tree = cm.tree;
  if (!tree.children[b].empty())
    IAo += actInertia(T, td.IA[b]);
  else if (cm.axisymmetricLeaf[b] && tree.parent[b] == o)
    cm.axisymmetricInertiaInParent[b].addTo(IAo);
  else
    tree.inertias[b].transformedBy(T).addTo(IAo);
}

/// Pass 2 for a constrained cluster with one independent coordinate (rotor-link pairs, belts,
/// four-bars): eq. 55-59 with S a 6m x 1 column, D a scalar.
Status clusterArticulatedScalar(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                                bool spanningForces) {
  const Model& tree = cm.tree;
  const Cluster& c = cm.clusters[k];
  Data& td = data.tree;
  ClusterWorkspace& w = data.clusters[k];
  const int o = c.outputBody;
  double D = 0.0;
  double u = spanningForces ? w.G.col(0).dot(Eigen::Map<const VecX>(tau + c.v0, c.nv)) : tau[c.y0];
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    const auto s = w.S.block<6, 1>(i, 0);
    auto U = w.U.block<6, 1>(i, 0);
    U.noalias() = td.IA[b] * s;  // eq. 55
    D += s.dot(U);               // eq. 56
    u -= s.dot(td.pA[b]);        // eq. 57
  }
  if (!(D > 0.0))
    return detail::fail(td, Status::NotPositiveDefinite,
                        "articulated inertia of cluster '%s' is singular", c.name.c_str());
  const double Dinv = 1.0 / D;
  w.D(0, 0) = D;
  w.Dinv(0, 0) = Dinv;
  w.u[0] = u;
  if (o < 0) return Status::Ok;
  Force Ubar = Force::Zero(), po = Force::Zero();
  Mat6 IAo = Mat6::Zero();
  double t = u;  // u - U^T c
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    const Transform& T = w.outputTb[b - c.firstBody];
    const auto U = w.U.block<6, 1>(i, 0);
    const Motion cb = w.c.segment<6>(i);
    Ubar += T.actForce(U);
    addTransformedInertia(cm, td, b, o, T, IAo);
    Force pb = td.pA[b];
    pb.noalias() += td.IA[b] * cb;
    po += T.actForce(pb);
    t -= U.dot(cb);
  }
  IAo.noalias() -= (Dinv * Ubar) * Ubar.transpose();  // eq. 58
  po += Ubar * (Dinv * t);                            // eq. 59
  td.IA[o] += IAo;
  td.pA[o] += po;
  return Status::Ok;
}

/// Pass 2 for a constrained cluster with a small fixed number D of independent coordinates
/// (e.g. the knee-ankle belt pair, D = 2): eq. 55-59 with fixed-size matrices.
template <int D>
Status clusterArticulatedFixed(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                               bool spanningForces) {
  using Mat6D = Eigen::Matrix<double, 6, D>;
  using MatDD = Eigen::Matrix<double, D, D>;
  using VecD = Eigen::Matrix<double, D, 1>;
  const Model& tree = cm.tree;
  const Cluster& c = cm.clusters[k];
  Data& td = data.tree;
  ClusterWorkspace& w = data.clusters[k];
  const int o = c.outputBody;
  MatDD Dm = MatDD::Zero();
  VecD u;
  if (spanningForces)
    u.noalias() = w.G.transpose() * Eigen::Map<const VecX>(tau + c.v0, c.nv);
  else
    u = Eigen::Map<const VecD>(tau + c.y0);
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    const Mat6D S = w.S.template block<6, D>(i, 0);
    const Mat6D U = td.IA[b] * S;  // eq. 55
    w.U.template block<6, D>(i, 0) = U;
    Dm.noalias() += S.transpose() * U;        // eq. 56
    u.noalias() -= S.transpose() * td.pA[b];  // eq. 57
  }
  const Eigen::LLT<MatDD> llt(Dm);
  if (llt.info() != Eigen::Success)
    return detail::fail(td, Status::NotPositiveDefinite,
                        "articulated inertia of cluster '%s' is singular", c.name.c_str());
  const MatDD Dinv = llt.solve(MatDD::Identity());
  w.D = Dm;
  w.Dinv = Dinv;
  w.u = u;
  if (o < 0) return Status::Ok;
  Mat6D Ubar = Mat6D::Zero();
  Mat6 IAo = Mat6::Zero();
  Force po = Force::Zero();
  VecD t = u;  // u - U^T c
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    const Transform& T = w.outputTb[b - c.firstBody];
    const Mat6D U = w.U.template block<6, D>(i, 0);
    for (int j = 0; j < D; ++j) Ubar.col(j) += T.actForce(U.col(j));
    addTransformedInertia(cm, td, b, o, T, IAo);
    const Motion cb = w.c.segment<6>(i);
    po += T.actForce(td.pA[b] + td.IA[b] * cb);
    t.noalias() -= U.transpose() * cb;
  }
  const Mat6D UbarDinv = Ubar * Dinv;
  IAo.noalias() -= UbarDinv * Ubar.transpose();  // eq. 58
  po.noalias() += UbarDinv * t;                  // eq. 59
  td.IA[o] += IAo;
  td.pA[o] += po;
  return Status::Ok;
}

/// Pass 3 for the same clusters: eq. 60-61 with fixed-size matrices.
template <int D>
void clusterAccelerationsFixed(const ClusterModel& cm, ClusterData& data, int k, const Motion& ao) {
  using Mat6D = Eigen::Matrix<double, 6, D>;
  using VecD = Eigen::Matrix<double, D, 1>;
  const Cluster& c = cm.clusters[k];
  Data& td = data.tree;
  const ClusterWorkspace& w = data.clusters[k];
  VecD t = w.u;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {  // a' = Xh a_out + c
    const int i = 6 * (b - c.firstBody);
    const Motion ab = w.outputTb[b - c.firstBody].actInvMotion(ao) + w.c.segment<6>(i);
    td.a_gf[b] = ab;
    t.noalias() -= w.U.template block<6, D>(i, 0).transpose() * ab;
  }
  const VecD ydd = Eigen::Matrix<double, D, D>(w.Dinv) * t;  // eq. 60
  data.ydd.segment<D>(c.y0) = ydd;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)  // eq. 61
    td.a_gf[b].noalias() += Mat6D(w.S.template block<6, D>(6 * (b - c.firstBody), 0)) * ydd;
  auto qdd = data.qdd.segment(c.v0, c.nv);
  qdd = w.g;
  qdd.noalias() += w.G * ydd;
}

/// Pass 2 for a constrained cluster with d > 1 independent coordinates (eq. 55-59).
Status clusterArticulated(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                          bool spanningForces) {
  const Model& tree = cm.tree;
  const Cluster& c = cm.clusters[k];
  Data& td = data.tree;
  ClusterWorkspace& w = data.clusters[k];
  const int o = c.outputBody;
  // U = IA S with IA block diagonal (children only touched the output body's block).
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    w.U.middleRows<6>(i).noalias() = td.IA[b] * w.S.middleRows<6>(i);
  }
  w.D.noalias() = w.S.transpose() * w.U;  // eq. 56
  w.llt.compute(w.D);
  if (w.llt.info() != Eigen::Success)
    return detail::fail(td, Status::NotPositiveDefinite,
                        "articulated inertia of cluster '%s' is singular", c.name.c_str());
  w.Dinv.setIdentity();
  w.llt.solveInPlace(w.Dinv);
  if (spanningForces)
    w.u.noalias() = w.G.transpose() * Eigen::Map<const VecX>(tau + c.v0, c.nv);
  else
    w.u = Eigen::Map<const VecX>(tau + c.y0, c.ny);
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)  // eq. 57
    w.u.noalias() -= w.S.middleRows<6>(6 * (b - c.firstBody)).transpose() * td.pA[b];
  if (o < 0) return Status::Ok;
  // Xh^T (IA - U D^-1 U^T) Xh = sum_b X_b^T IA_b X_b - Ubar D^-1 Ubar^T, Ubar = Xh^T U (eq. 58),
  // with X_b = b_X_output applied as a transform, never as a 6m x 6 matrix.
  w.Ubar.setZero();
  Mat6 IAo = Mat6::Zero();
  Force po = Force::Zero();
  w.tmpd = w.u;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    const Transform& T = w.outputTb[b - c.firstBody];
    for (int j = 0; j < c.ny; ++j) w.Ubar.col(j) += T.actForce(w.U.block<6, 1>(i, j));
    addTransformedInertia(cm, td, b, o, T, IAo);
    const Motion cb = w.c.segment<6>(i);
    po += T.actForce(td.pA[b] + td.IA[b] * cb);
    w.tmpd.noalias() -= w.U.middleRows<6>(i).transpose() * cb;  // u - U^T c
  }
  w.UbarDinv.noalias() = w.Ubar * w.Dinv;
  IAo.noalias() -= w.UbarDinv * w.Ubar.transpose();
  po.noalias() += w.UbarDinv * w.tmpd;  // eq. 59: Xh^T (pA + Ia c + U D^-1 u)
  td.IA[o] += IAo;
  td.pA[o] += po;
  return Status::Ok;
}

Status ceAbaCore(const ClusterModel& cm, ClusterData& data, ConstVecRef q, ConstVecRef v,
                 const double* tau, bool spanningForces, const Force* fext) {
  const Model& tree = cm.tree;
  Data& td = data.tree;
  const int ncl = static_cast<int>(cm.clusters.size());
  CDYN_TRY(detail::clusterVelocityPass(cm, data, q, v.data(), true, true));

  // Pass 1 (rest): inertias, bias forces, cluster motion subspaces.
  for (int b = 0; b < tree.nbodies; ++b) {
    const SpatialInertia& I = tree.inertias[b];
    td.IA[b] = I.matrix();
    td.pA[b] = crossForce(td.v[b], I * td.v[b]);
    if (fext) td.pA[b] -= fext[b];
  }
  for (int k = 0; k < ncl; ++k)
    if (cm.clusters[k].constrained()) detail::clusterMotionSubspace(cm, data, k, true);

  // Pass 2: articulated inertias, leaf clusters to root.
  for (int k = ncl - 1; k >= 0; --k) {
    const Cluster& c = cm.clusters[k];
    if (!c.constrained()) {
      const int b = c.firstBody;  // the ABA step (Featherstone Table 7.1)
      CDYN_TRY(detail::articulatedBodyStep(tree, td, b, c.outputBody,
                                           spanningForces ? tau + tree.idx_v[b] : tau + c.y0));
    } else if (c.ny == 1) {
      CDYN_TRY(clusterArticulatedScalar(cm, data, k, tau, spanningForces));
    } else {
      switch (c.ny) {
        case 2:
          CDYN_TRY(clusterArticulatedFixed<2>(cm, data, k, tau, spanningForces));
          break;
        case 3:
          CDYN_TRY(clusterArticulatedFixed<3>(cm, data, k, tau, spanningForces));
          break;
        default:
          CDYN_TRY(clusterArticulated(cm, data, k, tau, spanningForces));
      }
    }
  }

  // Pass 3: accelerations, root cluster to leaves.
  const Motion a0 = detail::gravityAcceleration(cm.tree);
  for (int k = 0; k < ncl; ++k) {
    const Cluster& c = cm.clusters[k];
    const int o = c.outputBody;
    const Motion& ao = o >= 0 ? td.a_gf[o] : a0;
    if (!c.constrained()) {
      const int b = c.firstBody;
      detail::accelerationStep(tree, td, b, ao, data.qdd.data() + tree.idx_v[b]);
      data.ydd.segment(c.y0, c.ny) = data.qdd.segment(tree.idx_v[b], c.nv);
      continue;
    }
    ClusterWorkspace& w = data.clusters[k];
    if (c.ny == 1) {
      double t = w.u[0];
      for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {  // a' = Xh a_out + c
        const int i = 6 * (b - c.firstBody);
        const Motion ab = w.outputTb[b - c.firstBody].actInvMotion(ao) + w.c.segment<6>(i);
        td.a_gf[b] = ab;
        t -= w.U.block<6, 1>(i, 0).dot(ab);
      }
      const double ydd = w.Dinv(0, 0) * t;  // eq. 60
      data.ydd[c.y0] = ydd;
      for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)  // eq. 61
        td.a_gf[b].noalias() += w.S.block<6, 1>(6 * (b - c.firstBody), 0) * ydd;
      auto qdd = data.qdd.segment(c.v0, c.nv);
      qdd = w.g;
      qdd.noalias() += w.G.col(0) * ydd;
      continue;
    }
    if (c.ny == 2 || c.ny == 3) {
      if (c.ny == 2)
        clusterAccelerationsFixed<2>(cm, data, k, ao);
      else
        clusterAccelerationsFixed<3>(cm, data, k, ao);
      continue;
    }
    w.tmpd = w.u;
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {  // a' = Xh a_out + c
      const int i = 6 * (b - c.firstBody);
      const Motion ab = w.outputTb[b - c.firstBody].actInvMotion(ao) + w.c.segment<6>(i);
      td.a_gf[b] = ab;
      w.tmpd.noalias() -= w.U.middleRows<6>(i).transpose() * ab;
    }
    auto ydd = data.ydd.segment(c.y0, c.ny);
    ydd.noalias() = w.Dinv * w.tmpd;                             // eq. 60
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)  // eq. 61
      td.a_gf[b].noalias() += w.S.middleRows<6>(6 * (b - c.firstBody)) * ydd;
    auto qdd = data.qdd.segment(c.v0, c.nv);
    qdd = w.g;
    qdd.noalias() += w.G * ydd;
  }
  return detail::ok(td);
}

}  // namespace

Status ceAba(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v,
             ConstVecRef tauY, const Force* fext) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::checkVector(data.tree, tauY, model.ny, "tau"));
  CDYN_TRY(detail::checkForces(model.tree, data.tree, fext));
  return ceAbaCore(model, data, q, v, tauY.data(), false, fext);
}

Status ceAbaSpanningForces(const ClusterModel& model, ClusterData& data, ConstVecRef q,
                           ConstVecRef v, ConstVecRef tauSpanning, const Force* fext) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::checkVector(data.tree, tauSpanning, model.tree.nv, "tau"));
  CDYN_TRY(detail::checkForces(model.tree, data.tree, fext));
  return ceAbaCore(model, data, q, v, tauSpanning.data(), true, fext);
}

Status ceAbaIndependent(const ClusterModel& model, ClusterData& data, ConstVecRef y,
                        ConstVecRef ydot, ConstVecRef tauY, const Force* fext) {
  if (data.model != &model)
    return detail::fail(data.tree, Status::WorkspaceMismatch,
                        "the workspace was created for another model");
  CDYN_TRY(detail::checkVector(data.tree, tauY, model.ny, "tau"));
  CDYN_TRY(detail::checkForces(model.tree, data.tree, fext));
  CDYN_TRY(independentToSpanning(model, data, y, ydot));
  return ceAbaCore(model, data, data.q, data.v, tauY.data(), false, fext);
}

}  // namespace clusterdyn
