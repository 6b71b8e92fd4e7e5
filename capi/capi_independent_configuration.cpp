// C API: integrate and difference on the independent coordinates y (clusterdyn.h,
// "Configuration space"; C++ independent_configuration.hpp).
#include <cmath>

#include "capi_internal.hpp"

using namespace cdyn_internal;

extern "C" {

cdyn_status cdyn_integrate_independent(const cdyn_model* model, cdyn_workspace* ws, const double* y,
                                       int nyq, const double* ydot, int ny, double dt, double* yout,
                                       int nyqout) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::Data& data = ws->body->data.treeData;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kIntegrateIndependent,
                           {{y, nyq}, {ydot, ny}, {yout, nyqout}}));
    if (!std::isfinite(dt)) return fail(ws, CDYN_ERR_NON_FINITE, "dt is not finite");
    const ConstMap ym(y, nyq), ydm(ydot, ny);
    CDYN_CHECK_CXX(cd::validateIndependentConfiguration(cm, data, ym, "y"));
    CDYN_CHECK_CXX(cd::validateVector(data, ydm, cm.ny, "ydot"));
    cd::VecX& out = ws->body->y;  // y may alias yout: integrate into the workspace first
    CDYN_CHECK_CXX(cd::integrateIndependent(cm, ym, ydm, dt, out));
    if (!out.allFinite())
      return fail(ws, CDYN_ERR_NON_FINITE, "the integrated independent coordinates are not finite");
    copyOut(out, yout);
    return ok(ws);
  });
}

cdyn_status cdyn_difference_independent(const cdyn_model* model, cdyn_workspace* ws,
                                        const double* y0, int nyq0, const double* y1, int nyq1,
                                        double* ydot, int ny) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::Data& data = ws->body->data.treeData;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kDifferenceIndependent,
                           {{y0, nyq0}, {y1, nyq1}, {ydot, ny}}));
    CDYN_CHECK_CXX(cd::validateIndependentConfiguration(cm, data, ConstMap(y0, nyq0), "y0"));
    CDYN_CHECK_CXX(cd::validateIndependentConfiguration(cm, data, ConstMap(y1, nyq1), "y1"));
    Map out(ydot, ny);
    CDYN_CHECK_CXX(cd::differenceIndependent(cm, ConstMap(y0, nyq0), ConstMap(y1, nyq1), out));
    if (!out.allFinite()) return fail(ws, CDYN_ERR_NON_FINITE, "the difference is not finite");
    return ok(ws);
  });
}

}  // extern "C"
