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
// (Featherstone Table 6.2) in body coordinates, as crba().
//
// Everything runs column by column on fixed-size spatial vectors (no dynamic-size products):
// F_k is d forces, each carried up the ancestor clusters on its own. A body whose rows of S are
// constant (hanging from the output body of a coupling cluster: S_b = S_joint G_row) costs what
// a tree joint costs, and the rotors (axisymmetric leaves on the output body) are constants of
// the workspace: their S^T I S (rotorD), X^T I S (rotorUbar) and inertia in the output body's
// frame (rotorInertia); the position pass skips their joint transforms.
#include "cluster/cluster_detail.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "tree/axis_transforms.hpp"

namespace clusterdyn {

namespace {

/// Column j of body b's rows of S (cluster c) applied to the force f: S_b(:, j)^T f. Constant
/// rows are S_joint G(row, j), the rest is read from the workspace's S.
inline double rowTimesForce(const Model& tree, const Cluster& c, const ClusterWorkspace& w, int b,
                            int j, const Force& f) {
  if (w.constantS[b - c.firstBody]) {
    double x;
    detail::projectOnSubspace(tree.joints[b], f, &x);  // 1-dof joints in constrained clusters
    return w.G(tree.idx_v[b] - c.v0, j) * x;
  }
  return w.S.block<6, 1>(6 * (b - c.firstBody), j).dot(f);
}

/// I~_b S_b(:, j): constant rows use the joint-axis product of the composite inertia.
inline Force inertiaTimesRow(const Model& tree, const Cluster& c, const ClusterWorkspace& w, int b,
                             int j, const SpatialInertia& Ic) {
  if (w.constantS[b - c.firstBody])
    return w.G(tree.idx_v[b] - c.v0, j) * detail::inertiaTimesAxis(tree.joints[b], Ic);
  return Ic * Motion(w.S.block<6, 1>(6 * (b - c.firstBody), j));
}

/// f in the frame of body b (cluster c) expressed in c's output body: the joint transform when
/// b hangs from the output body, else the pose relative to it (outputTb).
inline Force forceInOutputFrame(const Model& tree, const Data& td, const Cluster& c,
                                const ClusterWorkspace& w, int b, const Force& f) {
  if (tree.parent[b] == c.outputBody) return detail::forceInParentFrame(tree, td, b, f);
  return w.outputTb[b - c.firstBody].actForce(f);
}

/// Column `col` of H above the diagonal block of its cluster: H(l, col) = S_body^T F for each
/// ancestor cluster l (body: the output body reached so far, F in its frame), F carried from
/// output body to output body; each entry is mirrored into row `col`.
void fillAncestorColumn(const ClusterModel& cm, ClusterData& data,
                        const std::vector<ClusterWorkspace>& ws, int col, int body, Force F) {
  const Model& tree = cm.treeModel;
  const Data& td = data.treeData;
  MatX& H = data.H;
  while (body >= 0) {
    const int l = cm.bodyCluster[body];
    const Cluster& cl = cm.clusters[l];
    if (!cl.constrained()) {
      double* out = &H(cl.y0, col);
      detail::projectOnSubspace(tree.joints[body], F, out);
      for (int r = 0; r < cl.ny; ++r) H(col, cl.y0 + r) = out[r];
      if (cl.outputBody < 0) return;
      F = detail::forceInParentFrame(tree, td, body, F);
    } else {
      const ClusterWorkspace& wl = ws[l];
      for (int r = 0; r < cl.ny; ++r)
        H(cl.y0 + r, col) = H(col, cl.y0 + r) = rowTimesForce(tree, cl, wl, body, r, F);
      if (cl.outputBody < 0) return;
      F = forceInOutputFrame(tree, td, cl, wl, body, F);
    }
    body = cl.outputBody;
  }
}

/// Unconstrained cluster (one body b, G = 1): H_kk = S^T I~_b S, F = I~_b S carried to the
/// ancestors, I~_o += oX_b^* I~_b bX_o (Featherstone Table 6.2).
void singleBodyBlock(const ClusterModel& cm, ClusterData& data,
                     const std::vector<ClusterWorkspace>& ws, const Cluster& c) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const int b = c.firstBody, o = c.outputBody;
  const Joint& joint = tree.joints[b];
  const SpatialInertia& Ic = td.Ycrb[b];
  MatX& H = data.H;
  if (joint.nv == 1) {
    const Force F = detail::inertiaTimesAxis(joint, Ic);
    detail::projectOnSubspace(joint, F, &H(c.y0, c.y0));
    if (o >= 0)
      fillAncestorColumn(cm, data, ws, c.y0, o, detail::forceInParentFrame(tree, td, b, F));
  } else {
    for (int j = 0; j < joint.nv; ++j) {
      const Force F = Ic * Motion(joint.S.col(j));
      for (int r = 0; r <= j; ++r)
        H(c.y0 + r, c.y0 + j) = H(c.y0 + j, c.y0 + r) = joint.S.col(r).dot(F);
      if (o >= 0)
        fillAncestorColumn(cm, data, ws, c.y0 + j, o, detail::forceInParentFrame(tree, td, b, F));
    }
  }
  if (o >= 0) td.Ycrb[o] += detail::inertiaInParentFrame(tree, td, b, Ic);
}

/// Constrained cluster with one independent coordinate whose bodies all hang from the output
/// body (a link with its geared rotors, a coupling of sibling joints): every row of S is
/// S_joint G_b, so H_kk = rotorD + sum_b G_b^2 S_b^T I~_b S_b and F_k = rotorUbar + sum_b G_b
/// oX_b^* I~_b S_b, each a tree-joint product (Featherstone Table 6.2) scaled by G_b.
void scalarFlatBlock(const ClusterModel& cm, ClusterData& data,
                     const std::vector<ClusterWorkspace>& ws, int k) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const Cluster& c = cm.clusters[k];
  const ClusterWorkspace& w = ws[k];
  const int o = c.outputBody, last = c.firstBody + c.nbodies;
  const char* const constantS = w.constantS.data() - c.firstBody;
  const double* const G = w.G.data() - c.v0;  // one column
  double Hkk = w.rotorD(0, 0);
  Force F = w.rotorUbar.col(0);
  SpatialInertia Io = w.rotorInertia;
  for (int b = c.firstBody; b < last; ++b) {
    if (constantS[b] == 2) continue;  // a rotor: in the constants above
    const Joint& joint = tree.joints[b];
    const double g = G[tree.idx_v[b]];
    const Force Fb = g * detail::inertiaTimesAxis(joint, td.Ycrb[b]);
    double x;
    detail::projectOnSubspace(joint, Fb, &x);
    Hkk += g * x;
    if (o < 0) continue;
    F += detail::forceInParentFrame(tree, td, b, Fb);
    Io += detail::inertiaInParentFrame(tree, td, b, td.Ycrb[b]);
  }
  data.H(c.y0, c.y0) = Hkk;
  if (o < 0) return;
  fillAncestorColumn(cm, data, ws, c.y0, o, F);
  td.Ycrb[o] += Io;
}

