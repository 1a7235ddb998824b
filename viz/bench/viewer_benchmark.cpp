// tilesim_viewer_bench: the viewer's speed (not a test). Slider redraw: the heatmap and timeline
// of a 2,048-tile predicted + measured pair repainted at successive slider times; open: a
// result of about 10 MB read and shown. Prints the median of each.
//   tilesim_viewer_bench [measured.json predicted.json]   (QT_QPA_PLATFORM=offscreen without X)
#include "sim/kernel_result.h"
#include "viz/main_window.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A simulated-looking result of a 136 x 250 grid of 128 x 128 tiles (34,000 tiles, seeded
// sectors): about 10 MB as save_kernel_result writes it, written to `path`.
int write_large_result(const std::string &path) {
  const int rows = 136, cols = 250;
  tilesim::KernelResult r;
  r.source = "simulated";
  r.gpu = "h100";
  r.order = "row_major";
  r.kernel = {{"name", "bench"},
              {"kind", "gemm"},
              {"dtype", "bf16"},
              {"m", 128 * rows},
              {"n", 128 * cols},
              {"k", 4096},
              {"layout", {{"a", "row"}, {"b", "col"}}},
              {"tile", {{"m", 128}, {"n", 128}, {"k", 64}}},
              {"stages", 4},
              {"warps", 8},
              {"load", "tma"},
              {"persistent", true},
              {"order", "row_major"}};
  r.time_ms = 40;
  r.tflops = 2.0 * 128 * rows * 128 * cols * 4096 / (r.time_ms * 1e-3) / 1e12;
  std::mt19937 rng(7);
  std::uniform_int_distribution<long long> sectors(0, 4096);
  for (int i = 0; i < rows * cols; ++i) {
    tilesim::TileRecord t{i, 0, i / cols, i % cols, i % 132, 0, 0, {}, {}, {}, {}, {}, {}};
    t.start_ns = 132.0 * (i / 132);
    t.end_ns = t.start_ns + 130;
    t.start_cycle = t.start_ns * 1.63;
    t.end_cycle = t.end_ns * 1.63;
    t.a_hit_sectors = sectors(rng);
    t.a_miss_sectors = sectors(rng);
    t.b_hit_sectors = sectors(rng);
    t.b_miss_sectors = sectors(rng);
    r.tiles.push_back(t);
  }
  tilesim::save_kernel_result(r, path);
  return rows * cols;
}

} // namespace

int main(int argc, char **argv) {
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const std::string data = TILESIM_SOURCE_DIR "/validation/data/h100/measured/";
  const QString measured = argc > 2 ? argv[1] : QString::fromStdString(data + "dense8192_t128x256_p_grouped_m8.json");
  const QString predicted = argc > 2 ? argv[2] : QString::fromStdString(data + "dense8192_t128x256_p_grouped_m8.json");

  tilesim::viz::MainWindow window;
  window.resize(1280, 800);
  if (!window.open_file(measured) || !window.open_file(predicted)) {
    std::fprintf(stderr, "tilesim_viewer_bench: %s\n", window.last_error().toStdString().c_str());
    return 1;
  }
  window.show();
  QApplication::processEvents();
  for (const char *view : {"heatmap", "timeline"}) {
    window.set_view(view);
    QWidget *widget = std::string(view) == "heatmap" ? static_cast<QWidget *>(window.heatmap()) : window.timeline();
    std::vector<double> ms;
    const int frames = 60;
    for (int f = 0; f < frames; ++f) {
      QElapsedTimer timer;
      timer.start();
      window.slider()->setValue(static_cast<int>(window.replay_end() * f / frames)); // as a drag does
      widget->repaint();                                                             // paint now, not later
      ms.push_back(timer.nsecsElapsed() / 1e6);
    }
    std::printf("slider redraw, %s, %zu tiles per result, %d results: median %.2f ms, max %.2f ms over %d frames\n",
                view, window.library().documents().front().results.front()->result.tiles.size(),
                static_cast<int>(window.library().documents().front().results.size()), median(ms),
                *std::max_element(ms.begin(), ms.end()), frames);
  }

  const std::string big = (std::filesystem::temp_directory_path() / "tilesim_viewer_bench_10mb.json").string();
  const int tiles = write_large_result(big);
  const double mb = std::filesystem::file_size(big) / 1e6;
  std::vector<double> open_ms, open_cpu_ms; // wall, and this process's CPU time (the machine is shared)
  for (int i = 0; i < 5; ++i) {
    tilesim::viz::MainWindow w;
    w.resize(1280, 800);
    w.show();
    QApplication::processEvents();
    QElapsedTimer timer;
    timer.start();
    const std::clock_t cpu = std::clock();
    if (!w.open_file(QString::fromStdString(big))) return 1;
    w.heatmap()->repaint();
    open_ms.push_back(timer.nsecsElapsed() / 1e6);
    open_cpu_ms.push_back((std::clock() - cpu) * 1e3 / CLOCKS_PER_SEC);
  }
  std::printf("open a %.1f MB result (%d tiles) and draw its heatmap: median %.0f ms wall, %.0f ms CPU over %zu runs\n",
              mb, tiles, median(open_ms), median(open_cpu_ms), open_ms.size());
  std::filesystem::remove(big);
  return 0;
}
