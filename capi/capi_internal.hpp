// Internal header of the C API (not installed): the handle structs, the entry checks shared by
// every capi_*.cpp file, and the argument checks. Each capi_*.cpp file implements one section of
// clusterdyn.h; a new section is a new file that includes this header and is listed in
// capi/CMakeLists.txt. Everything here has hidden visibility (the library exports only cdyn_*).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "arena.hpp"
#include "capi_args.hpp"
#include "capi_errors.hpp"
#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"

namespace cd = clusterdyn;

namespace cdyn_internal {

constexpr std::uint32_t kModelTag = 0x4c4d4443u;      // "CDML"
constexpr std::uint32_t kWorkspaceTag = 0x53574443u;  // "CDWS"
constexpr std::uint32_t kDeadTag = 0xdeaddeadu;
constexpr std::size_t kBlockAlign = 64;

inline std::size_t roundUp(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

/// Everything a workspace owns besides its handle; constructed inside the workspace's arena.
struct WorkspaceBody {
  /// dense = false: without the nv x nv M and ny x ny H (measureLayout adds their sizes).
  explicit WorkspaceBody(const cd::ClusterModel& m, bool dense = true)
      : data(m, dense),
        fext(m.treeModel.nbodies, cd::Force::Zero()),
        y(cd::VecX::Zero(m.nyq)),
        ydot(cd::VecX::Zero(m.ny)),
        lastTau(cd::VecX::Zero(std::max(m.ny, m.treeModel.nv))) {}
  cd::ClusterData data;         ///< cluster workspace; data.treeData is the spanning-tree one
  std::vector<cd::Force> fext;  ///< aligned copy of the caller's external forces
  cd::VecX y, ydot;             ///< independent-coordinate results before they are copied out
  /// The efforts of the last successful CE-ABA call (head: ny or nv values, by lastDynamics):
  /// cdyn_forces_after_ce_aba checks its tau against them (or uses them when tau is NULL).
  cd::VecX lastTau;
};
static_assert(alignof(WorkspaceBody) <= kBlockAlign, "");

/// Offsets inside a workspace block (from its 64-byte aligned start).
struct Layout {
  std::size_t bodyOffset = 0, arenaOffset = 0, scratchOffset = 0, arenaBytes = 0, scratchBytes = 0,
              total = 0;
};

/// Kinematic results valid in the workspace for the frame functions.
enum KinLevel : int { kNone = 0, kPlacements = 1, kVelocities = 2, kAccelerations = 3 };

}  // namespace cdyn_internal

struct cdyn_model {
  std::uint32_t tag = cdyn_internal::kModelTag;
  cd::ClusterModel cm;  ///< cm.treeModel: the spanning tree every tree function works on
  std::string treeDescription, clusterDescription, clusterDot;  ///< made at load time
  std::vector<std::string> loadWarnings;  ///< the reader's warnings (MJCF), in order
  std::string warningText;                ///< loadWarnings, one per line
  cdyn_internal::Layout layout;
  /// Live handles made for this model (workspaces, pools, constraint sets, forces):
  /// cdyn_model_free refuses while any exists.
  mutable std::atomic<int> workspaces{0};
};

struct cdyn_workspace {
  std::uint32_t tag;
  const cdyn_model* model;
  cdyn_internal::WorkspaceBody* body;
  cdyn_internal::Arena arena;    ///< holds the body's arrays
  cdyn_internal::Arena scratch;  ///< reset by each call that needs temporaries (integrate, neutral)
  void* heapBlock;  ///< block to free (cdyn_workspace_create), nullptr for caller memory
  int kinLevel;
  int lastDynamics;  ///< cdyn_internal::LastDynamics of the last successful call (forces read it)
};

namespace cdyn_internal {

/// Which dynamics call last filled the workspace (cdyn_forces_after_* need the matching one):
/// reset by every compute function's entry check, set by CE-ABA / CE-RNEA on success.
enum LastDynamics : int { kNoDynamics = 0, kCeAbaIndependent, kCeAbaSpanning, kCeRnea };

// ---- errors and entry checks ----------------------------------------------------------------

inline bool validWorkspace(const cdyn_workspace* ws) {
  return ws != nullptr && ws->tag == kWorkspaceTag;
}

/// Where a compute call's messages go: the workspace's buffer (cdyn_workspace_last_error).
inline Sink sinkOf(cdyn_workspace* ws) { return sinkIn(ws->body->data.treeData.lastError); }

/// Writes a message into the workspace (when valid) and returns s.
__attribute__((format(printf, 3, 4))) cdyn_status fail(cdyn_workspace* ws, cdyn_status s,
                                                       const char* fmt, ...);

inline cdyn_status ok(cdyn_workspace* ws) {
  ws->body->data.treeData.lastError[0] = '\0';
  return CDYN_OK;
}

inline void writeMessage(char* err, std::size_t errlen, const char* msg) {
  if (err == nullptr || errlen == 0) return;
  std::snprintf(err, errlen, "%s", msg);
}

inline cdyn_status checkModel(const cdyn_model* m) {
  if (m == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "model is NULL");
  if (m->tag != kModelTag)
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "model is not a valid cdyn_model handle (freed, or a handle of another kind)");
  return CDYN_OK;
}

/// Entry check of every compute function; invalidates the frame-function state.
cdyn_status enter(const cdyn_model* m, cdyn_workspace* ws);

/// An array argument of `expected` elements (input or output).
cdyn_status checkArray(cdyn_workspace* ws, const double* p, int n, int expected, const char* name);

cdyn_status checkPointer(cdyn_workspace* ws, const void* p, const char* name);

cdyn_status checkFrame(cdyn_workspace* ws, const cd::Model& model, int frame);

cdyn_status toReferenceFrame(cdyn_workspace* ws, int rf, cd::ReferenceFrame* out);

cdyn_status needKinematics(cdyn_workspace* ws, int level);

/// Optional external forces: copied into the workspace (aligned); *out = nullptr when absent.
cdyn_status readForces(cdyn_workspace* ws, const cd::Model& model, const double* fext, int n,
                       const cd::Force** out);

inline void copyOut(const cd::VecX& x, double* out) { std::copy_n(x.data(), x.size(), out); }

/// An optional array argument: absent when (NULL, 0), else checked like checkArray.
cdyn_status checkOptionalArray(cdyn_workspace* ws, const double* p, int n, int expected,
                               const char* name, bool* present);

/// The sizes the argument descriptions (capi_args.hpp) are read against.
inline cdyn_args::Sizes sizesOf(const cd::ClusterModel& cm) {
  cdyn_args::Sizes s;
  s.nq = cm.treeModel.nq;
  s.nv = cm.treeModel.nv;
  s.ny = cm.ny;
  s.nyq = cm.nyq;
  s.nbodies = cm.treeModel.nbodies;
  return s;
}

/// The arrays of a call checked against its description (capi_args.hpp), in its order, the
/// external forces last (copied into the workspace: *fext, nullptr when absent); present[k]:
/// argument k was given (optional ones may be absent). Matrices are left to checkMatrix.
/// Inline and unrolled over the constexpr description: the same code as hand-written checks.
template <std::size_t N>
inline cdyn_status checkArrays(cdyn_workspace* ws, const cd::ClusterModel& cm,
                               const cdyn_args::ArgSpec (&spec)[N],
                               const cdyn_args::ArrayArg (&a)[N], bool (&present)[N],
                               const cd::Force** fext) {
  using cdyn_args::Dir;
  using cdyn_args::Len;
  const cdyn_args::Sizes sizes = sizesOf(cm);
  int forces = -1;
#pragma GCC unroll 8
  for (std::size_t k = 0; k < N; ++k) {
    present[k] = false;
    if (spec[k].len == Len::Fext) forces = static_cast<int>(k);
    if (spec[k].len == Len::Fext || spec[k].dir == Dir::MatrixOut) continue;
    if (spec[k].optional && a[k].p == nullptr && a[k].n == 0) continue;  // absent: (NULL, 0)
    if (cdyn_status s = checkArray(ws, a[k].p, a[k].n, sizes.of(spec[k].len), spec[k].name))
      return s;
    present[k] = true;
  }
  *fext = nullptr;
  if (forces < 0) return CDYN_OK;
  if (cdyn_status s = readForces(ws, cm.treeModel, a[forces].p, a[forces].n, fext)) return s;
  present[forces] = *fext != nullptr;
  return CDYN_OK;
}

/// checkArrays of a function without optional arrays or external forces.
template <std::size_t N>
inline cdyn_status checkArrays(cdyn_workspace* ws, const cd::ClusterModel& cm,
                               const cdyn_args::ArgSpec (&spec)[N],
                               const cdyn_args::ArrayArg (&a)[N]) {
  bool given[N];
  const cd::Force* none = nullptr;
  return checkArrays(ws, cm, spec, a, given, &none);
}

/// A column-major rows x cols output matrix with leading dimension ld.
cdyn_status checkMatrix(cdyn_workspace* ws, const double* p, int ld, int rows, int cols,
                        const char* name, const char* ldName);

/// Writes the rows x cols block of A starting at (r0, c0) of out (leading dimension ld).
template <typename Matrix>
void copyBlock(const Matrix& A, double* out, int ld, int r0, int c0) {
  for (Eigen::Index j = 0; j < A.cols(); ++j)
    for (Eigen::Index i = 0; i < A.rows(); ++i) out[(r0 + i) + (c0 + j) * ld] = A(i, j);
}

/// Text into a caller buffer (truncated, NUL-terminated when len > 0); *needed = size + 1.
cdyn_status textOut(const std::string& text, char* buf, std::size_t len, std::size_t* needed);

cdyn_status checkCluster(cdyn_workspace* ws, const cd::ClusterModel& cm, int k);

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

/// Name lookup shared by the *_index queries (compares in place: no allocation).
template <typename Names>
cdyn_status findIndex(const char* name, int* out, const Names& names) {
  if (name == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "name is NULL");
  if (out == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "the index output pointer is NULL");
  *out = -1;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) {
      *out = static_cast<int>(i);
      return CDYN_OK;
    }
  }
  return refuse(CDYN_ERR_NOT_FOUND, "no element of the model has that name");
}

