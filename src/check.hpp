// Argument checks shared by the compute functions: they report through Data::lastError and a
// Status, never by throwing or allocating.
#pragma once

#include <cmath>
#include <cstdio>

#include "clusterdyn/data.hpp"

namespace clusterdyn::detail {

template <typename... Args>
Status fail(Data& data, Status s, const char* fmt, Args... args) {
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

/// Sizes, finiteness and unit quaternions of a configuration vector.
Status checkConfiguration(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

#define CDYN_TRY(expr)                              \
  do {                                              \
    const ::clusterdyn::Status cdyn_s_ = (expr);    \
    if (cdyn_s_ != ::clusterdyn::Status::Ok) return cdyn_s_; \
  } while (0)

}  // namespace clusterdyn::detail
