# ctest python_install: `cmake --install` of the library and the Python package into a
# temporary prefix, then the installed package is imported from another directory WITHOUT
# CLUSTERDYN_LIBRARY and must find PREFIX's library; then, when pip is available,
# `pip install --no-build-isolation --no-index` of a copy of python/ into a target folder.
# Usage: cmake -DBUILD_DIR= -DPYTHON= -DWORK= -DSOURCE= -DPYDIR= -DLIB= -DMODEL= -P install_test.cmake
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

execute_process(COMMAND "${PYTHON}" -m pip --version RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(STATUS "pip not available: pip install not tested")
  return()
endif()
file(COPY "${SOURCE}/" DESTINATION "${WORK}/src" PATTERN "__pycache__" EXCLUDE)
execute_process(COMMAND "${PYTHON}" -m pip install --no-build-isolation --no-index --no-deps
                        --disable-pip-version-check --target "${WORK}/target" "${WORK}/src"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pip install ./python failed (${rc}):\n${out}\n${err}")
endif()
# The pip-installed package (no library inside) with the library named by CLUSTERDYN_LIBRARY.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "CLUSTERDYN_LIBRARY=${LIB}"
                        "PYTHONPATH=${WORK}/target" "${PYTHON}" -c
                        "import clusterdyn as cd, sys; assert cd.__file__.startswith(sys.argv[1]), cd.__file__; print('pip-installed package OK:', cd.__file__, cd.version())"
                        "${WORK}/target"
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the pip-installed package failed (${rc})")
endif()
