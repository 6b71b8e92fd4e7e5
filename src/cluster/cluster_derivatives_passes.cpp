// The spanning-tree derivative passes of the cluster-tree derivatives (Carpentier & Mansard
// 2018, D1-D10, on the spanning tree of Chignoli et al. 2023): the rotors seen from their output
// body (R1, R2), and for models without loop joints the backward pass with the cluster rows
// folded in, which writes G^T (d tau / dq, d tau / dv, M) G directly (F1-F3; docs/
// derivatives.md, "Rotors in the spanning-tree passes" and "Cluster rows folded").
#include "cluster/cluster_derivatives_detail.hpp"
#include "tree/derivatives_steps.hpp"

namespace clusterdyn::detail {

namespace {

using RowTerms = ClusterDerivativeData::RowTerms;
using GEntry = ClusterDerivativeData::GEntry;

/// The three outputs d tau_y / dy, d tau_y / d y_dot, H (ny x ny, column-major) by their data.
struct Outputs {
  double *dq, *dv, *M;
  Eigen::Index n;
  Eigen::Index at(int row, int col) const { return row + col * n; }
};

inline bool inCluster(const Cluster& c, int b) {
  return b >= c.firstBody && b < c.firstBody + c.nbodies;
}

/// A rotor R (OutputFrameRotor: an axisymmetric leaf on a revolute joint, hanging from its
/// output body o) in the spanning-tree derivative passes, seen from o, where its axis s and
/// inertia I are constants: world psi_R = 0X_o s and I psi_R = 0X_o^* (I s) from o's placement,
/// no joint transform, inertia or Coriolis matrix of its own. I is invariant under the rotation
/// about s (I (s x) = (s x*) I, to the 1e-12 of the rotor test of the model builder), which
/// reduces the rotor's terms of D1-D10 to (docs/derivatives.md, eq. R1, R2; v_o = ov_o,
/// a_o = oa_o, b = v_o x* I psi_R):
///  * f_R = I a_o + v_o x* I v_o + I psi_R qdd + b qd: o's step carries the first two with its
///    inertia plus its rotors' (rneaInertias), the rest is added to oF_o here;
///  * B(I, v_R) = B(I, v_o) + qd (I psi_R) bar-x*: the first in o's B (rneaInertias), the second
///    added to oBc_o here; oIc_o gets I through rneaInertias;
///  * tau_R = (I psi_R) . a_o + s^T I s qdd; Bc_R^T psi_R = Yv_R = b; Y_R = 0 (column R of
///    d tau / dq vanishes: turning the rotor about its axis changes nothing), and
///    dv(R, R) = 0.
/// Forward part: psi_R, ov_R, oa_R (for readers of dd.tree), tau_R, the additions to o's sums,
/// and the rotor's row terms (terms: I psi_R, b, Y_R = 0, b).
void rotorForwardStep(const OutputFrameRotor& r, const Data& td, DerivativeData& t, int R,
                      const double* v, const double* a, const Motion& a0, RowTerms& terms) {
  const int o = r.parent, iv = r.iv;
  const double qd = v[iv], qdd = a[iv];
  const Motion psi = o >= 0 ? td.oMi[o].actMotion(r.axis) : r.axis;
  const Force Is = o >= 0 ? td.oMi[o].actForce(r.Iaxis) : r.Iaxis;
  const Motion ovo = o >= 0 ? t.ov[o] : Motion::Zero();
  const Motion& oao = o >= 0 ? t.oa[o] : a0;
  const Motion u = crossMotion(psi, ovo);  // D4
  t.psi[R].col(0) = psi;
  t.ups[R].col(0) = u;
  t.ov[R] = ovo + psi * qd;            // D1
  t.oa[R] = oao + psi * qdd - u * qd;  // D1: v_R x psi qd = v_o x psi qd
  t.tau[iv] = Is.dot(oao) + r.axisInertia * qdd;
  terms.Ipsi = Is;
  terms.Y.setZero();
  if (o < 0) {
    terms.Bpsi.setZero();
    terms.Yv.setZero();
    return;
  }
  const Force b = crossForce(ovo, Is);
  terms.Bpsi = b;
  terms.Yv = b;
  t.oF[o] += Is * qdd + b * qd;
  // + qd (I psi) bar-x* = -qd [[n x, f x], [f x, 0]] with I psi = [n; f] (eq. D3).
  const Mat3 N = skew(Is.head<3>() * qd), F = skew(Is.tail<3>() * qd);
  Mat6& B = t.oBc[o];
  B.topLeftCorner<3, 3>() -= N;
  B.topRightCorner<3, 3>() -= F;
  B.bottomLeftCorner<3, 3>() -= F;
}

/// Backward part of rotor R (rotorForwardStep): its row of d tau / dq, d tau / dv and M over o
/// and o's ancestors (D7, D8 with I psi_R and b), its column of d tau / dv (D10: psi_j . b), its
/// column of d tau / dq zero.
void rotorBackwardStep(const Model& tree, const OutputFrameRotor& r, const RowTerms& terms,
                       DerivativeData& t) {
  const int o = r.parent, iv = r.iv;
  const Force& Is = terms.Ipsi;
  const Force& b = terms.Bpsi;
  MatX& dq = t.dtau_dq;
  MatX& dv = t.dtau_dv;
  MatX& M = t.dtau_da;
  dq(iv, iv) = 0.0;
  dv(iv, iv) = 0.0;
  M(iv, iv) = r.axisInertia;
  for (int j = o; j >= 0; j = tree.parent[j]) {
    const int ij = tree.idx_v[j];
    for (int c = 0; c < tree.nvs[j]; ++c) {
      const auto pj = t.psi[j].col(c);
      dq(iv, ij + c) = -(Is.dot(t.wps[j].col(c)) + b.dot(t.ups[j].col(c)));
      dv(iv, ij + c) = b.dot(pj) + Is.dot(t.zps[j].col(c));
      M(iv, ij + c) = M(ij + c, iv) = Is.dot(pj);
      dq(ij + c, iv) = 0.0;
      dv(ij + c, iv) = pj.dot(b);
    }
  }
}

/// The forward pass (D1-D6) at (q, v, a): every body by derivativeForwardStep, or, with
/// outputFrame (no external forces), the rotors by rotorForwardStep and the other bodies with
/// their rotors' inertia (rneaInertias).
void forwardPass(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd,
                 ConstVecRef q, const double* v, const double* a, const Force* fext,
                 bool placements, bool outputFrame) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  DerivativeData& t = dd.tree;
  const ClusterScratch& s = fullScratch(data);
  const Motion a0 = gravityAcceleration(tree);
  for (int i = 0; i < tree.nbodies; ++i) {
    const int r = outputFrame ? s.rotorSlot[i] : -1;
    if (r >= 0)
      rotorForwardStep(s.rotors[r], td, t, i, v, a, a0, dd.dofTerms[tree.idx_v[i]]);
    else
      derivativeForwardStep(tree, td, t, i, q, v, a, fext, a0, placements,
                            outputFrame ? &s.rneaInertias[i] : nullptr);
  }
}

/// Body b's row terms (D7-D10) from its completed subtree sums: Ic psi, Bc^T psi, Y (D9), Yv
/// (D10) and tau per joint column; then the sums carried to the parent.
void bodyRowTerms(const Model& tree, ClusterDerivativeData& dd, int b) {
  DerivativeData& t = dd.tree;
  const int nb = tree.nvs[b], ib = tree.idx_v[b];
  const Mat6& Ic = t.oIc[b];
  const Mat6& Bc = t.oBc[b];
  const Force& F = t.oF[b];
  for (int m = 0; m < nb; ++m) {
    const Motion psi = t.psi[b].col(m);
    RowTerms& x = dd.dofTerms[ib + m];
    x.Ipsi.noalias() = Ic * psi;
    x.Bpsi.noalias() = Bc.transpose() * psi;
    t.tau[ib + m] = psi.dot(F);
    const Motion w = t.wps[b].col(m), u = t.ups[b].col(m), z = t.zps[b].col(m);
    x.Y = crossForce(psi, F);  // eq. D9
    x.Y.noalias() -= Ic * w;
    x.Y.noalias() -= Bc * u;
    x.Yv.noalias() = Bc * psi;  // eq. D10
    x.Yv.noalias() += Ic * z;
  }
  const int p = tree.parent[b];
  if (p < 0) return;
  t.oIc[p] += Ic;
  t.oBc[p] += Bc;
  t.oF[p] += F;
}

/// RowTerms as four 6-vectors, one RowTerms after the other: d consecutive entries of
/// dofTerms / foldedTerms are 6 x d matrices of Ipsi (Bpsi, Y, Yv) with an outer stride.
constexpr int kTermStride = 24;
static_assert(sizeof(RowTerms) == kTermStride * sizeof(double), "RowTerms: four 6-vectors");
template <int D>
using TermCols = Eigen::Map<const Eigen::Matrix<double, 6, D>, Eigen::Unaligned,
                            Eigen::OuterStride<kTermStride>>;
template <int R, int C>
using OutBlock = Eigen::Map<Eigen::Matrix<double, R, C>, Eigen::Unaligned,
                            Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

/// The r x c block of a column-major output with leading dimension ld at p (a 1 x c block is a
/// row-major row vector in Eigen: its columns ld apart are its inner stride).
template <int R, int C>
OutBlock<R, C> outBlock(double* p, int r, int c, Eigen::Index ld) {
  using Stride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
  if constexpr (Eigen::Matrix<double, R, C>::IsRowMajor)
    return OutBlock<R, C>(p, r, c, Stride(ld, ld));
  else
    return OutBlock<R, C>(p, r, c, Stride(ld, 1));
}

/// The block of d rows (row terms x[0 .. d), at output rows r0) against the n columns of joint
/// j of a unit cluster (G = 1: output columns c0 ..): D7, D8 and M by products; with mirror also
/// the transposed block (rows c0 .., columns r0 ..) of D9, D10 and M (eq. F2, F3 with G = 1).
/// Written, not added: the unit cluster's joint is the block's only contributor.
template <int D, int N>
void unitBlock(const Outputs& o, const RowTerms* x, int d, const DerivativeData& t, int j, int n,
               int r0, int c0, bool mirror) {
  const TermCols<D> Ip(x->Ipsi.data(), 6, d), Bp(x->Bpsi.data(), 6, d);
  using Cols = Eigen::Map<const Eigen::Matrix<double, 6, N>>;
  const Cols psi(t.psi[j].data(), 6, n), u(t.ups[j].data(), 6, n), w(t.wps[j].data(), 6, n),
      z(t.zps[j].data(), 6, n);
  const Eigen::Index a = o.at(r0, c0);
  if constexpr (D == 1 && N == 6) {  // one row against the base: 6-vectors of dot products
    const Vec6 ip = Ip.col(0), bp = Bp.col(0);
    const Vec6 dq = -(w.transpose() * ip) - u.transpose() * bp;  // eq. D7
    const Vec6 dv = psi.transpose() * bp + z.transpose() * ip;   // eq. D8
    const Vec6 m = psi.transpose() * ip;
    for (int e = 0; e < 6; ++e) {
      o.dq[a + e * o.n] = dq[e];
      o.dv[a + e * o.n] = dv[e];
      o.M[a + e * o.n] = m[e];
    }
    if (!mirror) return;
    const Eigen::Index b = o.at(c0, r0);
    Eigen::Map<Vec6>(o.dq + b).noalias() = psi.transpose() * TermCols<1>(x->Y.data()).col(0);
    Eigen::Map<Vec6>(o.dv + b).noalias() = psi.transpose() * TermCols<1>(x->Yv.data()).col(0);
    Eigen::Map<Vec6>(o.M + b) = m;
    return;
  }
  OutBlock<D, N> dq = outBlock<D, N>(o.dq + a, d, n, o.n), dv = outBlock<D, N>(o.dv + a, d, n, o.n),
                 M = outBlock<D, N>(o.M + a, d, n, o.n);
  dq.noalias() = -Ip.transpose().lazyProduct(w);  // eq. D7
  dq.noalias() -= Bp.transpose().lazyProduct(u);
  dv.noalias() = Bp.transpose().lazyProduct(psi);  // eq. D8
  dv.noalias() += Ip.transpose().lazyProduct(z);
  M.noalias() = Ip.transpose().lazyProduct(psi);
  if (!mirror) return;
  const TermCols<D> Y(x->Y.data(), 6, d), Yv(x->Yv.data(), 6, d);
  const Eigen::Index b = o.at(c0, r0);
  OutBlock<N, D> dqc = outBlock<N, D>(o.dq + b, n, d, o.n),
                 dvc = outBlock<N, D>(o.dv + b, n, d, o.n), Mc = outBlock<N, D>(o.M + b, n, d, o.n);
  dqc.noalias() = psi.transpose().lazyProduct(Y);   // eq. D9
  dvc.noalias() = psi.transpose().lazyProduct(Yv);  // eq. D10
  Mc = M.transpose();
}

/// unitBlock with fixed sizes for the floating base (n = 6) against one or six rows.
inline void unitBlockAny(const Outputs& o, const RowTerms* x, int d, const DerivativeData& t, int j,
                         int n, int r0, int c0, bool mirror) {
  if (n == 6 && d == 1)
    unitBlock<1, 6>(o, x, d, t, j, n, r0, c0, mirror);
  else if (n == 6 && d == 6)
    unitBlock<6, 6>(o, x, d, t, j, n, r0, c0, mirror);
  else
    unitBlock<Eigen::Dynamic, Eigen::Dynamic>(o, x, d, t, j, n, r0, c0, mirror);
}

/// Adds g g' (dq, dv, m) to (y, y') of dtau_dy, dtau_dydot, H over the entries (y, g) of G's row
/// e and (y', g') of its row f (eq. F2); with mirror also g g' (dqc, dvc, m) to (y', y).
inline void scatter(const ClusterDerivativeData& dd, const Outputs& o, int e, int f, double dq,
                    double dv, double m, bool mirror, double dqc, double dvc) {
  const GEntry* const E = dd.Gentries.data();
  for (int i = dd.dofEntryBegin[e]; i < dd.dofEntryEnd[e]; ++i)
    for (int j = dd.dofEntryBegin[f]; j < dd.dofEntryEnd[f]; ++j) {
      const double g = E[i].value * E[j].value;
      const int y = E[i].y, yp = E[j].y;
      const Eigen::Index a = o.at(y, yp);
      o.dq[a] += g * dq;
      o.dv[a] += g * dv;
      o.M[a] += g * m;
      if (!mirror) continue;
      const Eigen::Index b = o.at(yp, y);
      o.dq[b] += g * dqc;
      o.dv[b] += g * dvc;
      o.M[b] += g * m;
    }
}

/// Cluster k's block of the outputs: the pairs of its bodies (b, i), i an ancestor of b or b
/// itself inside the cluster (D7-D10 per joint column, then times G's rows, eq. F2); H's block
/// made exactly symmetric.
void clusterBlock(const ClusterModel& cm, const ClusterScratch& s, bool outputFrame,
                  const Outputs& o, ClusterDerivativeData& dd, int k) {
  const Model& tree = cm.treeModel;
  const Cluster& c = cm.clusters[k];
  const DerivativeData& t = dd.tree;
  const int y1 = c.y0 + c.ny;
  if (dd.unitCluster[k] && !(outputFrame && s.rotorSlot[c.firstBody] >= 0)) {
    // One body, G = 1: its joint's rows against its own columns, H's block made symmetric.
    const int b = c.firstBody;
    unitBlockAny(o, &dd.dofTerms[tree.idx_v[b]], c.ny, t, b, c.ny, c.y0, c.y0, false);
    for (int y = c.y0; y < y1; ++y)
      for (int z = y + 1; z < y1; ++z) o.M[o.at(z, y)] = o.M[o.at(y, z)];
    return;
  }
  for (int z = c.y0; z < y1; ++z)  // the block's only writer (eq. F2): zeroed here
    for (int y = c.y0; y < y1; ++y) o.dq[o.at(y, z)] = o.dv[o.at(y, z)] = o.M[o.at(y, z)] = 0.0;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int ib = tree.idx_v[b];
    const bool rotor = outputFrame && s.rotorSlot[b] >= 0;
    for (int i = b; inCluster(c, i); i = tree.parent[i]) {
      const int ii = tree.idx_v[i];
      if (rotor && i == b) {  // R2: d tau_R / d(q_R, v_R) = 0, M(R, R) = s^T I s
        scatter(dd, o, ib, ib, 0.0, 0.0, s.rotors[s.rotorSlot[b]].axisInertia, false, 0.0, 0.0);
        continue;
      }
      for (int m = 0; m < tree.nvs[i]; ++m) {
        const Motion psi = t.psi[i].col(m), u = t.ups[i].col(m), w = t.wps[i].col(m),
                     z = t.zps[i].col(m);
        for (int r = 0; r < tree.nvs[b]; ++r) {
          const RowTerms& x = dd.dofTerms[ib + r];
          const double dq = -(x.Ipsi.dot(w) + x.Bpsi.dot(u));
          const double dv = x.Bpsi.dot(psi) + x.Ipsi.dot(z);
          const double mm = x.Ipsi.dot(psi);
          if (i == b)
            scatter(dd, o, ib + r, ii + m, dq, dv, mm, false, 0.0, 0.0);
          else
            scatter(dd, o, ib + r, ii + m, dq, dv, mm, true, psi.dot(x.Y), psi.dot(x.Yv));
        }
      }
    }
  }
  for (int y = c.y0; y < y1; ++y)
    for (int z = y + 1; z < y1; ++z) o.M[o.at(z, y)] = o.M[o.at(y, z)];
}

