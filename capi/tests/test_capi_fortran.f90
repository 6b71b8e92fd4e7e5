! The C API from Fortran (module clusterdyn): loads a robot, runs forward and inverse
! dynamics, checks rnea(aba(tau)) = tau and M ddq + nle = tau, checks an error status and its
! message, and writes its inputs and results (17 significant digits) for capi_fortran_check,
! which recomputes them with the C++ API.
! Usage: test_capi_fortran robot.urdf results.txt
program test_capi_fortran
  use, intrinsic :: iso_c_binding
  use clusterdyn
  implicit none
  type(c_ptr) :: model, ws, cname
  character(len=1024) :: path, outpath
  character(kind=c_char) :: err(512)
  character(len=:), allocatable :: text
  integer(c_int) :: nq, nv, nb, nf, i, idx, jtype, iq, nqj
  integer :: u, failures
  real(c_double), allocatable :: q(:), dq(:), v(:), tau(:), tau2(:), fext(:), ddq(:), ddq0(:), &
                                 nle(:), M(:, :), J(:, :)
  real(c_double) :: R(3, 3), p(3), scale

  failures = 0
  call get_command_argument(1, path)
  call get_command_argument(2, outpath)
  call expect(cdyn_check_version(CDYN_ABI_VERSION) == CDYN_OK, 'check_version')
  call expect(cdyn_version() == CDYN_VERSION_NUMBER, 'version number')

  call expect(cdyn_model_load(CDYN_ABI_VERSION, trim(path)//c_null_char, 0, model=model, &
                              err=err, errlen=size(err, kind=c_size_t)) == CDYN_OK, 'load')
  call expect(cdyn_workspace_create(model, ws) == CDYN_OK, 'workspace')
  call expect(cdyn_model_nq(model, nq) == CDYN_OK, 'nq')
  call expect(cdyn_model_nv(model, nv) == CDYN_OK, 'nv')
  call expect(cdyn_model_nbodies(model, nb) == CDYN_OK, 'nbodies')
  call expect(cdyn_model_nframes(model, nf) == CDYN_OK, 'nframes')
  allocate (q(nq), dq(nv), v(nv), tau(nv), tau2(nv), fext(6*nb), ddq(nv), ddq0(nv), nle(nv), &
            M(nv, nv), J(6, nv))

  ! Names: the last joint's name leads back to its index; its coordinates are in range.
  call expect(cdyn_model_joint_name(model, nb - 1, cname) == CDYN_OK, 'joint name')
  text = c_string(cname)
  call expect(len(text) > 0, 'joint name not empty')
  call expect(cdyn_model_joint_index(model, text//c_null_char, idx) == CDYN_OK, 'joint index')
  call expect(idx == nb - 1, 'joint index round trip')
  call expect(cdyn_model_joint_type(model, idx, jtype) == CDYN_OK, 'joint type')
  call expect(jtype >= CDYN_JOINT_REVOLUTE .and. jtype <= CDYN_JOINT_FIXED, 'joint type range')
  call expect(cdyn_model_joint_coordinates(model, idx, idx_q=iq, nq=nqj) == CDYN_OK, 'coords')
  call expect(iq + nqj == nq, 'last joint owns the last coordinates')

  ! A state.
  call expect(cdyn_neutral_configuration(model, ws, q, nq) == CDYN_OK, 'neutral')
  do i = 1, nv
    dq(i) = sin(real(i, c_double))
    v(i) = cos(0.5_c_double*(i - 1))
    tau(i) = 0.3_c_double*(i - 1) - 1.0_c_double
  end do
  do i = 1, 6*nb
    fext(i) = 0.1_c_double*sin(real(i - 1, c_double))
  end do
  call expect(cdyn_integrate(model, ws, q, nq, dq, nv, 0.7_c_double, q, nq) == CDYN_OK, 'integ')

  ! Forward then inverse dynamics, with external forces.
  call expect(cdyn_aba(model, ws, q, nq, v, nv, tau, nv, fext, 6*nb, ddq, nv) == CDYN_OK, 'aba')
  call expect(cdyn_rnea(model, ws, q, nq, v, nv, ddq, nv, fext, 6*nb, tau2, nv) == CDYN_OK, &
              'rnea')
  scale = max(1.0_c_double, maxval(abs(tau)))
  call expect(maxval(abs(tau2 - tau)) < 1e-9_c_double*scale, 'rnea(aba(tau)) = tau')
  print '(a, es10.3)', 'max |rnea(aba(tau)) - tau|  = ', maxval(abs(tau2 - tau))
  ! Without: M ddq0 + nle = tau.
  call expect(cdyn_aba(model, ws, q, nq, v, nv, tau, nv, nfext=0, ddq=ddq0, nddq=nv) == CDYN_OK, &
              'aba without fext')
  call expect(cdyn_crba(model, ws, q, nq, M, nv) == CDYN_OK, 'crba')
  call expect(cdyn_nonlinear_effects(model, ws, q, nq, v, nv, nle, nv) == CDYN_OK, 'nle')
  call expect(maxval(abs(matmul(M, ddq0) + nle - tau)) < 1e-9_c_double*scale, 'M ddq + nle')
  print '(a, es10.3)', 'max |M ddq + nle - tau|     = ', maxval(abs(matmul(M, ddq0) + nle - tau))

  ! Kinematics of the last frame (J in a 6 x nv Fortran array: ldj = 6).
  call expect(cdyn_forward_kinematics(model, ws, q, nq, nv=0, na=0) == CDYN_OK, 'fk')
  call expect(cdyn_frame_placement(model, ws, nf - 1, R, 3, p) == CDYN_OK, 'placement')
  call expect(cdyn_frame_jacobian(model, ws, nf - 1, CDYN_LOCAL_WORLD_ALIGNED, J, 6) == CDYN_OK, &
              'jacobian')

  ! An error: a status and the workspace's message.
  call expect(cdyn_aba(model, ws, q, nq - 1, v, nv, tau, nv, nfext=0, ddq=ddq0, nddq=nv) == &
              CDYN_ERR_INVALID_SIZE, 'size error status')
  text = c_string(cdyn_workspace_last_error(ws))
  call expect(text == 'q has length '//itoa(nq - 1)//', expected '//itoa(nq), 'error message')

  open (newunit=u, file=trim(outpath), status='replace', action='write')
  write (u, '(3i8)') nq, nv, nb
  call dump(q)
  call dump(v)
  call dump(tau)
  call dump(fext)
  call dump(ddq)
  call dump(ddq0)
  call dump(reshape(M, [nv*nv]))
  call dump(p)
  call dump(reshape(R, [9]))
  call dump(reshape(J, [6*nv]))
  close (u)

  call expect(cdyn_workspace_free(ws) == CDYN_OK, 'workspace free')
  call expect(cdyn_model_free(model) == CDYN_OK, 'model free')
  if (failures > 0) error stop 'clusterdyn Fortran test failed'
  print '(a)', 'Fortran test passed'

contains

  subroutine expect(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      failures = failures + 1
      print '(2a)', 'FAILED: ', what
    end if
  end subroutine

  subroutine dump(x)
    real(c_double), intent(in) :: x(:)
    integer :: k
    do k = 1, size(x)
      write (u, '(es25.16e3)') x(k)
    end do
  end subroutine

  function c_string(ptr) result(s)  ! copy of a NUL-terminated C string
    type(c_ptr), intent(in) :: ptr
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    call c_f_pointer(ptr, chars, [4096])
    n = 0
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate (character(len=n) :: s)
    s = transfer(chars(1:n), s)
  end function

  function itoa(k) result(s)
    integer(c_int), intent(in) :: k
    character(len=:), allocatable :: s
    character(len=16) :: buf
    write (buf, '(i0)') k
    s = trim(buf)
  end function

end program test_capi_fortran
