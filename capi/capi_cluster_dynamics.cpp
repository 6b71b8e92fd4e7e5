// C API: dynamics in independent coordinates (clusterdyn.h, "Dynamics in independent
// coordinates: cluster tree, constraint embedding").
#include "capi_internal.hpp"

using namespace cdyn_internal;

namespace {

/// The spanning-state calls (q, v, an input, fext) -> (an output, qdd) of this section:
/// cdyn_ce_aba (input tau in y), cdyn_ce_aba_spanning_forces (tau in spanning coordinates),
/// cdyn_ce_rnea (input ydd). The six arrays are checked against the description spec, then
/// call(cm, data, f) runs the C++ algorithm with the external forces f; the output is
/// data.*result (ydd or tauY), qdd is data.qdd when given. keptTau: the input efforts that
/// cdyn_forces_after_ce_aba reads (CE-ABA), or nullptr (CE-RNEA).
template <typename Call>
cdyn_status spanningCall(const cdyn_model* model, cdyn_workspace* ws,
                         const cdyn_args::ArgSpec (&spec)[6], const cdyn_args::ArrayArg (&args)[6],
                         cd::VecX cd::ClusterData::*result, double* out, double* qdd,
                         const double* keptTau, LastDynamics dynamics, Call call) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    bool given[6];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkArrays(ws, cm, spec, args, given, &f));
    CDYN_CHECK_CXX(call(cm, data, f));
    copyOut(data.*result, out);
    if (given[5]) copyOut(data.qdd, qdd);
    if (keptTau) std::copy_n(keptTau, args[2].n, ws->body->lastTau.data());
    ws->lastDynamics = dynamics;
    return ok(ws);
  });
}

}  // namespace

extern "C" {

cdyn_status cdyn_ce_aba(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                        const double* v, int nv, const double* tau, int ntau, const double* fext,
                        int nfext, double* ydd, int nydd, double* qdd, int nqdd) {
  return spanningCall(model, ws, cdyn_args::kCeAba,
                      {{q, nq}, {v, nv}, {tau, ntau}, {fext, nfext}, {ydd, nydd}, {qdd, nqdd}},
                      &cd::ClusterData::ydd, ydd, qdd, tau, kCeAbaIndependent,
                      [&](const cd::ClusterModel& cm, cd::ClusterData& data, const cd::Force* f) {
                        return cd::ceAba(cm, data, ConstMap(q, nq), ConstMap(v, nv),
                                         ConstMap(tau, ntau), f);
                      });
}

cdyn_status cdyn_ce_aba_spanning_forces(const cdyn_model* model, cdyn_workspace* ws,
                                        const double* q, int nq, const double* v, int nv,
                                        const double* tau, int ntau, const double* fext, int nfext,
                                        double* ydd, int nydd, double* qdd, int nqdd) {
  return spanningCall(model, ws, cdyn_args::kCeAbaSpanningForces,
                      {{q, nq}, {v, nv}, {tau, ntau}, {fext, nfext}, {ydd, nydd}, {qdd, nqdd}},
                      &cd::ClusterData::ydd, ydd, qdd, tau, kCeAbaSpanning,
                      [&](const cd::ClusterModel& cm, cd::ClusterData& data, const cd::Force* f) {
                        return cd::ceAbaSpanningForces(cm, data, ConstMap(q, nq), ConstMap(v, nv),
                                                       ConstMap(tau, ntau), f);
                      });
}

cdyn_status cdyn_ce_aba_independent(const cdyn_model* model, cdyn_workspace* ws, const double* y,
                                    int nyq, const double* ydot, int ny, const double* tau,
                                    int ntau, const double* fext, int nfext, double* ydd, int nydd,
                                    double* q, int nq, double* v, int nv, double* qdd, int nqdd) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    const cdyn_args::ArrayArg args[] = {{y, nyq},    {ydot, ny}, {tau, ntau}, {fext, nfext},
                                        {ydd, nydd}, {q, nq},    {v, nv},     {qdd, nqdd}};
    bool given[8];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kCeAbaIndependent, args, given, &f));
    const bool hasQ = given[5], hasV = given[6], hasQdd = given[7];
    const cd::Status s = cd::ceAbaIndependent(cm, data, ConstMap(y, nyq), ConstMap(ydot, ny),
                                              ConstMap(tau, ntau), f);
    if (s != cd::Status::Ok) return fromStatus(s);
    copyOut(data.ydd, ydd);
    if (hasQ) copyOut(data.q, q);
    if (hasV) copyOut(data.v, v);
    if (hasQdd) copyOut(data.qdd, qdd);
    std::copy_n(tau, ntau, ws->body->lastTau.data());  // cdyn_forces_after_ce_aba checks it
    ws->lastDynamics = kCeAbaIndependent;
    return ok(ws);
  });
}

cdyn_status cdyn_ce_rnea(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                         const double* v, int nv, const double* ydd, int nydd, const double* fext,
                         int nfext, double* tau, int ntau, double* qdd, int nqdd) {
  return spanningCall(model, ws, cdyn_args::kCeRnea,
                      {{q, nq}, {v, nv}, {ydd, nydd}, {fext, nfext}, {tau, ntau}, {qdd, nqdd}},
                      &cd::ClusterData::tauY, tau, qdd, nullptr, kCeRnea,
                      [&](const cd::ClusterModel& cm, cd::ClusterData& data, const cd::Force* f) {
                        return cd::ceRnea(cm, data, ConstMap(q, nq), ConstMap(v, nv),
                                          ConstMap(ydd, nydd), f);
                      });
}

cdyn_status cdyn_cluster_mass_matrix(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                     int nq, double* H, int ldh) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    const cdyn_args::ArrayArg args[] = {{q, nq}, {H, 0}};
    bool given[2];
    const cd::Force* none = nullptr;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kClusterMassMatrix, args, given, &none));
    CDYN_CHECK(checkMatrix(ws, H, ldh, cm.ny, cm.ny, "H", "ldh"));
    CDYN_CHECK_CXX(cd::clusterMassMatrix(cm, data, ConstMap(q, nq)));
    for (int j = 0; j < cm.ny; ++j) std::copy_n(data.H.col(j).data(), cm.ny, H + j * ldh);
    return ok(ws);
  });
}

cdyn_status cdyn_cluster_bias(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                              const double* v, int nv, double* C, int nc) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kClusterBias, {{q, nq}, {v, nv}, {C, nc}}));
    CDYN_CHECK_CXX(cd::clusterBias(cm, data, ConstMap(q, nq), ConstMap(v, nv)));
    copyOut(data.C, C);
    return ok(ws);
  });
}

}  // extern "C"
