// C API: dynamics in independent coordinates (clusterdyn.h, "Dynamics in independent
// coordinates: cluster tree, constraint embedding").
#include "capi_internal.hpp"

using namespace cdyn_internal;

extern "C" {

cdyn_status cdyn_ce_aba(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                        const double* v, int nv, const double* tau, int ntau, const double* fext,
                        int nfext, double* ydd, int nydd, double* qdd, int nqdd) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    const cdyn_args::ArrayArg args[] = {{q, nq},       {v, nv},     {tau, ntau},
                                        {fext, nfext}, {ydd, nydd}, {qdd, nqdd}};
    bool given[6];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kCeAba, args, given, &f));
    const bool hasQdd = given[5];
    CDYN_CHECK_CXX(cd::ceAba(cm, data, ConstMap(q, nq), ConstMap(v, nv), ConstMap(tau, ntau), f));
    copyOut(data.ydd, ydd);
    if (hasQdd) copyOut(data.qdd, qdd);
    std::copy_n(tau, ntau, ws->body->lastTau.data());  // cdyn_forces_after_ce_aba checks it
    ws->lastDynamics = kCeAbaIndependent;
    return ok(ws);
  });
}

cdyn_status cdyn_ce_aba_spanning_forces(const cdyn_model* model, cdyn_workspace* ws,
                                        const double* q, int nq, const double* v, int nv,
                                        const double* tau, int ntau, const double* fext, int nfext,
                                        double* ydd, int nydd, double* qdd, int nqdd) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    const cdyn_args::ArrayArg args[] = {{q, nq},       {v, nv},     {tau, ntau},
                                        {fext, nfext}, {ydd, nydd}, {qdd, nqdd}};
    bool given[6];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kCeAbaSpanningForces, args, given, &f));
    const bool hasQdd = given[5];
    CDYN_CHECK_CXX(cd::ceAbaSpanningForces(cm, data, ConstMap(q, nq), ConstMap(v, nv),
                                           ConstMap(tau, ntau), f));
    copyOut(data.ydd, ydd);
    if (hasQdd) copyOut(data.qdd, qdd);
    std::copy_n(tau, ntau, ws->body->lastTau.data());  // cdyn_forces_after_ce_aba checks it
    ws->lastDynamics = kCeAbaSpanning;
    return ok(ws);
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
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    const cdyn_args::ArrayArg args[] = {{q, nq},       {v, nv},     {ydd, nydd},
                                        {fext, nfext}, {tau, ntau}, {qdd, nqdd}};
    bool given[6];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kCeRnea, args, given, &f));
    const bool hasQdd = given[5];
    CDYN_CHECK_CXX(cd::ceRnea(cm, data, ConstMap(q, nq), ConstMap(v, nv), ConstMap(ydd, nydd), f));
    copyOut(data.tauY, tau);
    if (hasQdd) copyOut(data.qdd, qdd);
    ws->lastDynamics = kCeRnea;
    return ok(ws);
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
