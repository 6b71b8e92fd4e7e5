// The cluster builder's last step: the reference configuration with every loop closed, and the
// check of each constrained cluster's independent coordinates there (Chignoli et al. 2023, §II).
#include <Eigen/QR>
#include <algorithm>
#include <random>

#include "cluster/cluster_builder_detail.hpp"
#include "cluster/independent_joints.hpp"
#include "cluster/loop_closure.hpp"
#include "cluster/loop_constraints.hpp"
#include "cluster/multi_dof_joints.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/configuration.hpp"
#include "model/joint_types.hpp"

namespace clusterdyn::detail {
namespace {

/// Rank-revealing QR of K^T for cluster k's K in data (its column pivots rank the constraint
/// rows).
Eigen::ColPivHouseholderQR<MatX> constraintRankQR(const ClusterData& data, int k) {
  Eigen::ColPivHouseholderQR<MatX> qr(scratch(data)[k].K.transpose());
  qr.setThreshold(kClosureSettings.referenceRankThreshold);
  return qr;
}

/// 'name1', 'name2' of the cluster's local velocities idx, or none.
std::string velocityNameList(const Model& tree, const Cluster& c, const std::vector<int>& idx) {
  std::string s;
  for (int iv : idx) s += (s.empty() ? "'" : ", '") + tree.velocityNames[c.v0 + iv] + "'";
  return s.empty() ? std::string("none") : s;
}

/// The cluster's independent coordinates and the constraints' freedom do not match.
[[noreturn]] void failIndependentCount(const Model& tree, const Cluster& c,
                                       const std::string& where, const std::string& elem,
                                       int freedom, const char* qualifier,
                                       const std::string& hint) {
  fail(where, elem,
       "has " + std::to_string(c.ny) + " independent coordinates (" +
           velocityNameList(tree, c, c.independent) + ") but its constraints leave " + qualifier +
           std::to_string(freedom) + " degrees of freedom" +
           (c.ny > freedom ? " (more independent coordinates than the cluster's freedom)" : "") +
           "; " + kIndependentCountAdvice + hint);
}

/// Closes constrained cluster k in cm.qReference and checks its independent set: the
/// constraints' freedom nv - rank(K) equals ny and the dependent block is regular there. Sets
/// the cluster's selected rows and, for explicit clusters, its constant G.
void closeClusterAtReference(ClusterModel& cm, ClusterData& data, int k) {
  const Model& tree = cm.treeModel;
  Cluster& c = cm.clusters[k];
  std::string elem = "cluster '" + c.name + "'";
  const std::string where =
      !c.loops.empty() ? cm.loops[c.loops[0]].location : cm.relations[c.relations[0]].location;
  // Close the loops at y = 0 and at a few random independent values (the zero
  // configuration may be singular, e.g. a parallelogram four-bar with collinear links);
  // keep the closed configuration where K has the largest rank (the generic one).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uni(-0.6, 0.6);
  VecX best;
  int bestRank = -1;
  std::string lastError;
  const VecX neutral = neutralConfiguration(tree);
  for (int attempt = 0; attempt < 8 && bestRank < c.nv - c.ny; ++attempt) {
    VecX qTry = cm.qReference;
    forEachIndependentJoint(cm, c, [&](int b, int, int, int) {
      const int iq = tree.idx_q[b];
      if (tree.nvs[b] == 1) {
        qTry[iq] = attempt == 0 ? 0.0 : uni(rng);
        return;
      }
      // A multi-dof joint: its neutral positions moved along a random tangent (exponential map).
      Vec6 dv = Vec6::Zero();
      for (int a = 0; a < tree.nvs[b]; ++a) dv[a] = attempt == 0 ? 0.0 : uni(rng);
      qTry.segment(iq, tree.nqs[b]) = neutral.segment(iq, tree.nqs[b]);
      const Joint& joint = tree.joints[b];
      visitJointType(joint.type, [&](auto J) {
        decltype(J)::integrate(joint, qTry.data() + iq, dv.data(), 1.0, qTry.data() + iq);
      });
    });
    if (closeClusterPositions(cm, data, k, qTry) != Status::Ok) {
      lastError = data.errorMessage();
      continue;
    }
    constraintJacobian(cm, data, k);
    const auto qr = constraintRankQR(data, k);
    if (static_cast<int>(qr.rank()) > bestRank) {
      bestRank = static_cast<int>(qr.rank());
      best = qTry;
    }
  }
  if (bestRank < 0) {
    // No closure: before blaming the geometry, check the count. The rank of K at an
    // unclosed configuration bounds the rank on the constraint manifold from above for the
    // generic mechanisms URDF+ describes; more independent coordinates than nv - rank
    // cannot be right (nor can zero dependent coordinates with a violated constraint).
    clusterPlacements(cm, data, k, cm.qReference);
    constraintJacobian(cm, data, k);
    const auto qr = constraintRankQR(data, k);
    const int freedom = c.nv - static_cast<int>(qr.rank());
    if (c.ny > freedom || c.dependent.empty())
      failIndependentCount(tree, c, where, elem, freedom, "at most ",
                           multiDofFreeDirectionHint(cm, data, k));
    fail(where, elem,
         "the loop cannot be closed (tried the independent coordinates at zero and at 7 "
         "random values): " +
             lastError);
  }
  cm.qReference = best;
  clusterPlacements(cm, data, k, cm.qReference);
  constraintJacobian(cm, data, k);
  ClusterWorkspace& w = scratch(data)[k];
  // Rank-revealing QR of K^T: its column pivots rank the constraint rows; keep rank(K).
  const auto qrT = constraintRankQR(data, k);
  const int rank = static_cast<int>(qrT.rank());
  const int freedom = c.nv - rank;
  if (c.ny != freedom)
    failIndependentCount(tree, c, where, elem, freedom, "", multiDofFreeDirectionHint(cm, data, k));
  c.selectedRows.clear();
  for (int i = 0; i < rank; ++i) c.selectedRows.push_back(qrT.colsPermutation().indices()[i]);
  std::sort(c.selectedRows.begin(), c.selectedRows.end());
  if (explicitForm(cm, data, k, Bias::Skip) != Status::Ok)
    fail(where, elem,
         "the independent coordinates (" + velocityNameList(tree, c, c.independent) +
             ") do not parametrize the loop: the dependent block of the constraint "
             "Jacobian for (" +
             velocityNameList(tree, c, c.dependent) +
             ") is singular at the reference configuration" +
             multiDofFreeDirectionHint(cm, data, k));
  if (!c.implicit()) c.G = w.G;
}

}  // namespace

/// cm.qReference: the neutral configuration with every constrained cluster closed; G = I for
/// the unconstrained clusters.
void closeReferenceConfiguration(ClusterModel& cm) {
  cm.qReference = neutralConfiguration(cm.treeModel);
  ClusterData data(cm, false);  // cluster workspaces only: no ny x ny / nv x nv matrices
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    Cluster& c = cm.clusters[k];
    if (!c.constrained())
      c.G.setIdentity(c.nv, c.nv);
    else
      closeClusterAtReference(cm, data, k);
  }
}

}  // namespace clusterdyn::detail