/// String query shared by the *_name queries.
cdyn_status nameAt(const cdyn_model* m, const std::vector<std::string>& names, int i,
                   const char** out);

/// Sizes the workspace of a model by constructing its parts once with a measuring arena.
Layout measureLayout(const cd::ClusterModel& cm);

/// Preamble of a compute function: checks the model and workspace handles (enter), forgets the
/// kinematics the frame functions read (kinLevel), and runs body with every exception caught.
template <typename F>
cdyn_status compute(const cdyn_model* m, cdyn_workspace* ws, F&& body) noexcept {
  if (cdyn_status s = enter(m, ws)) return s;
  ws->kinLevel = kNone;
  try {  // the one table; the sink is looked up only on the exceptional path
    return body();
  } catch (...) {
    return statusOfException(sinkOf(ws), Phase::Call);
  }
}

/// Preamble of a frame function: like compute, but keeps the kinematics it reads.
template <typename F>
cdyn_status computeOnKinematics(const cdyn_model* m, cdyn_workspace* ws, F&& body) noexcept {
  if (cdyn_status s = enter(m, ws)) return s;
  try {
    return body();
  } catch (...) {
    return statusOfException(sinkOf(ws), Phase::Call);
  }
}

/// A model query returning one int (cdyn_model_nq, ...).
#define CDYN_INT_QUERY(fn, expr)                                                          \
  cdyn_status fn(const cdyn_model* model, int* out) {                                     \
    CDYN_CHECK_MODEL(model);                                                              \
    if (out == nullptr) return refuse(CDYN_ERR_NULL_POINTER, #fn ": the output is NULL"); \
    *out = (expr);                                                                        \
    return CDYN_OK;                                                                       \
  }

}  // namespace cdyn_internal
