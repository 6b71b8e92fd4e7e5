// Shared argument checks and error reporting of the C API (declared in capi_internal.hpp).
#include "capi_internal.hpp"

#include <cstring>

namespace cdyn_internal {

/// Writes a message into the workspace (when valid) and returns s.
__attribute__((format(printf, 3, 4))) cdyn_status fail(cdyn_workspace* ws, cdyn_status s,
                                                       const char* fmt, ...) {
  if (!validWorkspace(ws)) return s;
  va_list args;
  va_start(args, fmt);
  vsay(sinkOf(ws), s, fmt, args);
  va_end(args);
  return s;
}

/// Entry check of every compute function; invalidates the frame-function state.
cdyn_status enter(const cdyn_model* m, cdyn_workspace* ws) {
  if (ws == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "the workspace is NULL");
  if (ws->tag != kWorkspaceTag)
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "the workspace is not a valid cdyn_workspace handle (freed, or another kind)");
  if (m == nullptr) return fail(ws, CDYN_ERR_NULL_POINTER, "model is NULL");
  if (m->tag != kModelTag)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "model is not a valid cdyn_model handle");
  if (ws->model != m)
    return fail(ws, CDYN_ERR_WORKSPACE_MISMATCH, "the workspace was created for another model");
  ws->lastDynamics = kNoDynamics;
  return CDYN_OK;
}

/// An array argument of `expected` elements (input or output).
cdyn_status checkArray(cdyn_workspace* ws, const double* p, int n, int expected, const char* name) {
  if (n != expected)
    return fail(ws, CDYN_ERR_INVALID_SIZE, "%s has length %d, expected %d", name, n, expected);
  if (p == nullptr && expected > 0) return fail(ws, CDYN_ERR_NULL_POINTER, "%s is NULL", name);
  return CDYN_OK;
}

cdyn_status checkPointer(cdyn_workspace* ws, const void* p, const char* name) {
  return p ? CDYN_OK : fail(ws, CDYN_ERR_NULL_POINTER, "%s is NULL", name);
}

cdyn_status checkFrame(cdyn_workspace* ws, const cd::Model& model, int frame) {
  const int n = static_cast<int>(model.frames.size());
  if (frame < 0 || frame >= n)
    return fail(ws, CDYN_ERR_INVALID_INDEX, "frame index %d out of range [0, %d)", frame, n);
  return CDYN_OK;
}

cdyn_status toReferenceFrame(cdyn_workspace* ws, int rf, cd::ReferenceFrame* out) {
  switch (rf) {
    case CDYN_LOCAL:
      *out = cd::ReferenceFrame::Local;
      return CDYN_OK;
    case CDYN_WORLD:
      *out = cd::ReferenceFrame::World;
      return CDYN_OK;
    case CDYN_LOCAL_WORLD_ALIGNED:
      *out = cd::ReferenceFrame::LocalWorldAligned;
      return CDYN_OK;
    default:
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                  "reference frame %d is not CDYN_LOCAL, CDYN_WORLD or CDYN_LOCAL_WORLD_ALIGNED",
                  rf);
  }
}

cdyn_status needKinematics(cdyn_workspace* ws, int level) {
  static const char* const what[] = {"", "q", "q and v", "q, v and a"};
  if (ws->kinLevel < level)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                "call cdyn_forward_kinematics with %s on this workspace first (no other compute "
                "call in between)",
                what[level]);
  return CDYN_OK;
}

/// Optional external forces: copied into the workspace (aligned); *out = nullptr when absent.
cdyn_status readForces(cdyn_workspace* ws, const cd::Model& model, const double* fext, int n,
                       const cd::Force** out) {
  *out = nullptr;
  if (fext == nullptr && n == 0) return CDYN_OK;
  if (cdyn_status s = checkArray(ws, fext, n, 6 * model.nbodies, "fext")) return s;
  std::vector<cd::Force>& f = ws->body->fext;
  for (int i = 0; i < model.nbodies; ++i) f[i] = Eigen::Map<const cd::Force>(fext + 6 * i);
  *out = f.data();
  return CDYN_OK;
}

/// An optional array argument: absent when (NULL, 0), else checked like checkArray.
cdyn_status checkOptionalArray(cdyn_workspace* ws, const double* p, int n, int expected,
                               const char* name, bool* present) {
  *present = !(p == nullptr && n == 0);
  return *present ? checkArray(ws, p, n, expected, name) : CDYN_OK;
}

/// A column-major rows x cols output matrix with leading dimension ld.
cdyn_status checkMatrix(cdyn_workspace* ws, const double* p, int ld, int rows, int cols,
                        const char* name, const char* ldName) {
  const int need = rows;  // the header's ld >= r, also for r = 0
  if (ld < need)
    return fail(ws, CDYN_ERR_INVALID_SIZE, "%s is %d, expected >= %d", ldName, ld, need);
  if (rows > 0 && cols > 0) return checkPointer(ws, p, name);
  return CDYN_OK;
}

/// Text into a caller buffer (truncated, NUL-terminated when len > 0); *needed = size + 1.
cdyn_status textOut(const std::string& text, char* buf, std::size_t len, std::size_t* needed) {
  if (buf == nullptr && len > 0) return refuse(CDYN_ERR_NULL_POINTER, "buf is NULL but len > 0");
  if (needed) *needed = text.size() + 1;
  if (len > 0) {
    const std::size_t n = std::min(len - 1, text.size());
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  return CDYN_OK;
}

cdyn_status checkCluster(cdyn_workspace* ws, const cd::ClusterModel& cm, int k) {
  const int n = static_cast<int>(cm.clusters.size());
  if (k < 0 || k >= n)
    return fail(ws, CDYN_ERR_INVALID_INDEX, "cluster index %d out of range [0, %d)", k, n);
  return CDYN_OK;
}

/// String query shared by the *_name queries.
cdyn_status nameAt(const cdyn_model* m, const std::vector<std::string>& names, int i,
                   const char** out) {
  if (out == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "the name output pointer is NULL");
  if (i < 0 || i >= static_cast<int>(names.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "index out of range (valid: 0 <= index < count)");
  (void)m;
  *out = names[i].c_str();
  return CDYN_OK;
}

}  // namespace cdyn_internal
