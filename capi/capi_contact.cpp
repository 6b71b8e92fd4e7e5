// C API of frictional contact and time stepping (clusterdyn.h, "Contacts"): contact problems,
// contact workspaces, one solve, one step. Converts and checks arguments, calls
// include/clusterdyn/contact.hpp, maps statuses; every entry point catches every exception
// (the one table of capi_errors.cpp).
#include <algorithm>
#include <cmath>
#include <memory>

#include "capi_constraints_internal.hpp"
#include "capi_contact_internal.hpp"

static_assert(CDYN_CONTACT_ADMM == 0 && CDYN_CONTACT_PGS == 1, "cdyn_contact_solver values");

using namespace cdyn_contact_internal;
using cdyn_args::ArrayArg;
using cdyn_internal::guard;
using cdyn_internal::Phase;
using cdyn_internal::refuse;

namespace {

/// Entry check of a function that modifies the problem (refused once workspaces exist).
cdyn_status enterProblem(cdyn_contact_problem* p) {
  if (p == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "problem is NULL");
  if (!validProblem(p))
    return refuse(CDYN_ERR_INVALID_ARGUMENT, "problem is not a valid cdyn_contact_problem handle");
  p->lastError[0] = '\0';
  if (p->workspaces.load() != 0)
    return fail(p, CDYN_ERR_INVALID_ARGUMENT,
                "the contact problem has %d workspace(s): add contacts and rows before creating "
                "contact workspaces",
                p->workspaces.load());
  return CDYN_OK;
}

/// A 3-vector argument: length 3, finite.
cdyn_status readVec3(cdyn_contact_problem* p, const double* x, int n, const char* name,
                     cd::Vec3* out) {
  if (x == nullptr) return fail(p, CDYN_ERR_NULL_POINTER, "%s is NULL", name);
  if (n != 3) return fail(p, CDYN_ERR_INVALID_SIZE, "%s has length %d, expected 3", name, n);
  for (int i = 0; i < 3; ++i)
    if (!std::isfinite(x[i])) return fail(p, CDYN_ERR_NON_FINITE, "%s[%d] is not finite", name, i);
  *out = cd::Vec3(x[0], x[1], x[2]);
  return CDYN_OK;
}

cdyn_status checkBody(cdyn_contact_problem* p, int body, const char* name) {
  const int nb = p->model->cm.treeModel.nbodies;
  if (body < 0 || body >= nb)
    return fail(p, CDYN_ERR_INVALID_INDEX, "contact '%s': body = %d out of range [0, %d)", name,
                body, nb);
  return CDYN_OK;
}

int ncontacts(const cdyn_contact_problem* p) {
  return static_cast<int>(p->problem->contacts().size());
}

/// A per-contact array of k * ncontacts doubles (optional when `optional`: (NULL, 0) absent).
cdyn_status checkPerContact(cdyn_contact_workspace* ws, const double* x, int n, int k,
                            const char* name, bool optional, bool* present) {
  const int expected = k * ncontacts(ws->problem);
  *present = false;
  if (optional && x == nullptr && n == 0) return CDYN_OK;
  if (n != expected)
    return fail(ws, CDYN_ERR_INVALID_SIZE, "%s has length %d, expected %d", name, n, expected);
  if (x == nullptr && expected > 0) return fail(ws, CDYN_ERR_NULL_POINTER, "%s is NULL", name);
  *present = true;
  return CDYN_OK;
}

/// The arrays of a call against a description of capi_args.hpp (Rows: the problem's m).
template <std::size_t N>
cdyn_status checkArrays(cdyn_contact_workspace* ws, const cdyn_args::ArgSpec (&spec)[N],
                        const ArrayArg (&a)[N]) {
  cdyn_args::Sizes s = cdyn_internal::sizesOf(ws->problem->model->cm);
  s.rows = ws->problem->problem->rows().rows();
  for (std::size_t k = 0; k < N; ++k) {
    if (spec[k].optional && a[k].p == nullptr && a[k].n == 0) continue;
    const int expected = s.of(spec[k].len);
    if (a[k].n != expected)
      return fail(ws, CDYN_ERR_INVALID_SIZE, "%s has length %d, expected %d", spec[k].name, a[k].n,
                  expected);
    if (a[k].p == nullptr && expected > 0)
      return fail(ws, CDYN_ERR_NULL_POINTER, "%s is NULL", spec[k].name);
  }
  return CDYN_OK;
}

using ConstMap = Eigen::Map<const cd::VecX>;

}  // namespace

