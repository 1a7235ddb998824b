#include "viz/color_map.h"

#include <QFile>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace tilesim::viz {
namespace {

const std::vector<ColorMap> &all_maps() {
  static const std::vector<ColorMap> maps = [] {
    QFile file(":/tilesim/viz/colormaps.json");
    if (!file.open(QIODevice::ReadOnly)) throw std::runtime_error("viz/colormaps.json is not compiled into the viewer");
    const nlohmann::json j = nlohmann::json::parse(file.readAll().toStdString());
    std::vector<ColorMap> out;
    for (const auto &[name, samples] : j.items()) {
      if (!samples.is_array()) continue; // "comment"
      QVector<QColor> colors;
      for (const auto &s : samples) colors.push_back(QColor(QString::fromStdString(s.get<std::string>())));
      out.emplace_back(QString::fromStdString(name), colors);
    }
    // viridis first: it is the default.
    std::sort(out.begin(), out.end(), [](const ColorMap &a, const ColorMap &b) {
      return (a.name() == "viridis") != (b.name() == "viridis") ? a.name() == "viridis" : a.name() < b.name();
    });
    return out;
  }();
  return maps;
}

} // namespace

QColor ColorMap::at(double t) const {
  if (!(t > 0)) return samples_.front(); // also NaN
  if (t >= 1) return samples_.back();
  const double x = t * (samples_.size() - 1);
  const int i = static_cast<int>(x);
  const double f = x - i;
  const QColor &a = samples_[i];
  const QColor &b = samples_[i + 1];
  return QColor::fromRgbF(static_cast<float>(a.redF() + f * (b.redF() - a.redF())),
                          static_cast<float>(a.greenF() + f * (b.greenF() - a.greenF())),
                          static_cast<float>(a.blueF() + f * (b.blueF() - a.blueF())));
}

QStringList color_map_names() {
  QStringList names;
  for (const auto &m : all_maps()) names << m.name();
  return names;
}

const ColorMap &color_map(const QString &name) {
  for (const auto &m : all_maps())
    if (m.name() == name) return m;
  throw std::invalid_argument("unknown colour map '" + name.toStdString() +
                              "'; use one of: " + color_map_names().join(", ").toStdString());
}

} // namespace tilesim::viz
