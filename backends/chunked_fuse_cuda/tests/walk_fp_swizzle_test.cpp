// The fp32/fp64 chunk walk's tile swizzle (fp32_fp64_mma/swizzle.hpp), on the CPU: each row's
// columns are a permutation of the row, 16-byte groups stay whole (cp.async writes them),
// and the warp-wide fragment reads of fp32_fp64_mma/mma.cuh hit distinct banks — as stored and
// transposed, for the m16n8k8 (fp32) and m16n8k4 (fp64: each A register an 8-row read)
// fragments and fp32's ldmatrix — at every row and column offset the walk uses, in every
// tile width it has; and fp16's halves, widened in place, cover each fp32 tile once.
#define BOOST_TEST_MODULE walk_fp_swizzle
#include <boost/test/included/unit_test.hpp>
#include <set>

#include "../fp32_fp64_mma/swizzle.hpp"

namespace wf = glabench::chunked::walk_fp;

namespace {

template <class T, int COLS>
void rows_are_permutations_with_whole_groups() {
  constexpr int group = 16 / sizeof(T);
  for (int r = 0; r < 64; ++r) {
    std::set<int> seen;
    for (int c = 0; c < COLS; ++c) {
      const int at = wf::swz<T, COLS>(r, c);
      BOOST_TEST_REQUIRE(at / COLS == r);
      seen.insert(at);
      const int group_start = wf::swz<T, COLS>(r, c - c % group);
      BOOST_TEST_REQUIRE(at == group_start + c % group);
    }
    BOOST_TEST_REQUIRE(seen.size() == static_cast<size_t>(COLS));
  }
}

// The lanes of one shared-memory wavefront read distinct banks: fp32, all 32 lanes and
// 4-byte banks; fp64, each half-warp and 8-byte bank pairs.
template <class T, class At>
bool conflict_free(At at) {
  const int lanes = sizeof(T) == 4 ? 32 : 16, banks = sizeof(T) == 4 ? 32 : 16;
  for (int half = 0; half < 32 / lanes; ++half) {
    std::set<int> seen;
    for (int lane = half * lanes; lane < (half + 1) * lanes; ++lane)
      seen.insert(at(lane / 4, lane % 4) % banks);
    if (seen.size() != static_cast<size_t>(lanes)) return false;
  }
  return true;
}

template <class T, int ROWS, int COLS>
void fragment_reads_are_conflict_free() {
  // fp64: the 8 rows that one A register of m16n8k4 reads.
  constexpr int TM = sizeof(T) == 4 ? 16 : 8, TK = sizeof(T) == 4 ? 8 : 4;
  for (int r0 = 0; r0 + TM <= ROWS; r0 += 8)
    for (int k0 = 0; k0 + TK <= COLS; k0 += 4) {
      // As stored: rows r0 + g, columns k0 + c (A [m][k], B [n][k]).
      BOOST_TEST_REQUIRE(
          conflict_free<T>([&](int g, int c) { return wf::swz<T, COLS>(r0 + g, k0 + c); }));
    }
  for (int k0 = 0; k0 + 4 <= ROWS; k0 += 4)
    for (int n0 = 0; n0 + 8 <= COLS; n0 += 8) {
      // Transposed: rows k0 + c, columns n0 + g (B [k][n], A from a [k][m] tile).
      BOOST_TEST_REQUIRE(
          conflict_free<T>([&](int g, int c) { return wf::swz<T, COLS>(k0 + c, n0 + g); }));
    }
}

// fp32's ldmatrix: eight rows r0 … r0+7, one 16-byte group at column k0 each, in eight
// different 16-byte bank groups of the 128-byte line.
template <int ROWS, int COLS>
void ldmatrix_rows_are_conflict_free() {
  for (int r0 = 0; r0 + 8 <= ROWS; r0 += 8)
    for (int k0 = 0; k0 < COLS; k0 += 4) {
      std::set<int> groups;
      for (int i = 0; i < 8; ++i) groups.insert(wf::swz<float, COLS>(r0 + i, k0) / 4 % 8);
      BOOST_TEST_REQUIRE(groups.size() == 8u);
    }
}

}  // namespace

// The tiles: q, k, g (C × 128), v (C × 64), S_nᵀ (64 × 128: fp32) or S_n (128 × 64: fp64),
// A (C × C); C = 32 (fp32), 16 (fp64).
BOOST_AUTO_TEST_CASE(rows_permute_and_keep_16_byte_groups) {
  rows_are_permutations_with_whole_groups<float, 128>();
  rows_are_permutations_with_whole_groups<float, 64>();
  rows_are_permutations_with_whole_groups<float, 32>();
  rows_are_permutations_with_whole_groups<double, 128>();
  rows_are_permutations_with_whole_groups<double, 64>();
  rows_are_permutations_with_whole_groups<double, 16>();
}

BOOST_AUTO_TEST_CASE(fp32_fragments_and_ldmatrix_are_conflict_free) {
  fragment_reads_are_conflict_free<float, 32, 128>();
  fragment_reads_are_conflict_free<float, 32, 64>();
  fragment_reads_are_conflict_free<float, 64, 128>();
  fragment_reads_are_conflict_free<float, 32, 32>();
  ldmatrix_rows_are_conflict_free<32, 128>();
  ldmatrix_rows_are_conflict_free<64, 128>();
  ldmatrix_rows_are_conflict_free<32, 32>();
}

