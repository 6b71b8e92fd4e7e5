/* clusterdyn C API (C99, usable from C++; Fortran: clusterdyn.f90; Python: ctypes).
 *
 * One header, two opaque handles, plain arrays of doubles, status codes as return values.
 * Link with -lclusterdyn (libclusterdyn.so.0). The C++ core is linked in statically, so no C++
 * header is needed to build against it, but the library is NOT free of run-time dependencies:
 * it needs the shared libraries of tinyxml2, spdlog and fmt (Debian: libtinyxml2-9,
 * libspdlog1.10, libfmt9) and the C++ runtime (libstdc++) at run time (see `ldd`).
 *
 * ------------------------------------------------------------------------------------------
 * CONVENTIONS (apply to every function below unless its comment says otherwise)
 *
 * Return value. Every function that can fail returns a cdyn_status (CDYN_OK == 0). The only
 * functions returning something else are cdyn_version, cdyn_version_string, cdyn_status_string,
 * cdyn_last_error and the *_last_error functions, which cannot fail. No function ever throws a
 * C++ exception, calls exit/abort, or prints (model loading may log warnings to stderr through
 * the C++ core).
 * On failure the output arguments are unspecified unless documented.
 *
 * Error messages. EVERY refusal leaves a message. Functions that take a workspace write a
 * detailed, NUL-terminated message of their last failure into it (cdyn_workspace_last_error,
 * cdyn_constraint_workspace_last_error, cdyn_pool_last_error; "" after a success); set
 * functions into the set (cdyn_constraint_set_last_error). Loaders write the parse error
 * (file:line: <element>: ...) into the caller's buffer (err, errlen). Every other refusal (the
 * create and free functions of every handle, the model, set and cdyn_forces queries, and a
 * compute call whose workspace handle itself is NULL or invalid) leaves a static message naming
 * the function and the argument in cdyn_last_error(): one per thread, overwritten by the next
 * such refusal on the thread and NOT cleared by successful calls, so read it right after the
 * failed call. Recording it never allocates.
 *
 * Handles. cdyn_model: the mechanism, IMMUTABLE after loading. cdyn_workspace: all mutable
 * memory the computations need, created for one model. NULL handles give CDYN_ERR_NULL_POINTER;
 * a handle of the wrong kind or an already freed one is detected (best effort, by a tag) and
 * gives CDYN_ERR_INVALID_ARGUMENT; a workspace passed with another model gives
 * CDYN_ERR_WORKSPACE_MISMATCH.
 *
 * Thread safety. Functions taking only a (const) model may be called concurrently from any
 * number of threads on the same model. A workspace must be used by one thread at a time (use
 * one workspace per thread); different workspaces of one model may be used concurrently. The
 * results do not depend on the thread (bit-identical). Create/free of workspaces of a model
 * may happen concurrently with computations on other workspaces; free a model only after all
 * its workspaces, pools, constraint sets and cdyn_forces (cdyn_model_free refuses otherwise).
 *
 * Real time. Once a workspace exists, no function taking a workspace (the "compute" functions:
 * kinematics, dynamics, cluster-tree dynamics and loop-closure solves, configuration
 * operations, frame queries; failing calls included) and no model query allocates heap memory,
 * takes a lock, or performs I/O. Model loading and cdyn_workspace_create allocate;
 * cdyn_workspace_init_in and cdyn_workspace_free do not. The loop-closure solves run a bounded
 * Newton iteration (at most 50 steps per start; at most 2 + 2 x 36 starts per cluster when
 * the continuation of "Warm start" is needed). cdyn_set_log_level / cdyn_get_log_level are not
 * compute functions (they may allocate on their first use).
 *
 * Numbers. Units are SI: m, kg, s, rad; N, N m; J. Gravity defaults to (0, 0, -9.81) m/s^2
 * in world coordinates. Counts, indices and array lengths are int; byte sizes are size_t.
 * Indices start at 0.
 *
 * Arrays. Every vector argument is a pointer plus its length in elements (int); the length
 * must equal the size the model requires (e.g. nq, nv) or the function returns
 * CDYN_ERR_INVALID_SIZE without touching any output. (Exception: the constrained-dynamics
 * functions of the section "Constraints" take their lengths from the model, documented there,
 * plus the explicit row count m. Functions added later take explicit lengths.) A pointer may
 * be NULL only when its length is 0 or the argument is documented as optional. Inputs are checked
 * for NaN/Inf (CDYN_ERR_NON_FINITE) and quaternions in q for unit norm within 1e-6
 * (CDYN_ERR_NOT_UNIT_QUATERNION). Outputs may alias inputs.
 * Matrices are COLUMN-MAJOR with a leading dimension: element (i, j) of an r x c matrix A with
 * leading dimension lda >= r is A[i + j * lda]; the buffer must hold lda * c doubles (the
 * library cannot check the buffer capacity, only lda >= r; with r = 0, lda = 0 is accepted and
 * nothing is written). Only rows 0..r-1 of each column are written: rows r..lda-1 are left
 * untouched.
 * Fixed-size arrays (double p[3], double m[6]) are written without length arguments.
 *
 * Coordinates. The model is the SPANNING TREE of the URDF (every URDF joint, fixed joints fused)
 * plus its loop constraints (see "Cluster tree" below). Bodies are numbered 0..nbodies-1 in the
 * spanning tree's regular order, parent[i] < i (parent -1 is the world), with the bodies of
 * each cluster contiguous and clusters in regular order (this numbering may differ from the
 * order of the links in the URDF file: look bodies, joints and coordinates up by name:
 * cdyn_model_joint_index + cdyn_model_joint_coordinates, cdyn_model_position_index,
 * cdyn_model_velocity_index). One file loaded with and without CDYN_LOAD_CUT_LOOPS gives the
 * same bodies, joints and spanning coordinates in the SAME order (same q and v layout; only the
 * independent coordinates differ), so a spanning state of one is a spanning state of the other.
 * Body i is moved by joint i (joint index == body index). Joint i owns q[idx_q .. idx_q+nq_i)
 * and v[idx_v .. idx_v+nv_i) (cdyn_model_joint_coordinates). Per joint type:
 *   revolute (URDF revolute/continuous): q = angle [rad], v = rate [rad/s]           (1 / 1)
 *   prismatic:  q = displacement [m], v = rate [m/s]                                  (1 / 1)
 *   spherical:  q = unit quaternion (x, y, z, w) of the child in the parent joint frame,
 *               v = angular velocity in child coordinates [rad/s]                     (4 / 3)
 *   planar:     q = (x, y, theta), v = (vx, vy, omega), vx vy in child axes           (3 / 3)
 *   floating:   q = (px, py, pz, qx, qy, qz, qw): child origin [m] and orientation (unit
 *               quaternion, Hamilton, x y z w) in the JOINT frame, i.e. the parent link frame
 *               moved by the joint's URDF <origin> (not the parent link frame itself, unless
 *               <origin> is the identity); v = (wx, wy, wz, vx, vy, vz) = angular
 *               then linear velocity of the child in CHILD (body) coordinates        (7 / 6)
 * The generalized velocity is NOT the derivative of q for quaternion joints: use
 * cdyn_integrate. Generalized forces tau have the layout of v (N m for rotations, N for
 * translations; floating: body-frame moment then force).
 *
 * Spatial vectors are 6-vectors with the ANGULAR part first: a motion is (wx, wy, wz, vx, vy,
 * vz) [rad/s, m/s], a force is (nx, ny, nz, fx, fy, fz) [N m, N].
 *
 * Frames. Every URDF link is a frame (links joined by fixed joints are fused into one body but
 * keep their frame); the frame of body i's own link is its body frame. A frame quantity is
 * expressed according to cdyn_reference_frame:
 *   CDYN_LOCAL:               frame axes, about the frame origin;
 *   CDYN_WORLD:               world axes, about the world origin (spatial/Pluecker form: the
 *                             linear part is the velocity of the body point at the world origin);
 *   CDYN_LOCAL_WORLD_ALIGNED: world axes, about the frame origin (linear part = velocity of
 *                             the frame origin in world axes).
 *
 * External forces (fext). Optional (NULL, length 0) or an array of 6 * nbodies doubles: the
 * force (moment; force) applied TO body i is fext[6i .. 6i+6), in body i's frame coordinates,
 * about its origin.
 *
 * Versioning. CDYN_VERSION_* describe this header. The library's ABI version equals its
 * SONAME number (libclusterdyn.so.0 -> 0); handle creation (cdyn_model_load*) takes the
 * header's CDYN_ABI_VERSION and fails with CDYN_ERR_VERSION on a mismatch.
 *
 * Cluster tree (kinematic loops). URDF+ <loop> (implicit cut joints), <coupling> and <mimic>
 * elements are chords of the spanning tree. The bodies they connect form CLUSTERS (constraint
 * embedding); every other body is a cluster of its own. Two coordinate sets exist:
 *   spanning     q (nq), v (nv): the coordinates of every spanning-tree joint, layout above. The
 *                TREE functions (cdyn_rnea, cdyn_aba, cdyn_crba, cdyn_forward_kinematics, ...)
 *                work on the spanning tree and IGNORE the loop constraints: their q, v, a, tau
 *                need not satisfy them.
 *   independent  y (nyq positions), ydot / ydd / tau (ny velocities, accelerations, efforts):
 *                the floating base, every joint outside loops and the joints marked
 *                independent="true" inside clusters (a joint inside a cluster WITHOUT an
 *                independent attribute is treated as independent too; mark dependent joints
 *                independent="false"), in spanning order (their spanning indices:
 *                cdyn_model_independent_indices; names: cdyn_model_independent_*_name; each
 *                cluster's range: cdyn_model_cluster_coordinates).
 * A spanning state is CLOSED when phi(q) = 0 and K(q) v = 0. Closed velocities are v = G y_dot
 * and accelerations v_dot = G y_ddot + g, with G (nv x ny) block diagonal over the clusters
 * (cdyn_constraint_matrices). The cluster (cdyn_ce_*, cdyn_cluster_*) functions that take a
 * spanning (q, v) require it closed (else CDYN_ERR_CONSTRAINT_FAILURE with the cluster's name
 * in the message): max |phi(q)| <= 1e-6 and max |K v| <= 1e-6 (1 + max |v_k|), max norms over
 * each cluster's constraint rows, each row in rad (rotations, couplings of revolute joints) or
 * m (translations, prismatic couplings) in the loop's predecessor frame
 * (clusterdyn::ClosureSettings::stateTolerance): obtain one with cdyn_solve_loop_closure /
 * cdyn_independent_to_spanning (from y) or cdyn_project_to_constraints (from any q, v).
 * Models without chords are trees: then ny = nv, nyq = nq, y = q, G = identity, and the
 * cluster functions agree with the tree ones.
 *
 * Warm start. The loop-closure solves (cdyn_solve_loop_closure, cdyn_independent_to_spanning,
 * cdyn_ce_aba_independent, cdyn_project_to_constraints) run Newton on the dependent coordinates,
 * started from the workspace's last solved spanning configuration (initially the model's
 * reference configuration, cdyn_model_reference_configuration) unless a q_guess is given. After
 * a failed solve (CDYN_ERR_CONSTRAINT_FAILURE) the warm start is reset to the reference
 * configuration. Mechanisms with several assembly branches (e.g. the six-bar, a parallelogram)
 * stay on the branch of a closed, regular warm start: the solve continues that branch along the
 * straight path in y (predictor-corrector, 1, 5, then 33 steps) and fails rather than return
 * another branch. A warm start that is not closed (a q_guess near a closure) or singular is
 * only a Newton start: Newton, continuation from it (4, then 32 steps), then the same from the
 * reference configuration. At a singular configuration (branch or dead point: the dependent block
 * Kd of the constraints loses rank, smallest LU pivot < 1e-5 of its largest entry) the solve and
 * the cluster functions return CDYN_ERR_CONSTRAINT_FAILURE with Kd's smallest singular value in the
 * message, never an arbitrary branch. Inputs so large that the dynamics overflow (e.g. |v| >
 * 1e154, whose squares exceed the double range) give CDYN_ERR_NON_FINITE naming the input.
 *
 * Extension. Functions are added in minor versions only (never changed).
 * ------------------------------------------------------------------------------------------ */
#ifndef CLUSTERDYN_H_
#define CLUSTERDYN_H_

#include <stddef.h>

#define CDYN_VERSION_MAJOR 0
#define CDYN_VERSION_MINOR 2
#define CDYN_VERSION_PATCH 0
/** MAJOR * 10000 + MINOR * 100 + PATCH, comparable with cdyn_version(). */
#define CDYN_VERSION_NUMBER \
  (CDYN_VERSION_MAJOR * 10000 + CDYN_VERSION_MINOR * 100 + CDYN_VERSION_PATCH)
/** ABI version of this header (== SONAME number of the library it was written for). */
#define CDYN_ABI_VERSION 0

#if defined(__GNUC__)
#define CDYN_API __attribute__((visibility("default")))
#else
#define CDYN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ========================================================================================== */
/* Types                                                                                      */
/* ========================================================================================== */

/** Status codes. 1..99 mirror clusterdyn::Status (same values); 100.. are C API codes. */
typedef enum cdyn_status {
  CDYN_OK = 0,
  CDYN_ERR_INVALID_SIZE = 1,          /**< an array length (or leading dimension) is wrong */
  CDYN_ERR_NON_FINITE = 2,            /**< a NaN or Inf in the input (or in a result) */
  CDYN_ERR_NOT_UNIT_QUATERNION = 3,   /**< a quaternion in q is not unit (|1-|q|| > 1e-6) */
  CDYN_ERR_NOT_POSITIVE_DEFINITE = 4, /**< an articulated/joint-space inertia is singular */
  CDYN_ERR_INVALID_INDEX = 5,      /**< a body, joint, frame or coordinate index is out of range */
  CDYN_ERR_CONSTRAINT_FAILURE = 6, /**< loop closure could not be solved / is singular */
  CDYN_ERR_WORKSPACE_MISMATCH = 7, /**< the workspace was created for another model */
  CDYN_ERR_INVALID_ARGUMENT = 8,   /**< any other invalid argument (bad enum, flag, handle) */
  CDYN_ERR_NOT_CONVERGED = 9,      /**< an iterative solve stopped above its tolerance (the
                                        outputs hold the last iterate) */
  CDYN_ERR_NULL_POINTER = 100,     /**< a required pointer argument is NULL */
  CDYN_ERR_VERSION = 101,          /**< header ABI version differs from the library's */
  CDYN_ERR_PARSE = 102,            /**< the model file/text could not be read or is invalid */
  CDYN_ERR_INTERNAL = 103,         /**< unexpected internal error (a bug: please report) */
  CDYN_ERR_NOT_FOUND = 104,        /**< no body/joint/frame/coordinate has that name */
  CDYN_ERR_OUT_OF_MEMORY = 105     /**< memory allocation failed (loading/creation only) */
} cdyn_status;

/** Joint types (cdyn_model_joint_type). */
typedef enum cdyn_joint_type {
  CDYN_JOINT_REVOLUTE = 0,
  CDYN_JOINT_PRISMATIC = 1,
  CDYN_JOINT_SPHERICAL = 2,
  CDYN_JOINT_PLANAR = 3,
  CDYN_JOINT_FLOATING = 4,
  CDYN_JOINT_FIXED = 5
} cdyn_joint_type;

/** Coordinates of frame quantities (see "Frames" above). */
typedef enum cdyn_reference_frame {
  CDYN_LOCAL = 0,
  CDYN_WORLD = 1,
  CDYN_LOCAL_WORLD_ALIGNED = 2
} cdyn_reference_frame;

/** Kinds of clusters (cdyn_model_cluster_info). */
typedef enum cdyn_cluster_kind {
  CDYN_CLUSTER_UNCONSTRAINED = 0, /**< one body, no chord: G = identity */
  CDYN_CLUSTER_EXPLICIT = 1,      /**< couplings / mimics only: constant G, g = 0 */
  CDYN_CLUSTER_IMPLICIT = 2       /**< at least one <loop>: G(q), g(q, v), position solve */
} cdyn_cluster_kind;

/** Levels of the library's logger (cdyn_set_log_level). */
typedef enum cdyn_log_level {
  CDYN_LOG_DEBUG = 0,
  CDYN_LOG_INFO = 1,
  CDYN_LOG_WARN = 2, /**< the default */
  CDYN_LOG_ERROR = 3,
  CDYN_LOG_OFF = 4
} cdyn_log_level;

/** Load flags (bitwise or). Unknown bits are rejected with CDYN_ERR_INVALID_ARGUMENT. */
/** Attach the URDF root link to the world with a floating joint (nq += 7, nv += 6). Rejected
 *  (CDYN_ERR_PARSE) when the URDF already has a type="floating" joint. */
