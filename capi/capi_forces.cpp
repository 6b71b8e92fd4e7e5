// C API of the constraint forces (constraint_forces.hpp): converts and checks arguments, calls
// the C++ API, maps statuses. Every entry point catches every exception. The handle internals
// come from capi_internal_forces.hpp (accessors on the structs of capi_internal.hpp).
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <new>

#include "capi_internal_forces.hpp"
#include "clusterdyn.h"
#include "clusterdyn/constraint_forces.hpp"

namespace cd = clusterdyn;
namespace cf = clusterdyn::capi_forces;
using cdyn_internal::checkModel;
using cdyn_internal::fail;
using cdyn_internal::fromStatus;
using cdyn_internal::guard;
using cdyn_internal::Phase;
using cdyn_internal::refuse;
using cdyn_internal::Sink;
using cdyn_internal::sinkOf;

namespace {
constexpr std::uint32_t kForcesTag = 0x46524443u;  // "CDRF"
constexpr std::uint32_t kDeadTag = 0xdeaddeadu;
}  // namespace

struct cdyn_forces {
  cdyn_forces(const cdyn_model* m, const cd::ClusterModel& cm) : model(m), forces(cm) {}
  std::uint32_t tag = kForcesTag;
  const cdyn_model* model;
  cd::JointForces forces;
};

namespace {

cdyn_status checkForces(const cdyn_model* m, const cdyn_forces* f) {
  if (const cdyn_status s = checkModel(m)) return s;
  if (f == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "forces is NULL");
  if (f->tag != kForcesTag)
    return refuse(CDYN_ERR_INVALID_ARGUMENT, "forces is not a valid cdyn_forces handle");
  if (f->model != m)
    return refuse(CDYN_ERR_WORKSPACE_MISMATCH, "the forces were created for another model");
  return CDYN_OK;
}

/// Model, workspace and forces handles of a call taking all three.
cdyn_status enter(const cdyn_model* m, cdyn_workspace* ws, const cdyn_forces* f) {
  if (ws == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "ws is NULL (its message cannot be written)");
  if (cf::workspaceTag(ws) != cf::kWorkspaceTag)
    return refuse(CDYN_ERR_INVALID_ARGUMENT, "ws is not a valid cdyn_workspace handle");
  if (m == nullptr) return fail(ws, CDYN_ERR_NULL_POINTER, "model is NULL");
  if (cf::modelTag(m) != cf::kModelTag)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "model is not a valid cdyn_model handle");
  if (cf::workspaceModel(ws) != m)
    return fail(ws, CDYN_ERR_WORKSPACE_MISMATCH, "the workspace was created for another model");
  if (f == nullptr) return fail(ws, CDYN_ERR_NULL_POINTER, "forces is NULL");
  if (f->tag != kForcesTag)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "forces is not a valid cdyn_forces handle");
  if (f->model != m)
    return fail(ws, CDYN_ERR_WORKSPACE_MISMATCH, "the forces were created for another model");
  return CDYN_OK;
}

void writeWrench(const cd::Force& w, double* out) {
  for (int r = 0; r < 6; ++r) out[r] = w[r];
}

}  // namespace

