#include "viz/main_window.h"

#include "viz/tile_metric.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QMenuBar>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QToolBar>
#include <QVBoxLayout>

#include <cmath>

namespace tilesim::viz {
namespace {

constexpr int kRecentFiles = 8;
constexpr int kPlayFrames = 200; // a replay sweeps the run in this many frames
constexpr int kFrameMs = 33;

} // namespace

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent) {
  setWindowTitle("tilesim-viewer");
  setAcceptDrops(true);
  resize(1280, 800);
  documents_ = new QTabBar(this);
  documents_->setTabsClosable(true);
  documents_->setExpanding(false);
  error_ = new QLabel(this);
  error_->setWordWrap(true);
  error_->setStyleSheet("QLabel { color: #b00000; }");
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->hide();
  heatmap_ = new HeatmapView(this);
  timeline_ = new TimelineView(this);
  compare_ = new CompareView(this);
  whatif_ = new WhatIfPanel(this);
  views_ = new QTabWidget(this);
  views_->addTab(heatmap_, "Heatmap");
  views_->addTab(timeline_, "Timeline");
  views_->addTab(compare_, "Compare");
  views_->addTab(whatif_, "What-if");
  selection_ = new QLabel("Click a tile to select it in every view.", this);

  auto *central = new QWidget(this);
  auto *layout = new QVBoxLayout(central);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(documents_);
  layout->addWidget(error_);
  layout->addWidget(views_, 1);
  layout->addWidget(build_replay_bar());
  setCentralWidget(central);
  statusBar()->addWidget(selection_, 1);
  build_menus();

  connect(documents_, &QTabBar::currentChanged, this, &MainWindow::show_document);
  connect(documents_, &QTabBar::tabCloseRequested, this, &MainWindow::close_document);
  connect(heatmap_, &HeatmapView::tileClicked, this, &MainWindow::select_tile);
  connect(timeline_, &TimelineView::tileClicked, this, &MainWindow::select_tile);
  connect(whatif_, &WhatIfPanel::resultReady, this, &MainWindow::add_result);
  connect(&play_timer_, &QTimer::timeout, this, &MainWindow::advance_play);
  show_document(-1);
}

void MainWindow::build_menus() {
  QMenu *file = menuBar()->addMenu("&File");
  file->addAction("&Open...", QKeySequence::Open, this, [this] {
    const QStringList paths = QFileDialog::getOpenFileNames(this, "Open results", {}, "tilesim results (*.json)");
    for (const QString &p : paths) open_file(p);
  });
  recent_menu_ = file->addMenu("Open &Recent");
  file->addAction("&Close tab", QKeySequence::Close, this, [this] { close_document(documents_->currentIndex()); });
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);
  rebuild_recent_menu();

  QToolBar *bar = addToolBar("Colour");
  bar->setMovable(false);
  metric_ = new QComboBox(bar);
  for (const auto &m : tile_metrics()) metric_->addItem(m.label, m.id);
  color_map_ = new QComboBox(bar);
  color_map_->addItems(color_map_names());
  bar->addWidget(new QLabel(" colour tiles by ", bar));
  bar->addWidget(metric_);
  bar->addWidget(new QLabel("  map ", bar));
  bar->addWidget(color_map_);
  connect(metric_, &QComboBox::currentIndexChanged, this, [this] { set_metric(metric_->currentData().toString()); });
  connect(color_map_, &QComboBox::currentTextChanged, this, &MainWindow::set_color_map);
}

QWidget *MainWindow::build_replay_bar() {
  auto *bar = new QWidget(this);
  play_button_ = new QToolButton(bar);
  play_button_->setText("Play");
  slider_ = new QSlider(Qt::Horizontal, bar);
  time_label_ = new QLabel(bar);
  time_label_->setMinimumWidth(170);
  auto *layout = new QHBoxLayout(bar);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(play_button_);
  layout->addWidget(slider_, 1);
  layout->addWidget(time_label_);
  connect(play_button_, &QToolButton::clicked, this, [this] { playing() ? pause() : play(); });
  connect(slider_, &QSlider::valueChanged, this, [this](int v) { set_time_ns(v * ns_per_step_); });
  return bar;
}

bool MainWindow::open_file(const QString &path) {
  try {
    add_result(open_result_file(path));
    remember_recent(path);
    return true;
  } catch (const ViewerError &e) {
    show_error(QString::fromStdString(e.what()));
    return false;
  }
}

void MainWindow::show_error(const QString &message) {
  last_error_ = message;
  // The last few, newest first: opening several files can fail on more than one.
  QStringList lines = error_->text().split('\n', Qt::SkipEmptyParts);
  lines.prepend(message);
  while (lines.size() > 3) lines.removeLast();
  error_->setText(lines.join('\n'));
  error_->show();
}

