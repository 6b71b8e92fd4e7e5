// C API: kinematics (clusterdyn.h, "Kinematics").
#include "capi_internal.hpp"

using namespace cdyn_internal;

namespace {
/// A frame quantity computed from the workspace's kinematics overflowed (it is not written).
template <typename Vec>
cdyn_status checkFrameOutput(cdyn_workspace* ws, const Vec& x, const char* what) {
  if (x.allFinite()) return CDYN_OK;
  return fail(ws, CDYN_ERR_NON_FINITE,
              "%s overflowed (not finite): the state of the last cdyn_forward_kinematics call is "
              "out of range (inputs q, v or a too large)",
              what);
}

/// A frame quantity of the workspace's kinematics (cdyn_frame_velocity, cdyn_frame_acceleration,
/// cdyn_frame_classical_acceleration): frame and rf checked, the kinematics of level `level`
/// required, get(model, data, frame, r) (a Motion or a Vec3: what) copied into out.
template <typename Value>
cdyn_status frameQuantity(const cdyn_model* model, cdyn_workspace* ws, int frame, int rf,
                          double* out, const char* outName, KinLevel level, const char* what,
                          Value (*get)(const cd::Model&, const cd::Data&, int,
                                       cd::ReferenceFrame)) {
  return computeOnKinematics(model, ws, [&] {
    cd::ReferenceFrame r = cd::ReferenceFrame::Local;
    CDYN_CHECK(checkFrame(ws, model->cm.treeModel, frame));
    CDYN_CHECK(toReferenceFrame(ws, rf, &r));
    CDYN_CHECK(checkPointer(ws, out, outName));
    CDYN_CHECK(needKinematics(ws, level));
    const Value x = get(model->cm.treeModel, ws->body->data.treeData, frame, r);
    CDYN_CHECK(checkFrameOutput(ws, x, what));
    std::copy_n(x.data(), x.size(), out);
    return ok(ws);
  });
}
}  // namespace

extern "C" {

cdyn_status cdyn_forward_kinematics(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                    int nq, const double* v, int nv, const double* a, int na) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::Data& data = ws->body->data.treeData;
    const bool hasV = !(v == nullptr && nv == 0) || m.nv == 0;
    const bool hasA = !(a == nullptr && na == 0) || (m.nv == 0 && hasV);
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    if (hasA && !hasV)
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "accelerations a given without velocities v");
    if (hasV) CDYN_CHECK(checkArray(ws, v, nv, m.nv, "v"));
    if (hasA) CDYN_CHECK(checkArray(ws, a, na, m.nv, "a"));
    const ConstMap qm(q, nq);
    if (hasA) {
      CDYN_CHECK_CXX(cd::forwardKinematics(m, data, qm, ConstMap(v, nv), ConstMap(a, na)));
      ws->kinLevel = kAccelerations;
    } else if (hasV) {
      CDYN_CHECK_CXX(cd::forwardKinematics(m, data, qm, ConstMap(v, nv)));
      ws->kinLevel = kVelocities;
    } else {
      CDYN_CHECK_CXX(cd::forwardKinematics(m, data, qm));
      ws->kinLevel = kPlacements;
    }
    return ok(ws);
  });
}

cdyn_status cdyn_frame_placement(const cdyn_model* model, cdyn_workspace* ws, int frame, double* R,
                                 int ldr, double p[3]) {
  return computeOnKinematics(model, ws, [&] {
    CDYN_CHECK(checkFrame(ws, model->cm.treeModel, frame));
    CDYN_CHECK(checkPointer(ws, R, "R"));
    CDYN_CHECK(checkPointer(ws, p, "p"));
    if (ldr < 3) return fail(ws, CDYN_ERR_INVALID_SIZE, "ldr is %d, expected >= 3", ldr);
    CDYN_CHECK(needKinematics(ws, kPlacements));
    const cd::Transform T = cd::framePlacement(model->cm.treeModel, ws->body->data.treeData, frame);
    CDYN_CHECK(checkFrameOutput(ws, T.p, "the frame placement"));
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 3; ++i) R[i + j * ldr] = T.R(i, j);
      p[j] = T.p[j];
    }
    return ok(ws);
  });
}

