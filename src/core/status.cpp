// Names of the Status values (status.hpp).
#include "clusterdyn/status.hpp"

namespace clusterdyn {

const char* statusName(Status s) {
  switch (s) {
    case Status::Ok:
      return "ok";
    case Status::InvalidSize:
      return "invalid size";
    case Status::NonFinite:
      return "non-finite input";
    case Status::NotUnitQuaternion:
      return "quaternion is not unit";
    case Status::NotPositiveDefinite:
      return "inertia not positive definite";
    case Status::InvalidIndex:
      return "index out of range";
    case Status::ConstraintFailure:
      return "loop constraint failure";
    case Status::WorkspaceMismatch:
      return "workspace belongs to another model";
    case Status::InvalidArgument:
      return "invalid argument";
    case Status::NotConverged:
      return "iterations did not reach the tolerance";
  }
  return "unknown status";
}

}  // namespace clusterdyn
