// Launch orders: which output tile the i-th scheduled work item computes.
//
// This header is shared by the CUDA kernels' tile schedulers and by the simulator, so the simulator
// replays exactly the tile sequence the GPU ran. Everything here is __host__ __device__, allocation
// free and branch-light; no standard library beyond what nvcc provides on both sides.
//
// Tile space: a grouped GEMM stacks its experts' M tiles into one column of "tile rows"; expert e
// owns rows [row_offsets[e], row_offsets[e+1]). A dense GEMM is the one-expert case. Every tile is
// (row, col) in that stacked space; 2-D orders (row_major ... hilbert) walk the stacked grid, the
// grouped orders (expert_major, interleaved) walk experts explicitly.
#pragma once

#if defined(__CUDACC__)
#define TILESIM_HD __host__ __device__ __forceinline__
#else
#define TILESIM_HD inline
#endif

namespace tilesim {

// Loop trips of tile_at, counted on the host only: the simulator charges the kernel's tile
// scheduler per trip (interleaved walks every expert per search step), and the count comes from
// these very loops, so it cannot drift from them. Device code compiles the count away.
inline thread_local long long tile_at_loop_trips = 0;
#if defined(__CUDA_ARCH__)
#define TILESIM_LOOP_TRIP() ((void)0)
#else
#define TILESIM_LOOP_TRIP() (++::tilesim::tile_at_loop_trips)
#endif

enum class LaunchOrderKind : int {
  row_major = 0,
  column_major,
  grouped_m,  // Triton's GROUP_M rasterisation: bands of `group` tile rows, column-major inside a band
  grouped_n,  // the same with rows and columns exchanged
  serpentine, // row-major, every other row reversed (boustrophedon)
  morton,     // Z-order over the grid, holes of the enclosing power-of-two square skipped
  hilbert,    // Hilbert curve over the grid, holes skipped
  expert_major, // experts one after another, grouped_m:`group` inside each expert
  interleaved,  // round r takes tile row r of every expert that has one, experts in order
  count_
};

struct LaunchOrder {
  LaunchOrderKind kind = LaunchOrderKind::row_major;
  int group = 8; // band height for grouped_m / grouped_n / expert_major
};

struct TileSpace {
  const int* row_offsets = nullptr; // experts + 1 prefix sums of tile rows per expert
  int experts = 1;
  int tile_rows = 0; // == row_offsets[experts]
  int tile_cols = 0;
};

struct TileIndex {
  int expert;
  int row;       // stacked tile row
  int local_row; // tile row within the expert
  int col;
};

struct GridPoint {
  int row;
  int col;
};

TILESIM_HD int tile_count(const TileSpace& space) { return space.tile_rows * space.tile_cols; }

TILESIM_HD int min_int(int a, int b) { return a < b ? a : b; }
TILESIM_HD int max_int(int a, int b) { return a > b ? a : b; }

// Smallest power of two >= n (n >= 1).
TILESIM_HD int enclosing_power_of_two(int n) {
  int p = 1;
  while (p < n) {
    TILESIM_LOOP_TRIP();
    p <<= 1;
  }
  return p;
}

TILESIM_HD GridPoint grouped_rows(int rows, int cols, int group, int linear) {
  const int per_band = group * cols;
  const int band = linear / per_band;
  const int first_row = band * group;
  const int band_rows = min_int(rows - first_row, group);
  const int in_band = linear - band * per_band;
  return {first_row + in_band % band_rows, in_band / band_rows};
}

// Cells of the rows x cols grid inside the axis-aligned square [r0, r0+side) x [c0, c0+side).
TILESIM_HD int cells_inside(int rows, int cols, int r0, int c0, int side) {
  const int r = min_int(r0 + side, rows) - max_int(r0, 0);
  const int c = min_int(c0 + side, cols) - max_int(c0, 0);
  return (r > 0 && c > 0) ? r * c : 0;
}

// Z-order descent: at each level pick the quadrant (in Z order) holding the linear-th valid cell.
TILESIM_HD GridPoint morton_point(int rows, int cols, int linear) {
  int side = enclosing_power_of_two(max_int(rows, cols));
  int r0 = 0, c0 = 0;
  while (side > 1) {
    const int half = side / 2;
    for (int q = 0; q < 4; ++q) {
      TILESIM_LOOP_TRIP();
      const int qr = r0 + (q >> 1) * half, qc = c0 + (q & 1) * half;
      const int n = cells_inside(rows, cols, qr, qc, half);
      if (linear < n) {
        r0 = qr;
        c0 = qc;
        break;
      }
      linear -= n;
    }
    side = half;
  }
  return {r0, c0};
}

// Hilbert descent in the vector form of the curve: a square is an origin plus two edge vectors
// (a, b), walked from o to o+b; its four children, in curve order, are (o, b/2, a/2), (o+a/2, a/2, b/2),
// (o+a/2+b/2, a/2, b/2), (o+a/2+b, -b/2, -a/2). Coordinates are doubled so halves stay integral.
// One child square of the Hilbert descent: origin (x, y) and edge vectors a, b.
struct HilbertSquare {
  int x, y, ax, ay, bx, by;
};

// Child q (in curve order) of `s`, whose half vectors are (hax, hay) and (hbx, hby). Written as a
// switch, not tables: tables indexed at run time put the kernel's scheduler on the stack.
TILESIM_HD HilbertSquare hilbert_child(const HilbertSquare& s, int q) {
  const int hax = s.ax / 2, hay = s.ay / 2, hbx = s.bx / 2, hby = s.by / 2;
  switch (q) {
  case 0: return {s.x, s.y, hbx, hby, hax, hay};
  case 1: return {s.x + hax, s.y + hay, hax, hay, hbx, hby};
  case 2: return {s.x + hax + hbx, s.y + hay + hby, hax, hay, hbx, hby};
  default: return {s.x + hax + s.bx, s.y + hay + s.by, -hbx, -hby, -hax, -hay};
  }
}

TILESIM_HD GridPoint hilbert_point(int rows, int cols, int linear) {
  const int side = enclosing_power_of_two(max_int(rows, cols));
  // (x = col, y = row) in doubled units; the square spans origin + s*a + t*b for s,t in [0,1].
  HilbertSquare square{0, 0, 2 * side, 0, 0, 2 * side};
  for (int s = side; s > 1; s /= 2) {
    for (int q = 0; q < 4; ++q) {
      TILESIM_LOOP_TRIP();
      const HilbertSquare child = hilbert_child(square, q);
      const int x2 = child.x + child.ax + child.bx, y2 = child.y + child.ay + child.by;
      const int n = cells_inside(rows, cols, min_int(child.y, y2) / 2, min_int(child.x, x2) / 2, s / 2);
      if (linear < n || q == 3) {
        square = child;
        break;
      }
      linear -= n;
    }
  }
  return {min_int(square.y, square.y + square.ay + square.by) / 2, min_int(square.x, square.x + square.ax + square.bx) / 2};
}

// Expert owning a stacked tile row: binary search over the prefix sums.
TILESIM_HD int expert_of_row(const TileSpace& space, int row) {
  int lo = 0, hi = space.experts - 1;
  while (lo < hi) {
    TILESIM_LOOP_TRIP();
    const int mid = (lo + hi + 1) / 2;
    if (space.row_offsets[mid] <= row)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

TILESIM_HD int expert_rows(const TileSpace& space, int e) {
  return space.row_offsets[e + 1] - space.row_offsets[e];
}

// Tiles in the first `rounds` rounds of the interleaved order.
TILESIM_HD int interleaved_tiles_before(const TileSpace& space, int rounds) {
  int rows = 0;
  for (int e = 0; e < space.experts; ++e) {
    TILESIM_LOOP_TRIP();
    rows += min_int(expert_rows(space, e), rounds);
  }
  return rows * space.tile_cols;
}

TILESIM_HD GridPoint interleaved_point(const TileSpace& space, int linear) {
  // Largest round r with tiles_before(r) <= linear, by binary search over rounds.
  int lo = 0, hi = space.tile_rows;
  while (lo < hi) {
    TILESIM_LOOP_TRIP();
    const int mid = (lo + hi + 1) / 2;
    if (interleaved_tiles_before(space, mid) <= linear)
      lo = mid;
    else
      hi = mid - 1;
  }
  const int round = lo;
  int in_round = linear - interleaved_tiles_before(space, round);
  const int nth_expert = in_round / space.tile_cols;
  const int col = in_round - nth_expert * space.tile_cols;
  int seen = 0;
  for (int e = 0; e < space.experts; ++e) {
    TILESIM_LOOP_TRIP();
    if (expert_rows(space, e) <= round) continue;
    if (seen == nth_expert) return {space.row_offsets[e] + round, col};
    ++seen;
  }
  return {-1, -1}; // unreachable for linear < tile_count(space)
}

TILESIM_HD GridPoint expert_major_point(const TileSpace& space, int group, int linear) {
  int e = 0;
  while (linear >= expert_rows(space, e) * space.tile_cols) {
    TILESIM_LOOP_TRIP();
    linear -= expert_rows(space, e) * space.tile_cols;
    ++e;
  }
  const GridPoint p = grouped_rows(expert_rows(space, e), space.tile_cols, group, linear);
  return {space.row_offsets[e] + p.row, p.col};
}

// The tile computed by the linear-th work item, 0 <= linear < tile_count(space).
TILESIM_HD TileIndex tile_at(const LaunchOrder& order, const TileSpace& space, int linear) {
  const int rows = space.tile_rows, cols = space.tile_cols;
  GridPoint p{0, 0};
  switch (order.kind) {
  case LaunchOrderKind::row_major: p = {linear / cols, linear % cols}; break;
  case LaunchOrderKind::column_major: p = {linear % rows, linear / rows}; break;
  case LaunchOrderKind::grouped_m: p = grouped_rows(rows, cols, order.group, linear); break;
  case LaunchOrderKind::grouped_n: {
    const GridPoint t = grouped_rows(cols, rows, order.group, linear);
    p = {t.col, t.row};
    break;
  }
  case LaunchOrderKind::serpentine: {
    const int r = linear / cols, c = linear % cols;
    p = {r, (r & 1) ? cols - 1 - c : c};
    break;
  }
  case LaunchOrderKind::morton: p = morton_point(rows, cols, linear); break;
  case LaunchOrderKind::hilbert: p = hilbert_point(rows, cols, linear); break;
  case LaunchOrderKind::expert_major: p = expert_major_point(space, order.group, linear); break;
  case LaunchOrderKind::interleaved: p = interleaved_point(space, linear); break;
  default: p = {linear / cols, linear % cols}; break;
  }
  const int e = expert_of_row(space, p.row);
  return {e, p.row, p.row - space.row_offsets[e], p.col};
}

// Loop trips the kernel's scheduler makes to find the linear-th work item's tile (host only);
// the tile itself goes to `tile` when given.
inline long long tile_at_trips(const LaunchOrder& order, const TileSpace& space, int linear,
                               TileIndex* tile = nullptr) {
  tile_at_loop_trips = 0;
  const TileIndex t = tile_at(order, space, linear);
  if (tile) *tile = t;
  return tile_at_loop_trips;
}

} // namespace tilesim
