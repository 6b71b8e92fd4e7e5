# ctest python_install: `cmake --install` of the library and the Python package into a
# temporary prefix, then the installed package is imported from another directory WITHOUT
# CLUSTERDYN_LIBRARY and must find PREFIX's library. (pip install ./python: wheel_test.cmake.)
# Usage: cmake -DBUILD_DIR= -DPYTHON= -DWORK= -DPYDIR= -DMODEL= -P install_test.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(PREFIX "${WORK}/prefix")
foreach(component clusterdyn_capi clusterdyn_python)
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                          --component ${component}
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install --component ${component} failed (${rc})")
  endif()
endforeach()
if(NOT EXISTS "${PREFIX}/${PYDIR}/clusterdyn/__init__.py")
  message(FATAL_ERROR "the package was not installed to ${PREFIX}/${PYDIR}/clusterdyn")
endif()

set(check [=[
import sys, numpy as np, clusterdyn as cd
prefix, model = sys.argv[1], sys.argv[2]
found = cd.find_library()
assert found.startswith(prefix), f"library {found} is not from {prefix}"
assert cd.__file__.startswith(prefix) or "--any-package" in sys.argv, cd.__file__
m = cd.Model.load(model)
ws = m.workspace()
q = m.reference_configuration()
ydd = ws.ce_aba(q, np.zeros(m.nv), np.ones(m.ny))
assert np.all(np.isfinite(ydd))
print(f"installed package OK: {cd.__file__}, library {found}, ydd = {ydd}")
]=])
file(WRITE "${WORK}/check.py" "${check}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=CLUSTERDYN_LIBRARY
                        "PYTHONPATH=${PREFIX}/${PYDIR}" "${PYTHON}" "${WORK}/check.py"
                        "${PREFIX}" "${MODEL}"
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed package failed (${rc})")
endif()
