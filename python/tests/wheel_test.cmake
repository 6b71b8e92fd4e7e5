# ctest python_wheel: `pip wheel ./python` (scikit-build-core builds libclusterdyn.so.0 with CMake
# and bundles it), run from another directory; the wheel's contents; the source tree left as it
# was; then the wheel installed into a fresh venv (no system site-packages: numpy comes in as the
# wheel's declared dependency, from pip's cache or PyPI) and python/tests/wheel_smoke.py run there
# without CLUSTERDYN_LIBRARY.
# Usage: cmake -DPYTHON= -DSOURCE=<repo>/python -DWORK= -DLIB= -DMODEL= [-DCLI=]
#              [-DISOLATION=ON|OFF] -P wheel_test.cmake
# ISOLATION=OFF (--no-build-isolation) uses PYTHON's scikit-build-core instead of pip fetching
# build-system.requires into a temporary environment (offline, a few seconds faster).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
get_filename_component(REPO "${SOURCE}/.." ABSOLUTE)

# Everything under python/ and the repository's top level, before the build (no __pycache__:
# the package is imported by other tests).
function(snapshot out)
  file(GLOB_RECURSE _files LIST_DIRECTORIES true RELATIVE "${SOURCE}" "${SOURCE}/*")
  list(FILTER _files EXCLUDE REGEX "(^|/)__pycache__(/|$)")
  file(GLOB _top LIST_DIRECTORIES true RELATIVE "${REPO}" "${REPO}/*" "${REPO}/.*")
  set(${out} ${_files} "--" ${_top} PARENT_SCOPE)
endfunction()
snapshot(before)

set(isolation "")
if(DEFINED ISOLATION AND NOT ISOLATION)
  set(isolation --no-build-isolation)
endif()
string(TIMESTAMP t0 "%s")
execute_process(COMMAND "${PYTHON}" -m pip wheel --no-deps --disable-pip-version-check
                        ${isolation} --wheel-dir "${WORK}/dist"
                        # CMake's build folder at a fixed place inside the build tree (not a
                        # random temporary one): the compiler cache (paths relative to the
                        # source tree) then hits across runs and clones.
                        -C "build-dir=${WORK}/cmake-build" "${SOURCE}"
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
string(TIMESTAMP t1 "%s")
math(EXPR dt "${t1} - ${t0}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pip wheel ./python failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "pip wheel ${isolation}: ${dt} s")

snapshot(after)
if(NOT before STREQUAL after)
  set(added ${after})
  list(REMOVE_ITEM added ${before})
  message(FATAL_ERROR "pip wheel wrote into the source tree: ${added}")
endif()

file(GLOB wheels "${WORK}/dist/clusterdyn-*.whl")
list(LENGTH wheels n)
if(NOT n EQUAL 1 OR NOT wheels MATCHES "/clusterdyn-[0-9.]+-py3-none-linux_[a-z0-9_]+\\.whl$")
  message(FATAL_ERROR "expected one clusterdyn-VERSION-py3-none-linux_ARCH wheel: ${wheels}")
endif()
# The wheel holds the package's Python files, the library under its SONAME and the metadata;
# nothing else (no headers, archives, CMake or pkg-config files, no tests).
set(list_wheel [=[
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert "clusterdyn/libclusterdyn.so.0" in names and "clusterdyn/__init__.py" in names, names
other = [n for n in names if not (n.startswith("clusterdyn/") and n.endswith(".py")
         or n == "clusterdyn/libclusterdyn.so.0" or n.split("/")[0].endswith(".dist-info"))]
assert not other, f"unexpected files in the wheel: {other}"
print(len(names), "files:", " ".join(names))
]=])
execute_process(COMMAND "${PYTHON}" -c "${list_wheel}" "${wheels}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the wheel's contents:\n${out}${err}")
endif()
message(STATUS "${wheels}: ${out}")

# A fresh venv (no --system-site-packages) with the wheel and its dependencies, installed by
# PYTHON's pip (--python: pip >= 22.3), which spares the venv a pip of its own (~15 s).
execute_process(COMMAND "${PYTHON}" -m venv --without-pip "${WORK}/venv" RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "python -m venv failed (${rc}): ${err}")
endif()
set(VPY "${WORK}/venv/bin/python")
execute_process(COMMAND "${PYTHON}" -m pip --python "${VPY}" install --disable-pip-version-check
                        -q "${wheels}"
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pip install of the wheel into a fresh venv failed (${rc}):\n${out}\n${err}")
endif()

set(cli_arg "")
if(CLI)
  set(cli_arg --cli "${CLI}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=CLUSTERDYN_LIBRARY --unset=PYTHONPATH
                        "${VPY}" "${SOURCE}/tests/wheel_smoke.py" --venv "${WORK}/venv"
                        --model "${MODEL}" --library "${LIB}" ${cli_arg}
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the wheel installed into a fresh venv failed its smoke check (${rc})")
endif()
