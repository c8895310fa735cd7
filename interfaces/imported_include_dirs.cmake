# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause
#
# Included after project() of each interface package (-DCMAKE_PROJECT_INCLUDE=this file,
# dodo_sim/tools/build_interfaces.py). The ros-kilted-* wheels export their Python-extension
# targets (<pkg>::<pkg>__rosidl_generator_py) with the include directories of the machine that
# built the wheels (/opt/python/cp311-cp311/include/python3.11 and its numpy include), which do
# not exist here; CMake refuses an imported target with a missing include directory. At the end
# of configuring (cmake_language DEFER, when every find_package has created its targets) each
# such directory is replaced by this interpreter's (Python3_INCLUDE_DIRS, Python3_NumPy_INCLUDE_DIRS)
# on the imported targets of this build only: the installed files stay as the wheels shipped them.
cmake_minimum_required(VERSION 3.19)

function(dodo_rewrite_foreign_include_dirs)
  if(NOT Python3_INCLUDE_DIRS OR NOT Python3_NumPy_INCLUDE_DIRS)
    find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
  endif()
  get_property(targets DIRECTORY "${CMAKE_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT dirs)
      continue()
    endif()
    set(rewritten)
    set(changed FALSE)
    foreach(dir IN LISTS dirs)
      if(EXISTS "${dir}" OR dir MATCHES "^\\$<")
        list(APPEND rewritten "${dir}")
      elseif(dir MATCHES "/numpy/(_core/|core/)?include$")
        list(APPEND rewritten ${Python3_NumPy_INCLUDE_DIRS})
        set(changed TRUE)
      elseif(dir MATCHES "/include/python3\\.[0-9]+$")
        list(APPEND rewritten ${Python3_INCLUDE_DIRS})
        set(changed TRUE)
      else()
        message(FATAL_ERROR "${target}: include directory ${dir} does not exist on this machine")
      endif()
    endforeach()
    if(changed)
      list(REMOVE_DUPLICATES rewritten)
      set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${rewritten}")
    endif()
  endforeach()
endfunction()

if(CMAKE_CURRENT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL dodo_rewrite_foreign_include_dirs)
endif()
