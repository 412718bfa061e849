# Decides whether the CUDA backend is built (VEDA_CUDA = AUTO | ON | OFF) and,
# if so, enables the CUDA language with veda's defaults.
#   AUTO: build it when nvcc is found.   ON: nvcc is required.   OFF: never.
string(TOUPPER "${VEDA_CUDA}" _veda_cuda)
if(NOT _veda_cuda MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "VEDA_CUDA must be AUTO, ON or OFF (got '${VEDA_CUDA}')")
endif()

set(VEDA_HAS_CUDA OFF)
if(NOT _veda_cuda STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER)
    # check_language only probes; it does not enable anything.
    include(CheckLanguage)
    check_language(CUDA)
  endif()
  if(CMAKE_CUDA_COMPILER)
    set(VEDA_HAS_CUDA ON)
  elseif(_veda_cuda STREQUAL "ON")
    message(FATAL_ERROR "VEDA_CUDA=ON but no CUDA compiler (nvcc) was found")
  else()
    message(STATUS "veda: nvcc not found, building without the CUDA backend")
  endif()
endif()

if(VEDA_HAS_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 90 CACHE STRING "CUDA architectures to build for")
  endif()
  # One cudart for the library and every consumer translation unit.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  # CMake 3.25 predates nvcc 13 and does not know its C++20 flag.
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  find_package(CUDAToolkit REQUIRED)
endif()
