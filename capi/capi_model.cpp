// C API: model loading, freeing and queries (clusterdyn.h, "Model: loading and freeing",
// "Model queries").
#include <cmath>
#include <cstdio>
#include <memory>

#include "capi_internal.hpp"

using namespace cdyn_internal;

namespace {

/// CDYN_LOAD_IGNORE_CONSTRAINTS: the URDF+ chords (<loop>, <coupling>, <mimic>) and the
/// independent="..." marks are dropped, leaving the plain spanning tree.
void dropChords(cd::UrdfDescription& urdf) {
  urdf.loops.clear();
  urdf.couplings.clear();
  for (cd::UrdfJoint& j : urdf.joints) {
    j.mimic.present = false;
    j.independent = true;
    j.independentGiven = false;
  }
}

/// Parses (build(warnings) returns a UrdfDescription and fills the reader's warnings) and
/// builds the cluster model.
template <typename Build>
cdyn_status loadModel(int abi, unsigned int flags, const double* gravity, cdyn_model** out,
                      char* err, std::size_t errlen, Build&& build) noexcept {
  writeMessage(err, errlen, "");
  if (out == nullptr) {
    writeMessage(err, errlen, "the model output pointer is NULL");
    return CDYN_ERR_NULL_POINTER;
  }
  *out = nullptr;
  char msg[160];
  if (abi != CDYN_ABI_VERSION) {
    std::snprintf(msg, sizeof msg,
                  "ABI version mismatch: the caller was built for ABI %d, the library "
                  "libclusterdyn.so.%d has ABI %d",
                  abi, CDYN_ABI_VERSION, CDYN_ABI_VERSION);
    writeMessage(err, errlen, msg);
    return CDYN_ERR_VERSION;
  }
  constexpr unsigned int kKnownFlags = CDYN_LOAD_FLOATING_BASE | CDYN_LOAD_IGNORE_CONSTRAINTS |
                                       CDYN_LOAD_CUT_LOOPS | CDYN_LOAD_NO_JOINT_DYNAMICS;
  if (flags & ~kKnownFlags) {
    std::snprintf(msg, sizeof msg, "unknown load flags 0x%x", flags & ~kKnownFlags);
    writeMessage(err, errlen, msg);
    return CDYN_ERR_INVALID_ARGUMENT;
  }
  if (gravity &&
      !(std::isfinite(gravity[0]) && std::isfinite(gravity[1]) && std::isfinite(gravity[2]))) {
    writeMessage(err, errlen, "gravity is not finite");
    return CDYN_ERR_NON_FINITE;
  }
  try {
    cd::ModelOptions options;
    options.floatingBase = (flags & CDYN_LOAD_FLOATING_BASE) != 0;
    options.cutLoops = (flags & CDYN_LOAD_CUT_LOOPS) != 0;
    options.jointDynamics = (flags & CDYN_LOAD_NO_JOINT_DYNAMICS) == 0;
    if (gravity) {  // the caller's gravity overrides a file's <option gravity>
      options.gravity = cd::Vec3(gravity[0], gravity[1], gravity[2]);
      options.fileGravity = false;
    }
    auto m = std::make_unique<cdyn_model>();
    cd::UrdfDescription urdf = build(m->loadWarnings);
    for (const std::string& w : m->loadWarnings) m->warningText += w + "\n";
    if (flags & CDYN_LOAD_IGNORE_CONSTRAINTS) dropChords(urdf);
    m->cm = cd::buildClusterModel(urdf, options);
    m->treeDescription = cd::describeModel(m->cm.treeModel);
    m->clusterDescription = cd::describeClusterTree(m->cm);
    m->clusterDot = cd::clusterTreeDot(m->cm);
    m->layout = measureLayout(m->cm);
    *out = m.release();
    return CDYN_OK;
  } catch (...) {
    return statusOfException(Sink{err, errlen}, Phase::Load);
  }
}

/// The frame names of a model, indexable like a vector of strings.
struct FrameNames {
  const std::vector<cd::Frame>& frames;
  std::size_t size() const { return frames.size(); }
  const std::string& operator[](std::size_t i) const { return frames[i].name; }
};

}  // namespace

