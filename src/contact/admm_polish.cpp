// Newton polish of a contact solution on its identified contact modes (the active-set step after
// ADMM of Carpentier, Le Lidec, Montaut, Mansard 2024, where ADMM stalls on a near-singular
// Delassus matrix). From an iterate lambda in K, each block gets a mode:
//   separated (lambda_b = 0; also Inactive blocks): no unknowns;
//   sticking (Bilateral blocks, Coulomb blocks inside the cone): lambda_b free, c_b = 0;
//   sliding (Coulomb on the cone boundary): lambda_t = mu lambda_n u(theta), u = (cos, sin),
//     unknowns (theta, kappa, lambda_n), equations c_t + kappa u = 0 (slip -kappa u opposite the
//     friction, kappa >= 0) and c_n = 0;
//   frictionless (Coulomb with mu = 0): lambda_t = 0, lambda_n free, c_n = 0;
// with c = G lambda + g. The square system F(z) = 0 (one slot per row) is solved by Newton steps
// whose linear solve is a Householder QR with column pivoting truncated at a relative pivot of
// kRankTol (G is singular with more contact rows than degrees of freedom: the basic solution, no
// step along the numerically null directions). A block that leaves its mode's region (impulse out
// of the cone, negative normal impulse, slip along the friction, a separated contact
// approaching) changes mode (phase 1). When that fails (the residual left lies along a near-null
// eigenvector of G: a stance that is nearly a mechanism, whose exact solution has the slip
// directions turned far from the iterate's), phase 2 keeps the iterate's modes and takes damped
// Newton steps with those directions resolved (a slip direction turns by at most 0.2 rad per
// step, a normal impulse keeps half of itself). The candidate is accepted only when its three
// ContactResiduals are <= the tolerance; the caller keeps its iterate otherwise.
#include <algorithm>
#include <cmath>

#include "contact/contact_cholesky.hpp"
#include "contact/contact_detail.hpp"

