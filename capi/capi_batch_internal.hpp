// What the batched evaluation (capi_batch.cpp) needs from the constraint layer
// (capi_constraints.cpp) beyond clusterdyn.h. Not installed; hidden visibility.
#pragma once

#include "clusterdyn.h"

namespace cdyn_batch_internal {

/// The model of a valid set; NULL for an invalid handle.
const cdyn_model* constraintSetModel(const cdyn_constraint_set* set);

/// The workspace's buffer for one state of a column-major batched proximal solve, made with the
/// workspace: nq + 2 nv + 2 ny + 6 nbodies + m doubles (q v tau fext ydd qdd lambda).
double* constraintGather(cdyn_constraint_workspace* ws);

/// Every argument of a batched proximal solve that does not depend on the state, checked once
/// before any state runs with the single-state function's statuses and messages (message in
/// ws): the handles, solver, the required arrays q v tau ydd (lambda when m > 0), m, the
/// settings (NULL: defaults; warm_start must be 0), and a contact set for constrainedABA.
cdyn_status checkBatchedSolve(int solver, const cdyn_constraint_set* set,
                              cdyn_constraint_workspace* ws, const double* q, const double* v,
                              const double* tau, const double* ydd, const double* lambda, int m,
                              const cdyn_proximal_settings* settings);

}  // namespace cdyn_batch_internal
