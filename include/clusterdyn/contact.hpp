// Frictional contact and time stepping with the loops kept exact (docs/contact.md).
//
// Velocity level (impulses). Over one step of length dt, the constraint velocities after the
// step are  c+ = J y_dot+ = G lambda + g_free  with the Delassus matrix G = J H^-1 J^T (PV-OSIMr,
// Sathya, Decre, Swevers 2024, on the cluster tree: delassusMatrix), the impulses lambda (N s) and
// the free velocity J (y_dot + dt H^-1 (tau - C)). Each constraint is a block of rows with a cone
// K (what lambda may be) and its dual K* (what the constraint velocity may be):
//   Coulomb    3 rows (t1, t2, n) in the contact frame, n the normal pointing out of the
//              obstacle: K = {|lambda_t| <= mu lambda_n}, K* = {mu |sigma_t| <= sigma_n}
//   Bilateral  k rows (welds, cut loops): K = R^k, K* = {0}
//   Inactive   a contact's block switched off (gap beyond the activation distance), or the
//              unused rolling rows of a torsional contact: K = {0}, K* = R^k
//   Torsional  4 rows (tau_n, t1, t2, n): a patch contact with torsional friction (MuJoCo's
//              condim 4): K = {|(lambda_t / mu, tau_n / mu_tor)| <= lambda_n}
//   Rolling    6 rows (tau_r1, tau_r2, tau_n, t1, t2, n): torsional and rolling friction (MuJoCo's
//              condim 6): K = {|(tau_r / mu_roll, tau_n / mu_tor, lambda_t / mu)| <= lambda_n}
//              The patch cones are elliptic: K* = {|(mu_roll w_r, mu_tor w_n, mu sigma_t)| <=
//              sigma_n} (w the angular velocity rows); coefficient 0: no such torque
//              (frictionless).
// The contact problem (Acary & Brogliato 2008; the De Saxce correction, De Saxce & Feng 1998):
//   lambda in K,  sigma = G lambda + g + s(G lambda + g) in K*,  lambda . sigma = 0,
// with s the De Saxce shift, mu |sigma_t| on each Coulomb normal row (|D sigma_u| on a patch
// cone's, D the diagonal of its coefficients and u its friction rows; zero elsewhere); its
// solution satisfies Coulomb's law with maximal dissipation (sliding: friction opposite the slip,
// zero normal velocity). g = g_free + b holds the position feedback b (see StepSettings).
#pragma once

#include <string>
#include <vector>

#include "clusterdyn/constraints.hpp"

