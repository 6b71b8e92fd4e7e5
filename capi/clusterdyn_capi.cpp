// C API of clusterdyn: converts and checks arguments, calls the C++ API, maps statuses. Holds no
// dynamics logic of its own. Every entry point catches every exception.
#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "arena.hpp"
#include "check.hpp"  // src/: the core's argument checks (same messages as the C++ API)
#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"

namespace cd = clusterdyn;
using cdyn_internal::Arena;
using cdyn_internal::ArenaScope;

// Status values 1..8 are clusterdyn::Status values.
static_assert(CDYN_ERR_INVALID_SIZE == static_cast<int>(cd::Status::InvalidSize), "");
static_assert(CDYN_ERR_NON_FINITE == static_cast<int>(cd::Status::NonFinite), "");
static_assert(CDYN_ERR_NOT_UNIT_QUATERNION == static_cast<int>(cd::Status::NotUnitQuaternion), "");
static_assert(CDYN_ERR_NOT_POSITIVE_DEFINITE == static_cast<int>(cd::Status::NotPositiveDefinite),
              "");
static_assert(CDYN_ERR_INVALID_INDEX == static_cast<int>(cd::Status::InvalidIndex), "");
static_assert(CDYN_ERR_CONSTRAINT_FAILURE == static_cast<int>(cd::Status::ConstraintFailure), "");
static_assert(CDYN_ERR_WORKSPACE_MISMATCH == static_cast<int>(cd::Status::WorkspaceMismatch), "");
static_assert(CDYN_ERR_INVALID_ARGUMENT == static_cast<int>(cd::Status::InvalidArgument), "");
static_assert(CDYN_JOINT_REVOLUTE == static_cast<int>(cd::JointType::Revolute) &&
                  CDYN_JOINT_PRISMATIC == static_cast<int>(cd::JointType::Prismatic) &&
                  CDYN_JOINT_SPHERICAL == static_cast<int>(cd::JointType::Spherical) &&
                  CDYN_JOINT_PLANAR == static_cast<int>(cd::JointType::Planar) &&
                  CDYN_JOINT_FLOATING == static_cast<int>(cd::JointType::Floating) &&
                  CDYN_JOINT_FIXED == static_cast<int>(cd::JointType::Fixed),
              "cdyn_joint_type mirrors clusterdyn::JointType");

namespace {

constexpr std::uint32_t kModelTag = 0x4c4d4443u;      // "CDML"
constexpr std::uint32_t kWorkspaceTag = 0x53574443u;  // "CDWS"
constexpr std::uint32_t kDeadTag = 0xdeaddeadu;
constexpr std::size_t kBlockAlign = 64;

std::size_t roundUp(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

/// Everything a workspace owns besides its handle; constructed inside the workspace's arena.
struct WorkspaceBody {
  explicit WorkspaceBody(const cd::ClusterModel& m)
      : data(m),
        fext(m.tree.nbodies, cd::Force::Zero()),
        y(cd::VecX::Zero(m.nyq)),
        ydot(cd::VecX::Zero(m.ny)) {}
  cd::ClusterData data;         ///< cluster workspace; data.tree is the spanning-tree one
  std::vector<cd::Force> fext;  ///< aligned copy of the caller's external forces
  cd::VecX y, ydot;             ///< independent-coordinate results before they are copied out
};
static_assert(alignof(WorkspaceBody) <= kBlockAlign, "");

/// Offsets inside a workspace block (from its 64-byte aligned start).
struct Layout {
  std::size_t bodyOffset = 0, arenaOffset = 0, scratchOffset = 0, arenaBytes = 0, scratchBytes = 0,
              total = 0;
};

/// Kinematic results valid in the workspace for the frame functions.
enum KinLevel : int { kNone = 0, kPlacements = 1, kVelocities = 2, kAccelerations = 3 };

}  // namespace

struct cdyn_model {
  std::uint32_t tag = kModelTag;
  cd::ClusterModel cm;  ///< cm.tree: the spanning tree every tree function works on
  std::string treeDescription, clusterDescription, clusterDot;  ///< made at load time
  Layout layout;
  mutable std::atomic<int> workspaces{0};
};

struct cdyn_workspace {
  std::uint32_t tag;
  const cdyn_model* model;
  WorkspaceBody* body;
  Arena arena;      ///< holds the body's arrays
  Arena scratch;    ///< reset by each call that needs temporaries (integrate, neutral)
  void* heapBlock;  ///< block to free (cdyn_workspace_create), nullptr for caller memory
  int kinLevel;
};

namespace {

// ---- errors --------------------------------------------------------------------------------

bool validWorkspace(const cdyn_workspace* ws) { return ws != nullptr && ws->tag == kWorkspaceTag; }

/// Writes a message into the workspace (when valid) and returns s.
__attribute__((format(printf, 3, 4))) cdyn_status fail(cdyn_workspace* ws, cdyn_status s,
                                                       const char* fmt, ...) {
  if (validWorkspace(ws)) {
    auto& buf = ws->body->data.tree.lastError;
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buf.data(), buf.size(), fmt, args);
    va_end(args);
  }
  return s;
}

cdyn_status ok(cdyn_workspace* ws) {
  ws->body->data.tree.lastError[0] = '\0';
  return CDYN_OK;
}

cdyn_status fromStatus(cd::Status s) { return static_cast<cdyn_status>(static_cast<int>(s)); }

void writeMessage(char* err, std::size_t errlen, const char* msg) {
  if (err == nullptr || errlen == 0) return;
  std::snprintf(err, errlen, "%s", msg);
}

/// Runs f, turning every exception into a status (and a message in ws when valid).
template <typename F>
cdyn_status guarded(cdyn_workspace* ws, F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(ws, CDYN_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(ws, CDYN_ERR_INTERNAL, "internal error: %s", e.what());
  } catch (...) {
    return fail(ws, CDYN_ERR_INTERNAL, "internal error: unknown exception");
  }
}

// ---- argument checks -----------------------------------------------------------------------

cdyn_status checkModel(const cdyn_model* m) {
  if (m == nullptr) return CDYN_ERR_NULL_POINTER;
  if (m->tag != kModelTag) return CDYN_ERR_INVALID_ARGUMENT;
  return CDYN_OK;
}

/// Entry check of every compute function; invalidates the frame-function state.
cdyn_status enter(const cdyn_model* m, cdyn_workspace* ws) {
  if (ws == nullptr) return CDYN_ERR_NULL_POINTER;
  if (ws->tag != kWorkspaceTag) return CDYN_ERR_INVALID_ARGUMENT;
  if (m == nullptr) return fail(ws, CDYN_ERR_NULL_POINTER, "model is NULL");
  if (m->tag != kModelTag)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "model is not a valid cdyn_model handle");
  if (ws->model != m)
    return fail(ws, CDYN_ERR_WORKSPACE_MISMATCH, "the workspace was created for another model");
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

void copyOut(const cd::VecX& x, double* out) { std::copy_n(x.data(), x.size(), out); }

/// An optional array argument: absent when (NULL, 0), else checked like checkArray.
cdyn_status checkOptionalArray(cdyn_workspace* ws, const double* p, int n, int expected,
                               const char* name, bool* present) {
  *present = !(p == nullptr && n == 0);
  return *present ? checkArray(ws, p, n, expected, name) : CDYN_OK;
}

/// A column-major rows x cols output matrix with leading dimension ld.
cdyn_status checkMatrix(cdyn_workspace* ws, const double* p, int ld, int rows, int cols,
                        const char* name, const char* ldName) {
  const int need = std::max(1, rows);
  if (ld < need)
    return fail(ws, CDYN_ERR_INVALID_SIZE, "%s is %d, expected >= %d", ldName, ld, need);
  if (rows > 0 && cols > 0) return checkPointer(ws, p, name);
  return CDYN_OK;
}

/// Writes the rows x cols block of A starting at (r0, c0) of out (leading dimension ld).
template <typename Matrix>
void copyBlock(const Matrix& A, double* out, int ld, int r0, int c0) {
  for (Eigen::Index j = 0; j < A.cols(); ++j)
    for (Eigen::Index i = 0; i < A.rows(); ++i) out[(r0 + i) + (c0 + j) * ld] = A(i, j);
}

/// Text into a caller buffer (truncated, NUL-terminated when len > 0); *needed = size + 1.
cdyn_status textOut(const std::string& text, char* buf, std::size_t len, std::size_t* needed) {
  if (buf == nullptr && len > 0) return CDYN_ERR_NULL_POINTER;
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

/// Status of a call that may have moved the workspace's warm start (ClusterData::q): after a
/// failed loop closure (or a non-finite result) it goes back to the reference configuration,
/// so that the next solve starts from a closed configuration again.
cdyn_status positionSolveStatus(cdyn_workspace* ws, const cdyn_model* m, cd::Status s) {
  cd::ClusterData& data = ws->body->data;
  if (s == cd::Status::ConstraintFailure || !data.q.allFinite())
    data.q = m->cm.qReference;  // same size: no allocation
  return s == cd::Status::Ok ? ok(ws) : fromStatus(s);
}

/// Checks and looks up the model of a model-only query.
#define CDYN_CHECK_MODEL(m)                        \
  do {                                             \
    if (cdyn_status s_ = checkModel(m)) return s_; \
  } while (0)
#define CDYN_CHECK(expr)                    \
  do {                                      \
    if (cdyn_status s_ = (expr)) return s_; \
  } while (0)
#define CDYN_CHECK_CXX(expr)                         \
  do {                                               \
    const cd::Status s_ = (expr);                    \
    if (s_ != cd::Status::Ok) return fromStatus(s_); \
  } while (0)

using ConstMap = Eigen::Map<const cd::VecX>;
using Map = Eigen::Map<cd::VecX>;

// ---- model loading -------------------------------------------------------------------------

/// Sizes the workspace of a model by constructing its parts once with a measuring arena.
Layout measureLayout(const cd::ClusterModel& cm) {
  const cd::Model& model = cm.tree;
  Layout l;
  {
    Arena a = Arena::measure();
    ArenaScope scope(&a);
    WorkspaceBody body(cm);
    (void)body;
    l.arenaBytes = a.measured;
  }
  const cd::VecX q0 = cd::neutralConfiguration(model);
  const cd::VecX v0 = cd::VecX::Zero(model.nv);
  std::size_t scratch = 0;
  {
    Arena a = Arena::measure();
    ArenaScope scope(&a);
    const cd::VecX q = cd::neutralConfiguration(model);
    (void)q;
    scratch = std::max(scratch, a.measured);
  }
  {
    Arena a = Arena::measure();
    ArenaScope scope(&a);
    const cd::VecX q = cd::integrate(model, q0, v0, 0.0);
    (void)q;
    scratch = std::max(scratch, a.measured);
  }
  l.scratchBytes = scratch;
  l.bodyOffset = roundUp(sizeof(cdyn_workspace), kBlockAlign);
  l.arenaOffset = l.bodyOffset + roundUp(sizeof(WorkspaceBody), kBlockAlign);
  l.scratchOffset = l.arenaOffset + roundUp(l.arenaBytes, kBlockAlign);
  l.total = l.scratchOffset + roundUp(l.scratchBytes, kBlockAlign);
  return l;
}

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

/// Parses (build() returns a UrdfDescription) and builds the cluster model.
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
  constexpr unsigned int kKnownFlags = CDYN_LOAD_FLOATING_BASE | CDYN_LOAD_IGNORE_CONSTRAINTS;
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
    if (gravity) options.gravity = cd::Vec3(gravity[0], gravity[1], gravity[2]);
    auto m = std::make_unique<cdyn_model>();
    cd::UrdfDescription urdf = build();
    if (flags & CDYN_LOAD_IGNORE_CONSTRAINTS) dropChords(urdf);
    m->cm = cd::buildClusterModel(urdf, options);
    m->treeDescription = cd::describeModel(m->cm.tree);
    m->clusterDescription = cd::describeClusterTree(m->cm);
    m->clusterDot = cd::clusterTreeDot(m->cm);
    m->layout = measureLayout(m->cm);
    *out = m.release();
    return CDYN_OK;
  } catch (const cd::ModelError& e) {
    writeMessage(err, errlen, e.what());
    return CDYN_ERR_PARSE;
  } catch (const std::bad_alloc&) {
    writeMessage(err, errlen, "out of memory");
    return CDYN_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    writeMessage(err, errlen, e.what());
    return CDYN_ERR_INTERNAL;
  } catch (...) {
    writeMessage(err, errlen, "unknown exception");
    return CDYN_ERR_INTERNAL;
  }
}

