// Internal header of the constraint part of the C API (not installed): the handle structs of
// cdyn_constraint_set and cdyn_constraint_workspace and the helpers shared by
// capi_constraints.cpp (compute functions) and capi_constraint_sets.cpp (sets).
#pragma once

#include <Eigen/Core>
#include <array>
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <new>
#include <vector>

#include "capi_internal.hpp"
#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/constraints.hpp"

namespace cd = clusterdyn;

namespace cdyn_constraints_internal {

constexpr std::uint32_t kSetTag = 0x53434443u;        // "CDCS"
constexpr std::uint32_t kWorkspaceTag = 0x57434443u;  // "CDCW"
constexpr std::uint32_t kDeadTag = 0xdeaddeadu;

}  // namespace cdyn_constraints_internal

struct cdyn_constraint_set {
  explicit cdyn_constraint_set(const cdyn_model* m) : model(m), set(m->cm) {}
  std::uint32_t tag = cdyn_constraints_internal::kSetTag;
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
  std::uint32_t tag = cdyn_constraints_internal::kWorkspaceTag;
  const cdyn_constraint_set* set;
  cd::ClusterData data;  ///< data.treeData.lastError: the message of the last failure
  cd::ConstraintData cdata;
  std::vector<cd::Force> fext;  ///< aligned copy of the caller's external forces
  cd::VecX vzero;               ///< zero spanning velocity (v == NULL)
  std::vector<double> gather;   ///< one state's arrays in column-major batches (capi_batch.cpp)
};

namespace cdyn_constraints_internal {

using cdyn_internal::refuse;

// ---- errors --------------------------------------------------------------------------------

inline cdyn_status vfail(std::array<char, 256>& buf, cdyn_status s, const char* fmt, va_list args) {
  std::vsnprintf(buf.data(), buf.size(), fmt, args);
  return s;
}

inline __attribute__((format(printf, 3, 4))) cdyn_status setFail(cdyn_constraint_set* set,
                                                                 cdyn_status s, const char* fmt,
                                                                 ...) {
  va_list args;
  va_start(args, fmt);
  vfail(set->lastError, s, fmt, args);
  va_end(args);
  return s;
}

inline __attribute__((format(printf, 3, 4))) cdyn_status wsFail(cdyn_constraint_workspace* ws,
                                                                cdyn_status s, const char* fmt,
                                                                ...) {
  va_list args;
  va_start(args, fmt);
  vfail(ws->data.treeData.lastError, s, fmt, args);
  va_end(args);
  return s;
}

inline cdyn_status fromStatus(cd::Status s) {
  return static_cast<cdyn_status>(static_cast<int>(s));
}

/// A live model handle (capi_internal.hpp).
inline bool validModel(const cdyn_model* m) { return m->tag == cdyn_internal::kModelTag; }
inline bool validSet(const cdyn_constraint_set* s) { return s->tag == kSetTag; }
inline bool validWorkspace(const cdyn_constraint_workspace* w) { return w->tag == kWorkspaceTag; }

/// Runs f, turning every exception into a status; the message goes to buf (when given).
template <typename F>
inline cdyn_status guarded(std::array<char, 256>* buf, F&& f) noexcept {
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

}  // namespace cdyn_constraints_internal
