// The What-if tab: a GPU profile, a kernel spec file and launch orders; Run simulates them on a
// worker thread (progress bar, Cancel); each result is handed on to open as a new tab and join
// the per-order chart. Bad input is one line naming the file, the field and the fix.
#pragma once

#include "viz/open_result.h"
#include "viz/whatif_runner.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QWidget>

namespace tilesim::viz {

class WhatIfPanel : public QWidget {
  Q_OBJECT
public:
  explicit WhatIfPanel(QWidget *parent = nullptr);

  void set_gpu(const QString &name);
  void set_spec_path(const QString &path);
  void set_orders(const QString &orders); // comma-separated, or "all"
  // Starts a run; false (with the reason in status()) when the input is bad or a run is going.
  bool run();
  void cancel();
  bool running() const { return runner_.running(); }
  QString status() const { return status_->text(); }
  int progress_percent() const { return progress_->value(); }

signals:
  void resultReady(tilesim::viz::OpenResultPtr result);

private:
  void browse();
  void set_running(bool on);

  QComboBox *gpu_;
  QLineEdit *spec_;
  QLineEdit *orders_;
  QPushButton *run_button_;
  QPushButton *cancel_button_;
  QProgressBar *progress_;
  QLabel *status_;
  WhatIfRunner runner_;
  QString spec_name_;
};

} // namespace tilesim::viz
