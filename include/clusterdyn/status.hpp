// Status codes returned by every compute function (no compute function throws).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace clusterdyn {

enum class Status : int {
  Ok = 0,
  InvalidSize = 1,          ///< a vector or matrix argument has the wrong size
  NonFinite = 2,            ///< a NaN or Inf in the input
  NotUnitQuaternion = 3,    ///< a quaternion in q is far from unit norm (|1-|q|| > 1e-6)
  NotPositiveDefinite = 4,  ///< an articulated/joint-space inertia is singular
  InvalidIndex = 5,         ///< a body, frame or joint index out of range
  ConstraintFailure = 6,    ///< loop closure could not be solved / is singular
  WorkspaceMismatch = 7,    ///< the Data was made for another Model
  InvalidArgument = 8,      ///< any other invalid argument
  NotConverged = 9,         ///< an iterative solve stopped before its tolerance (outputs hold
                            ///< the last iterate)
};

/// Short, static description of a status code.
const char* statusName(Status s);

/// Thrown by model loading (URDF reading, model building) only; never by compute functions.
class ModelError : public std::runtime_error {
 public:
  explicit ModelError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace clusterdyn
