#include "viz/whatif_panel.h"

#include "models/launch_order_names.h"
#include "models/spec_error.h"

#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QVBoxLayout>

namespace tilesim::viz {

WhatIfPanel::WhatIfPanel(QWidget *parent) : QWidget(parent) {
  gpu_ = new QComboBox(this);
  gpu_->setEditable(true); // a profile JSON path works too
  QString profile_error;
  try {
    for (const auto &name : shipped_gpu_names()) gpu_->addItem(QString::fromStdString(name));
  } catch (const std::exception &e) {
    profile_error = e.what(); // shown below; a profile path can still be typed in
  }
  spec_ = new QLineEdit(this);
  spec_->setPlaceholderText("kernel spec JSON, e.g. models/kernels/default.json");
  auto *browse_button = new QPushButton("Browse...", this);
  orders_ = new QLineEdit("all", this);
  orders_->setToolTip("comma-separated launch orders (row_major, grouped_m:8, hilbert, ...) or all");
  run_button_ = new QPushButton("Run", this);
  cancel_button_ = new QPushButton("Cancel", this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 100);
  status_ = new QLabel("Pick a GPU, a kernel spec and orders, then Run.", this);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto *spec_row = new QHBoxLayout;
  spec_row->addWidget(spec_);
  spec_row->addWidget(browse_button);
  auto *form = new QFormLayout;
  form->addRow("GPU profile", gpu_);
  form->addRow("kernel spec", spec_row);
  form->addRow("launch orders", orders_);
  auto *buttons = new QHBoxLayout;
  buttons->addWidget(run_button_);
  buttons->addWidget(cancel_button_);
  buttons->addWidget(progress_, 1);
  auto *layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(status_);
  layout->addStretch(1);
  set_running(false);
  if (!profile_error.isEmpty()) status_->setText(profile_error);

  connect(browse_button, &QPushButton::clicked, this, &WhatIfPanel::browse);
  connect(run_button_, &QPushButton::clicked, this, &WhatIfPanel::run);
  connect(cancel_button_, &QPushButton::clicked, this, &WhatIfPanel::cancel);
  connect(&runner_, &WhatIfRunner::progress, this,
          [this](double f) { progress_->setValue(static_cast<int>(100 * f)); });
  connect(&runner_, &WhatIfRunner::resultReady, this, [this](KernelResult r) {
    const QString label = QString("%1 [%2, what-if on %3]")
                              .arg(spec_name_, QString::fromStdString(r.order), QString::fromStdString(r.gpu));
    emit resultReady(make_open_result(std::move(r), label));
  });
  connect(&runner_, &WhatIfRunner::finished, this, [this](int n) {
    set_running(false);
    status_->setText(QString("Done: %1 order(s) simulated; each opened as a tab.").arg(n));
  });
  connect(&runner_, &WhatIfRunner::cancelled, this, [this](int n) {
    set_running(false);
    status_->setText(QString("Cancelled after %1 order(s).").arg(n));
  });
  connect(&runner_, &WhatIfRunner::failed, this, [this](const QString &m) {
    set_running(false);
    status_->setText(m);
  });
}

void WhatIfPanel::set_gpu(const QString &name) {
  const int i = gpu_->findText(name);
  if (i >= 0)
    gpu_->setCurrentIndex(i);
  else
    gpu_->setEditText(name);
}

void WhatIfPanel::set_spec_path(const QString &path) { spec_->setText(path); }
void WhatIfPanel::set_orders(const QString &orders) { orders_->setText(orders); }

void WhatIfPanel::browse() {
  const QString path = QFileDialog::getOpenFileName(this, "Kernel spec", spec_->text(), "Kernel spec (*.json)");
  if (!path.isEmpty()) spec_->setText(path);
}

void WhatIfPanel::set_running(bool on) {
  run_button_->setEnabled(!on);
  cancel_button_->setEnabled(on);
  gpu_->setEnabled(!on);
  spec_->setEnabled(!on);
  orders_->setEnabled(!on);
}

bool WhatIfPanel::run() {
  if (runner_.running()) return false;
  const QString path = spec_->text().trimmed();
  try {
    if (path.isEmpty())
      throw SpecError("What-if", "kernel spec", "no file given", "pick a kernel spec JSON (Browse...)");
    const GpuProfile gpu = load_gpu_profile(gpu_->currentText().toStdString());
    const KernelSpec spec = load_kernel_spec(path.toStdString());
    std::vector<LaunchOrder> orders;
    const QString text = orders_->text().trimmed();
    if (text.isEmpty() || text == "all") {
      orders = all_launch_orders(spec.kind == KernelKind::grouped_gemm);
    } else {
      for (const QString &name : text.split(',', Qt::SkipEmptyParts)) {
        try {
          orders.push_back(parse_launch_order(name.trimmed().toStdString()));
        } catch (const std::invalid_argument &e) {
          throw SpecError("What-if", "launch orders", e.what(),
                          "write orders such as row_major, grouped_m:8, hilbert or all");
        }
      }
    }
    spec_name_ = QString::fromStdString(spec.name);
    progress_->setValue(0);
    status_->setText(
        QString("Simulating %1 order(s) of %2 on %3...").arg(orders.size()).arg(spec_name_, gpu_->currentText()));
    set_running(true);
    return runner_.start(gpu, spec, std::move(orders), path);
  } catch (const std::exception &e) {
    status_->setText(e.what());
    return false;
  }
}

void WhatIfPanel::cancel() { runner_.cancel(); }

} // namespace tilesim::viz
