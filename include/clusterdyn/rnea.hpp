// Recursive Newton-Euler inverse dynamics on the spanning tree (Featherstone Table 5.1).
#pragma once

#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// tau = M(q) a + C(q, v) v + g(q) - sum_i J_i^T fext_i, written to data.tau (size nv).
/// fext: nullptr or an array of model.nbodies forces [moment; force] applied TO each body,
/// expressed in that body's frame, about the body-frame origin.
Status rnea(const Model& model, Data& data, ConstVecRef q, ConstVecRef v, ConstVecRef a,
            const Force* fext = nullptr);

/// Bias forces C(q, v) v + g(q) (= rnea with a = 0), written to data.nle.
Status nonLinearEffects(const Model& model, Data& data, ConstVecRef q, ConstVecRef v);

/// Generalized gravity g(q) (= rnea with v = a = 0), written to data.nle.
Status generalizedGravity(const Model& model, Data& data, ConstVecRef q);

}  // namespace clusterdyn
