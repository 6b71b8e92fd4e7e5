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
#include "capi_internal.hpp"
#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/constraints.hpp"

namespace cd = clusterdyn;

static_assert(CDYN_ERR_NOT_CONVERGED == static_cast<int>(cd::Status::NotConverged), "");
static_assert(CDYN_CONSTRAINT_POINT == static_cast<int>(cd::ConstraintType::Point) &&
                  CDYN_CONSTRAINT_WELD == static_cast<int>(cd::ConstraintType::Weld) &&
                  CDYN_CONSTRAINT_REVOLUTE == static_cast<int>(cd::ConstraintType::Revolute) &&
                  CDYN_CONSTRAINT_PLANAR == static_cast<int>(cd::ConstraintType::Planar) &&
                  CDYN_CONSTRAINT_PRISMATIC == static_cast<int>(cd::ConstraintType::Prismatic),
              "cdyn_constraint_type mirrors clusterdyn::ConstraintType");

namespace {

constexpr std::uint32_t kSetTag = 0x53434443u;        // "CDCS"
constexpr std::uint32_t kWorkspaceTag = 0x57434443u;  // "CDCW"
constexpr std::uint32_t kDeadTag = 0xdeaddeadu;

}  // namespace

struct cdyn_constraint_set {
  explicit cdyn_constraint_set(const cdyn_model* m) : model(m), set(m->cm) {}
  std::uint32_t tag = kSetTag;
  const cdyn_model* model;
  cd::ConstraintSet set;
  std::array<char, 256> lastError{};
  mutable std::atomic<int> workspaces{0};
};

struct cdyn_constraint_workspace {
  explicit cdyn_constraint_workspace(const cdyn_constraint_set* s)
      : set(s),
        data(s->model->cm),
        cdata(s->model->cm, s->set),
        fext(s->model->cm.treeModel.nbodies, cd::Force::Zero()),
        vzero(cd::VecX::Zero(s->model->cm.treeModel.nv)),
        gather(gatherSize(s->model->cm, s->set.rows())) {}
  /// Doubles of one state of a batched proximal solve: q v tau fext ydd qdd lambda.
  static std::size_t gatherSize(const cd::ClusterModel& cm, int m) {
    const auto z = [](int n) { return static_cast<std::size_t>(n); };
    return z(cm.treeModel.nq) + 2 * z(cm.treeModel.nv) + 2 * z(cm.ny) +
           6 * z(cm.treeModel.nbodies) + z(m);
  }
  std::uint32_t tag = kWorkspaceTag;
  const cdyn_constraint_set* set;
  cd::ClusterData data;  ///< data.treeData.lastError: the message of the last failure
  cd::ConstraintData cdata;
  std::vector<cd::Force> fext;  ///< aligned copy of the caller's external forces
  cd::VecX vzero;               ///< zero spanning velocity (v == NULL)
  std::vector<double> gather;   ///< one state's arrays in column-major batches (capi_batch.cpp)
};

