// Internal building blocks of the contact solvers: the per-cone-type projections (cones.cpp).
#pragma once

#include <cstdio>

#include "clusterdyn/contact.hpp"
#include "constrained/constraint_types.hpp"

namespace clusterdyn::detail {

/// The table entry of a cone block's type: the ConeType values follow the rigid types.
inline const ConstraintTypeInfo& constraintTypeInfo(ConeType t) {
  static_assert(
      static_cast<int>(ConeType::Coulomb) == 0 && static_cast<int>(ConeType::Bilateral) == 1 &&
          static_cast<int>(ConeType::Inactive) == 2 && static_cast<int>(ConeType::Torsional) == 3 &&
          static_cast<int>(ConeType::Rolling) == 4 &&
          kFirstCone + 2 == static_cast<int>(ConstraintKind::Inactive) &&
          kFirstCone + 4 == static_cast<int>(ConstraintKind::Rolling),
      "ConeType values are ConstraintKind's last entries, in order");
  return constraintTypeInfo(static_cast<ConstraintKind>(kFirstCone + static_cast<int>(t)));
}

/// A patch cone block (Torsional, Rolling: the elliptic cone of src/contact/patch_cone.hpp).
inline bool isPatchCone(ConeType t) { return t == ConeType::Torsional || t == ConeType::Rolling; }
/// The coefficients of a patch block's friction rows, in row order (rows - 1 of them): Torsional
/// (muTorsion, mu, mu), Rolling (muRolling, muRolling, muTorsion, mu, mu).
void patchCoefficients(const ConeBlock& b, double* c);

/// x <- Proj_K(x) for the block's cone K (x: its `rows` entries).
void projectCone(const ConeBlock& b, double* x);
/// x <- Proj_K*(x), K* the dual cone of the block.
void projectDualCone(const ConeBlock& b, double* x);
/// The De Saxce shift of the block for the constraint velocity sigma: added to the normal row of
/// a Coulomb block (mu |sigma_t|) or a patch block (|D sigma_u|), zero for the other types.
/// Writes `rows` entries of s.
void deSaxceShift(const ConeBlock& b, const double* sigma, double* s);

/// ws.sigma = G lambda + g + s(G lambda + g) (the De Saxce velocity of lambda).
void deSaxceVelocity(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                     ConstVecRef lambda, ContactSolverWorkspace& ws);

/// Newton polish of `start` (in K) on the contact modes it identifies (admm_polish.cpp): true
/// when the polished impulse, left in ws.polishLambda, has all three residuals <= the tolerance
/// (returned in `residuals`); steps: the Newton steps taken. activeSetSteps > 0: the active-set
/// solve from a warm start (phase 1 only, at most that many Newton steps); 0: the full polish.
bool polishContactSolution(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                           const ContactSolverSettings& settings, ContactSolverWorkspace& ws,
                           ConstVecRef start, ContactResiduals& residuals, int& steps,
                           int activeSetSteps = 0);

/// cd.lambdaRows (the impulses on the rows of problem.rows(), world-aligned) from cd.lambda (in
/// contact frames): lambdaRows = T^T lambda, T the map from the set's rows to the problem's.
void contactImpulsesOnRows(const ContactProblem& problem, ContactData& cd);

/// Status s with the message in ws.lastError (printf format with at least one argument).
template <typename Arg, typename... Args>
Status contactFail(ContactSolverWorkspace& ws, Status s, const char* fmt, Arg arg, Args... args) {
  std::snprintf(ws.lastError, sizeof(ws.lastError), fmt, arg, args...);
  return s;
}
/// Status s with a fixed message (printed through "%s": the text is not a format).
inline Status contactFail(ContactSolverWorkspace& ws, Status s, const char* message) {
  std::snprintf(ws.lastError, sizeof(ws.lastError), "%s", message);
  return s;
}

/// The end of a contact solve (PGS, ADMM): NotConverged with the residuals when the iteration
/// did not reach the tolerance, else Ok with the message cleared.
inline Status contactFinish(ContactSolverWorkspace& ws, const ContactSolverResult& result,
                            const ContactSolverSettings& settings, const char* solver) {
  if (!result.converged)
    return contactFail(ws, Status::NotConverged,
                       "%s: residuals (cone %.3g, velocity %.3g, complementarity %.3g) > tolerance "
                       "%.3g after %d iterations",
                       solver, result.residuals.cone, result.residuals.velocity,
                       result.residuals.complementarity, settings.tolerance, result.iterations);
  ws.lastError[0] = '\0';
  return Status::Ok;
}

}  // namespace clusterdyn::detail

/// Returns the status of a contact-solver call when it is not Ok.
#define CDYN_CONTACT_TRY(expr)                               \
  do {                                                       \
    const ::clusterdyn::Status cdyn_s_ = (expr);             \
    if (cdyn_s_ != ::clusterdyn::Status::Ok) return cdyn_s_; \
  } while (0)