#define CDYN_LOAD_FLOATING_BASE 1u
/** Ignore the URDF+ chords (<loop>, <coupling>, <mimic>) and the independent="..." marks: the
 *  model is the plain spanning tree (every body its own cluster, ny = nv, y = q). */
#define CDYN_LOAD_IGNORE_CONSTRAINTS 2u
/** Cut every URDF+ <loop> instead of embedding it (as if each had closure="cut"): the loops stay
 *  open in the cluster tree and become two-body constraints (C++ cutLoopConstraints; the
 *  constraint-set section of this header). Couplings and mimics stay embedded. */
#define CDYN_LOAD_CUT_LOOPS 4u
/** Leave out the joint dynamics an MJCF file carries (armature, joint springs about springref,
 *  joint damping; docs/mjcf.md): the model is the rigid-body system only. Without this flag they
 *  are part of every algorithm, as in MuJoCo. URDF(+) files carry none (no effect). */
#define CDYN_LOAD_NO_JOINT_DYNAMICS 8u

/** Immutable model (mechanism description). */
typedef struct cdyn_model cdyn_model;
/** Per-thread workspace of one model. */
typedef struct cdyn_workspace cdyn_workspace;

/* ========================================================================================== */
/* Version and errors (thread-safe, never fail)                                              */
/* ========================================================================================== */

/** Version of the loaded library as MAJOR * 10000 + MINOR * 100 + PATCH. */
CDYN_API int cdyn_version(void);
/** Version of the loaded library as a static string "MAJOR.MINOR.PATCH". */
CDYN_API const char* cdyn_version_string(void);
/** CDYN_OK when abi_version (pass CDYN_ABI_VERSION) matches the library, else
 *  CDYN_ERR_VERSION. */
CDYN_API cdyn_status cdyn_check_version(int abi_version);
/** Short static English description of a status ("ok", "invalid size", ...); unknown values
 *  give "unknown status". */
CDYN_API const char* cdyn_status_string(cdyn_status status);
/** Message of the last refusal ON THIS THREAD by a function that has no handle to hold it (see
 *  "Error messages"): static text, "" before the first; not cleared by successful calls. */
CDYN_API const char* cdyn_last_error(void);

/* ========================================================================================== */
/* Model: loading and freeing (allocate; thread-safe)                                        */
/* ========================================================================================== */

/** Loads a URDF / URDF+ file: its spanning tree and its cluster tree (URDF+ <loop>,
 *  <coupling> and <mimic> chords; see "Cluster tree" above). Loading finds a closed reference
 *  configuration of every implicit loop.
 *  abi_version: pass CDYN_ABI_VERSION (CDYN_ERR_VERSION on mismatch).
 *  path:        NUL-terminated file path.
 *  flags:       0 or a bitwise or of CDYN_LOAD_FLOATING_BASE, CDYN_LOAD_IGNORE_CONSTRAINTS,
 *               CDYN_LOAD_CUT_LOOPS, CDYN_LOAD_NO_JOINT_DYNAMICS.
 *  gravity:     NULL for the file's gravity (MJCF <option gravity>) or else (0, 0, -9.81);
 *               else 3 finite doubles [m/s^2], world coordinates, which override the file's.
 *  model:       receives the new model (NULL on failure); free with cdyn_model_free.
 *  err, errlen: optional (NULL / 0) buffer receiving the NUL-terminated error message
 *               (truncated to errlen - 1 characters; "" on success).
 *  Returns CDYN_ERR_PARSE for unreadable files and invalid models, including chords the cluster
 *  builder rejects (a loop that cannot be closed, an independent set that does not parametrize
 *  its loop, a multi-dof joint inside a loop, ...; the message names the element).
 *  CDYN_LOAD_IGNORE_CONSTRAINTS loads such files as plain spanning trees. */
CDYN_API cdyn_status cdyn_model_load(int abi_version, const char* path, unsigned int flags,
                                     const double* gravity /*optional*/, cdyn_model** model,
                                     char* err /*optional*/, size_t errlen);
/** Same as cdyn_model_load from URDF text in memory: xml points at xml_len bytes (need not be
 *  NUL-terminated). Messages name the source "<string>". Text opens no files: an MJCF
 *  <include file> or <mesh file> is CDYN_ERR_PARSE (load such models from their file, or give
 *  their directory to cdyn_model_load_string_dir). */
CDYN_API cdyn_status cdyn_model_load_string(int abi_version, const char* xml, size_t xml_len,
                                            unsigned int flags, const double* gravity /*optional*/,
                                            cdyn_model** model, char* err /*optional*/,
                                            size_t errlen);
/** Same as cdyn_model_load_string, and an MJCF text's relative <include file> and <mesh file>
 *  names are resolved against base_dir (as against the directory of a loaded file; absolute
 *  names are read as they are). base_dir: NUL-terminated directory, or NULL (or "") to open no
 *  files, as cdyn_model_load_string. URDF text ignores it. */
CDYN_API cdyn_status cdyn_model_load_string_dir(int abi_version, const char* xml, size_t xml_len,
                                                const char* base_dir /*optional*/,
                                                unsigned int flags,
                                                const double* gravity /*optional*/,
                                                cdyn_model** model, char* err /*optional*/,
                                                size_t errlen);
/** Frees a model. NULL is accepted (CDYN_OK). Fails with CDYN_ERR_INVALID_ARGUMENT, freeing
 *  nothing (message in cdyn_last_error), while workspaces, pools, constraint sets or cdyn_forces
 *  of the model still exist. Not concurrent with other uses of the model. */
CDYN_API cdyn_status cdyn_model_free(cdyn_model* model);

/* ========================================================================================== */
/* Model queries (no allocation; thread-safe). Strings returned through const char** are      */
/* NUL-terminated, owned by the model, and valid until cdyn_model_free.                       */
/* ========================================================================================== */

/** Robot name (the URDF <robot name>). */
CDYN_API cdyn_status cdyn_model_name(const cdyn_model* model, const char** name);
/** Number of moving bodies of the spanning tree (== number of joints; fused fixed links not
 *  counted). */
CDYN_API cdyn_status cdyn_model_nbodies(const cdyn_model* model, int* nbodies);
/** Size of the (spanning) configuration vector q. */
CDYN_API cdyn_status cdyn_model_nq(const cdyn_model* model, int* nq);
/** Size of the (spanning) velocity / acceleration / generalized force vectors. */
CDYN_API cdyn_status cdyn_model_nv(const cdyn_model* model, int* nv);
/** Number of frames (one per URDF link, including the root link and fused links). */
CDYN_API cdyn_status cdyn_model_nframes(const cdyn_model* model, int* nframes);
/** Total mass [kg] of the moving bodies: the sum over the nbodies bodies (fused links
 *  included). Links fused to the WORLD (the root link of a fixed-base robot and links fixed to
 *  it) move with no joint and are not counted, as Pinocchio's computeTotalMass, which sums the
 *  joints' bodies and leaves out the universe. */
CDYN_API cdyn_status cdyn_model_total_mass(const cdyn_model* model, double* mass /*scalar*/);
/** Gravity [m/s^2], world coordinates. */
CDYN_API cdyn_status cdyn_model_gravity(const cdyn_model* model, double gravity[3]);

/** URDF link name of body `body` (0 <= body < nbodies, else CDYN_ERR_INVALID_INDEX). */
CDYN_API cdyn_status cdyn_model_body_name(const cdyn_model* model, int body, const char** name);
/** Body index of a link name (CDYN_ERR_NOT_FOUND if no body has that link; fused links are
 *  frames, not bodies: see cdyn_model_frame_index). */
CDYN_API cdyn_status cdyn_model_body_index(const cdyn_model* model, const char* name, int* body);
/** Parent body of `body` (-1: the world). */
CDYN_API cdyn_status cdyn_model_body_parent(const cdyn_model* model, int body, int* parent);

/** URDF joint name of joint `joint` (the joint moving body `joint`). The floating base added by
 *  CDYN_LOAD_FLOATING_BASE is called "root_joint". */
CDYN_API cdyn_status cdyn_model_joint_name(const cdyn_model* model, int joint, const char** name);
/** Joint index of a joint name (CDYN_ERR_NOT_FOUND if absent; fixed joints are not joints). */
CDYN_API cdyn_status cdyn_model_joint_index(const cdyn_model* model, const char* name, int* joint);
/** Type of joint `joint` as a cdyn_joint_type value. */
CDYN_API cdyn_status cdyn_model_joint_type(const cdyn_model* model, int joint, int* type);
/** Coordinates of joint `joint`: q[idx_q .. idx_q + nq), v[idx_v .. idx_v + nv). Any of the
 *  four outputs may be NULL. */
CDYN_API cdyn_status cdyn_model_joint_coordinates(const cdyn_model* model, int joint,
                                                  int* idx_q /*optional*/, int* nq /*optional*/,
                                                  int* idx_v /*optional*/, int* nv /*optional*/);

/** Name of position coordinate i (0 <= i < nq): the joint name for 1-dof joints, else
 *  "<joint>:<suffix>" with suffixes px py pz qx qy qz qw (floating), qx qy qz qw (spherical),
 *  x y theta (planar). */
CDYN_API cdyn_status cdyn_model_position_name(const cdyn_model* model, int i, const char** name);
/** Name of velocity coordinate i (0 <= i < nv): suffixes wx wy wz vx vy vz (floating),
 *  wx wy wz (spherical), vx vy wz (planar). */
CDYN_API cdyn_status cdyn_model_velocity_name(const cdyn_model* model, int i, const char** name);
/** Index in q of a position coordinate name (CDYN_ERR_NOT_FOUND if absent). */
CDYN_API cdyn_status cdyn_model_position_index(const cdyn_model* model, const char* name, int* i);
/** Index in v of a velocity coordinate name (CDYN_ERR_NOT_FOUND if absent). */
CDYN_API cdyn_status cdyn_model_velocity_index(const cdyn_model* model, const char* name, int* i);
/** Position limits (lower[i], upper[i]) of every coordinate of q; -inf / +inf when unlimited
 *  (continuous, quaternion, floating and planar coordinates). n must be nq. */
CDYN_API cdyn_status cdyn_model_position_limits(const cdyn_model* model, double* lower,
                                                double* upper, int n);
/** Velocity limits (URDF <limit velocity>) per coordinate of v; +inf when unlimited. n = nv. */
CDYN_API cdyn_status cdyn_model_velocity_limits(const cdyn_model* model, double* limit, int n);
/** Effort limits (URDF <limit effort>) per coordinate of v; +inf when unlimited. n = nv. */
CDYN_API cdyn_status cdyn_model_effort_limits(const cdyn_model* model, double* limit, int n);

/** Name of frame f (0 <= f < nframes): the URDF link name. */
CDYN_API cdyn_status cdyn_model_frame_name(const cdyn_model* model, int frame, const char** name);
/** Frame index of a link name (CDYN_ERR_NOT_FOUND if absent). */
CDYN_API cdyn_status cdyn_model_frame_index(const cdyn_model* model, const char* name, int* frame);
/** Body a frame is attached to (-1: the world, e.g. the root link of a fixed-base robot). */
CDYN_API cdyn_status cdyn_model_frame_body(const cdyn_model* model, int frame, int* body);

/** Readable multi-line description of the spanning tree (one line per body: index, link,
 *  joint type and name, parent, nq/nv, mass; fused frames), as the C++ describeModel.
 *  Text functions: buf receives at most len - 1 characters and a NUL (nothing when len == 0;
 *  buf may then be NULL); *needed (optional) receives the full size including the NUL, so a
 *  first call with (NULL, 0, &needed) sizes the buffer. The text is truncated when
 *  len < *needed (not an error). The text is made at load time: no allocation here. */
CDYN_API cdyn_status cdyn_model_describe(const cdyn_model* model, char* buf /*optional*/,
                                         size_t len, size_t* needed /*optional*/);
/** Number of load warnings: what the MJCF reader ignored or approximated (visual geoms,
 *  materials, cameras, actuators, sensors, frictionloss, ...; docs/mjcf.md), one per kind of
 *  element / attribute. 0 for URDF(+) files (the URDF reader's warnings go to the log only). */
CDYN_API cdyn_status cdyn_model_nwarnings(const cdyn_model* model, int* nwarnings);
/** The load warnings as text, one per line, in the order the reader met them:
 *  "file:line: <tag>: message" (" (N occurrences)" when repeated); "" when there are none.
 *  Text function (buf, len, needed) as cdyn_model_describe. The same lines were logged while
 *  loading (cdyn_set_log_level). */
CDYN_API cdyn_status cdyn_model_warnings(const cdyn_model* model, char* buf /*optional*/,
                                         size_t len, size_t* needed /*optional*/);

/* ========================================================================================== */
/* Cluster tree and independent coordinates: queries (no allocation; thread-safe)            */
/* ========================================================================================== */

/** Number of clusters (each unconstrained body is a cluster of its own). */
CDYN_API cdyn_status cdyn_model_nclusters(const cdyn_model* model, int* nclusters);
/** Number of independent velocities ny (size of ydot, ydd and independent efforts tau). */
CDYN_API cdyn_status cdyn_model_ny(const cdyn_model* model, int* ny);
/** Number of independent positions nyq (size of y; a floating base counts 7, a spherical
 *  joint 4). */
CDYN_API cdyn_status cdyn_model_nyq(const cdyn_model* model, int* nyq);
/** Number of implicit loop joints (URDF+ <loop>). */
CDYN_API cdyn_status cdyn_model_nloops(const cdyn_model* model, int* nloops);
/** Number of explicit relations (URDF+ <coupling>, URDF <mimic>). */
CDYN_API cdyn_status cdyn_model_nrelations(const cdyn_model* model, int* nrelations);

/** Name of independent position coordinate i (0 <= i < nyq): the spanning position name
 *  (cdyn_model_position_name) of that coordinate. */
CDYN_API cdyn_status cdyn_model_independent_position_name(const cdyn_model* model, int i,
                                                          const char** name);
/** Name of independent velocity coordinate i (0 <= i < ny): its spanning velocity name. */
CDYN_API cdyn_status cdyn_model_independent_velocity_name(const cdyn_model* model, int i,
                                                          const char** name);
/** Index in y of an independent position name (CDYN_ERR_NOT_FOUND when absent or dependent). */
CDYN_API cdyn_status cdyn_model_independent_position_index(const cdyn_model* model,
                                                           const char* name, int* i);
/** Index in ydot of an independent velocity name (CDYN_ERR_NOT_FOUND when absent or
 *  dependent). */
CDYN_API cdyn_status cdyn_model_independent_velocity_index(const cdyn_model* model,
                                                           const char* name, int* i);
/** Spanning indices of the independent coordinates: y[k] = q[position_index[k]] (nyq values)
 *  and ydot[k] = v[velocity_index[k]] (ny values), both increasing. Either output is optional
 *  (NULL, 0); a given one must have exactly nyq / ny elements. */
CDYN_API cdyn_status cdyn_model_independent_indices(const cdyn_model* model,
                                                    int* position_index /*optional array*/, int nyq,
                                                    int* velocity_index /*optional array*/, int ny);
/** The closed spanning configuration found at load time (n = nq): the neutral configuration
 *  with the dependent coordinates solved (when the loops do not close there, the loader tries
 *  other values of their independent coordinates). The initial warm start of the position
 *  solves. */
CDYN_API cdyn_status cdyn_model_reference_configuration(const cdyn_model* model, double* q, int n);

/** Name of cluster `cluster` (0 <= cluster < nclusters): the link name of its body for
 *  single-body clusters, else the names of its chords (couplings, mimics, loops) joined by
 *  "+". */
CDYN_API cdyn_status cdyn_model_cluster_name(const cdyn_model* model, int cluster,
                                             const char** name);
/** Index of the first cluster with that name (CDYN_ERR_NOT_FOUND if absent). */
CDYN_API cdyn_status cdyn_model_cluster_index(const cdyn_model* model, const char* name,
                                              int* cluster);
/** Structure of cluster `cluster` (any output may be NULL):
 *  parent       parent cluster (-1: attached to the world); parent < cluster;
 *  output_body  the body all the cluster's base bodies hang from (-1: the world);
 *  first_body, nbodies  the cluster's bodies are first_body .. first_body + nbodies - 1;
 *  kind         a cdyn_cluster_kind (unconstrained, explicit or implicit). */
CDYN_API cdyn_status cdyn_model_cluster_info(const cdyn_model* model, int cluster,
                                             int* parent /*optional*/,
                                             int* output_body /*optional*/,
                                             int* first_body /*optional*/,
                                             int* nbodies /*optional*/, int* kind /*optional*/);
