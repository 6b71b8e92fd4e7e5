// Operations on configuration vectors (quaternion-aware).
#pragma once

#include <random>

#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// The zero configuration (identity quaternions), size nq.
VecX neutralConfiguration(const Model& model);
/// A random configuration: 1-dof joints uniform in their limits intersected with [-range, range],
/// quaternions uniform on SO(3), floating positions uniform in [-range, range]^3.
VecX randomConfiguration(const Model& model, std::mt19937_64& rng, double range = 1.0);
/// q (+) v dt: configuration reached after moving with constant generalized velocity v for dt
/// (body-frame exponential map for floating, spherical and planar joints).
VecX integrate(const Model& model, ConstVecRef q, ConstVecRef v, double dt);
/// The same into preallocated storage (size nq; may be q itself): no heap allocation.
void integrateInto(const Model& model, ConstVecRef q, ConstVecRef v, double dt,
                   Eigen::Ref<VecX> out);
/// q1 (-) q0: the generalized velocity v (size nv) with integrate(q0, v, 1) = q1, the inverse of
/// integrate() (body-frame logarithm for floating, spherical and planar joints; rotations of
/// angle < pi). Writes into preallocated storage: no heap allocation.
void differenceInto(const Model& model, ConstVecRef q0, ConstVecRef q1, Eigen::Ref<VecX> out);
/// Normalizes every quaternion of q in place.
void normalizeConfiguration(const Model& model, Eigen::Ref<VecX> q);

}  // namespace clusterdyn
