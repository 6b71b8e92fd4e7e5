// Projections onto the elliptic cone of the patch contacts and onto its friction ellipsoid
// (src/contact/patch_cone.hpp). Both reduce to one scalar root: the nearest point of a convex
// quadric set scales each component by c_i^2 / (c_i^2 + t), t the Lagrange multiplier (Boyd &
// Vandenberghe 2004, §8.1: projection onto a convex set by its optimality condition).
#include "contact/patch_cone.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace clusterdyn::detail {

namespace {

/// The active components (0 < c_i < inf): a_i = c_i u_i and c_i^2.
struct Quadric {
  double a[6], c2[6];
  int n = 0;
  /// N(t) = |D^-1 u'(t)| = sqrt(sum (a_i / (c_i^2 + t))^2) and dN/dt.
  void eval(double t, double& N, double& dN) const {
    double s2 = 0.0, s3 = 0.0;
    for (int i = 0; i < n; ++i) {
      const double d = 1.0 / (c2[i] + t), q = a[i] * d;
      s2 += q * q;
      s3 += q * q * d;
    }
    N = std::sqrt(s2);
    dN = N > 0.0 ? -s3 / N : 0.0;
  }
};

/// The root of a strictly decreasing f on [lo, hi] with f(lo) > 0 > f(hi): Newton steps kept
/// inside the bracket, bisection when a step leaves it or does not halve the bracket.
template <typename F>
double decreasingRoot(const F& f, double lo, double hi) {
  double t = 0.5 * (lo + hi);
  for (int it = 0; it < 200; ++it) {
    double v, dv;
    f(t, v, dv);
    if (v == 0.0) return t;
    if (v > 0.0)
      lo = t;
    else
      hi = t;
    if (!(hi - lo > 4.0 * std::numeric_limits<double>::epsilon() * hi)) break;
    const double width = hi - lo;
    double next = dv < 0.0 ? t - v / dv : lo - 1.0;
    if (!(next > lo && next < hi) || std::abs(next - t) > 0.5 * width) next = 0.5 * (lo + hi);
    if (next == t) break;
    t = next;
  }
  return t;
}

}  // namespace

void projectEllipticCone(const double* c, int k, double* x) {
  const int nu = k - 1;
  double& n = x[nu];
  Quadric q;
  int idx[6];
  double inK = 0.0, inPolar = 0.0;  // sum (u_i / c_i)^2 and sum (c_i u_i)^2 over active rows
  for (int i = 0; i < nu; ++i) {
    if (c[i] == 0.0) {
      x[i] = 0.0;  // K's product factor {0}
    } else if (std::isfinite(c[i])) {
      idx[q.n] = i;
      q.c2[q.n] = c[i] * c[i];
      q.a[q.n] = c[i] * x[i];
      inK += (x[i] / c[i]) * (x[i] / c[i]);
      inPolar += q.a[q.n] * q.a[q.n];
      ++q.n;
    }  // c_i = inf: the factor R, u_i unchanged
  }
  if (n >= 0.0 && inK <= n * n) return;  // in K
  if (n <= 0.0 && inPolar <= n * n) {    // in the polar cone {|D u| <= -n}: the apex
    for (int j = 0; j < q.n; ++j) x[idx[j]] = 0.0;
    n = 0.0;
    return;
  }
  // F(t) = (1 - t) N(t) - n: F(0) > 0 (outside K), F(inf) = -|D u| - n < 0 (outside the polar).
  const auto F = [&](double t, double& v, double& dv) {
    double N, dN;
    q.eval(t, N, dN);
    v = (1.0 - t) * N - n;
    dv = -N + (1.0 - t) * dN;
  };
  double t = 1.0;  // the root when n = 0
  if (n > 0.0) {
    t = decreasingRoot(F, 0.0, 1.0);  // F(1) = -n < 0
  } else if (n < 0.0) {
    double hi = 2.0, v, dv;
    for (F(hi, v, dv); v > 0.0 && hi < 1e300; F(hi, v, dv)) hi *= 4.0;
    t = decreasingRoot(F, 1.0, hi);  // F(1) = -n > 0
  }
  double N, dN;
  q.eval(t, N, dN);
  for (int j = 0; j < q.n; ++j) x[idx[j]] *= q.c2[j] / (q.c2[j] + t);
  n = N;
}

void projectEllipsoid(const double* c, int k, double r, double* u) {
  Quadric q;
  int idx[6];
  double inside = 0.0, norm2 = 0.0;
  for (int i = 0; i < k; ++i) {
    if (!(c[i] > 0.0) || !(r > 0.0)) {
      u[i] = 0.0;
      continue;
    }
    idx[q.n] = i;
    q.c2[q.n] = c[i] * c[i];
    q.a[q.n] = c[i] * u[i];
    inside += (u[i] / c[i]) * (u[i] / c[i]);
    norm2 += q.a[q.n] * q.a[q.n];
    ++q.n;
  }
  if (inside <= r * r) return;
  // N(t) - r: positive at 0, negative at |a| / r (N(t) <= |a| / t).
  const auto f = [&](double t, double& v, double& dv) {
    q.eval(t, v, dv);
    v -= r;
  };
  const double t = decreasingRoot(f, 0.0, std::sqrt(norm2) / r);
  for (int j = 0; j < q.n; ++j) u[idx[j]] *= q.c2[j] / (q.c2[j] + t);
}

}  // namespace clusterdyn::detail