namespace {

// ---- errors --------------------------------------------------------------------------------

cdyn_status vfail(std::array<char, 256>& buf, cdyn_status s, const char* fmt, va_list args) {
  std::vsnprintf(buf.data(), buf.size(), fmt, args);
  return s;
}

__attribute__((format(printf, 3, 4))) cdyn_status setFail(cdyn_constraint_set* set, cdyn_status s,
                                                          const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vfail(set->lastError, s, fmt, args);
  va_end(args);
  return s;
}

__attribute__((format(printf, 3, 4))) cdyn_status wsFail(cdyn_constraint_workspace* ws,
                                                         cdyn_status s, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vfail(ws->data.treeData.lastError, s, fmt, args);
  va_end(args);
  return s;
}

cdyn_status fromStatus(cd::Status s) { return static_cast<cdyn_status>(static_cast<int>(s)); }

/// A live model handle (capi_internal.hpp).
bool validModel(const cdyn_model* m) { return m->tag == cdyn_internal::kModelTag; }
bool validSet(const cdyn_constraint_set* s) { return s->tag == kSetTag; }
bool validWorkspace(const cdyn_constraint_workspace* w) { return w->tag == kWorkspaceTag; }

/// Runs f, turning every exception into a status; the message goes to buf (when given).
template <typename F>
cdyn_status guarded(std::array<char, 256>* buf, F&& f) noexcept {
  auto say = [&](cdyn_status s, const char* what) {
    if (buf) std::snprintf(buf->data(), buf->size(), "%s", what);
    return s;
  };
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return say(CDYN_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const cd::ModelError& e) {
    return say(CDYN_ERR_INVALID_ARGUMENT, e.what());
  } catch (const std::exception& e) {
    return say(CDYN_ERR_INTERNAL, e.what());
  } catch (...) {
    return say(CDYN_ERR_INTERNAL, "internal error: unknown exception");
  }
}

cdyn_status toFrame(int rf, cd::ReferenceFrame* out) {
  if (rf == CDYN_LOCAL)
    *out = cd::ReferenceFrame::Local;
  else if (rf == CDYN_LOCAL_WORLD_ALIGNED)
    *out = cd::ReferenceFrame::LocalWorldAligned;
  else
    return CDYN_ERR_INVALID_ARGUMENT;
  return CDYN_OK;
}

/// Entry check of a set function that modifies the set.
cdyn_status enterSet(cdyn_constraint_set* set) {
  if (set == nullptr) return CDYN_ERR_NULL_POINTER;
  if (!validSet(set)) return CDYN_ERR_INVALID_ARGUMENT;
  set->lastError[0] = '\0';
  if (set->workspaces.load() != 0)
    return setFail(set, CDYN_ERR_INVALID_ARGUMENT,
                   "the constraint set has %d workspace(s): add constraints before creating "
                   "constraint workspaces",
                   set->workspaces.load());
  return CDYN_OK;
}

/// Reads a 4 x 4 column-major homogeneous matrix (NULL: identity).
cdyn_status readPose(cdyn_constraint_set* set, const double* T, const char* name,
                     cd::Transform* out) {
  *out = cd::Transform();
  if (T == nullptr) return CDYN_OK;
  for (int i = 0; i < 16; ++i)
    if (!std::isfinite(T[i]))
      return setFail(set, CDYN_ERR_NON_FINITE, "%s[%d] is not finite", name, i);
  if (T[3] != 0.0 || T[7] != 0.0 || T[11] != 0.0 || T[15] != 1.0)
    return setFail(set, CDYN_ERR_INVALID_ARGUMENT,
                   "%s is not homogeneous: its last row must be (0, 0, 0, 1)", name);
  cd::Mat3 R;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) R(i, j) = T[i + 4 * j];
  *out = cd::Transform(R, cd::Vec3(T[12], T[13], T[14]));
  return CDYN_OK;
}

/// Entry check of a compute function; clears the message.
cdyn_status enter(const cdyn_constraint_set* set, cdyn_constraint_workspace* ws) {
  if (ws == nullptr) return CDYN_ERR_NULL_POINTER;
  if (!validWorkspace(ws)) return CDYN_ERR_INVALID_ARGUMENT;
  if (set == nullptr) return wsFail(ws, CDYN_ERR_NULL_POINTER, "set is NULL");
  if (!validSet(set))
    return wsFail(ws, CDYN_ERR_INVALID_ARGUMENT, "set is not a valid cdyn_constraint_set handle");
  if (ws->set != set)
    return wsFail(ws, CDYN_ERR_WORKSPACE_MISMATCH,
                  "the constraint workspace was created for another constraint set");
  ws->data.treeData.lastError[0] = '\0';
  return CDYN_OK;
}

cdyn_status need(cdyn_constraint_workspace* ws, const void* p, const char* name) {
  return p ? CDYN_OK : wsFail(ws, CDYN_ERR_NULL_POINTER, "%s is NULL", name);
}

/// The explicit row count of a compute call (the set's m).
cdyn_status checkRows(cdyn_constraint_workspace* ws, int m, const char* name) {
  const int rows = ws->set->set.rows();
  if (m != rows)
    return wsFail(ws, CDYN_ERR_INVALID_SIZE, "%s is %d, expected the set's row count %d", name, m,
                  rows);
  return CDYN_OK;
}

