// C API: analytical derivatives of the dynamics (clusterdyn.h, "Derivatives"): the derivative
// workspace, the tree derivatives of include/clusterdyn/derivatives.hpp (Carpentier & Mansard
// 2018) and the cluster-tree derivatives of include/clusterdyn/cluster_derivatives.hpp
// (constraint embedding, Chignoli et al. 2023), and cdyn_difference. Converts and checks the
// arguments (capi_args.hpp descriptions), calls the C++ core, copies the results out.
#include <cmath>
#include <cstdio>
#include <memory>

#include "capi_derivatives_internal.hpp"

using namespace cdyn_internal;
using namespace cdyn_derivatives_internal;

namespace {

/// The matrices of a call: every required one, and every optional one that is not NULL, must
/// be dim x dim with leading dimension ld >= dim (checked before anything is written).
template <std::size_t N>
cdyn_status checkMatrices(cdyn_workspace* ws, const cdyn_args::ArgSpec (&spec)[N],
                          const cdyn_args::ArrayArg (&a)[N], int ld, int dim) {
  for (std::size_t k = 0; k < N; ++k) {
    if (spec[k].dir != cdyn_args::Dir::MatrixOut) continue;
    if (spec[k].optional && a[k].p == nullptr) continue;
    if (cdyn_status s = checkMatrix(ws, a[k].p, ld, dim, dim, spec[k].name, "ld")) return s;
  }
  return CDYN_OK;
}

/// Preamble of a derivative function: the derivative workspace's handle and model, then the
/// inner workspace's compute() (model handle, exceptions through the one table).
template <typename F>
cdyn_status computeDerivatives(const cdyn_model* model, cdyn_derivative_workspace* d,
                               F&& body) noexcept {
  if (d == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "the derivative workspace is NULL");
  if (!validDerivativeWorkspace(d))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "the derivative workspace is not a valid cdyn_derivative_workspace handle "
                  "(freed, or another kind)");
  return compute(model, d->ws, [&] { return body(d->ws, d->dd); });
}

void copyMatrix(const cd::MatX& A, double* out, int ld) {
  if (out != nullptr) copyBlock(A, out, ld, 0, 0);
}

}  // namespace

extern "C" {

// ---- the derivative workspace ----------------------------------------------------------------

cdyn_status cdyn_derivative_workspace_create(const cdyn_model* model,
                                             cdyn_derivative_workspace** dws) {
  if (dws == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_derivative_workspace_create: dws is NULL");
  *dws = nullptr;
  if (cdyn_status s = checkModel(model)) return s;
  return guard(Sink{}, Phase::Call, [&] {
    cdyn_workspace* ws = nullptr;
    if (cdyn_status s = cdyn_workspace_create(model, &ws)) return s;
    std::unique_ptr<cdyn_workspace, cdyn_status (*)(cdyn_workspace*)> owner(ws,
                                                                            cdyn_workspace_free);
    *dws = new cdyn_derivative_workspace(model, ws);
    static_cast<void>(owner.release());  // the new handle owns the workspace now
    return CDYN_OK;
  });
}

cdyn_status cdyn_derivative_workspace_free(cdyn_derivative_workspace* dws) {
  if (dws == nullptr) return CDYN_OK;
  if (!validDerivativeWorkspace(dws))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_derivative_workspace_free: dws is not a valid cdyn_derivative_workspace "
                  "handle");
  cdyn_workspace_free(dws->ws);
  dws->tag = kDeadTag;
  delete dws;
  return CDYN_OK;
}

const char* cdyn_derivative_workspace_last_error(const cdyn_derivative_workspace* dws) {
  if (dws == nullptr) return "dws is NULL";
  if (!validDerivativeWorkspace(dws)) return "not a valid cdyn_derivative_workspace handle";
  return cdyn_workspace_last_error(dws->ws);
}

// ---- tree derivatives (spanning tree) --------------------------------------------------------

cdyn_status cdyn_rnea_derivatives(const cdyn_model* model, cdyn_derivative_workspace* dws,
                                  const double* q, int nq, const double* v, int nv, const double* a,
                                  int na, const double* fext, int nfext, double* tau, int ntau,
                                  double* dtau_dq, double* dtau_dv, double* dtau_da, int ld) {
  return computeDerivatives(model, dws, [&](cdyn_workspace* ws, cd::ClusterDerivativeData& d) {
    const cd::ClusterModel& cm = model->cm;
    const cdyn_args::ArrayArg args[] = {{q, nq},     {v, nv},      {a, na},      {fext, nfext},
                                        {tau, ntau}, {dtau_dq, 0}, {dtau_dv, 0}, {dtau_da, 0}};
    bool given[8];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkMatrices(ws, cdyn_args::kRneaDerivatives, args, ld, cm.treeModel.nv));
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kRneaDerivatives, args, given, &f));
    CDYN_CHECK_CXX(cd::computeRNEADerivatives(cm.treeModel, ws->body->data.treeData, d.tree,
                                              ConstMap(q, nq), ConstMap(v, nv), ConstMap(a, na),
                                              f));
    if (given[4]) copyOut(d.tree.tau, tau);
    copyMatrix(d.tree.dtau_dq, dtau_dq, ld);
    copyMatrix(d.tree.dtau_dv, dtau_dv, ld);
    copyMatrix(d.tree.dtau_da, dtau_da, ld);
    return ok(ws);
  });
}

