// Analytical derivatives of the constraint-embedding dynamics (Chignoli et al. 2023) in the
// independent coordinates y of a cluster model: CE-RNEA (d tau_y / d(y, y_dot, y_ddot)) and CE-ABA
// (d y_ddot / d(y, y_dot, tau_y)), explicit clusters (couplings, mimics, rotors) and implicit
// loops (G(q), g(q, v) of the loop closure, differentiated through it). Derivation and
// conventions: docs/derivatives.md, "Cluster-tree derivatives" (equations C1-C9; rotors seen
// from their output body in the passes: R1, R2).
//
// Conventions:
//  * The state is a closed spanning state (q, v = G y_dot) as in ceRnea() / ceAba()
//    (cluster_algorithms.hpp); inputs y_ddot / tau_y / fext as there.
//  * Column e of d f / d y is d/de f at the closed configuration whose independent joints are
//    moved by integrate(., e, 1) along the independent velocity e (tangent of y, size ny: the
//    floating base's Lie-group tangent, body-frame twist, as for the tree derivatives; an
//    independent ball joint of a loop cluster: its body-frame rotation; integrateIndependent,
//    independent_configuration.hpp) and whose
//    dependent joints follow on the same assembly branch; y_dot and y_ddot (or tau_y) are held
//    fixed. The spanning tangent of that motion is dq = G(q) dy.
//  * fext: forces applied TO each body, body coordinates, held fixed in the body frame.
//  * Matrices are dense ny x ny.
//  * Joint dynamics (an MJCF model's armature A, springs and dampers tau_p(q, v); Model::
//    hasJointDynamics()) are included as ceRnea / ceAba include them: tau_y = G^T (RNEA(q, v, a)
//    + A a - tau_p(q, v)), a = G y_ddot + g, so H = G^T (M + A) G (docs/derivatives.md, "Joint
//    dynamics", eq. J1, J2). A model without them takes none of their branches.
#pragma once

#include <Eigen/Cholesky>
#include <vector>

#include "clusterdyn/cluster_data.hpp"
#include "clusterdyn/derivatives.hpp"

namespace clusterdyn {

/// Workspace and outputs of the cluster derivative functions, sized once from the model (no
/// heap use in the compute calls).
struct ClusterDerivativeData {
  explicit ClusterDerivativeData(const ClusterModel& model);

  const ClusterModel* model = nullptr;  ///< the model this workspace was made for

  // Outputs (ny x ny unless stated). On a model without loop joints the calls write the blocks
  // between related clusters (one an ancestor of the other, or the same) and leave the others
  // as the constructor made them (zero), like the tree derivatives: do not write into them.
  MatX dtau_dy;     ///< d tau_y / d y (tangent columns)
  MatX dtau_dydot;  ///< d tau_y / d y_dot
  MatX H;           ///< d tau_y / d y_ddot = G^T (M + A) G (A: armature, if any)
  MatX dydd_dy;     ///< d y_ddot / d y
  MatX dydd_dydot;  ///< d y_ddot / d y_dot
  MatX Hinv;        ///< H^-1 = d y_ddot / d tau_y
  VecX tauY, ydd;   ///< the CE-RNEA forces / CE-ABA accelerations the derivatives were taken at

  /// The spanning-tree derivative passes (treeModel) at (q, v, a = G y_ddot + g): tau and the
  /// per-body world quantities (psi, ov, oa, ...); dtau_dq, dtau_dv, dtau_da = M only for a model
  /// with loop joints (without, the backward pass writes the cluster rows directly, eq. F1-F3).
  DerivativeData tree;

