// The per-body passes of the analytical RNEA derivatives (Carpentier & Mansard 2018, world-frame
// recursion; closed form of docs/derivatives.md, equations D1-D14) and of the articulated-body
// inverse of the joint-space inertia matrix. Each step touches one body (and its ancestors for
// the pair terms), so a cluster-tree version can call them for the bodies of a cluster.
#pragma once

#include <Eigen/Cholesky>

#include "clusterdyn/derivatives.hpp"
#include "core/small_spd.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn::detail {

/// B = v x* I - I (v x) + (I v) bar-x*, where h bar-x* u = u x* h (eq. D3): the Coriolis matrix
/// of a body of inertia I (6 x 6, [[A, hx], [hx^T, m 1]]) moving with v, in 3 x 3 blocks.
inline void coriolisMatrix(const SpatialInertia& I, const Motion& v, const Force& Iv, Mat6& B) {
  const Mat3 W = skew(v.head<3>()), V = skew(v.tail<3>()), C = skew(I.h);
  const Mat3& A = I.Io;
  const double m = I.mass;
  // v x* I = [[W A + V C^T, W C + m V], [W C^T, m W]];  I v x = [[A W + C V, C W], [C^T W + m V,
  // m W]];  h bar-x* = -[[n x, f x], [f x, 0]] with I v = [n; f].
  const Mat3 N = skew(Iv.head<3>()), F = skew(Iv.tail<3>());
  B.topLeftCorner<3, 3>().noalias() = W * A - A * W;
  B.topLeftCorner<3, 3>().noalias() -= V * C + C * V;  // C^T = -C
  B.topLeftCorner<3, 3>() -= N;
  B.topRightCorner<3, 3>().noalias() = W * C - C * W;
  B.topRightCorner<3, 3>() += m * V - F;
  B.bottomLeftCorner<3, 3>().noalias() = C * W - W * C;  // W C^T - C^T W
  B.bottomLeftCorner<3, 3>() -= m * V + F;
  B.bottomRightCorner<3, 3>().setZero();
}

/// Forward step of body i (eq. D1-D6): placement, psi_i = 0X_i S_i, ov_i, oa_i (gravity
/// offset a0 at the root), u_i, w_i from the parent's motion, and the body's own f_i, I_i, B_i in
/// world coordinates as the seeds of the subtree sums oF, oIc, oBc. inertia: the body's inertia
/// in its frame (model.inertias[i] when null; the cluster derivatives pass a body with its
/// rotors).
inline void derivativeForwardStep(const Model& model, Data& data, DerivativeData& dd, int i,
                                  ConstVecRef q, const double* v, const double* a,
                                  const Force* fext, const Motion& a0, bool placements = true,
                                  const SpatialInertia* inertia = nullptr) {
  if (placements) placementStep(model, data, i, q);
  const Transform& oMi = data.oMi[i];
  const Joint& joint = model.joints[i];
  const int p = model.parent[i], k = joint.nv, iv = model.idx_v[i];
  const Motion ovp = p >= 0 ? dd.ov[p] : Motion::Zero();
  const Motion& oap = p >= 0 ? dd.oa[p] : a0;
  Mat6Xs& psi = dd.psi[i];
  Mat6Xs& u = dd.ups[i];
  Mat6Xs& w = dd.wps[i];
  Mat6Xs& z = dd.zps[i];
  Motion vJ = Motion::Zero(), aJ = Motion::Zero();
  for (int c = 0; c < k; ++c) {
    psi.col(c) = oMi.actMotion(joint.S.col(c));
    vJ += psi.col(c) * v[iv + c];
    aJ += psi.col(c) * a[iv + c];
  }
  const Motion& ov = dd.ov[i] = ovp + vJ;                        // eq. D1
  const Motion& oa = dd.oa[i] = oap + aJ + crossMotion(ov, vJ);  // eq. D1
  const Motion ovSum = ovp + ov;
  for (int c = 0; c < k; ++c) {
    u.col(c) = crossMotion(psi.col(c), ovp);                               // eq. D4
    w.col(c) = crossMotion(psi.col(c), oap) - crossMotion(u.col(c), ovp);  // eq. D5
    z.col(c) = -crossMotion(psi.col(c), ovSum);                            // eq. D6
  }
  const SpatialInertia oI = (inertia ? *inertia : model.inertias[i]).transformedBy(oMi);
  const Force h = oI * ov;
  Force& f = dd.oF[i];
  f = oI * oa + crossForce(ov, h);  // eq. D2
  if (fext) f -= oMi.actForce(fext[i]);
  dd.oIc[i] = oI.matrix();
  coriolisMatrix(oI, ov, h, dd.oBc[i]);  // eq. D3
}

