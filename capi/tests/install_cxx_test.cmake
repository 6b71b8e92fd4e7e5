# Installs the C API and the C++ API (components clusterdyn_capi and clusterdyn_cxx) into a fresh
# prefix, checks the installed C++ files, then builds consumer_cxx/ (find_package(clusterdyn
# COMPONENTS core) + clusterdyn::core) against the installed tree and runs it on a model.
# Variables: BUILD_DIR PREFIX WORK LIBDIR INCLUDEDIR CONSUMER_DIR MODEL CXX_COMPILER GENERATOR
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
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} --component clusterdyn_capi)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} --component clusterdyn_cxx)

set(expected
  ${LIBDIR}/libclusterdyn_core.a ${INCLUDEDIR}/clusterdyn/clusterdyn.hpp
  ${INCLUDEDIR}/clusterdyn/cluster_algorithms.hpp
  ${LIBDIR}/cmake/clusterdyn/clusterdynCoreTargets.cmake
  ${LIBDIR}/cmake/clusterdyn/clusterdynConfig.cmake)
foreach(f IN LISTS expected)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${PREFIX}/${f}")
  endif()
endforeach()
file(GLOB export_files ${PREFIX}/${LIBDIR}/cmake/clusterdyn/clusterdynCoreTargets*.cmake)
foreach(f IN LISTS export_files)
  file(READ ${f} text)
  if(text MATCHES "${BUILD_DIR}")
    message(FATAL_ERROR "${f} refers to the build tree")
  endif()
endforeach()

run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK}/cmake -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/cmake)
# The program links the static archive: it must not need the build tree's library directory.
run(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH= ${WORK}/cmake/consumer_cxx ${MODEL})
message(STATUS "C++ find_package consumer:\n${run_out}")
