// Cost formulas for the ops with their own tiers: GEMM (matmul, linear),
// sort, scan, transpose and spmv. Same shape as the element-wise model: overhead
// + transfers + max(compute, memory), from the machine profile; history
// corrects whatever these get wrong on a given machine.
#include <algorithm>
#include <cmath>

#include "runtime/cost_model.hpp"

namespace veda::detail {
namespace {

Estimate make_est(Tier t, double overhead, double transfer, double body) {
  Estimate e;
  e.tier = t;
  e.overhead_us = overhead;
  e.transfer_us = transfer;
  e.total_us = overhead + transfer + body;
  return e;
}

// GEMM efficiency grows with the problem's edge d = cbrt(m n k); the
// half-way points are where small tiles stop paying (measured shapes of
// OpenBLAS and cuBLAS curves, corrected by history on each machine).
double efficiency(double d, double half) { return d / (d + half); }

// OpenBLAS's rate: calibrated at n = 1024, else 85% of `peak` (the FMA peak
// of the threads it runs on).
double cpu_blas_gflops(const MachineProfile& p, const CostRequest& r, double peak) {
  const double calibrated = r.double_precision ? p.cpu.dgemm_gflops : p.cpu.sgemm_gflops;
  return calibrated > 0 ? calibrated : 0.85 * peak;
}

}  // namespace

void gemm_estimates(const MachineProfile& p, const CostRequest& r, std::vector<Estimate>& out) {
  const double m = static_cast<double>(r.m), k = static_cast<double>(r.k), n = static_cast<double>(r.cols);
  const double flops = 2.0 * m * n * k;
  const double d = std::cbrt(std::max(m * n * k, 1.0));
  const bool half = r.elem_bytes == 2;  // veda::half, veda::bfloat16: FP32 sums
  const double es = r.double_precision ? 8.0 : 4.0;
  const double threads = std::max(1, r.threads);
  const double peak = p.cpu.fma_gflops_per_thread * threads * (r.double_precision ? 0.5 : 1.0);
  const double blas = cpu_blas_gflops(p, r, peak);
  // The epilogue of linear(): one more pass over the m x n result; 16-bit
  // operands: the CPU tiers' conversions (2 bytes read, 4 written, and back).
  const double epi_cpu = r.linear ? m * n * es * 2 / p.cpu.bw_all_gbps * 1e-3
                         : half   ? (m * k + k * n + 2 * m * n) * 6 / p.cpu.bw_all_gbps * 1e-3
                                  : 0;
  const double back = p.gpu.present ? d2h_time_us(p.gpu, static_cast<double>(r.cpu_d2h_bytes), r.host_pinned) : 0;
  auto add = [&](Tier t, Estimate e) {
    if (r.tiers & tier_bit(t)) out.push_back(e);
  };
  Estimate ref = make_est(Tier::CpuReference, 0.1, back, flops / 1.0 * 1e-3 + epi_cpu);  // ~1 GFLOP/s naive loop
  ref.eligible = false;
  ref.note = "the tests' oracle: only when forced";
  add(Tier::CpuReference, ref);
  add(Tier::CpuBlas, make_est(Tier::CpuBlas, 2.0, back, flops / (blas * efficiency(d, 96)) * 1e-3 + epi_cpu));
  add(Tier::CpuTiled, make_est(Tier::CpuTiled, p.cpu.tbb_auto_us, back,
                               flops / (0.65 * peak * efficiency(d, 64)) * 1e-3 + epi_cpu));
  const double in = copy_in_us(p.gpu, r);
  const double outx = d2h_time_us(p.gpu, static_cast<double>(r.d2h_bytes), r.host_pinned);
  const double dev = r.double_precision ? p.gpu.dgemm_gflops : p.gpu.sgemm_gflops;
  const double launch = p.gpu.launch_us + 5.0;  // cuBLAS adds its own set-up
  const double epi_gpu = r.linear ? p.gpu.launch_us + m * n * es * 2 / p.gpu.device_bw_gbps * 1e-3 : 0;
  const double eg = efficiency(d, 512);
  add(Tier::GpuTiled, make_est(Tier::GpuTiled, p.gpu.launch_us, in + outx, flops / (0.25 * dev * eg) * 1e-3 + epi_gpu));
  // 16-bit operands on tensor cores: about twice TF32's rate (not
  // calibrated: history corrects it).
  const double cublas_rate = half ? 2 * p.gpu.sgemm_tf32_gflops : dev;
  Estimate cublas = make_est(Tier::GpuCublas, launch, in + outx, flops / (cublas_rate * eg) * 1e-3 + epi_gpu);
  const char* no_tc16 = "16-bit GEMMs need tensor cores (compute capability 8.0+); gpu-tiled runs them elsewhere";
  if (half && !r.tensor_cores) {
    cublas.eligible = false;
    cublas.note = no_tc16;
  }
  add(Tier::GpuCublas, cublas);
  Estimate tf32 = make_est(Tier::GpuCublasTf32, launch, in + outx, flops / (p.gpu.sgemm_tf32_gflops * eg) * 1e-3 + epi_gpu);
  if (r.double_precision || !r.allow_tf32 || !r.tensor_cores) {
    tf32.eligible = false;
    tf32.note = r.double_precision ? "TF32 is for FP32" : !r.allow_tf32 ? "precision policy is Strict" : "no tensor cores (compute capability < 8.0)";
  }
  add(Tier::GpuCublasTf32, tf32);
  // BF16 tensor cores: about twice TF32's rate (not calibrated: history corrects it).
  Estimate bf16 = make_est(Tier::GpuCublasBf16, launch, in + outx,
                           flops / (2 * p.gpu.sgemm_tf32_gflops * eg) * 1e-3 + epi_gpu);
  if (r.double_precision || !r.allow_fp16 || !r.tensor_cores) {
    bf16.eligible = false;
    bf16.note = r.double_precision ? "BF16 tensor cores are for FP32 inputs"
                : !r.allow_fp16    ? "precision policy does not allow FP16/BF16 (Precision::AllowFP16)"
                                   : "no tensor cores (compute capability < 8.0)";
  }
  add(Tier::GpuCublasBf16, bf16);
  // The ladder's teaching kernels (matmul only): measured by `veda bench
  // matmul` side by side with cuBLAS, never chosen by the model.
  for (Tier t : {Tier::GpuNaive, Tier::GpuVectorized}) {
    Estimate e = make_est(t, p.gpu.launch_us, in + outx, flops / (0.05 * dev * eg) * 1e-3);
    e.eligible = false;
    e.note = "a teaching kernel of the GEMM ladder: only when forced";
    add(t, e);
  }
  // veda's WMMA kernel: BF16 tensor cores at about half cuBLAS's BF16 rate
  // (not calibrated: history corrects it). 16-bit operands are already what
  // it computes on, whatever the precision policy.
  Estimate wmma = make_est(Tier::GpuWmma, p.gpu.launch_us, in + outx, flops / (p.gpu.sgemm_tf32_gflops * eg) * 1e-3);
  if (half ? !r.tensor_cores : r.double_precision || !r.allow_fp16 || !r.tensor_cores) {
    wmma.eligible = false;
    wmma.note = half ? no_tc16 : bf16.note;
  }
  add(Tier::GpuWmma, wmma);
  // linear's tiers: cuBLAS (at gpu-cublas's rate) and veda's epilogue kernel, or one cuBLASLt call.
  Estimate unfused = make_est(Tier::GpuUnfused, launch, in + outx, flops / (cublas_rate * eg) * 1e-3 + epi_gpu);
  const double fused_rate = half                             ? cublas_rate
                            : r.allow_tf32 && r.tensor_cores ? p.gpu.sgemm_tf32_gflops
                                                             : p.gpu.sgemm_gflops;
  Estimate fused = make_est(Tier::GpuCublasLtFused, launch, in + outx, flops / (fused_rate * eg) * 1e-3);
  if (r.double_precision) {
    fused.eligible = false;
    fused.note = "the cuBLASLt epilogue tier is for float and 16-bit elements";
  }
  for (Estimate* e : {&unfused, &fused})
    if (half && !r.tensor_cores) {
      e->eligible = false;
      e->note = no_tc16;
    }
  add(Tier::GpuUnfused, unfused);
  add(Tier::GpuCublasLtFused, fused);
  if (r.tiers & tier_bit(Tier::CoExec)) {
    // C's rows split between the devices and the CPU (filled in by choose);
    // the devices run cuBLAS in the element type's own precision, as the
    // CPU does. Each device copies all of B: the split counts it as rows.
    Estimate co;
    co.tier = Tier::CoExec;
    co.n = m;
    co.gpu_devices = std::max(1, r.gpu_devices);
    co.coexec_gpu = coexec_device_tier(OpClass::Gemm);
    co.eligible = false;
    out.push_back(co);
  }
}

void sort_scan_transpose_estimates(const MachineProfile& p, const CostRequest& r, std::vector<Estimate>& out) {
  const double n = static_cast<double>(r.n);
  const double bytes = n * (r.elem_bytes + r.value_bytes);
  const double threads = std::max(1, r.threads);
  const double back = p.gpu.present ? d2h_time_us(p.gpu, static_cast<double>(r.cpu_d2h_bytes), r.host_pinned) : 0;
  const double in = copy_in_us(p.gpu, r);
  const double outx = d2h_time_us(p.gpu, static_cast<double>(r.d2h_bytes), r.host_pinned);
  double serial = 0, parallel = 0, device = 0, launches = 1;
  if (r.op == OpClass::Sort) {
    // Comparison sorts: ~1.5 ns per element per level here; radix sort on
    // the GPU: one pass per 8 key bits, reading and writing keys and values.
    const double levels = std::log2(std::max(n, 2.0));
    serial = n * levels * 1.5e-3 * (r.value_bytes > 0 ? 1.6 : 1.0);
    parallel = p.cpu.tbb_auto_us + serial / threads * 1.3;
    const double passes = r.elem_bytes;  // bytes of key = 8-bit digits
    device = passes * 2 * bytes / p.gpu.device_bw_gbps * 1e-3;
    launches = 2 * passes;
  } else if (r.op == OpClass::Scan) {
    // One chain of dependent adds (~4 cycles each); the blocked parallel
    // scan adds a cheap totals pass and reads the input twice.
    serial = std::max(n * 0.85e-3, 2 * bytes / p.cpu.bw_one_gbps * 1e-3);
    parallel = 2 * p.cpu.tbb_auto_us + std::max(n * 1.0e-3 / threads, 3 * bytes / p.cpu.bw_all_gbps * 1e-3);
    device = 3 * bytes / p.gpu.device_bw_gbps * 1e-3;
    launches = 2;
  } else {  // transpose: every element read and written, the writes strided
    serial = 2 * bytes / p.cpu.bw_one_gbps * 1e-3 * 1.5;
    parallel = p.cpu.tbb_static_us + 2 * bytes / p.cpu.bw_all_gbps * 1e-3 * 1.5;
    device = 2 * bytes / p.gpu.device_bw_gbps * 1e-3;
  }
  auto add = [&](Tier t, Estimate e) {
    if (r.tiers & tier_bit(t)) out.push_back(e);
  };
  add(Tier::Serial, make_est(Tier::Serial, 0.05, back, serial));
  Estimate par = make_est(Tier::TbbAuto, 0, back, parallel);
  if (r.threads <= 1) {
    par.eligible = false;
    par.note = "one CPU thread";
  }
  add(Tier::TbbAuto, par);
  add(Tier::Cuda, make_est(Tier::Cuda, launches * p.gpu.launch_us, in + outx, device));
  if (r.op == OpClass::Sort && (r.tiers & tier_bit(Tier::CoExec))) {
    // The parts sorted where they ran (each device's share by radix sort,
    // the CPU's by its sort), then merged on the host (cpu::merge_runs): a
    // round per doubling of the parts, each reading and writing every key
    // and value and taking ~5 ns per element on a thread, and a copy back
    // when the rounds leave the result in the scratch (bench_sort's merge
    // table puts it beside the measured merge).
    Estimate co;
    co.tier = Tier::CoExec;
    co.n = n;
    co.gpu_devices = std::max(1, r.gpu_devices);
    co.coexec_gpu = coexec_device_tier(OpClass::Sort);
    const int rounds = static_cast<int>(std::ceil(std::log2(co.gpu_devices + 1.0)));
    const double traffic = 2 * bytes / p.cpu.bw_all_gbps * 1e-3;
    co.join_us = rounds * std::max(traffic, n * 5e-3 / threads) + (rounds % 2) * traffic;
    co.eligible = false;
    out.push_back(co);
  }
}

// CSR SpMV: values and column indices streamed once, row offsets and y
// once, x gathered (counted once per column: history corrects matrices whose
// gathers miss the cache). On the CPU each row is a chain of dependent adds,
// overlapped across rows by the core (~0.4 ns per non-zero).
void spmv_estimates(const MachineProfile& p, const CostRequest& r, std::vector<Estimate>& out) {
  const double rows = static_cast<double>(r.m), cols = static_cast<double>(r.k), nnz = static_cast<double>(r.n);
  const double es = r.elem_bytes;
  const double bytes = nnz * (es + 4) + rows * (4 + es) + cols * es;
  const double threads = std::max(1, r.threads);
  const double back = p.gpu.present ? d2h_time_us(p.gpu, static_cast<double>(r.cpu_d2h_bytes), r.host_pinned) : 0;
  const double in = copy_in_us(p.gpu, r);
  const double chain = (nnz + rows) * 0.4e-3;
  auto add = [&](Tier t, Estimate e) {
    if (r.tiers & tier_bit(t)) out.push_back(e);
  };
  add(Tier::Serial, make_est(Tier::Serial, 0.05, back, std::max(chain, bytes / p.cpu.bw_one_gbps * 1e-3)));
  Estimate par = make_est(Tier::TbbAuto, p.cpu.tbb_auto_us, back,
                          std::max(chain / threads, bytes / p.cpu.bw_all_gbps * 1e-3));
  if (r.threads <= 1) {
    par.eligible = false;
    par.note = "one CPU thread";
  }
  add(Tier::TbbAuto, par);
  // Irregular gathers keep a hand-written kernel below cuSPARSE's bandwidth;
  // cuSPARSE pays for its descriptors and buffer query on the host.
  const double dev = bytes / p.gpu.device_bw_gbps * 1e-3;
  add(Tier::Cuda, make_est(Tier::Cuda, p.gpu.launch_us, in, 1.25 * dev));
  add(Tier::GpuCusparse, make_est(Tier::GpuCusparse, p.gpu.launch_us + 4.0, in, dev));
}

void attention_estimates(const MachineProfile& p, const CostRequest& r, std::vector<Estimate>& out) {
  // Two products over the scores computed (q k^T, then p v) and an exp each.
  const double scores = static_cast<double>(r.n), d = static_cast<double>(std::max<std::size_t>(r.cols, 1));
  const double flops = 4.0 * scores * d;
  const double threads = std::max(1, r.threads);
  const double peak = p.cpu.fma_gflops_per_thread * (r.double_precision ? 0.5 : 1.0);
  const double exp_us = scores * 2e-3;  // ~2 ns an exp and its bookkeeping on one thread
  const double back = p.gpu.present ? d2h_time_us(p.gpu, static_cast<double>(r.cpu_d2h_bytes), r.host_pinned) : 0;
  auto add = [&](Tier t, Estimate e) {
    if (r.tiers & tier_bit(t)) out.push_back(e);
  };
  Estimate ref = make_est(Tier::CpuReference, 0.1, back, flops / 1.0 * 1e-3 + exp_us * 4);  // double, one row at a time
  ref.eligible = false;
  ref.note = "the tests' oracle: only when forced";
  add(Tier::CpuReference, ref);
  // Key blocks through the cache, the products vectorised: about a third of
  // the FMA peak per thread (history corrects it).
  add(Tier::CpuBlocked, make_est(Tier::CpuBlocked, p.cpu.tbb_auto_us, back,
                                 (flops / (0.35 * peak) * 1e-3 + exp_us) / threads));
  // OpenBLAS for both products; the scores of a block of rows go through
  // memory (written, softmaxed, read).
  const double es = r.double_precision ? 8.0 : 4.0;
  const double blas = cpu_blas_gflops(p, r, peak * threads);
  add(Tier::CpuBlas, make_est(Tier::CpuBlas, 2.0, back,
                              flops / (0.8 * blas) * 1e-3 + exp_us / threads + 3 * scores * es / p.cpu.bw_all_gbps * 1e-3));
  // gpu-naive writes and reads the scores three times more; gpu-flash keeps
  // them on chip but computes on CUDA cores (no tensor cores): a fraction of
  // cuBLAS's rate in both.
  const double in = copy_in_us(p.gpu, r);
  const double outx = d2h_time_us(p.gpu, static_cast<double>(r.d2h_bytes), r.host_pinned);
  const double rate = (r.double_precision ? p.gpu.dgemm_gflops : p.gpu.sgemm_gflops);
  add(Tier::GpuNaive, make_est(Tier::GpuNaive, 3 * p.gpu.launch_us, in + outx,
                               flops / (0.1 * rate) * 1e-3 + 4 * scores * es / p.gpu.device_bw_gbps * 1e-3));
  add(Tier::GpuFlash, make_est(Tier::GpuFlash, p.gpu.launch_us, in + outx, flops / (0.2 * rate) * 1e-3));
}

}  // namespace veda::detail
