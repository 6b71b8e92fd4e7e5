! clusterdyn C API for Fortran 2018 (ISO_C_BINDING). Every function of clusterdyn.h has a
! bind(C) interface here with the same name and argument order; see clusterdyn.h for the full
! documentation (units, frames, layouts, ownership, thread safety).
!
! Mapping of the C types:
!   cdyn_model*, cdyn_workspace*        type(c_ptr), value        (handles)
!   cdyn_model**, cdyn_workspace**      type(c_ptr), intent(out)  (created handles)
!   int / unsigned int                  integer(c_int)
!   size_t                              integer(c_size_t)
!   const char* (input string)          character(kind=c_char) :: s(*); pass trim(s)//c_null_char
!   const char** (returned name)        type(c_ptr), intent(out); convert with c_f_pointer and
!                                       stop at c_null_char (names live as long as the model)
!   double arrays                       real(c_double) :: x(*); matrices column-major, so a
!                                       Fortran array M(ldm, nv) is passed as M with ldm
!   optional pointers (NULL in C)       OPTIONAL dummy arguments: omit the argument and pass 0
!                                       as its length (gravity, err, v/a of forward kinematics,
!                                       fext, the optional qdd / q / v / q_guess / g outputs of
!                                       the cluster functions, text buffers, and the outputs of
!                                       cdyn_model_joint_coordinates, cdyn_model_cluster_info,
!                                       cdyn_model_cluster_coordinates, cdyn_last_loop_closure)
!   char* text buffer                   character(kind=c_char) :: buf(*) with len = size(buf)
! Indices are 0-based as in C. The module holds interfaces and constants only: programs link
! with -lclusterdyn and need no object file of this module.
module clusterdyn
  use, intrinsic :: iso_c_binding, only: c_int, c_double, c_size_t, c_char, c_ptr
  implicit none
  private :: c_int, c_double, c_size_t, c_char, c_ptr

  ! Version of the header this module mirrors.
  integer(c_int), parameter, public :: CDYN_VERSION_MAJOR = 0
  integer(c_int), parameter, public :: CDYN_VERSION_MINOR = 2
  integer(c_int), parameter, public :: CDYN_VERSION_PATCH = 0
  integer(c_int), parameter, public :: CDYN_VERSION_NUMBER = 200
  integer(c_int), parameter, public :: CDYN_ABI_VERSION = 0

  ! cdyn_status
  integer(c_int), parameter, public :: CDYN_OK = 0
  integer(c_int), parameter, public :: CDYN_ERR_INVALID_SIZE = 1
  integer(c_int), parameter, public :: CDYN_ERR_NON_FINITE = 2
  integer(c_int), parameter, public :: CDYN_ERR_NOT_UNIT_QUATERNION = 3
  integer(c_int), parameter, public :: CDYN_ERR_NOT_POSITIVE_DEFINITE = 4
  integer(c_int), parameter, public :: CDYN_ERR_INVALID_INDEX = 5
  integer(c_int), parameter, public :: CDYN_ERR_CONSTRAINT_FAILURE = 6
  integer(c_int), parameter, public :: CDYN_ERR_WORKSPACE_MISMATCH = 7
  integer(c_int), parameter, public :: CDYN_ERR_INVALID_ARGUMENT = 8
  integer(c_int), parameter, public :: CDYN_ERR_NOT_CONVERGED = 9
  integer(c_int), parameter, public :: CDYN_ERR_NULL_POINTER = 100
  integer(c_int), parameter, public :: CDYN_ERR_VERSION = 101
  integer(c_int), parameter, public :: CDYN_ERR_PARSE = 102
  integer(c_int), parameter, public :: CDYN_ERR_INTERNAL = 103
  integer(c_int), parameter, public :: CDYN_ERR_NOT_FOUND = 104
  integer(c_int), parameter, public :: CDYN_ERR_OUT_OF_MEMORY = 105

  ! cdyn_joint_type
  integer(c_int), parameter, public :: CDYN_JOINT_REVOLUTE = 0
  integer(c_int), parameter, public :: CDYN_JOINT_PRISMATIC = 1
  integer(c_int), parameter, public :: CDYN_JOINT_SPHERICAL = 2
  integer(c_int), parameter, public :: CDYN_JOINT_PLANAR = 3
  integer(c_int), parameter, public :: CDYN_JOINT_FLOATING = 4
  integer(c_int), parameter, public :: CDYN_JOINT_FIXED = 5

  ! cdyn_reference_frame
  integer(c_int), parameter, public :: CDYN_LOCAL = 0
  integer(c_int), parameter, public :: CDYN_WORLD = 1
  integer(c_int), parameter, public :: CDYN_LOCAL_WORLD_ALIGNED = 2

  ! load flags
  integer(c_int), parameter, public :: CDYN_LOAD_FLOATING_BASE = 1
  integer(c_int), parameter, public :: CDYN_LOAD_IGNORE_CONSTRAINTS = 2
  integer(c_int), parameter, public :: CDYN_LOAD_CUT_LOOPS = 4
  integer(c_int), parameter, public :: CDYN_LOAD_NO_JOINT_DYNAMICS = 8

  ! cdyn_cluster_kind
  integer(c_int), parameter, public :: CDYN_CLUSTER_UNCONSTRAINED = 0
  integer(c_int), parameter, public :: CDYN_CLUSTER_EXPLICIT = 1
  integer(c_int), parameter, public :: CDYN_CLUSTER_IMPLICIT = 2

  ! cdyn_log_level
  integer(c_int), parameter, public :: CDYN_LOG_DEBUG = 0
  integer(c_int), parameter, public :: CDYN_LOG_INFO = 1
  integer(c_int), parameter, public :: CDYN_LOG_WARN = 2
  integer(c_int), parameter, public :: CDYN_LOG_ERROR = 3
  integer(c_int), parameter, public :: CDYN_LOG_OFF = 4

  ! cdyn_constraint_type
  integer(c_int), parameter, public :: CDYN_CONSTRAINT_POINT = 0
  integer(c_int), parameter, public :: CDYN_CONSTRAINT_WELD = 1
  integer(c_int), parameter, public :: CDYN_CONSTRAINT_REVOLUTE = 2
  integer(c_int), parameter, public :: CDYN_CONSTRAINT_PLANAR = 3
  integer(c_int), parameter, public :: CDYN_CONSTRAINT_PRISMATIC = 4
  ! Solvers of the batched constrained dynamics (cdyn_constrained_solver).
  integer(c_int), parameter, public :: CDYN_SOLVER_CONSTRAINED_ABA = 0
  integer(c_int), parameter, public :: CDYN_SOLVER_PROX_PV = 1
  integer(c_int), parameter, public :: CDYN_SOLVER_DENSE = 2

  ! Settings and outcome of the proximal solves (cdyn_proximal_settings, cdyn_proximal_result).
  type, bind(C), public :: cdyn_proximal_settings
    real(c_double) :: mu
    real(c_double) :: tolerance
    integer(c_int) :: max_iterations
    integer(c_int) :: warm_start
  end type

  type, bind(C), public :: cdyn_proximal_result
    integer(c_int) :: status
    integer(c_int) :: iterations
    real(c_double) :: residual
    real(c_double) :: dual_step
    integer(c_int) :: converged
  end type

  interface

    ! ---- version and errors -----------------------------------------------------------------

    integer(c_int) function cdyn_version() bind(C, name="cdyn_version")
      import :: c_int
    end function

    type(c_ptr) function cdyn_version_string() bind(C, name="cdyn_version_string")
      import :: c_ptr
    end function

    integer(c_int) function cdyn_check_version(abi_version) bind(C, name="cdyn_check_version")
      import :: c_int
      integer(c_int), value :: abi_version
    end function

    type(c_ptr) function cdyn_status_string(status) bind(C, name="cdyn_status_string")
      import :: c_int, c_ptr
      integer(c_int), value :: status
    end function

    type(c_ptr) function cdyn_last_error() bind(C, name="cdyn_last_error")
      import :: c_ptr
    end function

    ! ---- model loading ------------------------------------------------------------------------

    integer(c_int) function cdyn_model_load(abi_version, path, flags, gravity, model, err, &
                                            errlen) bind(C, name="cdyn_model_load")
      import :: c_int, c_char, c_double, c_ptr, c_size_t
      integer(c_int), value :: abi_version
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: flags
      real(c_double), intent(in), optional :: gravity(3)
      type(c_ptr), intent(out) :: model
      character(kind=c_char), intent(out), optional :: err(*)
      integer(c_size_t), value :: errlen
    end function

    integer(c_int) function cdyn_model_load_string(abi_version, xml, xml_len, flags, gravity, &
                                                   model, err, errlen) &
        bind(C, name="cdyn_model_load_string")
      import :: c_int, c_char, c_double, c_ptr, c_size_t
      integer(c_int), value :: abi_version
      character(kind=c_char), intent(in) :: xml(*)
      integer(c_size_t), value :: xml_len
      integer(c_int), value :: flags
      real(c_double), intent(in), optional :: gravity(3)
      type(c_ptr), intent(out) :: model
      character(kind=c_char), intent(out), optional :: err(*)
      integer(c_size_t), value :: errlen
    end function

    integer(c_int) function cdyn_model_free(model) bind(C, name="cdyn_model_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
    end function

    ! ---- model queries ------------------------------------------------------------------------

    integer(c_int) function cdyn_model_name(model, name) bind(C, name="cdyn_model_name")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(out) :: name
    end function

    integer(c_int) function cdyn_model_nbodies(model, nbodies) bind(C, name="cdyn_model_nbodies")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out) :: nbodies
    end function

    integer(c_int) function cdyn_model_nq(model, nq) bind(C, name="cdyn_model_nq")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out) :: nq
    end function

    integer(c_int) function cdyn_model_nv(model, nv) bind(C, name="cdyn_model_nv")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out) :: nv
    end function

    integer(c_int) function cdyn_model_nframes(model, nframes) bind(C, name="cdyn_model_nframes")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out) :: nframes
    end function

    integer(c_int) function cdyn_model_total_mass(model, mass) &
        bind(C, name="cdyn_model_total_mass")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      real(c_double), intent(out) :: mass
    end function

    integer(c_int) function cdyn_model_gravity(model, gravity) bind(C, name="cdyn_model_gravity")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      real(c_double), intent(out) :: gravity(3)
    end function

    integer(c_int) function cdyn_model_body_name(model, body, name) &
        bind(C, name="cdyn_model_body_name")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: body
      type(c_ptr), intent(out) :: name
    end function

    integer(c_int) function cdyn_model_body_index(model, name, body) &
        bind(C, name="cdyn_model_body_index")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: model
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: body
    end function

    integer(c_int) function cdyn_model_body_parent(model, body, parent) &
        bind(C, name="cdyn_model_body_parent")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: body
      integer(c_int), intent(out) :: parent
    end function

    integer(c_int) function cdyn_model_joint_name(model, joint, name) &
        bind(C, name="cdyn_model_joint_name")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: joint
      type(c_ptr), intent(out) :: name
    end function

    integer(c_int) function cdyn_model_joint_index(model, name, joint) &
        bind(C, name="cdyn_model_joint_index")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: model
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: joint
    end function

    integer(c_int) function cdyn_model_joint_type(model, joint, jtype) &
        bind(C, name="cdyn_model_joint_type")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: joint
      integer(c_int), intent(out) :: jtype
    end function

    integer(c_int) function cdyn_model_joint_coordinates(model, joint, idx_q, nq, idx_v, nv) &
        bind(C, name="cdyn_model_joint_coordinates")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: joint
      integer(c_int), intent(out), optional :: idx_q, nq, idx_v, nv
    end function

    integer(c_int) function cdyn_model_position_name(model, i, name) &
        bind(C, name="cdyn_model_position_name")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: i
      type(c_ptr), intent(out) :: name
    end function

    integer(c_int) function cdyn_model_velocity_name(model, i, name) &
        bind(C, name="cdyn_model_velocity_name")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: i
      type(c_ptr), intent(out) :: name
    end function

    integer(c_int) function cdyn_model_position_index(model, name, i) &
        bind(C, name="cdyn_model_position_index")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: model
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: i
    end function

    integer(c_int) function cdyn_model_velocity_index(model, name, i) &
        bind(C, name="cdyn_model_velocity_index")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: model
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: i
    end function

    integer(c_int) function cdyn_model_position_limits(model, lower, upper, n) &
        bind(C, name="cdyn_model_position_limits")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      real(c_double), intent(out) :: lower(*), upper(*)
      integer(c_int), value :: n
    end function

    integer(c_int) function cdyn_model_velocity_limits(model, limit, n) &
        bind(C, name="cdyn_model_velocity_limits")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      real(c_double), intent(out) :: limit(*)
      integer(c_int), value :: n
    end function

    integer(c_int) function cdyn_model_effort_limits(model, limit, n) &
        bind(C, name="cdyn_model_effort_limits")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      real(c_double), intent(out) :: limit(*)
      integer(c_int), value :: n
    end function

    integer(c_int) function cdyn_model_frame_name(model, frame, name) &
        bind(C, name="cdyn_model_frame_name")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: frame
      type(c_ptr), intent(out) :: name
    end function

    integer(c_int) function cdyn_model_frame_index(model, name, frame) &
        bind(C, name="cdyn_model_frame_index")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: model
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: frame
    end function

    integer(c_int) function cdyn_model_frame_body(model, frame, body) &
        bind(C, name="cdyn_model_frame_body")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: frame
      integer(c_int), intent(out) :: body
    end function

    ! ---- logging ------------------------------------------------------------------------------

    integer(c_int) function cdyn_set_log_level(level) bind(C, name="cdyn_set_log_level")
      import :: c_int
      integer(c_int), value :: level
    end function

    integer(c_int) function cdyn_get_log_level(level) bind(C, name="cdyn_get_log_level")
      import :: c_int
      integer(c_int), intent(out) :: level
    end function

    ! ---- model description and cluster tree -----------------------------------------------------

    integer(c_int) function cdyn_model_describe(model, buf, len, needed) &
        bind(C, name="cdyn_model_describe")
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: model
      character(kind=c_char), intent(out), optional :: buf(*)
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out), optional :: needed
    end function

    integer(c_int) function cdyn_model_nwarnings(model, nwarnings) &
        bind(C, name="cdyn_model_nwarnings")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out) :: nwarnings
    end function

    integer(c_int) function cdyn_model_warnings(model, buf, len, needed) &
        bind(C, name="cdyn_model_warnings")
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: model
      character(kind=c_char), intent(out), optional :: buf(*)
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out), optional :: needed
    end function

    integer(c_int) function cdyn_model_nclusters(model, nclusters) &
        bind(C, name="cdyn_model_nclusters")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out) :: nclusters
    end function

    integer(c_int) function cdyn_model_ny(model, ny) bind(C, name="cdyn_model_ny")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out) :: ny
    end function

    integer(c_int) function cdyn_model_nyq(model, nyq) bind(C, name="cdyn_model_nyq")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out) :: nyq
    end function

    integer(c_int) function cdyn_model_nloops(model, nloops) bind(C, name="cdyn_model_nloops")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out) :: nloops
    end function

    integer(c_int) function cdyn_model_nrelations(model, nrelations) &
        bind(C, name="cdyn_model_nrelations")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out) :: nrelations
    end function

    integer(c_int) function cdyn_model_independent_position_name(model, i, name) &
        bind(C, name="cdyn_model_independent_position_name")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: i
      type(c_ptr), intent(out) :: name
    end function

    integer(c_int) function cdyn_model_independent_velocity_name(model, i, name) &
        bind(C, name="cdyn_model_independent_velocity_name")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: i
      type(c_ptr), intent(out) :: name
    end function

    integer(c_int) function cdyn_model_independent_position_index(model, name, i) &
        bind(C, name="cdyn_model_independent_position_index")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: model
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: i
    end function

    integer(c_int) function cdyn_model_independent_velocity_index(model, name, i) &
        bind(C, name="cdyn_model_independent_velocity_index")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: model
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: i
    end function

    integer(c_int) function cdyn_model_independent_indices(model, position_index, nyq, &
                                                           velocity_index, ny) &
        bind(C, name="cdyn_model_independent_indices")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), intent(out), optional :: position_index(*)
      integer(c_int), value :: nyq
      integer(c_int), intent(out), optional :: velocity_index(*)
      integer(c_int), value :: ny
    end function

    integer(c_int) function cdyn_model_reference_configuration(model, q, n) &
        bind(C, name="cdyn_model_reference_configuration")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      real(c_double), intent(out) :: q(*)
      integer(c_int), value :: n
    end function

    integer(c_int) function cdyn_model_cluster_name(model, cluster, name) &
        bind(C, name="cdyn_model_cluster_name")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: cluster
      type(c_ptr), intent(out) :: name
    end function

    integer(c_int) function cdyn_model_cluster_index(model, name, cluster) &
        bind(C, name="cdyn_model_cluster_index")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: model
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: cluster
    end function

    integer(c_int) function cdyn_model_cluster_info(model, cluster, parent, output_body, &
                                                    first_body, nbodies, kind) &
        bind(C, name="cdyn_model_cluster_info")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: cluster
      integer(c_int), intent(out), optional :: parent, output_body, first_body, nbodies, kind
    end function

    integer(c_int) function cdyn_model_cluster_coordinates(model, cluster, idx_q, nq, idx_v, &
                                                           nv, idx_yq, nyq, idx_y, ny) &
        bind(C, name="cdyn_model_cluster_coordinates")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: cluster
      integer(c_int), intent(out), optional :: idx_q, nq, idx_v, nv, idx_yq, nyq, idx_y, ny
    end function

    integer(c_int) function cdyn_model_body_cluster(model, body, cluster) &
        bind(C, name="cdyn_model_body_cluster")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: body
      integer(c_int), intent(out) :: cluster
    end function

    integer(c_int) function cdyn_model_describe_clusters(model, buf, len, needed) &
        bind(C, name="cdyn_model_describe_clusters")
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: model
      character(kind=c_char), intent(out), optional :: buf(*)
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out), optional :: needed
    end function

    integer(c_int) function cdyn_model_cluster_tree_dot(model, buf, len, needed) &
        bind(C, name="cdyn_model_cluster_tree_dot")
      import :: c_int, c_ptr, c_char, c_size_t
      type(c_ptr), value :: model
      character(kind=c_char), intent(out), optional :: buf(*)
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out), optional :: needed
    end function

    ! ---- workspaces ---------------------------------------------------------------------------

    integer(c_int) function cdyn_workspace_create(model, workspace) &
        bind(C, name="cdyn_workspace_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(out) :: workspace
    end function

    integer(c_int) function cdyn_workspace_size(model, size) bind(C, name="cdyn_workspace_size")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: model
      integer(c_size_t), intent(out) :: size
    end function

    integer(c_int) function cdyn_workspace_init_in(model, mem, size, workspace) &
        bind(C, name="cdyn_workspace_init_in")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: model
      type(c_ptr), value :: mem
      integer(c_size_t), value :: size
      type(c_ptr), intent(out) :: workspace
    end function

    integer(c_int) function cdyn_workspace_free(workspace) bind(C, name="cdyn_workspace_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: workspace
    end function

    type(c_ptr) function cdyn_workspace_last_error(workspace) &
        bind(C, name="cdyn_workspace_last_error")
      import :: c_ptr
      type(c_ptr), value :: workspace
    end function

    ! ---- configuration space ------------------------------------------------------------------

    integer(c_int) function cdyn_neutral_configuration(model, ws, q, n) &
        bind(C, name="cdyn_neutral_configuration")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(out) :: q(*)
      integer(c_int), value :: n
    end function

    integer(c_int) function cdyn_integrate(model, ws, q, nq, v, nv, dt, qout, nqout) &
        bind(C, name="cdyn_integrate")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), value :: dt
      real(c_double), intent(inout) :: qout(*)
      integer(c_int), value :: nqout
    end function

    integer(c_int) function cdyn_normalize_configuration(model, ws, q, n) &
        bind(C, name="cdyn_normalize_configuration")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(inout) :: q(*)
      integer(c_int), value :: n
    end function

    ! ---- kinematics ---------------------------------------------------------------------------

    integer(c_int) function cdyn_forward_kinematics(model, ws, q, nq, v, nv, a, na) &
        bind(C, name="cdyn_forward_kinematics")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in), optional :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in), optional :: a(*)
      integer(c_int), value :: na
    end function

    integer(c_int) function cdyn_frame_placement(model, ws, frame, R, ldr, p) &
        bind(C, name="cdyn_frame_placement")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      integer(c_int), value :: frame
      real(c_double), intent(out) :: R(*)
      integer(c_int), value :: ldr
      real(c_double), intent(out) :: p(3)
    end function

    integer(c_int) function cdyn_frame_placement_matrix(model, ws, frame, T, ldt) &
        bind(C, name="cdyn_frame_placement_matrix")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      integer(c_int), value :: frame
      real(c_double), intent(out) :: T(*)
      integer(c_int), value :: ldt
    end function

    integer(c_int) function cdyn_frame_velocity(model, ws, frame, rf, velocity) &
        bind(C, name="cdyn_frame_velocity")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      integer(c_int), value :: frame, rf
      real(c_double), intent(out) :: velocity(6)
    end function

    integer(c_int) function cdyn_frame_acceleration(model, ws, frame, rf, acceleration) &
        bind(C, name="cdyn_frame_acceleration")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      integer(c_int), value :: frame, rf
      real(c_double), intent(out) :: acceleration(6)
    end function

    integer(c_int) function cdyn_frame_classical_acceleration(model, ws, frame, rf, &
                                                              acceleration) &
        bind(C, name="cdyn_frame_classical_acceleration")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      integer(c_int), value :: frame, rf
      real(c_double), intent(out) :: acceleration(3)
    end function

    integer(c_int) function cdyn_frame_jacobian(model, ws, frame, rf, J, ldj) &
        bind(C, name="cdyn_frame_jacobian")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      integer(c_int), value :: frame, rf
      real(c_double), intent(out) :: J(*)
      integer(c_int), value :: ldj
    end function

    integer(c_int) function cdyn_compute_frame_jacobian(model, ws, q, nq, frame, rf, J, ldj) &
        bind(C, name="cdyn_compute_frame_jacobian")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq, frame, rf
      real(c_double), intent(out) :: J(*)
      integer(c_int), value :: ldj
    end function

    integer(c_int) function cdyn_center_of_mass(model, ws, q, nq, com) &
        bind(C, name="cdyn_center_of_mass")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(out) :: com(3)
    end function

    ! ---- dynamics -----------------------------------------------------------------------------

    integer(c_int) function cdyn_rnea(model, ws, q, nq, v, nv, a, na, fext, nfext, tau, ntau) &
        bind(C, name="cdyn_rnea")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: a(*)
      integer(c_int), value :: na
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout) :: tau(*)
      integer(c_int), value :: ntau
    end function

    integer(c_int) function cdyn_aba(model, ws, q, nq, v, nv, tau, ntau, fext, nfext, ddq, &
                                     nddq) bind(C, name="cdyn_aba")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout) :: ddq(*)
      integer(c_int), value :: nddq
    end function

    integer(c_int) function cdyn_crba(model, ws, q, nq, M, ldm) bind(C, name="cdyn_crba")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(inout) :: M(*)
      integer(c_int), value :: ldm
    end function

    integer(c_int) function cdyn_nonlinear_effects(model, ws, q, nq, v, nv, nle, nnle) &
        bind(C, name="cdyn_nonlinear_effects")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(inout) :: nle(*)
      integer(c_int), value :: nnle
    end function

    integer(c_int) function cdyn_generalized_gravity(model, ws, q, nq, g, ng) &
        bind(C, name="cdyn_generalized_gravity")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(inout) :: g(*)
      integer(c_int), value :: ng
    end function

    integer(c_int) function cdyn_kinetic_energy(model, ws, q, nq, v, nv, energy) &
        bind(C, name="cdyn_kinetic_energy")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(out) :: energy
    end function

    integer(c_int) function cdyn_potential_energy(model, ws, q, nq, energy) &
        bind(C, name="cdyn_potential_energy")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(out) :: energy
    end function

    ! ---- dynamics in independent coordinates (cluster tree) ------------------------------------

    integer(c_int) function cdyn_ce_aba(model, ws, q, nq, v, nv, tau, ntau, fext, nfext, ydd, &
                                        nydd, qdd, nqdd) bind(C, name="cdyn_ce_aba")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(inout), optional :: qdd(*)
      integer(c_int), value :: nqdd
    end function

    integer(c_int) function cdyn_ce_aba_spanning_forces(model, ws, q, nq, v, nv, tau, ntau, &
                                                        fext, nfext, ydd, nydd, qdd, nqdd) &
        bind(C, name="cdyn_ce_aba_spanning_forces")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(inout), optional :: qdd(*)
      integer(c_int), value :: nqdd
    end function

    integer(c_int) function cdyn_ce_aba_independent(model, ws, y, nyq, ydot, ny, tau, ntau, &
                                                    fext, nfext, ydd, nydd, q, nq, v, nv, qdd, &
                                                    nqdd) bind(C, name="cdyn_ce_aba_independent")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: y(*)
      integer(c_int), value :: nyq
      real(c_double), intent(in) :: ydot(*)
      integer(c_int), value :: ny
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(inout), optional :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(inout), optional :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(inout), optional :: qdd(*)
      integer(c_int), value :: nqdd
    end function

    integer(c_int) function cdyn_ce_rnea(model, ws, q, nq, v, nv, ydd, nydd, fext, nfext, tau, &
                                         ntau, qdd, nqdd) bind(C, name="cdyn_ce_rnea")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(inout), optional :: qdd(*)
      integer(c_int), value :: nqdd
    end function

    integer(c_int) function cdyn_cluster_mass_matrix(model, ws, q, nq, H, ldh) &
        bind(C, name="cdyn_cluster_mass_matrix")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(inout) :: H(*)
      integer(c_int), value :: ldh
    end function

    integer(c_int) function cdyn_cluster_bias(model, ws, q, nq, v, nv, C, nc) &
        bind(C, name="cdyn_cluster_bias")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(inout) :: C(*)
      integer(c_int), value :: nc
    end function

    ! ---- loop closure, coordinate conversions, constraint matrices ------------------------------

    integer(c_int) function cdyn_solve_loop_closure(model, ws, y, nyq, q_guess, nq_guess, q, nq) &
        bind(C, name="cdyn_solve_loop_closure")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: y(*)
      integer(c_int), value :: nyq
      real(c_double), intent(in), optional :: q_guess(*)
      integer(c_int), value :: nq_guess
      real(c_double), intent(inout) :: q(*)
      integer(c_int), value :: nq
    end function

    integer(c_int) function cdyn_independent_to_spanning(model, ws, y, nyq, ydot, ny, q_guess, &
                                                         nq_guess, q, nq, v, nv) &
        bind(C, name="cdyn_independent_to_spanning")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: y(*)
      integer(c_int), value :: nyq
      real(c_double), intent(in) :: ydot(*)
      integer(c_int), value :: ny
      real(c_double), intent(in), optional :: q_guess(*)
      integer(c_int), value :: nq_guess
      real(c_double), intent(inout) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(inout) :: v(*)
      integer(c_int), value :: nv
    end function

    integer(c_int) function cdyn_spanning_to_independent(model, ws, q, nq, v, nv, y, nyq, ydot, &
                                                         ny) &
        bind(C, name="cdyn_spanning_to_independent")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(inout) :: y(*)
      integer(c_int), value :: nyq
      real(c_double), intent(inout) :: ydot(*)
      integer(c_int), value :: ny
    end function

    integer(c_int) function cdyn_project_to_constraints(model, ws, q, nq, v, nv, qout, nqout, &
                                                        vout, nvout) &
        bind(C, name="cdyn_project_to_constraints")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(inout) :: qout(*)
      integer(c_int), value :: nqout
      real(c_double), intent(inout) :: vout(*)
      integer(c_int), value :: nvout
    end function

    integer(c_int) function cdyn_last_loop_closure(model, ws, iterations, residual) &
        bind(C, name="cdyn_last_loop_closure")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      integer(c_int), intent(out), optional :: iterations
      real(c_double), intent(out), optional :: residual
    end function

    ! G (C name) is gmat here and g (C name) gvec: Fortran names are case-insensitive.
    integer(c_int) function cdyn_constraint_matrices(model, ws, q, nq, v, nv, gmat, ldg, gvec, &
                                                     ng) bind(C, name="cdyn_constraint_matrices")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(inout) :: gmat(*)
      integer(c_int), value :: ldg
      real(c_double), intent(inout), optional :: gvec(*)
      integer(c_int), value :: ng
    end function

    integer(c_int) function cdyn_cluster_constraint_matrices(model, ws, cluster, q, nq, v, nv, &
                                                             gmat, ldg, gvec, ng) &
        bind(C, name="cdyn_cluster_constraint_matrices")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      integer(c_int), value :: cluster
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(inout) :: gmat(*)
      integer(c_int), value :: ldg
      real(c_double), intent(inout), optional :: gvec(*)
      integer(c_int), value :: ng
    end function

  end interface

  ! ---- Batched evaluation (cdyn_batch_*: caller workspaces, cdyn_pool_*: a pool) -------------
  ! Stacked arrays: a Fortran array X(len, n) holds one state per column (CDYN_BATCH_ROW_MAJOR);
  ! X(n, len) holds one state per row (CDYN_BATCH_COL_MAJOR). ws is an array of type(c_ptr)
  ! workspaces. H (C name) is hmat here. failed_index is optional.
  integer(c_int), parameter, public :: CDYN_BATCH_ROW_MAJOR = 0
  integer(c_int), parameter, public :: CDYN_BATCH_COL_MAJOR = 1

  interface

    integer(c_int) function cdyn_pool_create(model, nthreads, pool) &
        bind(C, name="cdyn_pool_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: nthreads
      type(c_ptr), intent(out) :: pool
    end function

    integer(c_int) function cdyn_pool_free(pool) &
        bind(C, name="cdyn_pool_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: pool
    end function

    integer(c_int) function cdyn_pool_nthreads(pool, nthreads) &
        bind(C, name="cdyn_pool_nthreads")
      import :: c_int, c_ptr
      type(c_ptr), value :: pool
      integer(c_int), intent(out) :: nthreads
    end function

    type(c_ptr) function cdyn_pool_last_error(pool) bind(C, name="cdyn_pool_last_error")
      import :: c_ptr
      type(c_ptr), value :: pool
    end function

    integer(c_int) function cdyn_batch_ce_aba(model, ws, nws, n, layout, q, nq, v, nv, tau, &
                                              ntau, fext, nfext, ydd, nydd, qdd, nqdd, &
                                              failed_index) &
        bind(C, name="cdyn_batch_ce_aba")
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(in) :: ws(*)
      integer(c_int), value :: nws
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(inout), optional :: qdd(*)
      integer(c_int), value :: nqdd
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_batch_ce_aba_independent(model, ws, nws, n, layout, y, nyq, &
                                                          ydot, ny, tau, ntau, fext, nfext, &
                                                          q_guess, nq_guess, ydd, nydd, q, nq, &
                                                          v, nv, qdd, nqdd, failed_index) &
        bind(C, name="cdyn_batch_ce_aba_independent")
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(in) :: ws(*)
      integer(c_int), value :: nws
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: y(*)
      integer(c_int), value :: nyq
      real(c_double), intent(in) :: ydot(*)
      integer(c_int), value :: ny
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(in), optional :: q_guess(*)
      integer(c_int), value :: nq_guess
      real(c_double), intent(inout) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(inout), optional :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(inout), optional :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(inout), optional :: qdd(*)
      integer(c_int), value :: nqdd
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_batch_ce_rnea(model, ws, nws, n, layout, q, nq, v, nv, ydd, &
                                               nydd, fext, nfext, tau, ntau, qdd, nqdd, &
                                               failed_index) &
        bind(C, name="cdyn_batch_ce_rnea")
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(in) :: ws(*)
      integer(c_int), value :: nws
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(inout), optional :: qdd(*)
      integer(c_int), value :: nqdd
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_batch_cluster_mass_matrix(model, ws, nws, n, layout, q, nq, &
                                                           hmat, nh, failed_index) &
        bind(C, name="cdyn_batch_cluster_mass_matrix")
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(in) :: ws(*)
      integer(c_int), value :: nws
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(inout) :: hmat(*)
      integer(c_int), value :: nh
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_pool_ce_aba(model, pool, n, layout, q, nq, v, nv, tau, ntau, &
                                             fext, nfext, ydd, nydd, qdd, nqdd, failed_index) &
        bind(C, name="cdyn_pool_ce_aba")
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), value :: pool
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(inout), optional :: qdd(*)
      integer(c_int), value :: nqdd
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_pool_ce_aba_independent(model, pool, n, layout, y, nyq, ydot, &
                                                         ny, tau, ntau, fext, nfext, q_guess, &
                                                         nq_guess, ydd, nydd, q, nq, v, nv, &
                                                         qdd, nqdd, failed_index) &
        bind(C, name="cdyn_pool_ce_aba_independent")
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), value :: pool
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: y(*)
      integer(c_int), value :: nyq
      real(c_double), intent(in) :: ydot(*)
      integer(c_int), value :: ny
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(in), optional :: q_guess(*)
      integer(c_int), value :: nq_guess
      real(c_double), intent(inout) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(inout), optional :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(inout), optional :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(inout), optional :: qdd(*)
      integer(c_int), value :: nqdd
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_pool_ce_rnea(model, pool, n, layout, q, nq, v, nv, ydd, nydd, &
                                              fext, nfext, tau, ntau, qdd, nqdd, failed_index) &
        bind(C, name="cdyn_pool_ce_rnea")
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), value :: pool
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(inout), optional :: qdd(*)
      integer(c_int), value :: nqdd
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_pool_cluster_mass_matrix(model, pool, n, layout, q, nq, hmat, &
                                                          nh, failed_index) &
        bind(C, name="cdyn_pool_cluster_mass_matrix")
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), value :: pool
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(inout) :: hmat(*)
      integer(c_int), value :: nh
      integer(c_int), intent(out), optional :: failed_index
    end function
  end interface

  ! ---- Constraint forces (docs/c-api.md "Constraint forces") ----
  ! cdyn_force_frame
  integer(c_int), parameter, public :: CDYN_FORCE_FRAME_BODY = 0
  integer(c_int), parameter, public :: CDYN_FORCE_FRAME_WORLD = 1
  integer(c_int), parameter, public :: CDYN_FORCE_FRAME_LOOP = 2

  interface
    integer(c_int) function cdyn_forces_create(model, forces) bind(C, name="cdyn_forces_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(out) :: forces
    end function

    integer(c_int) function cdyn_forces_free(forces) bind(C, name="cdyn_forces_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: forces
    end function

    integer(c_int) function cdyn_forces_after_ce_aba(model, ws, forces, tau, ntau, spanning) &
        bind(C, name="cdyn_forces_after_ce_aba")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws, forces
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau, spanning
    end function

    integer(c_int) function cdyn_forces_after_ce_rnea(model, ws, forces) &
        bind(C, name="cdyn_forces_after_ce_rnea")
      import :: c_int, c_ptr
      type(c_ptr), value :: model, ws, forces
    end function

    integer(c_int) function cdyn_forces_joint_wrenches(model, ws, forces, frame, w, ldw) &
        bind(C, name="cdyn_forces_joint_wrenches")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws, forces
      integer(c_int), value :: frame
      real(c_double), intent(inout) :: w(*)
      integer(c_int), value :: ldw
    end function

    integer(c_int) function cdyn_forces_loop_wrenches(model, forces, w, ldw) &
        bind(C, name="cdyn_forces_loop_wrenches")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, forces
      real(c_double), intent(inout) :: w(*)
      integer(c_int), value :: ldw
    end function

    integer(c_int) function cdyn_forces_loop_rows(model, forces, loop, rows, nrows) &
        bind(C, name="cdyn_forces_loop_rows")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, forces
      integer(c_int), value :: loop
      real(c_double), intent(inout) :: rows(*)
      integer(c_int), value :: nrows
    end function

    integer(c_int) function cdyn_forces_loop_info(model, loop, name, predecessor_body, &
                                                  successor_body, nrows, frame_pose) &
        bind(C, name="cdyn_forces_loop_info")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      integer(c_int), value :: loop
      type(c_ptr), intent(out), optional :: name
      integer(c_int), intent(out), optional :: predecessor_body, successor_body, nrows
      real(c_double), intent(inout), optional :: frame_pose(12)
    end function

    integer(c_int) function cdyn_forces_coupling_info(model, relation, name, nterms) &
        bind(C, name="cdyn_forces_coupling_info")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      integer(c_int), value :: relation
      type(c_ptr), intent(out), optional :: name
      integer(c_int), intent(out), optional :: nterms
    end function

    integer(c_int) function cdyn_forces_coupling_term(model, relation, term, velocity_index, &
                                                      coefficient) &
        bind(C, name="cdyn_forces_coupling_term")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      integer(c_int), value :: relation, term
      integer(c_int), intent(out), optional :: velocity_index
      real(c_double), intent(out), optional :: coefficient
    end function

    integer(c_int) function cdyn_forces_coupling(model, forces, relation, multiplier, &
                                                 joint_forces, nterms) &
        bind(C, name="cdyn_forces_coupling")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, forces
      integer(c_int), value :: relation
      real(c_double), intent(out), optional :: multiplier
      real(c_double), intent(inout) :: joint_forces(*)
      integer(c_int), value :: nterms
    end function

    ! ---- constraints and constrained dynamics -------------------------------------------------

    integer(c_int) function cdyn_proximal_settings_default(settings) &
        bind(C, name="cdyn_proximal_settings_default")
      import :: c_int, cdyn_proximal_settings
      type(cdyn_proximal_settings), intent(out) :: settings
    end function

    integer(c_int) function cdyn_constraint_set_create(model, set) &
        bind(C, name="cdyn_constraint_set_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(out) :: set
    end function

    integer(c_int) function cdyn_constraint_set_create_cut_loops(model, set) &
        bind(C, name="cdyn_constraint_set_create_cut_loops")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(out) :: set
    end function

    integer(c_int) function cdyn_constraint_set_free(set) bind(C, name="cdyn_constraint_set_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: set
    end function

    type(c_ptr) function cdyn_constraint_set_last_error(set) &
        bind(C, name="cdyn_constraint_set_last_error")
      import :: c_ptr
      type(c_ptr), value :: set
    end function

    integer(c_int) function cdyn_constraint_set_add(set, name, type, body1, placement1, body2, &
                                                    placement2, rf, gains, index) &
        bind(C, name="cdyn_constraint_set_add")
      import :: c_int, c_ptr, c_char, c_double
      type(c_ptr), value :: set
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: type, body1
      real(c_double), intent(in), optional :: placement1(16)
      integer(c_int), value :: body2
      real(c_double), intent(in), optional :: placement2(16)
      integer(c_int), value :: rf
      real(c_double), intent(in), optional :: gains(2)
      integer(c_int), intent(out), optional :: index
    end function

    integer(c_int) function cdyn_constraint_set_add_contact(set, frame_name, type, rf, name, &
                                                            index) &
        bind(C, name="cdyn_constraint_set_add_contact")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: set
      character(kind=c_char), intent(in) :: frame_name(*)
      integer(c_int), value :: type, rf
      character(kind=c_char), intent(in), optional :: name(*)
      integer(c_int), intent(out), optional :: index
    end function

    integer(c_int) function cdyn_constraint_set_size(set, nconstraints) &
        bind(C, name="cdyn_constraint_set_size")
      import :: c_int, c_ptr
      type(c_ptr), value :: set
      integer(c_int), intent(out) :: nconstraints
    end function

    integer(c_int) function cdyn_constraint_set_nrows(set, m) &
        bind(C, name="cdyn_constraint_set_nrows")
      import :: c_int, c_ptr
      type(c_ptr), value :: set
      integer(c_int), intent(out) :: m
    end function

    integer(c_int) function cdyn_constraint_set_row_name(set, row, name) &
        bind(C, name="cdyn_constraint_set_row_name")
      import :: c_int, c_ptr
      type(c_ptr), value :: set
      integer(c_int), value :: row
      type(c_ptr), intent(out) :: name
    end function

    integer(c_int) function cdyn_constraint_set_constraint(set, index, name, type, body1, &
                                                           placement1, body2, placement2, rf, &
                                                           gains, row0, nrows) &
        bind(C, name="cdyn_constraint_set_constraint")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: set
      integer(c_int), value :: index
      type(c_ptr), intent(out), optional :: name
      integer(c_int), intent(out), optional :: type, body1, body2, rf, row0, nrows
      real(c_double), intent(out), optional :: placement1(16), placement2(16), gains(2)
    end function

    integer(c_int) function cdyn_constraint_workspace_create(model, set, workspace) &
        bind(C, name="cdyn_constraint_workspace_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: model, set
      type(c_ptr), intent(out) :: workspace
    end function

    integer(c_int) function cdyn_constraint_workspace_free(workspace) &
        bind(C, name="cdyn_constraint_workspace_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: workspace
    end function

    type(c_ptr) function cdyn_constraint_workspace_last_error(workspace) &
        bind(C, name="cdyn_constraint_workspace_last_error")
      import :: c_ptr
      type(c_ptr), value :: workspace
    end function

    integer(c_int) function cdyn_constraint_jacobian(set, ws, q, v, m, jmat, ldj, gamma) &
        bind(C, name="cdyn_constraint_jacobian")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: set, ws
      real(c_double), intent(in) :: q(*)
      real(c_double), intent(in), optional :: v(*)
      integer(c_int), value :: m
      real(c_double), intent(inout) :: jmat(*)
      integer(c_int), value :: ldj
      real(c_double), intent(inout), optional :: gamma(*)
    end function

    integer(c_int) function cdyn_constraint_kinematics(set, ws, q, v, m, jmat, ldj, gamma, phi) &
        bind(C, name="cdyn_constraint_kinematics")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: set, ws
      real(c_double), intent(in) :: q(*)
      real(c_double), intent(in), optional :: v(*)
      integer(c_int), value :: m
      real(c_double), intent(inout), optional :: jmat(*)
      integer(c_int), value :: ldj
      real(c_double), intent(inout), optional :: gamma(*), phi(*)
    end function

    integer(c_int) function cdyn_delassus_matrix(set, ws, q, dmat, ldd) &
        bind(C, name="cdyn_delassus_matrix")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: set, ws
      real(c_double), intent(in) :: q(*)
      real(c_double), intent(inout) :: dmat(*)
      integer(c_int), value :: ldd
    end function

    integer(c_int) function cdyn_damped_delassus_inverse(set, ws, q, rho, dinv, ldd) &
        bind(C, name="cdyn_damped_delassus_inverse")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: set, ws
      real(c_double), intent(in) :: q(*)
      real(c_double), value :: rho
      real(c_double), intent(inout) :: dinv(*)
      integer(c_int), value :: ldd
    end function

    integer(c_int) function cdyn_constrained_aba(set, ws, q, v, tau, fext, settings, ydd, qdd, &
                                                 lambda, m, result) bind(C, name="cdyn_constrained_aba")
      import :: c_double, c_int, c_ptr, cdyn_proximal_settings, cdyn_proximal_result
      type(c_ptr), value :: set, ws
      real(c_double), intent(in) :: q(*), v(*), tau(*)
      real(c_double), intent(in), optional :: fext(*)
      type(cdyn_proximal_settings), intent(in), optional :: settings
      real(c_double), intent(inout) :: ydd(*)
      real(c_double), intent(inout), optional :: qdd(*)
      real(c_double), intent(inout) :: lambda(*)
      integer(c_int), value :: m
      type(cdyn_proximal_result), intent(out), optional :: result
    end function

    integer(c_int) function cdyn_prox_pv(set, ws, q, v, tau, fext, settings, ydd, qdd, &
                                         lambda, m, result) bind(C, name="cdyn_prox_pv")
      import :: c_double, c_int, c_ptr, cdyn_proximal_settings, cdyn_proximal_result
      type(c_ptr), value :: set, ws
      real(c_double), intent(in) :: q(*), v(*), tau(*)
      real(c_double), intent(in), optional :: fext(*)
      type(cdyn_proximal_settings), intent(in), optional :: settings
      real(c_double), intent(inout) :: ydd(*)
      real(c_double), intent(inout), optional :: qdd(*)
      real(c_double), intent(inout) :: lambda(*)
      integer(c_int), value :: m
      type(cdyn_proximal_result), intent(out), optional :: result
    end function

    integer(c_int) function cdyn_constrained_dynamics_dense(set, ws, q, v, tau, fext, settings, ydd, qdd, &
                                                            lambda, m, result) bind(C, name="cdyn_constrained_dynamics_dense")
      import :: c_double, c_int, c_ptr, cdyn_proximal_settings, cdyn_proximal_result
      type(c_ptr), value :: set, ws
      real(c_double), intent(in) :: q(*), v(*), tau(*)
      real(c_double), intent(in), optional :: fext(*)
      type(cdyn_proximal_settings), intent(in), optional :: settings
      real(c_double), intent(inout) :: ydd(*)
      real(c_double), intent(inout), optional :: qdd(*)
      real(c_double), intent(inout) :: lambda(*)
      integer(c_int), value :: m
      type(cdyn_proximal_result), intent(out), optional :: result
    end function

    integer(c_int) function cdyn_constraint_wrenches(set, ws, w, ldw) &
                                                     bind(C, name="cdyn_constraint_wrenches")
      import :: c_double, c_int, c_ptr
      type(c_ptr), value :: set, ws
      real(c_double), intent(inout) :: w(*)
      integer(c_int), value :: ldw
    end function

    ! Batched constrained dynamics: stacked arrays as in "Batched evaluation" (q(nq, n) with
    ! CDYN_BATCH_ROW_MAJOR), ws an array of type(c_ptr) constraint workspaces, results(n).
    integer(c_int) function cdyn_batch_constrained_dynamics(set, ws, nws, n, layout, solver, q, &
                                                            v, tau, fext, settings, ydd, qdd, &
                                                            lambda, m, results, failed_index) &
        bind(C, name="cdyn_batch_constrained_dynamics")
      import :: c_double, c_int, c_ptr, cdyn_proximal_settings, cdyn_proximal_result
      type(c_ptr), value :: set
      type(c_ptr), intent(in) :: ws(*)
      integer(c_int), value :: nws, n, layout, solver
      real(c_double), intent(in) :: q(*), v(*), tau(*)
      real(c_double), intent(in), optional :: fext(*)
      type(cdyn_proximal_settings), intent(in), optional :: settings
      real(c_double), intent(inout) :: ydd(*)
      real(c_double), intent(inout), optional :: qdd(*)
      real(c_double), intent(inout) :: lambda(*)
      integer(c_int), value :: m
      type(cdyn_proximal_result), intent(inout), optional :: results(*)
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_pool_constrained_dynamics(set, pool, ws, nws, n, layout, solver, &
                                                           q, v, tau, fext, settings, ydd, qdd, &
                                                           lambda, m, results, failed_index) &
        bind(C, name="cdyn_pool_constrained_dynamics")
      import :: c_double, c_int, c_ptr, cdyn_proximal_settings, cdyn_proximal_result
      type(c_ptr), value :: set, pool
      type(c_ptr), intent(in) :: ws(*)
      integer(c_int), value :: nws, n, layout, solver
      real(c_double), intent(in) :: q(*), v(*), tau(*)
      real(c_double), intent(in), optional :: fext(*)
      type(cdyn_proximal_settings), intent(in), optional :: settings
      real(c_double), intent(inout) :: ydd(*)
      real(c_double), intent(inout), optional :: qdd(*)
      real(c_double), intent(inout) :: lambda(*)
      integer(c_int), value :: m
      type(cdyn_proximal_result), intent(inout), optional :: results(*)
      integer(c_int), intent(out), optional :: failed_index
    end function

    ! ---- Derivatives of the dynamics (derivative workspaces; clusterdyn.h "Derivatives") ----
    ! Matrices are column-major ld x n arrays (pass m(1,1) or m, ld = size(m, 1)); optional
    ! arguments (fext, tau/ddq/ydd outputs, the third matrix) may be omitted (pass length 0).

    integer(c_int) function cdyn_derivative_workspace_create(model, dws) &
        bind(C, name="cdyn_derivative_workspace_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(out) :: dws
    end function

    integer(c_int) function cdyn_derivative_workspace_free(dws) &
        bind(C, name="cdyn_derivative_workspace_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: dws
    end function

    type(c_ptr) function cdyn_derivative_workspace_last_error(dws) &
        bind(C, name="cdyn_derivative_workspace_last_error")
      import :: c_ptr
      type(c_ptr), value :: dws
    end function

    integer(c_int) function cdyn_rnea_derivatives(model, dws, q, nq, v, nv, a, na, &
        fext, nfext, tau, ntau, dtau_dq, dtau_dv, dtau_da, ld) &
        bind(C, name="cdyn_rnea_derivatives")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      type(c_ptr), value :: dws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: a(*)
      integer(c_int), value :: na
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout), optional :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(inout) :: dtau_dq(*)
      real(c_double), intent(inout) :: dtau_dv(*)
      real(c_double), intent(inout), optional :: dtau_da(*)
      integer(c_int), value :: ld
    end function

    integer(c_int) function cdyn_aba_derivatives(model, dws, q, nq, v, nv, tau, &
        ntau, fext, nfext, ddq, nddq, ddq_dq, ddq_dv, minv, ld) &
        bind(C, name="cdyn_aba_derivatives")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      type(c_ptr), value :: dws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout), optional :: ddq(*)
      integer(c_int), value :: nddq
      real(c_double), intent(inout) :: ddq_dq(*)
      real(c_double), intent(inout) :: ddq_dv(*)
      real(c_double), intent(inout), optional :: minv(*)
      integer(c_int), value :: ld
    end function

    integer(c_int) function cdyn_minverse(model, dws, q, nq, minv, ld) &
        bind(C, name="cdyn_minverse")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, dws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(inout) :: minv(*)
      integer(c_int), value :: ld
    end function

    integer(c_int) function cdyn_ce_rnea_derivatives(model, dws, q, nq, v, nv, ydd, &
        nydd, fext, nfext, tau, ntau, dtau_dy, dtau_dydot, h, ld) &
        bind(C, name="cdyn_ce_rnea_derivatives")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      type(c_ptr), value :: dws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout), optional :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(inout) :: dtau_dy(*)
      real(c_double), intent(inout) :: dtau_dydot(*)
      real(c_double), intent(inout), optional :: h(*)
      integer(c_int), value :: ld
    end function

    integer(c_int) function cdyn_ce_aba_derivatives(model, dws, q, nq, v, nv, tau, &
        ntau, fext, nfext, ydd, nydd, dydd_dy, dydd_dydot, hinv, ld) &
        bind(C, name="cdyn_ce_aba_derivatives")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      type(c_ptr), value :: dws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout), optional :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(inout) :: dydd_dy(*)
      real(c_double), intent(inout) :: dydd_dydot(*)
      real(c_double), intent(inout), optional :: hinv(*)
      integer(c_int), value :: ld
    end function

    integer(c_int) function cdyn_difference(model, ws, q0, nq0, q1, nq1, v, nv) &
        bind(C, name="cdyn_difference")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model, ws
      real(c_double), intent(in) :: q0(*)
      integer(c_int), value :: nq0
      real(c_double), intent(in) :: q1(*)
      integer(c_int), value :: nq1
      real(c_double), intent(inout) :: v(*)
      integer(c_int), value :: nv
    end function

    integer(c_int) function cdyn_batch_rnea_derivatives(model, dws, nws, n, layout, q, &
        nq, v, nv, a, na, fext, nfext, tau, ntau, dtau_dq, ndq, dtau_dv, &
        ndv, dtau_da, nda, failed_index) &
        bind(C, name="cdyn_batch_rnea_derivatives")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      type(c_ptr), intent(in) :: dws(*)
      integer(c_int), value :: nws
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: a(*)
      integer(c_int), value :: na
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout), optional :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(inout) :: dtau_dq(*)
      integer(c_int), value :: ndq
      real(c_double), intent(inout) :: dtau_dv(*)
      integer(c_int), value :: ndv
      real(c_double), intent(inout), optional :: dtau_da(*)
      integer(c_int), value :: nda
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_batch_aba_derivatives(model, dws, nws, n, layout, q, &
        nq, v, nv, tau, ntau, fext, nfext, ddq, nddq, ddq_dq, ndq, ddq_dv, &
        ndv, minv, nminv, failed_index) &
        bind(C, name="cdyn_batch_aba_derivatives")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      type(c_ptr), intent(in) :: dws(*)
      integer(c_int), value :: nws
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout), optional :: ddq(*)
      integer(c_int), value :: nddq
      real(c_double), intent(inout) :: ddq_dq(*)
      integer(c_int), value :: ndq
      real(c_double), intent(inout) :: ddq_dv(*)
      integer(c_int), value :: ndv
      real(c_double), intent(inout), optional :: minv(*)
      integer(c_int), value :: nminv
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_batch_ce_rnea_derivatives(model, dws, nws, n, layout, &
        q, nq, v, nv, ydd, nydd, fext, nfext, tau, ntau, dtau_dy, ndy, &
        dtau_dydot, ndydot, h, nh, failed_index) &
        bind(C, name="cdyn_batch_ce_rnea_derivatives")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      type(c_ptr), intent(in) :: dws(*)
      integer(c_int), value :: nws
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout), optional :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(inout) :: dtau_dy(*)
      integer(c_int), value :: ndy
      real(c_double), intent(inout) :: dtau_dydot(*)
      integer(c_int), value :: ndydot
      real(c_double), intent(inout), optional :: h(*)
      integer(c_int), value :: nh
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_batch_ce_aba_derivatives(model, dws, nws, n, layout, &
        q, nq, v, nv, tau, ntau, fext, nfext, ydd, nydd, dydd_dy, ndy, &
        dydd_dydot, ndydot, hinv, nhinv, failed_index) &
        bind(C, name="cdyn_batch_ce_aba_derivatives")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: model
      type(c_ptr), intent(in) :: dws(*)
      integer(c_int), value :: nws
      integer(c_int), value :: n
      integer(c_int), value :: layout
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), intent(inout), optional :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(inout) :: dydd_dy(*)
      integer(c_int), value :: ndy
      real(c_double), intent(inout) :: dydd_dydot(*)
      integer(c_int), value :: ndydot
      real(c_double), intent(inout), optional :: hinv(*)
      integer(c_int), value :: nhinv
      integer(c_int), intent(out), optional :: failed_index
    end function

  end interface
  ! ---- Contacts: frictional contact and time stepping (clusterdyn.h "Contacts") ----
  ! cdyn_contact_solver
  integer(c_int), parameter, public :: CDYN_CONTACT_ADMM = 0
  integer(c_int), parameter, public :: CDYN_CONTACT_PGS = 1

  ! Settings and outcome of a contact solve / step (cdyn_contact_settings, cdyn_contact_report).
  type, bind(C), public :: cdyn_contact_settings
    real(c_double) :: dt
    real(c_double) :: beta
    real(c_double) :: max_push_velocity
    real(c_double) :: activation_distance
    real(c_double) :: tolerance
    real(c_double) :: rho
    integer(c_int) :: solver
    integer(c_int) :: max_iterations
    integer(c_int) :: warm_start
  end type

  type, bind(C), public :: cdyn_contact_report
    integer(c_int) :: status
    integer(c_int) :: iterations
    integer(c_int) :: converged
    integer(c_int) :: active_contacts
    real(c_double) :: primal_residual
    real(c_double) :: dual_residual
    real(c_double) :: complementarity
    real(c_double) :: rho
  end type

  interface
    integer(c_int) function cdyn_contact_settings_default(settings) &
        bind(C, name="cdyn_contact_settings_default")
      import :: c_int, cdyn_contact_settings
      type(cdyn_contact_settings), intent(out) :: settings
    end function

    integer(c_int) function cdyn_contact_problem_create(model, problem) &
        bind(C, name="cdyn_contact_problem_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: model
      type(c_ptr), intent(out) :: problem
    end function

    integer(c_int) function cdyn_contact_problem_free(problem) &
        bind(C, name="cdyn_contact_problem_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
    end function

    type(c_ptr) function cdyn_contact_problem_last_error(problem) &
        bind(C, name="cdyn_contact_problem_last_error")
      import :: c_ptr
      type(c_ptr), value :: problem
    end function

    integer(c_int) function cdyn_contact_problem_add_bilateral(problem, set) &
        bind(C, name="cdyn_contact_problem_add_bilateral")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem, set
    end function

    integer(c_int) function cdyn_contact_problem_set_ground(problem, normal, nnormal, offset) &
        bind(C, name="cdyn_contact_problem_set_ground")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: problem
      real(c_double), intent(in) :: normal(*)
      integer(c_int), value :: nnormal
      real(c_double), value :: offset
    end function

    integer(c_int) function cdyn_contact_problem_add_foot(problem, name, body, centre, ncentre, &
                                                          radius, mu, index) &
        bind(C, name="cdyn_contact_problem_add_foot")
      import :: c_int, c_ptr, c_char, c_double
      type(c_ptr), value :: problem
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: body
      real(c_double), intent(in) :: centre(*)
      integer(c_int), value :: ncentre
      real(c_double), value :: radius, mu
      integer(c_int), intent(out), optional :: index
    end function

    integer(c_int) function cdyn_contact_problem_add_point(problem, name, body, point, npoint, &
                                                           index) &
        bind(C, name="cdyn_contact_problem_add_point")
      import :: c_int, c_ptr, c_char, c_double
      type(c_ptr), value :: problem
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: body
      real(c_double), intent(in) :: point(*)
      integer(c_int), value :: npoint
      integer(c_int), intent(out), optional :: index
    end function

    integer(c_int) function cdyn_contact_problem_sizes(problem, ncontacts, nbilateral_rows, m) &
        bind(C, name="cdyn_contact_problem_sizes")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
      integer(c_int), intent(out), optional :: ncontacts, nbilateral_rows, m
    end function

    integer(c_int) function cdyn_contact_workspace_create(problem, workspace) &
        bind(C, name="cdyn_contact_workspace_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
      type(c_ptr), intent(out) :: workspace
    end function

    integer(c_int) function cdyn_contact_workspace_free(workspace) &
        bind(C, name="cdyn_contact_workspace_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: workspace
    end function

    type(c_ptr) function cdyn_contact_workspace_last_error(workspace) &
        bind(C, name="cdyn_contact_workspace_last_error")
      import :: c_ptr
      type(c_ptr), value :: workspace
    end function

    integer(c_int) function cdyn_contact_workspace_reset(problem, ws) &
        bind(C, name="cdyn_contact_workspace_reset")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem, ws
    end function

    ! normal(3, ncontacts), gap(ncontacts), mu(ncontacts); the lengths are 3 ncontacts, ...
    integer(c_int) function cdyn_contact_set_caller(problem, ws, normal, nnormal, gap, ngap, mu, &
                                                    nmu) &
        bind(C, name="cdyn_contact_set_caller")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: problem, ws
      real(c_double), intent(in) :: normal(*)
      integer(c_int), value :: nnormal
      real(c_double), intent(in) :: gap(*)
      integer(c_int), value :: ngap
      real(c_double), intent(in) :: mu(*)
      integer(c_int), value :: nmu
    end function

    ! r(3, 3, ncontacts) (absent: pass nr = 0), gap(ncontacts), velocity(m).
    integer(c_int) function cdyn_contact_frames(problem, ws, r, nr, gap, ngap, velocity, &
                                                nvelocity) &
        bind(C, name="cdyn_contact_frames")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: problem, ws
      real(c_double), intent(inout), optional :: r(*)
      integer(c_int), value :: nr
      real(c_double), intent(inout), optional :: gap(*)
      integer(c_int), value :: ngap
      real(c_double), intent(inout), optional :: velocity(*)
      integer(c_int), value :: nvelocity
    end function

    integer(c_int) function cdyn_contact_solve(problem, ws, q, nq, v, nv, tau, ntau, settings, &
                                               lambda, nlambda, report) &
        bind(C, name="cdyn_contact_solve")
      import :: c_int, c_ptr, c_double, cdyn_contact_settings, cdyn_contact_report
      type(c_ptr), value :: problem, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      type(cdyn_contact_settings), intent(in), optional :: settings
      real(c_double), intent(inout) :: lambda(*)
      integer(c_int), value :: nlambda
      type(cdyn_contact_report), intent(out), optional :: report
    end function

    integer(c_int) function cdyn_contact_step(problem, ws, q, nq, v, nv, tau, ntau, settings, &
                                              qout, nqout, vout, nvout, lambda, nlambda, report) &
        bind(C, name="cdyn_contact_step")
      import :: c_int, c_ptr, c_double, cdyn_contact_settings, cdyn_contact_report
      type(c_ptr), value :: problem, ws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      type(cdyn_contact_settings), intent(in), optional :: settings
      real(c_double), intent(inout) :: qout(*)
      integer(c_int), value :: nqout
      real(c_double), intent(inout) :: vout(*)
      integer(c_int), value :: nvout
      real(c_double), intent(inout), optional :: lambda(*)
      integer(c_int), value :: nlambda
      type(cdyn_contact_report), intent(out), optional :: report
    end function

    ! Rollouts: q0(nq, n), v0(nv, n), tau(ny, nsteps, n), q(nq, nsteps, n), v(nv, nsteps, n),
    ! lambda(m, nsteps, n) (absent: nlambda = 0), reports(nsteps, n); ws(nws) contact workspaces.
    integer(c_int) function cdyn_batch_contact_rollout(problem, ws, nws, n, nsteps, settings, &
                                                       q0, nq, v0, nv, tau, ntau, q, nqout, v, &
                                                       nvout, lambda, nlambda, reports, &
                                                       failed_index) &
        bind(C, name="cdyn_batch_contact_rollout")
      import :: c_int, c_ptr, c_double, cdyn_contact_settings, cdyn_contact_report
      type(c_ptr), value :: problem
      type(c_ptr), intent(in) :: ws(*)
      integer(c_int), value :: nws, n, nsteps
      type(cdyn_contact_settings), intent(in), optional :: settings
      real(c_double), intent(in) :: q0(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v0(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(inout) :: q(*)
      integer(c_int), value :: nqout
      real(c_double), intent(inout) :: v(*)
      integer(c_int), value :: nvout
      real(c_double), intent(inout), optional :: lambda(*)
      integer(c_int), value :: nlambda
      type(cdyn_contact_report), intent(inout), optional :: reports(*)
      integer(c_int), intent(out), optional :: failed_index
    end function

    integer(c_int) function cdyn_pool_contact_rollout(problem, pool, ws, nws, n, nsteps, &
                                                      settings, q0, nq, v0, nv, tau, ntau, q, &
                                                      nqout, v, nvout, lambda, nlambda, reports, &
                                                      failed_index) &
        bind(C, name="cdyn_pool_contact_rollout")
      import :: c_int, c_ptr, c_double, cdyn_contact_settings, cdyn_contact_report
      type(c_ptr), value :: problem, pool
      type(c_ptr), intent(in) :: ws(*)
      integer(c_int), value :: nws, n, nsteps
      type(cdyn_contact_settings), intent(in), optional :: settings
      real(c_double), intent(in) :: q0(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v0(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(inout) :: q(*)
      integer(c_int), value :: nqout
      real(c_double), intent(inout) :: v(*)
      integer(c_int), value :: nvout
      real(c_double), intent(inout), optional :: lambda(*)
      integer(c_int), value :: nlambda
      type(cdyn_contact_report), intent(inout), optional :: reports(*)
      integer(c_int), intent(out), optional :: failed_index
    end function

    ! ---- Constrained-dynamics derivatives (clusterdyn.h "Constrained-dynamics derivatives") ----
    ! ny x ny matrices: ld_y x ny arrays; m x ny matrices: ld_m x ny arrays (column-major).
    ! Optional arguments may be omitted (the arrays with length 0, the matrices with any ld).

    integer(c_int) function cdyn_constrained_derivative_workspace_create(set, cws) &
        bind(C, name="cdyn_constrained_derivative_workspace_create")
      import :: c_int, c_ptr
      type(c_ptr), value :: set
      type(c_ptr), intent(out) :: cws
    end function

    integer(c_int) function cdyn_constrained_derivative_workspace_free(cws) &
        bind(C, name="cdyn_constrained_derivative_workspace_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: cws
    end function

    type(c_ptr) function cdyn_constrained_derivative_workspace_last_error(cws) &
        bind(C, name="cdyn_constrained_derivative_workspace_last_error")
      import :: c_ptr
      type(c_ptr), value :: cws
    end function

    integer(c_int) function cdyn_constrained_dynamics_derivatives(set, cws, q, nq, v, nv, &
        tau, ntau, fext, nfext, rank_tolerance, ydd, nydd, lambda, nlambda, dydd_dy, &
        dydd_dydot, dydd_dtau, ld_y, dlambda_dy, dlambda_dydot, dlambda_dtau, ld_m, rank) &
        bind(C, name="cdyn_constrained_dynamics_derivatives")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: set
      type(c_ptr), value :: cws
      real(c_double), intent(in) :: q(*)
      integer(c_int), value :: nq
      real(c_double), intent(in) :: v(*)
      integer(c_int), value :: nv
      real(c_double), intent(in) :: tau(*)
      integer(c_int), value :: ntau
      real(c_double), intent(in), optional :: fext(*)
      integer(c_int), value :: nfext
      real(c_double), value :: rank_tolerance
      real(c_double), intent(inout), optional :: ydd(*)
      integer(c_int), value :: nydd
      real(c_double), intent(inout), optional :: lambda(*)
      integer(c_int), value :: nlambda
      real(c_double), intent(inout) :: dydd_dy(*)
      real(c_double), intent(inout) :: dydd_dydot(*)
      real(c_double), intent(inout), optional :: dydd_dtau(*)
      integer(c_int), value :: ld_y
      real(c_double), intent(inout), optional :: dlambda_dy(*)
      real(c_double), intent(inout), optional :: dlambda_dydot(*)
      real(c_double), intent(inout), optional :: dlambda_dtau(*)
      integer(c_int), value :: ld_m
      integer(c_int), intent(out), optional :: rank
    end function
  end interface
end module clusterdyn