/** Coordinate ranges of cluster `cluster` (any output may be NULL): spanning
 *  q[idx_q .. idx_q + nq), v[idx_v .. idx_v + nv); independent y[idx_yq .. idx_yq + nyq),
 *  ydot[idx_y .. idx_y + ny). Its block of G is rows idx_v.., columns idx_y... */
CDYN_API cdyn_status cdyn_model_cluster_coordinates(const cdyn_model* model, int cluster,
                                                    int* idx_q /*optional*/, int* nq /*optional*/,
                                                    int* idx_v /*optional*/, int* nv /*optional*/,
                                                    int* idx_yq /*optional*/, int* nyq /*optional*/,
                                                    int* idx_y /*optional*/, int* ny /*optional*/);
/** Cluster of body `body`. */
CDYN_API cdyn_status cdyn_model_body_cluster(const cdyn_model* model, int body, int* cluster);
/** Readable dump of the cluster tree (clusters with parent, output body, bodies and their
 *  joints marked independent / dependent, dof counts, relations and loops), as the C++
 *  describeClusterTree. Buffer rules: see cdyn_model_describe. */
CDYN_API cdyn_status cdyn_model_describe_clusters(const cdyn_model* model, char* buf /*optional*/,
                                                  size_t len, size_t* needed /*optional*/);
/** Graphviz (dot) picture of the cluster tree, chords as dashed edges (C++ clusterTreeDot).
 *  Buffer rules: see cdyn_model_describe. */
CDYN_API cdyn_status cdyn_model_cluster_tree_dot(const cdyn_model* model, char* buf /*optional*/,
                                                 size_t len, size_t* needed /*optional*/);

/* ========================================================================================== */
/* Workspaces                                                                                 */
/* ========================================================================================== */

/** Creates a workspace for `model` in one heap block (allocates). Free it with
 *  cdyn_workspace_free before freeing the model. */
CDYN_API cdyn_status cdyn_workspace_create(const cdyn_model* model, cdyn_workspace** workspace);
/** Number of bytes cdyn_workspace_init_in needs for `model` (includes alignment slack). */
CDYN_API cdyn_status cdyn_workspace_size(const cdyn_model* model, size_t* size);
/** Creates a workspace for `model` inside caller memory: mem (any alignment) must provide
 *  size >= cdyn_workspace_size() bytes (else CDYN_ERR_INVALID_SIZE). Performs NO heap
 *  allocation: the handle, the C++ workspace object and every array it owns are placed in
 *  mem (the library's internal allocation calls are redirected to a bump arena inside mem
 *  while the workspace is constructed). mem must stay valid and must not be touched by the
 *  caller until cdyn_workspace_free, which releases nothing to the heap; the caller then owns
 *  mem again. *workspace points into mem. */
CDYN_API cdyn_status cdyn_workspace_init_in(const cdyn_model* model, void* mem, size_t size,
                                            cdyn_workspace** workspace);
/** Destroys a workspace (and frees its heap block when made by cdyn_workspace_create). NULL is
 *  accepted (CDYN_OK). Performs no heap allocation. */
CDYN_API cdyn_status cdyn_workspace_free(cdyn_workspace* workspace);
/** Detailed message of the last failed call on this workspace ("" after a success; a static
 *  message when workspace is NULL or invalid). Valid until the next call on the workspace. */
CDYN_API const char* cdyn_workspace_last_error(const cdyn_workspace* workspace);

/* ========================================================================================== */
/* Logging (thread-safe; not real-time)                                                       */
/* ========================================================================================== */

/** Sets the level of the library's logger (spdlog logger "clusterdyn", to stderr; it only logs
 *  while models load). level: a cdyn_log_level (else CDYN_ERR_INVALID_ARGUMENT). */
CDYN_API cdyn_status cdyn_set_log_level(int level);
/** Current level of the library's logger as a cdyn_log_level. */
CDYN_API cdyn_status cdyn_get_log_level(int* level);

/* ========================================================================================== */
/* Configuration space (compute functions: no allocation, no locks, no I/O)                   */
/* ========================================================================================== */

/** The neutral configuration (0 for 1-dof and planar joints, identity quaternions, floating
 *  position 0) into q (n = nq). */
CDYN_API cdyn_status cdyn_neutral_configuration(const cdyn_model* model, cdyn_workspace* ws,
                                                double* q, int n);
/** qout = q (+) v dt: the configuration reached from q after moving with the constant
 *  generalized velocity v for dt seconds (exponential map for floating, spherical and planar
 *  joints; quaternions renormalized). q: nq (valid configuration), v: nv, qout: nq (may be q). */
CDYN_API cdyn_status cdyn_integrate(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                    int nq, const double* v, int nv, double dt, double* qout,
                                    int nqout);
/** Normalizes every quaternion of q (n = nq) in place; q must be finite. */
CDYN_API cdyn_status cdyn_normalize_configuration(const cdyn_model* model, cdyn_workspace* ws,
                                                  double* q, int n);
/** yout = y (+) ydot dt on the independent coordinates (cdyn_model_sizes: y has nyq entries,
 *  ydot ny): each independent joint moved by its own exponential map, as cdyn_integrate moves
 *  it in q (body-frame rotation for the quaternion of an independent spherical or floating
 *  joint, also inside a loop cluster; additive for 1-dof joints). No loop closure: the closed
 *  spanning state of yout is cdyn_solve_loop_closure(yout). y: nyq (finite, unit quaternions),
 *  ydot: ny, yout: nyq (may be y). Trees: y = q and the result is cdyn_integrate's. */
CDYN_API cdyn_status cdyn_integrate_independent(const cdyn_model* model, cdyn_workspace* ws,
                                                const double* y, int nyq, const double* ydot,
                                                int ny, double dt, double* yout, int nyqout);
/** y1 (-) y0: the independent velocity ydot (ny) with cdyn_integrate_independent(y0, ydot, 1)
 *  == y1, its inverse (body-frame logarithm of each independent quaternion or planar joint,
 *  rotations of angle below pi). y0, y1: nyq (finite, unit quaternions). */
CDYN_API cdyn_status cdyn_difference_independent(const cdyn_model* model, cdyn_workspace* ws,
                                                 const double* y0, int nyq0, const double* y1,
                                                 int nyq1, double* ydot, int ny);

/* ========================================================================================== */
/* Kinematics (compute functions)                                                            */
/* ========================================================================================== */

/** Forward kinematics: body placements from q (nq); with v (nv) also velocities; with a (nv)
 *  also accelerations (gravity NOT included). v and a are optional (NULL, 0); a requires v.
 *  The frame_* functions below read the result of the LAST cdyn_forward_kinematics call on the
 *  workspace; any other compute call on the workspace invalidates it (they then fail with
 *  CDYN_ERR_INVALID_ARGUMENT), except cdyn_compute_frame_jacobian, which leaves placements. */
CDYN_API cdyn_status cdyn_forward_kinematics(const cdyn_model* model, cdyn_workspace* ws,
                                             const double* q, int nq, const double* v /*optional*/,
                                             int nv, const double* a /*optional*/, int na);
/** Pose of frame `frame` in the world after cdyn_forward_kinematics: R (3 x 3, column-major,
 *  leading dimension ldr >= 3) has the frame axes as columns in world coordinates; p[3] is the
 *  frame origin in world coordinates [m] (x_world = R x_frame + p). */
CDYN_API cdyn_status cdyn_frame_placement(const cdyn_model* model, cdyn_workspace* ws, int frame,
                                          double* R, int ldr, double p[3]);
/** Same pose as a 4 x 4 homogeneous matrix T = [R p; 0 0 0 1] (column-major, ldt >= 4). */
CDYN_API cdyn_status cdyn_frame_placement_matrix(const cdyn_model* model, cdyn_workspace* ws,
                                                 int frame, double* T, int ldt);
/** Spatial velocity (angular; linear) [rad/s; m/s] of a frame in reference frame rf (a
 *  cdyn_reference_frame), after cdyn_forward_kinematics with v. */
CDYN_API cdyn_status cdyn_frame_velocity(const cdyn_model* model, cdyn_workspace* ws, int frame,
                                         int rf, double velocity[6]);
/** Spatial acceleration (angular; linear) [rad/s^2; m/s^2] of a frame in rf (the derivative
 *  of the spatial velocity, gravity not included), after cdyn_forward_kinematics with v and a.
 *  For the ordinary acceleration of the frame origin use cdyn_frame_classical_acceleration. */
CDYN_API cdyn_status cdyn_frame_acceleration(const cdyn_model* model, cdyn_workspace* ws, int frame,
                                             int rf, double acceleration[6]);
/** Classical linear acceleration of the frame origin [m/s^2] (d/dt of its velocity, includes
 *  omega x v), in frame axes (CDYN_LOCAL) or world axes (CDYN_WORLD and
 *  CDYN_LOCAL_WORLD_ALIGNED), after cdyn_forward_kinematics with v and a. */
CDYN_API cdyn_status cdyn_frame_classical_acceleration(const cdyn_model* model, cdyn_workspace* ws,
                                                       int frame, int rf, double acceleration[3]);
/** Frame Jacobian J (6 x nv, column-major, ldj >= 6, rows angular then linear) at the
 *  placements of the last cdyn_forward_kinematics: J v is the frame velocity in rf. Columns of
 *  joints that do not move the frame are 0. */
CDYN_API cdyn_status cdyn_frame_jacobian(const cdyn_model* model, cdyn_workspace* ws, int frame,
                                         int rf, double* J, int ldj);
/** cdyn_forward_kinematics(q) followed by cdyn_frame_jacobian (leaves the placements valid for
 *  the frame functions). */
CDYN_API cdyn_status cdyn_compute_frame_jacobian(const cdyn_model* model, cdyn_workspace* ws,
                                                 const double* q, int nq, int frame, int rf,
                                                 double* J, int ldj);
/** Centre of mass of the whole model [m], world coordinates, at configuration q (nq). */
CDYN_API cdyn_status cdyn_center_of_mass(const cdyn_model* model, cdyn_workspace* ws,
                                         const double* q, int nq, double com[3]);

/* ========================================================================================== */
/* Dynamics on the spanning tree (compute functions)                                          */
/* ========================================================================================== */

/** Inverse dynamics (recursive Newton-Euler): tau = M(q) a + C(q, v) v + g(q) - sum_i J_i^T
 *  fext_i. q: nq, v: nv, a: nv, fext: optional (NULL, 0) or 6 * nbodies, tau: nv. */
CDYN_API cdyn_status cdyn_rnea(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                               const double* v, int nv, const double* a, int na,
                               const double* fext /*optional*/, int nfext, double* tau, int ntau);
/** Forward dynamics (articulated-body algorithm): ddq = M(q)^-1 (tau - C(q, v) v - g(q) +
 *  sum_i J_i^T fext_i). q: nq, v: nv, tau: nv, fext: optional (NULL, 0) or 6 * nbodies,
 *  ddq: nv. CDYN_ERR_NOT_POSITIVE_DEFINITE if an articulated inertia is singular. */
CDYN_API cdyn_status cdyn_aba(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                              const double* v, int nv, const double* tau, int ntau,
                              const double* fext /*optional*/, int nfext, double* ddq, int nddq);
/** Joint-space inertia matrix M(q) (composite-rigid-body algorithm), nv x nv, column-major,
 *  ldm >= nv, both triangles written. q: nq. */
CDYN_API cdyn_status cdyn_crba(const cdyn_model* model, cdyn_workspace* ws, const double* q, int nq,
                               double* M, int ldm);
/** Bias forces C(q, v) v + g(q) (nle: nv). */
CDYN_API cdyn_status cdyn_nonlinear_effects(const cdyn_model* model, cdyn_workspace* ws,
                                            const double* q, int nq, const double* v, int nv,
                                            double* nle, int nnle);
/** Generalized gravity g(q) (g: nv). */
CDYN_API cdyn_status cdyn_generalized_gravity(const cdyn_model* model, cdyn_workspace* ws,
                                              const double* q, int nq, double* g, int ng);
/** Kinetic energy 1/2 v^T M(q) v [J]. */
CDYN_API cdyn_status cdyn_kinetic_energy(const cdyn_model* model, cdyn_workspace* ws,
                                         const double* q, int nq, const double* v, int nv,
                                         double* energy /*scalar*/);
/** Potential energy - sum_i m_i g . c_i [J], c_i the centre of mass of body i in world
 *  coordinates (0 when every c_i is at height 0 for gravity along -z). */
CDYN_API cdyn_status cdyn_potential_energy(const cdyn_model* model, cdyn_workspace* ws,
                                           const double* q, int nq, double* energy /*scalar*/);

/* ========================================================================================== */
/* Dynamics in independent coordinates: cluster tree, constraint embedding (compute functions) */
/* ========================================================================================== */
/* Spanning inputs (q, v) must be CLOSED (see "Cluster tree"); else CDYN_ERR_CONSTRAINT_FAILURE.
 * tau, ydot, ydd are independent-coordinate vectors (ny) unless said otherwise; fext as for
 * the tree functions (6 * nbodies, spanning-tree bodies, optional). The optional spanning
 * outputs (NULL, 0 when not wanted) receive v_dot = G y_ddot + g (qdd, nv). */

/** Forward dynamics (constraint-embedding ABA): independent accelerations ydd (ny) from a closed
 *  spanning state q (nq), v (nv) and independent efforts tau (ny); optional qdd (nv): the
 *  spanning accelerations. CDYN_ERR_NOT_POSITIVE_DEFINITE if an articulated inertia is
 *  singular. */
CDYN_API cdyn_status cdyn_ce_aba(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                 int nq, const double* v, int nv, const double* tau, int ntau,
                                 const double* fext /*optional*/, int nfext, double* ydd, int nydd,
                                 double* qdd /*optional*/, int nqdd);
/** Same with efforts on the spanning-tree joints: tau has nv elements (layout of v; actuators
 *  on dependent joints included) and acts through G^T tau. */
CDYN_API cdyn_status cdyn_ce_aba_spanning_forces(const cdyn_model* model, cdyn_workspace* ws,
                                                 const double* q, int nq, const double* v, int nv,
                                                 const double* tau, int ntau,
                                                 const double* fext /*optional*/, int nfext,
                                                 double* ydd, int nydd, double* qdd /*optional*/,
                                                 int nqdd);
/** Forward dynamics from independent coordinates: solves the loop closure for y (nyq,
 *  warm-started, see "Warm start"), v = G ydot (ydot: ny), then CE-ABA with tau (ny). Outputs:
 *  ydd (ny); optional q (nq) and v (nv): the closed spanning state; optional qdd (nv). */
CDYN_API cdyn_status cdyn_ce_aba_independent(const cdyn_model* model, cdyn_workspace* ws,
                                             const double* y, int nyq, const double* ydot, int ny,
                                             const double* tau, int ntau,
                                             const double* fext /*optional*/, int nfext,
                                             double* ydd, int nydd, double* q /*optional*/, int nq,
                                             double* v /*optional*/, int nv,
                                             double* qdd /*optional*/, int nqdd);
/** Inverse dynamics (constraint-embedding RNEA): the independent efforts tau (ny) that produce
 *  the independent accelerations ydd (ny) at the closed state q (nq), v (nv), with external
 *  forces fext; tau = G^T tau_spanning. Optional qdd (nv): the spanning accelerations. */
CDYN_API cdyn_status cdyn_ce_rnea(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                  int nq, const double* v, int nv, const double* ydd, int nydd,
                                  const double* fext /*optional*/, int nfext, double* tau, int ntau,
                                  double* qdd /*optional*/, int nqdd);
/** Independent-coordinate mass matrix H(q) = G^T M G (ny x ny, column-major, ldh >= ny, both
 *  triangles written) at the closed configuration q (nq). */
CDYN_API cdyn_status cdyn_cluster_mass_matrix(const cdyn_model* model, cdyn_workspace* ws,
                                              const double* q, int nq, double* H, int ldh);
/** Independent bias C(q, v) (ny) at the closed state q (nq), v (nv): H ydd + C = tau
 *  (Coriolis, centrifugal, gravity and constraint-bias terms, = cdyn_ce_rnea with ydd = 0 and
 *  no external force). */
CDYN_API cdyn_status cdyn_cluster_bias(const cdyn_model* model, cdyn_workspace* ws, const double* q,
                                       int nq, const double* v, int nv, double* C, int nc);

/* ========================================================================================== */
/* Loop closure, coordinate conversions, constraint matrices (compute functions)              */
/* ========================================================================================== */

