// C API of the constraints (contacts, welds, loops), the Delassus matrix and the proximal
// constrained dynamics: converts and checks arguments, calls include/clusterdyn/constraints.hpp,
// maps statuses. No dynamics of its own; every entry point catches every exception.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "capi_batch_internal.hpp"
#include "capi_constraints_internal.hpp"
#include "capi_internal.hpp"
#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/constraints.hpp"

static_assert(CDYN_CONSTRAINT_POINT == static_cast<int>(cd::ConstraintType::Point) &&
                  CDYN_CONSTRAINT_WELD == static_cast<int>(cd::ConstraintType::Weld) &&
                  CDYN_CONSTRAINT_REVOLUTE == static_cast<int>(cd::ConstraintType::Revolute) &&
                  CDYN_CONSTRAINT_PLANAR == static_cast<int>(cd::ConstraintType::Planar) &&
                  CDYN_CONSTRAINT_PRISMATIC == static_cast<int>(cd::ConstraintType::Prismatic),
              "cdyn_constraint_type mirrors clusterdyn::ConstraintType");

using namespace cdyn_constraints_internal;

namespace {

/// Entry check of a compute function; clears the message.
cdyn_status enter(const cdyn_constraint_set* set, cdyn_constraint_workspace* ws) {
  if (ws == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "ws is NULL");
  if (!validWorkspace(ws))
    return refuse(CDYN_ERR_INVALID_ARGUMENT, "ws is not a valid cdyn_constraint_workspace handle");
  if (set == nullptr) return fail(ws, CDYN_ERR_NULL_POINTER, "set is NULL");
  if (!validSet(set))
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "set is not a valid cdyn_constraint_set handle");
  if (ws->set != set)
    return fail(ws, CDYN_ERR_WORKSPACE_MISMATCH,
                "the constraint workspace was created for another constraint set");
  ws->data.treeData.lastError[0] = '\0';
  return CDYN_OK;
}

cdyn_status need(cdyn_constraint_workspace* ws, const void* p, const char* name) {
  return p ? CDYN_OK : fail(ws, CDYN_ERR_NULL_POINTER, "%s is NULL", name);
}

/// The explicit row count of a compute call (the set's m).
cdyn_status checkRows(cdyn_constraint_workspace* ws, int m, const char* name) {
  const int rows = ws->set->set.rows();
  if (m != rows)
    return fail(ws, CDYN_ERR_INVALID_SIZE, "%s is %d, expected the set's row count %d", name, m,
                rows);
  return CDYN_OK;
}

cdyn_status checkLd(cdyn_constraint_workspace* ws, int ld, const char* name) {
  const int need = ws->set->set.rows();  // the header's ld >= m, also for m = 0
  if (ld < need) return fail(ws, CDYN_ERR_INVALID_SIZE, "%s is %d, expected >= %d", name, ld, need);
  return CDYN_OK;
}

template <typename Matrix>
void copyMatrix(const Matrix& A, double* out, int ld) {
  for (Eigen::Index j = 0; j < A.cols(); ++j)
    for (Eigen::Index i = 0; i < A.rows(); ++i) out[i + j * ld] = A(i, j);
}

using ConstMap = Eigen::Map<const cd::VecX>;

enum class Solver { ConstrainedAba, ProxPv, Dense };

/// The state-independent arguments of a proximal solve (after enter): required arrays, m, the
/// settings (NULL: defaults) converted into *ps and *warm.
cdyn_status checkSolveArgs(Solver which, cdyn_constraint_workspace* ws, const double* q,
                           const double* v, const double* tau, const double* ydd,
                           const double* lambda, int m, const cdyn_proximal_settings* settings,
                           cd::ProximalSettings* ps, bool* warm) {
  // The required arrays of the description (lengths from the model), m before lambda.
  const auto& spec = cdyn_args::kConstrainedSolve;
  const void* given[] = {q, v, tau, nullptr, ydd, nullptr, lambda};
  for (int k = 0; k < cdyn_args::count(spec); ++k) {
    if (spec[k].optional) continue;
    if (spec[k].len == cdyn_args::Len::Rows) {
      if (cdyn_status s = checkRows(ws, m, "m")) return s;
      if (m == 0) continue;
    }
    if (cdyn_status s = need(ws, given[k], spec[k].name)) return s;
  }
  *warm = false;
  if (settings) {
    ps->mu = settings->mu;
    ps->tolerance = settings->tolerance;
    ps->maxIterations = settings->max_iterations;
    *warm = settings->warm_start != 0;
  }
  if (*warm && which == Solver::Dense)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                "warm_start is not supported by the dense baseline (set it to 0)");
  return CDYN_OK;
}

