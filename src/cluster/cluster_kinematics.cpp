// Kinematics on the cluster tree and the per-cluster explicit constraint (G, g).
#include "cluster/cluster_kinematics.hpp"

#include <algorithm>

#include "cluster/loop_constraints.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "tree/rnea_passes.hpp"
#include "tree/subtree_blocks.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn::detail {

Status checkClusterArgs(const ClusterModel& cm, ClusterData& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>* v) {
  if (data.model != &cm)
    return fail(data.treeData, Status::WorkspaceMismatch,
                "the workspace was created for another model");
  CDYN_TRY(checkConfiguration(cm.treeModel, data.treeData, q));
  if (v) CDYN_TRY(checkVector(data.treeData, *v, cm.treeModel.nv, "v"));
  return Status::Ok;
}

Status checkClusterState(const ClusterModel& cm, ClusterData& data, int k,
                         const Eigen::Ref<const VecX>& q, const double* v) {
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = detail::scratch(data)[k];
  Data& td = data.treeData;
  if (!c.implicit()) {  // couplings and mimics: linear relations, checked term by term
    const ClusterWorkspace::RelationTerm* term = w.relationTerms.data();
    for (size_t r = 0; r < c.relations.size(); ++r) {
      const ExplicitRelation& rel = cm.relations[c.relations[r]];
      const ClusterWorkspace::RelationTerm* end = w.relationTerms.data() + w.relationStart[r + 1];
      double pos = -rel.offset, vel = 0.0;
      for (; term != end; ++term) {
        pos += term->coeff * q[term->q];
        if (v) vel += term->coeff * v[term->v];
      }
      if (!(std::abs(pos) <= kClosureSettings.stateTolerance))
        return fail(td, Status::ConstraintFailure,
                    "q violates the constraints of cluster '%s' (residual %.3g); close the "
                    "loops first (loop-closure solve or projection onto the constraints)",
                    c.name.c_str(), std::abs(pos));
      if (std::abs(vel) <= kClosureSettings.stateTolerance) continue;  // below the scaled bound
      double vmax = 0.0;
      for (int i = 0; i < c.nv; ++i) vmax = std::max(vmax, std::abs(v[c.v0 + i]));
      if (!(std::abs(vel) <= kClosureSettings.stateTolerance * (1.0 + vmax)))
        return fail(td, Status::ConstraintFailure,
                    "v violates the velocity constraints of cluster '%s' (|K v| = %.3g)",
                    c.name.c_str(), std::abs(vel));
    }
    return Status::Ok;
  }
  constraintResidual(cm, data, k, q);
  const double pos = w.phi.size() ? w.phi.cwiseAbs().maxCoeff() : 0.0;
  if (pos > kClosureSettings.stateTolerance)
    return fail(td, Status::ConstraintFailure,
                "q violates the constraints of cluster '%s' (residual %.3g); close the "
                "loops first (loop-closure solve or projection onto the constraints)",
                c.name.c_str(), pos);
  if (v) {
    const Eigen::Map<const VecX> vk(v + c.v0, c.nv);
    const double scale = 1.0 + vk.cwiseAbs().maxCoeff();
    const MatX& K = c.implicit() ? w.K : c.Kexplicit;
    double vel = 0.0;
    for (Eigen::Index r = 0; r < K.rows(); ++r) vel = std::max(vel, std::abs(K.row(r).dot(vk)));
    if (vel > kClosureSettings.stateTolerance * scale)
      return fail(td, Status::ConstraintFailure,
                  "v violates the velocity constraints of cluster '%s' (|K v| = %.3g)",
                  c.name.c_str(), vel);
  }
  return Status::Ok;
}

Status clusterVelocityStep(const ClusterModel& cm, ClusterData& data, int k,
                           const Eigen::Ref<const VecX>& q, const double* v, Bias bias,
                           StateCheck check, OutputPoses poses, RotorFrame frame) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const Cluster& c = cm.clusters[k];
  const int last = c.firstBody + c.nbodies;
  ClusterScratch& scr = detail::fullScratch(data);
  discardDeferredRotors(scr);  // the rotors' entries are written here (or by completeRotorBodies)
  for (int b = c.firstBody; b < last; ++b) {
    if (scr.abaRotor(b, frame)) continue;  // in its output body's frame
    placementStep(tree, td, b, q);
    const int p = tree.parent[b];
    const Motion vJ = v ? jointMotion(tree.joints[b], v + tree.idx_v[b]) : Motion::Zero();
    td.v[b] = p >= 0 ? Motion(td.liMi[b].actInvMotion(td.v[p]) + vJ) : vJ;
    td.c[b] = crossMotion(td.v[b], vJ);
  }
  if (!c.constrained()) return Status::Ok;
  if (poses == OutputPoses::All || c.implicit()) clusterRelativePoses(cm, data, k);
  if (c.implicit()) {
    for (int b = c.firstBody; b < last; ++b) {
      const int p = tree.parent[b];
      data.localBias[b] = td.c[b];
      if (p >= c.firstBody) data.localBias[b] += td.liMi[b].actInvMotion(data.localBias[p]);
    }
    constraintJacobian(cm, data, k);
    if (bias == Bias::Compute) constraintBias(cm, data, k);
    CDYN_TRY(explicitForm(cm, data, k, bias));
  }
  if (check == StateCheck::Check) CDYN_TRY(checkClusterState(cm, data, k, q, v));
  return Status::Ok;
}

