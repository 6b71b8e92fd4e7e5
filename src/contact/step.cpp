// One semi-implicit Euler step with contacts on the cluster tree: the impulses from the
// constraint-space problem (contact_problem.cpp, the solvers), the new independent velocities as
// the free ones plus the impulse response H^-1 J^T lambda (on the articulated inertias the
// Delassus matrix read: CE-ABA's, delassus_aba.hpp), the independent positions integrated, the loop
// closure putting the dependent coordinates back on the manifold.
#include <cmath>

#include "cluster/cluster_aba_step.hpp"
#include "cluster/loop_constraints.hpp"
#include "cluster/step_modes.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/configuration.hpp"
#include "constrained/constraint_detail.hpp"
#include "constrained/delassus_aba.hpp"
#include "contact/contact_detail.hpp"
#include "core/check.hpp"

namespace clusterdyn {

Status contactStep(const ClusterModel& model, ClusterData& data, const ContactProblem& problem,
                   ContactData& cd, Eigen::Ref<VecX> q, Eigen::Ref<VecX> v, ConstVecRef tauY,
                   const StepSettings& s) {
  Data& td = data.treeData;
  CDYN_TRY(assembleContactProblem(model, data, problem, cd, q, v, tauY, s));
  // Impulses (warm start: the previous step's).
  if (!s.warmStart) cd.lambda.setZero();
  const Status solve =
      s.solver == StepSettings::Solver::Pgs
          ? solveContactPgs(cd.G, cd.g, cd.blocks, s.contact, cd.solver, cd.lambda, cd.result)
          : solveContactAdmm(cd.G, cd.g, cd.blocks, s.contact, cd.solver, cd.lambda, cd.result);
  if (solve != Status::Ok && solve != Status::NotConverged)
    return detail::fail(td, solve, "contactStep: %.200s", cd.solver.lastError);
  // y_dot+ = y_dot_free + H^-1 J^T lambda: the impulses through the articulated inertias the
  // Delassus matrix read, by the reduced backward sweep of the row forces and the reduced forward
  // sweep from a zero root acceleration (Sathya & Carpentier 2024, Alg. 2); instead of a second
  // CE-ABA with tau + J^T lambda / dt.
  detail::contactImpulsesOnRows(problem, cd);  // contact frames -> the rows of problem.rows()
  if (detail::afterAbaServes(model, data, cd.rows)) {  // CE-ABA's quantities (delassus_aba.hpp)
    detail::impulseResponseAfterAba(model, data, cd.rows, cd.lambdaRows, data.ydd);
  } else {  // delassusMatrix's, at zero velocity and force: pass 3 without gravity
    detail::applyRowForces(model, data, cd.rows, cd.lambdaRows);
    const Motion zero = Motion::Zero();
    for (int k = 0; k < static_cast<int>(model.clusters.size()); ++k) {
      const int o = model.clusters[k].outputBody;
      detail::clusterAccelerationStep(model, data, k, o >= 0 ? td.a_gf[o] : zero,
                                      detail::RotorFrame::Body);
    }
  }
  cd.ydot = cd.ydotFree + data.ydd;
  data.ydd = cd.yddFree + (1.0 / s.dt) * data.ydd;  // the step's accelerations
  cd.velocity.noalias() = cd.Jc * cd.ydot;
  if (!model.hasImplicitClusters()) {
    // Couplings and mimics only: G is constant (Cluster::G), v+ = G y_dot+ without a kinematics
    // pass, and the relations are linear in q and hold along v = G y_dot: the spanning
    // integration q+ = q (+) dt v+ keeps them up to rounding (its independent entries are
    // y (+) dt y_dot+). The closure's Newton runs only when the residual exceeds its tolerance.
    for (const Cluster& c : model.clusters) {
      if (!c.constrained()) {
        data.v.segment(c.v0, c.nv) = cd.ydot.segment(c.y0, c.ny);
        continue;
      }
      for (int i = 0; i < c.nv; ++i) {  // small: no matrix-vector kernel call
        double x = 0.0;
        for (int j = 0; j < c.ny; ++j) x += c.G(i, j) * cd.ydot[c.y0 + j];
        data.v[c.v0 + i] = x;
      }
    }
    integrateInto(model.treeModel, q, data.v, s.dt, cd.qNext);
    double residual = 0.0;
    for (int k = 0; k < static_cast<int>(model.clusters.size()); ++k) {
      if (!model.clusters[k].constrained()) continue;
      detail::constraintResidual(model, data, k, cd.qNext);
      const VecX& phi = detail::scratch(data)[k].phi;
      for (int i = 0; i < phi.size(); ++i)
        if (!(std::abs(phi[i]) <= residual)) residual = std::abs(phi[i]);  // NaN kept
    }
    if (residual <= kClosureSettings.residualTolerance) {
      CDYN_TRY(detail::checkConfiguration(model.treeModel, td, cd.qNext));
      data.q = cd.qNext;
      data.lastResidual = residual;
      data.lastIterations = 0;
    } else {
      for (int i = 0; i < model.nyq; ++i) cd.y[i] = cd.qNext[model.independentPosition[i]];
      data.q = q;  // warm start: continue the assembly branch of q
      CDYN_TRY(solveLoopClosure(model, data, cd.y));
    }
  } else {
    // y+ = y (+) dt y_dot+ on the independent coordinates (the dependent entries of the
    // spanning integration are discarded), then the closure from the previous, closed
    // configuration and v+ = G(q+) y_dot+.
    cd.vSpan.setZero();
    for (int i = 0; i < model.ny; ++i) cd.vSpan[model.independentVelocity[i]] = cd.ydot[i];
    integrateInto(model.treeModel, q, cd.vSpan, s.dt, cd.qNext);
    for (int i = 0; i < model.nyq; ++i) cd.y[i] = cd.qNext[model.independentPosition[i]];
    data.q = q;  // warm start: continue the assembly branch of q
    CDYN_TRY(independentToSpanning(model, data, cd.y, cd.ydot));
  }
  q = data.q;
  v = data.v;
  if (solve == Status::NotConverged)
    return detail::fail(td, Status::NotConverged, "contactStep: %.200s", cd.solver.lastError);
  return detail::ok(td);
}

}  // namespace clusterdyn
