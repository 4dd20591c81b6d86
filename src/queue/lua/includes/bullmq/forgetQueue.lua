-- Deletes what is left of an emptied namespace's queue: its event stream,
-- meta, the counters BullMQ's own adds keep (id, pc, marker) and the job
-- metrics.
local function forgetQueue(base)
  redis.call("DEL", KEY.queueEvents(base), KEY.queueMeta(base), KEY.queueId(base), KEY.queuePc(base),
    KEY.queueMarker(base), KEY.queueMetrics(base, "completed"), KEY.queueMetricsData(base, "completed"),
    KEY.queueMetrics(base, "failed"), KEY.queueMetricsData(base, "failed"))
end
