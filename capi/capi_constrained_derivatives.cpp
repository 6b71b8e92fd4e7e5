// C API: derivatives of the constrained dynamics (clusterdyn.h, "Constrained-dynamics
// derivatives"): the constrained derivative workspace of one constraint set and
// cdyn_constrained_dynamics_derivatives, the binding of
// include/clusterdyn/constrained_derivatives.hpp (the counterpart of Pinocchio's
// computeConstraintDynamicsDerivatives, Carpentier & Mansard 2018, in independent coordinates).
// Converts and checks the arguments (capi_args.hpp kConstrainedDerivatives), calls the C++ core,
// copies the results out; no dynamics of its own, no throw.
#include <cstdint>
#include <memory>

#include "capi_constraints_internal.hpp"
#include "capi_internal.hpp"
#include "clusterdyn/constrained_derivatives.hpp"

namespace {

constexpr std::uint32_t kConstrainedDerivativeTag = 0x44434443u;  // "CDCD"

}  // namespace

/// The constrained derivative workspace: the C++ ConstrainedDerivativeData of (model, set), sized
/// once, and an ordinary workspace of the model (owned, never exposed) for the cluster-tree
/// scratch, the aligned fext copy and the message buffer.
struct cdyn_constrained_derivative_workspace {
  cdyn_constrained_derivative_workspace(const cdyn_constraint_set* s, cdyn_workspace* w)
      : set(s), ws(w), cdd(s->model->cm, s->set) {}
  std::uint32_t tag = kConstrainedDerivativeTag;
  const cdyn_constraint_set* set;
  cdyn_workspace* ws;  ///< freed with the handle
  cd::ConstrainedDerivativeData cdd;
};

using namespace cdyn_internal;

namespace {

bool validHandle(const cdyn_constrained_derivative_workspace* c) {
  return c->tag == kConstrainedDerivativeTag;
}

/// The arrays of kConstrainedDerivatives against the model's sizes and the set's rows m (the
/// order of the description, external forces last; matrices left to checkMatrix).
template <std::size_t N>
cdyn_status checkArgs(cdyn_workspace* ws, const cd::ClusterModel& cm, int m,
                      const cdyn_args::ArgSpec (&spec)[N], const cdyn_args::ArrayArg (&a)[N],
                      bool (&present)[N], const cd::Force** fext) {
  cdyn_args::Sizes sizes = sizesOf(cm);
  sizes.rows = m;
  int forces = -1;
  for (std::size_t k = 0; k < N; ++k) {
    present[k] = false;
    if (spec[k].len == cdyn_args::Len::Fext) forces = static_cast<int>(k);
    if (spec[k].len == cdyn_args::Len::Fext || spec[k].dir == cdyn_args::Dir::MatrixOut) continue;
    if (spec[k].optional && a[k].p == nullptr && a[k].n == 0) continue;  // absent: (NULL, 0)
    if (cdyn_status s = checkArray(ws, a[k].p, a[k].n, sizes.of(spec[k].len), spec[k].name))
      return s;
    present[k] = true;
  }
  *fext = nullptr;
  if (forces < 0) return CDYN_OK;
  return readForces(ws, cm.treeModel, a[forces].p, a[forces].n, fext);
}

/// The output matrices given (required ones always): rows x ny with their leading dimension.
template <std::size_t N>
cdyn_status checkOutMatrices(cdyn_workspace* ws, const cdyn_args::ArgSpec (&spec)[N],
                             const cdyn_args::ArrayArg (&a)[N], int ldY, int ldM, int ny, int m) {
  for (std::size_t k = 0; k < N; ++k) {
    if (spec[k].dir != cdyn_args::Dir::MatrixOut) continue;
    if (spec[k].optional && a[k].p == nullptr) continue;
    const bool rowsM = spec[k].len == cdyn_args::Len::MNy;
    if (cdyn_status s = checkMatrix(ws, a[k].p, rowsM ? ldM : ldY, rowsM ? m : ny, ny, spec[k].name,
                                    rowsM ? "ld_m" : "ld_y"))
      return s;
  }
  return CDYN_OK;
}

void copyMatrix(const cd::MatX& A, double* out, int ld) {
  if (out != nullptr) copyBlock(A, out, ld, 0, 0);
}

}  // namespace

extern "C" {

cdyn_status cdyn_constrained_derivative_workspace_create(
    const cdyn_constraint_set* set, cdyn_constrained_derivative_workspace** cws) {
  if (cws == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER,
                  "cdyn_constrained_derivative_workspace_create: cws is NULL");
  *cws = nullptr;
  if (set == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER,
                  "cdyn_constrained_derivative_workspace_create: set is NULL");
  if (!cdyn_constraints_internal::validSet(set))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constrained_derivative_workspace_create: set is not a valid "
                  "cdyn_constraint_set handle");
  return guard(Sink{}, Phase::Call, [&] {
    cdyn_workspace* ws = nullptr;
    if (cdyn_status s = cdyn_workspace_create(set->model, &ws)) return s;
    std::unique_ptr<cdyn_workspace, cdyn_status (*)(cdyn_workspace*)> owner(ws,
                                                                            cdyn_workspace_free);
    *cws = new cdyn_constrained_derivative_workspace(set, ws);
    static_cast<void>(owner.release());  // the new handle owns the workspace now
    set->workspaces.fetch_add(1);        // the set stays read-only and alive while the handle lives
    return CDYN_OK;
  });
}

