// Projected Gauss-Seidel on the contact problem (the baseline solver; Moreau 1988, Jean 1999):
// block by block, the normal row, then the tangent pair projected on the friction disc.
#include <algorithm>
#include <cmath>

#include "contact/contact_detail.hpp"
#include "contact/patch_cone.hpp"

namespace clusterdyn {

namespace {

/// Row velocity (G lambda + g)_i (G symmetric: its column i, contiguous).
inline double rowVelocity(const MatX& G, const VecX& g, const VecX& lambda, int i) {
  return G.col(i).dot(lambda) + g[i];
}

/// One Gauss-Seidel sweep over the blocks. Rows whose diagonal is at most `floor` are skipped:
/// their Jacobian row is zero up to roundoff (a cut planar loop's out-of-plane rows), and a step
/// sigma_i / G_ii there throws lambda_i to ~1e16 without changing G lambda.
void pgsSweep(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks, double floor,
              VecX& lambda) {
  for (const ConeBlock& b : blocks) {
    const int r = b.row0;
    switch (b.type) {
      case ConeType::Inactive:
        lambda.segment(r, b.rows).setZero();
        break;
      case ConeType::Bilateral:
        for (int i = r; i < r + b.rows; ++i)
          if (G(i, i) > floor) lambda[i] -= rowVelocity(G, g, lambda, i) / G(i, i);
        break;
      case ConeType::Coulomb: {
        const int n = r + 2;
        if (G(n, n) > floor)
          lambda[n] = std::max(0.0, lambda[n] - rowVelocity(G, g, lambda, n) / G(n, n));
        // One scalar step for both tangent rows: a fixed point on the disc boundary then has
        // its slip velocity opposite the friction (maximal dissipation).
        const double d = std::max(G(r, r), G(r + 1, r + 1));
        if (d > floor) {
          const double s0 = rowVelocity(G, g, lambda, r), s1 = rowVelocity(G, g, lambda, r + 1);
          lambda[r] -= s0 / d;
          lambda[r + 1] -= s1 / d;
        }
        const double tn = std::hypot(lambda[r], lambda[r + 1]), radius = b.mu * lambda[n];
        if (tn > radius) {
          const double scale = tn > 0.0 ? radius / tn : 0.0;
          lambda[r] *= scale;
          lambda[r + 1] *= scale;
        }
        break;
      }
      case ConeType::Torsional:
      case ConeType::Rolling: {
        // As Coulomb with all the friction rows: the normal row, one scalar step for the
        // friction rows (fixed points on the ellipsoid's boundary: u = -D^2 sigma_u scaled, the
        // maximal dissipation of the elliptic cone), projected on {|D^-1 u| <= lambda_n}.
        const int k = b.rows - 1, n = r + k;
        if (G(n, n) > floor)
          lambda[n] = std::max(0.0, lambda[n] - rowVelocity(G, g, lambda, n) / G(n, n));
        double d = 0.0, s[5], c[5];
        for (int i = 0; i < k; ++i) d = std::max(d, G(r + i, r + i));
        if (d > floor) {
          for (int i = 0; i < k; ++i) s[i] = rowVelocity(G, g, lambda, r + i);
          for (int i = 0; i < k; ++i) lambda[r + i] -= s[i] / d;
        }
        detail::patchCoefficients(b, c);
        detail::projectEllipsoid(c, k, lambda[n], lambda.data() + r);
        break;
      }
    }
  }
}

}  // namespace

Status solveContactPgs(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                       const ContactSolverSettings& settings, ContactSolverWorkspace& ws,
                       VecX& lambda, ContactSolverResult& result) {
  CDYN_CONTACT_TRY(checkContactProblem(G, g, blocks, settings, ws));
  if (lambda.size() != g.size())
    return detail::contactFail(ws, Status::InvalidSize, "lambda has size %ld, expected %ld",
                               static_cast<long>(lambda.size()), static_cast<long>(g.size()));
  if (!lambda.allFinite()) lambda.setZero();  // an unusable warm start: cold start
  for (const ConeBlock& b : blocks) detail::projectCone(b, lambda.data() + b.row0);
  result = ContactSolverResult();
  // Diagonals below 1e-12 of the largest are roundoff (rows of a numerically zero Jacobian).
  const double floor = 1e-12 * (g.size() > 0 ? G.diagonal().cwiseAbs().maxCoeff() : 0.0);
  for (int it = 0;; ++it) {
    result.iterations = it;
    result.residuals = contactResiduals(G, g, blocks, lambda, ws);
    const ContactResiduals& r = result.residuals;
    result.converged = r.cone <= settings.tolerance && r.velocity <= settings.tolerance &&
                       r.complementarity <= settings.tolerance;
    if (result.converged || it == settings.maxIterations) break;
    pgsSweep(G, g, blocks, floor, lambda);
    if (!lambda.allFinite()) {  // cannot happen with finite G, g; never hand out a NaN
      lambda.setZero();
      result.residuals = contactResiduals(G, g, blocks, lambda, ws);
      return detail::contactFail(ws, Status::NonFinite, "PGS: the impulses overflowed");
    }
  }
  return detail::contactFinish(ws, result, settings, "PGS");
}

}  // namespace clusterdyn