namespace clusterdyn {

// ---------------------------------------------------------------------------------------------
// The constraint-space problem and its solvers (src/contact/cones.cpp, pgs.cpp, admm.cpp)
// ---------------------------------------------------------------------------------------------

/// Cone of one block of rows (the per-constraint-type projection table of src/contact/cones.cpp).
enum class ConeType : int { Coulomb = 0, Bilateral = 1, Inactive = 2, Torsional = 3, Rolling = 4 };

/// One block of constraint rows [row0, row0 + rows): Coulomb has 3 rows ordered (t1, t2, n),
/// Torsional 4 (tau_n, t1, t2, n), Rolling 6 (tau_r1, tau_r2, tau_n, t1, t2, n); Inactive and
/// Bilateral 1 to 6 rows. The coefficients are >= 0: mu (sliding; Coulomb, Torsional, Rolling),
/// muTorsion (m; Torsional, Rolling), muRolling (m; Rolling).
struct ConeBlock {
  ConeType type = ConeType::Coulomb;
  int row0 = 0;
  int rows = 3;
  double mu = 0.0;
  double muTorsion = 0.0;
  double muRolling = 0.0;
};

/// Residuals of an impulse lambda for (G, g, blocks), all max norms over the rows / blocks:
struct ContactResiduals {
  double cone = 0.0;  ///< dual feasibility: distance of lambda to K (N s)
  /// primal feasibility: distance of the De Saxce velocity sigma = G lambda + g + s to K* (m/s;
  /// for a contact, the normal velocity below its target, the "gap >= 0" condition)
  double velocity = 0.0;
  /// max over blocks |lambda_b . sigma_b| / |lambda_b|_inf (m/s: the velocity along the
  /// impulse; 0 for lambda_b = 0), independent of the impulses' scale (of dt)
  double complementarity = 0.0;
};

/// Settings of the contact solvers. Status::Ok means all three ContactResiduals of the returned
/// lambda are <= tolerance (checked on the returned lambda, never on an internal iterate).
struct ContactSolverSettings {
  double tolerance = 1e-10;
  int maxIterations = 1000;
  /// ADMM (Carpentier et al. 2024): starting penalty rho relative to the mean diagonal of G
  /// (rho = rhoScale * trace(G) / m), adapted by residual balancing (Boyd et al. 2011, §3.4.1):
  /// multiplied (divided) by rhoFactor when the primal residual |x - y| is more than
  /// rhoRatio times the dual residual rho |y - y_prev| (or less than 1 / rhoRatio), at most
  /// every rhoEvery iterations; each change refactorizes G + rho I (one m x m Cholesky).
  double rhoScale = 1.0;
  double rhoRatio = 10.0;
  double rhoFactor = 4.0;
  int rhoEvery = 5;
  /// At most this many reversals of rho per solve (a decrease after an increase, or the
  /// reverse): residual balancing that keeps switching rho can cycle without converging (seen
  /// on near-singular Delassus matrices); with rho fixed afterwards the iterations are the plain
  /// ADMM ones. A monotone run of changes is not capped (rho stays within 1e-12 to 1e12 times
  /// the mean diagonal of G): an ill-conditioned G can need rho many factors from its start.
  int maxRhoUpdates = 10;
  /// ADMM over-relaxation alpha in (0, 2) (Boyd et al. 2011, §3.4.3).
  double overRelaxation = 1.0;
  /// ADMM Newton polish (src/contact/admm_polish.cpp, docs/contact.md "Solvers"): every
  /// polishAfter iterations without convergence and at maxIterations, Newton steps on the
  /// contact modes of the iterate (separated, sticking, sliding, frictionless) solve for an
  /// exact solution; it is taken only when its three residuals are <= tolerance (else ADMM goes
  /// on from its own iterate). >= 0; 0: no polish.
  int polishAfter = 100;
  /// ADMM active-set solve (src/contact/admm_polish.cpp, docs/contact.md "Solvers"): before
  /// the first ADMM iteration, at most activeSetSteps Newton steps on the contact modes of the
  /// warm start (phase 1 of the polish: modes may change between steps); its impulse is
  /// returned when its three residuals are <= tolerance (no ADMM iteration, no factorization),
  /// else ADMM runs from the warm start as without it. >= 0; 0: plain ADMM.
  int activeSetSteps = 2;
};

/// Outcome of a contact solve.
struct ContactSolverResult {
  int iterations = 0;
  bool converged = false;
  ContactResiduals residuals;  ///< of the returned lambda
  double rho = 0.0;            ///< ADMM: the final penalty (0 for PGS and for the active-set solve)
  int rhoUpdates = 0;          ///< ADMM: refactorizations after the first
  bool polished = false;       ///< ADMM: the returned lambda is the Newton polish's
  int polishSteps = 0;         ///< ADMM: Newton steps of the polish attempts (0: none)
  bool activeSet = false;      ///< ADMM: the returned lambda is the active-set solve's
  int activeSetSteps = 0;      ///< ADMM: Newton steps of the active-set attempt
};

/// Scratch of the constraint-space solvers for up to maxRows rows (allocates once).
struct ContactSolverWorkspace {
  explicit ContactSolverWorkspace(int maxRows = 0);
  void resize(int maxRows);  ///< allocates (not for the real-time path)
  int capacity = 0;
  VecX sigma, x, y, yPrev, w, rhs, shift;
  MatX A;  ///< ADMM: Cholesky factor of G + rho I (lower triangle)
  /// ADMM's Newton polish (admm_polish.cpp): its system and QR, iterate, per-block modes.
  MatX polishJ;
  VecX polishLambda, polishC, polishF, polishNorms, polishStep, polishTheta, polishKappa;
  std::vector<int> polishMode, polishPerm;
  char lastError[256] = {0};
};

/// Checks (G, g, blocks, settings) once: sizes, finiteness, blocks tiling the rows in order,
/// mu, muTorsion, muRolling >= 0 and finite, Bilateral / Inactive rows 1..6, Coulomb 3 rows,
/// Torsional 4, Rolling 6, tolerance > 0,
/// maxIterations >= 0. InvalidArgument / InvalidSize / NonFinite with the message in ws.lastError.
Status checkContactProblem(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                           const ContactSolverSettings& settings, ContactSolverWorkspace& ws);

/// The residuals of lambda (ws.sigma receives the De Saxce velocity).
ContactResiduals contactResiduals(const MatX& G, const VecX& g,
                                  const std::vector<ConeBlock>& blocks, ConstVecRef lambda,
                                  ContactSolverWorkspace& ws);

/// Projected Gauss-Seidel (the baseline; Moreau 1988, Jean 1999): per block, the normal row
/// then the tangent pair (one scalar step 1 / max(G_t1t1, G_t2t2), so that its fixed points
/// satisfy maximal dissipation) projected on the disc of radius mu lambda_n; a patch block the
/// same way with all its friction rows (one step, the largest of their diagonals) projected on
/// the ellipsoid {|D^-1 u| <= lambda_n}; Bilateral blocks row by row. lambda: the warm start in
/// (size m; zero for a cold start), the solution out. Ok: converged (residuals <= tolerance);
/// NotConverged: the last iterate, finite, inside K.
Status solveContactPgs(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                       const ContactSolverSettings& settings, ContactSolverWorkspace& ws,
                       VecX& lambda, ContactSolverResult& result);

/// ADMM on the De Saxce-corrected problem (Carpentier, Le Lidec, Montaut, Mansard 2024, the
/// ADMMContactSolver of Pinocchio 3): for a fixed shift s it solves
///   min 1/2 x^T G x + (g + s)^T x  s.t. x = y, y in K
/// by x = (G + rho I)^-1 (rho y - w - g - s), y = Proj_K(x + w / rho), w += rho (x - y),
/// the shift s = mu |w_t| (patch: |D w_u|) on each normal row refreshed every iteration from the
/// dual estimate -w of the velocity; stopped by the three ContactResiduals of y (the returned
/// lambda). G must be symmetric positive semi-definite (not checked; NotPositiveDefinite when G +
/// rho I does not factorize). Warm start as solveContactPgs.
Status solveContactAdmm(const MatX& G, const VecX& g, const std::vector<ConeBlock>& blocks,
                        const ContactSolverSettings& settings, ContactSolverWorkspace& ws,
                        VecX& lambda, ContactSolverResult& result);

// ---------------------------------------------------------------------------------------------
// Contacts on a cluster model and the time step (src/contact/contact_problem.cpp, step.cpp)
// ---------------------------------------------------------------------------------------------

/// Where a contact's normal, gap and friction come from at each step.
enum class ContactSource : int {
  Caller = 0,  ///< ContactData::normal / gap / mu, set by the caller before each step
  Ground = 1,  ///< the problem's ground plane against a sphere foot (point when radius = 0)
};

/// A contact on body `body` at `point` (body coordinates). Ground feet: `point` is the sphere's
/// centre; the gap is n . p - offset - radius. A point contact (cone Coulomb: 3 rows, a
/// ConstraintType::Point of rows()) transmits a force; its ground foot's force acts at the
/// sphere's centre (the sphere's rolling about the touching point is not modelled; exact for
/// radius 0). A patch contact (cone Torsional or Rolling: 6 rows, a world-aligned Weld of rows())
/// transmits a force and a torque; its ground foot's rows are those of the body point at the
/// touching point (centre - radius n), so that a sphere rolls on the plane without slipping.
struct PointContact {
  std::string name;
  int body = -1;
  Vec3 point = Vec3::Zero();
  ContactSource source = ContactSource::Caller;
  ConeType cone = ConeType::Coulomb;  ///< Coulomb, Torsional or Rolling
  double radius = 0.0;                ///< Ground only
  double mu = 0.0;                    ///< Ground only (Caller contacts: ContactData::mu)
  double muTorsion = 0.0;             ///< Ground only (m)
  double muRolling = 0.0;             ///< Ground only (m)
  int rows() const { return cone == ConeType::Coulomb ? 3 : 6; }  ///< its rows in rows()
};

/// The ground plane {x : normal . x = offset} (world), normal of unit length, pointing out.
struct GroundPlane {
  Vec3 normal = Vec3::UnitZ();
  double offset = 0.0;
};

/// A contact problem on one ClusterModel: bilateral constraints (welds, cut loops: any
/// ConstraintSet on the model) and point contacts. Built once (allocates); then read-only.
class ContactProblem {
 public:
  /// bilateral: copied (nullptr: none). Throws ModelError when it belongs to another model.
  explicit ContactProblem(const ClusterModel& model, const ConstraintSet* bilateral = nullptr);
  /// A caller contact (normal, gap, mu, muTorsion, muRolling set per step in ContactData) with
  /// the cone Coulomb (point), Torsional or Rolling (patch). Throws ModelError for an unknown
  /// body, a non-finite point, another cone or a duplicate name. Returns the contact index.
  int addPointContact(const std::string& name, int body, const Vec3& point,
                      ConeType cone = ConeType::Coulomb);
  /// A sphere foot (radius >= 0) against the ground plane with friction mu >= 0, and optionally
  /// torsional friction muTorsion >= 0 (m; a flat patch resisting spin about the normal) and
  /// rolling friction muRolling >= 0 (m; rolling resistance of the sphere): cone Rolling when
  /// muRolling > 0, else Torsional when muTorsion > 0, else Coulomb (the point foot).
  int addGroundFoot(const std::string& name, int body, const Vec3& centre, double radius, double mu,
                    double muTorsion = 0.0, double muRolling = 0.0);
  /// Sets the ground plane (normal normalized; throws ModelError for a zero / non-finite one).
  void setGround(const Vec3& normal, double offset);

