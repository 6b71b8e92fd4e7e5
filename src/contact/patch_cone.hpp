// The cone of the patch contacts (torsional and rolling friction, MuJoCo's condim 4 and 6): the
// elliptic cone K = {(u, n) : sum_i (u_i / c_i)^2 <= n^2} on k rows (the k - 1 friction
// components u first, the normal n last), its Euclidean projection, and the projection onto
// the friction ellipsoid of a given normal impulse (projected Gauss-Seidel).
#pragma once

namespace clusterdyn::detail {

/// x (k rows, 2 <= k <= 6: u_1 .. u_k-1, n) <- its nearest point in the elliptic cone with the
/// coefficients c[0 .. k-2] in [0, inf]: c_i = 0 forces u_i = 0, c_i = inf leaves u_i free (the
/// dual cone {sum (mu_i s_i)^2 <= s_n^2} is the elliptic cone with c_i = 1 / mu_i). Outside K and
/// its polar cone the nearest point is u_i c_i^2 / (c_i^2 + t), n' = |D^-1 u'| (D = diag(c)),
/// with t > 0 the root of the strictly decreasing F(t) = (1 - t) |D^-1 u'(t)| - n (Lagrange
/// condition of min |x' - x|^2 over the cone), found by safeguarded Newton to roundoff.
void projectEllipticCone(const double* c, int k, double* x);

/// u (k entries) <- its nearest point in the ellipsoid {sum (u_i / c_i)^2 <= r^2}, c_i in [0, inf)
/// (c_i = 0: u_i = 0), r >= 0: u_i c_i^2 / (c_i^2 + t) with t >= 0 the root of |D^-1 u'(t)| = r.
void projectEllipsoid(const double* c, int k, double r, double* u);

}  // namespace clusterdyn::detail
