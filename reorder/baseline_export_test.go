package reorder

// PlanBaseline is Plan without its telemetry, options and log record: the
// benchmarks' baseline.
var PlanBaseline = plan