/// Returns the cdyn_status of a C++ call that is not Ok (its message is in the workspace).
#define CDYN_CONTACT_CHECK_CXX(expr)                                \
  do {                                                              \
    const cd::Status s_ = (expr);                                   \
    if (s_ != cd::Status::Ok) return cdyn_internal::fromStatus(s_); \
  } while (0)

namespace cdyn_contact_internal {

cdyn_status enter(const cdyn_contact_problem* problem, cdyn_contact_workspace* ws) {
  if (ws == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "ws is NULL");
  if (!validWorkspace(ws))
    return refuse(CDYN_ERR_INVALID_ARGUMENT, "ws is not a valid cdyn_contact_workspace handle");
  if (problem == nullptr) return fail(ws, CDYN_ERR_NULL_POINTER, "problem is NULL");
  if (!validProblem(problem))
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                "problem is not a valid cdyn_contact_problem handle");
  if (ws->problem != problem)
    return fail(ws, CDYN_ERR_WORKSPACE_MISMATCH,
                "the contact workspace was created for another contact problem");
  ws->data.treeData.lastError[0] = '\0';
  return CDYN_OK;
}

cdyn_status readSettings(cdyn_contact_workspace* ws, const cdyn_contact_settings* settings,
                         cd::StepSettings* out) {
  cdyn_contact_settings d;
  cdyn_contact_settings_default(&d);
  const cdyn_contact_settings& s = settings ? *settings : d;
  const struct {
    double x;
    const char* name;
    bool positive;
  } reals[] = {{s.dt, "settings->dt", true},
               {s.beta, "settings->beta", false},
               {s.max_push_velocity, "settings->max_push_velocity", false},
               {s.activation_distance, "settings->activation_distance", false},
               {s.tolerance, "settings->tolerance", true},
               {s.rho, "settings->rho", true}};
  for (const auto& r : reals) {
    if (!std::isfinite(r.x))
      return fail(ws, CDYN_ERR_NON_FINITE, "%s = %g is not finite", r.name, r.x);
    if (r.positive ? !(r.x > 0.0) : !(r.x >= 0.0))
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "%s = %g must be %s", r.name, r.x,
                  r.positive ? "> 0" : ">= 0");
  }
  if (s.beta > 1.0)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "settings->beta = %g must be in [0, 1]", s.beta);
  if (s.solver != CDYN_CONTACT_ADMM && s.solver != CDYN_CONTACT_PGS)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                "settings->solver = %d is neither CDYN_CONTACT_ADMM nor CDYN_CONTACT_PGS",
                s.solver);
  if (s.max_iterations < 0)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "settings->max_iterations = %d must be >= 0",
                s.max_iterations);
  if (s.polish_after < 0)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "settings->polish_after = %d must be >= 0",
                s.polish_after);
  if (s.active_set_steps < 0)
    return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "settings->active_set_steps = %d must be >= 0",
                s.active_set_steps);
  cd::StepSettings& o = *out;
  o.dt = s.dt;
  o.beta = s.beta;
  o.maxPushVelocity = s.max_push_velocity;
  o.activationDistance = s.activation_distance;
  o.solver =
      s.solver == CDYN_CONTACT_PGS ? cd::StepSettings::Solver::Pgs : cd::StepSettings::Solver::Admm;
  o.contact.tolerance = s.tolerance;
  o.contact.maxIterations = s.max_iterations;
  o.contact.rhoScale = s.rho;
  o.warmStart = s.warm_start != 0;
  o.contact.polishAfter = s.polish_after;
  o.contact.activeSetSteps = s.active_set_steps;
  return CDYN_OK;
}

void writeReport(const cdyn_contact_workspace* ws, cdyn_status status, cdyn_contact_report* r) {
  if (r == nullptr) return;
  const cd::ContactData& c = ws->cdata;
  r->status = status;
  r->iterations = c.result.iterations;
  r->converged = c.result.converged ? 1 : 0;
  r->primal_residual = c.result.residuals.velocity;
  r->dual_residual = c.result.residuals.cone;
  r->complementarity = c.result.residuals.complementarity;
  r->rho = c.result.rho;
  int active = 0;
  for (const cd::ConeBlock& b : c.blocks)
    active += b.type == cd::ConeType::Coulomb || b.type == cd::ConeType::Torsional ||
                      b.type == cd::ConeType::Rolling
                  ? 1
                  : 0;
  r->active_contacts = active;
}