/// Name lookup shared by the *_index queries (compares in place: no allocation).
template <typename Names>
cdyn_status findIndex(const char* name, int* out, const Names& names) {
  if (name == nullptr || out == nullptr) return CDYN_ERR_NULL_POINTER;
  *out = -1;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) {
      *out = static_cast<int>(i);
      return CDYN_OK;
    }
  }
  return CDYN_ERR_NOT_FOUND;
}

/// The frame names of a model, indexable like a vector of strings.
struct FrameNames {
  const std::vector<cd::Frame>& frames;
  std::size_t size() const { return frames.size(); }
  const std::string& operator[](std::size_t i) const { return frames[i].name; }
};

/// String query shared by the *_name queries.
cdyn_status nameAt(const cdyn_model* m, const std::vector<std::string>& names, int i,
                   const char** out) {
  if (out == nullptr) return CDYN_ERR_NULL_POINTER;
  if (i < 0 || i >= static_cast<int>(names.size())) return CDYN_ERR_INVALID_INDEX;
  (void)m;
  *out = names[i].c_str();
  return CDYN_OK;
}

cdyn_status workspaceInit(const cdyn_model* m, void* mem, std::size_t size, void* heapBlock,
                          cdyn_workspace** out) {
  const Layout& l = m->layout;
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(mem);
  const std::uintptr_t base = roundUp(start, kBlockAlign);
  if (size < base - start || size - (base - start) < l.total) return CDYN_ERR_INVALID_SIZE;
  unsigned char* p = reinterpret_cast<unsigned char*>(base);
  cdyn_workspace* ws = new (p) cdyn_workspace;
  ws->tag = 0;
  ws->model = m;
  ws->body = nullptr;
  ws->arena = Arena::over(p + l.arenaOffset, l.arenaBytes);
  ws->scratch = Arena::over(p + l.scratchOffset, l.scratchBytes);
  ws->heapBlock = heapBlock;
  ws->kinLevel = kNone;
  {
    ArenaScope scope(&ws->arena);
    ws->body = new (p + l.bodyOffset) WorkspaceBody(m->cm);
  }
  m->workspaces.fetch_add(1);
  ws->tag = kWorkspaceTag;
  *out = ws;
  return CDYN_OK;
}

}  // namespace

// =============================================================================================
// Version and errors
// =============================================================================================

#define CDYN_STR2(x) #x
#define CDYN_STR(x) CDYN_STR2(x)

