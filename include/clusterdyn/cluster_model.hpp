// Cluster tree (Chignoli et al. 2023, §II-III): the URDF joints form the spanning tree;
// couplings, mimics and loop joints are chords; every body on the two branches below a chord's
// nearest common ancestor joins one cluster, overlapping clusters merge, and a cluster whose base
// bodies have different parents is grown until it has a single output body.
//
// Coordinates:
//  * spanning q, v: the coordinates of every tree joint (layout of ClusterModel::treeModel, see
//    model.hpp). Bodies are numbered so that each cluster's bodies are contiguous and clusters
//    are in regular order (parent cluster before child).
//  * independent y (positions, size nyq) and y_dot (velocities, size ny): the coordinates of the
//    floating base, of every joint outside loops, and of the joints marked independent="true"
//    inside loop clusters, in spanning order. Spanning velocities are v = G y_dot with G block
//    diagonal over clusters; v_dot = G y_ddot + g (Chignoli et al. 2023, eq. 3, 6).
// Joints inside loop clusters: 1-dof joints and multi-dof joints (spherical, planar, floating),
// each independent or dependent as a whole: a dependent multi-dof joint is solved by the loop
// closure on its manifold; an independent one (marked independent="true") puts all of its
// positions in y (a quaternion: nyq > ny) and its velocities in y_dot (integrateIndependent,
// independent_configuration.hpp). Clusters of couplings and mimics only hold 1-dof joints.
#pragma once

#include <string>
#include <vector>

#include "clusterdyn/inertia.hpp"
#include "clusterdyn/model.hpp"
#include "clusterdyn/model_builder.hpp"

namespace clusterdyn {

/// Implicit loop joint (URDF+ <loop>): a cut joint of the given type between a frame P on the
/// predecessor body and a frame S on the successor body. It constrains the relative spatial
/// velocity nu = P_X_S v_S - v_P (P coordinates) along the rows of T (6 x rows): the
/// orthogonal complement of the cut joint's motion subspace.
struct LoopJoint {
  std::string name;
  JointType type = JointType::Fixed;  ///< Revolute, Prismatic, Planar, Spherical or Fixed
  std::string location;               ///< "file:line" of the <loop> element
  int predecessorBody = -1, successorBody = -1;
  Transform predecessorPlacement, successorPlacement;  ///< frames P and S in their bodies
  Vec3 axis = Vec3::UnitX();                           ///< in the P (= S at closure) frame
  Eigen::Matrix<double, 3, Eigen::Dynamic, 0, 3, 3> Trot, Tlin;  ///< constrained directions
  int rows() const { return static_cast<int>(Trot.cols() + Tlin.cols()); }
  int cluster = -1;
};

/// A linear explicit relation  sum_j coeff_j q_j = offset  between spanning joint coordinates
/// (couplings: velocity and position; mimic: q_f - m q_l = offset).
struct ExplicitRelation {
  std::string name;
  std::string location;
  std::vector<std::pair<int, double>> terms;  ///< (spanning velocity index, coefficient)
  double offset = 0.0;
  int cluster = -1;
};

struct Cluster {
  std::string name;
  int parent = -1;      ///< parent cluster (-1: attached to the world)
  int outputBody = -1;  ///< parent of all base bodies (-1: world), Λ(k) of Chignoli et al.
  int firstBody = 0, nbodies = 0;  ///< bodies [firstBody, firstBody + nbodies)
  int q0 = 0, nq = 0;              ///< spanning position range
  int v0 = 0, nv = 0;              ///< spanning velocity range
  int y0 = 0, ny = 0;              ///< independent velocity range
  int yq0 = 0, nyq = 0;            ///< independent position range
  std::vector<int> independent;    ///< local velocity indices (0..nv) that are independent
  std::vector<int> dependent;      ///< the others
  std::vector<int> relations;      ///< indices into ClusterModel::relations
  std::vector<int> loops;          ///< indices into ClusterModel::loops
  std::vector<int> children;       ///< child clusters
  bool constrained() const { return !relations.empty() || !loops.empty(); }
  bool implicit() const { return !loops.empty(); }
  int constraintRows = 0;  ///< relations.size() + sum of loop rows
  /// Constraint rows kept (n - d of them, chosen by a rank-revealing QR at the reference
  /// configuration); the others are redundant (e.g. out-of-plane rows of planar loops).
  std::vector<int> selectedRows;
  MatX Kexplicit;  ///< relations.size() x nv (constant)
  MatX G;          ///< nv x ny, constant when the cluster has no loop joint
};

struct ClusterModel {
  Model treeModel;  ///< spanning tree, bodies renumbered cluster by cluster
  std::vector<Cluster> clusters;
  std::vector<int> bodyCluster;  ///< cluster of each body
  std::vector<LoopJoint> loops;
  /// <loop>s left open (closure="cut" or ModelOptions::cutLoops): cluster -1, not embedded;
  /// cutLoopConstraints() (constraints.hpp) turns them into rigid constraints.
  std::vector<LoopJoint> cutLoops;
  std::vector<ExplicitRelation> relations;
  int ny = 0;                            ///< independent velocity count
  int nyq = 0;                           ///< independent position count
  std::vector<int> independentVelocity;  ///< y_dot index -> spanning velocity index
  std::vector<int> independentPosition;  ///< y index -> spanning position index
  std::vector<std::string> independentVelocityNames, independentPositionNames;
  VecX qReference;  ///< a closed spanning configuration (y = neutral), found at load time
  int maxClusterBodies = 1;
  /// Per body: 1 for a leaf body on a revolute joint whose inertia is symmetric about the joint
  /// axis (a rotor), whose inertia in its parent's frame is then the same at every joint angle:
  /// axisymmetricInertiaInParent[b] (the CE-ABA and H output projections use it).
  std::vector<char> axisymmetricLeaf;
  std::vector<SpatialInertia> axisymmetricInertiaInParent;

  int clusterOfBody(int body) const { return bodyCluster[body]; }
  /// True when the model has any chord: a loop closure (<loop>) OR a coupling/mimic relation,
  /// i.e. when G is not the identity. (A model with couplings only has no kinematic loop.)
  bool hasLoops() const { return !loops.empty() || !relations.empty(); }
  /// True when some cluster has a loop joint (G, g depend on the state).
  bool hasImplicitClusters() const { return !loops.empty(); }
};

/// Builds the cluster tree of a URDF(+) description. Throws ModelError (naming the element)
/// for: chords naming unknown links, a coupling/mimic with no dependent joint, an independent
/// joint count that differs from the cluster's freedom, an independent set that does not
/// parametrize a loop, cycles among mimics, a loop that cannot be closed, a multi-dof joint
/// marked independent inside a loop cluster or inside a cluster of couplings and mimics.
ClusterModel buildClusterModel(const UrdfDescription& urdf, const ModelOptions& options = {});

/// parseUrdfFile + buildClusterModel.
ClusterModel loadModel(const std::string& path, const ModelOptions& options = {});

/// Readable dump of the cluster tree (clusters, bodies, output body, dof counts).
std::string describeClusterTree(const ClusterModel& model);

/// Graphviz picture of the cluster tree, with chords drawn as dashed edges.
std::string clusterTreeDot(const ClusterModel& model);

/// Model with bodies reordered: order[newIndex] = oldIndex (must keep parents first).
Model permuteBodies(const Model& model, const std::vector<int>& order);

}  // namespace clusterdyn