cdyn_status cdyn_frame_placement_matrix(const cdyn_model* model, cdyn_workspace* ws, int frame,
                                        double* T, int ldt) {
  return computeOnKinematics(model, ws, [&] {
    CDYN_CHECK(checkFrame(ws, model->cm.treeModel, frame));
    CDYN_CHECK(checkPointer(ws, T, "T"));
    if (ldt < 4) return fail(ws, CDYN_ERR_INVALID_SIZE, "ldt is %d, expected >= 4", ldt);
    CDYN_CHECK(needKinematics(ws, kPlacements));
    const cd::Transform X = cd::framePlacement(model->cm.treeModel, ws->body->data.treeData, frame);
    CDYN_CHECK(checkFrameOutput(ws, X.p, "the frame placement"));
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i)
        T[i + j * ldt] = i < 3 ? (j < 3 ? X.R(i, j) : X.p[i]) : (j < 3 ? 0.0 : 1.0);
    return ok(ws);
  });
}

cdyn_status cdyn_frame_velocity(const cdyn_model* model, cdyn_workspace* ws, int frame, int rf,
                                double velocity[6]) {
  return frameQuantity(model, ws, frame, rf, velocity, "velocity", kVelocities,
                       "the frame velocity", cd::frameVelocity);
}

cdyn_status cdyn_frame_acceleration(const cdyn_model* model, cdyn_workspace* ws, int frame, int rf,
                                    double acceleration[6]) {
  return frameQuantity(model, ws, frame, rf, acceleration, "acceleration", kAccelerations,
                       "the frame acceleration", cd::frameAcceleration);
}

cdyn_status cdyn_frame_classical_acceleration(const cdyn_model* model, cdyn_workspace* ws,
                                              int frame, int rf, double acceleration[3]) {
  return frameQuantity(model, ws, frame, rf, acceleration, "acceleration", kAccelerations,
                       "the frame classical acceleration", cd::frameClassicalAcceleration);
}

namespace {
/// Frame Jacobian from the workspace placements into J (6 x nv, leading dimension ldj).
cdyn_status jacobianOut(const cdyn_model* model, cdyn_workspace* ws, int frame,
                        cd::ReferenceFrame r, double* J, int ldj) {
  const cd::Model& m = model->cm.treeModel;
  cd::Data& data = ws->body->data.treeData;
  CDYN_CHECK_CXX(cd::frameJacobian(m, data, frame, r, data.J));
  for (int j = 0; j < m.nv; ++j) std::copy_n(data.J.col(j).data(), 6, J + j * ldj);
  return ok(ws);
}

cdyn_status checkJacobianArgs(cdyn_workspace* ws, const cd::Model& m, int frame, int rf,
                              cd::ReferenceFrame* r, const double* J, int ldj) {
  CDYN_CHECK(checkFrame(ws, m, frame));
  CDYN_CHECK(toReferenceFrame(ws, rf, r));
  if (ldj < 6) return fail(ws, CDYN_ERR_INVALID_SIZE, "ldj is %d, expected >= 6", ldj);
  if (m.nv > 0) CDYN_CHECK(checkPointer(ws, J, "J"));
  return CDYN_OK;
}
}  // namespace

cdyn_status cdyn_frame_jacobian(const cdyn_model* model, cdyn_workspace* ws, int frame, int rf,
                                double* J, int ldj) {
  return computeOnKinematics(model, ws, [&] {
    cd::ReferenceFrame r = cd::ReferenceFrame::Local;
    CDYN_CHECK(checkJacobianArgs(ws, model->cm.treeModel, frame, rf, &r, J, ldj));
    CDYN_CHECK(needKinematics(ws, kPlacements));
    return jacobianOut(model, ws, frame, r, J, ldj);
  });
}

cdyn_status cdyn_compute_frame_jacobian(const cdyn_model* model, cdyn_workspace* ws,
                                        const double* q, int nq, int frame, int rf, double* J,
                                        int ldj) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    cd::ReferenceFrame r = cd::ReferenceFrame::Local;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkJacobianArgs(ws, m, frame, rf, &r, J, ldj));
    CDYN_CHECK_CXX(cd::forwardKinematics(m, ws->body->data.treeData, ConstMap(q, nq)));
    ws->kinLevel = kPlacements;
    return jacobianOut(model, ws, frame, r, J, ldj);
  });
}

cdyn_status cdyn_center_of_mass(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                int nq, double com[3]) {
  return compute(model, ws, [&] {
    const cd::Model& m = model->cm.treeModel;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkPointer(ws, com, "com"));
    CDYN_CHECK_CXX(cd::forwardKinematics(m, ws->body->data.treeData, ConstMap(q, nq)));
    const cd::Vec3 c = cd::centerOfMass(m, ws->body->data.treeData);
    if (!c.allFinite())
      return fail(ws, CDYN_ERR_NON_FINITE,
                  "the center of mass overflowed (not finite): input q is out of range");
    std::copy_n(c.data(), 3, com);
    return ok(ws);
  });
}

}  // extern "C"