extern "C" {

int cdyn_version(void) { return CDYN_VERSION_NUMBER; }

const char* cdyn_version_string(void) {
  return CDYN_STR(CDYN_VERSION_MAJOR) "." CDYN_STR(CDYN_VERSION_MINOR) "." CDYN_STR(
      CDYN_VERSION_PATCH);
}

cdyn_status cdyn_check_version(int abi_version) {
  return abi_version == CDYN_ABI_VERSION ? CDYN_OK : CDYN_ERR_VERSION;
}

const char* cdyn_status_string(cdyn_status status) {
  switch (status) {
    case CDYN_OK:
      return "ok";
    case CDYN_ERR_NULL_POINTER:
      return "null pointer";
    case CDYN_ERR_VERSION:
      return "ABI version mismatch";
    case CDYN_ERR_PARSE:
      return "model could not be loaded";
    case CDYN_ERR_INTERNAL:
      return "internal error";
    case CDYN_ERR_NOT_FOUND:
      return "name not found";
    case CDYN_ERR_OUT_OF_MEMORY:
      return "out of memory";
    default:
      break;
  }
  const int s = static_cast<int>(status);
  if (s > 0 && s < 100) return cd::statusName(static_cast<cd::Status>(s));
  return "unknown status";
}

// =============================================================================================
// Model loading
// =============================================================================================

cdyn_status cdyn_model_load(int abi_version, const char* path, unsigned int flags,
                            const double* gravity, cdyn_model** model, char* err, size_t errlen) {
  if (path == nullptr) {
    if (model) *model = nullptr;
    writeMessage(err, errlen, "path is NULL");
    return CDYN_ERR_NULL_POINTER;
  }
  return loadModel(abi_version, flags, gravity, model, err, errlen,
                   [&] { return cd::parseUrdfFile(path); });
}

cdyn_status cdyn_model_load_string(int abi_version, const char* xml, size_t xml_len,
                                   unsigned int flags, const double* gravity, cdyn_model** model,
                                   char* err, size_t errlen) {
  if (xml == nullptr && xml_len > 0) {
    if (model) *model = nullptr;
    writeMessage(err, errlen, "xml is NULL");
    return CDYN_ERR_NULL_POINTER;
  }
  return loadModel(abi_version, flags, gravity, model, err, errlen, [&] {
    return cd::parseUrdfString(std::string(xml ? xml : "", xml_len), "<string>");
  });
}

cdyn_status cdyn_model_free(cdyn_model* model) {
  if (model == nullptr) return CDYN_OK;
  CDYN_CHECK_MODEL(model);
  if (model->workspaces.load() != 0) return CDYN_ERR_INVALID_ARGUMENT;
  model->tag = kDeadTag;
  delete model;
  return CDYN_OK;
}

// =============================================================================================
// Model queries
// =============================================================================================

cdyn_status cdyn_model_name(const cdyn_model* model, const char** name) {
  CDYN_CHECK_MODEL(model);
  if (name == nullptr) return CDYN_ERR_NULL_POINTER;
  *name = model->cm.tree.name.c_str();
  return CDYN_OK;
}

#define CDYN_INT_QUERY(fn, expr)                      \
  cdyn_status fn(const cdyn_model* model, int* out) { \
    CDYN_CHECK_MODEL(model);                          \
    if (out == nullptr) return CDYN_ERR_NULL_POINTER; \
    *out = (expr);                                    \
    return CDYN_OK;                                   \
  }
CDYN_INT_QUERY(cdyn_model_nbodies, model->cm.tree.nbodies)
CDYN_INT_QUERY(cdyn_model_nq, model->cm.tree.nq)
CDYN_INT_QUERY(cdyn_model_nv, model->cm.tree.nv)
CDYN_INT_QUERY(cdyn_model_nframes, static_cast<int>(model->cm.tree.frames.size()))
#undef CDYN_INT_QUERY

cdyn_status cdyn_model_total_mass(const cdyn_model* model, double* mass) {
  CDYN_CHECK_MODEL(model);
  if (mass == nullptr) return CDYN_ERR_NULL_POINTER;
  *mass = model->cm.tree.totalMass();
  return CDYN_OK;
}

cdyn_status cdyn_model_gravity(const cdyn_model* model, double gravity[3]) {
  CDYN_CHECK_MODEL(model);
  if (gravity == nullptr) return CDYN_ERR_NULL_POINTER;
  for (int k = 0; k < 3; ++k) gravity[k] = model->cm.tree.gravity[k];
  return CDYN_OK;
}

cdyn_status cdyn_model_body_name(const cdyn_model* model, int body, const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.tree.bodyNames, body, name);
}

cdyn_status cdyn_model_body_index(const cdyn_model* model, const char* name, int* body) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, body, model->cm.tree.bodyNames);
}

cdyn_status cdyn_model_body_parent(const cdyn_model* model, int body, int* parent) {
  CDYN_CHECK_MODEL(model);
  if (parent == nullptr) return CDYN_ERR_NULL_POINTER;
  if (body < 0 || body >= model->cm.tree.nbodies) return CDYN_ERR_INVALID_INDEX;
  *parent = model->cm.tree.parent[body];
  return CDYN_OK;
}

cdyn_status cdyn_model_joint_name(const cdyn_model* model, int joint, const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.tree.jointNames, joint, name);
}

cdyn_status cdyn_model_joint_index(const cdyn_model* model, const char* name, int* joint) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, joint, model->cm.tree.jointNames);
}

cdyn_status cdyn_model_joint_type(const cdyn_model* model, int joint, int* type) {
  CDYN_CHECK_MODEL(model);
  if (type == nullptr) return CDYN_ERR_NULL_POINTER;
  if (joint < 0 || joint >= model->cm.tree.nbodies) return CDYN_ERR_INVALID_INDEX;
  *type = static_cast<int>(model->cm.tree.joints[joint].type);
  return CDYN_OK;
}

cdyn_status cdyn_model_joint_coordinates(const cdyn_model* model, int joint, int* idx_q, int* nq,
                                         int* idx_v, int* nv) {
  CDYN_CHECK_MODEL(model);
  const cd::Model& m = model->cm.tree;
  if (joint < 0 || joint >= m.nbodies) return CDYN_ERR_INVALID_INDEX;
  if (idx_q) *idx_q = m.idx_q[joint];
  if (nq) *nq = m.nqs[joint];
  if (idx_v) *idx_v = m.idx_v[joint];
  if (nv) *nv = m.nvs[joint];
  return CDYN_OK;
}

cdyn_status cdyn_model_position_name(const cdyn_model* model, int i, const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.tree.positionNames, i, name);
}

cdyn_status cdyn_model_velocity_name(const cdyn_model* model, int i, const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.tree.velocityNames, i, name);
}

cdyn_status cdyn_model_position_index(const cdyn_model* model, const char* name, int* i) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, i, model->cm.tree.positionNames);
}

cdyn_status cdyn_model_velocity_index(const cdyn_model* model, const char* name, int* i) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, i, model->cm.tree.velocityNames);
}

cdyn_status cdyn_model_position_limits(const cdyn_model* model, double* lower, double* upper,
                                       int n) {
  CDYN_CHECK_MODEL(model);
  const cd::Model& m = model->cm.tree;
  if (n != m.nq) return CDYN_ERR_INVALID_SIZE;
  if (n > 0 && (lower == nullptr || upper == nullptr)) return CDYN_ERR_NULL_POINTER;
  copyOut(m.lowerPositionLimit, lower);
  copyOut(m.upperPositionLimit, upper);
  return CDYN_OK;
}

cdyn_status cdyn_model_velocity_limits(const cdyn_model* model, double* limit, int n) {
  CDYN_CHECK_MODEL(model);
  if (n != model->cm.tree.nv) return CDYN_ERR_INVALID_SIZE;
  if (n > 0 && limit == nullptr) return CDYN_ERR_NULL_POINTER;
  copyOut(model->cm.tree.velocityLimit, limit);
  return CDYN_OK;
}

