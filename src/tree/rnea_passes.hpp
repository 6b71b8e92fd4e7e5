// The two passes of the recursive Newton-Euler algorithm (Featherstone Table 5.1), shared by
// rnea() and CE-RNEA on models whose clusters have constant G (no implicit loop).
#pragma once

#include "clusterdyn/kinematics.hpp"

namespace clusterdyn::detail {

/// Forward and backward passes without argument checks: out = S^T f (nv). a == nullptr means
/// zero acceleration, v == nullptr zero velocity, fext == nullptr no external force.
Status rneaPasses(const Model& model, Data& data, ConstVecRef q, const double* v, const double* a,
                  const Force* fext, VecX& out);

}  // namespace clusterdyn::detail
