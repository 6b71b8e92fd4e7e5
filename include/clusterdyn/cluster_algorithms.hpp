// Algorithms on the cluster tree (constraint embedding, seed 000).
//
// State conventions: spanning (q, v) must satisfy the loop constraints (phi(q) = 0, K v = 0;
// checked to 1e-6, else ConstraintFailure); independent quantities (y_dot, y_ddot, tau) use the
// layout of ClusterModel::independentVelocityNames. Spanning accelerations satisfy
// v_dot = G y_ddot + g. fext: nullptr or one force per body (body frame, about its origin,
// applied TO the body), as in rnea().
#pragma once

#include "clusterdyn/cluster_data.hpp"
#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// Constraint-embedding ABA (seed 000 Alg. 1, eq. 55-61): independent accelerations y_ddot
/// (data.ydd, size ny) and spanning accelerations (data.qdd, size nv) from a spanning state
/// and independent generalized forces tauY (size ny).
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

/// Constraint-embedding RNEA (seed 000 §V): independent generalized forces (data.tauY) that
/// produce y_ddot at the spanning state (q, v); also fills data.qdd.
Status ceRnea(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v,
              ConstVecRef ydd, const Force* fext = nullptr);

/// Independent-coordinate mass matrix H = G^T M G (data.H, ny x ny), cluster block by cluster
/// block from the composite-rigid-body matrix of the spanning tree.
Status clusterMassMatrix(const ClusterModel& model, ClusterData& data, ConstVecRef q);

/// Independent bias C (data.C, size ny) = ceRnea with y_ddot = 0: H y_ddot + C = tau.
Status clusterBias(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v);

/// Position level: spanning configuration (data.q) from independent positions y (size nyq).
/// Implicit loops: Newton (at most 50 iterations, residual <= 1e-12) warm-started from data.q;
/// data.lastIterations / lastResidual report the solve.
Status solveLoopClosure(const ClusterModel& model, ClusterData& data, ConstVecRef y);

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

/// The explicit constraint of cluster k at (q, v): G (nv_k x ny_k) and g (nv_k) in
/// data.clusters[k].G / .g (constant G and zero g for couplings and mimics).
Status clusterConstraintMatrices(const ClusterModel& model, ClusterData& data, ConstVecRef q,
                                 ConstVecRef v);

}  // namespace clusterdyn
