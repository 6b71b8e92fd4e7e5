// Rigid constraints on a cluster tree (contacts, welds, cut loop closures), the Delassus matrix
// and proximal constrained forward dynamics.
//
// A robot's local actuation loops (rotors, belts, four-bars) stay embedded in the cluster tree;
// contacts and non-local loops are described here and solved by the proximal algorithms of
// Sathya & Carpentier 2024 on top of the constraint-embedding passes of Chignoli et al. 2023.
//
// Constraint rows. A constraint relates frame A (placement on body1) and frame B (placement on
// body2, or a fixed world pose when body2 == -1). Its velocity is the relative spatial velocity
//     nu = v_A - A_X_B v_B        (6, frame A coordinates, angular first)
// and its rows select components of nu (expressed in A's axes for ReferenceFrame::Local, in world
// axes at A's origin for ReferenceFrame::LocalWorldAligned):
//     Point    3 rows  linear                       (point contact, connect, spherical loop)
//     Weld     6 rows  angular, linear              (6D contact, weld loop)
//     Revolute 5 rows  angular x y, linear x y z    (free rotation about A's z axis; Local only)
//     Planar   3 rows  angular x y, linear z        (motion in A's xy plane; Local only)
//     Prismatic 5 rows angular x y z, linear x y    (free translation along A's z; Local only)
// At the acceleration level a Point constraint uses the classical relative acceleration of the
// two origins (as Pinocchio's 3D contacts), the others d/dt of the selected components of nu.
// With independent coordinates y (ClusterModel) the constraint Jacobian J (m x ny) maps y_dot to
// the rows; the multipliers lambda are the generalized forces J^T lambda ON the robot: lambda is
// the force on body1 at frame A (rows' components; the opposite force acts on body2).
// Desired row accelerations: k = -Kp phi - Kd phi_dot (Baumgarte; zero gains by default), phi the
// position error of the rows (log of the relative rotation, relative origin position).
//
// Dynamics in independent coordinates:  H y_ddot + C = tau + J^T lambda,  J y_ddot + gamma = k.
#pragma once

#include <Eigen/Cholesky>
#include <string>
#include <vector>

#include "clusterdyn/cluster_algorithms.hpp"

namespace clusterdyn {

enum class ConstraintType { Point, Weld, Revolute, Planar, Prismatic };

/// Number of rows of a constraint type (3, 6, 5, 3, 5).
int constraintRows(ConstraintType type);

/// One rigid constraint between frame A on body1 and frame B on body2 (-1: the world).
struct RigidConstraint {
  std::string name;
  ConstraintType type = ConstraintType::Point;
  int body1 = -1;        ///< body index in ClusterModel::treeModel (>= 0)
  Transform placement1;  ///< pose of frame A in body1
  int body2 = -1;        ///< body index, or -1 for the world
  Transform placement2;  ///< pose of frame B in body2 (in the world when body2 == -1)
  ReferenceFrame frame = ReferenceFrame::Local;  ///< Local or LocalWorldAligned (Point, Weld)
  double kp = 0.0, kd = 0.0;                     ///< Baumgarte gains (1/s^2, 1/s)
  int rows() const { return constraintRows(type); }
};

/// A set of constraints for one ClusterModel. Built once (allocates), then shared read-only by
/// any number of ConstraintData workspaces and threads.
class ConstraintSet {
 public:
  explicit ConstraintSet(const ClusterModel& model);

  /// Adds a constraint after checking it against the model; throws ModelError naming the
  /// constraint (unknown body, world-world, unsupported frame for the type, non-finite
  /// placement or gains, duplicate name). Returns its index.
  int add(const RigidConstraint& c);
  /// Contact of a frame (a link, or a fused link / frame name of the model) with the world:
  /// type Point (3D) or Weld (6D), frame A = the named frame, frame B = the world pose of A at
  /// the model's reference configuration (qReference), so that phi = 0 there. Throws
  /// ModelError for an unknown frame or a frame attached to the world.
  int addContact(const std::string& frameName, ConstraintType type,
                 ReferenceFrame rf = ReferenceFrame::Local, const std::string& name = "");

