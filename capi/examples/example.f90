! clusterdyn Fortran example: load a robot, run forward and inverse dynamics.
! Usage: example_fortran path/to/robot.urdf
program example
  use, intrinsic :: iso_c_binding
  use clusterdyn
  implicit none
  type(c_ptr) :: model, ws
  character(len=512) :: path
  character(kind=c_char) :: err(512)
  integer(c_int) :: nq, nv, status
  real(c_double), allocatable :: q(:), v(:), tau(:), ddq(:), tau2(:), M(:, :)

  call get_command_argument(1, path)
  status = cdyn_model_load(CDYN_ABI_VERSION, trim(path)//c_null_char, 0, &
                           model=model, err=err, errlen=size(err, kind=c_size_t))
  if (status /= CDYN_OK) then
    print '(a, 512a)', 'cannot load the model: ', err(1:index_of_nul(err) - 1)
    stop 1
  end if
  call ok(cdyn_workspace_create(model, ws))
  call ok(cdyn_model_nq(model, nq))
  call ok(cdyn_model_nv(model, nv))
  allocate (q(nq), v(nv), tau(nv), ddq(nv), tau2(nv), M(nv, nv))

  call ok(cdyn_neutral_configuration(model, ws, q, nq))
  v = 0.5_c_double
  tau = 1.0_c_double
  call ok(cdyn_integrate(model, ws, q, nq, v, nv, 0.2_c_double, q, nq))

  ! Forward dynamics (no external forces: the optional fext is omitted, its length is 0).
  call ok(cdyn_aba(model, ws, q, nq, v, nv, tau, nv, nfext=0, ddq=ddq, nddq=nv))
  ! Inverse dynamics of the result gives tau back; so does M ddq + nle.
  call ok(cdyn_rnea(model, ws, q, nq, v, nv, ddq, nv, nfext=0, tau=tau2, ntau=nv))
  print '(a, es10.3)', 'max |rnea(aba(tau)) - tau| = ', maxval(abs(tau2 - tau))
  call ok(cdyn_crba(model, ws, q, nq, M, nv))  ! Fortran arrays are column-major: ldm = nv
  call ok(cdyn_nonlinear_effects(model, ws, q, nq, v, nv, tau2, nv))
  print '(a, es10.3)', 'max |M ddq + nle - tau|    = ', maxval(abs(matmul(M, ddq) + tau2 - tau))

  call ok(cdyn_workspace_free(ws))
  call ok(cdyn_model_free(model))

contains

  subroutine ok(s)  ! stops with the status text on failure
    integer(c_int), intent(in) :: s
    character(kind=c_char), pointer :: text(:)
    if (s == CDYN_OK) return
    call c_f_pointer(cdyn_status_string(s), text, [64])
    print '(a, 64a)', 'clusterdyn error: ', text(1:index_of_nul(text) - 1)
    stop 1
  end subroutine

  integer function index_of_nul(chars)  ! position of the terminating NUL of a C string
    character(kind=c_char), intent(in) :: chars(:)
    do index_of_nul = 1, size(chars)
      if (chars(index_of_nul) == c_null_char) return
    end do
  end function

end program example
