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
!                                       fext, the outputs of cdyn_model_joint_coordinates)
! Indices are 0-based as in C. The module holds interfaces and constants only: programs link
! with -lclusterdyn and need no object file of this module.
module clusterdyn
  use, intrinsic :: iso_c_binding, only: c_int, c_double, c_size_t, c_char, c_ptr
  implicit none
  private :: c_int, c_double, c_size_t, c_char, c_ptr

  ! Version of the header this module mirrors.
  integer(c_int), parameter, public :: CDYN_VERSION_MAJOR = 0
  integer(c_int), parameter, public :: CDYN_VERSION_MINOR = 1
  integer(c_int), parameter, public :: CDYN_VERSION_PATCH = 0
  integer(c_int), parameter, public :: CDYN_VERSION_NUMBER = 100
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

  end interface
end module clusterdyn
