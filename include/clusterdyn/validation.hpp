#pragma once
// Input validation: the checks every compute function runs on its inputs, public for callers
// that validate all their inputs before they change any state (the C API does, so that a
// rejected call leaves the workspace as it was). Each returns Status::Ok or the failing status
// with the message in data.lastError (as the compute functions do); none allocates.
#include "clusterdyn/data.hpp"
#include "clusterdyn/kinematics.hpp"
#include "clusterdyn/model.hpp"
#include "clusterdyn/status.hpp"

namespace clusterdyn {

/// x has n coefficients, all finite: InvalidSize or NonFinite naming `what` and the index.
Status validateVector(Data& data, ConstVecRef x, Eigen::Index n, const char* what);

/// q (size model.nq) is a configuration: finite, and every quaternion block of a floating or
/// spherical joint has unit norm to 1e-6 (NotUnitQuaternion naming the joint otherwise).
Status validateConfiguration(const Model& model, Data& data, ConstVecRef q);

}  // namespace clusterdyn
