// Articulated-body algorithm on the spanning tree (Featherstone Table 7.1).
#pragma once

#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// Forward dynamics ddq = M(q)^-1 (tau - C(q, v) v - g(q) + sum_i J_i^T fext_i), written to
/// data.ddq (size nv); also leaves data.v, data.a (body accelerations, gravity excluded).
/// fext as in rnea(). Fails with NotPositiveDefinite (naming the body and the pivot ratio) if
/// an articulated inertia D is singular to working precision: a Cholesky pivot <= 0, NaN or
/// below 1e-11 of D's largest diagonal entry (docs/robustness.md, "Singular inertias"; e.g. a
/// massless root body on a floating joint).
Status aba(const Model& model, Data& data, ConstVecRef q, ConstVecRef v, ConstVecRef tau,
           const Force* fext = nullptr);

}  // namespace clusterdyn
