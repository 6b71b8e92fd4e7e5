// ADMM on the De Saxce-corrected contact problem (Carpentier, Le Lidec, Montaut, Mansard 2024;
// the ADMMContactSolver of Pinocchio 3): the splitting x = y of
//   min 1/2 x^T G x + (g + s)^T x + I_K(y),
// with the De Saxce shift s refreshed every iteration, and the penalty rho adapted by residual
// balancing (Boyd, Parikh, Chu, Peleato, Eckstein 2011, §3.4.1), and a Newton polish on the
// contact modes of a stalled iterate (admm_polish.cpp), first tried on the warm start's modes
// (the active-set solve: no ADMM iteration when the contact modes did not change). The returned
// impulse is y (in K by construction, or the polish's when it met the tolerance); convergence is
// judged on its three residuals (cones.cpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "contact/contact_cholesky.hpp"
#include "contact/contact_detail.hpp"

namespace clusterdyn {

namespace {

/// Factorizes G + rho I into the lower triangle of ws.A (contact_cholesky.hpp). False when a
/// pivot is not positive (not SPD, or NaN).
bool factor(const MatX& G, double rho, ContactSolverWorkspace& ws) {
  const int m = static_cast<int>(G.rows());
  const Eigen::Index lda = ws.A.outerStride();
  double* L = ws.A.data();
  for (int j = 0; j < m; ++j) {
    double* lj = L + j * lda;
    const double* gj = G.data() + j * G.outerStride();
    for (int i = j; i < m; ++i) lj[i] = gj[i];
    lj[j] += rho;
  }
  return detail::cholesky(L, lda, m, 0.0);
}

/// x <- (G + rho I)^-1 x with the factor of ws.A.
void solveFactored(const ContactSolverWorkspace& ws, int m, double* x) {
  detail::choleskySolve(ws.A.data(), ws.A.outerStride(), m, x);
}

/// The Newton polish of the iterate ws.y (admm_polish.cpp): true when it met the tolerance, then
/// ws.y holds the polished impulse and result its residuals.
__attribute__((noinline)) bool tryPolish(const MatX& G, const VecX& g,
                                         const std::vector<ConeBlock>& blocks,
                                         const ContactSolverSettings& settings,
                                         ContactSolverWorkspace& ws, ContactSolverResult& result) {
  const Eigen::Index m = g.size();
  ContactResiduals r;
  int steps = 0;
  const bool ok = detail::polishContactSolution(G, g, blocks, settings, ws, ws.y.head(m), r, steps);
  result.polishSteps += steps;
  if (!ok) return false;
  ws.y.head(m) = ws.polishLambda.head(m);
  result.residuals = r;
  result.converged = result.polished = true;
  return true;
}

/// The active-set solve from the warm start ws.y (in K): Newton on its contact modes, at most
/// settings.activeSetSteps steps (phase 1 of admm_polish.cpp). True when the result met the
/// tolerance, then ws.y holds it and result its residuals; else ws.y is unchanged.
bool tryActiveSet(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                  const ContactSolverSettings& settings, ContactSolverWorkspace& ws,
                  ContactSolverResult& result) {
  const Eigen::Index m = g.size();
  ContactResiduals r;
  const bool ok = detail::polishContactSolution(G, g, blocks, settings, ws, ws.y.head(m), r,
                                                result.activeSetSteps, settings.activeSetSteps);
  if (!ok) return false;
  ws.y.head(m) = ws.polishLambda.head(m);
  result.residuals = r;
  result.converged = result.activeSet = true;
  return true;
}

}  // namespace

Status solveContactAdmm(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                        const ContactSolverSettings& settings, ContactSolverWorkspace& ws,
                        VecX& lambda, ContactSolverResult& result) {
  CDYN_CONTACT_TRY(checkContactProblem(G, g, blocks, settings, ws));
  const int m = static_cast<int>(g.size());
  if (lambda.size() != m)
    return detail::contactFail(ws, Status::InvalidSize, "lambda has size %ld, expected %d",
                               static_cast<long>(lambda.size()), m);
  result = ContactSolverResult();
  if (!lambda.allFinite()) lambda.setZero();  // an unusable warm start: cold start
  auto x = ws.x.head(m), y = ws.y.head(m), yPrev = ws.yPrev.head(m), w = ws.w.head(m),
       rhs = ws.rhs.head(m), s = ws.shift.head(m), sigma = ws.sigma.head(m);
  y = lambda;
  for (const ConeBlock& b : blocks) detail::projectCone(b, y.data() + b.row0);
  // The warm start's contact modes (sticking, sliding, separated) solved exactly by Newton
  // before any ADMM iteration: a resting or steadily sliding contact set costs one small solve.
  // Taken only when its three residuals meet the tolerance; otherwise ADMM starts from y as
  // without it (the attempt leaves x, y, w untouched).
  if (settings.activeSetSteps > 0 && tryActiveSet(G, g, blocks, settings, ws, result)) {
    lambda = y;
    return detail::contactFinish(ws, result, settings, "ADMM");
  }
  x = y;
  // Dual variable: minus the (dual-cone part of the) De Saxce velocity of the warm start.
  detail::deSaxceVelocity(G, g, blocks, y, ws);
  w = -sigma;
  for (const ConeBlock& b : blocks) {
    detail::projectDualCone(b, sigma.data() + b.row0);  // sigma is scratch here
    w.segment(b.row0, b.rows) = -sigma.segment(b.row0, b.rows);
  }
  const double meanDiagonal = m ? G.diagonal().sum() / m : 1.0;
  double rho = settings.rhoScale * (meanDiagonal > 0.0 ? meanDiagonal : 1.0);
  if (!factor(G, rho, ws))
    return detail::contactFail(ws, Status::NotPositiveDefinite,
                               "ADMM: G + rho I is not positive definite (G not symmetric "
                               "positive semi-definite?)");
  const double alpha = settings.overRelaxation;
  int reversals = 0, lastDirection = 0;  // of rho's changes
  // The three residuals cost about as much as an iteration: they are evaluated when the last
  // iteration changed the velocities by at most kCheckRatio times the tolerance (the
  // iterates' change |x - y|, |y - y_prev| seen through the largest diagonal of G), at the
  // first and the last iteration. A skipped check can only delay the stop: Ok is still decided
  // on the residuals of the returned y.
  constexpr double kCheckRatio = 100.0;
  const double diagonalMax = m ? G.diagonal().cwiseAbs().maxCoeff() : 0.0;
  double change = std::numeric_limits<double>::infinity();
  int checkpoint = settings.polishAfter > 0 ? std::min(settings.polishAfter, settings.maxIterations)
                                            : settings.maxIterations;
  for (int it = 0;; ++it) {
    result.iterations = it;
    if (it == 0 || it == settings.maxIterations ||
        !(diagonalMax * change > kCheckRatio * settings.tolerance)) {
      result.residuals = contactResiduals(G, g, blocks, y, ws);  // sigma: De Saxce velocity
      const ContactResiduals& r = result.residuals;
      result.converged = r.cone <= settings.tolerance && r.velocity <= settings.tolerance &&
                         r.complementarity <= settings.tolerance;
      if (result.converged || !std::isfinite(r.velocity)) break;
    }
    // A stalled solve: the Newton polish on the modes of y every polishAfter iterations and at
    // the last one (out of line: the common solve never gets there).
    if (it == checkpoint) {
      if (settings.polishAfter > 0 && tryPolish(G, g, blocks, settings, ws, result)) break;
      if (it == settings.maxIterations) break;
      checkpoint = std::min(checkpoint + settings.polishAfter, settings.maxIterations);
    }
    // The shift from the dual estimate of the velocity, -w (as Pinocchio's solver computes it
    // from its dual variable): s_n = mu |w_t| (the shift moves the normal row only).
    for (const ConeBlock& b : blocks) {
      for (int i = 0; i < b.rows; ++i) s[b.row0 + i] = 0.0;
      if (b.type == ConeType::Coulomb)
        s[b.row0 + 2] = b.mu * w.segment<2>(b.row0).norm();
      else if (detail::isPatchCone(b.type))
        detail::deSaxceShift(b, &w[b.row0], &s[b.row0]);
    }
    rhs = rho * y - w - g - s;  // x-update: (G + rho I) x = rho y - w - g - s
    solveFactored(ws, m, rhs.data());
    x = rhs;
    x = alpha * x + (1.0 - alpha) * y;  // over-relaxation
    yPrev = y;
    y = x + w / rho;  // y-update: projection onto K
    for (const ConeBlock& b : blocks) detail::projectCone(b, y.data() + b.row0);
    w += rho * (x - y);  // dual update
    change = std::max((x - y).cwiseAbs().maxCoeff(), (y - yPrev).cwiseAbs().maxCoeff());
    // Residual balancing on the primal |x - y| and dual rho |y - y_prev| residuals. Only
    // reversals of direction are capped (balancing that cycles); a monotone run is not (it
    // stops at the balance, or at the bounds of rho): an ill-conditioned G can need rho many
    // factors away from its start.
    if ((it + 1) % settings.rhoEvery == 0 && reversals <= settings.maxRhoUpdates) {
      const double primal = (x - y).cwiseAbs().maxCoeff();
      const double dual = rho * (y - yPrev).cwiseAbs().maxCoeff();
      double next = rho;
      if (primal > settings.rhoRatio * dual)
        next = rho * settings.rhoFactor;
      else if (dual > settings.rhoRatio * primal)
        next = rho / settings.rhoFactor;
      next = std::min(std::max(next, 1e-12 * meanDiagonal), 1e12 * meanDiagonal);
      if (next != rho && std::isfinite(next) && factor(G, next, ws)) {
        const int direction = next > rho ? 1 : -1;
        if (lastDirection != 0 && direction != lastDirection) ++reversals;
        lastDirection = direction;
        rho = next;
        ++result.rhoUpdates;
      } else if (next != rho) {
        factor(G, rho, ws);  // keep the previous factorization usable
      }
    }
  }
  result.rho = rho;
  if (!y.allFinite()) {  // never hand out a NaN
    lambda.setZero();
    result.residuals = contactResiduals(G, g, blocks, lambda, ws);
    result.converged = false;
    return detail::contactFail(ws, Status::NonFinite, "ADMM: the iterates overflowed");
  }
  lambda = y;
  return detail::contactFinish(ws, result, settings, "ADMM");
}

}  // namespace clusterdyn
