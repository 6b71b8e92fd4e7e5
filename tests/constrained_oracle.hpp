// Dense oracle of constrained dynamics in independent coordinates (tests only):
//   H y_ddot + C = tau + J^T lambda,   J y_ddot + gamma = k,
// solved by the Schur complement with a pseudo-inverse (complete orthogonal decomposition), so
// that redundant but consistent constraint sets give the unique y_ddot and the minimum-norm
// lambda. H comes from clusterMassMatrix, C from ceRnea at y_ddot = 0, J and gamma from
// constraintJacobian (body Jacobians of the cluster tree).
#pragma once

#include <Eigen/Dense>

#include "clusterdyn/clusterdyn.hpp"

namespace clusterdyn::test {

struct KktSolution {
  MatX H, delassus;
  VecX C, ydd, lambda;
  bool ok = false;
};

inline KktSolution denseKkt(const ClusterModel& cm, ClusterData& data, const ConstraintSet& set,
                            ConstraintData& cd, const VecX& q, const VecX& v, const VecX& tau,
                            const Force* fext = nullptr) {
  KktSolution s;
  if (clusterMassMatrix(cm, data, q) != Status::Ok) return s;
  s.H = data.H;
  if (ceRnea(cm, data, q, v, VecX::Zero(cm.ny), fext) != Status::Ok) return s;
  s.C = data.tauY;
  if (constraintJacobian(cm, data, set, cd, q, v) != Status::Ok) return s;
  const MatX& J = cd.jacobian;
  const Eigen::LLT<MatX> llt(s.H);
  const MatX HinvJt = llt.solve(J.transpose());
  s.delassus = J * HinvJt;
  const VecX yfree = llt.solve(tau - s.C);
  const VecX rhs = cd.desired - cd.gamma - J * yfree;
  const Eigen::CompleteOrthogonalDecomposition<MatX> cod(s.delassus);
  s.lambda = cod.solve(rhs);
  s.ydd = yfree + HinvJt * s.lambda;
  s.ok = true;
  return s;
}

}  // namespace clusterdyn::test
