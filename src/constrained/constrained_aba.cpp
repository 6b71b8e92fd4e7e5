// constrainedABA on the cluster tree (Sathya & Carpentier 2024, Alg. 1-3): augmented-Lagrangian
// iterations whose primal step is an articulated-body solve with constraint-augmented inertias
//   IA_b = I_b + mu_a C^T C,   pA_b -= C^T (lambda + mu_a k')        (eq. 29, Alg. 1 line 5)
// (mu_a = 1/mu the augmented-Lagrangian penalty), and the multiplier update
//   lambda <- lambda + mu_a (k' - C a)                                 (eq. 27b)
// propagated by the reduced two-sweep algorithm (Alg. 2): only the clusters that support a
// constraint are swept during the iterations; one final pass 3 updates every cluster.
//
// Accuracy (issue 22). The augmented sweep's y_ddot solves H y_ddot + C = tau + J^T (lambda +
// mu_a r) with r the row residual: the multipliers returned are that lambda + mu_a r, one update
// ahead of the loop's. The 1/mu-augmented inertias round like eps/mu in the directions the rows
// leave free, which the row residual does not see: a converged solve is checked by one CE-RNEA
// pass with the constraint forces (the dynamics residual), and mu adapts: divided by 10 when the
// row residual stalls (slow contraction mu / (mu + sigma_min) on an ill-conditioned set),
// multiplied by 100 when the dynamics check fails (never again below a mu that failed it).
#include "cluster/cluster_aba_step.hpp"
#include "cluster/cluster_joint_dynamics.hpp"
#include "cluster/cluster_kinematics.hpp"
#include "constrained/constraint_detail.hpp"
#include "constrained/constraint_types.hpp"
#include "constrained/symmetric_inertia.hpp"
#include "core/check.hpp"
#include "core/small_spd.hpp"
#include "tree/aba_step.hpp"
#include "tree/axis_transforms.hpp"
#include "tree/rnea_passes.hpp"

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

// The dynamics residual |H y_ddot + C - tau - J^T lambda - fext| by the backward half of CE-RNEA
// (Chignoli et al. 2023, §V, eq. 62-65): the body accelerations of y_ddot are pass 3's, a_b =
// X a_parent + c_b + S_b y_ddot, the kinematic terms the forward pass of CE-RNEA would form
// (the same liMi, v and c of this call's velocity pass); the forces use the rigid-body
// inertias only, so the eps/mu rounding of the augmented inertias shows in the residual.
Status dynamicsResidual(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                        const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                        const Eigen::Ref<const VecX>& tauY, const Force* fext,
                        ProximalResult& res) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const int nb = tree.nbodies;
  double fmax = 0.0;
  for (int b = 0; b < nb; ++b) {  // f_b = I a_b + v_b x* I v_b - fext_b (Table 5.1)
    const SpatialInertia& I = tree.inertias[b];
    td.f[b] = I * td.a_gf[b] + crossForce(td.v[b], I * td.v[b]);
    if (fext) {
      td.f[b] -= fext[b];
      fmax = std::max(fmax, fext[b].cwiseAbs().maxCoeff());
    }
  }
  for (const ConstraintData::Attachment& a : cd.attachments)  // the force C^T lambda on the body
    td.f[a.body].noalias() -= a.C.topRows(a.rows).transpose() * cd.lambda.segment(a.row0, a.rows);
  for (int b = nb - 1; b >= 0; --b) rneaBackwardStep(tree, td, b, td.tau);
  independentForces(cm, data, data.tauY);  // tau_y = G^T S^T f (eq. 23, 65)
  res.dynamicsResidual = tauY.size() ? (data.tauY - tauY).cwiseAbs().maxCoeff() : 0.0;
  const double lmax = cd.lambda.size() ? cd.lambda.cwiseAbs().maxCoeff() : 0.0;
  res.dynamicsScale = std::max({1.0, tauY.size() ? tauY.cwiseAbs().maxCoeff() : 0.0, lmax, fmax});
  if (!std::isfinite(res.dynamicsResidual))
    return solveOverflow(cm, td, cd, "constrainedAba: dynamics residual", q, v, tauY, fext);
  return Status::Ok;
}

}  // namespace detail

Status checkProximalSettings(ClusterData& data, const ProximalSettings& settings) {
  return detail::checkProximal(data.treeData, settings);
}

