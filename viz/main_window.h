// The viewer's window: a tab per open document (a result, or a predicted and a measured one
// side by side), the views (Heatmap, Timeline, Compare, What-if), the replay slider with
// play/pause, the metric and colour-map pickers. Files open from File > Open, Open Recent, drag
// and drop, or the command line; bad files leave one line naming the file, the field and the
// fix in the error bar, never a modal dialog and never a crash.
#pragma once

#include "viz/compare_view.h"
#include "viz/heatmap_view.h"
#include "viz/result_library.h"
#include "viz/timeline_view.h"
#include "viz/whatif_panel.h"

#include <QComboBox>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QSlider>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>

namespace tilesim::viz {

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(QWidget *parent = nullptr);

  // False after showing the error (also in last_error()).
  bool open_file(const QString &path);
  void add_result(OpenResultPtr result);
  void close_document(int index);
  void set_view(const QString &name); // heatmap, timeline, compare, whatif
  void set_metric(const QString &id);
  void set_color_map(const QString &name);
  void set_time_ns(double t);
  void select_tile(int row, int col);
  void play();
  void pause();

  double time_ns() const { return time_ns_; }
  double replay_end() const { return end_ns_; }
  bool playing() const { return play_timer_.isActive(); }
  int document_count() const { return static_cast<int>(library_.documents().size()); }
  int current_document() const { return documents_->currentIndex(); }
  const ResultLibrary &library() const { return library_; }
  QString last_error() const { return last_error_; }
  QString selection_text() const { return selection_->text(); }
  HeatmapView *heatmap() const { return heatmap_; }
  TimelineView *timeline() const { return timeline_; }
  CompareView *compare() const { return compare_; }
  WhatIfPanel *whatif() const { return whatif_; }
  QSlider *slider() const { return slider_; }

protected:
  void dragEnterEvent(QDragEnterEvent *e) override;
  void dropEvent(QDropEvent *e) override;

private:
  void build_menus();
  QWidget *build_replay_bar();
  void show_document(int index);
  void refresh_documents();
  void remember_recent(const QString &path);
  void rebuild_recent_menu();
  void show_error(const QString &message);
  void advance_play();

  ResultLibrary library_;
  QTabBar *documents_;
  QTabWidget *views_;
  QLabel *error_;
  QLabel *selection_;
  HeatmapView *heatmap_;
  TimelineView *timeline_;
  CompareView *compare_;
  WhatIfPanel *whatif_;
  QComboBox *metric_;
  QComboBox *color_map_;
  QSlider *slider_;
  QLabel *time_label_;
  QToolButton *play_button_;
  QMenu *recent_menu_ = nullptr;
  QTimer play_timer_;
  QString last_error_;
  double time_ns_ = 0;
  double end_ns_ = 0;
  double ns_per_step_ = 1; // replay time per slider step
  int selected_row_ = -1, selected_col_ = -1;
};

} // namespace tilesim::viz
