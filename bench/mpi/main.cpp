// mpi: veda::mpi against MPI + oneTBB + OpenBLAS by hand, and the MPI
// library's own latency and bandwidth (the inputs of docs/mpi.md's model).
// Run under mpirun with any number of ranks:
//   mpirun -np 4 build/bench/bench_mpi [--quick]
// Each figure is the median over samples of the slowest rank's time (a
// barrier before each sample). Ratio = veda / by hand.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/common/bench.hpp"
#include "bench/mpi/contenders.hpp"
#include "veda/decision.hpp"
#include "veda/mpi.hpp"
#include "veda/runtime.hpp"

namespace {
namespace bm = bench::mpi;
using veda::mpi::Comm;

// Median over `samples` of the slowest rank's seconds for f().
double timed(const Comm& c, int samples, const std::function<void()>& f) {
  f();  // warm-up: veda learns, buffers are allocated
  std::vector<double> t;
  for (int s = 0; s < samples; ++s) {
    c.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    double mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, c.native());
    t.push_back(worst);
  }
  return bench::median_of(t);
}

std::string us(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", s * 1e6);
  return b;
}
std::string ratio(double a, double b) {
  char r[32];
  std::snprintf(r, sizeof r, "%.2f", a / b);
  return r;
}
std::string tier() {
  const veda::Decision d = veda::last_decision();
  return std::string(veda::to_string(d.device)) + "/" + d.tier;
}
}  // namespace

int main(int argc, char** argv) {
  bench::quiet_idle_threads(argv);
  veda::mpi::Environment env(argc, argv);
  const bench::Options opt = bench::Options::parse(argc, argv);
  const Comm c;
  const int p = c.size(), me = c.rank(), samples = opt.quick ? 5 : 15;
  if (me == 0)
    std::printf("# mpi: veda::mpi vs MPI + oneTBB + OpenBLAS by hand\n%s\nranks: %d (%d on this node), veda threads "
                "per rank: %d\n",
                bench::machine_line().c_str(), p, env.ranks_on_node(), veda::get_runtime().config().threads());

  // The MPI library: ping-pong between ranks 0 and 1, and a one-double allreduce.
  bench::Table lib("the MPI library (Open MPI, one node): median", {"what", "figure"});
  double one = 1, sum = 0;
  const double allreduce = timed(c, 200, [&] { MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, c.native()); });
  lib.add({"MPI_Allreduce of 1 double, us", us(allreduce)});
  if (p >= 2) {
    for (std::size_t bytes : {std::size_t{8}, std::size_t{8} << 20}) {
      std::vector<char> buf(bytes);
      const int n = static_cast<int>(bytes);
      const double rt = timed(c, bytes > 8 ? 20 : 200, [&] {
        if (me == 0) {
          MPI_Send(buf.data(), n, MPI_CHAR, 1, 0, c.native());
          MPI_Recv(buf.data(), n, MPI_CHAR, 1, 0, c.native(), MPI_STATUS_IGNORE);
        } else if (me == 1) {
          MPI_Recv(buf.data(), n, MPI_CHAR, 0, 0, c.native(), MPI_STATUS_IGNORE);
          MPI_Send(buf.data(), n, MPI_CHAR, 0, 0, c.native());
        }
      });
      if (bytes == 8) lib.add({"latency, 8-byte message (ping-pong / 2), us", us(rt / 2)});
      else lib.add({"bandwidth, 8 MiB messages, GB/s", ratio(static_cast<double>(bytes) * 2 / 1e9, rt)});
    }
  }

  bench::Table ops("veda::mpi vs by hand: median us (slowest rank)",
                   {"op", "size", "by hand", "veda::mpi", "veda / by hand", "rank 0's local tier"});
  {  // sum of squares, 10^7 doubles
    const std::size_t n = 10'000'000;
    veda::mpi::DistArray<double> x(c, n);
    auto h = x.local().host();
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = std::sin(0.001 * static_cast<double>(x.offset() + i));
    const std::vector<double> local(h.begin(), h.end());
    double a = 0, b = 0;
    const double th = timed(c, samples, [&] { a = bm::by_hand_sum_squares(c.native(), local); });
    const double tv = timed(c, samples, [&] { b = bm::veda_sum_squares(x); });
    ops.add({"sum of squares", "10^7 doubles", us(th), us(tv), ratio(tv, th), tier()});
    if (std::abs(a - b) > 1e-6 * std::abs(a)) std::printf("rank %d: sums differ: %.17g vs %.17g\n", me, a, b);
  }
  {  // matmul, doubles
    const std::size_t n = opt.quick ? 512 : 1024;
    veda::mpi::DistArray<double> a(c, n, n), b(c, n, n);
    auto ha = a.local().host(), hb = b.local().host();
    for (std::size_t i = 0; i < ha.size(); ++i) ha[i] = std::cos(0.01 * static_cast<double>(a.offset() + i));
    for (std::size_t i = 0; i < hb.size(); ++i) hb[i] = std::sin(0.02 * static_cast<double>(b.offset() + i));
    const std::vector<double> ar(ha.begin(), ha.end()), br(hb.begin(), hb.end());
    std::vector<int> counts;
    for (int r = 0; r < p; ++r) counts.push_back(static_cast<int>(b.local_rows(r)));
    const double th = timed(c, samples, [&] { (void)bm::by_hand_matmul(c.native(), ar, n, br, counts, n); });
    const double tv = timed(c, samples, [&] { (void)bm::veda_matmul(a, b); });
    ops.add({"matmul", std::to_string(n) + "^2 doubles", us(th), us(tv), ratio(tv, th), tier()});
  }
  {  // sort, veda only (by hand would be this sample sort written again)
    const std::size_t n = opt.quick ? 1'000'000 : 4'000'000;
    veda::mpi::DistArray<float> k(c, n);
    std::vector<float> start;
    for (std::size_t i = 0; i < k.local_size(); ++i)
      start.push_back(std::sin(12.9898f * static_cast<float>(k.offset() + i)) * 43758.5f);
    const double tv = timed(c, samples, [&] {
      std::copy(start.begin(), start.end(), k.local().host().begin());
      bm::veda_sort(k);
    });
    ops.add({"sort", std::to_string(n) + " floats", "-", us(tv), "-", tier()});
  }
  if (me == 0) {
    lib.print();
    ops.print();
  }
  return 0;
}
