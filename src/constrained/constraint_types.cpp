// The table of constraint types and the projections onto their multiplier sets
// (constrained/constraint_types.hpp).
#include "constrained/constraint_types.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "contact/patch_cone.hpp"

namespace clusterdyn::detail {

namespace {

/// Rows select components of nu = [angular; linear] (constraints.hpp): Revolute frees the
/// rotation about z, Planar the motion in the xy plane, Prismatic the translation along z.
constexpr ConstraintTypeInfo kTable[kConstraintKinds] = {
    {"point", 3, {3, 4, 5}, MultiplierSet::Equality},
    {"weld", 6, {0, 1, 2, 3, 4, 5}, MultiplierSet::Equality},
    {"revolute", 5, {0, 1, 3, 4, 5}, MultiplierSet::Equality},
    {"planar", 3, {0, 1, 5}, MultiplierSet::Equality},
    {"prismatic", 5, {0, 1, 2, 3, 4}, MultiplierSet::Equality},
    {"coulomb", 3, {3, 4, 5}, MultiplierSet::Coulomb},  // (t1, t2, n) in the contact frame
    {"bilateral", 0, {0, 1, 2, 3, 4, 5}, MultiplierSet::Equality},
    {"inactive", 0, {0, 1, 2, 3, 4, 5}, MultiplierSet::Zero},  // 3 (a point) or 1-6 rows
    // Patch contacts (contact frame): torsion about n, then (t1, t2, n); rolling about t1, t2,
    // torsion, (t1, t2, n).
    {"torsional", 4, {2, 3, 4, 5}, MultiplierSet::Elliptic},
    {"rolling", 6, {0, 1, 2, 3, 4, 5}, MultiplierSet::Elliptic},
};

static_assert(static_cast<int>(ConstraintType::Prismatic) + 1 == kFirstCone,
              "ConstraintType values are the first entries of ConstraintKind");

/// Projection of (t1, t2, n) onto the second-order cone {|t| <= slope n} (Boyd & Vandenberghe
/// 2004, ex. 8.3(c)): inside: unchanged; in the polar cone {slope |t| <= -n}: zero; otherwise
/// onto the boundary ray through the tangential direction.
void projectSecondOrderCone(double slope, double* x) {
  const double tn = std::hypot(x[0], x[1]), n = x[2];
  if (n >= 0.0 && tn <= slope * n) return;
  if (slope * tn <= -n) {
    x[0] = x[1] = x[2] = 0.0;
    return;
  }
  const double nn = (slope * tn + n) / (slope * slope + 1.0);  // > 0 here
  const double scale = tn > 0.0 ? slope * nn / tn : 0.0;
  x[0] *= scale;
  x[1] *= scale;
  x[2] = nn;
}

}  // namespace

const ConstraintTypeInfo& constraintTypeInfo(ConstraintKind kind) {
  return kTable[static_cast<int>(kind)];
}

void projectMultipliers(MultiplierSet set, double mu, int rows, double* x) {
  switch (set) {
    case MultiplierSet::Equality:  // K = R^k
      return;
    case MultiplierSet::Coulomb:
      projectSecondOrderCone(mu, x);
      return;
    case MultiplierSet::Zero:  // K = {0}
      for (int i = 0; i < rows; ++i) x[i] = 0.0;
      return;
    case MultiplierSet::Elliptic: {  // every coefficient mu
      const double c[5] = {mu, mu, mu, mu, mu};
      projectEllipticCone(c, rows, x);
      return;
    }
  }
}

void projectDualMultipliers(MultiplierSet set, double mu, int rows, double* x) {
  switch (set) {
    case MultiplierSet::Equality:  // K* = {0}
      for (int i = 0; i < rows; ++i) x[i] = 0.0;
      return;
    case MultiplierSet::Coulomb:  // K* = {mu |t| <= n}
      if (mu > 0.0)
        projectSecondOrderCone(1.0 / mu, x);
      else
        x[2] = std::max(x[2], 0.0);  // mu = 0: only n >= 0
      return;
    case MultiplierSet::Zero:  // K* = R^k
      return;
    case MultiplierSet::Elliptic: {  // K* = {sum (mu s_i)^2 <= s_n^2}: coefficients 1 / mu
      const double inv = mu > 0.0 ? 1.0 / mu : std::numeric_limits<double>::infinity();
      const double c[5] = {inv, inv, inv, inv, inv};
      projectEllipticCone(c, rows, x);
      return;
    }
  }
}

void updateMultipliers(const ConstraintSet& set, VecX& lambda, VecX& step) {
  bool equality = true;  // every ConstraintType today: the plain sum
  for (const RigidConstraint& c : set.constraints())
    equality = equality && constraintTypeInfo(c.type).set == MultiplierSet::Equality;
  if (equality) {
    lambda += step;
    return;
  }
  for (int i = 0; i < set.size(); ++i) {
    const RigidConstraint& c = set.constraints()[i];
    const int r0 = set.rowOffset(i), k = c.rows();
    double x[6];
    for (int r = 0; r < k; ++r) x[r] = lambda[r0 + r] + step[r0 + r];
    // Rigid types carry no friction coefficient (ConstraintSet::add refuses a Coulomb type:
    // cones are the contact layer's blocks), so mu is not used here.
    projectMultipliers(constraintTypeInfo(c.type).set, 0.0, k, x);
    for (int r = 0; r < k; ++r) {
      step[r0 + r] = x[r] - lambda[r0 + r];
      lambda[r0 + r] = x[r];
    }
  }
}

}  // namespace clusterdyn::detail