cdyn_status cdyn_model_effort_limits(const cdyn_model* model, double* limit, int n) {
  CDYN_CHECK_MODEL(model);
  if (n != model->cm.tree.nv) return CDYN_ERR_INVALID_SIZE;
  if (n > 0 && limit == nullptr) return CDYN_ERR_NULL_POINTER;
  copyOut(model->cm.tree.effortLimit, limit);
  return CDYN_OK;
}

cdyn_status cdyn_model_frame_name(const cdyn_model* model, int frame, const char** name) {
  CDYN_CHECK_MODEL(model);
  if (name == nullptr) return CDYN_ERR_NULL_POINTER;
  const auto& frames = model->cm.tree.frames;
  if (frame < 0 || frame >= static_cast<int>(frames.size())) return CDYN_ERR_INVALID_INDEX;
  *name = frames[frame].name.c_str();
  return CDYN_OK;
}

cdyn_status cdyn_model_frame_index(const cdyn_model* model, const char* name, int* frame) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, frame, FrameNames{model->cm.tree.frames});
}

cdyn_status cdyn_model_frame_body(const cdyn_model* model, int frame, int* body) {
  CDYN_CHECK_MODEL(model);
  if (body == nullptr) return CDYN_ERR_NULL_POINTER;
  const auto& frames = model->cm.tree.frames;
  if (frame < 0 || frame >= static_cast<int>(frames.size())) return CDYN_ERR_INVALID_INDEX;
  *body = frames[frame].body;
  return CDYN_OK;
}

// =============================================================================================
// Workspaces
// =============================================================================================

cdyn_status cdyn_workspace_size(const cdyn_model* model, size_t* size) {
  CDYN_CHECK_MODEL(model);
  if (size == nullptr) return CDYN_ERR_NULL_POINTER;
  *size = model->layout.total + kBlockAlign - 1;
  return CDYN_OK;
}

cdyn_status cdyn_workspace_create(const cdyn_model* model, cdyn_workspace** workspace) {
  if (workspace == nullptr) return CDYN_ERR_NULL_POINTER;
  *workspace = nullptr;
  CDYN_CHECK_MODEL(model);
  return guarded(nullptr, [&] {
    const std::size_t size = model->layout.total + kBlockAlign - 1;
    void* block = std::malloc(size);
    if (block == nullptr) return CDYN_ERR_OUT_OF_MEMORY;
    try {
      const cdyn_status s = workspaceInit(model, block, size, block, workspace);
      if (s != CDYN_OK) std::free(block);
      return s;
    } catch (...) {
      std::free(block);
      throw;
    }
  });
}

cdyn_status cdyn_workspace_init_in(const cdyn_model* model, void* mem, size_t size,
                                   cdyn_workspace** workspace) {
  if (workspace == nullptr) return CDYN_ERR_NULL_POINTER;
  *workspace = nullptr;
  CDYN_CHECK_MODEL(model);
  if (mem == nullptr) return CDYN_ERR_NULL_POINTER;
  return guarded(nullptr, [&] {
    try {
      return workspaceInit(model, mem, size, nullptr, workspace);
    } catch (const std::bad_alloc&) {
      return CDYN_ERR_INTERNAL;  // the measured arena was too small: a bug
    }
  });
}

cdyn_status cdyn_workspace_free(cdyn_workspace* workspace) {
  if (workspace == nullptr) return CDYN_OK;
  if (workspace->tag != kWorkspaceTag) return CDYN_ERR_INVALID_ARGUMENT;
  workspace->tag = kDeadTag;
  {
    ArenaScope scope(&workspace->arena);
    workspace->body->~WorkspaceBody();
  }
  workspace->model->workspaces.fetch_sub(1);
  void* block = workspace->heapBlock;
  workspace->~cdyn_workspace();
  std::free(block);  // nullptr for caller memory
  return CDYN_OK;
}

const char* cdyn_workspace_last_error(const cdyn_workspace* workspace) {
  if (workspace == nullptr) return "workspace is NULL";
  if (workspace->tag != kWorkspaceTag) return "not a valid cdyn_workspace handle";
  return workspace->body->data.tree.lastError.data();
}

// =============================================================================================
// Configuration space
// =============================================================================================

cdyn_status cdyn_neutral_configuration(const cdyn_model* model, cdyn_workspace* ws, double* q,
                                       int n) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    CDYN_CHECK(checkArray(ws, q, n, model->cm.tree.nq, "q"));
    ws->scratch.reset();
    ArenaScope scope(&ws->scratch);
    const cd::VecX q0 = cd::neutralConfiguration(model->cm.tree);
    copyOut(q0, q);
    return ok(ws);
  });
}

cdyn_status cdyn_integrate(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                           const double* v, int nv, double dt, double* qout, int nqout) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    cd::Data& data = ws->body->data.tree;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, m.nv, "v"));
    CDYN_CHECK(checkArray(ws, qout, nqout, m.nq, "qout"));
    if (!std::isfinite(dt)) return fail(ws, CDYN_ERR_NON_FINITE, "dt is not finite");
    const ConstMap qm(q, nq), vm(v, nv);
    CDYN_CHECK_CXX(cd::detail::checkConfiguration(m, data, qm));
    CDYN_CHECK_CXX(cd::detail::checkVector(data, vm, m.nv, "v"));
    ws->scratch.reset();
    ArenaScope scope(&ws->scratch);
    const cd::VecX result = cd::integrate(m, qm, vm, dt);
    if (!result.allFinite())
      return fail(ws, CDYN_ERR_NON_FINITE, "the integrated configuration is not finite");
    copyOut(result, qout);
    return ok(ws);
  });
}

cdyn_status cdyn_normalize_configuration(const cdyn_model* model, cdyn_workspace* ws, double* q,
                                         int n) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    CDYN_CHECK(checkArray(ws, q, n, m.nq, "q"));
    Map qm(q, n);
    CDYN_CHECK_CXX(cd::detail::checkVector(ws->body->data.tree, qm, m.nq, "q"));
    cd::normalizeConfiguration(m, qm);
    return ok(ws);
  });
}

// =============================================================================================
// Kinematics
// =============================================================================================

cdyn_status cdyn_forward_kinematics(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                    int nq, const double* v, int nv, const double* a, int na) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    cd::Data& data = ws->body->data.tree;
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
  CDYN_CHECK(enter(model, ws));
  return guarded(ws, [&] {
    CDYN_CHECK(checkFrame(ws, model->cm.tree, frame));
    CDYN_CHECK(checkPointer(ws, R, "R"));
    CDYN_CHECK(checkPointer(ws, p, "p"));
    if (ldr < 3) return fail(ws, CDYN_ERR_INVALID_SIZE, "ldr is %d, expected >= 3", ldr);
    CDYN_CHECK(needKinematics(ws, kPlacements));
    const cd::Transform T = cd::framePlacement(model->cm.tree, ws->body->data.tree, frame);
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 3; ++i) R[i + j * ldr] = T.R(i, j);
      p[j] = T.p[j];
    }
    return ok(ws);
  });
}

cdyn_status cdyn_frame_placement_matrix(const cdyn_model* model, cdyn_workspace* ws, int frame,
                                        double* T, int ldt) {
  CDYN_CHECK(enter(model, ws));
  return guarded(ws, [&] {
    CDYN_CHECK(checkFrame(ws, model->cm.tree, frame));
    CDYN_CHECK(checkPointer(ws, T, "T"));
    if (ldt < 4) return fail(ws, CDYN_ERR_INVALID_SIZE, "ldt is %d, expected >= 4", ldt);
    CDYN_CHECK(needKinematics(ws, kPlacements));
    const cd::Transform X = cd::framePlacement(model->cm.tree, ws->body->data.tree, frame);
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i)
        T[i + j * ldt] = i < 3 ? (j < 3 ? X.R(i, j) : X.p[i]) : (j < 3 ? 0.0 : 1.0);
    return ok(ws);
  });
}