  // Scratch (spanning nv x ny unless stated).
  VecX a;       ///< spanning accelerations G y_ddot + g (nv)
  MatX dv_dy;   ///< d v / d y at fixed y_dot (eq. C4): dependent rows of loop clusters only
  MatX da_dy;   ///< d a / d y at fixed y_dot, y_ddot (eq. C5)
  MatX da_dyd;  ///< d a / d y_dot at fixed y_ddot (eq. C6)
  /// -d tau_p / dq, -d tau_p / dv of the passive forces (nv x nv; only for a model with springs
  /// or dampers and without loop joints, empty otherwise; eq. J2).
  MatX passiveDq, passiveDv;
  struct GEntry {
    int v = 0, y = 0;  ///< spanning velocity index, independent velocity index
    double value = 0.0;
  };
  std::vector<GEntry> Gentries;  ///< non-zero pattern of the block-diagonal G (capacity fixed)
  std::vector<int> entryStart;   ///< per cluster: its first entry in Gentries (+ the end)
  /// Per spanning velocity e: its row of G, the entries [dofEntryBegin[e], dofEntryEnd[e]).
  std::vector<int> dofEntryBegin, dofEntryEnd;
  /// A joint column's terms of the backward pass (Carpentier & Mansard 2018, eq. D7-D10): Ic psi,
  /// Bc^T psi, Y, Yv of its subtree; per independent velocity y the same summed over G's column y
  /// (eq. F1: the cluster's row).
  struct RowTerms {
    Force Ipsi = Force::Zero(), Bpsi = Force::Zero(), Y = Force::Zero(), Yv = Force::Zero();
  };
  std::vector<RowTerms> dofTerms;     ///< nv
  std::vector<RowTerms> foldedTerms;  ///< ny
  /// Per cluster: one body without loop joints whose G is the identity (a floating base, a
  /// lone independent joint): its blocks are written by fixed-pattern products (eq. F2, F3).
  std::vector<char> unitCluster;
  /// Pairs of clusters (a, b), a an ancestor of b or b of a or a = b: the only blocks of
  /// G^T A G that can be non-zero for A = M, d tau / dq, d tau / dv.
  std::vector<std::pair<int, int>> relatedClusters;
  /// Per cluster k, from relatedRowStart[k]: the independent velocities of the clusters related
  /// to k, as sorted disjoint ranges [begin, end) (the rows of d tau_y / dy, d tau_y / d y_dot
  /// that can be non-zero in k's columns: the products with H^-1 skip the others).
  std::vector<std::pair<int, int>> relatedRows;
  std::vector<int> relatedRowStart;
  // Per loop cluster (the largest sizes): constraint rows in world form and their derivatives.
  std::vector<Force> ow;     ///< per constraint row: the row as a world wrench (eq. C1)
  std::vector<int> rowLoop;  ///< per constraint row: loop index, -1 for explicit relations
  MatX Psiq, Phiq, Phiv;     ///< rows x n: d Psi / dq, d Phi / dq, d Phi / dv (eq. C2, C3)
  MatX small;                ///< rows x max(n, d) scratch
  MatX smallG;               ///< rows x d scratch
  VecX lambda;               ///< Kd^-T tau_dependent
  VecX rho;                  ///< n
  std::vector<char> onS,
      onP;                  ///< per cluster body: on the path to the loop's successor / predecessor
  std::vector<Motion> ovx;  ///< per cluster body: world twist from a velocity G_c (eq. C7)
  // Branch-sparse factor H = L^T L of the CE-ABA derivatives (Featherstone 2005, LTL; eq.
  // C14-C16): per independent velocity i, its path on the cluster tree (root first, i last; the
  // velocities of a cluster chained in order) from hPath[hStart[i]]; rows i of L and of L^-1
  // over that path at the same offsets in hL, hW.
  std::vector<int> hPath, hStart;
  std::vector<int> hOrder;   ///< the velocities by path length (ancestors first)
  std::vector<int> hCommon;  ///< ny x ny: length of the common start of the paths of i and j
  VecX hL, hW;

