// Multi-dof joints (spherical, planar, floating) inside the clusters of the cluster tree: which
// the builder accepts (joints of loop clusters, dependent or independent as a whole) and the
// messages naming the others.
#include "cluster/multi_dof_joints.hpp"

#include <Eigen/SVD>
#include <algorithm>

#include "cluster/cluster_workspace.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/model_builder.hpp"

namespace clusterdyn::detail {

/// A multi-dof joint (spherical, planar, floating) inside constrained cluster c (body b): allowed
/// in a loop cluster as a whole, dependent (its quaternion solved by the closure on the manifold)
/// or, when marked independent="true", independent (its nq positions in y, its nv velocities in
/// y_dot). Rejected in a cluster of couplings and mimics (their linear relations act on 1-dof
/// joints).
bool checkMultiDofJoint(const ClusterModel& cm, const Cluster& c, int b, const UrdfJoint* uj) {
  const Model& tree = cm.treeModel;
  const std::string joint =
      "joint '" + tree.jointNames[b] + "' of type " + jointTypeName(tree.joints[b].type);
  if (!c.implicit()) {
    const ExplicitRelation& rel = cm.relations[c.relations[0]];
    throw ModelError(rel.location + ": relation '" + rel.name + "': " + joint +
                     " lies inside its cluster; couplings and mimics act on 1-dof joints only "
                     "(a multi-dof joint can be part of a loop cluster)");
  }
  return uj && uj->independentGiven && uj->independent;
}

/// "" or, when the dependent columns of cluster k's K (in data) have a null direction carried
/// mostly by a multi-dof joint (a rod's idle spin between two ball joints), a hint naming it:
/// such a joint is dependent as a whole, so the free direction has no coordinate.
std::string multiDofFreeDirectionHint(const ClusterModel& cm, const ClusterData& data, int k) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  const MatX& K = detail::scratch(data)[k].K;
  const int nd = static_cast<int>(c.dependent.size());
  if (nd == 0 || K.rows() == 0 || !K.allFinite()) return "";
  MatX Kd(K.rows(), nd);
  for (int j = 0; j < nd; ++j) Kd.col(j) = K.col(c.dependent[j]);
  const Eigen::JacobiSVD<MatX> svd(Kd, Eigen::ComputeFullV);
  const VecX& sv = svd.singularValues();
  const double smallest = nd > K.rows() ? 0.0 : sv[nd - 1];
  if (smallest > kClosureSettings.referenceRankThreshold * std::max(1.0, sv[0])) return "";
  Eigen::Index j = 0;
  svd.matrixV().col(nd - 1).cwiseAbs().maxCoeff(&j);
  const int b = tree.velocityOwner[c.v0 + c.dependent[j]];
  if (tree.nvs[b] == 1) return "";
  return "; joint '" + tree.jointNames[b] + "' of type " + jointTypeName(tree.joints[b].type) +
         " moves along a direction the constraints leave free (e.g. a rod's spin between two "
         "ball joints), but a multi-dof joint inside a loop cluster is dependent or independent as "
         "a whole: "
         "write it as revolute joints with intersecting axes and mark the free one "
         "independent=\"true\" (MJCF: hinge joints; the reader leaves the free one "
         "independent), or cut the loop instead (URDF+ closure=\"cut\", "
         "ModelOptions::cutLoops, CDYN_LOAD_CUT_LOOPS, Python cut_loops=True)";
}

}  // namespace clusterdyn::detail