/** Position solve: the closed spanning configuration q (nq) whose independent coordinates are
 *  y (nyq). Implicit loops: Newton (at most 50 steps per start, residual max |phi| <= 1e-12,
 *  rows in m or rad) from q_guess (optional, nq: any valid configuration near the wanted
 *  branch) or else from the workspace's warm start (see "Warm start"). When that start is a
 *  closed, regular configuration the solve follows its assembly branch (predictor-corrector
 *  continuation along the straight path in y; clusterdyn::solveLoopClosure): CDYN_OK never
 *  returns another branch, also across a branch point such as a parallelogram's fold.
 *  CDYN_ERR_CONSTRAINT_FAILURE (naming the cluster) when the loop cannot be closed for y (out
 *  of the mechanism's range, singular), Newton does not converge, or the start's branch does
 *  not reach y. cdyn_last_loop_closure reports the iterations and the residual. */
CDYN_API cdyn_status cdyn_solve_loop_closure(const cdyn_model* model, cdyn_workspace* ws,
                                             const double* y, int nyq,
                                             const double* q_guess /*optional*/, int nq_guess,
                                             double* q, int nq);
/** Closed spanning state from independent coordinates: q (nq) as cdyn_solve_loop_closure(y,
 *  q_guess) and v = G(q) ydot (nv; ydot: ny). */
CDYN_API cdyn_status cdyn_independent_to_spanning(const cdyn_model* model, cdyn_workspace* ws,
                                                  const double* y, int nyq, const double* ydot,
                                                  int ny, const double* q_guess /*optional*/,
                                                  int nq_guess, double* q, int nq, double* v,
                                                  int nv);
/** Independent coordinates of a spanning state (a selection; no closure check): y (nyq) from
 *  q (nq), ydot (ny) from v (nv). */
CDYN_API cdyn_status cdyn_spanning_to_independent(const cdyn_model* model, cdyn_workspace* ws,
                                                  const double* q, int nq, const double* v, int nv,
                                                  double* y, int nyq, double* ydot, int ny);
/** Projects an arbitrary spanning state onto the constraint manifold: qout (nq) keeps the
 *  independent coordinates of q and solves the dependent ones (Newton from q itself); vout (nv)
 *  = G(qout) ydot with ydot the independent part of v. q: nq (valid configuration), v: nv.
 *  CDYN_ERR_CONSTRAINT_FAILURE when a loop cannot be closed. */
CDYN_API cdyn_status cdyn_project_to_constraints(const cdyn_model* model, cdyn_workspace* ws,
                                                 const double* q, int nq, const double* v, int nv,
                                                 double* qout, int nqout, double* vout, int nvout);
/** Newton iterations and final residual (max |phi|, m or rad) of the last position solve on the
 *  workspace (any output may be NULL). Does not change the workspace's last error message, so
 *  it can follow a failed solve. */
CDYN_API cdyn_status cdyn_last_loop_closure(const cdyn_model* model, cdyn_workspace* ws,
                                            int* iterations /*optional*/,
                                            double* residual /*optional scalar*/);
/** Explicit constraint of the whole model at (q, v): v = G y_dot and v_dot = G y_ddot + g.
 *  G: nv x ny, column-major, ldg >= nv, block diagonal over the clusters (every entry
 *  written); g: optional (NULL, 0) or nv. q: nq, v: nv (G depends on q, g on q and v; the state
 *  need not be closed, but G is only meaningful on the constraint manifold).
 *  CDYN_ERR_CONSTRAINT_FAILURE if a loop's dependent block is singular at q. */
CDYN_API cdyn_status cdyn_constraint_matrices(const cdyn_model* model, cdyn_workspace* ws,
                                              const double* q, int nq, const double* v, int nv,
                                              double* G, int ldg, double* g /*optional*/, int ng);
/** Same for one cluster: its block G_k (nv_k x ny_k, ldg >= nv_k) and g_k (optional, nv_k),
 *  sizes from cdyn_model_cluster_coordinates. */
CDYN_API cdyn_status cdyn_cluster_constraint_matrices(const cdyn_model* model, cdyn_workspace* ws,
                                                      int cluster, const double* q, int nq,
                                                      const double* v, int nv, double* G, int ldg,
                                                      double* g /*optional*/, int ng);

/* ========================================================================================== */
/* Batched evaluation: many states per call, on several threads                               */
/* ========================================================================================== */
/* Each cdyn_batch_* / cdyn_pool_* function evaluates n states with the single-state function
 * named in its comment; the result of state i is BIT-IDENTICAL to that single call on state i
 * (whatever the number of threads or the order the states are taken in).
 *
 * Stacked arrays. Every array argument holds n states of `len` doubles each, where len is the
 * per-state length passed with it (the same length the single-state function takes: nq, nv, ny,
 * 6 * nbodies for fext, ny * ny for H). The arrays form an n x len matrix laid out by `layout`:
 *   CDYN_BATCH_ROW_MAJOR  element j of state i is X[i * len + j]: each state is one contiguous
 *                         row (C / numpy order 'C' arrays of shape (n, len); Fortran X(len, n));
 *   CDYN_BATCH_COL_MAJOR  element j of state i is X[i + j * n]   (numpy order 'F' arrays of
 *                         shape (n, len); Fortran X(n, len)).
 * One layout applies to every array of the call. A state's H (ny x ny) is stored as its ny * ny
 * column-major elements. Optional arrays are (NULL, 0) as in the single-state functions; a
 * given optional array must have the full per-state length.
 *
 * Failures. All states are attempted (a state after a failed one may be skipped). The return
 * value is CDYN_OK when every state succeeded, else the status of the failed state with the
 * LOWEST index; *failed_index (optional, may be NULL) receives that index, or -1 when every
 * state succeeded or the arguments were rejected before any state ran. The outputs of states
 * before the failed one are written, the others are unspecified. The message of the failure
 * (the single-state function's, for example "v[3] is not finite") is in the workspace ws[0]
 * (cdyn_batch_*) or in cdyn_pool_last_error (cdyn_pool_*). Argument errors are reported before
 * any state runs: a wrong per-state length or a NULL array with the single-state function's
 * status and message (pools: "<name> has length L per state, expected E"); n < 0 with
 * CDYN_ERR_INVALID_SIZE and a bad layout with CDYN_ERR_INVALID_ARGUMENT (message in pools, and
 * in cdyn_last_error); invalid, NULL or duplicate workspaces / pools as for handles (message in
 * cdyn_last_error).
 * Inputs and outputs must not overlap.
 *
 * Two ways to run them:
 *  cdyn_batch_*  threads started by the call: ws is an array of nws >= 1 DISTINCT workspaces of
 *                the model; the call uses min(nws, n) threads, the calling thread being one of
 *                them (with ws[0]); nws == 1 runs on the calling thread only. Not real-time:
 *                starting threads allocates, and so does CDYN_BATCH_COL_MAJOR (one gather
 *                buffer per thread); with nws == 1 and CDYN_BATCH_ROW_MAJOR the call does not
 *                allocate. The workspaces must not be used by other threads during the call.
 *  cdyn_pool_*   a pool made once by cdyn_pool_create(model, nthreads): it owns nthreads
 *                workspaces, their gather buffers and nthreads - 1 persistent worker threads;
 *                the calling thread works as the n-th. Once the pool exists its batch calls
 *                perform no heap allocation and no I/O (they synchronize with the workers through
 *                a mutex and condition variables). One batch runs on a pool at a time:
 *                concurrent calls on one pool from several threads are serialized.
 * Free every pool of a model (cdyn_pool_free) before the model. */

/** Layouts of stacked arrays (see above). */
#define CDYN_BATCH_ROW_MAJOR 0
#define CDYN_BATCH_COL_MAJOR 1

/** Pool of worker threads with one workspace each, for one model. */
typedef struct cdyn_pool cdyn_pool;

/** Creates a pool of nthreads (1 <= nthreads <= 1024) workspaces of `model` and nthreads - 1
 *  worker threads (allocates; starts threads). CDYN_ERR_INVALID_ARGUMENT for a bad nthreads,
 *  CDYN_ERR_OUT_OF_MEMORY when memory or threads cannot be had. */
CDYN_API cdyn_status cdyn_pool_create(const cdyn_model* model, int nthreads, cdyn_pool** pool);
/** Stops the workers and frees the pool and its workspaces. NULL is accepted (CDYN_OK). Not
 *  concurrent with a batch call on the same pool. */
CDYN_API cdyn_status cdyn_pool_free(cdyn_pool* pool);
/** Number of threads (== workspaces) of the pool, the calling thread included. */
CDYN_API cdyn_status cdyn_pool_nthreads(const cdyn_pool* pool, int* nthreads);
/** Message of the last failed batch call on the pool ("" after a success; a static message
 *  when pool is NULL or invalid). Valid until the next call on the pool. */
CDYN_API const char* cdyn_pool_last_error(const cdyn_pool* pool);

/** n x cdyn_ce_aba: ydd (n x ny) and optional qdd (n x nv) from closed spanning states
 *  q (n x nq), v (n x nv), independent efforts tau (n x ny) and optional fext
 *  (n x 6 * nbodies). */
CDYN_API cdyn_status cdyn_batch_ce_aba(const cdyn_model* model, cdyn_workspace* const* ws, int nws,
                                       int n, int layout, const double* q, int nq, const double* v,
                                       int nv, const double* tau, int ntau,
                                       const double* fext /*optional*/, int nfext, double* ydd,
                                       int nydd, double* qdd /*optional*/, int nqdd,
                                       int* failed_index /*optional*/);
/** n x cdyn_ce_aba_independent from independent states y (n x nyq), ydot (n x ny), efforts
 *  tau (n x ny), optional fext. The position solve of EVERY state starts from q_guess (one
 *  configuration, nq, optional) or, when it is (NULL, 0), from the model's reference
 *  configuration (cdyn_model_reference_configuration); so state i's result equals
 *  cdyn_independent_to_spanning(y_i, ydot_i, q_guess) followed by cdyn_ce_aba (and
 *  cdyn_ce_aba_independent on a new workspace when q_guess is NULL). Outputs: ydd (n x ny);
 *  optional q (n x nq), v (n x nv): the closed spanning states; optional qdd (n x nv). */
CDYN_API cdyn_status cdyn_batch_ce_aba_independent(
    const cdyn_model* model, cdyn_workspace* const* ws, int nws, int n, int layout, const double* y,
    int nyq, const double* ydot, int ny, const double* tau, int ntau,
    const double* fext /*optional*/, int nfext, const double* q_guess /*optional*/, int nq_guess,
    double* ydd, int nydd, double* q /*optional*/, int nq, double* v /*optional*/, int nv,
    double* qdd /*optional*/, int nqdd, int* failed_index /*optional*/);
/** n x cdyn_ce_rnea: tau (n x ny) and optional qdd (n x nv) from closed states q (n x nq),
 *  v (n x nv), independent accelerations ydd (n x ny) and optional fext. */
CDYN_API cdyn_status cdyn_batch_ce_rnea(const cdyn_model* model, cdyn_workspace* const* ws, int nws,
                                        int n, int layout, const double* q, int nq, const double* v,
                                        int nv, const double* ydd, int nydd,
                                        const double* fext /*optional*/, int nfext, double* tau,
                                        int ntau, double* qdd /*optional*/, int nqdd,
                                        int* failed_index /*optional*/);
/** n x cdyn_cluster_mass_matrix: H (n x nh, nh = ny * ny: each state's H column-major) from
 *  closed configurations q (n x nq). */
CDYN_API cdyn_status cdyn_batch_cluster_mass_matrix(const cdyn_model* model,
                                                    cdyn_workspace* const* ws, int nws, int n,
                                                    int layout, const double* q, int nq, double* H,
                                                    int nh, int* failed_index /*optional*/);

/** cdyn_batch_ce_aba on the pool's threads and workspaces (no allocation). */
CDYN_API cdyn_status cdyn_pool_ce_aba(const cdyn_model* model, cdyn_pool* pool, int n, int layout,
                                      const double* q, int nq, const double* v, int nv,
                                      const double* tau, int ntau, const double* fext /*optional*/,
                                      int nfext, double* ydd, int nydd, double* qdd /*optional*/,
                                      int nqdd, int* failed_index /*optional*/);
/** cdyn_batch_ce_aba_independent on the pool's threads and workspaces (no allocation). */
CDYN_API cdyn_status cdyn_pool_ce_aba_independent(
    const cdyn_model* model, cdyn_pool* pool, int n, int layout, const double* y, int nyq,
    const double* ydot, int ny, const double* tau, int ntau, const double* fext /*optional*/,
    int nfext, const double* q_guess /*optional*/, int nq_guess, double* ydd, int nydd,
    double* q /*optional*/, int nq, double* v /*optional*/, int nv, double* qdd /*optional*/,
    int nqdd, int* failed_index /*optional*/);
/** cdyn_batch_ce_rnea on the pool's threads and workspaces (no allocation). */
CDYN_API cdyn_status cdyn_pool_ce_rnea(const cdyn_model* model, cdyn_pool* pool, int n, int layout,
                                       const double* q, int nq, const double* v, int nv,
                                       const double* ydd, int nydd, const double* fext /*optional*/,
                                       int nfext, double* tau, int ntau, double* qdd /*optional*/,
                                       int nqdd, int* failed_index /*optional*/);
/** cdyn_batch_cluster_mass_matrix on the pool's threads and workspaces (no allocation). */
CDYN_API cdyn_status cdyn_pool_cluster_mass_matrix(const cdyn_model* model, cdyn_pool* pool, int n,
                                                   int layout, const double* q, int nq, double* H,
                                                   int nh, int* failed_index /*optional*/);

/* Constraint forces: tree-joint, loop and coupling forces after CE-ABA / CE-RNEA              */
/* (docs/c-api.md "Constraint forces", docs/design/constraint-forces.md)                       */
/* ========================================================================================== */

/** Results of the constraint-force computations for one model (one per thread, like a
 *  workspace). cdyn_forces_create allocates; every other cdyn_forces_* function does not. */
typedef struct cdyn_forces cdyn_forces;

/** Frames of the force results. */
typedef enum cdyn_force_frame {
  CDYN_FORCE_FRAME_BODY = 0,  /**< the child body's frame, about its origin */
  CDYN_FORCE_FRAME_WORLD = 1, /**< world axes, about the world origin */
  CDYN_FORCE_FRAME_LOOP = 2   /**< a loop joint's frame P (on its predecessor), about P's origin */
} cdyn_force_frame;

CDYN_API cdyn_status cdyn_forces_create(const cdyn_model* model, cdyn_forces** forces);
/** Frees forces (NULL: CDYN_OK, nothing done; not a cdyn_forces handle:
 *  CDYN_ERR_INVALID_ARGUMENT). Free it before its model: cdyn_model_free refuses while a
 *  cdyn_forces of the model exists (it would dangle). */
CDYN_API cdyn_status cdyn_forces_free(cdyn_forces* forces);

/** Fills forces from the workspace's last successful cdyn_ce_aba / cdyn_ce_aba_independent
 *  (spanning = 0: efforts on the independent joints, ntau = ny) or cdyn_ce_aba_spanning_forces
 *  (spanning = 1: efforts on the spanning joints, ntau = nv), with no other call on the
 *  workspace in between (else CDYN_ERR_INVALID_ARGUMENT, with a message). The workspace keeps a
 *  copy of the efforts of that call: pass tau = (NULL, 0) to use them (recommended), or the
 *  same efforts again, which are checked element by element: any difference (the forces would
 *  balance neither effort vector) gives CDYN_ERR_INVALID_ARGUMENT naming the first differing
 *  element. fext, q and v need no check: the forces are read from that call's results. */
CDYN_API cdyn_status cdyn_forces_after_ce_aba(const cdyn_model* model, cdyn_workspace* ws,
                                              cdyn_forces* forces, const double* tau, int ntau,
                                              int spanning);
/** Fills forces from the workspace's last successful cdyn_ce_rnea (its efforts act on the
 *  independent joints), with no other call on the workspace in between (else
 *  CDYN_ERR_INVALID_ARGUMENT). */
CDYN_API cdyn_status cdyn_forces_after_ce_rnea(const cdyn_model* model, cdyn_workspace* ws,
                                               cdyn_forces* forces);
/** Spatial force (moment, force) each spanning-tree joint applies TO its child body: W is
 *  6 x nbodies, column-major, ldw >= 6, column i = joint i. frame: CDYN_FORCE_FRAME_BODY or
 *  CDYN_FORCE_FRAME_WORLD (world axes about the world origin, from the body poses of the
 *  dynamics call the forces were filled from). Before the first fill every result of a
 *  cdyn_forces (joint and loop wrenches, loop rows, coupling multipliers and forces) is zero,
 *  returned with CDYN_OK: check your own call order. */
CDYN_API cdyn_status cdyn_forces_joint_wrenches(const cdyn_model* model, cdyn_workspace* ws,
                                                const cdyn_forces* forces, int frame, double* W,
                                                int ldw);
/** Wrench of every <loop> cut joint applied TO its successor body BY its predecessor (the
 *  predecessor receives the opposite), in CDYN_FORCE_FRAME_LOOP: W is 6 x nloops (ldw >= 6). */
