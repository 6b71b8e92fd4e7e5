// Pass 2 of CE-ABA in composite-inertia form for the loop clusters with a multi-dof joint
// (issue #25: Stewart platforms, delta robots): the terms of Chignoli et al. 2023, eq. 53 and
// 59-60, from the cluster's spanning tree instead of column by column through S = J G (eq. 15):
//   D    = G^T H G,       H = J^T IA J   (the cluster's spanning-tree inertia, CRBA-sparse)
//   Ubar = Xh^T IA S = F G,      F_i = IC_i s_i        (output body's coordinates)
//   u    = tau - G^T (J^T pA),   U^T c = G^T (J^T IA c)
//   sum_b X_b^T IA_b X_b and Xh^T (pA + IA c): the composites of the cluster's roots
// with IC_i the composite inertia of joint i's subtree inside the cluster and s_i its axes, all
// in the output body's coordinates (Featherstone 2008, CRBA: H_ij = s_i^T IC_j s_j for i an
// ancestor of j, zero when neither is an ancestor of the other). The dense G of such a cluster
// (every leg moves the platform) makes S dense on every body; this form costs O(m) inertia
// transforms plus O(pairs d + n d^2) instead of O(m d) 6x6 products and O(m d^2) for D
// (cd_stewart: pass 2 40.8k -> 31.7k instructions, docs/benchmarks.md).
#include "cluster/cluster_aba_composite.hpp"

#include <type_traits>

namespace clusterdyn::detail {

namespace {

/// Body b's inertia in the output body's coordinates (T: its pose there): the rigid inertia
/// (cheap transform) or the articulated 6x6 one.
inline void inertiaInOutput(const SpatialInertia& I, const Mat6&, const Transform& T,
                            SpatialInertia& out) {
  out = I.transformedBy(T);
}
inline void inertiaInOutput(const SpatialInertia&, const Mat6& IA, const Transform& T, Mat6& out) {
  out = actInertia(T, IA);
}
inline Force times(const SpatialInertia& I, const Motion& m) { return I * m; }
inline Force times(const Mat6& I, const Motion& m) { return I * m; }
inline void addInertia(const SpatialInertia& I, Mat6& M) { I.addTo(M); }
inline void addInertia(const Mat6& I, Mat6& M) { M += I; }

/// The sweeps of compositeArticulatedTerms with the composites stored as Inertia
/// (SpatialInertia when every body of the cluster still has its rigid inertia, else Mat6).
template <typename Inertia>
void compositeSweeps(const ClusterModel& cm, ClusterData& data, int k, std::vector<Inertia>& IC,
                     Mat6& IAo, Force& po) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  const Data& td = data.treeData;
  ClusterWorkspace& w = detail::scratch(data)[k];
  ClusterWorkspace::Composite& cp = w.composite;
  const bool rigid = std::is_same<Inertia, SpatialInertia>::value;
  // The joint axes in the output body's coordinates: constraintJacobian's (sparse K_d), else
  // moved here.
  const bool shared = w.axesOut.cols() == c.nv;
  const Mat6X& So = shared ? w.axesOut : cp.So;
  for (int l = 0; l < c.nbodies; ++l) {  // each body in the output body's coordinates
    const int b = c.firstBody + l, lv = tree.idx_v[b] - c.v0;
    const Transform& T = w.outputTb[l];
    const Motion cb = w.c.segment<6>(6 * l);
    inertiaInOutput(tree.inertias[b], td.IA[b], T, IC[l]);
    cp.fp[l] = T.actForce(td.pA[b]);
    cp.fq[l] = T.actForce(rigid ? Force(tree.inertias[b] * cb) : Force(td.IA[b] * cb));
    if (shared) continue;
    const Joint& joint = tree.joints[b];
    for (int a = 0; a < joint.nv; ++a) cp.So.col(lv + a) = T.actMotion(joint.S.col(a));
  }
  for (int l = c.nbodies - 1; l >= 0; --l) {  // composites, leaves first (children follow parents)
    const int b = c.firstBody + l, lv = tree.idx_v[b] - c.v0;
    for (int i = lv; i < lv + tree.joints[b].nv; ++i) {
      const Motion s = So.col(i);
      cp.F.col(i) = times(IC[l], s);  // F_i = IC_i s_i: column i of Xh^T IA J
      cp.Jp[i] = s.dot(cp.fp[l]);     // (J^T pA)_i
      cp.Jq[i] = s.dot(cp.fq[l]);     // (J^T IA c)_i
    }
    const int p = tree.parent[b];
    if (p >= c.firstBody) {
      const int lp = p - c.firstBody;
      IC[lp] += IC[l];
      cp.fp[lp] += cp.fp[l];
      cp.fq[lp] += cp.fq[l];
    } else {  // a root of the cluster's spanning tree: the sums of eq. 59-60
      if (c.outputBody >= 0) addInertia(IC[l], IAo);
      po += cp.fp[l] + cp.fq[l];
    }
  }
}

}  // namespace