/// Backward step of body k, once its subtree sums oIc_k, oBc_k, oF_k are complete: tau_k, then
/// the blocks (k, j) and (j, k) of d tau / dq, d tau / dv and M for k and every ancestor j
/// (eq. D7-D10); finally the sums are carried to the parent.
inline void derivativeBackwardStep(const Model& model, DerivativeData& dd, int k) {
  const int nk = model.nvs[k], ik = model.idx_v[k];
  const Mat6Xs& psik = dd.psi[k];
  const Mat6& Ic = dd.oIc[k];
  const Mat6& Bc = dd.oBc[k];
  const Force& F = dd.oF[k];
  Mat6Xs IcPsi(6, nk), BcTPsi(6, nk), Y(6, nk), Yv(6, nk);
  for (int c = 0; c < nk; ++c) {
    IcPsi.col(c).noalias() = Ic * psik.col(c);
    BcTPsi.col(c).noalias() = Bc.transpose() * psik.col(c);
    dd.tau[ik + c] = psik.col(c).dot(F);
    Y.col(c) = crossForce(psik.col(c), F);  // eq. D9
    Y.col(c).noalias() -= Ic * dd.wps[k].col(c);
    Y.col(c).noalias() -= Bc * dd.ups[k].col(c);
    Yv.col(c).noalias() = Bc * psik.col(c);  // eq. D10
    Yv.col(c).noalias() += Ic * dd.zps[k].col(c);
  }
  MatX& dq = dd.dtau_dq;
  MatX& dv = dd.dtau_dv;
  MatX& M = dd.dtau_da;
  for (int j = k; j >= 0; j = model.parent[j]) {
    const int nj = model.nvs[j], ij = model.idx_v[j];
    const Mat6Xs& psij = dd.psi[j];
    const Mat6Xs& uj = dd.ups[j];
    const Mat6Xs& wj = dd.wps[j];
    const Mat6Xs& zj = dd.zps[j];
    if (nk == 1 && nj == 1) {  // two 1-dof joints: the same terms on fixed-size 6-vectors
      const Vec6 a = IcPsi.col(0), b = BcTPsi.col(0);
      const auto pj = psij.col(0);
      dq(ik, ij) = -(a.dot(wj.col(0)) + b.dot(uj.col(0)));
      dv(ik, ij) = b.dot(pj) + a.dot(zj.col(0));
      M(ik, ij) = M(ij, ik) = a.dot(pj);
      if (j == k) continue;
      dq(ij, ik) = pj.dot(Y.col(0));
      dv(ij, ik) = pj.dot(Yv.col(0));
      continue;
    }
    for (int r = 0; r < nk; ++r)
      for (int c = 0; c < nj; ++c) {
        // Rows of k, columns of its ancestor-or-self j (eq. D7, D8).
        dq(ik + r, ij + c) = -(IcPsi.col(r).dot(wj.col(c)) + BcTPsi.col(r).dot(uj.col(c)));
        dv(ik + r, ij + c) = BcTPsi.col(r).dot(psij.col(c)) + IcPsi.col(r).dot(zj.col(c));
        const double m = IcPsi.col(r).dot(psij.col(c));
        M(ik + r, ij + c) = m;
        M(ij + c, ik + r) = m;
        if (j == k) continue;
        // Rows of the strict ancestor j, columns of k (eq. D9, D10).
        dq(ij + c, ik + r) = psij.col(c).dot(Y.col(r));
        dv(ij + c, ik + r) = psij.col(c).dot(Yv.col(r));
      }
  }
  const int p = model.parent[k];
  if (p < 0) return;
  dd.oIc[p] += Ic;
  dd.oBc[p] += Bc;
  dd.oF[p] += F;
}

