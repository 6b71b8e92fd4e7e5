// Algorithms on the cluster tree (constraint embedding, Chignoli et al. 2023).
//
// State conventions: spanning (q, v) must satisfy the loop constraints (phi(q) = 0, K v = 0;
// checked to ClosureSettings::stateTolerance, else ConstraintFailure); independent quantities
// (y_dot, y_ddot, tau) use the layout of ClusterModel::independentVelocityNames. Spanning
// accelerations satisfy v_dot = G y_ddot + g. fext: nullptr or one force per body (body frame,
// about its origin, applied TO the body), as in rnea().
#pragma once

#include "clusterdyn/cluster_data.hpp"
#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// Tolerances and limits of the loop closure (the one place they are defined; the defaults are
/// the values every function uses). Residuals are max norms over the constraint rows of one
/// cluster: a row is in rad (rotation rows, and coupling / mimic rows of revolute joints) or in
/// m (translation rows, prismatic couplings), measured in the loop's predecessor frame.
struct ClosureSettings {
  /// A spanning state is accepted as closed when max |phi(q)| <= stateTolerance and
  /// max |K v| <= stateTolerance * (1 + max |v_k|) for every cluster k.
  double stateTolerance = 1e-6;
  /// Newton on the dependent coordinates stops at max |phi| <= residualTolerance (and keeps
  /// polishing while a step still reduces the residual tenfold, down to exactResidual).
  double residualTolerance = 1e-12;
  /// A residual at rounding level: Newton stops polishing there.
  double exactResidual = 1e-15;
  /// Newton iterations per cluster and start (warm start, then the model's qReference).
  int maxIterations = 50;
  /// Largest Newton step on a loop (implicit) cluster, max over the dependent coordinates (rad
  /// or m); longer steps are scaled. Couplings and mimics are linear and take the full step.
  double maxStep = 0.5;
  /// Backtracking line search: a step is halved (at most this many times) until it reduces
  /// max |phi|; 0 disables the search.
  int maxStepHalvings = 12;
  /// Branch following (predictor-corrector continuation from a closed, regular warm start,
  /// Allgower and Georg 2003, §2.2): a step from (y0, qd0) to y1 predicts qd1 = qd0 + Gd (y1 - y0)
  /// (Gd: the dependent rows of G at the warm start) and runs Newton from there; the step is
  /// accepted when the Newton correction max |qd1 - prediction| is at most branchCorrection times
  /// the step length max(|y1 - y0|, |Gd (y1 - y0)|) plus stateTolerance. A larger correction means
  /// Newton left the branch of the warm start (near a branch point) and the step is split.
  double branchCorrection = 0.25;
  /// The second acceptance test of a continuation step: with the tangents at both ends,
  /// max |qd1 - qd0 + (Gd0 + Gd1) (y1 - y0) / 2| <= branchTrapezoid * step length +
  /// stateTolerance (on a smooth branch the left side is O(step^3); landing on another branch
  /// near the branch point makes it of the order of the step).
  double branchTrapezoid = 0.1;
  /// Rank loss of the dependent block Kd (selected rows, dependent columns of K): a closure
  /// solution or a state whose Kd has a smallest LU pivot below singularTolerance * max |Kd_ij|
  /// is a singular configuration (branch point, dead point) and gives ConstraintFailure with the
  /// smallest singular value of Kd in the message. Near such points the dependent positions are
  /// determined to only ~sqrt(residualTolerance) and G = -Kd^-1 Ki is meaningless.
  double singularTolerance = 1e-5;
  /// Load-time closure of the reference configuration (Gauss-Newton, least squares on all rows).
  double referenceTolerance = 1e-13;
  int referenceMaxIterations = 100;
  /// Load time: relative threshold of the rank-revealing QR of K^T at the reference
  /// configuration, which gives the constraints' freedom nv - rank(K) (to match the declared
  /// independent coordinates) and selects the independent constraint rows.
  double referenceRankThreshold = 1e-9;
};

/// The settings every closure and state check uses.
inline constexpr ClosureSettings kClosureSettings{};

/// Constraint-embedding ABA (Chignoli et al. 2023, Alg. 1, eq. 53, 57-61): independent
/// accelerations y_ddot (data.ydd, size ny) and spanning accelerations (data.qdd, size nv) from a
/// spanning state and independent generalized forces tauY (size ny). NotPositiveDefinite
/// (naming the body or cluster and the pivot ratio) when a cluster's D = S^T IA S is singular
/// to working precision: a Cholesky pivot <= 0, NaN or below 1e-11 of D's largest diagonal entry
/// (docs/robustness.md, "Singular inertias"; e.g. a massless root body on a floating joint).
Status ceAba(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v,
             ConstVecRef tauY, const Force* fext = nullptr);

/// Same with generalized forces on the spanning-tree joints (size nv), mapped by G^T
/// (actuators on dependent joints included).
Status ceAbaSpanningForces(const ClusterModel& model, ClusterData& data, ConstVecRef q,
                           ConstVecRef v, ConstVecRef tauSpanning, const Force* fext = nullptr);

/// Same from independent positions y (size nyq), velocities y_dot (size ny): solves the loop
/// closure first (warm-started from data.q), leaving the spanning state in data.q / data.v.
Status ceAbaIndependent(const ClusterModel& model, ClusterData& data, ConstVecRef y,
                        ConstVecRef ydot, ConstVecRef tauY, const Force* fext = nullptr);

/// Constraint-embedding RNEA (Chignoli et al. 2023, §V): independent generalized forces (data.tauY)
/// that produce y_ddot at the spanning state (q, v); also fills data.qdd and the spanning
/// joint forces data.treeData.tau. Rotors: see updateRotorBodies.
Status ceRnea(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v,
              ConstVecRef ydd, const Force* fext = nullptr);