namespace clusterdyn::detail {

namespace {

enum Mode : int { kSeparated = 0, kSticking = 1, kSliding = 2, kFrictionless = 3 };

/// Phase 1: Newton steps with mode changes, the linear solve cut at this relative pivot.
constexpr int kNewtonSteps = 8;
constexpr double kRankTol = 1e-10;
/// Phase 2 (when phase 1 failed): damped Newton steps on the iterate's modes, kept fixed, with
/// the near-null directions of G resolved (pivots down to kFullRankTol), each step cut so that
/// no slip direction turns by more than kMaxTurn (rad) and no normal impulse loses more than
/// half of itself.
constexpr int kDampedSteps = 30;
constexpr double kFullRankTol = 1e-14;
constexpr double kMaxTurn = 0.2;

/// x <- the basic least-squares solution of A x = b (A: n x n in ws.polishJ, overwritten by its
/// QR; b in x) by Householder QR with column pivoting (Businger & Golub 1965), columns whose
/// pivot is below rankTol times the first are dropped (x = 0 there). No allocation. Returns the
/// rank (the columns kept).
int pivotedQrSolve(ContactSolverWorkspace& ws, int n, double rankTol, double* x) {
  auto A = ws.polishJ.topLeftCorner(n, n);
  auto norms = ws.polishNorms.head(n);
  int* perm = ws.polishPerm.data();
  for (int j = 0; j < n; ++j) {
    perm[j] = j;
    norms[j] = A.col(j).squaredNorm();
  }
  int rank = 0;
  double first = 0.0;
  for (int k = 0; k < n; ++k) {
    int p = k;
    for (int j = k + 1; j < n; ++j)
      if (norms[j] > norms[p]) p = j;
    if (p != k) {
      A.col(k).swap(A.col(p));
      std::swap(norms[k], norms[p]);
      std::swap(perm[k], perm[p]);
    }
    const double alpha = A.col(k).tail(n - k).norm();
    if (k == 0) first = alpha;
    if (!(alpha > rankTol * first)) break;
    ++rank;
    // Householder vector v (in A's column k below the diagonal), R_kk = -sign(a_kk) alpha.
    const double akk = A(k, k);
    const double rkk = akk > 0.0 ? -alpha : alpha;
    A(k, k) = akk - rkk;
    const double vnorm2 = A.col(k).tail(n - k).squaredNorm();
    if (vnorm2 > 0.0) {
      for (int j = k + 1; j < n; ++j) {
        const double f = 2.0 * A.col(k).tail(n - k).dot(A.col(j).tail(n - k)) / vnorm2;
        A.col(j).tail(n - k) -= f * A.col(k).tail(n - k);
      }
      double d = 0.0;
      for (int i = k; i < n; ++i) d += A(i, k) * x[i];
      const double f = 2.0 * d / vnorm2;
      for (int i = k; i < n; ++i) x[i] -= f * A(i, k);
    }
    A(k, k) = rkk;  // R's diagonal (the Householder vector is no longer needed)
    for (int j = k + 1; j < n; ++j) norms[j] = A.col(j).tail(n - k - 1).squaredNorm();
  }
  // Back substitution on the leading rank x rank block of R (its strict upper triangle is in A).
  auto t = ws.polishStep.head(n);
  t.setZero();
  for (int i = rank - 1; i >= 0; --i) {
    double s = x[i];
    for (int j = i + 1; j < rank; ++j) s -= A(i, j) * t[j];
    t[i] = s / A(i, i);
  }
  for (int j = 0; j < n; ++j) x[j] = 0.0;
  for (int j = 0; j < rank; ++j) x[perm[j]] = t[j];
  return rank;
}

/// The Newton step of a set of modes without sliding blocks, where F(z) = 0 is linear: on the
/// free rows A (the sticking blocks' rows, the frictionless blocks' normal rows) the Jacobian is
/// G_AA, elsewhere the identity with F = 0. d: F in, the step out (zero off A), by a Cholesky
/// factorization of G_AA (left-looking, in ws.polishJ). False, d unchanged, when a pivot is not
/// above kRankTol times the largest diagonal of G_AA (singular or nearly: the pivoted QR's
/// truncated solution is taken instead).
bool choleskyStep(const MatX& G, const std::vector<ConeBlock>& blocks, ContactSolverWorkspace& ws,
                  double* d) {
  int* idx = ws.polishPerm.data();
  int n = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const int r = blocks[b].row0;
    if (ws.polishMode[b] == kSticking)
      for (int i = 0; i < blocks[b].rows; ++i) idx[n++] = r + i;
    else if (ws.polishMode[b] == kFrictionless)
      idx[n++] = r + 2;
  }
  double largest = 0.0;
  for (int j = 0; j < n; ++j) largest = std::max(largest, G(idx[j], idx[j]));
  const Eigen::Index lda = ws.polishJ.outerStride();
  double* L = ws.polishJ.data();
  for (int j = 0; j < n; ++j) {  // G_AA's lower triangle
    double* lj = L + j * lda;
    const double* gj = G.data() + idx[j] * G.outerStride();
    for (int i = j; i < n; ++i) lj[i] = gj[idx[i]];
  }
  if (!cholesky(L, lda, n, kRankTol * largest)) return false;
  double* x = ws.polishNorms.data();  // L L^T x = F_A
  for (int k = 0; k < n; ++k) x[k] = d[idx[k]];
  choleskySolve(L, lda, n, x);
  for (int k = 0; k < n; ++k) d[idx[k]] = x[k];
  return true;
}

/// lambda of the sliding blocks from (theta, lambda_n); zero on the separated ones.
void applyModes(const std::vector<ConeBlock>& blocks, const ContactSolverWorkspace& ws,
                double* lambda) {
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const int r = blocks[b].row0;
    switch (ws.polishMode[b]) {
      case kSeparated:
        for (int i = 0; i < blocks[b].rows; ++i) lambda[r + i] = 0.0;
        break;
      case kSliding: {
        const double th = ws.polishTheta[b], t = blocks[b].mu * lambda[r + 2];
        lambda[r] = t * std::cos(th);
        lambda[r + 1] = t * std::sin(th);
        break;
      }
      case kFrictionless:
        lambda[r] = lambda[r + 1] = 0.0;
        break;
      default:
        break;
    }
  }
}

/// Sliding initial values from lambda_t's direction and the slip along it.
void startSliding(const ConeBlock& b, int index, const double* lambda, const double* c,
                  ContactSolverWorkspace& ws) {
  const int r = b.row0;
  const double th = std::atan2(lambda[r + 1], lambda[r]);
  ws.polishTheta[index] = th;
  ws.polishKappa[index] = std::max(0.0, -(std::cos(th) * c[r] + std::sin(th) * c[r + 1]));
  ws.polishMode[index] = kSliding;
}

