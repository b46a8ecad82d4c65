// A service in Go writing agent-telemetry lines with the standard library only.
// The contract is the line format and the catalogue's JSON Schema
// (examples/service/telemetry/views/events.schema.json, `agent-telemetry jsonschema`):
// the envelope first, the time in RFC 3339 UTC with microseconds and Z, closed sets
// as constants, and counts rounded to their field's precision as the Python emitter
// rounds them (half away from zero).
package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"time"
)

// ClosedSets are the closed sets of the fields this service writes, exactly as the
// catalogue has them (the example's test compares them with the schema).
var ClosedSets = map[string]map[string][]string{
	"cache_lookup": {
		"result": {"hit", "miss", "stale"},
		"tier":   {"memory", "disk"},
	},
	"pipeline_run": {
		"lane":   {"public", "admin", "premium"},
		"status": {"ok", "needs_attention", "failed", "not_ready"},
		"reason": {"validation", "render", "deadline", "budget", "error", "busy", "capacity",
			"no_dataset", "incomplete_bindings", "stalled"},
	},
}

// TimingPrecision is the significant digits the catalogue keeps of a duration.
const TimingPrecision = 3

// RoundSignificant rounds value to digits significant digits, half away from zero:
// 1234567 -> 1230000.
func RoundSignificant(value int64, digits int) int64 {
	magnitude := value
	if value < 0 {
		magnitude = -value
	}
	length := len(strconv.FormatInt(magnitude, 10))
	if length <= digits {
		return value
	}
	step := int64(1)
	for i := 0; i < length-digits; i++ {
		step *= 10
	}
	rounded := (magnitude + step/2) / step * step
	if value < 0 {
		return -rounded
	}
	return rounded
}

// Stamp is the time as the emitter writes it: RFC 3339 UTC, microseconds, Z.
func Stamp(now time.Time) string {
	return now.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// envelope is written first, in this order; encoding/json keeps a struct's field order.
type envelope struct {
	Event         string `json:"event"`
	SchemaVersion int    `json:"schema_version"`
	Severity      string `json:"severity"`
	Time          string `json:"time"`
}

func newEnvelope(event string, version int) envelope {
	return envelope{event, version, "INFO", Stamp(time.Now())}
}

// CacheLookup is one cache_lookup line (schema_version 1); a nil pointer is left out.
type CacheLookup struct {
	envelope
	Result   string `json:"result"`
	Tier     string `json:"tier"`
	LookupMs *int64 `json:"lookup_ms,omitempty"`
}

// PipelineRun is one pipeline_run line (schema_version 1), with the fields this service
// writes; durations are rounded by NewPipelineRun.
type PipelineRun struct {
	envelope
	Lane        string `json:"lane"`
	Status      string `json:"status"`
	Reason      string `json:"reason,omitempty"`
	QueueWaitMs *int64 `json:"queue_wait_ms,omitempty"`
	DurationMs  *int64 `json:"duration_ms,omitempty"`
	Attempts    *int64 `json:"attempts,omitempty"`
}

func rounded(ms *int64) *int64 {
	if ms == nil {
		return nil
	}
	value := RoundSignificant(*ms, TimingPrecision)
	return &value
}

// NewPipelineRun stamps the envelope and rounds the durations to their precision.
func NewPipelineRun(lane, status, reason string, queueWaitMs, durationMs, attempts *int64) PipelineRun {
	return PipelineRun{newEnvelope("pipeline_run", 1), lane, status, reason,
		rounded(queueWaitMs), rounded(durationMs), attempts}
}

func ms(value int64) *int64 { return &value }

func main() {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out) // one JSON object per line
	if len(os.Args) > 1 && os.Args[1] == "closed-sets" {
		_ = encoder.Encode(ClosedSets)
		return
	}
	sets := ClosedSets["cache_lookup"]
	for i, result := range sets["result"] {
		for _, tier := range sets["tier"] {
			_ = encoder.Encode(CacheLookup{newEnvelope("cache_lookup", 1), result, tier, ms(int64(i) * 4321)})
		}
	}
	_ = encoder.Encode(CacheLookup{newEnvelope("cache_lookup", 1), "miss", "disk", nil})
	_ = encoder.Encode(NewPipelineRun("public", "ok", "", ms(1_234_567), ms(1235), ms(0)))
	_ = encoder.Encode(NewPipelineRun("admin", "failed", "deadline", nil, ms(3_599_999), nil))
	_ = encoder.Encode(NewPipelineRun("premium", "needs_attention", "stalled", ms(999), nil, nil))
}