/// Independent-coordinate mass matrix H = G^T M G (data.H, ny x ny), cluster block by cluster
/// block from the composite-rigid-body matrix of the spanning tree. Like crba(), it updates the
/// joint transforms (treeData.liMi) but not the world poses, velocities or bias terms of
/// treeData; the joint transforms of rotors (axisymmetric leaf bodies on the output body of a
/// coupling or mimic cluster, ClusterModel::axisymmetricLeaf) are not updated either: their
/// terms in H do not depend on their angle. Like crba(), it writes the blocks of H that can be
/// non-zero (a cluster with itself and with its ancestor clusters) and leaves the others as they
/// are: zero, as the ClusterData constructor made them. H is exactly symmetric (the lower
/// triangle is a copy of the upper).
Status clusterMassMatrix(const ClusterModel& model, ClusterData& data, ConstVecRef q);

/// Independent bias C (data.C, size ny) = ceRnea with y_ddot = 0: H y_ddot + C = tau.
/// Rotors: see updateRotorBodies.
Status clusterBias(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v);

/// Rotors are the axisymmetric leaf bodies on a revolute joint that hang from the output body of
/// a coupling or mimic cluster (a geared motor's rotor; ClusterModel::axisymmetricLeaf): seen
/// from the output body their axis and inertia do not depend on their angle. Without external
/// forces, ceAba, ceAbaSpanningForces and ceAbaIndependent (for the rotors of clusters with one
/// to three independent coordinates) and, on models whose clusters all have a constant G, ceRnea
/// and clusterBias (for every rotor) treat them in the output body's frame and do not write their
/// entries of data.treeData (liMi, oMi, v, c, a_gf, f, IA, pA). updateRotorBodies writes them for
/// the state of that call: call it right after, before any other computation with data (the
/// constraint-force queries call it themselves). Every other body's entries, and every result,
/// are complete without it. Does nothing when no such call left rotors unwritten.
Status updateRotorBodies(const ClusterModel& model, ClusterData& data);

/// Position level: spanning configuration (data.q) from independent positions y (size nyq).
/// Implicit loops, per cluster, warm-started from data.q (docs/robustness.md, "Assembly
/// branches"): when data.q is closed (max |phi| <= stateTolerance) and regular there, the solve
/// follows the assembly branch through it: predictor-corrector continuation along the straight
/// path in y (1, then 5, then 33 steps; predictor v = G y_dot over the step, damped Newton
/// corrector, each step accepted by ClosureSettings::branchCorrection and branchTrapezoid).
/// Ok then means: the configuration connected to data.q along that path, never one of another
/// branch (also across branch points such as a parallelogram's fold); when the branch cannot
/// be followed to y, ConstraintFailure (the message says whether y closes on another branch).
/// Otherwise (data.q not closed, or singular): damped Newton (at most 50 iterations per start,
/// residual <= 1e-12, backtracking line search) from data.q; if it fails, continuation along a
/// straight path in y from data.q (4, then 32 steps); then both again from the model's
/// qReference. data.lastIterations (all attempts) and lastResidual report the solve.
/// ConstraintFailure (naming the cluster, with the residual or the smallest singular value of
/// the dependent block Kd) when no closed configuration is found or the one found is singular
/// (branch or dead point).
/// Warm start policy: after a ConstraintFailure (here, in independentToSpanning,
/// ceAbaIndependent or projectToConstraints), or whenever the solve leaves a non-finite data.q,
/// data.q is reset to the model's qReference, so that the next call starts from a closed
/// configuration instead of the failed iterate. Inputs are checked before data.q changes.
Status solveLoopClosure(const ClusterModel& model, ClusterData& data, ConstVecRef y);

/// Sets the warm start of the next closure (data.q) to q (size nq; finite, unit quaternions),
/// checked before anything changes: InvalidSize, NonFinite or NotUnitQuaternion otherwise.
Status setClosureWarmStart(const ClusterModel& model, ClusterData& data, ConstVecRef q);

/// Spanning state (data.q, data.v) from (y, y_dot): solveLoopClosure and v = G y_dot.
Status independentToSpanning(const ClusterModel& model, ClusterData& data, ConstVecRef y,
                             ConstVecRef ydot);

/// Independent (y, y_dot) of a spanning state (selection, no solve). y: nyq, ydot: ny.
Status spanningToIndependent(const ClusterModel& model, ClusterData& data, ConstVecRef q,
                             ConstVecRef v, Eigen::Ref<VecX> y, Eigen::Ref<VecX> ydot);

/// Projects an arbitrary spanning (q, v) onto the constraint manifold: keeps the independent
/// coordinates of q, solves the dependent ones (warm start: q itself), and projects v onto
/// the null space of K orthogonally in the metric of the independent coordinates: v = G y_dot with
/// y_dot the independent part of v. Results in data.q, data.v.
Status projectToConstraints(const ClusterModel& model, ClusterData& data, ConstVecRef q,
                            ConstVecRef v);

/// The constraint matrices of every cluster k at (q, v): G (nv_k x ny_k) and g (nv_k) of the
/// explicit constraint, read with data.explicitMatrix(k) / explicitBias(k) (constant G and zero
/// g for couplings and mimics), and the rows K, k (data.constraintJacobian(k),
/// constraintBias(k)).
Status clusterConstraintMatrices(const ClusterModel& model, ClusterData& data, ConstVecRef q,
                                 ConstVecRef v);

}  // namespace clusterdyn
