! The constraint functions of the C API from Fortran (module clusterdyn): a quadruped on four
! point contacts; the Delassus matrix is symmetric with a positive diagonal and reproduces
! J H^-1 J^T applied to a vector; constrainedABA and proxPV agree (the bind(C) settings and
! result types cross the boundary); a wrong row count is refused with its message.
! Usage: test_capi_constraints_fortran cd_quadruped.urdf
program test_capi_constraints_fortran
  use, intrinsic :: iso_c_binding
  use clusterdyn
  use capi_test_support
  implicit none
  type(c_ptr) :: model, ws, cset, cws, cname, cdws
  character(len=8), parameter :: feet(4) = [character(len=8) :: 'lf_foot', 'rf_foot', &
                                            'lh_foot', 'rh_foot']
  integer(c_int) :: nq, nv, ny, m, k, idx, rank
  real(c_double), allocatable :: q(:), v(:), tau(:), ydd(:), ydd2(:), lambda(:), lambda2(:), &
                                 dmat(:, :), jmat(:, :), hmat(:, :), x(:), hx(:), &
                                 wrench(:, :), dy(:, :), dyd(:, :), dtau(:, :), dlam(:, :)
  type(cdyn_proximal_settings) :: settings
  type(cdyn_proximal_result) :: result
  integer :: info

  call open_model(0, model, nq, nv, ny)
  call expect(cdyn_workspace_create(model, ws) == CDYN_OK, 'workspace')
  call expect(cdyn_constraint_set_create(model, cset) == CDYN_OK, 'set')
  do k = 1, 4
    call expect(cdyn_constraint_set_add_contact(cset, trim(feet(k))//c_null_char, &
                                                CDYN_CONSTRAINT_POINT, CDYN_LOCAL, &
                                                index=idx) == CDYN_OK, 'add contact')
    call expect(idx == k - 1, 'contact index')
  end do
  call expect(cdyn_constraint_workspace_create(model, cset, cws) == CDYN_OK, 'workspace')
  call expect(cdyn_constraint_set_nrows(cset, m) == CDYN_OK, 'nrows')
  call expect(m == 12, 'twelve rows')
  call expect(cdyn_constraint_set_row_name(cset, 2, cname) == CDYN_OK, 'row name')
  call expect(c_string(cname) == 'lf_foot_contact3d:lin_z', 'row name text')
  allocate (q(nq), v(nv), tau(ny), ydd(ny), ydd2(ny), lambda(m), lambda2(m), dmat(m, m), &
            jmat(m, ny), hmat(ny, ny), x(ny), hx(ny), wrench(6, 4))
  call expect(cdyn_model_reference_configuration(model, q, nq) == CDYN_OK, 'reference')
  v = 0
  tau = 0.5_c_double

  ! D = J H^-1 J^T: check D e1 = J x with H x = J^T e1 (x from the relation H x = J(1, :)).
  call expect(cdyn_delassus_matrix(cset, cws, q, dmat, m) == CDYN_OK, 'delassus')
  call expect(cdyn_constraint_jacobian(cset, cws, q, v, m, jmat, m) == CDYN_OK, 'jacobian')
  call expect(cdyn_cluster_mass_matrix(model, ws, q, nq, hmat, ny) == CDYN_OK, 'H')
  call expect(maxval(abs(dmat - transpose(dmat))) < 1e-12_c_double, 'D symmetric')
  x = jmat(1, :)
  call solve_spd(hmat, x, info)
  call expect(info == 0, 'H positive definite')
  call expect(maxval(abs(matmul(jmat, x) - dmat(:, 1))) < 1e-9_c_double, 'D = J H^-1 J^T')

  call expect(cdyn_proximal_settings_default(settings) == CDYN_OK, 'settings')
  call expect(settings%max_iterations == 50 .and. settings%warm_start == 0, 'default settings')
  call expect(cdyn_constrained_aba(cset, cws, q, v, tau, settings=settings, ydd=ydd, &
                                   lambda=lambda, m=m, result=result) == CDYN_OK, 'aba')
  call expect(result%converged == 1 .and. result%status == CDYN_OK, 'aba result')
  call expect(cdyn_prox_pv(cset, cws, q, v, tau, ydd=ydd2, lambda=lambda2, m=m) == CDYN_OK, &
              'prox_pv')
  call expect(maxval(abs(ydd - ydd2)) < 1e-8_c_double, 'ydd: constrainedABA = proxPV')
  call expect(maxval(abs(lambda - lambda2)) < 1e-6_c_double, 'lambda: constrainedABA = proxPV')
  call expect(cdyn_prox_pv(cset, cws, q, v, tau, ydd=ydd2, lambda=lambda2, m=m - 1) &
              == CDYN_ERR_INVALID_SIZE, 'wrong m')
  call expect(index(c_string(cdyn_constraint_workspace_last_error(cws)), &
                    "expected the set's row count 12") > 0, 'wrong m message')
  print '(a, 12f10.4)', 'lambda = ', lambda
  ! Point contacts in their LOCAL frames: the wrench at the foot is [0; lambda of its rows].
  call expect(cdyn_constraint_wrenches(cset, cws, wrench, 6) == CDYN_OK, 'wrenches')
  do k = 1, 4
    call expect(maxval(abs(wrench(1:3, k))) <= 0 .and. &
                maxval(abs(wrench(4:6, k) - lambda2(3 * k - 2:3 * k))) < 1e-12_c_double, &
                'contact wrench = multipliers')
  end do
  call expect(cdyn_constraint_wrenches(cset, cws, wrench, 5) == CDYN_ERR_INVALID_SIZE, 'ldw < 6')

  ! Constrained-dynamics derivatives: ydd of the exact solve = constrainedABA's, rank m, and the
  ! rows hold under a change of tau (J dydd/dtau = 0); a short ld_y is named.
  allocate (dy(ny, ny), dyd(ny, ny), dtau(ny, ny), dlam(m, ny))
  call expect(cdyn_constrained_derivative_workspace_create(cset, cdws) == CDYN_OK, 'cd workspace')
  call expect(cdyn_constrained_dynamics_derivatives(cset, cdws, q, nq, v, nv, tau, ny, &
                                                    nfext=0, rank_tolerance=0.0_c_double, &
                                                    ydd=ydd2, nydd=ny, nlambda=0, &
                                                    dydd_dy=dy, dydd_dydot=dyd, &
                                                    dydd_dtau=dtau, ld_y=ny, dlambda_dtau=dlam, &
                                                    ld_m=m, rank=rank) == CDYN_OK, &
              'constrained derivatives')
  call expect(maxval(abs(ydd - ydd2)) < 1e-8_c_double, 'ydd: derivatives = constrainedABA')
  call expect(rank == m, 'rank m')
  call expect(maxval(abs(matmul(jmat, dtau))) < 1e-9_c_double * max(1.0_c_double, &
              maxval(abs(dtau))), 'J dydd/dtau = 0')
  call expect(cdyn_constrained_dynamics_derivatives(cset, cdws, q, nq, v, nv, tau, ny, &
                                                    nfext=0, rank_tolerance=0.0_c_double, &
                                                    nydd=0, nlambda=0, dydd_dy=dy, &
                                                    dydd_dydot=dyd, ld_y=ny - 1, ld_m=m) &
              == CDYN_ERR_INVALID_SIZE, 'short ld_y')
  call expect(index(c_string(cdyn_constrained_derivative_workspace_last_error(cdws)), 'ld_y') &
              > 0, 'short ld_y message')
  call expect(cdyn_constrained_derivative_workspace_free(cdws) == CDYN_OK, 'free')

  call expect(cdyn_constraint_workspace_free(cws) == CDYN_OK, 'free')
  call expect(cdyn_constraint_set_free(cset) == CDYN_OK, 'free')
  call expect(cdyn_workspace_free(ws) == CDYN_OK, 'free')
  call expect(cdyn_model_free(model) == CDYN_OK, 'free')
  if (failures > 0) stop 1

contains

  subroutine solve_spd(a, b, info)  ! b <- a^-1 b by Cholesky (a symmetric positive definite)
    real(c_double), intent(in) :: a(:, :)
    real(c_double), intent(inout) :: b(:)
    integer, intent(out) :: info
    real(c_double) :: l(size(b), size(b))
    integer :: i, j, n
    n = size(b)
    l = 0
    info = 0
    do j = 1, n
      l(j, j) = a(j, j) - sum(l(j, 1:j - 1)**2)
      if (l(j, j) <= 0) then
        info = j
        return
      end if
      l(j, j) = sqrt(l(j, j))
      do i = j + 1, n
        l(i, j) = (a(i, j) - sum(l(i, 1:j - 1)*l(j, 1:j - 1)))/l(j, j)
      end do
    end do
    do i = 1, n
      b(i) = (b(i) - sum(l(i, 1:i - 1)*b(1:i - 1)))/l(i, i)
    end do
    do i = n, 1, -1
      b(i) = (b(i) - sum(l(i + 1:n, i)*b(i + 1:n)))/l(i, i)
    end do
  end subroutine

end program test_capi_constraints_fortran
