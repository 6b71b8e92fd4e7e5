// C API: version and errors (clusterdyn.h, "Version and errors").
#include "capi_internal.hpp"

using namespace cdyn_internal;

// Status values 1..8 are clusterdyn::Status values.
static_assert(CDYN_ERR_INVALID_SIZE == static_cast<int>(cd::Status::InvalidSize), "");
static_assert(CDYN_ERR_NON_FINITE == static_cast<int>(cd::Status::NonFinite), "");
static_assert(CDYN_ERR_NOT_UNIT_QUATERNION == static_cast<int>(cd::Status::NotUnitQuaternion), "");
static_assert(CDYN_ERR_NOT_POSITIVE_DEFINITE == static_cast<int>(cd::Status::NotPositiveDefinite),
              "");
static_assert(CDYN_ERR_INVALID_INDEX == static_cast<int>(cd::Status::InvalidIndex), "");
static_assert(CDYN_ERR_CONSTRAINT_FAILURE == static_cast<int>(cd::Status::ConstraintFailure), "");
static_assert(CDYN_ERR_WORKSPACE_MISMATCH == static_cast<int>(cd::Status::WorkspaceMismatch), "");
static_assert(CDYN_ERR_INVALID_ARGUMENT == static_cast<int>(cd::Status::InvalidArgument), "");
static_assert(CDYN_JOINT_REVOLUTE == static_cast<int>(cd::JointType::Revolute) &&
                  CDYN_JOINT_PRISMATIC == static_cast<int>(cd::JointType::Prismatic) &&
                  CDYN_JOINT_SPHERICAL == static_cast<int>(cd::JointType::Spherical) &&
                  CDYN_JOINT_PLANAR == static_cast<int>(cd::JointType::Planar) &&
                  CDYN_JOINT_FLOATING == static_cast<int>(cd::JointType::Floating) &&
                  CDYN_JOINT_FIXED == static_cast<int>(cd::JointType::Fixed),
              "cdyn_joint_type mirrors clusterdyn::JointType");

extern "C" {

#define CDYN_STR2(x) #x
#define CDYN_STR(x) CDYN_STR2(x)

int cdyn_version(void) { return CDYN_VERSION_NUMBER; }

const char* cdyn_version_string(void) {
  return CDYN_STR(CDYN_VERSION_MAJOR) "." CDYN_STR(CDYN_VERSION_MINOR) "." CDYN_STR(
      CDYN_VERSION_PATCH);
}

cdyn_status cdyn_check_version(int abi_version) {
  return abi_version == CDYN_ABI_VERSION ? CDYN_OK : CDYN_ERR_VERSION;
}

const char* cdyn_status_string(cdyn_status status) {
  switch (status) {
    case CDYN_OK:
      return "ok";
    case CDYN_ERR_NULL_POINTER:
      return "null pointer";
    case CDYN_ERR_VERSION:
      return "ABI version mismatch";
    case CDYN_ERR_PARSE:
      return "model could not be loaded";
    case CDYN_ERR_INTERNAL:
      return "internal error";
    case CDYN_ERR_NOT_FOUND:
      return "name not found";
    case CDYN_ERR_OUT_OF_MEMORY:
      return "out of memory";
    default:
      break;
  }
  const int s = static_cast<int>(status);
  if (s > 0 && s < 100) return cd::statusName(static_cast<cd::Status>(s));
  return "unknown status";
}

}  // extern "C"