/// Cluster k's rows and columns against the joints j above its output body (D7-D10 with the
/// cluster's folded row terms, eq. F1: sum_e G(e, y) terms_e; then times G's rows of j, F3).
void ancestorBlocks(const ClusterModel& cm, const Outputs& o, ClusterDerivativeData& dd, int k) {
  const Model& tree = cm.treeModel;
  const Cluster& c = cm.clusters[k];
  const DerivativeData& t = dd.tree;
  RowTerms* const fold = dd.foldedTerms.data();
  for (int y = c.y0; y < c.y0 + c.ny; ++y) {
    fold[y].Ipsi.setZero();
    fold[y].Bpsi.setZero();
    fold[y].Y.setZero();
    fold[y].Yv.setZero();
  }
  for (int i = dd.entryStart[k]; i < dd.entryStart[k + 1]; ++i) {  // eq. F1
    const GEntry& e = dd.Gentries[i];
    const RowTerms& x = dd.dofTerms[e.v];
    RowTerms& f = fold[e.y];
    f.Ipsi += e.value * x.Ipsi;
    f.Bpsi += e.value * x.Bpsi;
    f.Y += e.value * x.Y;
    f.Yv += e.value * x.Yv;
  }
  // The blocks (k, a) and (a, k) of the ancestor clusters a: written by this step only, zeroed
  // here (the entries between unrelated clusters stay zero from the constructor).
  for (int a = c.parent; a >= 0; a = cm.clusters[a].parent) {
    if (dd.unitCluster[a]) continue;  // written by unitBlock
    const Cluster& ca = cm.clusters[a];
    for (int yp = ca.y0; yp < ca.y0 + ca.ny; ++yp)
      for (int y = c.y0; y < c.y0 + c.ny; ++y) {
        const Eigen::Index i1 = o.at(y, yp), i2 = o.at(yp, y);
        o.dq[i1] = o.dv[i1] = o.M[i1] = o.dq[i2] = o.dv[i2] = o.M[i2] = 0.0;
      }
  }
  const GEntry* const E = dd.Gentries.data();
  for (int j = c.outputBody; j >= 0; j = tree.parent[j]) {
    const int ij = tree.idx_v[j], aj = cm.bodyCluster[j];
    if (dd.unitCluster[aj]) {  // the ancestor is j alone, G = 1 (a floating base): products
      unitBlockAny(o, fold + c.y0, c.ny, t, j, tree.nvs[j], c.y0, cm.clusters[aj].y0, true);
      continue;
    }
    for (int m = 0; m < tree.nvs[j]; ++m) {
      const Motion psi = t.psi[j].col(m), u = t.ups[j].col(m), w = t.wps[j].col(m),
                   z = t.zps[j].col(m);
      const int f = ij + m;
      for (int y = c.y0; y < c.y0 + c.ny; ++y) {
        const RowTerms& x = fold[y];
        const double dq = -(x.Ipsi.dot(w) + x.Bpsi.dot(u));  // eq. D7
        const double dv = x.Bpsi.dot(psi) + x.Ipsi.dot(z);   // eq. D8
        const double mm = x.Ipsi.dot(psi);
        const double dqc = psi.dot(x.Y), dvc = psi.dot(x.Yv);            // eq. D9, D10
        for (int n = dd.dofEntryBegin[f]; n < dd.dofEntryEnd[f]; ++n) {  // eq. F3
          const double g = E[n].value;
          const int yp = E[n].y;
          const Eigen::Index i1 = o.at(y, yp), i2 = o.at(yp, y);
          o.dq[i1] += g * dq;
          o.dv[i1] += g * dv;
          o.M[i1] += g * mm;
          o.M[i2] += g * mm;
          o.dq[i2] += g * dqc;
          o.dv[i2] += g * dvc;
        }
      }
    }
  }
}

}  // namespace

