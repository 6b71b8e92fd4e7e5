// The cones of the contact problem: the projections onto K and K* through the table of constraint
// types (constrained/constraint_types.cpp, where the cone kinds are entries beside the rigid
// types), the De Saxce shift, and the residuals that define convergence.
#include <algorithm>
#include <cmath>
#include <limits>

#include "contact/contact_detail.hpp"
#include "contact/patch_cone.hpp"

namespace clusterdyn {

namespace detail {

void patchCoefficients(const ConeBlock& b, double* c) {
  if (b.type == ConeType::Torsional) {
    c[0] = b.muTorsion;
    c[1] = c[2] = b.mu;
  } else {
    c[0] = c[1] = b.muRolling;
    c[2] = b.muTorsion;
    c[3] = c[4] = b.mu;
  }
}

namespace {

/// |D sigma_u| of a patch block: the De Saxce shift of its normal row.
double patchShift(const ConeBlock& b, const double* sigma) {
  double c[5], s2 = 0.0;
  patchCoefficients(b, c);
  for (int i = 0; i + 1 < b.rows; ++i) s2 += (c[i] * sigma[i]) * (c[i] * sigma[i]);
  return std::sqrt(s2);
}

}  // namespace

// The projections dispatch through the table (MultiplierSet of the block's kind); the elliptic
// cones of the patch contacts take their per-row coefficients from the block.
void projectCone(const ConeBlock& b, double* x) {
  const MultiplierSet set = constraintTypeInfo(b.type).set;
  if (set != MultiplierSet::Elliptic) return projectMultipliers(set, b.mu, b.rows, x);
  double c[5];
  patchCoefficients(b, c);
  projectEllipticCone(c, b.rows, x);
}

void projectDualCone(const ConeBlock& b, double* x) {
  const MultiplierSet set = constraintTypeInfo(b.type).set;
  if (set != MultiplierSet::Elliptic) return projectDualMultipliers(set, b.mu, b.rows, x);
  double c[5];  // K* = {|D s_u| <= s_n}: the elliptic cone with coefficients 1 / c_i
  patchCoefficients(b, c);
  for (int i = 0; i + 1 < b.rows; ++i)
    c[i] = c[i] > 0.0 ? 1.0 / c[i] : std::numeric_limits<double>::infinity();
  projectEllipticCone(c, b.rows, x);
}

void deSaxceShift(const ConeBlock& b, const double* sigma, double* s) {
  for (int i = 0; i < b.rows; ++i) s[i] = 0.0;
  if (b.type == ConeType::Coulomb) s[2] = b.mu * std::hypot(sigma[0], sigma[1]);
  if (isPatchCone(b.type)) s[b.rows - 1] = patchShift(b, sigma);
}

void deSaxceVelocity(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                     ConstVecRef lambda, ContactSolverWorkspace& ws) {
  const int m = static_cast<int>(g.size());
  auto sigma = ws.sigma.head(m);
  sigma.noalias() = G * lambda;
  sigma += g;
  for (const ConeBlock& b : blocks) {
    if (b.type == ConeType::Coulomb)
      sigma[b.row0 + 2] += b.mu * sigma.segment<2>(b.row0).norm();
    else if (isPatchCone(b.type))
      sigma[b.row0 + b.rows - 1] += patchShift(b, sigma.data() + b.row0);
  }
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
      s.rhoEvery < 1 || s.maxRhoUpdates < 0 || s.polishAfter < 0 || s.activeSetSteps < 0)
    return contactFail(ws, Status::InvalidArgument,
                       "rhoScale > 0, rhoRatio > 1, rhoFactor > 1 (finite) and rhoEvery >= 1 "
                       "are required, maxRhoUpdates >= 0, polishAfter >= 0, activeSetSteps >= 0");
  if (!(s.overRelaxation > 0.0 && s.overRelaxation < 2.0))
    return contactFail(ws, Status::InvalidArgument, "overRelaxation must be in (0, 2)");
  int row = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const ConeBlock& b = blocks[i];
    if (b.row0 != row)
      return contactFail(ws, Status::InvalidArgument,
                         "blocks[%zu].row0 = %d, expected %d (blocks must tile the rows in order)",
                         i, b.row0, row);
    const int fixed = b.type == ConeType::Coulomb     ? 3
                      : b.type == ConeType::Torsional ? 4
                      : b.type == ConeType::Rolling   ? 6
                                                      : 0;
    const bool known = fixed > 0 || b.type == ConeType::Bilateral || b.type == ConeType::Inactive;
    if (!known || (fixed > 0 ? b.rows != fixed : (b.rows < 1 || b.rows > 6)))
      return contactFail(ws, Status::InvalidArgument,
                         "blocks[%zu]: type %d with %d rows (Coulomb: 3, Torsional: 4, Rolling: "
                         "6, Bilateral / Inactive: 1..6)",
                         i, static_cast<int>(b.type), b.rows);
    if (!(b.mu >= 0.0) || !std::isfinite(b.mu))
      return contactFail(ws, Status::InvalidArgument, "blocks[%zu].mu = %g must be >= 0", i, b.mu);
    if (!(b.muTorsion >= 0.0) || !std::isfinite(b.muTorsion) || !(b.muRolling >= 0.0) ||
        !std::isfinite(b.muRolling))
      return contactFail(ws, Status::InvalidArgument,
                         "blocks[%zu]: muTorsion = %g, muRolling = %g must be >= 0 and finite", i,
                         b.muTorsion, b.muRolling);
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