cdyn_status stepOnce(cdyn_contact_workspace* ws, const cd::StepSettings& s, const double* q,
                     const double* v, const double* tau, double* qout, double* vout, double* lambda,
                     cdyn_contact_report* report) {
  const cd::ClusterModel& cm = ws->problem->model->cm;
  const int nq = cm.treeModel.nq, nv = cm.treeModel.nv;
  std::copy_n(q, nq, ws->q.data());
  std::copy_n(v, nv, ws->v.data());
  const cd::Status st = cd::contactStep(cm, ws->data, *ws->problem->problem, ws->cdata, ws->q,
                                        ws->v, ConstMap(tau, cm.ny), s);
  const cdyn_status cs = cdyn_internal::fromStatus(st);
  if (st != cd::Status::Ok && st != cd::Status::NotConverged) {
    ws->cdata.lambda.setZero();  // no half-solved warm start: the workspace stays usable
    if (report) {
      *report = cdyn_contact_report{};
      report->status = cs;
    }
    return cs;
  }
  std::copy_n(ws->q.data(), nq, qout);
  std::copy_n(ws->v.data(), nv, vout);
  if (lambda) std::copy_n(ws->cdata.lambda.data(), ws->cdata.lambda.size(), lambda);
  writeReport(ws, cs, report);
  return cs;
}

}  // namespace cdyn_contact_internal

