// Runs jobs 0..count-1 on up to `threads` threads, each job once, in index order of starting; the
// first exception a job throws is rethrown here, as it was, once every thread has finished (a
// SpecError stays one, so the caller's one-line report names the file and field).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace tilesim {

template <typename Job>
void run_parallel_jobs(std::size_t count, unsigned threads, Job&& job) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t n = next++; n < count; n = next++) try {
        job(n);
      } catch (...) {
        errors[n] = std::current_exception();
      }
  };
  std::vector<std::thread> pool;
  const std::size_t workers = std::max<std::size_t>(1, std::min<std::size_t>(threads, count));
  for (std::size_t t = 0; t < workers; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

} // namespace tilesim
