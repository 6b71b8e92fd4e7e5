// Internal header of the constraint part of the C API (not installed): the handle structs of
// cdyn_constraint_set and cdyn_constraint_workspace and the helpers shared by
// capi_constraints.cpp (compute functions) and capi_constraint_sets.cpp (sets).
#pragma once

#include <Eigen/Core>
#include <array>
#include <atomic>
#include <cstdint>
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

// ---- errors (the one path of capi_errors.hpp) ----------------------------------------------

/// Where the messages of a set's / a constraint workspace's calls go (cdyn_internal::fail finds
/// these next to the handle structs, by argument-dependent lookup).
inline cdyn_internal::Sink sinkOf(cdyn_constraint_set* s) {
  return cdyn_internal::sinkIn(s->lastError);
}
inline cdyn_internal::Sink sinkOf(cdyn_constraint_workspace* w) {
  return cdyn_internal::sinkIn(w->data.treeData.lastError);
}

namespace cdyn_constraints_internal {

using cdyn_internal::fail;
using cdyn_internal::fromStatus;
using cdyn_internal::guard;
using cdyn_internal::Phase;
using cdyn_internal::refuse;
using cdyn_internal::Sink;

/// A live model handle (capi_internal.hpp).
inline bool validModel(const cdyn_model* m) { return m->tag == cdyn_internal::kModelTag; }
inline bool validSet(const cdyn_constraint_set* s) { return s->tag == kSetTag; }
inline bool validWorkspace(const cdyn_constraint_workspace* w) { return w->tag == kWorkspaceTag; }

}  // namespace cdyn_constraints_internal