/// psi_i = 0X_i S_i and oU_i = 0X_i^* U_i from the body-coordinate factors left by aba()
/// (data.U, data.oMi), for the world-coordinate M^-1 passes.
inline void worldFactorsFromBody(const Model& model, const Data& data, DerivativeData& dd, int i) {
  const Joint& joint = model.joints[i];
  const Transform& oMi = data.oMi[i];
  for (int c = 0; c < joint.nv; ++c) {
    dd.psi[i].col(c) = oMi.actMotion(joint.S.col(c));
    dd.oU[i].col(c) = oMi.actForce(data.U[i].col(c));
  }
}

/// Articulated inertia of body i in world axes (Featherstone Table 7.1 at v = 0, tau = 0; world
/// axes need no transform between bodies): oU_i = IA_i psi_i, D_i^-1 (to data.Dinv), and
/// IA_parent += IA_i - oU_i D_i^-1 oU_i^T. data.IA holds world-axes inertias, dd.psi[i] is set.
/// False when D_i is singular to working precision (a pivot below kSingularPivot of its largest
/// diagonal entry: *ratio, PivotText).
inline bool worldArticulatedInertiaStep(const Model& model, Data& data, DerivativeData& dd, int i,
                                        double* ratio) {
  const int k = model.nvs[i], p = model.parent[i];
  const Mat6& IA = data.IA[i];
  const Mat6Xs& psi = dd.psi[i];
  Mat6Xs& oU = dd.oU[i];
  if (k == 1) {
    const Vec6 U = IA * psi.col(0);
    oU.col(0) = U;
    const double D = psi.col(0).dot(U);
    if (!(D > 0.0)) {
      *ratio = std::numeric_limits<double>::quiet_NaN();
      return false;
    }
    data.Dinv[i](0, 0) = 1.0 / D;
    if (p < 0) return true;
    data.IA[p] += IA;
    data.IA[p].noalias() -= (U * (1.0 / D)) * U.transpose();
    return true;
  }
  if (k == 6) {  // a floating joint: fixed-size products and inverse (no blocked solves)
    const Mat6 S = psi;
    Mat6 U;
    U.noalias() = IA * S;
    oU = U;
    Mat6 D, Dinv;
    D.noalias() = S.transpose() * U;
    if (!invertPositiveDefinite<6>(D, Dinv, kSingularPivot, ratio)) return false;
    data.Dinv[i] = Dinv;
    if (p < 0) return true;
    const Mat6 UDinv = U * Dinv;
    data.IA[p] += IA;
    data.IA[p].noalias() -= UDinv * U.transpose();
    return true;
  }
  using MatK = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
  oU.noalias() = IA * psi;
  MatK D(k, k);
  D.noalias() = psi.transpose() * oU;
  Eigen::LLT<MatK> llt(D);
  if (!choleskyAboveFloor(llt, D, kSingularPivot, ratio)) return false;
  data.Dinv[i].setIdentity(k, k);
  llt.solveInPlace(data.Dinv[i]);
  if (p < 0) return true;
  Mat6Xs UDinv(6, k);
  UDinv.noalias() = oU * data.Dinv[i];
  data.IA[p] += IA;
  data.IA[p].noalias() -= UDinv * oU.transpose();
  return true;
}

