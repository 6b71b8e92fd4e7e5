// Internal header of the contact part of the C API (not installed): the handle structs of
// cdyn_contact_problem and cdyn_contact_workspace, shared by capi_contact.cpp (problems, single
// solves and steps) and capi_contact_batch.cpp (rollouts).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "capi_internal.hpp"
#include "clusterdyn.h"
#include "clusterdyn/contact.hpp"

namespace cdyn_contact_internal {

constexpr std::uint32_t kProblemTag = 0x50434443u;    // "CDCP"
constexpr std::uint32_t kWorkspaceTag = 0x57504443u;  // "CDPW"
constexpr std::uint32_t kDeadTag = 0xdeaddeadu;

}  // namespace cdyn_contact_internal

struct cdyn_contact_problem {
  explicit cdyn_contact_problem(const cdyn_model* m)
      : model(m), bilateral(m->cm), problem(new cd::ContactProblem(m->cm)) {}
  std::uint32_t tag = cdyn_contact_internal::kProblemTag;
  const cdyn_model* model;
  cd::ConstraintSet bilateral;  ///< every bilateral row added so far (the problem's copy source)
  std::unique_ptr<cd::ContactProblem> problem;
  std::array<char, 256> lastError{};
  mutable std::atomic<int> workspaces{0};
};

struct cdyn_contact_workspace {
  explicit cdyn_contact_workspace(const cdyn_contact_problem* p)
      : problem(p),
        data(p->model->cm),
        cdata(p->model->cm, *p->problem),
        q(cd::VecX::Zero(p->model->cm.treeModel.nq)),
        v(cd::VecX::Zero(p->model->cm.treeModel.nv)) {}
  std::uint32_t tag = cdyn_contact_internal::kWorkspaceTag;
  const cdyn_contact_problem* problem;
  cd::ClusterData data;  ///< data.treeData.lastError: the message of the last failure
  cd::ContactData cdata;
  cd::VecX q, v;  ///< the state being stepped (the caller's arrays are copied in and out)
};

/// Where the messages of a problem's / a contact workspace's calls go (cdyn_internal::fail finds
/// these next to the handle structs, by argument-dependent lookup).
inline cdyn_internal::Sink sinkOf(cdyn_contact_problem* p) {
  return cdyn_internal::sinkIn(p->lastError);
}
inline cdyn_internal::Sink sinkOf(cdyn_contact_workspace* w) {
  return cdyn_internal::sinkIn(w->data.treeData.lastError);
}

namespace cdyn_contact_internal {

using cdyn_internal::fail;
using cdyn_internal::Sink;

inline bool validProblem(const cdyn_contact_problem* p) { return p && p->tag == kProblemTag; }
inline bool validWorkspace(const cdyn_contact_workspace* w) { return w && w->tag == kWorkspaceTag; }

/// Entry check of a compute function on (problem, ws): handles, their pairing; clears the
/// workspace's message.
cdyn_status enter(const cdyn_contact_problem* problem, cdyn_contact_workspace* ws);

/// settings (NULL: the defaults) -> StepSettings, each field checked (message in ws).
cdyn_status readSettings(cdyn_contact_workspace* ws, const cdyn_contact_settings* settings,
                         cd::StepSettings* out);

/// The report of the workspace's last solve.
void writeReport(const cdyn_contact_workspace* ws, cdyn_status status, cdyn_contact_report* r);

/// One step of (q, v) with efforts tau (lengths checked before), outputs as cdyn_contact_step.
cdyn_status stepOnce(cdyn_contact_workspace* ws, const cd::StepSettings& s, const double* q,
                     const double* v, const double* tau, double* qout, double* vout, double* lambda,
                     cdyn_contact_report* report);

}  // namespace cdyn_contact_internal
