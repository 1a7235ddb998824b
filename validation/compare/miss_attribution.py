#!/usr/bin/env python3
"""Which configurations carry the H100 GEMM model's DRAM-read and L2-hit misses? (issue 16,
validation/NOTES.md)

Reads a `tilesim validate --json` score file and, per part (calibration, held back):

- the scores split by launch (persistent against one CTA per tile);
- the configurations whose DRAM reads the model under-predicts by more than THRESHOLD (default
  15%), with their time and L2 hit errors, and the part's scores without them: if a handful of
  configurations where the GPU reads much more from DRAM than the model carry most of the DRAM
  and L2 hit error, one mechanism (L2 reuse the GPU loses and the model keeps) explains both;
- how the L2 hit error goes with the DRAM read error over all rows (a reuse the model keeps and
  the GPU loses moves both: fewer DRAM reads and more hits).

Usage: miss_attribution.py SCORES.json [THRESHOLD]
"""
import json
import statistics
import sys


def scores(rows):
    if not rows:
        return "no configurations"
    mean = statistics.mean
    return (f"time MAPE {100 * mean(abs(r['time_error']) for r in rows):5.1f}%, bias {100 * mean(r['time_error'] for r in rows):+5.1f}%, "
            f"DRAM read MAPE {100 * mean(abs(r['dram_read_error']) for r in rows):5.1f}% "
            f"(signed {100 * mean(r['dram_read_error'] for r in rows):+5.1f}%), "
            f"L2 hit MAE {mean(abs(r['l2_hit_points']) for r in rows):4.1f} pt (signed {mean(r['l2_hit_points'] for r in rows):+4.1f})")


def main():
    data = json.load(open(sys.argv[1]))
    threshold = float(sys.argv[2]) if len(sys.argv) > 2 else 0.15
    rows = data["rows"]
    print(f"scores: {sys.argv[1]} (clock {data['clock']}); DRAM under-predicted by more than {100 * threshold:.0f}%")
    for part, held in (("calibration", False), ("held back", True)):
        in_part = [r for r in rows if r["held_back"] == held]
        print(f"\n{part} ({len(in_part)} configurations): {scores(in_part)}")
        for label, persistent in (("persistent      ", True), ("one CTA per tile", False)):
            print(f"  {label} {scores([r for r in in_part if ('_p_' in r['id']) == persistent])}")
        low = sorted((r for r in in_part if r["dram_read_error"] < -threshold), key=lambda r: r["dram_read_error"])
        dram_share = sum(abs(r["dram_read_error"]) for r in low) / sum(abs(r["dram_read_error"]) for r in in_part)
        l2_share = sum(abs(r["l2_hit_points"]) for r in low) / sum(abs(r["l2_hit_points"]) for r in in_part)
        time_share = sum(abs(r["time_error"]) for r in low) / sum(abs(r["time_error"]) for r in in_part)
        print(f"  {len(low)} configurations carry {100 * dram_share:.0f}% of the DRAM read error, {100 * l2_share:.0f}% of the "
              f"L2 hit error and {100 * time_share:.0f}% of the time error:")
        for r in low:
            print(f"    {r['id']:44s} time {100 * r['time_error']:+6.1f}%  DRAM read {100 * r['dram_read_error']:+6.1f}%  "
                  f"L2 hit {r['l2_hit_points']:+5.1f} pt")
        print(f"  without them ({len(in_part) - len(low)}): {scores([r for r in in_part if r not in low])}")
    dram = [r["dram_read_error"] for r in rows]
    hit = [r["l2_hit_points"] for r in rows]
    print(f"\nall {len(rows)} rows: correlation of the L2 hit error with the DRAM read error {statistics.correlation(dram, hit):+.2f}")


if __name__ == "__main__":
    main()
