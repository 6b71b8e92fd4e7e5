// Mechanical energy of the spanning tree.
#pragma once

#include "clusterdyn/kinematics.hpp"

namespace clusterdyn {

/// Kinetic energy 1/2 sum v_i^T I_i v_i (+ 1/2 v^T diag(Model::armature) v) [J] into
/// data.kineticEnergy. Runs forwardKinematics(q, v); on invalid input returns its Status (message
/// in data.lastError) and leaves data.kineticEnergy unchanged.
Status computeKineticEnergy(const Model& model, Data& data, ConstVecRef q, ConstVecRef v);
/// Potential energy -sum m_i g . c_i [J] (zero at world z = 0 for g along -z) into
/// data.potentialEnergy (+ the joint springs' 1/2 k |q (-) q_spring|^2, Model::stiffness). Runs
/// forwardKinematics(q); Status as computeKineticEnergy.
Status computePotentialEnergy(const Model& model, Data& data, ConstVecRef q);

/// Value form of computeKineticEnergy: the energy, or NaN (and data.lastError) on invalid input.
double kineticEnergy(const Model& model, Data& data, ConstVecRef q, ConstVecRef v);
/// Value form of computePotentialEnergy: the energy, or NaN (and data.lastError) on invalid input.
double potentialEnergy(const Model& model, Data& data, ConstVecRef q);
/// Centre of mass of the whole model in world coordinates (after forwardKinematics).
Vec3 centerOfMass(const Model& model, const Data& data);

}  // namespace clusterdyn
