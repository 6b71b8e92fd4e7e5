// Mechanical energy of the spanning tree.
#pragma once

#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// Kinetic energy 1/2 sum v_i^T I_i v_i [J], also stored in data.kineticEnergy.
/// Runs forwardKinematics(q, v). Returns NaN (and data.lastError) on invalid input.
double kineticEnergy(const Model& model, Data& data, ConstVecRef q, ConstVecRef v);
/// Potential energy -sum m_i g . c_i [J] (zero at world z = 0 for g along -z), also stored in
/// data.potentialEnergy. Runs forwardKinematics(q).
double potentialEnergy(const Model& model, Data& data, ConstVecRef q);
/// Centre of mass of the whole model in world coordinates (after forwardKinematics).
Vec3 centerOfMass(const Model& model, const Data& data);

}  // namespace clusterdyn
