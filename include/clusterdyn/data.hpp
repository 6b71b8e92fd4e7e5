// Workspace written by the algorithms. Create one per thread with Data(model); it is sized once
// and every compute function then runs without heap allocation.
#pragma once

#include <array>
#include <vector>

#include "clusterdyn/inertia.hpp"
#include "clusterdyn/model.hpp"
#include "clusterdyn/status.hpp"

namespace clusterdyn {

struct Data {
  /// denseMatrices = false leaves M empty (nv x nv doubles: 200 MB at nv = 5000) for
  /// workspaces that never call crba (the model builder's); crba then fails with
  /// InvalidArgument.
  explicit Data(const Model& model, bool denseMatrices = true);

  const Model* model = nullptr;  ///< the model this workspace was made for

  // Kinematics (per body).
  std::vector<Transform> liMi;  ///< pose of body i in its parent body frame (world if root)
  std::vector<Transform> oMi;   ///< pose of body i in the world frame
  std::vector<Motion> v;        ///< spatial velocity of body i, body coordinates
  std::vector<Motion> a;        ///< spatial acceleration of body i, body coordinates (no gravity)
  std::vector<Motion> c;        ///< velocity-product acceleration v_i x S_i qd_i
  std::vector<Force> f;         ///< RNEA: force transmitted by joint i, body coordinates
  std::vector<Motion> a_gf;     ///< acceleration including -gravity (RNEA/ABA internal)

  // Articulated-body quantities (ABA).
  std::vector<Mat6> IA;   ///< articulated inertia, body coordinates
  std::vector<Force> pA;  ///< articulated bias force
  std::vector<Mat6Xs> U;  ///< IA S, 6 x nv_i
  std::vector<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>> Dinv;
  std::vector<Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>> u;

  // Composite rigid body (CRBA).
  std::vector<SpatialInertia>
      Ycrb;  ///< composite inertia of the subtree at i (rigid; crba: body coordinates)

  // Outputs.
  VecX tau;         ///< RNEA result (nv)
  VecX ddq;         ///< ABA result (nv)
  VecX nle;         ///< bias forces C(q, v) v + g(q) - tau_p(q, v) (nv; tau_p: Model::damping...)
  VecX tauApplied;  ///< scratch: tau + tau_p (nv when the model has joint dynamics, else 0)
  MatX M;           ///< joint-space inertia matrix (nv x nv, full symmetric)
  Mat6X J;          ///< frame Jacobian scratch (6 x nv)
  double kineticEnergy = 0.0;
  double potentialEnergy = 0.0;
  /// Relative floor of the Cholesky pivots of the articulated inertias D that aba and ceAba
  /// factor (docs/robustness.md, "Singular inertias"): 1e-11 of D's largest diagonal entry. Not
  /// a setting (leave it): the constrained and Delassus passes, whose inertias carry 1/mu-sized
  /// terms, lower it to 0 (pivots > 0) for their own pass and restore it.
  double pivotFloor = 1e-11;

  /// Message of the last failed call (empty after a successful call): static buffer, no heap.
  std::array<char, 256> lastError{};
  const char* errorMessage() const { return lastError.data(); }
};

}  // namespace clusterdyn
