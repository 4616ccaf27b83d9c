! Tiny assertion helpers of the Fortran tests: check() counts and reports, finish() prints
! the totals and stops with a nonzero status if anything failed.
module testing
  implicit none
  private
  public :: check, finish
  integer :: passed = 0, failed = 0
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      write (*, "(a)") "FAILED: " // what
    end if
  end subroutine check

  subroutine finish(name)
    character(*), intent(in) :: name
    write (*, "(a, ': ', i0, ' checks passed, ', i0, ' failed')") name, passed, failed
    if (failed > 0 .or. passed == 0) error stop 1
  end subroutine finish
end module testing
