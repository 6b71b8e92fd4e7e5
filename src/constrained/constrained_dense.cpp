// Baselines for tests and benchmarks: constrained dynamics with a dense Cholesky factorization
// of the cluster mass matrix H, and the Delassus matrix from the branch-sparsity L^T D L
// factorization of H (Featherstone 2005; LTL-OSIM in Sathya et al. 2024, §II-A).
#include "cluster/cluster_kinematics.hpp"
#include "constrained/constraint_detail.hpp"
#include "core/check.hpp"
#include "core/small_spd.hpp"

namespace clusterdyn {

Status constrainedDynamicsDense(const ClusterModel& model, ClusterData& data,
                                const ConstraintSet& set, ConstraintData& cd, ConstVecRef q,
                                ConstVecRef v, ConstVecRef tauY, const ProximalSettings& settings,
                                const Force* fext) {
  Data& td = data.treeData;
  CDYN_TRY(detail::checkConstraintArgs(model, data, set, cd));
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::checkVector(td, tauY, model.ny, "tau"));
  CDYN_TRY(detail::checkProximal(td, settings));
  const int ny = model.ny, m = set.rows();
  CDYN_TRY(clusterMassMatrix(model, data, q));
  cd.yddFree.setZero();
  CDYN_TRY(ceRnea(model, data, q, v, cd.yddFree, fext));  // C minus the external forces
  detail::completeRotorBodies(model, data);  // the constraint kinematics read every body
  cd.tauFree = tauY - data.tauY;
  CDYN_TRY(detail::denseConstraintJacobian(model, data, cd, q, v.data()));
  cd.lltH.compute(data.H);
  if (double ratio; !detail::choleskyAboveFloor(cd.lltH, data.H, detail::kSingularPivot, &ratio))
    return detail::fail(td, Status::NotPositiveDefinite,
                        "the mass matrix H is not positive definite to working precision (%s)",
                        detail::PivotText(ratio, detail::kSingularPivot).c_str());
  cd.yddFree = cd.tauFree;
  cd.lltH.solveInPlace(cd.yddFree);
  auto X = cd.work.topLeftCorner(ny, m);  // H^-1 J^T
  X = cd.jacobian.transpose();
  cd.lltH.solveInPlace(X);
  cd.delassus.noalias() = cd.jacobian * X;
  cd.z = cd.desired - cd.gamma;
  cd.z.noalias() -= cd.jacobian * cd.yddFree;
  cd.lambda.setZero();
  const Status dual = detail::proximalDual(td, cd, settings);
  if (dual == Status::NonFinite)  // the free motion overflowed: name the input
    return detail::solveOverflow(model, td, cd, "constrainedDynamicsDense: row accelerations", q, v,
                                 tauY, fext);
  CDYN_TRY(dual);
  data.ydd.noalias() = cd.jacobian.transpose() * cd.lambda;
  cd.lltH.solveInPlace(data.ydd);
  data.ydd += cd.yddFree;
  // Ok means the rolled-out accelerations meet the tolerance: refine on their residual with the
  // same proximal step while iterations remain (the dual residual rounds differently). Met:
  // residual + its rounding floor <= tolerance, as proxPv.
  ProximalResult& res = cd.result;
  double rounding = -1.0;
  for (;;) {
    cd.rowAcceleration = cd.gamma;
    cd.rowAcceleration.noalias() += cd.jacobian * data.ydd;
    cd.residual = cd.desired - cd.rowAcceleration;
    res.residual = m ? cd.residual.cwiseAbs().maxCoeff() : 0.0;
    rounding = -1.0;
    if (res.residual <= settings.tolerance) {
      rounding = detail::rowRoundingFloorDense(cd, data.ydd);
      if (res.residual + rounding <= settings.tolerance || rounding >= settings.tolerance) break;
    }
    if (!(std::isfinite(res.residual)) || res.iterations >= settings.maxIterations) break;
    cd.step = cd.residual;
    cd.llt.solveInPlace(cd.step);
    cd.lambda += cd.step;
    res.dualStep = cd.step.size() ? cd.step.cwiseAbs().maxCoeff() : 0.0;
    cd.tauFree.noalias() = cd.jacobian.transpose() * cd.step;  // free: ny scratch
    cd.lltH.solveInPlace(cd.tauFree);
    data.ydd += cd.tauFree;
    ++res.iterations;
  }
  if (rounding < 0.0 && std::isfinite(res.residual))
    rounding = detail::rowRoundingFloorDense(cd, data.ydd);
  res.converged = res.residual + rounding <= settings.tolerance;
  res.roundingFloor = rounding;
  res.mu = settings.mu;
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (int k = 0; k < static_cast<int>(model.clusters.size()); ++k) {
    const Cluster& c = model.clusters[k];
    const ClusterWorkspace& w = ws[k];
    auto qdd = data.qdd.segment(c.v0, c.nv);
    if (!c.constrained()) {
      qdd = data.ydd.segment(c.y0, c.ny);
      continue;
    }
    qdd = w.g;
    qdd.noalias() += w.G * data.ydd.segment(c.y0, c.ny);
  }
  if (!detail::solveOutputsFinite(data, cd))
    return detail::solveOverflow(model, td, cd, "constrainedDynamicsDense: ydd / qdd / lambda", q,
                                 v, tauY, fext);
  if (!cd.result.converged)
    return detail::notConverged(td, "constrainedDynamicsDense", res, rounding, settings);
  return detail::ok(td);
}

Status delassusMatrixLtl(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
                         ConstraintData& cd, ConstVecRef q) {
  Data& td = data.treeData;
  CDYN_TRY(detail::checkConstraintArgs(model, data, set, cd));
  CDYN_TRY(detail::checkClusterArgs(model, data, q, nullptr));
  const int n = model.ny, m = set.rows();
  const std::vector<int>& lambda = cd.ltlParent;
  CDYN_TRY(clusterMassMatrix(model, data, q));
  CDYN_TRY(detail::denseConstraintJacobian(model, data, cd, q, nullptr));
  // H = L^T D L in place (Featherstone 2005, Table 2 "LTDL"): D on the diagonal, L below.
  auto H = cd.work.topLeftCorner(n, n);
  H = data.H;
  for (int k = n - 1; k >= 0; --k) {
    if (!(H(k, k) > 0.0))
      return detail::fail(td, Status::NotPositiveDefinite,
                          "the mass matrix H is not positive definite (pivot %d)", k);
    for (int i = lambda[k]; i != -1; i = lambda[i]) {
      const double a = H(k, i) / H(k, k);
      for (int j = i; j != -1; j = lambda[j]) H(i, j) -= a * H(k, j);
      H(k, i) = a;
    }
  }
  // Y = J L^-1 (Y L = J), then Lambda^-1 = Y D^-1 Y^T.
  MatX& Y = cd.jacobianH;
  Y = cd.jacobian;
  for (int i = n - 1; i >= 0; --i)
    for (int a = lambda[i]; a != -1; a = lambda[a]) Y.col(a) -= H(i, a) * Y.col(i);
  cd.delassus.setZero();
  for (int i = 0; i < n; ++i) cd.delassus.noalias() += (Y.col(i) / H(i, i)) * Y.col(i).transpose();
  (void)m;
  return detail::ok(td);
}

}  // namespace clusterdyn
