// The cones of the contact problem: the projections onto K and K* through the table of constraint
// types (constrained/constraint_types.cpp, where the cone kinds are entries beside the rigid
// types), the De Saxce shift, and the residuals that define convergence.
#include <algorithm>
#include <cmath>
#include <limits>

#include "contact/contact_detail.hpp"

namespace clusterdyn {

namespace detail {

void projectCone(const ConeBlock& b, double* x) {
  projectMultipliers(constraintTypeInfo(b.type).set, b.mu, b.rows, x);
}

void projectDualCone(const ConeBlock& b, double* x) {
  projectDualMultipliers(constraintTypeInfo(b.type).set, b.mu, b.rows, x);
}

void deSaxceShift(const ConeBlock& b, const double* sigma, double* s) {
  for (int i = 0; i < b.rows; ++i) s[i] = 0.0;
  if (b.type == ConeType::Coulomb) s[2] = b.mu * std::hypot(sigma[0], sigma[1]);
}

void deSaxceVelocity(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                     ConstVecRef lambda, ContactSolverWorkspace& ws) {
  const int m = static_cast<int>(g.size());
  auto sigma = ws.sigma.head(m);
  sigma.noalias() = G * lambda;
  sigma += g;
  for (const ConeBlock& b : blocks)
    if (b.type == ConeType::Coulomb) sigma[b.row0 + 2] += b.mu * sigma.segment<2>(b.row0).norm();
}

}  // namespace detail

ContactSolverWorkspace::ContactSolverWorkspace(int maxRows) { resize(maxRows); }

void ContactSolverWorkspace::resize(int maxRows) {
  capacity = maxRows;
  for (VecX* v : {&sigma, &x, &y, &yPrev, &w, &rhs, &shift, &polishLambda, &polishC, &polishF,
                  &polishNorms, &polishStep, &polishTheta, &polishKappa})
    v->setZero(maxRows);
  A.setZero(maxRows, maxRows);
  polishJ.setZero(maxRows, maxRows);
  polishMode.assign(maxRows, 0);
  polishPerm.assign(maxRows, 0);
}

Status checkContactProblem(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                           const ContactSolverSettings& s, ContactSolverWorkspace& ws) {
  using detail::contactFail;
  const Eigen::Index m = g.size();
  if (G.rows() != m || G.cols() != m)
    return contactFail(ws, Status::InvalidSize, "G is %ld x %ld, expected %ld x %ld (size of g)",
                       static_cast<long>(G.rows()), static_cast<long>(G.cols()),
                       static_cast<long>(m), static_cast<long>(m));
  if (m > ws.capacity)
    return contactFail(ws, Status::InvalidSize, "%ld rows exceed the workspace capacity %d",
                       static_cast<long>(m), ws.capacity);
  if (!G.allFinite()) return contactFail(ws, Status::NonFinite, "G is not finite");
  if (!g.allFinite()) return contactFail(ws, Status::NonFinite, "g is not finite");
  if (!(s.tolerance > 0.0) || !std::isfinite(s.tolerance))
    return contactFail(ws, Status::InvalidArgument, "tolerance must be positive and finite");
  if (s.maxIterations < 0)
    return contactFail(ws, Status::InvalidArgument, "maxIterations must be >= 0");
  if (!(s.rhoScale > 0.0) || !std::isfinite(s.rhoScale) || !(s.rhoRatio > 1.0) ||
      !(s.rhoFactor > 1.0) || !std::isfinite(s.rhoRatio) || !std::isfinite(s.rhoFactor) ||
      s.rhoEvery < 1 || s.maxRhoUpdates < 0 || s.polishAfter < 0)
    return contactFail(ws, Status::InvalidArgument,
                       "rhoScale > 0, rhoRatio > 1, rhoFactor > 1 (finite) and rhoEvery >= 1 "
                       "are required, maxRhoUpdates >= 0, polishAfter >= 0");
  if (!(s.overRelaxation > 0.0 && s.overRelaxation < 2.0))
    return contactFail(ws, Status::InvalidArgument, "overRelaxation must be in (0, 2)");
  int row = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const ConeBlock& b = blocks[i];
    if (b.row0 != row)
      return contactFail(ws, Status::InvalidArgument,
                         "blocks[%zu].row0 = %d, expected %d (blocks must tile the rows in order)",
                         i, b.row0, row);
    const bool three = b.type == ConeType::Coulomb || b.type == ConeType::Inactive;
    if (three ? b.rows != 3 : (b.type != ConeType::Bilateral || b.rows < 1 || b.rows > 6))
      return contactFail(ws, Status::InvalidArgument,
                         "blocks[%zu]: type %d with %d rows (Coulomb / Inactive: 3, Bilateral: "
                         "1..6)",
                         i, static_cast<int>(b.type), b.rows);
    if (!(b.mu >= 0.0) || !std::isfinite(b.mu))
      return contactFail(ws, Status::InvalidArgument, "blocks[%zu].mu = %g must be >= 0", i, b.mu);
    row += b.rows;
  }
  if (row != m)
    return contactFail(ws, Status::InvalidArgument, "the blocks cover %d rows, g has %ld", row,
                       static_cast<long>(m));
  return Status::Ok;
}

ContactResiduals contactResiduals(const MatX& G, const VecX& g,
                                  const std::vector<ConeBlock>& blocks, ConstVecRef lambda,
                                  ContactSolverWorkspace& ws) {
  detail::deSaxceVelocity(G, g, blocks, lambda, ws);
  ContactResiduals r;
  double proj[6];
  for (const ConeBlock& b : blocks) {
    const double* l = lambda.data() + b.row0;
    const double* sg = ws.sigma.data() + b.row0;
    std::copy(l, l + b.rows, proj);
    detail::projectCone(b, proj);
    double dot = 0.0;
    for (int i = 0; i < b.rows; ++i) {
      r.cone = std::max(r.cone, std::abs(l[i] - proj[i]));
      dot += l[i] * sg[i];
    }
    std::copy(sg, sg + b.rows, proj);
    detail::projectDualCone(b, proj);
    for (int i = 0; i < b.rows; ++i) r.velocity = std::max(r.velocity, std::abs(sg[i] - proj[i]));
    double norm = 0.0;  // |lambda_b|: the complementarity as a velocity along the impulse
    for (int i = 0; i < b.rows; ++i) norm = std::max(norm, std::abs(l[i]));
    if (norm > 0.0) r.complementarity = std::max(r.complementarity, std::abs(dot) / norm);
  }
  // A NaN anywhere must not read as converged.
  if (!std::isfinite(r.cone + r.velocity + r.complementarity))
    r.cone = r.velocity = r.complementarity = std::numeric_limits<double>::infinity();
  return r;
}

}  // namespace clusterdyn
