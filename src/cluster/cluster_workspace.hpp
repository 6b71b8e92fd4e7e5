// Per-cluster scratch of the cluster-tree algorithms. Private: a ClusterData owns it through an
// opaque handle (detail::ClusterScratchHandle, cluster_data.hpp), so the public header shows the
// algorithms' inputs and results only; the constraint matrices a caller may read (G, g, K, k) have
// public accessors (ClusterData::explicitMatrix and the like). Sized once by the ClusterData
// constructor (cluster_data.cpp): the compute functions never resize it.
#pragma once

#include <Eigen/Cholesky>
#include <utility>
#include <vector>

#include "cluster/step_modes.hpp"
#include "clusterdyn/cluster_data.hpp"
#include "core/small_lu.hpp"

namespace clusterdyn {

/// Per-cluster scratch (m bodies, n spanning dofs, d independent dofs, r constraint rows).
struct ClusterWorkspace {
  MatX G;                ///< n x d explicit constraint  v = G y_dot  (Chignoli et al. 2023, eq. 6)
  VecX g;                ///< n      v_dot = G y_ddot + g            (eq. 3)
  MatX K;                ///< r x n  all constraint rows: K v = 0, K v_dot = k
  VecX k;                ///< r
  VecX phi;              ///< r      position residual
  MatX Kd, Ki;           ///< selected rows (n - d of them): dependent / independent columns
  VecX kd;               ///< selected rows of k / phi
  std::vector<int> piv;  ///< LU pivots of Kd (factored in place), then its column order if any
  MatX Gd;               ///< (n - d) x d
  VecX dq;               ///< Newton step on the dependent coordinates (n - d)
  MatX S;                ///< 6m x d cluster motion subspace JXJ diag(S_i) G   (eq. 15)
  /// S was not written at the kinematics in the workspace: ceAba without external forces
  /// (RotorFrame::Output) skips it on the clusters in composite form, whose passes 2 and 3 do
  /// not read it. Cleared by every write of S (clusterMotionSubspace); a reader of S after ceAba
  /// calls completeMotionSubspaces first (cluster_kinematics.hpp).
  bool sDeferred = false;
  VecX c;  ///< 6m     cluster velocity product + constraint bias (eq. 19)
  MatX U;  ///< 6m x d  IA S (CE-ABA); clusterMassMatrix: IC S (composite inertias)
  MatX D;  ///< d x d   S^T U
  Eigen::LLT<MatX> llt;
  MatX Dinv;       ///< d x d
  VecX u;          ///< d
  Mat6X Ubar;      ///< 6 x d   Xh^T U: U seen from the output body (either meaning of U)
  Mat6X UbarDinv;  ///< 6 x d
  VecX tmpd;       ///< d
  VecX qWarm;      ///< nq: the warm start of the cluster's position solve (loop closure scratch)
  VecX qSaved;     ///< nq: positions before a Newton step (clusters with multi-dof joints)
  VecX qTarget;    ///< nq: the target's positions during a continuation (its independent ones)
  /// Loop closure (implicit clusters of 1-dof joints): the tangent of the assembly branch at the
  /// closed configuration qTangent (the cluster's nq positions), closureGd = Kd^-1 Ki there
  /// (G's dependent rows are -closureGd); valid when tangentValid. The predictor of the next
  /// solve reads it when its warm start is qTangent (loop_closure.cpp).
  MatX closureGd;   ///< (n - d) x d
  VecX qTangent;    ///< nq
  VecX qPredicted;  ///< n - d: the predictor's dependent positions
  VecX qStepStart;  ///< n - d: the dependent positions at the start of a continuation step
  VecX qStepDy;     ///< d: the step's change of the independent positions
  bool tangentValid = false;
  std::vector<Transform> outputTb;  ///< pose of each body relative to the output body