Status clusterPositionPass(const ClusterModel& cm, ClusterData& data,
                           const Eigen::Ref<const VecX>& q, StateCheck check, OutputPoses poses) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  ClusterScratch& scr = detail::fullScratch(data);
  const std::vector<ClusterWorkspace>& ws = scr.clusters;
  discardDeferredRotors(scr);        // rotors left as they are (documented)
  if (check == StateCheck::Check) {  // the relations of the clusters without loops, in one loop
    const ClusterWorkspace::RelationTerm* term = scr.relationCheckTerms.data();
    for (const ClusterScratch::RelationCheck& rel : scr.relationChecks) {
      double pos = -rel.offset;
      for (const auto* end = scr.relationCheckTerms.data() + rel.end; term != end; ++term)
        pos += term->coeff * q[term->q];
      if (std::abs(pos) <= kClosureSettings.stateTolerance) continue;
      const Status s = checkClusterState(cm, data, rel.cluster, q, nullptr);  // its message
      if (s != Status::Ok) return s;
    }
  }
  for (const int b : scr.placementBodies) {  // every body but the rotors
    if (tree.axisRotation[b] >= 0)
      axisJointTransform(tree, td, b, q.data());
    else
      localPlacementStep(tree, td, b, q);
  }
  if (poses == OutputPoses::ImplicitOnly && !cm.hasImplicitClusters()) return Status::Ok;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (!c.implicit()) {
      if (c.constrained() && poses == OutputPoses::All && !ws[k].bodiesOnOutput)
        clusterRelativePoses(cm, data, k);
      continue;
    }
    clusterRelativePoses(cm, data, k);
    constraintJacobian(cm, data, k);
    CDYN_TRY(explicitForm(cm, data, k, Bias::Skip));
    if (check == StateCheck::Check) CDYN_TRY(checkClusterState(cm, data, k, q, nullptr));
  }
  return Status::Ok;
}

Status clusterVelocityPass(const ClusterModel& cm, ClusterData& data,
                           const Eigen::Ref<const VecX>& q, const double* v, Bias bias,
                           StateCheck check, OutputPoses poses) {
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k)
    CDYN_TRY(clusterVelocityStep(cm, data, k, q, v, bias, check, poses, RotorFrame::Body));
  return Status::Ok;
}

/// Cluster motion subspace S_k = JXJ diag(S_i) G_k (Chignoli et al. 2023, eq. 15) and, with
/// Bias::Compute, the cluster bias c_k = JXJ [diag(S_i) g_k + stack(v_i x S_i qd_i)] (eq. 19), in
/// body coordinates (after clusterVelocityPass set G and g).
namespace {

/// The cluster bias c of clusterMotionSubspace alone (eq. 19, the same operations), for a
/// cluster in composite form in RotorFrame::Output: its S is deferred.
void clusterBiasDeferringS(const ClusterModel& cm, ClusterData& data, int k) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  ClusterWorkspace& w = detail::scratch(data)[k];
  w.sDeferred = true;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    const int p = tree.parent[b];
    const Joint& joint = tree.joints[b];
    const int lv = tree.idx_v[b] - c.v0;
    Motion cb = data.treeData.c[b];
    for (int a = 0; a < joint.nv; ++a) cb += joint.S.col(a) * w.g[lv + a];
    if (p >= c.firstBody)
      cb += data.treeData.liMi[b].actInvMotion(w.c.segment<6>(6 * (p - c.firstBody)));
    w.c.segment<6>(i) = cb;
  }
}

}  // namespace

