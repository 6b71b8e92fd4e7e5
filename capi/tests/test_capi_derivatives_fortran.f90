! The derivative interfaces of the Fortran module: a derivative workspace, cdyn_ce_aba_derivatives
! on a closed state (dydd_dy, dydd_dydot and H^-1 as ny x ny Fortran arrays, ld = ny), checked by
! H^-1 H = I against cdyn_cluster_mass_matrix, the value ydd against cdyn_ce_aba, a central
! difference of d ydd / d ydot (CE-ABA is quadratic in ydot, so exact up to rounding), the
! batched form against the single call, and a refused leading dimension with its message.
! Usage: capi_derivatives_fortran_test model.urdf
program test_capi_derivatives_fortran
  use, intrinsic :: iso_c_binding
  use clusterdyn
  use capi_test_support
  implicit none
  type(c_ptr) :: model, ws, dws, both(1)
  integer(c_int) :: nq, nv, ny, nyq, i, j, status
  real(c_double), allocatable :: q(:), v(:), y(:), ydot(:), tau(:), ydd(:), ydd2(:), yp(:), &
                                 ym(:), qp(:), vp(:), dy(:, :), dyd(:, :), hinv(:, :), h(:, :), &
                                 bdy(:, :), bdyd(:, :)
  real(c_double) :: err
  integer :: bad = 0

  call open_model(0, model, nq, nv, ny)
  call ok(cdyn_model_nyq(model, nyq))
  allocate (q(nq), v(nv), y(nyq), ydot(ny), tau(ny), ydd(ny), ydd2(ny), yp(ny), ym(ny), qp(nq), &
            vp(nv), dy(ny, ny), dyd(ny, ny), hinv(ny, ny), h(ny, ny), bdy(ny, ny), bdyd(ny, ny))
  call ok(cdyn_workspace_create(model, ws))
  call ok(cdyn_derivative_workspace_create(model, dws))
  call ok(cdyn_model_reference_configuration(model, q, nq))
  v = 0
  call ok(cdyn_spanning_to_independent(model, ws, q, nq, v, nv, y, nyq, ydot, ny))
  do i = 1, ny
    ydot(i) = 0.3_c_double - 0.05_c_double * i
    tau(i) = 0.1_c_double * i
  end do
  call ok(cdyn_independent_to_spanning(model, ws, y, nyq, ydot, ny, q, nq, q, nq, v, nv))

  call ok(cdyn_ce_aba_derivatives(model, dws, q, nq, v, nv, tau, ny, nfext=0, ydd=ydd, &
                                  nydd=ny, dydd_dy=dy, dydd_dydot=dyd, hinv=hinv, ld=max(1, ny)))
  call ok(cdyn_ce_aba(model, ws, q, nq, v, nv, tau, ny, nfext=0, ydd=ydd2, nydd=ny, nqdd=0))
  if (any(ydd /= ydd2)) bad = bad + 1
  call ok(cdyn_cluster_mass_matrix(model, ws, q, nq, h, max(1, ny)))
  err = 0
  do j = 1, ny
    do i = 1, ny
      err = max(err, abs(dot_product(hinv(i, :), h(:, j)) - merge(1.0_c_double, 0.0_c_double, &
                                                                     i == j)))
    end do
  end do
  if (err > 1e-9_c_double) bad = bad + 1
  ! d ydd / d ydot column j by a central difference at fixed y.
  err = 0
  do j = 1, ny
    ydot(j) = ydot(j) + 0.1_c_double
    call ok(cdyn_independent_to_spanning(model, ws, y, nyq, ydot, ny, q, nq, qp, nq, vp, nv))
    call ok(cdyn_ce_aba(model, ws, qp, nq, vp, nv, tau, ny, nfext=0, ydd=yp, nydd=ny, nqdd=0))
    ydot(j) = ydot(j) - 0.2_c_double
    call ok(cdyn_independent_to_spanning(model, ws, y, nyq, ydot, ny, q, nq, qp, nq, vp, nv))
    call ok(cdyn_ce_aba(model, ws, qp, nq, vp, nv, tau, ny, nfext=0, ydd=ym, nydd=ny, nqdd=0))
    ydot(j) = ydot(j) + 0.1_c_double
    err = max(err, maxval(abs((yp - ym) / 0.2_c_double - dyd(:, j))))
  end do
  if (err > 1e-7_c_double * max(1.0_c_double, maxval(abs(dyd)))) bad = bad + 1
  ! The batched form (one state, one workspace) equals the single call.
  both(1) = dws
  call ok(cdyn_batch_ce_aba_derivatives(model, both, 1, 1, CDYN_BATCH_ROW_MAJOR, q, nq, v, nv, &
                                        tau, ny, nfext=0, nydd=0, dydd_dy=bdy, ndy=ny * ny, &
                                        dydd_dydot=bdyd, ndydot=ny * ny, nhinv=0))
  if (any(bdy /= dy) .or. any(bdyd /= dyd)) bad = bad + 1
  ! A leading dimension below ny is refused with a message naming ld.
  status = cdyn_ce_aba_derivatives(model, dws, q, nq, v, nv, tau, ny, nfext=0, nydd=0, &
                                   dydd_dy=dy, dydd_dydot=dyd, ld=ny - 1)
  if (status /= CDYN_ERR_INVALID_SIZE) bad = bad + 1
  if (index(c_string(cdyn_derivative_workspace_last_error(dws)), 'ld is') /= 1) bad = bad + 1

  call ok(cdyn_derivative_workspace_free(dws))
  call ok(cdyn_workspace_free(ws))
  call ok(cdyn_model_free(model))
  print '(a, i0, a, i0)', 'Fortran derivative interfaces: ny = ', ny, ', mismatches: ', bad
  if (bad /= 0) stop 1

end program test_capi_derivatives_fortran