cdyn_status checkLd(cdyn_constraint_workspace* ws, int ld, const char* name) {
  const int need = std::max(1, ws->set->set.rows());
  if (ld < need)
    return wsFail(ws, CDYN_ERR_INVALID_SIZE, "%s is %d, expected >= %d", name, ld, need);
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
  if (cdyn_status s = need(ws, q, "q")) return s;
  if (cdyn_status s = need(ws, v, "v")) return s;
  if (cdyn_status s = need(ws, tau, "tau")) return s;
  if (cdyn_status s = need(ws, ydd, "ydd")) return s;
  if (cdyn_status s = checkRows(ws, m, "m")) return s;
  if (m > 0)
    if (cdyn_status s = need(ws, lambda, "lambda")) return s;
  *warm = false;
  if (settings) {
    ps->mu = settings->mu;
    ps->tolerance = settings->tolerance;
    ps->maxIterations = settings->max_iterations;
    *warm = settings->warm_start != 0;
  }
  if (*warm && which == Solver::Dense)
    return wsFail(ws, CDYN_ERR_INVALID_ARGUMENT,
                  "warm_start is not supported by the dense baseline (set it to 0)");
  return CDYN_OK;
}

/// The three proximal solves: checks, the C++ call, outputs (also on NotConverged).
cdyn_status solve(Solver which, const cdyn_constraint_set* set, cdyn_constraint_workspace* ws,
                  const double* q, const double* v, const double* tau, const double* fext,
                  const cdyn_proximal_settings* settings, double* ydd, double* qdd, double* lambda,
                  int m, cdyn_proximal_result* result) {
  if (cdyn_status s = enter(set, ws)) return s;
  return guarded(&ws->data.treeData.lastError, [&]() -> cdyn_status {
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
  if (settings == nullptr) return CDYN_ERR_NULL_POINTER;
  const cd::ProximalSettings d;
  settings->mu = d.mu;
  settings->tolerance = d.tolerance;
  settings->max_iterations = d.maxIterations;
  settings->warm_start = 0;
  return CDYN_OK;
}

// ---- constraint sets -----------------------------------------------------------------------

cdyn_status cdyn_constraint_set_create(const cdyn_model* model, cdyn_constraint_set** set) {
  if (set == nullptr) return CDYN_ERR_NULL_POINTER;
  *set = nullptr;
  if (model == nullptr) return CDYN_ERR_NULL_POINTER;
  if (!validModel(model)) return CDYN_ERR_INVALID_ARGUMENT;
  return guarded(nullptr, [&] {
    *set = new cdyn_constraint_set(model);
    model->workspaces.fetch_add(1);
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_set_create_cut_loops(const cdyn_model* model,
                                                 cdyn_constraint_set** set) {
  if (set == nullptr) return CDYN_ERR_NULL_POINTER;
  *set = nullptr;
  if (model == nullptr) return CDYN_ERR_NULL_POINTER;
  if (!validModel(model)) return CDYN_ERR_INVALID_ARGUMENT;
  return guarded(nullptr, [&] {
    std::unique_ptr<cdyn_constraint_set> s(new cdyn_constraint_set(model));
    s->set = cd::cutLoopConstraints(model->cm);
    *set = s.release();
    model->workspaces.fetch_add(1);
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_set_free(cdyn_constraint_set* set) {
  if (set == nullptr) return CDYN_OK;
  if (!validSet(set)) return CDYN_ERR_INVALID_ARGUMENT;
  if (set->workspaces.load() != 0) return CDYN_ERR_INVALID_ARGUMENT;
  set->model->workspaces.fetch_sub(1);
  set->tag = kDeadTag;
  delete set;
  return CDYN_OK;
}

const char* cdyn_constraint_set_last_error(const cdyn_constraint_set* set) {
  if (set == nullptr) return "set is NULL";
  if (!validSet(set)) return "not a valid cdyn_constraint_set handle";
  return set->lastError.data();
}

cdyn_status cdyn_constraint_set_add(cdyn_constraint_set* set, const char* name, int type, int body1,
                                    const double placement1[16], int body2,
                                    const double placement2[16], int rf, const double gains[2],
                                    int* index) {
  if (cdyn_status s = enterSet(set)) return s;
  if (name == nullptr) return setFail(set, CDYN_ERR_NULL_POINTER, "name is NULL");
  if (type < CDYN_CONSTRAINT_POINT || type > CDYN_CONSTRAINT_PRISMATIC)
    return setFail(set, CDYN_ERR_INVALID_ARGUMENT,
                   "constraint '%s': type %d is not a cdyn_constraint_type (0..4)", name, type);
  const int nb = set->model->cm.treeModel.nbodies;
  if (body1 < 0 || body1 >= nb)
    return setFail(set, CDYN_ERR_INVALID_INDEX, "constraint '%s': body1 = %d out of range [0, %d)",
                   name, body1, nb);
  if (body2 < -1 || body2 >= nb)
    return setFail(set, CDYN_ERR_INVALID_INDEX,
                   "constraint '%s': body2 = %d is neither -1 (world) nor in [0, %d)", name, body2,
                   nb);
  cd::RigidConstraint c;
  if (toFrame(rf, &c.frame) != CDYN_OK)
    return setFail(set, CDYN_ERR_INVALID_ARGUMENT,
                   "constraint '%s': reference frame %d is not CDYN_LOCAL or "
                   "CDYN_LOCAL_WORLD_ALIGNED",
                   name, rf);
  if (cdyn_status s = readPose(set, placement1, "placement1", &c.placement1)) return s;
  if (cdyn_status s = readPose(set, placement2, "placement2", &c.placement2)) return s;
  if (gains) {
    if (!std::isfinite(gains[0]) || !std::isfinite(gains[1]))
      return setFail(set, CDYN_ERR_NON_FINITE, "constraint '%s': gains are not finite", name);
    c.kp = gains[0];
    c.kd = gains[1];
  }
  c.type = static_cast<cd::ConstraintType>(type);
  c.body1 = body1;
  c.body2 = body2;
  return guarded(&set->lastError, [&] {
    c.name = name;
    const int i = set->set.add(c);
    if (index) *index = i;
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_set_add_contact(cdyn_constraint_set* set, const char* frame_name,
                                            int type, int rf, const char* name, int* index) {
  if (cdyn_status s = enterSet(set)) return s;
  if (frame_name == nullptr) return setFail(set, CDYN_ERR_NULL_POINTER, "frame_name is NULL");
  if (type != CDYN_CONSTRAINT_POINT && type != CDYN_CONSTRAINT_WELD)
    return setFail(set, CDYN_ERR_INVALID_ARGUMENT,
                   "contact at '%s': type %d is neither CDYN_CONSTRAINT_POINT nor "
                   "CDYN_CONSTRAINT_WELD",
                   frame_name, type);
  cd::ReferenceFrame frame;
  if (toFrame(rf, &frame) != CDYN_OK)
    return setFail(set, CDYN_ERR_INVALID_ARGUMENT,
                   "contact at '%s': reference frame %d is not CDYN_LOCAL or "
                   "CDYN_LOCAL_WORLD_ALIGNED",
                   frame_name, rf);
  return guarded(&set->lastError, [&] {
    if (set->model->cm.treeModel.frameId(frame_name) < 0)
      return setFail(set, CDYN_ERR_NOT_FOUND, "contact: the model has no link or frame named '%s'",
                     frame_name);
    const int i = set->set.addContact(frame_name, static_cast<cd::ConstraintType>(type), frame,
                                      name ? name : "");
    if (index) *index = i;
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_set_size(const cdyn_constraint_set* set, int* nconstraints) {
  if (set == nullptr || nconstraints == nullptr) return CDYN_ERR_NULL_POINTER;
  if (!validSet(set)) return CDYN_ERR_INVALID_ARGUMENT;
  *nconstraints = set->set.size();
  return CDYN_OK;
}

cdyn_status cdyn_constraint_set_nrows(const cdyn_constraint_set* set, int* m) {
  if (set == nullptr || m == nullptr) return CDYN_ERR_NULL_POINTER;
  if (!validSet(set)) return CDYN_ERR_INVALID_ARGUMENT;
  *m = set->set.rows();
  return CDYN_OK;
}

cdyn_status cdyn_constraint_set_row_name(const cdyn_constraint_set* set, int row,
                                         const char** name) {
  if (set == nullptr || name == nullptr) return CDYN_ERR_NULL_POINTER;
  if (!validSet(set)) return CDYN_ERR_INVALID_ARGUMENT;
  if (row < 0 || row >= set->set.rows()) return CDYN_ERR_INVALID_INDEX;
  *name = set->set.rowNames()[row].c_str();
  return CDYN_OK;
}

// ---- constraint workspaces -----------------------------------------------------------------

cdyn_status cdyn_constraint_workspace_create(const cdyn_model* model,
                                             const cdyn_constraint_set* set,
                                             cdyn_constraint_workspace** workspace) {
  if (workspace == nullptr) return CDYN_ERR_NULL_POINTER;
  *workspace = nullptr;
  if (model == nullptr || set == nullptr) return CDYN_ERR_NULL_POINTER;
  if (!validModel(model) || !validSet(set)) return CDYN_ERR_INVALID_ARGUMENT;
  if (set->model != model) return CDYN_ERR_WORKSPACE_MISMATCH;
  return guarded(nullptr, [&] {
    *workspace = new cdyn_constraint_workspace(set);
    set->workspaces.fetch_add(1);
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_workspace_free(cdyn_constraint_workspace* workspace) {
  if (workspace == nullptr) return CDYN_OK;
  if (!validWorkspace(workspace)) return CDYN_ERR_INVALID_ARGUMENT;
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
  return guarded(&ws->data.treeData.lastError, [&]() -> cdyn_status {
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

cdyn_status cdyn_delassus_matrix(const cdyn_constraint_set* set, cdyn_constraint_workspace* ws,
                                 const double* q, double* D, int ldd) {
  if (cdyn_status s = enter(set, ws)) return s;
  return guarded(&ws->data.treeData.lastError, [&]() -> cdyn_status {
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
  return guarded(&ws->data.treeData.lastError, [&]() -> cdyn_status {
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
  return guarded(&ws->data.treeData.lastError, [&]() -> cdyn_status {
    if (ldw < 6) return wsFail(ws, CDYN_ERR_INVALID_SIZE, "ldw is %d, expected >= 6", ldw);
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
  return guarded(&ws->data.treeData.lastError, [&]() -> cdyn_status {
    if (solver < CDYN_SOLVER_CONSTRAINED_ABA || solver > CDYN_SOLVER_DENSE)
      return wsFail(ws, CDYN_ERR_INVALID_ARGUMENT,
                    "solver %d is not a cdyn_constrained_solver (0..2)", solver);
    const Solver which = solver == CDYN_SOLVER_CONSTRAINED_ABA ? Solver::ConstrainedAba
                         : solver == CDYN_SOLVER_PROX_PV       ? Solver::ProxPv
                                                               : Solver::Dense;
    cd::ProximalSettings ps;
    bool warm = false;
    if (cdyn_status s = checkSolveArgs(which, ws, q, v, tau, ydd, lambda, m, settings, &ps, &warm))
      return s;
    if (warm)
      return wsFail(ws, CDYN_ERR_INVALID_ARGUMENT,
                    "warm_start is not supported in batched solves (a state's result would depend "
                    "on the state its thread solved before): set it to 0");
    if (cd::checkProximalSettings(ws->data, ps) != cd::Status::Ok) return CDYN_ERR_INVALID_ARGUMENT;
    if (which == Solver::ConstrainedAba && !set->set.allWorldAttached())
      return wsFail(ws, CDYN_ERR_INVALID_ARGUMENT,
                    "CDYN_SOLVER_CONSTRAINED_ABA takes contact sets only (every constraint with "
                    "body2 = -1); use CDYN_SOLVER_PROX_PV for this set");
    return CDYN_OK;
  });
}

}  // namespace cdyn_batch_internal
