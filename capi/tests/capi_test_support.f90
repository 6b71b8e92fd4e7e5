! What the Fortran tests of the C API share: the failure counter with its check, the
! stop-on-error check of a status, C strings, and the model named by the first command-line
! argument with its sizes.
module capi_test_support
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_ptr, c_null_char, c_size_t, &
                                         c_f_pointer
  use clusterdyn, only: cdyn_model_load, cdyn_model_nq, cdyn_model_nv, cdyn_model_ny, &
                        CDYN_ABI_VERSION, CDYN_OK
  implicit none
  private
  public :: failures, expect, ok, c_string, open_model

  integer :: failures = 0  ! checks of expect that failed

contains

  subroutine expect(condition, what)  ! counts and names a failed check, goes on
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
      print '(2a)', 'FAILED: ', what
      failures = failures + 1
    end if
  end subroutine

  subroutine ok(s)  ! stops the program unless the call succeeded
    integer(c_int), intent(in) :: s
    if (s /= CDYN_OK) then
      print '(a, i0)', 'clusterdyn call failed with status ', s
      stop 1
    end if
  end subroutine

  function c_string(p) result(s)  ! copy of a NUL-terminated C string
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    call c_f_pointer(p, chars, [4096])
    n = 0
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate (character(len=n) :: s)
    s = transfer(chars(1:n), s)
  end function

  subroutine open_model(flags, model, nq, nv, ny)  ! the model file given as first argument
    integer(c_int), intent(in) :: flags
    type(c_ptr), intent(out) :: model
    integer(c_int), intent(out) :: nq, nv, ny
    character(len=1024) :: path
    call get_command_argument(1, path)
    call ok(cdyn_model_load(CDYN_ABI_VERSION, trim(path)//c_null_char, flags, model=model, &
                            errlen=0_c_size_t))
    call ok(cdyn_model_nq(model, nq))
    call ok(cdyn_model_nv(model, nv))
    call ok(cdyn_model_ny(model, ny))
  end subroutine

end module capi_test_support
