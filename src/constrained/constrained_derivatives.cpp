// computeConstrainedDynamicsDerivatives: the constrained dynamics of a constraint set on the
// cluster tree by a dense Schur-complement solve, and its derivatives through the KKT system
// (Carpentier & Mansard 2018, §IV-C, in independent coordinates; docs/derivatives.md,
// "Constrained-dynamics derivatives", eq. K1-K9).
#include <algorithm>
#include <cmath>

#include "cluster/cluster_kinematics.hpp"
#include "constrained/constrained_derivatives_detail.hpp"
#include "constrained/constraint_detail.hpp"
#include "core/check.hpp"
#include "core/small_spd.hpp"

namespace clusterdyn {

ConstrainedDerivativeData::ConstrainedDerivativeData(const ClusterModel& m, const ConstraintSet& s)
    : model(&m), set(&s), cluster(m), constraints(m, s) {
  const int ny = m.ny, nv = m.treeModel.nv, rows = s.rows();
  ydd.setZero(ny);
  lambda.setZero(rows);
  C.setZero(ny);
  yScratch.setZero(ny);
  rowScratch.setZero(rows);
  for (MatX* x : {&dydd_dy, &dydd_dydot, &dydd_dtau, &dF_dy, &Hinv}) x->setZero(ny, ny);
  for (MatX* x : {&dlambda_dy, &dlambda_dydot, &dlambda_dtau, &dR_dy, &dR_dydot, &JHinv, &work})
    x->setZero(rows, ny);
  for (MatX* x : {&Rq, &Rv, &Ra}) x->setZero(rows, nv);
  for (MatX* x : {&pinv, &eig, &eigVectors}) x->setZero(rows, rows);
  side.setZero(6, nv);
  force.setZero(6, nv);
  sideY.setZero(6, ny);
  forceY.setZero(6, ny);
  fext.assign(m.treeModel.nbodies, Force::Zero());
  lltH.compute(MatX::Identity(ny, ny));  // sized (and its info set)
}

namespace {

bool supportedType(ConstraintType t) {
  switch (t) {  // every type whose rows constrained_derivatives_rows.cpp differentiates
    case ConstraintType::Point:
    case ConstraintType::Weld:
    case ConstraintType::Revolute:
    case ConstraintType::Planar:
    case ConstraintType::Prismatic:
      return true;
  }
  return false;
}

Status checkArguments(const ClusterModel& cm, ClusterData& data, const ConstraintSet& set,
                      const ConstrainedDerivativeData& cdd, ConstVecRef q, ConstVecRef v,
                      ConstVecRef tauY, const Force* fext, const ConstrainedDerivativeSettings& s) {
  Data& td = data.treeData;
  if (cdd.model != &cm || cdd.set != &set)
    return detail::fail(td, Status::WorkspaceMismatch,
                        "the constrained-derivative workspace was created for another model or "
                        "constraint set");
  CDYN_TRY(detail::checkConstraintArgs(cm, data, set, cdd.constraints));
  CDYN_TRY(detail::checkClusterArgs(cm, data, q, &v));
  CDYN_TRY(detail::checkVector(td, tauY, cm.ny, "tauY"));
  CDYN_TRY(detail::checkForces(cm.treeModel, td, fext));
  if (!(s.rankTolerance > 0.0 && s.rankTolerance < 1.0))
    return detail::fail(td, Status::InvalidArgument, "settings.rankTolerance = %g is not in (0, 1)",
                        s.rankTolerance);
  if (!(s.tolerance > 0.0 && std::isfinite(s.tolerance)))
    return detail::fail(td, Status::InvalidArgument,
                        "settings.tolerance = %g is not positive and finite", s.tolerance);
  for (const RigidConstraint& c : set.constraints())
    if (!supportedType(c.type))
      return detail::fail(td, Status::InvalidArgument,
                          "constraint '%s': its type has no derivatives", c.name.c_str());
  return Status::Ok;
}

/// eq. K8 with the pseudo-inverse: dlambda = Lambda (J H^-1 P - Q), dydd = H^-1 (J^T dlambda - P)
/// for P = dF/dx (ny x ny), Q = dR/dx (m x ny).
void solveTangent(ConstrainedDerivativeData& cdd, const MatX& P, const MatX& Q, MatX& dydd,
                  MatX& dlambda) {
  cdd.work.noalias() = cdd.JHinv.lazyProduct(P);
  cdd.work -= Q;
  dlambda.noalias() = cdd.pinv.lazyProduct(cdd.work);
  dydd.noalias() = cdd.JHinv.transpose().lazyProduct(dlambda);
  dydd.noalias() -= cdd.Hinv.lazyProduct(P);
}

}  // namespace

Status computeConstrainedDynamicsDerivatives(const ClusterModel& model, ClusterData& data,
                                             const ConstraintSet& set,
                                             ConstrainedDerivativeData& cdd, ConstVecRef q,
                                             ConstVecRef v, ConstVecRef tauY, const Force* fext,
                                             const ConstrainedDerivativeSettings& settings) {
  Data& td = data.treeData;
  CDYN_TRY(checkArguments(model, data, set, cdd, q, v, tauY, fext, settings));
  // MJCF joint dynamics enter through H (+ G^T A G, clusterMassMatrix), C and tau_y of CE-RNEA
  // (+ A qdd - tau_p) and its derivatives (computeCeRneaDerivatives): F = tau - C keeps them.
  const int m = set.rows();
  ConstraintData& cd = cdd.constraints;
  // The solution (eq. K9): C, H, J, gamma, k; Cholesky of H, pseudo-inverse of the Delassus.
  CDYN_TRY(clusterMassMatrix(model, data, q));
  cdd.yScratch.setZero();
  CDYN_TRY(ceRnea(model, data, q, v, cdd.yScratch, fext));  // checks that the state is closed
  cdd.C = data.tauY;
  detail::completeRotorBodies(model, data);  // the constraint kinematics read every body
  CDYN_TRY(detail::denseConstraintJacobian(model, data, cd, q, v.data()));
  cdd.lltH.compute(data.H);
  if (double ratio; !detail::choleskyAboveFloor(cdd.lltH, data.H, detail::kSingularPivot, &ratio))
    return detail::fail(td, Status::NotPositiveDefinite,
                        "computeConstrainedDynamicsDerivatives: the independent mass matrix H is "
                        "not positive definite to working precision (%s)",
                        detail::PivotText(ratio, detail::kSingularPivot).c_str());
  cdd.Hinv.setIdentity();
  cdd.lltH.solveInPlace(cdd.Hinv);
  cdd.JHinv.noalias() = cd.jacobian.lazyProduct(cdd.Hinv);
  cdd.eig.noalias() = cdd.JHinv.lazyProduct(cd.jacobian.transpose());
  cd.delassus = cdd.eig;
  detail::jacobiEigen(cdd.eig, cdd.eigVectors);
  const double sigmaMax = m ? std::max(0.0, cdd.eig.diagonal().maxCoeff()) : 0.0;
  cdd.rank = 0;
  double sigmaMin = sigmaMax;
  cdd.pinv.setZero();
  for (int i = 0; i < m; ++i) {
    const double s = cdd.eig(i, i);
    if (!(s > settings.rankTolerance * sigmaMax)) continue;
    ++cdd.rank;
    sigmaMin = std::min(sigmaMin, s);
    cdd.pinv.noalias() += (cdd.eigVectors.col(i) / s) * cdd.eigVectors.col(i).transpose();
  }
  cdd.conditionNumber = cdd.rank ? sigmaMax / sigmaMin : 1.0;
  // y_ddot = H^-1 (tau - C) + H^-1 J^T lambda, lambda = Lambda (k - gamma - J H^-1 (tau - C)).
  cdd.yScratch = tauY - cdd.C;
  cdd.ydd.noalias() = cdd.Hinv * cdd.yScratch;
  cd.z = cd.desired - cd.gamma;
  cdd.rowScratch.noalias() = cd.jacobian * cdd.ydd;
  const double scale = std::max({1.0, detail::maxAbs(cd.z), detail::maxAbs(cdd.rowScratch)});
  cd.z -= cdd.rowScratch;
  cdd.lambda.noalias() = cdd.pinv * cd.z;
  cdd.ydd.noalias() += cdd.JHinv.transpose() * cdd.lambda;
  cd.lambda = cdd.lambda;
  cd.rowAcceleration = cd.gamma;
  cd.rowAcceleration.noalias() += cd.jacobian * cdd.ydd;
  cdd.rowScratch = cd.rowAcceleration - cd.desired;
  cdd.rowResidual = detail::maxAbs(cdd.rowScratch);
  const std::initializer_list<detail::InputMagnitude> inputs = {
      {"q", detail::maxAbs(q), 1},
      {"v", detail::maxAbs(v), 2},
      {"tauY", detail::maxAbs(tauY), 1},
      {"fext", detail::maxAbsForces(model.treeModel, fext), 1}};
  if (!(detail::allFiniteFast(cdd.ydd) && detail::allFiniteFast(cdd.lambda)))
    return detail::nonFiniteOutput(td, "computeConstrainedDynamicsDerivatives: ydd / lambda",
                                   inputs);
  if (!(cdd.rowResidual <= settings.tolerance * scale))
    return detail::fail(td, Status::ConstraintFailure,
                        "computeConstrainedDynamicsDerivatives: the constraint rows are "
                        "inconsistent: row residual %.3g of the least-squares solution (rank %d "
                        "of %d rows)",
                        cdd.rowResidual, cdd.rank, m);
  // CE-RNEA derivatives at y_ddot with the constraint forces C^T lambda held in the body frames.
  for (int b = 0; b < model.treeModel.nbodies; ++b) cdd.fext[b] = fext ? fext[b] : Force::Zero();
  for (const ConstraintData::Attachment& a : cd.attachments)
    cdd.fext[a.body].noalias() +=
        a.C.topRows(a.rows).transpose() * cdd.lambda.segment(a.row0, a.rows);
  CDYN_TRY(computeCeRneaDerivatives(model, data, cdd.cluster, q, v, cdd.ydd, cdd.fext.data()));
  cdd.yScratch = cdd.cluster.tauY - tauY;
  cdd.dynamicsResidual = detail::maxAbs(cdd.yScratch);
  const double dynScale = std::max({1.0, detail::maxAbs(tauY), detail::maxAbs(cdd.lambda),
                                    detail::maxAbsForces(model.treeModel, fext)});
  if (!(cdd.dynamicsResidual <= settings.tolerance * dynScale))
    return detail::fail(td, Status::ConstraintFailure,
                        "computeConstrainedDynamicsDerivatives: dynamics residual %.3g above "
                        "tolerance %.3g (ill-conditioned KKT system, condition number of the "
                        "Delassus matrix %.3g)",
                        cdd.dynamicsResidual, settings.tolerance * dynScale, cdd.conditionNumber);
  // eq. K7: dF/dy = d tau_y/dy (body-fixed forces) - correction (K6); dF/dy_dot = d tau_y/dy_dot.
  cdd.dF_dy = cdd.cluster.dtau_dy;
  detail::constrainedRowDerivatives(model, data, set, cdd);
  // eq. K8.
  solveTangent(cdd, cdd.dF_dy, cdd.dR_dy, cdd.dydd_dy, cdd.dlambda_dy);
  solveTangent(cdd, cdd.cluster.dtau_dydot, cdd.dR_dydot, cdd.dydd_dydot, cdd.dlambda_dydot);
  // d/dtau: P = -I, Q = 0.
  cdd.dlambda_dtau.noalias() = -cdd.pinv.lazyProduct(cdd.JHinv);
  cdd.dydd_dtau = cdd.Hinv;
  cdd.dydd_dtau.noalias() += cdd.JHinv.transpose().lazyProduct(cdd.dlambda_dtau);
  for (const MatX* x : {&cdd.dydd_dy, &cdd.dydd_dydot, &cdd.dlambda_dy, &cdd.dlambda_dydot,
                        &cdd.dydd_dtau, &cdd.dlambda_dtau})
    if (!detail::allFiniteFast(*x))
      return detail::nonFiniteOutput(td, "computeConstrainedDynamicsDerivatives: derivatives",
                                     inputs);
  return detail::ok(td);
}

}  // namespace clusterdyn