/// The three proximal solves: checks, the C++ call, outputs (also on NotConverged).
cdyn_status solve(Solver which, const cdyn_constraint_set* set, cdyn_constraint_workspace* ws,
                  const double* q, const double* v, const double* tau, const double* fext,
                  const cdyn_proximal_settings* settings, double* ydd, double* qdd, double* lambda,
                  int m, cdyn_proximal_result* result) {
  if (cdyn_status s = enter(set, ws)) return s;
  return guard(sinkOf(ws), Phase::Call, [&]() -> cdyn_status {
    const cd::ClusterModel& cm = set->model->cm;
    cd::ProximalSettings ps;
    bool warm = false;
    if (cdyn_status s = checkSolveArgs(which, ws, q, v, tau, ydd, lambda, m, settings, &ps, &warm))
      return s;
    const cd::Force* f = nullptr;
    if (fext) {
      for (int i = 0; i < cm.treeModel.nbodies; ++i)
        ws->fext[i] = Eigen::Map<const cd::Force>(fext + 6 * i);
      f = ws->fext.data();
    }
    const ConstMap qm(q, cm.treeModel.nq), vm(v, cm.treeModel.nv), taum(tau, cm.ny);
    cd::Status st;
    switch (which) {
      case Solver::ConstrainedAba:
        st = cd::constrainedAba(cm, ws->data, set->set, ws->cdata, qm, vm, taum, ps, f, warm);
        break;
      case Solver::ProxPv:
        st = cd::proxPv(cm, ws->data, set->set, ws->cdata, qm, vm, taum, ps, f, warm);
        break;
      default:
        st = cd::constrainedDynamicsDense(cm, ws->data, set->set, ws->cdata, qm, vm, taum, ps, f);
        break;
    }
    const cdyn_status cs = fromStatus(st);
    if (st == cd::Status::Ok || st == cd::Status::NotConverged) {
      std::copy_n(ws->data.ydd.data(), cm.ny, ydd);
      if (qdd) std::copy_n(ws->data.qdd.data(), cm.treeModel.nv, qdd);
      if (m > 0) std::copy_n(ws->cdata.lambda.data(), m, lambda);
    }
    if (result) {
      const cd::ProximalResult& r = ws->cdata.result;
      result->status = cs;
      result->iterations = r.iterations;
      result->residual = r.residual;
      result->dual_step = r.dualStep;
      result->converged = r.converged ? 1 : 0;
    }
    if (st == cd::Status::Ok) ws->data.treeData.lastError[0] = '\0';
    return cs;
  });
}

}  // namespace

