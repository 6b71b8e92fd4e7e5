// Internal building blocks of the constraint algorithms (Delassus matrix, proximal dynamics).
#pragma once

#include "clusterdyn/constraints.hpp"
#include "core/check.hpp"

namespace clusterdyn::detail {

/// A proximal solve whose outputs overflowed: the multipliers are reset (they are the next
/// warm start and the source of the constraint wrenches) and the input out of range is named.
inline Status solveOverflow(const ClusterModel& model, Data& td, ConstraintData& cd,
                            const char* output, const Eigen::Ref<const VecX>& q,
                            const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tauY,
                            const Force* fext) {
  cd.lambda.setZero();
  return nonFiniteOutput(td, output,
                         {{"q", maxAbs(q), 1},
                          {"v", maxAbs(v), 2},
                          {"tau", maxAbs(tauY), 1},
                          {"fext", maxAbsForces(model.treeModel, fext), 1}});
}

/// Every output of a proximal solve is finite: ydd, qdd, lambda, the residual and dual step.
inline bool solveOutputsFinite(const ClusterData& data, const ConstraintData& cd) {
  return allFiniteFast(data.ydd) && allFiniteFast(data.qdd) && allFiniteFast(cd.lambda) &&
         std::isfinite(cd.result.residual) && std::isfinite(cd.result.dualStep);
}

/// Rounding floor of the row residual (docs/robustness.md "Tolerances and the rounding floor"):
/// kRowRounding eps S, S the largest row's term magnitude |kprime_i| + sum |C_ij| |a_j| (after
/// rowResidual, on the same body accelerations). Below it the computed residual is rounding
/// noise: an independent evaluation (J y_ddot + gamma - k from a dense J) differs by up to it.
/// Measured |computed - independent| / (eps S) <= 3.5 on Mini Cheetah (one and four point
/// contacts, v^2 and tau up to 1e12, tests/test_solver_accuracy.cpp): a margin of about 4.
constexpr double kRowRounding = 16.0;
double rowRoundingFloor(const ConstraintData& cd, const Data& td);
/// The same for the dense baseline: S = max_i |k_i| + |gamma_i| + sum_j |J_ij| |y_ddot_j|.
double rowRoundingFloorDense(const ConstraintData& cd, const VecX& ydd);

/// NotConverged for a proximal solve whose row residual plus its rounding floor exceeds the
/// tolerance: the message names the residual, the floor and its scale when the floor is what
/// stands in the way (the tolerance is below what double precision resolves at this scale).
inline Status notConverged(Data& td, const char* solver, const ProximalResult& res, double floor,
                           const ProximalSettings& settings) {
  if (res.residual <= settings.tolerance || 2.0 * floor > settings.tolerance)
    return fail(td, Status::NotConverged,
                "%s: row residual %.3g + its rounding floor %.3g (%g eps x row scale %.3g) > "
                "tolerance %.3g after %d iterations: the tolerance is below what double "
                "precision resolves at this scale (request at least twice the floor)",
                solver, res.residual, floor, kRowRounding,
                floor / (kRowRounding * std::numeric_limits<double>::epsilon()), settings.tolerance,
                res.iterations);
  return fail(td, Status::NotConverged, "%s: residual %.3g > tolerance %.3g after %d iterations",
              solver, res.residual, settings.tolerance, res.iterations);
}

/// Checks shared by the constraint algorithms: workspace and set belong to the model.
Status checkConstraintArgs(const ClusterModel& cm, ClusterData& data, const ConstraintSet& set,
                           const ConstraintData& cd);

/// Whether constraintRowsAt also computes the row targets (kprime, phi, desired); the Delassus
/// matrix needs the rows only.
enum class RowTargets : bool { Skip = false, Compute = true };

/// After the cluster velocity pass (with RowTargets::Skip: liMi, and oMi for world-aligned rows
/// and two-body constraints, suffice): every attachment's rows C (body coordinates) and, with
/// RowTargets::Compute, the row targets kprime on gravity-offset accelerations (C1 a1 + C2 a2 =
/// kprime), the position errors phi and the Baumgarte targets `desired`.
void constraintRowsAt(const ClusterModel& cm, const ClusterData& data, ConstraintData& cd,
                      RowTargets targets = RowTargets::Compute);

/// r = kprime - (C1 a1 + C2 a2) with the gravity-offset accelerations data.treeData.a_gf: the
/// row-acceleration error. Returns |r|_inf.
double rowResidual(const ClusterModel& cm, const ClusterData& data, const ConstraintData& cd,
                   Eigen::Ref<VecX> r);

/// Body Jacobian of body b in independent coordinates (6 x ny, body coordinates), after the
/// velocity pass and the cluster motion subspaces.
void bodyJacobian(const ClusterModel& cm, const ClusterData& data, int b,
                  Eigen::Ref<Eigen::Matrix<double, 6, Eigen::Dynamic>> J);

/// Dense row Jacobian (cd.jacobian) and gamma at (q, v) (v may be nullptr: zero velocity); runs
/// the velocity pass.
Status denseConstraintJacobian(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                               const Eigen::Ref<const VecX>& q, const double* v);

/// Proximal-point iterations on  Lambda^-1 lambda = z  (cd.delassus, cd.z) from cd.lambda.
Status proximalDual(Data& td, ConstraintData& cd, const ProximalSettings& settings);
Status checkProximal(Data& td, const ProximalSettings& s);

/// res.dynamicsResidual = |H y_ddot + C - tau - J^T lambda - (external forces)|_inf at data.ydd
/// and cd.lambda by the backward half of CE-RNEA on pass 3's body accelerations (all clusters'
/// pass 3 done after the velocity pass of this call; overwrites data.tauY and the tree's
/// forces), res.dynamicsScale = max(1, |tau|_inf, |lambda|_inf, |fext|_inf). NonFinite (the
/// multipliers reset) when the residual overflows.
Status dynamicsResidual(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                        const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                        const Eigen::Ref<const VecX>& tauY, const Force* fext, ProximalResult& res);

/// Constraint-space propagation over the supporting clusters after pass 2 (IA, U, D^-1, Ubar
/// of whatever inertias pass 2 used): out (m x m) = J H^-1 J^T for those inertias.
void delassusPropagation(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                         Eigen::Ref<MatX> out);

/// Applies body forces -C^T lambda of every attachment through a reduced backward sweep over the
/// supporting clusters: the bias u of every supporting cluster changes by du (Sathya &
/// Carpentier 2024, Alg. 2 lines 2-3). A following pass 3 gives the new accelerations.
void applyRowForces(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                    const Eigen::Ref<const VecX>& lambda);

/// Pass 3 over the supporting clusters only (root first) / the others / all clusters.
void supportAccelerations(const ClusterModel& cm, ClusterData& data, const ConstraintData& cd);
void freeAccelerations(const ClusterModel& cm, ClusterData& data, const ConstraintData& cd);
void allAccelerations(const ClusterModel& cm, ClusterData& data);

}  // namespace clusterdyn::detail
