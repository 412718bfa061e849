// veda/mpi.hpp — veda across processes: the veda::mpi component (link
// veda::mpi; built when CMake finds MPI).
//
//   veda::mpi::Environment env(argc, argv);
//   veda::mpi::Comm world;
//   auto x = veda::mpi::DistArray<double>::scatter(world, data);   // root's data
//   double s = veda::mpi::par_iter(x).map(f).sum();                 // on every rank
//   veda::mpi::sort(x);
//   auto c = veda::mpi::matmul(a, b);                               // 2-D DistArrays
//
// Each rank's local work is an ordinary veda call, placed per call on that
// rank's CPU or GPU; the headers below give each part's contract.
#pragma once

#include "veda/mpi/comm.hpp"        // Comm, Environment, RemoteError
#include "veda/mpi/dist_array.hpp"  // DistArray: layout, scatter, gather, redistribute
#include "veda/mpi/halo.hpp"        // exchange_halo: neighbouring rows for stencils
#include "veda/mpi/matmul.hpp"      // matmul(DistArray, DistArray): SUMMA
#include "veda/mpi/par_iter.hpp"    // par_iter(DistArray): local stages, global reductions
#include "veda/mpi/sort.hpp"        // sort(DistArray): sample sort