cdyn_status cdyn_aba_derivatives(const cdyn_model* model, cdyn_derivative_workspace* dws,
                                 const double* q, int nq, const double* v, int nv,
                                 const double* tau, int ntau, const double* fext, int nfext,
                                 double* ddq, int nddq, double* ddq_dq, double* ddq_dv,
                                 double* Minv, int ld) {
  return computeDerivatives(model, dws, [&](cdyn_workspace* ws, cd::ClusterDerivativeData& d) {
    const cd::ClusterModel& cm = model->cm;
    const cdyn_args::ArrayArg args[] = {{q, nq},     {v, nv},     {tau, ntau}, {fext, nfext},
                                        {ddq, nddq}, {ddq_dq, 0}, {ddq_dv, 0}, {Minv, 0}};
    bool given[8];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkMatrices(ws, cdyn_args::kAbaDerivatives, args, ld, cm.treeModel.nv));
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kAbaDerivatives, args, given, &f));
    CDYN_CHECK_CXX(cd::computeABADerivatives(cm.treeModel, ws->body->data.treeData, d.tree,
                                             ConstMap(q, nq), ConstMap(v, nv), ConstMap(tau, ntau),
                                             f));
    if (given[4]) copyOut(d.tree.ddq, ddq);
    copyMatrix(d.tree.ddq_dq, ddq_dq, ld);
    copyMatrix(d.tree.ddq_dv, ddq_dv, ld);
    copyMatrix(d.tree.Minv, Minv, ld);
    return ok(ws);
  });
}

cdyn_status cdyn_minverse(const cdyn_model* model, cdyn_derivative_workspace* dws, const double* q,
                          int nq, double* Minv, int ld) {
  return computeDerivatives(model, dws, [&](cdyn_workspace* ws, cd::ClusterDerivativeData& d) {
    const cd::ClusterModel& cm = model->cm;
    const cdyn_args::ArrayArg args[] = {{q, nq}, {Minv, 0}};
    bool given[2];
    const cd::Force* none = nullptr;
    CDYN_CHECK(checkMatrices(ws, cdyn_args::kMinverse, args, ld, cm.treeModel.nv));
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kMinverse, args, given, &none));
    CDYN_CHECK_CXX(
        cd::computeMinverse(cm.treeModel, ws->body->data.treeData, d.tree, ConstMap(q, nq)));
    copyMatrix(d.tree.Minv, Minv, ld);
    return ok(ws);
  });
}

// ---- cluster-tree derivatives (independent coordinates) --------------------------------------

cdyn_status cdyn_ce_rnea_derivatives(const cdyn_model* model, cdyn_derivative_workspace* dws,
                                     const double* q, int nq, const double* v, int nv,
                                     const double* ydd, int nydd, const double* fext, int nfext,
                                     double* tau, int ntau, double* dtau_dy, double* dtau_dydot,
                                     double* H, int ld) {
  return computeDerivatives(model, dws, [&](cdyn_workspace* ws, cd::ClusterDerivativeData& d) {
    const cd::ClusterModel& cm = model->cm;
    const cdyn_args::ArrayArg args[] = {{q, nq},     {v, nv},      {ydd, nydd},     {fext, nfext},
                                        {tau, ntau}, {dtau_dy, 0}, {dtau_dydot, 0}, {H, 0}};
    bool given[8];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkMatrices(ws, cdyn_args::kCeRneaDerivatives, args, ld, cm.ny));
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kCeRneaDerivatives, args, given, &f));
    CDYN_CHECK_CXX(cd::computeCeRneaDerivatives(cm, ws->body->data, d, ConstMap(q, nq),
                                                ConstMap(v, nv), ConstMap(ydd, nydd), f));
    if (given[4]) copyOut(d.tauY, tau);
    copyMatrix(d.dtau_dy, dtau_dy, ld);
    copyMatrix(d.dtau_dydot, dtau_dydot, ld);
    copyMatrix(d.H, H, ld);
    return ok(ws);
  });
}

