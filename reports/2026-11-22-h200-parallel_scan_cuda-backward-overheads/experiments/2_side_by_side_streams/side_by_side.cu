// Experiment: dv kernel and row kernel side by side on two streams vs one after the other.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "backward_dq_dk_dg_kernel.cuh"
#include "backward_dv_kernel.cuh"
using namespace glabench::parallel_scan;
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); std::exit(1);} } while (0)

template <typename T> void* rnd(size_t n, std::mt19937& g, bool gate) {
  std::normal_distribution<float> d; std::vector<T> h(n);
  for (auto& x : h) { float z = d(g); x = T(gate ? -std::log1p(std::exp(-(z + 2.f))) : 0.3f * z); }
  void* p; CHECK(cudaMalloc(&p, n * sizeof(T))); CHECK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice)); return p;
}
template <typename T> scan_args make(int64_t B, int64_t Tt, int64_t H, int64_t K, int64_t V) {
  std::mt19937 g(1); scan_args a{}; a.B=B; a.T=Tt; a.H=H; a.K=K; a.V=V; a.scale=1/std::sqrt(double(K));
  size_t nk=B*Tt*H*K, nv=B*Tt*H*V, ns=B*H*K*V;
  a.q=rnd<T>(nk,g,false); a.k=rnd<T>(nk,g,false); a.g=rnd<T>(nk,g,true); a.v=rnd<T>(nv,g,false); a.d_o=rnd<T>(nv,g,false);
  a.h0=rnd<T>(ns,g,false); a.dht=rnd<T>(ns,g,false);
  for (void** p : {&a.o,&a.dv}) CHECK(cudaMalloc(p, nv*sizeof(T)));
  for (void** p : {&a.dq,&a.dk,&a.dg}) CHECK(cudaMalloc(p, nk*sizeof(T)));
  for (void** p : {&a.ht,&a.dh0}) CHECK(cudaMalloc(p, ns*sizeof(T)));
  CHECK(cudaMalloc(&a.workspace, B*Tt*H*(K+1)*sizeof(compute_t<T>)));
  return a;
}
template <typename F> float med(F&& f, void* flush, size_t fb) {
  cudaEvent_t s,e; CHECK(cudaEventCreate(&s)); CHECK(cudaEventCreate(&e)); std::vector<float> v;
  for (int n=0;n<25;++n){ CHECK(cudaMemsetAsync(flush,n,fb)); CHECK(cudaEventRecord(s)); f(); CHECK(cudaEventRecord(e)); CHECK(cudaEventSynchronize(e)); float t; CHECK(cudaEventElapsedTime(&t,s,e)); if(n>=5) v.push_back(t);} 
  std::sort(v.begin(),v.end()); return v[v.size()/2];
}
template <typename Elem, int CJ, int TCC, int RJ>
void run(const char* name, int64_t B, int64_t T, int64_t H, void* flush, size_t fb) {
  constexpr int NL=8, L=16, TH=128, TC=8;
  scan_args a = make<Elem>(B,T,H,128,128);
  using cst = chunk_stage<Elem,NL,L,CJ,TCC,TH>; using rst = row_stage<Elem,NL,L,RJ,TC,TH>;
  auto dvk = backward_dv_kernel<Elem,NL,L,CJ,TCC,TH>; auto rk = backward_dq_dk_dg_kernel<Elem,NL,L,RJ,TC,TH>;
  size_t dsm = 2*cst::kBufferValues*sizeof(typename cst::C), rsm=(2*rst::kBufferValues+rst::kScratchValues)*sizeof(typename rst::C);
  CHECK(cudaFuncSetAttribute(dvk, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dsm)));
  CHECK(cudaFuncSetAttribute(rk, cudaFuncAttributeMaxDynamicSharedMemorySize, int(rsm)));
  dim3 dg(unsigned((a.V+cst::kColumns-1)/cst::kColumns), unsigned(B*H)), rg(unsigned((a.K+rst::kRows-1)/rst::kRows), unsigned(B*H));
  cudaStream_t s2; CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t fork, join; CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming)); CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  auto dv = [&](cudaStream_t s){ dvk<<<dg,TH,dsm,s>>>(a); CHECK(cudaGetLastError()); };
  auto rows = [&](cudaStream_t s){ token_dot_kernel<Elem><<<unsigned((B*T*H+7)/8),256,0,s>>>(a); rk<<<rg,TH,rsm,s>>>(a); CHECK(cudaGetLastError()); };
  float t_dv = med([&]{dv(0);},flush,fb), t_rows = med([&]{rows(0);},flush,fb), t_seq = med([&]{dv(0); rows(0);},flush,fb);
  float t_conc = med([&]{ CHECK(cudaEventRecord(fork,0)); CHECK(cudaStreamWaitEvent(s2,fork)); dv(s2); CHECK(cudaEventRecord(join,s2)); rows(0); CHECK(cudaStreamWaitEvent(0,join)); },flush,fb);
  float t_conc2 = med([&]{ CHECK(cudaEventRecord(fork,0)); CHECK(cudaStreamWaitEvent(s2,fork)); rows(s2); CHECK(cudaEventRecord(join,s2)); dv(0); CHECK(cudaStreamWaitEvent(0,join)); },flush,fb);
  cudaFuncAttributes fa{}, ra{}; CHECK(cudaFuncGetAttributes(&fa,dvk)); CHECK(cudaFuncGetAttributes(&ra,rk));
  std::printf("%s B%lld T%lld H%lld dv CJ=%d (regs %d, %u blocks) rows RJ=%d (regs %d local %zu, %u blocks): dv %.4f rows %.4f seq %.4f | side by side dv-first %.4f rows-first %.4f\n",
    name,(long long)B,(long long)T,(long long)H,CJ,fa.numRegs,dg.x*dg.y,RJ,ra.numRegs,ra.localSizeBytes,rg.x*rg.y,t_dv,t_rows,t_seq,t_conc,t_conc2);
}
int main(){
  int l2; CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0)); size_t fb=2*size_t(l2); void* flush; CHECK(cudaMalloc(&flush,fb));
  run<__nv_bfloat16,4,8,2>("bf16",4,2048,16,flush,fb);
  run<__nv_bfloat16,4,8,4>("bf16",4,2048,16,flush,fb);
  run<float,2,16,2>("fp32",4,2048,16,flush,fb);
  run<float,4,8,4>("fp32",4,2048,16,flush,fb);
  run<__nv_bfloat16,2,8,2>("bf16",2,16384,16,flush,fb);
  run<__nv_bfloat16,2,8,1>("bf16",2,16384,16,flush,fb);
  run<__nv_bfloat16,2,8,2>("bf16",4,1024,4,flush,fb);
  return 0;
}