void MainWindow::add_result(OpenResultPtr result) {
  const int index = library_.add(std::move(result));
  refresh_documents();
  {
    const QSignalBlocker block(documents_);
    documents_->setCurrentIndex(index);
  }
  show_document(index); // once, also when the index did not change (a result joined the open document)
}

void MainWindow::close_document(int index) {
  library_.close(index);
  refresh_documents();
  show_document(documents_->currentIndex());
}

void MainWindow::refresh_documents() {
  const QSignalBlocker block(documents_);
  while (documents_->count() > 0) documents_->removeTab(0);
  for (const auto &d : library_.documents()) documents_->addTab(d.title());
}

void MainWindow::show_document(int index) {
  const auto &docs = library_.documents();
  const bool valid = index >= 0 && index < static_cast<int>(docs.size());
  const std::vector<OpenResultPtr> results = valid ? docs[index].results : std::vector<OpenResultPtr>{};
  heatmap_->set_results(results);
  timeline_->set_results(results);
  if (valid)
    compare_->set_document(docs[index], library_.same_config(results.front()->config));
  else
    compare_->clear();
  end_ns_ = replay_end_ns(results);
  // One slider step per ns, coarser for runs past a second (the slider counts in int).
  ns_per_step_ = std::max(1.0, std::ceil(end_ns_ / 1e9));
  slider_->setRange(0, static_cast<int>(std::ceil(end_ns_ / ns_per_step_)));
  set_time_ns(end_ns_);
  select_tile(selected_row_, selected_col_);
}

void MainWindow::set_view(const QString &name) {
  static const QStringList views{"heatmap", "timeline", "compare", "whatif"};
  if (views.contains(name)) views_->setCurrentIndex(static_cast<int>(views.indexOf(name)));
}

void MainWindow::set_metric(const QString &id) {
  heatmap_->set_metric(id);
  timeline_->set_metric(id);
  const QSignalBlocker block(metric_);
  metric_->setCurrentIndex(metric_->findData(id));
}

void MainWindow::set_color_map(const QString &name) {
  heatmap_->set_color_map(name);
  timeline_->set_color_map(name);
  const QSignalBlocker block(color_map_);
  color_map_->setCurrentText(name);
}

void MainWindow::set_time_ns(double t) {
  time_ns_ = std::clamp(t, 0.0, std::max(0.0, end_ns_));
  heatmap_->set_time_ns(time_ns_);
  timeline_->set_time_ns(time_ns_);
  {
    const QSignalBlocker block(slider_);
    slider_->setValue(static_cast<int>(std::lround(time_ns_ / ns_per_step_)));
  }
  time_label_->setText(QString("%1 / %2 µs").arg(time_ns_ / 1000, 0, 'f', 1).arg(end_ns_ / 1000, 0, 'f', 1));
}

void MainWindow::select_tile(int row, int col) {
  selected_row_ = row;
  selected_col_ = col;
  heatmap_->set_selected(row, col);
  timeline_->set_selected(row, col);
  compare_->set_selected(row, col);
  const int doc = documents_->currentIndex();
  if (row < 0 || doc < 0 || doc >= document_count()) return;
  QStringList parts;
  for (const auto &r : library_.documents()[doc].results) {
    const TileGrid g = tile_grid(r->result);
    const int i = g.at(row, col);
    if (i >= 0) parts << describe_tile(*r, r->result.tiles[i]).replace('\n', "; ");
  }
  selection_->setText(parts.join("   |   "));
}

void MainWindow::play() {
  if (end_ns_ <= 0) return;
  if (time_ns_ >= end_ns_) set_time_ns(0);
  play_button_->setText("Pause");
  play_timer_.start(kFrameMs);
}

void MainWindow::pause() {
  play_timer_.stop();
  play_button_->setText("Play");
}

void MainWindow::advance_play() {
  set_time_ns(time_ns_ + end_ns_ / kPlayFrames);
  if (time_ns_ >= end_ns_) pause();
}

void MainWindow::remember_recent(const QString &file) {
  const QString path = QFileInfo(file).absoluteFilePath();
  QSettings settings("tilesim", "tilesim-viewer");
  QStringList recent = settings.value("recent").toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kRecentFiles) recent.removeLast();
  settings.setValue("recent", recent);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings("tilesim", "tilesim-viewer").value("recent").toStringList();
  for (const QString &path : recent) recent_menu_->addAction(path, this, [this, path] { open_file(path); });
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent *e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *e) {
  for (const QUrl &url : e->mimeData()->urls())
    if (url.isLocalFile()) open_file(url.toLocalFile());
}

} // namespace tilesim::viz
