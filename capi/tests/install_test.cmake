# Installs the C API (cmake --install --component clusterdyn_capi) into a fresh prefix, checks
# the installed files,
# then builds the C example against the installed tree with find_package(clusterdyn) and with
# pkg-config (and the Fortran example when a Fortran compiler is given) and runs them.
# Variables: BUILD_DIR PREFIX WORK LIBDIR INCLUDEDIR CONSUMER_DIR EXAMPLE_C EXAMPLE_F90 MODEL
#            C_COMPILER Fortran_COMPILER PKG_CONFIG GENERATOR
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${PREFIX} ${WORK})
file(MAKE_DIRECTORY ${WORK})
# The C API's install component: independent of which other targets of the tree were built.
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} --component clusterdyn_capi)

# The installed files.
set(expected
  ${LIBDIR}/libclusterdyn.so ${LIBDIR}/libclusterdyn.so.0 ${INCLUDEDIR}/clusterdyn.h
  ${LIBDIR}/cmake/clusterdyn/clusterdynConfig.cmake
  ${LIBDIR}/cmake/clusterdyn/clusterdynConfigVersion.cmake
  ${LIBDIR}/cmake/clusterdyn/clusterdynTargets.cmake ${LIBDIR}/pkgconfig/clusterdyn.pc)
if(Fortran_COMPILER)
  list(APPEND expected ${INCLUDEDIR}/clusterdyn.mod)
endif()
foreach(f IN LISTS expected)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${PREFIX}/${f}")
  endif()
endforeach()
# C consumers need nothing but the library: no C++ dependency leaks into the package. The C++
# API (clusterdyn::core, component clusterdyn_cxx) is not part of this install; the config file
# searches for its dependencies only when clusterdynCoreTargets.cmake is present.
file(GLOB core_files ${PREFIX}/${LIBDIR}/cmake/clusterdyn/clusterdynCore*
     ${PREFIX}/${LIBDIR}/libclusterdyn_core* ${PREFIX}/${INCLUDEDIR}/clusterdyn/*)
if(core_files)
  message(FATAL_ERROR "the C API component installs C++ API files: ${core_files}")
endif()
file(GLOB pkg_files ${PREFIX}/${LIBDIR}/cmake/clusterdyn/*.cmake ${PREFIX}/${LIBDIR}/pkgconfig/*.pc)
list(FILTER pkg_files EXCLUDE REGEX "/clusterdynConfig\\.cmake$")
foreach(f IN LISTS pkg_files)
  file(READ ${f} text)
  if(text MATCHES "Eigen|tinyxml2|spdlog|clusterdyn_core|${BUILD_DIR}")
    message(FATAL_ERROR "${f} refers to a build dependency or the build tree")
  endif()
endforeach()

# 1. CMake: find_package(clusterdyn) + clusterdyn::clusterdyn.
run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK}/cmake -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_C_COMPILER=${C_COMPILER} -DEXAMPLE_C=${EXAMPLE_C}
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/cmake)
run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH= ${WORK}/cmake/consumer ${MODEL})
message(STATUS "find_package consumer:\n${run_out}")

# 2. pkg-config, the compiler driver alone.
set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/pkgconfig)
run(${PKG_CONFIG} --cflags clusterdyn)
string(STRIP "${run_out}" cflags)
separate_arguments(cflags UNIX_COMMAND "${cflags}")
run(${PKG_CONFIG} --libs clusterdyn)
string(STRIP "${run_out}" libs)
separate_arguments(libs UNIX_COMMAND "${libs}")
if(NOT cflags MATCHES "${PREFIX}")
  message(FATAL_ERROR "pkg-config --cflags does not point into ${PREFIX}: ${cflags}")
endif()
run(${C_COMPILER} -std=c99 ${cflags} ${EXAMPLE_C} -o ${WORK}/consumer_pc ${libs} -lm)
run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${PREFIX}/${LIBDIR} ${WORK}/consumer_pc ${MODEL})
message(STATUS "pkg-config consumer:\n${run_out}")

# 3. Fortran, with the installed module.
if(Fortran_COMPILER)
  run(${Fortran_COMPILER} ${cflags} ${EXAMPLE_F90} -o ${WORK}/consumer_f ${libs})
  run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${PREFIX}/${LIBDIR} ${WORK}/consumer_f ${MODEL})
  message(STATUS "Fortran consumer:\n${run_out}")
endif()