  // State-independent parts, set once by the ClusterData constructor (cluster_data.cpp).
  /// Per body of the cluster: 1 when its rows of S do not depend on the state (an explicit
  /// cluster's body hanging from the output body: S_b = S_joint G_rows, eq. 15 without JXJ);
  /// clusterMotionSubspace then leaves them as the constructor wrote them. 2 for a rotor (below).
  std::vector<char> constantS;
  /// Rotors of the cluster (local body indices): axisymmetric leaf bodies with constant rows of S.
  /// While their IA is the rigid inertia I, their U = I S rows, their S^T I S and X^T I S (their
  /// momentum seen from the output body, the same at every rotor angle) are constants.
  std::vector<int> rotors;
  MatX rotorU;      ///< 6m x d: the rotors' rows of U = I S (zero elsewhere)
  MatX rotorD;      ///< d x d: sum over the rotors of S_b^T I_b S_b
  Mat6X rotorUbar;  ///< 6 x d: sum over the rotors of X_b^T I_b S_b
  /// Sum over the rotors of their inertia in the output body's frame (the same at every angle).
  SpatialInertia rotorInertia;
  /// The cluster's explicit relations (couplings, mimics) flattened for the state check: relation
  /// r (local index into Cluster::relations) has the terms [relationStart[r], relationStart[r + 1])
  /// of relationTerms, each a spanning position index, velocity index and coefficient.
  struct RelationTerm {
    int q = 0, v = 0;
    double coeff = 0.0;
  };
  std::vector<RelationTerm> relationTerms;
  std::vector<int> relationStart;
  /// Every body of the cluster hangs from the output body (no joint inside the cluster): the
  /// pose of body b relative to the output body is its joint transform liMi[b].
  bool bodiesOnOutput = false;
  /// A flat scalar cluster: explicit (couplings, mimics), one independent coordinate, every body
  /// on the output body (a link with its geared rotors, coupled sibling joints). In
  /// RotorFrame::Output (CE-ABA without external forces) the steps take its fused steps
  /// (cluster_aba_flat.cpp): each link as a tree body, each rotor in its output body's frame, no
  /// cluster-sized S, c or outputTb.
  bool flatScalar = false;
  /// Column pattern of S (eq. 15: S_b = S_i G_row(i) + X S_parent inside the cluster): body i's
  /// rows can be non-zero only in columns sCols[sColStart[i] .. sColStart[i + 1]) (sorted), the
  /// union of the G rows of its ancestors in the cluster. Constant (G's pattern is: explicit
  /// clusters' G is constant, an implicit one's independent rows are unit rows). Empty: no
  /// pattern, the steps take the dense path.
  std::vector<int> sColStart;
  std::vector<int> sCols;
  /// Per independent coordinate j (implicit clusters; empty otherwise): 1 when column j of K is
  /// zero at every configuration, because joint j moves no loop point: a revolute joint whose
  /// axis passes through the origin of the only loop frame it carries, a spherical loop's
  /// predecessor frame P fixed in the joint's own body (a delta robot's rod spinning about its
  /// axis). explicitForm then sets the column of K_i to exact zeros (it is round-off there), so
  /// column j of G is zero on every dependent row and the column pattern of S keeps it to
  /// the joint's own subtree.
  std::vector<char> idleColumn;
  /// Sparse K_d (setDependentOrder, loop_constraints.cpp; the implicit clusters with a multi-dof
  /// joint whose loops have private columns): Kd holds the dependent columns in the order
  /// kdOrder (Kd column j = dependent kdOrder[j]; piv[nd..2nd) encodes it, small_lu.hpp), is
  /// factored by sparseLuFactor and solved over kdPattern. Empty kdOrder: dense, natural order.
  std::vector<int> kdOrder;
  detail::SparseLuPattern kdPattern;
  /// 6 x n (with kdOrder): the joint axes in the output body's coordinates, outputTb_b s
  /// (constraintJacobian, after every clusterRelativePoses of the velocity and position passes;
  /// the composite pass 2 reads them)
  Mat6X axesOut;
  VecX Utc;   ///< d: U^T c (pass 2 of the sparse path; pass 3 reads it)
  MatX Linv;  ///< d x d: L^-1 of the Cholesky factor of D (sparse path: D^-1 = L^-T L^-1)
  /// Pass 2 in composite-inertia form (cluster_aba_composite.cpp), active for the implicit
  /// clusters with a multi-dof joint, d > 3 and no idle column (set by the ClusterData
  /// constructor: setCompositeForm): D, u,
  /// U^T c and Ubar from the cluster's spanning-tree inertia; U (6m x d) is then NOT written,
  /// and the steps that need U^T Xh use Ubar^T instead. Pass 3 is then a forward sweep over the
  /// cluster's joints, so neither pass reads S: ceAba does not write it (sDeferred).
  struct Composite {
    bool active = false;
    std::vector<std::pair<int, int>> pairs;  ///< (i, j), i <= j: joint of i ancestor of j's
    std::vector<SpatialInertia> rigidIC;     ///< m: composites, output body's coordinates
    std::vector<Mat6> generalIC;             ///< m: the same when some IA is not rigid
    std::vector<Force> fp, fq;               ///< m: subtree sums of Xh^T pA, Xh^T IA c
    Mat6X So, F;  ///< 6 x n: joint axes s_i (when axesOut is not kept), F_i = IC_i s_i
    MatX HG;      ///< n x d: H G
    VecX Jp, Jq;  ///< n: J^T pA, J^T IA c
  };
  Composite composite;
  /// Pass 2 takes the composite form (articulatedSparse: with the column pattern), so passes 2
  /// and 3 do not read S.
  bool compositeInUse() const { return composite.active && !sColStart.empty(); }
};

/// What a ClusterData's scratch handle owns: one ClusterWorkspace per cluster (index: cluster).
/// A rotor (ClusterWorkspace::rotors: an axisymmetric leaf on a revolute joint hanging from the
/// output body of a coupling cluster) seen from its output body, where its joint axis and its
/// inertia are the same at every rotor angle: the recursions can then treat it without its own
/// joint transform (see detail::RotorFrame and ClusterScratch::deferredRotors).
struct OutputFrameRotor {
  int body = -1, parent = -1;  ///< the rotor and its output body
  int iv = -1;                 ///< its spanning velocity index
  Motion axis;                 ///< X_T S: its motion subspace in the output body's frame
  SpatialInertia inertia;      ///< its inertia in the output body's frame
  /// In a cluster with one to three independent coordinates (CE-ABA's scalar and fixed-size
  /// steps treat it in the output body's frame): its row of the cluster's G (row, local index)
  /// and I (X_T S), its U in the output body's frame per unit of its joint rate (U = Iaxis G_row).
  bool aba = false;
  int row = -1;
  Force Iaxis = Force::Zero();
  /// With one independent coordinate: its G entry G(row, 0) (0 otherwise).
  double g = 0.0;
  /// CE-RNEA's terms (ce_rnea.cpp, with I the inertia and s the axis, all constant): the
  /// matrix M with M v = I (v x s) + v x* (I s) + s x* (I v), its force s x* I s and s^T I s.
  Mat6 velocityForce = Mat6::Zero();
  Force axisForce = Force::Zero();
  double axisInertia = 0.0;
};

/// What a ClusterData's scratch handle owns.
struct ClusterScratch {
  std::vector<ClusterWorkspace> clusters;  ///< one per cluster (index: cluster)
  std::vector<OutputFrameRotor> rotors;    ///< every rotor of the model
  std::vector<int> rotorSlot;              ///< per body: index into rotors, or -1
  /// Per body: 1 when it is the output body of some cluster (whose steps add to its IA and pA);
  /// else its IA stays the rigid inertia while data.rigidInertia says so.
  std::vector<char> outputOfCluster;
  /// The non-zero entries of the block-diagonal G of a model without loop joints (G constant:
  /// identity blocks, couplings, mimics), for v_dot = G y_ddot and tau_y = G^T tau in one loop.
  struct GEntry {
    int v = 0, y = 0;  ///< spanning velocity and independent velocity index
    double value = 0.0;
  };
  std::vector<GEntry> constantG;  ///< empty when some cluster has a loop joint
  /// The rotors' entries of treeData (liMi, oMi, v, a_gf, c, f, IA, pA) that an algorithm in
  /// RotorFrame::Output left unwritten, and the state of that call. Owned by three functions
  /// (cluster_kinematics.hpp): deferRotorBodies records it, discardDeferredRotors forgets it
  /// (a step that writes or invalidates the entries it would be completed from),
  /// completeRotorBodies writes the entries and forgets it.
  struct DeferredRotors {
    bool pending = false;
    VecX q;  ///< nq: the spanning configuration of that call
    VecX v;  ///< nv: its spanning velocity
  };
  DeferredRotors deferredRotors;
  /// RotorFrame::Output's pass-1 terms per rotor: the bias rotorC (v_o x s qd) and the force
  /// rotorP (v_r x* I v_r) (outputFrameRotorBias).
  std::vector<Motion> rotorC;
  std::vector<Force> rotorP;
  /// Per body: its inertia plus that of the rotors hanging from it (OutputFrameRotor, constant
  /// in its frame): CE-RNEA's rigid inertia of the body with its rotors.
  std::vector<SpatialInertia> rneaInertias;
  /// True when the steps in mode `frame` treat cluster body b in its output body's frame.
  bool abaRotor(int b, detail::RotorFrame frame) const {
    return frame == detail::RotorFrame::Output && rotorSlot[b] >= 0 && rotors[rotorSlot[b]].aba;
  }

