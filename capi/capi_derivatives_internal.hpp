// Internal header of the derivative part of the C API (not installed): the handle struct of
// cdyn_derivative_workspace, shared by capi_derivatives.cpp (single calls) and
// capi_batch_derivatives.cpp (batched calls).
#pragma once

#include <cstdint>

#include "capi_internal.hpp"
#include "clusterdyn/cluster_derivatives.hpp"

namespace cdyn_derivatives_internal {

constexpr std::uint32_t kDerivativeTag = 0x56444443u;  // "CDDV"

}  // namespace cdyn_derivatives_internal

/// The opt-in derivative workspace: the derivative arrays (about 6 ny^2 + 6 nv^2 doubles, too
/// large to carry in every cdyn_workspace) and an ordinary workspace of the model, owned and
/// never exposed, for the dynamics scratch, the aligned fext copy and the message buffer.
struct cdyn_derivative_workspace {
  cdyn_derivative_workspace(const cdyn_model* m, cdyn_workspace* w) : model(m), ws(w), dd(m->cm) {}
  std::uint32_t tag = cdyn_derivatives_internal::kDerivativeTag;
  const cdyn_model* model;
  cdyn_workspace* ws;            ///< freed with the handle (cdyn_derivative_workspace_free)
  cd::ClusterDerivativeData dd;  ///< dd.tree: the spanning tree's DerivativeData
};

namespace cdyn_derivatives_internal {

inline bool validDerivativeWorkspace(const cdyn_derivative_workspace* d) {
  return d->tag == kDerivativeTag;
}

}  // namespace cdyn_derivatives_internal