extern "C" {

cdyn_status cdyn_forces_create(const cdyn_model* model, cdyn_forces** forces) {
  if (forces == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_forces_create: forces is NULL");
  *forces = nullptr;
  if (const cdyn_status s = checkModel(model)) return s;
  return guard(Sink{}, Phase::Call, [&] {
    *forces = new cdyn_forces(model, cf::clusterModel(model));
    cf::liveHandles(model).fetch_add(1);  // cdyn_model_free refuses while it exists
    return CDYN_OK;
  });
}

cdyn_status cdyn_forces_free(cdyn_forces* forces) {
  if (forces == nullptr) return CDYN_OK;
  if (forces->tag != kForcesTag)
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_forces_free: forces is not a valid cdyn_forces handle (freed twice?)");
  cf::liveHandles(forces->model).fetch_sub(1);
  forces->tag = kDeadTag;
  delete forces;
  return CDYN_OK;
}

cdyn_status cdyn_forces_after_ce_aba(const cdyn_model* model, cdyn_workspace* ws,
                                     cdyn_forces* forces, const double* tau, int ntau,
                                     int spanning) {
  if (const cdyn_status s = enter(model, ws, forces)) return s;
  return guard(sinkOf(ws), Phase::Call, [&] {
    const cd::ClusterModel& cm = cf::clusterModel(model);
    if (spanning != 0 && spanning != 1)
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "spanning must be 0 or 1, got %d", spanning);
    const int expected = spanning ? cm.treeModel.nv : cm.ny;
    // tau is optional: (NULL, 0) takes the efforts of the CE-ABA call itself.
    const bool given = !(tau == nullptr && ntau == 0);
    if (given && ntau != expected)
      return fail(ws, CDYN_ERR_INVALID_SIZE, "tau has %d elements, expected %d (or NULL, 0)", ntau,
                  expected);
    if (given && tau == nullptr) return fail(ws, CDYN_ERR_NULL_POINTER, "tau is NULL");
    if (given)
      for (int i = 0; i < ntau; ++i)
        if (!std::isfinite(tau[i]))
          return fail(ws, CDYN_ERR_NON_FINITE, "tau[%d] is not finite (%g)", i, tau[i]);
    if (cf::lastDynamics(ws) != (spanning ? cf::kCeAbaSpanning : cf::kCeAbaIndependent))
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                  spanning ? "the workspace's last call is not a successful "
                             "cdyn_ce_aba_spanning_forces (needed with spanning = 1)"
                           : "the workspace's last call is not a successful cdyn_ce_aba or "
                             "cdyn_ce_aba_independent (needed with spanning = 0)");
    // The forces balance the efforts CE-ABA was given: any other tau gives forces of no state.
    const cd::VecX& last = cf::lastTau(ws);
    if (given)
      for (int i = 0; i < ntau; ++i)
        if (tau[i] != last[i])
          return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                      "tau[%d] = %.17g differs from the tau[%d] = %.17g given to the workspace's "
                      "last CE-ABA call; pass the same efforts, or (NULL, 0) to use them",
                      i, tau[i], i, last[i]);
    const Eigen::Map<const cd::VecX> t(given ? tau : last.data(), expected);
    cd::ClusterData& data = cf::clusterData(ws);
    const cd::Status st = cd::ceAbaConstraintForces(
        cm, data, forces->forces, t,
        spanning ? cd::GeneralizedForceLayout::Spanning : cd::GeneralizedForceLayout::Independent);
    if (st != cd::Status::Ok) return fromStatus(st);
    // World-frame wrenches now, from this call's poses (later calls move the workspace's).
    return fromStatus(cd::jointForcesInWorld(cm, data, forces->forces));
  });
}

cdyn_status cdyn_forces_after_ce_rnea(const cdyn_model* model, cdyn_workspace* ws,
                                      cdyn_forces* forces) {
  if (const cdyn_status s = enter(model, ws, forces)) return s;
  return guard(sinkOf(ws), Phase::Call, [&] {
    if (cf::lastDynamics(ws) != cf::kCeRnea)
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                  "the workspace's last call is not a successful cdyn_ce_rnea");
    const cd::ClusterModel& cm = cf::clusterModel(model);
    cd::ClusterData& data = cf::clusterData(ws);
    const cd::Status st = cd::ceRneaConstraintForces(cm, data, forces->forces);
    if (st != cd::Status::Ok) return fromStatus(st);
    return fromStatus(cd::jointForcesInWorld(cm, data, forces->forces));
  });
}

cdyn_status cdyn_forces_joint_wrenches(const cdyn_model* model, cdyn_workspace* ws,
                                       const cdyn_forces* forces, int frame, double* W, int ldw) {
  if (const cdyn_status s = enter(model, ws, forces)) return s;
  return guard(sinkOf(ws), Phase::Call, [&] {
    const cd::ClusterModel& cm = cf::clusterModel(model);
    cd::ClusterData& data = cf::clusterData(ws);
    if (frame != CDYN_FORCE_FRAME_BODY && frame != CDYN_FORCE_FRAME_WORLD)
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                  "frame must be CDYN_FORCE_FRAME_BODY or CDYN_FORCE_FRAME_WORLD, got %d", frame);
    if (ldw < 6) return fail(ws, CDYN_ERR_INVALID_SIZE, "ldw is %d, expected >= 6", ldw);
    if (W == nullptr && cm.treeModel.nbodies > 0)
      return fail(ws, CDYN_ERR_NULL_POINTER, "W is NULL");
    for (int b = 0; b < cm.treeModel.nbodies; ++b) {
      const cd::Force& f = forces->forces.joint[b];
      writeWrench(frame == CDYN_FORCE_FRAME_BODY ? f : forces->forces.jointWorld[b],
                  W + static_cast<long>(b) * ldw);
    }
    data.treeData.lastError[0] = '\0';
    return CDYN_OK;
  });
}

cdyn_status cdyn_forces_loop_wrenches(const cdyn_model* model, const cdyn_forces* forces, double* W,
                                      int ldw) {
  if (const cdyn_status s = checkForces(model, forces)) return s;
  const cd::ClusterModel& cm = cf::clusterModel(model);
  if (ldw < 6) return refuse(CDYN_ERR_INVALID_SIZE, "cdyn_forces_loop_wrenches: ldw must be >= 6");
  if (W == nullptr && !cm.loops.empty())
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_forces_loop_wrenches: W is NULL");
  for (size_t l = 0; l < cm.loops.size(); ++l)
    writeWrench(forces->forces.loopWrench[l], W + static_cast<long>(l) * ldw);
  return CDYN_OK;
}