  const ClusterModel& model() const { return set_.model(); }
  const ConstraintSet& rows() const { return set_; }  ///< bilateral first, then the contacts
  const std::vector<PointContact>& contacts() const { return contacts_; }
  const GroundPlane& ground() const { return ground_; }
  int bilateralCount() const { return nBilateral_; }  ///< constraints of rows() before contacts
  int bilateralRows() const { return bilateralRows_; }

 private:
  ConstraintSet set_;
  std::vector<PointContact> contacts_;
  GroundPlane ground_;
  int nBilateral_ = 0, bilateralRows_ = 0;
};

/// Settings of a time step.
struct StepSettings {
  double dt = 1e-3;  ///< s
  /// Position feedback through the velocity targets (no acceleration-level Baumgarte terms):
  /// a contact's normal row asks for c_n+ >= -gap / dt when gap >= 0 (the next gap stays
  /// non-negative to first order: no force before touching) and c_n+ >= -beta gap / dt when
  /// penetrating (at most maxPushVelocity); a bilateral row asks for c+ = -beta phi / dt.
  double beta = 0.2;
  double maxPushVelocity = 0.2;  ///< m/s
  /// Contacts whose gap exceeds this (m) are Inactive for the step (no rows in the solve).
  double activationDistance = 0.05;
  enum class Solver { Admm, Pgs } solver = Solver::Admm;
  ContactSolverSettings contact;
  bool warmStart = true;  ///< start from the previous step's impulses
};

/// Per-thread workspace of a ContactProblem: sized once (allocates), then contactStep runs
/// without heap allocation.
struct ContactData {
  ContactData(const ClusterModel& model, const ContactProblem& problem);

