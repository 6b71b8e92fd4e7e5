// C API: loop closure, coordinate conversions, constraint matrices (clusterdyn.h, "Loop
// closure, coordinate conversions, constraint matrices").
#include "capi_internal.hpp"

using namespace cdyn_internal;

extern "C" {

namespace {
/// Optional warm start of the position solve: copied into ClusterData::q (checked first).
cdyn_status readGuess(cdyn_workspace* ws, const cd::ClusterModel& cm, const double* guess, int n) {
  bool present = false;
  CDYN_CHECK(checkOptionalArray(ws, guess, n, cm.treeModel.nq, "q_guess", &present));
  if (!present) return CDYN_OK;
  CDYN_CHECK_CXX(cd::setClosureWarmStart(cm, ws->body->data, ConstMap(guess, n)));
  return CDYN_OK;
}
}  // namespace

cdyn_status cdyn_solve_loop_closure(const cdyn_model* model, cdyn_workspace* ws, const double* y,
                                    int nyq, const double* q_guess, int nq_guess, double* q,
                                    int nq) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kSolveLoopClosure, {{y, nyq}, {q, nq}}));
    CDYN_CHECK_CXX(cd::validateVector(data.treeData, ConstMap(y, nyq), cm.nyq, "y"));
    CDYN_CHECK(readGuess(ws, cm, q_guess, nq_guess));
    const cd::Status s = cd::solveLoopClosure(cm, data, ConstMap(y, nyq));
    if (s != cd::Status::Ok) return fromStatus(s);
    copyOut(data.q, q);
    return ok(ws);
  });
}

cdyn_status cdyn_independent_to_spanning(const cdyn_model* model, cdyn_workspace* ws,
                                         const double* y, int nyq, const double* ydot, int ny,
                                         const double* q_guess, int nq_guess, double* q, int nq,
                                         double* v, int nv) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kIndependentToSpanning,
                           {{y, nyq}, {ydot, ny}, {q, nq}, {v, nv}}));
    // Inputs are checked before the warm start is replaced.
    CDYN_CHECK_CXX(cd::validateVector(data.treeData, ConstMap(y, nyq), cm.nyq, "y"));
    CDYN_CHECK_CXX(cd::validateVector(data.treeData, ConstMap(ydot, ny), cm.ny, "ydot"));
    CDYN_CHECK(readGuess(ws, cm, q_guess, nq_guess));
    const cd::Status s = cd::independentToSpanning(cm, data, ConstMap(y, nyq), ConstMap(ydot, ny));
    if (s != cd::Status::Ok) return fromStatus(s);
    copyOut(data.q, q);
    copyOut(data.v, v);
    return ok(ws);
  });
}

cdyn_status cdyn_spanning_to_independent(const cdyn_model* model, cdyn_workspace* ws,
                                         const double* q, int nq, const double* v, int nv,
                                         double* y, int nyq, double* ydot, int ny) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    WorkspaceBody& body = *ws->body;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kSpanningToIndependent,
                           {{q, nq}, {v, nv}, {y, nyq}, {ydot, ny}}));
    CDYN_CHECK_CXX(cd::spanningToIndependent(cm, body.data, ConstMap(q, nq), ConstMap(v, nv),
                                             body.y, body.ydot));
    copyOut(body.y, y);
    copyOut(body.ydot, ydot);
    return ok(ws);
  });
}

cdyn_status cdyn_project_to_constraints(const cdyn_model* model, cdyn_workspace* ws,
                                        const double* q, int nq, const double* v, int nv,
                                        double* qout, int nqout, double* vout, int nvout) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkArrays(ws, cm, cdyn_args::kProjectToConstraints,
                           {{q, nq}, {v, nv}, {qout, nqout}, {vout, nvout}}));
    const cd::Status s = cd::projectToConstraints(cm, data, ConstMap(q, nq), ConstMap(v, nv));
    if (s != cd::Status::Ok) return fromStatus(s);
    copyOut(data.q, qout);
    copyOut(data.v, vout);
    return ok(ws);
  });
}

cdyn_status cdyn_last_loop_closure(const cdyn_model* model, cdyn_workspace* ws, int* iterations,
                                   double* residual) {
  CDYN_CHECK(enter(model, ws));
  // A query: leaves the message of a failed solve in place.
  const cd::ClusterData& data = ws->body->data;
  if (iterations) *iterations = data.lastIterations;
  if (residual) *residual = data.lastResidual;
  return CDYN_OK;
}

cdyn_status cdyn_constraint_matrices(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                     int nq, const double* v, int nv, double* G, int ldg, double* g,
                                     int ng) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    const int n = cm.treeModel.nv;
    bool hasG = false;
    CDYN_CHECK(checkArray(ws, q, nq, cm.treeModel.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, n, "v"));
    CDYN_CHECK(checkMatrix(ws, G, ldg, n, cm.ny, "G", "ldg"));
    CDYN_CHECK(checkOptionalArray(ws, g, ng, n, "g", &hasG));
    CDYN_CHECK_CXX(cd::clusterConstraintMatrices(cm, data, ConstMap(q, nq), ConstMap(v, nv)));
    for (int j = 0; j < cm.ny; ++j) std::fill_n(G + j * ldg, n, 0.0);
    for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
      const cd::Cluster& c = cm.clusters[k];
      copyBlock(data.explicitMatrix(k), G, ldg, c.v0, c.y0);
      if (hasG) std::copy_n(data.explicitBias(k).data(), c.nv, g + c.v0);
    }
    return ok(ws);
  });
}

cdyn_status cdyn_cluster_constraint_matrices(const cdyn_model* model, cdyn_workspace* ws,
                                             int cluster, const double* q, int nq, const double* v,
                                             int nv, double* G, int ldg, double* g, int ng) {
  return compute(model, ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkCluster(ws, cm, cluster));
    const cd::Cluster& c = cm.clusters[cluster];
    bool hasG = false;
    CDYN_CHECK(checkArray(ws, q, nq, cm.treeModel.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, cm.treeModel.nv, "v"));
    CDYN_CHECK(checkMatrix(ws, G, ldg, c.nv, c.ny, "G", "ldg"));
    CDYN_CHECK(checkOptionalArray(ws, g, ng, c.nv, "g", &hasG));
    CDYN_CHECK_CXX(cd::clusterConstraintMatrices(cm, data, ConstMap(q, nq), ConstMap(v, nv)));
    copyBlock(data.explicitMatrix(cluster), G, ldg, 0, 0);
    if (hasG) copyOut(data.explicitBias(cluster), g);
    return ok(ws);
  });
}

}  // extern "C"