void spanningDerivativePasses(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd,
                              ConstVecRef q, const double* v, const double* a, const Force* fext,
                              bool placements) {
  const Model& tree = cm.treeModel;
  const ClusterScratch& s = fullScratch(data);
  if (fext || s.rotors.empty()) {
    rneaDerivativePasses(tree, data.treeData, dd.tree, q, v, a, fext, placements);
    return;
  }
  forwardPass(cm, data, dd, q, v, a, nullptr, placements, true);
  for (int k = tree.nbodies - 1; k >= 0; --k) {
    const int r = s.rotorSlot[k];
    if (r >= 0)
      rotorBackwardStep(tree, s.rotors[r], dd.dofTerms[tree.idx_v[k]], dd.tree);
    else
      derivativeBackwardStep(tree, dd.tree, k);
  }
}

void foldedDerivativePasses(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd,
                            ConstVecRef q, const double* v, const double* a, const Force* fext,
                            bool placements) {
  const Model& tree = cm.treeModel;
  const ClusterScratch& s = fullScratch(data);
  const bool outputFrame = !fext && !s.rotors.empty();
  forwardPass(cm, data, dd, q, v, a, fext, placements, outputFrame);
  const Outputs o{dd.dtau_dy.data(), dd.dtau_dydot.data(), dd.H.data(), dd.H.rows()};
  // Clusters last to first: every body's subtree sums are complete when its cluster is reached
  // (the bodies are numbered cluster by cluster, a parent before its children).
  for (int k = static_cast<int>(cm.clusters.size()) - 1; k >= 0; --k) {
    const Cluster& c = cm.clusters[k];
    for (int b = c.firstBody + c.nbodies - 1; b >= c.firstBody; --b)
      if (!(outputFrame && s.rotorSlot[b] >= 0)) bodyRowTerms(tree, dd, b);  // rotors: forward
    clusterBlock(cm, s, outputFrame, o, dd, k);
    ancestorBlocks(cm, o, dd, k);
  }
}

}  // namespace clusterdyn::detail