CDYN_API cdyn_status cdyn_forces_loop_wrenches(const cdyn_model* model, const cdyn_forces* forces,
                                               double* W, int ldw);
/** Components of loop's wrench (cdyn_forces_loop_wrenches: on the successor, frame P) along its
 *  constrained directions, the multipliers: rotational rows, then translational rows; nrows
 *  from cdyn_forces_loop_info. Directions, with a the unit loop axis in P's axes, t1 = the unit
 *  part of e_x (e_y when |a_x| >= 0.9) normal to a, t2 = a x t1: revolute/continuous: moments
 *  along t1, t2, forces along P's x, y, z (5); prismatic: moments along x, y, z, forces along
 *  t1, t2 (5); planar: moments along t1, t2, force along a (3); spherical: forces along x, y, z
 *  (3); fixed: moments then forces along x, y, z (6). Redundant rows are 0. Sign relation with
 *  the same loop CUT (CDYN_LOAD_CUT_LOOPS, cdyn_constraint_set_create_cut_loops) at the same
 *  closed state and efforts: the cut constraint's wrench on its body1 (the predecessor;
 *  cdyn_constraint_wrenches, in A's axes) is w_A = -[R^T n; R^T f], with (n; f) the loop wrench
 *  in P's axes and R the rotation of A in P (A's z = a); for a loop whose axis is P's z
 *  (R = identity) the cut lambda is minus these rows, row by row. A loop whose predecessor is
 *  the world has body1 = its successor: then w_A = +[R^T n; R^T f]. */
CDYN_API cdyn_status cdyn_forces_loop_rows(const cdyn_model* model, const cdyn_forces* forces,
                                           int loop, double* rows, int nrows);
/** Name, predecessor and successor bodies (-1: world), row count and the loop frame P (pose in
 *  the predecessor body: R column-major then p, 12 doubles) of loop (any output may be NULL). */
CDYN_API cdyn_status cdyn_forces_loop_info(const cdyn_model* model, int loop,
                                           const char** name /*optional*/,
                                           int* predecessor_body /*optional*/,
                                           int* successor_body /*optional*/,
                                           int* nrows /*optional*/,
                                           double* frame_pose /*optional*/);
/** Name and term count of coupling/mimic relation (sum_t coeff_t v_t = 0). */
CDYN_API cdyn_status cdyn_forces_coupling_info(const cdyn_model* model, int relation,
                                               const char** name /*optional*/,
                                               int* nterms /*optional*/);
/** Term of a relation: spanning velocity index (cdyn_model_velocity_name) and coefficient. */
CDYN_API cdyn_status cdyn_forces_coupling_term(const cdyn_model* model, int relation, int term,
                                               int* velocity_index /*optional*/,
                                               double* coefficient /*optional scalar*/);
/** Multiplier of relation (optional) and the generalized force (N m or N) it exerts on each of
 *  its joints, joint_forces[t] = coeff_t * multiplier (nterms values; the gear torque on each
 *  side). */
CDYN_API cdyn_status cdyn_forces_coupling(const cdyn_model* model, const cdyn_forces* forces,
                                          int relation, double* multiplier /*optional scalar*/,
                                          double* joint_forces, int nterms);

/* ========================================================================================== */
/* Constraints (contacts, welds, loops) and constrained dynamics                              */
/* ========================================================================================== */
/* C++: include/clusterdyn/constraints.hpp, docs/constraints.md. A constraint relates frame A
 * (placement1 on body1) and frame B (placement2 on body2, or a fixed world pose when body2 is
 * -1). Its velocity is the relative spatial velocity nu = v_A - A_X_B v_B (angular first, in
 * A's axes about A's origin; v_A, v_B the frames' velocities in their own coordinates), and its
 * rows select components of nu:
 *   CDYN_CONSTRAINT_POINT     3 rows  linear x y z          (point contact, spherical loop)
 *   CDYN_CONSTRAINT_WELD      6 rows  angular x y z, linear x y z  (6D contact, weld)
 *   CDYN_CONSTRAINT_REVOLUTE  5 rows  angular x y, linear x y z    (free about A's z axis)
 *   CDYN_CONSTRAINT_PLANAR    3 rows  angular x y, linear z        (free in A's xy plane)
 *   CDYN_CONSTRAINT_PRISMATIC 5 rows  angular x y z, linear x y    (free along A's z axis)
 * in A's axes (CDYN_LOCAL) or, for point and weld, world axes at A's origin
 * (CDYN_LOCAL_WORLD_ALIGNED), in the order of the table (row names: cdyn_constraint_set_row_name);
 * the rows of constraint i follow those of constraints 0..i-1. With m rows in total and
 * independent coordinates y (ny):
 *     H ydd + C = tau + J^T lambda,     J ydd + gamma = k,
 *   J      m x ny, the row Jacobian: J ydot = the row velocities (the selected components of nu).
 *   gamma  m, the row accelerations at ydd = 0: velocity-product terms only (kinematics: gravity
 *          and external forces play no part; it is 0, to rounding, at v = 0). For
 *          CDYN_LOCAL_WORLD_ALIGNED rows and for CDYN_LOCAL weld, revolute, planar and
 *          prismatic rows it is the time derivative of the row velocities along the motion with
 *          ydd = 0: gamma = d/dt (J(q) ydot). CDYN_LOCAL point rows are CLASSICAL accelerations (as
 *          Pinocchio's 3D contacts): gamma = d/dt (J ydot) + omega_A x (J ydot), omega_A the
 *          angular velocity of frame A in A's axes.
 *   phi    m, the position error of the rows (cdyn_constraint_kinematics): the selected
 *          components of phi6 = (log(R_B^T R_A); R_A^T (p_A - p_B)), the rotation vector [rad]
 *          taking B's axes to A's and the position [m] of A's origin from B's, both in A's axes
 *          (CDYN_LOCAL) or turned to world axes (CDYN_LOCAL_WORLD_ALIGNED: R_A log(R_B^T R_A),
 *          p_A - p_B); R, p the frames' world poses. phi = 0 where the constraint holds; a set
 *          made by cdyn_constraint_set_add_contact has phi = 0 at the reference configuration.
 *   k      m, the Baumgarte targets k = -kp phi - kd (J ydot) (gains 0 by default: k = 0).
 *   lambda m, the multipliers: J^T lambda is the generalized force ON the robot. lambda is the
 *          wrench applied TO body1 AT THE ORIGIN OF FRAME A (weld and revolute moments are
 *          about A's origin), its components along the rows (A's axes, or world axes for
 *          CDYN_LOCAL_WORLD_ALIGNED); body2 receives the opposite wrench.
 *
 * Handles. A cdyn_constraint_set belongs to one model; it is built by the add functions (which
 * allocate) and is read-only once a constraint workspace exists for it (add then fails with
 * CDYN_ERR_INVALID_ARGUMENT). A cdyn_constraint_workspace holds everything the constrained
 * algorithms write (its own cluster workspace and the constraint workspace); one per thread, as
 * cdyn_workspace. Free workspaces before their set, sets before their model (the free functions
 * refuse otherwise).
 *
 * Errors. Set functions write their message into the set (cdyn_constraint_set_last_error);
 * compute functions into the constraint workspace (cdyn_constraint_workspace_last_error); the
 * create and free functions and the set queries into cdyn_last_error (cdyn_constraint_set_free
 * also into the set). A workspace passed with another set gives CDYN_ERR_WORKSPACE_MISMATCH.
 * Settings that are not numbers (a NaN or Inf mu or tolerance, as a non-positive one) are
 * invalid arguments: CDYN_ERR_INVALID_ARGUMENT, not CDYN_ERR_NON_FINITE (which is for arrays),
 * and so is a NaN rho of cdyn_damped_delassus_inverse. For what "converged" covers, see
 * cdyn_proximal_result.
 *
 * Arrays. The compute functions take the lengths from the set's model (q: nq, v: nv, tau and
 * ydd: ny, qdd: nv, fext: 6 * nbodies) and the set (lambda, gamma: m) and check one explicit
 * length each: the number of rows m the caller sized its constraint-space arrays for (or the
 * leading dimension of the matrix output: ld >= m, so ld = 0 is accepted for an empty set,
 * m = 0; ld >= max(1, m) is never required). A matrix output writes rows 0..m-1 of its
 * columns only: rows m..ld-1 are left untouched. (q, v) must be a closed spanning state
 * (see "Cluster tree"). Inputs are checked for NaN/Inf; outputs are untouched on failure except
 * for CDYN_ERR_NOT_CONVERGED (below). Compute functions do not allocate, lock or do I/O.
 *
 * Proximal solves (Sathya & Carpentier 2024): cdyn_constrained_aba (constrainedABA, contact sets
 * only: every constraint has body2 = -1), cdyn_prox_pv (proxPV, any set) and
 * cdyn_constrained_dynamics_dense (dense Cholesky baseline) return ydd (ny), optional qdd (nv,
 * spanning accelerations G ydd + g), lambda (m) and an optional cdyn_proximal_result. CDYN_OK
 * means both residuals of the returned (ydd, lambda) meet settings->tolerance: the rows
 * |J ydd + gamma - k|_inf <= tolerance and the dynamics |H ydd + C - tau - J^T lambda -
 * (fext)|_inf <= tolerance * max(1, |tau|_inf, |lambda|_inf, |fext|_inf). Otherwise they
 * return CDYN_ERR_NOT_CONVERGED and STILL write the outputs (the last iterate, finite, lambda
 * the multiplier of ydd). */

/** Constraint types (rows above). */
typedef enum cdyn_constraint_type {
  CDYN_CONSTRAINT_POINT = 0,
  CDYN_CONSTRAINT_WELD = 1,
  CDYN_CONSTRAINT_REVOLUTE = 2,
  CDYN_CONSTRAINT_PLANAR = 3,
  CDYN_CONSTRAINT_PRISMATIC = 4
} cdyn_constraint_type;

/** Settings of the proximal solves (C++ ProximalSettings). Fill with
 *  cdyn_proximal_settings_default, then change fields. */
typedef struct cdyn_proximal_settings {
  double mu;          /**< proximal parameter (> 0; default 1e-4): damping of the dual
                           iterations, the augmented-Lagrangian penalty 1/mu of constrainedABA */
  double tolerance;   /**< on |J ydd + gamma - k|_inf and, scaled, on the dynamics residual
                           (see "Proximal solves"; > 0; default 1e-10) */
  int max_iterations; /**< iterations after the first solve (>= 0; default 50) */
  int warm_start;     /**< nonzero: start from the workspace's lambda of its last solve
                           (cdyn_constrained_aba, cdyn_prox_pv; default 0) */
} cdyn_proximal_settings;

/** Outcome of a proximal solve (C++ ProximalResult). */
typedef struct cdyn_proximal_result {
  int status;       /**< the call's cdyn_status */
  int iterations;   /**< proximal iterations used */
  double residual;  /**< final |J ydd + gamma - k|_inf */
  double dual_step; /**< last |lambda_k - lambda_(k-1)|_inf */
  int converged;    /**< 1 when residual <= tolerance */
} cdyn_proximal_result;

/** Constraint set of one model. */
typedef struct cdyn_constraint_set cdyn_constraint_set;
/** Per-thread workspace of one constraint set. */
typedef struct cdyn_constraint_workspace cdyn_constraint_workspace;

/** The default settings (mu 1e-4, tolerance 1e-10, 50 iterations, no warm start). */
CDYN_API cdyn_status cdyn_proximal_settings_default(cdyn_proximal_settings* settings);

/** Creates an empty constraint set for `model` (allocates). */
CDYN_API cdyn_status cdyn_constraint_set_create(const cdyn_model* model, cdyn_constraint_set** set);
/** Creates the set of the model's cut loops (models loaded with CDYN_LOAD_CUT_LOOPS or with
 *  closure="cut" loops; C++ cutLoopConstraints): constraint i is the i-th cut <loop> of the file,
 *  named after it; empty when the model has no cut loop. Each: type by the loop joint's type
 *  (revolute, continuous -> CDYN_CONSTRAINT_REVOLUTE; prismatic -> _PRISMATIC; planar ->
 *  _PLANAR; spherical -> _POINT; fixed -> _WELD), rf CDYN_LOCAL, gains 0; body1 the loop's
 *  predecessor body and body2 its successor (swapped when the predecessor is the world:
 *  body2 = -1); frame A = the loop frame P on the predecessor (its link frame times the loop's
 *  predecessor origin) and B = the loop frame S on the successor, both turned by the shortest
 *  rotation taking z to the loop axis, so A's z is the axis of the free motion. Read them back
 *  with cdyn_constraint_set_constraint. lambda is then the wrench on the predecessor body at P's
 *  origin: MINUS the wrench the same loop, embedded, transmits to its successor
 *  (cdyn_forces_loop_wrenches, cdyn_forces_loop_rows; see there). */
CDYN_API cdyn_status cdyn_constraint_set_create_cut_loops(const cdyn_model* model,
                                                          cdyn_constraint_set** set);
/** Frees a set. NULL is accepted. CDYN_ERR_INVALID_ARGUMENT, freeing nothing, while
 *  constraint workspaces of the set exist (message in the set and in cdyn_last_error). */
CDYN_API cdyn_status cdyn_constraint_set_free(cdyn_constraint_set* set);
/** Message of the last failed call on the set ("" after a success; a static message when set
 *  is NULL or invalid). */
CDYN_API const char* cdyn_constraint_set_last_error(const cdyn_constraint_set* set);
/** Adds a constraint (allocates). name: NUL-terminated, non-empty, unique in the set; type: a
 *  cdyn_constraint_type; body1: body index (0 <= body1 < nbodies); body2: -1 (the world) or a
 *  body index other than body1; placement1, placement2: poses of frames A and B in their bodies
 *  (in the world for body2 = -1) as 4 x 4 homogeneous matrices [R p; 0 0 0 1], column-major
 *  (16 doubles, as cdyn_frame_placement_matrix with ldt = 4; R a rotation to 1e-9), or NULL for
 *  the identity; rf: CDYN_LOCAL or CDYN_LOCAL_WORLD_ALIGNED (point and weld only); gains:
 *  NULL (0, 0) or the Baumgarte gains (kp [1/s^2], kd [1/s]), finite and >= 0. *index
 *  (optional) receives the constraint's index; its rows follow the rows already in the set.
 *  Errors: CDYN_ERR_INVALID_INDEX (bodies), CDYN_ERR_INVALID_ARGUMENT (type, frame, placement,
 *  gains, name, set in use), CDYN_ERR_NON_FINITE (placement or gains), message in the set. */
CDYN_API cdyn_status cdyn_constraint_set_add(cdyn_constraint_set* set, const char* name, int type,
                                             int body1, const double placement1[16] /*optional*/,
                                             int body2, const double placement2[16] /*optional*/,
                                             int rf, const double gains[2] /*optional*/,
                                             int* index /*optional*/);
/** Adds a contact of a frame with the world (C++ ConstraintSet::addContact): frame A = the
 *  named frame (a link, fused links included), frame B = its world pose at the model's
 *  reference configuration (cdyn_model_reference_configuration), so phi = 0 there. type:
 *  CDYN_CONSTRAINT_POINT (3D contact) or CDYN_CONSTRAINT_WELD (6D); rf: CDYN_LOCAL or
 *  CDYN_LOCAL_WORLD_ALIGNED; name: NULL or "" for "<frame>_contact3d" / "<frame>_contact6d".
 *  CDYN_ERR_NOT_FOUND for an unknown frame, CDYN_ERR_INVALID_ARGUMENT for a frame fixed to the
 *  world, a duplicate name or another type. */
CDYN_API cdyn_status cdyn_constraint_set_add_contact(cdyn_constraint_set* set,
                                                     const char* frame_name, int type, int rf,
                                                     const char* name /*optional*/,
                                                     int* index /*optional*/);
/** Number of constraints. */
CDYN_API cdyn_status cdyn_constraint_set_size(const cdyn_constraint_set* set, int* nconstraints);
/** Number of rows m (sum of the constraints' rows). */
CDYN_API cdyn_status cdyn_constraint_set_nrows(const cdyn_constraint_set* set, int* m);
/** Constraint `index` (0 <= index < cdyn_constraint_set_size, else CDYN_ERR_INVALID_INDEX) as it
 *  is stored (every output optional, NULL: not written): name (owned by the set), type (a
 *  cdyn_constraint_type), body1, placement1 (4 x 4 column-major, as cdyn_constraint_set_add
 *  takes it), body2 (-1: the world), placement2, rf, gains (kp, kd), row0 (its first row) and
 *  nrows. For the sets of cdyn_constraint_set_create_cut_loops, the frames chosen there. */
