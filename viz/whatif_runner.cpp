#include "viz/whatif_runner.h"

#include "models/spec_error.h"
#include "sim/gpu_simulator.h"

#include <QMetaObject>

namespace tilesim::viz {

WhatIfRunner::WhatIfRunner(QObject *parent) : QObject(parent) {}

WhatIfRunner::~WhatIfRunner() {
  cancel_ = true;
  if (worker_.joinable()) worker_.join();
}

void WhatIfRunner::post(std::function<void()> f) {
  // Runs `f` on the thread this object lives on, after the worker has moved on.
  QMetaObject::invokeMethod(this, std::move(f), Qt::QueuedConnection);
}

bool WhatIfRunner::start(GpuProfile gpu, KernelSpec spec, std::vector<LaunchOrder> orders, const QString &spec_path) {
  if (running_) return false;
  if (worker_.joinable()) worker_.join();
  running_ = true;
  cancel_ = false;
  worker_ = std::thread([this, gpu = std::move(gpu), spec = std::move(spec), orders = std::move(orders),
                         path = spec_path.toStdString()]() mutable {
    const double n = static_cast<double>(orders.size());
    int done = 0;
    try {
      for (const LaunchOrder &order : orders) {
        spec.order = order;
        SimulationOptions options;
        options.cancel = &cancel_;
        options.progress = [this, done, n](double f) { post([this, v = (done + f) / n] { emit progress(v); }); };
        KernelResult r = simulate(gpu, spec, options);
        ++done;
        post([this, r = std::move(r), v = done / n]() mutable {
          emit resultReady(std::move(r));
          emit progress(v);
        });
      }
      post([this, done] {
        running_ = false;
        emit finished(done);
      });
    } catch (const SimulationCancelled &) {
      post([this, done] {
        running_ = false;
        emit cancelled(done);
      });
    } catch (const std::exception &e) {
      // SpecError names the spec by its `name`; put the file in front so the line names it.
      post([this, m = path + ": " + e.what()] {
        running_ = false;
        emit failed(QString::fromStdString(m));
      });
    }
  });
  return true;
}

void WhatIfRunner::cancel() { cancel_ = true; }

} // namespace tilesim::viz