  // Scratch of the cluster-tree recursion for H^-1 (computeClusterMinverse, eq. C11-C13), in
  // world axes. Per body:
  std::vector<Mat6> mIA;    ///< articulated inertia
  std::vector<Mat6X> mPsi;  ///< 6 x d of its cluster: d v_b / d y_dot_k (output body fixed)
  std::vector<Mat6X> mU;    ///< 6 x d: IA Psi
  std::vector<Mat6X> mFA;   ///< 6 x ny: d pA / d tau_y (backward), d a / d tau_y (forward)
  // Per cluster (d x d, 6 x d):
  std::vector<MatX> mD, mDinv;
  std::vector<Mat6X> mUbar, mUbarDinv;
  std::vector<Eigen::LLT<MatX>> mLlt;
  VecX mTmp;  ///< max d
  /// Per cluster: the columns of H^-1 its steps touch, [colStart, colEnd) backward and
  /// [colStart, ny) forward: its own and its descendants' (colStart = y0) when the clusters'
  /// independent velocities are numbered depth first (upperTriangle; the lower triangle is then
  /// mirrored), else every column.
  std::vector<int> colStart, colEnd;
  bool upperTriangle = false;
  /// Per cluster k, from mCarrierStart[k]: its bodies that are some cluster's output body, the
  /// only ones whose F, A are non-zero or read.
  std::vector<int> mCarrier, mCarrierStart;
};

/// d tau_y / d y, d tau_y / d y_dot, d tau_y / d y_ddot = H of tau_y = ceRnea(q, v, ydd, fext)
/// at a closed spanning state (q, v), written to dd (and tau_y to dd.tauY). Statuses as ceRnea:
/// InvalidSize / NonFinite naming the argument, NotUnitQuaternion, WorkspaceMismatch (either
/// workspace made for another model), ConstraintFailure (state not closed, or singular
/// configuration of a loop). Uses data (its treeData and cluster scratch) as scratch.
Status computeCeRneaDerivatives(const ClusterModel& model, ClusterData& data,
                                ClusterDerivativeData& dd, ConstVecRef q, ConstVecRef v,
                                ConstVecRef ydd, const Force* fext = nullptr);

/// H(q)^-1 (dd.Hinv, ny x ny, symmetric; H = G^T (M + A) G with an MJCF model's armature A) at a
/// closed configuration q, by a recursion on the cluster tree (the cluster form of the
/// articulated-body inverse of Carpentier & Mansard 2018, with the cluster articulated inertias
/// of CE-ABA; docs/derivatives.md, eq. C11-C13), without forming or factoring H. Statuses:
/// InvalidSize / NonFinite / NotUnitQuaternion for q, WorkspaceMismatch (either workspace made for
/// another model), ConstraintFailure (q not closed, or a singular configuration of a loop),
/// NotPositiveDefinite (naming the cluster) when a cluster's articulated inertia is singular to
/// working precision (a Cholesky pivot <= 0, NaN or below 1e-11 of its largest diagonal entry:
/// docs/robustness.md, "Singular inertias"; e.g. a massless root body on a floating joint).
Status computeClusterMinverse(const ClusterModel& model, ClusterData& data,
                              ClusterDerivativeData& dd, ConstVecRef q);

/// y_ddot = ceAba(q, v, tauY, fext) (to dd.ydd and data.ydd) and its derivatives
/// dd.dydd_dy = -H^-1 d tau_y / d y, dd.dydd_dydot = -H^-1 d tau_y / d y_dot (both at
/// y_ddot), dd.Hinv = d y_ddot / d tau_y. H^-1 comes from the factorisation H = L^T L that
/// keeps H's branch-induced sparsity (Featherstone 2005; the cluster-tree recursion of
/// computeClusterMinverse costs more where H is at hand). Also leaves
/// dd.dtau_dy, dd.dtau_dydot, dd.H at y_ddot.
/// Statuses as computeCeRneaDerivatives, plus NotPositiveDefinite (naming the cluster) when a
/// cluster's D (ceAba) or H is singular to working precision (as computeClusterMinverse).
Status computeCeAbaDerivatives(const ClusterModel& model, ClusterData& data,
                               ClusterDerivativeData& dd, ConstVecRef q, ConstVecRef v,
                               ConstVecRef tauY, const Force* fext = nullptr);

}  // namespace clusterdyn
