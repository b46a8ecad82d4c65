// A service in TypeScript writing agent-telemetry lines with Node's standard library only.
// The contract is the line format and the catalogue's JSON Schema
// (examples/service/telemetry/views/events.schema.json, `agent-telemetry jsonschema`):
// the envelope first, the time in RFC 3339 UTC with microseconds and Z, closed sets
// as constants, and counts rounded to their field's precision as the Python emitter
// rounds them (half away from zero).

// The closed sets of the fields this service writes, exactly as the catalogue has them
// (the example's test compares them with the schema).
export const CLOSED_SETS = {
  cache_lookup: {
    result: ["hit", "miss", "stale"],
    tier: ["memory", "disk"],
  },
  pipeline_run: {
    lane: ["public", "admin", "premium"],
    status: ["ok", "needs_attention", "failed", "not_ready"],
    reason: ["validation", "render", "deadline", "budget", "error", "busy", "capacity",
      "no_dataset", "incomplete_bindings", "stalled"],
  },
} as const;

type Sets = typeof CLOSED_SETS;
type Member<E extends keyof Sets, F extends keyof Sets[E]> = Sets[E][F] extends readonly (infer M)[] ? M : never;

// Significant digits the catalogue keeps of a duration (count(..., precision=3)).
const TIMING_PRECISION = 3;

// `value` rounded to `digits` significant digits, half away from zero: 1234567 -> 1230000.
export function roundSignificant(value: number, digits: number): number {
  const magnitude = Math.abs(value);
  const length = String(magnitude).length;
  if (length <= digits) return value;
  const step = 10 ** (length - digits);
  const rounded = Math.floor((magnitude + step / 2) / step) * step;
  return value < 0 ? -rounded : rounded;
}

// RFC 3339 UTC with microseconds and Z (a JavaScript Date holds milliseconds).
export function stamp(now: Date = new Date()): string {
  return now.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

type Fields = Record<string, string | number | boolean | undefined>;

// One line: the envelope, then the fields that have a value (an absent field is left out).
export function line(event: string, schemaVersion: number, fields: Fields, now?: Date): string {
  const record: Fields = { event, schema_version: schemaVersion, severity: "INFO", time: stamp(now) };
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) record[name] = value;
  }
  return JSON.stringify(record);
}

export function cacheLookup(
  result: Member<"cache_lookup", "result">,
  tier: Member<"cache_lookup", "tier">,
  lookupMs?: number,
): string {
  return line("cache_lookup", 1, { result, tier, lookup_ms: lookupMs });
}

export function pipelineRun(run: {
  lane: Member<"pipeline_run", "lane">;
  status: Member<"pipeline_run", "status">;
  reason?: Member<"pipeline_run", "reason">;
  queueWaitMs?: number;
  durationMs?: number;
  attempts?: number;
}): string {
  const round = (ms?: number) => (ms === undefined ? undefined : roundSignificant(ms, TIMING_PRECISION));
  return line("pipeline_run", 1, {
    lane: run.lane,
    status: run.status,
    reason: run.reason,
    queue_wait_ms: round(run.queueWaitMs),
    duration_ms: round(run.durationMs),
    attempts: run.attempts,
  });
}

// `node dist/emit.js` writes a few lines of each event; `closed-sets` prints the sets.
if (process.argv[2] === "closed-sets") {
  process.stdout.write(JSON.stringify(CLOSED_SETS) + "\n");
} else {
  const out: string[] = [];
  for (const [i, result] of CLOSED_SETS.cache_lookup.result.entries()) {
    for (const tier of CLOSED_SETS.cache_lookup.tier) out.push(cacheLookup(result, tier, i * 4321));
  }
  out.push(cacheLookup("miss", "disk"));
  out.push(pipelineRun({ lane: "public", status: "ok", queueWaitMs: 1_234_567, durationMs: 1235, attempts: 0 }));
  out.push(pipelineRun({ lane: "admin", status: "failed", reason: "deadline", durationMs: 3_599_999 }));
  out.push(pipelineRun({ lane: "premium", status: "needs_attention", reason: "stalled", queueWaitMs: 999 }));
  process.stdout.write(out.join("\n") + "\n");
}
