// C API: constraint sets (clusterdyn.h, "Constraints": building and reading a set). Converts and
// checks arguments, calls include/clusterdyn/constraints.hpp; every entry point catches every
// exception.
#include <cmath>
#include <memory>
#include <string>

#include "capi_constraints_internal.hpp"

using namespace cdyn_constraints_internal;

namespace {

cdyn_status toFrame(int rf, cd::ReferenceFrame* out) {
  if (rf == CDYN_LOCAL)
    *out = cd::ReferenceFrame::Local;
  else if (rf == CDYN_LOCAL_WORLD_ALIGNED)
    *out = cd::ReferenceFrame::LocalWorldAligned;
  else
    return CDYN_ERR_INVALID_ARGUMENT;
  return CDYN_OK;
}

/// Entry check of a set function that modifies the set.
cdyn_status enterSet(cdyn_constraint_set* set) {
  if (set == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "set is NULL");
  if (!validSet(set))
    return refuse(CDYN_ERR_INVALID_ARGUMENT, "set is not a valid cdyn_constraint_set handle");
  set->lastError[0] = '\0';
  if (set->workspaces.load() != 0)
    return fail(set, CDYN_ERR_INVALID_ARGUMENT,
                "the constraint set has %d workspace(s): add constraints before creating "
                "constraint workspaces",
                set->workspaces.load());
  return CDYN_OK;
}

/// Reads a 4 x 4 column-major homogeneous matrix (NULL: identity).
cdyn_status readPose(cdyn_constraint_set* set, const double* T, const char* name,
                     cd::Transform* out) {
  *out = cd::Transform();
  if (T == nullptr) return CDYN_OK;
  for (int i = 0; i < 16; ++i)
    if (!std::isfinite(T[i]))
      return fail(set, CDYN_ERR_NON_FINITE, "%s[%d] is not finite", name, i);
  if (T[3] != 0.0 || T[7] != 0.0 || T[11] != 0.0 || T[15] != 1.0)
    return fail(set, CDYN_ERR_INVALID_ARGUMENT,
                "%s is not homogeneous: its last row must be (0, 0, 0, 1)", name);
  cd::Mat3 R;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) R(i, j) = T[i + 4 * j];
  *out = cd::Transform(R, cd::Vec3(T[12], T[13], T[14]));
  return CDYN_OK;
}

}  // namespace