void clusterMotionSubspace(const ClusterModel& cm, ClusterData& data, int k, Bias bias,
                           RotorFrame frame) {
  const ClusterScratch& scr = detail::fullScratch(data);
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  ClusterWorkspace& w = detail::scratch(data)[k];
  // ceAba (RotorFrame::Output): passes 2 and 3 of the composite form do not read S.
  if (frame == RotorFrame::Output && bias == Bias::Compute && w.compositeInUse())
    return clusterBiasDeferringS(cm, data, k);
  w.sDeferred = false;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    const int p = tree.parent[b];
    const bool internal = p >= c.firstBody;
    const int ip = 6 * (p - c.firstBody);
    const Transform& X = data.treeData.liMi[b];
    const int lv = tree.idx_v[b] - c.v0;
    const Joint& joint = tree.joints[b];
    const auto Sb = joint.S.col(0);
    const int nj = joint.nv;  // > 1: a multi-dof joint of a loop cluster
    const auto column = [&](int j) {
      Motion s = Sb * w.G(lv, j);
      for (int a = 1; a < nj; ++a) s += joint.S.col(a) * w.G(lv + a, j);
      if (internal) s += X.actInvMotion(w.S.block<6, 1>(ip, j));
      w.S.block<6, 1>(i, j) = s;
    };
    if (w.constantS[b - c.firstBody]) {
      // set once by the ClusterData constructor
    } else if (w.sColStart.empty()) {
      for (int j = 0; j < c.ny; ++j) column(j);
    } else {  // the body's column pattern; its other columns of S stay zero
      const int l = b - c.firstBody;
      for (int n = w.sColStart[l]; n < w.sColStart[l + 1]; ++n) column(w.sCols[n]);
    }
    if (bias == Bias::Skip || scr.abaRotor(b, frame)) continue;
    Motion cb = data.treeData.c[b];
    if (c.implicit())  // g = 0 without loop joints
      for (int a = 0; a < nj; ++a) cb += joint.S.col(a) * w.g[lv + a];
    if (internal) cb += X.actInvMotion(w.c.segment<6>(ip));
    w.c.segment<6>(i) = cb;
  }
}

void completeMotionSubspaces(const ClusterModel& cm, ClusterData& data) {
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (int k = 0; k < static_cast<int>(ws.size()); ++k)
    if (ws[k].sDeferred) clusterMotionSubspace(cm, data, k, Bias::Skip, RotorFrame::Body);
}

void deferRotorBodies(ClusterScratch& s, const Eigen::Ref<const VecX>& q, const double* v) {
  ClusterScratch::DeferredRotors& d = s.deferredRotors;  // sized nq, nv (q: checked nq)
  std::copy_n(q.data(), d.q.size(), d.q.data());
  if (v)
    std::copy_n(v, d.v.size(), d.v.data());
  else
    d.v.setZero();
  d.pending = true;
}

void completeRotorBodies(const ClusterModel& cm, ClusterData& data) {
  ClusterScratch& s = detail::fullScratch(data);
  const ClusterScratch::DeferredRotors& d = s.deferredRotors;
  if (!d.pending) return;
  // The rotors are leaves: the tree's forward step (Featherstone Table 5.1) gives their final
  // entries from their output bodies', which the algorithm left in treeData.
  const Motion a0 = gravityAcceleration(cm.treeModel);
  Data& td = data.treeData;
  for (const OutputFrameRotor& rotor : s.rotors) {
    const int b = rotor.body;
    rneaForwardStep(cm.treeModel, td, b, d.q, d.v.data(), data.qdd.data(), nullptr, a0);
    td.c[b] = crossMotion(td.v[b], jointMotion(cm.treeModel.joints[b], d.v.data() + rotor.iv));
    const SpatialInertia& I = cm.treeModel.inertias[b];  // CE-ABA's pass-1 terms of a leaf
    td.IA[b] = I.matrix();
    td.pA[b] = crossForce(td.v[b], I * td.v[b]);
    data.rigidInertia[b] = 1;
  }
  discardDeferredRotors(s);
}

void independentForces(const ClusterModel& cm, ClusterData& data, VecX& out) {
  const double* const tau = data.treeData.tau.data();
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (!c.constrained()) {
      for (int i = 0; i < c.nv; ++i) out[c.y0 + i] = tau[c.v0 + i];
    } else if (c.ny == 1) {
      const double* const G = ws[k].G.data();
      double x = 0.0;
      for (int i = 0; i < c.nv; ++i) x += G[i] * tau[c.v0 + i];
      out[c.y0] = x;
    } else {
      out.segment(c.y0, c.ny).noalias() =
          ws[k].G.transpose() * data.treeData.tau.segment(c.v0, c.nv);
    }
  }
}

}  // namespace clusterdyn::detail

namespace clusterdyn {

Status updateRotorBodies(const ClusterModel& model, ClusterData& data) {
  if (data.model != &model)
    return detail::fail(data.treeData, Status::WorkspaceMismatch,
                        "the workspace was created for another model");
  detail::completeRotorBodies(model, data);
  return detail::ok(data.treeData);
}

}  // namespace clusterdyn
