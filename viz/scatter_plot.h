// A scatter plot drawn with QPainter: one point per tile, the y = x diagonal, axis ranges from
// the data. Says why when it has nothing to show.
#pragma once

#include <QWidget>

#include <vector>

namespace tilesim::viz {

class ScatterPlot : public QWidget {
  Q_OBJECT
public:
  explicit ScatterPlot(QWidget *parent = nullptr);
  void set_points(std::vector<QPointF> points, QString x_label, QString y_label, QString title);
  void set_message(QString message); // clears the points
  void set_highlight(int index);     // -1: none
  const std::vector<QPointF> &points() const { return points_; }
  const QString &message() const { return message_; }

protected:
  void paintEvent(QPaintEvent *) override;

private:
  std::vector<QPointF> points_;
  QString x_label_, y_label_, title_, message_;
  int highlight_ = -1;
};

} // namespace tilesim::viz