namespace {

constexpr double kMaxMu = 1e-2;   ///< the largest mu the accuracy check raises mu to
constexpr double kMinMu = 1e-10;  ///< the smallest mu a stall shrinks mu to
constexpr double kStall = 0.5;    ///< residual ratio per iteration above which mu shrinks

/// Pass 2 of a single-body cluster (Featherstone Table 7.1) as detail::articulatedBodyStep, for a
/// 1-dof joint or a floating root: U = IA S read from IA's column for a revolute joint about a
/// coordinate axis, U = IA and D = IA + armature for a floating root (S = I: the same values as
/// the products with S), the articulated inertia added to the parent's as a symmetric matrix
/// (addSymmetricInertia, equal to actInertia to rounding). Other joints: articulatedBodyStep.
Status bodyArticulatedStep(const Model& model, Data& data, int i, int p, const double* tau) {
  const Joint& joint = model.joints[i];
  const double* arm = model.hasArmature() ? model.armature.data() + model.idx_v[i] : nullptr;
  const Mat6& IA = data.IA[i];
  const bool floatingRoot = joint.type == JointType::Floating && p < 0;
  if (!floatingRoot && joint.nv != 1) return detail::articulatedBodyStep(model, data, i, p, tau);
  double D1 = 0.0;
  Mat6 D6, Dinv6;
  if (floatingRoot) {
    data.U[i] = IA;
    D6 = IA;
    if (arm) D6.diagonal() += Eigen::Map<const Vec6>(arm);
  } else {
    auto U = data.U[i].col(0);
    if (joint.type == JointType::Revolute && joint.alignedAxis >= 0)
      U = joint.alignedSign * IA.col(joint.alignedAxis);  // IA s e_a
    else
      U.noalias() = IA * joint.S.col(0);
    D1 = joint.S.col(0).dot(U);
    if (arm) D1 += arm[0];
  }
  if (floatingRoot ? !detail::invertPositiveDefinite<6>(D6, Dinv6) : !(D1 > 0.0))
    return detail::fail(data, Status::NotPositiveDefinite,
                        "articulated inertia of body '%s' is singular along its joint '%s'",
                        model.bodyNames[i].c_str(), model.jointNames[i].c_str());
  if (floatingRoot) {
    data.Dinv[i] = Dinv6;
    data.u[i] = Eigen::Map<const Vec6>(tau) - data.pA[i];
    return Status::Ok;
  }
  const auto U = data.U[i].col(0);
  const double Dinv = 1.0 / D1;
  data.Dinv[i](0, 0) = Dinv;
  const double u = tau[0] - joint.S.col(0).dot(data.pA[i]);
  data.u[i](0) = u;
  if (p < 0) return Status::Ok;
  Mat6 Ia = IA;
  Ia.noalias() -= (U * Dinv) * U.transpose();
  Force pa = data.pA[i];
  pa.noalias() += Ia * data.c[i];
  pa += U * (Dinv * u);
  detail::addSymmetricInertia(data.liMi[i], Ia, data.IA[p]);
  data.pA[p] += detail::forceInParentFrame(model.axisRotation[i], data.liMi[i], pa);
  return Status::Ok;
}

/// The augmented solve (Alg. 1 lines 4-12) with penalty mua from the multipliers cd.lambda, after
/// the velocity pass and the constraint rows: pass 1's inertias and biases, the augmented
/// inertias and forces, pass 2 over every cluster, pass 3 over the supporting clusters.
Status augmentedSolve(const ClusterModel& model, ClusterData& data, ConstraintData& cd,
                      ConstVecRef q, ConstVecRef v, ConstVecRef tauY, const Force* fext,
                      double mua) {
  Data& td = data.treeData;
  detail::clusterInertiaAndBias(model, data, fext);
  for (const ConstraintData::Attachment& a : cd.attachments) {
    const auto C = a.C.topRows(a.rows);
    td.IA[a.body].noalias() += mua * C.transpose() * C;
    data.rigidInertia[a.body] = 0;
    cd.step.segment(a.row0, a.rows) = cd.lambda.segment(a.row0, a.rows);
    cd.step.segment(a.row0, a.rows) += mua * cd.kprime.segment(a.row0, a.rows);
    td.pA[a.body].noalias() -= C.transpose() * cd.step.segment(a.row0, a.rows);
  }
  detail::ForceCoordinates forces = detail::ForceCoordinates::Independent;
  const double* tau =  // + passive joint forces (MJCF springs, dampers)
      detail::withJointDynamicsForces(model, data, q.data(), v.data(), tauY.data(), forces);
  // Pivots > 0 only: the inertias carry mua C^T C (core/small_spd.hpp, kSingularPivot).
  const detail::PivotFloorScope floor(td.pivotFloor, 0.0);
  for (int k = static_cast<int>(model.clusters.size()) - 1; k >= 0; --k) {
    const Cluster& c = model.clusters[k];
    if (c.constrained()) {
      CDYN_TRY(
          detail::clusterArticulatedStep(model, data, k, tau, forces, detail::RotorFrame::Body));
      continue;
    }
    const int b = c.firstBody;
    CDYN_TRY(bodyArticulatedStep(
        model.treeModel, td, b, c.outputBody,
        tau + (forces == detail::ForceCoordinates::Spanning ? model.treeModel.idx_v[b] : c.y0)));
  }
  detail::supportAccelerations(model, data, cd);
  return Status::Ok;
}

}  // namespace

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

  // Pass 1, the constraint rows, the first augmented solve (Alg. 1).
  CDYN_TRY(detail::clusterVelocityPass(model, data, q, v.data(), detail::Bias::Compute,
                                       detail::StateCheck::Check));
  detail::constraintRowsAt(model, data, cd);
  ProximalResult& res = cd.result;
  res = ProximalResult();
  double mu = settings.mu, muFailed = 0.0;  // muFailed: the largest mu that failed the check
  // An augmented solve whose pass 2 fails at a tiny mu (the 1/mu inertias swamp the bodies')
  // is retried with a larger one.
  auto solve = [&]() -> Status {
    for (;;) {
      const Status st = augmentedSolve(model, data, cd, q, v, tauY, fext, 1.0 / mu);
      if (st != Status::NotPositiveDefinite || mu >= kMaxMu) return st;
      muFailed = std::max(muFailed, mu);
      mu = std::min(100.0 * mu, kMaxMu);
    }
  };
  CDYN_TRY(solve());

  // Augmented-Lagrangian iterations (Alg. 3) with the reduced sweeps (Alg. 2).
  double previous = 0.0;      // row residual of the previous iterate with the same mu
  double rounding = -1.0;     // rounding floor of the row residual (< 0: not computed)
  bool rowsMetLast = false;   // the last iterate met the rows (the dynamics check failed)
  bool stallChecked = false;  // a stall at this mu was checked
  for (int it = 0;; ++it) {
    res.residual = detail::rowResidual(model, data, cd, cd.residual);
    res.iterations = it;
    if (!std::isfinite(res.residual))
      return detail::solveOverflow(model, td, cd, "constrainedAba: row accelerations", q, v, tauY,
                                   fext);
    // The multipliers of y_ddot: lambda + mu_a r (see the top of the file).
    cd.step = cd.residual / mu;
    detail::updateMultipliers(*cd.set, cd.lambda, cd.step);
    res.dualStep = cd.step.size() ? cd.step.cwiseAbs().maxCoeff() : 0.0;
    // Rows met: residual + its rounding floor <= tolerance (the floor computed once the residual
    // is below the tolerance); a floor at or above the tolerance ends the iterations.
    rounding = res.residual <= settings.tolerance ? detail::rowRoundingFloor(cd, td) : -1.0;
    const bool rowsMet = rounding >= 0.0 && res.residual + rounding <= settings.tolerance;
    rowsMetLast = rowsMet;
    if (rounding >= settings.tolerance) break;
    // A stall (contraction slower than kStall: mu >> sigma_min, or rounding at a tiny mu) is
    // checked once per mu: inaccurate, a larger mu; accurate, a smaller one unless mu reached
    // the floor or a mu that failed the check.
    const bool canShrink = 0.1 * mu >= kMinMu && 0.1 * mu > 10.0 * muFailed;
    const bool stalled = !stallChecked && previous > 0.0 && res.residual > kStall * previous;
    if (stalled) stallChecked = true;
    if (rowsMet || stalled) {
      detail::freeAccelerations(model, data, cd);
      CDYN_TRY(detail::dynamicsResidual(model, data, cd, q, v, tauY, fext, res));
      const bool accurate = res.dynamicsResidual <= settings.tolerance * res.dynamicsScale;
      if (rowsMet && accurate) {
        res.converged = true;
        break;
      }
      if (it == settings.maxIterations) break;
      if (!accurate && mu < kMaxMu) {  // eps/mu rounding: a larger mu, warm-started
        muFailed = std::max(muFailed, mu);
        mu = std::min(100.0 * mu, kMaxMu);
        previous = 0.0;
        stallChecked = false;
        CDYN_TRY(solve());
        continue;
      }
      if (rowsMet) break;           // inaccurate at the largest mu
      if (accurate && canShrink) {  // stalled: a smaller mu, a new augmented solve
        mu *= 0.1;
        previous = 0.0;
        stallChecked = false;
        CDYN_TRY(solve());
        continue;
      }
    }
    if (it == settings.maxIterations) break;
    previous = res.residual;
    detail::applyRowForces(model, data, cd, cd.step);
    detail::supportAccelerations(model, data, cd);
  }
  res.mu = mu;
  if (!res.converged) detail::freeAccelerations(model, data, cd);
  if (rounding < 0.0) rounding = detail::rowRoundingFloor(cd, td);
  res.roundingFloor = rounding;
  cd.rowAcceleration = cd.desired - cd.residual;
  if (!detail::solveOutputsFinite(data, cd))
    return detail::solveOverflow(model, td, cd, "constrainedAba: ydd / qdd / lambda", q, v, tauY,
                                 fext);
  if (!res.converged) {
    if (!rowsMetLast && (res.residual <= settings.tolerance || 2.0 * rounding > settings.tolerance))
      return detail::notConverged(td, "constrainedAba", res, rounding, settings);
    if (rowsMetLast)
      return detail::fail(td, Status::NotConverged,
                          "constrainedAba: dynamics residual |H ydd + C - tau - J^T lambda| = "
                          "%.3g > tolerance %.3g x scale %.3g (mu = %.3g too small for double "
                          "precision) after %d iterations",
                          res.dynamicsResidual, settings.tolerance, res.dynamicsScale, mu,
                          res.iterations);
    return detail::fail(td, Status::NotConverged,
                        "constrainedAba: residual %.3g > tolerance %.3g after %d iterations "
                        "(final mu %.3g)",
                        res.residual, settings.tolerance, res.iterations, mu);
  }
  return detail::ok(td);
}

}  // namespace clusterdyn