/// The modes of the iterate lam; c = G lam + g (ws.polishC) is evaluated when a block slides.
void identifyModes(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                   ConstVecRef lam, double largest, ContactSolverWorkspace& ws) {
  const int m = static_cast<int>(g.size());
  auto c = ws.polishC.head(m);
  bool haveC = false;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const ConeBlock& k = blocks[b];
    const double* l = lam.data() + k.row0;
    int& mode = ws.polishMode[b];
    if (k.type == ConeType::Inactive)
      mode = kSeparated;
    else if (k.type == ConeType::Bilateral)
      mode = kSticking;
    else if (!(l[2] > 1e-14 * largest))
      mode = kSeparated;
    else if (k.mu == 0.0)
      mode = kFrictionless;
    else if (std::hypot(l[0], l[1]) < k.mu * l[2] * (1.0 - 1e-9))
      mode = kSticking;
    else {
      if (!haveC) {
        c.noalias() = G * lam;
        c += g;
        haveC = true;
      }
      startSliding(k, static_cast<int>(b), lam.data(), c.data(), ws);
    }
  }
}

/// Newton steps on F(z) = 0 from ws.polishLambda and the modes in ws.polishMode: true when an
/// iterate meets the tolerance (left in ws.polishLambda). damped: the modes stay fixed and the
/// steps are cut (phase 2); else blocks change mode when they leave their region (phase 1).
/// activeSet (the active-set solve from a warm start, rarely exact itself): the start is not
/// checked, only the Newton iterates; a step without sliding blocks by choleskyStep when G_AA is
/// definite; false at a singular Newton system (the impulses on those modes are not unique).
bool newtonOnModes(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                   const ContactSolverSettings& settings, ContactSolverWorkspace& ws, int maxSteps,
                   double rankTol, bool damped, bool activeSet, ContactResiduals& residuals,
                   int& steps) {
  const int m = static_cast<int>(g.size());
  auto lam = ws.polishLambda.head(m), c = ws.polishC.head(m), F = ws.polishF.head(m);
  auto J = ws.polishJ.topLeftCorner(m, m);
  for (int step = 0;; ++step) {
    applyModes(blocks, ws, lam.data());
    // The candidate: lam projected onto K (a sliding impulse is on the boundary up to rounding),
    // judged by its residuals as returned.
    if (step > 0 || !activeSet) {
      auto candidate = ws.polishStep.head(m);
      candidate = lam;
      for (const ConeBlock& k : blocks) projectCone(k, candidate.data() + k.row0);
      residuals = contactResiduals(G, g, blocks, candidate, ws);
      if (residuals.cone <= settings.tolerance && residuals.velocity <= settings.tolerance &&
          residuals.complementarity <= settings.tolerance) {
        lam = candidate;
        return true;
      }
    }
    if (step == maxSteps) return false;
    ++steps;
    // F(z) and its Jacobian: dF/dz = G dlambda/dz + the direct terms of the sliding rows.
    c.noalias() = G * lam;
    c += g;
    bool linear = true;  // no sliding block: F is linear in z
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const ConeBlock& k = blocks[b];
      const int r = k.row0;
      switch (ws.polishMode[b]) {
        case kSeparated:  // z_b = 0: F = 0
          for (int i = 0; i < k.rows; ++i) F[r + i] = 0.0;
          break;
        case kSticking:
          for (int i = 0; i < k.rows; ++i) F[r + i] = c[r + i];
          break;
        case kFrictionless:  // slots t1, t2 trivial, lambda_n free
          F[r] = F[r + 1] = 0.0;
          F[r + 2] = c[r + 2];
          break;
        case kSliding: {  // slots: theta, kappa, lambda_n
          const double th = ws.polishTheta[b], ka = ws.polishKappa[b];
          F[r] = c[r] + ka * std::cos(th);
          F[r + 1] = c[r + 1] + ka * std::sin(th);
          F[r + 2] = c[r + 2];
          linear = false;
          break;
        }
      }
    }
    auto d = ws.polishF.head(m);  // F -> -step
    if (!(activeSet && linear && choleskyStep(G, blocks, ws, d.data()))) {
      J.setZero();
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        const ConeBlock& k = blocks[b];
        const int r = k.row0;
        switch (ws.polishMode[b]) {
          case kSeparated:  // z_b = 0: identity rows
            for (int i = 0; i < k.rows; ++i) J(r + i, r + i) = 1.0;
            break;
          case kSticking:  // dlambda_b / dz_b = I
            for (int i = 0; i < k.rows; ++i) J.col(r + i) = G.col(r + i);
            break;
          case kFrictionless:
            J.col(r + 2) = G.col(r + 2);
            break;
          case kSliding: {
            const double th = ws.polishTheta[b], ka = ws.polishKappa[b];
            const double u0 = std::cos(th), u1 = std::sin(th), ln = lam[r + 2];
            J.col(r) = k.mu * ln * (u0 * G.col(r + 1) - u1 * G.col(r));  // dlambda_t/dtheta
            J(r, r) -= ka * u1;
            J(r + 1, r) += ka * u0;
            J(r, r + 1) = u0;  // d(kappa u)/dkappa
            J(r + 1, r + 1) = u1;
            J.col(r + 2) = G.col(r + 2) + k.mu * (u0 * G.col(r) + u1 * G.col(r + 1));
            break;
          }
        }
      }
      for (std::size_t b = 0; b < blocks.size(); ++b) {  // trivial rows: the identity only
        const int mode = ws.polishMode[b];
        if (mode == kSeparated || mode == kFrictionless)
          for (int i = 0; i < (mode == kSeparated ? blocks[b].rows : 2); ++i) {
            J.row(blocks[b].row0 + i).setZero();
            J(blocks[b].row0 + i, blocks[b].row0 + i) = 1.0;
          }
      }
      // The active-set solve stops at a singular system: its basic solution would be one of
      // many impulses (some contacts unloaded at random), ADMM's is taken instead.
      if (pivotedQrSolve(ws, m, rankTol, d.data()) < m && activeSet) return false;
    }
    if (damped) {  // the step d (z -= d) cut: slip directions turn by <= kMaxTurn, lambda_n > 0
      double scale = 1.0;
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        const int r = blocks[b].row0;
        if (ws.polishMode[b] == kSliding && std::abs(d[r]) * scale > kMaxTurn)
          scale = kMaxTurn / std::abs(d[r]);
        const int mode = ws.polishMode[b];
        if ((mode == kSliding || mode == kFrictionless) && d[r + 2] * scale > 0.5 * lam[r + 2])
          scale = 0.5 * lam[r + 2] / d[r + 2];
      }
      d *= scale;
    }
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const ConeBlock& k = blocks[b];
      const int r = k.row0;
      switch (ws.polishMode[b]) {
        case kSticking:
          for (int i = 0; i < k.rows; ++i) lam[r + i] -= d[r + i];
          break;
        case kFrictionless:
          lam[r + 2] -= d[r + 2];
          break;
        case kSliding:
          ws.polishTheta[b] -= d[r];
          ws.polishKappa[b] -= d[r + 1];
          lam[r + 2] -= d[r + 2];
          break;
        default:
          break;
      }
    }
    if (!lam.allFinite()) return false;
    if (damped) continue;
    applyModes(blocks, ws, lam.data());
    bool haveC = false;  // c = G lam + g, evaluated when a mode change needs it (lam does not
                         // change in this loop: the separated blocks' impulses are zero already)
    const auto velocities = [&]() {
      if (!haveC) {
        c.noalias() = G * lam;
        c += g;
        haveC = true;
      }
      return c.data();
    };
    for (std::size_t b = 0; b < blocks.size(); ++b) {  // mode changes
      const ConeBlock& k = blocks[b];
      if (k.type != ConeType::Coulomb) continue;
      const int r = k.row0;
      double* l = lam.data() + r;
      int& mode = ws.polishMode[b];
      if (mode == kSticking) {
        if (!(l[2] > 0.0))
          mode = kSeparated;
        else if (std::hypot(l[0], l[1]) > k.mu * l[2])
          startSliding(k, static_cast<int>(b), lam.data(), velocities(), ws);
      } else if (mode == kSliding || mode == kFrictionless) {
        if (!(l[2] > 0.0))
          mode = kSeparated;
        else if (mode == kSliding && ws.polishKappa[b] < 0.0)
          mode = kSticking;
      } else if (velocities()[r + 2] < 0.0) {  // separated and approaching
        mode = k.mu == 0.0 ? kFrictionless : kSticking;
        l[0] = l[1] = l[2] = 0.0;
      }
    }
  }
}

}  // namespace

bool polishContactSolution(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                           const ContactSolverSettings& settings, ContactSolverWorkspace& ws,
                           ConstVecRef start, ContactResiduals& residuals, int& steps,
                           int activeSetSteps) {
  const int m = static_cast<int>(g.size());
  auto lam = ws.polishLambda.head(m);
  steps = 0;
  for (const ConeBlock& b : blocks)  // the modes are those of Coulomb cones: no patch cones
    if (isPatchCone(b.type)) return false;
  for (const bool damped : {false, true}) {
    if (damped && activeSetSteps > 0) break;  // the active-set solve: phase 1 only
    lam = start;
    identifyModes(G, g, blocks, lam, lam.cwiseAbs().maxCoeff(), ws);
    const int maxSteps = activeSetSteps > 0 ? activeSetSteps : damped ? kDampedSteps : kNewtonSteps;
    if (newtonOnModes(G, g, blocks, settings, ws, maxSteps, damped ? kFullRankTol : kRankTol,
                      damped, activeSetSteps > 0, residuals, steps))
      return true;
  }
  return false;
}

}  // namespace clusterdyn::detail