void setCompositeForm(const ClusterModel& m, int k, ClusterWorkspace& w) {
  const Cluster& c = m.clusters[k];
  const Model& tree = m.treeModel;
  ClusterWorkspace::Composite& cp = w.composite;
  cp = ClusterWorkspace::Composite();
  if (!c.implicit() || c.ny <= 3 || w.sColStart.empty()) return;
  // Idle columns (a delta robot's spinning rods) keep S sparse, 4 of 9 columns on most bodies:
  // there the pattern path is cheaper (cd_delta CE-ABA 144k instructions against 159k).
  for (const char idle : w.idleColumn)
    if (idle) return;
  bool multiDof = false;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
    multiDof = multiDof || tree.joints[b].nv > 1;
  if (!multiDof) return;
  const int n = c.nv;
  std::vector<int> body(n);  // local body of each spanning velocity
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
    for (int a = 0; a < tree.joints[b].nv; ++a) body[tree.idx_v[b] - c.v0 + a] = b;
  for (int j = 0; j < n; ++j)  // (i, j), i <= j, joint of i an ancestor or the joint of j
    for (int b = body[j]; b >= c.firstBody; b = tree.parent[b]) {
      const int lv = tree.idx_v[b] - c.v0;
      for (int i = lv; i < lv + tree.joints[b].nv && i <= j; ++i) cp.pairs.push_back({i, j});
    }
  cp.active = true;
  cp.rigidIC.assign(c.nbodies, SpatialInertia());
  cp.generalIC.assign(c.nbodies, Mat6::Zero());
  cp.fp.assign(c.nbodies, Force::Zero());
  cp.fq.assign(c.nbodies, Force::Zero());
  cp.So.setZero(6, n);
  cp.F.setZero(6, n);
  cp.HG.setZero(n, c.ny);
  cp.Jp.setZero(n);
  cp.Jq.setZero(n);
}

void compositeArticulatedTerms(const ClusterModel& cm, ClusterData& data, int k, Mat6& IAo,
                               Force& po) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  ClusterWorkspace::Composite& cp = w.composite;
  const ClusterScratch& scr = detail::fullScratch(data);
  bool rigid = true;  // every body's IA still its rigid inertia: composites in (m, h, Io) form
  for (int b = c.firstBody; b < c.firstBody + c.nbodies && rigid; ++b)
    rigid = data.rigidInertia[b] && !scr.outputOfCluster[b];
  if (rigid)
    compositeSweeps(cm, data, k, cp.rigidIC, IAo, po);
  else
    compositeSweeps(cm, data, k, cp.generalIC, IAo, po);
  const int n = c.nv, d = c.ny;
  const MatX& G = w.G;
  const Mat6X& So = w.axesOut.cols() == n ? w.axesOut : cp.So;  // as compositeSweeps
  cp.HG.setZero();
  for (size_t e = 0; e < cp.pairs.size(); ++e) {  // HG = H G on H's pattern (symmetric)
    const int i = cp.pairs[e].first, j = cp.pairs[e].second;
    const double h = So.col(i).dot(cp.F.col(j));  // H_ij = s_i^T IC_j s_j
    for (int a = 0; a < d; ++a) {
      cp.HG(i, a) += h * G(j, a);
      if (i != j) cp.HG(j, a) += h * G(i, a);
    }
  }
  for (int a = 0; a < d; ++a) {
    const auto Ga = G.col(a);
    for (int e = a; e < d; ++e) w.D(e, a) = G.col(e).dot(cp.HG.col(a));  // D = G^T H G, lower
    w.u[a] -= Ga.dot(cp.Jp);                                             // eq. 53: u
    w.Utc[a] = Ga.dot(cp.Jq);                                            // U^T c
  }
  w.Ubar.noalias() = cp.F.leftCols(n).lazyProduct(G);  // Ubar = Xh^T IA J G
}

}  // namespace clusterdyn::detail