  const ClusterModel& model() const { return *model_; }
  const std::vector<RigidConstraint>& constraints() const { return constraints_; }
  int size() const { return static_cast<int>(constraints_.size()); }
  int rows() const { return rows_; }                  ///< m, total rows
  int rowOffset(int i) const { return offsets_[i]; }  ///< first row of constraint i
  /// True when every constraint attaches a body to the world (contacts): constrainedAba and
  /// the inertia-augmented damped inverse accept only such sets.
  bool allWorldAttached() const;
  /// Row names "<constraint>:<component>" (e.g. "lf_contact:lin_x"), size m.
  const std::vector<std::string>& rowNames() const { return rowNames_; }

 private:
  const ClusterModel* model_;
  std::vector<RigidConstraint> constraints_;
  std::vector<int> offsets_;
  std::vector<std::string> rowNames_;
  int rows_ = 0;
};

/// The model's cut loops (ClusterModel::cutLoops) as constraints between their predecessor and
/// successor bodies: revolute/continuous -> Revolute, prismatic -> Prismatic, planar -> Planar,
/// spherical -> Point, fixed -> Weld, frames A and B the loop frames turned so that z is the
/// joint axis; named after the loops. lambda is the wrench on the predecessor body.
ConstraintSet cutLoopConstraints(const ClusterModel& model);

/// Settings of the proximal solvers (Sathya & Carpentier 2024, §II-D, Alg. 3 and 4).
struct ProximalSettings {
  /// Proximal parameter: the damped Delassus matrix Lambda^-1 + mu I of the dual iterations
  /// (proxPv, dense baseline), equivalently the augmented-Lagrangian penalty 1/mu of
  /// constrainedAba. Smaller mu: fewer iterations (contraction about mu / (mu + sigma_min) per
  /// iteration, sigma_min the smallest singular value of Lambda^-1); constrainedAba's rounding
  /// grows like eps/mu. constrainedAba takes it as the starting value and adapts it (see there).
  double mu = 1e-4;
  /// What Status::Ok guarantees (every solver): the row residual |J y_ddot + gamma - k|_inf of
  /// the returned y_ddot <= tolerance as any evaluation computes it (the solver's own residual
  /// + its rounding floor ProximalResult::roundingFloor <= tolerance; the floor, 16 eps x the
  /// rows' term magnitude, bounds how two evaluations differ: a tolerance below it, e.g. 1e-10
  /// at v^2, tau ~ 1e6, gives NotConverged with a message naming the residual, the floor and
  /// the row scale; absolute, as Pinocchio's absolute_accuracy), and the dynamics residual of
  /// the returned pair
  /// |H y_ddot + C - tau - J^T lambda - (fext)|_inf <= tolerance * max(1, |tau|_inf,
  /// |lambda|_inf, |fext|_inf). proxPv and the dense baseline roll y_ddot out from lambda (the
  /// dynamics residual is rounding by construction, ~1e-13 N m); constrainedAba checks it by
  /// one CE-RNEA pass. These bound residuals (backward errors): the error of y_ddot and lambda
  /// themselves is the residual times the conditioning of the KKT system.
  double tolerance = 1e-10;
  /// Proximal / augmented-Lagrangian iterations after the first solve (0: the first solve only,
  /// e.g. constrainedAba's single augmented three-sweep pass).
  int maxIterations = 50;
};

/// Outcome of a proximal solve.
struct ProximalResult {
  int iterations = 0;      ///< proximal iterations used
  double residual = 0.0;   ///< final |J y_ddot + gamma - k|_inf
  double dualStep = 0.0;   ///< last |lambda_k - lambda_(k-1)|_inf
  bool converged = false;  ///< the outputs meet the tolerance (ProximalSettings::tolerance)
  /// constrainedAba: |H y_ddot + C - tau - J^T lambda - (fext)|_inf of the returned outputs
  /// (0 when not checked: proxPv and the dense baseline, whose y_ddot is rolled out from lambda)
  double dynamicsResidual = 0.0;
  double dynamicsScale = 1.0;  ///< max(1, |tau|_inf, |lambda|_inf, |fext|_inf)
  double mu = 0.0;             ///< the proximal parameter at the end (constrainedAba adapts it)
  /// Rounding floor of `residual`: 16 eps times the largest row's term magnitude (|k_i - bias_i|
  /// + sum_j |C_ij| |a_j| on the body accelerations; the dense baseline: |k_i| + |gamma_i| +
  /// sum_j |J_ij| |y_ddot_j|). Another evaluation of the row residual (e.g. J y_ddot + gamma - k
  /// with a dense J) differs from `residual` by up to about this much.
  double roundingFloor = 0.0;
};

/// Per-thread workspace for one ConstraintSet: sized once (allocates), then the algorithms run
/// without heap allocation. Holds the outputs.
struct ConstraintData {
  ConstraintData(const ClusterModel& model, const ConstraintSet& set);