cdyn_status cdyn_frame_velocity(const cdyn_model* model, cdyn_workspace* ws, int frame, int rf,
                                double velocity[6]) {
  CDYN_CHECK(enter(model, ws));
  return guarded(ws, [&] {
    cd::ReferenceFrame r = cd::ReferenceFrame::Local;
    CDYN_CHECK(checkFrame(ws, model->cm.tree, frame));
    CDYN_CHECK(toReferenceFrame(ws, rf, &r));
    CDYN_CHECK(checkPointer(ws, velocity, "velocity"));
    CDYN_CHECK(needKinematics(ws, kVelocities));
    const cd::Motion m = cd::frameVelocity(model->cm.tree, ws->body->data.tree, frame, r);
    std::copy_n(m.data(), 6, velocity);
    return ok(ws);
  });
}

cdyn_status cdyn_frame_acceleration(const cdyn_model* model, cdyn_workspace* ws, int frame, int rf,
                                    double acceleration[6]) {
  CDYN_CHECK(enter(model, ws));
  return guarded(ws, [&] {
    cd::ReferenceFrame r = cd::ReferenceFrame::Local;
    CDYN_CHECK(checkFrame(ws, model->cm.tree, frame));
    CDYN_CHECK(toReferenceFrame(ws, rf, &r));
    CDYN_CHECK(checkPointer(ws, acceleration, "acceleration"));
    CDYN_CHECK(needKinematics(ws, kAccelerations));
    const cd::Motion m = cd::frameAcceleration(model->cm.tree, ws->body->data.tree, frame, r);
    std::copy_n(m.data(), 6, acceleration);
    return ok(ws);
  });
}

cdyn_status cdyn_frame_classical_acceleration(const cdyn_model* model, cdyn_workspace* ws,
                                              int frame, int rf, double acceleration[3]) {
  CDYN_CHECK(enter(model, ws));
  return guarded(ws, [&] {
    cd::ReferenceFrame r = cd::ReferenceFrame::Local;
    CDYN_CHECK(checkFrame(ws, model->cm.tree, frame));
    CDYN_CHECK(toReferenceFrame(ws, rf, &r));
    CDYN_CHECK(checkPointer(ws, acceleration, "acceleration"));
    CDYN_CHECK(needKinematics(ws, kAccelerations));
    const cd::Vec3 acc =
        cd::frameClassicalAcceleration(model->cm.tree, ws->body->data.tree, frame, r);
    std::copy_n(acc.data(), 3, acceleration);
    return ok(ws);
  });
}

namespace {
/// Frame Jacobian from the workspace placements into J (6 x nv, leading dimension ldj).
cdyn_status jacobianOut(const cdyn_model* model, cdyn_workspace* ws, int frame,
                        cd::ReferenceFrame r, double* J, int ldj) {
  const cd::Model& m = model->cm.tree;
  cd::Data& data = ws->body->data.tree;
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
  CDYN_CHECK(enter(model, ws));
  return guarded(ws, [&] {
    cd::ReferenceFrame r = cd::ReferenceFrame::Local;
    CDYN_CHECK(checkJacobianArgs(ws, model->cm.tree, frame, rf, &r, J, ldj));
    CDYN_CHECK(needKinematics(ws, kPlacements));
    return jacobianOut(model, ws, frame, r, J, ldj);
  });
}

cdyn_status cdyn_compute_frame_jacobian(const cdyn_model* model, cdyn_workspace* ws,
                                        const double* q, int nq, int frame, int rf, double* J,
                                        int ldj) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    cd::ReferenceFrame r = cd::ReferenceFrame::Local;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkJacobianArgs(ws, m, frame, rf, &r, J, ldj));
    CDYN_CHECK_CXX(cd::forwardKinematics(m, ws->body->data.tree, ConstMap(q, nq)));
    ws->kinLevel = kPlacements;
    return jacobianOut(model, ws, frame, r, J, ldj);
  });
}

cdyn_status cdyn_center_of_mass(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                int nq, double com[3]) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkPointer(ws, com, "com"));
    CDYN_CHECK_CXX(cd::forwardKinematics(m, ws->body->data.tree, ConstMap(q, nq)));
    const cd::Vec3 c = cd::centerOfMass(m, ws->body->data.tree);
    std::copy_n(c.data(), 3, com);
    return ok(ws);
  });
}

// =============================================================================================
// Dynamics
// =============================================================================================

cdyn_status cdyn_rnea(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                      const double* v, int nv, const double* a, int na, const double* fext,
                      int nfext, double* tau, int ntau) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    cd::Data& data = ws->body->data.tree;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, m.nv, "v"));
    CDYN_CHECK(checkArray(ws, a, na, m.nv, "a"));
    CDYN_CHECK(checkArray(ws, tau, ntau, m.nv, "tau"));
    const cd::Force* f = nullptr;
    CDYN_CHECK(readForces(ws, m, fext, nfext, &f));
    CDYN_CHECK_CXX(cd::rnea(m, data, ConstMap(q, nq), ConstMap(v, nv), ConstMap(a, na), f));
    copyOut(data.tau, tau);
    return ok(ws);
  });
}

cdyn_status cdyn_aba(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                     const double* v, int nv, const double* tau, int ntau, const double* fext,
                     int nfext, double* ddq, int nddq) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    cd::Data& data = ws->body->data.tree;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, m.nv, "v"));
    CDYN_CHECK(checkArray(ws, tau, ntau, m.nv, "tau"));
    CDYN_CHECK(checkArray(ws, ddq, nddq, m.nv, "ddq"));
    const cd::Force* f = nullptr;
    CDYN_CHECK(readForces(ws, m, fext, nfext, &f));
    CDYN_CHECK_CXX(cd::aba(m, data, ConstMap(q, nq), ConstMap(v, nv), ConstMap(tau, ntau), f));
    copyOut(data.ddq, ddq);
    return ok(ws);
  });
}

cdyn_status cdyn_crba(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                      double* M, int ldm) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    cd::Data& data = ws->body->data.tree;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    if (ldm < std::max(1, m.nv))
      return fail(ws, CDYN_ERR_INVALID_SIZE, "ldm is %d, expected >= %d", ldm, std::max(1, m.nv));
    if (m.nv > 0) CDYN_CHECK(checkPointer(ws, M, "M"));
    CDYN_CHECK_CXX(cd::crba(m, data, ConstMap(q, nq)));
    for (int j = 0; j < m.nv; ++j) std::copy_n(data.M.col(j).data(), m.nv, M + j * ldm);
    return ok(ws);
  });
}

cdyn_status cdyn_nonlinear_effects(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                   int nq, const double* v, int nv, double* nle, int nnle) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    cd::Data& data = ws->body->data.tree;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, m.nv, "v"));
    CDYN_CHECK(checkArray(ws, nle, nnle, m.nv, "nle"));
    CDYN_CHECK_CXX(cd::nonLinearEffects(m, data, ConstMap(q, nq), ConstMap(v, nv)));
    copyOut(data.nle, nle);
    return ok(ws);
  });
}

cdyn_status cdyn_generalized_gravity(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                     int nq, double* g, int ng) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    cd::Data& data = ws->body->data.tree;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkArray(ws, g, ng, m.nv, "g"));
    CDYN_CHECK_CXX(cd::generalizedGravity(m, data, ConstMap(q, nq)));
    copyOut(data.nle, g);
    return ok(ws);
  });
}

