// JSON views of clusterdyn objects for the command-line tool (nlohmann-json: tools/tests only).
#pragma once

#include <nlohmann/json.hpp>

#include "clusterdyn/model.hpp"

namespace clusterdyn::cli {

/// Bodies, joints (type, parent, q/v index, limits), frames, dof counts and total mass of a
/// model. Infinite limits are written as null.
nlohmann::ordered_json modelInfoJson(const Model& model);

/// A number, or null when it is not finite (JSON has no infinity).
nlohmann::ordered_json finiteOrNull(double x);

}  // namespace clusterdyn::cli
