! The contact functions of the C API from Fortran (module clusterdyn): cd_parallel_walker (a
! floating trunk on four parallelogram legs, implicit loops) with four sphere feet on the ground.
! One step in free fall: no impulse, no active contact, the trunk's vertical velocity -g dt; one
! step with the feet in the ground: positive normal impulses inside the friction cones, the loops
! closed; the bind(C) settings and report types cross the boundary; a wrong length is refused
! with its message. Usage: test_capi_contact_fortran cd_parallel_walker.urdf
program test_capi_contact_fortran
  use, intrinsic :: iso_c_binding
  use clusterdyn
  use capi_test_support
  implicit none
  type(c_ptr) :: model, problem, ws
  character(len=2), parameter :: legs(4) = [character(len=2) :: 'lf', 'rf', 'lh', 'rh']
  integer(c_int) :: nq, nv, ny, nc, nb, m, k, body, idx
  real(c_double), allocatable :: q(:), v(:), tau(:), qout(:), vout(:), lambda(:)
  real(c_double) :: centre(3), gravity(3)
  type(cdyn_contact_settings) :: settings
  type(cdyn_contact_report) :: report

  call open_model(1, model, nq, nv, ny)  ! a floating base
  call expect(cdyn_contact_problem_create(model, problem) == CDYN_OK, 'problem')
  centre = [0.03_c_double, 0.0_c_double, -0.05_c_double]
  do k = 1, 4
    call expect(cdyn_model_body_index(model, legs(k)//'_coupler'//c_null_char, body) == CDYN_OK, &
                'body index')
    call expect(cdyn_contact_problem_add_foot(problem, legs(k)//'_foot'//c_null_char, body, &
                                              centre, 3, 0.02_c_double, 0.8_c_double, &
                                              idx) == CDYN_OK, 'add foot')
    call expect(idx == k - 1, 'foot index')
  end do
  call expect(cdyn_contact_problem_sizes(problem, nc, nb, m) == CDYN_OK, 'sizes')
  call expect(nc == 4 .and. nb == 0 .and. m == 12, 'four feet, twelve rows')
  call expect(cdyn_contact_workspace_create(problem, ws) == CDYN_OK, 'workspace')
  call expect(cdyn_model_gravity(model, gravity) == CDYN_OK, 'gravity')
  allocate (q(nq), v(nv), tau(ny), qout(nq), vout(nv), lambda(m))
  call expect(cdyn_contact_settings_default(settings) == CDYN_OK, 'settings')
  call expect(settings%solver == CDYN_CONTACT_ADMM .and. settings%warm_start == 1, 'defaults')
  settings%max_iterations = 5000
  tau = 0

  ! Free fall: the trunk 1 m up, nothing in contact.
  call expect(cdyn_model_reference_configuration(model, q, nq) == CDYN_OK, 'reference')
  q(3) = 1.0_c_double
  v = 0
  call expect(cdyn_contact_step(problem, ws, q, nq, v, nv, tau, ny, settings, qout, nq, vout, nv, &
                                lambda, m, report) == CDYN_OK, 'free-fall step')
  call expect(report%status == CDYN_OK .and. report%active_contacts == 0, 'no active contact')
  call expect(maxval(abs(lambda)) == 0, 'no impulse in free fall')
  ! floating base v = (body angular, body linear velocity); the trunk is not rotated
  call expect(abs(vout(6) - gravity(3) * settings%dt) < 1e-12_c_double, 'v_z = g dt')

  ! The feet in the ground (trunk low): normal impulses > 0 inside the cones, converged.
  q(3) = 0.25_c_double
  call expect(cdyn_contact_workspace_reset(problem, ws) == CDYN_OK, 'reset')
  call expect(cdyn_contact_step(problem, ws, q, nq, v, nv, tau, ny, settings, qout, nq, vout, nv, &
                                lambda, m, report) == CDYN_OK, 'contact step')
  call expect(report%converged == 1 .and. report%active_contacts == 4, 'four active feet')
  call expect(max(report%primal_residual, report%dual_residual, report%complementarity) &
              <= settings%tolerance, 'residuals below the tolerance')
  do k = 0, 3
    call expect(lambda(3 * k + 3) > 0, 'normal impulse > 0')
    call expect(hypot(lambda(3 * k + 1), lambda(3 * k + 2)) <= 0.8_c_double * lambda(3 * k + 3) &
                + 1e-12_c_double, 'impulse in the friction cone')
  end do

  ! A wrong length: refused, named, nothing written.
  qout = -7
  call expect(cdyn_contact_step(problem, ws, q, nq - 1, v, nv, tau, ny, settings, qout, nq, vout, &
                                nv, lambda, m) == CDYN_ERR_INVALID_SIZE, 'wrong nq refused')
  call expect(index(c_string(cdyn_contact_workspace_last_error(ws)), 'q has length') > 0, &
              'message names q')
  call expect(all(qout == -7), 'outputs untouched')

  call expect(cdyn_contact_workspace_free(ws) == CDYN_OK, 'free workspace')
  call expect(cdyn_contact_problem_free(problem) == CDYN_OK, 'free problem')
  call expect(cdyn_model_free(model) == CDYN_OK, 'free model')
  if (failures > 0) then
    print '(i0,a)', failures, ' check(s) failed'
    error stop 1
  end if
  print '(a)', 'contact Fortran test passed'

end program test_capi_contact_fortran
