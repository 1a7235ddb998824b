// The open results and how they are shown: a document (one tab of the document bar) is a single
// result, or a simulated and a measured result of the same configuration and order side by side.
#pragma once

#include "viz/open_result.h"

#include <vector>

namespace tilesim::viz {

struct Document {
  std::vector<OpenResultPtr> results; // simulated first, then measured
  QString title() const;
  OpenResultPtr predicted() const;
  OpenResultPtr measured() const;
};

class ResultLibrary {
public:
  // Joins a document that holds the other source of the same configuration and order, else
  // opens a new one; returns the document's index.
  int add(OpenResultPtr r);
  void close(int document);
  const std::vector<Document> &documents() const { return documents_; }
  // Every open result of `config` (all orders, both sources), in the order they were opened.
  std::vector<OpenResultPtr> same_config(const QString &config) const;

private:
  std::vector<Document> documents_;
};

} // namespace tilesim::viz