extern "C" {

cdyn_status cdyn_proximal_settings_default(cdyn_proximal_settings* settings) {
  if (settings == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_proximal_settings_default: settings is NULL");
  const cd::ProximalSettings d;
  settings->mu = d.mu;
  settings->tolerance = d.tolerance;
  settings->max_iterations = d.maxIterations;
  settings->warm_start = 0;
  return CDYN_OK;
}

// ---- constraint workspaces -----------------------------------------------------------------

cdyn_status cdyn_constraint_workspace_create(const cdyn_model* model,
                                             const cdyn_constraint_set* set,
                                             cdyn_constraint_workspace** workspace) {
  if (workspace == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_constraint_workspace_create: workspace is NULL");
  *workspace = nullptr;
  if (model == nullptr || set == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_constraint_workspace_create: model or set is NULL");
  if (!validModel(model) || !validSet(set))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constraint_workspace_create: model or set is not a valid handle");
  if (set->model != model)
    return refuse(CDYN_ERR_WORKSPACE_MISMATCH,
                  "cdyn_constraint_workspace_create: the set belongs to another model");
  return guard(Sink{}, Phase::Call, [&] {
    *workspace = new cdyn_constraint_workspace(set);
    set->workspaces.fetch_add(1);
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_workspace_free(cdyn_constraint_workspace* workspace) {
  if (workspace == nullptr) return CDYN_OK;
  if (!validWorkspace(workspace))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constraint_workspace_free: workspace is not a valid "
                  "cdyn_constraint_workspace handle");
  workspace->set->workspaces.fetch_sub(1);
  workspace->tag = kDeadTag;
  delete workspace;
  return CDYN_OK;
}

const char* cdyn_constraint_workspace_last_error(const cdyn_constraint_workspace* workspace) {
  if (workspace == nullptr) return "workspace is NULL";
  if (!validWorkspace(workspace)) return "not a valid cdyn_constraint_workspace handle";
  return workspace->data.treeData.lastError.data();
}

// ---- compute functions ---------------------------------------------------------------------

cdyn_status cdyn_constraint_jacobian(const cdyn_constraint_set* set, cdyn_constraint_workspace* ws,
                                     const double* q, const double* v, int m, double* J, int ldj,
                                     double* gamma) {
  if (cdyn_status s = enter(set, ws)) return s;
  return guard(sinkOf(ws), Phase::Call, [&]() -> cdyn_status {
    const cd::ClusterModel& cm = set->model->cm;
    if (cdyn_status s = need(ws, q, "q")) return s;
    if (cdyn_status s = checkRows(ws, m, "m")) return s;
    if (cdyn_status s = checkLd(ws, ldj, "ldj")) return s;
    if (m > 0 && cm.ny > 0)
      if (cdyn_status s = need(ws, J, "J")) return s;
    const ConstMap qm(q, cm.treeModel.nq);
    const cd::VecX& vz = ws->vzero;
    const ConstMap vm(v ? v : vz.data(), cm.treeModel.nv);
    const cd::Status st = cd::constraintJacobian(cm, ws->data, set->set, ws->cdata, qm, vm);
    if (st != cd::Status::Ok) return fromStatus(st);
    copyMatrix(ws->cdata.jacobian, J, ldj);
    if (gamma) std::copy_n(ws->cdata.gamma.data(), m, gamma);
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_kinematics(const cdyn_constraint_set* set,
                                       cdyn_constraint_workspace* ws, const double* q,
                                       const double* v, int m, double* J, int ldj, double* gamma,
                                       double* phi) {
  if (cdyn_status s = enter(set, ws)) return s;
  return guard(sinkOf(ws), Phase::Call, [&]() -> cdyn_status {
    const cd::ClusterModel& cm = set->model->cm;
    if (cdyn_status s = need(ws, q, "q")) return s;
    if (cdyn_status s = checkRows(ws, m, "m")) return s;
    if (J)
      if (cdyn_status s = checkLd(ws, ldj, "ldj")) return s;
    const ConstMap qm(q, cm.treeModel.nq);
    const ConstMap vm(v ? v : ws->vzero.data(), cm.treeModel.nv);
    const cd::Status st = cd::constraintJacobian(cm, ws->data, set->set, ws->cdata, qm, vm);
    if (st != cd::Status::Ok) return fromStatus(st);
    if (J) copyMatrix(ws->cdata.jacobian, J, ldj);
    if (gamma) std::copy_n(ws->cdata.gamma.data(), m, gamma);
    if (phi) std::copy_n(ws->cdata.phi.data(), m, phi);
    return CDYN_OK;
  });
}

cdyn_status cdyn_delassus_matrix(const cdyn_constraint_set* set, cdyn_constraint_workspace* ws,
                                 const double* q, double* D, int ldd) {
  if (cdyn_status s = enter(set, ws)) return s;
  return guard(sinkOf(ws), Phase::Call, [&]() -> cdyn_status {
    const cd::ClusterModel& cm = set->model->cm;
    if (cdyn_status s = need(ws, q, "q")) return s;
    if (cdyn_status s = checkLd(ws, ldd, "ldd")) return s;
    if (set->set.rows() > 0)
      if (cdyn_status s = need(ws, D, "D")) return s;
    const cd::Status st =
        cd::delassusMatrix(cm, ws->data, set->set, ws->cdata, ConstMap(q, cm.treeModel.nq));
    if (st != cd::Status::Ok) return fromStatus(st);
    copyMatrix(ws->cdata.delassus, D, ldd);
    return CDYN_OK;
  });
}

cdyn_status cdyn_damped_delassus_inverse(const cdyn_constraint_set* set,
                                         cdyn_constraint_workspace* ws, const double* q, double rho,
                                         double* Dinv, int ldd) {
  if (cdyn_status s = enter(set, ws)) return s;
  return guard(sinkOf(ws), Phase::Call, [&]() -> cdyn_status {
    const cd::ClusterModel& cm = set->model->cm;
    if (cdyn_status s = need(ws, q, "q")) return s;
    if (cdyn_status s = checkLd(ws, ldd, "ldd")) return s;
    if (set->set.rows() > 0)
      if (cdyn_status s = need(ws, Dinv, "Dinv")) return s;
    const cd::Status st = cd::dampedDelassusInverse(cm, ws->data, set->set, ws->cdata,
                                                    ConstMap(q, cm.treeModel.nq), rho);
    if (st != cd::Status::Ok) return fromStatus(st);
    copyMatrix(ws->cdata.dampedInverse, Dinv, ldd);
    return CDYN_OK;
  });
}

cdyn_status cdyn_constrained_aba(const cdyn_constraint_set* set, cdyn_constraint_workspace* ws,
                                 const double* q, const double* v, const double* tau,
                                 const double* fext, const cdyn_proximal_settings* settings,
                                 double* ydd, double* qdd, double* lambda, int m,
                                 cdyn_proximal_result* result) {
  return solve(Solver::ConstrainedAba, set, ws, q, v, tau, fext, settings, ydd, qdd, lambda, m,
               result);
}

cdyn_status cdyn_prox_pv(const cdyn_constraint_set* set, cdyn_constraint_workspace* ws,
                         const double* q, const double* v, const double* tau, const double* fext,
                         const cdyn_proximal_settings* settings, double* ydd, double* qdd,
                         double* lambda, int m, cdyn_proximal_result* result) {
  return solve(Solver::ProxPv, set, ws, q, v, tau, fext, settings, ydd, qdd, lambda, m, result);
}

cdyn_status cdyn_constrained_dynamics_dense(const cdyn_constraint_set* set,
                                            cdyn_constraint_workspace* ws, const double* q,
                                            const double* v, const double* tau, const double* fext,
                                            const cdyn_proximal_settings* settings, double* ydd,
                                            double* qdd, double* lambda, int m,
                                            cdyn_proximal_result* result) {
  return solve(Solver::Dense, set, ws, q, v, tau, fext, settings, ydd, qdd, lambda, m, result);
}

cdyn_status cdyn_constraint_wrenches(const cdyn_constraint_set* set, cdyn_constraint_workspace* ws,
                                     double* W, int ldw) {
  if (cdyn_status s = enter(set, ws)) return s;
  return guard(sinkOf(ws), Phase::Call, [&]() -> cdyn_status {
    if (ldw < 6) return fail(ws, CDYN_ERR_INVALID_SIZE, "ldw is %d, expected >= 6", ldw);
    const int n = set->set.size();
    if (n > 0)
      if (cdyn_status s = need(ws, W, "W")) return s;
    for (int j = 0; j < n; ++j) {
      const cd::Force f = cd::constraintWrench(set->set, ws->cdata, j);
      std::copy_n(f.data(), 6, W + static_cast<std::ptrdiff_t>(j) * ldw);
    }
    return CDYN_OK;
  });
}

}  // extern "C"

// ---- support of the batched solves (capi_batch_internal.hpp) ---------------------------------

namespace cdyn_batch_internal {

const cdyn_model* constraintSetModel(const cdyn_constraint_set* set) {
  return validSet(set) ? set->model : nullptr;
}

double* constraintGather(cdyn_constraint_workspace* ws) { return ws->gather.data(); }

cdyn_status checkBatchedSolve(int solver, const cdyn_constraint_set* set,
                              cdyn_constraint_workspace* ws, const double* q, const double* v,
                              const double* tau, const double* ydd, const double* lambda, int m,
                              const cdyn_proximal_settings* settings) {
  if (cdyn_status s = enter(set, ws)) return s;
  return guard(sinkOf(ws), Phase::Call, [&]() -> cdyn_status {
    if (solver < CDYN_SOLVER_CONSTRAINED_ABA || solver > CDYN_SOLVER_DENSE)
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                  "solver %d is not a cdyn_constrained_solver (0..2)", solver);
    const Solver which = solver == CDYN_SOLVER_CONSTRAINED_ABA ? Solver::ConstrainedAba
                         : solver == CDYN_SOLVER_PROX_PV       ? Solver::ProxPv
                                                               : Solver::Dense;
    cd::ProximalSettings ps;
    bool warm = false;
    if (cdyn_status s = checkSolveArgs(which, ws, q, v, tau, ydd, lambda, m, settings, &ps, &warm))
      return s;
    if (warm)
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                  "warm_start is not supported in batched solves (a state's result would depend "
                  "on the state its thread solved before): set it to 0");
    if (cd::checkProximalSettings(ws->data, ps) != cd::Status::Ok) return CDYN_ERR_INVALID_ARGUMENT;
    if (which == Solver::ConstrainedAba && !set->set.allWorldAttached())
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                  "CDYN_SOLVER_CONSTRAINED_ABA takes contact sets only (every constraint with "
                  "body2 = -1); use CDYN_SOLVER_PROX_PV for this set");
    return CDYN_OK;
  });
}

}  // namespace cdyn_batch_internal
