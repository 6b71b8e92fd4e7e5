! The C API from Fortran (module clusterdyn): loads a robot, runs forward and inverse
! dynamics, checks rnea(aba(tau)) = tau and M ddq + nle = tau, checks an error status and its
! message; then in independent coordinates (the robot's loops and couplings): a closed state
! from (y, ydot), CE-ABA, CE-RNEA, H and C, G; and writes its inputs and results (17
! significant digits) for capi_fortran_check, which recomputes them with the C++ API.
! Usage: test_capi_fortran robot.urdf results.txt
program test_capi_fortran
  use, intrinsic :: iso_c_binding
  use clusterdyn
  use capi_test_support
  implicit none
  type(c_ptr) :: model, ws, cname
  character(len=1024) :: path, outpath
  character(kind=c_char) :: err(512)
  character(len=:), allocatable :: text
  integer(c_int) :: nq, nv, nb, nf, i, idx, jtype, iq, nqj, ny, nyq, ncl, kind, iters
  integer(c_size_t) :: needed
  character(kind=c_char), allocatable :: dump_text(:)
  real(c_double), allocatable :: qc(:), vc(:), y(:), ydot(:), tauy(:), tauy2(:), ydd(:), &
                                 ydd0(:), qdd(:), H(:, :), cbias(:), G(:, :), gbias(:)
  real(c_double) :: residual
  integer :: u
  real(c_double), allocatable :: q(:), dq(:), v(:), tau(:), tau2(:), fext(:), ddq(:), ddq0(:), &
                                 nle(:), M(:, :), J(:, :)
  real(c_double) :: R(3, 3), p(3), scale

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

  ! ---- independent coordinates (cluster tree) ----
  call expect(cdyn_model_ny(model, ny) == CDYN_OK, 'ny')
  call expect(cdyn_model_nyq(model, nyq) == CDYN_OK, 'nyq')
  call expect(cdyn_model_nclusters(model, ncl) == CDYN_OK, 'nclusters')
  allocate (qc(nq), vc(nv), y(nyq), ydot(ny), tauy(ny), tauy2(ny), ydd(ny), ydd0(ny), qdd(nv), &
            H(ny, ny), cbias(ny), G(nv, ny), gbias(nv))
  call expect(cdyn_model_describe_clusters(model, len=0_c_size_t, needed=needed) == CDYN_OK, &
              'describe size')
  allocate (dump_text(needed))
  call expect(cdyn_model_describe_clusters(model, dump_text, needed) == CDYN_OK, 'describe')
  print '(a, i0, a, i0, a, i0, a)', 'cluster tree: ', ncl, ' clusters, ny = ', ny, ', nyq = ', &
    nyq, ':'
  print '(4096a)', dump_text(1:needed - 1)
  call expect(cdyn_model_cluster_info(model, ncl - 1, kind=kind) == CDYN_OK, 'cluster info')
  call expect(kind >= CDYN_CLUSTER_UNCONSTRAINED .and. kind <= CDYN_CLUSTER_IMPLICIT, 'kind')
  ! A closed state: y of the reference configuration (loop coordinates moved by 0.2), ydot.
  call expect(cdyn_model_reference_configuration(model, qc, nq) == CDYN_OK, 'reference q')
  vc = 0
  call expect(cdyn_spanning_to_independent(model, ws, qc, nq, vc, nv, y, nyq, ydot, ny) == &
              CDYN_OK, 'spanning to independent')
  do i = 1, ny
    ydot(i) = 0.5_c_double*sin(0.7_c_double*i)
    tauy(i) = cos(1.0_c_double + i)
  end do
  call expect(cdyn_independent_to_spanning(model, ws, y, nyq, ydot, ny, nq_guess=0, q=qc, &
                                           nq=nq, v=vc, nv=nv) == CDYN_OK, 'to spanning')
  call expect(cdyn_last_loop_closure(model, ws, iters, residual) == CDYN_OK, 'last closure')
  call expect(residual <= 1e-12_c_double, 'closure residual')
  ! CE-ABA with external forces (and the spanning accelerations), then CE-RNEA gives tau back.
  call expect(cdyn_ce_aba(model, ws, qc, nq, vc, nv, tauy, ny, fext, 6*nb, ydd, ny, qdd, nv) == &
              CDYN_OK, 'ce_aba')
  call expect(cdyn_ce_rnea(model, ws, qc, nq, vc, nv, ydd, ny, fext, 6*nb, tauy2, ny, &
                           nqdd=0) == CDYN_OK, 'ce_rnea')
  scale = max(1.0_c_double, maxval(abs(tauy)))
  call expect(maxval(abs(tauy2 - tauy)) < 1e-9_c_double*scale, 'ce_rnea(ce_aba(tau)) = tau')
  print '(a, es10.3)', 'max |ce_rnea(ce_aba(tau)) - tau| = ', maxval(abs(tauy2 - tauy))
  ! Without external forces: H ydd0 + C = tau; G ydd0 + g = qdd.
  call expect(cdyn_ce_aba(model, ws, qc, nq, vc, nv, tauy, ny, nfext=0, ydd=ydd0, nydd=ny, &
                          nqdd=0) == CDYN_OK, 'ce_aba without fext')
  call expect(cdyn_cluster_mass_matrix(model, ws, qc, nq, H, ny) == CDYN_OK, 'H')
  call expect(cdyn_cluster_bias(model, ws, qc, nq, vc, nv, cbias, ny) == CDYN_OK, 'C')
  call expect(maxval(abs(matmul(H, ydd0) + cbias - tauy)) < 1e-9_c_double*scale, 'H ydd + C')
  print '(a, es10.3)', 'max |H ydd + C - tau|            = ', &
    maxval(abs(matmul(H, ydd0) + cbias - tauy))
  call expect(cdyn_constraint_matrices(model, ws, qc, nq, vc, nv, G, nv, gbias, nv) == CDYN_OK, &
              'G')
  call expect(cdyn_ce_aba(model, ws, qc, nq, vc, nv, tauy, ny, nfext=0, ydd=ydd0, nydd=ny, &
                          qdd=qdd, nqdd=nv) == CDYN_OK, 'ce_aba qdd')
  call expect(maxval(abs(matmul(G, ydd0) + gbias - qdd)) < 1e-9_c_double*(1 + maxval(abs(qdd))), &
              'G ydd + g = qdd')
  ! An error: a spanning velocity off the constraints (when the model has any).
  if (nv > ny) then
    call expect(cdyn_ce_aba(model, ws, qc, nq, vc + 1, nv, tauy, ny, nfext=0, ydd=ydd, nydd=ny, &
                            nqdd=0) == CDYN_ERR_CONSTRAINT_FAILURE, 'constraint failure')
    text = c_string(cdyn_workspace_last_error(ws))
    call expect(index(text, 'violates') > 0, 'constraint failure message')
  end if
  ! Recompute ydd with fext for the file (the last ydd was overwritten by the error check).
  call expect(cdyn_ce_aba(model, ws, qc, nq, vc, nv, tauy, ny, fext, 6*nb, ydd, ny, qdd, nv) == &
              CDYN_OK, 'ce_aba again')

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
  write (u, '(2i8)') ny, nyq
  call dump(y)
  call dump(ydot)
  call dump(tauy)
  call dump(qc)
  call dump(vc)
  call dump(ydd)
  call dump(qdd)
  call dump(ydd0)
  call dump(reshape(H, [ny*ny]))
  call dump(cbias)
  call dump(reshape(G, [nv*ny]))
  call dump(gbias)
  close (u)

  call expect(cdyn_workspace_free(ws) == CDYN_OK, 'workspace free')
  call expect(cdyn_model_free(model) == CDYN_OK, 'model free')
  if (failures > 0) error stop 'clusterdyn Fortran test failed'
  print '(a)', 'Fortran test passed'

contains

  subroutine dump(x)
    real(c_double), intent(in) :: x(:)
    integer :: k
    do k = 1, size(x)
      write (u, '(es25.16e3)') x(k)
    end do
  end subroutine

  function itoa(k) result(s)
    integer(c_int), intent(in) :: k
    character(len=:), allocatable :: s
    character(len=16) :: buf
    write (buf, '(i0)') k
    s = trim(buf)
  end function

end program test_capi_fortran
