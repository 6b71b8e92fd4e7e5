// Argument checks shared by the compute functions: they report through Data::lastError and a
// Status, never by throwing or allocating.
#pragma once

#include <cmath>
#include <cstdio>
#include <initializer_list>

#include "clusterdyn/data.hpp"

namespace clusterdyn::detail {

template <typename... Args>
Status fail(Data& data, Status s, const char* fmt, Args... args) {
  if constexpr (sizeof...(Args) == 0)
    std::snprintf(data.lastError.data(), data.lastError.size(), "%s", fmt);
  else
    std::snprintf(data.lastError.data(), data.lastError.size(), fmt, args...);
  return s;
}

inline Status ok(Data& data) {
  data.lastError[0] = '\0';
  return Status::Ok;
}

inline Status checkWorkspace(const Model& model, Data& data) {
  if (data.model != &model)
    return fail(data, Status::WorkspaceMismatch, "the workspace was created for another model");
  return Status::Ok;
}

template <typename Vec>
Status checkVector(Data& data, const Vec& x, Eigen::Index n, const char* what) {
  if (x.size() != n)
    return fail(data, Status::InvalidSize, "%s has size %ld, expected %ld", what,
                static_cast<long>(x.size()), static_cast<long>(n));
  for (Eigen::Index i = 0; i < n; ++i)
    if (!std::isfinite(x[i]))
      return fail(data, Status::NonFinite, "%s[%ld] is not finite", what, static_cast<long>(i));
  return Status::Ok;
}

/// fext (nullptr or one force per body) must be finite.
inline Status checkForces(const Model& model, Data& data, const Force* fext) {
  if (!fext) return Status::Ok;
  for (int i = 0; i < model.nbodies; ++i)
    if (!fext[i].allFinite())
      return fail(data, Status::NonFinite, "fext of body '%s' is not finite",
                  model.bodyNames[i].c_str());
  return Status::Ok;
}

/// max |x_i| (0 for an empty vector).
template <typename Vec>
double maxAbs(const Vec& x) {
  return x.size() ? x.cwiseAbs().maxCoeff() : 0.0;
}

/// max |f| over the external forces (0 when fext is nullptr).
inline double maxAbsForces(const Model& model, const Force* fext) {
  double m = 0.0;
  if (fext)
    for (int i = 0; i < model.nbodies; ++i) m = std::max(m, fext[i].cwiseAbs().maxCoeff());
  return m;
}

/// An input of a compute call and how it enters the dynamics: power 2 for velocities (velocity
/// products), 1 for positions, forces and accelerations.
struct InputMagnitude {
  const char* name;
  double maxAbs;
  int power;
};

/// Finite inputs whose size makes the arithmetic overflow: the input with the largest
/// maxAbs^power if that exceeds 1e100 (leaving ~200 orders of magnitude to the model's
/// masses, lengths and the algorithm's sums), else nullptr.
inline const InputMagnitude* overflowingInput(std::initializer_list<InputMagnitude> inputs) {
  const InputMagnitude* worst = nullptr;
  double worstLog = 100.0;
  for (const InputMagnitude& in : inputs) {
    if (!(in.maxAbs > 0.0)) continue;
    const double l = in.power * std::log10(in.maxAbs);
    if (l > worstLog) {
      worstLog = l;
      worst = &in;
    }
  }
  return worst;
}

/// NonFinite naming the input that is out of range (the outputs of the call overflowed).
inline Status overflowFailure(Data& data, const char* output, const InputMagnitude& in) {
  return fail(data, Status::NonFinite,
              "%s overflowed (not finite): input %s is out of range (max |%s| = %.3g; the "
              "dynamics hold %s%s, which exceeds double precision)",
              output, in.name, in.name, in.maxAbs, in.name, in.power == 2 ? "^2 terms" : "");
}

/// Outputs of a call found not finite although every input is finite: NonFinite naming the
/// input out of range (overflowingInput), else a message blaming the model's numbers.
inline Status nonFiniteOutput(Data& data, const char* output,
                              std::initializer_list<InputMagnitude> inputs) {
  const InputMagnitude* in = overflowingInput(inputs);
  if (in) return overflowFailure(data, output, *in);
  return fail(data, Status::NonFinite,
              "%s is not finite although every input is finite (overflow in the model's "
              "numbers or the algorithm)",
              output);
}

/// True when every coefficient of x is finite: one branch-free, vectorizable pass (x - x is 0
/// for finite x and NaN otherwise; a sum of zeros is 0 exactly).
template <typename Derived>
bool allFiniteFast(const Eigen::DenseBase<Derived>& x) {
  return (x.derived().array() - x.derived().array()).sum() == 0.0;
}

/// True when the body placements (and, with the levels, velocities and accelerations) of every
/// body are finite. Only the leaves are read: every quantity of a body is computed from its
/// parent's by products with finite joint transforms, so a NaN or Inf in a body reaches every
/// coefficient of its descendants (Inf * 0 is NaN), in particular a leaf.
/// Sum of x - x over the coefficients: 0 when every coefficient is finite, NaN otherwise.
template <typename X>
inline double nonFiniteProbe(const X& x) {
  return (x - x).sum();  // NOLINT(misc-redundant-expression): x - x is the test itself
}

/// True when the upper triangle of the square matrix M is finite (the mass matrices, whose lower
/// triangle is its mirror); raw loops, x - x is NaN exactly for inf and NaN. Four independent
/// sums: one chain of dependent additions would cost its latency per entry.
inline bool upperTriangleFinite(const MatX& M) {
  const double* col = M.data();
  double z0 = 0.0, z1 = 0.0, z2 = 0.0, z3 = 0.0;
  for (Eigen::Index c = 0; c < M.cols(); ++c, col += M.outerStride()) {
    Eigen::Index r = 0;
    for (; r + 4 <= c + 1; r += 4) {
      z0 += col[r] - col[r];
      z1 += col[r + 1] - col[r + 1];
      z2 += col[r + 2] - col[r + 2];
      z3 += col[r + 3] - col[r + 3];
    }
    for (; r <= c; ++r) z0 += col[r] - col[r];
  }
  return (z0 + z1) + (z2 + z3) == 0.0;
}

inline bool bodiesFinite(const Model& model, const Data& data, bool velocities,
                         bool accelerations) {
  double z = 0.0;
  for (int i = 0; i < model.nbodies; ++i) {
    if (!model.children[i].empty()) continue;
    z += nonFiniteProbe(data.oMi[i].R) + nonFiniteProbe(data.oMi[i].p);
    if (velocities) z += nonFiniteProbe(data.v[i]);
    if (accelerations) z += nonFiniteProbe(data.a[i]);
  }
  return z == 0.0;
}

/// After a compute call: if out is not finite, or the call failed (status != Ok) while an
/// input is large enough to overflow, NonFinite naming that input; else status unchanged.
template <typename Out>
Status checkOverflow(Data& data, Status status, const Out& out, const char* output,
                     std::initializer_list<InputMagnitude> inputs) {
  const bool finite = status != Status::Ok || allFiniteFast(out);
  if (status == Status::Ok && finite) return status;
  if (status != Status::Ok && status != Status::ConstraintFailure &&
      status != Status::NotPositiveDefinite)
    return status;
  if (!finite) return nonFiniteOutput(data, output, inputs);
  const InputMagnitude* in = overflowingInput(inputs);
  if (in) return overflowFailure(data, output, *in);
  return status;
}

/// A quaternion in q is unit when | |q| - 1 | <= kQuaternionNormTolerance (else NotUnitQuaternion).
inline constexpr double kQuaternionNormTolerance = 1e-6;

/// Sizes, finiteness and unit quaternions of a configuration vector.
Status checkConfiguration(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

#define CDYN_TRY(expr)                                       \
  do {                                                       \
    const ::clusterdyn::Status cdyn_s_ = (expr);             \
    if (cdyn_s_ != ::clusterdyn::Status::Ok) return cdyn_s_; \
  } while (0)

}  // namespace clusterdyn::detail
