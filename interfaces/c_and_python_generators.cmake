# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The rosidl generators an interface package of this folder runs, in place of
# rosidl_default_generators: the type description (the type hash), the C structs, the C type
# supports of Fast DDS (rmw_fastrtps_cpp, the rmw of the wheels) and of introspection (the other
# rmw implementations), their dispatcher and the Python package. No C++: rclpy does not use it,
# and its type supports would double the compile time. Include this after the find_package()
# of the dependencies (they bring the C++ generators in) and before rosidl_generate_interfaces().
find_package(rosidl_cmake REQUIRED)
find_package(rosidl_generator_type_description REQUIRED)
find_package(rosidl_generator_c REQUIRED)
find_package(rosidl_typesupport_fastrtps_c REQUIRED)
find_package(rosidl_typesupport_introspection_c REQUIRED)
find_package(rosidl_typesupport_c REQUIRED)
find_package(rosidl_generator_py REQUIRED)

# ament_register_extension() keeps the generators as "<package>:<file>" entries of this list;
# rosidl_generate_interfaces() runs every entry
set(_dodo_generators
  rosidl_generator_type_description rosidl_generator_c rosidl_typesupport_fastrtps_c
  rosidl_typesupport_introspection_c rosidl_typesupport_c rosidl_generator_py)
set(_dodo_kept)
foreach(_extension IN LISTS AMENT_EXTENSIONS_rosidl_generate_idl_interfaces)
  string(REGEX REPLACE ":.*" "" _package "${_extension}")
  if(_package IN_LIST _dodo_generators)
    list(APPEND _dodo_kept "${_extension}")
  else()
    message(STATUS "Not generating ${_package} (C and Python only)")
  endif()
endforeach()
set(AMENT_EXTENSIONS_rosidl_generate_idl_interfaces ${_dodo_kept})