CDYN_API cdyn_status cdyn_constraint_set_constraint(
    const cdyn_constraint_set* set, int index, const char** name /*optional*/,
    int* type /*optional*/, int* body1 /*optional*/, double placement1[16] /*optional*/,
    int* body2 /*optional*/, double placement2[16] /*optional*/, int* rf /*optional*/,
    double gains[2] /*optional*/, int* row0 /*optional*/, int* nrows /*optional*/);
/** Name "<constraint>:<component>" of row `row` (0 <= row < m, else CDYN_ERR_INVALID_INDEX),
 *  components ang_x ang_y ang_z lin_x lin_y lin_z. Owned by the set, valid until it is freed
 *  (or, for the rows of later constraints, grows: read names once the set is complete). */
CDYN_API cdyn_status cdyn_constraint_set_row_name(const cdyn_constraint_set* set, int row,
                                                  const char** name);

/** Creates a constraint workspace for `set` of `model` (allocates; the set is read-only from
 *  now on). CDYN_ERR_WORKSPACE_MISMATCH when the set belongs to another model (message in
 *  cdyn_last_error: the set may be shared by threads, so its own message is not written). */
CDYN_API cdyn_status cdyn_constraint_workspace_create(const cdyn_model* model,
                                                      const cdyn_constraint_set* set,
                                                      cdyn_constraint_workspace** workspace);
/** Frees a constraint workspace. NULL is accepted. */
CDYN_API cdyn_status cdyn_constraint_workspace_free(cdyn_constraint_workspace* workspace);
/** Message of the last failed compute call on the workspace ("" after a success). */
CDYN_API const char* cdyn_constraint_workspace_last_error(
    const cdyn_constraint_workspace* workspace);

/** Row Jacobian J (m x ny, column-major, ldj >= m, rows m..ldj-1 untouched) and gamma
 *  (optional, m) at the closed state q (nq), v (optional, nv; NULL: zero velocity).
 *  m: the set's row count (explicit check). J and gamma: see the section's equations. */
CDYN_API cdyn_status cdyn_constraint_jacobian(const cdyn_constraint_set* set,
                                              cdyn_constraint_workspace* ws, const double* q,
                                              const double* v /*optional*/, int m, double* J,
                                              int ldj, double* gamma /*optional*/);
/** cdyn_constraint_jacobian with the position error: J (optional here: NULL writes nothing and
 *  ignores ldj), gamma (optional, m) and phi (optional, m; see the section's equations) at the
 *  closed state q (nq), v (optional, nv; NULL: zero velocity). phi needs q only; it is the
 *  constraint violation to watch (and to correct) in a simulation of the cut-loop or contact
 *  rows. */
CDYN_API cdyn_status cdyn_constraint_kinematics(const cdyn_constraint_set* set,
                                                cdyn_constraint_workspace* ws, const double* q,
                                                const double* v /*optional*/, int m,
                                                double* J /*optional*/, int ldj,
                                                double* gamma /*optional*/,
                                                double* phi /*optional*/);
/** Delassus matrix D = J H^-1 J^T (m x m, column-major, ldd >= m, rows m..ldd-1 untouched) at
 *  the closed configuration q (nq), by constraint-space propagation over the cluster tree
 *  (PV-OSIMr: Sathya, Decre, Swevers 2024). */
CDYN_API cdyn_status cdyn_delassus_matrix(const cdyn_constraint_set* set,
                                          cdyn_constraint_workspace* ws, const double* q, double* D,
                                          int ldd);
/** Damped inverse R = (J H^-1 J^T + rho I)^-1 (m x m, ldd >= m, rows m..ldd-1 untouched) at q,
 *  rho > 0 and finite: cABA-OSIM (Sathya & Carpentier 2024) for contact sets when
 *  rho * max_i R_ii >= 1e-2, else a Cholesky factorization of the damped Delassus matrix.
 *  Accuracy: max |R - R_exact| / max |R_exact| <= 20 eps kappa + 1e-14 (measured, rho 1 to
 *  1e-10), kappa = (sigma_max + rho) / (sigma_min + rho) the condition number of the damped
 *  Delassus matrix. CDYN_ERR_NON_FINITE when entries near 1/rho^2 overflow. */
CDYN_API cdyn_status cdyn_damped_delassus_inverse(const cdyn_constraint_set* set,
                                                  cdyn_constraint_workspace* ws, const double* q,
                                                  double rho, double* Dinv, int ldd);
/** constrainedABA (Sathya & Carpentier 2024, Alg. 1-3) at the closed state q (nq), v (nv) with
 *  independent efforts tau (ny) and optional fext (NULL or 6 * nbodies): ydd (ny), optional qdd
 *  (NULL or nv), lambda (m: explicit length, the set's rows), optional result. settings: NULL
 *  for the defaults. Contact sets only (CDYN_ERR_INVALID_ARGUMENT otherwise). settings->mu is
 *  the starting penalty: it adapts (x0.1 on a stalled residual, x100 when the dynamics check
 *  fails; C++ constrainedAba), each change costing one more augmented solve. */
CDYN_API cdyn_status cdyn_constrained_aba(const cdyn_constraint_set* set,
                                          cdyn_constraint_workspace* ws, const double* q,
                                          const double* v, const double* tau,
                                          const double* fext /*optional*/,
                                          const cdyn_proximal_settings* settings /*optional*/,
                                          double* ydd, double* qdd /*optional*/, double* lambda,
                                          int m, cdyn_proximal_result* result /*optional*/);
/** proxPV (Sathya & Carpentier 2024, Alg. 4), any set: arguments as cdyn_constrained_aba. */
CDYN_API cdyn_status cdyn_prox_pv(const cdyn_constraint_set* set, cdyn_constraint_workspace* ws,
                                  const double* q, const double* v, const double* tau,
                                  const double* fext /*optional*/,
                                  const cdyn_proximal_settings* settings /*optional*/, double* ydd,
                                  double* qdd /*optional*/, double* lambda, int m,
                                  cdyn_proximal_result* result /*optional*/);
/** Dense baseline (Cholesky of H, the same proximal iterations), any set: arguments as
 *  cdyn_constrained_aba; settings->warm_start must be 0. */
CDYN_API cdyn_status cdyn_constrained_dynamics_dense(
    const cdyn_constraint_set* set, cdyn_constraint_workspace* ws, const double* q, const double* v,
    const double* tau, const double* fext /*optional*/,
    const cdyn_proximal_settings* settings /*optional*/, double* ydd, double* qdd /*optional*/,
    double* lambda, int m, cdyn_proximal_result* result /*optional*/);

/** The wrench [moment; force] (N m, N) every constraint applies to its body1, at the origin of
 *  its frame on body1, from the multipliers of the workspace's last solve (cdyn_constrained_aba,
 *  cdyn_prox_pv or cdyn_constrained_dynamics_dense; zero before the first): components in that
 *  frame's axes (CDYN_LOCAL) or in world axes (CDYN_LOCAL_WORLD_ALIGNED); unconstrained components
 *  are 0; body2 receives the opposite wrench. W is 6 x nconstraints, column-major, ldw >= 6 (rows
 *  6..ldw-1 untouched). For a cut loop: the force its joint transmits to the predecessor body. */
CDYN_API cdyn_status cdyn_constraint_wrenches(const cdyn_constraint_set* set,
                                              cdyn_constraint_workspace* ws, double* W, int ldw);

/* Batched constrained dynamics: n states of one constraint set per call, on several threads.
 * As the batch functions of the section "Batched evaluation" (stacked arrays in `layout`,
 * threads started per call or a pool's, results BIT-IDENTICAL to single calls, arguments
 * checked before any state runs), with these differences:
 *  - ws: nws DISTINCT constraint workspaces of `set` (cdyn_batch_*: min(nws, n) threads, the
 *    calling thread with ws[0]; cdyn_pool_*: exactly one per pool thread, nws == the pool's
 *    nthreads, and the pool must belong to the set's model). The per-state lengths come from
 *    the model as in the single calls: q (n x nq), v (n x nv), tau (n x ny), optional fext
 *    (n x 6 * nbodies), ydd (n x ny), optional qdd (n x nv), lambda (n x m; m: the set's rows,
 *    checked). results: NULL or n cdyn_proximal_result (one per state, in state order whatever
 *    the layout).
 *  - settings: NULL for the defaults; settings->warm_start must be 0 (a warm start would make a
 *    state's result depend on the state its thread solved before). Settings, solver and set
 *    (contact sets only for CDYN_SOLVER_CONSTRAINED_ABA) are checked once, before any state.
 *  - A state that stops above the tolerance writes its outputs (the last iterate) and its
 *    result, and the batch goes on. Return value: the status of the lowest state that failed
 *    otherwise (outputs of later states unspecified), else CDYN_ERR_NOT_CONVERGED with
 *    *failed_index the lowest state that did not converge (every output written), else
 *    CDYN_OK. Messages are in ws[0] (cdyn_constraint_workspace_last_error; in the workspace
 *    concerned for an argument error of ws[k]) or in cdyn_pool_last_error.
 *  - Allocation: cdyn_batch_constrained_dynamics with nws == 1 does not allocate (either
 *    layout: the column-major gather buffer belongs to the workspace); more workspaces start
 *    threads. cdyn_pool_constrained_dynamics does not allocate. */

/** The proximal solver of a batched call. */
typedef enum cdyn_constrained_solver {
  CDYN_SOLVER_CONSTRAINED_ABA = 0, /**< cdyn_constrained_aba (contact sets only) */
  CDYN_SOLVER_PROX_PV = 1,         /**< cdyn_prox_pv (any set) */
  CDYN_SOLVER_DENSE = 2            /**< cdyn_constrained_dynamics_dense (any set) */
} cdyn_constrained_solver;

/** n x the single-state solve named by `solver` (a cdyn_constrained_solver) on threads started
 *  by the call, one per constraint workspace (see above). */
CDYN_API cdyn_status cdyn_batch_constrained_dynamics(
    const cdyn_constraint_set* set, cdyn_constraint_workspace* const* ws, int nws, int n,
    int layout, int solver, const double* q, const double* v, const double* tau,
    const double* fext /*optional*/, const cdyn_proximal_settings* settings /*optional*/,
    double* ydd, double* qdd /*optional*/, double* lambda, int m,
    cdyn_proximal_result* results /*optional array*/, int* failed_index /*optional*/);
/** cdyn_batch_constrained_dynamics on the pool's threads with the caller's constraint
 *  workspaces ws[0..nws-1], nws == the pool's nthreads (no allocation). */
CDYN_API cdyn_status cdyn_pool_constrained_dynamics(
    const cdyn_constraint_set* set, cdyn_pool* pool, cdyn_constraint_workspace* const* ws, int nws,
    int n, int layout, int solver, const double* q, const double* v, const double* tau,
    const double* fext /*optional*/, const cdyn_proximal_settings* settings /*optional*/,
    double* ydd, double* qdd /*optional*/, double* lambda, int m,
    cdyn_proximal_result* results /*optional array*/, int* failed_index /*optional*/);

/* ========================================================================================== */
/* Derivatives of the dynamics (derivative workspaces; compute functions)                      */
/* ========================================================================================== */
/* C++: include/clusterdyn/derivatives.hpp (tree), cluster_derivatives.hpp (cluster tree);
 * docs/derivatives.md. Analytical (not finite-difference) derivatives: the tree RNEA / ABA
 * derivatives and M^-1 after Carpentier & Mansard (2018) on the SPANNING TREE (loop constraints
 * ignored, like cdyn_rnea / cdyn_aba), and the CE-RNEA / CE-ABA derivatives in the INDEPENDENT
 * coordinates with the loops embedded (Chignoli et al. 2023).
 *
 * Conventions (every function of this section):
 *  - Tangent space. A configuration derivative has nv columns (tree) or ny columns (cluster
 *    tree), NOT nq / nyq: column k of d f / d q is d/de f(cdyn_integrate(q, e * e_k, 1)) at
 *    e = 0, the joint's right (body-frame) exponential, so for a floating base it is the
 *    Lie-group tangent (body angular then linear velocity) and for a spherical joint the body
 *    angular velocity; 1-dof and planar joints as their v. cdyn_difference is the inverse map.
 *    Cluster tree: column k of d f / d y moves the independent joints by integrate along
 *    independent velocity e_k, the dependent ones following on the same assembly branch (the
 *    spanning tangent is G(q) e_k); ydot and ydd (or tau) are held fixed.
 *  - Velocity derivatives are taken at fixed q (y); fext (optional, as for cdyn_rnea: forces on
 *    the bodies in body coordinates) is held fixed in the body frames when q moves.
 *  - Matrices are COLUMN-MAJOR square matrices (nv x nv tree, ny x ny cluster tree) with BOTH
 *    triangles filled (also M^-1 and H^-1, unlike Pinocchio's computeMinverse which fills the
 *    upper triangle only), all the matrices of one call sharing the leading dimension ld >=
 *    max(1, n). Optional matrices are NULL when not wanted.
 *  - A derivative workspace (cdyn_derivative_workspace) holds the derivative arrays, about
 *    6 nv^2 + 6 ny^2 + 6 nv nbodies doubles, and an internal workspace of the model: it is
 *    created on demand (allocates), separately from cdyn_workspace so that ordinary workspaces
 *    stay small. Once it exists, the compute functions below perform NO heap allocation, no
 *    I/O, no locks. One derivative workspace per thread. It counts as a handle of the model:
 *    free it before the model.
 *  - Statuses as the underlying dynamics: CDYN_ERR_INVALID_SIZE / CDYN_ERR_NULL_POINTER naming
 *    the argument (ld: "ld is 2, expected >= 3"), CDYN_ERR_NON_FINITE,
 *    CDYN_ERR_NOT_UNIT_QUATERNION, CDYN_ERR_WORKSPACE_MISMATCH (workspace of another model),
 *    CDYN_ERR_NOT_POSITIVE_DEFINITE (M or H not), CDYN_ERR_CONSTRAINT_FAILURE (cluster tree:
 *    state not closed or singular loop configuration). The message is in
 *    cdyn_derivative_workspace_last_error. Every argument is checked before any output is
 *    written; a failed call leaves the workspace usable. */

/** Opaque derivative workspace of one model (see above). */
typedef struct cdyn_derivative_workspace cdyn_derivative_workspace;

/** Creates a derivative workspace for `model` (allocates). CDYN_ERR_OUT_OF_MEMORY when memory
 *  cannot be had; *dws is NULL on failure (message in cdyn_last_error). */
CDYN_API cdyn_status cdyn_derivative_workspace_create(const cdyn_model* model,
                                                      cdyn_derivative_workspace** dws);
/** Frees a derivative workspace (NULL is accepted). */
CDYN_API cdyn_status cdyn_derivative_workspace_free(cdyn_derivative_workspace* dws);
/** Message of the last failed call on dws ("" after a success; a static message when dws is
 *  NULL or invalid). */
CDYN_API const char* cdyn_derivative_workspace_last_error(const cdyn_derivative_workspace* dws);

/** Tree inverse-dynamics derivatives at tau = rnea(q, v, a, fext) (spanning tree): dtau_dq
 *  (nv x nv, tangent columns), dtau_dv (nv x nv), optional dtau_da = M(q) (nv x nv), optional
 *  tau (nv). Inputs q (nq), v (nv) [rad/s, m/s], a (nv), fext (optional, 6 * nbodies). Units:
 *  N m (N) per rad (m) and per rad/s (m/s). A model's joint dynamics (MJCF armature A, springs,
 *  dampers tau_p) are included, as in cdyn_rnea: tau = rnea + A a - tau_p, dtau_da = M + A. */
CDYN_API cdyn_status cdyn_rnea_derivatives(const cdyn_model* model, cdyn_derivative_workspace* dws,
                                           const double* q, int nq, const double* v, int nv,
                                           const double* a, int na, const double* fext /*optional*/,
                                           int nfext, double* tau /*optional*/, int ntau,
                                           double* dtau_dq, double* dtau_dv,
                                           double* dtau_da /*optional*/, int ld);
/** Tree forward-dynamics derivatives at ddq = aba(q, v, tau, fext): ddq_dq, ddq_dv (nv x nv),
 *  optional Minv = d ddq / d tau = M(q)^-1 (nv x nv, both triangles), optional ddq (nv). With
 *  joint dynamics (MJCF armature A, springs, dampers) as cdyn_aba: Minv = (M + A)^-1. */
CDYN_API cdyn_status cdyn_aba_derivatives(const cdyn_model* model, cdyn_derivative_workspace* dws,
                                          const double* q, int nq, const double* v, int nv,
                                          const double* tau, int ntau,
                                          const double* fext /*optional*/, int nfext,
                                          double* ddq /*optional*/, int nddq, double* ddq_dq,
                                          double* ddq_dv, double* Minv /*optional*/, int ld);