  const ClusterModel* model = nullptr;
  const ConstraintSet* set = nullptr;

  MatX delassus;         ///< m x m Delassus matrix J H^-1 J^T (delassusMatrix)
  MatX dampedInverse;    ///< m x m (J H^-1 J^T + rho I)^-1 (dampedDelassusInverse)
  VecX lambda;           ///< m multipliers (constrained dynamics output; also the warm start)
  VecX rowAcceleration;  ///< m row accelerations J y_ddot + gamma at the solution
  VecX desired;          ///< m desired row accelerations k (Baumgarte)
  VecX phi;              ///< m position errors of the rows
  MatX jacobian;         ///< m x ny constraint Jacobian J (constraintJacobian)
  VecX gamma;            ///< m row accelerations at y_ddot = 0 (constraintJacobian)
  ProximalResult result;

  // Internal storage, sized at construction (src/constrained/constraint_data.cpp); read-only for
  // users.
  /// One side of a constraint: its rows as covectors on the body's spatial acceleration
  /// (body coordinates): row accelerations = C1 a_body1 + C2 a_body2 + bias.
  struct Attachment {
    int constraint = 0, side = 0, body = -1, cluster = -1, row0 = 0, rows = 0;
    Mat6 C = Mat6::Zero();  ///< first `rows` rows used
  };
  /// Constraint-space propagation over one cluster (PV-OSIM): the rows active in its subtree.
  struct ClusterRows {
    std::vector<int> rows;                   ///< global rows, sorted
    std::vector<int> attachments;            ///< attachments on this cluster's bodies
    std::vector<int> attachPos;              ///< position of each attachment's first row
    std::vector<int> children;               ///< child clusters carrying rows (not compressed)
    std::vector<std::vector<int>> childPos;  ///< positions of each child's rows in `rows`
    std::vector<int> virtuals;    ///< compressions whose 6 virtual rows attach to k's bodies
    std::vector<int> virtualPos;  ///< position of each one's first virtual row in `rows`
    using RowMatX = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    RowMatX T, M, MS, MSD;  ///< n x 6, n x 6m, n x d, n x d (rows contiguous)
    MatX L;                 ///< n x n
  };
  /// PV-OSIMr reduction (Sathya, Decré, Swevers 2024, §III): above a cluster whose subtree
  /// carries more than 6 rows (all of whose constraints lie inside the subtree), its rows are
  /// replaced by 6 virtual rows, the acceleration of its output body; the real rows are
  /// recovered at the end from the cluster's T and L (eq. 13).
  struct Compression {
    int cluster = -1;  ///< the cluster whose rows are compressed
    int body = -1;     ///< its output body (where the virtual rows attach)
    int v0 = 0;        ///< first virtual row (>= m)
  };
  std::vector<Attachment> attachments;  ///< real attachments, constraint order
  std::vector<Compression> compressions;
  int totalRows = 0;  ///< m + 6 * compressions
  MatX full;          ///< totalRows x totalRows propagation result
  std::vector<ClusterRows> clusterRows;
  std::vector<int> supportOrder;  ///< clusters with a constraint on or below them, root first
  std::vector<int> freeOrder;     ///< the other clusters, root first
  std::vector<Force> dp;          ///< per body: force change of a reduced sweep
  VecX kprime;                    ///< m: row targets on the gravity-offset accelerations
  VecX z, du, lambdaPrev, residual, step;
  MatX work;                   ///< m x m (Cholesky of the damped Delassus), or ny x ny
  MatX jacobianH;              ///< m x ny scratch (dense baseline)
  VecX tauFree, yddFree;       ///< ny scratch (dense baseline)
  Eigen::LLT<MatX> llt;        ///< m x m
  Eigen::LLT<MatX> lltH;       ///< ny x ny (dense baseline)
  std::vector<int> ltlParent;  ///< branch-sparsity parent of each independent coordinate
};

/// Row Jacobian J (data.jacobian, m x ny) and gamma (data.gamma) at the spanning state (q, v):
/// dense, from the cluster tree's body Jacobians. Also fills phi and desired.
Status constraintJacobian(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
                          ConstraintData& cdata, ConstVecRef q, ConstVecRef v);

/// Delassus matrix J H^-1 J^T (cdata.delassus) at q by constraint-space propagation over the
/// cluster tree (PV-OSIM family, Sathya et al. 2024): O(n + m^2 d). NotPositiveDefinite when H
/// is singular to working precision (an articulated inertia's Cholesky pivot below
/// kSingularPivot, docs/robustness.md "Singular inertias"): then H^-1 does not exist.
Status delassusMatrix(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
                      ConstraintData& cdata, ConstVecRef q);

/// Damped inverse R = (J H^-1 J^T + rho I)^-1 (cdata.dampedInverse), rho > 0, by one of two
/// methods: (a) a Cholesky factorization of the damped Delassus matrix (cdata.delassus is then
/// overwritten with the Delassus matrix); (b) for contacts (allWorldAttached sets) cABA-OSIM
/// (Sathya & Carpentier 2024, Alg. 5), R = mu I - mu^2 J (H + mu J^T J)^-1 J^T with mu = 1/rho,
/// a difference of terms of size 1/rho that loses digits when rho is small against the Delassus
/// matrix. The result of (b) is kept only when rho * max_i R_ii >= 1e-2 (a nearly singular set,
/// sigma_min below about 100 rho, where (b) is the more accurate), else (a) is. Sets with
/// constraints between two bodies: (a). Contact sets of up to 32 rows: (a) first (cheaper),
/// then (b) when its result has rho * max_i R_ii >= 1e-2. Larger contact sets: (b) first.
/// For contact sets of up to 32 rows the result of (b) is kept only when also (max_i D_ii + rho)
/// rho (max_i R_ii)^2 >= 1 (D the Delassus matrix): (b)'s error is about eps / (rho max_i R_ii),
/// (a)'s about eps kappa, and kappa >= (max_i D_ii + rho) max_i R_ii.
/// Accuracy (measured on the humanoid, quadruped and belt-leg sets, the belt leg fixed and
/// floating, of tests/test_solver_accuracy.cpp against a long-double oracle, rho 1 .. 1e-10):
/// max |R - R_exact| / max |R_exact| <= 20 eps kappa + 1e-14, kappa = (sigma_max + rho) /
/// (sigma_min + rho) the condition number of the damped Delassus matrix, i.e. as accurate as a
/// factorization of it. Contact sets of more than 32 rows whose (b) result is kept: up to
/// max(20 eps kappa, 20 eps / (rho max_i R_ii)) + 1e-14 (<= 2000 eps + 1e-14).
/// NonFinite when entries near 1/rho^2 overflow (rho below about 1e-150). NotPositiveDefinite
/// when H is singular to working precision (as delassusMatrix; detected by the plain-inertia
/// pass of (a), so not for contact sets of more than 32 rows, which start with (b)).
Status dampedDelassusInverse(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
                             ConstraintData& cdata, ConstVecRef q, double rho);

/// Checks settings as the proximal solves do (mu and tolerance positive and finite,
/// maxIterations >= 0): InvalidArgument with the message in data.treeData.lastError, else Ok. For
/// callers that validate once before many solves (the batched C API).
Status checkProximalSettings(ClusterData& data, const ProximalSettings& settings);

/// constrainedABA (Sathya & Carpentier 2024, Alg. 1-3): augmented-Lagrangian iterations on
/// articulated-body sweeps with the constraint-augmented inertias, O(n + m) per iteration.
/// Sets whose constraints all attach to the world only (InvalidArgument otherwise).
/// Outputs: data.ydd (ny), data.qdd (spanning nv), cdata.lambda (m), cdata.result; lambda is
/// always the multiplier of the returned y_ddot (the iterate's lambda + r / mu, which the
/// augmented sweep applied). Status::Ok: both residuals of ProximalSettings::tolerance hold
/// (cdata.result.dynamicsResidual, checked when the rows converge by the backward half of
/// CE-RNEA with the constraint forces, on the body accelerations of the returned y_ddot: about
/// +10% instructions on a 4-iteration solve; data.tauY is overwritten).
/// Adaptive mu (cdata.result.mu is the final value): divided by 10 when the row residual
/// contracts by less than 0.5 in one iteration and the check passes (an ill-conditioned set,
/// mu >> sigma_min), down to 1e-10; multiplied by 100, up to 1e-2, when the check fails or pass
/// 2 loses positive definiteness (eps/mu rounding), and never again below a mu that failed.
/// Each change of mu is one more full augmented solve, counted as an iteration.
/// Status::NotConverged (outputs: the last iterate, finite, lambda consistent with y_ddot) when
/// the rows did not converge within maxIterations, or the dynamics check still fails at 1e-2.
/// cdata.lambda is the warm start of the iterations when warmStart is true.
Status constrainedAba(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
                      ConstraintData& cdata, ConstVecRef q, ConstVecRef v, ConstVecRef tauY,
                      const ProximalSettings& settings = {}, const Force* fext = nullptr,
                      bool warmStart = false);

/// proxPV (Sathya & Carpentier 2024, Alg. 4): free accelerations and the Delassus matrix from
/// the articulated-body sweeps, proximal iterations in constraint space (one Cholesky), roll-out
/// with the multipliers. Any constraint set (loops between bodies included). Outputs as
/// constrainedAba; cdata.delassus holds the Delassus matrix afterwards. The row residual is that
/// of the rolled-out y_ddot: when it exceeds the tolerance although the dual iterate met it
/// (they round differently), the same proximal step refines lambda on the rolled-out residual
/// while iterations remain. NotPositiveDefinite when H is singular to working precision (as
/// ceAba: the free motion does not exist).
Status proxPv(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
              ConstraintData& cdata, ConstVecRef q, ConstVecRef v, ConstVecRef tauY,
              const ProximalSettings& settings = {}, const Force* fext = nullptr,
              bool warmStart = false);

/// The wrench [moment; force] (N m, N) that constraint j applies to body1 at the origin of frame
/// A, from the multipliers in cdata.lambda (after constrainedAba / proxPv / the dense baseline):
/// components in frame A's axes (ReferenceFrame::Local) or in world axes (LocalWorldAligned);
/// the unconstrained components are zero. Body2 receives the opposite wrench. For a cut loop it
/// is the force the loop joint transmits to its predecessor body. j out of range: zero.
Force constraintWrench(const ConstraintSet& set, const ConstraintData& cdata, int j);

/// Baseline for tests and benchmarks: the same proximal iterations with H from the cluster
/// mass matrix and a dense Cholesky factorization (O(n^3 + m^2 n)); refined on the rolled-out
/// residual as proxPv. Its rounding floor is that of J y_ddot + gamma - k with the dense J (the
/// terms |J_ij| |y_ddot_j|), which can exceed proxPv's when J y_ddot cancels large terms.
Status constrainedDynamicsDense(const ClusterModel& model, ClusterData& data,
                                const ConstraintSet& set, ConstraintData& cdata, ConstVecRef q,
                                ConstVecRef v, ConstVecRef tauY,
                                const ProximalSettings& settings = {}, const Force* fext = nullptr);

/// Baseline: Delassus matrix from the branch-sparsity L^T D L factorization of H (Featherstone
/// 2005; LTL-OSIM, Sathya et al. 2024 §II-A), O(n d^2 + m^2 d + m d^2).
Status delassusMatrixLtl(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
                         ConstraintData& cdata, ConstVecRef q);

}  // namespace clusterdyn