  // clusterMassMatrix (cluster_mass_matrix.cpp) and its position pass; set by the ClusterData
  // constructor.
  /// Per cluster k: the end of its subtree's independent velocities, [y0_k, subtreeYEnd[k])
  /// holding k and its descendant clusters. Set when cluster 0 is the only root, one body on a
  /// floating joint (ny = 6), and the clusters are numbered depth first with consecutive y0;
  /// empty otherwise (clusterMassMatrix then carries each column up the ancestors on its own).
  std::vector<int> subtreeYEnd;
  /// With subtreeYEnd: per body b, I_b plus the rotorInertia of the constrained clusters whose
  /// output body is b (the rotors' inertia seen from b, the same at every angle): the composite
  /// inertias start there.
  std::vector<SpatialInertia> blockInertias;
  /// The explicit relations (couplings, mimics) of the clusters without loop joints, flattened
  /// for clusterPositionPass's state check in one loop: relation n (of cluster `cluster`) has the
  /// terms [relationChecks[n - 1].end, relationChecks[n].end) of relationCheckTerms.
  struct RelationCheck {
    int cluster = 0, end = 0;
    double offset = 0.0;
  };
  std::vector<RelationCheck> relationChecks;
  std::vector<ClusterWorkspace::RelationTerm> relationCheckTerms;
  /// The bodies whose joint transforms clusterPositionPass computes: all but the rotors of the
  /// clusters without loop joints (ClusterWorkspace::constantS == 2), in body order.
  std::vector<int> placementBodies;
};

namespace detail {

/// The one way into a ClusterData's private scratch handle (a friend of ClusterData).
struct ClusterScratchAccess {
  static ClusterScratch& get(ClusterData& data) { return *data.scratch_.get(); }
  static const ClusterScratch& get(const ClusterData& data) { return *data.scratch_.get(); }
};

/// The per-cluster workspaces of data (index: cluster). One pointer indirection: hoist the
/// reference out of loops over clusters. data must not be a moved-from ClusterData.
inline std::vector<ClusterWorkspace>& scratch(ClusterData& data) {
  return ClusterScratchAccess::get(data).clusters;
}
inline const std::vector<ClusterWorkspace>& scratch(const ClusterData& data) {
  return ClusterScratchAccess::get(data).clusters;
}
/// The whole scratch of data (the per-cluster workspaces and the model-wide rotor terms).
inline ClusterScratch& fullScratch(ClusterData& data) { return ClusterScratchAccess::get(data); }
inline const ClusterScratch& fullScratch(const ClusterData& data) {
  return ClusterScratchAccess::get(data);
}

}  // namespace detail
}  // namespace clusterdyn