/** M(q)^-1 (nv x nv, both triangles) of the spanning tree by the articulated-body recursion
 *  (not by inverting M); (M + A)^-1 for a model with armature A (MJCF). */
CDYN_API cdyn_status cdyn_minverse(const cdyn_model* model, cdyn_derivative_workspace* dws,
                                   const double* q, int nq, double* Minv, int ld);
/** Cluster-tree inverse-dynamics derivatives at tau = ce_rnea(q, v, ydd, fext) (as
 *  cdyn_ce_rnea: CLOSED spanning state q (nq), v (nv); ydd (ny)): dtau_dy, dtau_dydot (ny x ny,
 *  independent tangent columns), optional H = d tau / d ydd (ny x ny), optional tau (ny). The
 *  joint dynamics of an MJCF model (armature, springs, dampers) are included, as in
 *  cdyn_ce_rnea (H = G^T (M + A) G). */
CDYN_API cdyn_status cdyn_ce_rnea_derivatives(const cdyn_model* model,
                                              cdyn_derivative_workspace* dws, const double* q,
                                              int nq, const double* v, int nv, const double* ydd,
                                              int nydd, const double* fext /*optional*/, int nfext,
                                              double* tau /*optional*/, int ntau, double* dtau_dy,
                                              double* dtau_dydot, double* H /*optional*/, int ld);
/** Cluster-tree forward-dynamics derivatives at ydd = ce_aba(q, v, tau, fext) (as cdyn_ce_aba;
 *  tau: ny independent efforts): dydd_dy, dydd_dydot (ny x ny), optional Hinv = d ydd / d tau
 *  = H^-1 (ny x ny, both triangles), optional ydd (ny). Joint dynamics as cdyn_ce_aba. */
CDYN_API cdyn_status cdyn_ce_aba_derivatives(const cdyn_model* model,
                                             cdyn_derivative_workspace* dws, const double* q,
                                             int nq, const double* v, int nv, const double* tau,
                                             int ntau, const double* fext /*optional*/, int nfext,
                                             double* ydd /*optional*/, int nydd, double* dydd_dy,
                                             double* dydd_dydot, double* Hinv /*optional*/, int ld);
/** H(q)^-1 (ny x ny, both triangles) of the cluster tree at a CLOSED spanning configuration q
 *  (nq), by a recursion on the cluster tree (the cluster form of the articulated-body inverse,
 *  docs/derivatives.md eq. C11-C13), without forming or factoring H: equal to the inverse of
 *  cdyn_cluster_mass_matrix and to the Hinv of cdyn_ce_aba_derivatives (to rounding).
 *  With joint dynamics the armature A is included (H = G^T (M + A) G, as cdyn_ce_aba).
 *  Statuses as above, plus CDYN_ERR_NOT_POSITIVE_DEFINITE naming the cluster whose articulated
 *  inertia is singular. */
CDYN_API cdyn_status cdyn_cluster_minverse(const cdyn_model* model, cdyn_derivative_workspace* dws,
                                           const double* q, int nq, double* Hinv, int ld);
/** q1 (-) q0: the spanning velocity v (nv) with cdyn_integrate(q0, v, 1) == q1, the inverse of
 *  cdyn_integrate (body-frame logarithm of each joint: floating, spherical, planar; rotations
 *  of angle below pi). q0, q1: nq, unit quaternions. Compute function on an ordinary workspace
 *  (no allocation). */
CDYN_API cdyn_status cdyn_difference(const cdyn_model* model, cdyn_workspace* ws, const double* q0,
                                     int nq0, const double* q1, int nq1, double* v, int nv);

/* Batched derivatives: n states of the single-state function per call, on min(nws, n) threads,
 * one DISTINCT derivative workspace per thread (dws[0] on the calling thread), with the rules of
 * "Batched evaluation" above (stacked arrays and `layout`, bit-identical results, failures,
 * *failed_index); each state's matrix is stored as its n_m * n_m column-major elements (per-state
 * length n_m^2 with n_m = nv (tree) or ny (cluster tree); optional ones (NULL, 0)). The message
 * of a failure is in cdyn_derivative_workspace_last_error(dws[0]). No allocation with nws == 1
 * and CDYN_BATCH_ROW_MAJOR; more workspaces start threads, and CDYN_BATCH_COL_MAJOR allocates a
 * gather buffer per thread. No pool form. */

/** n x cdyn_rnea_derivatives: q (n x nq), v, a (n x nv), optional fext -> optional tau
 *  (n x nv), dtau_dq, dtau_dv, optional dtau_da (n x nv^2). */
CDYN_API cdyn_status cdyn_batch_rnea_derivatives(
    const cdyn_model* model, cdyn_derivative_workspace* const* dws, int nws, int n, int layout,
    const double* q, int nq, const double* v, int nv, const double* a, int na,
    const double* fext /*optional*/, int nfext, double* tau /*optional*/, int ntau, double* dtau_dq,
    int ndq, double* dtau_dv, int ndv, double* dtau_da /*optional*/, int nda,
    int* failed_index /*optional*/);
/** n x cdyn_aba_derivatives: q, v, tau, optional fext -> optional ddq, ddq_dq, ddq_dv, optional
 *  Minv (n x nv^2). */
CDYN_API cdyn_status cdyn_batch_aba_derivatives(
    const cdyn_model* model, cdyn_derivative_workspace* const* dws, int nws, int n, int layout,
    const double* q, int nq, const double* v, int nv, const double* tau, int ntau,
    const double* fext /*optional*/, int nfext, double* ddq /*optional*/, int nddq, double* ddq_dq,
    int ndq, double* ddq_dv, int ndv, double* Minv /*optional*/, int nminv,
    int* failed_index /*optional*/);
/** n x cdyn_ce_rnea_derivatives: closed q, v, ydd (n x ny), optional fext -> optional tau
 *  (n x ny), dtau_dy, dtau_dydot, optional H (n x ny^2). */
CDYN_API cdyn_status cdyn_batch_ce_rnea_derivatives(
    const cdyn_model* model, cdyn_derivative_workspace* const* dws, int nws, int n, int layout,
    const double* q, int nq, const double* v, int nv, const double* ydd, int nydd,
    const double* fext /*optional*/, int nfext, double* tau /*optional*/, int ntau, double* dtau_dy,
    int ndy, double* dtau_dydot, int ndydot, double* H /*optional*/, int nh,
    int* failed_index /*optional*/);
/** n x cdyn_ce_aba_derivatives: closed q, v, tau (n x ny), optional fext -> optional ydd
 *  (n x ny), dydd_dy, dydd_dydot, optional Hinv (n x ny^2). */
CDYN_API cdyn_status cdyn_batch_ce_aba_derivatives(
    const cdyn_model* model, cdyn_derivative_workspace* const* dws, int nws, int n, int layout,
    const double* q, int nq, const double* v, int nv, const double* tau, int ntau,
    const double* fext /*optional*/, int nfext, double* ydd /*optional*/, int nydd, double* dydd_dy,
    int ndy, double* dydd_dydot, int ndydot, double* Hinv /*optional*/, int nhinv,
    int* failed_index /*optional*/);

/** n x cdyn_minverse: q (n x nq) -> Minv (n x nv^2). */
CDYN_API cdyn_status cdyn_batch_minverse(const cdyn_model* model,
                                         cdyn_derivative_workspace* const* dws, int nws, int n,
                                         int layout, const double* q, int nq, double* Minv,
                                         int nminv, int* failed_index /*optional*/);
/** n x cdyn_cluster_minverse: closed q (n x nq) -> Hinv (n x ny^2). */
CDYN_API cdyn_status cdyn_batch_cluster_minverse(const cdyn_model* model,
                                                 cdyn_derivative_workspace* const* dws, int nws,
                                                 int n, int layout, const double* q, int nq,
                                                 double* Hinv, int nhinv,
                                                 int* failed_index /*optional*/);

/* ========================================================================================== */
/* Contacts: frictional contact and time stepping with the loops kept exact                   */
/* ========================================================================================== */
/* C++: include/clusterdyn/contact.hpp, docs/contact.md. A contact problem holds, for one model,
 * bilateral rows (welds, cut loops: copied from constraint sets) and point contacts: caller
 * contacts (a body point; normal, gap and friction set per step by the caller, who does the
 * collision detection) and ground feet (a sphere of radius r centred at a body point against the
 * problem's ground plane {x : n . x = offset}, default n = +z, offset 0). It is built once
 * (allocates) and read-only once a contact workspace exists.
 *
 * Velocity level (impulses), one step of length dt. Rows: the bilateral rows first (in the order
 * of the sets added, each set's constraints in order), then per contact in its contact frame
 * (t1, t2, n), n the world normal pointing OUT of the obstacle, t1 = n x e_k normalized (e_k the
 * world axis least aligned with n), t2 = n x t1: 3 rows (t1, t2, n) for a point contact, 6 rows
 * (angular about t1, t2, n; then linear along t1, t2, n) for a patch contact (torsional or
 * rolling friction, cdyn_contact_problem_add_patch_foot / _add_patch_point). m = bilateral rows
 * + 3 per point contact + 6 per patch contact (cdyn_contact_problem_sizes). lambda (m): the
 * impulses over the step in N s (divide by dt for the mean force; torque impulses in N m s): for
 * a contact, the impulse ON the robot's body at the contact point, in (t1, t2, n) components,
 * lambda_n >= 0, |lambda_t| <= mu lambda_n; a patch contact's (tau_r1, tau_r2, tau_n, f_t1, f_t2,
 * f_n) lie in the elliptic cone |(tau_r / mu_rolling, tau_n / mu_torsion, f_t / mu)| <= f_n
 * (MuJoCo's condim 6; a torsional contact has tau_r = 0: condim 4; a zero coefficient: that
 * component is 0, frictionless); for bilateral rows, as the multipliers of the section
 * "Constraints" times dt. A contact whose gap exceeds settings.activation_distance is inactive for
 * the step (its impulses are 0). The impulses solve the De Saxce-corrected Coulomb problem on the
 * Delassus matrix of the cluster tree (PV-OSIMr) by ADMM (Carpentier et al. 2024) or projected
 * Gauss-Seidel; the loops of the model stay embedded (exact): the step integrates the independent
 * coordinates (semi-implicit Euler) and re-closes the loops, so the returned (q, v) is closed to
 * 1e-12.
 *
 * Units SI; q (nq), v (nv) the closed spanning state (see "Cluster tree"), tau (ny) the
 * efforts on the independent coordinates; positions of points in body coordinates (m); gaps in
 * m (negative: penetration). A failed call writes no output and leaves the workspace usable (its
 * warm start reset to zero); messages in the problem (building calls) or the contact workspace
 * (compute calls); the compute calls do not allocate. A contact workspace serves one thread at a
 * time; the problem may be shared by threads once complete. */

/** Contact problem of one model (bilateral rows and point contacts). */
typedef struct cdyn_contact_problem cdyn_contact_problem;
/** Per-thread workspace of one contact problem (also holds the warm start and the caller
 *  contacts' normal, gap and mu). */
typedef struct cdyn_contact_workspace cdyn_contact_workspace;

/** The contact solver. */
typedef enum cdyn_contact_solver {
  CDYN_CONTACT_ADMM = 0, /**< ADMM on the De Saxce problem (default) */
  CDYN_CONTACT_PGS = 1   /**< projected Gauss-Seidel (the baseline) */
} cdyn_contact_solver;

/** Settings of a contact solve / step (C++ StepSettings). Fill with
 *  cdyn_contact_settings_default, then change fields; every field is checked per call
 *  (CDYN_ERR_NON_FINITE / CDYN_ERR_INVALID_ARGUMENT naming the field). */
typedef struct cdyn_contact_settings {
  double dt;                  /**< step (s, > 0; default 1e-3) */
  double beta;                /**< position feedback in [0, 1] (default 0.2): a penetrating
                                   contact asks for n . v+ >= -beta gap / dt, a bilateral row for
                                   c+ = -beta phi / dt; 0: no push-out (energy never grows) */
  double max_push_velocity;   /**< cap of the push-out velocity (m/s, >= 0; default 0.2) */
  double activation_distance; /**< contacts with gap > this are inactive (m, >= 0; 0.05) */
  double tolerance;           /**< on the three residuals of the report (> 0; default 1e-10) */
  double rho;                 /**< ADMM starting penalty relative to the mean diagonal of the
                                   Delassus matrix (> 0; default 1) */
  int solver;                 /**< a cdyn_contact_solver (default CDYN_CONTACT_ADMM) */
  int max_iterations;         /**< solver iterations (>= 0; default 1000) */
  int warm_start;             /**< nonzero (default 1): start from the workspace's impulses of
                                   its last solve or step (cdyn_contact_workspace_reset: zero) */
  int polish_after;           /**< ADMM: Newton polish on the contact modes of the iterate every
                                   polish_after iterations without convergence and at the last
                                   (>= 0; default 100; 0: none) */
  int active_set_steps;       /**< ADMM: at most this many Newton steps on the contact modes of
                                   the warm start before ADMM, taken when the residuals meet the
                                   tolerance (>= 0; default 2; 0: plain ADMM) */
} cdyn_contact_settings;

/** Outcome of a contact solve / step. The residuals are those of the returned impulses, max
 *  norms: status CDYN_OK means all three are <= settings.tolerance. */
typedef struct cdyn_contact_report {
  int status;             /**< the call's cdyn_status */
  int iterations;         /**< solver iterations */
  int converged;          /**< 1 when the residuals are <= tolerance */
  int active_contacts;    /**< contacts with gap <= activation_distance (point and patch) */
  double primal_residual; /**< primal feasibility: distance of the De Saxce velocity to the dual
                               cone, m/s (a contact's normal velocity below its target) */
  double dual_residual;   /**< dual feasibility: distance of lambda to the friction cones, N s */
  double complementarity; /**< max over blocks |lambda_b . sigma_b| / |lambda_b|_inf, m/s */
  double rho;             /**< ADMM: the final penalty (0 for PGS, and when the active-set
                               solve returned without an ADMM iteration) */
} cdyn_contact_report;

/** The default settings (dt 1e-3, beta 0.2, max_push_velocity 0.2, activation_distance 0.05,
 *  tolerance 1e-10, rho 1, ADMM, 1000 iterations, warm start on, polish_after 100,
 *  active_set_steps 2). */
CDYN_API cdyn_status cdyn_contact_settings_default(cdyn_contact_settings* settings);
/** Creates an empty contact problem for `model` (allocates; the model cannot be freed before
 *  it). */
CDYN_API cdyn_status cdyn_contact_problem_create(const cdyn_model* model,
                                                 cdyn_contact_problem** problem);
/** Frees a problem. NULL is accepted. CDYN_ERR_INVALID_ARGUMENT, freeing nothing, while
 *  contact workspaces of the problem exist. */
CDYN_API cdyn_status cdyn_contact_problem_free(cdyn_contact_problem* problem);
/** Message of the last failed building call on the problem ("" after a success). */
CDYN_API const char* cdyn_contact_problem_last_error(const cdyn_contact_problem* problem);
/** Appends every constraint of `set` (a constraint set of the same model, else
 *  CDYN_ERR_WORKSPACE_MISMATCH) as bilateral rows (copied: the set may change or be freed
 *  afterwards). Their rows come after the bilateral rows already added and before every contact
 *  row; contact indices do not change. Names must stay unique (CDYN_ERR_INVALID_ARGUMENT). */
CDYN_API cdyn_status cdyn_contact_problem_add_bilateral(cdyn_contact_problem* problem,
                                                        const cdyn_constraint_set* set);
/** Sets the ground plane {x : normal . x = offset} (world): normal (nnormal = 3) non-zero and
 *  finite (normalized here), pointing out of the ground; offset in m. */
CDYN_API cdyn_status cdyn_contact_problem_set_ground(cdyn_contact_problem* problem,
                                                     const double* normal, int nnormal,
                                                     double offset);
/** Adds a ground foot: a sphere of radius >= 0 (m; 0: a point) centred at centre (ncentre = 3,
 *  body coordinates, m) of body `body` (0 <= body < nbodies, else CDYN_ERR_INVALID_INDEX),
 *  friction coefficient mu >= 0, against the ground plane. gap = n . c - offset - radius (c the
 *  centre in the world); the force acts at the centre (rolling about the touching point is not
 *  modelled; exact for radius 0). name: non-empty, unique among the problem's rows. *index
 *  (optional): the contact index. */
CDYN_API cdyn_status cdyn_contact_problem_add_foot(cdyn_contact_problem* problem, const char* name,
                                                   int body, const double* centre, int ncentre,
                                                   double radius, double mu,
                                                   int* index /*optional*/);
