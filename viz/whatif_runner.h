// Runs the simulator over a list of launch orders on a worker thread, so the window stays
// responsive; reports progress, each result and the end back on the runner's (GUI) thread.
// cancel() stops the running simulation between events (SimulationOptions::cancel).
#pragma once

#include "models/gpu_profile.h"
#include "models/kernel_spec.h"
#include "sim/kernel_result.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <thread>
#include <vector>

namespace tilesim::viz {

class WhatIfRunner : public QObject {
  Q_OBJECT
public:
  explicit WhatIfRunner(QObject *parent = nullptr);
  ~WhatIfRunner() override; // cancels and joins a run still going

  // Starts simulating `spec` in each of `orders`; false (and nothing started) while a run is going.
  // `spec_path` names the spec in error messages.
  bool start(GpuProfile gpu, KernelSpec spec, std::vector<LaunchOrder> orders, const QString &spec_path);
  void cancel();
  bool running() const { return running_; }

signals:
  void progress(double fraction); // over the whole run, 0..1
  void resultReady(tilesim::KernelResult result);
  // Exactly one of these ends every run.
  void finished(int results);
  void cancelled(int results);
  void failed(QString message);

private:
  void post(std::function<void()> f);

  std::thread worker_;
  std::atomic<bool> cancel_{false};
  bool running_ = false;
};

} // namespace tilesim::viz
