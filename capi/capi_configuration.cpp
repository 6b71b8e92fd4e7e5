// C API: configuration space (clusterdyn.h, "Configuration space").
#include <cmath>

#include "capi_internal.hpp"

using namespace cdyn_internal;

extern "C" {

cdyn_status cdyn_neutral_configuration(const cdyn_model* model, cdyn_workspace* ws, double* q,
                                       int n) {
  return compute(model, ws, [&] {
    CDYN_CHECK(checkArray(ws, q, n, model->cm.treeModel.nq, "q"));
    ws->scratch.reset();
    ArenaScope scope(&ws->scratch);
    const cd::VecX q0 = cd::neutralConfiguration(model->cm.treeModel);
    copyOut(q0, q);
    return ok(ws);
  });
}

cdyn_status cdyn_integrate(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                           const double* v, int nv, double dt, double* qout, int nqout) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::Data& data = ws->body->data.treeData;
    CDYN_CHECK(
        checkArrays(ws, model->cm, cdyn_args::kIntegrate, {{q, nq}, {v, nv}, {qout, nqout}}));
    if (!std::isfinite(dt)) return fail(ws, CDYN_ERR_NON_FINITE, "dt is not finite");
    const ConstMap qm(q, nq), vm(v, nv);
    CDYN_CHECK_CXX(cd::validateConfiguration(m, data, qm));
    CDYN_CHECK_CXX(cd::validateVector(data, vm, m.nv, "v"));
    ws->scratch.reset();
    ArenaScope scope(&ws->scratch);
    const cd::VecX result = cd::integrate(m, qm, vm, dt);
    if (!result.allFinite())
      return fail(ws, CDYN_ERR_NON_FINITE, "the integrated configuration is not finite");
    copyOut(result, qout);
    return ok(ws);
  });
}

cdyn_status cdyn_normalize_configuration(const cdyn_model* model, cdyn_workspace* ws, double* q,
                                         int n) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    CDYN_CHECK(checkArray(ws, q, n, m.nq, "q"));
    Map qm(q, n);
    CDYN_CHECK_CXX(cd::validateVector(ws->body->data.treeData, qm, m.nq, "q"));
    cd::normalizeConfiguration(m, qm);
    return ok(ws);
  });
}

}  // extern "C"
