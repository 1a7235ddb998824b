#include "viz/result_library.h"

namespace tilesim::viz {

QString Document::title() const {
  if (results.size() == 1) return results.front()->label;
  const auto &r = results.front()->result;
  return QString("%1 [%2, predicted + measured]")
      .arg(QString::fromStdString(r.kernel.is_object() ? r.kernel.value("name", "kernel") : "kernel"),
           QString::fromStdString(r.order));
}

OpenResultPtr Document::predicted() const {
  for (const auto &r : results)
    if (r->simulated()) return r;
  return nullptr;
}

OpenResultPtr Document::measured() const {
  for (const auto &r : results)
    if (!r->simulated()) return r;
  return nullptr;
}

int ResultLibrary::add(OpenResultPtr r) {
  for (size_t i = 0; i < documents_.size(); ++i) {
    Document &d = documents_[i];
    const OpenResult &other = *d.results.front();
    if (d.results.size() != 1 || r->config.isEmpty() || other.config != r->config ||
        other.result.order != r->result.order || other.simulated() == r->simulated())
      continue;
    if (r->simulated())
      d.results.insert(d.results.begin(), std::move(r));
    else
      d.results.push_back(std::move(r));
    return static_cast<int>(i);
  }
  documents_.push_back({{std::move(r)}});
  return static_cast<int>(documents_.size()) - 1;
}

void ResultLibrary::close(int document) {
  if (document >= 0 && document < static_cast<int>(documents_.size())) documents_.erase(documents_.begin() + document);
}

std::vector<OpenResultPtr> ResultLibrary::same_config(const QString &config) const {
  std::vector<OpenResultPtr> out;
  for (const auto &d : documents_)
    for (const auto &r : d.results)
      if (!config.isEmpty() && r->config == config) out.push_back(r);
  return out;
}

} // namespace tilesim::viz