extern "C" {

cdyn_status cdyn_model_load(int abi_version, const char* path, unsigned int flags,
                            const double* gravity, cdyn_model** model, char* err, size_t errlen) {
  if (path == nullptr) {
    if (model) *model = nullptr;
    writeMessage(err, errlen, "path is NULL");
    return CDYN_ERR_NULL_POINTER;
  }
  return loadModel(abi_version, flags, gravity, model, err, errlen,
                   [&](std::vector<std::string>& w) { return cd::parseModelFile(path, &w); });
}

cdyn_status cdyn_model_load_string(int abi_version, const char* xml, size_t xml_len,
                                   unsigned int flags, const double* gravity, cdyn_model** model,
                                   char* err, size_t errlen) {
  return cdyn_model_load_string_dir(abi_version, xml, xml_len, nullptr, flags, gravity, model, err,
                                    errlen);
}

cdyn_status cdyn_model_load_string_dir(int abi_version, const char* xml, size_t xml_len,
                                       const char* base_dir, unsigned int flags,
                                       const double* gravity, cdyn_model** model, char* err,
                                       size_t errlen) {
  if (xml == nullptr && xml_len > 0) {
    if (model) *model = nullptr;
    writeMessage(err, errlen, "xml is NULL");
    return CDYN_ERR_NULL_POINTER;
  }
  return loadModel(abi_version, flags, gravity, model, err, errlen,
                   [&](std::vector<std::string>& w) {
                     return cd::parseModelString(std::string(xml ? xml : "", xml_len), "<string>",
                                                 &w, base_dir ? base_dir : "");
                   });
}

cdyn_status cdyn_model_free(cdyn_model* model) {
  if (model == nullptr) return CDYN_OK;
  CDYN_CHECK_MODEL(model);
  if (model->workspaces.load() != 0)
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_model_free: handles made for this model still exist (workspaces, pools, "
                  "constraint sets or cdyn_forces): free them first");
  model->tag = kDeadTag;
  delete model;
  return CDYN_OK;
}

cdyn_status cdyn_model_name(const cdyn_model* model, const char** name) {
  CDYN_CHECK_MODEL(model);
  if (name == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_name: name is NULL");
  *name = model->cm.treeModel.name.c_str();
  return CDYN_OK;
}

CDYN_INT_QUERY(cdyn_model_nbodies, model->cm.treeModel.nbodies)
CDYN_INT_QUERY(cdyn_model_nq, model->cm.treeModel.nq)
CDYN_INT_QUERY(cdyn_model_nv, model->cm.treeModel.nv)
CDYN_INT_QUERY(cdyn_model_nframes, static_cast<int>(model->cm.treeModel.frames.size()))
CDYN_INT_QUERY(cdyn_model_nwarnings, static_cast<int>(model->loadWarnings.size()))

cdyn_status cdyn_model_warnings(const cdyn_model* model, char* buf, size_t len, size_t* needed) {
  CDYN_CHECK_MODEL(model);
  return textOut(model->warningText, buf, len, needed);
}

cdyn_status cdyn_model_total_mass(const cdyn_model* model, double* mass) {
  CDYN_CHECK_MODEL(model);
  if (mass == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_total_mass: mass is NULL");
  *mass = model->cm.treeModel.totalMass();
  return CDYN_OK;
}

cdyn_status cdyn_model_gravity(const cdyn_model* model, double gravity[3]) {
  CDYN_CHECK_MODEL(model);
  if (gravity == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_gravity: gravity is NULL");
  for (int k = 0; k < 3; ++k) gravity[k] = model->cm.treeModel.gravity[k];
  return CDYN_OK;
}

cdyn_status cdyn_model_body_name(const cdyn_model* model, int body, const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.treeModel.bodyNames, body, name);
}

cdyn_status cdyn_model_body_index(const cdyn_model* model, const char* name, int* body) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, body, model->cm.treeModel.bodyNames);
}

cdyn_status cdyn_model_body_parent(const cdyn_model* model, int body, int* parent) {
  CDYN_CHECK_MODEL(model);
  if (parent == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_body_parent: parent is NULL");
  if (body < 0 || body >= model->cm.treeModel.nbodies)
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_model_body_parent: body is out of range");
  *parent = model->cm.treeModel.parent[body];
  return CDYN_OK;
}

cdyn_status cdyn_model_joint_name(const cdyn_model* model, int joint, const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.treeModel.jointNames, joint, name);
}

cdyn_status cdyn_model_joint_index(const cdyn_model* model, const char* name, int* joint) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, joint, model->cm.treeModel.jointNames);
}

