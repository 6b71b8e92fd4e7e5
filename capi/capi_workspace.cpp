// C API: workspaces (clusterdyn.h, "Workspaces").
#include <cstdlib>
#include <new>

#include "capi_internal.hpp"

using namespace cdyn_internal;

namespace cdyn_internal {

/// Sizes the workspace of a model by constructing its parts once with a measuring arena.
Layout measureLayout(const cd::ClusterModel& cm) {
  const cd::Model& model = cm.treeModel;
  Layout l;
  {
    Arena a = Arena::measure();
    ArenaScope scope(&a);
    // Measured without the two dense matrices (M: nv x nv, H: ny x ny), which are then
    // allocated but never written (untouched pages): loading a 5000-link chain must not touch
    // the 400 MB a workspace of it needs.
    WorkspaceBody body(cm, false);
    (void)body;
    cd::MatX M, H;
    M.resize(model.nv, model.nv);
    H.resize(cm.ny, cm.ny);
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

}  // namespace cdyn_internal

namespace {

cdyn_status workspaceInit(const cdyn_model* m, void* mem, std::size_t size, void* heapBlock,
                          cdyn_workspace** out) {
  const Layout& l = m->layout;
  const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(mem);
  const std::uintptr_t base = roundUp(start, kBlockAlign);
  if (size < base - start || size - (base - start) < l.total)
    return refuse(CDYN_ERR_INVALID_SIZE,
                  "cdyn_workspace_init_in: size is smaller than cdyn_workspace_size()");
  unsigned char* p = reinterpret_cast<unsigned char*>(base);
  cdyn_workspace* ws = new (p) cdyn_workspace;
  ws->tag = 0;
  ws->model = m;
  ws->body = nullptr;
  ws->arena = Arena::over(p + l.arenaOffset, l.arenaBytes);
  ws->scratch = Arena::over(p + l.scratchOffset, l.scratchBytes);
  ws->heapBlock = heapBlock;
  ws->kinLevel = kNone;
  ws->lastDynamics = kNoDynamics;
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

extern "C" {

cdyn_status cdyn_workspace_size(const cdyn_model* model, size_t* size) {
  CDYN_CHECK_MODEL(model);
  if (size == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_workspace_size: size is NULL");
  *size = model->layout.total + kBlockAlign - 1;
  return CDYN_OK;
}

cdyn_status cdyn_workspace_create(const cdyn_model* model, cdyn_workspace** workspace) {
  if (workspace == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_workspace_create: workspace is NULL");
  *workspace = nullptr;
  CDYN_CHECK_MODEL(model);
  return guard(Sink{}, Phase::Call, [&] {
    const std::size_t size = model->layout.total + kBlockAlign - 1;
    void* block = std::malloc(size);
    if (block == nullptr)
      return refuse(CDYN_ERR_OUT_OF_MEMORY, "cdyn_workspace_create: out of memory");
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
  if (workspace == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_workspace_init_in: workspace is NULL");
  *workspace = nullptr;
  CDYN_CHECK_MODEL(model);
  if (mem == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_workspace_init_in: mem is NULL");
  return guard(Sink{}, Phase::Call, [&] {
    try {
      return workspaceInit(model, mem, size, nullptr, workspace);
    } catch (const std::bad_alloc&) {  // the measured arena was too small: a bug
      return refuse(CDYN_ERR_INTERNAL,
                    "cdyn_workspace_init_in: the measured workspace was too small (please report)");
    }
  });
}

cdyn_status cdyn_workspace_free(cdyn_workspace* workspace) {
  if (workspace == nullptr) return CDYN_OK;
  if (workspace->tag != kWorkspaceTag)
    return refuse(
        CDYN_ERR_INVALID_ARGUMENT,
        "cdyn_workspace_free: workspace is not a valid cdyn_workspace handle (freed twice?)");
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
  return workspace->body->data.treeData.lastError.data();
}

}  // extern "C"