cdyn_status cdyn_kinetic_energy(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                int nq, const double* v, int nv, double* energy) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    cd::Data& data = ws->body->data.tree;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, m.nv, "v"));
    CDYN_CHECK(checkPointer(ws, energy, "energy"));
    const ConstMap qm(q, nq), vm(v, nv);
    const double T = cd::kineticEnergy(m, data, qm, vm);
    if (!std::isfinite(T)) {  // invalid input (the C++ call reports it by NaN): get the status
      CDYN_CHECK_CXX(cd::forwardKinematics(m, data, qm, vm));
      return fail(ws, CDYN_ERR_NON_FINITE, "the kinetic energy is not finite");
    }
    *energy = T;
    return ok(ws);
  });
}

cdyn_status cdyn_potential_energy(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                  int nq, double* energy) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::Model& m = model->cm.tree;
    cd::Data& data = ws->body->data.tree;
    CDYN_CHECK(checkArray(ws, q, nq, m.nq, "q"));
    CDYN_CHECK(checkPointer(ws, energy, "energy"));
    const ConstMap qm(q, nq);
    const double V = cd::potentialEnergy(m, data, qm);
    if (!std::isfinite(V)) {
      CDYN_CHECK_CXX(cd::forwardKinematics(m, data, qm));
      return fail(ws, CDYN_ERR_NON_FINITE, "the potential energy is not finite");
    }
    *energy = V;
    return ok(ws);
  });
}

// =============================================================================================
// Cluster tree and independent coordinates: queries
// =============================================================================================

#define CDYN_INT_QUERY(fn, expr)                      \
  cdyn_status fn(const cdyn_model* model, int* out) { \
    CDYN_CHECK_MODEL(model);                          \
    if (out == nullptr) return CDYN_ERR_NULL_POINTER; \
    *out = (expr);                                    \
    return CDYN_OK;                                   \
  }
CDYN_INT_QUERY(cdyn_model_nclusters, static_cast<int>(model->cm.clusters.size()))
CDYN_INT_QUERY(cdyn_model_ny, model->cm.ny)
CDYN_INT_QUERY(cdyn_model_nyq, model->cm.nyq)
CDYN_INT_QUERY(cdyn_model_nloops, static_cast<int>(model->cm.loops.size()))
CDYN_INT_QUERY(cdyn_model_nrelations, static_cast<int>(model->cm.relations.size()))
#undef CDYN_INT_QUERY

cdyn_status cdyn_model_independent_position_name(const cdyn_model* model, int i,
                                                 const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.independentPositionNames, i, name);
}

cdyn_status cdyn_model_independent_velocity_name(const cdyn_model* model, int i,
                                                 const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.independentVelocityNames, i, name);
}

cdyn_status cdyn_model_independent_position_index(const cdyn_model* model, const char* name,
                                                  int* i) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, i, model->cm.independentPositionNames);
}

cdyn_status cdyn_model_independent_velocity_index(const cdyn_model* model, const char* name,
                                                  int* i) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, i, model->cm.independentVelocityNames);
}

cdyn_status cdyn_model_independent_indices(const cdyn_model* model, int* position_index, int nyq,
                                           int* velocity_index, int ny) {
  CDYN_CHECK_MODEL(model);
  const cd::ClusterModel& cm = model->cm;
  const bool hasPosition = !(position_index == nullptr && nyq == 0);
  const bool hasVelocity = !(velocity_index == nullptr && ny == 0);
  if ((hasPosition && nyq != cm.nyq) || (hasVelocity && ny != cm.ny)) return CDYN_ERR_INVALID_SIZE;
  if ((hasPosition && nyq > 0 && position_index == nullptr) ||
      (hasVelocity && ny > 0 && velocity_index == nullptr))
    return CDYN_ERR_NULL_POINTER;
  if (hasPosition) std::copy_n(cm.independentPosition.data(), cm.nyq, position_index);
  if (hasVelocity) std::copy_n(cm.independentVelocity.data(), cm.ny, velocity_index);
  return CDYN_OK;
}

cdyn_status cdyn_model_reference_configuration(const cdyn_model* model, double* q, int n) {
  CDYN_CHECK_MODEL(model);
  const cd::ClusterModel& cm = model->cm;
  if (n != cm.tree.nq) return CDYN_ERR_INVALID_SIZE;
  if (n > 0 && q == nullptr) return CDYN_ERR_NULL_POINTER;
  copyOut(cm.qReference, q);
  return CDYN_OK;
}

cdyn_status cdyn_model_cluster_name(const cdyn_model* model, int cluster, const char** name) {
  CDYN_CHECK_MODEL(model);
  if (name == nullptr) return CDYN_ERR_NULL_POINTER;
  const auto& clusters = model->cm.clusters;
  if (cluster < 0 || cluster >= static_cast<int>(clusters.size())) return CDYN_ERR_INVALID_INDEX;
  *name = clusters[cluster].name.c_str();
  return CDYN_OK;
}

namespace {
/// The cluster names of a model, indexable like a vector of strings.
struct ClusterNames {
  const std::vector<cd::Cluster>& clusters;
  std::size_t size() const { return clusters.size(); }
  const std::string& operator[](std::size_t i) const { return clusters[i].name; }
};
}  // namespace

cdyn_status cdyn_model_cluster_index(const cdyn_model* model, const char* name, int* cluster) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, cluster, ClusterNames{model->cm.clusters});
}

cdyn_status cdyn_model_cluster_info(const cdyn_model* model, int cluster, int* parent,
                                    int* output_body, int* first_body, int* nbodies, int* kind) {
  CDYN_CHECK_MODEL(model);
  const auto& clusters = model->cm.clusters;
  if (cluster < 0 || cluster >= static_cast<int>(clusters.size())) return CDYN_ERR_INVALID_INDEX;
  const cd::Cluster& c = clusters[cluster];
  if (parent) *parent = c.parent;
  if (output_body) *output_body = c.outputBody;
  if (first_body) *first_body = c.firstBody;
  if (nbodies) *nbodies = c.nbodies;
  if (kind)
    *kind = c.implicit()      ? CDYN_CLUSTER_IMPLICIT
            : c.constrained() ? CDYN_CLUSTER_EXPLICIT
                              : CDYN_CLUSTER_UNCONSTRAINED;
  return CDYN_OK;
}

cdyn_status cdyn_model_cluster_coordinates(const cdyn_model* model, int cluster, int* idx_q,
                                           int* nq, int* idx_v, int* nv, int* idx_yq, int* nyq,
                                           int* idx_y, int* ny) {
  CDYN_CHECK_MODEL(model);
  const auto& clusters = model->cm.clusters;
  if (cluster < 0 || cluster >= static_cast<int>(clusters.size())) return CDYN_ERR_INVALID_INDEX;
  const cd::Cluster& c = clusters[cluster];
  if (idx_q) *idx_q = c.q0;
  if (nq) *nq = c.nq;
  if (idx_v) *idx_v = c.v0;
  if (nv) *nv = c.nv;
  if (idx_yq) *idx_yq = c.yq0;
  if (nyq) *nyq = c.nyq;
  if (idx_y) *idx_y = c.y0;
  if (ny) *ny = c.ny;
  return CDYN_OK;
}

cdyn_status cdyn_model_body_cluster(const cdyn_model* model, int body, int* cluster) {
  CDYN_CHECK_MODEL(model);
  if (cluster == nullptr) return CDYN_ERR_NULL_POINTER;
  if (body < 0 || body >= model->cm.tree.nbodies) return CDYN_ERR_INVALID_INDEX;
  *cluster = model->cm.bodyCluster[body];
  return CDYN_OK;
}