cdyn_status cdyn_model_joint_type(const cdyn_model* model, int joint, int* type) {
  CDYN_CHECK_MODEL(model);
  if (type == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_joint_type: type is NULL");
  if (joint < 0 || joint >= model->cm.treeModel.nbodies)
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_model_joint_type: joint is out of range");
  *type = static_cast<int>(model->cm.treeModel.joints[joint].type);
  return CDYN_OK;
}

cdyn_status cdyn_model_joint_coordinates(const cdyn_model* model, int joint, int* idx_q, int* nq,
                                         int* idx_v, int* nv) {
  CDYN_CHECK_MODEL(model);
  const cd::Model& m = model->cm.treeModel;
  if (joint < 0 || joint >= m.nbodies)
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_model_joint_coordinates: joint is out of range");
  if (idx_q) *idx_q = m.idx_q[joint];
  if (nq) *nq = m.nqs[joint];
  if (idx_v) *idx_v = m.idx_v[joint];
  if (nv) *nv = m.nvs[joint];
  return CDYN_OK;
}

cdyn_status cdyn_model_position_name(const cdyn_model* model, int i, const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.treeModel.positionNames, i, name);
}

cdyn_status cdyn_model_velocity_name(const cdyn_model* model, int i, const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.treeModel.velocityNames, i, name);
}

cdyn_status cdyn_model_position_index(const cdyn_model* model, const char* name, int* i) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, i, model->cm.treeModel.positionNames);
}

cdyn_status cdyn_model_velocity_index(const cdyn_model* model, const char* name, int* i) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, i, model->cm.treeModel.velocityNames);
}

cdyn_status cdyn_model_position_limits(const cdyn_model* model, double* lower, double* upper,
                                       int n) {
  CDYN_CHECK_MODEL(model);
  const cd::Model& m = model->cm.treeModel;
  if (n != m.nq) return refuse(CDYN_ERR_INVALID_SIZE, "cdyn_model_position_limits: n is not nq");
  if (n > 0 && (lower == nullptr || upper == nullptr))
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_position_limits: lower or upper is NULL");
  copyOut(m.lowerPositionLimit, lower);
  copyOut(m.upperPositionLimit, upper);
  return CDYN_OK;
}

cdyn_status cdyn_model_velocity_limits(const cdyn_model* model, double* limit, int n) {
  CDYN_CHECK_MODEL(model);
  if (n != model->cm.treeModel.nv)
    return refuse(CDYN_ERR_INVALID_SIZE, "cdyn_model_velocity_limits: n is not nv");
  if (n > 0 && limit == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_velocity_limits: limit is NULL");
  copyOut(model->cm.treeModel.velocityLimit, limit);
  return CDYN_OK;
}

cdyn_status cdyn_model_effort_limits(const cdyn_model* model, double* limit, int n) {
  CDYN_CHECK_MODEL(model);
  if (n != model->cm.treeModel.nv)
    return refuse(CDYN_ERR_INVALID_SIZE, "cdyn_model_effort_limits: n is not nv");
  if (n > 0 && limit == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_effort_limits: limit is NULL");
  copyOut(model->cm.treeModel.effortLimit, limit);
  return CDYN_OK;
}

cdyn_status cdyn_model_frame_name(const cdyn_model* model, int frame, const char** name) {
  CDYN_CHECK_MODEL(model);
  if (name == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_frame_name: name is NULL");
  const auto& frames = model->cm.treeModel.frames;
  if (frame < 0 || frame >= static_cast<int>(frames.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_model_frame_name: frame is out of range");
  *name = frames[frame].name.c_str();
  return CDYN_OK;
}

cdyn_status cdyn_model_frame_index(const cdyn_model* model, const char* name, int* frame) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, frame, FrameNames{model->cm.treeModel.frames});
}

cdyn_status cdyn_model_frame_body(const cdyn_model* model, int frame, int* body) {
  CDYN_CHECK_MODEL(model);
  if (body == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_frame_body: body is NULL");
  const auto& frames = model->cm.treeModel.frames;
  if (frame < 0 || frame >= static_cast<int>(frames.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_model_frame_body: frame is out of range");
  *body = frames[frame].body;
  return CDYN_OK;
}

}  // extern "C"
