! The batch interfaces of the Fortran module: states stored one per column, Q(nq, n), are the
! CDYN_BATCH_ROW_MAJOR layout; one per row, Q(n, nq), CDYN_BATCH_COL_MAJOR. The pool and
! caller-workspace batches must equal cdyn_ce_aba / cdyn_cluster_mass_matrix state by state.
! Usage: capi_batch_fortran_test model.urdf
program test_capi_batch_fortran
  use, intrinsic :: iso_c_binding
  use clusterdyn
  use capi_test_support
  implicit none
  integer, parameter :: n = 11
  type(c_ptr) :: model, pool, ws(2)
  integer(c_int) :: nq, nv, ny, i, failed, status
  real(c_double), allocatable :: q0(:), Q(:, :), V(:, :), T(:, :), YB(:, :), YB2(:, :), &
                                 QT(:, :), VT(:, :), TT(:, :), YBT(:, :), HB(:, :), y1(:), hs(:)
  integer :: bad = 0

  call open_model(0, model, nq, nv, ny)
  allocate (q0(nq), Q(nq, n), V(nv, n), T(ny, n), YB(ny, n), YB2(ny, n), y1(ny), HB(ny * ny, n), &
            hs(ny * ny))
  call ok(cdyn_model_reference_configuration(model, q0, nq))
  do i = 1, n  ! closed states: reference configuration at rest, different efforts
    Q(:, i) = q0
    V(:, i) = 0
    T(:, i) = 0.1_c_double * i
  end do
  call ok(cdyn_pool_create(model, 2, pool))
  call ok(cdyn_workspace_create(model, ws(1)))
  call ok(cdyn_workspace_create(model, ws(2)))

  call ok(cdyn_pool_ce_aba(model, pool, n, CDYN_BATCH_ROW_MAJOR, Q, nq, V, nv, T, ny, nfext=0, &
                           ydd=YB, nydd=ny, nqdd=0, failed_index=failed))
  if (failed /= -1) bad = bad + 1
  call ok(cdyn_batch_ce_aba(model, ws, 2, n, CDYN_BATCH_ROW_MAJOR, Q, nq, V, nv, T, ny, &
                            nfext=0, ydd=YB2, nydd=ny, nqdd=0))
  call ok(cdyn_pool_cluster_mass_matrix(model, pool, n, CDYN_BATCH_ROW_MAJOR, Q, nq, HB, ny * ny))
  do i = 1, n
    call ok(cdyn_ce_aba(model, ws(1), Q(:, i), nq, V(:, i), nv, T(:, i), ny, nfext=0, ydd=y1, &
                        nydd=ny, nqdd=0))
    if (any(y1 /= YB(:, i)) .or. any(y1 /= YB2(:, i))) bad = bad + 1
    call ok(cdyn_cluster_mass_matrix(model, ws(1), Q(:, i), nq, hs, max(1, ny)))
    if (any(hs /= HB(:, i))) bad = bad + 1
  end do
  ! One state per row: the column-major layout gives the same numbers.
  QT = transpose(Q)
  VT = transpose(V)
  TT = transpose(T)
  allocate (YBT(n, ny))
  call ok(cdyn_pool_ce_aba(model, pool, n, CDYN_BATCH_COL_MAJOR, QT, nq, VT, nv, TT, ny, &
                           nfext=0, ydd=YBT, nydd=ny, nqdd=0))
  if (any(transpose(YBT) /= YB)) bad = bad + 1
  ! A failed state is reported by index.
  VT(4, 1) = ieee_nan()
  status = cdyn_pool_ce_aba(model, pool, n, CDYN_BATCH_COL_MAJOR, QT, nq, VT, nv, TT, ny, &
                            nfext=0, ydd=YBT, nydd=ny, nqdd=0, failed_index=failed)
  if (status /= CDYN_ERR_NON_FINITE .or. failed /= 3) bad = bad + 1

  call ok(cdyn_pool_free(pool))
  call ok(cdyn_workspace_free(ws(1)))
  call ok(cdyn_workspace_free(ws(2)))
  call ok(cdyn_model_free(model))
  print '(a, i0, a, i0)', 'Fortran batch interfaces: ', n, ' states, mismatches: ', bad
  if (bad /= 0) stop 1

contains

  real(c_double) function ieee_nan()
    use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
    ieee_nan = ieee_value(0.0_c_double, ieee_quiet_nan)
  end function

end program test_capi_batch_fortran