cdyn_status cdyn_constrained_derivative_workspace_free(cdyn_constrained_derivative_workspace* cws) {
  if (cws == nullptr) return CDYN_OK;
  if (!validHandle(cws))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constrained_derivative_workspace_free: cws is not a valid "
                  "cdyn_constrained_derivative_workspace handle");
  cws->set->workspaces.fetch_sub(1);
  cdyn_workspace_free(cws->ws);
  cws->tag = cdyn_constraints_internal::kDeadTag;
  delete cws;
  return CDYN_OK;
}

const char* cdyn_constrained_derivative_workspace_last_error(
    const cdyn_constrained_derivative_workspace* cws) {
  if (cws == nullptr) return "cws is NULL";
  if (!validHandle(cws)) return "not a valid cdyn_constrained_derivative_workspace handle";
  return cdyn_workspace_last_error(cws->ws);
}

cdyn_status cdyn_constrained_dynamics_derivatives(
    const cdyn_constraint_set* set, cdyn_constrained_derivative_workspace* cws, const double* q,
    int nq, const double* v, int nv, const double* tau, int ntau, const double* fext, int nfext,
    double rank_tolerance, double* ydd, int nydd, double* lambda, int nlambda, double* dydd_dy,
    double* dydd_dydot, double* dydd_dtau, int ld_y, double* dlambda_dy, double* dlambda_dydot,
    double* dlambda_dtau, int ld_m, int* rank) {
  if (cws == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "the constrained derivative workspace is NULL");
  if (!validHandle(cws))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "the constrained derivative workspace is not a valid "
                  "cdyn_constrained_derivative_workspace handle (freed, or another kind)");
  cdyn_workspace* ws = cws->ws;
  const cdyn_model* model = cws->set->model;
  return compute(model, ws, [&]() -> cdyn_status {
    if (set == nullptr) return fail(ws, CDYN_ERR_NULL_POINTER, "set is NULL");
    if (!cdyn_constraints_internal::validSet(set))
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "set is not a valid cdyn_constraint_set handle");
    if (set != cws->set)
      return fail(ws, CDYN_ERR_WORKSPACE_MISMATCH,
                  "the constrained derivative workspace was created for another constraint set");
    if (!(rank_tolerance == 0.0 || (rank_tolerance > 0.0 && rank_tolerance < 1.0)))
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                  "rank_tolerance = %g is neither 0 (the default) nor in (0, 1)", rank_tolerance);
    const cd::ClusterModel& cm = model->cm;
    const int m = set->set.rows();
    const auto& spec = cdyn_args::kConstrainedDerivatives;
    const cdyn_args::ArrayArg args[] = {
        {q, nq},        {v, nv},           {tau, ntau},        {fext, nfext},
        {ydd, nydd},    {lambda, nlambda}, {dydd_dy, 0},       {dydd_dydot, 0},
        {dydd_dtau, 0}, {dlambda_dy, 0},   {dlambda_dydot, 0}, {dlambda_dtau, 0}};
    bool given[12];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkOutMatrices(ws, spec, args, ld_y, ld_m, cm.ny, m));
    CDYN_CHECK(checkArgs(ws, cm, m, spec, args, given, &f));
    cd::ConstrainedDerivativeSettings settings;
    if (rank_tolerance != 0.0) settings.rankTolerance = rank_tolerance;
    cd::ConstrainedDerivativeData& d = cws->cdd;
    CDYN_CHECK_CXX(cd::computeConstrainedDynamicsDerivatives(cm, ws->body->data, set->set, d,
                                                             ConstMap(q, nq), ConstMap(v, nv),
                                                             ConstMap(tau, ntau), f, settings));
    if (given[4]) copyOut(d.ydd, ydd);
    if (given[5]) copyOut(d.lambda, lambda);
    copyMatrix(d.dydd_dy, dydd_dy, ld_y);
    copyMatrix(d.dydd_dydot, dydd_dydot, ld_y);
    copyMatrix(d.dydd_dtau, dydd_dtau, ld_y);
    copyMatrix(d.dlambda_dy, dlambda_dy, ld_m);
    copyMatrix(d.dlambda_dydot, dlambda_dydot, ld_m);
    copyMatrix(d.dlambda_dtau, dlambda_dtau, ld_m);
    if (rank) *rank = d.rank;
    return ok(ws);
  });
}

}  // extern "C"