  const ContactProblem* problem = nullptr;
  /// The rows of problem.rows() (contact rows world-aligned): their Delassus matrix; their
  /// Jacobian only when the problem has bilateral rows (contacts only: cd.Jc is made directly).
  ConstraintData rows;
  // Per contact (inputs for Caller contacts, outputs for Ground ones):
  std::vector<Vec3> normal;  ///< world; Caller: any non-zero length, normalized in place
  VecX gap;                  ///< m; negative = penetration
  VecX mu;
  VecX muTorsion, muRolling;  ///< m; used by patch contacts only
  // The last step's constraint-space problem (rows: bilateral, then per contact the rows of
  // rows() in its frame: 3 (t1, t2, n) for a point contact, 6 (angular about t1, t2, n, then
  // linear along t1, t2, n) for a patch contact):
  std::vector<Mat3> frame;  ///< per contact: columns t1, t2, n (world)
  /// Bilateral blocks, then per contact its cone block (a torsional contact: an Inactive block
  /// of its 2 rolling rows, then its 4-row Torsional block).
  std::vector<ConeBlock> blocks;
  std::vector<int> contactBlock;  ///< per contact: the index of its cone block in blocks
  MatX G;                         ///< m x m Delassus matrix in contact frames
  VecX g;                         ///< free constraint velocity plus position feedback
  VecX lambda;    ///< impulses (N s; bilateral: as ConstraintData::lambda, times dt)
  VecX velocity;  ///< constraint velocities after the step (J y_dot+)
  ContactSolverResult result;
  ContactSolverWorkspace solver;
  // Scratch.
  VecX y, ydot, ydotFree, yddFree, tauTotal, qNext, vSpan;
  VecX lambdaRows;  ///< the impulses on the rows of `rows` (contact rows world-aligned)
  MatX Jc;          ///< m x ny Jacobian in contact frames
};

/// One semi-implicit Euler step of the spanning state (q, v) (closed: phi(q) = 0, v = G y_dot):
///   y_dot+ = y_dot + dt H^-1 (tau - C) + H^-1 J^T lambda,  y+ = y (+) dt y_dot+,
/// lambda the contact / bilateral impulses (solver of settings.solver); then the loop closure
/// puts the dependent coordinates back on the manifold (solveLoopClosure, continuing the
/// assembly branch of q) and v = G(q+) y_dot+ (couplings and mimics only: q+ = q (+) dt G y_dot+,
/// which keeps the linear relations; the closure runs when their residual exceeds
/// ClosureSettings::residualTolerance). q, v are updated in place; tauY (ny) acts on the
/// independent coordinates during the step. cd holds the step's problem and impulses.
/// Ok: the solve converged and the closure succeeded. NotConverged: the contact solve stopped
/// early (the step is still taken with its last, finite iterate). Errors (inputs checked first;
/// q, v unchanged): InvalidSize / NonFinite / InvalidArgument / ConstraintFailure, the message
/// in data.errorMessage().
Status contactStep(const ClusterModel& model, ClusterData& data, const ContactProblem& problem,
                   ContactData& cd, Eigen::Ref<VecX> q, Eigen::Ref<VecX> v, ConstVecRef tauY,
                   const StepSettings& settings);

/// The constraint-space problem of a step without taking it: fills cd.G, cd.g, cd.blocks,
/// cd.frame, cd.Jc and data.ydd (free accelerations) at (q, v). For tests and for solvers
/// outside the library.
Status assembleContactProblem(const ClusterModel& model, ClusterData& data,
                              const ContactProblem& problem, ContactData& cd, ConstVecRef q,
                              ConstVecRef v, ConstVecRef tauY, const StepSettings& settings);

}  // namespace clusterdyn