cdyn_status cdyn_model_describe(const cdyn_model* model, char* buf, size_t len, size_t* needed) {
  CDYN_CHECK_MODEL(model);
  return textOut(model->treeDescription, buf, len, needed);
}

cdyn_status cdyn_model_describe_clusters(const cdyn_model* model, char* buf, size_t len,
                                         size_t* needed) {
  CDYN_CHECK_MODEL(model);
  return textOut(model->clusterDescription, buf, len, needed);
}

cdyn_status cdyn_model_cluster_tree_dot(const cdyn_model* model, char* buf, size_t len,
                                        size_t* needed) {
  CDYN_CHECK_MODEL(model);
  return textOut(model->clusterDot, buf, len, needed);
}

// =============================================================================================
// Logging
// =============================================================================================

static_assert(CDYN_LOG_DEBUG == static_cast<int>(cd::LogLevel::Debug) &&
                  CDYN_LOG_INFO == static_cast<int>(cd::LogLevel::Info) &&
                  CDYN_LOG_WARN == static_cast<int>(cd::LogLevel::Warn) &&
                  CDYN_LOG_ERROR == static_cast<int>(cd::LogLevel::Error) &&
                  CDYN_LOG_OFF == static_cast<int>(cd::LogLevel::Off),
              "cdyn_log_level mirrors clusterdyn::LogLevel");

cdyn_status cdyn_set_log_level(int level) {
  if (level < CDYN_LOG_DEBUG || level > CDYN_LOG_OFF) return CDYN_ERR_INVALID_ARGUMENT;
  return guarded(nullptr, [&] {
    cd::setLogLevel(static_cast<cd::LogLevel>(level));
    return CDYN_OK;
  });
}

cdyn_status cdyn_get_log_level(int* level) {
  if (level == nullptr) return CDYN_ERR_NULL_POINTER;
  return guarded(nullptr, [&] {
    *level = static_cast<int>(cd::logLevel());
    return CDYN_OK;
  });
}

// =============================================================================================
// Dynamics in independent coordinates (cluster tree)
// =============================================================================================

cdyn_status cdyn_ce_aba(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                        const double* v, int nv, const double* tau, int ntau, const double* fext,
                        int nfext, double* ydd, int nydd, double* qdd, int nqdd) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    bool hasQdd = false;
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, cm.tree.nv, "v"));
    CDYN_CHECK(checkArray(ws, tau, ntau, cm.ny, "tau"));
    CDYN_CHECK(checkArray(ws, ydd, nydd, cm.ny, "ydd"));
    CDYN_CHECK(checkOptionalArray(ws, qdd, nqdd, cm.tree.nv, "qdd", &hasQdd));
    const cd::Force* f = nullptr;
    CDYN_CHECK(readForces(ws, cm.tree, fext, nfext, &f));
    CDYN_CHECK_CXX(cd::ceAba(cm, data, ConstMap(q, nq), ConstMap(v, nv), ConstMap(tau, ntau), f));
    copyOut(data.ydd, ydd);
    if (hasQdd) copyOut(data.qdd, qdd);
    return ok(ws);
  });
}

cdyn_status cdyn_ce_aba_spanning_forces(const cdyn_model* model, cdyn_workspace* ws,
                                        const double* q, int nq, const double* v, int nv,
                                        const double* tau, int ntau, const double* fext, int nfext,
                                        double* ydd, int nydd, double* qdd, int nqdd) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    bool hasQdd = false;
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, cm.tree.nv, "v"));
    CDYN_CHECK(checkArray(ws, tau, ntau, cm.tree.nv, "tau"));
    CDYN_CHECK(checkArray(ws, ydd, nydd, cm.ny, "ydd"));
    CDYN_CHECK(checkOptionalArray(ws, qdd, nqdd, cm.tree.nv, "qdd", &hasQdd));
    const cd::Force* f = nullptr;
    CDYN_CHECK(readForces(ws, cm.tree, fext, nfext, &f));
    CDYN_CHECK_CXX(cd::ceAbaSpanningForces(cm, data, ConstMap(q, nq), ConstMap(v, nv),
                                           ConstMap(tau, ntau), f));
    copyOut(data.ydd, ydd);
    if (hasQdd) copyOut(data.qdd, qdd);
    return ok(ws);
  });
}

cdyn_status cdyn_ce_aba_independent(const cdyn_model* model, cdyn_workspace* ws, const double* y,
                                    int nyq, const double* ydot, int ny, const double* tau,
                                    int ntau, const double* fext, int nfext, double* ydd, int nydd,
                                    double* q, int nq, double* v, int nv, double* qdd, int nqdd) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    bool hasQ = false, hasV = false, hasQdd = false;
    CDYN_CHECK(checkArray(ws, y, nyq, cm.nyq, "y"));
    CDYN_CHECK(checkArray(ws, ydot, ny, cm.ny, "ydot"));
    CDYN_CHECK(checkArray(ws, tau, ntau, cm.ny, "tau"));
    CDYN_CHECK(checkArray(ws, ydd, nydd, cm.ny, "ydd"));
    CDYN_CHECK(checkOptionalArray(ws, q, nq, cm.tree.nq, "q", &hasQ));
    CDYN_CHECK(checkOptionalArray(ws, v, nv, cm.tree.nv, "v", &hasV));
    CDYN_CHECK(checkOptionalArray(ws, qdd, nqdd, cm.tree.nv, "qdd", &hasQdd));
    const cd::Force* f = nullptr;
    CDYN_CHECK(readForces(ws, cm.tree, fext, nfext, &f));
    const cd::Status s = cd::ceAbaIndependent(cm, data, ConstMap(y, nyq), ConstMap(ydot, ny),
                                              ConstMap(tau, ntau), f);
    if (s != cd::Status::Ok) return positionSolveStatus(ws, model, s);
    copyOut(data.ydd, ydd);
    if (hasQ) copyOut(data.q, q);
    if (hasV) copyOut(data.v, v);
    if (hasQdd) copyOut(data.qdd, qdd);
    return ok(ws);
  });
}

cdyn_status cdyn_ce_rnea(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                         const double* v, int nv, const double* ydd, int nydd, const double* fext,
                         int nfext, double* tau, int ntau, double* qdd, int nqdd) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    bool hasQdd = false;
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, cm.tree.nv, "v"));
    CDYN_CHECK(checkArray(ws, ydd, nydd, cm.ny, "ydd"));
    CDYN_CHECK(checkArray(ws, tau, ntau, cm.ny, "tau"));
    CDYN_CHECK(checkOptionalArray(ws, qdd, nqdd, cm.tree.nv, "qdd", &hasQdd));
    const cd::Force* f = nullptr;
    CDYN_CHECK(readForces(ws, cm.tree, fext, nfext, &f));
    CDYN_CHECK_CXX(cd::ceRnea(cm, data, ConstMap(q, nq), ConstMap(v, nv), ConstMap(ydd, nydd), f));
    copyOut(data.tauY, tau);
    if (hasQdd) copyOut(data.qdd, qdd);
    return ok(ws);
  });
}

cdyn_status cdyn_cluster_mass_matrix(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                     int nq, double* H, int ldh) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK(checkMatrix(ws, H, ldh, cm.ny, cm.ny, "H", "ldh"));
    CDYN_CHECK_CXX(cd::clusterMassMatrix(cm, data, ConstMap(q, nq)));
    for (int j = 0; j < cm.ny; ++j) std::copy_n(data.H.col(j).data(), cm.ny, H + j * ldh);
    return ok(ws);
  });
}

