// Sequential colour maps (viridis, cividis) read from viz/colormaps.json, compiled in as a Qt
// resource: the samples are data, the interpolation is code.
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>
#include <QVector>

namespace tilesim::viz {

class ColorMap {
public:
  ColorMap(QString name, QVector<QColor> samples) : name_(std::move(name)), samples_(std::move(samples)) {}
  const QString &name() const { return name_; }
  // The colour at `t` in 0..1 (clamped), linear between the two nearest samples.
  QColor at(double t) const;

private:
  QString name_;
  QVector<QColor> samples_;
};

QStringList color_map_names();
// Throws std::invalid_argument naming the known maps when `name` is not one of them.
const ColorMap &color_map(const QString &name);

} // namespace tilesim::viz
