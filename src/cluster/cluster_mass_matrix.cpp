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
//
// Subtree blocks (a floating root cluster 0 and clusters numbered depth first, as the builder
// makes them: ClusterScratch::subtreeYEnd): the columns of a cluster's subtree are contiguous,
// each column's force waits in H's root rows, and each cluster carries its whole subtree's
// block to its parent at once, joint by joint (carryChildren: one force transform per joint for
// many independent columns, as crba does per body). Constrained clusters with joints inside
// them are then computed by the spanning tree inside the cluster combined by G
// (treeClusterBlock), which needs neither S_k nor the poses relative to the output body. The
// column-by-column path above stays for the other models.
#include <algorithm>

#include "cluster/cluster_joint_dynamics.hpp"
#include "cluster/cluster_kinematics.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "tree/axis_transforms.hpp"
#include "tree/subtree_blocks.hpp"

namespace clusterdyn {

namespace {

using detail::ForceTransport;

/// Column j of body b's rows of S (cluster c) applied to the force f: S_b(:, j)^T f. Constant
/// rows are S_joint G(row, j), the rest is read from the workspace's S.
inline double rowTimesForce(const Model& tree, const Cluster& c, const ClusterWorkspace& w, int b,
                            int j, const Force& f) {
  if (w.constantS[b - c.firstBody]) {
    double x[6];  // S^T f: nv values (constant rows: 1-dof joints of explicit clusters)
    x[0] = 0.0;   // (every joint writes it; for the compiler)
    detail::projectOnSubspace(tree.joints[b], f, x);
    return w.G(tree.idx_v[b] - c.v0, j) * x[0];
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

/// Column `col` of cluster k's block leaves it as the force F at k's output body o (in o's
/// frame): with subtree blocks it waits in H(0..5, col) for the ancestors' carryChildren (H's
/// rows of the floating root, where it ends), else it goes up the ancestors now.
inline void sendUp(const ClusterModel& cm, ClusterData& data,
                   const std::vector<ClusterWorkspace>& ws, bool blocks, int col, int o,
                   const Force& F) {
  if (blocks)
    Force::Map(&data.H(0, col)) = F;
  else
    fillAncestorColumn(cm, data, ws, col, o, F);
}

/// Unconstrained cluster (one body b, G = 1): H_kk = S^T I~_b S, F = I~_b S carried to the
/// ancestors, I~_o += oX_b^* I~_b bX_o (Featherstone Table 6.2).
void singleBodyBlock(const ClusterModel& cm, ClusterData& data,
                     const std::vector<ClusterWorkspace>& ws, const Cluster& c, bool blocks) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const int b = c.firstBody, o = c.outputBody;
  const Joint& joint = tree.joints[b];
  const SpatialInertia& Ic = td.Ycrb[b];
  MatX& H = data.H;
  if (joint.nv == 1) {
    const Force F = detail::inertiaTimesAxis(joint, Ic);
    detail::projectOnSubspace(joint, F, &H(c.y0, c.y0));
    if (o >= 0) sendUp(cm, data, ws, blocks, c.y0, o, detail::forceInParentFrame(tree, td, b, F));
  } else {
    for (int j = 0; j < joint.nv; ++j) {
      const Force F = Ic * Motion(joint.S.col(j));
      for (int r = 0; r <= j; ++r)
        H(c.y0 + r, c.y0 + j) = H(c.y0 + j, c.y0 + r) = joint.S.col(r).dot(F);
      if (o >= 0)
        sendUp(cm, data, ws, blocks, c.y0 + j, o, detail::forceInParentFrame(tree, td, b, F));
    }
  }
  if (o >= 0) td.Ycrb[o] += detail::inertiaInParentFrame(tree, td, b, Ic);
}

/// Constrained cluster with one independent coordinate whose bodies all hang from the output
/// body (a link with its geared rotors, a coupling of sibling joints): every row of S is
/// S_joint G_b, so H_kk = rotorD + sum_b G_b^2 S_b^T I~_b S_b and F_k = rotorUbar + sum_b G_b
/// oX_b^* I~_b S_b, each a tree-joint product (Featherstone Table 6.2) scaled by G_b.
void scalarFlatBlock(const ClusterModel& cm, ClusterData& data,
                     const std::vector<ClusterWorkspace>& ws, int k, bool blocks) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const Cluster& c = cm.clusters[k];
  const ClusterWorkspace& w = ws[k];
  const int o = c.outputBody, last = c.firstBody + c.nbodies;
  const char* const constantS = w.constantS.data() - c.firstBody;
  const double* const G = w.G.data() - c.v0;  // one column
  double Hkk = w.rotorD(0, 0);
  Force F = w.rotorUbar.col(0);
  for (int b = c.firstBody; b < last; ++b) {
    if (constantS[b] == 2) continue;  // a rotor: in the constants above
    const Joint& joint = tree.joints[b];
    const double g = G[tree.idx_v[b]];
    const Force Fb = g * detail::inertiaTimesAxis(joint, td.Ycrb[b]);
    double x[6];  // S^T Fb: nv values (1 here: explicit clusters have 1-dof joints)
    x[0] = 0.0;   // (every joint writes it; for the compiler)
    detail::projectOnSubspace(joint, Fb, x);
    Hkk += g * x[0];
    if (o < 0) continue;
    F += detail::forceInParentFrame(tree, td, b, Fb);
    td.Ycrb[o] += detail::inertiaInParentFrame(tree, td, b, td.Ycrb[b]);
  }
  data.H(c.y0, c.y0) = Hkk;
  if (o < 0) return;
  sendUp(cm, data, ws, blocks, c.y0, o, F);
  if (!blocks) td.Ycrb[o] += w.rotorInertia;  // blocks: in ClusterScratch::blockInertias
}

/// Constrained cluster: column j of H_kk and F_k from the bodies (the rotors' terms are the
/// workspace constants), then the ancestors; the cluster's composite goes to its output body.
void constrainedBlock(const ClusterModel& cm, ClusterData& data,
                      const std::vector<ClusterWorkspace>& ws, int k, bool blocks) {
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
    if (o >= 0) sendUp(cm, data, ws, blocks, col, o, F);
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

/// Constrained cluster by the spanning tree inside it (subtree blocks): the tree CRBA of its
/// bodies (Featherstone Table 6.2: F_i = I^c_i S_i carried up the cluster's joints, M_ai =
/// S_a^T F_i at each joint a on the way, I^c_parent += X^T I^c_i X) combined by G (Chignoli et
/// al. 2023, eq. 6: H = G^T M G): H_kk = rotorD + sum G(a, :)^T M_ai G(i, :) and F_k = rotorUbar
/// + sum_i F_i G(i, :), F_i at the output body. No S_k (eq. 15) and no pose relative to the
/// output body: one force transform per joint, as in the tree. 1-dof joints only
/// (setSubtreeRanges leaves the subtree blocks off when a constrained cluster has a multi-dof
/// joint; constrainedBlock handles those).
void treeClusterBlock(const ClusterModel& cm, ClusterData& data,
                      const std::vector<ClusterWorkspace>& ws, int k) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const Cluster& c = cm.clusters[k];
  const ClusterWorkspace& w = ws[k];
  const int o = c.outputBody, d = c.ny;
  MatX& H = data.H;
  auto Hkk = H.block(c.y0, c.y0, d, d);
  Hkk.triangularView<Eigen::Upper>() = w.rotorD;
  Eigen::Map<Mat6X, 0, Eigen::OuterStride<>> Fk(&H(0, c.y0), 6, d,
                                                Eigen::OuterStride<>(H.outerStride()));
  Fk = w.rotorUbar;  // (w.rotorInertia: in ClusterScratch::blockInertias)
  const auto G = [&](int body, int col) { return w.G(tree.idx_v[body] - c.v0, col); };
  for (int i = c.firstBody + c.nbodies - 1; i >= c.firstBody; --i) {
    if (w.constantS[i - c.firstBody] == 2) continue;  // a rotor: in the constants above
    Force F = detail::inertiaTimesAxis(tree.joints[i], td.Ycrb[i]);
    for (int a = i;; a = tree.parent[a]) {
      double M[6];  // M_ai = S_a^T F: nv values (1 here, setSubtreeRanges)
      M[0] = 0.0;   // (every joint writes it; for the compiler)
      detail::projectOnSubspace(tree.joints[a], F, M);
      const double x = M[0];
      for (int s = 0; s < d; ++s)
        for (int r = 0; r <= s; ++r)
          Hkk(r, s) += x * (a == i ? G(i, r) * G(i, s) : G(a, r) * G(i, s) + G(i, r) * G(a, s));
      F = detail::forceInParentFrame(tree, td, a, F);
      if (tree.parent[a] == o) break;
    }
    for (int s = 0; s < d; ++s) Fk.col(s) += G(i, s) * F;
    td.Ycrb[tree.parent[i]] += detail::inertiaInParentFrame(tree, td, i, td.Ycrb[i]);
  }
  for (int s = 0; s < d; ++s)
    for (int r = 0; r < s; ++r) Hkk(s, r) = Hkk(r, s);
}

/// What joint b of cluster l does to a force F in b's frame on l's rows of H (its share of
/// G^T M G): x = S_b^T F, then H(y_l + r, .) gets x_r (unconstrained: G = 1) or G(b, r) x.
/// axis >= 0: the whole map is one coefficient, scale * F[axis] (a revolute joint about a
/// coordinate axis, with G = 1 or one independent coordinate).
struct JointRows {
  const Joint* joint = nullptr;
  int axis = -1;
  double scale = 0.0;
  const double* g = nullptr;  ///< G(b, r) = g[r * ldg]; nullptr: G = 1
  Eigen::Index ldg = 0;
  int n = 0;  ///< rows of l
};

inline JointRows jointRows(const Model& tree, const Cluster& l, const ClusterWorkspace& w, int b) {
  JointRows rows;
  rows.joint = &tree.joints[b];
  rows.n = l.ny;
  const double g = l.constrained() ? w.G(tree.idx_v[b] - l.v0, 0) : 1.0;
  if (rows.joint->type == JointType::Revolute && rows.joint->alignedAxis >= 0 && l.ny == 1) {
    rows.axis = rows.joint->alignedAxis;
    rows.scale = rows.joint->alignedSign * g;
  } else if (l.constrained()) {
    rows.g = &w.G(tree.idx_v[b] - l.v0, 0);
    rows.ldg = w.G.rows();
  }
  return rows;
}

/// The columns [c0, c1) of the subtree blocks whose forces F_c (in H(0..5, c)) are in the frame
/// of body b, a joint of cluster l (rows y..): H(y + r, c) (+)= its share of S_l^T F_c, then
/// F_c <- X^* F_c into the frame of b's parent (Featherstone Table 6.2's inner loop, one
/// transform for every column of the block); mirror: also H(c, y + r). ForceTransport<A>: X.R a
/// rotation about axis A (A = -1: any).
template <int A>
void carryColumns(const JointRows& rows, const Transform& X, double* Hd, Eigen::Index ld, int y,
                  int c0, int c1, bool accumulate, bool mirror) {
  const ForceTransport<A> transport(X);
  double* const rowY = Hd + y;                    // H(y, c) = rowY[c * ld]
  double* const colY = Hd + y * ld;               // H(c, y) = colY[c]
  if (rows.axis >= 0 && !accumulate && mirror) {  // a joint on the output body (the robots)
    const int a = rows.axis;
    const double s = rows.scale;
    for (int c = c0; c < c1; ++c) {
      double* const f = Hd + c * ld;
      const double x = s * f[a];
      transport(f);
      rowY[c * ld] = colY[c] = x;
    }
    return;
  }
  for (int c = c0; c < c1; ++c) {
    double* const f = Hd + c * ld;
    double x[6];
    if (rows.axis >= 0)
      x[0] = rows.scale * f[rows.axis];
    else
      detail::projectOnSubspace(*rows.joint, Force::Map(f), x);
    transport(f);
    for (int r = 0; r < rows.n; ++r) {
      double h = rows.g ? rows.g[r * rows.ldg] * x[0] : x[r];
      if (accumulate) h += rowY[r + c * ld];
      rowY[r + c * ld] = h;
      if (mirror) colY[c + r * ld] = h;
    }
  }
}

/// carryColumns through joint b, with its joint transform.
void carryThroughJoint(const Model& tree, const Data& td, const Cluster& l,
                       const ClusterWorkspace& w, int b, double* Hd, Eigen::Index ld, int c0,
                       int c1, bool accumulate, bool mirror) {
  const JointRows rows = jointRows(tree, l, w, b);
  const Transform& X = td.liMi[b];
  switch (tree.axisRotation[b]) {
    case 0:
      return carryColumns<0>(rows, X, Hd, ld, l.y0, c0, c1, accumulate, mirror);
    case 1:
      return carryColumns<1>(rows, X, Hd, ld, l.y0, c0, c1, accumulate, mirror);
    case 2:
      return carryColumns<2>(rows, X, Hd, ld, l.y0, c0, c1, accumulate, mirror);
    default:
      return carryColumns<-1>(rows, X, Hd, ld, l.y0, c0, c1, accumulate, mirror);
  }
}

/// Subtree blocks of cluster l (not the root): the descendants' columns, whose forces wait at
/// the bodies of l their child clusters hang from, go joint by joint up to l's output body.
void carryChildren(const ClusterModel& cm, ClusterData& data,
                   const std::vector<ClusterWorkspace>& ws, const std::vector<int>& yEnd, int l) {
  const Model& tree = cm.treeModel;
  const Data& td = data.treeData;
  const Cluster& cl = cm.clusters[l];
  const ClusterWorkspace& w = ws[l];
  double* const Hd = data.H.data();
  const Eigen::Index ld = data.H.outerStride();
  const std::vector<int>& children = cl.children;
  for (size_t n = 0; n < children.size();) {
    // Children on the same body b with consecutive subtrees: one block.
    const int b = cm.clusters[children[n]].outputBody, c0 = cm.clusters[children[n]].y0;
    int c1 = yEnd[children[n]];
    for (++n; n < children.size() && cm.clusters[children[n]].outputBody == b &&
              cm.clusters[children[n]].y0 == c1;
         ++n)
      c1 = yEnd[children[n]];
    for (int a = b;; a = tree.parent[a]) {  // b, then its ancestors inside l
      const bool top = !cl.constrained() || tree.parent[a] == cl.outputBody;
      carryThroughJoint(tree, td, cl, w, a, Hd, ld, c0, c1, a != b, top);
      if (top) break;
    }
  }
}

}  // namespace

Status clusterMassMatrix(const ClusterModel& model, ClusterData& data, ConstVecRef q) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, nullptr));
  if (data.H.rows() != model.ny)
    return detail::fail(data.treeData, Status::InvalidArgument,
                        "clusterMassMatrix: the workspace was created without dense matrices "
                        "(no H)");
  // Subtree blocks (ClusterScratch::subtreeYEnd): each cluster's columns leave it as forces in
  // H(0..5, col) that the ancestors carry block by block, joint by joint (no S_k, no poses
  // relative to the output bodies); the floating root cluster 0 then has H(0..5, col) = S^T F = F
  // (S = 1) and only mirrors them.
  const std::vector<int>& yEnd = detail::fullScratch(data).subtreeYEnd;
  const bool blocks = !yEnd.empty();
  CDYN_TRY(detail::clusterPositionPass(
      model, data, q, detail::StateCheck::Check,
      blocks ? detail::OutputPoses::ImplicitOnly : detail::OutputPoses::All));
  const Model& tree = model.treeModel;
  Data& td = data.treeData;
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  const int ncl = static_cast<int>(model.clusters.size());
  // I~_b = I_b (the rotors' entries are never read; blocks: with the rotors on b folded in); the
  // column path needs the rows of S that vary.
  const std::vector<SpatialInertia>& I0 =
      blocks ? detail::fullScratch(data).blockInertias : tree.inertias;
  std::copy(I0.begin(), I0.end(), td.Ycrb.begin());
  for (int k = 0; k < ncl && !blocks; ++k) {
    const Cluster& c = model.clusters[k];
    if (c.constrained() && (c.implicit() || !ws[k].bodiesOnOutput))
      detail::clusterMotionSubspace(model, data, k, detail::Bias::Skip, detail::RotorFrame::Body);
  }
  for (int k = ncl - 1; k >= (blocks ? 1 : 0); --k) {
    const Cluster& c = model.clusters[k];
    if (c.constrained() && c.ny == 1 && ws[k].bodiesOnOutput && !c.implicit())
      scalarFlatBlock(model, data, ws, k, blocks);
    else if (c.constrained() && blocks)
      treeClusterBlock(model, data, ws, k);
    else if (c.constrained())
      constrainedBlock(model, data, ws, k, blocks);
    else
      singleBodyBlock(model, data, ws, c, blocks);
    if (blocks) carryChildren(model, data, ws, yEnd, k);
  }
  if (blocks) {
    detail::writeRootInertia(td.Ycrb[model.clusters[0].firstBody], data.H, 0);
    const int n = model.ny - 6;
    data.H.bottomLeftCorner(n, 6) = data.H.topRightCorner(6, n).transpose();
  }
  if (tree.hasArmature()) {  // + G_k^T A_k G_k on each cluster's diagonal block
    for (int k = 0; k < ncl; ++k) {
      const Cluster& c = model.clusters[k];
      auto block = data.H.block(c.y0, c.y0, c.ny, c.ny);
      if (c.constrained())
        detail::addClusterArmature(tree, c, ws[k].G, block);
      else
        for (int i = 0; i < c.nv; ++i) block(i, i) += tree.armature[c.v0 + i];
    }
  }
  // Exactly symmetric: the lower triangle mirrors the upper (the armature terms and the carried
  // columns are rounded in another order on each side).
  for (int c = 0; c < model.ny; ++c)
    for (int r = c + 1; r < model.ny; ++r) data.H(r, c) = data.H(c, r);
  detail::ok(td);
  if (detail::upperTriangleFinite(data.H)) return Status::Ok;
  return detail::nonFiniteOutput(td, "clusterMassMatrix: H", {{"q", detail::maxAbs(q), 2}});
}

}  // namespace clusterdyn
