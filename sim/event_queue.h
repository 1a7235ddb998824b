// A discrete-event queue: events pop in time order, ties in the order they were pushed, so a
// simulation is deterministic regardless of heap layout.
#pragma once

#include "sim/units.h"

#include <cstdint>
#include <queue>
#include <vector>

namespace tilesim {

template <typename Payload>
class EventQueue {
public:
  struct Event {
    Cycle time;
    std::uint64_t sequence;
    Payload payload;
  };

  void push(Cycle time, const Payload& payload) { heap_.push({time, next_sequence_++, payload}); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_sequence_ = 0;
};

} // namespace tilesim
