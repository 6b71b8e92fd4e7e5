// C API: dynamics on the spanning tree (clusterdyn.h, "Dynamics on the spanning tree").
#include "capi_internal.hpp"

using namespace cdyn_internal;

extern "C" {

cdyn_status cdyn_rnea(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                      const double* v, int nv, const double* a, int na, const double* fext,
                      int nfext, double* tau, int ntau) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::Data& data = ws->body->data.treeData;
    const cdyn_args::ArrayArg args[] = {{q, nq}, {v, nv}, {a, na}, {fext, nfext}, {tau, ntau}};
    bool given[5];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkArrays(ws, model->cm, cdyn_args::kRnea, args, given, &f));
    CDYN_CHECK_CXX(cd::rnea(m, data, ConstMap(q, nq), ConstMap(v, nv), ConstMap(a, na), f));
    copyOut(data.tau, tau);
    return ok(ws);
  });
}

cdyn_status cdyn_aba(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                     const double* v, int nv, const double* tau, int ntau, const double* fext,
                     int nfext, double* ddq, int nddq) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::Data& data = ws->body->data.treeData;
    const cdyn_args::ArrayArg args[] = {{q, nq}, {v, nv}, {tau, ntau}, {fext, nfext}, {ddq, nddq}};
    bool given[5];
    const cd::Force* f = nullptr;
    CDYN_CHECK(checkArrays(ws, model->cm, cdyn_args::kAba, args, given, &f));
    CDYN_CHECK_CXX(cd::aba(m, data, ConstMap(q, nq), ConstMap(v, nv), ConstMap(tau, ntau), f));
    copyOut(data.ddq, ddq);
    return ok(ws);
  });
}

cdyn_status cdyn_crba(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                      double* M, int ldm) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::Data& data = ws->body->data.treeData;
    CDYN_CHECK(checkArrays(ws, model->cm, cdyn_args::kCrba, {{q, nq}, {M, 0}}));
    if (ldm < std::max(1, m.nv))
      return fail(ws, CDYN_ERR_INVALID_SIZE, "ldm is %d, expected >= %d", ldm, std::max(1, m.nv));
    if (m.nv > 0) CDYN_CHECK(checkPointer(ws, M, "M"));
    CDYN_CHECK_CXX(cd::crba(m, data, ConstMap(q, nq)));
    for (int j = 0; j < m.nv; ++j) std::copy_n(data.M.col(j).data(), m.nv, M + j * ldm);
    return ok(ws);
  });
}

cdyn_status cdyn_nonlinear_effects(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                   int nq, const double* v, int nv, double* nle, int nnle) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::Data& data = ws->body->data.treeData;
    CDYN_CHECK(
        checkArrays(ws, model->cm, cdyn_args::kNonlinearEffects, {{q, nq}, {v, nv}, {nle, nnle}}));
    CDYN_CHECK_CXX(cd::nonLinearEffects(m, data, ConstMap(q, nq), ConstMap(v, nv)));
    copyOut(data.nle, nle);
    return ok(ws);
  });
}

cdyn_status cdyn_generalized_gravity(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                     int nq, double* g, int ng) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::Data& data = ws->body->data.treeData;
    CDYN_CHECK(checkArrays(ws, model->cm, cdyn_args::kGeneralizedGravity, {{q, nq}, {g, ng}}));
    CDYN_CHECK_CXX(cd::generalizedGravity(m, data, ConstMap(q, nq)));
    copyOut(data.nle, g);
    return ok(ws);
  });
}

cdyn_status cdyn_kinetic_energy(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                int nq, const double* v, int nv, double* energy) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::Data& data = ws->body->data.treeData;
    CDYN_CHECK(checkArrays(ws, model->cm, cdyn_args::kKineticEnergy, {{q, nq}, {v, nv}}));
    CDYN_CHECK(checkPointer(ws, energy, "energy"));
    const ConstMap qm(q, nq), vm(v, nv);
    CDYN_CHECK_CXX(cd::computeKineticEnergy(m, data, qm, vm));
    *energy = data.kineticEnergy;
    return ok(ws);
  });
}

cdyn_status cdyn_potential_energy(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                  int nq, double* energy) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::Data& data = ws->body->data.treeData;
    CDYN_CHECK(checkArrays(ws, model->cm, cdyn_args::kPotentialEnergy, {{q, nq}}));
    CDYN_CHECK(checkPointer(ws, energy, "energy"));
    const ConstMap qm(q, nq);
    CDYN_CHECK_CXX(cd::computePotentialEnergy(m, data, qm));
    *energy = data.potentialEnergy;
    return ok(ws);
  });
}

}  // extern "C"
