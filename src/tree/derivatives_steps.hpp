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
/// of a body of inertia I (6 x 6, [[A, hx], [hx^T, m 1]]) moving with v = [w; vl], in 3 x 3
/// blocks. With W = w x, V = vl x, C = hx (A symmetric, W, V, C skew): A W = -(W A)^T,
/// C V = (V C)^T = vl h^T - (vl . h) 1 transposed, W C - C W = (w x h) x, and I v = [n; f]:
///   B = [[W A + (W A)^T - h vl^T - vl h^T + 2 (vl . h) 1 - n x,  (w x h + m vl - f) x],
///        [(-(w x h) - m vl - f) x,                                0]].
inline void coriolisMatrix(const SpatialInertia& I, const Motion& v, const Force& Iv, Mat6& B) {
  const Vec3 w = v.head<3>(), vl = v.tail<3>();
  const Vec3& h = I.h;
  const Mat3& A = I.Io;
  Mat3 WA;
  WA.col(0) = w.cross(A.col(0));
  WA.col(1) = w.cross(A.col(1));
  WA.col(2) = w.cross(A.col(2));
  const Vec3 wh = w.cross(h), mv = I.mass * vl, f = Iv.tail<3>();
  auto TL = B.topLeftCorner<3, 3>();
  TL = WA + WA.transpose();
  TL.noalias() -= h * vl.transpose();
  TL.noalias() -= vl * h.transpose();
  TL -= skew(Iv.head<3>());
  TL.diagonal().array() += 2.0 * vl.dot(h);
  B.topRightCorner<3, 3>() = skew(wh + mv - f);
  B.bottomLeftCorner<3, 3>() = skew(-wh - mv - f);
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

/// The blocks (k, j) and (j, k) of d tau / dq, d tau / dv and M for a 1-dof joint k (column
/// index ik) and its ancestor-or-self j (eq. D7-D10), from k's row terms a = Ic psi_k,
/// b = Bc^T psi_k, Y (D9), Yv (D10) on fixed-size 6-vectors.
inline void oneDofPairBlocks(const Model& model, DerivativeData& dd, int ik, int j, const Vec6& a,
                             const Vec6& b, const Vec6& Y, const Vec6& Yv, bool self) {
  const int nj = model.nvs[j], ij = model.idx_v[j];
  const Mat6Xs& psij = dd.psi[j];
  const Mat6Xs& uj = dd.ups[j];
  const Mat6Xs& wj = dd.wps[j];
  const Mat6Xs& zj = dd.zps[j];
  MatX& dq = dd.dtau_dq;
  MatX& dv = dd.dtau_dv;
  MatX& M = dd.dtau_da;
  for (int c = 0; c < nj; ++c) {
    const Vec6 pj = psij.col(c);
    dq(ik, ij + c) = -(a.dot(wj.col(c)) + b.dot(uj.col(c)));  // eq. D7
    dv(ik, ij + c) = b.dot(pj) + a.dot(zj.col(c));            // eq. D8
    M(ik, ij + c) = M(ij + c, ik) = a.dot(pj);
    if (self) continue;
    dq(ij + c, ik) = pj.dot(Y);   // eq. D9
    dv(ij + c, ik) = pj.dot(Yv);  // eq. D10
  }
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
  if (nk == 1) {  // fixed-size row terms, one row per ancestor block
    const Vec6 s = psik.col(0);
    const Vec6 a = Ic * s, b = Bc.transpose() * s;
    dd.tau[ik] = s.dot(F);
    Vec6 Y = crossForce(s, F);  // eq. D9
    Y.noalias() -= Ic * dd.wps[k].col(0);
    Y.noalias() -= Bc * dd.ups[k].col(0);
    Vec6 Yv = Bc * s;  // eq. D10
    Yv.noalias() += Ic * dd.zps[k].col(0);
    oneDofPairBlocks(model, dd, ik, k, a, b, Y, Yv, true);
    for (int j = model.parent[k]; j >= 0; j = model.parent[j])
      oneDofPairBlocks(model, dd, ik, j, a, b, Y, Yv, false);
  } else {
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
  }
  const int p = model.parent[k];
  if (p < 0) return;
  dd.oIc[p] += Ic;
  dd.oBc[p] += Bc;
  dd.oF[p] += F;
}

/// Articulated inertia of body i in world axes (Featherstone Table 7.1; world axes need no
/// transform between bodies): oU_i = IA_i psi_i, D_i^-1 (to data.Dinv), and
/// IA_parent += IA_i - oU_i D_i^-1 oU_i^T. data.IA holds world-axes inertias, dd.psi[i] is set.
/// With tau (the ABA of the fused derivatives), also u_i = tau_i - psi_i^T pA_i (to data.u) and
/// pA_parent += pA_i + IA_i c_i + oU_i D_i^-1 (u_i - oU_i^T c_i), i.e. pA + Ia c + U D^-1 u with
/// Ia = IA - U D^-1 U^T (data.pA, data.c in world axes). arm (Model::armature, or null): the
/// joint's armature adds to D_i (D = psi^T U + A_i), so the factorisation is that of M + A. False
/// when D_i is singular to working precision (a pivot below kSingularPivot of its largest
/// diagonal entry: *ratio, PivotText).
inline bool worldArticulatedInertiaStep(const Model& model, Data& data, DerivativeData& dd, int i,
                                        double* ratio, const double* tau = nullptr,
                                        const double* arm = nullptr) {
  const int k = model.nvs[i], p = model.parent[i];
  const Mat6& IA = data.IA[i];
  const Mat6Xs& psi = dd.psi[i];
  Mat6Xs& oU = dd.oU[i];
  if (k == 1) {
    const Vec6 U = IA * psi.col(0);
    oU.col(0) = U;
    double D = psi.col(0).dot(U);
    if (arm) D += arm[model.idx_v[i]];
    if (!(D > 0.0)) {
      *ratio = std::numeric_limits<double>::quiet_NaN();
      return false;
    }
    const double Dinv = data.Dinv[i](0, 0) = 1.0 / D;
    if (tau) data.u[i](0) = tau[model.idx_v[i]] - psi.col(0).dot(data.pA[i]);
    if (p < 0) return true;
    if (tau) {
      const Motion& c = data.c[i];
      data.pA[p] += data.pA[i];
      data.pA[p].noalias() += IA * c;
      data.pA[p] += U * (Dinv * (data.u[i](0) - U.dot(c)));
    }
    const Vec6 UD = U * Dinv;
    Mat6& IAp = data.IA[p];
    for (int c = 0; c < 6; ++c) IAp.col(c) += IA.col(c) - UD * U(c);
    return true;
  }
  using Vk = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;
  if (k == 6) {  // a floating joint: fixed-size products and inverse (no blocked solves)
    const Mat6 S = psi;
    Mat6 U;
    U.noalias() = IA * S;
    oU = U;
    Mat6 D, Dinv;
    D.noalias() = S.transpose() * U;
    if (arm) D.diagonal() += Eigen::Map<const Vec6>(arm + model.idx_v[i]);
    if (!invertPositiveDefinite<6>(D, Dinv, kSingularPivot, ratio)) return false;
    data.Dinv[i] = Dinv;
    if (tau) data.u[i] = Eigen::Map<const Vec6>(tau + model.idx_v[i]) - S.transpose() * data.pA[i];
    if (p < 0) return true;
    const Mat6 UDinv = U * Dinv;
    if (tau) {
      const Motion& c = data.c[i];
      const Vec6 r = data.u[i] - U.transpose() * c;
      data.pA[p] += data.pA[i];
      data.pA[p].noalias() += IA * c;
      data.pA[p].noalias() += UDinv * r;
    }
    data.IA[p] += IA;
    data.IA[p].noalias() -= UDinv * U.transpose();
    return true;
  }
  using MatK = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
  oU.noalias() = IA * psi;
  MatK D(k, k);
  D.noalias() = psi.transpose() * oU;
  if (arm) D.diagonal() += Eigen::Map<const Vk>(arm + model.idx_v[i], k);
  Eigen::LLT<MatK> llt(D);
  if (!choleskyAboveFloor(llt, D, kSingularPivot, ratio)) return false;
  data.Dinv[i].setIdentity(k, k);
  llt.solveInPlace(data.Dinv[i]);
  if (tau) {
    data.u[i].noalias() =
        Eigen::Map<const Vk>(tau + model.idx_v[i], k) - psi.transpose() * data.pA[i];
  }
  if (p < 0) return true;
  Mat6Xs UDinv(6, k);
  UDinv.noalias() = oU * data.Dinv[i];
  if (tau) {
    const Motion& c = data.c[i];
    Vk r = data.u[i];
    r.noalias() -= oU.transpose() * c;
    data.pA[p] += data.pA[i];
    data.pA[p].noalias() += IA * c;
    data.pA[p].noalias() += UDinv * r;
  }
  data.IA[p] += IA;
  data.IA[p].noalias() -= UDinv * oU.transpose();
  return true;
}

/// Row block i's columns past its own, [from, nv) with from = idx_v_i + nv_i: set(c) on the
/// columns of i's strict descendants, zero(c) on the others. end = dd.contiguousSubtreeEnd[i]:
/// with the bodies numbered depth first the descendants own [from, end); otherwise (end < 0)
/// other subtrees' columns lie in between and the descendants' are read run by run
/// (dd.subtreeRuns).
template <class Set, class Zero>
inline void subtreeRowColumns(const DerivativeData& dd, int i, int end, int from, int nv, Set set,
                              Zero zero) {
  int c = from;
  if (end >= 0) {
    for (; c < end; ++c) set(c);
  } else {
    const int* const last = dd.subtreeRuns.data() + 2 * dd.subtreeRunStart[i + 1];
    for (const int* run = dd.subtreeRuns.data() + 2 * dd.subtreeRunStart[i]; run != last;
         run += 2) {
      for (; c < run[0]; ++c) zero(c);
      for (; c < run[1]; ++c) set(c);
    }
  }
  for (; c < nv; ++c) zero(c);
}

/// add(c) on the columns of i's strict descendants (from, end as in subtreeRowColumns).
template <class Add>
inline void subtreeColumns(const DerivativeData& dd, int i, int end, int from, Add add) {
  if (end >= 0) {
    for (int c = from; c < end; ++c) add(c);
    return;
  }
  const int* const last = dd.subtreeRuns.data() + 2 * dd.subtreeRunStart[i + 1];
  for (const int* run = dd.subtreeRuns.data() + 2 * dd.subtreeRunStart[i]; run != last; run += 2)
    for (int c = run[0]; c < run[1]; ++c) add(c);
}

/// minverseBackwardStep for a joint of K (6, or Eigen::Dynamic: any nv_i) degrees of freedom.
template <int K>
void minverseBackwardRows(const Model& model, const Data& data, DerivativeData& dd, int i) {
  using MatS = Eigen::Matrix<double, 6, K, 0, 6, 6>;
  using MatK = Eigen::Matrix<double, K, K, 0, 6, 6>;
  const int k = model.nvs[i], iv = model.idx_v[i], nv = model.nv;
  const int end = dd.contiguousSubtreeEnd[i];
  const MatS psi = dd.psi[i], oU = dd.oU[i];
  const MatK Dinv = data.Dinv[i].topLeftCorner(k, k);
  Mat6X& F = dd.F;
  MatX& Minv = dd.Minv;
  Minv.block(iv, iv, k, k) = Dinv;
  MatS SDinv(6, k);
  SDinv.noalias() = psi * Dinv;
  subtreeRowColumns(
      dd, i, end, iv + k, nv,
      [&](int c) { Minv.col(c).segment(iv, k).noalias() = -SDinv.transpose() * F.col(c); },
      [&](int c) { Minv.col(c).segment(iv, k).setZero(); });
  if (model.parent[i] < 0) return;
  for (int c = iv; c < iv + k; ++c) F.col(c).noalias() = oU * Minv.col(c).segment(iv, k);
  subtreeColumns(dd, i, end, iv + k,
                 [&](int c) { F.col(c).noalias() += oU * Minv.col(c).segment(iv, k); });
}

/// minverseForwardStep for a joint of K (6, or Eigen::Dynamic) degrees of freedom, with the
/// row block mirrored to the lower triangle.
template <int K>
void minverseForwardRows(const Model& model, const Data& data, DerivativeData& dd, int i) {
  using MatS = Eigen::Matrix<double, 6, K, 0, 6, 6>;
  const int k = model.nvs[i], iv = model.idx_v[i], nv = model.nv, p = model.parent[i];
  const bool leaf = dd.subtreeEnd[i] == iv + k;
  const MatS psi = dd.psi[i];
  MatS UDinv(6, k);
  UDinv.noalias() = dd.oU[i] * data.Dinv[i].topLeftCorner(k, k);
  Mat6X& Ai = dd.FA[i];
  MatX& Minv = dd.Minv;
  for (int c = iv; c < nv; ++c) {
    auto row = Minv.col(c).segment(iv, k);
    if (p >= 0) row.noalias() -= UDinv.transpose() * dd.FA[p].col(c);
    if (c >= iv + k) Minv.row(c).segment(iv, k) = row.transpose();
    if (leaf || c < iv + k) continue;
    Motion x = p >= 0 ? Motion(dd.FA[p].col(c)) : Motion::Zero();
    x.noalias() += psi * row;
    Ai.col(c) = x;
  }
  for (int c = 0; c < k; ++c)
    for (int r = c + 1; r < k; ++r) Minv(iv + r, iv + c) = Minv(iv + c, iv + r);
}

/// M^-1 backward step of body i, in world coordinates (no transform per column), from psi_i,
/// oU_i (dd) and D_i^-1 (data): row block i of M^-1 over the columns [idx_v_i, nv) before the
/// forward correction, D^-1 (E_i - psi_i^T F_i) with F_i = d pA_i / d tau (eq. D11), and
/// F_parent += F_i + oU_i Minv_i (eq. D12). F_i is nonzero only over the columns of i's
/// subtree, which no sibling subtree shares: dd.F holds every F_i in place (the children's
/// columns already hold their sums; i's own columns are written, not added). Only i's
/// descendants' columns are read and added (subtreeRowColumns): other subtrees' columns, which
/// lie in between when the bodies are not numbered depth first, hold those subtrees' F, and
/// their row entries are zero here.
inline void minverseBackwardStep(const Model& model, const Data& data, DerivativeData& dd, int i) {
  const Joint& joint = model.joints[i];
  const int k = joint.nv, iv = model.idx_v[i], nv = model.nv;
  const int end = dd.contiguousSubtreeEnd[i];
  const Mat6Xs& psi = dd.psi[i];
  const Mat6Xs& oU = dd.oU[i];
  const auto Dinv = data.Dinv[i].topLeftCorner(k, k);
  Mat6X& F = dd.F;
  MatX& Minv = dd.Minv;
  const int p = model.parent[i];
  if (k == 1) {  // rows of M^-1 are plain scalars per column
    const double d = Dinv(0, 0);
    const Vec6 s = psi.col(0) * -d, u = oU.col(0);
    Minv(iv, iv) = d;
    subtreeRowColumns(
        dd, i, end, iv + 1, nv, [&](int c) { Minv(iv, c) = s.dot(F.col(c)); },
        [&](int c) { Minv(iv, c) = 0.0; });
    if (p < 0) return;
    F.col(iv) = u * d;
    subtreeColumns(dd, i, end, iv + 1, [&](int c) { F.col(c) += u * Minv(iv, c); });
    return;
  }
  if (k == 6)
    minverseBackwardRows<6>(model, data, dd, i);
  else
    minverseBackwardRows<Eigen::Dynamic>(model, data, dd, i);
}

/// M^-1 forward step of body i (world coordinates): Minv_i -= D^-1 oU_i^T A_p over the columns
/// [idx_v_i, nv) and A_i = A_p + psi_i Minv_i, A = d a / d tau (eq. D13), over the columns its
/// descendants read (past its own, and none for a leaf).
inline void minverseForwardStep(const Model& model, const Data& data, DerivativeData& dd, int i) {
  const int k = model.nvs[i], iv = model.idx_v[i], nv = model.nv, p = model.parent[i];
  const bool leaf = dd.subtreeEnd[i] == iv + k;
  const auto Dinv = data.Dinv[i].topLeftCorner(k, k);
  const Mat6Xs& psi = dd.psi[i];
  const Mat6Xs& oU = dd.oU[i];
  Mat6X& Ai = dd.FA[i];
  MatX& Minv = dd.Minv;
  if (k == 1) {
    const Vec6 s = psi.col(0), u = oU.col(0) * -Dinv(0, 0);
    if (p < 0) {
      for (int c = iv + 1; c < nv; ++c) Minv(c, iv) = Minv(iv, c);
      if (!leaf)
        for (int c = iv + 1; c < nv; ++c) Ai.col(c) = s * Minv(iv, c);
      return;
    }
    const Mat6X& Ap = dd.FA[p];
    Minv(iv, iv) += u.dot(Ap.col(iv));
    if (leaf) {
      for (int c = iv + 1; c < nv; ++c) Minv(c, iv) = Minv(iv, c) += u.dot(Ap.col(c));
      return;
    }
    for (int c = iv + 1; c < nv; ++c) {
      const double m = Minv(c, iv) = Minv(iv, c) += u.dot(Ap.col(c));
      Ai.col(c) = Ap.col(c) + s * m;
    }
    return;
  }
  if (k == 6)
    minverseForwardRows<6>(model, data, dd, i);
  else
    minverseForwardRows<Eigen::Dynamic>(model, data, dd, i);
}

/// tau + tau_p(q, v) in data.tauApplied for a model with passive forces (MJCF springs, dampers;
/// as aba() applies them), else tau itself. Out of line (rnea_derivatives.cpp).
const double* appliedTorques(const Model& model, Data& data, const double* q, const double* v,
                             ConstVecRef tau);
/// The joint-dynamics terms of the inverse-dynamics derivatives at (q, v, a) (MJCF armature A,
/// springs and dampers tau_p; docs/mjcf.md §4): tau = rnea + A a - tau_p(q, v), so dd.tau +=
/// A a - tau_p, dd.dtau_da += A, dd.dtau_dq -= d tau_p / dq, dd.dtau_dv -= d tau_p / dv. No-op
/// for a model without joint dynamics. Out of line (rnea_derivatives.cpp): the rigid-body
/// callers keep their code as without it.
void addJointDynamicsDerivatives(const Model& model, const double* q, const double* v,
                                 const double* a, DerivativeData& dd);

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
