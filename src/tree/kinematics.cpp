// Forward kinematics: placements, velocities, accelerations (Featherstone eq. 3.31-3.33).
#include "clusterdyn/kinematics.hpp"

#include "core/check.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {

namespace {

template <int Level>
Status fk(const Model& model, Data& data, ConstVecRef q, const double* vptr, const double* aptr) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  for (int i = 0; i < model.nbodies; ++i) {
    detail::placementStep(model, data, i, q);
    if constexpr (Level >= 1) {
      const int p = model.parent[i];
      const Motion vJ = detail::jointMotion(model.joints[i], vptr + model.idx_v[i]);
      data.v[i] = p >= 0 ? Motion(data.liMi[i].actInvMotion(data.v[p]) + vJ) : vJ;
      if constexpr (Level >= 2) {
        data.a[i] = detail::jointMotion(model.joints[i], aptr + model.idx_v[i]) +
                    crossMotion(data.v[i], vJ);
        if (p >= 0) data.a[i] += data.liMi[i].actInvMotion(data.a[p]);
      }
    }
  }
  if (!detail::bodiesFinite(model, data, Level >= 1, Level >= 2))
    return detail::nonFiniteOutput(
        data, "forwardKinematics: body placements / velocities / accelerations",
        {{"q", detail::maxAbs(q), 1},
         {"v", vptr ? detail::maxAbs(ConstVecRef(Eigen::Map<const VecX>(vptr, model.nv))) : 0.0,
          Level >= 2 ? 2 : 1},
         {"a", aptr ? detail::maxAbs(ConstVecRef(Eigen::Map<const VecX>(aptr, model.nv))) : 0.0,
          1}});
  return detail::ok(data);
}

}  // namespace

Status forwardKinematics(const Model& model, Data& data, ConstVecRef q) {
  return fk<0>(model, data, q, nullptr, nullptr);
}

Status forwardKinematics(const Model& model, Data& data, ConstVecRef q, ConstVecRef v) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkVector(data, v, model.nv, "v"));
  return fk<1>(model, data, q, v.data(), nullptr);
}

Status forwardKinematics(const Model& model, Data& data, ConstVecRef q, ConstVecRef v,
                         ConstVecRef a) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkVector(data, v, model.nv, "v"));
  CDYN_TRY(detail::checkVector(data, a, model.nv, "a"));
  return fk<2>(model, data, q, v.data(), a.data());
}

Transform framePlacement(const Model& model, const Data& data, int frameId) {
  const Frame& f = model.frames[frameId];
  return f.body >= 0 ? data.oMi[f.body] * f.placement : f.placement;
}

namespace {
Motion expressIn(const Model& /*model*/, const Data& data, const Frame& f, const Motion& mBody,
                 ReferenceFrame rf) {
  switch (rf) {
    case ReferenceFrame::Local:
      return f.placement.actInvMotion(mBody);
    case ReferenceFrame::World:
      return data.oMi[f.body].actMotion(mBody);
    case ReferenceFrame::LocalWorldAligned: {
      const Transform oMf = data.oMi[f.body] * f.placement;
      const Motion mLocal = f.placement.actInvMotion(mBody);
      Motion out;
      out.head<3>() = oMf.R * mLocal.head<3>();
      out.tail<3>() = oMf.R * mLocal.tail<3>();
      return out;
    }
  }
  return mBody;
}
}  // namespace

Motion frameVelocity(const Model& model, const Data& data, int frameId, ReferenceFrame rf) {
  const Frame& f = model.frames[frameId];
  if (f.body < 0) return Motion::Zero();
  return expressIn(model, data, f, data.v[f.body], rf);
}

Motion frameAcceleration(const Model& model, const Data& data, int frameId, ReferenceFrame rf) {
  const Frame& f = model.frames[frameId];
  if (f.body < 0) return Motion::Zero();
  return expressIn(model, data, f, data.a[f.body], rf);
}

Vec3 frameClassicalAcceleration(const Model& model, const Data& data, int frameId,
                                ReferenceFrame rf) {
  const Frame& f = model.frames[frameId];
  if (f.body < 0) return Vec3::Zero();
  const Motion vL = f.placement.actInvMotion(data.v[f.body]);
  const Motion aL = f.placement.actInvMotion(data.a[f.body]);
  const Vec3 acc = aL.tail<3>() + vL.head<3>().cross(vL.tail<3>());
  if (rf == ReferenceFrame::Local) return acc;
  return (data.oMi[f.body] * f.placement).R * acc;
}

}  // namespace clusterdyn