cdyn_status cdyn_forces_loop_rows(const cdyn_model* model, const cdyn_forces* forces, int loop,
                                  double* rows, int nrows) {
  if (const cdyn_status s = checkForces(model, forces)) return s;
  const cd::ClusterModel& cm = cf::clusterModel(model);
  if (loop < 0 || loop >= static_cast<int>(cm.loops.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_forces_loop_rows: loop is out of range");
  if (nrows != cm.loops[loop].rows())
    return refuse(
        CDYN_ERR_INVALID_SIZE,
        "cdyn_forces_loop_rows: nrows is not the loop's row count (cdyn_forces_loop_info)");
  if (rows == nullptr && nrows > 0)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_forces_loop_rows: rows is NULL");
  const cd::JointForces& F = forces->forces;
  for (int j = 0; j < nrows; ++j) rows[j] = F.loopRowForce[F.loopRowStart[loop] + j];
  return CDYN_OK;
}

cdyn_status cdyn_forces_loop_info(const cdyn_model* model, int loop, const char** name,
                                  int* predecessor_body, int* successor_body, int* nrows,
                                  double* frame_pose) {
  if (const cdyn_status s = checkModel(model)) return s;
  const cd::ClusterModel& cm = cf::clusterModel(model);
  if (loop < 0 || loop >= static_cast<int>(cm.loops.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_forces_loop_info: loop is out of range");
  const cd::LoopJoint& lj = cm.loops[loop];
  if (name) *name = lj.name.c_str();
  if (predecessor_body) *predecessor_body = lj.predecessorBody;
  if (successor_body) *successor_body = lj.successorBody;
  if (nrows) *nrows = lj.rows();
  if (frame_pose) {
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 3; ++r) frame_pose[r + 3 * c] = lj.predecessorPlacement.R(r, c);
    for (int r = 0; r < 3; ++r) frame_pose[9 + r] = lj.predecessorPlacement.p[r];
  }
  return CDYN_OK;
}

cdyn_status cdyn_forces_coupling_info(const cdyn_model* model, int relation, const char** name,
                                      int* nterms) {
  if (const cdyn_status s = checkModel(model)) return s;
  const cd::ClusterModel& cm = cf::clusterModel(model);
  if (relation < 0 || relation >= static_cast<int>(cm.relations.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "relation is out of range (0 <= relation < nrelations)");
  if (name) *name = cm.relations[relation].name.c_str();
  if (nterms) *nterms = static_cast<int>(cm.relations[relation].terms.size());
  return CDYN_OK;
}

cdyn_status cdyn_forces_coupling_term(const cdyn_model* model, int relation, int term,
                                      int* velocity_index, double* coefficient) {
  if (const cdyn_status s = checkModel(model)) return s;
  const cd::ClusterModel& cm = cf::clusterModel(model);
  if (relation < 0 || relation >= static_cast<int>(cm.relations.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "relation is out of range (0 <= relation < nrelations)");
  const auto& terms = cm.relations[relation].terms;
  if (term < 0 || term >= static_cast<int>(terms.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_forces_coupling_term: term is out of range");
  if (velocity_index) *velocity_index = terms[term].first;
  if (coefficient) *coefficient = terms[term].second;
  return CDYN_OK;
}

cdyn_status cdyn_forces_coupling(const cdyn_model* model, const cdyn_forces* forces, int relation,
                                 double* multiplier, double* joint_forces, int nterms) {
  if (const cdyn_status s = checkForces(model, forces)) return s;
  const cd::ClusterModel& cm = cf::clusterModel(model);
  if (relation < 0 || relation >= static_cast<int>(cm.relations.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "relation is out of range (0 <= relation < nrelations)");
  if (nterms != static_cast<int>(cm.relations[relation].terms.size()))
    return refuse(CDYN_ERR_INVALID_SIZE,
                  "cdyn_forces_coupling: nterms is not the relation's term count "
                  "(cdyn_forces_coupling_info)");
  if (joint_forces == nullptr && nterms > 0)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_forces_coupling: joint_forces is NULL");
  const cd::JointForces& F = forces->forces;
  if (multiplier) *multiplier = F.relationMultiplier[relation];
  for (int t = 0; t < nterms; ++t)
    joint_forces[t] = F.relationJointForce[F.relationTermStart[relation] + t];
  return CDYN_OK;
}

}  // extern "C"