/** Adds a caller contact at point (npoint = 3, body coordinates of `body`, m): its normal, gap
 *  and mu are set per workspace by cdyn_contact_set_caller (default: normal +z, gap 0, mu 0).
 *  name and *index as cdyn_contact_problem_add_foot. */
CDYN_API cdyn_status cdyn_contact_problem_add_point(cdyn_contact_problem* problem, const char* name,
                                                    int body, const double* point, int npoint,
                                                    int* index /*optional*/);

/** The cone of a contact (C++ ConeType): a point contact (3 rows, Coulomb), a patch contact
 *  with torsional friction (6 rows, its 2 rolling rows carry no torque) or with torsional and
 *  rolling friction (6 rows). */
typedef enum cdyn_contact_cone {
  CDYN_CONE_POINT = 0,     /**< force only, |f_t| <= mu f_n */
  CDYN_CONE_TORSIONAL = 3, /**< |(f_t / mu, tau_n / mu_torsion)| <= f_n */
  CDYN_CONE_ROLLING = 4    /**< |(f_t / mu, tau_n / mu_torsion, tau_r / mu_rolling)| <= f_n */
} cdyn_contact_cone;

/** cdyn_contact_problem_add_foot with torsional friction mu_torsion >= 0 (m: the torque about
 *  the normal it resists per newton of normal force, a flat patch) and rolling friction
 *  mu_rolling >= 0 (m: rolling resistance of the sphere): a CDYN_CONE_ROLLING contact when
 *  mu_rolling > 0, else CDYN_CONE_TORSIONAL when mu_torsion > 0, else a point foot (exactly
 *  cdyn_contact_problem_add_foot). A patch foot's rows are the body's velocity at the sphere's
 *  touching point (centre - radius n) and its angular velocity: a sphere rolls on the plane
 *  without slipping, and its impulse (force and torque) acts at the touching point. Refused as
 *  cdyn_contact_problem_add_foot, and CDYN_ERR_NON_FINITE / CDYN_ERR_INVALID_ARGUMENT naming
 *  mu_torsion / mu_rolling. */
CDYN_API cdyn_status cdyn_contact_problem_add_patch_foot(
    cdyn_contact_problem* problem, const char* name, int body, const double* centre, int ncentre,
    double radius, double mu, double mu_torsion, double mu_rolling, int* index /*optional*/);
/** cdyn_contact_problem_add_point with a cone (a cdyn_contact_cone; CDYN_CONE_POINT: exactly
 *  cdyn_contact_problem_add_point, else CDYN_ERR_INVALID_ARGUMENT for a value not listed). A
 *  patch caller contact's rows are the velocity of the body point and the body's angular
 *  velocity; its mu_torsion and mu_rolling come from cdyn_contact_set_caller_patch (default 0:
 *  no torque). */
CDYN_API cdyn_status cdyn_contact_problem_add_patch_point(cdyn_contact_problem* problem,
                                                          const char* name, int body,
                                                          const double* point, int npoint, int cone,
                                                          int* index /*optional*/);
/** Sizes (each output optional): the number of contacts, of bilateral rows, and of rows m. */
CDYN_API cdyn_status cdyn_contact_problem_sizes(const cdyn_contact_problem* problem,
                                                int* ncontacts /*optional*/,
                                                int* nbilateral_rows /*optional*/,
                                                int* m /*optional*/);

/** Creates a contact workspace (allocates; the problem is read-only from now on). */
CDYN_API cdyn_status cdyn_contact_workspace_create(const cdyn_contact_problem* problem,
                                                   cdyn_contact_workspace** workspace);
/** Frees a contact workspace. NULL is accepted. */
CDYN_API cdyn_status cdyn_contact_workspace_free(cdyn_contact_workspace* workspace);
/** Message of the last failed compute call on the workspace ("" after a success). */
CDYN_API const char* cdyn_contact_workspace_last_error(const cdyn_contact_workspace* workspace);
/** Zeroes the warm start (the impulses of the last solve or step). */
CDYN_API cdyn_status cdyn_contact_workspace_reset(const cdyn_contact_problem* problem,
                                                  cdyn_contact_workspace* ws);
/** Sets the caller contacts' data in ws, used by every later solve and step on ws: normal
 *  (nnormal = 3 ncontacts, contact i at 3i..3i+2, world, any non-zero length, pointing out of
 *  the obstacle), gap (ngap = ncontacts, m, negative: penetration), mu (nmu = ncontacts, >= 0).
 *  Entries of ground feet are ignored (the ground gives theirs). All entries are checked before
 *  any is stored. */
CDYN_API cdyn_status cdyn_contact_set_caller(const cdyn_contact_problem* problem,
                                             cdyn_contact_workspace* ws, const double* normal,
                                             int nnormal, const double* gap, int ngap,
                                             const double* mu, int nmu);
/** Sets the caller contacts' torsional and rolling friction coefficients in ws (m, >= 0, each
 *  array of length ncontacts; used by the patch caller contacts, ignored for the others and for
 *  ground feet), used by every later solve, step and rollout on ws (a rollout copies ws[0]'s to
 *  its other workspaces). All entries are checked before any is stored. */
CDYN_API cdyn_status cdyn_contact_set_caller_patch(const cdyn_contact_problem* problem,
                                                   cdyn_contact_workspace* ws,
                                                   const double* mu_torsion, int nmu_torsion,
                                                   const double* mu_rolling, int nmu_rolling);
/** The contact frames and gaps of the last solve or step on ws (every output optional, (NULL, 0)
 *  not written): R (nR = 9 ncontacts; contact i: the 3 x 3 rotation [t1 t2 n] at 9i, column-
 *  major, world axes), gap (ngap = ncontacts, m), velocity (nvelocity = m: the constraint
 *  velocities after the step J y_dot+, contact rows in (t1, t2, n), m/s; after
 *  cdyn_contact_solve, which takes no step, J y_dot_free + G lambda, the same to rounding). */
CDYN_API cdyn_status cdyn_contact_frames(const cdyn_contact_problem* problem,
                                         cdyn_contact_workspace* ws, double* R /*optional*/, int nR,
                                         double* gap /*optional*/, int ngap,
                                         double* velocity /*optional*/, int nvelocity);
/** The impulses of one step at the closed state q (nq), v (nv) with efforts tau (ny), without
 *  taking the step: lambda (nlambda = m, N s, see the section's layout), report (optional).
 *  settings: NULL for the defaults. CDYN_ERR_NOT_CONVERGED: the solver stopped above the
 *  tolerance; lambda holds its last iterate (finite, inside the cones) and the report its
 *  residuals. */
CDYN_API cdyn_status cdyn_contact_solve(const cdyn_contact_problem* problem,
                                        cdyn_contact_workspace* ws, const double* q, int nq,
                                        const double* v, int nv, const double* tau, int ntau,
                                        const cdyn_contact_settings* settings /*optional*/,
                                        double* lambda, int nlambda,
                                        cdyn_contact_report* report /*optional*/);
/** One step (C++ contactStep): from the closed state q (nq), v (nv) with efforts tau (ny) held
 *  over the step, the next closed state qout (nq), vout (nv) (qout may alias q, vout v), the
 *  impulses lambda (optional, nlambda = m) and the report (optional). y_dot+ = y_dot + dt H^-1
 *  (tau - C) + H^-1 J^T lambda, y+ = y (+) dt y_dot+, then the loop closure (continuing q's
 *  assembly branch) and v = G(q+) y_dot+. CDYN_ERR_NOT_CONVERGED: the step was still taken with
 *  the solver's last iterate (outputs written). Other errors write no output:
 *  CDYN_ERR_INVALID_SIZE / _NULL_POINTER / _NON_FINITE / _INVALID_ARGUMENT naming the argument,
 *  CDYN_ERR_CONSTRAINT_FAILURE (the loop closure), CDYN_ERR_NOT_UNIT_QUATERNION. */
CDYN_API cdyn_status cdyn_contact_step(const cdyn_contact_problem* problem,
                                       cdyn_contact_workspace* ws, const double* q, int nq,
                                       const double* v, int nv, const double* tau, int ntau,
                                       const cdyn_contact_settings* settings /*optional*/,
                                       double* qout, int nqout, double* vout, int nvout,
                                       double* lambda /*optional*/, int nlambda,
                                       cdyn_contact_report* report /*optional*/);

/* Batched rollouts: n states x nsteps steps of cdyn_contact_step per call, on threads. State i
 * starts at (q0[i], v0[i]) from a cold start (cdyn_contact_workspace_reset) and takes nsteps
 * steps with efforts tau[i][t]; its trajectory is BIT-IDENTICAL to a reset followed by nsteps
 * calls of cdyn_contact_step with the same settings (tested). Layout (row-major, state outermost;
 * the lengths are per state and step, as in cdyn_contact_step): q0 (n x nq), v0 (n x nv), tau
 * (n x nsteps x ny: entry [i][t][k] at (i nsteps + t) ny + k), q (n x nsteps x nq: the state after
 * step t), v (n x nsteps x nv), lambda (optional: (NULL, 0) or n x nsteps x m), reports (NULL or
 * n x nsteps, at i nsteps + t). Caller contacts: every state uses the normal, gap and mu of ws[0]
 * (cdyn_contact_set_caller), copied to the other workspaces. ws: nws DISTINCT contact workspaces
 * of the problem (cdyn_batch_*: min(nws, n) threads, the calling thread with ws[0]; cdyn_pool_*:
 * exactly the pool's nthreads, the pool of the problem's model). Every argument is checked
 * before any state runs (messages in ws[0] or the pool). A step that stops above the tolerance
 * is taken and the rollout goes on. Return value: the status of the lowest state that failed
 * (*failed_index = it; the message in ws[0] names its step; its outputs after the failed step,
 * and those of later states, unspecified), else CDYN_ERR_NOT_CONVERGED with *failed_index the
 * lowest state with a step that did not converge (every output written), else CDYN_OK. No
 * allocation per step: cdyn_batch_contact_rollout with nws == 1 and cdyn_pool_contact_rollout
 * do not allocate. */

/** n rollouts of nsteps steps on threads started by the call, one per contact workspace. */
CDYN_API cdyn_status cdyn_batch_contact_rollout(
    const cdyn_contact_problem* problem, cdyn_contact_workspace* const* ws, int nws, int n,
    int nsteps, const cdyn_contact_settings* settings /*optional*/, const double* q0, int nq,
    const double* v0, int nv, const double* tau, int ntau, double* q, int nqout, double* v,
    int nvout, double* lambda /*optional*/, int nlambda,
    cdyn_contact_report* reports /*optional array*/, int* failed_index /*optional*/);
/** cdyn_batch_contact_rollout on the pool's threads with the caller's contact workspaces
 *  ws[0..nws-1], nws == the pool's nthreads (no allocation). */
CDYN_API cdyn_status cdyn_pool_contact_rollout(
    const cdyn_contact_problem* problem, cdyn_pool* pool, cdyn_contact_workspace* const* ws,
    int nws, int n, int nsteps, const cdyn_contact_settings* settings /*optional*/,
    const double* q0, int nq, const double* v0, int nv, const double* tau, int ntau, double* q,
    int nqout, double* v, int nvout, double* lambda /*optional*/, int nlambda,
    cdyn_contact_report* reports /*optional array*/, int* failed_index /*optional*/);

/* ========================================================================================== */
/* Constrained-dynamics derivatives (constrained derivative workspaces; compute function)       */
/* ========================================================================================== */
/* C++: include/clusterdyn/constrained_derivatives.hpp; docs/derivatives.md (equations K1-K9).
 * The counterpart of Pinocchio's computeConstraintDynamicsDerivatives (Carpentier & Mansard
 * 2018) in the independent coordinates of the cluster tree: the constrained dynamics of a
 * constraint set (contacts, welds, cut loops; section "Constraints")
 *     H ydd + C = tau + J^T lambda (+ external forces),   J ydd + gamma = k
 * solved exactly (dense Schur complement on the Delassus matrix J H^-1 J^T, no proximal
 * iterations), and the derivatives of ydd and lambda with respect to y, ydot and tau.
 *
 * Conventions: those of the section "Derivatives" (cluster tree). q (nq), v (nv) a CLOSED
 * spanning state; tau (ny) the independent efforts; column k of d f / d y is the derivative
 * along the independent tangent e_k (floating base: body-frame twist; dependent joints follow,
 * dq = G dy), ydot and tau held; fext (optional, 6 x nbodies, forces TO the bodies in body
 * coordinates, (NULL, 0) absent) held fixed in the body frames. lambda: the multipliers of the
 * section "Constraints" (J^T lambda the generalized force ON the robot). Matrices column-major:
 * the ny x ny ones (dydd_dy, dydd_dydot, dydd_dtau) with leading dimension ld_y >= ny, the
 * m x ny ones (dlambda_dy, dlambda_dydot, dlambda_dtau) with ld_m >= m (m: the set's rows).
 *
 * Rank-deficient sets (redundant rows, e.g. a planar loop cut into 5 revolute rows): the
 * Delassus matrix is pseudo-inverted (eigenvalues <= rank_tolerance * the largest dropped);
 * ydd and its derivatives stay unique and exact, lambda is the MINIMUM-NORM multiplier and
 * d lambda the minimum-norm solution of the differentiated system (only J^T lambda is unique);
 * *rank < m tells. Statuses: CDYN_ERR_INVALID_SIZE / CDYN_ERR_NON_FINITE / CDYN_ERR_NULL_POINTER
 * naming the argument, CDYN_ERR_NOT_UNIT_QUATERNION, CDYN_ERR_WORKSPACE_MISMATCH (cws made for
 * another set), CDYN_ERR_INVALID_ARGUMENT (rank_tolerance), CDYN_ERR_CONSTRAINT_FAILURE
 * (state not closed, singular loop configuration, or rows no ydd meets: the residual in the
 * message), CDYN_ERR_NOT_POSITIVE_DEFINITE (H). A model's joint dynamics (MJCF armature,
 * springs, dampers) are part of the dynamics and of its derivatives. CDYN_OK means the
 * row residual |J ydd + gamma - k| and the dynamics residual are within 1e-9 (relative, see
 * ConstrainedDerivativeSettings). A failed call leaves the outputs unspecified and the
 * workspace usable; the compute call does not allocate. One workspace per thread; while it
 * exists the set is read-only and cannot be freed. */

/** Workspace of cdyn_constrained_dynamics_derivatives for one constraint set (about
 *  (6 ny + 4 m) ny doubles and an ordinary workspace of the set's model; allocates). */
typedef struct cdyn_constrained_derivative_workspace cdyn_constrained_derivative_workspace;

/** Creates the constrained derivative workspace of set (*cws = NULL on failure). */
CDYN_API cdyn_status cdyn_constrained_derivative_workspace_create(
    const cdyn_constraint_set* set, cdyn_constrained_derivative_workspace** cws);
/** Frees a constrained derivative workspace (NULL is accepted). */
CDYN_API cdyn_status
cdyn_constrained_derivative_workspace_free(cdyn_constrained_derivative_workspace* cws);
/** Message of the last failed call on cws ("" after a success; a static message when cws is
 *  NULL or invalid). */
CDYN_API const char* cdyn_constrained_derivative_workspace_last_error(
    const cdyn_constrained_derivative_workspace* cws);

/** The constrained dynamics (ydd, lambda) of set at the closed state (q, v) with efforts tau and
 *  optional fext, and their derivatives: dydd_dy, dydd_dydot (ny x ny, required), optional
 *  dydd_dtau (ny x ny, = H^-1 - H^-1 J^T D^+ J H^-1), optional dlambda_dy, dlambda_dydot,
 *  dlambda_dtau (m x ny; NULL: not written), optional ydd (ny), lambda (m) ((NULL, 0): not
 *  written), optional *rank (rank of the Delassus matrix, m when the rows are independent).
 *  rank_tolerance: 0 for the default 1e-10, else in (0, 1). Units: ydd in rad/s^2 (m/s^2) per
 *  rad (m), per rad/s (m/s) and per N m (N); lambda in N (N m) likewise. */
CDYN_API cdyn_status cdyn_constrained_dynamics_derivatives(
    const cdyn_constraint_set* set, cdyn_constrained_derivative_workspace* cws, const double* q,
    int nq, const double* v, int nv, const double* tau, int ntau, const double* fext /*optional*/,
    int nfext, double rank_tolerance, double* ydd /*optional*/, int nydd,
    double* lambda /*optional*/, int nlambda, double* dydd_dy, double* dydd_dydot,
    double* dydd_dtau /*optional*/, int ld_y, double* dlambda_dy /*optional*/,
    double* dlambda_dydot /*optional*/, double* dlambda_dtau /*optional*/, int ld_m,
    int* rank /*optional*/);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CLUSTERDYN_H_ */
