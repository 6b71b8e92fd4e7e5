// One table of constraint types (docs/design/extending.md, "How to add a constraint type"):
// the rows of each type, the components of the relative velocity nu they select, and the set K
// its multipliers lie in; and the one place where a solver projects multipliers onto K. The
// rigid constraints (ConstraintType, constraints.hpp) and the contact layer's cone blocks
// (ConeType, contact.hpp; mapped in contact/contact_detail.hpp) are entries of the same table.
#pragma once

#include "clusterdyn/constraints.hpp"

namespace clusterdyn::detail {

/// The set K of a block's multipliers and its dual cone K* (what the constraint velocity may
/// be; Acary & Brogliato 2008).
enum class MultiplierSet {
  Equality,  ///< K = R^k, K* = {0}: bilateral rows (contacts held, welds, loops)
  Coulomb,   ///< 3 rows (t1, t2, n): K = {|lambda_t| <= mu lambda_n}, K* = {mu |s_t| <= s_n}
  Zero,      ///< K = {0}, K* = R^k: rows switched off
  /// k rows (u_1..u_k-1, n): K = {sum (u_i / c_i)^2 <= n^2}, K* = {sum (c_i s_i)^2 <= s_n^2},
  /// the patch contacts' cone (torsional / rolling friction; src/contact/patch_cone.hpp). The
  /// contact layer gives per-row coefficients c_i; projectMultipliers uses c_i = mu for all.
  Elliptic,
};

/// Every constraint type: the five ConstraintType values in their order, then the five ConeType
/// values (kFirstCone + ConeType).
enum class ConstraintKind : int {
  Point,
  Weld,
  Revolute,
  Planar,
  Prismatic,
  Coulomb,
  Bilateral,
  Inactive,
  Torsional,
  Rolling
};
constexpr int kConstraintKinds = static_cast<int>(ConstraintKind::Rolling) + 1;
constexpr int kFirstCone = static_cast<int>(ConstraintKind::Coulomb);

struct ConstraintTypeInfo {
  const char* name;   ///< lower-case name, for messages
  int rows;           ///< rows of the type (0: given per block, 1 to 6)
  int components[6];  ///< the components of nu its rows select (0-2 angular, 3-5 linear)
  MultiplierSet set;  ///< what its multipliers may be
};

/// The table entry of a kind / of a rigid constraint type.
const ConstraintTypeInfo& constraintTypeInfo(ConstraintKind kind);
inline const ConstraintTypeInfo& constraintTypeInfo(ConstraintType t) {
  return constraintTypeInfo(static_cast<ConstraintKind>(static_cast<int>(t)));
}

/// x (`rows` values) onto K of the set (mu: the Coulomb friction coefficient, >= 0).
void projectMultipliers(MultiplierSet set, double mu, int rows, double* x);
/// x onto the dual cone K*.
void projectDualMultipliers(MultiplierSet set, double mu, int rows, double* x);

/// The multiplier update of the proximal loops (proxPv, constrainedAba): lambda <- P_K(lambda +
/// step), each constraint's rows onto its set, and step <- the change made. For a set of
/// equality constraints only (every ConstraintType today) this is lambda += step, bit for bit.
void updateMultipliers(const ConstraintSet& set, VecX& lambda, VecX& step);

}  // namespace clusterdyn::detail
