// Public input validation (validation.hpp): the checks of src/core/check.hpp behind a stable API.
#include "clusterdyn/validation.hpp"

#include "core/check.hpp"

namespace clusterdyn {

Status validateVector(Data& data, ConstVecRef x, Eigen::Index n, const char* what) {
  return detail::checkVector(data, x, n, what);
}

Status validateConfiguration(const Model& model, Data& data, ConstVecRef q) {
  return detail::checkConfiguration(model, data, q);
}

}  // namespace clusterdyn
