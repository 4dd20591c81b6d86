-- A key of the namespace's BullMQ queue (`<base>runs`): `<base>runs:<suffix>`.
local function queueKey(base, suffix) return base .. "runs:" .. suffix end
