// Dense KKT / Delassus oracles (dense_oracles.hpp).
#include "dense_oracles.hpp"

#include <Eigen/Dense>

namespace clusterdyn::oracle {

void globalExplicitForm(const ClusterModel& cm, const ClusterData& data, MatX& G, VecX& g) {
  G.setZero(cm.treeModel.nv, cm.ny);
  g.setZero(cm.treeModel.nv);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (c.constrained()) {
      G.block(c.v0, c.y0, c.nv, c.ny) = data.explicitMatrix(k);
      g.segment(c.v0, c.nv) = data.explicitBias(k);
    } else {
      G.block(c.v0, c.y0, c.nv, c.ny).setIdentity();
    }
  }
}

VecX denseClusterYdd(const ClusterModel& cm, ClusterData& data, const VecX& q, const VecX& v,
                     const VecX& tau, bool* ok) {
  MatX G;
  VecX g;
  Data td(cm.treeModel);
  const bool fine = clusterConstraintMatrices(cm, data, q, v) == Status::Ok &&
                    crba(cm.treeModel, td, q) == Status::Ok;
  globalExplicitForm(cm, data, G, g);
  const MatX M = td.M;
  const bool nle = nonLinearEffects(cm.treeModel, td, q, v) == Status::Ok;
  if (ok) *ok = fine && nle;
  const MatX H = G.transpose() * M * G;
  return H.ldlt().solve(tau - G.transpose() * (td.nle + M * g));
}

bool delassus(const MatX& M, const MatX& J, MatX& D) {
  const Eigen::LLT<MatX> llt(M);
  if (llt.info() != Eigen::Success) return false;
  D = J * llt.solve(J.transpose());
  return true;
}

MatX dampedInverse(const MatX& D, double rho) {
  return (D + rho * MatX::Identity(D.rows(), D.cols())).inverse();
}

KktSolution solveKktLu(const MatX& M, const MatX& J, const VecX& f, const VecX& b) {
  KktSolution s;
  const Eigen::Index n = M.rows(), m = J.rows();
  MatX K = MatX::Zero(n + m, n + m);
  K.topLeftCorner(n, n) = M;
  K.topRightCorner(n, m) = -J.transpose();
  K.bottomLeftCorner(m, n) = J;
  VecX rhs(n + m);
  rhs.head(n) = f;
  rhs.tail(m) = b;
  const Eigen::FullPivLU<MatX> lu(K);
  if (!lu.isInvertible()) return s;
  const VecX x = lu.solve(rhs);
  s.acceleration = x.head(n);
  s.lambda = x.tail(m);
  s.ok = true;
  return s;
}

KktSolution solveKktSchur(const MatX& M, const MatX& J, const VecX& f, const VecX& b) {
  KktSolution s;
  const Eigen::LLT<MatX> llt(M);
  if (llt.info() != Eigen::Success) return s;
  const VecX aFree = llt.solve(f);
  s.ok = true;
  if (J.rows() == 0) {  // no rows: the unconstrained dynamics (Eigen's solves reject 0 columns)
    s.delassus.resize(0, 0);
    s.lambda.resize(0);
    s.acceleration = aFree;
    return s;
  }
  const MatX MinvJt = llt.solve(J.transpose());
  s.delassus = J * MinvJt;
  const VecX rhs = b - J * aFree;
  const Eigen::CompleteOrthogonalDecomposition<MatX> cod(s.delassus);
  s.lambda = cod.solve(rhs);
  s.acceleration = aFree + MinvJt * s.lambda;
  return s;
}

ClusterKkt denseClusterKkt(const ClusterModel& cm, ClusterData& data, const ConstraintSet& set,
                           ConstraintData& cd, const VecX& q, const VecX& v, const VecX& tau,
                           const Force* fext) {
  ClusterKkt s;
  if (clusterMassMatrix(cm, data, q) != Status::Ok) return s;
  s.H = data.H;
  if (ceRnea(cm, data, q, v, VecX::Zero(cm.ny), fext) != Status::Ok) return s;
  s.C = data.tauY;
  if (constraintJacobian(cm, data, set, cd, q, v) != Status::Ok) return s;
  KktSolution k = solveKktSchur(s.H, cd.jacobian, tau - s.C, cd.desired - cd.gamma);
  if (!k.ok) return s;
  s.delassus = std::move(k.delassus);
  s.ydd = std::move(k.acceleration);
  s.lambda = std::move(k.lambda);
  s.ok = true;
  return s;
}

}  // namespace clusterdyn::oracle
