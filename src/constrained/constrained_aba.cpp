// constrainedABA on the cluster tree (Sathya & Carpentier 2024, Alg. 1-3): augmented-Lagrangian
// iterations whose primal step is an articulated-body solve with constraint-augmented inertias
//   IA_b = I_b + mu_a C^T C,   pA_b -= C^T (lambda + mu_a k')        (eq. 29, Alg. 1 line 5)
// (mu_a = 1/mu the augmented-Lagrangian penalty), and the multiplier update
//   lambda <- lambda + mu_a (k' - C a)                                 (eq. 27b)
// propagated by the reduced two-sweep algorithm (Alg. 2): only the clusters that support a
// constraint are swept during the iterations; one final pass 3 updates every cluster.
#include "cluster/cluster_aba_step.hpp"
#include "cluster/cluster_detail.hpp"
#include "constrained/constraint_detail.hpp"
#include "core/check.hpp"

namespace clusterdyn {

namespace detail {
Status checkProximal(Data& td, const ProximalSettings& s) {
  if (!(s.mu > 0.0) || !std::isfinite(s.mu))
    return fail(td, Status::InvalidArgument, "ProximalSettings::mu = %g must be positive", s.mu);
  if (!(s.tolerance > 0.0) || !std::isfinite(s.tolerance))
    return fail(td, Status::InvalidArgument, "ProximalSettings::tolerance = %g must be positive",
                s.tolerance);
  if (s.maxIterations < 0)
    return fail(td, Status::InvalidArgument, "ProximalSettings::maxIterations = %d must be >= 0",
                s.maxIterations);
  return Status::Ok;
}
}  // namespace detail

Status checkProximalSettings(ClusterData& data, const ProximalSettings& settings) {
  return detail::checkProximal(data.treeData, settings);
}

Status constrainedAba(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
                      ConstraintData& cd, ConstVecRef q, ConstVecRef v, ConstVecRef tauY,
                      const ProximalSettings& settings, const Force* fext, bool warmStart) {
  Data& td = data.treeData;
  CDYN_TRY(detail::checkConstraintArgs(model, data, set, cd));
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::checkVector(td, tauY, model.ny, "tau"));
  CDYN_TRY(detail::checkForces(model.treeModel, td, fext));
  CDYN_TRY(detail::checkProximal(td, settings));
  if (!set.allWorldAttached())
    return detail::fail(td, Status::InvalidArgument,
                        "constrainedAba takes constraints between a body and the world only; "
                        "use proxPv for constraints between two bodies");
  if (warmStart && !cd.lambda.allFinite())
    return detail::fail(td, Status::NonFinite, "the warm start lambda is not finite");
  if (!warmStart) cd.lambda.setZero();

  // Pass 1 and the augmented inertias and forces (Alg. 1 lines 1-5).
  CDYN_TRY(detail::clusterVelocityPass(model, data, q, v.data(), detail::Bias::Compute,
                                       detail::StateCheck::Check));
  detail::clusterInertiaAndBias(model, data, fext);
  detail::constraintRowsAt(model, data, cd);
  const double mua = 1.0 / settings.mu;
  for (const ConstraintData::Attachment& a : cd.attachments) {
    const auto C = a.C.topRows(a.rows);
    td.IA[a.body].noalias() += mua * C.transpose() * C;
    data.rigidInertia[a.body] = 0;
    cd.step.segment(a.row0, a.rows) = cd.lambda.segment(a.row0, a.rows);
    cd.step.segment(a.row0, a.rows) += mua * cd.kprime.segment(a.row0, a.rows);
    td.pA[a.body].noalias() -= C.transpose() * cd.step.segment(a.row0, a.rows);
  }
  // Passes 2 and 3 (Alg. 1 lines 6-12); pass 3 over the clusters supporting a constraint only,
  // the others once after the iterations (Alg. 3 lines 9-11).
  for (int k = static_cast<int>(model.clusters.size()) - 1; k >= 0; --k)
    CDYN_TRY(detail::clusterArticulatedStep(model, data, k, tauY.data(),
                                            detail::ForceCoordinates::Independent));
  detail::supportAccelerations(model, data, cd);

  // Augmented-Lagrangian iterations (Alg. 3) with the reduced sweeps (Alg. 2).
  ProximalResult& res = cd.result;
  res = ProximalResult();
  for (int it = 0;; ++it) {
    res.residual = detail::rowResidual(model, data, cd, cd.residual);
    res.iterations = it;
    if (!std::isfinite(res.residual))
      return detail::solveOverflow(model, td, cd, "constrainedAba: row accelerations", q, v, tauY,
                                   fext);
    if (res.residual <= settings.tolerance) {
      res.converged = true;
      break;
    }
    if (it == settings.maxIterations) break;
    cd.step = mua * cd.residual;  // lambda change (eq. 27b)
    cd.lambda += cd.step;
    res.dualStep = cd.step.cwiseAbs().maxCoeff();
    detail::applyRowForces(model, data, cd, cd.step);
    detail::supportAccelerations(model, data, cd);
  }
  detail::freeAccelerations(model, data, cd);  // clusters that carry no constraint
  cd.rowAcceleration = cd.desired - cd.residual;
  if (!detail::solveOutputsFinite(data, cd))
    return detail::solveOverflow(model, td, cd, "constrainedAba: ydd / qdd / lambda", q, v, tauY,
                                 fext);
  if (!res.converged)
    return detail::fail(td, Status::NotConverged,
                        "constrainedAba: residual %.3g > tolerance %.3g after %d iterations",
                        res.residual, settings.tolerance, res.iterations);
  return detail::ok(td);
}

}  // namespace clusterdyn
