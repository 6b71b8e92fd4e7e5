// proxPV on the cluster tree (Sathya & Carpentier 2024, Alg. 4): the free accelerations and the
// Delassus matrix come from the articulated-body sweeps (CE-ABA pass 2-3 and the constraint-
// space propagation of delassus.cpp); the multipliers from proximal-point iterations on the
// dual problem with one Cholesky factorization of Lambda^-1 + mu I (eq. 13):
//   lambda <- lambda - (Lambda^-1 + mu I)^-1 (Lambda^-1 lambda - r_free),
// r_free = k' - C a_free the row-acceleration error of the unconstrained motion; the roll-out
// applies the forces C^T lambda by the reduced backward sweep and one pass 3.
#include "cluster/cluster_aba_step.hpp"
#include "cluster/cluster_joint_dynamics.hpp"
#include "cluster/cluster_kinematics.hpp"
#include "constrained/constraint_detail.hpp"
#include "constrained/constraint_types.hpp"
#include "core/check.hpp"
#include "core/small_spd.hpp"

namespace clusterdyn {

namespace detail {

Status proximalDual(Data& td, ConstraintData& cd, const ProximalSettings& settings) {
  const int m = static_cast<int>(cd.lambda.size());
  auto A = cd.work.topLeftCorner(m, m);
  A = cd.delassus;
  A.diagonal().array() += settings.mu;
  cd.llt.compute(A);
  if (cd.llt.info() != Eigen::Success)
    return fail(td, Status::NotPositiveDefinite,
                "the damped Delassus matrix is not positive definite (non-finite input?)");
  ProximalResult& res = cd.result;
  res = ProximalResult();
  for (int it = 0;; ++it) {
    cd.residual = cd.z;  // error of the row accelerations with the current multipliers
    cd.residual.noalias() -= cd.delassus * cd.lambda;
    res.residual = m ? cd.residual.cwiseAbs().maxCoeff() : 0.0;
    res.iterations = it;
    if (!std::isfinite(res.residual))
      return fail(td, Status::NonFinite,
                  "the row accelerations are not finite (input out of range?)");
    if (res.residual <= settings.tolerance) {
      res.converged = true;
      break;
    }
    if (it == settings.maxIterations) break;
    cd.step = cd.residual;
    cd.llt.solveInPlace(cd.step);  // proximal step (eq. 13b)
    updateMultipliers(*cd.set, cd.lambda, cd.step);
    res.dualStep = cd.step.size() ? cd.step.cwiseAbs().maxCoeff() : 0.0;
  }
  return Status::Ok;
}
}  // namespace detail

Status proxPv(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
              ConstraintData& cd, ConstVecRef q, ConstVecRef v, ConstVecRef tauY,
              const ProximalSettings& settings, const Force* fext, bool warmStart) {
  Data& td = data.treeData;
  CDYN_TRY(detail::checkConstraintArgs(model, data, set, cd));
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::checkVector(td, tauY, model.ny, "tau"));
  CDYN_TRY(detail::checkForces(model.treeModel, td, fext));
  CDYN_TRY(detail::checkProximal(td, settings));
  if (warmStart && !cd.lambda.allFinite())
    return detail::fail(td, Status::NonFinite, "the warm start lambda is not finite");
  if (!warmStart) cd.lambda.setZero();

  // Unconstrained CE-ABA (passes 1-3) and the row-acceleration error of its motion.
  CDYN_TRY(detail::clusterVelocityPass(model, data, q, v.data(), detail::Bias::Compute,
                                       detail::StateCheck::Check));
  detail::clusterInertiaAndBias(model, data, fext);
  detail::constraintRowsAt(model, data, cd);
  detail::ForceCoordinates forces = detail::ForceCoordinates::Independent;
  const double* tau =  // + passive joint forces (MJCF springs, dampers)
      detail::withJointDynamicsForces(model, data, q.data(), v.data(), tauY.data(), forces);
  // Pass 2 on the plain articulated inertias, with the dynamics' pivot floor (kSingularPivot,
  // core/small_spd.hpp): a singular H is NotPositiveDefinite, as in ceAba (its free motion, the
  // Delassus matrix and the roll-out would divide by rounding noise).
  for (int k = static_cast<int>(model.clusters.size()) - 1; k >= 0; --k)
    CDYN_TRY(detail::clusterArticulatedStep(model, data, k, tau, forces, detail::RotorFrame::Body));
  detail::supportAccelerations(model, data, cd);  // the free motion of the constrained bodies
  detail::rowResidual(model, data, cd, cd.z);
  // Delassus matrix from the same articulated inertias, then the dual iterations.
  detail::delassusPropagation(model, data, cd, cd.delassus);
  const Status dual = detail::proximalDual(td, cd, settings);
  if (dual == Status::NonFinite)  // the free motion overflowed: name the input
    return detail::solveOverflow(model, td, cd, "proxPv: row accelerations", q, v, tauY, fext);
  CDYN_TRY(dual);
  // Roll-out with the multipliers.
  detail::applyRowForces(model, data, cd, cd.lambda);
  detail::allAccelerations(model, data);
  ProximalResult& res = cd.result;
  res.residual = detail::rowResidual(model, data, cd, cd.residual);  // of the roll-out
  // Ok means the rolled-out accelerations meet the tolerance, not only the dual iterate (whose
  // residual z - Lambda^-1 lambda rounds differently): refine on the roll-out's residual with the
  // same proximal step and the reduced sweeps (Alg. 2) while iterations remain. Met: residual +
  // its rounding floor <= tolerance (the floor computed once the residual is below the tolerance);
  // a floor at or above the tolerance ends the refinement (double precision cannot resolve it).
  bool refined = false;
  double rounding = -1.0;  // the rounding floor of the last residual (< 0: not computed)
  const auto met = [&]() {
    rounding = -1.0;
    if (!(res.residual <= settings.tolerance)) return false;
    rounding = detail::rowRoundingFloor(cd, td);
    return res.residual + rounding <= settings.tolerance || rounding >= settings.tolerance;
  };
  while (!met() && res.iterations < settings.maxIterations && std::isfinite(res.residual)) {
    cd.step = cd.residual;
    cd.llt.solveInPlace(cd.step);
    detail::updateMultipliers(*cd.set, cd.lambda, cd.step);
    res.dualStep = cd.step.size() ? cd.step.cwiseAbs().maxCoeff() : 0.0;
    detail::applyRowForces(model, data, cd, cd.step);
    detail::supportAccelerations(model, data, cd);
    res.residual = detail::rowResidual(model, data, cd, cd.residual);
    ++res.iterations;
    refined = true;
  }
  if (refined) detail::freeAccelerations(model, data, cd);
  if (rounding < 0.0) rounding = detail::rowRoundingFloor(cd, td);
  res.converged = res.residual + rounding <= settings.tolerance;
  res.roundingFloor = rounding;
  res.mu = settings.mu;
  cd.rowAcceleration = cd.desired - cd.residual;
  if (!detail::solveOutputsFinite(data, cd))
    return detail::solveOverflow(model, td, cd, "proxPv: ydd / qdd / lambda", q, v, tauY, fext);
  if (!cd.result.converged) return detail::notConverged(td, "proxPv", res, rounding, settings);
  return detail::ok(td);
}

}  // namespace clusterdyn
