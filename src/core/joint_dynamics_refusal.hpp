// The one refusal of the algorithms that do not model joint dynamics (armature, springs,
// dampers): the message names how to load the model without them in C++, C and Python.
#pragma once

#include "core/check.hpp"

namespace clusterdyn::detail {

/// Status::InvalidArgument with "WHAT ignore(s) the joint dynamics ... of model 'NAME' ...".
inline Status refuseJointDynamics(Data& data, const char* what, const char* modelName) {
  return fail(data, Status::InvalidArgument,
              "%s: the joint dynamics (armature, springs, dampers) of model '%s' are not "
              "modelled; load it without them (ModelOptions::jointDynamics = false; C: "
              "CDYN_LOAD_NO_JOINT_DYNAMICS; Python: joint_dynamics=False)",
              what, modelName);
}

}  // namespace clusterdyn::detail