cdyn_status cdyn_ce_aba_derivatives(const cdyn_model* model, cdyn_derivative_workspace* dws,
                                    const double* q, int nq, const double* v, int nv,
                                    const double* tau, int ntau, const double* fext, int nfext,
                                    double* ydd, int nydd, double* dydd_dy, double* dydd_dydot,
                                    double* Hinv, int ld) {
  return computeDerivatives(model, dws, [&](cdyn_workspace* ws, cd::ClusterDerivativeData& d) {
    const cd::ClusterModel& cm = model->cm;
    const cdyn_args::ArrayArg args[] = {{q, nq},     {v, nv},      {tau, ntau},     {fext, nfext},
                                        {ydd, nydd}, {dydd_dy, 0}, {dydd_dydot, 0}, {Hinv, 0}};
    bool given[8];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkMatrices(ws, cdyn_args::kCeAbaDerivatives, args, ld, cm.ny));
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kCeAbaDerivatives, args, given, &f));
    CDYN_CHECK_CXX(cd::computeCeAbaDerivatives(cm, ws->body->data, d, ConstMap(q, nq),
                                               ConstMap(v, nv), ConstMap(tau, ntau), f));
    if (given[4]) copyOut(d.ydd, ydd);
    copyMatrix(d.dydd_dy, dydd_dy, ld);
    copyMatrix(d.dydd_dydot, dydd_dydot, ld);
    copyMatrix(d.Hinv, Hinv, ld);
    return ok(ws);
  });
}

cdyn_status cdyn_cluster_minverse(const cdyn_model* model, cdyn_derivative_workspace* dws,
                                  const double* q, int nq, double* Hinv, int ld) {
  return computeDerivatives(model, dws, [&](cdyn_workspace* ws, cd::ClusterDerivativeData& d) {
    const cd::ClusterModel& cm = model->cm;
    const cdyn_args::ArrayArg args[] = {{q, nq}, {Hinv, 0}};
    bool given[2];
    const cd::Force* none = nullptr;
    CDYN_CHECK(checkMatrices(ws, cdyn_args::kClusterMinverse, args, ld, cm.ny));
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kClusterMinverse, args, given, &none));
    CDYN_CHECK_CXX(cd::computeClusterMinverse(cm, ws->body->data, d, ConstMap(q, nq)));
    copyMatrix(d.Hinv, Hinv, ld);
    return ok(ws);
  });
}

// ---- configuration space: the inverse of cdyn_integrate --------------------------------------

cdyn_status cdyn_difference(const cdyn_model* model, cdyn_workspace* ws, const double* q0, int nq0,
                            const double* q1, int nq1, double* v, int nv) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::Data& data = ws->body->data.treeData;
    CDYN_CHECK(checkArrays(ws, model->cm, cdyn_args::kDifference, {{q0, nq0}, {q1, nq1}, {v, nv}}));
    const ConstMap a(q0, nq0), b(q1, nq1);
    for (int k = 0; k < 2; ++k) {
      const cd::Status s = cd::validateConfiguration(m, data, k == 0 ? a : b);
      if (s == cd::Status::Ok) continue;
      char msg[256];  // the C++ message names "q": say which argument
      std::snprintf(msg, sizeof msg, "%s", data.lastError.data());
      return fail(ws, fromStatus(s), "%s: %s", k == 0 ? "q0" : "q1", msg);
    }
    Map out(v, nv);
    cd::differenceInto(m, a, b, out);
    if (!out.allFinite()) return fail(ws, CDYN_ERR_NON_FINITE, "the difference is not finite");
    return ok(ws);
  });
}

}  // extern "C"