cdyn_status cdyn_cluster_bias(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                              const double* v, int nv, double* C, int nc) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, cm.tree.nv, "v"));
    CDYN_CHECK(checkArray(ws, C, nc, cm.ny, "C"));
    CDYN_CHECK_CXX(cd::clusterBias(cm, data, ConstMap(q, nq), ConstMap(v, nv)));
    copyOut(data.C, C);
    return ok(ws);
  });
}

// =============================================================================================
// Position and velocity level (cluster tree)
// =============================================================================================

namespace {
/// Optional warm start of the position solve: copied into ClusterData::q (checked first).
cdyn_status readGuess(cdyn_workspace* ws, const cd::ClusterModel& cm, const double* guess, int n) {
  bool present = false;
  CDYN_CHECK(checkOptionalArray(ws, guess, n, cm.tree.nq, "q_guess", &present));
  if (!present) return CDYN_OK;
  cd::ClusterData& data = ws->body->data;
  const ConstMap g(guess, n);
  CDYN_CHECK_CXX(cd::detail::checkVector(data.tree, g, cm.tree.nq, "q_guess"));
  CDYN_CHECK_CXX(cd::detail::checkConfiguration(cm.tree, data.tree, g));
  data.q = g;
  return CDYN_OK;
}
}  // namespace

cdyn_status cdyn_solve_loop_closure(const cdyn_model* model, cdyn_workspace* ws, const double* y,
                                    int nyq, const double* q_guess, int nq_guess, double* q,
                                    int nq) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkArray(ws, y, nyq, cm.nyq, "y"));
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK_CXX(cd::detail::checkVector(data.tree, ConstMap(y, nyq), cm.nyq, "y"));
    CDYN_CHECK(readGuess(ws, cm, q_guess, nq_guess));
    const cd::Status s = cd::solveLoopClosure(cm, data, ConstMap(y, nyq));
    if (s != cd::Status::Ok) return positionSolveStatus(ws, model, s);
    copyOut(data.q, q);
    return ok(ws);
  });
}

cdyn_status cdyn_independent_to_spanning(const cdyn_model* model, cdyn_workspace* ws,
                                         const double* y, int nyq, const double* ydot, int ny,
                                         const double* q_guess, int nq_guess, double* q, int nq,
                                         double* v, int nv) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkArray(ws, y, nyq, cm.nyq, "y"));
    CDYN_CHECK(checkArray(ws, ydot, ny, cm.ny, "ydot"));
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, cm.tree.nv, "v"));
    // Inputs are checked before the warm start is replaced.
    CDYN_CHECK_CXX(cd::detail::checkVector(data.tree, ConstMap(y, nyq), cm.nyq, "y"));
    CDYN_CHECK_CXX(cd::detail::checkVector(data.tree, ConstMap(ydot, ny), cm.ny, "ydot"));
    CDYN_CHECK(readGuess(ws, cm, q_guess, nq_guess));
    const cd::Status s = cd::independentToSpanning(cm, data, ConstMap(y, nyq), ConstMap(ydot, ny));
    if (s != cd::Status::Ok) return positionSolveStatus(ws, model, s);
    copyOut(data.q, q);
    copyOut(data.v, v);
    return ok(ws);
  });
}

cdyn_status cdyn_spanning_to_independent(const cdyn_model* model, cdyn_workspace* ws,
                                         const double* q, int nq, const double* v, int nv,
                                         double* y, int nyq, double* ydot, int ny) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    WorkspaceBody& body = *ws->body;
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, cm.tree.nv, "v"));
    CDYN_CHECK(checkArray(ws, y, nyq, cm.nyq, "y"));
    CDYN_CHECK(checkArray(ws, ydot, ny, cm.ny, "ydot"));
    CDYN_CHECK_CXX(cd::spanningToIndependent(cm, body.data, ConstMap(q, nq), ConstMap(v, nv),
                                             body.y, body.ydot));
    copyOut(body.y, y);
    copyOut(body.ydot, ydot);
    return ok(ws);
  });
}

cdyn_status cdyn_project_to_constraints(const cdyn_model* model, cdyn_workspace* ws,
                                        const double* q, int nq, const double* v, int nv,
                                        double* qout, int nqout, double* vout, int nvout) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, cm.tree.nv, "v"));
    CDYN_CHECK(checkArray(ws, qout, nqout, cm.tree.nq, "qout"));
    CDYN_CHECK(checkArray(ws, vout, nvout, cm.tree.nv, "vout"));
    const cd::Status s = cd::projectToConstraints(cm, data, ConstMap(q, nq), ConstMap(v, nv));
    if (s != cd::Status::Ok) return positionSolveStatus(ws, model, s);
    copyOut(data.q, qout);
    copyOut(data.v, vout);
    return ok(ws);
  });
}

cdyn_status cdyn_last_loop_closure(const cdyn_model* model, cdyn_workspace* ws, int* iterations,
                                   double* residual) {
  CDYN_CHECK(enter(model, ws));
  // A query: leaves the message of a failed solve in place.
  const cd::ClusterData& data = ws->body->data;
  if (iterations) *iterations = data.lastIterations;
  if (residual) *residual = data.lastResidual;
  return CDYN_OK;
}

cdyn_status cdyn_constraint_matrices(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                     int nq, const double* v, int nv, double* G, int ldg, double* g,
                                     int ng) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    const int n = cm.tree.nv;
    bool hasG = false;
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, n, "v"));
    CDYN_CHECK(checkMatrix(ws, G, ldg, n, cm.ny, "G", "ldg"));
    CDYN_CHECK(checkOptionalArray(ws, g, ng, n, "g", &hasG));
    CDYN_CHECK_CXX(cd::clusterConstraintMatrices(cm, data, ConstMap(q, nq), ConstMap(v, nv)));
    for (int j = 0; j < cm.ny; ++j) std::fill_n(G + j * ldg, n, 0.0);
    for (std::size_t k = 0; k < cm.clusters.size(); ++k) {
      const cd::Cluster& c = cm.clusters[k];
      const cd::ClusterWorkspace& w = data.clusters[k];
      copyBlock(w.G, G, ldg, c.v0, c.y0);
      if (hasG) std::copy_n(w.g.data(), c.nv, g + c.v0);
    }
    return ok(ws);
  });
}

cdyn_status cdyn_cluster_constraint_matrices(const cdyn_model* model, cdyn_workspace* ws,
                                             int cluster, const double* q, int nq, const double* v,
                                             int nv, double* G, int ldg, double* g, int ng) {
  CDYN_CHECK(enter(model, ws));
  ws->kinLevel = kNone;
  return guarded(ws, [&] {
    const cd::ClusterModel& cm = model->cm;
    cd::ClusterData& data = ws->body->data;
    CDYN_CHECK(checkCluster(ws, cm, cluster));
    const cd::Cluster& c = cm.clusters[cluster];
    bool hasG = false;
    CDYN_CHECK(checkArray(ws, q, nq, cm.tree.nq, "q"));
    CDYN_CHECK(checkArray(ws, v, nv, cm.tree.nv, "v"));
    CDYN_CHECK(checkMatrix(ws, G, ldg, c.nv, c.ny, "G", "ldg"));
    CDYN_CHECK(checkOptionalArray(ws, g, ng, c.nv, "g", &hasG));
    CDYN_CHECK_CXX(cd::clusterConstraintMatrices(cm, data, ConstMap(q, nq), ConstMap(v, nv)));
    const cd::ClusterWorkspace& w = data.clusters[cluster];
    copyBlock(w.G, G, ldg, 0, 0);
    if (hasG) copyOut(w.g, g);
    return ok(ws);
  });
}

}  // extern "C"