// The pipelined walk's lane-split offsets are swz's, at every row block and tile it reads.
BOOST_AUTO_TEST_CASE(fp32_lane_split_offsets_are_the_swizzle) {
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, c = lane % 4;
    for (int r8 = 0; r8 < 4; ++r8)
      for (int j = 0; j < 16; ++j) {
        const int imm = 1024 * r8 + 32 * (j / 4);
        BOOST_TEST_REQUIRE(wf::swz_key_lane(g, c, j % 4, false) + imm ==
                           (wf::swz<float, 128>(8 * r8 + c, 8 * j + g)));
        BOOST_TEST_REQUIRE(wf::swz_key_lane(g, c, j % 4, true) + imm ==
                           (wf::swz<float, 128>(8 * r8 + c + 4, 8 * j + g)));
        BOOST_TEST_REQUIRE(wf::swz_pair_lane(g, c, j % 4) + imm ==
                           (wf::swz<float, 128>(8 * r8 + g, 8 * j + 2 * c)));
        BOOST_TEST_REQUIRE(wf::swz_pair_lane(g, c, j % 4) + 1 + imm ==
                           (wf::swz<float, 128>(8 * r8 + g, 8 * j + 2 * c + 1)));
      }
  }
}

// The pipelined walk's q̃ pairs (8-byte loads: two half-warp phases of 16 lanes) are
// conflict-free too.
BOOST_AUTO_TEST_CASE(fp32_pair_loads_are_conflict_free) {
  for (int r8 = 0; r8 < 2; ++r8)
    for (int j = 0; j < 16; ++j)
      for (int half = 0; half < 2; ++half) {
        std::set<int> banks;
        for (int lane = 16 * half; lane < 16 * half + 16; ++lane) {
          const int at = (wf::swz<float, 128>(8 * r8 + lane / 4, 8 * j + 2 * (lane % 4)));
          banks.insert(at % 32), banks.insert((at + 1) % 32);
        }
        BOOST_TEST_REQUIRE(banks.size() == 32u);
      }
}

BOOST_AUTO_TEST_CASE(fp64_fragments_are_conflict_free) {
  fragment_reads_are_conflict_free<double, 16, 128>();
  fragment_reads_are_conflict_free<double, 16, 64>();
  fragment_reads_are_conflict_free<double, 128, 64>();
  fragment_reads_are_conflict_free<double, 16, 16>();
}

// fp64's score quarters (fp_inner_chunk_by_quarters): four unswizzled C × C tiles in rows of
// sizes<double>::PS = C + 4 = 20 doubles (fp32_fp64_mma/layout.cuh), which stage 5 reads as
// the B fragments of vᵀ·Aᵀ (A[t][s] at rows t = r0 + g, columns s = k0 + c) on distinct banks.
BOOST_AUTO_TEST_CASE(fp64_score_quarters_are_conflict_free) {
  constexpr int C = 16, PS = C + 4;
  for (int r0 = 0; r0 + 8 <= C; r0 += 8)
    for (int k0 = 0; k0 + 4 <= C; k0 += 4)
      BOOST_TEST_REQUIRE(
          conflict_free<double>([&](int g, int c) { return (r0 + g) * PS + k0 + c; }));
}

// fp16 storage on fp32's pipelined walk (walk_io::widen) and gradient kernel
// (chunk_fp_grads_kernel): a tile's halves land unswizzled,
// 8 to a 16-byte vector (r, c), in the first half of its float tile; each vector widens
// into the 4-float groups at swz(r, c) and swz(r, c + 4). Together they write every float
// of the tile once, and stay within the tile.
template <int ROWS, int COLS>
void half_vectors_widen_onto_the_whole_tile() {
  std::set<int> written;
  for (int v = 0; v < ROWS * COLS / 8; ++v) {
    const int r = v / (COLS / 8), c = v % (COLS / 8) * 8;
    BOOST_TEST_REQUIRE((r * COLS + c) * 2 + 16 <= ROWS * COLS * 4 / 2);  // staging: first half
    for (int half = 0; half < 2; ++half) {
      const int at = wf::swz<float, COLS>(r, c + 4 * half);
      BOOST_TEST_REQUIRE(at % 4 == 0);  // a whole 16-byte group
      for (int j = 0; j < 4; ++j) BOOST_TEST_REQUIRE(written.insert(at + j).second);
    }
  }
  BOOST_TEST_REQUIRE(written.size() == static_cast<size_t>(ROWS * COLS));
  BOOST_TEST_REQUIRE(*written.rbegin() == ROWS * COLS - 1);
}

BOOST_AUTO_TEST_CASE(fp16_halves_widen_onto_whole_fp32_tiles) {
  half_vectors_widen_onto_the_whole_tile<16, 128>();  // q, k, g (KP); the first pass's v
  half_vectors_widen_onto_the_whole_tile<16, 64>();   // the walk's v slab (BV)
  half_vectors_widen_onto_the_whole_tile<64, 64>();   // the gradient kernel's q, k (BK)
  half_vectors_widen_onto_the_whole_tile<64, 32>();   // its do and v slabs (BVS)
}