extern "C" {

// ---- contact problems ----------------------------------------------------------------------

cdyn_status cdyn_contact_settings_default(cdyn_contact_settings* settings) {
  if (settings == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_contact_settings_default: settings is NULL");
  const cd::StepSettings d;
  settings->dt = d.dt;
  settings->beta = d.beta;
  settings->max_push_velocity = d.maxPushVelocity;
  settings->activation_distance = d.activationDistance;
  settings->tolerance = d.contact.tolerance;
  settings->rho = d.contact.rhoScale;
  settings->solver = CDYN_CONTACT_ADMM;
  settings->max_iterations = d.contact.maxIterations;
  settings->warm_start = d.warmStart ? 1 : 0;
  settings->polish_after = d.contact.polishAfter;
  settings->active_set_steps = d.contact.activeSetSteps;
  return CDYN_OK;
}

cdyn_status cdyn_contact_problem_create(const cdyn_model* model, cdyn_contact_problem** problem) {
  if (problem == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_contact_problem_create: problem is NULL");
  *problem = nullptr;
  if (model == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_contact_problem_create: model is NULL");
  if (model->tag != cdyn_internal::kModelTag)
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_contact_problem_create: model is not a valid cdyn_model handle");
  return guard(Sink{}, Phase::Call, [&] {
    *problem = new cdyn_contact_problem(model);
    model->workspaces.fetch_add(1);
    return CDYN_OK;
  });
}

cdyn_status cdyn_contact_problem_free(cdyn_contact_problem* problem) {
  if (problem == nullptr) return CDYN_OK;
  if (!validProblem(problem))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_contact_problem_free: problem is not a valid cdyn_contact_problem handle");
  if (problem->workspaces.load() != 0) {
    fail(problem, CDYN_ERR_INVALID_ARGUMENT,
         "cdyn_contact_problem_free: %d contact workspace(s) of the problem still exist: free "
         "them first",
         problem->workspaces.load());
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_contact_problem_free: contact workspaces of the problem still exist: free "
                  "them first");
  }
  problem->model->workspaces.fetch_sub(1);
  problem->tag = kDeadTag;
  delete problem;
  return CDYN_OK;
}

const char* cdyn_contact_problem_last_error(const cdyn_contact_problem* problem) {
  if (problem == nullptr) return "problem is NULL";
  if (!validProblem(problem)) return "not a valid cdyn_contact_problem handle";
  return problem->lastError.data();
}

cdyn_status cdyn_contact_problem_add_bilateral(cdyn_contact_problem* problem,
                                               const cdyn_constraint_set* set) {
  if (cdyn_status s = enterProblem(problem)) return s;
  if (set == nullptr) return fail(problem, CDYN_ERR_NULL_POINTER, "set is NULL");
  if (!cdyn_constraints_internal::validSet(set))
    return fail(problem, CDYN_ERR_INVALID_ARGUMENT,
                "set is not a valid cdyn_constraint_set handle");
  if (set->model != problem->model)
    return fail(problem, CDYN_ERR_WORKSPACE_MISMATCH,
                "the constraint set belongs to another model than the contact problem");
  return guard(sinkOf(problem), Phase::Call, [&] {
    // Bilateral rows come first (contact.hpp): the problem is rebuilt with the longer bilateral
    // set and its contacts and ground replayed; on any error the old problem stays.
    cd::ConstraintSet bilateral = problem->bilateral;
    for (const cd::RigidConstraint& c : set->set.constraints()) bilateral.add(c);
    const cd::ContactProblem& old = *problem->problem;
    std::unique_ptr<cd::ContactProblem> next(
        new cd::ContactProblem(problem->model->cm, &bilateral));
    next->setGround(old.ground().normal, old.ground().offset);
    for (const cd::PointContact& c : old.contacts()) {
      if (c.source == cd::ContactSource::Ground)
        next->addGroundFoot(c.name, c.body, c.point, c.radius, c.mu, c.muTorsion, c.muRolling);
      else
        next->addPointContact(c.name, c.body, c.point, c.cone);
    }
    problem->bilateral = std::move(bilateral);
    problem->problem = std::move(next);
    return CDYN_OK;
  });
}

cdyn_status cdyn_contact_problem_set_ground(cdyn_contact_problem* problem, const double* normal,
                                            int nnormal, double offset) {
  if (cdyn_status s = enterProblem(problem)) return s;
  cd::Vec3 n;
  if (cdyn_status s = readVec3(problem, normal, nnormal, "normal", &n)) return s;
  if (!std::isfinite(offset)) return fail(problem, CDYN_ERR_NON_FINITE, "offset is not finite");
  if (!(n.norm() > 0.0))
    return fail(problem, CDYN_ERR_INVALID_ARGUMENT, "normal is zero (it must have a direction)");
  return guard(sinkOf(problem), Phase::Call, [&] {
    problem->problem->setGround(n, offset);
    return CDYN_OK;
  });
}

cdyn_status cdyn_contact_problem_add_foot(cdyn_contact_problem* problem, const char* name, int body,
                                          const double* centre, int ncentre, double radius,
                                          double mu, int* index) {
  return cdyn_contact_problem_add_patch_foot(problem, name, body, centre, ncentre, radius, mu, 0.0,
                                             0.0, index);
}

cdyn_status cdyn_contact_problem_add_patch_foot(cdyn_contact_problem* problem, const char* name,
                                                int body, const double* centre, int ncentre,
                                                double radius, double mu, double mu_torsion,
                                                double mu_rolling, int* index) {
  if (cdyn_status s = enterProblem(problem)) return s;
  if (name == nullptr) return fail(problem, CDYN_ERR_NULL_POINTER, "name is NULL");
  if (cdyn_status s = checkBody(problem, body, name)) return s;
  cd::Vec3 c;
  if (cdyn_status s = readVec3(problem, centre, ncentre, "centre", &c)) return s;
  if (!std::isfinite(radius) || !std::isfinite(mu))
    return fail(problem, CDYN_ERR_NON_FINITE, "foot '%s': radius or mu is not finite", name);
  if (radius < 0.0)
    return fail(problem, CDYN_ERR_INVALID_ARGUMENT, "foot '%s': radius = %g must be >= 0", name,
                radius);
  if (mu < 0.0)
    return fail(problem, CDYN_ERR_INVALID_ARGUMENT, "foot '%s': mu = %g must be >= 0", name, mu);
  if (!std::isfinite(mu_torsion) || !std::isfinite(mu_rolling))
    return fail(problem, CDYN_ERR_NON_FINITE, "foot '%s': mu_torsion or mu_rolling is not finite",
                name);
  if (mu_torsion < 0.0 || mu_rolling < 0.0)
    return fail(problem, CDYN_ERR_INVALID_ARGUMENT,
                "foot '%s': mu_torsion = %g and mu_rolling = %g must be >= 0", name, mu_torsion,
                mu_rolling);
  return guard(sinkOf(problem), Phase::Call, [&] {
    const int i =
        problem->problem->addGroundFoot(name, body, c, radius, mu, mu_torsion, mu_rolling);
    if (index) *index = i;
    return CDYN_OK;
  });
}

cdyn_status cdyn_contact_problem_add_point(cdyn_contact_problem* problem, const char* name,
                                           int body, const double* point, int npoint, int* index) {
  return cdyn_contact_problem_add_patch_point(problem, name, body, point, npoint, CDYN_CONE_POINT,
                                              index);
}

cdyn_status cdyn_contact_problem_add_patch_point(cdyn_contact_problem* problem, const char* name,
                                                 int body, const double* point, int npoint,
                                                 int cone, int* index) {
  if (cdyn_status s = enterProblem(problem)) return s;
  if (cone != CDYN_CONE_POINT && cone != CDYN_CONE_TORSIONAL && cone != CDYN_CONE_ROLLING)
    return fail(problem, CDYN_ERR_INVALID_ARGUMENT,
                "cone = %d: expected CDYN_CONE_POINT (0), CDYN_CONE_TORSIONAL (3) or "
                "CDYN_CONE_ROLLING (4)",
                cone);
  if (name == nullptr) return fail(problem, CDYN_ERR_NULL_POINTER, "name is NULL");
  if (cdyn_status s = checkBody(problem, body, name)) return s;
  cd::Vec3 p;
  if (cdyn_status s = readVec3(problem, point, npoint, "point", &p)) return s;
  return guard(sinkOf(problem), Phase::Call, [&] {
    const int i = problem->problem->addPointContact(name, body, p, static_cast<cd::ConeType>(cone));
    if (index) *index = i;
    return CDYN_OK;
  });
}

cdyn_status cdyn_contact_problem_sizes(const cdyn_contact_problem* problem, int* ncontacts_out,
                                       int* nbilateral_rows, int* m) {
  if (problem == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_contact_problem_sizes: problem is NULL");
  if (!validProblem(problem))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_contact_problem_sizes: problem is not a valid cdyn_contact_problem handle");
  if (ncontacts_out) *ncontacts_out = ncontacts(problem);
  if (nbilateral_rows) *nbilateral_rows = problem->problem->bilateralRows();
  if (m) *m = problem->problem->rows().rows();
  return CDYN_OK;
}

// ---- contact workspaces --------------------------------------------------------------------

cdyn_status cdyn_contact_workspace_create(const cdyn_contact_problem* problem,
                                          cdyn_contact_workspace** workspace) {
  if (workspace == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_contact_workspace_create: workspace is NULL");
  *workspace = nullptr;
  if (problem == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_contact_workspace_create: problem is NULL");
  if (!validProblem(problem))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_contact_workspace_create: problem is not a valid cdyn_contact_problem "
                  "handle");
  return guard(Sink{}, Phase::Call, [&] {
    *workspace = new cdyn_contact_workspace(problem);
    problem->workspaces.fetch_add(1);
    return CDYN_OK;
  });
}

cdyn_status cdyn_contact_workspace_free(cdyn_contact_workspace* workspace) {
  if (workspace == nullptr) return CDYN_OK;
  if (!validWorkspace(workspace))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_contact_workspace_free: workspace is not a valid cdyn_contact_workspace "
                  "handle");
  workspace->problem->workspaces.fetch_sub(1);
  workspace->tag = kDeadTag;
  delete workspace;
  return CDYN_OK;
}

const char* cdyn_contact_workspace_last_error(const cdyn_contact_workspace* workspace) {
  if (workspace == nullptr) return "workspace is NULL";
  if (!validWorkspace(workspace)) return "not a valid cdyn_contact_workspace handle";
  return workspace->data.treeData.lastError.data();
}

cdyn_status cdyn_contact_workspace_reset(const cdyn_contact_problem* problem,
                                         cdyn_contact_workspace* ws) {
  if (cdyn_status s = enter(problem, ws)) return s;
  ws->cdata.lambda.setZero();
  ws->cdata.result = cd::ContactSolverResult();
  return CDYN_OK;
}

cdyn_status cdyn_contact_set_caller(const cdyn_contact_problem* problem, cdyn_contact_workspace* ws,
                                    const double* normal, int nnormal, const double* gap, int ngap,
                                    const double* mu, int nmu) {
  if (cdyn_status s = enter(problem, ws)) return s;
  bool given = false;
  if (cdyn_status s = checkPerContact(ws, normal, nnormal, 3, "normal", false, &given)) return s;
  if (cdyn_status s = checkPerContact(ws, gap, ngap, 1, "gap", false, &given)) return s;
  if (cdyn_status s = checkPerContact(ws, mu, nmu, 1, "mu", false, &given)) return s;
  const auto& contacts = problem->problem->contacts();
  const int nc = ncontacts(problem);
  // Every caller contact's entries checked before any is stored (the workspace keeps its data).
  for (int i = 0; i < nc; ++i) {
    if (contacts[i].source != cd::ContactSource::Caller) continue;
    const cd::Vec3 n(normal[3 * i], normal[3 * i + 1], normal[3 * i + 2]);
    if (!n.allFinite() || !std::isfinite(gap[i]) || !std::isfinite(mu[i]))
      return fail(ws, CDYN_ERR_NON_FINITE, "contact %d ('%s'): normal, gap or mu is not finite", i,
                  contacts[i].name.c_str());
    if (!(n.norm() > 0.0))
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "contact %d ('%s'): normal is zero", i,
                  contacts[i].name.c_str());
    if (mu[i] < 0.0)
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT, "contact %d ('%s'): mu = %g must be >= 0", i,
                  contacts[i].name.c_str(), mu[i]);
  }
  for (int i = 0; i < nc; ++i) {
    if (contacts[i].source != cd::ContactSource::Caller) continue;
    ws->cdata.normal[i] = cd::Vec3(normal[3 * i], normal[3 * i + 1], normal[3 * i + 2]);
    ws->cdata.gap[i] = gap[i];
    ws->cdata.mu[i] = mu[i];
  }
  return CDYN_OK;
}

cdyn_status cdyn_contact_set_caller_patch(const cdyn_contact_problem* problem,
                                          cdyn_contact_workspace* ws, const double* mu_torsion,
                                          int nmu_torsion, const double* mu_rolling,
                                          int nmu_rolling) {
  if (cdyn_status s = enter(problem, ws)) return s;
  bool given = false;
  if (cdyn_status s = checkPerContact(ws, mu_torsion, nmu_torsion, 1, "mu_torsion", false, &given))
    return s;
  if (cdyn_status s = checkPerContact(ws, mu_rolling, nmu_rolling, 1, "mu_rolling", false, &given))
    return s;
  const auto& contacts = problem->problem->contacts();
  const int nc = ncontacts(problem);
  for (int i = 0; i < nc; ++i) {
    if (contacts[i].source != cd::ContactSource::Caller) continue;
    if (!std::isfinite(mu_torsion[i]) || !std::isfinite(mu_rolling[i]))
      return fail(ws, CDYN_ERR_NON_FINITE,
                  "contact %d ('%s'): mu_torsion or mu_rolling is not "
                  "finite",
                  i, contacts[i].name.c_str());
    if (mu_torsion[i] < 0.0 || mu_rolling[i] < 0.0)
      return fail(ws, CDYN_ERR_INVALID_ARGUMENT,
                  "contact %d ('%s'): mu_torsion = %g and mu_rolling = %g must be >= 0", i,
                  contacts[i].name.c_str(), mu_torsion[i], mu_rolling[i]);
  }
  for (int i = 0; i < nc; ++i) {
    if (contacts[i].source != cd::ContactSource::Caller) continue;
    ws->cdata.muTorsion[i] = mu_torsion[i];
    ws->cdata.muRolling[i] = mu_rolling[i];
  }
  return CDYN_OK;
}

cdyn_status cdyn_contact_frames(const cdyn_contact_problem* problem, cdyn_contact_workspace* ws,
                                double* R, int nR, double* gap, int ngap, double* velocity,
                                int nvelocity) {
  if (cdyn_status s = enter(problem, ws)) return s;
  bool hasR = false, hasGap = false, hasVel = false;
  if (cdyn_status s = checkPerContact(ws, R, nR, 9, "R", true, &hasR)) return s;
  if (cdyn_status s = checkPerContact(ws, gap, ngap, 1, "gap", true, &hasGap)) return s;
  const int m = problem->problem->rows().rows();
  if (!(velocity == nullptr && nvelocity == 0)) {
    if (nvelocity != m)
      return fail(ws, CDYN_ERR_INVALID_SIZE, "velocity has length %d, expected %d", nvelocity, m);
    if (velocity == nullptr && m > 0) return fail(ws, CDYN_ERR_NULL_POINTER, "velocity is NULL");
    hasVel = true;
  }
  const int nc = ncontacts(problem);
  for (int i = 0; i < nc; ++i) {
    if (hasR) std::copy_n(ws->cdata.frame[i].data(), 9, R + 9 * i);  // column-major 3 x 3
    if (hasGap) gap[i] = ws->cdata.gap[i];
  }
  if (hasVel && m > 0) std::copy_n(ws->cdata.velocity.data(), m, velocity);
  return CDYN_OK;
}

// ---- solve and step ------------------------------------------------------------------------

cdyn_status cdyn_contact_solve(const cdyn_contact_problem* problem, cdyn_contact_workspace* ws,
                               const double* q, int nq, const double* v, int nv, const double* tau,
                               int ntau, const cdyn_contact_settings* settings, double* lambda,
                               int nlambda, cdyn_contact_report* report) {
  if (cdyn_status s = enter(problem, ws)) return s;
  return guard(sinkOf(ws), Phase::Call, [&]() -> cdyn_status {
    if (cdyn_status s = checkArrays(ws, cdyn_args::kContactSolve,
                                    {{q, nq}, {v, nv}, {tau, ntau}, {lambda, nlambda}}))
      return s;
    cd::StepSettings st;
    if (cdyn_status s = readSettings(ws, settings, &st)) return s;
    const cd::ClusterModel& cm = problem->model->cm;
    cd::ContactData& c = ws->cdata;
    CDYN_CONTACT_CHECK_CXX(cd::assembleContactProblem(cm, ws->data, *problem->problem, c,
                                                      ConstMap(q, nq), ConstMap(v, nv),
                                                      ConstMap(tau, ntau), st));
    if (!st.warmStart) c.lambda.setZero();
    const cd::Status r =
        st.solver == cd::StepSettings::Solver::Pgs
            ? cd::solveContactPgs(c.G, c.g, c.blocks, st.contact, c.solver, c.lambda, c.result)
            : cd::solveContactAdmm(c.G, c.g, c.blocks, st.contact, c.solver, c.lambda, c.result);
    const cdyn_status cs = cdyn_internal::fromStatus(r);
    if (r != cd::Status::Ok && r != cd::Status::NotConverged) {
      c.lambda.setZero();  // the workspace stays usable: no half-solved warm start
      return fail(ws, cs, "cdyn_contact_solve: %.200s", c.solver.lastError);
    }
    // The constraint velocities after the step (no feedback): J y_dot_free + G lambda.
    c.velocity.noalias() = c.Jc * c.ydotFree;
    c.velocity.noalias() += c.G * c.lambda;
    std::copy_n(c.lambda.data(), nlambda, lambda);
    writeReport(ws, cs, report);
    if (r == cd::Status::NotConverged)
      return fail(ws, cs, "cdyn_contact_solve: %.200s", c.solver.lastError);
    return CDYN_OK;
  });
}

cdyn_status cdyn_contact_step(const cdyn_contact_problem* problem, cdyn_contact_workspace* ws,
                              const double* q, int nq, const double* v, int nv, const double* tau,
                              int ntau, const cdyn_contact_settings* settings, double* qout,
                              int nqout, double* vout, int nvout, double* lambda, int nlambda,
                              cdyn_contact_report* report) {
  if (cdyn_status s = enter(problem, ws)) return s;
  return guard(sinkOf(ws), Phase::Call, [&]() -> cdyn_status {
    if (cdyn_status s = checkArrays(
            ws, cdyn_args::kContactStep,
            {{q, nq}, {v, nv}, {tau, ntau}, {qout, nqout}, {vout, nvout}, {lambda, nlambda}}))
      return s;
    cd::StepSettings st;
    if (cdyn_status s = readSettings(ws, settings, &st)) return s;
    return stepOnce(ws, st, q, v, tau, qout, vout, lambda, report);
  });
}

}  // extern "C"