/// M^-1 backward step of body i, in world coordinates (no transform per column), from psi_i,
/// oU_i (dd) and D_i^-1 (data): row block i of M^-1 over the columns [idx_v_i, nv) before the
/// forward correction, D^-1 (E_i - psi_i^T F_i) with F_i = d pA_i / d tau (eq. D11), and
/// F_parent += F_i + oU_i Minv_i (eq. D12).
inline void minverseBackwardStep(const Model& model, const Data& data, DerivativeData& dd, int i) {
  const Joint& joint = model.joints[i];
  const int k = joint.nv, iv = model.idx_v[i], end = dd.subtreeEnd[i], nv = model.nv;
  const Mat6Xs& psi = dd.psi[i];
  const Mat6Xs& oU = dd.oU[i];
  const auto Dinv = data.Dinv[i].topLeftCorner(k, k);
  const Mat6X& Fi = dd.FA[i];
  MatX& Minv = dd.Minv;
  const int p = model.parent[i];
  if (k == 1) {  // rows of M^-1 are plain scalars per column
    const double d = Dinv(0, 0);
    const Vec6 s = psi.col(0), u = oU.col(0);
    Minv(iv, iv) = d;
    for (int c = iv + 1; c < end; ++c) Minv(iv, c) = -d * s.dot(Fi.col(c));
    for (int c = end; c < nv; ++c) Minv(iv, c) = 0.0;
    if (p < 0) return;
    Mat6X& Fp = dd.FA[p];
    for (int c = iv; c < end; ++c) Fp.col(c) += Fi.col(c) + u * Minv(iv, c);
    return;
  }
  using Vk = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;
  Minv.block(iv, iv, k, k) = Dinv;
  for (int c = iv + k; c < end; ++c) {
    const Vk sf = psi.transpose() * Fi.col(c);
    Minv.col(c).segment(iv, k).noalias() = -(Dinv * sf);
  }
  for (int c = end; c < nv; ++c) Minv.col(c).segment(iv, k).setZero();
  if (p < 0) return;
  Mat6X& Fp = dd.FA[p];
  for (int c = iv; c < end; ++c) {
    Fp.col(c) += Fi.col(c);
    Fp.col(c).noalias() += oU * Minv.col(c).segment(iv, k);
  }
}

/// M^-1 forward step of body i (world coordinates): Minv_i -= D^-1 oU_i^T A_p and
/// A_i = A_p + psi_i Minv_i over the columns [idx_v_i, nv), A = d a / d tau (eq. D13); A_i
/// overwrites F_i.
inline void minverseForwardStep(const Model& model, const Data& data, DerivativeData& dd, int i) {
  const int k = model.nvs[i], iv = model.idx_v[i], nv = model.nv, p = model.parent[i];
  const auto Dinv = data.Dinv[i].topLeftCorner(k, k);
  const Mat6Xs& psi = dd.psi[i];
  const Mat6Xs& oU = dd.oU[i];
  Mat6X& Ai = dd.FA[i];
  MatX& Minv = dd.Minv;
  if (k == 1) {
    const double d = Dinv(0, 0);
    const Vec6 s = psi.col(0), u = oU.col(0);
    if (p < 0) {
      for (int c = iv; c < nv; ++c) Ai.col(c) = s * Minv(iv, c);
      return;
    }
    const Mat6X& Ap = dd.FA[p];
    for (int c = iv; c < nv; ++c) {
      const double m = Minv(iv, c) -= d * u.dot(Ap.col(c));
      Ai.col(c) = Ap.col(c) + s * m;
    }
    return;
  }
  using Vk = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;
  for (int c = iv; c < nv; ++c) {
    auto row = Minv.col(c).segment(iv, k);
    Motion x = Motion::Zero();
    if (p >= 0) {
      x = dd.FA[p].col(c);
      const Vk ux = oU.transpose() * x;
      row.noalias() -= Dinv * ux;
    }
    x.noalias() += psi * row;
    Ai.col(c) = x;
  }
}

/// Workspaces, sizes, finite values and unit quaternions of (q, v, x, fext) (x named xName).
Status checkDerivativeArguments(const Model& model, Data& data, const DerivativeData& dd,
                                ConstVecRef q, ConstVecRef v, ConstVecRef x, const char* xName,
                                const Force* fext);
/// The two passes of the RNEA derivatives (rnea_derivatives.cpp) without argument checks;
/// placements = false reuses data.oMi (current for q, e.g. after aba()).
void rneaDerivativePasses(const Model& model, Data& data, DerivativeData& dd, ConstVecRef q,
                          const double* v, const double* a, const Force* fext,
                          bool placements = true);

}  // namespace clusterdyn::detail