extern "C" {

// ---- constraint sets -----------------------------------------------------------------------

cdyn_status cdyn_constraint_set_create(const cdyn_model* model, cdyn_constraint_set** set) {
  if (set == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_constraint_set_create: set is NULL");
  *set = nullptr;
  if (model == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_constraint_set_create: model is NULL");
  if (!validModel(model))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constraint_set_create: model is not a valid cdyn_model handle");
  return guard(Sink{}, Phase::Call, [&] {
    *set = new cdyn_constraint_set(model);
    model->workspaces.fetch_add(1);
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_set_create_cut_loops(const cdyn_model* model,
                                                 cdyn_constraint_set** set) {
  if (set == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_constraint_set_create_cut_loops: set is NULL");
  *set = nullptr;
  if (model == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_constraint_set_create_cut_loops: model is NULL");
  if (!validModel(model))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constraint_set_create_cut_loops: model is not a valid cdyn_model handle");
  return guard(Sink{}, Phase::Call, [&] {
    std::unique_ptr<cdyn_constraint_set> s(new cdyn_constraint_set(model));
    s->set = cd::cutLoopConstraints(model->cm);
    *set = s.release();
    model->workspaces.fetch_add(1);
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_set_free(cdyn_constraint_set* set) {
  if (set == nullptr) return CDYN_OK;
  if (!validSet(set))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constraint_set_free: set is not a valid cdyn_constraint_set handle");
  if (set->workspaces.load() != 0) {
    fail(set, CDYN_ERR_INVALID_ARGUMENT,
         "cdyn_constraint_set_free: %d constraint workspace(s) of the set still exist: free "
         "them first",
         set->workspaces.load());
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constraint_set_free: constraint workspaces of the set still exist: free "
                  "them first");
  }
  set->model->workspaces.fetch_sub(1);
  set->tag = kDeadTag;
  delete set;
  return CDYN_OK;
}

const char* cdyn_constraint_set_last_error(const cdyn_constraint_set* set) {
  if (set == nullptr) return "set is NULL";
  if (!validSet(set)) return "not a valid cdyn_constraint_set handle";
  return set->lastError.data();
}

cdyn_status cdyn_constraint_set_add(cdyn_constraint_set* set, const char* name, int type, int body1,
                                    const double placement1[16], int body2,
                                    const double placement2[16], int rf, const double gains[2],
                                    int* index) {
  if (cdyn_status s = enterSet(set)) return s;
  if (name == nullptr) return fail(set, CDYN_ERR_NULL_POINTER, "name is NULL");
  if (type < CDYN_CONSTRAINT_POINT || type > CDYN_CONSTRAINT_PRISMATIC)
    return fail(set, CDYN_ERR_INVALID_ARGUMENT,
                "constraint '%s': type %d is not a cdyn_constraint_type (0..4)", name, type);
  const int nb = set->model->cm.treeModel.nbodies;
  if (body1 < 0 || body1 >= nb)
    return fail(set, CDYN_ERR_INVALID_INDEX, "constraint '%s': body1 = %d out of range [0, %d)",
                name, body1, nb);
  if (body2 < -1 || body2 >= nb)
    return fail(set, CDYN_ERR_INVALID_INDEX,
                "constraint '%s': body2 = %d is neither -1 (world) nor in [0, %d)", name, body2,
                nb);
  cd::RigidConstraint c;
  if (toFrame(rf, &c.frame) != CDYN_OK)
    return fail(set, CDYN_ERR_INVALID_ARGUMENT,
                "constraint '%s': reference frame %d is not CDYN_LOCAL or "
                "CDYN_LOCAL_WORLD_ALIGNED",
                name, rf);
  if (cdyn_status s = readPose(set, placement1, "placement1", &c.placement1)) return s;
  if (cdyn_status s = readPose(set, placement2, "placement2", &c.placement2)) return s;
  if (gains) {
    if (!std::isfinite(gains[0]) || !std::isfinite(gains[1]))
      return fail(set, CDYN_ERR_NON_FINITE, "constraint '%s': gains are not finite", name);
    c.kp = gains[0];
    c.kd = gains[1];
  }
  c.type = static_cast<cd::ConstraintType>(type);
  c.body1 = body1;
  c.body2 = body2;
  return guard(sinkOf(set), Phase::Call, [&] {
    c.name = name;
    const int i = set->set.add(c);
    if (index) *index = i;
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_set_add_contact(cdyn_constraint_set* set, const char* frame_name,
                                            int type, int rf, const char* name, int* index) {
  if (cdyn_status s = enterSet(set)) return s;
  if (frame_name == nullptr) return fail(set, CDYN_ERR_NULL_POINTER, "frame_name is NULL");
  if (type != CDYN_CONSTRAINT_POINT && type != CDYN_CONSTRAINT_WELD)
    return fail(set, CDYN_ERR_INVALID_ARGUMENT,
                "contact at '%s': type %d is neither CDYN_CONSTRAINT_POINT nor "
                "CDYN_CONSTRAINT_WELD",
                frame_name, type);
  cd::ReferenceFrame frame;
  if (toFrame(rf, &frame) != CDYN_OK)
    return fail(set, CDYN_ERR_INVALID_ARGUMENT,
                "contact at '%s': reference frame %d is not CDYN_LOCAL or "
                "CDYN_LOCAL_WORLD_ALIGNED",
                frame_name, rf);
  return guard(sinkOf(set), Phase::Call, [&] {
    if (set->model->cm.treeModel.frameId(frame_name) < 0)
      return fail(set, CDYN_ERR_NOT_FOUND, "contact: the model has no link or frame named '%s'",
                  frame_name);
    const int i = set->set.addContact(frame_name, static_cast<cd::ConstraintType>(type), frame,
                                      name ? name : "");
    if (index) *index = i;
    return CDYN_OK;
  });
}

cdyn_status cdyn_constraint_set_size(const cdyn_constraint_set* set, int* nconstraints) {
  if (set == nullptr || nconstraints == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_constraint_set_size: set or nconstraints is NULL");
  if (!validSet(set))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constraint_set_size: set is not a valid cdyn_constraint_set handle");
  *nconstraints = set->set.size();
  return CDYN_OK;
}

cdyn_status cdyn_constraint_set_nrows(const cdyn_constraint_set* set, int* m) {
  if (set == nullptr || m == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_constraint_set_nrows: set or m is NULL");
  if (!validSet(set))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constraint_set_nrows: set is not a valid cdyn_constraint_set handle");
  *m = set->set.rows();
  return CDYN_OK;
}

cdyn_status cdyn_constraint_set_row_name(const cdyn_constraint_set* set, int row,
                                         const char** name) {
  if (set == nullptr || name == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_constraint_set_row_name: set or name is NULL");
  if (!validSet(set))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constraint_set_row_name: set is not a valid cdyn_constraint_set handle");
  if (row < 0 || row >= set->set.rows())
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_constraint_set_row_name: row is out of range");
  *name = set->set.rowNames()[row].c_str();
  return CDYN_OK;
}

cdyn_status cdyn_constraint_set_constraint(const cdyn_constraint_set* set, int index,
                                           const char** name, int* type, int* body1,
                                           double placement1[16], int* body2, double placement2[16],
                                           int* rf, double gains[2], int* row0, int* nrows) {
  if (set == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_constraint_set_constraint: set is NULL");
  if (!validSet(set))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_constraint_set_constraint: set is not a valid cdyn_constraint_set handle");
  if (index < 0 || index >= set->set.size())
    return refuse(CDYN_ERR_INVALID_INDEX,
                  "cdyn_constraint_set_constraint: index is out of range (0 <= index < size)");
  const cd::RigidConstraint& c = set->set.constraints()[index];
  const auto pose = [](const cd::Transform& T, double* out) {
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) out[i + 4 * j] = T.R(i, j);
    for (int i = 0; i < 3; ++i) out[i + 12] = T.p[i];
    out[3] = out[7] = out[11] = 0.0;
    out[15] = 1.0;
  };
  if (name) *name = c.name.c_str();
  if (type) *type = static_cast<int>(c.type);
  if (body1) *body1 = c.body1;
  if (placement1) pose(c.placement1, placement1);
  if (body2) *body2 = c.body2;
  if (placement2) pose(c.placement2, placement2);
  if (rf)
    *rf = c.frame == cd::ReferenceFrame::LocalWorldAligned ? CDYN_LOCAL_WORLD_ALIGNED : CDYN_LOCAL;
  if (gains) gains[0] = c.kp, gains[1] = c.kd;
  if (row0) *row0 = set->set.rowOffset(index);
  if (nrows) *nrows = c.rows();
  return CDYN_OK;
}

}  // extern "C"