/// Constrained cluster: column j of H_kk and F_k from the bodies (the rotors' terms are the
/// workspace constants), then the ancestors; the cluster's composite goes to its output body.
void constrainedBlock(const ClusterModel& cm, ClusterData& data,
                      const std::vector<ClusterWorkspace>& ws, int k) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const Cluster& c = cm.clusters[k];
  const ClusterWorkspace& w = ws[k];
  const int o = c.outputBody, last = c.firstBody + c.nbodies;
  const auto rotor = [&](int b) { return w.constantS[b - c.firstBody] == 2; };
  MatX& H = data.H;
  for (int j = 0; j < c.ny; ++j) {
    const int col = c.y0 + j;
    for (int r = 0; r <= j; ++r) H(c.y0 + r, col) = w.rotorD(r, j);
    Force F = w.rotorUbar.col(j);
    for (int b = c.firstBody; b < last; ++b) {
      if (rotor(b)) continue;
      const Force Fb = inertiaTimesRow(tree, c, w, b, j, td.Ycrb[b]);
      for (int r = 0; r <= j; ++r) H(c.y0 + r, col) += rowTimesForce(tree, c, w, b, r, Fb);
      if (o >= 0) F += forceInOutputFrame(tree, td, c, w, b, Fb);
    }
    for (int r = 0; r < j; ++r) H(col, c.y0 + r) = H(c.y0 + r, col);
    if (o >= 0) fillAncestorColumn(cm, data, ws, col, o, F);
  }
  if (o < 0) return;
  SpatialInertia Io = w.rotorInertia;
  for (int b = c.firstBody; b < last; ++b) {
    if (rotor(b)) continue;
    if (tree.parent[b] == o)
      Io += detail::inertiaInParentFrame(tree, td, b, td.Ycrb[b]);
    else
      Io += td.Ycrb[b].transformedBy(w.outputTb[b - c.firstBody]);
  }
  td.Ycrb[o] += Io;
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
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  const int ncl = static_cast<int>(model.clusters.size());
  for (int k = 0; k < ncl; ++k) {  // I~_b = I_b (rotors: never read); rows of S that vary
    const Cluster& c = model.clusters[k];
    const ClusterWorkspace& w = ws[k];
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
      if (!c.constrained() || w.constantS[b - c.firstBody] != 2) td.Ycrb[b] = tree.inertias[b];
    if (c.constrained() && (c.implicit() || !w.bodiesOnOutput))
      detail::clusterMotionSubspace(model, data, k, detail::Bias::Skip);
  }
  for (int k = ncl - 1; k >= 0; --k) {
    const Cluster& c = model.clusters[k];
    if (c.constrained() && c.ny == 1 && ws[k].bodiesOnOutput && !c.implicit())
      scalarFlatBlock(model, data, ws, k);
    else if (c.constrained())
      constrainedBlock(model, data, ws, k);
    else
      singleBodyBlock(model, data, ws, c);
  }
  detail::ok(td);
  if (detail::upperTriangleFinite(data.H)) return Status::Ok;
  return detail::nonFiniteOutput(td, "clusterMassMatrix: H", {{"q", detail::maxAbs(q), 2}});
}

}  // namespace clusterdyn
